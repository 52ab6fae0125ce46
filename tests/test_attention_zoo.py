"""Attention zoo: every registered mixer's contract, and each approximation against a dense oracle."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from mixer_checks import (
    assert_overflowing_padding_cannot_reach_valid_outputs,
    assert_padding_cannot_reach_valid_outputs,
)

from forecaster.nn import attention
from forecaster.nn.attention.lowrank import iterative_pinv

D_MODEL, N_HEADS, SEQ_LEN = 16, 2, 40
ZOO = [
    "softmax",
    "skeleton",
    "linformer",
    "performer",
    "nystromformer",
    "reformer",
    "linear",
    "local",
    "fnet",
]
# Small settings so that the blockwise paths (several chunks, buckets, landmarks, windows) are exercised.
OPTIONS = {
    "linformer": {"proj_dim": 8},
    "performer": {"n_features": 32},
    "nystromformer": {"n_landmarks": 8, "conv_kernel": 5},
    "reformer": {"chunk_len": 8, "n_buckets": 4},
    "local": {"window": 6},
}


def _build(name: str, torch_seed: int = 0, **options) -> torch.nn.Module:
    torch.manual_seed(torch_seed)
    return attention.build(
        name, d_model=D_MODEL, n_heads=N_HEADS, seq_len=SEQ_LEN, **{**OPTIONS.get(name, {}), **options}
    )


def _inputs(seed: int = 1, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(3, SEQ_LEN, D_MODEL, generator=generator, dtype=dtype)
    mask = torch.ones(3, SEQ_LEN, dtype=torch.bool)
    mask[1, 25:] = False
    mask[2, :3] = False  # left padding too
    mask[2, 30:] = False
    return x, mask


def test_registry_lists_the_zoo():
    assert set(ZOO) <= set(attention.names())
    with pytest.raises(ValueError, match="unknown mixer 'nope'"):
        attention.build("nope", d_model=8, n_heads=2, seq_len=8)


@pytest.mark.parametrize("name", ZOO)
def test_shape_and_padded_outputs_are_zero(name):
    x, mask = _inputs()
    mixer = _build(name).eval()
    out = mixer(x, key_padding_mask=mask)
    assert out.shape == x.shape
    assert torch.isfinite(out).all()
    if name != "skeleton":  # the zoo's own mixers also zero their padded outputs
        assert out[~mask].abs().max() == 0
    assert mixer(x).shape == x.shape


@pytest.mark.parametrize("name", ZOO)
def test_gradients_reach_input_and_parameters(name):
    x, mask = _inputs()
    x.requires_grad_(True)
    mixer = _build(name).train()
    out = mixer(x, key_padding_mask=mask)
    out[mask].pow(2).sum().backward()
    assert torch.isfinite(x.grad).all() and x.grad[mask].abs().sum() > 0
    assert x.grad[~mask].abs().max() == 0  # padded inputs influence nothing
    for param_name, param in mixer.named_parameters():
        assert param.grad is not None, param_name
        assert torch.isfinite(param.grad).all(), param_name


@pytest.mark.parametrize("name", ZOO)
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_padded_values_do_not_change_real_outputs(name, mode):
    x, mask = _inputs()
    mixer = _build(name).train(mode == "train")
    # the zoo's own mixers also zero their padded outputs; skeleton leaves them as computed
    assert_padding_cannot_reach_valid_outputs(
        mixer, x, mask, scale=1e3, atol=1e-5, rtol=1e-5, zero_at_padding=name != "skeleton"
    )


# Every registered mixer, and the skeleton mixer's reference LRA block.
EVERY_MIXER = [*((name, {}) for name in attention.names()), ("skeleton", {"block": "reference"})]
EVERY_MIXER_ID = [f"{name}{'-reference' * bool(options)}" for name, options in EVERY_MIXER]


@pytest.mark.parametrize(("name", "options"), EVERY_MIXER, ids=EVERY_MIXER_ID)
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_inf_or_nan_under_the_padding_reaches_no_valid_output(name, options, mode):
    """Padding zeroed by multiplying with a 0/1 mask leaked 0 * inf = NaN into every valid output."""
    x, mask = _inputs()
    mixer = _build(name, **options).train(mode == "train")
    zero_at_padding = not (name == "skeleton" and not options)  # the forecasting block leaves them computed
    assert_overflowing_padding_cannot_reach_valid_outputs(mixer, x, mask, zero_at_padding=zero_at_padding)


@pytest.mark.parametrize("name", ZOO)
def test_same_seed_same_function(name):
    x, mask = _inputs()
    first, second = _build(name, torch_seed=3).eval(), _build(name, torch_seed=3).eval()
    torch.testing.assert_close(first(x, mask), second(x, mask), atol=0, rtol=0)
    torch.testing.assert_close(first(x, mask), first(x, mask), atol=0, rtol=0)


# The tensors each mixer draws from its own seeded generator.
RANDOM_COMPONENTS = {
    "performer": ("features",), "reformer": ("rotations",), "linformer": ("proj_k", "proj_v")
}


@pytest.mark.parametrize("name", sorted(RANDOM_COMPONENTS))
def test_random_components_follow_the_seed_option(name):
    """Features / rotations / projections come from the `seed` option, not from the global RNG."""
    x, mask = _inputs()
    base = _build(name, torch_seed=0, seed=1).eval()
    other_global = _build(name, torch_seed=1, seed=1)
    other_seed = _build(name, torch_seed=0, seed=2).eval()
    for component in RANDOM_COMPONENTS[name]:
        torch.testing.assert_close(getattr(base, component), getattr(other_global, component), atol=0, rtol=0)
    assert (base(x, mask) - other_seed(x, mask)).abs().max() > 1e-4


@pytest.mark.parametrize(("name", "component"), [("performer", "features"), ("reformer", "rotations")])
def test_redraw_changes_the_saved_buffer_reproducibly(name, component):
    first, second = _build(name), _build(name)
    before = getattr(first, component).clone()
    first.redraw()
    second.redraw()
    assert (getattr(first, component) - before).abs().max() > 0.1
    torch.testing.assert_close(getattr(first, component), getattr(second, component), atol=0, rtol=0)
    assert component in first.state_dict()


def _dense_attention(q, k, v, allowed):
    """Reference: softmax(q k^T / sqrt(hd)) restricted to `allowed` (B, n, n) then times v, per head."""
    logits = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    logits = logits.masked_fill(~allowed[:, None], float("-inf"))
    return torch.softmax(logits, dim=-1) @ v


def _heads(mixer, x):
    q, k, v = mixer.qkv(x).chunk(3, dim=-1)
    split = [t.view(*x.shape[:2], N_HEADS, -1).transpose(1, 2) for t in (q, k, v)]
    return split


def _finish(mixer, heads_out):
    return mixer.out(heads_out.transpose(1, 2).reshape(heads_out.shape[0], heads_out.shape[2], -1))


def test_softmax_matches_dense_formula_with_mask_and_math_kernel():
    x, mask = _inputs(dtype=torch.float64)
    sdpa = _build("softmax").double().eval()
    math_kernel = _build("softmax", kernel="math").double().eval()
    q, k, v = _heads(sdpa, x)
    expected = _finish(sdpa, _dense_attention(q, k, v, mask[:, None, :].expand(-1, SEQ_LEN, -1)))
    torch.testing.assert_close(sdpa(x, mask)[mask], expected[mask], atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(math_kernel(x, mask), sdpa(x, mask), atol=1e-10, rtol=1e-10)


def test_local_with_window_covering_the_sequence_equals_softmax():
    x, mask = _inputs(dtype=torch.float64)
    softmax = _build("softmax").double().eval()
    local = _build("local", window=SEQ_LEN).double().eval()
    local.load_state_dict(softmax.state_dict())
    torch.testing.assert_close(local(x, mask), softmax(x, mask), atol=1e-10, rtol=1e-10)


def test_local_matches_banded_dense_attention():
    x, mask = _inputs(dtype=torch.float64)
    local = _build("local", window=6).double().eval()
    positions = torch.arange(SEQ_LEN)
    band = (positions[:, None] - positions[None, :]).abs() <= 6
    allowed = band[None] & mask[:, None, :]
    q, k, v = _heads(local, x)
    expected = _finish(local, _dense_attention(q, k, v, allowed))
    torch.testing.assert_close(local(x, mask)[mask], expected[mask], atol=1e-10, rtol=1e-10)


def test_linformer_with_identity_projections_equals_softmax():
    x, _ = _inputs(dtype=torch.float64)
    softmax = _build("softmax").double().eval()
    linformer = _build("linformer", proj_dim=SEQ_LEN).double().eval()
    identity = torch.eye(SEQ_LEN, dtype=torch.float64).expand(N_HEADS, -1, -1)
    linformer.load_state_dict({**softmax.state_dict(), "proj_k": identity, "proj_v": identity})
    torch.testing.assert_close(linformer(x), softmax(x), atol=1e-10, rtol=1e-10)


def test_linear_attention_matches_dense_kernel_formula():
    x, mask = _inputs(dtype=torch.float64)
    linear = _build("linear", eps=0.0).double().eval()
    q, k, v = _heads(linear, x)
    similarity = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-1, -2) * mask[:, None, None, :]
    expected = _finish(linear, similarity / similarity.sum(-1, keepdim=True) @ v)
    torch.testing.assert_close(linear(x, mask)[mask], expected[mask], atol=1e-10, rtol=1e-10)


def test_nystromformer_with_one_landmark_per_token_equals_softmax():
    """landmarks = n makes the Nystrom factorization A pinv(A) A = A exact; 30 iterations converge pinv."""
    x, mask = _inputs(dtype=torch.float64)
    softmax = _build("softmax").double().eval()
    nystrom = _build("nystromformer", n_landmarks=SEQ_LEN, conv_kernel=0, pinv_iterations=30).double().eval()
    nystrom.load_state_dict(softmax.state_dict())
    torch.testing.assert_close(nystrom(x), softmax(x), atol=1e-8, rtol=1e-8)


def test_iterative_pinv_converges_to_the_pseudo_inverse():
    generator = torch.Generator().manual_seed(0)
    matrix = torch.softmax(torch.randn(4, 12, 12, generator=generator, dtype=torch.float64), dim=-1)
    torch.testing.assert_close(iterative_pinv(matrix, 25), torch.linalg.pinv(matrix), atol=1e-8, rtol=1e-6)


def test_performer_approaches_softmax_as_features_grow():
    """FAVOR+ is unbiased with error ~ 1/sqrt(m): 16384 orthogonal features land within 1e-3 mean abs
    (under 1% of the mean output) and 5e-3 max on inputs of half scale; 16 features err 4x more."""
    x, _ = _inputs(dtype=torch.float64)
    x = 0.5 * x
    softmax = _build("softmax").double().eval()
    expected = softmax(x)

    def error(n_features: int) -> torch.Tensor:
        performer = _build("performer", n_features=n_features, eps=0.0).double().eval()
        performer.load_state_dict(softmax.state_dict(), strict=False)
        return (performer(x) - expected).abs()

    coarse, fine = error(16), error(16384)
    assert fine.mean() < 1e-3 and fine.max() < 5e-3
    assert fine.mean() < coarse.mean() / 4


def _shared_qk_reference(reformer, x):
    """Dense Reformer attention: keys = unit-normalized queries, a token sees itself only when alone."""
    qk = reformer.qk(x).view(*x.shape[:2], N_HEADS, -1).transpose(1, 2)
    v = reformer.value(x).view(*x.shape[:2], N_HEADS, -1).transpose(1, 2)
    logits = qk @ F.normalize(qk, dim=-1).transpose(-1, -2) / qk.shape[-1] ** 0.5
    logits = logits - 1e9 * torch.eye(x.shape[1], dtype=x.dtype)
    heads_out = torch.softmax(logits, dim=-1) @ v
    return reformer.out(heads_out.transpose(1, 2).reshape(*x.shape))


@pytest.mark.parametrize("n_hashes", [1, 3])
def test_reformer_with_one_bucket_is_dense_shared_qk_attention(n_hashes):
    x, _ = _inputs(dtype=torch.float64)
    reformer = _build("reformer", n_buckets=1, chunk_len=SEQ_LEN, n_hashes=n_hashes).double().eval()
    torch.testing.assert_close(reformer(x), _shared_qk_reference(reformer, x), atol=1e-10, rtol=1e-10)


def test_reformer_lone_token_attends_to_itself():
    x, _ = _inputs()
    mask = torch.zeros(3, SEQ_LEN, dtype=torch.bool)
    mask[:, 7] = True
    reformer = _build("reformer").eval()
    expected = reformer.out(reformer.value(x[:, 7]))
    torch.testing.assert_close(reformer(x, mask)[:, 7], expected, atol=1e-6, rtol=1e-6)


def test_fnet_is_real_part_of_orthonormal_dft():
    x, mask = _inputs(dtype=torch.float64)
    fnet = _build("fnet")

    def dft(n):
        grid = torch.arange(n, dtype=torch.float64)
        return torch.exp(-2j * torch.pi * grid[:, None] * grid[None, :] / n) / n**0.5

    zeroed = (x * mask[..., None]).to(torch.complex128)
    expected = (dft(SEQ_LEN) @ zeroed @ dft(D_MODEL)).real * mask[..., None]
    torch.testing.assert_close(fnet(x, mask), expected, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("name", ["softmax", "reformer", "fnet"])
def test_bad_shapes_are_rejected(name):
    mixer = _build(name)
    with pytest.raises(ValueError, match="expected x of shape"):
        mixer(torch.randn(2, SEQ_LEN, D_MODEL + 1))
    with pytest.raises(ValueError, match="key_padding_mask"):
        mixer(torch.randn(2, SEQ_LEN, D_MODEL), torch.ones(2, SEQ_LEN))


@pytest.mark.parametrize("name", attention.names())
def test_every_mixer_refuses_a_mask_that_is_not_batch_by_length_bool(name):
    """A (length,) mask would broadcast over the batch and a float mask would scale instead of mask: the
    TNN mixers took both silently."""
    mixer, x = _build(name), torch.randn(2, SEQ_LEN, D_MODEL)
    expected = rf"key_padding_mask must be a bool tensor of shape \(2, {SEQ_LEN}\)"
    for bad in (torch.ones(SEQ_LEN, dtype=torch.bool), torch.ones(2, SEQ_LEN)):
        with pytest.raises(ValueError, match=expected):
            mixer(x, bad)

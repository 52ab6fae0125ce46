"""The reference LRA S3Attention block against a dense oracle, the `block` option, and `mean-all` pooling."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from mixer_checks import assert_padding_cannot_reach_valid_outputs, padding_mask
from safetensors.torch import load_file, save_file

from forecaster.artifacts import load_bundle, save_bundle
from forecaster.cli import main
from forecaster.errors import BundleError, ConfigError
from forecaster.models import get_model
from forecaster.nn import ReferenceS3Block, S3AttentionMixer, attention

LENGTH, D_MODEL, HEADS = 24, 8, 2


def _reference_block(**options) -> ReferenceS3Block:
    """A float64 reference block in eval mode with every norm's parameters and statistics randomized."""
    torch.manual_seed(0)
    block = attention.build(
        "skeleton", d_model=D_MODEL, n_heads=HEADS, seq_len=LENGTH, block="reference", **options
    ).double()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        bn = block.smoother.norm
        for tensor in (
            bn.weight,
            bn.bias,
            bn.running_mean,
            block.attention.norm_row.weight,
            block.attention.norm_row.bias,
            block.attention.norm_column.weight,
            block.attention.norm_column.bias,
        ):
            tensor.copy_(torch.randn(tensor.shape, generator=generator, dtype=tensor.dtype))
        bn.running_var.uniform_(0.5, 2.0, generator=generator)
    return block.eval()


def _smoothing_matrices(weight: torch.Tensor, length: int) -> torch.Tensor:
    """(D, L, L): channel c's irFFT(rFFT(x_c) * W_c) as an explicit circulant matrix S_c, out = S_c x_c.

    S_c[t, s] = 1/L sum_f a_f Re(W_c[f] exp(2 pi i f (t - s) / L)) with a_f = 1 at f = 0 and f = L/2 (irFFT
    keeps only the real part of those bins), 2 elsewhere. `weight` is the real view (F, D, 2) of W.
    """
    n_freq = length // 2 + 1
    scale = torch.full((n_freq,), 2.0, dtype=weight.dtype)
    scale[0] = 1.0
    if length % 2 == 0:
        scale[-1] = 1.0
    lag = (torch.arange(length)[:, None] - torch.arange(length)[None, :]).to(weight.dtype)
    angle = 2 * math.pi * torch.arange(n_freq, dtype=weight.dtype)[:, None, None] * lag / length
    real, imag = weight[..., 0], weight[..., 1]
    cosine = torch.einsum("f,fd,fts->dts", scale, real, torch.cos(angle))
    sine = torch.einsum("f,fd,fts->dts", scale, imag, torch.sin(angle))
    return (cosine - sine) / length


def _dense_reference(block: ReferenceS3Block, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The reference LRA block (lra/lmu.py LMUFFT_nccl + lra/attention1.py + lra/attention_SKT.py) written
    with explicit smoothing matrices and sampling matrices P1 (s1 x L), P2 (hd x s2), in eval mode."""
    smoother, attn = block.smoother, block.attention
    length, d_model, head_dim = x.shape[1], x.shape[2], attn.head_dim
    keep = mask[..., None].to(x.dtype)
    x = x * keep
    smoothed = torch.einsum("dts,bsd->btd", _smoothing_matrices(smoother.spectral_weight, length), x)
    stem = smoother.stem.weight[:, :, 0]  # kernel 1: one (D, 2D) matrix
    h = torch.cat([smoothed, x], dim=-1) @ stem.T + smoother.stem.bias
    bn = smoother.norm  # BatchNorm1d over the L time steps
    h = (h - bn.running_mean[:, None]) / torch.sqrt(bn.running_var[:, None] + bn.eps)
    h = F.elu(h * bn.weight[:, None] + bn.bias[:, None])
    (w_q, w_k, w_v), (b_q, b_k, b_v) = attn.qkv.weight.chunk(3), attn.qkv.bias.chunk(3)
    q, k, v = h @ w_q.T + b_q, (h @ w_k.T + b_k) * keep, (h @ w_v.T + b_v) * keep
    p1 = torch.eye(length, dtype=x.dtype)[attn.left_index]
    p2 = torch.eye(head_dim, dtype=x.dtype)[:, attn.right_index]
    rows, columns = [], []
    for head in range(attn.n_heads):
        part = slice(head * head_dim, (head + 1) * head_dim)
        qh, kh, vh = q[..., part], k[..., part], v[..., part]
        rows.append(torch.softmax(qh @ (p1 @ kh).mT / math.sqrt(head_dim), dim=-1) @ (p1 @ vh))
        weights = torch.softmax(qh.mT @ kh @ p2 / math.sqrt(length), dim=-1)  # (hd, s2), over s2
        columns.append(vh @ p2 @ weights.mT)
    ln_row, ln_column = attn.norm_row, attn.norm_column
    row = F.layer_norm(torch.cat(rows, -1), (d_model,), ln_row.weight, ln_row.bias)
    column = F.layer_norm(torch.cat(columns, -1), (d_model,), ln_column.weight, ln_column.bias)
    return ((0.5 * row + 0.5 * column) @ attn.out.weight.T + attn.out.bias) * keep


def test_reference_block_equals_the_dense_oracle():
    block = _reference_block(left_rank=6, right_rank=3, seed=2)
    mask = padding_mask([LENGTH, 15, 9], LENGTH)
    assert (~mask[:, block.attention.left_index]).any(), "sampled keys must include padded positions"
    assert block.attention.right_index.numel() == 3 < block.attention.head_dim
    x = torch.randn(3, LENGTH, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        torch.testing.assert_close(block(x, mask), _dense_reference(block, x, mask), rtol=0, atol=1e-10)
        full = torch.ones_like(mask)
        torch.testing.assert_close(block(x), _dense_reference(block, x, full), rtol=0, atol=1e-10)


def test_reference_smoother_has_kernel_one_no_grouping_and_dropout_half():
    block = attention.build("skeleton", d_model=D_MODEL, n_heads=HEADS, seq_len=LENGTH, block="reference")
    assert block.smoother.stem.kernel_size == (1,) and block.smoother.fold == D_MODEL
    assert block.smoother.dropout.p == 0.5 and block.attention.dropout.p == 0.0
    assert block.attention.qkv.bias is not None and block.attention.out.bias is not None
    assert block.attention.index_ranges() == {"left_index": LENGTH, "right_index": D_MODEL // HEADS}
    options = {"d_model": D_MODEL, "n_heads": HEADS, "seq_len": LENGTH, "block": "reference"}
    assert attention.build("skeleton", **options, smoother_dropout=0.1).smoother.dropout.p == 0.1


def test_forecasting_is_the_default_block_unchanged():
    x = torch.randn(2, LENGTH, D_MODEL, generator=torch.Generator().manual_seed(4))
    built = []
    for options in ({}, {"block": "forecasting"}):
        torch.manual_seed(5)
        built.append(
            attention.build("skeleton", d_model=D_MODEL, n_heads=HEADS, seq_len=LENGTH, fold=4, **options)
        )
    default, named = built
    assert type(default) is S3AttentionMixer and type(named) is S3AttentionMixer
    torch.testing.assert_close(default.eval()(x), named.eval()(x), rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_padding_cannot_reach_real_outputs_and_padded_outputs_are_zero(mode):
    block = _reference_block(left_rank=6, right_rank=3, smoother_dropout=0.0).train(mode == "train")
    mask = padding_mask([LENGTH, 15, 9], LENGTH)
    x = torch.randn(3, LENGTH, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(6))
    assert_padding_cannot_reach_valid_outputs(block, x, mask, scale=1e3, atol=1e-10, rtol=1e-10)
    x.requires_grad_(True)
    block(x, mask)[mask].pow(2).sum().backward()
    assert x.grad[~mask].abs().max() == 0 and x.grad[mask].abs().sum() > 0
    assert all(param.grad is not None for param in block.parameters())


def _classifier(**config) -> torch.nn.Module:
    torch.manual_seed(0)
    settings = {
        "vocab_size": 20,
        "n_classes": 10,
        "seq_len": 32,
        "d_model": 16,
        "mlp_dim": 32,
        "hidden_dim": 32,
    }
    return get_model("lra_classifier", mixer="skeleton", **{**settings, **config}).eval()


def _tokens() -> torch.Tensor:
    tokens = torch.randint(1, 20, (3, 32), generator=torch.Generator().manual_seed(7))
    tokens[1, 20:] = 0
    tokens[2, 9:] = 0
    return tokens


REFERENCE = {"mixer_options": {"block": "reference", "smoother_dropout": 0.0}, "pooling": "mean-all"}


def test_mean_all_pooling_averages_over_every_position():
    model, tokens = _classifier(**REFERENCE), _tokens()
    captured = {}
    model.encoder.norm.register_forward_hook(lambda module, args, output: captured.setdefault("h", output))
    pooled = model.encoder(tokens)
    mask = (tokens != 0).float()[..., None]
    torch.testing.assert_close(pooled, (captured["h"] * mask).sum(1) / 32)
    assert not torch.allclose(pooled[1:], (captured["h"] * mask).sum(1)[1:] / mask.sum(1)[1:])


def test_reference_classifier_ignores_what_lies_under_the_mask():
    model, tokens = _classifier(**REFERENCE), _tokens()
    logits = model(tokens)
    garbage = torch.where(tokens == 0, torch.randint(1, 20, tokens.shape), tokens)
    torch.testing.assert_close(model(garbage, tokens != 0), logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(model(tokens[2:, :9]), logits[2:], atol=1e-5, rtol=1e-5)
    assert not torch.allclose(model(garbage), logits, atol=1e-3), "without the mask the tokens count"


def test_reference_block_round_trips_through_a_bundle(tmp_path):
    model, tokens = _classifier(**REFERENCE), _tokens()
    attn = model.encoder.blocks[0].mixer.attention
    assert isinstance(model.encoder.blocks[0].mixer, ReferenceS3Block)
    attn.left_index.copy_(torch.arange(24, 32))  # drawn by no seed: only the saved buffer brings it back
    path = save_bundle(tmp_path / "lra", model=model, model_name="lra_classifier", metrics={}, training={})
    loaded = load_bundle(path, task="classify").model
    assert loaded.config.mixer_options == REFERENCE["mixer_options"] and loaded.config.pooling == "mean-all"
    assert torch.equal(loaded.encoder.blocks[0].mixer.attention.left_index, attn.left_index)
    torch.testing.assert_close(loaded(tokens), model(tokens), atol=0, rtol=0)
    tensors = {key: tensor.clone() for key, tensor in load_file(path / "weights.safetensors").items()}
    tensors["encoder.blocks.1.mixer.attention.left_index"][0] = 32
    save_file(tensors, path / "weights.safetensors")
    with pytest.raises(BundleError, match=r"left_index must hold indices from 0 to 31"):
        load_bundle(path, task="classify")


def test_bad_block_value_or_option_is_one_clear_line(tmp_path, capsys):
    sizes = {"d_model": D_MODEL, "n_heads": HEADS, "seq_len": LENGTH}
    with pytest.raises(ConfigError, match=r"'block' must be one of forecasting, reference, got 'nope'"):
        attention.build("skeleton", **sizes, block="nope")
    with pytest.raises(
        ConfigError, match=r"block 'reference' takes no option 'fold'; expected some of left_rank"
    ):
        attention.build("skeleton", **sizes, block="reference", fold=4)
    with pytest.raises(ConfigError, match=r"got 'nope'"):
        _classifier(mixer_options={"block": "nope"})
    arguments = [
        "lra",
        "train",
        "--task",
        "listops",
        "--steps",
        "1",
        "--seq-len",
        "40",
        "--n-train",
        "8",
        "--n-eval",
        "4",
        "--d-model",
        "8",
        "--mixer-option",
        "block=nope",
        "--out",
        str(tmp_path / "run"),
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert "must be one of forecasting, reference, got 'nope'" in error and "Traceback" not in error

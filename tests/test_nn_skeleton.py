"""SkeletonAttention against a dense eq. 1, sampled index sets as buffers, and the key padding mask."""

from __future__ import annotations

import math

import pytest
import torch
from mixer_checks import assert_overflowing_padding_cannot_reach_valid_outputs
from torch.nn import functional as F

from forecaster.nn import S3AttentionMixer, SkeletonAttention


def _randomize_norms(module: SkeletonAttention) -> None:
    with torch.no_grad():
        for norm in (module.norm_row, module.norm_column):
            norm.weight.normal_()
            norm.bias.normal_()


def _dense_eq1(
    module: SkeletonAttention,
    x: torch.Tensor,
    rows: torch.Tensor | None = None,
    dims: torch.Tensor | None = None,
) -> torch.Tensor:
    """Eq. 1 with explicit sampling matrices P1 (s1 x n) and P2 (hd x s2); all rows/dims when None."""
    batch, length, d_model = x.shape
    heads, head_dim = module.n_heads, module.head_dim
    rows = torch.arange(length) if rows is None else rows
    dims = torch.arange(head_dim) if dims is None else dims
    p1 = torch.eye(length, dtype=x.dtype)[rows]  # (s1, n)
    p2 = torch.eye(head_dim, dtype=x.dtype)[:, dims]  # (hd, s2)
    w_q, w_k, w_v = module.qkv.weight.detach().chunk(3, dim=0)
    row_out, column_out = [], []
    for h in range(heads):
        part = slice(h * head_dim, (h + 1) * head_dim)
        q, k, v = x @ w_q[part].T, x @ w_k[part].T, x @ w_v[part].T  # (B, n, hd)
        row = torch.softmax(q @ k.transpose(1, 2) @ p1.T / math.sqrt(head_dim), dim=-1) @ (p1 @ v)
        # V P2 softmax(P2^T K^T Q / sqrt(n)), the softmax normalizing over the s2 sampled dimensions
        column_weights = torch.softmax(p2.T @ k.transpose(1, 2) @ q / math.sqrt(length), dim=1)
        column = v @ p2 @ column_weights
        row_out.append(row)
        column_out.append(column)
    ln1, ln2 = module.norm_row, module.norm_column
    row_full = F.layer_norm(torch.cat(row_out, -1), (d_model,), ln1.weight.detach(), ln1.bias.detach())
    col_full = F.layer_norm(torch.cat(column_out, -1), (d_model,), ln2.weight.detach(), ln2.bias.detach())
    return 0.5 * row_full + 0.5 * col_full


def test_full_ranks_equal_dense_eq1() -> None:
    torch.manual_seed(0)
    length, d_model, heads = 24, 16, 2
    module = SkeletonAttention(d_model, heads, length, left_rank=length, right_rank=d_model // heads).double()
    _randomize_norms(module)
    assert module.left_index.tolist() == list(range(length))
    assert module.right_index.tolist() == list(range(d_model // heads))
    x = torch.randn(3, length, d_model, dtype=torch.float64)
    torch.testing.assert_close(module(x), _dense_eq1(module, x), rtol=0, atol=1e-12)


def test_sampled_ranks_equal_eq1_with_sampling_matrices() -> None:
    torch.manual_seed(1)
    length, d_model, heads = 32, 24, 3
    module = SkeletonAttention(d_model, heads, length, left_rank=5, right_rank=3, seed=7).double()
    _randomize_norms(module)
    assert module.left_index.numel() == 5 and module.right_index.numel() == 3
    assert module.left_index.unique().numel() == 5 and int(module.left_index.max()) < length
    x = torch.randn(2, length, d_model, dtype=torch.float64)
    expected = _dense_eq1(module, x, module.left_index, module.right_index)
    torch.testing.assert_close(module(x), expected, rtol=0, atol=1e-12)


def test_ranks_beyond_dimensions_mean_all() -> None:
    module = SkeletonAttention(8, 2, 6, left_rank=100, right_rank=100)
    assert module.left_index.tolist() == list(range(6))
    assert module.right_index.tolist() == list(range(4))


def test_index_sets_are_seeded_buffers_in_the_state_dict() -> None:
    a = SkeletonAttention(16, 2, 64, seed=3)
    b = SkeletonAttention(16, 2, 64, seed=3)
    c = SkeletonAttention(16, 2, 64, seed=4)
    assert {"left_index", "right_index"} <= set(a.state_dict())
    assert torch.equal(a.left_index, b.left_index) and torch.equal(a.right_index, b.right_index)
    assert not torch.equal(a.left_index, c.left_index)
    c.load_state_dict(a.state_dict())
    assert torch.equal(a.left_index, c.left_index)


def _mask_with_padding(batch: int, length: int, valid: list[int]) -> torch.Tensor:
    return torch.arange(length)[None, :] < torch.tensor(valid)[:, None]


def test_padded_values_do_not_influence_valid_outputs() -> None:
    torch.manual_seed(2)
    length, d_model = 20, 8
    module = SkeletonAttention(d_model, 2, length, left_rank=8, right_rank=3, seed=5).double().eval()
    mask = _mask_with_padding(3, length, [20, 13, 7])
    assert (~mask[:, module.left_index]).any(), "the sampled keys must include padded positions"
    x = torch.randn(3, length, d_model, dtype=torch.float64)
    noisy = torch.where(mask[..., None], x, 100 * torch.randn_like(x))
    out, out_noisy = module(x, mask), module(noisy, mask)
    torch.testing.assert_close(out[mask], out_noisy[mask], rtol=0, atol=1e-12)
    assert not torch.allclose(module(x)[mask], module(noisy)[mask]), "without the mask padding leaks"


def test_inf_or_nan_under_the_padding_reaches_no_valid_output() -> None:
    """The row branch weighted padded sampled values by 0 and the column branch summed padded queries times
    zeroed keys: 0 * inf = NaN in both."""
    torch.manual_seed(2)
    length, d_model = 20, 8
    module = SkeletonAttention(d_model, 2, length, left_rank=8, right_rank=3, seed=5).eval()
    mask = _mask_with_padding(3, length, [20, 13, 7])
    assert (~mask[:, module.left_index]).any(), "the sampled keys must include padded positions"
    assert_overflowing_padding_cannot_reach_valid_outputs(
        module, torch.randn(3, length, d_model), mask, zero_at_padding=False
    )


def test_mask_equals_attention_over_the_valid_tokens_only() -> None:
    torch.manual_seed(3)
    length, valid, d_model = 16, 11, 8
    module = SkeletonAttention(d_model, 2, length, left_rank=length, right_rank=4).double()
    x = torch.randn(1, length, d_model, dtype=torch.float64)
    mask = _mask_with_padding(1, length, [valid])
    rows = torch.arange(valid)
    with torch.no_grad():
        # zeroing padded tokens removes them from the column sums, as the mask must
        expected = _dense_eq1(module, x.masked_fill(~mask[..., None], 0.0), rows=rows)
    torch.testing.assert_close(module(x, mask)[:, :valid], expected[:, :valid], rtol=0, atol=1e-12)


def test_all_padding_sampled_keys_stay_finite() -> None:
    torch.manual_seed(4)
    length = 64
    module = SkeletonAttention(8, 2, length, left_rank=4, seed=0)
    first_sampled = int(module.left_index.min())
    mask = _mask_with_padding(2, length, [length, first_sampled])  # row 1: every sampled key is padding
    x = torch.randn(2, length, 8, requires_grad=True)
    out = module(x, mask)
    assert torch.isfinite(out).all()
    out.sum().backward()
    assert torch.isfinite(x.grad).all()
    # Nothing to attend to is not a licence to attend to padding: padded values still cannot reach row 1.
    noisy = torch.where(mask[..., None], x, 100 * torch.randn_like(x)).detach()
    with torch.no_grad():
        torch.testing.assert_close(module(noisy, mask)[mask], out[mask], rtol=0, atol=1e-5)


def test_mixer_padding_does_not_leak_through_the_smoother() -> None:
    torch.manual_seed(5)
    length, d_model = 32, 16
    mixer = S3AttentionMixer(d_model, 4, length, left_rank=8, right_rank=2, fold=4).double().eval()
    mask = _mask_with_padding(2, length, [32, 21])
    x = torch.randn(2, length, d_model, dtype=torch.float64)
    noisy = torch.where(mask[..., None], x, torch.randn_like(x) * 50)
    torch.testing.assert_close(mixer(x, mask)[mask], mixer(noisy, mask)[mask], rtol=0, atol=1e-12)


def test_bad_mask_is_rejected_with_the_expected_shape() -> None:
    module = SkeletonAttention(8, 2, 10)
    with pytest.raises(ValueError, match=r"bool tensor of shape \(2, 10\)"):
        module(torch.randn(2, 10, 8), torch.ones(2, 9, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\(batch, 10, 8\)"):
        module(torch.randn(2, 11, 8))

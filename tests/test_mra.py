"""MRA-2 / MRA-2-s against exact softmax attention and a dense O(n^2) oracle of the same approximation."""

from __future__ import annotations

import math

import pytest
import torch
from mixer_checks import assert_padding_cannot_reach_valid_outputs, padding_mask

from forecaster.nn import attention
from forecaster.nn.attention import MraAttention

APPROX = ["full", "sparse"]


def exact_attention(q, k, v, mask):
    logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    logits = logits.masked_fill(~mask[:, None, None, :], -math.inf)
    out = torch.softmax(logits, dim=-1) @ v
    return out * mask[:, None, :, None]


def dense_oracle(q, k, v, mask, selected, block_size, approx):
    """Effective logits: exact in selected blocks; block-mean logits (full) or -inf (sparse) elsewhere."""
    batch, heads, n, dim = q.shape
    n_blocks = math.ceil(n / block_size)
    block_of = torch.arange(n) // block_size
    exact = q @ k.transpose(-1, -2) / math.sqrt(dim)
    # Block means over the real tokens of each block.
    member = (block_of[None, :, None] == torch.arange(n_blocks)[None, None, :]) & mask[:, :, None]
    member = member.to(q.dtype)
    counts = member.sum(dim=1).clamp(min=1)[:, None, :, None]  # (B, 1, nb, 1)
    q_mean = torch.einsum("bhnd,bnx->bhxd", q, member) / counts
    k_mean = torch.einsum("bhnd,bnx->bhxd", k, member) / counts
    coarse = q_mean @ k_mean.transpose(-1, -2) / math.sqrt(dim)  # (B, h, nb, nb)
    coarse_tokens = coarse[:, :, block_of][:, :, :, block_of]  # (B, h, n, n)
    chosen = torch.zeros(batch, heads, n_blocks * n_blocks, dtype=torch.bool)
    chosen.scatter_(-1, selected, True)
    chosen = chosen.view(batch, heads, n_blocks, n_blocks)[:, :, block_of][:, :, :, block_of]
    elsewhere = coarse_tokens if approx == "full" else torch.full_like(exact, -math.inf)
    logits = torch.where(chosen, exact, elsewhere)
    logits = logits.masked_fill(~mask[:, None, None, :], -math.inf)
    weights = torch.exp(logits - logits.amax(dim=-1, keepdim=True).clamp(min=-1e300).detach())
    weights = torch.nan_to_num(weights, nan=0.0)
    denominator = weights.sum(dim=-1, keepdim=True)
    out = (weights @ v) / torch.where(denominator > 0, denominator, torch.ones_like(denominator))
    return out * mask[:, None, :, None]


def random_qkv(batch, heads, n, dim, seed):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, heads, n, dim, generator=generator, dtype=torch.float64) for _ in range(3)]


@pytest.mark.parametrize("approx", APPROX)
@pytest.mark.parametrize("n, block_size", [(100, 16), (64, 32), (33, 8)])
def test_every_block_selected_is_exact_softmax(approx, n, block_size):
    q, k, v = random_qkv(2, 3, n, 8, seed=n)
    mask = padding_mask([n, n - 21], n)
    mra = MraAttention(approx, block_size=block_size, blocks_per_row=math.ceil(n / block_size))
    out = mra(q, k, v, key_padding_mask=mask)
    torch.testing.assert_close(out, exact_attention(q, k, v, mask), rtol=1e-5, atol=1e-5)
    assert out[1, :, n - 21 :].abs().max() == 0
    no_mask = mra(q, k, v)
    torch.testing.assert_close(no_mask, exact_attention(q, k, v, torch.ones(2, n, dtype=torch.bool)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("blocks_per_row", [1, 2, 3])
def test_block_constant_queries_and_keys_make_mra2_exact(blocks_per_row):
    n, block_size, n_blocks = 80, 16, 5
    generator = torch.Generator().manual_seed(blocks_per_row)
    q_blocks, k_blocks = (torch.randn(2, 2, n_blocks, 1, 6, generator=generator, dtype=torch.float64)
                          for _ in range(2))
    q = q_blocks.expand(2, 2, n_blocks, block_size, 6).reshape(2, 2, n, 6)
    k = k_blocks.expand(2, 2, n_blocks, block_size, 6).reshape(2, 2, n, 6)
    v = torch.randn(2, 2, n, 6, generator=generator, dtype=torch.float64)
    mask = padding_mask([n, 57], n)
    garbage = q.clone()
    garbage[1, :, 57:] = 50.0  # padded tokens break block constancy; the masked block means ignore them
    mra = MraAttention("full", block_size=block_size, blocks_per_row=blocks_per_row, prior_first=0)
    torch.testing.assert_close(mra(garbage, k, v, key_padding_mask=mask), exact_attention(q, k, v, mask),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("approx", APPROX)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dense_oracle_matches_outputs_and_gradients_for_a_random_budget(approx, seed):
    generator = torch.Generator().manual_seed(100 + seed)
    n, block_size = 75, 8  # 10 blocks, the last one partial
    blocks_per_row = int(torch.randint(1, 6, (1,), generator=generator))
    prior_first = int(torch.randint(0, 2, (1,), generator=generator))
    prior_diagonal = int(torch.randint(0, 3, (1,), generator=generator))
    q, k, v = random_qkv(2, 2, n, 4, seed=seed)
    mask = padding_mask([n, 50], n)
    mra = MraAttention(approx, block_size, blocks_per_row, prior_first, prior_diagonal)
    selected = mra.select_blocks(q, k, key_padding_mask=mask)
    assert selected.shape == (2, 2, min(10 * blocks_per_row, 100))

    inputs = [t.clone().requires_grad_(True) for t in (q, k, v)]
    oracle_inputs = [t.clone().requires_grad_(True) for t in (q, k, v)]
    out = mra(*inputs, key_padding_mask=mask)
    expected = dense_oracle(*oracle_inputs, mask, selected, block_size, approx)
    torch.testing.assert_close(out, expected, rtol=1e-10, atol=1e-10)
    assert out[1, :, 50:].abs().max() == 0
    cotangent = torch.randn(out.shape, generator=generator, dtype=torch.float64)
    (out * cotangent).sum().backward()
    (expected * cotangent).sum().backward()
    for got, want in zip(inputs, oracle_inputs, strict=True):
        assert torch.isfinite(got.grad).all()
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("approx", APPROX)
def test_extreme_logits_stay_finite(approx):
    # Every logit is -1800: exp(-logit) overflows, so each scale must be stabilized by its own maximum.
    q = torch.full((1, 1, 48, 4), 30.0, dtype=torch.float64)
    v = torch.randn(1, 1, 48, 4, dtype=torch.float64)
    mask = padding_mask([40], 48)
    for blocks_per_row in (1, 3):
        out = MraAttention(approx, block_size=16, blocks_per_row=blocks_per_row, prior_first=0)(
            q, -q, v, key_padding_mask=mask
        )
        if approx == "full" or blocks_per_row == 3:
            torch.testing.assert_close(out, exact_attention(q, -q, v, mask), rtol=1e-10, atol=1e-10)
        assert torch.isfinite(out).all()


def test_approximation_is_not_exact_with_a_small_budget():
    q, k, v = random_qkv(1, 2, 128, 8, seed=7)
    mask = torch.ones(1, 128, dtype=torch.bool)
    for approx in APPROX:
        out = MraAttention(approx, block_size=16, blocks_per_row=2)(q, k, v)
        assert (out - exact_attention(q, k, v, mask)).abs().max() > 1e-3


def test_priors_are_selected_first_when_the_budget_allows():
    n_blocks, block_size = 8, 4
    n = n_blocks * block_size
    q, k, v = random_qkv(2, 2, n, 4, seed=3)
    # Make the prior blocks the least attractive: tiny first-row/column and diagonal coarse logits.
    k = k.clone()
    k[:, :, :block_size] = -20 * q[:, :, :block_size].mean(dim=2, keepdim=True)
    index = torch.arange(n_blocks)
    rows, cols = index[:, None], index[None, :]
    prior = (rows < 1) | (cols < 1) | ((rows - cols).abs() < 2)
    prior_ids = set((rows * n_blocks + cols)[prior].tolist())
    assert len(prior_ids) == 34
    mra = MraAttention("full", block_size=block_size, blocks_per_row=5, prior_first=1, prior_diagonal=2)
    selected = mra.select_blocks(q, k)
    for ids in selected.reshape(-1, selected.shape[-1]):
        assert prior_ids <= set(ids.tolist())
    small = MraAttention("full", block_size=block_size, blocks_per_row=2, prior_first=1, prior_diagonal=2)
    for ids in small.select_blocks(q, k).reshape(-1, 16):
        assert set(ids.tolist()) <= prior_ids  # the budget is spent on priors only


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match="approx"):
        MraAttention("dense")
    with pytest.raises(ValueError, match="block_size"):
        MraAttention(block_size=0)
    q = torch.zeros(1, 1, 10, 4)
    with pytest.raises(ValueError, match="key_padding_mask"):
        MraAttention()(q, q, q, key_padding_mask=torch.ones(1, 9, dtype=torch.bool))


@pytest.mark.parametrize("name", ["mra2", "mra2_s"])
def test_mixer_padding_cannot_reach_valid_outputs(name):
    assert name in attention.names()
    torch.manual_seed(0)
    mixer = attention.build(name, d_model=16, n_heads=2, seq_len=70, block_size=8, blocks_per_row=3).double()
    x = torch.randn(3, 70, 16, dtype=torch.float64)
    assert_padding_cannot_reach_valid_outputs(mixer, x, padding_mask([70, 45, 8], 70))

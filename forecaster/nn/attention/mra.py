"""MRA attention (paper 004): MRA-2 and MRA-2-s in pure PyTorch gather/scatter, on CPU and GPU alike.

Scales R = {block_size, 1}: block means of Q and K give coarse logits for every (query block, key block)
pair; the `blocks_per_row * n_blocks` pairs with the largest coarse logits (prior pairs first) are
refined with exact logits. MRA-2 keeps exp(coarse logit) on every other pair ("full"), MRA-2-s drops them
("sparse"). Memory is O(n * blocks_per_row * block_size) plus the (n / block_size)^2 coarse logits.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from forecaster.checks import check_choice, check_int
from forecaster.nn.attention.base import MultiHeadMixer, check_key_padding_mask, zero_padded_heads
from forecaster.nn.attention.registry import register

APPROXIMATIONS = ("full", "sparse")


def _finite_or_zero(x: Tensor) -> Tensor:
    """Row maxima with -inf (nothing to attend) replaced by 0, so exp(logit - max) never sees inf - inf."""
    return torch.where(torch.isfinite(x), x, torch.zeros_like(x))


class MraAttention(nn.Module):
    """Multi-resolution approximate softmax attention, called as mra(q, k, v, key_padding_mask=None).

    q, k, v are (B, heads, n, head_dim); key_padding_mask (B, n) bool, True = real token, masks both
    keys and queries (self-attention). Sequences are padded internally to a multiple of block_size.
    Block means use real tokens only, so padding never influences real outputs; padded query rows are 0.
    Priors: the first `prior_first` block rows and columns and the blocks with |row - col| <
    `prior_diagonal` are selected before any other block while the budget lasts.
    """

    def __init__(
        self,
        approx: str = "full",
        block_size: int = 32,
        blocks_per_row: int = 8,
        prior_first: int = 1,
        prior_diagonal: int = 0,
    ) -> None:
        super().__init__()
        check_choice("approx", approx, APPROXIMATIONS)
        for name, value, low in (("block_size", block_size, 1), ("blocks_per_row", blocks_per_row, 1),
                                 ("prior_first", prior_first, 0), ("prior_diagonal", prior_diagonal, 0)):
            check_int(name, value, minimum=low)
        self.approx = approx
        self.block_size = block_size
        self.blocks_per_row = blocks_per_row
        self.prior_first = prior_first
        self.prior_diagonal = prior_diagonal

    @staticmethod
    def _real_only(key_padding_mask: Tensor | None, *tensors: Tensor) -> list[Tensor]:
        """The (B, h, n, d) tensors with padded tokens set to 0 by masked_fill: the block means and block
        products below multiply padded tokens by 0 weights, and 0 * inf or NaN would be NaN."""
        batch, _, n, _ = tensors[0].shape
        check_key_padding_mask(key_padding_mask, batch, n)
        return [zero_padded_heads(tensor, key_padding_mask) for tensor in tensors]

    def _blocks(self, x: Tensor, n_blocks: int) -> Tensor:
        """(B, h, n, d) -> (B, h, n_blocks, block_size, d), zero-padded at the end."""
        batch, heads, n, dim = x.shape
        padded = torch.nn.functional.pad(x, (0, 0, 0, n_blocks * self.block_size - n))
        return padded.view(batch, heads, n_blocks, self.block_size, dim)

    def _token_mask(self, key_padding_mask: Tensor | None, q: Tensor, n_blocks: int) -> Tensor:
        """(B, n_blocks, block_size) bool: real tokens, False at internal and user padding."""
        batch, _, n, _ = q.shape
        if key_padding_mask is None:
            key_padding_mask = torch.ones(batch, n, dtype=torch.bool, device=q.device)
        mask = torch.nn.functional.pad(key_padding_mask, (0, n_blocks * self.block_size - n), value=False)
        return mask.view(batch, n_blocks, self.block_size)

    def _coarse(self, q: Tensor, k: Tensor, key_padding_mask: Tensor | None) -> tuple[Tensor, Tensor, int]:
        """Coarse logits mean(Q_x) . mean(K_y) / sqrt(d) (B, h, nb, nb), the token mask, n_blocks."""
        n, dim = q.shape[-2:]
        n_blocks = math.ceil(n / self.block_size)
        mask = self._token_mask(key_padding_mask, q, n_blocks)
        weights = mask.to(q.dtype)[:, None, :, :, None]
        counts = weights.sum(dim=3).clamp(min=1.0)
        q_mean = (self._blocks(q, n_blocks) * weights).sum(dim=3) / counts
        k_mean = (self._blocks(k, n_blocks) * weights).sum(dim=3) / counts
        return q_mean @ k_mean.transpose(-1, -2) / math.sqrt(dim), mask, n_blocks

    def budget(self, n_blocks: int) -> int:
        """How many (query block, key block) pairs get exact logits."""
        return min(self.blocks_per_row * n_blocks, n_blocks * n_blocks)

    def _select(self, coarse: Tensor, mask: Tensor) -> Tensor:
        """Flat ids row * nb + col of the selected blocks, (B, h, budget): priors, then top coarse logits."""
        n_blocks = coarse.shape[-1]
        index = torch.arange(n_blocks, device=coarse.device)
        rows, cols = index[:, None], index[None, :]
        first = (rows < self.prior_first) | (cols < self.prior_first)
        prior = first | ((rows - cols).abs() < self.prior_diagonal)
        real = mask.any(dim=-1)  # (B, nb)
        pair_real = (real[:, :, None] & real[:, None, :])[:, None]
        priority = torch.where(prior, torch.full_like(coarse, math.inf), coarse.detach())
        priority = priority.masked_fill(~pair_real, -math.inf)
        return priority.flatten(-2).topk(self.budget(n_blocks), dim=-1, sorted=False).indices

    def select_blocks(self, q: Tensor, k: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        """The blocks that get exact logits, as flat ids row * n_blocks + col of shape (B, h, budget)."""
        q, k = self._real_only(key_padding_mask, q, k)
        coarse, mask, _ = self._coarse(q, k, key_padding_mask)
        return self._select(coarse, mask)

    def forward(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        """(B, h, n, d) x3 -> (B, h, n, d) approximate softmax(Q K^T / sqrt(d)) V."""
        batch, heads, n, dim = q.shape
        q, k, v = self._real_only(key_padding_mask, q, k, v)
        coarse, mask, n_blocks = self._coarse(q, k, key_padding_mask)
        selected = self._select(coarse, mask)
        bs = self.block_size
        rows, cols = selected // n_blocks, selected % n_blocks

        # Exact logits inside the selected blocks: gather (B*h*budget, bs, d) blocks by flat row index.
        base = torch.arange(batch * heads, device=q.device).view(batch, heads, 1) * n_blocks
        flat_rows, flat_cols = (base + rows).reshape(-1), (base + cols).reshape(-1)
        q_blocks = self._blocks(q / math.sqrt(dim), n_blocks).reshape(-1, bs, dim)
        k_blocks = self._blocks(k, n_blocks).reshape(-1, bs, dim)
        v_blocks = self._blocks(v, n_blocks).reshape(-1, bs, dim)
        logits = q_blocks.index_select(0, flat_rows) @ k_blocks.index_select(0, flat_cols).transpose(-1, -2)
        key_real = mask[:, None].expand(batch, heads, n_blocks, bs).reshape(-1, bs).index_select(0, flat_cols)
        logits.masked_fill_(~key_real[:, None, :], -math.inf)  # in place: matmul's backward needs only inputs

        # Per-query maximum over the exact logits of every selected block in the query's block row.
        row_max = torch.full((batch * heads * n_blocks, bs), -math.inf, dtype=q.dtype, device=q.device)
        row_ids = flat_rows[:, None].expand(-1, bs)
        row_max = row_max.scatter_reduce(0, row_ids, logits.detach().amax(dim=-1), "amax")
        row_max = row_max.view(batch, heads, n_blocks, bs)

        if self.approx == "full":
            chosen = torch.zeros(batch, heads, n_blocks * n_blocks, dtype=torch.bool, device=q.device)
            chosen = chosen.scatter(-1, selected, True).view(batch, heads, n_blocks, n_blocks)
            key_block_real = mask.any(dim=-1)[:, None, None, :]
            coarse = coarse.masked_fill(chosen | ~key_block_real, -math.inf)
            coarse_max = coarse.detach().amax(dim=-1)  # (B, h, nb)
            row_max = torch.maximum(row_max, coarse_max[..., None])
        row_max = _finite_or_zero(row_max)

        flat_max = row_max.reshape(-1, bs).index_select(0, flat_rows)
        weights = torch.exp(logits - flat_max[:, :, None])
        numerator = torch.zeros(batch * heads * n_blocks, bs, dim, dtype=q.dtype, device=q.device)
        numerator = numerator.index_add(0, flat_rows, weights @ v_blocks.index_select(0, flat_cols))
        denominator = torch.zeros(batch * heads * n_blocks, bs, dtype=q.dtype, device=q.device)
        denominator = denominator.index_add(0, flat_rows, weights.sum(dim=-1))
        numerator = numerator.view(batch, heads, n_blocks, bs, dim)
        denominator = denominator.view(batch, heads, n_blocks, bs)

        if self.approx == "full":
            # Coarse part at the block row's own scale, then rescaled to each query's maximum.
            has_coarse = torch.isfinite(coarse_max)[..., None]
            safe_coarse_max = _finite_or_zero(coarse_max)
            coarse_weights = torch.exp(coarse - safe_coarse_max[..., None])
            token_weights = mask.to(q.dtype)[:, None, :, :, None]
            v_sums = (self._blocks(v, n_blocks) * token_weights).sum(dim=3)
            counts = mask.to(q.dtype).sum(dim=-1)[:, None, :, None]
            # exp(coarse_max - row_max) <= 1 where the row has coarse blocks; exactly 0 where it has none.
            rescale = torch.where(has_coarse, torch.exp(safe_coarse_max[..., None] - row_max), 0.0)[..., None]
            numerator = numerator + rescale * (coarse_weights @ v_sums)[:, :, :, None, :]
            denominator = denominator + rescale[..., 0] * (coarse_weights @ counts)

        query_real = mask[:, None] & (denominator > 0)
        out = numerator / torch.where(query_real, denominator, torch.ones_like(denominator))[..., None]
        out = out.masked_fill(~query_real[..., None], 0.0)
        return out.reshape(batch, heads, n_blocks * bs, dim)[:, :, :n]


class MraMixer(MultiHeadMixer):
    """MRA attention with the zoo's q/k/v and output projections; `dropout` acts on the mixed values.

    The `mra2` / `mra2_s` builders declare no `dropout`, so an LRA preset's attention dropout does not reach
    them: the MRA reference attention has none (only its blocks' dropout); given as a mixer option it does.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        approx: str = "full",
        block_size: int = 32,
        blocks_per_row: int = 8,
        prior_first: int = 1,
        prior_diagonal: int = 0,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        self.mra = MraAttention(approx, block_size, blocks_per_row, prior_first, prior_diagonal)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        return self.dropout(self.mra(q, k, v, key_padding_mask))


@register("mra2")
def mra2_mixer(*, d_model: int, n_heads: int, seq_len: int, **options) -> MraMixer:
    """MRA-2: exact logits in the selected blocks, exp(mean logit) on every other block."""
    return MraMixer(d_model, n_heads, seq_len, approx="full", **options)


@register("mra2_s")
def mra2_sparse_mixer(*, d_model: int, n_heads: int, seq_len: int, **options) -> MraMixer:
    """MRA-2-s: only the selected blocks take part in the softmax."""
    return MraMixer(d_model, n_heads, seq_len, approx="sparse", **options)

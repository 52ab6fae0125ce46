"""Skeleton attention (paper 001, eq. 1, Algorithm 1) and the forecasting S3Attention block (Smoother +
Skeleton), the `block=forecasting` choice of the `skeleton` mixer (the other is in skeleton_lra.py).

Cost is linear in the sequence length: the row branch attends to `left_rank` sampled token positions, the
column branch to `right_rank` sampled head dimensions.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from forecaster.checks import check_int
from forecaster.nn.attention.base import check_key_padding_mask, zero_padded
from forecaster.nn.smoother import Smoother


def _sample_indices(size: int, rank: int, generator: torch.Generator) -> torch.Tensor:
    """`rank` distinct sorted indices of range(size) drawn once; all of them when rank >= size."""
    check_int("sampling rank", rank, minimum=1)
    if rank >= size:
        return torch.arange(size)
    return torch.randperm(size, generator=generator)[:rank].sort().values


def register_index_sets(
    module: nn.Module, seq_len: int, head_dim: int, left_rank: int, right_rank: int, seed: int
) -> None:
    """Register the sampled token positions `left_index` and head dimensions `right_index` of `module`.

    Persistent buffers drawn from a generator seeded by `seed`, so a module restored from its state_dict is
    the same function whatever seed the new instance was built with (the reference code kept plain tensors,
    REFERENCE.md section 1.5, so its reloads differed).
    """
    generator = torch.Generator().manual_seed(seed)
    module.register_buffer("left_index", _sample_indices(seq_len, left_rank, generator))
    module.register_buffer("right_index", _sample_indices(head_dim, right_rank, generator))


class SkeletonAttention(nn.Module):
    """Row (sampled tokens) + column (sampled head dimensions) attention, each LayerNormed, averaged.

    q, k, v = Linear(D, 3D, bias=False)(x) split into heads of size hd = D / n_heads.
    Row branch: softmax(q k_s^T / sqrt(hd)) v_s over `left_rank` sampled token positions s.
    Column branch: v_t softmax(q^T k_t / sqrt(seq_len))^T over `right_rank` sampled head dimensions t.
    Output: 0.5 * LayerNorm1(row) + 0.5 * LayerNorm2(column), LayerNorms over D.

    The sampled index sets are persistent buffers (`register_index_sets`).

    With a key padding mask (B, seq_len), True = real token: padded sampled keys get no row-attention
    weight and padded tokens are zeroed out of the column branch's q^T k sums, so values at padded positions
    never reach valid outputs. If every sampled key of a sequence is padding, its row branch has nothing to
    attend to and is zero before its LayerNorm (the column branch still carries information): the output
    stays finite and padding still cannot reach it.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        left_rank: int = 8,
        right_rank: int = 8,
        dropout: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if n_heads < 1 or d_model % n_heads:
            raise ValueError(f"d_model {d_model} must be divisible by n_heads {n_heads}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.seq_len = seq_len
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.norm_row = nn.LayerNorm(d_model)
        self.norm_column = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        register_index_sets(self, seq_len, self.head_dim, left_rank, right_rank, seed)

    def index_ranges(self) -> dict[str, int]:
        """Each index buffer and the length of the axis it indexes, which restored values must stay within
        (forecaster.artifacts checks a bundle's before its weights are used)."""
        return {"left_index": self.seq_len, "right_index": self.head_dim}

    def _row_attention(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Queries of every token against the keys/values of the sampled tokens -> (B, L, h, hd).

        Scores are laid out (B, s1, L, h) so the softmax runs over a non-innermost axis: PyTorch's CPU
        softmax over an innermost axis as short as left_rank is about 10x slower (measured, torch 2.13).
        """
        sampled_key = key.index_select(1, self.left_index)  # (B, s1, h, hd): only s1 tokens are gathered
        sampled_value = value.index_select(1, self.left_index)
        scores = torch.einsum("blhd,bshd->bslh", query, sampled_key) / math.sqrt(self.head_dim)
        if mask is None:
            weights = torch.softmax(scores, dim=1)
        else:
            valid = mask.index_select(1, self.left_index)[:, :, None, None]
            # A finite fill keeps all-padding rows defined (uniform); masked_fill then zeroes them, and
            # the padded sampled values (a 0 weight times an inf or NaN value would still be NaN).
            scores = scores.masked_fill(~valid, torch.finfo(scores.dtype).min)
            weights = torch.softmax(scores, dim=1).masked_fill(~valid, 0.0)
            sampled_value = sampled_value.masked_fill(~valid, 0.0)
        return torch.einsum("bslh,bshd->blhd", self.dropout(weights), sampled_value)

    def _column_attention(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Each query dimension attends to the sampled key dimensions (sums over tokens) -> (B, L, h, hd).

        Scores are laid out (B, s2, h, hd), the softmax axis outermost, for the same reason as the row branch.
        """
        if self.right_index.numel() < self.head_dim:  # else every dim is sampled and the order is irrelevant
            key = key.index_select(-1, self.right_index)
            value = value.index_select(-1, self.right_index)
        if mask is not None:  # both factors: the sums over tokens see padded queries times zeroed keys
            query = query.masked_fill(~mask[:, :, None, None], 0.0)
            key = key.masked_fill(~mask[:, :, None, None], 0.0)
        scores = torch.einsum("blhd,blht->bthd", query, key) / math.sqrt(self.seq_len)
        weights = self.dropout(torch.softmax(scores, dim=1))
        return torch.einsum("blht,bthd->blhd", value, weights)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, seq_len, D), key_padding_mask (B, seq_len) bool with True = real token -> (B, seq_len, D)."""
        if x.ndim != 3 or x.shape[1] != self.seq_len or x.shape[2] != self.d_model:
            raise ValueError(
                f"SkeletonAttention expects input (batch, {self.seq_len}, {self.d_model}), "
                f"got {tuple(x.shape)}"
            )
        batch = x.shape[0]
        check_key_padding_mask(key_padding_mask, batch, self.seq_len)
        heads = (batch, self.seq_len, self.n_heads, self.head_dim)
        # Split, not indexed: the backward is one concatenation, not a zero-filled copy per use.
        query, key, value = (part.view(heads) for part in self.qkv(x).chunk(3, dim=-1))
        row = self._row_attention(query, key, value, key_padding_mask)
        column = self._column_attention(query, key, value, key_padding_mask)
        row = row.reshape(batch, self.seq_len, self.d_model)
        column = column.reshape(batch, self.seq_len, self.d_model)
        return 0.5 * self.norm_row(row) + 0.5 * self.norm_column(column)


class S3AttentionMixer(nn.Module):
    """The forecasting S3Attention block: SkeletonAttention(Smoother(x)), the attention block of paper 001.

    Follows the mixer interface `mixer(x, key_padding_mask=None)`. Padded positions are zeroed before the
    Smoother (its Fourier convolution mixes all time steps), so their values cannot reach valid outputs.
    `smoother_dropout` defaults to `dropout`.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        left_rank: int = 8,
        right_rank: int = 8,
        fold: int = 8,
        dropout: float = 0.0,
        smoother_dropout: float | None = None,
        kernel_size: int = 3,
        activation: str = "elu",
        norm: str = "batch_time",
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.smoother = Smoother(
            d_model,
            seq_len,
            fold=fold,
            kernel_size=kernel_size,
            dropout=dropout if smoother_dropout is None else smoother_dropout,
            activation=activation,
            norm=norm,
        )
        self.attention = SkeletonAttention(
            d_model, n_heads, seq_len, left_rank=left_rank, right_rank=right_rank, dropout=dropout, seed=seed
        )

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, seq_len, D), key_padding_mask (B, seq_len) bool with True = real token -> (B, seq_len, D)."""
        if key_padding_mask is not None:
            check_key_padding_mask(key_padding_mask, x.shape[0], x.shape[1])
            x = zero_padded(x, key_padding_mask)
        return self.attention(self.smoother(x), key_padding_mask)

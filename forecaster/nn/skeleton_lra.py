"""The S3Attention block of the reference LRA code, and the `skeleton` mixer's choice between the two blocks.

`--mixer-option block=forecasting` (the default) is the block of paper 001 as the forecaster uses it
(skeleton.py); `block=reference` is the block the public reference code trained on Long Range Arena
(wxie9/S3Attention, lra/attention1.py with attn_type "attention_SKT", lra/lmu.py `LMUFFT_nccl`,
lra/attention_SKT.py), which differs in ways REFERENCE.md section 5 lists.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import torch
from torch import Tensor, nn

from forecaster.checks import check_choice
from forecaster.errors import ConfigError
from forecaster.nn.attention.base import (
    MultiHeadMixer,
    check_inputs,
    merge_heads,
    split_heads,
    zero_padded,
    zero_padded_heads,
)
from forecaster.nn.attention.registry import register
from forecaster.nn.skeleton import S3AttentionMixer, SkeletonAttention, register_index_sets
from forecaster.nn.smoother import Smoother


class ReferenceSkeletonAttention(MultiHeadMixer):
    """Skeleton attention as the reference LRA code computes it: eq. 1 between Q/K/V and output projections.

    Q, K, V = Linear(D, D) with bias each (one fused Linear(D, 3D)); K and V are multiplied by the mask, so a
    padded key scores 0 and carries a zero value: a sampled padded key keeps its share of the row softmax
    (the reference does not mask the scores) but adds nothing. Row and column branches, their LayerNorms and
    the 0.5/0.5 average are those of `SkeletonAttention`; then the output projection Linear(D, D) with bias,
    and outputs at padded positions zeroed (the mixer contract; the reference leaves them to its pooling).
    `dropout` acts on both branches' attention weights (the reference's attention_dropout).
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
        super().__init__(d_model, n_heads, seq_len, dropout=dropout)
        self.norm_row = nn.LayerNorm(d_model)
        self.norm_column = nn.LayerNorm(d_model)
        register_index_sets(self, seq_len, self.head_dim, left_rank, right_rank, seed)

    index_ranges = SkeletonAttention.index_ranges

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        """(B, h, n, hd) queries, keys, values -> (B, h, n, hd)."""
        k, v = zero_padded_heads(k, key_padding_mask), zero_padded_heads(v, key_padding_mask)
        row_key, row_value = k[:, :, self.left_index], v[:, :, self.left_index]  # (B, h, s1, hd)
        row_weights = torch.softmax(q @ row_key.transpose(-1, -2) / math.sqrt(self.head_dim), dim=-1)
        row = self.dropout(row_weights) @ row_value
        column_key, column_value = k[..., self.right_index], v[..., self.right_index]  # (B, h, n, s2)
        column_weights = torch.softmax(q.transpose(-1, -2) @ column_key / math.sqrt(self.seq_len), dim=-1)
        column = column_value @ self.dropout(column_weights.transpose(-1, -2))
        mixed = 0.5 * self.norm_row(merge_heads(row)) + 0.5 * self.norm_column(merge_heads(column))
        return split_heads(mixed, self.n_heads)


class ReferenceS3Block(nn.Module):
    """The reference LRA S3Attention block: ReferenceSkeletonAttention(Smoother(x)) (REFERENCE.md section 5).

    Its Smoother (`LMUFFT_nccl`) filters every channel with its own spectrum (no channel grouping: fold = D),
    then a kernel-1 convolution stem over [smoothed, x], BatchNorm1d over the time steps, ELU and dropout
    `smoother_dropout` (the reference's rnn_dropout, default 0.5). Padded inputs are zeroed by multiplying
    with the mask before the Smoother, whose Fourier convolution mixes all time steps: the reference
    smooths its pad-token embeddings too, which this block does not, so that what lies under the mask never
    reaches real tokens. Ranks: the reference samples `num_landmarks` rows and columns alike.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        left_rank: int = 8,
        right_rank: int = 8,
        dropout: float = 0.0,
        smoother_dropout: float = 0.5,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.smoother = Smoother(
            d_model,
            seq_len,
            fold=d_model,
            kernel_size=1,
            dropout=smoother_dropout,
            activation="elu",
            norm="batch_time",
        )
        self.attention = ReferenceSkeletonAttention(
            d_model, n_heads, seq_len, left_rank=left_rank, right_rank=right_rank, dropout=dropout, seed=seed
        )

    def forward(self, x: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        """x (B, seq_len, D), key_padding_mask (B, seq_len) bool with True = real token -> (B, seq_len, D)."""
        check_inputs(x, key_padding_mask, self.attention.d_model)
        return self.attention(self.smoother(zero_padded(x, key_padding_mask)), key_padding_mask)


BLOCKS: dict[str, type[nn.Module]] = {"forecasting": S3AttentionMixer, "reference": ReferenceS3Block}


@register("skeleton")
def skeleton_block(*, block: str = "forecasting", seed: int = 0, **options: Any) -> nn.Module:
    """The S3Attention mixer: the forecasting block (default) or the reference LRA block, by `block`; both
    draw their index sets from `seed` (declared here, so that each LRA layer is given its own).

    ConfigError naming the value for an unknown block, or naming the options the chosen block does not take.
    """
    block_class = BLOCKS[check_choice("skeleton mixer option 'block'", block, tuple(BLOCKS))]
    accepted = inspect.signature(block_class).parameters
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ConfigError(
            f"skeleton block {block!r} takes no option {', '.join(map(repr, unknown))}; expected some of "
            f"{', '.join(name for name in accepted if name not in ('d_model', 'n_heads', 'seq_len'))}"
        )
    return block_class(seed=seed, **options)

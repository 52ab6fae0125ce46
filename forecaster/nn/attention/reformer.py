"""Reformer's locality-sensitive-hashing attention."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from forecaster.checks import check_int
from forecaster.nn.attention.base import check_inputs, merge_heads, seeded_generator, split_heads, zero_padded
from forecaster.nn.attention.registry import register

# Logit given to a token's own key in Reformer: below any real logit, far above a padded key's logit.
_SELF_LOGIT = -5e4

@register("reformer")
class LSHAttention(nn.Module):
    """Reformer LSH attention (Kitaev et al., 2020, "Reformer: The Efficient Transformer", ICLR).

    Queries and keys share one projection (keys are the unit-normalized queries). Each of `n_hashes` rounds
    hashes tokens by random rotations into `n_buckets` buckets (argmax of [xR, -xR]), sorts by bucket and
    position, and attends within chunks of `chunk_len` plus the previous chunk. A token never attends to
    itself unless it has no other key. Rounds are combined by their log-sum-exp weights. Padded tokens go
    to an extra last bucket, so their values never change how real tokens are chunked.

    Reformer hashes with new random rotations at every training forward: `redraw()` draws them from the
    module's seeded generator into the saved buffer, which LRA training does before every
    `redraw_interval`-th step (default 1, every step; 0: never); evaluation uses the buffer as it is, so a
    reloaded model hashes as the trained one last did.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        dropout: float = 0.0,
        n_hashes: int = 2,
        chunk_len: int = 64,
        n_buckets: int | None = None,
        seed: int = 0,
        redraw_interval: int = 1,
    ) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        n_buckets = n_buckets if n_buckets is not None else max(1, 2 * (seq_len // (2 * chunk_len)))
        if n_buckets != 1 and n_buckets % 2:
            raise ValueError(f"reformer n_buckets must be 1 or even, got {n_buckets}")
        self.d_model, self.n_heads, self.seq_len = d_model, n_heads, seq_len
        self.head_dim = d_model // n_heads
        self.n_hashes, self.chunk_len, self.n_buckets = n_hashes, chunk_len, n_buckets
        self.redraw_interval = check_int("reformer redraw_interval", redraw_interval, minimum=0)
        self.qk = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self._generator = seeded_generator(seed)
        self.register_buffer("rotations", self._draw_rotations())

    def _draw_rotations(self) -> Tensor:
        return torch.randn(
            self.head_dim, self.n_hashes, max(1, self.n_buckets // 2), generator=self._generator
        )

    def redraw(self) -> None:
        """Draw fresh hash rotations in place from the module's seeded generator."""
        self.rotations.copy_(self._draw_rotations().to(self.rotations))

    def _buckets(self, qk: Tensor, valid: Tensor) -> Tensor:
        """Bucket ids (B, h, n_hashes, n); padded tokens get the extra bucket n_buckets."""
        batch, heads, length, _ = qk.shape
        if self.n_buckets == 1:
            buckets = torch.zeros(batch, heads, self.n_hashes, length, dtype=torch.long, device=qk.device)
        else:
            rotated = torch.einsum("bhnd,dkr->bhknr", qk, self.rotations.to(qk.dtype))
            buckets = torch.cat([rotated, -rotated], dim=-1).argmax(dim=-1)
        return buckets.masked_fill(~valid[:, None, None, :], self.n_buckets)

    def forward(self, x: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        check_inputs(x, key_padding_mask, self.d_model)
        batch, length, _ = x.shape
        padded_length = math.ceil(length / self.chunk_len) * self.chunk_len
        valid = (
            key_padding_mask if key_padding_mask is not None else x.new_ones(batch, length, dtype=torch.bool)
        )
        x = F.pad(zero_padded(x, valid), (0, 0, 0, padded_length - length))
        valid = F.pad(valid, (0, padded_length - length), value=False)
        qk = split_heads(self.qk(x), self.n_heads)
        v = split_heads(self.value(x), self.n_heads)

        buckets = self._buckets(qk, valid)
        rounds = torch.arange(self.n_hashes, device=x.device)[:, None]
        positions = torch.arange(padded_length, device=x.device)
        sort_keys = (rounds * (self.n_buckets + 1) + buckets) * padded_length + positions
        order = sort_keys.flatten(2).argsort(dim=-1)  # (B, h, R * n)
        token = order % padded_length

        def gather(tensor: Tensor) -> Tensor:
            return tensor.gather(2, token[..., None].expand(-1, -1, -1, tensor.shape[-1]))

        n_chunks = self.n_hashes * padded_length // self.chunk_len
        chunk_shape = (batch, self.n_heads, n_chunks, self.chunk_len)
        queries = gather(qk).view(*chunk_shape, self.head_dim)
        values = gather(v).view(*chunk_shape, self.head_dim)
        query_token = token.view(chunk_shape)
        key_valid = valid.gather(1, token.flatten(1)).view(chunk_shape)
        keys = F.normalize(queries, dim=-1)
        if n_chunks > 1:

            def with_previous(tensor: Tensor) -> Tensor:
                return torch.cat([tensor, tensor.roll(1, dims=2)], dim=3)

            keys, values, key_token, key_valid = map(with_previous, (keys, values, query_token, key_valid))
        else:
            key_token = query_token

        logits = queries @ keys.transpose(-1, -2) * self.head_dim**-0.5
        logits = logits.masked_fill(query_token[..., None] == key_token[..., None, :], _SELF_LOGIT)
        logits = logits.masked_fill(~key_valid[..., None, :], torch.finfo(logits.dtype).min)
        log_normalizer = logits.logsumexp(dim=-1, keepdim=True)
        attended = self.dropout(torch.exp(logits - log_normalizer)) @ values

        unsort = order.argsort(dim=-1)
        attended = attended.flatten(2, 3).gather(2, unsort[..., None].expand(-1, -1, -1, self.head_dim))
        log_normalizer = log_normalizer.flatten(2).gather(2, unsort)
        attended = attended.view(batch, self.n_heads, self.n_hashes, padded_length, self.head_dim)
        round_weights = torch.softmax(
            log_normalizer.view(batch, self.n_heads, self.n_hashes, padded_length), 2
        )
        mixed = (attended * round_weights[..., None]).sum(dim=2)
        mixed = self.out(merge_heads(mixed))[:, :length]
        return zero_padded(mixed, key_padding_mask)



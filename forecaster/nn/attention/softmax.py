"""Exact softmax attention, full (`softmax`) and within a local window (`local`)."""

from __future__ import annotations

import math
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn.attention import SDPBackend, sdpa_kernel

from forecaster.checks import check_int
from forecaster.nn.attention.base import MultiHeadMixer, zero_padded_heads
from forecaster.nn.attention.registry import register


@register("softmax")
class SoftmaxAttention(MultiHeadMixer):
    """Full softmax attention (Vaswani et al., 2017, "Attention Is All You Need", NeurIPS).

    `kernel="sdpa"` lets torch pick the fastest scaled_dot_product_attention backend (on CPU and recent GPUs
    a memory-efficient kernel that never stores the n x n matrix); `kernel="math"` forces the textbook path
    that materializes it, which is what the quadratic memory of the papers' tables measures.
    """

    def __init__(
        self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0, kernel: str = "sdpa"
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        if kernel not in ("sdpa", "math"):
            raise ValueError(f"softmax kernel must be 'sdpa' or 'math', got {kernel!r}")
        self.kernel = kernel

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        attn_mask = None if key_padding_mask is None else key_padding_mask[:, None, None, :]
        # Masked keys get weight 0, but an inf or NaN key or value under the mask still gives NaN (0 * inf).
        k, v = zero_padded_heads(k, key_padding_mask), zero_padded_heads(v, key_padding_mask)
        dropout_p = self.dropout.p if self.training else 0.0
        with sdpa_kernel(SDPBackend.MATH) if self.kernel == "math" else nullcontext():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)


@register("local")
class LocalAttention(MultiHeadMixer):
    """Sliding-window attention (the "Local Attention" baseline of Tay et al., 2021, Long Range Arena, ICLR).

    Token i attends to the real tokens j with |i - j| <= window. Computed blockwise (blocks of `window`
    tokens see their own and both neighbouring blocks), so memory grows as n * window, not n^2.
    """

    def __init__(
        self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0, window: int = 64
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        check_int("local window", window, minimum=1)
        self.window = window

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        batch, heads, length, head_dim = q.shape
        block = min(self.window, length)
        n_blocks = math.ceil(length / block)
        pad = n_blocks * block - length
        valid = (
            key_padding_mask if key_padding_mask is not None else q.new_ones(batch, length, dtype=torch.bool)
        )
        v = zero_padded_heads(v, key_padding_mask)  # a masked key's 0 weight times inf or NaN is NaN
        # Keys and values padded by one block on each side; block b sees padded blocks b, b+1, b+2.
        k_ext = F.pad(k, (0, 0, block, block + pad)).unfold(2, 3 * block, block)  # (B, h, nb, hd, 3blk)
        v_ext = F.pad(v, (0, 0, block, block + pad)).unfold(2, 3 * block, block)
        valid_ext = F.pad(valid, (block, block + pad), value=False).unfold(1, 3 * block, block)
        q_blocks = F.pad(q, (0, 0, 0, pad)).view(batch, heads, n_blocks, block, head_dim)

        query_pos = torch.arange(n_blocks * block, device=q.device).view(n_blocks, block, 1)
        key_pos = (torch.arange(n_blocks, device=q.device)[:, None] * block - block) + torch.arange(
            3 * block, device=q.device
        )
        in_window = (query_pos - key_pos[:, None, :]).abs() <= self.window
        allowed = in_window[None] & valid_ext[:, :, None, :]  # (B, nb, blk, 3blk)

        logits = (q_blocks @ k_ext) * head_dim**-0.5
        logits = logits.masked_fill(~allowed[:, None], torch.finfo(q.dtype).min)
        weights = self.dropout(torch.softmax(logits, dim=-1))
        mixed = weights @ v_ext.transpose(-1, -2)
        return mixed.reshape(batch, heads, n_blocks * block, head_dim)[:, :, :length]



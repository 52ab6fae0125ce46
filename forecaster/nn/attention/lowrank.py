"""Low-rank approximations of softmax attention: Linformer (projected keys) and Nystromformer (landmarks)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from forecaster.nn.attention.base import MultiHeadMixer, seeded_generator, zero_padded_heads
from forecaster.nn.attention.registry import register


@register("linformer")
class LinformerAttention(MultiHeadMixer):
    """Linformer (Wang et al., 2020, "Linformer: Self-Attention with Linear Complexity", arXiv:2006.04768).

    Keys and values are projected along the sequence to `proj_dim` rows by per-head matrices E and F that
    belong to this instance (never shared across layers). Padded keys and values are zeroed before the
    projection, so they contribute nothing. E, F ~ N(0, 1/seq_len) keep the projected rows at the scale of
    the keys; inputs shorter than seq_len use the first n columns.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        dropout: float = 0.0,
        proj_dim: int = 256,
        seed: int = 0,
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        generator = seeded_generator(seed)
        std = 1.0 / math.sqrt(seq_len)
        self.proj_k = nn.Parameter(torch.randn(n_heads, proj_dim, seq_len, generator=generator) * std)
        self.proj_v = nn.Parameter(torch.randn(n_heads, proj_dim, seq_len, generator=generator) * std)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        length = k.shape[2]
        if length > self.seq_len:
            raise ValueError(f"linformer was built for seq_len={self.seq_len}, got length {length}")
        k, v = zero_padded_heads(k, key_padding_mask), zero_padded_heads(v, key_padding_mask)
        k = torch.einsum("hpn,bhnd->bhpd", self.proj_k[:, :, :length], k)
        v = torch.einsum("hpn,bhnd->bhpd", self.proj_v[:, :, :length], v)
        dropout_p = self.dropout.p if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)


def _segment_means(x: Tensor, n_segments: int) -> Tensor:
    """Means of `n_segments` contiguous, nearly equal segments along dim -2 (Nystromformer landmarks)."""
    length = x.shape[-2]
    segment = torch.arange(length, device=x.device) * n_segments // length
    averaging = F.one_hot(segment, n_segments).T.to(x.dtype)
    averaging = averaging / averaging.sum(dim=1, keepdim=True)
    return averaging @ x


def iterative_pinv(matrix: Tensor, n_iter: int) -> Tensor:
    """Moore-Penrose pseudo-inverse by the cubic Newton iteration of Nystromformer (Razavi et al., 2014).

    Starts from Z0 = A^T / (max column sum * max row sum) of each matrix, which guarantees convergence for
    the nonnegative row-stochastic matrices that softmax produces.
    """
    abs_matrix = matrix.abs()
    scale = abs_matrix.sum(dim=-2).amax(dim=-1) * abs_matrix.sum(dim=-1).amax(dim=-1)
    z = matrix.transpose(-1, -2) / scale[..., None, None]
    identity = torch.eye(matrix.shape[-1], dtype=matrix.dtype, device=matrix.device)
    for _ in range(n_iter):
        az = matrix @ z
        z = 0.25 * z @ (13 * identity - az @ (15 * identity - az @ (7 * identity - az)))
    return z


@register("nystromformer")
class NystromAttention(MultiHeadMixer):
    """Nystromformer (Xiong et al., 2021, "Nystromformer: A Nystrom-Based Algorithm for Approximating
    Self-Attention", AAAI).

    softmax(QK^T) ~ softmax(Q K~^T) pinv(softmax(Q~ K~^T)) softmax(Q~ K^T) with segment-mean landmarks
    Q~, K~ and an iterative pseudo-inverse; a depthwise convolution over the sequence of V (one filter per
    head, `conv_kernel` taps, 0 disables it) adds a local skip path. Padded q, k, v are zeroed and padded
    keys are masked out of the last factor.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        dropout: float = 0.0,
        n_landmarks: int = 64,
        pinv_iterations: int = 6,
        conv_kernel: int = 35,
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        if conv_kernel and conv_kernel % 2 == 0:
            raise ValueError(f"nystromformer conv_kernel must be odd (or 0 to disable), got {conv_kernel}")
        self.n_landmarks, self.pinv_iterations = n_landmarks, pinv_iterations
        self.conv = (
            nn.Conv2d(
                n_heads, n_heads, (conv_kernel, 1), padding=(conv_kernel // 2, 0), groups=n_heads, bias=False
            )
            if conv_kernel
            else None
        )

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        scale = self.head_dim**-0.25
        q, k = q * scale, k * scale
        q, k, v = (zero_padded_heads(part, key_padding_mask) for part in (q, k, v))
        n_landmarks = min(self.n_landmarks, q.shape[2])
        q_landmarks, k_landmarks = _segment_means(q, n_landmarks), _segment_means(k, n_landmarks)
        kernel_1 = torch.softmax(q @ k_landmarks.transpose(-1, -2), dim=-1)
        kernel_2 = torch.softmax(q_landmarks @ k_landmarks.transpose(-1, -2), dim=-1)
        logits_3 = q_landmarks @ k.transpose(-1, -2)
        if key_padding_mask is not None:
            logits_3 = logits_3.masked_fill(~key_padding_mask[:, None, None, :], torch.finfo(q.dtype).min)
        kernel_3 = self.dropout(torch.softmax(logits_3, dim=-1))
        mixed = (kernel_1 @ iterative_pinv(kernel_2, self.pinv_iterations)) @ (kernel_3 @ v)
        return mixed if self.conv is None else mixed + self.conv(v)



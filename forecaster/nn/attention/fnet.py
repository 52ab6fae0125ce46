"""FNet: attention-free token mixing by Fourier transforms."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from forecaster.nn.attention.base import check_inputs, zero_padded
from forecaster.nn.attention.registry import register


@register("fnet")
class FourierMixing(nn.Module):
    """FNet token mixing (Lee-Thorp et al., 2022, "FNet: Mixing Tokens with Fourier Transforms", NAACL).

    The real part of the 2D DFT over (sequence, hidden); parameter-free. The DFT is orthonormal (scaled by
    1/sqrt(n * d)): FNet's post-LN blocks absorb any scale, but in the pre-LN LRA blocks an unscaled DFT
    would grow the residual stream by sqrt(n * d) per layer. Padded positions are zeroed first, so only
    their count (the transform length) is visible to real tokens, never their values.
    """

    def __init__(self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_model, self.n_heads, self.seq_len = d_model, n_heads, seq_len
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        check_inputs(x, key_padding_mask, self.d_model)
        x = zero_padded(x, key_padding_mask)
        spectral = x if x.dtype in (torch.float32, torch.float64) else x.float()  # no half-precision FFTs
        mixed = torch.fft.fft2(spectral, dim=(-2, -1), norm="ortho").real.to(x.dtype)
        return zero_padded(self.dropout(mixed), key_padding_mask)


# S3Attention (papers 000/001; SKTformer in 002): SkeletonAttention(Smoother(x)), padded positions zeroed
# before the Smoother and the mask passed on to the sampled keys; the module lives with its parts.

"""Toeplitz matrix-vector products by FFT and the Toeplitz neural operator (TNO) of TNN."""

from __future__ import annotations

import torch
from torch import nn

from forecaster.nn.tnn.rpe import Rpe


def toeplitz_matvec(x: torch.Tensor, lags: torch.Tensor) -> torch.Tensor:
    """Per-channel Toeplitz product y[:, i, c] = sum_j lags[i - j + n - 1, c] * x[:, j, c] in O(n log n).

    x is (B, n, C); lags is (2n - 1, C) holding the kernel at lags -(n-1) .. n-1. The Toeplitz matrix is
    embedded in a circulant of size 2n whose first column is [k(0..n-1), 0, k(-(n-1)..-1)].
    """
    n = x.shape[1]
    if lags.shape[0] != 2 * n - 1:
        raise ValueError(f"lags must have 2n - 1 = {2 * n - 1} rows for n = {n}, got {lags.shape[0]}")
    zero = lags.new_zeros(1, lags.shape[1])
    column = torch.cat([lags[n - 1 :], zero, lags[: n - 1]], dim=0)
    spectrum = torch.fft.rfft(column, n=2 * n, dim=0)
    y = torch.fft.irfft(torch.fft.rfft(x, n=2 * n, dim=1) * spectrum, n=2 * n, dim=1)
    return y[:, :n]


class Tno(nn.Module):
    """Toeplitz neural operator: channel c is mixed over time by T[i, j] = decay^|i-j| * RPE_c(i - j).

    `causal=True` zeroes the negative lags so output i only sees inputs j <= i. `decay=None` (or 1.0)
    drops the exponential decay bias.
    """

    def __init__(
        self,
        channels: int,
        causal: bool = False,
        decay: float | None = 0.99,
        rpe_dim: int = 32,
        rpe_layers: int = 3,
        act: str = "relu",
    ) -> None:
        super().__init__()
        if decay is not None and not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1] or None, got {decay}")
        self.channels = channels
        self.causal = causal
        self.decay = decay
        self.rpe = Rpe(channels, dim=rpe_dim, layers=rpe_layers, act=act)

    def kernel(self, n: int) -> torch.Tensor:
        """The kernel at lags -(n-1) .. n-1 as (2n - 1, channels); negative lags are zero when causal."""
        dtype, device = self.rpe.inp.weight.dtype, self.rpe.inp.weight.device
        lags = torch.arange(0 if self.causal else -(n - 1), n, dtype=dtype, device=device)
        values = self.rpe(lags)
        if self.decay is not None and self.decay != 1.0:
            decay = torch.tensor(self.decay, dtype=dtype, device=device)
            values = values * decay.pow(lags.abs()).unsqueeze(-1)
        if self.causal:
            values = torch.cat([values.new_zeros(n - 1, self.channels), values], dim=0)
        return values

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, n, channels) -> (B, n, channels)."""
        return toeplitz_matvec(x, self.kernel(x.shape[1]))

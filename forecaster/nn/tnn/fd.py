"""FD-TNO (paper 003, sec. 3.3): the RPE models the kernel's frequency response directly."""

from __future__ import annotations

import math

import torch
from torch import nn

from forecaster.nn.tnn.rpe import Rpe


def fft_size(n: int) -> int:
    """The smallest power of two >= 2n: long enough that the circular product equals the linear one."""
    return 1 << (2 * n - 1).bit_length()


class FdTno(nn.Module):
    """Toeplitz operator whose frequency response H(omega) on omega = linspace(0, pi, N/2 + 1) is an MLP.

    Causal (Alg. 2): the RPE gives the real part; the imaginary part is minus its discrete Hilbert
    transform, computed as irFFT -> keep the causal half (doubling lags 1 .. N/2 - 1) -> rFFT, so the
    time-domain kernel is exactly zero at negative lags. Bidirectional: the RPE gives real and imaginary
    parts, the imaginary part forced to 0 at omega = 0 and pi so the kernel is real. One FFT fewer than
    TNO, and the smooth activation plays the part of TNO's decay bias.
    """

    def __init__(
        self,
        channels: int,
        causal: bool = False,
        rpe_dim: int = 32,
        rpe_layers: int = 3,
        act: str = "silu",
    ) -> None:
        super().__init__()
        self.channels = channels
        self.causal = causal
        self.rpe = Rpe(channels if causal else 2 * channels, dim=rpe_dim, layers=rpe_layers, act=act)

    def frequency_response(self, n: int) -> torch.Tensor:
        """Complex H at the N/2 + 1 rFFT frequencies of N = fft_size(n), as (N/2 + 1, channels)."""
        size = fft_size(n)
        dtype, device = self.rpe.inp.weight.dtype, self.rpe.inp.weight.device
        omega = torch.linspace(0.0, math.pi, size // 2 + 1, dtype=dtype, device=device)
        out = self.rpe(omega)
        if self.causal:
            even = torch.fft.irfft(out, n=size, dim=0)
            keep = torch.zeros(size, dtype=dtype, device=device)
            keep[0] = keep[size // 2] = 1.0
            keep[1 : size // 2] = 2.0
            return torch.fft.rfft(even * keep[:, None], n=size, dim=0)
        real, imag = out.chunk(2, dim=-1)
        interior = torch.ones(size // 2 + 1, 1, dtype=dtype, device=device)
        interior[0] = interior[-1] = 0.0
        return torch.complex(real, imag * interior)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, n, channels) -> (B, n, channels)."""
        n = x.shape[1]
        size = fft_size(n)
        y = torch.fft.irfft(torch.fft.rfft(x, n=size, dim=1) * self.frequency_response(n), n=size, dim=1)
        return y[:, :n]

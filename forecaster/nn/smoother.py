"""The Smoother of S3Attention (paper 001, eqs. 3-4, Algorithm 2): Fourier convolution + convolution stem.

The Fourier part is split into stages (`segment_average`, `filter_groups`, `fourier_smooth`) so that an
accelerated backend can replace single stages; these PyTorch functions are the reference semantics.
"""

from __future__ import annotations

import os

import torch
from torch import nn

from forecaster.checks import check_choice, check_int

ACTIVATIONS = ("elu", "relu")
NORMS = ("batch_time", "batch_channel", "layer", "none")


def segment_average(x: torch.Tensor, fold: int) -> torch.Tensor:
    """Means of x (B, L, D) over `fold` contiguous channel groups -> (B, L, fold).

    These are the distinct columns of x S in eq. 4 (S averages each group of D / fold channels).
    """
    d_model = x.shape[-1]
    if d_model % fold:
        raise ValueError(f"d_model {d_model} is not divisible by fold {fold}")
    return x.reshape(*x.shape[:-1], fold, d_model // fold).mean(dim=-1)


def filter_groups(spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
    """Multiply each channel's complex filter by its group's spectrum: (B, F, fold) x (F, D) -> (B, F, D).

    Channel c uses group c // (D / fold). The group spectrum is broadcast against the filter viewed as
    (F, fold, D / fold), so no repeated copy of the spectrum is ever materialized.
    """
    n_freq, d_model = weight.shape
    if spectrum.shape[-1] != fold or spectrum.shape[-2] != n_freq:
        raise ValueError(
            f"spectrum of shape {tuple(spectrum.shape)} does not match (..., {n_freq}, {fold}) of the filter"
        )
    if d_model % fold:
        raise ValueError(f"d_model {d_model} is not divisible by fold {fold}")
    grouped = spectrum.unsqueeze(-1) * weight.view(n_freq, fold, d_model // fold)
    return grouped.reshape(*spectrum.shape[:-1], d_model)


def fourier_smooth(x: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
    """Eq. 3: irFFT(rFFT(x S) * W) over time for x (B, L, D) and a complex filter W (L // 2 + 1, D).

    Needs only `fold` rFFTs and D irFFTs; equals a circular convolution of every channel's group average
    with irfft(W[:, c]).
    """
    seq_len = x.shape[-2]
    spectrum = torch.fft.rfft(segment_average(x, fold), n=seq_len, dim=-2)
    return torch.fft.irfft(filter_groups(spectrum, weight, fold), n=seq_len, dim=-2)


# Below this many input elements (B x L x D) the automatic choice is the PyTorch path: on the H100 of README's
# kernel table the kernel path's per-launch host cost outweighed its memory savings up to 8.4M elements
# (0.6-0.8x forward+backward), and it won from 33.5M (1.7-2.2x).
KERNELS_MIN_ELEMENTS = 2**24
KERNEL_DTYPES = (torch.float32, torch.float64)  # the input dtypes the CUDA kernels take


def smoother_backend(device: torch.device, dtype: torch.dtype, numel: int) -> str:
    """Which implementation runs the Fourier stages for an input of `numel` elements: "kernels" or "torch".

    The CUDA kernels (package `kernels`, imported only on this CUDA path) need a float32/float64 CUDA input
    and an importable CuPy. FORECASTER_KERNELS=off forces the PyTorch path, =on the kernels wherever they
    can run; unset, they run for inputs of at least KERNELS_MIN_ELEMENTS. CPU runs never import them.
    """
    if device.type != "cuda" or dtype not in KERNEL_DTYPES:
        return "torch"
    setting = os.environ.get("FORECASTER_KERNELS", "").strip().lower()
    if setting == "off" or (setting != "on" and numel < KERNELS_MIN_ELEMENTS):
        return "torch"
    from kernels import cupy_available

    return "kernels" if cupy_available() else "torch"


class Smoother(nn.Module):
    """Smooths the token matrix so few sampled rows/columns summarize it (lower incoherence, paper 001 III.B).

    Fourier convolution over time with a learnable complex filter (fold group averages, eqs. 3-4), then a
    convolution stem over [smoothed, input]: Conv1d(2D -> D, kernel_size), normalization, activation,
    dropout. Defaults follow the reference code: BatchNorm1d over time steps ("batch_time", the L time
    steps are the BN channels, so seq_len is fixed), ELU, kaiming-uniform filter init. The paper's
    BatchNorm + ReLU is `norm="batch_channel", activation="relu"`.
    """

    def __init__(
        self,
        d_model: int,
        seq_len: int,
        fold: int = 8,
        kernel_size: int = 3,
        dropout: float = 0.0,
        activation: str = "elu",
        norm: str = "batch_time",
    ) -> None:
        super().__init__()
        if check_int("fold", fold, minimum=1) and d_model % fold:
            raise ValueError(f"fold must be a positive divisor of d_model {d_model}, got {fold}")
        if check_int("kernel_size", kernel_size, minimum=1) % 2 == 0:
            raise ValueError(f"kernel_size must be a positive odd number, got {kernel_size}")
        check_choice("activation", activation, ACTIVATIONS)
        check_choice("norm", norm, NORMS)
        self.d_model = d_model
        self.seq_len = seq_len
        self.fold = fold
        self.norm_kind = norm
        # Real view (F, D, 2) of the complex filter W: real storage keeps optimizers and safetensors simple.
        self.spectral_weight = nn.Parameter(torch.empty(seq_len // 2 + 1, d_model, 2))
        nn.init.kaiming_uniform_(self.spectral_weight, mode="fan_in", nonlinearity="relu")
        self.stem = nn.Conv1d(2 * d_model, d_model, kernel_size, padding=kernel_size // 2)
        if norm == "batch_time":
            self.norm = nn.BatchNorm1d(seq_len)
        elif norm == "batch_channel":
            self.norm = nn.BatchNorm1d(d_model)
        elif norm == "layer":
            self.norm = nn.LayerNorm(d_model)
        else:
            self.norm = nn.Identity()
        self.activation = nn.ELU() if activation == "elu" else nn.ReLU()
        self.dropout = nn.Dropout(dropout)

    @property
    def complex_weight(self) -> torch.Tensor:
        """The learnable filter W as a complex (L // 2 + 1, D) tensor (a view of `spectral_weight`)."""
        return torch.view_as_complex(self.spectral_weight)

    def _normalize(self, h: torch.Tensor) -> torch.Tensor:
        if self.norm_kind == "batch_channel":
            return self.norm(h.transpose(1, 2)).transpose(1, 2)
        return self.norm(h)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, L, D) -> (B, L, D)."""
        if x.ndim != 3 or x.shape[1] != self.seq_len or x.shape[2] != self.d_model:
            raise ValueError(
                f"Smoother expects input (batch, {self.seq_len}, {self.d_model}), got {tuple(x.shape)}"
            )
        if smoother_backend(x.device, x.dtype, x.numel()) == "kernels":
            from kernels import fourier_smooth as kernel_fourier_smooth

            smoothed = kernel_fourier_smooth(x, self.complex_weight, self.fold)
        else:
            smoothed = fourier_smooth(x, self.complex_weight, self.fold)
        # Channel-first concatenation: both FFT paths return `smoothed` as the transpose of a contiguous
        # (B, D, L) tensor, so this builds the stem's (B, 2D, L) input in one copy.
        h = self.stem(torch.cat([smoothed.transpose(1, 2), x.transpose(1, 2)], dim=1)).transpose(1, 2)
        return self.dropout(self.activation(self._normalize(h)))

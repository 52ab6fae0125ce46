"""Autograd Functions over the smoother kernels, with the contracts of forecaster.nn.smoother's stages.

`segment_average`, `filter_groups` and `fourier_smooth` take and return what the PyTorch functions of the
same names take and return, so the Smoother swaps them in on CUDA. Backward passes run kernels too; in
`fourier_smooth` the irFFT's gradient (an rFFT whose one-sided bins are doubled) is fused with the filter's
gradient kernels, which saves torch's separate doubling pass over the (B, F, D) gradient.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.autograd.function import FunctionCtx, once_differentiable

from kernels import runtime
from kernels.runtime import Launch

_REAL_OF_COMPLEX = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous tensor with no lazy conjugate/negative bit, so DLPack and view_as_real accept it."""
    return tensor.resolve_conj().resolve_neg().contiguous()


class SegmentAverage(torch.autograd.Function):
    """x (..., D) -> (..., fold): means over fold contiguous channel groups; backward spreads grad / group."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor, fold: int) -> torch.Tensor:
        x = _plain(x)
        group_size = x.shape[-1] // fold
        out = x.new_empty((*x.shape[:-1], fold))
        args = (x, out, np.int64(out.numel()), np.int32(group_size))
        runtime.launch(Launch("segment_average.cu", "segment_mean", x.dtype, out.numel(), args))
        ctx.group_size = group_size
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> tuple[torch.Tensor, None]:
        grad_out = _plain(grad_out)
        grad_x = grad_out.new_empty((*grad_out.shape[:-1], grad_out.shape[-1] * ctx.group_size))
        n_groups = grad_out.numel()
        args = (grad_out, grad_x, np.int64(n_groups), np.int32(ctx.group_size))
        runtime.launch(Launch("segment_average.cu", "segment_mean_backward", grad_out.dtype, n_groups, args))
        return grad_x, None


def _sizes(spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> tuple[np.integer, ...]:
    """The (batch, n_freq, d_model, group_size) arguments of the group_filter kernels."""
    n_freq, d_model = weight.shape
    batch = spectrum.numel() // (n_freq * fold)
    return np.int64(batch), np.int32(n_freq), np.int32(d_model), np.int32(d_model // fold)


def _filter(spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
    """The group filter's forward kernel on plain (contiguous, resolved) complex tensors."""
    sizes = _sizes(spectrum, weight, fold)
    out = spectrum.new_empty((*spectrum.shape[:-1], weight.shape[1]))
    args = (torch.view_as_real(spectrum), torch.view_as_real(weight), torch.view_as_real(out), *sizes)
    real = _REAL_OF_COMPLEX[spectrum.dtype]
    batch = int(sizes[0])
    runtime.launch(Launch("group_filter.cu", "group_filter", real, weight.numel(), args, slices=batch))
    return out


def _filter_gradients(
    ctx: FunctionCtx, grad: torch.Tensor, fold: int, doubled_bins: int
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """Gradients for the saved spectrum and filter from the filter output's gradient `grad` (complex).

    Bins 1 .. doubled_bins of `grad` count twice (the irFFT's one-sided doubling; 0 for none).
    """
    spectrum, weight = ctx.saved_tensors
    sizes = (*_sizes(spectrum, weight, fold), np.int32(doubled_bins))
    grad = torch.view_as_real(_plain(grad))
    real = _REAL_OF_COMPLEX[spectrum.dtype]
    grad_spectrum = grad_weight = None
    if ctx.needs_input_grad[0]:
        grad_spectrum = torch.empty_like(spectrum)
        args = (grad, torch.view_as_real(weight), torch.view_as_real(grad_spectrum), *sizes)
        runtime.launch(Launch("group_filter.cu", "group_filter_grad_spectrum", real, spectrum.numel(), args))
    if ctx.needs_input_grad[1]:
        grad_weight = torch.empty_like(weight)
        args = (grad, torch.view_as_real(spectrum), torch.view_as_real(grad_weight), *sizes)
        runtime.launch(Launch("group_filter.cu", "group_filter_grad_weight", real, weight.numel(), args))
    return grad_spectrum, grad_weight


class FilterGroups(torch.autograd.Function):
    """spectrum (..., F, fold) x weight (F, D) -> (..., F, D), channel c using group c // (D / fold)."""

    @staticmethod
    def forward(ctx: FunctionCtx, spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
        spectrum, weight = _plain(spectrum), _plain(weight)
        ctx.save_for_backward(spectrum, weight)
        ctx.fold = fold
        return _filter(spectrum, weight, fold)

    @staticmethod
    @once_differentiable
    def backward(
        ctx: FunctionCtx, grad_out: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:
        return (*_filter_gradients(ctx, grad_out, ctx.fold, doubled_bins=0), None)


class FilterIrfft(torch.autograd.Function):
    """irfft(filter_groups(spectrum, weight, fold), n=seq_len, dim=-2) -> (..., seq_len, D).

    Backward: rfft(grad) / seq_len (torch's irFFT gradient before its bin doubling), then the filter's
    gradient kernels apply the doubling of bins 1 .. seq_len - F while they read it.
    """

    @staticmethod
    def forward(
        ctx: FunctionCtx, spectrum: torch.Tensor, weight: torch.Tensor, fold: int, seq_len: int
    ) -> torch.Tensor:
        spectrum, weight = _plain(spectrum), _plain(weight)
        ctx.save_for_backward(spectrum, weight)
        ctx.fold, ctx.seq_len = fold, seq_len
        return torch.fft.irfft(_filter(spectrum, weight, fold), n=seq_len, dim=-2)

    @staticmethod
    @once_differentiable
    def backward(
        ctx: FunctionCtx, grad_out: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, None, None]:
        grad = torch.fft.rfft(grad_out, n=ctx.seq_len, dim=-2, norm="forward")
        doubled_bins = ctx.seq_len - grad.shape[-2]
        return (*_filter_gradients(ctx, grad, ctx.fold, doubled_bins), None, None)


def segment_average(x: torch.Tensor, fold: int) -> torch.Tensor:
    """Kernel twin of forecaster.nn.smoother.segment_average: x (..., D) float32/float64 -> (..., fold)."""
    d_model = x.shape[-1]
    if fold < 1 or d_model % fold:
        raise ValueError(f"d_model {d_model} is not divisible by fold {fold}")
    if x.dtype not in runtime.DTYPE_SUFFIX:
        raise ValueError(f"segment_average kernels take float32 or float64, got {x.dtype}")
    return SegmentAverage.apply(x, fold)


def _check_filter_arguments(spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> None:
    n_freq, d_model = weight.shape
    if spectrum.ndim < 2 or spectrum.shape[-1] != fold or spectrum.shape[-2] != n_freq:
        raise ValueError(
            f"spectrum of shape {tuple(spectrum.shape)} does not match (..., {n_freq}, {fold}) of the filter"
        )
    if fold < 1 or d_model % fold:
        raise ValueError(f"d_model {d_model} is not divisible by fold {fold}")
    if spectrum.dtype not in _REAL_OF_COMPLEX or weight.dtype != spectrum.dtype:
        raise ValueError(
            f"filter_groups kernels take complex64 or complex128 spectrum and filter of one dtype, "
            f"got {spectrum.dtype} and {weight.dtype}"
        )


def filter_groups(spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
    """Kernel twin of forecaster.nn.smoother.filter_groups: complex (..., F, fold), (F, D) -> (..., F, D)."""
    _check_filter_arguments(spectrum, weight, fold)
    return FilterGroups.apply(spectrum, weight, fold)


def fourier_smooth(x: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
    """Kernel twin of forecaster.nn.smoother.fourier_smooth (eq. 3); torch's cuFFT does the FFTs."""
    seq_len = x.shape[-2]
    spectrum = torch.fft.rfft(segment_average(x, fold), n=seq_len, dim=-2)
    _check_filter_arguments(spectrum, weight, fold)
    return FilterIrfft.apply(spectrum, weight, fold, seq_len)

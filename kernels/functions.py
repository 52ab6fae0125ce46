"""Autograd Functions over the smoother kernels, with the contracts of forecaster.nn.smoother's stages.

`segment_average`, `filter_groups` and `fourier_smooth` take and return what the PyTorch functions of the
same names take and return (values and shapes; strides may differ), so the Smoother swaps them in on CUDA.
The filter kernels write their output channel-major, (..., D, F), so the irFFT over time runs along the
contiguous axis: torch then needs no transposing copy, and `fourier_smooth` returns the (..., L, D)
transpose of a contiguous (..., D, L) result, as torch's own irFFT over dim -2 does. The irFFT's 1 / L, and
in the backward pass the doubling of the one-sided bins, are folded into the filter kernels, which saves
torch's separate scaling passes over the (B, F, D) and (B, L, D) tensors. `fourier_smooth` is one custom
operator (`forecaster::fourier_smooth`, with a fake implementation for torch.compile), so its backward
pass issues few launches: at moderate sizes their host-side cost is what the GPU waits for.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.autograd.function import FunctionCtx, once_differentiable

from kernels import runtime
from kernels.runtime import Launch

_REAL_OF_COMPLEX = {torch.complex64: torch.float32, torch.complex128: torch.float64}
_COMPLEX_OF_REAL = {real: complex_ for complex_, real in _REAL_OF_COMPLEX.items()}


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous tensor with no lazy conjugate/negative bit, as the kernels and view_as_real need."""
    # Resolved only where the bit is set: resolving a plain tensor returns the tensor itself, which a custom
    # operator's schema check (torch.library.opcheck) reports as an output aliasing its input.
    if tensor.is_conj():
        tensor = tensor.resolve_conj()
    if tensor.is_neg():
        tensor = tensor.resolve_neg()
    return tensor.contiguous()


def _segment_mean(x: torch.Tensor, fold: int) -> torch.Tensor:
    """The segment-average kernel: plain x (..., D) -> (..., fold)."""
    out = x.new_empty((*x.shape[:-1], fold))
    args = (x, out, np.int64(out.numel()), np.int32(x.shape[-1] // fold))
    runtime.launch(Launch("segment_average.cu", "segment_mean", x.dtype, out.numel(), args))
    return out


def _segment_mean_backward(grad: torch.Tensor, group_size: int) -> torch.Tensor:
    """The segment average's gradient kernel: grad (..., fold) -> (..., fold * group_size)."""
    grad = _plain(grad)
    grad_x = grad.new_empty((*grad.shape[:-1], grad.shape[-1] * group_size))
    n_elements = grad_x.numel()
    args = (grad, grad_x, np.int64(n_elements), np.int32(group_size))
    runtime.launch(Launch("segment_average.cu", "segment_mean_backward", grad.dtype, n_elements, args))
    return grad_x


class SegmentAverage(torch.autograd.Function):
    """x (..., D) -> (..., fold): means over fold contiguous channel groups; backward spreads grad / group."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor, fold: int) -> torch.Tensor:
        ctx.group_size = x.shape[-1] // fold
        return _segment_mean(_plain(x), fold)

    @staticmethod
    @once_differentiable
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> tuple[torch.Tensor, None]:
        return _segment_mean_backward(grad_out, ctx.group_size), None


def _sizes(spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> tuple[np.integer, ...]:
    """The (batch, n_freq, d_model, group_size) arguments of the group_filter kernels."""
    n_freq, d_model = weight.shape
    batch = spectrum.numel() // (n_freq * fold)
    return np.int64(batch), np.int32(n_freq), np.int32(d_model), np.int32(d_model // fold)


def _channel_items(weight: torch.Tensor) -> int:
    """Thread items of the per-channel filter kernels: F x ceil(D / CHANNELS_PER_THREAD)."""
    n_freq, d_model = weight.shape
    return n_freq * -(-d_model // runtime.CHANNELS_PER_THREAD)


def _filter(spectrum: torch.Tensor, weight: torch.Tensor, fold: int, divisor: int) -> torch.Tensor:
    """The filter output / divisor, channel-major (..., D, F), from plain (contiguous, resolved) tensors."""
    sizes = _sizes(spectrum, weight, fold)
    n_freq, d_model = weight.shape
    out = spectrum.new_empty((*spectrum.shape[:-2], d_model, n_freq))
    args = (torch.view_as_real(spectrum), torch.view_as_real(weight), torch.view_as_real(out), *sizes)
    real = _REAL_OF_COMPLEX[spectrum.dtype]
    work, batch = _channel_items(weight), int(sizes[0])
    runtime.launch(Launch("group_filter.cu", "group_filter", real, work, (*args, np.int32(divisor)), batch))
    return out


def _filter_gradient(
    target: str,
    grad: torch.Tensor,
    spectrum: torch.Tensor,
    weight: torch.Tensor,
    fold: int,
    doubled_bins: int,
    divisor: int,
) -> torch.Tensor:
    """The gradient of the "spectrum" (..., F, fold) or the "weight" (F, D) from `grad`, plain (..., D, F).

    Bins 1 .. doubled_bins of `grad` count twice (the irFFT's one-sided doubling; 0 for none), and every bin
    is divided by `divisor` (the irFFT's 1 / L; 1 for none).
    """
    if target == "spectrum":
        out, other, work = torch.empty_like(spectrum), weight, spectrum.numel()
    else:
        out, other, work = torch.empty_like(weight), spectrum, _channel_items(weight)
    sizes = (*_sizes(spectrum, weight, fold), np.int32(doubled_bins), np.int32(divisor))
    args = (torch.view_as_real(grad), torch.view_as_real(other), torch.view_as_real(out), *sizes)
    real = _REAL_OF_COMPLEX[spectrum.dtype]
    runtime.launch(Launch("group_filter.cu", f"group_filter_grad_{target}", real, work, args))
    return out


class FilterGroups(torch.autograd.Function):
    """spectrum (..., F, fold) x weight (F, D) -> (..., F, D), channel c using group c // (D / fold)."""

    @staticmethod
    def forward(ctx: FunctionCtx, spectrum: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
        spectrum, weight = _plain(spectrum), _plain(weight)
        ctx.save_for_backward(spectrum, weight)
        ctx.fold = fold
        return _filter(spectrum, weight, fold, divisor=1).transpose(-1, -2)

    @staticmethod
    @once_differentiable
    def backward(
        ctx: FunctionCtx, grad_out: torch.Tensor
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:
        spectrum, weight = ctx.saved_tensors
        grad = _plain(grad_out.transpose(-1, -2))
        grad_spectrum = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_spectrum = _filter_gradient("spectrum", grad, spectrum, weight, ctx.fold, 0, 1)
        if ctx.needs_input_grad[1]:
            grad_weight = _filter_gradient("weight", grad, spectrum, weight, ctx.fold, 0, 1)
        return grad_spectrum, grad_weight, None


# fourier_smooth is a torch.library custom operator, not an autograd.Function: torch.compile and CUDA graph
# capture treat the operator as one opaque node (their fake implementations give its output shapes and
# strides) instead of tracing into the CuPy launches, which they cannot.
@torch.library.custom_op("forecaster::fourier_smooth", mutates_args=())
def _fourier_smooth(x: torch.Tensor, weight: torch.Tensor, fold: int) -> tuple[torch.Tensor, torch.Tensor]:
    """irfft(filter_groups(rfft(segment_average(x, fold)), weight, fold)) over time, (..., L, D) -> same,
    and the group spectrum (..., F, fold) that the backward pass reuses.

    Forward: the filter kernel writes (..., D, F) already divided by L, and an unnormalized irFFT runs along
    its last axis.
    """
    x, weight = _plain(x), _plain(weight)
    seq_len = x.shape[-2]
    spectrum = _plain(torch.fft.rfft(_segment_mean(x, fold), dim=-2))
    filtered = _filter(spectrum, weight, fold, divisor=seq_len)
    return torch.fft.irfft(filtered, n=seq_len, dim=-1, norm="forward").transpose(-1, -2), spectrum


@_fourier_smooth.register_fake
def _fourier_smooth_fake(
    x: torch.Tensor, weight: torch.Tensor, fold: int
) -> tuple[torch.Tensor, torch.Tensor]:
    *batch, seq_len, d_model = x.shape
    smoothed = x.new_empty((*batch, d_model, seq_len)).transpose(-1, -2)
    return smoothed, x.new_empty((*batch, seq_len // 2 + 1, fold), dtype=_COMPLEX_OF_REAL[x.dtype])


@torch.library.custom_op("forecaster::fourier_smooth_backward", mutates_args=())
def _fourier_smooth_backward(
    grad_out: torch.Tensor, spectrum: torch.Tensor, weight: torch.Tensor, fold: int, need_x: bool,
    need_weight: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradients of x and of the filter from G, the unnormalized rFFT of the gradient along time; a
    gradient not needed is not computed (an empty tensor stands in for it).

    The filter's gradient applies the irFFT's 1 / L and the doubling of bins 1 .. L - F. The averages'
    gradient is irfft(sum over each group's channels of G * conj(W)) with no scaling at all: the rFFT's
    adjoint halves exactly the bins that the irFFT's gradient doubles, and its factor L cancels 1 / L.
    """
    seq_len, d_model = grad_out.shape[-2:]
    grad = _plain(torch.fft.rfft(grad_out.transpose(-1, -2), dim=-1))
    grad_x = grad_weight = grad_out.new_empty(0)
    if need_x:
        grad_spectrum = _filter_gradient("spectrum", grad, spectrum, weight, fold, 0, 1)
        grad_average = torch.fft.irfft(grad_spectrum, n=seq_len, dim=-2)
        grad_x = _segment_mean_backward(grad_average, d_model // fold)
    if need_weight:
        doubled_bins = seq_len - weight.shape[0]
        grad_weight = _filter_gradient("weight", grad, spectrum, weight, fold, doubled_bins, seq_len)
    return grad_x, grad_weight


@_fourier_smooth_backward.register_fake
def _fourier_smooth_backward_fake(
    grad_out: torch.Tensor, spectrum: torch.Tensor, weight: torch.Tensor, fold: int, need_x: bool,
    need_weight: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    grad_x = grad_out.new_empty(grad_out.shape if need_x else 0)
    return grad_x, torch.empty_like(weight) if need_weight else grad_out.new_empty(0)


def _fourier_smooth_setup(ctx: FunctionCtx, inputs: tuple, output: tuple) -> None:
    _, weight, fold = inputs
    ctx.save_for_backward(output[1], _plain(weight))
    ctx.fold = fold


def _fourier_smooth_gradients(
    ctx: FunctionCtx, grad_out: torch.Tensor, _grad_spectrum: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor, None]:
    spectrum, weight = ctx.saved_tensors
    need_x, need_weight = ctx.needs_input_grad[:2]
    grad_x, grad_weight = _fourier_smooth_backward(grad_out, spectrum, weight, ctx.fold, need_x, need_weight)
    return grad_x if need_x else None, grad_weight if need_weight else None, None


_fourier_smooth.register_autograd(_fourier_smooth_gradients, setup_context=_fourier_smooth_setup)


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
    seq_len, d_model = x.shape[-2:]
    if fold < 1 or d_model % fold:
        raise ValueError(f"d_model {d_model} is not divisible by fold {fold}")
    if x.dtype not in _COMPLEX_OF_REAL or weight.dtype != _COMPLEX_OF_REAL[x.dtype]:
        raise ValueError(
            f"fourier_smooth kernels take a float32/float64 input and a filter of its complex dtype, "
            f"got {x.dtype} and {weight.dtype}"
        )
    if tuple(weight.shape) != (seq_len // 2 + 1, d_model):
        expected = (seq_len // 2 + 1, d_model)
        raise ValueError(f"filter of shape {tuple(weight.shape)} does not match {expected} of the input")
    return _fourier_smooth(x, weight, fold)[0]

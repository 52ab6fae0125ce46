"""Compile the .cu sources through CuPy at first use and launch their kernels on torch tensors.

Tensors reach the kernels as raw device pointers (no host copies; see `launch` for why not DLPack), and
every launch is queued on torch's current CUDA stream, so kernels order correctly with the surrounding
torch work and with torch's stream-ordered caching allocator. CuPy is imported only inside the
functions here: importing `kernels` needs neither CUDA nor CuPy.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    import cupy

SOURCE_DIR = Path(__file__).resolve().parent
# Every .cu source, its kernels and their C parameters: "in" / "out" point to tensors the kernel reads /
# writes, "i64" is a `long long`, "i32" an `int`. Each kernel has a float32 entry `<name>_f32` and a float64
# one `<name>_f64`; tests check this table against the compiled PTX.
KERNELS: dict[str, dict[str, tuple[str, ...]]] = {
    "segment_average.cu": {
        "segment_mean": ("in", "out", "i64", "i32"),
        "segment_mean_backward": ("in", "out", "i64", "i32"),
    },
    "group_filter.cu": {
        "group_filter": ("in", "in", "out", "i64", "i32", "i32", "i32", "i32"),
        "group_filter_grad_spectrum": ("in", "in", "out", "i64", "i32", "i32", "i32", "i32", "i32"),
        "group_filter_grad_weight": ("in", "in", "out", "i64", "i32", "i32", "i32", "i32", "i32"),
    },
}
# group_filter.cu's CHANNELS_PER_THREAD: its per-channel kernels have one thread item per this many channels.
# It only sizes their grids; a mismatch would cost speed, not correctness (the loops are grid-stride loops).
CHANNELS_PER_THREAD = 4
DTYPE_SUFFIX: dict[torch.dtype, str] = {torch.float32: "f32", torch.float64: "f64"}
COMPILE_OPTIONS = ("--std=c++17",)
BLOCK_THREADS = 256
# Grid-stride kernels need no more blocks than fill the device a few times over.
BLOCKS_PER_MULTIPROCESSOR = 32
MAX_GRID_Y = 65535

KernelArgument = torch.Tensor | np.int32 | np.int64
_SCALAR_TYPES = {"i64": np.int64, "i32": np.int32}


@dataclass(frozen=True)
class Launch:
    """One kernel launch: `work` grid-stride items along x, `slices` independent grid-stride slices along y.

    `args` follow the kernel's C parameters in KERNELS: contiguous tensors for pointers (complex data as its
    real view), np.int64 for "i64" and np.int32 for "i32".
    """

    source: str
    kernel: str
    dtype: torch.dtype
    work: int
    args: tuple[KernelArgument, ...]
    slices: int = 1

    @property
    def entry(self) -> str:
        """The extern "C" entry point in the source, e.g. `segment_mean_f32`."""
        return f"{self.kernel}_{DTYPE_SUFFIX[self.dtype]}"

    @property
    def parameters(self) -> tuple[str, ...]:
        """The kernel's C parameter kinds from KERNELS."""
        return KERNELS[self.source][self.kernel]


def check_arguments(call: Launch) -> torch.device:
    """The device of the call's tensors; ValueError unless its arguments match the kernel's C parameters.

    A mismatch would make the kernel read or write the wrong memory, so it is caught before any launch.
    """
    if len(call.args) != len(call.parameters):
        raise ValueError(f"kernel {call.entry} takes {len(call.parameters)} arguments, got {len(call.args)}")
    device = None
    for position, (kind, argument) in enumerate(zip(call.parameters, call.args, strict=True)):
        if kind in _SCALAR_TYPES:
            if not isinstance(argument, _SCALAR_TYPES[kind]):
                raise ValueError(f"argument {position} of {call.entry} must be {kind}, got {type(argument)}")
            continue
        if not isinstance(argument, torch.Tensor):
            raise ValueError(f"argument {position} of {call.entry} must be a tensor, got {type(argument)}")
        device = argument.device if device is None else device
        if argument.device != device or not argument.is_contiguous() or argument.dtype != call.dtype:
            raise ValueError(
                f"argument {position} of {call.entry} must be a contiguous {call.dtype} tensor on {device}, "
                f"got {argument.dtype} on {argument.device} (contiguous={argument.is_contiguous()})"
            )
    return device


@functools.cache
def cupy_available() -> bool:
    """True when CuPy imports and sees a CUDA device (the kernel path's precondition besides CUDA tensors)."""
    try:
        import cupy
    except ImportError:
        return False
    return bool(cupy.cuda.is_available())


def source_path(source: str) -> Path:
    """The path of one of the .cu sources listed in KERNELS."""
    if source not in KERNELS:
        raise KeyError(f"unknown kernel source {source!r}; expected one of {', '.join(KERNELS)}")
    return SOURCE_DIR / source


@functools.cache
def _module(source: str) -> cupy.RawModule:
    """One RawModule per source; CuPy compiles it per device at first use and caches the binary on disk."""
    import cupy

    return cupy.RawModule(code=source_path(source).read_text(), options=COMPILE_OPTIONS)


@functools.cache
def _function(source: str, entry: str, device_index: int) -> cupy.RawKernel:
    import cupy

    with cupy.cuda.Device(device_index):
        return _module(source).get_function(entry)


@functools.cache
def _multiprocessors(device_index: int) -> int:
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def grid_shape(work: int, slices: int, multiprocessors: int) -> tuple[int, int]:
    """Blocks along x (capped, the kernels loop) and y (only as many slices as fill the device)."""
    grid_x = max(1, min(-(-work // BLOCK_THREADS), multiprocessors * BLOCKS_PER_MULTIPROCESSOR))
    wanted_y = -(-multiprocessors * BLOCKS_PER_MULTIPROCESSOR // grid_x)
    return grid_x, max(1, min(slices, wanted_y, MAX_GRID_Y))


def launch(call: Launch) -> None:
    """Run `call` on the CUDA device of its tensors, on torch's current stream there."""
    device = check_arguments(call)
    if device.type != "cuda":
        raise ValueError(f"kernel {call.entry} runs on CUDA tensors, got tensors on {device}")
    if call.work <= 0 or call.slices <= 0:
        return
    import cupy

    function = _function(call.source, call.entry, device.index)
    grid = grid_shape(call.work, call.slices, _multiprocessors(device.index))
    # Raw device pointers, not DLPack: cupy.from_dlpack cost 21-28 us per tensor on the H100 machine of
    # README's kernel table, more than the kernels themselves at moderate sizes.
    # check_arguments has already vouched for each tensor's device, dtype and contiguity.
    args = tuple(np.uint64(arg.data_ptr()) if isinstance(arg, torch.Tensor) else arg for arg in call.args)
    with cupy.cuda.Device(device.index), _cupy_stream(torch.cuda.current_stream(device)):
        function(grid, (BLOCK_THREADS,), args)


_CUPY_STREAMS: dict[tuple[int, int], cupy.cuda.BaseStream] = {}


def _cupy_stream(stream: torch.cuda.Stream) -> cupy.cuda.BaseStream:
    """torch's stream as a CuPy stream, made once: CuPy 14 reads the stream protocol, CuPy 13 a pointer."""
    key = (stream.cuda_stream, stream.device_index)
    if key not in _CUPY_STREAMS:
        import cupy

        if hasattr(cupy.cuda.Stream, "from_external") and hasattr(stream, "__cuda_stream__"):
            _CUPY_STREAMS[key] = cupy.cuda.Stream.from_external(stream)
        else:
            _CUPY_STREAMS[key] = cupy.cuda.ExternalStream(stream.cuda_stream, stream.device_index)
    return _CUPY_STREAMS[key]

"""CuPy kernels for the S3Attention smoother's memory-bound stages (segment average, group filter multiply).

The CUDA sources (`*.cu` beside this file) are compiled through cupy.RawModule at first use and cached;
tensors pass as device pointers and kernels run on torch's current stream. forecaster.nn.Smoother imports
this package only for CUDA inputs when CuPy is importable (see forecaster.nn.smoother.smoother_backend for
sizes and FORECASTER_KERNELS); importing it needs neither CUDA nor CuPy.

The convolution stem's epilogue (norm, activation, dropout) is left to cuDNN/PyTorch: fusing it saves a
few passes over (B, L, D) while the stem's Conv1d (2D -> D, kernel 3) dominates the module's time; a fused
dropout could not reproduce torch's random stream, so the kernel path would stop matching the PyTorch
path in training; and the four norm variants (BatchNorm over time or channels with running statistics,
LayerNorm, none) would be re-implemented. `forecaster bench smoother` times the whole module next to the
Fourier part, which shows what share such a fusion could at best win.
"""

from kernels.functions import (
    FilterGroups,
    SegmentAverage,
    filter_groups,
    fourier_smooth,
    segment_average,
)
from kernels.runtime import KERNELS, cupy_available, source_path

__all__ = [
    "KERNELS",
    "FilterGroups",
    "SegmentAverage",
    "cupy_available",
    "filter_groups",
    "fourier_smooth",
    "segment_average",
    "source_path",
]

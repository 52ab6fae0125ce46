"""Toeplitz neural networks (paper 003): TNO, SKI-TNO and FD-TNO operators, GTU/GLU blocks, mixers.

Importing this package registers the `tnn`, `ski_tnn` and `fd_tnn` mixers.
"""

from forecaster.nn.tnn import mixers as _mixers  # noqa: F401  (registers the mixers)
from forecaster.nn.tnn.blocks import Glu, Gtu, TnnBlock, make_operator
from forecaster.nn.tnn.fd import FdTno, fft_size
from forecaster.nn.tnn.rpe import Rpe
from forecaster.nn.tnn.ski import SkiTno, interpolation_weights, time_warp
from forecaster.nn.tnn.toeplitz import Tno, toeplitz_matvec

__all__ = [
    "FdTno",
    "Glu",
    "Gtu",
    "Rpe",
    "SkiTno",
    "Tno",
    "TnnBlock",
    "fft_size",
    "interpolation_weights",
    "make_operator",
    "time_warp",
    "toeplitz_matvec",
]

"""The TNN family as registered sequence mixers (`tnn`, `ski_tnn`, `fd_tnn`) for LRA models and benches.

`n_heads` and `seq_len` are accepted for the common factory signature and unused: every channel has
its own Toeplitz kernel and the kernels are built for whatever length arrives. The builders declare no
`dropout`, so an LRA preset's attention dropout does not reach them: the TNN reference code (which paper 003
trains on) has none, only the blocks' residual dropout. A `dropout` given as a mixer option still reaches
the GTU.
"""

from __future__ import annotations

from forecaster.nn.attention.registry import register
from forecaster.nn.tnn.blocks import Gtu


@register("tnn")
def tnn_mixer(*, d_model: int, n_heads: int, seq_len: int, **options) -> Gtu:
    """GTU over TNN's Toeplitz neural operator (RPE MLP + decay bias, FFT of length 2n)."""
    return Gtu(d_model, operator="tno", **options)


@register("ski_tnn")
def ski_tnn_mixer(*, d_model: int, n_heads: int, seq_len: int, **options) -> Gtu:
    """GTU over the sparse + low-rank SKI Toeplitz operator."""
    return Gtu(d_model, operator="ski", **options)


@register("fd_tnn")
def fd_tnn_mixer(*, d_model: int, n_heads: int, seq_len: int, **options) -> Gtu:
    """GTU over the frequency-domain Toeplitz operator."""
    return Gtu(d_model, operator="fd", **options)

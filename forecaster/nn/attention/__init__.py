"""Sequence mixers (attention and attention-free) behind one registry."""

from forecaster.nn.attention.mra import MraAttention
from forecaster.nn.attention.registry import (
    MIXERS,
    MixerSpec,
    build,
    declared_options,
    names,
    parse_mixer_spec,
    register,
)

__all__ = [
    "MIXERS", "MixerSpec", "MraAttention", "build", "declared_options", "names", "parse_mixer_spec",
    "register",
]

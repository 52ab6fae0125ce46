"""Sequence mixers (attention and attention-free) behind one registry."""

from forecaster.nn.attention.mra import MraAttention
from forecaster.nn.attention.registry import (
    MIXERS,
    MixerSpec,
    build,
    names,
    parse_mixer_spec,
    register,
    takes_option,
)

__all__ = [
    "MIXERS", "MixerSpec", "MraAttention", "build", "names", "parse_mixer_spec", "register", "takes_option",
]

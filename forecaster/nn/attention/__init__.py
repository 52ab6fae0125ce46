"""Sequence mixers (attention and attention-free) behind one registry."""

from forecaster.nn.attention.mra import MraAttention
from forecaster.nn.attention.registry import get, names, register

__all__ = ["MraAttention", "get", "names", "register"]

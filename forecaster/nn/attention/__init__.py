"""Sequence mixers (attention and attention-free) behind one registry."""

from forecaster.nn.attention.registry import get, names, register

__all__ = ["get", "names", "register"]

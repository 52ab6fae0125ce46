"""Name -> sequence-mixer factory registry shared by the LRA classifiers and `forecaster bench attention`.

Every mixer is built as `get(name, d_model=..., n_heads=..., seq_len=..., **options)` and called as
`mixer(x, key_padding_mask=None)` on x (B, n, d_model), mask (B, n) bool with True = real token,
returning (B, n, d_model).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from torch import nn

MixerFactory = Callable[..., nn.Module]

# Modules whose import registers mixers; imported on first lookup so that the registry has no import cycles.
_PROVIDERS: tuple[str, ...] = (
    "forecaster.nn.attention.zoo",
    "forecaster.nn.tnn",
    "forecaster.nn.attention.mra",
)
_MIXERS: dict[str, MixerFactory] = {}


def register(name: str) -> Callable[[MixerFactory], MixerFactory]:
    """Decorator that registers a mixer factory (a class or function) under `name`."""

    def decorate(factory: MixerFactory) -> MixerFactory:
        if name in _MIXERS and _MIXERS[name] is not factory:
            raise ValueError(f"mixer {name!r} is registered twice")
        _MIXERS[name] = factory
        return factory

    return decorate


def _load_providers() -> None:
    for module in _PROVIDERS:
        importlib.import_module(module)


def names() -> list[str]:
    """The registered mixer names, sorted."""
    _load_providers()
    return sorted(_MIXERS)


def get(name: str, *, d_model: int, n_heads: int, seq_len: int, **options) -> nn.Module:
    """Build the mixer registered as `name`."""
    _load_providers()
    if name not in _MIXERS:
        raise KeyError(f"unknown mixer {name!r}; expected one of {', '.join(sorted(_MIXERS))}")
    return _MIXERS[name](d_model=d_model, n_heads=n_heads, seq_len=seq_len, **options)

"""The sequence mixers behind one registry, shared by the LRA classifiers and `forecaster bench attention`.

Every mixer is built as `build(name, d_model=..., n_heads=..., seq_len=..., **options)` and called as
`mixer(x, key_padding_mask=None)` on x (B, n, d_model), mask (B, n) bool with True = real token,
returning (B, n, d_model). On the command line a mixer and its options are written `name:key=value:...`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from torch import nn

from forecaster.errors import ConfigError
from forecaster.registry import Registry

MIXERS: Registry[Callable[..., nn.Module]] = Registry(
    "mixer",
    providers=tuple(f"forecaster.nn.{name}" for name in (
        "skeleton_lra", "attention.softmax", "attention.lowrank", "attention.kernelized",
        "attention.reformer", "attention.fnet", "attention.mra", "tnn",
    )),
)
register = MIXERS.register
names = MIXERS.names


def declared_options(name: str) -> Mapping[str, inspect.Parameter]:
    """The options the builder of mixer `name` declares, with their defaults (a preset's dropout, a layer's
    seed are given only to mixers that take them)."""
    return inspect.signature(MIXERS.get(name)).parameters


def build(name: str, *, d_model: int, n_heads: int, seq_len: int, **options: Any) -> nn.Module:
    """Build the mixer registered as `name`."""
    return MIXERS.get(name)(d_model=d_model, n_heads=n_heads, seq_len=seq_len, **options)


@dataclass(frozen=True)
class MixerSpec:
    """A registered mixer name with options, as written on the command line (`name:key=value:...`)."""

    label: str
    name: str
    options: dict[str, Any]

    @property
    def quadratic_memory(self) -> bool:
        """Whether the mixer stores n x n attention weights (used only to skip runs that would not fit)."""
        return self.name == "softmax" and self.options.get("kernel") == "math"


def _option_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_mixer_spec(text: str) -> MixerSpec:
    """`performer:n_features=128:seed=1` -> MixerSpec(label, "performer", {"n_features": 128, "seed": 1}).

    ConfigError for an option that is not key=value or a mixer name that is not registered.
    """
    name, *assignments = text.strip().split(":")
    options = {}
    for assignment in assignments:
        key, sep, value = assignment.partition("=")
        if not sep or not key:
            raise ConfigError(f"mixer option {assignment!r} of {text!r} is not key=value")
        options[key] = _option_value(value)
    MIXERS.get(name)
    return MixerSpec(text.strip(), name, options)

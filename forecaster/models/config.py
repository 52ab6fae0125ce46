"""The JSON round trip every model config shares, so a bundle's config.json rebuilds the same model."""

from __future__ import annotations

import dataclasses
from typing import Any, Self

import torch


def is_int(value: Any) -> bool:
    """True for real integers (JSON numbers parsed as int), not for bools."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_history(x: torch.Tensor, input_size: int, n_channels: int, model: str) -> None:
    """Reject a forecaster input that is not (batch, input_size, n_channels), naming the expected shape."""
    if x.ndim != 3 or x.shape[1] != input_size or x.shape[2] != n_channels:
        raise ValueError(f"{model} expects input (batch, {input_size}, {n_channels}), got {tuple(x.shape)}")


class ModelConfig:
    """Mixin for model config dataclasses: `to_dict` / `from_dict` naming unknown or missing fields."""

    label = "model"

    def require(self, condition: bool, name: str, expected: str) -> None:
        """Raise ValueError naming the field and what it must be, unless `condition` holds."""
        if not condition:
            raise ValueError(f"{self.label} config field {name!r} must be {expected}")

    def require_integers(self, minimums: dict[str, int]) -> None:
        """Each named field must be an integer (not a bool) at least its minimum."""
        for name, low in minimums.items():
            value = getattr(self, name)
            self.require(is_int(value) and value >= low, name, f"an integer >= {low}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Build from `to_dict()` output (e.g. a bundle's config.json); names unknown or missing fields."""
        fields = {field.name: field for field in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ValueError(
                f"unknown {cls.label} config field(s) {unknown}; expected a subset of {sorted(fields)}"
            )
        missing = [
            name
            for name, field in fields.items()
            if field.default is dataclasses.MISSING
            and field.default_factory is dataclasses.MISSING
            and name not in data
        ]
        if missing:
            raise ValueError(f"{cls.label} config is missing required field(s) {missing}")
        return cls(**data)

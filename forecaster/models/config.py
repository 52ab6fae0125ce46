"""What every model config shares: fields declared once with `setting`, checked on construction, and a
JSON round trip, so a bundle's config.json alone rebuilds the same model."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Self

import torch

from forecaster.checks import check_fields
from forecaster.errors import ConfigError


def check_history(x: torch.Tensor, input_size: int, n_channels: int, model: str) -> None:
    """Reject a forecaster input that is not (batch, input_size, n_channels), naming the expected shape."""
    if x.ndim != 3 or x.shape[1] != input_size or x.shape[2] != n_channels:
        raise ValueError(f"{model} expects input (batch, {input_size}, {n_channels}), got {tuple(x.shape)}")


class ModelConfig:
    """Mixin for frozen model config dataclasses, their fields declared with `forecaster.checks.setting`."""

    label: ClassVar[str] = "model"

    def __post_init__(self) -> None:
        check_fields(self, f"{self.label} config field")
        self.validate()

    def validate(self) -> None:
        """Rules that tie several fields together (one field's own range lives in its declaration)."""

    def require(self, condition: bool, name: str, expected: str) -> None:
        """Raise ConfigError naming the field and what it must be, unless `condition` holds."""
        if not condition:
            raise ConfigError(f"{self.label} config field {name!r} must be {expected}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """Build from `to_dict()` output (e.g. a bundle's config.json); names unknown or missing fields."""
        fields = {field.name: field for field in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ConfigError(
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
            raise ConfigError(f"{cls.label} config is missing required field(s) {missing}")
        return cls(**data)

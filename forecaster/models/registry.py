"""The model registry: `get_model(name, **fields)` builds the model's config, then the model from it.

Every registered model class has a `config_class` (a `ModelConfig` dataclass), is built as
`Model(config)` and keeps it as `.config`, so `get_model(name, **model.config.to_dict())` rebuilds an
identical architecture. `task` tells forecasters ((B, L, C) -> (B, H, C)) from classifiers. A
forecaster with a learned quantile head (non-empty `config.quantile_levels`) also has
`bounds(x) -> (point, lower, upper)`.
"""

from __future__ import annotations

import torch
from torch import nn

from forecaster.registry import Registry

MODELS: Registry[type[nn.Module]] = Registry(
    "model",
    providers=tuple(
        f"forecaster.models.{name}"
        for name in ("s3attention", "tnn", "baselines", "smoothing", "peers", "lra", "ensemble")
    ),
)
FORECAST = "forecast"


def model_names(task: str | None = None) -> list[str]:
    """The registered model names one can train (of one `task` when given), sorted; an ensemble is made of
    trained models (`--model auto`), not trained by name, so it is left out."""
    return [
        name
        for name in MODELS.names()
        if (task is None or MODELS.get(name).task == task) and getattr(MODELS.get(name), "trainable", True)
    ]


def get_model(name: str, **fields) -> nn.Module:
    """Build the model registered as `name` (case-insensitive) from its config fields."""
    model_class = MODELS.get(name)
    return model_class(model_class.config_class.from_dict(fields))


def quantile_levels(model: nn.Module) -> tuple[int, ...]:
    """The levels of the model's learned quantile head; () for a point forecaster."""
    return tuple(getattr(model.config, "quantile_levels", None) or ())


def fits_nothing(model: nn.Module) -> bool:
    """A model without parameters (a baseline, or a choice or average of baselines): it forecasts from its
    input alone."""
    return not any(parameter.numel() for parameter in model.parameters())


def forecast_outputs(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """(B, H, C, 1 + 2K): the point forecast, then the K quantile-head lower bounds, then the K upper
    bounds (K = 0 for a point forecaster); what prediction, calibration and the service compute."""
    if not quantile_levels(model):
        return model(x)[..., None]
    point, lower, upper = model.bounds(x)
    return torch.cat([point[..., None], lower, upper], dim=-1)

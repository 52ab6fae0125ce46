"""Name -> model factory registry: `get_model(name, **config)` rebuilds any model from its JSON config.

Every registered model exposes `.config` with `to_dict()`, so `get_model(name, **model.config.to_dict())`
rebuilds an identical architecture. Modules that register models are listed in `_PROVIDERS` and imported on
first lookup, which keeps this module free of import cycles.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from torch import nn

ModelFactory = Callable[..., nn.Module]

_PROVIDERS: tuple[str, ...] = ("forecaster.models.s3attention", "forecaster.models.tnn")
_MODELS: dict[str, ModelFactory] = {}


def register_model(name: str) -> Callable[[ModelFactory], ModelFactory]:
    """Decorator that registers a model class or factory under the lower-case `name`."""
    key = name.lower()

    def decorate(factory: ModelFactory) -> ModelFactory:
        if key in _MODELS and _MODELS[key] is not factory:
            raise ValueError(f"model {key!r} is registered twice")
        _MODELS[key] = factory
        return factory

    return decorate


def _load_providers() -> None:
    for module in _PROVIDERS:
        importlib.import_module(module)


def model_names() -> list[str]:
    """The registered model names, sorted."""
    _load_providers()
    return sorted(_MODELS)


def get_model(name: str, **config) -> nn.Module:
    """Build the model registered as `name` (case-insensitive) from its config keyword arguments."""
    _load_providers()
    key = name.lower()
    if key not in _MODELS:
        raise ValueError(f"unknown model {name!r}; expected one of {', '.join(sorted(_MODELS))}")
    return _MODELS[key](**config)

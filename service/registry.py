"""The bundles a service instance answers for, loaded once at startup from one directory.

Each subdirectory is a bundle named after the directory. A bundle that fails validation (or a
warm-up forecast) is logged and listed as skipped; it never stops the service from starting.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from forecaster.artifacts import Bundle, load_bundle
from forecaster.calibration import Calibration
from forecaster.prediction import Inference, predict_outputs, predict_windows
from service.batching import BatchObserver, MicroBatcher
from service.errors import ApiError
from service.schemas import ModelInfo

log = logging.getLogger("service")

MODEL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass
class ServedModel:
    """A loaded bundle plus the batcher that feeds it."""

    name: str
    bundle: Bundle
    batcher: MicroBatcher

    @property
    def info(self) -> ModelInfo:
        data = self.bundle.data
        return ModelInfo(
            name=self.name,
            model_name=self.bundle.model_name,
            input_size=data.input_size,
            horizon=data.horizon,
            columns=list(data.columns),
            freq=data.freq,
            date_col=data.date_col,
            metrics=self.bundle.metrics,
            intervals=_intervals(self.bundle.calibration),
        )


def _intervals(calibration: Calibration | None) -> dict[str, Any] | None:
    if calibration is None:
        return None
    levels = calibration.available_levels()
    return {"method": calibration.method, "levels": levels, "calibrated_on": calibration.source}


@dataclass
class ModelRegistry:
    """Name -> ServedModel, plus the bundles that were skipped and why."""

    models: dict[str, ServedModel] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> ServedModel:
        """The served model called `name`; 404 naming the available ones otherwise."""
        served = self.models.get(name)
        if served is None:
            available = ", ".join(sorted(self.models)) or "none"
            shown = name if len(name) <= 80 else name[:80] + "..."
            raise ApiError(404, f"unknown model {shown!r}; available: {available}", field="name")
        return served

    def start(self) -> None:
        for served in self.models.values():
            served.batcher.start()

    async def stop(self) -> None:
        for served in self.models.values():
            await served.batcher.stop()


def _warm_up(bundle: Bundle, inference: Inference) -> None:
    """Every batch bucket's CUDA graph captured (on a GPU), then one forecast on a neutral history, so that
    a bundle that cannot predict is caught at startup and no request waits for a capture."""
    data = bundle.data
    rows = data.input_size + (data.horizon if data.future_columns else 0)  # future covariates' rows ahead
    inference.warm_up((rows, len(data.input_columns)))
    history = np.tile(bundle.scaler.mean, (1, rows, 1))
    forecast = predict_windows(bundle, history, inference)[0]
    expected = (bundle.data.horizon, len(bundle.data.columns))
    if forecast.shape != expected or not np.isfinite(forecast).all():
        raise ValueError(
            f"warm-up forecast has shape {forecast.shape} (expected {expected}) or is not finite"
        )


def load_registry(
    models_dir: str | Path,
    *,
    executor: Executor,
    max_batch_size: int,
    max_wait_s: float,
    device: str = "cpu",
    cuda_graphs: bool = True,
    observer: Callable[[str], BatchObserver] | None = None,
) -> ModelRegistry:
    """Load every bundle under `models_dir` to run on `device` (`Inference`); `observer(name)` gives the
    per-model batch callback."""
    root = Path(models_dir)
    registry = ModelRegistry()
    if not root.is_dir():
        log.error("models directory %s does not exist; serving no models", root)
        return registry
    for entry in sorted(root.iterdir()):
        if not entry.is_dir() or entry.name.startswith("."):
            continue
        name = entry.name
        if not MODEL_NAME_PATTERN.match(name):
            registry.skipped[name] = "directory name is not a valid model name (letters, digits, . _ -)"
            log.warning("skipping bundle %s: %s", entry, registry.skipped[name])
            continue
        try:
            bundle = load_bundle(entry)
            inference = Inference(bundle.model, device, cuda_graphs, max_batch_size)
            _warm_up(bundle, inference)
        except Exception as error:  # any broken bundle is reported and skipped, never fatal
            reason = str(error).replace(f"{root}{os.sep}", "")  # paths relative to the models folder
            registry.skipped[name] = f"{type(error).__name__}: {reason}"
            log.warning("skipping bundle %s: %s", entry, registry.skipped[name])
            continue
        batcher = MicroBatcher(
            functools.partial(predict_outputs, bundle, inference=inference),
            executor=executor,
            max_batch_size=max_batch_size,
            max_wait_s=max_wait_s,
            on_batch=observer(name) if observer else None,
        )
        registry.models[name] = ServedModel(name=name, bundle=bundle, batcher=batcher)
        log.info("loaded model %s (%s) from %s, forecasts %s", name, bundle.model_name, entry, inference.mode)
    return registry

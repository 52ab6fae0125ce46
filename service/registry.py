"""The bundles a service instance answers for, loaded at startup from one directory, reloaded as it changes.

Each subdirectory is a bundle named after the directory. A bundle that fails validation (or a
warm-up forecast) is logged and listed as skipped; it never stops the service from starting.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread
import numpy as np
import pydantic_core

from forecaster.artifacts import Bundle, load_bundle
from forecaster.atomic import Version, folder_version
from forecaster.calibration import Calibration
from forecaster.history import companion_model
from forecaster.prediction import Inference, predict_outputs, predict_windows
from service.batching import BatchObserver, MicroBatcher
from service.errors import ApiError
from service.schemas import CompanionInfo, ModelInfo

log = logging.getLogger("service")

MODEL_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # whole names: `fullmatch`
INVALID_NAME = "directory name is not a valid model name (letters, digits, . _ -)"
# What /v1/models tells of a bundle's metrics.json (bounded there at 64 MiB): entries whose JSON is at most
# METRICS_ENTRY_BYTES, while they total METRICS_SUMMARY_BYTES. A real one is ~1.5 KB but for `val_blocks` (a
# number per block of `horizon` validation windows and channel): 110,670 numbers, 2.1 MB, for weather at
# horizon 1; Traffic's 862 channels make ~1.5 M. The whole file: GET /v1/models/{name}/metrics.
METRICS_ENTRY_BYTES = 4096
METRICS_SUMMARY_BYTES = 65536
# Seconds a replaced model's batcher still runs: requests that took the model before the swap finish on it.
RETIRE_AFTER_S = 30.0


@dataclass
class ServedModel:
    """A loaded bundle plus the batcher that feeds it."""

    name: str
    bundle: Bundle
    batcher: MicroBatcher
    version: Version = None  # of its folder when it was loaded (`atomic.folder_version`)

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
            date_from=data.date_from or [],
            metrics=(summary := _metrics_summary(self.bundle.metrics)),
            metrics_complete=len(summary) == len(self.bundle.metrics),
            intervals=_intervals(self.bundle.calibration, self.bundle.metrics),
            logarithms=self.bundle.scaler.logged_columns(data.columns),
            id_col=data.id_col,
            past_covariates=data.past_covariates or [],
            future_covariates=data.future_covariates or [],
            calendar=data.calendar,
            companion=_companion(self.bundle),
        )

    @functools.cached_property
    def info_json(self) -> bytes:
        """`info` as JSON, written once a load (in its thread): a 54 MB metrics.json had been validated and
        written again by every GET of /v1/models, 1 s of the event loop each (h112)."""
        return self.info.model_dump_json().encode()

    @functools.cached_property
    def metrics_json(self) -> bytes:
        """The whole metrics.json as JSON (NaN as null, as `info_json`), written at its first GET, in a
        reading thread: only GET /v1/models/{name}/metrics sends it."""
        return pydantic_core.to_json(self.bundle.metrics, inf_nan_mode="null")


def _metrics_summary(metrics: dict[str, Any]) -> dict[str, Any]:
    """The entries of `metrics` /v1/models tells (METRICS_ENTRY_BYTES): a 54 MB metrics.json was sent whole
    in every listing (h112 F3)."""
    kept, total = {}, 0
    for key, value in metrics.items():
        size = len(pydantic_core.to_json({key: value}, inf_nan_mode="null"))
        if size <= METRICS_ENTRY_BYTES and total + size <= METRICS_SUMMARY_BYTES:
            kept[key], total = value, total + size
    return kept


def _companion(bundle: Bundle) -> CompanionInfo | None:
    """What the listings say of the bundle's companion (`artifacts.COMPANION`); None without one."""
    if (companion := bundle.companion) is None:
        return None
    data = companion.data
    model = companion_model(bundle)
    return CompanionInfo(model_name=model, input_size=data.input_size, columns=list(data.columns))


def _intervals(calibration: Calibration | None, metrics: dict[str, Any]) -> dict[str, Any] | None:
    if calibration is None:
        return None
    levels = calibration.available_levels()
    return {"method": calibration.method, "levels": levels, "calibrated_on": calibration.source,
            "scored_in_metrics": calibration.scored_in(metrics)}  # fmt: skip


@dataclass
class ModelRegistry:
    """Name -> ServedModel, plus the bundles that were skipped and why; `refresh` serves what the models
    folder holds now."""

    models: dict[str, ServedModel] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    root: Path | None = None
    load: Callable[[str, Path, Version], ServedModel] | None = None  # `_served` with the service's settings
    failed: dict[str, Version] = field(default_factory=dict)  # versions that did not load: not tried again
    stale: dict[str, str] = field(default_factory=dict)  # served, but their folder now holds what fails
    retired: list[tuple[float, MicroBatcher]] = field(default_factory=list)  # (when to stop, batcher)

    def get(self, name: str) -> ServedModel:
        """The served model called `name`; 503 saying why where its bundle failed to load (it was called
        unknown, h75 F7), 404 naming the available ones otherwise."""
        served = self.models.get(name)
        if served is None:
            available = ", ".join(sorted(self.models)) or "none"
            shown = name if len(name) <= 80 else name[:80] + "..."
            if name in self.skipped:
                raise ApiError(503, f"model {shown!r} is not served, its bundle failed to load: "
                               f"{self.skipped[name]}; available: {available}", field="name")  # fmt: skip
            raise ApiError(404, f"unknown model {shown!r}; available: {available}", field="name")
        return served

    def start(self) -> None:
        for served in self.models.values():
            served.batcher.start()

    async def stop(self) -> None:
        for served in self.models.values():
            await served.batcher.stop()
        for _, batcher in self.retired:
            await batcher.stop()
        self.retired.clear()

    def bundles(self) -> dict[str, tuple[Path, Version]]:
        """The models folder's bundle folders by name, with their versions (`atomic.folder_version`); a
        folder whose name is no model name is skipped with the reason."""
        found = {}
        for entry in sorted(self.root.iterdir()) if self.root is not None and self.root.is_dir() else []:
            if not entry.is_dir() or entry.name.startswith("."):
                continue
            if not MODEL_NAME_PATTERN.fullmatch(entry.name):  # match's $ let 'nv\n' pass (h44)
                if entry.name not in self.skipped:
                    self.skipped[entry.name] = INVALID_NAME
                    log.warning("skipping bundle %r: %s", str(entry), INVALID_NAME)  # quoted: its line breaks
                continue
            found[entry.name] = (entry, folder_version(entry))
        return found

    def add(self, name: str, entry: Path, version: Version) -> ServedModel | None:
        """Load the bundle at `entry` as model `name`; None, the reason kept in `skipped`, where it fails."""
        try:
            served = self.load(name, entry, version)
        except Exception as error:  # any broken bundle is reported and skipped, never fatal
            reason = f"{type(error).__name__}: {str(error).replace(f'{self.root}{os.sep}', '')}"
            self.failed[name] = version
            if name in self.models:  # what its folder holds now did not load: the loaded version answers
                self.stale[name] = reason
                log.warning("bundle %s changed but does not load, serving the version loaded before: %s",
                            entry, reason)  # fmt: skip
            else:
                self.skipped[name] = reason
                log.warning("skipping bundle %s: %s", entry, reason)
            return None
        for kept in (self.skipped, self.failed, self.stale):
            kept.pop(name, None)
        return served

    async def refresh(self) -> None:
        """Serve what the models folder holds now: a bundle replaced or recalibrated since it was loaded is
        loaded again and swapped in (in a thread: requests go on meanwhile; one that fails to load leaves
        the loaded version serving), a new one is added, a removed one is no longer served. A replaced
        model's batcher stops RETIRE_AFTER_S later: requests that took it before the swap still finish."""
        now = asyncio.get_running_loop().time()
        for deadline, batcher in [item for item in self.retired if item[0] <= now]:
            self.retired.remove((deadline, batcher))
            await batcher.stop()
        found = await anyio.to_thread.run_sync(self.bundles)
        if self.root is not None and not self.root.is_dir() and self.models:
            log.warning("models directory %s is gone: serving no models until it is back", self.root)
        for name in [name for name in self.models if name not in found]:
            self.retired.append((now + RETIRE_AFTER_S, self.models.pop(name).batcher))
            self.stale.pop(name, None)
            log.info("model %s removed from the models folder: no longer served", name)
        for name in [name for name in self.skipped if not (self.root / name).is_dir()]:
            self.skipped.pop(name)
        for name, (entry, version) in found.items():
            served = self.models.get(name)
            if served is not None and version == served.version:  # as loaded: restored by `cp -a` too
                self.failed.pop(name, None)
                if self.stale.pop(name, None) is not None:
                    log.info("model %s: its files are back as loaded, no longer stale", name)
                continue
            if version == self.failed.get(name):
                continue
            fresh = await anyio.to_thread.run_sync(self.add, name, entry, version)
            if fresh is None:
                continue
            fresh.batcher.start()
            self.models[name] = fresh
            if served is not None:
                self.retired.append((now + RETIRE_AFTER_S, served.batcher))


def _warm_up(bundle: Bundle, inference: Inference) -> None:
    """Every batch bucket's CUDA graph captured (on a GPU), then one forecast on a neutral history, so that
    a bundle that cannot predict is caught at startup and no request waits for a capture."""
    data = bundle.data
    rows = data.input_size + (data.horizon if data.future_columns else 0)  # future covariates' rows ahead
    inference.warm_up((rows, len(data.input_columns)))
    history = np.tile(bundle.scaler.inverse(np.zeros_like(bundle.scaler.mean)), (1, rows, 1))  # the means
    forecast = predict_windows(bundle, history, inference)[0]
    expected = (bundle.data.horizon, len(bundle.data.columns))
    if forecast.shape != expected or not np.isfinite(forecast).all():
        raise ValueError(
            f"warm-up forecast has shape {forecast.shape} (expected {expected}) or is not finite"
        )


def _served(
    name: str,
    entry: Path,
    version: Version,
    *,
    executor: Executor,
    max_batch_size: int,
    max_wait_s: float,
    device: str,
    cuda_graphs: bool,
    observer: Callable[[str], BatchObserver] | None,
) -> ServedModel:
    """The bundle at `entry` loaded, warmed up and given its batcher (not started)."""
    bundle = load_bundle(entry)
    inference = Inference(bundle.model, device, cuda_graphs, max_batch_size)
    _warm_up(bundle, inference)
    batcher = MicroBatcher(
        functools.partial(predict_outputs, bundle, inference=inference),
        executor=executor,
        max_batch_size=max_batch_size,
        max_wait_s=max_wait_s,
        on_batch=observer(name) if observer else None,
    )
    log.info("loaded model %s (%s) from %s, forecasts %s", name, bundle.model_name, entry, inference.mode)
    served = ServedModel(name=name, bundle=bundle, batcher=batcher, version=version)
    served.info_json  # noqa: B018 (written here, in the loading thread, not by the first GET)
    return served


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
    load = functools.partial(
        _served, executor=executor, max_batch_size=max_batch_size, max_wait_s=max_wait_s, device=device,
        cuda_graphs=cuda_graphs, observer=observer,
    )  # fmt: skip
    registry = ModelRegistry(root=Path(models_dir), load=load)
    if not registry.root.is_dir():
        log.error("models directory %s does not exist; serving no models", registry.root)
    for name, (entry, version) in registry.bundles().items():
        served = registry.add(name, entry, version)
        if served is not None:
            registry.models[name] = served
    return registry

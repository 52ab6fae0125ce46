"""Model bundles: a self-contained directory that rebuilds a trained forecaster without unpickling.

Layout: `config.json` (format version, model name + config, data config with the train scaler, training
metadata), `weights.safetensors` (the full state dict, buffers included) and `metrics.json`.
Saving is atomic: the bundle is written to a hidden temp directory beside the target and renamed into
place, so an interrupted save never leaves a half bundle and an overwritten bundle survives a failed save.
Loading validates every field and names the file and field that is wrong.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from forecaster.errors import BundleError, DataError

FORMAT_VERSION = 1
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "weights.safetensors"
METRICS_FILE = "metrics.json"
BUNDLE_FILES = (CONFIG_FILE, WEIGHTS_FILE, METRICS_FILE)


@dataclass
class DataConfig:
    """What a bundle must know about its data: which columns, how often, how long, and the train scaler."""

    source: str
    columns: list[str]
    freq: str | None
    date_col: str | None
    input_size: int
    horizon: int
    split: str
    scaler_mean: list[float]
    scaler_scale: list[float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def standardize(self, values: np.ndarray) -> np.ndarray:
        """Apply the train scaler ((x - mean) / scale, float64) to values whose last axis is the columns."""
        return (np.asarray(values, dtype=np.float64) - np.asarray(self.scaler_mean)) / np.asarray(
            self.scaler_scale
        )

    def unstandardize(self, values: np.ndarray) -> np.ndarray:
        """Undo `standardize`: back to original units (float64)."""
        return np.asarray(values, dtype=np.float64) * np.asarray(self.scaler_scale) + np.asarray(
            self.scaler_mean
        )

    @classmethod
    def from_dict(cls, raw: Any, where: str = "data") -> DataConfig:
        """Validate a JSON object field by field; BundleError names the offending field."""
        if not isinstance(raw, dict):
            raise BundleError(f"{where}: expected an object, got {type(raw).__name__}")
        expected = {f.name for f in fields(cls)}
        missing = sorted(expected - raw.keys())
        if missing:
            raise BundleError(f"{where}: missing field(s) {', '.join(missing)}")
        for name in ("source", "split"):
            if not isinstance(raw[name], str):
                raise BundleError(f"{where}.{name}: expected a string, got {raw[name]!r}")
        for name in ("freq", "date_col"):
            if raw[name] is not None and not isinstance(raw[name], str):
                raise BundleError(f"{where}.{name}: expected a string or null, got {raw[name]!r}")
        for name in ("input_size", "horizon"):
            value = raw[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise BundleError(f"{where}.{name}: expected a positive integer, got {value!r}")
        columns = raw["columns"]
        if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
            raise BundleError(f"{where}.columns: expected a non-empty list of column names, got {columns!r}")
        for name in ("scaler_mean", "scaler_scale"):
            values = raw[name]
            if not isinstance(values, list) or len(values) != len(columns):
                raise BundleError(
                    f"{where}.{name}: expected a list of {len(columns)} numbers (one per column)"
                )
            if not all(
                isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) for v in values
            ):
                raise BundleError(f"{where}.{name}: expected finite numbers, got {values!r}")
        if any(v <= 0 for v in raw["scaler_scale"]):
            raise BundleError(f"{where}.scaler_scale: expected positive numbers, got {raw['scaler_scale']!r}")
        return cls(**{name: raw[name] for name in expected})


@dataclass
class Bundle:
    """A loaded bundle; `predict` is the one forecasting path shared by the CLI and the service."""

    path: Path
    name: str
    model_name: str
    model_config: dict[str, Any]
    data: DataConfig
    metrics: dict[str, Any]
    training: dict[str, Any]
    model: nn.Module

    def predict(self, history: np.ndarray) -> np.ndarray:
        """Forecast `horizon` steps after a history in original units.

        history is (L', C) or (B, L', C) with L' >= input_size (only the last input_size rows are used);
        returns (H, C) or (B, H, C) float64 in original units.
        """
        array = np.asarray(history, dtype=np.float64)
        if array.ndim not in (2, 3):
            raise DataError(
                f"history: expected a (rows, columns) or (batch, rows, columns) array, got {array.ndim} dims"
            )
        batch = array[None] if array.ndim == 2 else array
        if batch.shape[0] == 0:
            raise DataError("history: expected at least one series, got an empty batch")
        n_columns, input_size = len(self.data.columns), self.data.input_size
        if batch.shape[-1] != n_columns:
            raise DataError(
                f"history: model {self.name!r} expects {n_columns} columns ({', '.join(self.data.columns)}), "
                f"got {batch.shape[-1]}"
            )
        if batch.shape[1] < input_size:
            raise DataError(
                f"history: model {self.name!r} needs at least {input_size} rows, got {batch.shape[1]}"
            )
        window = batch[:, -input_size:]
        bad = np.argwhere(~np.isfinite(window))
        if bad.size:
            series, row, column = bad[0]
            row_in_history = batch.shape[1] - input_size + row
            raise DataError(
                f"history: non-finite value in column {self.data.columns[column]!r} at row {row_in_history}"
                + (f" of series {series}" if array.ndim == 3 else "")
            )
        # C order whatever the caller's layout (pandas hands out Fortran-ordered arrays): oneDNN rounds
        # differently by memory layout, and predict must be bit-identical for CLI and service callers.
        scaled = np.ascontiguousarray(self.data.standardize(window), dtype=np.float32)
        with torch.inference_mode():
            forecast = self.data.unstandardize(self.model(torch.from_numpy(scaled)).numpy())
        return forecast[0] if array.ndim == 2 else forecast


def _write_json(path: Path, payload: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(payload, handle, indent=2)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_stale(target: Path) -> None:
    """Drop temp dirs of killed saves of `target`; restore a bundle a killed overwrite moved aside."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(tmp|old)-(\d+)-")
    for entry in sorted(target.parent.iterdir()):
        match = pattern.match(entry.name)
        if not match or _pid_alive(int(match.group(2))):
            continue
        if match.group(1) == "old" and not target.exists():
            os.replace(entry, target)
        else:
            shutil.rmtree(entry, ignore_errors=True)


def _move_into_place(staged: Path, target: Path) -> None:
    """Rename `staged` to `target`; an existing target is moved aside, restored on failure."""
    if not target.exists():
        os.rename(staged, target)
        return
    aside = target.parent / f".{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    os.replace(target, aside)
    try:
        os.replace(staged, target)
    except BaseException:
        os.replace(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def save_bundle(
    out_dir: str | Path,
    *,
    model: nn.Module,
    model_name: str,
    data: DataConfig,
    metrics: dict[str, Any],
    training: dict[str, Any],
    overwrite: bool = False,
) -> Path:
    """Write a bundle atomically; BundleError if `out_dir` exists and `overwrite` is False."""
    from safetensors.torch import save_file

    target = Path(out_dir)
    if target.parent.is_dir():
        _sweep_stale(target)  # first: a bundle that a killed overwrite moved aside counts as existing
    if target.exists() and not target.is_dir():
        raise BundleError(f"bundle path {target} exists and is not a directory")
    if target.exists() and not overwrite:
        raise BundleError(
            f"bundle directory {target} already exists; use --overwrite (overwrite=True) to replace it"
        )
    config = {
        "format_version": FORMAT_VERSION,
        "model": {"name": model_name, "config": model.config.to_dict()},
        "data": data.to_dict(),
        "training": training,
    }
    _validate_config(json.loads(json.dumps(config)), target / CONFIG_FILE)
    tensors = {
        key: value.detach().to("cpu").clone().contiguous() for key, value in model.state_dict().items()
    }

    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staged.mkdir()
    try:
        _write_json(staged / CONFIG_FILE, config)
        _write_json(staged / METRICS_FILE, metrics)
        save_file(tensors, staged / WEIGHTS_FILE, metadata={"format_version": str(FORMAT_VERSION)})
        _move_into_place(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return target


def _validate_config(raw: Any, where: Path) -> tuple[str, dict[str, Any], DataConfig, dict[str, Any]]:
    if not isinstance(raw, dict):
        raise BundleError(f"{where}: expected a JSON object")
    version = raw.get("format_version")
    if version != FORMAT_VERSION:
        raise BundleError(f"{where}: format_version {version!r} is not supported (expected {FORMAT_VERSION})")
    model = raw.get("model")
    if (
        not isinstance(model, dict)
        or not isinstance(model.get("name"), str)
        or not isinstance(model.get("config"), dict)
    ):
        raise BundleError(
            f"{where}: field 'model' must be an object with a string 'name' and an object 'config'"
        )
    from forecaster.models import model_names

    known = model_names()
    if model["name"] not in known:
        raise BundleError(f"{where}: unknown model {model['name']!r}; expected one of {', '.join(known)}")
    data = DataConfig.from_dict(raw.get("data"), where=f"{where}: data")
    shared = {"input_size": data.input_size, "horizon": data.horizon, "n_channels": len(data.columns)}
    for key, expected in shared.items():
        if key in model["config"] and model["config"][key] != expected:
            raise BundleError(
                f"{where}: model config has {key} {model['config'][key]!r} but the data config has {expected}"
            )
    training = raw.get("training")
    if not isinstance(training, dict):
        raise BundleError(f"{where}: field 'training' must be an object")
    return model["name"], model["config"], data, training


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BundleError(f"{path}: cannot read JSON ({error})") from error


def load_bundle(path: str | Path) -> Bundle:
    """Load and validate a bundle; the model comes back on CPU in eval mode."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from forecaster.models import get_model

    root = Path(path)
    if not root.is_dir():
        raise BundleError(f"no model bundle at {root} (expected a directory with {', '.join(BUNDLE_FILES)})")
    missing = [name for name in BUNDLE_FILES if not (root / name).is_file()]
    if missing:
        raise BundleError(f"bundle {root} is incomplete: missing {', '.join(missing)}")
    model_name, model_config, data, training = _validate_config(
        _read_json(root / CONFIG_FILE), root / CONFIG_FILE
    )
    metrics = _read_json(root / METRICS_FILE)
    if not isinstance(metrics, dict):
        raise BundleError(f"{root / METRICS_FILE}: expected a JSON object")
    try:
        model = get_model(model_name, **model_config)
    except (TypeError, ValueError, KeyError) as error:
        raise BundleError(
            f"{root / CONFIG_FILE}: model config does not build {model_name!r}: {error}"
        ) from error
    try:
        tensors = load_file(root / WEIGHTS_FILE)
    except (SafetensorError, OSError, ValueError) as error:
        raise BundleError(f"{root / WEIGHTS_FILE}: not a readable safetensors file ({error})") from error
    expected = model.state_dict()
    absent, unexpected = sorted(expected.keys() - tensors.keys()), sorted(tensors.keys() - expected.keys())
    if absent or unexpected:
        raise BundleError(
            f"{root / WEIGHTS_FILE}: tensors do not match model {model_name!r}"
            + (f"; missing {', '.join(absent)}" if absent else "")
            + (f"; unexpected {', '.join(unexpected)}" if unexpected else "")
        )
    for key, tensor in tensors.items():
        if tensor.shape != expected[key].shape:
            raise BundleError(
                f"{root / WEIGHTS_FILE}: tensor {key} has shape {tuple(tensor.shape)}, "
                f"model expects {tuple(expected[key].shape)}"
            )
    model.load_state_dict(tensors, strict=True)
    model.eval()
    return Bundle(
        path=root,
        name=root.name,
        model_name=model_name,
        model_config=model_config,
        data=data,
        metrics=metrics,
        training=training,
        model=model,
    )

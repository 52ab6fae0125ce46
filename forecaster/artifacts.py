"""Model bundles: a self-contained directory that rebuilds a trained model without unpickling.

Layout: `config.json` (format version, model name + config, for forecasters the data config and the train
scaler, training metadata), `weights.safetensors` (the full state dict, buffers included) and `metrics.json`.
Saving is atomic: the bundle is written to a hidden temp directory beside the target and renamed into
place, so an interrupted save never leaves a half bundle and an overwritten bundle survives a failed save.
Loading checks every field (sizes within their declared bounds), the memory the model's config asks for
(sized on the meta device, allocating nothing), and every tensor's name, shape, dtype and values against
the model its config builds, before the weights are used; errors name the file and field that is wrong, on
one line (`bundle_config` checks config.json's fields, and reads format 1, its scaler inside `data`). A
panel's bundle may hold a companion bundle (`COMPANION`) that its training record names with its digest; a
loaded bundle is written again with it (`resave_bundle`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from forecaster import atomic
from forecaster.bundle_config import FORMAT_VERSION, BundleConfig, validate_config
from forecaster.calibration import METHODS, Calibration, margins_problem
from forecaster.checks import MAX_LEVEL, increasing_levels
from forecaster.data.config import DataConfig
from forecaster.data.scaling import Scaler, names_ok
from forecaster.errors import BundleError, CalibrationFileError, ForecasterError, WriteRefusedError
from forecaster.tensor_checks import (
    check_header_size,
    check_model_size,
    check_tensor_names,
    check_tensors,
    described,
)

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "weights.safetensors"
METRICS_FILE = "metrics.json"
BUNDLE_FILES = (CONFIG_FILE, WEIGHTS_FILE, METRICS_FILE)
CALIBRATION_FILE = "calibration.safetensors"  # optional: interval margins; without it, points only
# The training record's field and the folder of a companion bundle: the forecast that fits nothing kept for a
# panel's series too short for the model's windows (`training.companion`); old bundles have none.
COMPANION = "short"
BUNDLE_OWNED = (*BUNDLE_FILES, CALIBRATION_FILE, COMPANION)


@dataclass
class Bundle:
    """A loaded bundle. Forecasters carry `data` and `scaler`; other models (LRA classifiers) carry None."""

    path: Path
    name: str
    model_name: str
    model: nn.Module
    metrics: dict[str, Any]
    training: dict[str, Any]
    data: DataConfig | None = None
    scaler: Scaler | None = None
    calibration: Calibration | None = None
    companion: Bundle | None = None


def work_dir_for(out: str | Path) -> Path:
    """Checkpoints and logs of the run that writes bundle `out`: `.<name>.work/` beside it.

    Hidden so that a folder of bundles (`forecaster serve --models DIR`) holds only bundles.
    """
    out = Path(out)
    return out.with_name(f".{out.name}.work")


def bundle_path(path: Any) -> Path:
    """A bundle's folder as a Path; BundleError for what is no path (None, a number)."""
    if not isinstance(path, (str, os.PathLike)):
        raise BundleError(f"expected a bundle folder path, got {path!r}")
    return Path(path)


def check_out_dir(
    out: str | Path, overwrite: bool, marker: str = CONFIG_FILE, owned: tuple[str, ...] = BUNDLE_OWNED,
    keys: tuple[str, ...] = ("format_version",),
) -> None:
    """Refuse, before any work is done, an output folder that cannot be written or replaced: a path without
    a folder name of its own ('.', '..', '/'), a file or a path under one, an existing folder without
    `overwrite`, and with it a folder forecaster did not write (`atomic.check_ours`: `marker`, `owned`)."""
    out = bundle_path(out)
    if out.is_symlink():  # replacing the link would leave its target behind, a dangling one fails late
        raise BundleError(f"output {out} is a symbolic link (to {os.readlink(out)}); give the folder itself")
    atomic.check_folder_path(out)
    if out.exists() and not overwrite:
        raise BundleError(f"output {out} already exists; --overwrite (overwrite=True in Python) replaces it")
    atomic.check_ours(out, marker, keys, owned, (COMPANION,))


def save_bundle(
    out_dir: str | Path, *, model: nn.Module, model_name: str, metrics: dict[str, Any],
    training: dict[str, Any], data: DataConfig | None = None, scaler: Scaler | None = None,
    calibration: Calibration | None = None, overwrite: bool = False, companion: Path | None = None,
) -> Path:
    """Write a bundle atomically (with `companion`, a bundle written beforehand, copied into it as
    `COMPANION`); BundleError if `out_dir` exists and `overwrite` is False. The weights' metadata names the
    sha256 of the config and metrics saved with them (`load_bundle` checks)."""
    target = bundle_path(out_dir)
    if target.parent.is_dir():
        atomic.sweep_stale(target)  # first: a bundle that a killed overwrite moved aside counts as existing
    check_out_dir(target, overwrite)
    from forecaster.models.assembly import naive_weights, stored

    weights = naive_weights(model)
    model = stored(model)
    config = {
        "format_version": FORMAT_VERSION,
        "model": {"name": model_name, "config": model.config.to_dict()},
        "data": None if data is None else data.to_dict(),
        "scaler": None if scaler is None else scaler.to_dict(),
        "training": training,
        **({} if weights is None else {"naive_weights": weights}),
    }
    validate_config(json.loads(json.dumps(config)), target / CONFIG_FILE)
    tensors = {
        key: value.detach().to("cpu").clone().contiguous() for key, value in model.state_dict().items()
    }

    staged = atomic.staging_dir(target)
    try:
        atomic.write_json(staged / CONFIG_FILE, config)
        atomic.write_json(staged / METRICS_FILE, metrics)
        saved_with = {"format_version": str(FORMAT_VERSION), **{f"{Path(name).stem}_sha256": hashlib.sha256(
            (staged / name).read_bytes()).hexdigest() for name in (METRICS_FILE, CONFIG_FILE)}}  # fmt: skip
        _save_tensors(tensors, staged / WEIGHTS_FILE, saved_with)
        if calibration is not None:
            _save_calibration(calibration, staged / CALIBRATION_FILE)
        if companion is not None:
            shutil.copytree(companion, staged / COMPANION)
        atomic.move_into_place(staged, target, replace=overwrite)
    except BaseException as error:
        shutil.rmtree(staged, ignore_errors=True)
        if isinstance(error, OSError):  # a full disk: one line, not safetensors' or json's traceback
            why = error.strerror or error
            raise WriteRefusedError(f"cannot write bundle {target}: {why}; nothing of it was written (an "
                                    "earlier bundle there is as it was)") from None  # fmt: skip
        raise
    return target


def resave_bundle(
    bundle: Bundle, out_dir: str | Path, *, training: dict[str, Any] | None = None,
    model: nn.Module | None = None, metrics: dict[str, Any] | None = None,
    calibration: Calibration | None = None, overwrite: bool = False,
) -> Path:
    """A loaded `bundle` written again at `out_dir`, with what is given in place of its own, and with its
    companion (`COMPANION`) written afresh and named by its digest: one saved without it, its record naming
    it, was refused at load (`Forecaster.save`, h137; a benchmark's refinish, h143)."""
    training = bundle.training if training is None else training
    with tempfile.TemporaryDirectory(prefix="forecaster-save-") as scratch:
        companion = None  # its folder may be gone (a fit's scratch one) or be the one replaced
        if bundle.companion is not None:
            companion = resave_bundle(bundle.companion, Path(scratch) / COMPANION)
            training = {**training, COMPANION: {**training[COMPANION], "sha256": model_digest(companion)}}
        return save_bundle(
            out_dir, model=bundle.model if model is None else model, model_name=bundle.model_name,
            metrics=bundle.metrics if metrics is None else metrics, training=training, data=bundle.data,
            scaler=bundle.scaler, calibration=bundle.calibration if calibration is None else calibration,
            overwrite=overwrite, companion=companion,
        )  # fmt: skip


def _save_tensors(tensors: dict[str, torch.Tensor], path: Path, metadata: dict[str, str]) -> None:
    """safetensors' file, readable as the config.json beside it is: safetensors makes it owner-only, which
    a service running as another user (the Docker image's) could not load."""
    from safetensors import SafetensorError
    from safetensors.torch import save_file

    try:
        save_file(tensors, path, metadata=metadata)
    except SafetensorError as error:  # an I/O error with its errno in its text: "... (os error 28)"
        code = int(found[1]) if (found := re.search(r"os error (\d+)", str(error))) else errno.EIO
        raise OSError(code, os.strerror(code), str(path)) from None
    config = path.parent / CONFIG_FILE
    if config.is_file():
        os.chmod(path, config.stat().st_mode & 0o666)


def model_digest(folder: Path) -> str:
    """sha256 of a bundle's config and weights files: a calibration names the model it was made for (one
    copied from another bundle of the same shapes would give it intervals of other errors), and a bundle its
    companion (`COMPANION`)."""
    digest = hashlib.sha256()
    for name in (CONFIG_FILE, WEIGHTS_FILE):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()


def _save_calibration(calibration: Calibration, path: Path) -> None:
    metadata = {
        "windows": str(calibration.windows), "source": calibration.source, "method": calibration.method,
        "filled": str(calibration.filled), "model_sha256": model_digest(path.parent),
    }
    tensors = {
        "margins": torch.from_numpy(np.ascontiguousarray(calibration.margins, dtype=np.float32)),
        "levels": torch.tensor(calibration.levels, dtype=torch.int64),
    }
    _save_tensors(tensors, path, metadata)


def write_calibration(bundle: str | Path, calibration: Calibration, read_as: atomic.Version = None) -> Path:
    """Replace (or add) a bundle's calibration atomically (whole or not at all); with `read_as`, the folder's
    version its model was read at, only if it still is (not the old model's margins in a replaced bundle)."""
    path = Path(bundle) / CALIBRATION_FILE
    if read_as is not None and atomic.folder_version(path.parent) != read_as:
        raise BundleError(f"bundle {path.parent} was replaced while it was calibrated (another run wrote "
                          "it); nothing written: run calibrate again")  # fmt: skip
    try:  # a read-only folder's error named the temporary file: write_atomically names `path`
        atomic.write_atomically(path, lambda staged: _save_calibration(calibration, staged))
    except OSError as error:
        why = error.strerror or error
        raise WriteRefusedError(f"cannot write {path}: {why}; the calibration is as it was") from None
    return path


def _load_calibration(path: Path, data: DataConfig) -> Calibration | None:
    """The bundle's calibration, checked against its horizon, columns and weights; None when it has none."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        return _read_calibration(path, data)
    except BundleError as error:
        raise CalibrationFileError(str(error), path.parent) from None


def _read_calibration(path: Path, data: DataConfig) -> Calibration:
    from safetensors import SafetensorError, safe_open

    if not path.is_file():
        raise BundleError(f"{path}: not a regular file; expected the calibration forecaster wrote")
    try:
        check_header_size(path, 2)  # margins and levels
        with safe_open(path, framework="pt") as handle:
            metadata = handle.metadata() or {}
            margins, levels = handle.get_tensor("margins"), handle.get_tensor("levels")
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:  # RuntimeError: a truncated file
        raise BundleError(f"{path}: not a readable calibration file ({error})") from None
    method, windows = metadata.get("method"), metadata.get("windows", "")
    filled = metadata.get("filled", "False")  # absent from calibrations saved before it was kept
    if method not in METHODS:
        raise BundleError(f"{path}: metadata 'method' must be one of {', '.join(METHODS)}, got {method!r}")
    if not (windows.isascii() and windows.isdigit() and len(windows) <= 18):  # not '²', 5,000 digits (h112)
        raise BundleError(f"{path}: metadata 'windows' must be a count, got {windows!r}")
    if filled not in ("True", "False"):
        raise BundleError(f"{path}: metadata 'filled' must be True or False, got {filled!r}")
    # listed only when short: 10**8 levels had taken 178 s and 2.6 GB to list and print (h112)
    listable = levels.dtype == torch.int64 and levels.ndim == 1 and len(levels) <= MAX_LEVEL
    listed = levels.tolist() if listable else []
    if not increasing_levels(listed):
        shown = listed if listable else described(levels)
        raise BundleError(f"{path}: 'levels' must be increasing int64 levels 1-{MAX_LEVEL}, got {shown}")
    expected = (len(listed), data.horizon, data.output_channels)
    if tuple(margins.shape) != expected or margins.dtype != torch.float32:
        raise BundleError(f"{path}: margins are {described(margins)}, expected float32 {expected}")
    if (problem := margins_problem(margins.numpy(), method)) is not None:
        raise BundleError(f"{path}: {problem}")
    digest = metadata.get("model_sha256")  # absent from calibrations saved before it was kept
    if digest is not None and digest != model_digest(path.parent):
        raise BundleError(f"{path}: made for another model (its model_sha256 is not that of this bundle's "
                          f"{CONFIG_FILE} and {WEIGHTS_FILE})")  # fmt: skip
    # copied out of the file's memory map: a file rewritten in place under a service would crash it (SIGBUS)
    margins = margins.numpy().copy()
    source = metadata.get("source", "")
    return Calibration(tuple(listed), margins, int(windows), source, method, filled == "True")


def _build(model_class: type[nn.Module], config: BundleConfig) -> nn.Module:
    """The model a bundle's config describes, assembled for its data as when it was trained."""
    from forecaster.models.assembly import assemble

    model = model_class(model_class.config_class.from_dict(config.model_config))
    return model if config.data is None else assemble(model, config.data, naive_weights=config.naive_weights)


def _check_saved_with(saved_with: dict[str, str], root: Path, read: tuple[tuple[str, bytes, Any], ...]
                      ) -> None:
    """The config and metrics read are those saved with the weights (their sha256 in its metadata): not a
    config copied in from another bundle; one whose line endings changed (autocrlf) is."""
    for name, content, value in read:
        digests = {hashlib.sha256(text).hexdigest() for text in (content, atomic.json_text(value).encode())}
        if saved_with.get(f"{Path(name).stem}_sha256") not in (None, *digests):
            raise BundleError(f"{root / name}: not the {Path(name).stem} saved with {WEIGHTS_FILE} (another "
                              "bundle's?); expected the bundle's own")  # fmt: skip


def load_bundle(path: str | Path, *, task: str | None = "forecast", calibration: bool = True) -> Bundle:
    """Load and check a bundle; the model comes back on CPU in eval mode; without `calibration`, its
    calibration file is not read (`forecaster calibrate` replaces one that cannot be). A bundle replaced
    while it is read is read again (`atomic.read_whole`).

    `task` ("forecast" by default, None for any) is what the caller can use: a bundle of another kind
    (an LRA classifier where a forecaster is expected) is refused by name.
    """
    root = bundle_path(path)
    return atomic.read_whole(root, lambda: _load_bundle(root, task, calibration))


def _load_bundle(root: Path, task: str | None, calibration: bool) -> Bundle:
    from safetensors import SafetensorError, safe_open

    from forecaster.models import MODELS
    from forecaster.models.assembly import stored

    if not root.is_dir():
        raise BundleError(f"no model bundle at {root} (expected a directory with {', '.join(BUNDLE_FILES)})")
    missing = [name for name in BUNDLE_FILES if not (root / name).exists() and not (root / name).is_symlink()]
    if missing:
        inner = sorted(str(folder) for folder in root.iterdir() if (folder / CONFIG_FILE).is_file())[:3]
        held = f"; bundles are in its folder(s) {', '.join(inner)}" if inner else ""  # a tuning run's
        raise BundleError(f"bundle {root} is incomplete: missing {', '.join(missing)}{held}")
    odd = [name for name in BUNDLE_FILES if not (root / name).is_file()]
    if odd:
        raise BundleError(f"bundle {root}: {', '.join(odd)} not a regular file (a folder, a device, a pipe "
                          "or a broken link); expected the files forecaster wrote")  # fmt: skip
    away = [name for name in BUNDLE_OWNED if (root / name).resolve().parent != root.resolve()]
    if away:  # a metrics.json linked to a credentials file was served by /v1/models
        raise BundleError(f"bundle {root}: {', '.join(away)} a link out of the bundle's folder; expected the "
                          "files forecaster wrote")  # fmt: skip
    config_json, config_bytes = atomic.read_json(root / CONFIG_FILE)
    config = validate_config(config_json, root / CONFIG_FILE)
    model_class = MODELS.get(config.model_name)
    if task is not None and model_class.task != task:
        raise BundleError(
            f"bundle {root} holds a {config.model_name} model (task {model_class.task!r}); "
            f"expected a {task!r} model"
        )
    metrics, metrics_bytes = atomic.read_json(root / METRICS_FILE)
    if not isinstance(metrics, dict):
        raise BundleError(f"{root / METRICS_FILE}: expected a JSON object")
    try:
        with torch.device("meta"):  # sized before anything is allocated (fields are bounded, not products)
            sized = _build(model_class, config)
    except (TypeError, ValueError, KeyError, ForecasterError) as error:
        raise BundleError(
            f"{root / CONFIG_FILE}: model config does not build {config.model_name!r}: {error}"
        ) from None
    check_model_size(sized, root / CONFIG_FILE)
    model = _build(model_class, config)
    read = ((CONFIG_FILE, config_bytes, config_json), (METRICS_FILE, metrics_bytes, metrics))
    try:
        check_header_size(root / WEIGHTS_FILE, len(stored(model).state_dict()))
        with safe_open(root / WEIGHTS_FILE, framework="pt") as handle:
            _check_saved_with(handle.metadata() or {}, root, read)
            check_tensor_names(handle.keys(), stored(model), config.model_name, root / WEIGHTS_FILE)
            tensors = handle.get_tensors()
    except (SafetensorError, OSError, ValueError, RuntimeError) as error:  # RuntimeError: a truncated file
        raise BundleError(f"{root / WEIGHTS_FILE}: not a readable safetensors file ({error})") from None
    check_tensors(tensors, stored(model), config.model_name, root / WEIGHTS_FILE)
    stored(model).load_state_dict(tensors, strict=True)
    model.eval()
    calibrated = (_load_calibration(root / CALIBRATION_FILE, config.data)
                  if calibration and config.data else None)  # fmt: skip
    return Bundle(path=root, name=root.name, model_name=config.model_name, model=model, metrics=metrics,
                  training=config.training, data=config.data, scaler=config.scaler, calibration=calibrated,
                  companion=_load_companion(root, config.training, calibration, config.data))


def _load_companion(root: Path, training: dict, calibration: bool, data: DataConfig | None) -> Bundle | None:
    """The companion bundle the training record names (`COMPANION`: its series, places and the sha256 of its
    config and weights), checked: not one copied in, naming the model's series or nesting another (h130)."""
    if (record := training.get(COMPANION)) is None:
        return None
    folder, where = root / COMPANION, root / CONFIG_FILE
    series = isinstance(record, dict) and record.get("series")
    if not names_ok(series) or not series or data is None or set(series) & set(data.columns):
        raise BundleError(f"{where}: training field {COMPANION!r} must hold its 'series', a list of names, "
                          "none of them the model's own")  # fmt: skip
    if folder.is_symlink() or not folder.is_dir():
        raise BundleError(f"bundle {root}: no folder {COMPANION!r}, the companion its training record names")
    inner = _load_bundle(folder, "forecast", calibration)
    if record.get("sha256") != model_digest(folder) or inner.data.columns != series or inner.companion:
        raise BundleError(f"{folder}: not the companion saved with {where} (its sha256 or series differ, or "
                          "it holds a companion of its own); expected the bundle's own")  # fmt: skip
    return inner

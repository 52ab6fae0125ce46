"""What a bundle's `config.json` holds and how loading checks it (`artifacts` writes and reads the folder):
its format version, the model's name and config, the data config and scaler of a forecaster, the training
record and any per-step weights toward naive; format 1 (the scaler inside `data`) is read as format 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forecaster.checks import is_number
from forecaster.data.config import DataConfig
from forecaster.data.scaling import Scaler, names_ok
from forecaster.errors import BundleError, ForecasterError

FORMAT_VERSION = 2


def _upgrade(raw: dict[str, Any]) -> dict[str, Any]:
    """A format-1 config as format 2: the scaler moves from `data.scaler_mean/_scale` to its own field."""
    if raw.get("format_version") != 1 or not isinstance(raw.get("data"), dict):
        return raw
    data = dict(raw["data"])
    scaler = {"mean": data.pop("scaler_mean", None), "scale": data.pop("scaler_scale", None)}
    return {**raw, "format_version": FORMAT_VERSION, "data": data, "scaler": scaler}


_CONFIG_FIELDS = ("format_version", "model", "data", "scaler", "training", "naive_weights")
# The training record's lists of column names: those forecast at 0 or above, the series left out too short,
# the columns beside the targets given (`history`'s note of new series names none of them).
_TRAINING_NAMES = ("nonnegative", "left_out", "beside_targets")


@dataclass(frozen=True)
class BundleConfig:
    model_name: str
    model_config: dict[str, Any]
    data: DataConfig | None
    scaler: Scaler | None
    training: dict[str, Any]
    naive_weights: list[float] | None = None


def validate_config(raw: Any, where: Path) -> BundleConfig:
    """`raw`, a config.json's object, checked field by field (sizes within their bounds) and read; BundleError
    names the field at fault, in `where`."""
    from forecaster.models import FORECAST, MODELS

    if not isinstance(raw, dict):
        raise BundleError(f"{where}: expected a JSON object")
    version = raw.get("format_version")  # true == 1 in Python: read as format 1, then the scaler blamed (h44)
    if type(version) is not int or version not in (1, FORMAT_VERSION):
        raise BundleError(f"{where}: format_version {version!r} is not supported (expected 1 or "
                          f"{FORMAT_VERSION}); retrain the model with this version of forecaster")
    if unknown := sorted(set(raw) - set(_CONFIG_FIELDS)):  # a newer version's, used as if it were not there
        fields = ", ".join(_CONFIG_FIELDS)
        raise BundleError(f"{where}: unknown field(s) {', '.join(unknown)}; expected {fields}")
    raw = _upgrade(raw)
    model = raw.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("name"), str) or not isinstance(
        model.get("config"), dict
    ):
        raise BundleError(f"{where}: field 'model' must hold a string 'name' and an object 'config'")
    try:
        model_class = MODELS.get(model["name"])
    except ForecasterError as error:
        raise BundleError(f"{where}: {error}") from None
    training = raw.get("training")
    if not isinstance(training, dict) or not names_ok(*map(training.get, _TRAINING_NAMES)):
        named = ", ".join(map(repr, _TRAINING_NAMES[:-1])) + f" and {_TRAINING_NAMES[-1]!r}"
        raise BundleError(f"{where}: field 'training' must be an object, its {named} lists of names")
    if model_class.task != FORECAST:
        if raw.get("data") is not None or raw.get("scaler") is not None:
            raise BundleError(f"{where}: a {model['name']} bundle has no 'data' or 'scaler'; expected null")
        return BundleConfig(model["name"], model["config"], None, None, training)
    data = DataConfig.from_dict(raw.get("data"), where=f"{where}: data")
    try:
        scaler = Scaler.from_dict(raw.get("scaler"), n_channels=len(data.input_columns))
    except ForecasterError as error:
        raise BundleError(f"{where}: field 'scaler': {error}") from None
    shared = {"input_size": data.input_size, "horizon": data.horizon, "n_channels": data.model_channels}
    for key, expected in shared.items():
        if model["config"].get(key, expected) != expected:
            raise BundleError(
                f"{where}: model config has {key} {model['config'][key]!r} but the data config has {expected}"
            )
    weights = _checked_naive_weights(raw.get("naive_weights"), data.horizon, where)
    return BundleConfig(model["name"], model["config"], data, scaler, training, weights)


def _checked_naive_weights(weights: Any, horizon: int, where: Path) -> list[float] | None:
    """The optional per-step weights toward the naive forecast: `horizon` numbers in [0, 1]."""
    if weights is None:
        return None
    if not isinstance(weights, list) or len(weights) != horizon or not all(
        is_number(weight) and 0 <= weight <= 1 for weight in weights
    ):
        raise BundleError(
            f"{where}: field 'naive_weights' must be a list of {horizon} numbers between 0 and 1 (one per "
            "horizon step)"
        )
    return [float(weight) for weight in weights]

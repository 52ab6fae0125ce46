"""What `forecaster tune` searches: per model, the settings worth searching and their ranges, declared as data
in the shape of a `--space` file (JSON or YAML), checked before any trial runs, then handed to Ray Tune.

Each entry maps a setting (`lr`, `input_size` or a field of the model's config) to one distribution,
`{"loguniform": [low, high]}`, `{"uniform": [low, high]}`, `{"randint": [low, high]}` (both ends included)
or `{"choice": [values]}`, or to a plain value, which pins it. A file's entries replace the default ones of
the same name and add new ones.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forecaster.errors import ConfigError

# Learning rates from the reference code's 1e-4 to above paper 002's 1e-3 (its ILI runs).
LEARNING_RATE = {"lr": {"loguniform": [1e-4, 3e-3]}}
# The history length is searched as these multiples of the model's default (preset's or dataset's).
INPUT_SIZE_FACTORS = (0.5, 1, 2, 4)
SPACES: dict[str, dict[str, Any]] = {
    # Widths and depths around the paper's (D 32-64, 2 layers); 8 harmonics is the paper's listing, the
    # reference keeps all (None); the anchor and NLinear skip are the product's variants (forecaster.presets).
    "s3attention": {
        **LEARNING_RATE,
        "d_model": {"choice": [16, 32, 64, 128]},
        "e_layers": {"choice": [1, 2, 3]},
        "dropout": {"uniform": [0.0, 0.3]},
        "n_harmonics": {"choice": [4, 8, 16, 32, None]},  # None: every harmonic (the reference)
        "anchor": {"choice": ["last", "mean"]},
        "skip": {"choice": [True, False]},
    },
    "tnn": {**LEARNING_RATE, "n_layers": {"choice": [1, 2, 3]}},
    # DLinear's paper uses a moving average of 25; a season of days in hourly data (24) is close.
    "dlinear": {**LEARNING_RATE, "moving_avg_window": {"choice": [13, 25, 49]}},
}
DISTRIBUTIONS = ("loguniform", "uniform", "randint", "choice")
TRAINING_SETTINGS = ("lr", "input_size")


def read_space(path: Path) -> dict[str, Any]:
    """The entries of a `--space` file (.json, .yaml or .yml); ConfigError naming what is wrong."""
    suffix = path.suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise ConfigError(f"--space {path}: expected a .json, .yaml or .yml file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"--space {path}: cannot read it ({error})") from None
    try:
        if suffix == ".json":
            entries = json.loads(text)
        else:
            import yaml

            entries = yaml.safe_load(text)
    except Exception as error:  # json's ValueError, yaml's YAMLError
        kind = "JSON" if suffix == ".json" else "YAML"
        raise ConfigError(f"--space {path}: not valid {kind}: {str(error).splitlines()[0]}") from None
    if not isinstance(entries, dict) or not all(isinstance(name, str) for name in entries):
        raise ConfigError(f"--space {path}: expected a mapping of setting names to ranges or values")
    return entries


def _model_fields(model_name: str) -> dict[str, dataclasses.Field]:
    from forecaster.models import MODELS

    config_class = MODELS.get(model_name).config_class
    return {field.name: field for field in dataclasses.fields(config_class) if field.metadata.get("cli")}


def search_space(
    model_name: str,
    default_input_size: int,
    file: Path | None = None,
    holds: Callable[[int], bool] = lambda size: True,
) -> dict[str, Any]:
    """The checked space of `model_name`: its defaults, the input sizes around `default_input_size` that the
    rows `holds` (384 steps on a file of 400 rows was a failed trial), and the entries of `file` over them."""
    sizes = {max(2, round(default_input_size * factor)) for factor in INPUT_SIZE_FACTORS}
    space = {
        **SPACES.get(model_name, LEARNING_RATE),
        "input_size": {"choice": sorted(size for size in sizes if size == default_input_size or holds(size))},
        **(read_space(file) if file is not None else {}),
    }
    fields = _model_fields(model_name)
    for name, entry in space.items():
        if name not in TRAINING_SETTINGS and name not in fields:
            known = ", ".join([*TRAINING_SETTINGS, *sorted(fields)])
            raise ConfigError(f"search space: {model_name} has no setting {name!r}; expected one of {known}")
        _check_entry(name, entry)
    return space


def _check_entry(name: str, entry: Any) -> None:
    if not isinstance(entry, dict):
        return  # a pinned value: checked with the model's config when the trial builds it
    if len(entry) != 1 or next(iter(entry)) not in DISTRIBUTIONS:
        raise ConfigError(
            f"search space: {name}: expected one of {', '.join(DISTRIBUTIONS)} with its arguments, e.g. "
            f'{{"uniform": [0.0, 0.3]}}, or a plain value; got {entry!r}'
        )
    kind, arguments = next(iter(entry.items()))
    if kind == "choice":
        if not isinstance(arguments, list) or not arguments:
            raise ConfigError(f"search space: {name}: choice needs a non-empty list of values")
        return
    numeric = isinstance(arguments, list) and len(arguments) == 2 and all(
        isinstance(value, int | float) and not isinstance(value, bool) for value in arguments
    )
    if not numeric or not arguments[0] < arguments[1]:
        raise ConfigError(f"search space: {name}: {kind} needs [low, high] numbers with low < high")
    if kind == "loguniform" and arguments[0] <= 0:
        raise ConfigError(f"search space: {name}: loguniform needs low > 0")
    if kind == "randint" and not all(isinstance(value, int) for value in arguments):
        raise ConfigError(f"search space: {name}: randint needs whole-number bounds")


def tune_space(space: dict[str, Any]) -> dict[str, Any]:
    """The space as Ray Tune's sampling objects (randint's high end included, as declared)."""
    from ray import tune

    def domain(entry: Any) -> Any:
        if not isinstance(entry, dict):
            return entry
        kind, arguments = next(iter(entry.items()))
        if kind == "choice":
            return tune.choice(arguments)
        if kind == "randint":
            return tune.randint(arguments[0], arguments[1] + 1)
        return getattr(tune, kind)(*arguments)

    return {name: domain(entry) for name, entry in space.items()}


def _fits(entry: Any, value: Any) -> bool:
    if not isinstance(entry, dict):
        return entry == value
    kind, arguments = next(iter(entry.items()))
    if kind == "choice":
        return value in arguments
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    return numeric and arguments[0] <= value <= arguments[1] and (kind != "randint" or isinstance(value, int))


def model_defaults(model_name: str) -> dict[str, Any]:
    """The options of the model's config that have a default, at their defaults."""
    return {name: field.default for name, field in _model_fields(model_name).items()
            if field.default is not dataclasses.MISSING}


def default_point(space: dict[str, Any], model_name: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The model's untuned settings (`settings`: lr, input_size and its options over its config's defaults)
    on the space's searched entries, which the search tries first; empty where a searched range leaves out an
    untuned value (Optuna's first point must set every entry: a partial one was an internal error). The
    untuned settings are fitted beside the best trial either way (`keep_tuned`)."""
    values = {**model_defaults(model_name), **settings}
    searched = [name for name, entry in space.items() if isinstance(entry, dict)]
    if not all(name in values and _fits(space[name], values[name]) for name in searched):
        return {}
    return {name: values[name] for name in searched}

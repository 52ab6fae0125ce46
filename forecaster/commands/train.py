"""`forecaster train`: a forecaster from a benchmark dataset or any CSV, saved as a bundle."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from forecaster.checks import user_path
from forecaster.commands.common import add_source_arguments, print_metrics, print_training, series_source
from forecaster.commands.options import add_settings, given

HELP = "train a forecaster from a dataset or CSV and save a model bundle"
DESCRIPTION = (
    "Train with early stopping on validation MSE, restore the best weights, report test MSE/MAE and save a "
    "bundle (config.json, weights.safetensors, metrics.json) at --out. Model options come from the chosen "
    "model's config; unset ones take the dataset preset, else the model's defaults."
)


def model_configs() -> dict[str, type]:
    from forecaster.models import FORECAST, MODELS, model_names

    return {name: MODELS.get(name).config_class for name in model_names(FORECAST)}


def configure(parser: argparse.ArgumentParser) -> None:
    from forecaster.training.settings import TrainerOptions, TrainSettings

    add_source_arguments(parser, targets=True)
    add_settings(parser, TrainSettings)
    seen: set[str] = set()
    for name, config_class in model_configs().items():
        add_settings(parser.add_argument_group(f"{name} options"), config_class, seen=seen)
    add_settings(parser.add_argument_group("training"), TrainerOptions)
    parser.add_argument("--out", required=True, metavar="DIR", type=user_path,
                        help="bundle directory to create")
    parser.set_defaults(handler=run)


def model_options(args: argparse.Namespace, model: str) -> dict[str, Any]:
    """The model config fields given as flags; ConfigError for a flag the chosen model does not take (none
    for a name no model has: TrainSettings names the models one can train)."""
    from forecaster.errors import ConfigError
    from forecaster.presets import AUTO

    configs = model_configs()
    if model == AUTO:  # each candidate takes the options its config has
        return {name: value for config in configs.values() for name, value in given(args, config).items()}
    if model not in configs:
        return {}
    chosen = given(args, configs[model])
    others = {name for config in configs.values() for name in given(args, config)} - set(chosen)
    if others:
        flags = ", ".join(f"--{name.replace('_', '-')}" for name in sorted(others))
        raise ConfigError(f"{flags}: not an option of model {model!r} (see forecaster train --help)")
    return chosen


def run(args: argparse.Namespace) -> int:
    from forecaster.api import Forecaster
    from forecaster.artifacts import check_out_dir, work_dir_for
    from forecaster.calibration import DEFAULT_LEVELS
    from forecaster.checks import default_of
    from forecaster.data.splits import AUTO_SPLIT
    from forecaster.training.settings import TrainerOptions, TrainSettings

    fields = given(args, TrainSettings)
    check_out_dir(args.out, fields.get("overwrite", False))
    model = fields.get("model_name", default_of(TrainSettings, "model_name"))
    # a progress bar redrawn into a log file or pipe is noise: on by default only on a terminal
    trainer = TrainerOptions(**{"progress_bar": sys.stderr.isatty(), **given(args, TrainerOptions)})
    settings = TrainSettings(**fields, model_options=model_options(args, model), trainer=trainer)
    bundle = Forecaster.from_settings(settings).fit(series_source(args).load(), out=args.out).bundle
    if bundle is None:  # a non-zero rank of a distributed run
        return 0
    windows = bundle.training.get("windows")
    counts = (
        ", ".join(f"{count} {name}" for name, count in windows.items()) if isinstance(windows, dict) else ""
    )
    if isinstance(windows, dict) and not windows.get("train") and not bundle.training["parameters"]:
        counts += " (the kept forecast fits nothing: it needs no train window)"  # seasonal_mean of 2 years
    data = bundle.data
    print(
        f"split {data.split}{' (7:1:2 or holdout, series by series)' if data.split == AUTO_SPLIT else ''}, "
        f"input {data.input_size} steps, horizon {data.horizon}"
        + (f": windows {counts}" if counts else "")
    )
    print_training(bundle.training, bundle.metrics)
    print_metrics(bundle.metrics)
    calibration = bundle.calibration
    answered = calibration.available_levels() if calibration else DEFAULT_LEVELS
    unanswered = [f"{level}%" for level in DEFAULT_LEVELS if level not in answered]
    if unanswered:
        print(f"note: no {' or '.join(unanswered)} intervals from {calibration.source}; `forecaster "
              f"calibrate --model {bundle.path} --csv FILE --on all` calibrates on every window of a file")
    print(f"bundle saved to {bundle.path}")
    if work_dir_for(bundle.path).is_dir():  # a baseline fits nothing and writes none
        print(f"checkpoints and logs in {work_dir_for(bundle.path)}")
    return 0

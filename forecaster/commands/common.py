"""Flags and printing that several commands share: where a series comes from, how a CSV is read."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from forecaster.checks import user_path
from forecaster.errors import ConfigError, WriteRefusedError


def add_csv_arguments(parser: argparse.ArgumentParser, *, targets: bool = False) -> None:
    """How a CSV is read (`ReadOptions`: dates, missing cells and steps; the targets only where asked).
    Commands that read with a bundle default every unset option to the bundle's."""
    from forecaster.commands.options import add_settings
    from forecaster.data.series import ReadOptions

    group = parser.add_argument_group("reading the CSV")
    add_settings(group, ReadOptions, skip=() if targets else ("targets",))


def csv_options(args: argparse.Namespace) -> dict[str, Any]:
    """The reading options given on the command line."""
    from forecaster.commands.options import given
    from forecaster.data.series import ReadOptions

    return given(args, ReadOptions)


def add_source_arguments(parser: argparse.ArgumentParser, *, targets: bool) -> None:
    """--dataset NAME | --csv FILE, plus the CSV reading options (shared by train and evaluate)."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", metavar="NAME", help="registered benchmark dataset, e.g. ETTm2")
    source.add_argument(
        "--csv", metavar="FILE", type=user_path,
        help="CSV (or ;/tab-separated, or .xlsx) file of dates and numeric columns",
    )
    add_csv_arguments(parser, targets=targets)
    parser.add_argument("--data-dir", type=user_path, help="directory searched first for registered datasets")


def checked_output(path: str, flag: str) -> Path:
    """A file path to write, refused before any work where it names a folder or nothing."""
    if not path.strip():
        raise ConfigError(f"{flag} is empty; expected a file name")
    try:  # Python 3.11 raises RuntimeError on a link loop: an internal error, after the work (h112)
        Path(path).resolve()
    except RuntimeError:  # not OSError: a working folder removed is no loop (h117)
        raise ConfigError(f"{flag} {path}: a loop of symbolic links; expected a file name") from None
    if Path(path).is_dir() or path.endswith(("/", os.sep)):
        raise ConfigError(f"{flag} {path} is a folder; expected a file name")
    folder = next(parent for parent in Path(path).absolute().parents if parent.exists())  # made if missing
    if not folder.is_dir():
        raise ConfigError(f"{flag} {path}: {folder} is a file; expected a file in a folder")
    if not (Path(path).exists() and not Path(path).is_file()) and not os.access(folder, os.W_OK):
        raise WriteRefusedError(f"{flag} {path}: folder {folder} is not writable; expected a file in one "
                                "that is")  # fmt: skip
    return Path(path)


def positive_int(text: str) -> int:
    """An argument that counts something: a whole number >= 1 (argparse reports what is wrong)."""
    from forecaster.checks import check_int, whole_number

    try:
        return check_int("value", whole_number(text), minimum=1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None


def level_list(text: str) -> list[int]:
    """--level text "80,95" -> [80, 95], each an integer 1-99 (argparse reports what is wrong)."""
    from forecaster.checks import parse_levels

    try:
        return parse_levels(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class LevelsAction(argparse.Action):
    """`--level 80,95` or `--level 80 95` (`nargs="+"`, each part a `level_list`): one list of levels (`80 95`
    was refused, "unrecognized arguments: 95")."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        try:
            setattr(namespace, self.dest, level_list(",".join(",".join(map(str, part)) for part in values)))
        except argparse.ArgumentTypeError as error:  # more levels than one part may hold, all parts together
            parser.error(f"argument {option_string}: {error}")


def add_split_argument(parser: argparse.ArgumentParser) -> None:
    from forecaster.data.splits import SPLIT_SCHEMES

    parser.add_argument(
        "--split", choices=SPLIT_SCHEMES,
        help="split scheme (default 7:1:2, or holdout on a file too short for it; auto: that choice series "
        "by series)",
    )


def series_source(args: argparse.Namespace) -> Any:
    """The SeriesSource the --dataset / --csv flags and the reading options name."""
    from forecaster.data.reader import SeriesSource

    return SeriesSource(dataset=args.dataset, csv=args.csv, data_dir=args.data_dir, options=csv_options(args))


def print_training(training: dict[str, Any], metrics: dict[str, Any]) -> None:
    """How the kept model was found, and its validation MSE beside the naive forecast's."""
    from forecaster.models.baselines import NOTHING_TO_FIT
    from forecaster.training.growth import IN_PLACE

    selection = training.get("selection", {})
    lost = training.get("naive_since_validation")  # the choice gave way to naive on the test split
    shows = training.get("season_shows")  # seasonal naive in place of the forecast chosen (`growth`)
    grew = training.get("seasons_grew")  # seasonal drift in place of seasonal naive (`growth`)
    aicc_chose = training.get("season_chosen")  # a seasonal forecast the rows' AICc chose (`growth`)
    validated = next((training[key]["model"] for key in IN_PLACE if training.get(key)), None)
    if len(selection) > 1:
        ranked = ", ".join(
            f"{label} {mse:.4f}" for label, mse in sorted(selection.items(), key=lambda kv: kv[1])
        )
        several = sum(label in NOTHING_TO_FIT for label in selection) > 1
        baselines = " held against the best of the forecasts that fit nothing," if several else ""
        chosen = lost["model"] if lost else validated or training["candidate"]
        windows = (training.get("windows") or {}).get("val")
        one = "; validation holds 1 window: little evidence either way" if windows == 1 else ""  # h43
        print(
            f"chose {chosen} (simplest first,{baselines} a model is kept only where "
            "validation clearly says it is better: two standard errors, on an earlier period too where "
            f"validation is short{one}) among {len(selection)}: {ranked}"
        )
    if lost:
        mses = f"MSE {lost['test_mse']:.4f} against {lost['naive_test_mse']:.4f}"
        print(f"kept naive over {lost['model']}: chosen on validation, it forecast the test split clearly "
              f"worse than naive ({mses}): the series changed after validation")  # fmt: skip
    if shows:
        ratio = ", ".join(f"{value:.2f}" for value in shows["ratio"])
        print(f"kept seasonal_naive over {shows['model']}: the rows before the test split show a season (the "
              f"mean square of their seasonal differences {ratio} of their one-step differences', below "
              f"{shows['bound']:g})")  # fmt: skip
    if aicc_chose:
        aicc = ", ".join(f"{name} {values[0]:.1f}" for name, values in aicc_chose["aicc"].items())
        print(f"kept {training['candidate']} over {aicc_chose['model']}: of naive, drift, seasonal naive "
              f"and seasonal drift, its one-step errors over the {aicc_chose['changes']} rows before the "
              f"test split that follow a season have the lowest AICc ({aicc})")  # fmt: skip
    if grew:
        t = ", ".join(f"{value:.1f}" for value in grew["t"])
        print(f"kept seasonal_drift over {grew['model']}: the seasons before the test split grew (the mean "
              f"of their {grew['changes']} seasonal differences at t {t}, beyond {grew['bound']:g})")
    if validated:
        print(f"validation holds no window of {training['candidate']}'s input, so its intervals are "
              f"{validated}'s, calibrated on validation")  # fmt: skip
    if "members" in training:
        weights = ", ".join(f"{label} {weight:.2f}" for label, weight in training["members"].items())
        print(f"{training['candidate']}: the weighted average of {weights} (weights chosen on validation)")
    elif isinstance(training.get("columns"), dict):  # the per-column choice: "per-column" said nothing (h34)
        from forecaster.data.missing import some

        chosen = some([f"{column!r} {label}" for column, label in training["columns"].items()])
        print(f"{training['candidate']}: each column forecast by its own of the forecasts that fit nothing, "
              f"lower on validation: {chosen}")  # fmt: skip
    elif not training["parameters"]:
        print(f"{training['candidate']}: no parameters, nothing to train")
    else:
        seconds = training["train_seconds"]
        if "seeds" in training and not training["kept_initial_weights"]:
            epochs = "/".join(map(str, training["member_epochs"]))
            seeds = list(dict.fromkeys(training["seeds"]))
            inputs = list(dict.fromkeys(training.get("member_inputs", [])))
            reading = f", each reading {' and '.join(map(str, inputs))} input steps" if inputs else ""
            print(
                f"{training['candidate']}: the average of {len(training['seeds'])} models trained from seeds "
                f"{', '.join(map(str, seeds))}{reading} (small data: --seeds), {epochs} epoch(s) in "
                f"{seconds:.1f} s"
            )
        else:
            print(
                f"{training['candidate']}: trained {training['epochs']} epoch(s) in {seconds:.1f} s; "
                f"best epoch {training['best_epoch']}"
            )
    scored = f" ({validated}'s)" if validated else ""
    print(f"validation MSE {metrics['best_val_mse']:.4f}{scored}  ({_baselines(metrics, 'val_mse')})")
    shrunk = metrics.get("toward_naive")
    if shrunk:
        print(
            f"shrunk toward the naive forecast: weight {shrunk['weight_step1']:.2f} at step 1, "
            f"{shrunk['weight_mean']:.2f} on average; validation MSE {shrunk['val_mse']:.4f}"
        )


def _baselines(metrics: dict[str, Any], key: str, style: str = ".4f") -> str:
    """The naive and seasonal naive forecasts' `key` score, as the kept model's is printed beside them."""
    names = (("naive", "naive"), ("seasonal_naive", "seasonal naive"))
    return ", ".join(f"{shown} {metrics[name][key]:{style}}" for name, shown in names
                     if key in metrics.get(name, {}))  # fmt: skip


def print_metrics(metrics: dict[str, Any], trained_here: bool = True) -> None:
    """The test split's scores; `trained_here`: of the run that chose the model (`train`, `tune`), not of
    rows scored later (`evaluate`), where validation's choice is no longer the question."""
    from forecaster.training.fit import scored_notes

    naive = f"  ({_baselines(metrics, 'mse')})" if "naive" in metrics else ""
    print(f"test MSE {metrics['mse']:.4f}  MAE {metrics['mae']:.4f}  (standardized){naive}")
    if "mse_original" in metrics:  # not for independent series: each has its own units
        naive = _baselines(metrics, "mse_original", ".4g")
        print(f"test MSE {metrics['mse_original']:.4g}  MAE {metrics['mae_original']:.4g}  (original units)"
              + (f"  ({naive})" if naive else ""))  # fmt: skip
    step1 = f"  (naive {metrics['naive']['mse_step1']:.4f})" if "naive" in metrics else ""
    print(f"test MSE at step 1 {metrics['mse_step1']:.4f}{step1}")
    print(f"test windows {metrics['windows']}")
    intervals = metrics.get("intervals", {})
    for level, scores in intervals.items():
        print(
            f"{level}% interval: coverage {scores['coverage']:.3f}  mean width {scores['width']:.4f}  "
            f"interval score {scores['interval_score']:.4f}  (standardized)"
        )
    for note in scored_notes(metrics, trained_here):
        print(f"note: {note}")


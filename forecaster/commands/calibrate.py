"""`forecaster calibrate`: new interval calibration for a bundle, from its validation split or recent rows."""

from __future__ import annotations

import argparse

from forecaster.checks import user_path
from forecaster.commands.common import add_source_arguments, csv_options, series_source

HELP = "recalibrate a bundle's prediction intervals (conformal) on a dataset or recent rows"
DESCRIPTION = (
    "Compute the bundle's conformal interval margins again and replace them atomically: from the "
    "validation split of --dataset/--csv under the bundle's split (--on validation, what training does; for "
    "bundles saved before intervals existed), or from every window of the file (--on all: recent rows, when "
    "the series has moved since training and the intervals no longer cover)."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, metavar="DIR", type=user_path,
                        help="model bundle directory")
    add_source_arguments(parser, targets=False)
    parser.add_argument(
        "--on",
        choices=("validation", "all"),
        default="validation",
        help="which windows calibrate (default validation)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from forecaster.artifacts import (
        CALIBRATION_FILE,
        COMPANION,
        METRICS_FILE,
        bundle_path,
        load_bundle,
        write_calibration,
    )
    from forecaster.atomic import check_writable, folder_version
    from forecaster.calibration import DEFAULT_LEVELS, FEW_WINDOWS
    from forecaster.data.missing import some
    from forecaster.errors import CalibrationFileError
    from forecaster.history import companion_series, held_by_companion, read_history
    from forecaster.training.evaluation import calibrate_bundle

    read_as = folder_version(bundle_path(args.model))  # written only if the bundle is still this one
    companion_as = folder_version(bundle_path(args.model) / COMPANION)
    check_writable(bundle_path(args.model), f"cannot write {bundle_path(args.model) / CALIBRATION_FILE}")
    try:
        bundle = load_bundle(args.model)
    except CalibrationFileError as error:  # what calibrating replaces: say so, and make a new one
        print(f"note: replacing an unusable calibration: {error.problem}")
        bundle = load_bundle(args.model, calibration=False)
    series = (read_history(bundle, args.csv, None, **csv_options(args)) if args.csv
              else series_source(args).load())
    calibration = calibrate_bundle(bundle, series, args.on)
    path = write_calibration(args.model, calibration, read_as)
    shown = [level for level in calibration.levels if level in DEFAULT_LEVELS] or calibration.levels
    margins = ", ".join(
        f"{level}% {float(calibration.margins[calibration.levels.index(level), 0].mean()):+.3g}"
        for level in shown
    )
    print(
        f"calibrated on {calibration.source} ({calibration.method}); step-1 margins (standardized, mean over "
        f"columns): {margins}"
    )
    print(f"written to {path}")
    held = held_by_companion(bundle, series.columns)
    if held and (lacking := [repr(name) for name in companion_series(bundle) if name not in held]):
        print(f"note: its companion's calibration kept: its margins are of each of its series, and the rows "
              f"hold no {some(lacking)}")  # fmt: skip
    elif held:  # by its companion, on their own windows
        inner = calibrate_bundle(bundle.companion, series.of_series(held), args.on)
        print(f"its companion's calibration ({len(held)} series) written to "
              f"{write_calibration(bundle.companion.path, inner, companion_as)}")  # fmt: skip
    for note in calibration.notes():
        print(f"note: {note}")
    if calibration.windows < FEW_WINDOWS:  # one window of a 36-row file's test split, unsaid (h59 F9)
        windows = f"{calibration.windows} window{'s' if calibration.windows != 1 else ''}"
        print(f"note: {windows} made these margins, their errors pooled over the horizon's steps: little "
              "evidence of how far the series strays; calibrate again on more rows as they come")  # fmt: skip
    if bundle.metrics.get("intervals") and not calibration.scored_in(bundle.metrics):
        print(f"note: the interval scores in {bundle.path / METRICS_FILE} are of the calibration made at "
              f"training, not of these margins; `forecaster evaluate --model {bundle.path} --csv LATER.csv "
              "--level 80,95` scores these on later rows")  # fmt: skip
    return 0

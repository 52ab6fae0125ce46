"""`forecaster evaluate`: test-split metrics of a bundle, with the bundle's split, input size and scaler."""

from __future__ import annotations

import argparse
import json

from forecaster.checks import user_path
from forecaster.commands.common import (
    LevelsAction,
    add_source_arguments,
    csv_options,
    level_list,
    print_metrics,
    series_source,
)

HELP = "test-split MSE/MAE of a bundle on a dataset or CSV"
DESCRIPTION = (
    "Score a bundle on the test split of the data, using the bundle's split, input size and train scaler."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, metavar="DIR", type=user_path,
                        help="model bundle directory")
    add_source_arguments(parser, targets=False)
    parser.add_argument("--accelerator", default="auto", help="auto, cpu, gpu (cuda) or mps (default auto)")
    parser.add_argument(
        "--level",
        type=level_list,
        nargs="+",
        action=LevelsAction,
        default=[],
        metavar="LEVELS",
        help="also score the prediction intervals at these levels, e.g. 80,95 or 80 95: coverage, mean "
        "width, interval score",
    )
    parser.add_argument(
        "--json", action="store_true",
        help="one JSON object: mse, mae, mse_original, mae_original, windows, and naive's and seasonal "
        "naive's scores of the same windows",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from forecaster.artifacts import COMPANION, load_bundle
    from forecaster.data.missing import some
    from forecaster.history import companion_model, read_history
    from forecaster.training.evaluation import evaluate_bundle

    bundle = load_bundle(args.model)
    series = (read_history(bundle, args.csv, "scored", **csv_options(args)) if args.csv
              else series_source(args).load())
    metrics = evaluate_bundle(bundle, series, levels=args.level, accelerator=args.accelerator)
    if args.json:
        print(json.dumps(metrics))
    else:
        data = bundle.data
        same = data.source == series.source
        other = "" if same else f"; trained on {data.source}, standardized by its scaler"
        print(f"model {bundle.name} ({bundle.model_name}) on {series.source}, split {data.split}{other}")
        if "mse" in metrics:  # none where the rows hold only its companion's series
            print_metrics(metrics, trained_here=False)
        if COMPANION in metrics:  # the series too short for the model's windows
            print(f"its companion {companion_model(bundle)} on {some(bundle.companion.data.columns)}:")
            print_metrics(metrics[COMPANION], trained_here=False)
        if args.level and bundle.calibration.on_all_windows():
            print(f"note: the intervals were calibrated on {bundle.calibration.source}: test windows among "
                  "those rows made their margins, and coverage there is in sample; a file of later rows "
                  "tests them")  # fmt: skip
    return 0

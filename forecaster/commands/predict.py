"""`forecaster predict`: the horizon after the last row of a CSV, through `forecaster.prediction`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forecaster.checks import user_path
from forecaster.commands.common import (
    LevelsAction,
    add_csv_arguments,
    checked_output,
    csv_options,
    level_list,
    positive_int,
)
from forecaster.errors import ConfigError, warning_line

if TYPE_CHECKING:
    from forecaster.artifacts import Bundle

HELP = "forecast the horizon after the last row of a CSV file"
DESCRIPTION = (
    "Forecast with a bundle from the last input_size rows of FILE; timestamps continue the model's "
    "frequency. The rows are checked as the HTTP service checks them."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, metavar="DIR", type=user_path,
                        help="model bundle directory")
    parser.add_argument("--csv", required=True, metavar="FILE", type=user_path,
                        help="history: the bundle's columns")
    add_csv_arguments(parser)
    parser.add_argument(
        "--future-csv",
        metavar="FILE",
        type=user_path,
        help="the horizon's rows of the model's future covariates: its date column and those columns",
    )
    parser.add_argument(
        "--horizon", type=positive_int, help="steps to forecast, up to the model's (default: the model's)"
    )
    parser.add_argument(
        "--level",
        type=level_list,
        nargs="+",
        action=LevelsAction,
        default=[],
        metavar="LEVELS",
        help="prediction intervals at these levels, e.g. 80,95 or 80 95: columns <col>-lo-80, <col>-hi-80, "
        "...",
    )
    parser.add_argument("--output", metavar="CSV", type=user_path,
                        help="write the forecast here as CSV, '-' on standard output (default: a table)")
    parser.add_argument("--plot", metavar="PNG", type=user_path, help="write a plot of history and forecast")
    parser.add_argument(
        "--plot-history", type=positive_int, metavar="ROWS",
        help="history rows in the plot (default: input size)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from forecaster.api import Forecaster
    from forecaster.atomic import write_atomically
    from forecaster.history import read_future, read_history
    from forecaster.plotting import plot_forecast, plot_path
    from forecaster.prediction import csv_times, dated_as_history, forecast, shaped

    to_stdout = args.output == "-"  # the CSV on standard output, for a pipe
    if args.plot == "-":  # wrote a file named '-.png' (h84 F8)
        raise ConfigError("--plot -: a plot is not written to standard output; expected a file name, e.g. "
                          "forecast.png")  # fmt: skip
    output = None if args.output is None or to_stdout else checked_output(args.output, "--output")
    plot = None if args.plot is None else plot_path(checked_output(args.plot, "--plot"))
    _check_distinct({"--csv": args.csv, "--future-csv": args.future_csv, "--output": output, "--plot": plot},
                    args.model)
    written = {} if output is None else csv_written(output)
    model = Forecaster.load(args.model)
    bundle = model.bundle
    series = read_history(bundle, args.csv, **csv_options(args))
    future = read_future(bundle, args.future_csv) if args.future_csv else None
    wide = forecast(bundle, series, horizon=args.horizon, levels=_answered(bundle, args.level), future=future)
    table = shaped(bundle, dated_as_history(wide, series))
    indexed, times = bundle.data.id_col is None, csv_times(series)
    if output is not None:
        output.resolve().parent.mkdir(parents=True, exist_ok=True)  # a link's target's folder, as a path's
        write_atomically(output, lambda staged: table.to_csv(staged, index=indexed, **written, **times))
        steps = args.horizon or bundle.data.horizon  # each series': their dates differ where they end apart
        if bundle.data.id_col:  # long rows: one per series and step
            shape = f"{steps} steps of {len(table) // steps} series ({len(table)} rows)"
        else:
            apart = f" ({len(table)} rows: the series end apart)" if len(table) != steps else ""
            shape = f"{steps} steps x {table.shape[1]} columns{apart}"
        print(f"forecast of {shape} written to {output}")
    elif to_stdout:
        table.to_csv(sys.stdout, index=indexed, **times)
    else:
        print(table.to_string(index=indexed, float_format=lambda value: f"{value:.6g}", sparsify=False))
    if plot is not None:
        history_rows = args.plot_history or bundle.data.input_size
        written_to = plot_forecast(series, wide, plot, history_rows, series.columns)
        print(f"plot written to {written_to}", file=sys.stderr if to_stdout else sys.stdout)
    return 0


def _answered(bundle: Bundle, levels: list[int] | None) -> list[int] | None:
    """The asked levels the bundle's calibration answers, each other said in a warning (`--level 80,95` of a
    calibration of 13 windows writes the 80% interval); all of them, to be refused, where it answers none."""
    calibration = bundle.calibration
    answered = [level for level in levels or [] if calibration and level in calibration.available_levels()]
    if not answered:
        return levels
    for level in sorted(set(levels) - set(answered)):
        try:
            calibration.check([level])
        except ConfigError as error:
            print(warning_line(f"left out the {level}% interval: {error}"), file=sys.stderr)
    return answered


def _check_distinct(paths: dict[str, str | Path | None], model: str) -> None:
    """Refuse an output that is an input or the other output, or lies in the model's folder: it would be
    replaced by the forecast (a forecast written over weights.safetensors destroyed the bundle)."""
    seen: dict[str, str] = {}
    folder = os.path.join(os.path.realpath(model), "")
    for flag, path in paths.items():
        if path is None:
            continue
        real = os.path.realpath(path)
        if real in seen:
            raise ConfigError(f"{flag} {path} is the file of {seen[real]}; expected a file of its own")
        if flag in ("--output", "--plot") and real.startswith(folder):
            raise ConfigError(f"{flag} {path} is inside the model's folder {model}; expected a file outside "
                              "it (the bundle is forecaster's alone)")  # fmt: skip
        seen[real] = flag


_COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}
_NOT_CSV = (".xlsx", ".xlsm", ".xls", ".ods", ".json", ".parquet", ".feather", ".pkl", ".pickle", ".h5",
            ".zst", ".zstd", ".lz4", ".br", ".7z", ".tar", ".tgz", ".sz")  # compressions not written


def csv_written(output: Path) -> dict[str, Any]:
    """to_csv's options for the name `--output` gives (`forecast.csv.gz` compressed as it says, `.tsv`
    with tabs; a temp name is written first, whose suffix pandas cannot read it from); a name of another
    format (`.xlsx`: plain CSV text under it, which Excel refuses) refused before any work."""
    suffixes = [suffix.lower() for suffix in output.suffixes[-2:]]
    compression = _COMPRESSIONS.get(suffixes[-1]) if suffixes else None
    inner = suffixes[-2:-1] if compression else suffixes[-1:]
    if inner and inner[0] in _NOT_CSV:
        raise ConfigError(f"--output {output}: forecasts are written as CSV; expected a name ending .csv, "
                          ".tsv or .txt (or one of those with .gz, .bz2, .xz or .zip)")  # fmt: skip
    options: dict[str, Any] = {"sep": "\t"} if inner == [".tsv"] else {}
    if compression == "zip":  # the archive's member named as the file it holds
        return {**options, "compression": {"method": "zip", "archive_name": output.name[: -len(".zip")]}}
    return {**options, "compression": compression} if compression else options

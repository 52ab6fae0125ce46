"""`forecaster benchmark`: the accuracy protocol over datasets x horizons x models x repeats."""

from __future__ import annotations

import argparse
import shlex

from forecaster.checks import check_choice, parse_names
from forecaster.commands.options import add_settings, flags, given
from forecaster.errors import DataError

HELP = "train S3Attention and neuralforecast peers on identical splits; results.csv, summary.md, plot"


def configure(parser: argparse.ArgumentParser) -> None:
    from forecaster.benchmark import BenchmarkConfig

    add_settings(parser, BenchmarkConfig)
    parser.add_argument(
        "--dry-run", action="store_true",
        help="train nothing: print the cells done and to run per dataset and model, with a time estimate",
    )
    parser.add_argument(
        "--rerun", type=parse_names, default=[], metavar="MODELS",
        help="comma-separated models whose recorded rows (and bundles) in these datasets and horizons are "
        "forgotten first, so they train again; s3attention-auto and auto rows made from them go too",
    )
    parser.set_defaults(handler=run)


def command_line(config: object) -> str:
    """The command line that reproduces this grid (every grid setting spelled out), for summary.md."""
    parts = ["forecaster", "benchmark"]
    for flag in flags(type(config)):
        value = getattr(config, flag.name)
        unused = flag.name == "datasets" and getattr(config, "csv", None) is not None  # --csv replaces them
        if flag.kind is bool or value is None or flag.name == "jobs" and value == 1 or unused:
            continue
        shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        parts += [flag.flag, shlex.quote(shown)]
    return " ".join(parts)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from forecaster.atomic import check_folder_path
    from forecaster.benchmark import BenchmarkConfig, plan_grid, plan_table, run_benchmark

    config = BenchmarkConfig(**given(args, BenchmarkConfig))
    check_folder_path(config.out_dir)
    config = dataclasses.replace(config, command=command_line(config))
    if args.dry_run and args.rerun:
        raise DataError("--rerun forgets recorded rows; a --dry-run changes nothing: give one of them")
    for name in args.rerun:
        check_choice("--rerun", name.lower(), [model.lower() for model in config.models])
    if args.dry_run:
        plan = plan_grid(config)
        print(f"{config.out_dir}: {len(plan.done)} of {len(plan.cells)} cells done, {len(plan.todo)} to run")
        print("\n".join(plan_table(plan)))
        return 0
    outcome = run_benchmark(config, args.rerun)
    if outcome.forgotten:
        print(f"{len(outcome.forgotten)} recorded row(s) forgotten to run again: "
              f"{', '.join(dict.fromkeys(cell.model for cell in outcome.forgotten))}")
    if config.refinish:
        print(f"{outcome.refinished} earlier row(s) refinished from their kept bundles")
    print(f"{len(outcome.ran)} cells run, {len(outcome.skipped)} already done; {outcome.results}")
    print(f"summary: {outcome.summary}; plot: {outcome.plot}")
    return 0

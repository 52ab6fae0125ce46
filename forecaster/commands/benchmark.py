"""`forecaster benchmark`: the accuracy protocol over datasets x horizons x models x repeats."""

from __future__ import annotations

import argparse
import shlex

from forecaster.commands.options import add_settings, flags, given

HELP = "train S3Attention and neuralforecast peers on identical splits; results.csv, summary.md, plot"


def configure(parser: argparse.ArgumentParser) -> None:
    from forecaster.benchmark import BenchmarkConfig

    add_settings(parser, BenchmarkConfig)
    parser.add_argument(
        "--dry-run", action="store_true",
        help="train nothing: print the cells done and to run per dataset and model, with a time estimate",
    )
    parser.set_defaults(handler=run)


def command_line(config: object) -> str:
    """The command line that reproduces this grid (every grid setting spelled out), for summary.md."""
    parts = ["forecaster", "benchmark"]
    for flag in flags(type(config)):
        value = getattr(config, flag.name)
        if flag.kind is bool or value is None or flag.name == "jobs" and value == 1:
            continue
        shown = ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        parts += [flag.flag, shlex.quote(shown)]
    return " ".join(parts)


def run(args: argparse.Namespace) -> int:
    import dataclasses

    from forecaster.benchmark import BenchmarkConfig, plan_grid, plan_table, run_benchmark

    config = BenchmarkConfig(**given(args, BenchmarkConfig))
    config = dataclasses.replace(config, command=command_line(config))
    if args.dry_run:
        plan = plan_grid(config)
        print(f"{config.out_dir}: {len(plan.done)} of {len(plan.cells)} cells done, {len(plan.todo)} to run")
        print("\n".join(plan_table(plan)))
        return 0
    outcome = run_benchmark(config)
    if config.refinish:
        print(f"{outcome.refinished} earlier row(s) refinished from their kept bundles")
    print(f"{len(outcome.ran)} cells run, {len(outcome.skipped)} already done; {outcome.results}")
    print(f"summary: {outcome.summary}; plot: {outcome.plot}")
    return 0

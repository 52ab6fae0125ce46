"""`forecaster lra train` and `forecaster lra benchmark`: Long Range Arena classifiers with any registered
mixer, saved as bundles; the benchmark runs a task x mixer grid of them into one record and table."""

from __future__ import annotations

import argparse

from forecaster.commands.options import add_settings, given

HELP = "Long Range Arena: train classifiers with any registered mixer, or a task x mixer grid of them"


def configure(parser: argparse.ArgumentParser) -> None:
    from forecaster.lra.benchmark import CELL_FIELDS, LRABenchmarkSettings
    from forecaster.lra.settings import LRASettings
    from forecaster.models import LRAConfig

    commands = parser.add_subparsers(dest="lra_command", required=True)
    train = commands.add_parser(
        "train", help="train an LRA classifier through Lightning and report test accuracy",
        description="ListOps and Pathfinder are generated (and cached) when --data-dir is not given; Text, "
        "Retrieval and Image need the LRA / IMDB / CIFAR-10 files. Settings not given come from --preset "
        "(forecaster.lra.presets). Saves the classifier as a bundle at --out (config.json, "
        "weights.safetensors, metrics.json; Lightning's CSV log in .<name>.work/ beside it).",
    )
    add_settings(train, LRASettings)
    model = train.add_argument_group("model (defaults: the preset's)")
    add_settings(model, LRAConfig)
    model.add_argument(
        "--mixer-option", action="append", default=[], metavar="KEY=VALUE",
        help="option of the mixer, repeatable (e.g. n_features=128, left_rank=16)",
    )
    train.set_defaults(handler=run)
    benchmark = commands.add_parser(
        "benchmark", help="train every task x mixer x seed cell; results.csv and summary.md",
        description="Each cell is `forecaster lra train` with the settings below. A row per finished cell is "
        "appended to OUT/results.csv, a rerun skips the cells it holds, and OUT/summary.md shows test "
        "accuracy per task and mixer beside paper 001's. A cell that fails is reported in one line and the "
        "others run; the exit status is then 1.",
    )
    add_settings(benchmark, LRABenchmarkSettings)
    cell = benchmark.add_argument_group("every cell (defaults: the preset's)")
    add_settings(cell, LRASettings, skip=CELL_FIELDS)
    add_settings(benchmark.add_argument_group("model (defaults: the preset's)"), LRAConfig)
    benchmark.set_defaults(handler=run_benchmark)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from forecaster.lra.settings import LRASettings
    from forecaster.lra.training import train_lra
    from forecaster.models import LRAConfig
    from forecaster.nn.attention import parse_mixer_spec

    settings = LRASettings(**given(args, LRASettings))
    options = parse_mixer_spec(":".join([settings.mixer, *args.mixer_option])).options
    metrics = train_lra(settings, **given(args, LRAConfig), mixer_options=options)
    table = Table(title=f"LRA {settings.task} · {settings.mixer}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in metrics.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)
    return 0


def run_benchmark(args: argparse.Namespace) -> int:
    from forecaster.lra.benchmark import CELL_FIELDS, LRABenchmarkSettings, run_lra_benchmark
    from forecaster.lra.settings import LRASettings
    from forecaster.models import LRAConfig

    grid = LRABenchmarkSettings(**given(args, LRABenchmarkSettings))
    training = {name: value for name, value in given(args, LRASettings).items() if name not in CELL_FIELDS}
    outcome = run_lra_benchmark(grid, training, given(args, LRAConfig))
    print(f"{len(outcome.ran)} cells run, {len(outcome.skipped)} already done, {len(outcome.failed)} failed; "
          f"{outcome.results}; summary: {outcome.summary}")
    return 1 if outcome.failed else 0

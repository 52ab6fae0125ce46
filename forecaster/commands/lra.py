"""`forecaster lra train`: Long Range Arena classifiers with any registered mixer, saved as bundles."""

from __future__ import annotations

import argparse

from forecaster.commands.options import add_settings, given

HELP = "Long Range Arena: train classifiers with any registered mixer"


def configure(parser: argparse.ArgumentParser) -> None:
    from forecaster.lra.training import LRASettings
    from forecaster.models import LRAConfig

    commands = parser.add_subparsers(dest="lra_command", required=True)
    train = commands.add_parser(
        "train", help="train an LRA classifier through Lightning and report test accuracy",
        description="ListOps and Pathfinder are generated (and cached) when --data-dir is not given; Text, "
        "Retrieval and Image need the LRA / IMDB / CIFAR-10 files. Saves the classifier as a bundle at --out "
        "(config.json, weights.safetensors, metrics.json; Lightning's CSV log in .<name>.work/ beside it).",
    )
    add_settings(train, LRASettings)
    model = train.add_argument_group("model (defaults: REFERENCE.md section 3)")
    add_settings(model, LRAConfig)
    model.add_argument(
        "--mixer-option", action="append", default=[], metavar="KEY=VALUE",
        help="option of the mixer, repeatable (e.g. n_features=128, left_rank=16)",
    )
    train.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from forecaster.lra.training import LRASettings, train_lra
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

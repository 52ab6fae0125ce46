"""`forecaster data describe / download / verify`: inspect a dataset or CSV, fetch and check benchmarks."""

from __future__ import annotations

import argparse
import json
import sys

from forecaster.checks import user_path
from forecaster.commands.common import add_csv_arguments, add_split_argument, csv_options, positive_int
from forecaster.errors import ConfigError, warning_line

HELP = "inspect and obtain datasets"


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="data_command", required=True)

    describe = commands.add_parser(
        "describe", help="rows, columns, frequency, date range, split borders and window counts"
    )
    describe.add_argument(
        "source", nargs="?", metavar="NAME_OR_CSV", help="registered dataset (e.g. ETTm2) or CSV path"
    )
    describe.add_argument("--csv", metavar="PATH", type=user_path,
                          help="a CSV file (as train and predict take it)")
    describe.add_argument("--dataset", metavar="NAME", help="a registered dataset (as train takes it)")
    describe.add_argument("--data-dir", type=user_path,
                          help="directory searched first for registered datasets")
    add_split_argument(describe)
    describe.add_argument("--input-size", type=positive_int,
                          help="input length L (default: registry value, else 96)")
    describe.add_argument("--horizon", type=positive_int,
                          help="horizon H (default: first registered one, else 96)")
    describe.add_argument("--stride", type=positive_int, default=1, help="rows between train windows")
    add_csv_arguments(describe, targets=True)
    describe.add_argument("--json", action="store_true", help="print one JSON object")
    describe.set_defaults(handler=_describe)

    download = commands.add_parser("download", help="fetch a registered dataset and verify its sha256")
    download.add_argument("name", metavar="NAME", help="a registered dataset, e.g. ETTm2")
    download.add_argument("--data-dir", type=user_path,
                          help="target directory (default: $FORECASTER_DATA_DIR, else ./data)")
    download.add_argument("--url", help="download from this mirror (http(s)://, file:// or a local path)")
    download.add_argument("--force", action="store_true", help="download even if the file is present")
    download.set_defaults(handler=_download)

    verify = commands.add_parser("verify", help="check the sha256 of registered datasets that are present")
    verify.add_argument("names", nargs="*", metavar="NAME", help="datasets to check (default: all)")
    verify.add_argument("--data-dir", type=user_path, help="directory searched first")
    verify.set_defaults(handler=_verify)


def _describe(args: argparse.Namespace) -> int:
    from forecaster.data.describe import describe, format_description

    given = [source for source in (args.source, args.csv, args.dataset) if source is not None]
    if len(given) != 1:
        raise ConfigError(
            f"expected one dataset or CSV to describe (NAME_OR_CSV, --csv or --dataset), got {len(given)}"
        )
    info = describe(
        given[0],
        data_dir=args.data_dir,
        split=args.split,
        input_size=args.input_size,
        horizon=args.horizon,
        stride=args.stride,
        **csv_options(args),
    )
    for message in info["warnings"]:
        print(warning_line(message, note=True), file=sys.stderr)
    print(json.dumps(info) if args.json else format_description(info))
    return 0


def _download(args: argparse.Namespace) -> int:
    from forecaster.data.download import download_dataset

    print(download_dataset(args.name, args.data_dir, url=args.url, force=args.force))
    return 0


def _verify(args: argparse.Namespace) -> int:
    from forecaster.data import DATASETS
    from forecaster.data.download import verify_dataset

    results = [verify_dataset(name, args.data_dir) for name in (args.names or DATASETS)]
    for result in results:
        print(f"{result['name']:<12} {result['status']:<9} {result['path'] or '-'}")
    return 1 if any(result["status"] == "mismatch" for result in results) else 0

"""The `forecaster` command: one argparse tree, each handler a thin call into the library.

Heavy imports (torch, Lightning, uvicorn, neuralforecast) happen inside the handlers so that
`forecaster --help` and `forecaster data describe` start fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from forecaster.errors import ForecasterError

def _add_data_commands(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="inspect and obtain datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True)


def _add_bench_commands(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="speed and memory benchmarks that print tables")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forecaster", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _add_data_commands(sub)
    _add_bench_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except ForecasterError as error:
        print(f"forecaster: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

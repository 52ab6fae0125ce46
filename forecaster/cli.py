"""The `forecaster` command: builds the parser from `forecaster.commands` and dispatches; nothing else.

Each command module gives its help line (`HELP`, `DESCRIPTION`) and a `configure(parser)` that adds its
flags, most of them derived from settings classes that import torch. Only the command being run is
configured, so `forecaster --help` and `forecaster data describe` start fast.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import os
import re
import signal
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NoReturn

import forecaster
from forecaster.atomic import STOP_SIGNALS, recording_placed, stops_handled_by
from forecaster.errors import DataQualityWarning, ForecasterError, RefusedError, one_line, warning_line

COMMANDS = ("data", "train", "tune", "evaluate", "predict", "calibrate", "serve", "benchmark", "bench", "lra")


# The namespace entry naming the innermost (sub)command's parser, which says what a command line got wrong.
PARSER = "_parser"
# argparse's line for a mistyped choice, as Python 3.11 writes it ('x') and later ones (x).
_INVALID_CHOICE = re.compile(r"invalid choice: '?(?P<given>[^' ]*)'? \(choose from (?P<choices>.*)\)$")


class OneLineErrorParser(argparse.ArgumentParser):
    """Usage errors print one line, like library errors (sub-parsers inherit the class), with the nearest
    command or option to a misspelled one, and exit 2. Options are taken only as spelled: train's --levels
    must not answer to predict's --level."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})
        self.set_defaults(**{PARSER: self})  # a sub-parser's default replaces its parent's

    def error(self, message: str) -> NoReturn:
        typo = _INVALID_CHOICE.search(message)
        near = typo and _nearest(typo["given"], [choice.strip("'") for choice in typo["choices"].split(", ")])
        if near:
            message += f"; did you mean {near!r}?"
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def unrecognized(self, extra: list[str]) -> NoReturn:
        """argparse's line for arguments no option takes, from the (sub)command they were given to."""
        options = [option for action in self._actions for option in action.option_strings]
        flags = [arg.partition("=")[0] for arg in extra if arg.startswith("--")]
        near = next(filter(None, (_nearest(flag, options) for flag in flags)), None)
        self.error(f"unrecognized arguments: {' '.join(extra)}" + (f"; did you mean {near}?" if near else ""))


def _nearest(given: str, known: list[str]) -> str | None:
    """The closest of `known` to a misspelled `given`, None if nothing is close."""
    return next(iter(difflib.get_close_matches(given, known, n=1, cutoff=0.7)), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with every command configured, or only the one `argv` runs when it is given."""
    parser = OneLineErrorParser(
        prog="forecaster",
        description="Time-series forecasting with S3Attention: train, evaluate, predict, serve, benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"forecaster {forecaster.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    chosen = next((arg for arg in argv if not arg.startswith("-")), None) if argv is not None else None
    for name in COMMANDS:
        module = importlib.import_module(f"forecaster.commands.{name}")
        description = getattr(module, "DESCRIPTION", None)
        command = commands.add_parser(name, help=module.HELP, description=description)
        if argv is None or name == chosen:
            module.configure(command)
    return parser


_python_format_warning = warnings.formatwarning


def _format_warning(message, category, filename, lineno, line=None) -> str:
    """The project's own warnings as its one-line notes (not Python's file:line and source line); a
    library's warning keeps Python's format (the commands silence the known chatter unless --verbose)."""
    if category.__module__.partition(".")[0] == "forecaster":
        return warning_line(message, note=issubclass(category, DataQualityWarning)) + "\n"
    return _python_format_warning(message, category, filename, lineno, line)


class _ProgressLines(logging.Handler):
    """The project's log records (which candidate is training) as its own lines on whatever
    sys.stderr is when each is written; the Python API leaves them to the caller's logging setup."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"forecaster: {record.getMessage()}", file=sys.stderr, flush=True)


def _show_progress() -> None:
    logger = logging.getLogger("forecaster")
    if not any(isinstance(handler, _ProgressLines) for handler in logger.handlers):
        logger.addHandler(_ProgressLines())
        logger.setLevel(logging.INFO)
        logger.propagate = False


_STOPS = dict(zip(STOP_SIGNALS, ("interrupted", "terminated", "hung up"), strict=True))


class _Stopped(BaseException):
    """Ctrl-C or SIGTERM arrived. A BaseException as KeyboardInterrupt is: Lightning's fit turns a
    KeyboardInterrupt into exit status 1 and a SIGTERM into exit status 0, this one it lets through."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> NoReturn:
    raise _Stopped(signum)


class _NamedStdout:
    """`sys.stdout` whose failed writes name it: `> /dev/full` said only "No space left on device" (h101)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def write(self, text: str) -> int:
        return self._named(self._stream.write, text)

    def flush(self) -> None:
        self._named(self._stream.flush)

    @staticmethod
    def _named(call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except OSError as error:
            if error.filename is not None or error.errno is None:
                raise
            raise type(error)(error.errno, error.strerror, "standard output") from None


@contextmanager
def _stdout_named() -> Iterator[None]:
    """`sys.stdout` as `_NamedStdout` while a command runs (none where the shell closed it: `>&-`)."""
    stream = sys.stdout
    if stream is not None:
        sys.stdout = _NamedStdout(stream)
    try:
        yield
    finally:
        sys.stdout = stream


@contextmanager
def _stops_reported(wanted: bool) -> Iterator[None]:
    """Ctrl-C, SIGTERM and a closed terminal (SIGHUP, which ended a run without a word) as `_Stopped` while
    a command runs (in the main thread, where signals arrive); a stop the shell ignores (`nohup`, a job put
    in the background by a script) stays ignored: it took effect once the handler was in place (h41, h44)."""
    if not wanted:
        yield
        return
    with stops_handled_by(_stop):
        yield


def _said_stopped(stopped: BaseException, placed: Sequence[Path] = ()) -> int:
    """Say that a command was stopped; every file is written whole or not at all (atomic), and those it had
    already put in place (`placed`: a bundle saved before the stop replaced the earlier one) are named."""
    signum = stopped.signum if isinstance(stopped, _Stopped) else signal.SIGINT  # Ctrl-C while importing
    kept = list(dict.fromkeys(str(path) for path in placed if path.exists()))  # not a staged one swept up
    if kept:
        more = f" and {len(kept) - 3} more" if len(kept) > 3 else ""
        said = (f"{', '.join(kept[:3])}{more} {'was' if len(kept) == 1 else 'were'} saved whole before the "
                "stop, replacing any earlier version; nothing was half-written")  # fmt: skip
    else:
        said = "nothing was half-written (earlier outputs are as they were)"
    with suppress(OSError):  # the terminal that hung up takes no line
        print(f"forecaster: {_STOPS[signum]}; {said}", file=sys.stderr)
    return 128 + signum


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    warnings.formatwarning = _format_warning
    _show_progress()
    placed: list[Path] = []  # the outputs the command put in place, for a stop's line
    try:
        parser = build_parser(argv)
        args, unknown = parser.parse_known_args(argv)  # --verbose shows a traceback with every command
        if any(arg != "--verbose" for arg in unknown):
            getattr(args, PARSER).unrecognized([arg for arg in unknown if arg != "--verbose"])
        stops = _stops_reported(args.command != "serve")  # uvicorn shuts the service down on its own signals
        with stops, recording_placed(placed), _stdout_named():
            code = int(args.handler(args) or 0)
            if sys.stdout is not None:  # None where the shell closed it (`>&-`)
                sys.stdout.flush()  # a reader that left is noticed here, not at interpreter exit
        return code
    except ForecasterError as error:
        print(f"forecaster: error: {error}", file=sys.stderr)
        return 1 if isinstance(error, RefusedError) else 2
    except (_Stopped, KeyboardInterrupt) as stopped:
        return _said_stopped(stopped, placed)
    except BrokenPipeError:
        # The reader left (`forecaster ... | head`): no traceback, nor a second error when stdout is flushed.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:  # a file the command reads or writes: a full disk, a permission, ...
        where = f"{error.filename}: " if error.filename else ""
        print(f"forecaster: error: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    except Exception as error:  # a fault of ours, not of the input: one line, the traceback with --verbose
        if isinstance(error.__cause__, (_Stopped, KeyboardInterrupt)):  # wrapped by the C code it met (Ray's)
            return _said_stopped(error.__cause__, placed)
        if "--verbose" in argv:
            raise
        print(f"forecaster: internal error: {type(error).__name__}: {one_line(error)} (a fault of "
              "forecaster, not of your input: --verbose shows the traceback to report)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())

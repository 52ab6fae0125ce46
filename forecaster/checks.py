"""The one place argument and setting checks are written, so every refusal reads alike.

`check_int` / `check_number` / `check_choice` check one value and name it in the error. `setting(...)`
declares a dataclass field once, with its default, help text, accepted range and how its flag's text is
read (`parse_names`, `parse_ints`); `check_fields` checks a whole dataclass instance against those
declarations, and the command line builds its flags from them.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
import numbers
import os
import pathlib
import re
import types
import typing
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from forecaster.errors import ConfigError

Error = type[Exception]

# Upper bounds of the sizes a model or data config may declare, checked field by field before anything is
# allocated, so that a corrupted or hostile bundle is refused by name instead of exhausting memory. Far
# above real use: the longest windows in the literature are a few thousand steps, the widest panel here is
# M4's 100,000 series, the widest preset model has D = 512 and the deepest few layers.
MAX_STEPS = 100_000  # history lengths and sequence lengths: 11 years of hourly steps
MAX_HORIZON = 10_000  # forecast lengths: over a year of hourly steps
MAX_CHANNELS = 100_000  # series (columns) in one model
# numbers in one window, (input + horizon) steps x input columns: 256 MiB of float64, 27 times a window of
# Traffic's 862 columns at input 720 and horizon 720; the bounds above alone allowed 80 GB, which a served
# model's warm-up allocates
MAX_WINDOW_NUMBERS = 2**25
MAX_WIDTH = 16_384  # hidden widths, heads and their divisors: 32 times the widest preset (D = 512)
MAX_LAYERS = 64  # stacked layers or blocks
MAX_LEVEL = 99  # interval levels are the integers 1-99, each calibrated
MAX_SEED = 2**32 - 1  # the seeds Lightning's seed_everything accepts (training's --seed)


def is_int(value: Any) -> bool:
    """True for real integers (JSON numbers parsed as int, numpy's integers), not for bools."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """True for ints and floats (numpy's too), not for bools."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _bounds(minimum: Any, maximum: Any, above: Any = None, below: Any = None) -> str:
    parts = [f">= {minimum}" if minimum is not None else "", f"> {above}" if above is not None else "",
             f"<= {maximum}" if maximum is not None else "", f"< {below}" if below is not None else ""]
    return " and ".join(part for part in parts if part)


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    error: Error = ConfigError,
) -> int:
    """`value` if it is an integer (not a bool) within [minimum, maximum]; else `error` naming `name`."""
    inside = is_int(value) and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    if not inside:
        bounds = _bounds(minimum, maximum)
        raise error(f"{name} must be an integer{' ' + bounds if bounds else ''}, got {value!r}")
    return int(value)  # numpy's integers as Python's: what JSON and slicing take


def check_number(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    below: float | None = None,
    error: Error = ConfigError,
) -> float:
    """`value` if it is a finite number within the bounds (minimum/maximum inclusive, above/below not)."""
    inside = (
        is_number(value)
        and math.isfinite(value)
        and (minimum is None or value >= minimum)
        and (maximum is None or value <= maximum)
        and (above is None or value > above)
        and (below is None or value < below)
    )
    if not inside:
        bounds = _bounds(minimum, maximum, above, below)
        raise error(f"{name} must be a finite number{' ' + bounds if bounds else ''}, got {value!r}")
    return value if isinstance(value, int) else float(value)  # numpy's as Python's: what JSON takes


def check_choice(name: str, value: Any, choices: Collection[Any], *, error: Error = ConfigError) -> Any:
    """`value` if it is one of `choices`; else `error` listing them."""
    if value not in choices:
        raise error(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")
    return value


def setting(
    default: Any = dataclasses.MISSING,
    help: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    above: float | None = None,
    below: float | None = None,
    choices: Collection[Any] | None = None,
    flag: str | None = None,
    parse: Callable[[str], Any] | None = None,
    cli: bool = True,
) -> Any:
    """A dataclass field declared once: default, help, accepted values, and its command-line flag.

    `flag` overrides the derived `--field-name`, `parse` reads the flag's text (default: by the field's
    type); `cli=False` keeps the field off the command line (values that come from the data, such as
    n_channels).
    """
    metadata = {"help": help, "minimum": minimum, "maximum": maximum, "above": above, "below": below,
                "choices": None if choices is None else tuple(choices), "flag": flag, "parse": parse,
                "cli": cli}
    if isinstance(default, list | dict):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def parse_names(text: str) -> list[str]:
    """Flag text "a, b,c" -> ["a", "b", "c"]; a name holding a comma in double quotes, as in a CSV line
    ('"Korea, Rep.", Japan' -> ["Korea, Rep.", "Japan"])."""
    return [name.strip() for name in next(csv.reader([text], skipinitialspace=True), []) if name.strip()]


_WHOLE = re.compile(r"\s*[+-]?[0-9]+\s*")


def user_path(path: Any) -> Any:
    """A path a user gave, a leading `~` their home folder as shells and pandas read it (`save('~/x')` wrote a
    folder named '~', and a shell leaves `--out=~/x` as it is: h82 F22); text stays text, a Path a Path, and
    anything else is left to the refusal of whatever reads it."""
    if not isinstance(path, str | os.PathLike):
        return path
    expanded = os.path.expanduser(path)
    return expanded if isinstance(path, str) else pathlib.Path(expanded)


def whole_number(text: str) -> int:
    """Flag text as an integer of ASCII digits; ValueError otherwise: int() also reads "1_2" as 12, and
    other scripts' digits ("١٢", "８"), a typo more likely than a number (h44)."""
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"not a whole number: {text!r}")
    return int(text)


def parse_ints(text: str) -> list[int]:
    """Flag text "1024,2048" -> [1024, 2048]; ConfigError unless every part is an integer >= 1."""
    try:
        numbers = [whole_number(part) for part in text.split(",") if part.strip()]
    except ValueError:
        numbers = []
    if not numbers or min(numbers) < 1:
        raise ConfigError(f"expected comma-separated integers >= 1, got {text!r}")
    return numbers


def first_repeated(items: Sequence[Any]) -> Any | None:
    """The first item that an earlier one equals, else None."""
    return next((item for k, item in enumerate(items) if item in items[:k]), None)


def check_levels(levels: Iterable[int]) -> list[int]:
    """Interval levels (or one level) as a sorted list of distinct integers 1-99; ConfigError naming the first
    bad one, or one given twice: the service had refused [80, 80] (no answer of named bounds holds `lo-80`
    twice) where the CLI and the Python API merged it."""
    if is_int(levels):
        levels = [levels]
    elif isinstance(levels, (str, bytes)) or not isinstance(levels, Iterable):
        raise ConfigError(f"interval levels must be integers 1-{MAX_LEVEL} in a list such as [80, 95], got "
                          f"{levels!r}")
    # 80.0 is level 80 (as JSON's reader and Nixtla's `level` take it); 80.5 is no calibrated level
    whole = [int(level) if is_number(level) and float(level).is_integer() else level for level in levels]
    checked = [check_int("interval level", level, minimum=1, maximum=MAX_LEVEL) for level in whole]
    if not checked:
        raise ConfigError("expected at least one interval level, e.g. 80,95")
    if (twice := first_repeated(checked)) is not None:
        raise ConfigError(f"interval level {twice} given twice; expected each level once, e.g. 80,95")
    return sorted(checked)


def increasing_levels(levels: Sequence[int]) -> bool:
    """True if `levels` are distinct integer levels 1-99 in increasing order (how they are stored)."""
    try:
        return check_levels(levels) == list(levels)
    except ConfigError:
        return False


def parse_levels(text: str) -> list[int]:
    """Flag text "80,95" -> [80, 95]."""
    return check_levels(parse_ints(text))


def field_names(cls: type) -> set[str]:
    """The names of dataclass `cls`'s fields: which keywords a settings class takes."""
    return {field.name for field in dataclasses.fields(cls)}


def default_of(cls: type, name: str) -> Any:
    """The declared default of dataclass field `name`: how one setting's default serves another."""
    field = next(field for field in dataclasses.fields(cls) if field.name == name)
    return field.default if field.default is not dataclasses.MISSING else field.default_factory()


@functools.cache
def field_kinds(cls: type) -> dict[str, tuple[type | None, bool]]:
    """Per field: its one non-None type (None when the annotation allows several), and whether None is
    allowed."""
    kinds = {}
    for name, hint in typing.get_type_hints(cls).items():
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        args = typing.get_args(hint) if union else (hint,)
        concrete = [typing.get_origin(arg) or arg for arg in args if arg is not type(None)]
        kinds[name] = (concrete[0] if len(concrete) == 1 else None, type(None) in args)
    return kinds


def check_fields(instance: Any, label: str, *, error: Error = ConfigError) -> None:
    """Check every field of dataclass `instance` against its annotation and `setting` declaration."""
    kinds = field_kinds(type(instance))
    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        kind, optional = kinds.get(field.name, (None, True))
        if value is None and optional:
            continue
        meta = field.metadata
        name = f"{label} {field.name!r}"
        bounds = {key: meta.get(key) for key in ("minimum", "maximum")}
        if kind is bool and not isinstance(value, bool):
            raise error(f"{name} must be true or false, got {value!r}")
        if kind is int:
            object.__setattr__(instance, field.name, check_int(name, value, **bounds, error=error))
        elif kind is float:
            number = check_number(name, value, **bounds, above=meta.get("above"), below=meta.get("below"),
                                  error=error)  # fmt: skip
            object.__setattr__(instance, field.name, number)
        elif kind is str and not isinstance(value, str):
            raise error(f"{name} must be a string, got {value!r}")
        elif kind in (dict, list) and not isinstance(value, kind):
            raise error(f"{name} must be a {'JSON object' if kind is dict else 'list'}, got {value!r}")
        if meta.get("choices") is not None:
            check_choice(name, value, meta["choices"], error=error)

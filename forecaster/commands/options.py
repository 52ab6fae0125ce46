"""Command-line flags built from settings declared once (`forecaster.checks.setting` dataclass fields and
pydantic fields), so a flag's name, type, range, choices, default and help are never written twice.

`add_settings(parser, Cls)` adds a flag per field; the flag's text is parsed and range-checked at parse
time (argparse prints the usage error naming the flag); flags left out are absent from the namespace, so
`given(args, Cls)` returns only what the user set and the dataclass defaults apply to the rest.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from forecaster.checks import check_choice, check_int, check_number, field_kinds, user_path
from forecaster.errors import ForecasterError


class Flag(NamedTuple):
    """One command-line flag of a settings field."""

    name: str
    flag: str
    kind: type | None
    help: str
    default: Any
    required: bool
    meta: dict[str, Any]


def _dataclass_flags(cls: type) -> Iterator[Flag]:
    kinds = field_kinds(cls)
    for field in dataclasses.fields(cls):
        meta = dict(field.metadata)
        if not meta.get("cli", False):
            continue
        required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        default = None if required else _default(field)
        yield Flag(field.name, meta.get("flag") or "--" + field.name.replace("_", "-"), kinds[field.name][0],
                   meta.get("help", ""), default, required, meta)


def _default(field: dataclasses.Field) -> Any:
    return field.default if field.default is not dataclasses.MISSING else field.default_factory()


def _pydantic_flags(cls: type) -> Iterator[Flag]:
    import annotated_types
    from pydantic_core import PydanticUndefined

    for name, info in cls.model_fields.items():
        extra = info.json_schema_extra or {}
        bounds = {"minimum": None, "above": None}
        for constraint in info.metadata:
            if isinstance(constraint, annotated_types.Ge):
                bounds["minimum"] = constraint.ge
            elif isinstance(constraint, annotated_types.Gt):
                bounds["above"] = constraint.gt
        annotation = info.annotation
        if typing.get_origin(annotation) is typing.Literal:  # a choice among strings: str with its choices
            bounds["choices"], annotation = typing.get_args(annotation), str
        args = [arg for arg in getattr(annotation, "__args__", (annotation,)) if arg is not type(None)]
        required = info.default is PydanticUndefined
        kind = args[0] if len(args) == 1 else None
        yield Flag(name, extra.get("flag") or "--" + name.replace("_", "-"), kind, info.description or "",
                   None if required else info.default, required, bounds)


def flags(cls: type) -> list[Flag]:
    """The command-line flags of a settings dataclass or pydantic model."""
    return list(_pydantic_flags(cls) if hasattr(cls, "model_fields") else _dataclass_flags(cls))


def _path(text: str) -> Path:
    """A path flag's text, `~` as the home folder: the shell leaves `--out=~/x` as it is (h82 F22)."""
    return user_path(Path(text))


def _reader(flag: Flag) -> Callable[[str], Any]:
    """Parse and check one flag's text; argparse turns ArgumentTypeError into a usage error naming it."""
    meta = flag.meta
    parse = meta.get("parse") or {int: int, float: float, Path: _path}.get(flag.kind, str)

    def read(text: str) -> Any:
        try:
            value = parse(text)
        except ForecasterError as error:  # a parser of this project says what it expects
            raise argparse.ArgumentTypeError(str(error)) from None
        except ValueError:
            expected = {int: "an integer", float: "a number"}.get(flag.kind, "a valid value")
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        bounds = {key: meta.get(key) for key in ("minimum", "maximum")}
        try:
            if flag.kind is int:
                check_int("value", value, **bounds)
            elif flag.kind is float:
                check_number("value", value, **bounds, above=meta.get("above"), below=meta.get("below"))
            if meta.get("choices"):
                check_choice("value", value, meta["choices"])
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).replace("value must be", "expected")) from None
        return value

    read.__name__ = flag.name
    return read


def add_settings(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type,
    *,
    skip: Iterable[str] = (),
    seen: set[str] | None = None,
) -> None:
    """Add a flag per command-line field of `cls` (not in `skip`, nor already in `seen`, which it extends)."""
    skipped = set(skip)
    for flag in flags(cls):
        if flag.name in skipped or (seen is not None and flag.name in seen):
            continue
        if seen is not None:
            seen.add(flag.name)
        default = "" if flag.required or flag.default is None else f" (default {_shown(flag.default)})"
        if flag.kind is bool:
            default = "" if flag.default is None else f" (default: {'on' if flag.default else 'off'})"
        if "(default" in flag.help:  # a default the help explains (one from the data) is not contradicted
            default = ""
        options: dict[str, Any] = {"dest": flag.name, "default": argparse.SUPPRESS,
                                   "help": (flag.help + default).replace("%", "%%")}
        if flag.kind is bool:  # a flag named --no-X is on when given (BooleanOptionalAction would set False)
            negative = flag.flag.startswith("--no-")
            options["action"] = "store_true" if negative else argparse.BooleanOptionalAction
        else:
            options["type"] = _reader(flag)
            options["metavar"] = flag.name.upper()
            if flag.meta.get("choices"):
                options["metavar"] = "{" + ",".join(map(str, flag.meta["choices"])) + "}"
        if flag.required:
            options["required"] = True
        parser.add_argument(flag.flag, **options)


def _shown(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def given(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The fields of `cls` the user set on the command line."""
    names = {flag.name for flag in flags(cls)}
    return {name: value for name, value in vars(args).items() if name in names}

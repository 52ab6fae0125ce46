"""Checks of a request before its content is read or validated: its media type, its query parameters (a near
miss of `horizon` or `level` would be ignored without a word), the parts of a CSV upload's form and the counts
of a JSON body."""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request

from service.deps import Registry, Settings
from service.errors import ApiError
from service.inputs import check_record_count, every_series

# What other forecasting APIs call the horizon and the interval level (sktime's fh, Prophet's periods).
_ALIASES = {"fh": "horizon", "steps": "horizon", "periods": "horizon", "lv": "level", "lvl": "level",
            "conf": "level", "confidence": "level", "coverage": "level", "interval": "level",
            "intervals": "level", "quantiles": "level", "alpha": "level"}  # fmt: skip


def _meant(name: str) -> str | None:
    """`horizon` or `level` where a query parameter's name misses one (`levels`, `Level`, `lv`, `h`, a
    synonym), else None: such a parameter would be ignored without a word."""
    lowered = name.lower()
    for meant in ("horizon", "level"):
        if (lowered and meant.startswith(lowered)) or lowered == f"{meant}s":
            return meant
    close = difflib.get_close_matches(lowered, ["horizon", "level"], n=1, cutoff=0.75)
    return _ALIASES.get(lowered) or (close[0] if close else None)


def no_query_parameters(reads: str) -> Callable[[Request], Awaitable[None]]:
    """A check for a JSON route, which reads horizon and level (`reads`) from its body: the CSV route's
    `?horizon=` (or a near miss) sent there would be ignored without a word (other query parameters, a
    proxy's or a cache-buster's, are left alone)."""

    async def refuse_misplaced(request: Request) -> None:
        misplaced = next((name for name in request.query_params if _meant(name)), None)
        if misplaced is not None:
            raise ApiError(422, f"unexpected query parameter {misplaced[:50]!r}; this route reads {reads} "
                           "(query parameters are for /forecast.csv)", field="query")  # fmt: skip

    return refuse_misplaced


_DIGITS = re.compile(r"[0-9]{1,9}")


async def csv_query_parameters(request: Request) -> None:
    """The CSV route's `horizon` once, levels repeated, and no near miss of its parameters (`?levels=80`
    would answer without intervals, `?horizon=2&horizon=3` with one of the two); other parameters, a proxy's
    or a cache-buster's, are left alone."""
    if request.query_params.getlist("horizon")[1:]:
        raise ApiError(422, "query parameter 'horizon' given more than once; expected it once", field="query")
    if any("," in level for level in request.query_params.getlist("level")):
        raise ApiError(422, "level: expected one level per parameter, repeated for several: "
                       "?level=80&level=95", field="query")  # fmt: skip
    for name, example in (("horizon", 24), ("level", 80)):  # int() reads "3_0", " 3" and "3.0" as well
        odd = next((text for text in request.query_params.getlist(name) if not _DIGITS.fullmatch(text)), None)
        if odd is not None:
            said = "is too large" if odd.isascii() and odd.isdigit() else "is not a whole number in digits"
            raise ApiError(422, f"{odd[:20]!r} {said}; expected such as ?{name}={example}", field=name)
    for name in dict.fromkeys(request.query_params.keys()):
        meant = _meant(name)
        if meant and name != meant:
            raise ApiError(422, f"unknown query parameter {name[:50]!r}; did you mean {meant!r}?",
                           field="query")  # fmt: skip


def one_file_part(form: Any) -> None:
    """422 for a form part the CSV route does not read: `-F horizon=3` answered all the model's steps, and
    a second file went unread; 415 for a file part encoded for mail (base64)."""
    names = [name for name, _ in form.multi_items()]
    other = next((name for name in names if name != "file"), None)
    if other is not None:
        raise ApiError(422, f"form field {other[:50]!r} is not read; expected one 'file' part (horizon and "
                       "level are query parameters: ?horizon=3&level=80)", field="form")  # fmt: skip
    if names.count("file") > 1:
        raise ApiError(422, "several 'file' parts; expected one CSV per request", field="file")
    coding = getattr(form.get("file"), "headers", {}).get("content-transfer-encoding", "binary").lower()
    if coding.strip() not in ("7bit", "8bit", "binary"):  # base64 was read as the CSV's text (h33)
        raise ApiError(415, f"a part in Content-Transfer-Encoding {coding[:20]!r} is not decoded; expected "
                       "the file's bytes as they are (RFC 7578, 4.7)", field="file")  # fmt: skip


def require_media_type(*expected: str) -> Callable[[Request], Awaitable[None]]:
    """A dependency answering 415 unless the request's Content-Type is one of `expected` (async: FastAPI
    would run a plain function in a worker thread, a thread hop per request)."""

    async def check(request: Request) -> None:
        if len(set(request.headers.getlist("content-type"))) > 1:  # a proxy may heed the other one
            shown = " and ".join(map(repr, request.headers.getlist("content-type")))[:200]
            raise ApiError(400, f"two Content-Type headers ({shown}); expected one", field="content-type")
        declared = request.headers.get("content-type", "")
        media = declared.split(";", 1)[0].strip().lower()
        if media not in expected:
            shown = declared[:100] or "none"
            raise ApiError(415, f"expected {' or '.join(expected)}, got {shown!r}", field="content-type")

    return check


async def json_counts(request: Request, registry: Registry, settings: Settings) -> None:
    """A JSON forecast body's `inputs` (--max-inputs) and records (--max-rows per series) counted before the
    body is validated: 570,000 inputs (8 MB of `{"values": {}}`) were each validated as a request, 8 s of the
    event loop, before they were counted (h92)."""
    body = await request.json() if await request.body() else None
    if not isinstance(body, dict):
        return
    inputs, records = body.get("inputs"), body.get("data")
    if isinstance(inputs, list) and len(inputs) > settings.max_inputs:
        raise ApiError(422, f"expected at most {settings.max_inputs} inputs per request, got {len(inputs)}",
                       field="inputs")  # fmt: skip
    if isinstance(records, list):
        served = registry.get(request.path_params["name"])
        check_record_count(every_series(served.bundle), len(records), settings.max_rows)

"""The one error shape every non-2xx answer uses, and the handlers that produce it.

Every failure a client can cause (bad JSON, wrong types, wrong columns, bad timestamps, unknown
routes, oversized bodies) is answered with a 4xx and `{"error", "message", "details": [{"field",
"message"}]}`, so clients never see a traceback or FastAPI's default shapes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from forecaster.data.missing import some
from forecaster.errors import ForecasterError, one_line
from service.config import LIGHT_BODY_BYTES
from service.schemas import ErrorDetail, ErrorResponse

log = logging.getLogger("service")

# nginx's status for a request whose client hung up before the answer: no client error, no server error.
CLIENT_CLOSED_REQUEST = 499

# Names of the tagged-union members of the forecast body; pydantic puts them into error locations.
UNION_TAGS = frozenset({"single", "batch", "records"})

HTTP_ERROR_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    417: "expectation_failed",
    431: "request_head_too_large",
    501: "not_implemented",
    422: "invalid_input",
    503: "unavailable",
}


RETRY_AFTER_S = 1  # what a 503 asks a client to wait (Retry-After) before it tries again


def shutdown_message(what: str) -> str:
    """The message of a 503 answered because the service is shutting down: `what` it did not do."""
    return f"the service is shutting down {what}; expected a retry (on another instance)"


def _documented(description: str) -> dict[str, Any]:
    return {"model": ErrorResponse, "description": description}


def _sentence(clause: str) -> str:
    """`clause`, said also within longer descriptions, as a description of its own."""
    return f"{clause[0].upper()}{clause[1:]}."


# A request head (line and headers) larger than this is answered 431 and closed (service.server): httptools
# keeps a header until its end, and one 1.5 GB header line took 2 GB of the worker's memory (h11 stops at
# 16 KiB).
MAX_HEAD_BYTES = 64 * 1024

# What the HTTP server (service.server) answers before any route runs, listed on every route of
# /openapi.json: FastAPI merges a route's own answers over these, so a route's own 400 or 503 says them too.
_UNREADABLE = ("a request no HTTP/1.1 parser reads or one framed ambiguously (Transfer-Encoding beside "
               "Content-Length, no Host), answered before any route runs")  # fmt: skip
_OVER_CONNECTIONS = ("more connections open than --limit-concurrency, answered as they are accepted "
                     "(Retry-After)")  # fmt: skip
SERVER_ERRORS: dict[int | str, dict[str, Any]] = {
    400: _documented(_sentence(_UNREADABLE)),
    431: _documented(f"A request head (request line and headers) over {MAX_HEAD_BYTES // 1024} KiB, answered "
                     "before any route runs."),  # fmt: skip
    503: _documented(_sentence(_OVER_CONNECTIONS)),
}

# How the 503 of both lists below begins.
_UNLOADED_OR_STOPPING = ("The model's bundle failed to load (the message says why), the service is shutting "
                         "down")  # fmt: skip

# The error answers of a route that looks a model up, and of one that also reads a request body, as
# /openapi.json lists them: v2 listed only FastAPI's 422 shape (`{"detail": [...]}`), v1 no 400 (h92 F2).
LOOKUP_ERRORS: dict[int | str, dict[str, Any]] = {
    404: _documented("Unknown model name (or version)."),
    422: _documented("Invalid input; `details` names each field and expectation."),
    503: _documented(f"{_UNLOADED_OR_STOPPING}, or {_OVER_CONNECTIONS}."),
}
REQUEST_ERRORS: dict[int | str, dict[str, Any]] = {
    **LOOKUP_ERRORS,
    400: _documented("A body that is no JSON (invalid syntax, not UTF-8, nested too deeply) or names a "
                     f"member twice, or {_UNREADABLE}."),  # fmt: skip
    408: _documented("The body did not arrive within the body timeout."),
    413: _documented("Request body over the size limit."),
    415: _documented("Wrong Content-Type, or a compressed body."),
    503: _documented(f"{_UNLOADED_OR_STOPPING}, the forecasts in progress hold --max-forecast-bytes of "
                     f"bodies (this one over {LIGHT_BODY_BYTES // 1024} KiB) or the bodies held pass "
                     f"--max-buffered-bytes (Retry-After), or {_OVER_CONNECTIONS}."),  # fmt: skip
}


class ApiError(StarletteHTTPException):
    """A request the service refuses: carries the HTTP status, the field at fault and what was expected.

    An HTTPException, so that one raised while FastAPI parses a body passes through its catch-all (which
    would answer a bare "There was an error parsing the body") to `_on_api_error`."""

    def __init__(self, status: int, message: str, *, field: str | None = None, error: str | None = None):
        super().__init__(status, detail=message)
        self.field = field
        self.error = error or HTTP_ERROR_CODES.get(status, "error")


# An answer's size is bounded whatever the request held: 300,000 unknown keys were listed in a 6.4 MB
# message, 10,000 rows of text in 70,000 details, a 1 MB column name echoed twice.
MAX_DETAILS, MAX_MESSAGE_CHARS, MAX_FIELD_CHARS = 20, 2000, 200
_DETAILED = 1_000  # the validation errors read for details (a union's members are merged among them)


def listed(names: list[str]) -> str:
    """A request's unknown names as a refusal lists them: the first few and how many more (all of them were
    listed, the message then cut at MAX_MESSAGE_CHARS between its head and tail)."""
    return f"[{some(list(map(repr, names)))}]"


def error_response(
    status: int, error: str, message: str, details: Sequence[ErrorDetail] = (), unread: int = 0
) -> JSONResponse:
    """Render the shared error shape, at most MAX_DETAILS details (the count of the others, and of the
    `unread` ones not detailed, said in the last) and each text clipped."""
    kept = [ErrorDetail(field=one_line(detail.field, MAX_FIELD_CHARS),
                        message=one_line(detail.message, MAX_FIELD_CHARS))
            for detail in details[:MAX_DETAILS]]  # fmt: skip
    if len(details) + unread > MAX_DETAILS:
        kept.append(ErrorDetail(field="...", message=f"and {len(details) + unread - MAX_DETAILS:,} more"))
    body = ErrorResponse(error=error, message=one_line(message, MAX_MESSAGE_CHARS), details=kept)
    return JSONResponse(status_code=status, content=body.model_dump())


def format_location(loc: Sequence[Any]) -> str:
    """The client's view of a field: ('body', 'inputs', 0, 'values', 'OT', 3) -> 'inputs[0].values.OT[3]'."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path"):
        if parts[0] == "body" and len(parts) > 1 and parts[1] in UNION_TAGS:
            parts = parts[1:]
        parts = parts[1:]
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "body"


_OBJECT_ERRORS = frozenset({"model_attributes_type", "model_type", "dict_type"})
_FRIENDLY = {
    "missing": "required field is missing",
    "extra_forbidden": "unknown field; see the request schema at /docs",
    "finite_number": "expected a finite number (no NaN or Infinity, nor one past 1.8e308 such as 1e309)",
    "float_type": "expected a number",
    "int_type": "expected an integer",
    "string_type": "expected a string",
    "list_type": "expected a list",
    "model_attributes_type": "expected a JSON object",
    "model_type": "expected a JSON object",
    "dict_type": "expected a JSON object",
}


_BOUNDS = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}
_BOUND_ERRORS = frozenset({"greater_than_equal", "greater_than", "less_than_equal", "less_than"})


def _validation_detail(error: dict[str, Any]) -> ErrorDetail:
    field = format_location(error.get("loc", ()))
    if error.get("type") == "json_invalid":
        reason = (error.get("ctx") or {}).get("error", "")
        position = error["loc"][-1] if error.get("loc") else "?"
        return ErrorDetail(field="body", message=f"expected valid JSON: {reason} at character {position}")
    kind = error.get("type", "")
    message = _FRIENDLY.get(kind, str(error.get("msg", "invalid value")))
    context = error.get("ctx") or {}
    if kind == "too_short" and "min_length" in context:  # "List should have at least 1 item after validation"
        message = f"expected at least {context['min_length']} item(s), got {context.get('actual_length', 0)}"
    if kind in ("literal_error", "enum") and "expected" in context:  # "Input should be 'FP32' or 'FP64'"
        message = f"expected {context['expected']}, got {error.get('input')!r}"
    if kind == "too_long" and "max_length" in context:  # "List should have at most 99 items after validation"
        message = f"expected at most {context['max_length']} item(s), got {context.get('actual_length', '?')}"
    for bound, said in _BOUNDS.items():  # pydantic: "Input should be greater than or equal to 1"
        if bound in context and kind in _BOUND_ERRORS:
            message = f"expected {said} {context[bound]}, got {error.get('input')!r}"
    if kind == "float_type" and type(error.get("input")) is int:  # 400 digits, past float's range; not a bool
        digits = len(str(error["input"]).lstrip("-"))
        message = f"a number of {digits} digits; expected numbers a float can hold"
    if kind == "int_type" and isinstance(error.get("input"), float) and abs(error["input"]) >= 2**63:
        message = f"{error['input']:.3g} is past a 64-bit integer's range; expected an integer"  # 10**30
    loc = tuple(error.get("loc", ()))
    if kind == "extra_forbidden" and loc[:2] == ("body", "batch") and loc[-1] in ("horizon", "level"):
        message = f"not a field of a batch: give {loc[-1]} in each of its inputs"
    if "Expected UploadFile" in message:  # a form field where a file part was expected
        message = "expected a file part (with a filename), got a plain form field"
    if kind in _OBJECT_ERRORS and field == "body":
        message = (
            'expected a JSON object {"timestamps": [...], "values": {"column": [...]}} or {"inputs": [...]}'
        )
    return ErrorDetail(field=field, message=message)


# pydantic reports a value that fits no member of a union of scalars once per member, each named by its type
# ("y.str: expected a string; y.float: ..."): one value, one line naming what each member accepts.
_MEMBERS = {"str": "a string", "float": "a number", "int": "an integer", "bool": "true or false",
            "none": "null"}  # fmt: skip


def _either(kinds: list[str]) -> str:
    kinds = list(dict.fromkeys(kinds))
    return kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"


def _closest_members(errors: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The errors of a value against a union of lists (`list[float]`, `list[list[float]]`) from the member
    that fits it best (fewest errors), the member's name dropped: a flat tensor with one NaN got one error
    as a flat list and 840 as a nested one ("expected a list"), which misled."""
    tagged: dict[tuple, dict[Any, int]] = {}
    for error in errors:
        loc = tuple(error.get("loc", ()))
        at = next((k for k, part in enumerate(loc) if str(part).startswith("list[")), None)
        if at is not None:
            counts = tagged.setdefault(loc[:at], {})
            counts[loc[at]] = counts.get(loc[at], 0) + 1
    best = {prefix: min(counts, key=counts.get) for prefix, counts in tagged.items()}
    kept = []
    for error in errors:
        loc = tuple(error.get("loc", ()))
        prefix = next((loc[:k] for k in range(len(loc)) if loc[:k] in best), None)
        if prefix is None:
            kept.append(error)
        elif loc[len(prefix)] == best[prefix]:
            kept.append({**error, "loc": (*prefix, *loc[len(prefix) + 1 :])})
    return kept


def _validation_details(errors: Sequence[dict[str, Any]]) -> list[ErrorDetail]:
    """One detail per error, the errors of one value against the members of a scalar union merged (a NaN,
    which only a number could have been, said as such), of a union of lists the closest member's."""
    merged: dict[Any, ErrorDetail | list[str]] = {}  # in order: an error's detail, or a value's members
    not_finite = set()  # the values a number member refused as NaN or infinite: said as that alone
    for number, error in enumerate(_closest_members(errors)):
        loc = tuple(error.get("loc", ()))
        if loc and isinstance(loc[-1], str) and loc[-1] in _MEMBERS:
            kinds = merged.setdefault(loc[:-1], [])
            assert isinstance(kinds, list)
            kinds.append(_MEMBERS[loc[-1]])
            if error.get("type") == "finite_number":
                not_finite.add(loc[:-1])
        else:
            merged[number] = _validation_detail(error)
    return [item if isinstance(item, ErrorDetail) else ErrorDetail(field=format_location(key), message=(
                _FRIENDLY["finite_number"] if key in not_finite else f"expected {_either(item)}"))
            for key, item in merged.items()]  # fmt: skip


async def _on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()  # 900,000 for 300,000 strings (10 s to detail): the first read, the rest counted
    details = _validation_details(errors[:_DETAILED])
    unread = max(0, len(errors) - _DETAILED)
    summary = "; ".join(f"{d.field}: {d.message}" for d in details[:5])
    if len(details) + unread > 5:
        summary += f"; and {len(details) + unread - 5:,} more"
    syntax = any(error.get("type") == "json_invalid" for error in errors[:_DETAILED])  # 400 as for non-UTF-8
    status = 400 if syntax else 422
    return error_response(status, HTTP_ERROR_CODES[status], summary or "invalid request", details, unread)


def api_error_response(error: ApiError) -> JSONResponse:
    """The shared error shape of a refusal, its field named in the message and in `details`."""
    details = [ErrorDetail(field=error.field, message=error.detail)] if error.field else []
    message = f"{error.field}: {error.detail}" if error.field else error.detail
    return error_response(error.status_code, error.error, message, details)


async def _on_api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return api_error_response(exc)


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code if 400 <= exc.status_code < 600 else 400
    named = {name.lower(): value for name, value in (exc.headers or {}).items()}
    allowed = [method for method in named.get("allow", "").split(", ") if method]
    if "GET" in allowed and "HEAD" not in allowed:  # service.head answers HEAD wherever GET is
        allowed.append("HEAD")
    if status == 404:
        message = f"no route {request.method} {request.url.path[:200]}; see /docs for the API"
    elif status == 405:  # what the route takes, in the message too: CORS preflights (OPTIONS) land here
        message = (f"method {request.method} is not allowed on {request.url.path[:200]}; expected "
                   f"{' or '.join(allowed) or 'another method'}")  # fmt: skip
    elif status == 400 and request.headers.get("content-type", "").lower().startswith("multipart/"):
        reason = str(exc.detail).rstrip(".")  # starlette's words, framed: "Missing boundary in multipart"
        message = (f"the multipart body cannot be read ({reason}); expected one 'file' part holding the CSV, "
                   "as `curl -F file=@history.csv` sends it")  # fmt: skip
    else:
        message = str(exc.detail)
    response = error_response(status, HTTP_ERROR_CODES.get(status, "error"), message)
    if exc.headers:
        response.headers.update(exc.headers)
    if allowed:
        response.headers["allow"] = ", ".join(allowed)
    return response


async def _on_library_error(request: Request, exc: Exception) -> JSONResponse:
    return error_response(422, "invalid_input", str(exc))


async def _on_client_gone(request: Request, exc: Exception) -> Response:
    return Response(status_code=CLIENT_CLOSED_REQUEST)  # nobody reads it; metrics count it, logs stay quiet


async def _on_unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return error_response(500, "internal_error", "internal error; the request was logged")


def install_error_handlers(app: FastAPI) -> None:
    """Route every exception type to the shared error shape."""
    app.add_exception_handler(RequestValidationError, _on_validation_error)
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(StarletteHTTPException, _on_http_error)
    app.add_exception_handler(ForecasterError, _on_library_error)
    app.add_exception_handler(ClientDisconnect, _on_client_gone)
    app.add_exception_handler(Exception, _on_unexpected_error)

"""How a request's body is read: JSON by orjson (the json module where it refuses, for its messages), each
member named once, UTF-8 only; a multipart upload's delimiters checked before python-multipart parses it."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from python_multipart.multipart import parse_options_header
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException

from service.errors import ApiError

MULTIPART_BOUNDARIES = 64  # delimiters of an upload's parts (one file part needs two), checked before parsing


class OrjsonRequest(Request):
    """A request whose JSON body orjson parses (about 8x faster than the json module on a forecast's
    numbers). What orjson refuses is parsed again by the json module, so NaN literals, other encodings
    and the message of invalid JSON stay what they were."""

    async def json(self) -> Any:
        if "inference-header-content-length" in self.headers:  # raw tensor bytes after a JSON header
            raise ApiError(415, "the binary tensor data extension (Inference-Header-Content-Length) is "
                           "not supported; expected the tensors' numbers in JSON", field="content-type")
        if not hasattr(self, "_json"):
            body = await self.body()
            try:
                self._json = orjson.loads(body)
            except orjson.JSONDecodeError as error:
                if "surrogate in string" in str(error):  # "\ud800" alone: json.loads keeps it, pandas: 500
                    raise ApiError(400, f"an unpaired UTF-16 surrogate escape at offset {error.pos}; "
                                   "expected text of valid Unicode", field="body") from None  # fmt: skip
                self._json = _json_module_loads(body)
            else:
                if _members_dropped(body, self._json):  # json's hook names the member repeated (h75 F8)
                    self._json = _json_module_loads(body)
        return self._json

    async def _get_form(self, **limits: Any) -> FormData:
        """The form as starlette parses it, unless the body repeats its boundary more than
        MULTIPART_BOUNDARIES times (400): python-multipart takes microseconds per delimiter on the event loop,
        and 8 MB of them held every other request for 2.5-4.6 s."""
        content_type, options = parse_options_header(self.headers.get("content-type"))
        boundary = options.get(b"boundary")
        if content_type == b"multipart/form-data" and boundary:
            body = await self.body()
            found = body.count(b"--" + boundary)
            if found > MULTIPART_BOUNDARIES:
                raise HTTPException(400, f"its boundary occurs {found:,} times, expected at most "
                                    f"{MULTIPART_BOUNDARIES}")  # fmt: skip
            if not found:  # the Content-Type's boundary another than the body's: 'cut short' said otherwise
                shown = boundary[:40].decode("latin-1") + ("..." if len(boundary) > 40 else "")
                raise HTTPException(400, f"the boundary its Content-Type declares, {shown!r} "
                                    f"of {len(boundary):,} characters, occurs nowhere in it")  # fmt: skip
            if b"--" + boundary + b"--" not in body:  # a cut body was 'file: required field is missing'
                raise HTTPException(400, "it ends before its closing boundary: cut short")
        return await super()._get_form(**limits)


def _members_dropped(body: bytes, parsed: Any) -> bool:
    """Whether orjson, which keeps the last of a member's copies, may have dropped one: the body's colons
    (one a member, the others in strings) outnumber those of the value written back. Exact but where an
    escape (`\\u003a`) wrote a colon, for a fifth of the json module's parse, which then decides."""
    return b"\\u" in body or body.count(b":") != orjson.dumps(parsed).count(b":")


def _once_each(members: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, each name given once: a repeated one was taken silently, the last copy
    winning, and the answer depended on the members' order (h75 F8: two "values", two "horizon")."""
    named = dict(members)
    if len(named) < len(members):
        seen: set[str] = set()
        repeated = next(name for name, _ in members if name in seen or seen.add(name))
        shown = repeated if len(repeated) <= 80 else repeated[:80] + "..."
        raise ApiError(400, f"member {shown!r} given twice in one JSON object; expected each name once",
                       field="body")  # fmt: skip
    return named


def _json_module_loads(body: bytes) -> Any:
    """json.loads, its failures other than invalid JSON (which FastAPI answers itself) as one line each."""
    try:  # UTF-8 only, as RFC 8259 asks (json.loads also reads UTF-16 and UTF-32 bytes); its BOM tolerated
        return json.loads(body.decode("utf-8-sig"), object_pairs_hook=_once_each)
    except UnicodeDecodeError as error:
        byte = error.object[error.start]
        raise ApiError(400, f"byte {byte:#04x} at offset {error.start} is not UTF-8; expected JSON text"
                       f"{_wide_encoding(body)}", field="body") from None  # fmt: skip
    except RecursionError:
        raise ApiError(400, "JSON nested too deeply; expected a forecast request (see /docs)",
                       field="body") from None  # fmt: skip
    except json.JSONDecodeError:
        if said := _wide_encoding(body):  # NUL is UTF-8: '{' in UTF-16LE read 'Expecting property name'
            raise ApiError(400, f"NUL bytes at its start; expected JSON text{said}", field="body") from None
        raise  # invalid JSON: FastAPI answers it, naming the position
    except ValueError:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise ApiError(400, f"a number of more than {sys.get_int_max_str_digits()} digits; expected "
                       "numbers a float can hold", field="body") from None  # fmt: skip


class OrjsonRoute(APIRoute):
    """A route that hands FastAPI an OrjsonRequest, which it parses JSON bodies with; a model's route
    looks the model up first, FastAPI reading and validating the body before any dependency: '{}' sent to
    no model was answered 422 about its fields (h75 F7)."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()

        async def parse_with_orjson(request: Request) -> Response:
            if "name" in request.path_params:
                request.app.state.registry.get(request.path_params["name"])  # 404 whatever the body
            return await handler(OrjsonRequest(request.scope, request.receive))

        return parse_with_orjson


# What a JSON text's first four bytes are in each wider encoding, its first character ASCII (RFC 4627, 3),
# with or without a byte-order mark: the UTF-32 ones first, as UTF-16LE's mark begins UTF-32LE's.
_WIDE = {"UTF-32BE": (b"\0\0\xfe\xff", (1, 1, 1, 0)), "UTF-32LE": (b"\xff\xfe\0\0", (0, 1, 1, 1)),
         "UTF-16BE": (b"\xfe\xff", (1, 0, 1, 0)), "UTF-16LE": (b"\xff\xfe", (0, 1, 0, 1))}  # fmt: skip


def _wide_encoding(body: bytes) -> str:
    """", not <encoding>": the UTF-16 or UTF-32 a body not read as UTF-8 looks written in, or ""."""
    nul = tuple(int(byte == 0) for byte in body[:4])
    for name, (mark, nuls) in _WIDE.items():
        if body.startswith(mark) or nul == nuls:
            return f" in UTF-8, not {name}"
    return ""

"""The request's head as HTTP/1.1 frames it (RFC 9112), checked before anything reads its body, and the
header every answer carries.

The HTTP parsers let through what a proxy in front may read otherwise, the ground request smuggling stands
on: a Transfer-Encoding other than chunked (`gzip, chunked`: its body was read as if not encoded), one
beside a Content-Length or in an HTTP/1.0 request (whose body was read chunked), an HTTP/1.1 request
with no Host, two, or one that names no host (`Host: a, b`), and a request line of a version HTTP/1 does
not frame (`HTTP/2.0`, `HTTP/0.9`). Each is refused, its connection closed; so is an expectation other
than 100-continue (`Expect: 200-ok`), 417 as RFC 9110 (10.1.1) lets a server answer: it was served as if
not there, and a client waiting for it to be met before sending its body may yet send one. Answers are
sent with `X-Content-Type-Options: nosniff`, so that no browser reads an error that echoes a client's text
as anything but its declared type.
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import ApiError, api_error_response

_NOSNIFF = (b"x-content-type-options", b"nosniff")
_VERSIONS = ("1.0", "1.1", "2")  # ASGI's: "2" only from a server that speaks HTTP/2 itself
# RFC 9112, 3.2: uri-host [":" port], the host an IP literal or a reg-name (RFC 3986, 3.2.2), or empty
_HOST = re.compile(rb"(\[[0-9A-Za-z:.%\-_~]*\]|[0-9A-Za-z\-._~%!$&'()*+,;=]*)(:[0-9]*)?")


def _framing_error(scope: Scope) -> ApiError | None:
    headers = scope.get("headers") or []
    codings = [coding.strip().lower() for name, value in headers if name == b"transfer-encoding"
               for coding in value.decode("latin-1").split(",") if coding.strip()]  # fmt: skip
    if codings and codings != ["chunked"]:
        return ApiError(501, f"{', '.join(codings)[:50]!r} is not served; expected chunked or none",
                        field="transfer-encoding")  # fmt: skip
    if codings and any(name == b"content-length" for name, _ in headers):
        return ApiError(400, "given beside Transfer-Encoding; expected one of the two (RFC 9112, 6.3)",
                        field="content-length")  # fmt: skip
    version = scope.get("http_version", "1.1")
    if codings and version == "1.0":  # RFC 9112, 6.1: its framing is faulty, whatever else it holds
        return ApiError(400, "given in an HTTP/1.0 request; expected a Content-Length (RFC 9112, 6.1)",
                        field="transfer-encoding")  # fmt: skip
    if version not in _VERSIONS:
        return ApiError(505, f"HTTP/{version[:10]} is not served; expected HTTP/1.1 or HTTP/1.0",
                        field="request line")  # fmt: skip
    hosts = [value for name, value in headers if name == b"host"]
    if version == "1.1" and len(hosts) != 1:
        return ApiError(400, f"expected one Host header in an HTTP/1.1 request (RFC 9112, 3.2), got "
                        f"{len(hosts)}", field="host")  # fmt: skip
    if hosts and not _HOST.fullmatch(hosts[0]):
        return ApiError(400, f"{hosts[0][:50].decode('latin-1')!r} names no host; expected host[:port] "
                        "(RFC 9112, 3.2)", field="host")  # fmt: skip
    expected = [each.strip().lower() for name, value in headers if name == b"expect"
                for each in value.decode("latin-1").split(",") if each.strip()]  # fmt: skip
    if unmet := [each for each in expected if each != "100-continue"]:
        return ApiError(417, f"{unmet[0][:50]!r} cannot be met; expected 100-continue or no Expect header "
                        "(RFC 9110, 10.1.1)", field="expect")  # fmt: skip
    return None


class FramingMiddleware:
    """Refuse a request framed ambiguously (above); add `nosniff` to every answer."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), _NOSNIFF]}
            await send(message)

        error = _framing_error(scope)
        if error is None:
            await self.app(scope, receive, with_nosniff)
            return
        refusal = api_error_response(error)
        refusal.headers["connection"] = "close"  # where the body ends is what is in doubt
        await refusal(scope, receive, with_nosniff)

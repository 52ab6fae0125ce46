"""The request's head as HTTP/1.1 frames it (RFC 9112), checked before anything reads its body, and the
header every answer carries.

The HTTP parsers let through what a proxy in front may read otherwise, the ground request smuggling stands
on: a Transfer-Encoding other than chunked (`gzip, chunked`: its body was read as if not encoded), one
beside a Content-Length, and an HTTP/1.1 request with no Host or two. Each is refused, its connection
closed. Answers are sent with `X-Content-Type-Options: nosniff`, so that no browser reads an error that
echoes a client's text as anything but its declared type.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import ApiError, api_error_response

_NOSNIFF = (b"x-content-type-options", b"nosniff")


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
    hosts = sum(name == b"host" for name, _ in headers)
    if scope.get("http_version") == "1.1" and hosts != 1:
        return ApiError(400, f"expected one Host header in an HTTP/1.1 request (RFC 9112, 3.2), got {hosts}",
                        field="host")  # fmt: skip
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

"""Request body limits, in encoding (415), size (413), time (408) and memory held by all requests and their
unsent answers together (503), forecasts in progress per worker (503), and requests unanswered when a graceful
shutdown's time is up (503), answered with the service's JSON error shape."""

from __future__ import annotations

import asyncio

import anyio
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.config import LIGHT_BODY_BYTES
from service.errors import RETRY_AFTER_S, ApiError, api_error_response, error_response, shutdown_message
from service.shutdown import shutting_down

ANSWER_PIECE_BYTES = 256 * 1024  # an answer goes out in pieces this size, each counted until it is sent


def _retry_later(message: str, *, close: bool = False) -> JSONResponse:
    """The 503 this module's middlewares answer (a cap reached, a shutdown's time up): the error shape with
    Retry-After; `close`: the connection closes after it."""
    busy = error_response(503, "unavailable", message)
    busy.headers["retry-after"] = str(RETRY_AFTER_S)
    if close:
        busy.headers["connection"] = "close"
    return busy


def replaying(first: Message, receive: Receive) -> Receive:
    """The app's `receive`: `first` (a body read whole before the app ran) once, then what the client sends
    (its hang-up)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return first
        return await receive()

    return replay


class InFlightMiddleware:
    """Forecast bodies (the service's POST requests) taken while those a worker works on hold less than
    `limit` bytes, counted from the end of each body (read whole by `BodyLimitMiddleware`, which wraps this)
    until its answer is sent; one of at most LIGHT_BODY_BYTES is always taken. A heavier one past it is
    answered 503 with Retry-After before it is parsed, so that a flood of heavy requests leaves the event
    loop free for health probes and for the requests it took; a body over `limit` is taken as any heavy one
    is, whenever less is in progress (refused while any other was, it could wait forever; light bodies in
    progress count, so enough of them hold it off too). In bytes, which parsing, validation
    and answers grow with, not requests: a cap of 4 requests kept the event loop freest under requests of
    64 histories, but would have cut the micro-batches of clients that send one each. Counted from the
    body's end, not the head's, so that clients trickling bodies hold no place and a refused client reads
    its answer, not a reset.
    Without it, 300 concurrent forecasts of 64 histories (800 kB) were all taken in (h135; measured in the
    README's "Overload and shutdown")."""

    def __init__(self, app: ASGIApp, limit: int):
        self.app, self.limit = app, limit
        self.in_flight = 0  # bytes; one event loop per worker: no lock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        request = await receive()
        size = len(request.get("body", b""))
        if self.in_flight >= self.limit and size > LIGHT_BODY_BYTES:
            message = (f"forecasts in progress on this worker hold {self.in_flight} bytes of bodies, at "
                       f"least --max-forecast-bytes {self.limit}; expected a retry after {RETRY_AFTER_S} s")
            await _retry_later(message)(scope, receive, send)
            return
        held = size

        async def answer(message: Message) -> None:
            nonlocal held
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.in_flight -= held  # sent: its client may send the next at once, while the app ends
                held = 0

        self.in_flight += size
        try:
            await self.app(scope, replaying(request, receive), answer)
        finally:
            self.in_flight -= held


class BodyLimitMiddleware:
    """Refuse compressed bodies (the service decodes none), bodies over `max_body_bytes`, not received
    within `timeout_s`, or that would take the bodies held by this worker's requests past
    `max_buffered_bytes`, before anything parses them.

    A declared Content-Length over the limit is refused without reading; otherwise the body is read
    (never more than the limit plus one chunk) and replayed to the app. The deadline bounds a client that
    trickles its body; the one for the request's head is the HTTP protocol's (service.server). A body counts
    against the worker's budget until its answer is sent (its parsed form lives that long): without it,
    480 stalled connections of 8 MB bodies held 4.3 GB (of 512 allowed by --limit-concurrency). So does an
    answer until it is sent: it goes out in pieces (`_send_in_pieces`), and a client that reads none of it
    leaves it counted until the write timeout drops the connection (12 such clients held 510 MB of 37 MB
    answers, uncounted).
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, timeout_s: float, max_buffered_bytes: int):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.timeout_s = timeout_s
        self.max_buffered_bytes = max_buffered_bytes
        self.buffered = 0  # bytes held by requests in progress (one event loop per worker: no lock)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, size: str) -> None:
        message = f"request body is {size}; the limit is {self.max_body_bytes} bytes"
        refusal = error_response(413, "payload_too_large", message)
        refusal.headers["connection"] = "close"  # the body's unread rest would be read as the next request
        await refusal(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        encodings = [value.decode("latin-1").strip().lower() for name, value in scope.get("headers") or []
                     if name == b"content-encoding"]  # every one: "gzip" then "identity" is gzip  # fmt: skip
        encoding = next((value for value in encodings if value != "identity"), None)
        if encoding is not None:
            message = f"expected an uncompressed body, got {encoding[:50]!r}"
            refusal = api_error_response(ApiError(415, message, field="content-encoding"))
            refusal.headers["connection"] = "close"
            await refusal(scope, receive, send)
            return
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._refuse(scope, receive, send, f"{int(declared)} bytes")
            return
        chunks: list[bytes] = []
        try:
            await self._read_and_serve(scope, receive, send, chunks)
        finally:
            self.buffered -= sum(map(len, chunks))

    async def _read_and_serve(self, scope: Scope, receive: Receive, send: Send, chunks: list[bytes]) -> None:
        """Read the body into `chunks` (each counted in `buffered` as it arrives), then serve it."""
        size = 0
        complete = False
        with anyio.move_on_after(self.timeout_s):
            while not complete and size <= self.max_body_bytes:
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client hung up
                chunk = message.get("body", b"")
                if self.buffered + len(chunk) > self.max_buffered_bytes:
                    await self._busy(scope, receive, send)
                    return
                chunks.append(chunk)
                self.buffered += len(chunk)
                size += len(chunk)
                complete = not message.get("more_body", False)
        if size > self.max_body_bytes:
            await self._refuse(scope, receive, send, f"over {size} bytes")
            return
        if not complete:
            timeout = error_response(
                408, "request_timeout", f"request body not received within {self.timeout_s:g} s"
            )
            timeout.headers["connection"] = "close"  # the rest of a trickled body is not worth waiting for
            await timeout(scope, receive, send)
            return
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, replaying(whole, receive), self._answering(scope, receive, send))

    async def _busy(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"requests and answers in progress hold over {self.max_buffered_bytes} bytes; retry shortly"
        await _retry_later(message, close=True)(scope, receive, send)

    def _answering(self, scope: Scope, receive: Receive, send: Send) -> Send:
        """The app's `send`: an answer's head waits for its body, so that a large answer that would take what
        is held past the budget is answered 503 instead (requests accepted together each built theirs: 12
        unread answers held 510 MB); a large body goes out in pieces (`_send_in_pieces`)."""
        head: Message | None = None
        refused = False

        async def answer(message: Message) -> None:
            nonlocal head, refused
            if refused:
                return
            if message["type"] == "http.response.start":
                head = message
                return
            size = len(message.get("body", b""))
            if head is not None:
                if size > ANSWER_PIECE_BYTES and self.buffered + size > self.max_buffered_bytes:
                    refused = True
                    await self._busy(scope, receive, send)
                    return
                await send(head)
                head = None
            await self._send_in_pieces(send, message)

        return answer

    async def _send_in_pieces(self, send: Send, message: Message) -> None:
        """Send a large body ANSWER_PIECE_BYTES at a time, its unsent part counted in `buffered`: the server
        waits for a client's socket to drain before taking the next piece (once the first is buffered), so
        what a client leaves unread stays counted until it reads it or its connection is dropped."""
        body = message.get("body", b"")
        if len(body) <= ANSWER_PIECE_BYTES:
            await send(message)
            return
        unsent = len(body)
        self.buffered += unsent
        try:
            view = memoryview(body)
            for start in range(0, len(body), ANSWER_PIECE_BYTES):
                piece = bytes(view[start : start + ANSWER_PIECE_BYTES])
                more = message.get("more_body", False) or start + ANSWER_PIECE_BYTES < len(body)
                await send({"type": "http.response.body", "body": piece, "more_body": more})
                unsent -= len(piece)
                self.buffered -= len(piece)
        finally:
            self.buffered -= unsent


class ShutdownTimeoutMiddleware:
    """A request still in progress when a graceful shutdown reaches `timeout_s` (--shutdown-timeout-s) is
    cancelled by uvicorn, which answered its own text/plain 500 and logged the cancellation's traceback: it
    is answered 503 (Retry-After) now, or, its answer begun, left cut short (uvicorn closes the connection
    and logs "ASGI callable returned without completing response", no traceback). Only while the server
    shuts down: any other cancellation goes on. Inside MetricsMiddleware, which counts the 503, and outside
    BodyLimitMiddleware, which holds an answer's head until its body: an answer begun here has been sent."""

    def __init__(self, app: ASGIApp, timeout_s: float):
        self.app, self.timeout_s = app, timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        begun = False

        async def answer(message: Message) -> None:
            nonlocal begun
            await send(message)
            begun = True  # once sent: a head waiting for its client to read a previous answer is not

        try:
            await self.app(scope, receive, answer)
        except asyncio.CancelledError:
            if not shutting_down():
                raise
            if not begun:
                message = shutdown_message(f"and did not finish this request within --shutdown-timeout-s "
                                           f"{self.timeout_s:g} s")  # fmt: skip
                await _retry_later(message, close=True)(scope, receive, send)


def answer_numbers(steps: int, series: int, levels: int) -> int:
    """The numbers an answer holds: each step of each series, its point and each level's two bounds."""
    return steps * series * (1 + 2 * levels)


def check_answer_numbers(numbers: int, limit: int, field: str) -> None:
    """Refuse (422 naming `field`) a request whose answer would hold more than `limit` numbers
    (`answer_numbers`), before it is forecast: an answer is built whole in memory and serialized on the event
    loop."""
    if numbers > limit:
        raise ApiError(422, f"the answer would hold {numbers:,} numbers (series x horizon x (1 + 2 x "
                       f"levels)); expected at most {limit:,}: ask fewer levels or series, or a shorter "
                       "horizon", field=field)  # fmt: skip

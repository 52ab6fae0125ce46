"""How uvicorn runs the service: connection limits that keep it answering under slow or many clients.

uvicorn (0.54) closes idle keep-alive connections (`timeout_keep_alive`) and answers 503 past
`limit_concurrency`, but only once a request's head has arrived, and it never times the head out: a client
that sends one header line every few seconds (slowloris) holds its connection and descriptor for good, and
enough of them exhaust the open-file limit (accept fails, tracebacks flood the log). `HeadDeadline`, mixed
into both of uvicorn's HTTP protocols (httptools, the default, and h11), therefore closes a connection that
has not sent a request's head within `header_timeout_s` of opening or of its last response, aborts one whose
client has read none of its answer for `write_timeout_s` (the answer is dropped, not kept), and closes
connections past `limit_concurrency` with a 503 as they are accepted. `open_file_limit` makes room for those
connections, the accept backlog and a reserve under RLIMIT_NOFILE; a head past MAX_HEAD_BYTES is answered
431 and closed. The body's own deadline is `BodyLimitMiddleware`'s (service.limits). At shutdown the
connections still waiting in the accept backlog are answered 503 (service.shutdown).
"""

from __future__ import annotations

import asyncio
import copy
import errno
import functools
import resource
import socket
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from forecaster.errors import ConfigError, RefusedError
from service.config import ServiceSettings
from service.errors import HTTP_ERROR_CODES, MAX_HEAD_BYTES, RETRY_AFTER_S, error_response, shutdown_message
from service.metrics import ANSWERED_BY_SERVER

# Descriptors kept free beyond connections and the backlog: bundle files, logs, the event loop, pipes,
# and the temporary files of uploads in flight.
RESERVED_DESCRIPTORS = 256


def _answer(status: int, message: str, extra: str = "") -> bytes:
    """An answer written on the connection before any route runs, closing it, in the service's one error
    shape (`errors.error_response`): uvicorn's own were text/plain ("Invalid HTTP request received.");
    `extra`: more header lines, each ending in CRLF."""
    body = error_response(status, HTTP_ERROR_CODES[status], message).body
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n{extra}connection: close\r\n\r\n")  # fmt: skip
    return head.encode() + bytes(body)


_HEAD_TOO_LARGE = _answer(431, f"request head larger than {MAX_HEAD_BYTES // 1024} KiB; expected less")
_INVALID = _answer(400, "invalid HTTP request: its request line, headers or framing could not be read; "
                   "expected HTTP/1.1 (RFC 9112)")  # fmt: skip

# Requests parsed and queued behind the one being answered on a connection (HTTP/1.1 pipelining): httptools
# parses all that one read holds and uvicorn queued a request cycle for each, about 2.4 kB apiece: 20
# connections that sent 1 MB of pipelined GETs took a worker from 375 MB to 1 GB and /health/live past 10 s
# (h135). Those past it are not read: the connection closes after the last queued answer, which RFC 9112
# (9.3.2) lets a server do, and a pipelining client retries what was not answered.
MAX_PIPELINED = 16

# After an answer that closes its connection before the request's body was read (413, 415, a body too
# slow), the rest is read and dropped for up to LINGER_S or LINGER_BYTES before the socket closes: closing
# with unread bytes sends a reset, which discards the answer at the client before it reads it (a 415 was
# 'connection reset by peer' to a client still sending 100 kB); Apache and nginx close so too.
LINGER_S = 2.0
LINGER_BYTES = 16 * 2**20


class LingeringTransport:
    """A connection's transport whose `close` half-closes where the request's body is unread (`unread`):
    the answer is sent, then end of file, and what the client still sends is dropped (`drop`) until it
    closes too, LINGER_S pass or LINGER_BYTES arrive. Everything else is the transport's own."""

    def __init__(
        self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, unread: Callable[[], bool]
    ) -> None:
        self._transport, self._loop, self._unread = transport, loop, unread
        self.lingering, self._dropped = False, 0
        self._timer: asyncio.TimerHandle | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self, linger: bool = False) -> None:
        """Close, half-closing first where the body is unread or `linger` (a refusal sent before the
        client's request or head was read)."""
        if self.is_closing():
            return
        if not ((linger or self._unread()) and self._transport.can_write_eof()):
            self._transport.close()
            return
        self.lingering = True
        self._transport.write_eof()
        self._transport.resume_reading()  # uvicorn pauses reading while a body waits to be read
        self._timer = self._loop.call_later(LINGER_S, self._transport.close)

    def drop(self, data: bytes) -> None:
        self._dropped += len(data)
        if self._dropped > LINGER_BYTES:
            self._transport.close()

    def forget(self) -> None:
        """The connection is gone: no timer left to close it."""
        if self._timer is not None:
            self._timer.cancel()


@functools.cache
def _settings() -> ServiceSettings:
    """Read once per worker process from the FORECASTER_SERVE_* variables `forecaster serve` exported."""
    return ServiceSettings()


_RETRY_AFTER = f"retry-after: {RETRY_AFTER_S}\r\n"
_SHUTTING_DOWN = _answer(503, shutdown_message("before this request's body arrived"), _RETRY_AFTER)
UNREAD_AT_SHUTDOWN = _answer(503, shutdown_message("and did not read this request"), _RETRY_AFTER)


@functools.cache
def _refused(limit: int) -> bytes:
    return _answer(503, f"over {limit} connections open (--limit-concurrency); expected a retry later",
                   _RETRY_AFTER)  # as the 503 of --max-buffered-bytes says it


def _cancelled(timer: asyncio.TimerHandle | None) -> None:
    """Cancel `timer` if set; None, to store in its place."""
    if timer is not None:
        timer.cancel()


class HeadDeadline:
    """A deadline for each request head, one for a client to read an answer, and a cap on open connections,
    for either of uvicorn's HTTP protocols: both parse in `data_received`, keep the request in flight as
    `cycle`, call `on_response_complete` when its answer is sent, and wait while the transport has paused
    writing (a client that reads nothing held its answer in memory for good: 60 such held 290 MB)."""

    # Set by the uvicorn protocol this is mixed into.
    connections: set[Any]
    limit_concurrency: int | None
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    cycle: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._header_timeout_s = _settings().header_timeout_s
        self._write_timeout_s = _settings().write_timeout_s
        self._deadline: asyncio.TimerHandle | None = None
        self._write_deadline: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._unqueued = False  # requests past MAX_PIPELINED arrived: the rest is not read

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        unread = lambda: self._unqueued or (self.cycle is not None and self.cycle.more_body)  # noqa: E731
        self.transport = LingeringTransport(self.transport, self.loop, unread)  # type: ignore[assignment]
        limit, open_now = self.limit_concurrency, len(self.connections)
        if limit is not None and open_now > limit:  # silently: not to flood the log too
            self.transport.write(_refused(limit))
            # lingering (within the backlog's descriptors): else the request the client sent drew a reset
            # that discarded the 503 (89 of 600 forecasts sent at once, h126)
            self.transport.close(linger=open_now <= limit + _settings().backlog)  # type: ignore[call-arg]
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._unqueued or getattr(self.transport, "lingering", False):  # the rest is not read
            self.transport.drop(data)  # type: ignore[attr-defined]
            return
        if not self._busy() and not self.transport.is_closing():  # the read that ends a head counts too
            end = data.find(b"\r\n\r\n")
            if self._head_bytes + (len(data) if end < 0 else end + 4) > MAX_HEAD_BYTES:
                self.transport.write(_HEAD_TOO_LARGE)
                self.transport.close(linger=True)  # type: ignore[call-arg]  # the rest of the head: a reset
                return
        super().data_received(data)  # type: ignore[misc]
        if self._busy():
            self._disarm()
            self._head_bytes = 0
        elif not self.transport.is_closing():  # still no whole head: counted against MAX_HEAD_BYTES
            self._head_bytes += len(data)

    def on_headers_complete(self) -> None:
        """httptools' request cycle, queued behind those in progress up to MAX_PIPELINED; past it, none."""
        pipeline = getattr(self, "pipeline", ())  # httptools' queue; h11 parses one request at a time
        if not self._unqueued and len(pipeline) >= MAX_PIPELINED:
            self._unqueued = True
            self.cycle.keep_alive = False  # the last one queued closes the connection (lingering)
        if not self._unqueued:
            super().on_headers_complete()  # type: ignore[misc]

    def on_body(self, body: bytes) -> None:
        if not self._unqueued:
            super().on_body(body)  # type: ignore[misc]

    def on_message_complete(self) -> None:
        if not self._unqueued:
            super().on_message_complete()  # type: ignore[misc]

    def send_400_response(self, msg: str) -> None:
        """A request neither parser can read, answered as every other refusal (uvicorn logs it)."""
        self.transport.write(_INVALID)
        self.transport.close(linger=True)  # type: ignore[call-arg]  # what follows: not to reset the answer

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown, but a request whose body is still arriving is answered 503 at once
        (lingering, so that the client reads it) and not waited for: a client trickling its body held the
        shutdown until --body-timeout-s (60 s), past Kubernetes' 30 s grace. The app's next read of it
        says the client left: nothing else is sent on it. Requests whose body has arrived are answered, also
        where a pipelined request's body is arriving behind one of them (`cycle`, the last parsed, is then
        queued: a 503 written at once went out as the earlier request's answer, which was dropped). A
        connection between requests is closed, but answered 503 where a head is arriving or none was sent
        yet on it (fresh): its client, about to send or sending a request, had read end of file, no answer."""
        cycle = self.cycle
        between = cycle is None or cycle.response_complete
        if between and not self.transport.is_closing() and (self._head_bytes or cycle is None):
            self.transport.write(UNREAD_AT_SHUTDOWN)
            self.transport.close(linger=True)  # type: ignore[call-arg]
            return
        arriving = cycle is not None and cycle.more_body and not cycle.response_started
        queued = getattr(self, "pipeline", None)  # httptools' queue; h11 parses one request at a time
        if not arriving or queued or self.transport.is_closing():
            super().shutdown()  # type: ignore[misc]
            return
        self.transport.write(_SHUTTING_DOWN)
        cycle.scope[ANSWERED_BY_SERVER] = 503  # what /metrics counts, not the 499 of the app's next read
        cycle.disconnected = True
        cycle.message_event.set()
        self.transport.close(linger=True)  # type: ignore[call-arg]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._head_bytes = 0
        if not self.transport.is_closing():
            self._arm()

    def pause_writing(self) -> None:
        super().pause_writing()  # type: ignore[misc]
        if self._write_deadline is None:
            self._write_deadline = self.loop.call_later(self._write_timeout_s, self.transport.abort)

    def resume_writing(self) -> None:
        super().resume_writing()  # type: ignore[misc]
        self._write_disarm()

    def _write_disarm(self) -> None:
        self._write_deadline = _cancelled(self._write_deadline)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._write_disarm()
        if isinstance(self.transport, LingeringTransport):
            self.transport.forget()
        super().connection_lost(exc)  # type: ignore[misc]

    def _busy(self) -> bool:
        """A request's head has arrived and its response is not complete yet."""
        return self.cycle is not None and not self.cycle.response_complete

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self._header_timeout_s, self._head_overdue)

    def _disarm(self) -> None:
        self._deadline = _cancelled(self._deadline)

    def _head_overdue(self) -> None:
        self._deadline = None
        if not self._busy():
            self.transport.close()


class GuardedHttpToolsProtocol(HeadDeadline, HttpToolsProtocol):
    """uvicorn's httptools protocol (HTTP parsing in C) with the head deadline and connection cap."""


class GuardedH11Protocol(HeadDeadline, H11Protocol):
    """uvicorn's h11 protocol (pure Python) with the head deadline and connection cap."""


PROTOCOLS = {"httptools": GuardedHttpToolsProtocol, "h11": GuardedH11Protocol}


def open_file_limit(settings: ServiceSettings) -> int:
    """Raise the soft RLIMIT_NOFILE to fit `limit_concurrency` connections, the accept backlog (accepted
    in one go) and RESERVED_DESCRIPTORS; ConfigError if the hard limit is lower. Returns the soft limit."""
    needed = settings.limit_concurrency + settings.backlog + RESERVED_DESCRIPTORS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ConfigError(
            f"serve: --limit-concurrency {settings.limit_concurrency} + --backlog {settings.backlog} + "
            f"{RESERVED_DESCRIPTORS} reserved descriptors exceed the open-file limit {hard} (ulimit -Hn); "
            "lower them or raise the limit"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return needed


def check_address(host: str, port: int) -> None:
    """Resolve `host` and bind `port` on each of its addresses as uvicorn will (asyncio's `create_server`),
    before any bundle loads: a port in use or a host that resolves to nothing ended `serve` once every
    bundle had loaded, in uvicorn's ERROR line and exit status 3, forecaster's own faults' (h75 F18).
    ConfigError for a host (no such name, no address of this machine), RefusedError for the port."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:  # a label over 63 characters: UnicodeError
        why = str(getattr(error, "strerror", None) or error).lower()
        raise ConfigError(f"--host {host}: {why}; expected a name or address of this machine") from None
    for family, kind, protocol, _, address in dict.fromkeys(found):
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRNOTAVAIL:
                    raise ConfigError(f"--host {host}: {error.strerror.lower()}; expected an address of this "
                                      "machine (0.0.0.0 for all)") from None  # fmt: skip
                raise RefusedError(f"--port {port}: {error.strerror.lower()}") from None


def uvicorn_options(settings: ServiceSettings, log_level: str = "info") -> dict[str, Any]:
    """The uvicorn.run keywords that apply these settings' HTTP parser and connection limits (the event
    loop is uvicorn's default: uvloop where installed), and uvicorn's logging with the service's own lines
    (models loaded, swapped, dropped, skipped) in its format at `log_level`: without a handler of their own
    the info lines were lost and the warnings printed bare."""
    logging_config = copy.deepcopy(LOGGING_CONFIG)
    own = {"handlers": ["default"], "level": log_level.upper(), "propagate": False}
    logging_config["loggers"]["service"] = own
    # uvicorn's lines of a shutdown past --shutdown-timeout-s, in the service's words (service.shutdown)
    logging_config["filters"] = {"shutdown": {"()": "service.shutdown.ShutdownLines",
                                              "timeout_s": settings.shutdown_timeout_s}}  # fmt: skip
    logging_config["loggers"]["uvicorn.error"]["filters"] = ["shutdown"]
    return {
        "log_config": logging_config,
        "log_level": log_level,
        "http": f"{__name__}:{PROTOCOLS[settings.http].__name__}",
        "limit_concurrency": settings.limit_concurrency,
        "backlog": settings.backlog,
        "timeout_keep_alive": settings.timeout_keep_alive,
        "timeout_graceful_shutdown": settings.shutdown_timeout_s,
    }

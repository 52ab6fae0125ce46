"""How uvicorn runs the service: connection limits that keep it answering under slow or many clients.

uvicorn (0.54) closes idle keep-alive connections (`timeout_keep_alive`) and answers 503 past
`limit_concurrency`, but only once a request's head has arrived, and it never times the head out: a client
that sends one header line every few seconds (slowloris) holds its connection and descriptor for good, and
enough of them exhaust the open-file limit (accept fails, tracebacks flood the log). `GuardedH11Protocol`
therefore closes a connection that has not sent a request's head within `header_timeout_s` of opening or
of its last response, and closes connections past `limit_concurrency` with a 503 as they are accepted.
`open_file_limit` makes room for those connections, the accept backlog and a reserve under RLIMIT_NOFILE.
The body's own deadline is `BodyLimitMiddleware`'s (service.limits).
"""

from __future__ import annotations

import asyncio
import functools
import resource
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from forecaster.errors import ConfigError
from service.config import ServiceSettings

# Descriptors kept free beyond connections and the backlog: bundle files, logs, the event loop, pipes,
# and the temporary files of uploads in flight.
RESERVED_DESCRIPTORS = 256

_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 19\r\nconnection: close\r\n\r\nService Unavailable"
)


@functools.cache
def _header_timeout_s() -> float:
    """Read once per worker process from the FORECASTER_SERVE_* variables `forecaster serve` exported."""
    return ServiceSettings().header_timeout_s


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head and a cap on open connections."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout_s = _header_timeout_s()
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        if self.limit_concurrency is not None and len(self.connections) > self.limit_concurrency:
            self.transport.write(_REFUSED)  # silently: a flood of these must not flood the log too
            self.transport.close()
            return
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        if self._busy():
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _busy(self) -> bool:
        """A request's head has arrived and its response is not complete yet."""
        return self.cycle is not None and not self.cycle.response_complete

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self._header_timeout_s, self._head_overdue)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _head_overdue(self) -> None:
        self._deadline = None
        if not self._busy():
            self.transport.close()


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


def uvicorn_options(settings: ServiceSettings) -> dict[str, Any]:
    """The uvicorn.run keywords that apply these settings' connection limits."""
    return {
        "http": f"{__name__}:{GuardedH11Protocol.__name__}",
        "limit_concurrency": settings.limit_concurrency,
        "backlog": settings.backlog,
        "timeout_keep_alive": settings.timeout_keep_alive,
    }

"""A graceful shutdown that answers what it cannot serve: the connections still waiting in the accept
backlog read a 503 (Retry-After) instead of a reset, in each worker (`answer_backlog_at_shutdown`) and, with
`--workers N`, in the supervisor once every worker has ended (`serve_workers`); and uvicorn's lines of a
shutdown past --shutdown-timeout-s said as what the clients got (`ShutdownLines`)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import socket
from typing import Any

from uvicorn import Config, Server
from uvicorn.supervisors import Multiprocess

from service.server import LINGER_S, UNREAD_AT_SHUTDOWN, LingeringTransport


class _ShuttingDown(asyncio.Protocol):
    """A connection taken from the accept backlog at shutdown: answered 503 at once, then lingering (what
    the client sends is read and dropped) until it closes or LINGER_S pass; `done` once it is gone."""

    def __init__(self, done: asyncio.Future) -> None:
        self._done = done

    def connection_made(self, transport: Any) -> None:  # uvloop's transports are no asyncio.Transport
        self._transport = LingeringTransport(transport, asyncio.get_running_loop(), lambda: True)
        transport.write(UNREAD_AT_SHUTDOWN)
        self._transport.close()

    def data_received(self, data: bytes) -> None:
        self._transport.drop(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport.forget()
        if not self._done.done():
            self._done.set_result(None)


async def _answer_backlog(listening: list[Any], most: int) -> list[asyncio.Future]:
    """Accept the connections waiting on the `listening` sockets (at most `most` each), all before the
    event loop runs again, and answer each 503 (`_ShuttingDown`); the futures that end with them."""
    waiting: list[socket.socket] = []
    for each in listening:
        with socket.socket(fileno=os.dup(each.fileno())) as listener:
            listener.setblocking(False)
            for _ in range(most):
                try:
                    waiting.append(listener.accept()[0])
                except OSError:  # none left waiting (BlockingIOError), or the socket is gone
                    break
    loop = asyncio.get_running_loop()
    lingering: list[asyncio.Future] = []
    for connection in waiting:
        done = loop.create_future()
        try:
            await loop.connect_accepted_socket(functools.partial(_ShuttingDown, done), connection)
        except OSError:  # gone already: nothing to answer
            connection.close()
            continue
        lingering.append(done)
    return lingering


def answer_backlog_at_shutdown(server: Server) -> None:
    """Make `server`'s graceful shutdown answer 503 (Retry-After) the connections still waiting in the
    accept backlog before it closes its listening sockets, and wait for them to linger out: closing a
    listening socket resets them, and a client whose request was sent read 'connection reset by peer'
    instead of an answer (30 of 40 forecasts sent as SIGTERM came, the worker's event loop busy: h151).
    A supervisor's sockets (`--workers N`) are left alone: its other workers, or the one replacing this
    one (SIGHUP), accept what waits there."""
    shutdown = server.shutdown

    async def answering(sockets: list[socket.socket] | None = None) -> None:
        lingering = []
        if not sockets:  # its own listening sockets
            own = [each for listener in server.servers for each in getattr(listener, "sockets", None) or ()]
            lingering = await _answer_backlog(own, server.config.backlog)
        await shutdown(sockets=sockets)
        if lingering:
            await asyncio.wait(lingering, timeout=LINGER_S + 1)

    server.shutdown = answering  # type: ignore[method-assign]


def running_server() -> Server | None:
    """The uvicorn Server running in this process's main thread: the one whose `handle_exit` it installed
    as the SIGTERM handler while it serves (None elsewhere, such as an app run in a test's thread)."""
    server = getattr(signal.getsignal(signal.SIGTERM), "__self__", None)
    return server if isinstance(server, Server) else None


def shutting_down() -> bool:
    """Whether the uvicorn server running this process (`running_server`) has begun its shutdown."""
    server = running_server()
    return server is not None and server.should_exit


class _DrainingMultiprocess(Multiprocess):
    """uvicorn's supervisor of `--workers N`, which answers 503 what waits in its accept backlog once every
    worker has ended (`join_all` is called only then): closing its socket reset those connections, 19 and
    14 of 40 forecasts sent as SIGTERM came to 2 workers (h151, h158). A worker leaves the supervisor's
    socket alone, for its siblings and, on SIGHUP, for the worker replacing it."""

    def join_all(self) -> None:
        super().join_all()
        asyncio.run(_answered(self.sockets, self.config.backlog))


async def _answered(listening: list[socket.socket], most: int) -> None:
    lingering = await _answer_backlog(listening, most)
    if lingering:
        await asyncio.wait(lingering, timeout=LINGER_S + 1)


def serve_workers(config: Config) -> None:
    """Run `config.workers` workers as uvicorn.run does (one listening socket, its supervisor), the
    supervisor answering its backlog at the end (`_DrainingMultiprocess`)."""
    listening = config.bind_socket()
    try:
        _DrainingMultiprocess(config, sockets=[listening]).run()
    finally:
        listening.close()


_CANCELLED = "Cancel %s running task(s), timeout graceful shutdown exceeded"  # uvicorn 0.54's words
_CUT = "ASGI callable returned without completing response."


class ShutdownLines(logging.Filter):
    """uvicorn's lines (uvicorn.error) of a shutdown past --shutdown-timeout-s, said as what the clients
    got: its ERROR 'Cancel N running task(s), timeout graceful shutdown exceeded' spoke of tasks, not
    requests, among the service's own lines, and each answer then cut short was 'ASGI callable returned
    without completing response.', which reads as a fault of the service."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__()
        past = f"after --shutdown-timeout-s {timeout_s:g} s"
        self._cancelled = (f"shutdown: %s request(s) still running {past} are answered 503 (Retry-After), or "
                           "cut short where their answer had begun")  # fmt: skip
        self._cut = f"shutdown: an answer still being sent {past} was cut short"
        self._past = False  # the timeout has passed in this process: what is cut short now was cut for it

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == _CANCELLED:
            self._past = True
            record.msg = self._cancelled
        elif record.msg == _CUT and self._past:
            record.msg = self._cut
        else:
            return True
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True

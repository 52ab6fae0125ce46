"""A graceful shutdown of a real uvicorn server running the service (h151): connections still waiting in the
accept backlog when it begins, those with a request coming, and requests unanswered at --shutdown-timeout-s
read a 503 with Retry-After, not a reset, end of file or a 500."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from test_service import body_of, history, make_bundle
from test_service_overload import ROUTE, _counted, _killed_if_running, _post, _raw, _serve, read_all

from forecaster.bench.serve import _free_port
from service.app import create_app
from service.config import ServiceSettings
from service.limits import ShutdownTimeoutMiddleware


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_connections_waiting_to_be_accepted_at_shutdown_read_a_503(tmp_path: Path, loop: str) -> None:
    """A worker whose event loop was busy (forecasts, bodies read) as SIGTERM came closed its listening
    socket over the connections still in its backlog: their clients, requests sent, read 'connection reset
    by peer' (30 of 40 forecasts sent as SIGTERM came). Here the loop is held while clients connect and
    send, then the server shuts down as uvicorn's `serve` does once its main loop ends."""
    make_bundle(tmp_path / "models")
    app = create_app(ServiceSettings(models_dir=tmp_path / "models"))
    config = uvicorn.Config(app, host="127.0.0.1", port=_free_port(), loop=loop, log_level="warning")
    server = uvicorn.Server(config)
    started, release = threading.Event(), threading.Event()

    async def held() -> None:  # in place of the main loop: nothing is accepted until shutdown
        started.set()
        release.wait(30)

    server.main_loop = held  # type: ignore[method-assign]
    # as uvicorn's `serve` installs it in a process's main thread: the app finds its server by it
    previous = signal.signal(signal.SIGTERM, server.handle_exit)
    thread = threading.Thread(target=server.run)
    try:
        thread.start()
        assert started.wait(60)
        clients = [socket.create_connection(("127.0.0.1", config.port), timeout=15) for _ in range(5)]
        for client in clients:
            client.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        release.set()
        answers = [read_all(client) for client in clients]
    finally:
        release.set()
        thread.join(timeout=30)
        signal.signal(signal.SIGTERM, previous)
    for answer in answers:
        head, _, said = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head.lower(), answer[:300]
        assert b"shutting down and did not read this request" in said
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", config.port), timeout=2):
        pytest.fail("the listening socket is still open after shutdown")


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_connections_between_requests_at_sigterm_are_answered_where_a_request_is_coming(
    tmp_path: Path, http: str
) -> None:
    """SIGTERM closed every connection between requests: one whose request head was arriving, or a fresh
    one (accepted, nothing sent yet), read end of file and no answer. They read a 503 with Retry-After now;
    a connection idle after its answer is still closed without one (its client retries on a new one)."""
    server = _serve(tmp_path, "--http", http)
    try:
        arriving = socket.create_connection(("127.0.0.1", server.port), timeout=15)
        arriving.sendall(f"POST {ROUTE} HTTP/1.1\r\nHost: x\r\n".encode())
        fresh = socket.create_connection(("127.0.0.1", server.port), timeout=15)
        idle = socket.create_connection(("127.0.0.1", server.port), timeout=15)
        idle.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b'{"status":"live"}'):  # its answer read whole: the connection is idle
            first += idle.recv(65536) or pytest.fail(f"closed after {first!r}")
        server.process.send_signal(signal.SIGTERM)
        with contextlib.suppress(OSError):  # what each sends next, once the 503 may have been written
            time.sleep(0.5)
            arriving.sendall(b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
            fresh.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        answers = {name: read_all(sock) for name, sock in [("arriving", arriving), ("fresh", fresh),
                                                             ("idle", idle)]}  # fmt: skip
        server.process.wait(timeout=30)
    finally:
        _killed_if_running(server)
    for name in ("arriving", "fresh"):
        head, _, said = answers[name].partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head.lower(), (name, answers[name])
        assert json.loads(said)["message"].startswith("the service is shutting down and did not read")
    assert answers["idle"] == b""
    assert "Traceback" not in server.log.read_text()


def test_a_request_unanswered_at_the_shutdown_timeout_reads_a_503(tmp_path: Path) -> None:
    """A request still in the app when a graceful shutdown reached --shutdown-timeout-s was cancelled by
    uvicorn, which answered its own text/plain 500, logged the cancellation's traceback, and /metrics counted
    500. It reads the service's 503 with Retry-After now, counted as such. The forecast is held in its
    micro-batch, which waits 600 s for company (--max-wait-ms); a probe sent after it is answered once its
    body was read, so SIGTERM finds it in the app."""
    server = _serve(tmp_path, "--shutdown-timeout-s", "1", "--max-wait-ms", "600000")
    try:
        waiting = _raw(server.port, _post(ROUTE, json.dumps(body_of(history())).encode()), read=False)
        assert httpx.get(f"{server.url}/health/live", timeout=30).status_code == 200
        server.process.send_signal(signal.SIGTERM)
        answer = read_all(waiting)
        server.process.wait(timeout=60)
    finally:
        _killed_if_running(server)
    head, _, said = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head.lower(), answer[:300]
    expected = ("the service is shutting down and did not finish this request within --shutdown-timeout-s 1 "
                "s; expected a retry (on another instance)")  # fmt: skip
    assert json.loads(said) == {"error": "unavailable", "message": expected, "details": []}
    logged = server.log.read_text()  # uvicorn's ERROR 'Cancel 1 running task(s), ...' in the service's words
    assert "Traceback" not in logged and "Cancel " not in logged, logged
    assert ("WARNING:  shutdown: 1 request(s) still running after --shutdown-timeout-s 1 s are answered 503 "
            "(Retry-After), or cut short where their answer had begun\n") in logged, logged
    assert _counted(tmp_path) == {("/health/live", "200"): 1, ("/v1/models/{name}/forecast", "503"): 1}


def test_a_cancellation_outside_a_shutdown_goes_on() -> None:
    """Only a server's shutdown turns a request's cancellation into a 503: any other is the caller's."""

    async def cancelled(scope, receive, send) -> None:
        raise asyncio.CancelledError

    guarded = ShutdownTimeoutMiddleware(cancelled, timeout_s=1)
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(guarded({"type": "http"}, None, None))


def _workers(supervisor: int) -> list[int]:
    """The uvicorn workers `supervisor` spawned (multiprocessing's spawn_main), from /proc."""
    children = Path(f"/proc/{supervisor}/task/{supervisor}/children").read_text().split()
    return [int(child) for child in children
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not Path("/proc/self/task").is_dir(),
                    reason="--workers 2 needs two CPUs; the workers are found in Linux's /proc")  # fmt: skip
def test_connections_waiting_in_the_supervisors_backlog_at_shutdown_read_a_503(tmp_path: Path) -> None:
    """With --workers N the listening socket is uvicorn's supervisor's, and a worker leaves it alone (its
    siblings, or on SIGHUP its replacement, accept from it): what still waited there as the supervisor
    exited was reset (19 of 40 forecasts sent as SIGTERM came, h151). Here no worker accepts anything
    (stopped, then killed, as workers that never accept again) while clients connect and send; the
    supervisor, stopped meanwhile so that it replaces no worker, is then told to stop."""
    server = _serve(tmp_path, "--workers", "2")
    try:
        workers = _workers(server.process.pid)  # one is ready; both were spawned at once
        assert len(workers) == 2, workers
        for pid in [server.process.pid, *workers]:
            os.kill(pid, signal.SIGSTOP)
        clients = [socket.create_connection(("127.0.0.1", server.port), timeout=15) for _ in range(5)]
        for client in clients:
            client.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        server.process.send_signal(signal.SIGTERM)
        os.kill(server.process.pid, signal.SIGCONT)
        answers = [read_all(client) for client in clients]
        exited = server.process.wait(timeout=60)
    finally:
        _killed_if_running(server)
    for answer in answers:
        head, _, said = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head.lower(), answer[:300]
        assert json.loads(said)["message"].startswith("the service is shutting down and did not read")
    assert exited == 0, server.log.read_text()[-2000:]
    assert "Traceback" not in server.log.read_text()

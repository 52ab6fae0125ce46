"""Overload and shutdown of a real `forecaster serve` (h135): heavy forecasts past --max-forecast-bytes in
flight are refused at once while light ones are answered, /openapi.json lists every refusal the server gives
before a route runs (each produced here by a real request), SIGTERM is not held by a slow client nor past
--shutdown-timeout-s, and /metrics counts what the clients were answered."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from prometheus_client import CollectorRegistry, multiprocess
from test_service import body_of, history, make_bundle

from forecaster.bench.serve import _free_port, wait_until_ready
from service.config import LIGHT_BODY_BYTES, ServiceSettings
from service.limits import BodyLimitMiddleware, InFlightMiddleware
from service.metrics import MULTIPROCESS_ENV
from service.server import MAX_PIPELINED

pytestmark = pytest.mark.xdist_group("service_overload")
CONNECTIONS, BODY_S = 4, 2.0  # the test server's --limit-concurrency and --body-timeout-s
ROUTE = "/v1/models/hourly/forecast"


@dataclass(frozen=True)
class Server:
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _serve(root: Path, *options: str) -> Server:
    """A real `forecaster serve` of two bundles: `hourly` and `long` (256 series' answers: 20 MB), counting
    its requests into `root / "metrics"` (read by `_counted`, also once it has exited)."""
    make_bundle(root / "models")
    make_bundle(root / "models", "long", horizon=2048)
    (root / "metrics").mkdir()
    port = _free_port()
    command = [str(Path(sys.executable).parent / "forecaster"), "serve", "--models", str(root / "models"),
               "--port", str(port), "--threads", "1", "--log-level", "warning", *options]  # fmt: skip
    with (root / "server.log").open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, MULTIPROCESS_ENV: str(root / "metrics")})  # fmt: skip
    wait_until_ready(f"http://127.0.0.1:{port}", timeout_s=120, process=process)
    return Server(port, process, root / "server.log")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = _serve(tmp_path_factory.mktemp("overload"), "--limit-concurrency", str(CONNECTIONS),
                     "--max-forecast-bytes", "1", "--body-timeout-s", str(BODY_S),
                     "--write-timeout-s", "5")  # fmt: skip
    try:
        yield running
    finally:
        running.process.terminate()
        running.process.wait(timeout=60)


def _killed_if_running(server: Server) -> None:
    """A server a failed SIGTERM test left running, stopped."""
    if server.process.poll() is None:
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()


def _counted(root: Path) -> dict[tuple[str, str], float]:
    """The requests /metrics counts, by route and status, but the readiness probes `_serve` waited on."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, str(root / "metrics"))
    requests = next(family for family in registry.collect() if family.name == "forecaster_requests")
    return {(sample.labels["route"], sample.labels["status"]): sample.value for sample in requests.samples
            if sample.name.endswith("_total") and sample.labels["route"] != "/health/ready"}  # fmt: skip


RESET = b"<reset>"  # what `read_all` reads where the server reset the connection


def read_all(sock: socket.socket) -> bytes:
    """What the server sent on `sock` until it closed it (then RESET where it reset it); `sock` closed."""
    received = b""
    with sock:
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            received += RESET
    return received


def _raw(port: int, request: bytes, read: bool = True) -> socket.socket | tuple[int, dict, bytes]:
    """Send `request` on a connection of its own; (status, lower-cased headers, body) of its answer, read
    to the server's close, or with `read` false the socket, left unread."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    sock.sendall(request)
    if not read:
        return sock
    head, _, body = read_all(sock).removesuffix(RESET).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body


def _post(path: str, body: bytes, *extra: str, length: int | None = None) -> bytes:
    """A POST of `body` (said to be `length` bytes long) with header lines `extra`."""
    head = "".join(f"{line}\r\n" for line in ["Host: x", "Content-Type: application/json", *extra])
    length = len(body) if length is None else length
    return f"POST {path} HTTP/1.1\r\n{head}Content-Length: {length}\r\n\r\n".encode() + body


def _unread_answer(server: Server) -> socket.socket:
    """A forecast whose client reads none of its 20 MB answer: in flight until --write-timeout-s drops it."""
    body = json.dumps({"inputs": [body_of(history(seed=k)) for k in range(256)]}).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(_post("/v1/models/long/forecast", body))
    return sock


def _held_until(server: Server, request: bytes, status: int) -> tuple[int, dict, bytes]:
    """`request`'s answer once it is `status`, asked again every 0.1 s, 30 times at most: the place a
    forecast in flight holds is seen taken once its answer is built, and given back once its connection is
    dropped."""
    for _ in range(30):
        answer = _raw(server.port, request)
        if answer[0] == status:
            break
        time.sleep(0.1)
    return answer


def test_forecasts_past_the_cap_are_refused_at_once_while_light_ones_are_answered(server: Server) -> None:
    """300 concurrent forecasts of 64 histories were all taken in, slowing /health/live (h135, README). Past
    --max-forecast-bytes of bodies in progress a heavy forecast is refused 503 with Retry-After before it is
    parsed while a light one (LIGHT_BODY_BYTES) is answered, and a client trickling its body takes no place
    (a heavy body beside it is taken: a light one would be whatever it held)."""
    body = json.dumps(body_of(history())).encode()
    heavy = json.dumps({"inputs": [body_of(history(seed=k)) for k in range(100)]}).encode()
    assert len(body) <= LIGHT_BODY_BYTES < len(heavy)
    trickling = _raw(server.port, _post(ROUTE, body)[: -len(body) // 2], read=False)
    with trickling:  # --body-timeout-s after its head: 408. A heavy body is taken only where none is counted
        answered = httpx.post(f"{server.url}{ROUTE}", content=heavy, timeout=30,
                              headers={"Content-Type": "application/json"})  # fmt: skip
    assert answered.status_code == 200, answered.text
    with _unread_answer(server):
        status, headers, said = _held_until(server, _post(ROUTE, heavy), 503)
        light = _raw(server.port, _post(ROUTE, body))
    assert status == 503 and headers["retry-after"] == "1", (status, said)
    refusal = json.loads(said)
    assert refusal["error"] == "unavailable" and refusal["details"] == []
    expected = (r"forecasts in progress on this worker hold \d+ bytes of bodies, at least "
                r"--max-forecast-bytes 1; expected a retry after 1 s")  # fmt: skip
    assert re.fullmatch(expected, refusal["message"]), refusal["message"]
    assert light[0] == 200 and "retry-after" not in light[1], light
    assert _held_until(server, _post(ROUTE, heavy), 200)[0] == 200  # its place given back once dropped


def test_the_cap_counts_bodies_from_their_end_until_their_answers_are_sent() -> None:
    """Behind the body limits, as the app composes them: a body is taken while those in progress hold less
    than the cap, or light (LIGHT_BODY_BYTES) whatever they hold; its bytes are given back when its answer is
    sent or its request fails, and only POSTs are counted. Light bodies in progress count too: enough of them
    hold a heavier one off. A body over the cap beside light ones in progress (holding less than the cap) is
    taken: refused while any other was in progress, it waited forever under steady light traffic (a 6 MB
    upload beside a 1.2 kB forecast, test_service_attacks)."""
    light = LIGHT_BODY_BYTES
    release, later, lit = anyio.Event(), anyio.Event(), anyio.Event()
    waits = {b"hold": release, b"wait": later, b"lite": lit}

    async def app(scope, receive, send) -> None:
        body = (await receive())["body"]
        if body == b"fail":
            raise RuntimeError(body)
        if body[:4] in waits:
            await waits[body[:4]].wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body[:4]})

    capped = InFlightMiddleware(app, limit=4 * light)
    stack = BodyLimitMiddleware(capped, max_body_bytes=5 * light, timeout_s=5, max_buffered_bytes=20 * light)
    retry_after: dict[int, bytes | None] = {}  # the Retry-After of each status answered

    async def call(method: str, body: bytes) -> tuple[int, bytes]:
        sent: list[dict] = []

        async def receive() -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict) -> None:
            sent.append(message)

        await stack({"type": "http", "method": method, "headers": []}, receive, send)
        retry_after[sent[0]["status"]] = dict(sent[0]["headers"]).get(b"retry-after")
        return sent[0]["status"], sent[1]["body"]

    answers: dict[str, object] = {}

    async def held(name: str, body: bytes) -> None:
        answers[name] = await call("POST", body)

    async def scenario() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(held, "held", b"hold" + b"h" * (2 * light - 4))
            await anyio.sleep(0.05)
            tasks.start_soon(held, "fits", b"hold" + b"h" * (2 * light - 4))  # 2 light in progress < 4 light
            await anyio.sleep(0.05)
            answers["over"] = (await call("POST", b"x" * (light + 1)))[0]  # 4 light in progress
            answers["light"] = await call("POST", b"l" * light)
            answers["get"] = (await call("GET", b""))[0]
            answers["in flight"] = capped.in_flight
            release.set()
        with pytest.raises(RuntimeError):
            await call("POST", b"fail")
        answers["alone"] = await call("POST", b"a" * 5 * light)
        async with anyio.create_task_group() as tasks:
            for k in range(4):  # light bodies, together the cap
                tasks.start_soon(held, f"light {k}", b"lite" + b"l" * (light - 4))
                await anyio.sleep(0.05)
                answers[f"in flight beside {k + 1} light"] = capped.in_flight
            answers["over beside 4 light"] = (await call("POST", b"x" * (light + 1)))[0]
            lit.set()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: call("POST", b"wait" + b"w" * (light - 4)))
            await anyio.sleep(0.05)
            answers["beside light"] = await call("POST", b"b" * 5 * light)
            later.set()

    anyio.run(scenario)
    assert answers == {"held": (200, b"hold"), "fits": (200, b"hold"), "over": 503, "light": (200, b"llll"),
                       "get": 200, "in flight": 4 * light, "alone": (200, b"aaaa"),
                       **{f"in flight beside {k} light": k * light for k in range(1, 5)},
                       "over beside 4 light": 503, **{f"light {k}": (200, b"lite") for k in range(4)},
                       "beside light": (200, b"bbbb")}  # fmt: skip
    assert retry_after[503] == b"1" and retry_after[200] is None
    assert capped.in_flight == 0


def test_openapi_lists_each_refusal_the_server_gives_before_a_route_runs(server: Server) -> None:
    """/openapi.json listed the forecast routes' 400, 413, 415, 408 and 503 as the app gives them, not the
    431 of a head too large, the 400 of a request no parser reads nor the 503 past --limit-concurrency: each
    refusal below comes from a real request, is listed on the route and in the error shape."""
    paths = httpx.get(f"{server.url}/openapi.json", timeout=10).json()["paths"]
    listed = paths["/v1/models/{name}/forecast"]["post"]["responses"]
    body = json.dumps(body_of(history())).encode()
    answers = {
        "head too large": _raw(server.port, _post(ROUTE, body, f"X-Big: {'a' * 70_000}")),
        "no parser reads it": _raw(server.port, _post(ROUTE, b"", length=-1)),
        "over the body limit": _raw(server.port, _post(ROUTE, b"", length=10**9)),
        "compressed": _raw(server.port, _post(ROUTE, body, "Content-Encoding: gzip")),
        "body too slow": _raw(server.port, _post(ROUTE, body)[: -len(body) // 2]),
    }
    heavy = json.dumps({"inputs": [body_of(history(seed=k)) for k in range(100)]}).encode()
    with _unread_answer(server):
        answers["forecasts in flight"] = _held_until(server, _post(ROUTE, heavy), 503)
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=15) for _ in range(CONNECTIONS)]
    try:
        time.sleep(0.3)  # each accepted
        answers["over the connections"] = _raw(server.port, _post(ROUTE, body))
    finally:
        for sock in idle:
            sock.close()
    statuses = {why: answer[0] for why, answer in answers.items()}
    assert statuses == {"head too large": 431, "no parser reads it": 400, "over the body limit": 413,
                        "compressed": 415, "body too slow": 408, "forecasts in flight": 503,
                        "over the connections": 503}  # fmt: skip
    for why, (status, _, said) in answers.items():
        assert str(status) in listed, why
        assert listed[str(status)]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorResponse")
        assert set(json.loads(said)) == {"error", "message", "details"}, (why, said)
    assert "--max-forecast-bytes" in listed["503"]["description"]
    assert "--limit-concurrency" in listed["503"]["description"]
    assert "parser" in listed["400"]["description"]
    assert {"400", "431", "503"} <= set(paths["/health/live"]["get"]["responses"])


def test_sigterm_is_not_held_by_a_slow_client_and_answers_in_progress_are_sent(tmp_path: Path) -> None:
    """A client trickling its body held a graceful shutdown until --body-timeout-s (60 s), past Kubernetes'
    30 s grace: it is answered 503 at once now, while an answer in progress is sent whole (defaults). /metrics
    counts each as its client read it: the 503 was counted as a 499, the app having read a hang-up."""
    server = _serve(tmp_path)
    received: dict[str, bytes] = {}

    def read_all(name: str, sock: socket.socket) -> None:
        received[name] = b""
        with sock, contextlib.suppress(OSError):
            while chunk := sock.recv(1 << 20):
                received[name] += chunk

    try:
        body = json.dumps(body_of(history())).encode()
        trickling = _raw(server.port, _post(ROUTE, body)[: -len(body) // 2], read=False)
        batch = json.dumps({"inputs": [body_of(history(seed=k)) for k in range(256)]}).encode()
        reading = _raw(server.port, _post("/v1/models/long/forecast", batch), read=False)
        readers = [threading.Thread(target=read_all, args=("trickling", trickling)),
                   threading.Thread(target=read_all, args=("reading", reading))]  # fmt: skip
        for reader in readers:
            reader.start()
        time.sleep(0.2)
        server.process.send_signal(signal.SIGTERM)
        exited = server.process.wait(timeout=30)  # Kubernetes' grace (the body timeout is 60 s)
        for reader in readers:
            reader.join(timeout=30)
    finally:
        _killed_if_running(server)
    head, _, said = received["trickling"].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head, received["trickling"][:300]
    assert json.loads(said)["message"].startswith("the service is shutting down")
    head, _, whole = received["reading"].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), received["reading"][:300]
    assert int(re.search(rb"content-length: (\d+)", head, re.IGNORECASE)[1]) == len(whole) > 10**6
    assert exited in (0, -signal.SIGTERM), server.log.read_text()[-2000:]  # uvicorn may re-raise it
    assert "Traceback" not in server.log.read_text()
    assert _counted(tmp_path) == {("unmatched", "503"): 1, ("/v1/models/{name}/forecast", "200"): 1}


def test_a_graceful_shutdown_cuts_an_answer_unread_past_the_shutdown_timeout(tmp_path: Path) -> None:
    """uvicorn waits for every connection without `timeout_graceful_shutdown`: an answer left unread held
    SIGTERM until --write-timeout-s dropped it. Past --shutdown-timeout-s (25 s by default, under Kubernetes'
    30 s grace) it is cut: the server exits while its client has read no more than the status line (the write
    timeout, 600 s, far off), and the client then reads part of the answer."""
    assert ServiceSettings(models_dir=tmp_path).shutdown_timeout_s < 30
    server = _serve(tmp_path, "--shutdown-timeout-s", "1", "--write-timeout-s", "600")
    try:
        with _unread_answer(server) as sock:
            sock.settimeout(60)  # the 20 MB answer built first
            received = sock.recv(12)  # "HTTP/1.1 200": the answer is in progress, unread past its window
            server.process.send_signal(signal.SIGTERM)
            exited = server.process.wait(timeout=120)  # before its client reads on: the answer was cut
            with contextlib.suppress(OSError):
                while chunk := sock.recv(1 << 20):
                    received += chunk
    finally:
        _killed_if_running(server)
    head, _, part = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), received[:300]
    assert 0 < len(part) < int(re.search(rb"content-length: (\d+)", head, re.IGNORECASE)[1])
    assert exited in (0, -signal.SIGTERM), server.log.read_text()[-2000:]
    logged = server.log.read_text()  # one line for the answer cut short, in the service's words, no traceback
    cut = "WARNING:  shutdown: an answer still being sent after --shutdown-timeout-s 1 s was cut short\n"
    assert cut in logged, logged
    assert "ASGI callable" not in logged and "Traceback" not in logged, logged
    assert _counted(tmp_path) == {("/v1/models/{name}/forecast", "200"): 1}  # the status its client read


def test_pipelined_requests_past_the_queue_are_not_read_and_the_connection_closes(server: Server) -> None:
    """uvicorn queued a request cycle for every pipelined request one read held (about 2.4 kB each): 20
    connections sending 1 MB of pipelined GETs took a worker from 375 MB to 1 GB and /health/live past 10 s
    (h135). Past MAX_PIPELINED queued, the rest is not read and the connection closes after the last
    queued answer (RFC 9112 9.3.2: the client retries the others); a short pipeline is answered whole."""
    one = b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n"
    answered = {}
    for count in (5, 200):
        received = b""
        with socket.create_connection(("127.0.0.1", server.port), timeout=15) as sock:
            sock.sendall(one * count)  # one write: one read
            try:
                while chunk := sock.recv(65536):
                    received += chunk
                    if count == 5 and received.count(b"HTTP/1.1 200 ") == 5:
                        break
            except ConnectionResetError:
                received += b"<reset>"
        answered[count] = received.count(b"HTTP/1.1 200 ")
        if count == 200:
            *_, last = received.split(b"HTTP/1.1 200 ")
            assert b"connection: close" in last.lower() and not received.endswith(b"<reset>"), received[-300:]
    assert answered[5] == 5 and MAX_PIPELINED < answered[200] < 200, answered
    assert httpx.get(f"{server.url}/health/live", timeout=10).status_code == 200


def test_sigterm_answers_a_request_ahead_of_a_pipelined_one_whose_body_is_arriving(tmp_path: Path) -> None:
    """SIGTERM while a forecast is in progress and, pipelined behind it on its connection, a request's body is
    still arriving: the 503 meant for the second was written at once, ahead of the first's answer, which was
    dropped (the client read the 503 as the first's answer). The request whose body arrived is answered
    whole."""
    # its answer read through a 4 kB window: on a loaded machine past the default --shutdown-timeout-s (25 s)
    server = _serve(tmp_path, "--shutdown-timeout-s", "300")
    batch = json.dumps({"inputs": [body_of(history(seed=k)) for k in range(256)]}).encode()
    body = json.dumps(body_of(history())).encode()
    received = b""
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # its 20 MB answer still in progress
        sock.settimeout(30)
        with sock, contextlib.suppress(OSError):
            sock.connect(("127.0.0.1", server.port))
            sock.sendall(_post("/v1/models/long/forecast", batch) + _post(ROUTE, body)[: -len(body) // 2])
            time.sleep(0.5)
            server.process.send_signal(signal.SIGTERM)
            while chunk := sock.recv(1 << 20):
                received += chunk
                head, _, whole = received.partition(b"\r\n\r\n")
                length = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
                if length and len(whole) >= int(length[1]):
                    break
        server.process.wait(timeout=30)
    finally:
        _killed_if_running(server)
    head, _, whole = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), received[:300]
    assert int(re.search(rb"content-length: (\d+)", head, re.IGNORECASE)[1]) == len(whole) > 10**6

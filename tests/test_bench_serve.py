"""`forecaster bench serve`: its load generator against a canned HTTP/1.1 server (every request sent as
given, every answer read in full over keep-alive connections, what is not a 200 counted as an error, the
next request going over a fresh connection when the server closed or cut the last one), and the whole
table against a real `forecaster serve`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_service import make_bundle, serving

from forecaster.artifacts import load_bundle
from forecaster.bench.serve import (
    ServeBenchSettings,
    _load,
    _probed,
    render_serve_bench,
    run_serve_bench,
    synthetic_requests,
)
from service.config import default_torch_threads

BODIES = [b'{"values": {"x": [1.0, 2.0]}}', b'{"values": {"x": [3.0, 4.5, 6.0]}}']


def _answer(status: int, body: bytes, *, close: bool = False) -> bytes:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
    return (head + ("connection: close\r\n" if close else "") + "\r\n").encode() + body


async def _run(respond: Callable[[int], bytes | None], requests: int, concurrency: int):
    """Load the canned server whose `respond(n)` answers its n-th request (None: cut the connection);
    returns the bench row, the request bodies it received and how many connections were opened."""
    received: list[bytes] = []
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
                assert head.startswith("POST /v1/models/m/forecast HTTP/1.1\r\n")
                assert "content-type: application/json" in head
                length = int(head.split("content-length: ")[1].split("\r\n")[0])
                received.append(await reader.readexactly(length))
                answer = respond(len(received))
                if answer is None:
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{")  # cut short
                    break
                writer.write(answer)
                await writer.drain()
                if b"connection: close" in answer:
                    break
        except asyncio.IncompleteReadError:
            pass  # the client closed the connection
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        row = await _load(f"http://127.0.0.1:{port}", "m", BODIES, requests, concurrency)
    return row, received, connections


def test_every_answer_is_read_in_full_over_kept_connections() -> None:
    row, received, connections = asyncio.run(_run(lambda n: _answer(200, b"[" + b"1," * 5000 + b"1]"), 40, 4))
    assert (row.forecasts, row.errors, connections) == (40, 0, 4)
    assert sorted(received) == sorted(BODIES * 20)
    assert row.latencies_ms.shape == (40,) and (row.latencies_ms > 0).all()


@pytest.mark.parametrize("close", [False, True])
def test_answers_other_than_200_are_errors(close: bool) -> None:
    def respond(n: int) -> bytes:
        return _answer(200, b"{}") if n % 3 else _answer(503, b"busy", close=close)

    row, _, connections = asyncio.run(_run(respond, 30, 1))
    assert (row.forecasts, row.errors) == (30, 10)
    assert connections == (10 if close else 1)  # reopened after each closing answer but the last


def test_a_connection_cut_mid_answer_is_an_error_and_replaced() -> None:
    row, received, connections = asyncio.run(_run(lambda n: None if n == 2 else _answer(200, b"{}"), 5, 1))
    assert (row.forecasts, row.errors, len(received), connections) == (5, 1, 5, 2)


def test_liveness_probes_come_over_new_connections_while_the_load_runs() -> None:
    """One probe answered 0.2 s late and one 503 (inf): the latencies the table reports of the probes."""
    answers = iter([(0.0, 200), (0.2, 200), (0.0, 503)])
    heads: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append((await reader.readuntil(b"\r\n\r\n")).decode())
        delay, status = next(answers, (0.0, 200))
        await asyncio.sleep(delay)
        writer.write(_answer(status, b"{}"))
        await writer.drain()
        writer.close()

    async def load() -> str:
        await asyncio.sleep(1.0)  # room for three probes on a loaded machine
        return "row"

    async def scenario():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        async with server:
            return await _probed(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", load())

    row, probes = asyncio.run(scenario())
    assert row == "row" and len(heads) == len(probes) >= 3  # one connection each
    assert all(head.startswith("GET /health/live HTTP/1.1\r\n") for head in heads)
    assert probes[1] >= 200 and probes[2] == np.inf and np.isfinite(probes[[0, 1]]).all()


def test_records_bodies_forecast_what_the_values_bodies_do(tmp_path: Path) -> None:
    """`--records` sends the same histories as rows: the service answers them with the same numbers."""
    make_bundle(tmp_path)
    bundle = load_bundle(tmp_path / "hourly")
    _, values = synthetic_requests(bundle, 2)
    _, records = synthetic_requests(bundle, 2, records=True)
    with serving(tmp_path) as client:
        for plain, rows in zip(values, records, strict=True):
            by_values = client.post("/v1/models/hourly/forecast", content=plain,
                                    headers={"content-type": "application/json"}).json()  # fmt: skip
            by_rows = client.post("/v1/models/hourly/forecast", content=rows,
                                  headers={"content-type": "application/json"}).json()  # fmt: skip
            forecast = pd.DataFrame(by_rows["forecast"])
            for column, numbers in by_values["forecast"].items():
                np.testing.assert_allclose(forecast[column], numbers, rtol=1e-6)


@pytest.mark.slow
def test_the_table_compares_the_service_with_the_same_forecasts_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    make_bundle(tmp_path)
    result = run_serve_bench(
        ServeBenchSettings(models_dir=str(tmp_path), model="hourly", requests=60, concurrency=6)
    )
    served, one_by_one, batched = result["rows"]
    assert [row.forecasts for row in result["rows"]] == [60, 60, 60]
    assert served.errors == 0 and served.latencies_ms.shape == one_by_one.latencies_ms.shape == (60,)
    assert batched.latencies_ms.shape == (1,)  # one batch of the service's default size (64)
    # From the service's /metrics during the load only: 60 forecasts in at most 60 forward passes.
    assert 1.0 <= result["mean_batch_size"] <= 6.0
    assert result["torch_threads"] == default_torch_threads(workers=1) and result["client_cpu_ms"] > 0
    render_serve_bench(result)
    printed = capsys.readouterr().out
    assert "service over HTTP (concurrency 6)" in printed and "mean micro-batch size" in printed
    assert result["probes_ms"].size >= 1 and "GET /health/live during the load" in printed

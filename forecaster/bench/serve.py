"""`forecaster bench serve`: load-test a running service and compare with in-process predictions.

The load generator keeps `concurrency` HTTP/1.1 keep-alive connections to loopback, each sending its next
request when the previous answer has been read in full. It writes the prebuilt request bytes and reads the
answer's head and Content-Length bytes on plain asyncio streams: 0.1-0.2 ms of CPU per request, where
httpx took 5 ms, more than the service itself, on the cores the service shares with it. The same number
of forecasts is computed in-process, one by one (half before, half after the load) and in batches, with the
torch threads `forecaster serve` gives its one worker, so the table shows what HTTP, JSON and validation
cost on top of the model (the overhead ratio).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from forecaster.artifacts import Bundle, load_bundle
from forecaster.checks import check_fields, setting, user_path
from forecaster.devices import default_device
from forecaster.errors import ConfigError, ForecasterError
from forecaster.prediction import Inference, predict_windows
from service.config import ServiceSettings, default_torch_threads

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
REQUEST_TIMEOUT_S = 120.0
# A request refused, reset, timed out (OSError), cut short (EOFError) or answered malformed: counted as an
# error, and the next request goes over a fresh connection.
_FAILED = (OSError, EOFError, asyncio.LimitOverrunError, ValueError, KeyError, IndexError)


@dataclass
class BenchRow:
    """One line of the table: how many forecasts, how long, how fast."""

    label: str
    forecasts: int
    errors: int
    seconds: float
    latencies_ms: np.ndarray

    @property
    def throughput(self) -> float:
        return self.forecasts / self.seconds if self.seconds > 0 else float("nan")

    def latency(self, q: float) -> float:
        return float(np.percentile(self.latencies_ms, q)) if self.latencies_ms.size else float("nan")


def synthetic_requests(
    bundle: Bundle, count: int, seed: int = 0, records: bool = False
) -> tuple[list[np.ndarray], list[bytes]]:
    """`count` histories in the model's training units (scaler mean +- scale) and their JSON bodies:
    timestamps and values, or (`records`) rows as the training table lays them out, which pandas reads."""
    data = bundle.data
    rng = np.random.default_rng(seed)
    mean, scale = bundle.scaler.mean, bundle.scaler.scale
    timestamps = None
    if data.dated:
        import pandas as pd

        stamps = pd.date_range(end="2024-01-01", periods=data.input_size, freq=data.freq)
        timestamps = [stamp.isoformat() for stamp in stamps]
    histories, bodies = [], []
    for _ in range(count):
        history = mean + scale * rng.standard_normal((data.input_size, len(data.columns)))
        payload: dict[str, Any] = {"values": {c: history[:, j].tolist() for j, c in enumerate(data.columns)}}
        if timestamps is not None:
            payload["timestamps"] = timestamps
        if records:
            rows = [dict(zip(data.columns, row, strict=True)) for row in history.tolist()]
            if timestamps is not None:
                rows = [{data.date_col: stamp, **row} for stamp, row in zip(timestamps, rows, strict=True)]
            payload = {"data": rows}
        histories.append(history)
        bodies.append(json.dumps(payload).encode())
    return histories, bodies


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_ready(url: str, timeout_s: float, process: subprocess.Popen | None = None) -> None:
    """Poll GET {url}/health/ready until 200; ForecasterError if the server exits or time runs out."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise ForecasterError(f"the service exited with code {process.returncode} before it was ready")
        try:
            if httpx.get(f"{url}/health/ready", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise ForecasterError(f"the service at {url} was not ready after {timeout_s:.0f} s (GET /health/ready)")


@contextmanager
def local_server(models_dir: str | Path, *options: str) -> Iterator[str]:
    """Run `forecaster serve` (with extra command-line `options`) on a free loopback port for the duration
    of the block; yields its URL."""
    port = _free_port()
    command = [
        sys.executable, "-m", "forecaster.cli", "serve", "--models", str(models_dir),
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", *options,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(url, timeout_s=120.0, process=process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class _Connection:
    """One keep-alive HTTP/1.1 connection that posts prebuilt requests and reads each answer in full."""

    def __init__(self, host: str, port: int, tls: ssl.SSLContext | None):
        self.host, self.port, self.tls = host, port, tls
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    @classmethod
    def to(cls, url: str) -> _Connection:
        """A connection to `url`'s host and port (TLS for https), opened when it first sends."""
        parts = urlsplit(url)
        tls = ssl.create_default_context() if parts.scheme == "https" else None
        return cls(parts.hostname or "127.0.0.1", parts.port or (443 if tls else 80), tls)

    async def send(self, request: bytes) -> int:
        """The answer's status; the connection is reopened for the next request if the server closes it."""
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port, ssl=self.tls)
        reader, writer = self.streams
        writer.write(request)
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        fields = dict(line.split(":", 1) for line in head[1:] if ":" in line)
        fields = {name.strip().lower(): value.strip().lower() for name, value in fields.items()}
        await reader.readexactly(int(fields["content-length"]))  # the service always declares it
        if fields.get("connection") == "close":
            self.close()
        return int(head[0].split(" ", 2)[1])

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


async def _load(url: str, model: str, bodies: list[bytes], requests: int, concurrency: int) -> BenchRow:
    path = f"/v1/models/{model}/forecast"
    head = f"POST {path} HTTP/1.1\r\nhost: {urlsplit(url).netloc}\r\ncontent-type: application/json\r\n"
    prebuilt = [f"{head}content-length: {len(body)}\r\n\r\n".encode() + body for body in bodies]
    latencies = np.zeros(requests)
    errors = 0
    next_request = 0

    async def worker() -> None:
        nonlocal next_request, errors
        connection = _Connection.to(url)
        while next_request < requests:
            index = next_request
            next_request += 1
            started = time.perf_counter()
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT_S):
                    failed = await connection.send(prebuilt[index % len(prebuilt)]) != 200
            except _FAILED:
                failed = True
                connection.close()
            latencies[index] = (time.perf_counter() - started) * 1e3
            errors += failed
        connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    return BenchRow(f"service over HTTP (concurrency {concurrency})", requests, errors, seconds, latencies)


PROBE_INTERVAL_S = 0.1


async def _probed(url: str, load: Awaitable[BenchRow]) -> tuple[BenchRow, np.ndarray]:
    """`load`'s row, and the latencies (ms) of GET /health/live sent every PROBE_INTERVAL_S meanwhile, each
    over a new connection as a liveness probe comes (inf: not answered 200): how long the service keeps a
    probe waiting under load."""
    request = f"GET /health/live HTTP/1.1\r\nhost: {urlsplit(url).netloc}\r\n\r\n".encode()
    done, latencies = asyncio.Event(), []

    async def probe() -> None:
        while not done.is_set():
            connection = _Connection.to(url)
            started, status = time.perf_counter(), None
            with contextlib.suppress(*_FAILED):  # a timeout is an OSError
                async with asyncio.timeout(REQUEST_TIMEOUT_S):
                    status = await connection.send(request)
            latencies.append((time.perf_counter() - started) * 1e3 if status == 200 else np.inf)  # failed
            connection.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), PROBE_INTERVAL_S)

    prober = asyncio.create_task(probe())
    try:
        row = await load
    finally:
        done.set()
        await prober
    return row, np.array(latencies)


def _one_by_one(
    bundle: Bundle, inference: Inference, histories: list[np.ndarray], indexes: range
) -> tuple[np.ndarray, float]:
    """In-process forecasts of the requests `indexes`, one call each: latencies (ms) and total seconds."""
    latencies = np.zeros(len(indexes))
    started = time.perf_counter()
    for slot, index in enumerate(indexes):
        begin = time.perf_counter()
        predict_windows(bundle, histories[index % len(histories)][None], inference)
        latencies[slot] = (time.perf_counter() - begin) * 1e3
    return latencies, time.perf_counter() - started


def _batched(
    bundle: Bundle, inference: Inference, histories: list[np.ndarray], requests: int, batch_size: int
) -> BenchRow:
    stacked = np.stack([histories[index % len(histories)] for index in range(requests)])
    predict_windows(bundle, stacked[:batch_size], inference)  # warm-up: a batch shape's first call sets it up
    per_batch = []
    started = time.perf_counter()
    for first in range(0, requests, batch_size):
        begin = time.perf_counter()
        predict_windows(bundle, stacked[first : first + batch_size], inference)
        per_batch.append((time.perf_counter() - begin) * 1e3)
    seconds = time.perf_counter() - started
    return BenchRow(
        f"in-process predict, batches of {batch_size}, {inference.mode}",
        requests, 0, seconds, np.asarray(per_batch),
    )  # fmt: skip


def _batch_totals(url: str, model: str) -> np.ndarray:
    """Histories forecast and forward passes run so far, [sum, count], from the service's own /metrics."""
    import httpx
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{url}/metrics", timeout=10.0).text
    totals = {"sum": 0.0, "count": 0.0}
    for family in text_string_to_metric_families(text):
        if family.name != "forecaster_batch_size":
            continue
        for sample in family.samples:
            if sample.labels.get("model") == model and sample.name.endswith(("_sum", "_count")):
                totals[sample.name.rsplit("_", 1)[1]] += sample.value
    return np.array([totals["sum"], totals["count"]])


def check_loopback(url: str) -> str:
    """The URL without a trailing slash; ConfigError unless it is http(s) on a loopback host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.hostname not in LOOPBACK_HOSTS:
        raise ConfigError(
            f"--url {url!r}: expected http://127.0.0.1:PORT (the load generator only targets loopback)"
        )
    if parts.path.strip("/") or parts.query:  # a route's answer was read as the metrics' text (h45)
        raise ConfigError(f"--url {url!r}: expected the service's root, http://127.0.0.1:PORT, no path")
    return url.rstrip("/")


def check_serves(url: str, model: str) -> None:
    """ConfigError unless a service answers at `url` and serves `model` (a load of 404s printed a speed
    table and exited 1 unexplained, h45)."""
    import httpx

    try:
        answer = httpx.get(f"{url}/v1/models/{model}", timeout=10.0)
    except httpx.HTTPError as error:
        raise ConfigError(f"--url {url}: no service answers there ({error})") from None
    if answer.status_code != 200:
        raise ConfigError(f"the service at {url} does not serve model {model!r} (GET /v1/models/{model}: "
                          f"{answer.status_code} {answer.text[:200]})")  # fmt: skip


@dataclass
class ServeBenchSettings:
    """One `forecaster bench serve` table; the server it starts uses the service's default batching."""

    models_dir: str = setting(help="directory of model bundles", flag="--models", parse=user_path)
    model: str = setting(help="bundle (subdirectory) to load-test")
    concurrency: int = setting(32, "requests in flight", minimum=1)
    requests: int = setting(2000, "requests in total", minimum=1)
    url: str | None = setting(None, "a running service on loopback, e.g. http://127.0.0.1:8000")
    device: str = setting("cpu", "torch device of the forecasts, in-process and in the server it starts")
    cuda_graphs: bool = setting(True, "on CUDA: replay forward passes from graphs (a row without them too)")
    records: bool = setting(False, "send histories as records (rows pandas reads), not timestamps and values")

    def __post_init__(self) -> None:
        check_fields(self, "bench serve setting")
        default_device(self.device)  # a device torch does not know, or CUDA this machine lacks: one line


def run_serve_bench(settings: ServeBenchSettings) -> dict[str, Any]:
    """Load-test the model (own server unless `url` is given) and time the same forecasts in-process."""
    models_dir, model, url = settings.models_dir, settings.model, settings.url
    concurrency, requests = settings.concurrency, settings.requests
    target = check_loopback(url) if url is not None else None
    bundle = load_bundle(Path(models_dir) / model)
    histories, bodies = synthetic_requests(bundle, min(requests, 64), records=settings.records)
    batch_size = ServiceSettings.model_fields["max_batch_size"].default  # the service's default batch
    inference = Inference(bundle.model, settings.device, settings.cuda_graphs, batch_size)
    graphs = "--cuda-graphs" if settings.cuda_graphs else "--no-cuda-graphs"

    def measure(target: str) -> tuple[BenchRow, float | None, float, np.ndarray]:
        """The load's row, its mean micro-batch, the load generator's CPU ms per request and the liveness
        probes' latencies (`_probed`)."""
        check_serves(target, model)
        asyncio.run(_load(target, model, bodies, min(concurrency, 4), min(concurrency, 4)))  # warm-up
        before, cpu = _batch_totals(target, model), time.process_time()
        row, probes = asyncio.run(_probed(target, _load(target, model, bodies, requests, concurrency)))
        cpu_ms = (time.process_time() - cpu) * 1e3 / requests
        total, passes = _batch_totals(target, model) - before
        return row, total / passes if passes else None, cpu_ms, probes

    import torch

    threads = default_torch_threads(workers=1)  # the service's, so that both run the same model the same way
    torch.set_num_threads(threads)
    inference.warm_up(histories[0].shape)  # as the service warms up at startup
    predict_windows(bundle, histories[0][None], inference)
    # Startup's objects kept out of the collector's full passes here too, as the service keeps its own.
    gc.collect()
    gc.freeze()
    try:
        # One-by-one calls half before and half after the load: a change in the machine's other load
        # during the run weighs on both sides alike.
        before = _one_by_one(bundle, inference, histories, range(requests // 2))
        if target is None:
            with local_server(models_dir, "--device", settings.device, graphs) as own:
                served, mean_batch, client_cpu_ms, probes = measure(own)
        else:
            served, mean_batch, client_cpu_ms, probes = measure(target)
        after = _one_by_one(bundle, inference, histories, range(requests // 2, requests))
        latencies, seconds = np.concatenate([before[0], after[0]]), before[1] + after[1]
        rows = [
            served,
            BenchRow(f"in-process predict, one by one, {inference.mode}", requests, 0, seconds, latencies),
            _batched(bundle, inference, histories, requests, batch_size),
        ]
        if inference.graphed:  # the same batches without graphs, side by side
            eager = Inference(bundle.model, settings.device, False, batch_size)
            rows.append(_batched(bundle, eager, histories, requests, batch_size))
    finally:
        gc.unfreeze()
    return {
        "model": model, "rows": rows, "mean_batch_size": mean_batch, "cpu_count": os.cpu_count(),
        "torch_threads": threads, "client_cpu_ms": client_cpu_ms, "probes_ms": probes,
        "body": "records" if settings.records else "timestamps and values",
    }  # fmt: skip


def render_serve_bench(result: dict[str, Any]) -> None:
    """Print the table (rich) with the overhead ratio of each row against the HTTP service."""
    from rich.console import Console
    from rich.table import Table

    rows: list[BenchRow] = result["rows"]
    served = rows[0]
    title = (
        f"forecaster bench serve: model {result['model']}, {result['cpu_count']} CPU cores, "
        f"{result['torch_threads']} torch thread(s) in-process as in the service"
    )
    table = Table(title=title)
    for column in (
        "path",
        "forecasts",
        "errors",
        "seconds",
        "forecasts/s",
        "p50 ms",
        "p99 ms",
        "service / this",
    ):
        table.add_column(column, justify="left" if column == "path" else "right")
    for row in rows:
        table.add_row(
            row.label,
            str(row.forecasts),
            str(row.errors),
            f"{row.seconds:.2f}",
            f"{row.throughput:.0f}",
            f"{row.latency(50):.2f}",
            f"{row.latency(99):.2f}",
            f"{served.seconds / row.seconds:.2f}x" if row.seconds > 0 else "-",
        )
    console = Console()
    if not console.is_terminal:
        console.width = 120  # piped into a file or README: do not squeeze the table to 80 columns
    console.print(table)
    mean_batch = result["mean_batch_size"]
    if mean_batch is not None:
        console.print(
            f"mean micro-batch size in the service: {mean_batch:.1f} (from /metrics, during the load)"
        )
    console.print(f"load generator: {result['client_cpu_ms']:.2f} ms of CPU per request, on the same cores; "
                  f"request bodies of {result['body']}")  # fmt: skip
    probes = result["probes_ms"]
    if probes.size:
        failed = int(np.isinf(probes).sum())
        unanswered = f", {failed} not answered 200" if failed else ""
        console.print(f"GET /health/live during the load, a new connection every {PROBE_INTERVAL_S:g} s: "
                      f"{probes.size} probes, p50 {np.percentile(probes, 50):.1f} ms, "
                      f"max {probes.max():.1f} ms{unanswered}")  # fmt: skip
    console.print(
        "latency: per HTTP request for the service, per predict call in-process (per batch for batched rows)"
    )
    console.print("in-process one-by-one calls: half timed before the load, half after")

"""Prometheus metrics of one app instance: requests, latencies and errors per model, batch sizes.

Each app gets its own CollectorRegistry so that several apps (tests) never share counters. With `--workers N`
the workers write their numbers to files in one folder (prometheus_client's multiprocess mode, switched on by
MULTIPROCESS_ENV before they start) and /metrics sums them, whichever worker answers it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.batching import BatchObserver
from service.errors import CLIENT_CLOSED_REQUEST

BATCH_SIZE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
# A request's scope key: the status the HTTP server (service.server) wrote on the connection itself, the app's
# next read then saying the client left (the 503 at shutdown to a body still arriving: once counted as a 499).
ANSWERED_BY_SERVER = "forecaster.answered_by_server"


class ServiceMetrics:
    """The collectors the service updates; `render()` is the /metrics body."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        labels = ("model", "route", "status")
        self.requests = Counter(
            "forecaster_requests", "HTTP requests answered.", labels, registry=self.registry
        )
        self.errors = Counter(
            "forecaster_request_errors",
            "HTTP requests answered with a 4xx or 5xx.",
            labels,
            registry=self.registry,
        )
        self.latency = Histogram(
            "forecaster_request_duration_seconds",
            "Time from request to response.",
            ("model", "route"),
            registry=self.registry,
        )
        self.batch_size = Histogram(
            "forecaster_batch_size",
            "Histories per forward pass (micro-batching).",
            ("model",),
            buckets=BATCH_SIZE_BUCKETS,
            registry=self.registry,
        )
        self.inference = Histogram(
            "forecaster_inference_duration_seconds",
            "Time of one batched forward pass (forecaster.prediction.predict_outputs).",
            ("model",),
            registry=self.registry,
        )

    def batch_observer(self, model: str) -> BatchObserver:
        """The callback a model's batcher calls after each forward pass."""
        sizes, seconds = self.batch_size.labels(model), self.inference.labels(model)

        def observe(size: int, elapsed: float) -> None:
            sizes.observe(size)
            seconds.observe(elapsed)

        return observe

    def observe_request(self, model: str, route: str, status: int, elapsed: float) -> None:
        self.requests.labels(model, route, str(status)).inc()
        if status >= 400:
            self.errors.labels(model, route, str(status)).inc()
        self.latency.labels(model, route).observe(elapsed)

    def render(self) -> bytes:
        """The numbers of this app, or of every worker where they share a multiprocess folder."""
        if not os.environ.get(MULTIPROCESS_ENV):
            return generate_latest(self.registry)
        workers = CollectorRegistry()
        multiprocess.MultiProcessCollector(workers)
        return generate_latest(workers)


class MetricsMiddleware:
    """Counts every HTTP request by route template, served model and status code, as its client was
    answered: a request whose client hung up before the answer counts as 499 (client closed request), as
    nginx logs it, not as a 500; one the server answered itself, as ANSWERED_BY_SERVER says.

    The model label is only set for names of loaded models, so made-up names cannot grow the label set.
    """

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics, is_model: Callable[[str], bool]):
        self.app = app
        self.metrics = metrics
        self.is_model = is_model

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: int | None = None
        hung_up = False  # before the response started: counted as 499, not as the 500 of an unanswered call

        async def receive_noting_hang_up() -> Message:
            nonlocal hung_up
            message = await receive()
            hung_up = hung_up or (message["type"] == "http.disconnect" and status is None)
            return message

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive_noting_hang_up, send_with_status)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            name = (scope.get("path_params") or {}).get("name", "")
            model = name if isinstance(name, str) and self.is_model(name) else ""
            answered = scope.get(ANSWERED_BY_SERVER) or (CLIENT_CLOSED_REQUEST if hung_up else status or 500)
            self.metrics.observe_request(model, route, answered, time.perf_counter() - started)

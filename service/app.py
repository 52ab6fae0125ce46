"""The FastAPI application factory: `create_app(ServiceSettings(models_dir=...))`, or from the environment."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

import anyio
from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from forecaster import __version__
from service.config import ServiceSettings
from service.errors import SERVER_ERRORS, install_error_handlers
from service.framing import FramingMiddleware
from service.head import HeadAsGetMiddleware
from service.limits import BodyLimitMiddleware, InFlightMiddleware, ShutdownTimeoutMiddleware
from service.metrics import MetricsMiddleware, ServiceMetrics
from service.oip import router as oip_router
from service.registry import ModelRegistry, load_registry
from service.routes import router
from service.shutdown import answer_backlog_at_shutdown, running_server

log = logging.getLogger("service")

DESCRIPTION = """Forecasts from trained forecaster bundles (`forecaster train ... --out models/NAME`).

Every bundle directory under the models folder is served under its directory name. Errors always
have the shape `{"error", "message", "details": [{"field", "message"}]}` and a 4xx status.
"""


async def _watch(registry: ModelRegistry, interval_s: float) -> None:
    """Refresh the registry every `interval_s` seconds (none for 0); a failed look is logged, never fatal."""
    while interval_s > 0:
        await asyncio.sleep(interval_s)
        try:
            await registry.refresh()
        except Exception:  # a look at the folder must never stop the service
            log.exception("looking at the models folder failed; serving the models loaded")


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    """Build the service for the bundles under `settings.models_dir` (loaded when the app starts).

    Without `settings` they come from the FORECASTER_SERVE_* environment variables: this is the factory
    uvicorn calls in each worker (`service.app:create_app`, factory=True).
    """
    settings = ServiceSettings() if settings is None else settings
    metrics = ServiceMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        import torch

        if settings.torch_threads is not None:
            torch.set_num_threads(settings.torch_threads)
        # One inference thread: batches run one after another, each using torch's intra-op threads.
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inference")
        registry = load_registry(
            settings.models_dir,
            executor=executor,
            max_batch_size=settings.max_batch_size,
            device=settings.device,
            cuda_graphs=settings.cuda_graphs,
            max_wait_s=settings.max_wait_ms / 1000.0,
            observer=metrics.batch_observer,
        )
        log.info("serving %d model(s), skipped %d", len(registry.models), len(registry.skipped))
        # What startup built (torch, pandas, the models: 350,000 objects) is kept out of the collector's
        # full passes, each of which took 160 ms and stalled every request in flight.
        gc.collect()
        gc.freeze()
        app.state.registry = registry
        app.state.readers = anyio.CapacityLimiter(settings.reading_threads)  # `routes.in_thread`
        registry.start()
        server = running_server()
        if server is not None:  # its shutdown answers the connections its listening sockets hold
            answer_backlog_at_shutdown(server)
        app.state.ready = True
        watching = asyncio.create_task(_watch(registry, settings.reload_interval_s))
        try:
            yield
        finally:
            app.state.ready = False
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
            await registry.stop()
            executor.shutdown(wait=True)
            gc.unfreeze()  # collectable again: an app embedded in a longer process leaves nothing pinned

    # /docs and /redoc with their scripts and styles served from the fastapi-offline package, not a CDN:
    # they work offline (its Swagger UI 5 renders FastAPI's OpenAPI 3.1; swagger-ui-bundle's 4.x cannot).
    # no redirect of "/v1/models/x/" to "/v1/models/x": it echoed the client's Host header in its Location
    app = FastAPIOffline(title="forecaster", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                         redirect_slashes=False, responses=SERVER_ERRORS)  # fmt: skip
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.registry = ModelRegistry()
    app.state.ready = False
    install_error_handlers(app)
    app.include_router(router)
    app.include_router(oip_router)
    app.add_middleware(InFlightMiddleware, limit=settings.max_forecast_bytes)  # once a body is read
    app.add_middleware(
        BodyLimitMiddleware,
        max_body_bytes=settings.max_body_bytes,
        max_buffered_bytes=settings.max_buffered_bytes,
        timeout_s=settings.body_timeout_s,
    )
    app.add_middleware(ShutdownTimeoutMiddleware, timeout_s=settings.shutdown_timeout_s)  # counted as sent
    app.add_middleware(
        MetricsMiddleware, metrics=metrics, is_model=lambda name: name in app.state.registry.models
    )
    app.add_middleware(HeadAsGetMiddleware)
    app.add_middleware(FramingMiddleware)  # outermost: before anything reads the request
    return app

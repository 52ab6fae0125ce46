"""The FastAPI application factory: `create_app(models_dir)` and the env-configured factory uvicorn runs."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from forecaster import __version__
from service.errors import install_error_handlers
from service.limits import BodyLimitMiddleware
from service.metrics import MetricsMiddleware, ServiceMetrics
from service.registry import ModelRegistry, load_registry
from service.routes import router

log = logging.getLogger("service")

CONFIG_ENV = "FORECASTER_SERVE_CONFIG"

DESCRIPTION = """Forecasts from trained forecaster bundles (`forecaster train ... --out models/NAME`).

Every bundle directory under the models folder is served under its directory name. Errors always
have the shape `{"error", "message", "details": [{"field", "message"}]}` and a 4xx status.
"""


@dataclass(frozen=True)
class ServiceSettings:
    """Limits and batching of one service instance (all validated at construction)."""

    models_dir: str
    max_batch_size: int = 64
    max_wait_ms: float = 2.0
    max_body_bytes: int = 8 * 1024 * 1024
    max_rows: int = 10_000
    max_inputs: int = 256
    torch_threads: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_batch_size", "max_body_bytes", "max_rows", "max_inputs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_wait_ms < 0:
            raise ValueError(f"max_wait_ms must be >= 0, got {self.max_wait_ms}")
        if self.torch_threads is not None and self.torch_threads < 1:
            raise ValueError(f"torch_threads must be >= 1 or None, got {self.torch_threads}")


def create_app(
    models_dir: str | Path,
    *,
    max_batch_size: int = 64,
    max_wait_ms: float = 2.0,
    max_body_bytes: int = 8 * 1024 * 1024,
    max_rows: int = 10_000,
    max_inputs: int = 256,
    torch_threads: int | None = None,
) -> FastAPI:
    """Build the service for the bundles under `models_dir` (loaded when the app starts).

    max_batch_size / max_wait_ms bound micro-batching; max_body_bytes, max_rows (per series) and
    max_inputs (series per request) bound what one request may ask; torch_threads sets torch's
    intra-op threads for the process (None leaves torch's default).
    """
    settings = ServiceSettings(
        models_dir=str(models_dir),
        max_batch_size=max_batch_size,
        max_wait_ms=max_wait_ms,
        max_body_bytes=max_body_bytes,
        max_rows=max_rows,
        max_inputs=max_inputs,
        torch_threads=torch_threads,
    )
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
            max_wait_s=settings.max_wait_ms / 1000.0,
            observer=metrics.batch_observer,
        )
        log.info("serving %d model(s), skipped %d", len(registry.models), len(registry.skipped))
        app.state.registry = registry
        registry.start()
        app.state.ready = True
        try:
            yield
        finally:
            app.state.ready = False
            await registry.stop()
            executor.shutdown(wait=True)

    app = FastAPI(title="forecaster", version=__version__, description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.registry = ModelRegistry()
    app.state.ready = False
    install_error_handlers(app)
    app.include_router(router)
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(
        MetricsMiddleware, metrics=metrics, is_model=lambda name: name in app.state.registry.models
    )
    return app


def serve_config(models_dir: str | Path, **options: Any) -> str:
    """The JSON that `create_app_from_env` reads: how `forecaster serve` configures each worker."""
    return json.dumps(asdict(ServiceSettings(models_dir=str(models_dir), **options)))


def create_app_from_env() -> FastAPI:
    """uvicorn factory (`service.app:create_app_from_env`); settings come from FORECASTER_SERVE_CONFIG."""
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        raise RuntimeError(f"{CONFIG_ENV} is not set; start the service with `forecaster serve --models DIR`")
    options = json.loads(raw)
    return create_app(options.pop("models_dir"), **options)

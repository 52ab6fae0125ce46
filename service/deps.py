"""What a route needs from the running app, as FastAPI dependencies: the loaded models and the settings."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from service.config import ServiceSettings
from service.metrics import ServiceMetrics
from service.registry import ModelRegistry


async def get_registry(request: Request) -> ModelRegistry:
    return request.app.state.registry


async def get_settings(request: Request) -> ServiceSettings:
    return request.app.state.settings


async def get_metrics(request: Request) -> ServiceMetrics:
    return request.app.state.metrics


Registry = Annotated[ModelRegistry, Depends(get_registry)]
Settings = Annotated[ServiceSettings, Depends(get_settings)]
Metrics = Annotated[ServiceMetrics, Depends(get_metrics)]

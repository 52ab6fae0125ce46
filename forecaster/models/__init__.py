"""Assembled models, each built from one config dataclass: S3Attention, TNN forecasters, LRA classifiers."""

from forecaster.models.lra import LRAClassifier, LRAConfig, LRADualClassifier
from forecaster.models.registry import (
    FORECAST,
    MODELS,
    fits_nothing,
    forecast_outputs,
    get_model,
    model_names,
    quantile_levels,
)
from forecaster.models.s3attention import S3AttentionConfig, S3AttentionForecaster
from forecaster.models.tnn import CausalTnnConfig, CausalTnnForecaster

__all__ = [
    "FORECAST",
    "MODELS",
    "CausalTnnConfig",
    "CausalTnnForecaster",
    "LRAClassifier",
    "LRAConfig",
    "LRADualClassifier",
    "S3AttentionConfig",
    "S3AttentionForecaster",
    "fits_nothing",
    "forecast_outputs",
    "get_model",
    "model_names",
    "quantile_levels",
]

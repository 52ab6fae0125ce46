"""Assembled models behind one name -> class registry: the S3Attention forecaster, LRA and TNN models."""

from forecaster.models.lra import LRAClassifier, LRAConfig, LRADualClassifier
from forecaster.models.registry import get_model, model_names, register_model
from forecaster.models.s3attention import S3AttentionConfig, S3AttentionForecaster, preset
from forecaster.models.tnn import CausalTnnConfig, CausalTnnForecaster

__all__ = [
    "CausalTnnConfig",
    "CausalTnnForecaster",
    "LRAClassifier",
    "LRAConfig",
    "LRADualClassifier",
    "S3AttentionConfig",
    "S3AttentionForecaster",
    "get_model",
    "model_names",
    "preset",
    "register_model",
]

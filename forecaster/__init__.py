"""Time-series forecasting with S3Attention."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`from forecaster import Forecaster` without loading torch for every `forecaster` command."""
    if name == "Forecaster":
        from forecaster.api import Forecaster

        return Forecaster
    raise AttributeError(f"module 'forecaster' has no attribute {name!r}")

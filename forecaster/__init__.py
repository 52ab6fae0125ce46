"""Time-series forecasting with S3Attention."""

__version__ = "0.1.0"

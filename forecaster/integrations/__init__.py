"""Interop with other forecasting libraries.

`forecaster.integrations.neuralforecast` (S3Attention as a neuralforecast model, the benchmark peers)
needs the optional `baselines` extra and is imported only where it is used.
"""

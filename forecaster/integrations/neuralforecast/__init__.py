"""neuralforecast interop: S3Attention as a neuralforecast model (`adapter`), the benchmark's peers
(`peers`) and their on-demand training windows (`windowing`).

Importing this package imports neuralforecast (the optional `baselines` extra), so callers import it
lazily; it also registers `S3Attention` with neuralforecast so `NeuralForecast.save`/`load` handle it.
"""

from forecaster.integrations.neuralforecast.adapter import (
    CONFIG_FIELDS,
    S3Attention,
    register_with_neuralforecast,
)
from forecaster.integrations.neuralforecast.peers import (
    PEERS,
    VAL_MONITOR,
    PeerBudget,
    PeerRun,
    RestoreBestWeights,
    build_peer,
    describe_peer,
    forecast_test_windows,
    peer_class,
    peer_kwargs,
    to_long_format,
)
from forecaster.integrations.neuralforecast.windowing import WindowsOnDemand

__all__ = [
    "CONFIG_FIELDS",
    "PEERS",
    "VAL_MONITOR",
    "PeerBudget",
    "PeerRun",
    "RestoreBestWeights",
    "S3Attention",
    "WindowsOnDemand",
    "build_peer",
    "describe_peer",
    "forecast_test_windows",
    "peer_class",
    "peer_kwargs",
    "register_with_neuralforecast",
    "to_long_format",
]

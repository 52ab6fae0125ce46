"""Data layer: benchmark registry, validated CSV reading, protocol splits, scaling and sliding windows.

The registry, reader, splits and time-index helpers load eagerly (pandas only); the scaler,
windows (torch) and the LightningDataModule load on first use, so the service and `forecaster data
describe` never import Lightning.
"""

from __future__ import annotations

import importlib
from typing import Any

from forecaster.data.reader import load_dataset, read_csv, read_frame
from forecaster.data.registry import DATASETS, DatasetSpec, data_search_dirs, get_spec, locate_dataset
from forecaster.data.series import DataQualityWarning, ReadOptions, TimeSeries
from forecaster.data.splits import SPLIT_SCHEMES, min_rows, split_borders, window_count, window_counts
from forecaster.data.timeindex import check_frequency, future_timestamps, infer_frequency, season_length

_LAZY = {
    "Scaler": "forecaster.data.scaling",
    "WindowDataset": "forecaster.data.windows",
    "ForecastDataModule": "forecaster.data.datamodule",
    "download_dataset": "forecaster.data.download",
    "verify_dataset": "forecaster.data.download",
    "file_sha256": "forecaster.data.download",
}

__all__ = [
    "DATASETS",
    "SPLIT_SCHEMES",
    "DataQualityWarning",
    "DatasetSpec",
    "TimeSeries",
    "data_search_dirs",
    "check_frequency",
    "future_timestamps",
    "get_spec",
    "infer_frequency",
    "load_dataset",
    "locate_dataset",
    "min_rows",
    "read_csv",
    "read_frame",
    "ReadOptions",
    "season_length",
    "split_borders",
    "window_count",
    "window_counts",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'forecaster.data' has no attribute {name!r}")

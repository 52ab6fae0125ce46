"""Shared fixtures: the benchmark data location and GPU skipping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path | None:
    """FORECASTER_DATA_DIR if set, else the shared datasets beside the checkout (how CI lays it out)."""
    env = os.environ.get("FORECASTER_DATA_DIR")
    if env:
        return Path(env)
    beside = REPO.parent / "shared" / "datasets"
    return beside if beside.is_dir() else None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    found = _data_dir()
    if found is None or not found.is_dir():
        pytest.skip(
            "benchmark CSVs not found: set FORECASTER_DATA_DIR or put ../shared/datasets beside the repo"
        )
    return found


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)

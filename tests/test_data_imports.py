"""The packages import without CUDA or CuPy, and the data layer keeps its dependency directions."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = """
import sys
sys.modules["cupy"] = None  # any `import cupy` now raises ImportError, as on a machine without CuPy
import forecaster, service, kernels
import pandas as pd
import forecaster.data as data
data.future_timestamps(pd.date_range("2020-01-01", periods=3, freq="h"), None, 2)
data.Scaler.from_dict({"mean": [0.0], "scale": [1.0]})
assert "lightning" not in sys.modules, "forecaster.data's helpers must not import Lightning"
from forecaster.data import ForecastDataModule
assert "lightning" in sys.modules
print("ok")
"""


@pytest.mark.slow
def test_import_without_cuda_or_cupy():
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300, check=False, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"

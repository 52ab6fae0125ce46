"""Bundles written before house version 2 (format 1: the scaler inside `data`) still load and forecast.

The configs and metrics in tests/fixtures/bundles_v1 are the files that code wrote (its README says how);
their weights are not kept in the repository (no weight files are tracked): each test draws the model the
config describes with a fixed seed, writes its state beside the old config, and checks the format-1 bundle
against the same model saved as format 2 today: same scaler, same forecast, same test metrics.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from forecaster.artifacts import load_bundle, save_bundle
from forecaster.data import Scaler
from forecaster.data.config import DataConfig
from forecaster.history import read_history
from forecaster.models import get_model
from forecaster.prediction import forecast
from forecaster.training.evaluation import evaluate_bundle

FIXTURES = Path(__file__).parent / "fixtures" / "bundles_v1"
NAMES = ("s3attention", "tnn")


def format_1_bundles(name: str, tmp_path: Path) -> tuple[Path, Path]:
    """(the old format-1 bundle with drawn weights, the same model saved as format 2)."""
    old = tmp_path / "v1" / name
    shutil.copytree(FIXTURES / name, old)
    raw = json.loads((old / "config.json").read_text())
    torch.manual_seed(7)
    model = get_model(name, **raw["model"]["config"]).eval()
    for parameter in model.parameters():  # off the zero or identity start, so every weight matters
        torch.nn.init.normal_(parameter, std=0.05)
    state = {key: value.contiguous() for key, value in model.state_dict().items()}
    save_file(state, old / "weights.safetensors")
    data = {key: value for key, value in raw["data"].items() if not key.startswith("scaler_")}
    scaler = Scaler(np.array(raw["data"]["scaler_mean"]), np.array(raw["data"]["scaler_scale"]))
    new = save_bundle(tmp_path / "v2" / name, model=model, model_name=name, metrics={},
                      training=raw["training"], data=DataConfig.from_dict(data), scaler=scaler)  # fmt: skip
    return old, new


@pytest.mark.parametrize("name", NAMES)
def test_a_format_1_bundle_loads_with_its_scaler_and_forecasts_as_format_2(name: str, tmp_path: Path) -> None:
    old_path, new_path = format_1_bundles(name, tmp_path)
    raw = json.loads((old_path / "config.json").read_text())
    assert raw["format_version"] == 1
    old, new = load_bundle(old_path), load_bundle(new_path)
    assert old.model_name == name
    assert old.model.config.to_dict().items() >= raw["model"]["config"].items()  # newer fields: defaults
    np.testing.assert_array_equal(old.scaler.mean, raw["data"]["scaler_mean"])
    np.testing.assert_array_equal(old.scaler.scale, raw["data"]["scaler_scale"])
    history = read_history(old, FIXTURES / "series.csv")
    table, expected = forecast(old, history), forecast(new, read_history(new, FIXTURES / "series.csv"))
    assert list(table.index) == list(expected.index) and len(table) == raw["data"]["horizon"]
    np.testing.assert_array_equal(table.to_numpy(), expected.to_numpy())
    assert not np.allclose(table.to_numpy(), table.to_numpy()[:1])  # the drawn weights do move the forecast


@pytest.mark.parametrize("name", NAMES)
def test_a_format_1_bundle_scores_its_test_split_as_format_2(name: str, tmp_path: Path) -> None:
    old_path, new_path = format_1_bundles(name, tmp_path)
    scores = [
        evaluate_bundle(bundle, read_history(bundle, FIXTURES / "series.csv"), accelerator="cpu")
        for bundle in (load_bundle(old_path), load_bundle(new_path))
    ]  # fmt: skip
    old_metrics = json.loads((FIXTURES / name / "metrics.json").read_text())
    assert scores[0]["windows"] == scores[1]["windows"] == old_metrics["windows"]
    for key in ("mse", "mae", "mse_original", "mae_original"):
        assert scores[0][key] == scores[1][key], key

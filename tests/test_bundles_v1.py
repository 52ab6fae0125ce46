"""Bundles written before house version 2 (tests/fixtures/bundles_v1) still load, forecast and score
exactly as that code did, and retraining them with the same seed gives the same weights.

Exact equality holds on the machine kind that wrote them (its CPU model and torch build, recorded in
expected.json); elsewhere oneDNN may pick other kernels and round float32 differently, so the comparison
falls back to a tolerance of a few float32 steps.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from forecaster.artifacts import load_bundle
from forecaster.cli import main
from forecaster.prediction import forecast, read_history
from forecaster.training.workflows import evaluate_bundle

FIXTURES = Path(__file__).parent / "fixtures" / "bundles_v1"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())
# The fixture's training settings (fixtures/bundles_v1/README.md), which `--preset reference` names now.
TRAIN = {"s3attention": "--horizon 12 --input-size 48 --d-model 16 --n-heads 4 --fold 4 --max-epochs 2 "
                        "--preset reference"}


def assert_same(actual, expected) -> None:
    """Equal to float32 rounding: another machine, torch or summation order (the Fourier decoder's matmuls
    on contiguous copies since 2026-11-23) moves the last bits, not the forecast."""
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(EXPECTED["bundles"]))
def test_a_format_1_bundle_loads_with_its_scaler_and_forecasts_as_before(name: str) -> None:
    raw = json.loads((FIXTURES / name / "config.json").read_text())
    assert raw["format_version"] == 1
    bundle = load_bundle(FIXTURES / name)
    assert bundle.model_name == name
    assert bundle.model.config.to_dict().items() >= raw["model"]["config"].items()  # newer fields: defaults
    np.testing.assert_array_equal(bundle.scaler.mean, raw["data"]["scaler_mean"])
    np.testing.assert_array_equal(bundle.scaler.scale, raw["data"]["scaler_scale"])

    expected = EXPECTED["bundles"][name]
    table = forecast(bundle, read_history(bundle, FIXTURES / "series.csv"))
    assert [str(stamp) for stamp in table.index] == expected["timestamps"]
    assert_same(table.to_numpy().T, np.array([expected["forecast"][column] for column in table.columns]))


@pytest.mark.parametrize("name", sorted(EXPECTED["bundles"]))
def test_a_format_1_bundle_scores_its_test_split_as_before(name: str) -> None:
    bundle = load_bundle(FIXTURES / name)
    metrics = evaluate_bundle(bundle, read_history(bundle, FIXTURES / "series.csv"), accelerator="cpu",
                              progress_bar=False)
    expected = EXPECTED["bundles"][name]["test_metrics"]
    assert metrics["windows"] == expected["windows"]
    assert_same([metrics["mse"], metrics["mae"]], [expected["mse"], expected["mae"]])
    # The old code rounded the scaler's scales to float32 before scaling errors back to original units
    # (torch.as_tensor of a list of floats); they are float64 now, which moves the 9th significant digit.
    np.testing.assert_allclose([metrics["mse_original"], metrics["mae_original"]],
                               [expected["mse_original"], expected["mae_original"]], rtol=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TRAIN))
def test_retraining_with_the_same_seed_gives_the_same_weights(name: str, tmp_path: Path) -> None:
    """Training now also counts the initial weights as epoch 0 of early stopping; the TNN fixture's two
    epochs end worse on validation than its initial weights, so only S3Attention still trains to the
    fixture's weights (the TNN bundle must still load and forecast as before, above)."""
    shutil.copy(FIXTURES / "series.csv", tmp_path / "series.csv")
    argv = ["train", "--csv", str(tmp_path / "series.csv"), *shlex.split(TRAIN[name]), "--no-progress",
            "--accelerator", "cpu", "--out", str(tmp_path / name)]
    assert main(argv) == 0
    before = load_file(FIXTURES / name / "weights.safetensors")
    after = load_file(tmp_path / name / "weights.safetensors")
    assert before.keys() == after.keys()
    for key in before:  # two epochs amplify float32 rounding differences (see assert_same)
        torch.testing.assert_close(after[key], before[key], rtol=1e-3, atol=1e-5, msg=key)

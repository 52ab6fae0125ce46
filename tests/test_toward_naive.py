"""Shrinking toward the naive forecast: the least-squares weights against a closed form, the wrapper's
extremes, bundles that keep the weights (and refuse tampered ones), and what training does with them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from test_artifacts import save, tiny  # noqa: F401  (the tiny registered forecaster)

from forecaster.artifacts import load_bundle
from forecaster.data import TimeSeries
from forecaster.errors import BundleError
from forecaster.models import get_model
from forecaster.models.assembly import stored
from forecaster.models.toward_naive import TowardNaive, fit_weights
from forecaster.training.settings import TrainerOptions, TrainSettings
from forecaster.training.workflows import train_forecaster


def test_weights_are_the_clipped_least_squares_weight_of_each_step() -> None:
    rng = np.random.default_rng(0)
    deviation = rng.normal(size=(50, 5, 3))
    truth = rng.normal(size=(50, 5, 3)) + np.array([0.3, 0.7, 1.6, -0.4, 0.0])[None, :, None] * deviation
    deviation[:, 4] = 0.0  # a step where the model never moves off the last value
    batches = [(deviation[:20], truth[:20]), (deviation[20:], truth[20:])]  # streamed in batches
    weights = fit_weights(batches)
    for step in range(4):  # the one-regressor least squares, without intercept, of truth on deviation
        slope, *_ = np.linalg.lstsq(deviation[:, step].reshape(-1, 1), truth[:, step].reshape(-1), rcond=None)
        assert weights[step] == pytest.approx(np.clip(slope[0], 0.0, 1.0), rel=1e-12)
    assert 0 < weights[0] < weights[1] < 1 and weights[2] == 1.0 and weights[3] == 0.0 and weights[4] == 0.0
    with pytest.raises(ValueError, match="at least one window"):
        fit_weights([])


def test_weight_zero_is_the_naive_forecast_and_one_the_model() -> None:
    torch.manual_seed(0)
    base = get_model("nlinear", input_size=16, horizon=4, n_channels=2).eval()
    torch.nn.init.normal_(base.linear.weight)
    x = torch.randn(3, 16, 2)
    zero, one = TowardNaive(base, [0.0] * 4), TowardNaive(base, [1.0] * 4)
    torch.testing.assert_close(zero(x), x[:, -1:].expand(3, 4, 2), rtol=0, atol=0)
    torch.testing.assert_close(one(x), base(x), rtol=0, atol=0)
    half = TowardNaive(base, [0.5, 0.5, 0.5, 0.5])(x)
    torch.testing.assert_close(half, (x[:, -1:] + base(x)) / 2)


def test_a_quantile_head_keeps_its_widths_around_the_shrunk_point() -> None:
    base = get_model("s3attention", input_size=16, horizon=4, n_channels=2, quantile_levels=[80]).eval()
    x = torch.randn(2, 16, 2)
    point, lower, upper = base.bounds(x)
    shrunk_point, shrunk_lower, shrunk_upper = TowardNaive(base, [0.0, 0.3, 0.6, 1.0]).bounds(x)
    torch.testing.assert_close(shrunk_point, TowardNaive(base, [0.0, 0.3, 0.6, 1.0])(x))
    torch.testing.assert_close(shrunk_upper - shrunk_point[..., None], upper - point[..., None])
    torch.testing.assert_close(shrunk_point[..., None] - shrunk_lower, point[..., None] - lower)


def test_bundles_keep_the_weights_and_refuse_tampered_ones(tiny, tmp_path: Path) -> None:  # noqa: F811
    weights = [0.125, 0.5, 0.75, 1.0]
    path = save(TowardNaive(tiny, weights), tmp_path / "bundle")
    bundle = load_bundle(path)
    assert isinstance(bundle.model, TowardNaive) and bundle.model.weights[:, 0].tolist() == weights
    x = torch.randn(2, 12, 3)
    torch.testing.assert_close(bundle.model(x), TowardNaive(tiny, weights)(x), rtol=0, atol=0)
    config = json.loads((path / "config.json").read_text())
    for bad in ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 1.5], [0.5, 0.5, 0.5, "0.5"], "0.5"):
        (path / "config.json").write_text(json.dumps({**config, "naive_weights": bad}))
        with pytest.raises(BundleError, match="'naive_weights' must be a list of 4 numbers between 0 and 1"):
            load_bundle(path)


def _walks(rows: int = 900) -> TimeSeries:
    """Two random walks, one with a daily cycle on top: the next value is mostly the last one."""
    rng = np.random.default_rng(3)
    steps = np.cumsum(rng.normal(0, 0.5, (rows, 2)), axis=0)
    cycle = np.sin(2 * np.pi * np.arange(rows) / 24)
    frame = pd.DataFrame(
        steps + np.column_stack([3 * cycle, np.zeros(rows)]),
        index=pd.date_range("2024-01-01", periods=rows, freq="h", name="date"),
        columns=["a", "b"],
    )
    return TimeSeries(frame, "h", "walks.csv", date_col="date")


def _train(tmp_path: Path, name: str, **settings):
    trainer = TrainerOptions(max_epochs=2, accelerator="cpu", progress_bar=False)
    settings = TrainSettings(horizon=12, input_size=48, seeds=1, trainer=trainer, **settings)
    return train_forecaster(_walks(), tmp_path / name, settings)


def test_training_shrinks_on_validation_and_never_ends_worse_than_naive_there(tmp_path: Path) -> None:
    shrunk = _train(tmp_path, "shrunk", model_name="nlinear")
    plain = _train(tmp_path, "plain", model_name="nlinear", toward_naive=False)
    summary, naive = shrunk.metrics["toward_naive"], shrunk.metrics["naive"]
    assert summary["val_mse"] <= min(shrunk.metrics["best_val_mse"], naive["val_mse"]) + 1e-12
    assert shrunk.metrics["best_val_mse"] == plain.metrics["best_val_mse"]  # the same trained weights
    config = json.loads((shrunk.bundle_path / "config.json").read_text())
    assert len(config["naive_weights"]) == 12 and config["naive_weights"][0] == pytest.approx(
        summary["weight_step1"]
    )
    assert "naive_weights" not in json.loads((plain.bundle_path / "config.json").read_text())
    assert shrunk.training["toward_naive"] and not plain.training["toward_naive"]
    reloaded = load_bundle(shrunk.bundle_path)
    torch.testing.assert_close(stored(reloaded.model).state_dict(), stored(shrunk.model).state_dict())
    published = _train(tmp_path, "reference", preset="reference")
    assert not published.training["toward_naive"] and "toward_naive" not in published.metrics


def test_on_random_walks_the_first_step_stays_at_the_last_value(tmp_path: Path) -> None:
    """DLinear's trend-and-season map moves step 1 off the last value, which is the best guess of a walk;
    the shrunk forecast does not."""
    shrunk = _train(tmp_path, "shrunk", model_name="dlinear")
    plain = _train(tmp_path, "plain", model_name="dlinear", toward_naive=False)
    naive_step1 = shrunk.metrics["naive"]["mse_step1"]
    assert shrunk.metrics["toward_naive"]["weight_step1"] < 0.5
    assert plain.metrics["mse_step1"] > 1.2 * naive_step1  # measured: 1.26 against naive's 0.032
    assert shrunk.metrics["mse_step1"] <= 1.05 * naive_step1  # measured: 0.0315

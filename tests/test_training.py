"""Training workflow: metrics over all windows, best-checkpoint restore, bundle round trip, resume."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from forecaster.artifacts import load_bundle, work_dir_for
from forecaster.data import Scaler, read_csv, split_borders
from forecaster.data.scaling import original_units
from forecaster.errors import BundleError, ForecasterError
from forecaster.metrics import ErrorSums, mae, mse
from forecaster.prediction import predict_windows
from forecaster.training.evaluation import evaluate_bundle
from forecaster.training.module import ForecastModule
from forecaster.training.settings import TrainerOptions, TrainSettings
from forecaster.training.workflows import train_forecaster

TINY_MODEL = {"d_model": 8, "n_heads": 2, "fold": 2, "e_layers": 1, "left_rank": 4, "right_rank": 2}
INPUT_SIZE, HORIZON = 24, 12


def test_mse_mae_closed_form_for_numpy_and_torch():
    pred, target = np.array([[1.0, 2.0], [3.0, -1.0]]), np.zeros((2, 2))
    assert mse(pred, target) == pytest.approx(15.0 / 4, abs=1e-15)
    assert mae(torch.tensor(pred), torch.tensor(target)) == pytest.approx(7.0 / 4, abs=1e-15)
    with pytest.raises(ValueError, match="shape"):
        mse(pred, np.zeros(3))


def test_error_sums_are_exact_over_uneven_batches():
    rng = np.random.default_rng(3)
    pred, target = rng.normal(size=(37, 5, 3)), rng.normal(size=(37, 5, 3))
    mean, scale = np.array([1.0, -4.0, 250.0]), np.array([0.5, 2.0, 40.0])
    sums = ErrorSums(Scaler(mean, scale))
    for start, stop in ((0, 32), (32, 33), (33, 37)):  # a last batch of 4, as without drop_last
        sums.update(torch.tensor(pred[start:stop], dtype=torch.float32), torch.tensor(target[start:stop]))
    result = sums.compute()
    pred32 = torch.tensor(pred, dtype=torch.float32).double().numpy()
    assert result["windows"] == 37
    assert result["mse"] == pytest.approx(mse(pred32, target), rel=1e-12)
    assert result["mae"] == pytest.approx(mae(pred32, target), rel=1e-12)
    pred_original, target_original = pred32 * scale + mean, target * scale + mean
    assert result["mse_original"] == pytest.approx(mse(pred_original, target_original), rel=1e-12)
    assert result["mae_original"] == pytest.approx(mae(pred_original, target_original), rel=1e-12)
    sums.reset()
    with pytest.raises(ValueError, match="no windows"):
        sums.compute()


def test_module_rejects_unknown_schedule():
    with pytest.raises(ValueError, match="lr_schedule"):
        ForecastModule(torch.nn.Linear(1, 1), Scaler(np.zeros(1), np.ones(1)), lr_schedule="step")


@pytest.fixture(scope="module")
def hourly_csv(data_dir: Path, tmp_path_factory) -> Path:
    """600 hourly ETTh1 rows with the date column renamed, as a user file."""
    frame = pd.read_csv(data_dir / "ETTh1.csv.gz", nrows=600).rename(columns={"date": "Zeitstempel"})
    path = tmp_path_factory.mktemp("csv") / "plant.csv"
    frame.to_csv(path, index=False)
    return path


def settings(**overrides) -> TrainSettings:
    trainer = TrainerOptions(
        max_epochs=overrides.pop("max_epochs", 2),
        accelerator="cpu",
        devices=1,
        limit_train_batches=4,
        progress_bar=False,
        deterministic=True,
    )
    return TrainSettings(
        horizon=HORIZON,
        input_size=INPUT_SIZE,
        preset=overrides.pop("preset", "reference"),
        model_options=TINY_MODEL,
        lr=1e-3,
        seed=7,
        seeds=1,
        trainer=trainer,
        **overrides,
    )


@pytest.fixture(scope="module")
def trained(hourly_csv: Path, tmp_path_factory):
    series = read_csv(hourly_csv, date_col="Zeitstempel", targets=["HUFL", "MUFL", "OT"])
    root = tmp_path_factory.mktemp("run")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)  # anything Lightning wrote to the current directory would show up here
        outcome = train_forecaster(series, root / "bundle", settings(lr_schedule="cosine"))
    return series, root, outcome


def test_reloaded_bundle_predicts_bit_identically(trained):
    series, _, outcome = trained
    bundle = load_bundle(outcome.bundle_path)
    trained_state, loaded_state = outcome.model.state_dict(), bundle.model.state_dict()
    assert trained_state.keys() == loaded_state.keys()
    assert any(key.endswith("left_index") for key in loaded_state), "skeleton index buffers are saved"
    for key in trained_state:
        assert torch.equal(trained_state[key], loaded_state[key]), key

    history = series.values[-50:]
    scaled = (history[-INPUT_SIZE:] - bundle.scaler.mean) / bundle.scaler.scale
    # C order, as predict_windows feeds the model (series.values is Fortran-ordered)
    window = torch.from_numpy(np.ascontiguousarray(scaled))
    with torch.inference_mode():
        direct = outcome.model(window[None].float())[0].double().numpy()
    expected = original_units(bundle.scaler, direct)  # direct * scale + mean, to float32's digits
    np.testing.assert_array_equal(predict_windows(bundle, history[None, -INPUT_SIZE:])[0], expected)
    reloaded = load_bundle(outcome.bundle_path)
    np.testing.assert_array_equal(predict_windows(reloaded, history[None, -INPUT_SIZE:])[0], expected)


def test_test_metrics_cover_every_window_and_match_evaluate(trained):
    series, _, outcome = trained
    bundle = load_bundle(outcome.bundle_path)
    start, stop = split_borders(len(series), INPUT_SIZE, "7:1:2")["test"]
    assert outcome.metrics["windows"] == stop - start - INPUT_SIZE - HORIZON + 1 == 109

    scaled = (series.values[start:stop] - bundle.scaler.mean) / bundle.scaler.scale
    x = np.stack([scaled[i : i + INPUT_SIZE] for i in range(109)])
    y = np.stack([scaled[i + INPUT_SIZE : i + INPUT_SIZE + HORIZON] for i in range(109)]).astype(np.float32)
    with torch.inference_mode():
        pred = bundle.model(torch.from_numpy(x).float()).double().numpy()
    scale = bundle.scaler.scale
    assert outcome.metrics["mse"] == pytest.approx(mse(pred, y), rel=1e-5)
    assert outcome.metrics["mae"] == pytest.approx(mae(pred, y), rel=1e-5)
    assert outcome.metrics["mse_original"] == pytest.approx(mse(pred * scale, y * scale), rel=1e-5)
    assert outcome.metrics["mse_step1"] == pytest.approx(mse(pred[:, :1], y[:, :1]), rel=1e-5)

    again = evaluate_bundle(bundle, series, accelerator="cpu")
    scores = {"mse", "mae", "mse_original", "mae_original", "mse_step1", "windows"}
    assert {key: again[key] for key in scores} == {key: outcome.metrics[key] for key in scores}
    assert set(again) == {*scores, "naive", "seasonal_naive"}
    for baseline in ("naive", "seasonal_naive"):  # the same windows' forecasts, as training scored them
        assert again[baseline] == {key: outcome.metrics[baseline][key] for key in scores}


def test_best_checkpoint_weights_are_restored(trained):
    _, root, outcome = trained
    work_dir = work_dir_for(outcome.bundle_path)
    assert work_dir == root / ".bundle.work"
    assert sorted(p.name for p in root.iterdir()) == [".bundle.work", "bundle"]

    log = pd.read_csv(next((work_dir / "logs").glob("version_*/metrics.csv")))
    val = log.dropna(subset=["val_mse"]).set_index("epoch")["val_mse"]
    assert list(val.index) == [0, 1]
    assert outcome.training["best_epoch"] == int(val.idxmin()) + 1
    assert outcome.metrics["best_val_mse"] == pytest.approx(val.min(), rel=1e-6)

    best = torch.load(work_dir / "checkpoints" / "best.ckpt", map_location="cpu", weights_only=True)
    assert best["epoch"] + 1 == outcome.training["best_epoch"]
    restored = load_bundle(outcome.bundle_path).model.state_dict()
    for key, value in best["state_dict"].items():
        assert torch.equal(restored[key.removeprefix("model.")], value), key


def test_cosine_schedule_reaches_zero_at_max_epochs(trained):
    _, root, outcome = trained
    last_path = root / ".bundle.work" / "checkpoints" / "last.ckpt"
    last = torch.load(last_path, map_location="cpu", weights_only=True)
    (scheduler,) = last["lr_schedulers"]
    assert scheduler["T_max"] == 2
    assert scheduler["_last_lr"][0] == pytest.approx(1e-3 * 0.5 * (1 + math.cos(math.pi * 2 / 2)), abs=1e-12)
    assert outcome.training["lr_schedule"] == "cosine" and outcome.training["epochs"] == 2


def test_resume_continues_from_the_last_checkpoint(hourly_csv, tmp_path):
    series = read_csv(hourly_csv, date_col="Zeitstempel", targets=["OT"])
    out = tmp_path / "bundle"
    with pytest.raises(ForecasterError, match="nothing to resume"):
        train_forecaster(series, out, settings(resume=True))
    first = train_forecaster(series, out, settings(max_epochs=1))
    assert first.training["epochs"] == 1
    with pytest.raises(BundleError, match="already exists"):
        train_forecaster(series, out, settings(max_epochs=2, resume=True))

    resumed = train_forecaster(series, out, settings(max_epochs=2, resume=True, overwrite=True))
    assert resumed.training["epochs"] == 2 and resumed.training["resumed"]
    logs = (tmp_path / ".bundle.work" / "logs").glob("version_*/metrics.csv")
    log = pd.concat(pd.read_csv(p) for p in logs)
    assert sorted(log.dropna(subset=["val_mse"])["epoch"]) == [0, 1]  # epoch 0 was not trained again


def test_an_unwritable_training_log_costs_the_run_nothing(hourly_csv, tmp_path, monkeypatch, caplog):
    """On a full disk Lightning's `metrics.csv`, written after the fit, ended the run: the trained model was
    lost, "No space left on device" naming no file (h44). The log is said unwritten once; the bundle saved."""
    from lightning.pytorch.loggers.csv_logs import ExperimentWriter

    def full(self) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ExperimentWriter, "save", full)
    series = read_csv(hourly_csv, date_col="Zeitstempel", targets=["OT"])
    with caplog.at_level("WARNING", logger="forecaster.training.trainer"):
        outcome = train_forecaster(series, tmp_path / "bundle", settings(max_epochs=2))
    assert load_bundle(outcome.bundle_path).model_name and outcome.training["epochs"] == 2
    said = [record.getMessage() for record in caplog.records if "training log" in record.getMessage()]
    assert len(said) == 1 and "metrics.csv not written (No space left on device)" in said[0]

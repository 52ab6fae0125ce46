"""Bagging on small data: a candidate trained from several seeds is the average of the very models single
runs at those seeds train, it is saved and served as an ensemble, its quantile head is the members' quantile
average, and only small data without covariates is bagged by default."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from forecaster.artifacts import load_bundle
from forecaster.data import read_csv
from forecaster.errors import ConfigError
from forecaster.models import get_model
from forecaster.models.ensemble import Ensemble
from forecaster.prediction import predict_windows
from forecaster.training.fit import bag_input_sizes, build_candidate, fit_candidate
from forecaster.training.members import SEED_STRIDE, member_seeds
from forecaster.training.planning import plan
from forecaster.training.scoring import split_windows, window_errors
from forecaster.training.settings import (
    BAG_SEEDS,
    LONGER_INPUT,
    SMALL_TRAIN_WINDOWS,
    TrainerOptions,
    TrainSettings,
)
from forecaster.training.workflows import train_forecaster

TINY_MODEL = {"d_model": 8, "n_heads": 2, "fold": 2, "e_layers": 1, "left_rank": 4, "right_rank": 2}
INPUT_SIZE, HORIZON = 24, 12


@pytest.fixture(scope="module")
def small_csv(data_dir: Path, tmp_path_factory) -> Path:
    """600 hourly ETTh1 rows as a user file: about 400 train windows, far below SMALL_TRAIN_WINDOWS."""
    path = tmp_path_factory.mktemp("csv") / "plant.csv"
    pd.read_csv(data_dir / "ETTh1.csv.gz", nrows=600).to_csv(path, index=False)
    return path


def _settings(**overrides) -> TrainSettings:
    trainer = TrainerOptions(max_epochs=2, accelerator="cpu", devices=1, limit_train_batches=3,
                             progress_bar=False, deterministic=True)  # fmt: skip
    overrides = {"preset": "anchored-skip", "input_size": INPUT_SIZE, "model_options": TINY_MODEL,
                 **overrides}  # fmt: skip
    return TrainSettings(horizon=HORIZON, lr=1e-2, trainer=trainer, overwrite=True, **overrides)


def _built(series, settings: TrainSettings):
    return build_candidate(series, settings, plan(settings, series)[0])


def test_small_data_without_covariates_is_bagged_by_default(data_dir: Path, small_csv: Path, tmp_path: Path):
    small = read_csv(small_csv, targets=["OT"])
    built = _built(small, _settings(seed=3))
    assert built.datamodule.window_counts()["train"] < SMALL_TRAIN_WINDOWS
    assert member_seeds(None, _settings(seed=3), built) == [3 + k * SEED_STRIDE for k in range(BAG_SEEDS)]
    assert member_seeds(2, _settings(seed=3), built) == [3, 3 + SEED_STRIDE]
    assert member_seeds(1, _settings(seed=3), built) == [3]
    repeats = [set(member_seeds(None, _settings(seed=seed), built)) for seed in range(3)]
    assert not (repeats[0] & repeats[1] or repeats[1] & repeats[2]), "the benchmark's repeats share no member"
    assert [candidate.seeds for candidate in plan(_settings(), small)] == [None]
    published = _settings(preset="reference"), _settings(preset="paper")
    assert [plan(settings, small)[0].seeds for settings in published] == [1, 1], "as published: one model"
    assert plan(_settings(preset="reference", seeds=3), small)[0].seeds == 3, "--seeds wins over the preset"

    large_path = tmp_path / "large.csv"
    pd.read_csv(data_dir / "ETTh1.csv.gz", nrows=4000).to_csv(large_path, index=False)
    large = _built(read_csv(large_path, targets=["OT"]), _settings())
    assert large.datamodule.window_counts()["train"] >= SMALL_TRAIN_WINDOWS
    assert member_seeds(None, _settings(seed=3), large) == [3]

    built = _built(read_csv(small_csv, targets=["OT"], past_covariates=["HUFL"]), _settings())
    assert member_seeds(None, _settings(), built) == [0]
    with pytest.raises(ConfigError, match=r"--seeds 2 averages models of the target columns alone"):
        member_seeds(2, _settings(), built)
    two_devices = dataclasses.replace(_settings(), trainer=TrainerOptions(devices=2, strategy="ddp"))
    assert member_seeds(None, two_devices, _built(small, _settings())) == [0]
    with pytest.raises(ConfigError, match=r"--seeds 3 averages models trained on one device"):
        member_seeds(3, two_devices, _built(small, _settings()))


def test_a_bagged_candidate_averages_the_models_single_runs_at_its_seeds_train(small_csv: Path, tmp_path):
    series = read_csv(small_csv, targets=["OT", "HUFL"])
    settings = _settings(seed=1, seeds=3)
    [candidate] = plan(settings, series)
    bagged = fit_candidate(series, settings, candidate, tmp_path / "bag")
    assert isinstance(bagged.model, Ensemble) and bagged.training["seeds"] == [1, 10001, 20001]
    assert bagged.training["member_epochs"] == [2, 2, 2]
    assert bagged.model.config.weights == pytest.approx([1 / 3] * 3)

    singles = []
    for seed in bagged.training["seeds"]:
        alone = _settings(seed=seed, seeds=1)
        singles.append(fit_candidate(series, alone, plan(alone, series)[0], tmp_path / f"alone-{seed}").model)
    for member, single in zip(bagged.model.members, singles, strict=True):
        for key, value in single.state_dict().items():
            assert torch.equal(member.state_dict()[key], value), key
    x = torch.randn(4, INPUT_SIZE, 2)
    with torch.inference_mode():
        expected = sum(single(x) for single in singles) / 3
        torch.testing.assert_close(bagged.model(x), expected, rtol=1e-6, atol=1e-6)


def test_a_bagged_bundle_is_an_ensemble_that_reloads_bit_for_bit(small_csv: Path, tmp_path: Path):
    series = read_csv(small_csv, targets=["OT"])
    settings = _settings(preset="reference", loss="quantile", seeds=2)
    outcome = train_forecaster(series, tmp_path / "bundle", settings)
    bundle = load_bundle(outcome.bundle_path)
    assert bundle.model_name == "ensemble" and outcome.training["seeds"] == [0, SEED_STRIDE]
    assert bundle.calibration.method == "quantile", "the members' common quantile head is kept"
    history = series.values[None, -INPUT_SIZE:]
    first = predict_windows(bundle, history)
    np.testing.assert_array_equal(predict_windows(load_bundle(outcome.bundle_path), history), first)


def test_an_ensembles_bounds_are_its_members_quantile_average() -> None:
    torch.manual_seed(0)
    heads = [get_model("s3attention", input_size=INPUT_SIZE, horizon=6, n_channels=2,
                       quantile_levels=[80, 95], seed=seed, **TINY_MODEL) for seed in range(2)]  # fmt: skip
    for head in heads:
        for parameter in head.parameters():
            torch.nn.init.normal_(parameter, std=0.2)
    ensemble = Ensemble.of([("s3attention", head) for head in heads], [0.25, 0.75]).eval()
    assert ensemble.config.quantile_levels == [80, 95]
    x = torch.randn(3, INPUT_SIZE, 2)
    with torch.inference_mode():
        for got, *parts in zip(ensemble.bounds(x), *(head.eval().bounds(x) for head in heads), strict=True):
            torch.testing.assert_close(got, 0.25 * parts[0] + 0.75 * parts[1], rtol=1e-6, atol=1e-6)
    point = get_model("nlinear", input_size=12, horizon=6, n_channels=2)
    mixed = Ensemble.of([("s3attention", heads[0]), ("nlinear", point)], [0.5, 0.5])
    assert mixed.config.quantile_levels == []
    with pytest.raises(ValueError, match="no common quantile head"):
        mixed.bounds(x)


def test_an_ensemble_of_a_bag_is_one_flat_ensemble_with_scaled_weights() -> None:
    torch.manual_seed(0)
    linears = [get_model("nlinear", input_size=12, horizon=6, n_channels=2) for _ in range(2)]
    for linear in linears:
        torch.nn.init.normal_(linear.linear.weight, std=0.1)
    bag = Ensemble.of([("nlinear", linear) for linear in linears], [0.5, 0.5])
    naive = get_model("naive", input_size=8, horizon=6, n_channels=2)
    combined = Ensemble.of([("ensemble", bag), ("naive", naive)], [0.6, 0.4]).eval()
    assert [member["name"] for member in combined.config.members] == ["nlinear", "nlinear", "naive"]
    assert combined.config.weights == pytest.approx([0.3, 0.3, 0.4])
    x = torch.randn(5, 12, 2)
    with torch.inference_mode():
        torch.testing.assert_close(combined(x), 0.6 * bag(x) + 0.4 * x[:, -1:].expand(-1, 6, -1))


def test_train_says_it_averaged_seeds_on_small_data(small_csv: Path, tmp_path: Path, capsys) -> None:
    from forecaster.cli import main

    argv = ["train", "--csv", small_csv, "--targets", "OT", "--model", "nlinear", "--horizon", HORIZON,
            "--input-size", INPUT_SIZE, "--max-epochs", 1, "--limit-train-batches", 2, "--accelerator", "cpu",
            "--no-progress", "--out", tmp_path / "nlinear"]  # fmt: skip
    assert main([str(arg) for arg in argv]) == 0
    seeds = ", ".join(str(k * SEED_STRIDE) for k in range(BAG_SEEDS))
    said, progress = capsys.readouterr()
    assert f"nlinear: the average of {BAG_SEEDS} models trained from seeds {seeds} (small" in said
    assert [line for line in progress.splitlines() if "of the average" in line] == [
        f"forecaster: nlinear: training model {k + 1} of {BAG_SEEDS} of the average (seed {k * SEED_STRIDE}, "
        f"input {INPUT_SIZE})" for k in range(BAG_SEEDS)]  # one line each as it starts
    assert load_bundle(tmp_path / "nlinear").model_name == "ensemble"

    given = argv.index("--input-size")
    default_input = [*argv[:given], *argv[given + 2 : -1], tmp_path / "longer"]
    assert main([str(arg) for arg in default_input]) == 0
    reading = f"the average of {2 * BAG_SEEDS} models trained from seeds {seeds}, each reading 96 and 192"
    assert reading in capsys.readouterr().out
    assert load_bundle(tmp_path / "longer").data.input_size == 192


def test_a_default_bag_also_reads_twice_the_default_input_where_the_rows_allow(
    data_dir: Path, small_csv: Path, tmp_path: Path
) -> None:
    series = read_csv(small_csv, targets=["OT"])
    linear = {"model_name": "nlinear", "preset": "default", "model_options": {}}
    default = _settings(**linear, input_size=None, seed=2)
    [candidate] = plan(default, series)
    assert default.input_size is None and candidate.input_size == 96, "600 rows: the default input, 96"
    assert bag_input_sizes(series, default, candidate, earlier=False) == [96, LONGER_INPUT * 96]
    given = _settings(**linear, input_size=96)
    [given_candidate] = plan(given, series)
    assert given.input_size == 96 and bag_input_sizes(series, given, given_candidate, earlier=False) == [96]
    short_path = tmp_path / "short.csv"  # 300 rows: 7 train windows of 192 steps
    pd.read_csv(data_dir / "ETTh1.csv.gz", nrows=300).to_csv(short_path, index=False)
    short = read_csv(short_path, targets=["OT"])
    [short_candidate] = plan(default, short)
    assert bag_input_sizes(short, default, short_candidate, earlier=False) == [short_candidate.input_size]

    bagged = fit_candidate(series, default, candidate, tmp_path / "bag")
    assert bagged.training["member_inputs"] == [96] * BAG_SEEDS + [192] * BAG_SEEDS
    assert bagged.training["seeds"] == [2 + k * SEED_STRIDE for k in range(BAG_SEEDS)] * 2
    assert isinstance(bagged.model, Ensemble) and bagged.model.config.input_size == 192
    assert bagged.data.input_size == 192, "the bundle reads the longest member's history"
    val = split_windows(bagged.data, bagged.scaler, series, "val")
    shorter = split_windows(dataclasses.replace(bagged.data, input_size=96), bagged.scaler, series, "val")
    assert len(val) == len(shorter) == len(bagged.val_errors), "both inputs forecast the same targets"
    np.testing.assert_array_equal(val.stacked()[1].numpy(), shorter.stacked()[1].numpy())
    np.testing.assert_allclose(bagged.val_errors, window_errors(bagged.model, val), rtol=1e-6)

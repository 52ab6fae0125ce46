"""Prediction intervals: conformal coverage against its binomial oracle, conformalized quantiles, the
quantile head and its loss, calibration in bundles (old bundles, tampered files, recalibration), and the
same answer from `forecaster predict`, the Python path and the HTTP API."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file, save_file
from test_bundles_v1 import FIXTURES, format_1_bundles
from test_service import body_of, history, make_bundle, serving

from forecaster.artifacts import CALIBRATION_FILE, load_bundle, save_bundle
from forecaster.calibration import Calibration, nonconformity
from forecaster.cli import main
from forecaster.data.series import DataQualityWarning
from forecaster.errors import BundleError, ConfigError
from forecaster.history import read_history
from forecaster.metrics import IntervalSums
from forecaster.models import forecast_outputs, get_model
from forecaster.prediction import forecast, predict_outputs
from forecaster.training.module import pinball_loss


def _beta_sd(mean: float, windows: int) -> float:
    return float(np.sqrt(mean * (1 - mean) / (windows + 2)))


@pytest.mark.parametrize("level", [50, 80, 95])
def test_conformal_coverage_on_gaussian_noise_is_nominal_within_binomial_error(level: int) -> None:
    """Split conformal with N calibration errors covers a fresh one with probability k / (N + 1),
    k = ceil((N + 1) a) (>= a), and the coverage of one calibration is Beta(k, N + 1 - k) distributed:
    averaged over H * C independent cells and M test draws each, it lies within 4 standard errors."""
    rng = np.random.default_rng(0)
    windows, steps, channels, tests = 200, 6, 4, 5000
    calibration = Calibration.from_scores(
        np.abs(rng.standard_normal((windows, steps, channels))), [], "synthetic", "conformal"
    )
    point = np.zeros((tests, steps, channels, 1), dtype=np.float32)
    targets = rng.standard_normal((tests, steps, channels))
    lo, hi = calibration.intervals([level], point)[level]
    coverage = float(((targets >= lo) & (targets <= hi)).mean())
    expected = np.ceil((windows + 1) * level / 100) / (windows + 1)
    cells = steps * channels
    error = np.sqrt(_beta_sd(expected, windows) ** 2 / cells + expected * (1 - expected) / (tests * cells))
    assert expected >= level / 100
    assert abs(coverage - expected) < 4 * error, (coverage, expected, error)


def test_conformal_margin_approaches_the_gaussian_quantile() -> None:
    """With many windows the 80% / 95% margins of |N(0, 1)| errors are the normal quantiles 1.2816 and
    1.9600 (closed form), to the sampling error of an order statistic."""
    errors = np.abs(np.random.default_rng(1).standard_normal((40_000, 1, 1)))
    calibration = Calibration.from_scores(errors, [], "synthetic", "conformal")
    assert calibration.levels == tuple(range(1, 100))
    margins = calibration.margins[[79, 94], 0, 0]
    np.testing.assert_allclose(margins, [1.2816, 1.9600], atol=0.03)


def test_too_few_windows_for_a_level_is_refused_with_the_count_needed() -> None:
    calibration = Calibration.from_scores(np.ones((10, 1, 1)), [], "ten windows", "conformal")
    assert 90 in calibration.available_levels() and 95 not in calibration.available_levels()
    with pytest.raises(ConfigError, match="level 95 needs at least 19 calibration windows.*up to 90, or"):
        calibration.check([80, 95])


@pytest.mark.parametrize(
    ("windows", "floor_80", "floor_95"), [(2, 0.77, 0.82), (4, 0.77, 0.88), (16, 0.77, 0.92)]
)
def test_few_windows_pool_the_horizon_and_cover_near_nominal(windows, floor_80, floor_95) -> None:
    """Errors growing as sqrt(h): from 2-16 windows (too few for per-step ranks at 80% or 95%) the pooled
    margins grow along the horizon and cover fresh errors near nominal on average over 400 calibrations."""
    rng = np.random.default_rng(5)
    steps = 10
    growth = np.sqrt(np.arange(1, steps + 1))[:, None]
    covered = {80: [], 95: []}
    for _ in range(400):
        calibration = Calibration.from_scores(
            np.abs(rng.standard_normal((windows, steps, 1)) * growth), [], "few", "conformal"
        )
        assert (np.diff(calibration.margins[[79, 94], :, 0], axis=1) >= 0).all()
        targets = rng.standard_normal((200, steps, 1)) * growth
        for level, (lo, hi) in calibration.intervals([80, 95], np.zeros((200, steps, 1, 1))).items():
            covered[level].append(((targets >= lo) & (targets <= hi)).mean())
    assert floor_80 <= np.mean(covered[80]) <= 0.85 and floor_95 <= np.mean(covered[95]) <= 0.97


def test_one_window_calibrates_no_interval() -> None:
    calibration = Calibration.from_scores(np.ones((1, 8, 1)), [], "one window", "conformal")
    assert calibration.available_levels() == []
    unanswered = "level 80 needs at least 2 calibration windows.*it answers no level: recalibrate"
    with pytest.raises(ConfigError, match=unanswered):
        calibration.check([80])


def test_few_windows_are_never_narrower_than_a_random_walk_of_their_changes() -> None:
    """A random walk of N(0, 1) steps moves N(0, h) in h steps: its 80% / 95% margins are 1.2816 sqrt(h) and
    1.9600 sqrt(h) (closed form). One window's scores answer no level alone; with 40,000 one-step changes of
    such a walk its margins are the walk's to 2%. Five windows of scores above that floor keep their own."""
    changes = np.random.default_rng(11).standard_normal((40_000, 1))
    one = Calibration.from_scores(np.full((1, 4, 1), 0.1), [], "one window", "conformal", changes)
    assert one.source == "one window, no narrower than a random walk of its one-step changes"
    for level, normal_quantile in ((80, 1.2816), (95, 1.96)):
        _, hi = one.intervals([level], np.zeros((1, 4, 1, 1), np.float32))[level]
        np.testing.assert_allclose(hi[0, :, 0], normal_quantile * np.sqrt(np.arange(1, 5)), rtol=0.02)
    wide = Calibration.from_scores(np.full((5, 4, 1), 10.0), [], "five windows", "conformal", changes)
    np.testing.assert_allclose(wide.margins[[79, 94]], 10.0)


def test_a_level_beyond_few_scores_grows_from_the_highest_they_answer_as_the_random_walk_does() -> None:
    """4 windows of 2 steps: 8 pooled scores answer levels up to 88% (rank ceil(9 a) <= 8), not 95% (the 9th).
    95% was the random walk's margin alone, narrower than 80%'s from the scores, and answered as the 80%
    interval (8 yearly rows, h38). It grows from 88%'s as the walk's does: by 1.96 / 1.5548 for N(0, 1)
    changes (their two-sided normal quantiles)."""
    changes = np.random.default_rng(12).standard_normal((40_000, 1))
    scores = np.full((4, 2, 1), 5.0)
    calibration = Calibration.from_scores(scores, [], "four windows", "conformal", changes)
    bands = calibration.intervals([80, 95], np.zeros((1, 2, 1, 1), np.float32))
    (_, hi80), (_, hi95) = bands[80], bands[95]
    np.testing.assert_allclose(hi80[0, :, 0], 5.0)  # the scores, above the walk's 1.28 and 1.81
    np.testing.assert_allclose(hi95[0, :, 0], 5.0 * 1.96 / 1.5548, rtol=0.02)
    assert (calibration.margins[94] > calibration.margins[79]).all()


def test_a_handful_of_changes_floors_the_levels_at_a_normal_walk_of_their_root_mean_square() -> None:
    """One window of 8 yearly rows: 5 one-step changes, two of them the largest and equal (2.5). Their
    empirical 80% and 95% quantiles tie, and predict wrote the same 80% and 95% interval (h38); under
    FEW_WINDOWS changes the floor is their root mean square times the normal quantile, FPP3's naive
    interval."""
    changes = np.array([[2.0], [1.2], [1.3], [2.5], [2.5]])
    calibration = Calibration.from_scores(np.full((1, 3, 1), 0.1), [], "one window", "conformal", changes)
    rms = np.sqrt(np.mean(changes**2))
    for level, normal_quantile in ((80, 1.2816), (95, 1.96)):
        np.testing.assert_allclose(calibration.margins[level - 1, :, 0],
                                   rms * normal_quantile * np.sqrt([1, 2, 3]), rtol=1e-4)  # fmt: skip


def test_tied_walk_quantiles_of_many_small_changes_are_untied_by_their_normal_reading() -> None:
    """Spare-part demand of 0, 1 and 2: 47 one-step changes of 0 and +-1 have the same empirical 80% and 95%
    quantile (1), and predict answered 80% and 95% as one interval at every step (h52). A tied level is no
    narrower than the normal reading of the changes, their root mean square times its normal quantile."""
    changes = np.array([0.0] * 30 + [1.0] * 9 + [-1.0] * 8)[:, None]
    calibration = Calibration.from_scores(np.zeros((3, 4, 1)), [], "three windows", "conformal", changes)
    rms, growth = np.sqrt(17 / 47), np.sqrt([1, 2, 3, 4])
    np.testing.assert_allclose(calibration.margins[79, :, 0], growth, rtol=1e-6)  # the empirical quantile, 1
    np.testing.assert_allclose(calibration.margins[94, :, 0], 1.96 * rms * growth, rtol=1e-4)  # tied: 1.18


def test_a_level_one_or_two_scores_decide_is_no_narrower_than_their_normal_reading() -> None:
    """From 20 windows each step's scores are ranked alone: at 20-38 windows the 95% margin is a step's
    largest score, and equal scores answered 80% and 95% as one interval. A level whose rank is one of a
    step's two highest is no narrower than the normal quantile times the scores' root mean square; lower
    ones keep their conformal rank."""
    scores = np.full((20, 3, 1), 2.0)
    calibration = Calibration.from_scores(scores, [], "twenty windows", "conformal")
    np.testing.assert_allclose(calibration.margins[79], 2.0)  # rank 17 of 20
    np.testing.assert_allclose(calibration.margins[94], 1.96 * 2.0, rtol=1e-4)  # rank 20: the largest
    many = Calibration.from_scores(np.full((80, 3, 1), 2.0), [], "eighty windows", "conformal")
    np.testing.assert_allclose(many.margins[94], 2.0)  # rank 77 of 80: many scores decide it


def test_margins_never_narrow_along_the_horizon_and_keep_their_widths_sorted() -> None:
    """Ranked alone, a later step's margin fell below an earlier one's for the noise of a few scores; sorted
    along the horizon (rearrangement, Chernozhukov et al. 2009) each level keeps its margins' values."""
    errors = np.abs(np.random.default_rng(14).standard_normal((30, 6, 2))) * [1.0, 3.0]
    errors[:, 1] *= 0.5  # step 2 errs less than step 1
    calibration = Calibration.from_scores(errors, [], "thirty windows", "conformal")
    unsorted = Calibration.from_scores(errors[:, [0]], [], "step 1", "conformal").margins[:, 0]
    assert (np.diff(calibration.margins[:95], axis=1) >= 0).all()  # 96% and up: 30 windows answer none
    assert (calibration.margins[79, 1] < unsorted[79]).all()  # step 2's own margin, now at step 1
    ranked = np.stack([np.sort(errors[:, step], axis=0)[int(np.ceil(31 * 0.5)) - 1] for step in range(6)])
    np.testing.assert_allclose(calibration.margins[49], np.sort(ranked, axis=0), rtol=1e-6)


def test_a_seasonal_model_is_floored_by_a_seasonal_random_walk_of_its_changes_over_a_season() -> None:
    """A seasonal naive forecast's error is no season's swing: its few windows' floor is a seasonal random
    walk's (FPP3 5.5: the margin grows by sqrt(k + 1), k the seasons before step h), of the changes over a
    season. Under the one-step walk, a quarterly seasonal drift's 80% band was 7x its test error (h38)."""
    changes = np.random.default_rng(13).standard_normal((40_000, 1))
    scores = np.full((2, 8, 1), 0.01)
    calibration = Calibration.from_scores(scores, [], "two windows", "conformal", changes, season=4)
    assert calibration.source.endswith("no narrower than a seasonal random walk of its changes over 4 steps")
    growth = np.sqrt(np.arange(8) // 4 + 1)  # 1, 1, 1, 1, sqrt 2, ...
    np.testing.assert_allclose(calibration.margins[79, :, 0], 1.2816 * growth, rtol=0.02)

    from forecaster.api import Forecaster

    quarters = pd.date_range("2012-01-01", periods=48, freq="QS")
    swings = np.tile([5.0, -3.0, 10.0, -12.0], 12)
    values = 300 + 2 * np.arange(48) + swings + np.random.default_rng(38).normal(0, 1.5, 48)
    bundle = Forecaster("seasonal_drift", horizon=4).fit(pd.DataFrame({"q": quarters, "y": values})).bundle
    assert "seasonal random walk of its changes over 4 steps" in bundle.calibration.source
    one_step = np.quantile(np.abs(np.diff(values)), 0.8) / bundle.scaler.scale[0]  # the swings: about 20
    assert bundle.calibration.margins[79, 0, 0] < one_step / 2


def test_a_short_yearly_baseline_answers_both_levels_from_the_random_walk_floor() -> None:
    """14 years at horizon 3 leave 4 windows before the test split: their 12 pooled scores answered levels
    up to 92%, not 95%. The random walk of the windows' one-step changes answers every level."""
    from forecaster.api import Forecaster

    years = pd.date_range("2008-01-01", periods=14, freq="YS")
    walk = 50 + np.cumsum(np.random.default_rng(9).normal(0.5, 2, 14))
    model = Forecaster(model="naive", horizon=3).fit(pd.DataFrame({"year": years, "y": walk}))
    calibration = model.bundle.calibration
    assert calibration.windows < 20 and "no narrower than a random walk" in calibration.source
    assert calibration.available_levels() == list(range(1, 100))
    assert (np.diff(calibration.margins[94, :, 0]) > 0).all()


def test_a_quantile_head_calibrated_on_few_windows_pools_their_steps() -> None:
    """6 windows of 4 steps (a quarterly panel's validation split): the quantile head's 95% margin needs 19
    scores and had none (each step ranked alone); pooled over the steps as conformal scores are, the 24
    scores answer it: the largest of each score over its step's root mean square, times that scale."""
    rng = np.random.default_rng(5)
    scores = rng.normal(0, 1, size=(6, 4, 3, 2)) * np.arange(1, 5)[None, :, None, None]
    calibration = Calibration.from_scores(scores, [80, 95], "6 windows", "quantile")
    assert calibration.available_levels() == [80, 95]
    scale = np.maximum.accumulate(np.sqrt((scores[..., 1] ** 2).mean(axis=0)), axis=0)  # (H, C)
    largest = (scores[..., 1] / scale).reshape(-1, 3).max(axis=0)  # rank ceil(25 x 0.95) = 24 of 24
    np.testing.assert_allclose(calibration.margins[1], largest * scale, rtol=1e-6)


def test_a_quantile_head_on_one_window_is_calibrated_conformally_with_the_floor() -> None:
    """A 72-series yearly panel kept a trained S3Attention with a quantile head from one validation window,
    and its intervals answered no level: a head's bounds of few windows have no random walk's floor
    (h42). Under FEW_WINDOWS such a model is calibrated as conformal around its point forecast, floored."""
    from forecaster.data.windows import WindowDataset
    from forecaster.models import S3AttentionConfig, S3AttentionForecaster
    from forecaster.training.scoring import calibrate

    torch.manual_seed(0)
    sizes = {"d_model": 8, "n_heads": 2, "fold": 2, "e_layers": 1, "left_rank": 4, "right_rank": 2}
    config = S3AttentionConfig(input_size=4, horizon=3, n_channels=6, quantile_levels=[80, 95], **sizes)
    model = S3AttentionForecaster(config).eval()
    rows = np.cumsum(np.random.default_rng(0).normal(size=(7, 6)), axis=0).astype(np.float32)
    calibration = calibrate(model, {"the validation split": WindowDataset(rows, 4, 3)}, "quantile")
    assert calibration.method == "conformal" and calibration.windows == 1
    assert calibration.available_levels() == list(range(1, 100))
    assert "no narrower than a random walk" in calibration.source


@pytest.mark.parametrize("head_scale", [0.3, 3.0])
def test_conformalized_quantiles_restore_coverage_of_a_wrong_head(head_scale: float) -> None:
    """A head whose 80% interval is 0.3x or 3x the right one covers far from 80%; CQR's margin (negative
    for the too-wide head) brings the coverage back to nominal."""
    rng = np.random.default_rng(2)

    def outputs(count: int) -> np.ndarray:
        half = head_scale * 1.2816 * np.ones((count, 3, 2, 1))
        return np.concatenate([np.zeros((count, 3, 2, 1)), -half, half], axis=-1).astype(np.float32)

    calibration_targets = rng.standard_normal((2000, 3, 2))
    scores = nonconformity(outputs(2000), calibration_targets, "quantile")
    calibration = Calibration.from_scores(scores, [80], "synthetic", "quantile")
    assert (calibration.margins < 0).all() == (head_scale > 1)
    targets = rng.standard_normal((20000, 3, 2))
    head_lo, head_hi = Calibration.head([80], 3, 2).intervals([80], outputs(20000))[80]
    lo, hi = calibration.intervals([80], outputs(20000))[80]
    head_coverage = ((targets >= head_lo) & (targets <= head_hi)).mean()
    coverage = ((targets >= lo) & (targets <= hi)).mean()
    assert abs(head_coverage - 0.8) > 0.15
    assert abs(coverage - 0.8) < 0.02


def test_intervals_are_nested_and_never_cross_the_point() -> None:
    """Even a quantile calibration with large negative margins (and a head that crosses itself) gives
    lo <= point <= hi, and a higher level is never narrower."""
    rng = np.random.default_rng(3)
    outputs = rng.standard_normal((50, 4, 3, 5)).astype(np.float32)
    margins = rng.normal(0, 2, size=(2, 4, 3)).astype(np.float32)
    intervals = Calibration((80, 95), margins, 100, "random", "quantile").intervals([80, 95], outputs)
    point = outputs[..., 0]
    (lo80, hi80), (lo95, hi95) = intervals[80], intervals[95]
    assert (lo95 <= lo80).all() and (lo80 <= point).all() and (point <= hi80).all() and (hi80 <= hi95).all()


def test_interval_sums_match_their_definitions() -> None:
    """Coverage, width and Winkler score on a hand-checked example: targets 0, 2, -3 in [-1, 1] at 80%:
    inside, 1 above, 2 below -> coverage 1/3, width 2, score 2 + (2 / 0.2) * (0 + 1 + 2) / 3 = 12."""
    sums = IntervalSums([80])
    lo, hi = -np.ones(3), np.ones(3)
    sums.update({80: (lo[:2], hi[:2])}, np.array([0.0, 2.0]))
    sums.update({80: (lo[2:], hi[2:])}, np.array([-3.0]))
    np.testing.assert_allclose(list(sums.compute()["80"].values()), [1 / 3, 2.0, 12.0])


def test_pinball_loss_is_minimized_by_the_quantiles() -> None:
    """Fitting two constants under the 80% pinball loss recovers the 10% and 90% quantiles of the sample
    (Koenker and Bassett 1978), to the optimizer's precision."""
    torch.manual_seed(0)
    target = torch.randn(4000, 1, 1) * 2 + 1
    lower = torch.zeros(1, requires_grad=True)
    upper = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.Adam([lower, upper], lr=0.05)
    for _ in range(800):
        optimizer.zero_grad()
        batch = target.shape[0]
        loss = pinball_loss(lower.expand(batch, 1, 1, 1), upper.expand(batch, 1, 1, 1), target, (80,))
        loss.backward()
        optimizer.step()
    expected = torch.quantile(target.flatten(), torch.tensor([0.1, 0.9]))
    np.testing.assert_allclose([lower.item(), upper.item()], expected.numpy(), atol=0.05)


def _quantile_model(levels=(80, 95), **options):
    torch.manual_seed(0)
    return get_model(
        "s3attention", input_size=16, horizon=4, n_channels=2, d_model=8, n_heads=2, fold=2, left_rank=4,
        right_rank=4, quantile_levels=list(levels), **options,
    ).eval()  # fmt: skip


@pytest.mark.parametrize("anchor", ["mean", "last", "seam"])
def test_the_quantile_head_never_crosses_and_leaves_the_point_forecast_alone(anchor: str) -> None:
    model = _quantile_model(anchor=anchor, skip=anchor == "last")
    with torch.no_grad():
        model.spread.weight.normal_(0, 3.0)  # large raw widths of either sign
    x = torch.randn(5, 16, 2) * 4 + 10
    point, lower, upper = model.bounds(x)
    assert lower.shape == upper.shape == (5, 4, 2, 2)
    assert torch.equal(point, model(x))
    assert (lower[..., 1] <= lower[..., 0]).all() and (lower[..., 0] <= point).all()
    assert (point <= upper[..., 0]).all() and (upper[..., 0] <= upper[..., 1]).all()
    assert torch.equal(forecast_outputs(model, x), torch.cat([point[..., None], lower, upper], dim=-1))


def test_quantile_levels_must_be_increasing_levels() -> None:
    for bad in ([95, 80], [0], [100], [80, 80]):
        with pytest.raises(ConfigError, match="quantile_levels"):
            _quantile_model(levels=bad)


def _calibrated_bundle(root: Path, name: str, *, quantile: bool) -> Path:
    """A small bundle with a real calibration from synthetic validation windows."""
    from test_service import COLUMNS, HORIZON, INPUT_SIZE

    path = make_bundle(root, name)
    bundle = load_bundle(path)
    model = _quantile_model() if quantile else bundle.model
    rng = np.random.default_rng(4)
    windows = rng.normal(
        bundle.scaler.mean, bundle.scaler.scale, size=(300, INPUT_SIZE + HORIZON, len(COLUMNS))
    )
    outputs = predict_outputs(dataclasses.replace(bundle, model=model), windows[:, :INPUT_SIZE])
    targets = bundle.scaler.transform(windows[:, INPUT_SIZE:])
    method = "quantile" if quantile else "conformal"
    calibration = Calibration.from_scores(
        nonconformity(outputs, targets, method), [80, 95], "300 synthetic windows", method
    )
    shutil.rmtree(path)
    return save_bundle(
        path, model=model, model_name="s3attention", data=bundle.data, scaler=bundle.scaler,
        metrics=bundle.metrics, training=bundle.training, calibration=calibration,
    )  # fmt: skip


@pytest.fixture(scope="module")
def interval_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interval-models")
    make_bundle(root, "uncalibrated")
    _calibrated_bundle(root, "conformal", quantile=False)
    _calibrated_bundle(root, "quantile", quantile=True)
    return root


def _frame_answer(answer: dict) -> pd.DataFrame:
    return pd.DataFrame(answer["forecast"], index=pd.DatetimeIndex(answer["timestamps"], name="date"))


@pytest.mark.parametrize("name", ["conformal", "quantile"])
def test_cli_python_and_http_give_the_same_intervals(
    interval_models: Path, name: str, tmp_path: Path
) -> None:
    """One answer three ways: `forecaster predict --level`, `prediction.forecast` and both HTTP routes
    (values exact: JSON floats and repr() round-trip), in Nixtla's column naming."""
    bundle = load_bundle(interval_models / name)
    for level in (80, 95):
        assert level in bundle.calibration.available_levels()
    frame = history(rows=30, seed=7)
    recent = tmp_path / "recent.csv"
    frame.to_csv(recent)
    table = forecast(bundle, read_history(bundle, recent), levels=[95, 80])
    assert list(table.columns) == [
        f"{column}{suffix}" for column in ("load", "OT")
        for suffix in ("", "-lo-80", "-hi-80", "-lo-95", "-hi-95")
    ]  # fmt: skip
    for column in ("load", "OT"):
        assert (table[f"{column}-lo-95"] <= table[f"{column}-lo-80"]).all()
        assert (table[f"{column}-lo-80"] <= table[column]).all() and (
            table[column] <= table[f"{column}-hi-80"]
        ).all()
        assert (table[f"{column}-hi-80"] <= table[f"{column}-hi-95"]).all()

    written = tmp_path / "forecast.csv"
    assert main(["predict", "--model", str(interval_models / name), "--csv", str(recent), "--level", "80,95",
                 "--output", str(written)]) == 0  # fmt: skip
    pd.testing.assert_frame_equal(
        pd.read_csv(written, index_col=0, parse_dates=True), table, check_freq=False
    )

    with serving(interval_models) as client:
        answer = client.post(f"/v1/models/{name}/forecast", json=body_of(frame, level=[80, 95])).json()
        upload = {"file": ("recent.csv", frame.to_csv(), "text/csv")}
        response = client.post(f"/v1/models/{name}/forecast.csv", files=upload, params={"level": [95, 80]})
        info = client.get(f"/v1/models/{name}").json()
    pd.testing.assert_frame_equal(_frame_answer(answer), table, check_freq=False)
    header, *rows = list(csv.reader(io.StringIO(response.text)))
    assert header == ["date", *table.columns]
    np.testing.assert_array_equal(
        np.array([[float(cell) for cell in row[1:]] for row in rows]), table.to_numpy()
    )
    assert info["intervals"]["method"] == name and 80 in info["intervals"]["levels"]


def test_levels_a_bundle_cannot_answer_are_refused_by_name(interval_models: Path) -> None:
    frame = history(rows=20)
    with serving(interval_models) as client:
        none = client.post("/v1/models/uncalibrated/forecast", json=body_of(frame, level=[80]))
        missing = client.post("/v1/models/quantile/forecast", json=body_of(frame, level=[90]))
        batch = client.post("/v1/models/conformal/forecast",
                            json={"inputs": [body_of(frame), body_of(frame, level=[0])]})  # fmt: skip
        plain = client.post("/v1/models/uncalibrated/forecast", json=body_of(frame))
        info = client.get("/v1/models/uncalibrated").json()
    assert none.status_code == 422 and none.json()["details"][0]["field"] == "level"
    assert (
        "no interval calibration" in none.json()["message"]
        and "forecaster calibrate" in none.json()["message"]
    )
    assert missing.status_code == 422 and "trained at levels 80, 95" in missing.json()["message"]
    assert batch.status_code == 422 and batch.json()["details"][0]["field"] == "inputs[1].level[0]"
    assert plain.status_code == 200 and list(plain.json()["forecast"]) == ["load", "OT"]
    assert info["intervals"] is None


def test_a_bundle_from_before_intervals_forecasts_points_and_says_how_to_calibrate(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The v1 fixture has no calibration: points as before; a level gets one line naming the fix; after
    `forecaster calibrate` on its series, the same command answers with intervals."""
    bundle_dir, _ = format_1_bundles("s3attention", tmp_path)
    series_csv = str(FIXTURES / "series.csv")
    bundle = load_bundle(bundle_dir)
    assert bundle.calibration is None
    assert list(forecast(bundle, read_history(bundle, series_csv)).columns) == bundle.data.columns
    with pytest.raises(ConfigError, match="no interval calibration"):
        forecast(bundle, read_history(bundle, series_csv), levels=[80])
    assert main(["predict", "--model", str(bundle_dir), "--csv", series_csv, "--level", "80"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "forecaster calibrate" in error[0]

    assert main(["calibrate", "--model", str(bundle_dir), "--csv", series_csv]) == 0
    assert sorted(path.name for path in bundle_dir.iterdir()) == sorted(
        ["config.json", "weights.safetensors", "metrics.json", CALIBRATION_FILE]
    )  # no staged leftovers
    calibrated = load_bundle(bundle_dir)
    assert (
        calibrated.calibration.method == "conformal" and "validation split" in calibrated.calibration.source
    )
    table = forecast(calibrated, read_history(calibrated, series_csv), levels=[80])
    assert len(table.columns) == 3 * len(bundle.data.columns)


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda t, m: ({**t, "margins": t["margins"] * float("nan")}, m), "must be numbers"),
        (lambda t, m: ({**t, "margins": t["margins"][:, :2]}, m), "expected float32"),
        (lambda t, m: ({**t, "levels": t["levels"].flip(0)}, m), "increasing int64 levels"),
        (lambda t, m: (t, {**m, "method": "magic"}), "'method' must be one of"),
        (lambda t, m: (t, {**m, "filled": "yes"}), "'filled' must be True or False"),
        (lambda t, m: ({**t, "margins": -t["margins"].abs() - 1}, m), "non-negative"),
        # the 80% and 95% rows swapped, or all levels reversed: 80% answered as wide as 95% (h41)
        (lambda t, m: ({**t, "margins": t["margins"].flip(0)}, m), "never smaller at a higher level"),
    ],
)
def test_a_tampered_calibration_file_is_refused_on_load(interval_models, tmp_path, tamper, message) -> None:
    bundle_dir = tmp_path / "conformal"
    shutil.copytree(interval_models / "conformal", bundle_dir)
    path = bundle_dir / CALIBRATION_FILE
    from safetensors import safe_open

    with safe_open(path, framework="pt") as handle:
        metadata = handle.metadata()
    tensors, metadata = tamper(load_file(path), metadata)
    save_file({key: value.contiguous() for key, value in tensors.items()}, path, metadata=metadata)
    with pytest.raises(BundleError, match=message):
        load_bundle(bundle_dir)


def test_an_infinite_margin_of_enough_windows_is_said_damaged_not_short_of_windows() -> None:
    """95% made infinite in a file of 212 windows was refused as "needs at least 19 calibration windows; ...
    calibrated on ... 212 windows: ask a level up to 99" (h41)."""
    scores = np.abs(np.random.default_rng(0).normal(size=(212, 3, 1)))
    calibration = Calibration.from_scores(scores, [], "the validation split, 212 windows", "conformal")
    calibration.margins[94:] = np.inf
    assert calibration.check([80, 94]) == [80, 94]
    with pytest.raises(ConfigError, match=r"^interval level 95 has no finite margin, though the model was "
                       r"calibrated on the validation split, 212 windows: its calibration file is damaged"):
        calibration.check([80, 95])


def test_a_forecast_that_fits_nothing_calibrates_on_every_window_before_test_on_a_short_file() -> None:
    """10 years of months at horizon 12 leave 1 validation window, too few for any interval; naive's
    forecasts of the train split's windows are out of sample too, and calibrate 80% and 95% intervals."""
    from forecaster.api import Forecaster

    months = pd.date_range("2010-01-01", periods=120, freq="MS")
    walk = 100 + np.cumsum(np.random.default_rng(4).normal(0, 1, 120))
    model = Forecaster(model="naive", horizon=12).fit(pd.DataFrame({"month": months, "y": walk}))
    calibration = model.bundle.calibration
    assert calibration.source.startswith("the train split and the validation split, ")
    assert calibration.windows > 2 and {80, 95} <= set(calibration.available_levels())
    assert {"80", "95"} <= set(map(str, model.bundle.metrics["intervals"]))


@pytest.mark.parametrize(("model", "row"), [("drift", 40), ("naive", 30)])
def test_a_typo_in_the_calibration_windows_is_read_as_its_neighbours_value(model: str, row: int) -> None:
    """60 months of 100 +- 5 with one typo (10000): 20 calibration windows, and 95%'s margin is the largest
    of a step's 20 scores. 20 rows before the end the typo was in drift's targets at steps 5 and 6 only, a
    band of 0-9993 there and +-20 at steps 1-4 (h52); 30 rows before, it was a naive window's last input, a
    band of 0-10000 at every step. Calibration forecasts and scores its windows with gross isolated outliers
    filled (the forecasts and the test split's scores read the rows as given)."""
    from forecaster.api import Forecaster

    months = pd.date_range("2019-01-01", periods=60, freq="MS")
    values = (100 + np.random.default_rng(1).normal(0, 5, 60)).round(1)
    values[row] = 10_000
    frame = pd.DataFrame({"m": months, "y": values})
    bundle = Forecaster(model, horizon=6, input_size=18).fit(frame).bundle
    assert bundle.calibration.windows == 20
    margins = bundle.calibration.margins[94, :, 0] * bundle.scaler.scale[0]  # 95%, in original units
    assert margins.max() < 40  # 9893 before at drift's steps 5 and 6, 9900 at every naive step


def test_train_and_calibrate_say_calibration_read_a_typo_as_its_neighbours_value(tmp_path, capsys) -> None:
    """The typo above, filled where calibration reads it and nowhere else: train said nothing of it (h57), so
    a user saw the bands ignore a value the forecasts used. The bundle keeps whether it was (reloaded), and
    train and calibrate say so; on the clean rows they do not."""
    months = pd.date_range("2019-01-01", periods=60, freq="MS")
    values = (100 + np.random.default_rng(1).normal(0, 5, 60)).round(1)
    note = "note: the windows that calibrated the intervals held a value over 20 robust standard deviations"
    for typo in (False, True):
        path, model = tmp_path / f"typo{typo}.csv", tmp_path / f"model{typo}"
        pd.DataFrame({"m": months, "y": np.where(np.arange(60) == 30, 10_000, values) if typo else values}
                     ).to_csv(path, index=False)  # fmt: skip
        argv = ["train", "--csv", str(path), "--model", "naive", "--horizon", "6", "--input-size", "18"]
        with warnings.catch_warnings(record=True) as caught:  # fit warns; the command line prints it
            warnings.simplefilter("always", DataQualityWarning)
            assert main([*argv, "--out", str(model)]) == 0
        said = [warning for warning in caught if note[6:] in str(warning.message)]
        assert load_bundle(model).calibration.filled is typo and len(said) == typo
        assert main(["calibrate", "--model", str(model), "--csv", str(path), "--on", "all"]) == 0
        said = [line for line in capsys.readouterr().out.splitlines() if line.startswith(note)]
        assert load_bundle(model).calibration.filled is typo and len(said) == typo


def test_calibration_windows_are_filled_in_their_own_rows_and_the_windows_given_are_kept() -> None:
    """`scoring.filled`: a gross spike in the rows of the windows, thinned windows and pooled series alike;
    one of 7 robust standard deviations (a real one-off's size, a strike week's) is left to the margins."""
    from forecaster.data.windows import EveryNth, PooledWindows, WindowDataset
    from forecaster.training.scoring import filled

    rows = np.tile(np.array([[1.0], [2.0], [1.5], [2.5]], dtype=np.float32), (6, 1))
    rows[9], rows[17] = 100.0, 17.0  # 44 and 7 robust standard deviations of the jumps
    windows = WindowDataset(rows, 4, 3)
    for kept in (windows, EveryNth(windows, 2), PooledWindows([windows, windows])):
        (scoring, spiked), targets = filled(kept, 1), kept.stacked()[1]  # the windows' own rows kept
        scored = scoring.stacked()[1]
        assert (targets == 100).any() and (scored < 20).all() and (scored == 17).any() and spiked
        assert torch.equal(scored[targets != 100], targets[targets != 100])
    rows[9] = 2.0
    assert filled(WindowDataset(rows, 4, 3), 1)[1] is False  # 7 robust standard deviations: no fill


def test_a_baseline_calibrates_on_the_train_split_too_with_enough_validation_windows(monkeypatch) -> None:
    """A year of days at horizon 14 (input 96; split 7:1:2 at rows 255 and 292): validation's 24 overlapping
    windows are 2 whole horizons; calibrated on them alone, 7 of 40 daily baselines of a simulation covered
    under 0.65 at 80%. The train split's 255 - 96 - 14 + 1 = 146 windows calibrate too now, and beyond
    MAX_SCORES scores they are thinned evenly."""
    from forecaster.api import Forecaster
    from forecaster.training import scoring

    days = pd.date_range("2021-01-01", periods=365, freq="D")
    frame = pd.DataFrame({"day": days, "y": 100 + np.cumsum(np.random.default_rng(5).normal(0, 1, 365))})
    calibration = Forecaster(model="naive", horizon=14, input_size=96).fit(frame).bundle.calibration
    assert calibration.source == "the train split and the validation split, 170 windows"
    monkeypatch.setattr(scoring, "MAX_SCORES", 14 * 60)  # room for 60 windows: 24 of validation, 36 of train
    calibration = Forecaster(model="naive", horizon=14, input_size=96).fit(frame).bundle.calibration
    assert calibration.windows == 24 + 30  # every 5th of the 146, the latest among them


def test_coverage_far_below_the_level_asked_is_said_with_the_remedy(capsys) -> None:
    from forecaster.commands.common import print_metrics

    scores = {"width": 1.0, "interval_score": 2.0}
    intervals = {"80": {"coverage": 0.31, **scores}, "95": {"coverage": 0.9, **scores}}
    metrics = {"mse": 0.5, "mae": 0.5, "mse_step1": 0.1, "windows": 40, "intervals": intervals}
    print_metrics(metrics)
    printed = capsys.readouterr().out
    assert "note: the intervals covered far less of the test split than asked (80% 0.31)" in printed
    assert "--on all" in printed
    metrics["intervals"]["80"]["coverage"] = 0.7  # within sampling noise of overlapping windows
    print_metrics(metrics)
    assert "note:" not in capsys.readouterr().out
    print_metrics({**metrics, "windows": 1})  # one test window: its coverage says little either way
    printed = capsys.readouterr().out
    assert "note: coverage measured on 1 test window(s) says little" in printed and "far less" not in printed
    metrics["intervals"]["95"]["coverage"] = 0.53  # JJ's on 8 windows (h34): far below, said on few too
    print_metrics({**metrics, "windows": 8, "naive": {"mse": 0.25, "mse_step1": 0.2}})
    printed = capsys.readouterr().out.splitlines()
    assert printed[-3:] == [
        "note: on the test split the kept forecast scored above the naive forecast (0.5000 against 0.2500), "
        "on 8 test windows: too little evidence to leave what validation chose; --model naive keeps the "
        "naive forecast",  # "not by enough" of an 18x loss on one window (h43)
        "note: coverage measured on 8 test window(s) says little; `forecaster evaluate` on later rows "
        "measures it again",
        "note: the intervals covered far less of the test split than asked (95% 0.53): the series moved "
        "after the windows that calibrated them; `forecaster calibrate --model M --csv RECENT.csv --on all` "
        "recalibrates on recent rows",
    ]
    print_metrics({**metrics, "mse": 0.0611 + 1e-9, "naive": {"mse": 0.0611, "mse_step1": 0.2}})
    assert "above the naive" not in capsys.readouterr().out  # the naive forecast itself, rounded (h37)
    print_metrics({**metrics, "windows": 80, "naive": {"mse": 0.25, "mse_step1": 0.2}}, trained_here=False)
    printed = capsys.readouterr().out  # `evaluate` of other rows: no choice of validation there
    said = ("note: on these rows the model scored above the naive forecast (0.5000 against 0.2500); "
            "`forecaster train --model naive` keeps the naive forecast\n")
    assert said in printed and "too little evidence" not in printed
    print_metrics({**metrics, "windows": 8}, trained_here=False)  # evaluate told to run evaluate (h38)
    assert "says little; later rows measure" in capsys.readouterr().out


def test_the_test_scores_print_naive_beside_the_model_in_original_units_too(capsys) -> None:
    """A user reads errors in their units: naive's and seasonal naive's MSE are on that line too (they were
    only standardized), and left out where a baseline was not scored in original units."""
    from forecaster.commands.common import print_metrics

    naive = {"mse": 0.9, "mse_original": 123456.0, "mse_step1": 0.2}
    seasonal = {"mse": 0.4, "mse_original": 54321.0, "mse_step1": 0.3}
    metrics = {"mse": 0.5, "mae": 0.5, "mse_original": 61234.5, "mae_original": 201.0, "mse_step1": 0.1,
               "windows": 40, "naive": naive, "seasonal_naive": seasonal}  # fmt: skip
    print_metrics(metrics)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("test MSE 6.123e+04  MAE 201  (original units)  (naive 1.235e+05, seasonal naive "
                        "5.432e+04)")
    print_metrics({**metrics, "naive": {"mse": 0.9, "mse_step1": 0.2}, "seasonal_naive": {"mse": 0.4}})
    assert capsys.readouterr().out.splitlines()[1] == "test MSE 6.123e+04  MAE 201  (original units)"


def test_predict_writes_the_levels_a_calibration_answers_and_warns_of_the_others(tmp_path, capsys) -> None:
    """A calibration of 10 one-step windows answers 80% but not 95% (19 needed): `--level 80,95` writes the
    80% interval with one warning line for 95%; `--level 95` alone is refused."""
    from forecaster.artifacts import write_calibration
    from forecaster.cli import main

    path = tmp_path / "walk.csv"
    walk = 100 + np.cumsum(np.random.default_rng(8).normal(0, 1, 200))
    days = pd.date_range("2024-01-01", periods=200, freq="D")
    pd.DataFrame({"date": days, "y": walk}).to_csv(path, index=False)
    model = tmp_path / "model"
    assert main(["train", "--csv", str(path), "--model", "naive", "--horizon", "1", "--out", str(model)]) == 0
    scores = np.ones((10, 1, 1), np.float32)
    write_calibration(model, Calibration.from_scores(scores, [], "ten windows", "conformal"))
    output = tmp_path / "forecast.csv"
    capsys.readouterr()
    argv = ["predict", "--model", str(model), "--csv", str(path), "--output", str(output), "--level"]
    assert main([*argv, "80,95"]) == 0
    assert list(pd.read_csv(output).columns) == ["date", "y", "y-lo-80", "y-hi-80"]
    warned = [line for line in capsys.readouterr().err.splitlines() if "left out" in line]
    assert len(warned) == 1 and "left out the 95% interval: interval level 95 needs at least 19" in warned[0]
    assert main([*argv, "95"]) == 2


def test_recalibrating_on_every_window_says_what_the_saved_and_later_scores_measure(tmp_path, capsys) -> None:
    """metrics.json scores the calibration made at training (named beside its scores); once `calibrate --on
    all` replaced it, calibrate says those scores are of the old margins, the service's listing says they did
    not score these, and `evaluate --level` of the same file says its coverage is in sample: those windows
    made the margins (it printed 1.000 at 95% on the rows that calibrated it, unsaid)."""
    from service.registry import _intervals

    path, model = tmp_path / "walk.csv", tmp_path / "model"
    days = pd.date_range("2024-01-01", periods=200, freq="D")
    walk = 100 + np.cumsum(np.random.default_rng(9).normal(0, 1, 200))
    pd.DataFrame({"date": days, "y": walk}).to_csv(path, index=False)
    assert main(["train", "--csv", str(path), "--model", "naive", "--horizon", "7", "--out", str(model)]) == 0
    trained = load_bundle(model)
    assert trained.metrics["intervals_calibrated_on"] == trained.calibration.source
    assert _intervals(trained.calibration, trained.metrics)["scored_in_metrics"] is True
    argv = ["evaluate", "--model", str(model), "--csv", str(path), "--level", "80,95"]
    capsys.readouterr()
    assert main(argv) == 0
    assert "in sample" not in capsys.readouterr().out  # calibrated on validation, scored on test

    assert main(["calibrate", "--model", str(model), "--csv", str(path), "--on", "all"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[-1] == (
        f"note: the interval scores in {model / 'metrics.json'} are of the calibration made at training, not "
        f"of these margins; `forecaster evaluate --model {model} --csv LATER.csv --level 80,95` scores these "
        "on later rows"
    )
    recalibrated = load_bundle(model)
    assert recalibrated.data.input_size == 67  # the longest that leaves training as many windows
    assert _intervals(recalibrated.calibration, recalibrated.metrics)["scored_in_metrics"] is False
    assert main(argv) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[-1] == (
        f"note: the intervals were calibrated on every window of {path}, {200 - 67 - 7 + 1} windows: test "
        "windows among "
        "those rows made their margins, and coverage there is in sample; a file of later rows tests them"
    )
    assert main([*argv, "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["intervals_calibrated_on"] == recalibrated.calibration.source


def test_recalibrating_on_few_windows_says_how_few_made_the_margins(tmp_path, capsys) -> None:
    """`calibrate --on all` on a file holding one window (a 36-row training file's test split, h59 F9) made
    margins from one window's errors and said nothing of it; below FEW_WINDOWS it says they are few."""
    path, model = tmp_path / "walk.csv", tmp_path / "model"
    days = pd.date_range("2024-01-01", periods=200, freq="D")
    walk = 100 + np.cumsum(np.random.default_rng(9).normal(0, 1, 200))
    pd.DataFrame({"date": days, "y": walk}).to_csv(path, index=False)
    assert main(["train", "--csv", str(path), "--model", "naive", "--horizon", "7", "--out", str(model)]) == 0
    rows = load_bundle(model).data.input_size + 7
    said = {}
    for windows in (1, 19, 20):
        recent = tmp_path / f"recent{windows}.csv"
        pd.read_csv(path).tail(rows + windows - 1).to_csv(recent, index=False)
        capsys.readouterr()
        assert main(["calibrate", "--model", str(model), "--csv", str(recent), "--on", "all"]) == 0
        said[windows] = capsys.readouterr().out.splitlines()
        assert load_bundle(model).calibration.windows == windows
    assert said[1][0].startswith(f"calibrated on every window of {tmp_path / 'recent1.csv'}, 1 window,")
    assert said[1][2] == (
        "note: 1 window made these margins, their errors pooled over the horizon's steps: little evidence of "
        "how far the series strays; calibrate again on more rows as they come"
    )
    assert said[19][2].startswith("note: 19 windows made these margins")
    assert not any(line.startswith("note: 20 windows") for line in said[20])


def test_intervals_that_missed_the_test_split_are_calibrated_again_on_the_latest_windows(capsys) -> None:
    """A series whose changes grow fivefold after its validation split: the margins of the earlier windows
    cover far less of the test split than asked (h43: 43 of 147 real series; 0.54 / 0.74 of their later
    points at 80% / 95%). Training calibrates the bundle's margins again on the validation and test splits'
    windows, the latest, and says so; the coverage it reports stays that of the first, out of sample."""
    from forecaster.api import Forecaster
    from forecaster.calibration import RECALIBRATED, SCORED_CALIBRATION
    from forecaster.commands.common import print_metrics

    rng = np.random.default_rng(0)
    steps = np.concatenate([rng.normal(0, 1, 270), rng.normal(0, 5, 90)])  # the test split: the last 72
    frame = pd.DataFrame({"y": 100 + np.cumsum(steps)}, index=pd.date_range("2020-01-01", periods=360))
    model = Forecaster("naive", horizon=7, input_size=14).fit(frame)
    intervals = model.metrics["intervals"]
    assert intervals["80"]["coverage"] < 0.65 and intervals["95"]["coverage"] < 0.80
    first, again = model.metrics[SCORED_CALIBRATION], model.bundle.calibration.source
    assert "the train split" in first and model.metrics[RECALIBRATED] == again
    assert again.startswith("the validation split and the test split")
    # the test split's changes are in the margins now: wider than a walk of the earlier ones' 1s
    widths = model.predict(level=[80])
    assert (widths["y-hi-80"] - widths["y-lo-80"]).iloc[0] > 2 * 1.28 * 2
    print_metrics(model.metrics)
    assert "the bundle's are calibrated again on the latest (the validation split and the test split" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize("model", ["naive", None])
def test_intervals_of_no_width_where_the_test_split_erred_are_calibrated_again(model, capsys) -> None:
    """59 equal months and then a new price: every calibration score was 0, the test split's last windows
    erred, and the 80% and 95% bands had no width at every step (h52). Training calibrates again on the
    latest windows, which saw the move, and says why."""
    from forecaster.api import Forecaster
    from forecaster.calibration import RECALIBRATED
    from forecaster.commands.common import print_metrics

    months = pd.date_range("2019-01-01", periods=60, freq="MS")
    frame = pd.DataFrame({"price": [5.0] * 59 + [6.0]}, index=months)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # the default model keeps its naive start
        fitted = (Forecaster(model, horizon=6) if model else Forecaster(horizon=6)).fit(frame)
    assert fitted.metrics[RECALIBRATED].startswith("the validation split and the test split")
    bands = fitted.predict(level=[80, 95]).iloc[0]
    ordered = ["price-lo-95", "price-lo-80", "price", "price-hi-80", "price-hi-95"]
    assert (np.diff(bands[ordered].to_numpy(dtype=float)) > 0).all()
    print_metrics(fitted.metrics)
    said = capsys.readouterr().out
    assert "note: the intervals had no width where the test split erred: the series moved" in said


def test_levels_given_to_the_python_api_train_the_quantile_head_at_them() -> None:
    """A quantile head answers only the levels it was trained at: `Forecaster(level=[50, 80])` fitted and then
    refused `predict()`'s 50% band after the whole fit, and `cross_validation(level=[60])` after the whole
    backtest (h72). The levels asked are trained beside the default ones, and answered in nested bands (a head
    trained without a level refuses it: `test_levels_a_bundle_cannot_answer_are_refused_by_name`)."""
    from forecaster import Forecaster

    steps = np.arange(480)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"y": np.sin(2 * np.pi * steps / 24) + rng.normal(0, 0.3, steps.size)},
                         index=pd.date_range("2024-01-01", periods=steps.size, freq="h"))  # fmt: skip
    options = {"horizon": 8, "input_size": 48, "max_epochs": 2, "limit_train_batches": 4, "lr": 1e-2}
    model = Forecaster("s3attention", level=[50, 80], **options).fit(frame)
    assert model.bundle.calibration.method == "quantile" and model.bundle.calibration.levels == (50, 80, 95)
    table = model.predict()
    assert (table["y-lo-80"] <= table["y-lo-50"]).all() and (table["y-lo-50"] <= table["y"]).all()
    assert (table["y"] <= table["y-hi-50"]).all() and (table["y-hi-50"] <= table["y-hi-80"]).all()
    backtest = Forecaster("s3attention", **options).cross_validation(frame, level=[60])
    assert {"s3attention-lo-60", "s3attention-hi-60"} <= set(backtest.columns)

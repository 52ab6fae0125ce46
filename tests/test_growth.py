"""Seasonal drift in place of seasonal naive where validation cannot hold it and the seasons grew
(`forecaster.training.growth`): three years of monthly rows at horizon 12, five of quarterly at 8."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from forecaster.api import Forecaster
from forecaster.data.series import DataQualityWarning
from forecaster.errors import ConfigError
from forecaster.history import read_history
from forecaster.training.evaluation import calibrate_bundle
from forecaster.training.growth import GROWTH_T, one_step_aicc, season_shows, seasonal_change_t


def test_the_check_is_the_t_statistic_of_the_mean_seasonal_difference() -> None:
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(30, 2)) + np.arange(30)[:, None] * [0.1, 0.0]
    expected = [stats.ttest_1samp(rows[4:, column] - rows[:-4, column], 0.0).statistic for column in (0, 1)]
    np.testing.assert_allclose(seasonal_change_t(rows, 4), expected, rtol=1e-12)
    steady = np.tile(np.arange(4.0), 3)[:, None]  # the same season three times: no change at all
    assert seasonal_change_t(steady, 4)[0] == 0
    assert seasonal_change_t(steady + np.arange(12)[:, None], 4)[0] == np.inf  # every change 4: no doubt


def _months(trend: float, seed: int = 1, rows: int = 48) -> pd.DataFrame:
    """h56 #2: 200 + trend t + 40 sin(2 pi t / 12) + N(0, 6), monthly: 36 rows to train, 12 after."""
    rng, t = np.random.default_rng(seed), np.arange(rows)
    values = 200 + trend * t + 40 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 6, rows)
    return pd.DataFrame({"month": pd.date_range("2020-01-01", periods=rows, freq="MS"), "v": values.round(1)})


def test_the_season_shows_where_last_seasons_value_is_the_better_guess() -> None:
    alternating = np.array([[0.0], [1.0], [0.0], [1.0], [0.0], [1.0]])
    assert season_shows(alternating, 2)[0] == 0  # seasonal differences 0, one-step ones 1
    assert season_shows(np.arange(6.0)[:, None], 2)[0] == 4  # a line: seasonal differences 2, one-step 1


def test_three_years_of_monthly_growth_are_forecast_with_their_trend(tmp_path) -> None:
    """Seasonal naive, kept on the one validation window 36 rows leave, was last year's values: MAE 21.8 over
    the next year, every month below the truth (AutoETS 3.5, AutoARIMA 6.0). Seasonal drift over the 24 rows
    before the test split: scored there out of sample, and about 6 over the next year."""
    frame = _months(trend=2.0)
    with pytest.warns(DataQualityWarning, match="chose as --model auto does"):  # the default model's note
        model = Forecaster(horizon=12, level=[80, 95]).fit(frame.iloc[:36])
    training, metrics = model.bundle.training, model.bundle.metrics
    grew = training["seasons_grew"]
    assert training["candidate"] == "seasonal_drift" and grew["model"] == "seasonal_naive"
    assert grew["t"][0] > GROWTH_T and grew["input_size"] == model.bundle.data.input_size == 24
    assert metrics["mse"] < metrics["seasonal_naive"]["mse"] / 4  # the test split, out of sample
    forecast, truth = model.predict(frame.iloc[:36]), frame["v"].to_numpy()[36:]
    assert np.abs(forecast["v"].to_numpy() - truth).mean() < 8
    assert np.abs(frame["v"].to_numpy()[24:36] - truth).mean() > 18  # seasonal naive's forecast
    inside = (forecast["v-lo-80"] <= truth) & (truth <= forecast["v-hi-80"])
    assert inside.mean() >= 0.8  # seasonal naive's margins, wider than seasonal drift's errors
    assert "the validation split" in model.bundle.calibration.source
    frame.to_csv(tmp_path / "later.csv", index=False)
    later = read_history(model.bundle, tmp_path / "later.csv")
    with pytest.raises(ConfigError, match="give --on all"):
        calibrate_bundle(model.bundle, later)
    assert calibrate_bundle(model.bundle, later, "all").windows == 13  # 48 rows: windows of 24 + 12


def test_the_one_step_aicc_of_each_forecast_is_its_closed_form() -> None:
    """Season 2 over 0 1 0 2 0 3 0 4: from row 2 on, one-step errors -1 2 -2 3 -3 4 (SSE 43; about their
    mean 0.5, 41.5) and seasonal ones 0 1 0 1 0 1 (SSE 3; about their mean, 1.5); k = 6 rows, AICc
    k log(SSE / k) + 2p + 2p(p + 1)/(k - p - 1), p 1 (the variance) or 2 (and the mean)."""
    rows = np.array([0.0, 1, 0, 2, 0, 3, 0, 4])[:, None]
    expected = {"naive": 6 * np.log(43 / 6) + 2 + 1, "drift": 6 * np.log(41.5 / 6) + 4 + 4,
                "seasonal_naive": 6 * np.log(3 / 6) + 2 + 1, "seasonal_drift": 6 * np.log(1.5 / 6) + 4 + 4}
    scores = one_step_aicc(rows, 2)
    assert list(scores) == list(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(scores[name], [value], rtol=1e-12)
    exact = np.arange(30.0)[:, None] + np.tile([0.0, 5.0, -5.0], 10)[:, None]  # a line and a season, no noise
    assert min(one_step_aicc(exact, 3), key=lambda name: one_step_aicc(exact, 3)[name][0]) == "seasonal_drift"


def test_a_season_validation_cannot_hold_replaces_the_unseasoned_choice(tmp_path) -> None:
    """35 months of a season without a trend leave 11 rows before validation: no seasonal candidate, naive
    kept, next year's MAE 31.5. Of naive, drift, seasonal naive and seasonal drift, the 23 rows before the
    test split give seasonal naive the lowest AICc: MAE 5.6; its intervals naive's, calibrated on
    validation."""
    frame = _months(trend=0.0, rows=47)
    with pytest.warns(DataQualityWarning, match="chose as --model auto does"):
        model = Forecaster(horizon=12, level=[80]).fit(frame.iloc[:35])
    training, truth = model.bundle.training, frame["v"].to_numpy()[35:]
    chosen = training["season_chosen"]
    assert training["candidate"] == "seasonal_naive" and "seasons_grew" not in training
    assert chosen["model"] == "naive" and chosen["changes"] == 11 and model.bundle.data.input_size == 12
    assert min(chosen["aicc"], key=lambda name: chosen["aicc"][name][0]) == "seasonal_naive"
    forecast = model.predict(frame.iloc[:35])
    naive = np.abs(frame["v"].iat[34] - truth).mean()
    assert np.abs(forecast["v"].to_numpy() - truth).mean() < 7 < 30 < naive
    assert model.bundle.metrics["mse"] < model.bundle.metrics["naive"]["mse"] / 4  # the test split
    assert ((forecast["v-lo-80"] <= truth) & (truth <= forecast["v-hi-80"])).mean() >= 0.8


def test_a_season_growing_under_a_trend_is_chosen_where_the_season_check_missed_it() -> None:
    """35 months of 200 + 2t and a season (h59 F3): the seasonal differences carry 12 times the slope, so the
    season check's ratio is over 1 and naive was kept, next year's MAE 41.8. The one-step errors' AICc
    chooses seasonal drift over the 23 rows before the test split."""
    frame = _months(trend=2.0, rows=47)
    with pytest.warns(DataQualityWarning, match="chose as --model auto does"):
        model = Forecaster(horizon=12).fit(frame.iloc[:35])
    training, truth = model.bundle.training, frame["v"].to_numpy()[35:]
    rows = frame["v"].to_numpy()[:23, None]
    assert season_shows(rows, 12)[0] > 1  # the check alone keeps naive
    assert training["candidate"] == "seasonal_drift" and model.bundle.data.input_size == 23
    assert "season_shows" not in training and training["season_chosen"]["model"] in ("naive", "drift", "mean")
    naive = np.abs(frame["v"].iat[34] - truth).mean()
    assert np.abs(model.predict(frame.iloc[:35])["v"].to_numpy() - truth).mean() < 10 < 30 < naive


def test_eighteen_quarters_of_a_season_show_it_to_the_season_check() -> None:
    """18 quarters at horizon 8 leave 10 rows before the test split, 6 seasonal differences; quarterly files
    are not chosen by AICc (not measured to gain, h61), the season check keeps seasonal naive."""
    rng, t = np.random.default_rng(4), np.arange(18)
    values = 50 + 8 * np.array([1.0, -1.0, 2.0, -2.0])[t % 4] + rng.normal(0, 1, 18)
    labels = pd.period_range("2019Q1", periods=18, freq="Q").astype(str)
    quarters = pd.DataFrame({"quarter": labels, "y": values})
    with pytest.warns(DataQualityWarning, match="chose as --model auto does"):
        training = Forecaster(horizon=8).fit(quarters).bundle.training
    assert training["candidate"] == "seasonal_naive" and training["season_shows"]["ratio"][0] < 0.5
    assert "season_chosen" not in training


def test_too_few_seasonal_differences_say_nothing_of_a_season() -> None:
    """26 months leave 14 rows before the test split, two seasonal differences: no check measured there."""
    with pytest.warns(DataQualityWarning, match="chose as --model auto does"):
        training = Forecaster(horizon=12).fit(_months(trend=0.0).iloc[:26]).bundle.training
    assert "season_shows" not in training and training["candidate"] != "seasonal_naive"


def test_a_season_that_does_not_grow_keeps_seasonal_naive() -> None:
    with pytest.warns(DataQualityWarning, match="chose as --model auto does"):
        training = Forecaster(horizon=12).fit(_months(trend=0.0).iloc[:36]).bundle.training
    assert training["candidate"] == "seasonal_naive" and "seasons_grew" not in training


def test_seasonal_naive_named_or_its_input_given_stays() -> None:
    growing = _months(trend=2.0).iloc[:36]
    for named in (Forecaster("seasonal_naive", horizon=12), Forecaster("auto", horizon=12, input_size=12)):
        training = named.fit(growing).bundle.training
        assert training["candidate"] == "seasonal_naive" and "seasons_grew" not in training


def test_five_years_of_quarterly_growth_read_three_seasons() -> None:
    """20 quarters at horizon 8 leave 4 rows before validation, one season: seasonal drift reads the 12
    rows before the test split."""
    rng, t = np.random.default_rng(3), np.arange(20)
    values = 50 + 1.5 * t + 8 * np.array([1.0, -1.0, 2.0, -2.0])[t % 4] + rng.normal(0, 1, 20)
    labels = pd.period_range("2019Q1", periods=20, freq="Q").astype(str)
    quarters = pd.DataFrame({"quarter": labels, "y": values})
    with pytest.warns(DataQualityWarning, match="chose as --model auto does"):
        training = Forecaster(horizon=8).fit(quarters).bundle.training
    assert training["candidate"] == "seasonal_drift" and training["seasons_grew"]["input_size"] == 12


def test_train_says_what_was_kept_in_place_of_the_choice(capsys) -> None:
    from forecaster.commands.common import print_training

    shows = {"model": "naive", "ratio": [0.12], "bound": 0.5}
    grew = {"model": "seasonal_naive", "t": [13.6], "changes": 12, "input_size": 24, "bound": 3.0}
    training = {"selection": {"naive": 2.68, "mean": 3.01}, "candidate": "seasonal_drift",
                "parameters": 0, "windows": {"train": 0, "val": 0, "test": 1},
                "season_shows": shows, "seasons_grew": grew}  # fmt: skip
    print_training(training, {"best_val_mse": 2.68})
    said = capsys.readouterr().out
    assert "chose naive (simplest first" in said and "validation MSE 2.6800 (naive's)" in said
    assert "kept seasonal_naive over naive: the rows before the test split show a season (the mean square " \
        "of their seasonal differences 0.12 of their one-step differences', below 0.5)" in said  # fmt: skip
    assert "kept seasonal_drift over seasonal_naive: the seasons before the test split grew (the mean of " \
        "their 12 seasonal differences at t 13.6, beyond 3)" in said  # fmt: skip
    assert "validation holds no window of seasonal_drift's input, so its intervals are naive's" in said
    aicc = {"naive": [40.2], "drift": [41.0], "seasonal_naive": [20.5], "seasonal_drift": [22.1]}
    training = {**training, "candidate": "seasonal_naive", "season_shows": None, "seasons_grew": None,
                "season_chosen": {"model": "mean", "changes": 11, "aicc": aicc}}  # fmt: skip
    print_training(training, {"best_val_mse": 2.68})
    said = capsys.readouterr().out
    assert "kept seasonal_naive over mean: of naive, drift, seasonal naive and seasonal drift, its " \
        "one-step errors over the 11 rows before the test split that follow a season have the lowest " \
        "AICc (naive 40.2, drift 41.0, seasonal_naive 20.5, seasonal_drift 22.1)" in said  # fmt: skip


def test_a_season_it_was_not_measured_on_stays_seasonal_naive() -> None:
    """Three weeks of daily rows growing 2 a day with a weekly season pass the check (t 21.7), but random
    walks pass it as often on such seasons (h59) and no study of real daily series weighed the trade."""
    rng, t = np.random.default_rng(5), np.arange(21)
    values = 100 + 2 * t + 9 * np.array([0, 3, 5, 4, 2, -6, -8])[t % 7] / 5 + rng.normal(0, 1, 21)
    days = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=21, freq="D"), "v": values})
    training = Forecaster(horizon=7).fit(days).bundle.training
    assert training["candidate"] == "seasonal_naive" and "seasons_grew" not in training

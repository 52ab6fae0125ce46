"""The forecasts that fit nothing are also chosen on the train split's windows, out of sample for them: a
validation split of a horizon or two does not choose among them alone."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster.data import TimeSeries
from forecaster.data.series import ReadOptions
from forecaster.data.splits import split_borders
from forecaster.data.windows import window_sets
from forecaster.models import get_model
from forecaster.training.combine import per_column_of
from forecaster.training.fit import Fitted, fit_candidate
from forecaster.training.planning import plan
from forecaster.training.scoring import Score, fits_nothing_reference, history_means, train_split_history
from forecaster.training.settings import TrainSettings
from forecaster.training.workflows import keep_best

HORIZON, INPUT = 13, 48


def _weekly(seed: int) -> np.ndarray:
    """Three years of weekly demand: a yearly wave, a slow trend and a random walk (as a shop's)."""
    rng = np.random.default_rng(seed)
    weeks = np.arange(156)
    wave = 25 * np.sin(2 * np.pi * weeks / 52)
    return 200 + 0.3 * weeks + wave + np.cumsum(rng.normal(0, 2, 156)) + rng.normal(0, 6, 156)


def _series(columns: dict[str, np.ndarray], **options) -> TimeSeries:
    index = pd.date_range("2021-01-04", periods=156, freq="W-MON", name="week")
    frame = pd.DataFrame(columns, index=index)
    return TimeSeries(frame, "W-MON", "weekly.csv", date_col="week", options=ReadOptions(**options))


def _fitted(series: TimeSeries, names: tuple[str, ...], tmp_path: Path) -> tuple[list[Fitted], TrainSettings]:
    settings = TrainSettings(horizon=HORIZON, input_size=INPUT, model_name="auto")
    fitted = []
    for name in names:
        [candidate] = plan(dataclasses.replace(settings, model_name=name), series)
        fitted.append(fit_candidate(series, settings, candidate, tmp_path / name))
    return fitted, settings


def test_the_train_split_errors_line_up_by_the_row_their_targets_start_at() -> None:
    """Oracle: each window's MSE computed directly on the standardized rows; rows before an input fits are
    NaN, and independent series are laid out one after the other, each by its own rows."""
    values = _weekly(0)
    series = _series({"a": values, "b": values[::-1].copy()})
    [candidate] = plan(TrainSettings(horizon=HORIZON, input_size=INPUT, model_name="naive"), series)
    settings = TrainSettings(horizon=HORIZON, input_size=INPUT)
    fitted = fit_candidate(series, settings, candidate, Path("unused"))
    history = fitted.history
    train_end = 109  # 7:1:2 of 156 rows
    scaled = fitted.scaler.transform(series.values)
    assert history.shape == (train_end - HORIZON + 1, 2)
    assert np.isnan(history[:INPUT]).all() and not np.isnan(history[INPUT:]).any()
    for start in (INPUT, 70, train_end - HORIZON):
        expected = ((scaled[start : start + HORIZON] - scaled[start - 1]) ** 2).mean(axis=0)
        np.testing.assert_allclose(history[start], expected, rtol=1e-5)

    short = values.copy()
    short[:39] = np.nan  # the second series starts 39 weeks later: its own split, its own rows
    pooled = _series({"a": values, "b": short}, channels="independent")
    scaler = window_sets(pooled, INPUT, HORIZON, "7:1:2")[0]
    model = get_model("naive", input_size=INPUT, horizon=HORIZON, n_channels=1)
    rows = train_split_history(model, fitted.data, scaler, pooled)
    second_end = split_borders(117, INPUT, "7:1:2")["train"][1]
    first_rows = train_end - HORIZON + 1
    assert rows.shape == (first_rows + second_end - HORIZON + 1, 1)
    assert np.isnan(rows[first_rows : first_rows + INPUT]).all()
    assert not np.isnan(rows[first_rows + INPUT :]).any()
    scaled = scaler.channel(1).transform(short[39:, None])
    expected = ((scaled[INPUT : INPUT + HORIZON] - scaled[INPUT - 1]) ** 2).mean()
    np.testing.assert_allclose(rows[first_rows + INPUT, 0], expected, rtol=1e-5)


def test_a_baseline_lower_on_validation_but_not_on_the_train_split_is_no_reference(tmp_path: Path) -> None:
    """Drift beats naive on the four validation windows of a weekly file with a yearly wave (one horizon of
    13 weeks) and loses on its train split's 49 windows and on test: naive stays the reference. Without the
    train split, drift was kept."""
    series = _series({"demand": _weekly(15)})
    fitted, settings = _fitted(series, ("naive", "drift"), tmp_path)
    naive, drift = fitted
    assert drift.val_mse < naive.val_mse  # the premise: validation alone prefers drift
    means = history_means(drift.history, naive.history)
    assert means is not None and means[0].mean() > means[1].mean()
    kept, _ = keep_best(fitted, series, settings)
    assert kept.candidate.label == "naive"
    blind = [dataclasses.replace(result, history=None) for result in fitted]
    assert keep_best(blind, series, settings)[0].candidate.label == "drift"


def test_each_column_takes_a_baseline_only_where_the_train_split_agrees(tmp_path: Path) -> None:
    """A wave that drift forecasts better on validation only, beside a steady trend drift forecasts better
    everywhere: the first column keeps naive, the second takes drift."""
    trend = 50 + 3.0 * np.arange(156) + np.random.default_rng(2).normal(0, 1, 156)
    series = _series({"wave": _weekly(15), "trend": trend})
    fitted, _ = _fitted(series, ("naive", "drift"), tmp_path)
    combined = per_column_of(fitted, series)
    assert combined.training["columns"] == {"wave": "naive", "trend": "drift"}
    np.testing.assert_array_equal(combined.history[:, 0], fitted[0].history[:, 0], strict=True)
    np.testing.assert_array_equal(combined.history[:, 1], fitted[1].history[:, 1], strict=True)
    blind = [dataclasses.replace(result, history=None) for result in fitted]
    assert per_column_of(blind, series) is None  # drift for both: one forecast, nothing to combine


@pytest.mark.parametrize(("history_lower", "reference"), [(True, 1), (False, 0), (None, 1)])
def test_the_train_split_decides_only_on_the_windows_both_forecasts_read(history_lower, reference) -> None:
    """Lower on validation; on the train split the second forecast (a longer input: its first rows NaN) is
    lower or higher on the rows both read, whatever the rows only the first reads say; None: no history."""
    periods = [[Score(1.0, np.array([1.0])), Score(0.8, np.array([0.8]))]]
    first = np.array([[100.0], [1.0], [1.0], [1.0]])  # its first row is beyond the second's input
    second = np.array([[np.nan], [0.5 if history_lower else 2.0], [0.5], [0.5 if history_lower else 2.0]])
    histories = None if history_lower is None else [first, second]
    assert fits_nothing_reference(periods, 2, histories) == reference


def test_a_column_takes_another_forecast_only_where_the_train_split_clearly_agrees(tmp_path: Path) -> None:
    """Five countries' unemployment, random walks with a 2020 bump, 40 quarters: naive is right for each. On
    one validation window and a handful of train windows, the mean looked lower for a country by chance and
    took it (test MSE 1.55x naive's); only a difference beyond two standard errors of the train split's
    block means moves a column now (scoring.clearly_lower)."""
    rng = np.random.default_rng(1023)
    quarters = pd.period_range("2014Q1", periods=40, freq="Q")
    columns = {}
    for country in ("NO", "PL", "PT", "IE", "GR"):
        rates = 7 + np.cumsum(rng.normal(0, 0.2, 40))
        at = int(np.flatnonzero(quarters == pd.Period("2020Q2"))[0])
        rates[at:] += 3 * np.exp(-0.4 * np.arange(40 - at))
        columns[country] = rates.round(2)
    index = quarters.to_timestamp().rename("quarter")
    series = TimeSeries(pd.DataFrame(columns, index=index), "QS-JAN", "panel.csv", date_col="quarter")
    settings = TrainSettings(horizon=4, input_size=8, model_name="auto")
    fitted = []
    for name in ("naive", "drift", "mean"):
        [candidate] = plan(dataclasses.replace(settings, model_name=name), series)
        fitted.append(fit_candidate(series, settings, candidate, tmp_path / name))
    assert per_column_of(fitted, series) is None


def test_a_reference_the_train_split_refuses_is_said(tmp_path: Path, caplog) -> None:
    """Seasonal naive 5x lower than naive on validation was left out as a reference without a word (h43's
    construction employment): the train split's refusal is said, as a reference kept is."""
    from forecaster.training.references import _better

    fitted, _ = _fitted(_series({"demand": _weekly(15)}), ("naive", "drift"), tmp_path)
    naive, drift = fitted
    with caplog.at_level("INFO", logger="forecaster.training.references"):
        assert not _better(drift, naive, naive.history, HORIZON)
    said = " ".join(record.getMessage() for record in caplog.records)
    scores = f"({drift.val_mse:.4f} against {naive.val_mse:.4f})"
    expected = f"drift forecasts validation better than naive {scores}, not the train split's windows better"
    assert f"{expected} than naive: no reference" in said


@pytest.mark.parametrize(
    ("seasons", "blocks", "shared_history", "reference"),
    [((1, 12, 1), 1, False, 1), ((1, 1, 1), 1, False, 2), ((1, 12, 1), 2, False, 2),
     ((1, 12, 1), 1, True, 2)],
)
def test_with_no_train_split_one_window_does_not_trade_a_season_for_none(
    seasons, blocks, shared_history, reference
) -> None:
    """USAccDeaths (54 months, horizon 18, no train window): naive 0.9608, seasonal naive 0.6434 and a
    2-month mean 0.6164 on the one validation window; the mean became the reference and scored 0.91x
    naive's held-out MAE, seasonal naive 0.47x. A season is given up for none only on two blocks at least
    or where the train split agrees; a forecast without a season replaces another without one as before."""
    periods = [[Score(m, np.full(blocks, m)) for m in (0.9608, 0.6434, 0.6164)]]
    history = np.array([[1.0], [0.9], [1.1]])
    histories = [history, history * 0.7, history * 0.5] if shared_history else None
    assert fits_nothing_reference(periods, 3, histories, list(seasons)) == reference


USACCDEATHS_SEEN = [  # R's datasets::USAccDeaths, monthly US accidental deaths, January 1973 to June 1977
    9007, 8106, 8928, 9137, 10017, 10826, 11317, 10744, 9713, 9938, 9161, 8927,
    7750, 6981, 8038, 8422, 8714, 9512, 10120, 9823, 8743, 9129, 8710, 8680,
    8162, 7306, 8124, 7870, 9387, 9556, 10093, 9620, 8285, 8466, 8160, 8034,
    7717, 7461, 7767, 7925, 8623, 8945, 10078, 9179, 8037, 8488, 7874, 8647,
    7792, 6957, 7726, 8106, 8890, 9299,
]


def test_usaccdeaths_keeps_its_season_over_a_two_month_mean(tmp_path: Path) -> None:
    """The rule above where `keep_best` applies it: the file h48 scored, as `--model auto` fits its
    forecasts that fit nothing (no train window, one validation window); the mean is lower there."""
    index = pd.date_range("1973-01-01", periods=len(USACCDEATHS_SEEN), freq="MS", name="month")
    frame = pd.DataFrame({"deaths": np.array(USACCDEATHS_SEEN, dtype=float)}, index=index)
    series = TimeSeries(frame, "MS", "usaccdeaths.csv", date_col="month", options=ReadOptions())
    settings = TrainSettings(horizon=18, model_name="auto")
    fitted = []
    for name in ("naive", "seasonal_naive", "mean"):
        [candidate] = plan(dataclasses.replace(settings, model_name=name), series)
        fitted.append(fit_candidate(series, settings, candidate, tmp_path / name))
    naive, seasonal, mean = (result.val_mse for result in fitted)
    assert mean < seasonal < naive and all(result.history is None for result in fitted)
    assert keep_best(fitted, series, settings)[0].candidate.label == "seasonal_naive"


def test_a_reference_of_a_yearly_weekly_season_must_be_clearly_better_over_two_seasons(tmp_path, caplog):
    """A reference repeating 52 weeks reads so long an input that the train split holds a block of windows
    or none: melsyd's Business class kept Holt-Winters over 104 of 163 weeks with no train window, 4.95x
    naive held out. Its train split is scored at two seasons' input (`_two_seasons`: the rows before that
    input NaN) and must be clearly lower than naive's: no history, no reference (h50)."""
    from forecaster.training.references import _better, _two_seasons

    weeks = np.arange(300)
    values = 200 + 25 * np.sin(2 * np.pi * weeks / 52) + np.random.default_rng(4).normal(0, 6, 300)
    index = pd.date_range("2015-01-05", periods=300, freq="W-MON", name="week")
    series = TimeSeries(pd.DataFrame({"demand": values}, index=index), "W-MON", "weekly.csv", date_col="week",
                        options=ReadOptions())  # fmt: skip
    settings = TrainSettings(horizon=HORIZON, input_size=120)
    naive, seasonal = (fit_candidate(series, settings, plan(dataclasses.replace(settings, model_name=name),
                                                            series)[0], tmp_path / name)
                       for name in ("naive", "seasonal_naive"))  # fmt: skip
    assert seasonal.model.config.season == 52 and seasonal.data.input_size == 120
    history = _two_seasons(seasonal, series, settings, tmp_path)
    assert history.shape == naive.history.shape == (210 - HORIZON + 1, 1)
    assert np.isnan(history[:104]).all() and not np.isnan(history[104:]).any()
    model = dataclasses.replace(naive, val_errors=seasonal.val_errors + 1.0)  # the reference lower there
    with caplog.at_level("INFO", logger="forecaster.training.references"):
        assert _better(seasonal, model, naive.history, HORIZON)
        assert not _better(seasonal, model, naive.history, HORIZON, lambda reference: None)
    assert "read over two of its seasons (a season of 52 steps or more): no reference" in caplog.text
    assert _better(seasonal, model, naive.history, HORIZON, lambda reference: history)  # the season is plain

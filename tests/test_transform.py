"""Columns forecast in logarithms (`--transform`): where a series' seasonal swings grow with its level (an
airline's passengers), forecasts and intervals come back through exp, so intervals widen with the level
instead of covering a third of the test split at 80%."""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest

from forecaster.api import Forecaster
from forecaster.cli import main
from forecaster.data import DataQualityWarning, Scaler, load_dataset, read_frame
from forecaster.data.scaling import multiplicative
from forecaster.errors import DataError
from forecaster.training.planning import logged_channels
from forecaster.training.settings import TrainSettings


def _monthly(multiplied: bool, months: int = 144, seed: int = 0) -> pd.DataFrame:
    """A level growing 1.2% a month with a yearly season and noise, multiplied into it (swings grow with the
    level) or added (swings of a fixed size)."""
    rng = np.random.default_rng(seed)
    steps = np.arange(months)
    level = 100 * np.exp(0.012 * steps)
    season = 0.25 * np.sin(2 * np.pi * steps / 12) + 0.1 * np.cos(4 * np.pi * steps / 12)
    noise = rng.normal(0, 0.04, months)
    values = level * (1 + season) * np.exp(noise) if multiplied else level + 25 * season + 4 * noise
    dates = pd.date_range("1949-01-01", periods=months, freq="MS")
    return pd.DataFrame({"Month": dates, "Passengers": values.round(1)})


def test_a_scaler_in_logarithms_round_trips_and_reloads_as_it_was_saved():
    values = np.column_stack([np.exp(np.linspace(0, 3, 50)), np.linspace(-5, 5, 50)])
    scaler = Scaler.fit(values, np.array([True, False]))
    scaled = scaler.transform(values)
    np.testing.assert_allclose(scaled.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(scaled[:, 0], (np.linspace(0, 3, 50) - 1.5) / np.linspace(0, 3, 50).std())
    np.testing.assert_allclose(scaler.inverse(scaled), values, rtol=1e-12)
    again = Scaler.from_dict(scaler.to_dict(), n_channels=2)
    np.testing.assert_array_equal(again.logged, [True, False])
    np.testing.assert_allclose(again.inverse(scaled), values, rtol=1e-12)
    assert "log" not in Scaler.fit(values).to_dict()  # bundles without logarithms are written as before
    for tampered in ([1, 0], [True], "true"):
        with pytest.raises(DataError, match="scaler 'log' must be a list of 2 true/false values"):
            Scaler.from_dict({**scaler.to_dict(), "log": tampered}, n_channels=2)
    with pytest.raises(DataError, match="at or below 0"):
        Scaler.fit(values, np.array([False, True]))


def test_swings_that_grow_with_the_level_are_told_from_swings_of_a_fixed_size():
    """Guerrero's criterion at lambda 0 against 1, held clearly: multiplied swings only."""
    assert multiplicative(_monthly(True)["Passengers"].to_numpy(), 12)
    assert not multiplicative(_monthly(False)["Passengers"].to_numpy(), 12)
    flat = 1000 + _monthly(True)["Passengers"].to_numpy() / 100  # a level that barely moves: no evidence
    assert not multiplicative(flat, 12)
    with_zero = _monthly(True)["Passengers"].to_numpy().copy()
    with_zero[70] = 0
    assert not multiplicative(with_zero, 12) and not multiplicative(with_zero[:36], 12)  # 3 seasons: too few
    assert not multiplicative(np.arange(1.0, 61.0), 7)  # a straight ramp: weeks on their lines, no swings


def _simulated(kind: str, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A series' first 70% of rows and its season: multiplied swings (`mult`) or added ones (`add`) on a
    growing level, weekly of five years (`w_`), daily with a weekday cycle (`d_`), quarterly (`q_`)."""
    frequency, swings = kind.split("_")
    season, rows, growth = {"w": (52, 260, 0.004), "d": (7, 600, 0.0015), "q": (4, 84, 0.02)}[frequency]
    steps = np.arange(rows)
    cycle = 0.2 * np.sin(2 * np.pi * steps / season + 0.3) + 0.05 * np.cos(4 * np.pi * steps / season)
    if frequency == "d":
        cycle = np.array([0.25, 0.1, 0.05, 0.0, 0.1, -0.2, -0.3])[steps % 7]
    level = 100 * np.exp(growth * steps)
    noise = rng.normal(0, 0.02, rows)
    values = level * np.exp(cycle + noise) if swings == "mult" else level + 20 * cycle + 100 * noise
    return values[: int(0.7 * rows)], season


@pytest.mark.parametrize(("kind", "fewest", "most"), [
    ("d_mult", 16, 20), ("q_mult", 16, 20), ("w_add", 0, 0), ("d_add", 0, 0), ("q_add", 0, 0),
])  # fmt: skip
def test_multiplied_swings_are_found_daily_and_quarterly_and_added_ones_never(kind, fewest, most):
    """Over 20 seeds: a weekday cycle was absorbed by each week's line, and quarterly seasons missed one time
    in six; added swings on the same growth must never be taken for multiplied."""
    found = sum(multiplicative(*_simulated(kind, np.random.default_rng(seed))) for seed in range(20))
    assert fewest <= found <= most


def test_a_registered_dataset_is_standardized_only_and_log_refuses_values_at_or_below_zero(data_dir):
    """The papers' datasets keep their protocol (standardized, no logarithms) whatever their swings."""
    ett = load_dataset("ETTh1")
    assert ett.dataset == "ETTh1" and logged_channels(ett, TrainSettings(horizon=24)) is None
    negative = read_frame(_monthly(True).assign(Passengers=lambda frame: frame["Passengers"] - 150))
    with pytest.raises(DataError, match="'Passengers' hold\\(s\\) values at or below 0; expected positive"):
        logged_channels(negative, TrainSettings(horizon=12, transform="log"))
    assert logged_channels(negative, TrainSettings(horizon=12)) is None  # auto: as it is
    assert logged_channels(read_frame(_monthly(True)), TrainSettings(horizon=12)) is not None


def test_an_airline_like_series_is_forecast_in_logarithms_with_honest_intervals(tmp_path, capsys):
    """Seasonal naive on a multiplied season: its forecasts are the same in logarithms (the test MSE in
    original units must agree to rounding: the exp path of the metrics), its 80% intervals cover about 80%
    of the test split instead of a third, and predict refuses a 0 it cannot take the logarithm of."""
    frame = _monthly(True)
    runs = {}
    for transform in ("none", None):
        said = pytest.warns(DataQualityWarning, match="forecast 'Passengers' in logarithms")
        with said if transform is None else contextlib.nullcontext():
            model = Forecaster("seasonal_naive", horizon=12, transform=transform).fit(frame)
        runs[transform] = model
    logged, plain = runs[None], runs["none"]
    np.testing.assert_array_equal(logged.bundle.scaler.logged, [True])
    assert plain.bundle.scaler.log is None
    assert logged.metrics["mse_original"] == pytest.approx(plain.metrics["mse_original"], rel=1e-6)  # float32
    covered = {name: run.metrics["intervals"]["80"]["coverage"] for name, run in runs.items()}
    assert covered["none"] < 0.5 and 0.7 <= covered[None] <= 0.95, covered
    forecast = logged.predict(level=[80])
    width = forecast["Passengers-hi-80"] - forecast["Passengers-lo-80"]
    np.testing.assert_allclose(forecast["Passengers"], frame["Passengers"].iloc[-12:].to_numpy(), rtol=1e-6)
    assert (forecast["Passengers-lo-80"] > 0).all()
    ratios = width / forecast["Passengers"]  # a step's interval is a multiple of its forecast
    assert ratios.max() / ratios.min() < 3 and (ratios > 0).all()
    model, recent = tmp_path / "model", tmp_path / "recent.csv"
    logged.save(model)
    frame.assign(Passengers=frame["Passengers"].where(frame.index != 140, 0)).to_csv(recent, index=False)
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--csv", str(recent)]) == 2
    said = "0 in column 'Passengers', which the model forecasts in logarithms"
    assert said in capsys.readouterr().err
    from test_service import serving

    sent = frame.iloc[-48:]
    values = sent["Passengers"].where(sent.index != 140, 0).tolist()
    body = {"timestamps": sent["Month"].astype(str).tolist(), "values": {"Passengers": values}}
    with serving(tmp_path) as client:
        answer = client.post("/v1/models/model/forecast", json=body)
        described = client.get("/v1/models/model").json()
    assert answer.status_code == 422 and said in answer.json()["message"], answer.text
    assert described["logarithms"] == ["Passengers"]


def test_a_season_longer_than_the_values_is_no_evidence_and_allocates_nothing():
    """A day of microsecond steps is a season of 86.4 billion: the moving average over it asked numpy for
    644 GiB (an internal error), a day of 100-microsecond steps took 155 s and 13 GiB (h45 #3)."""
    values = np.exp(np.linspace(0, 3, 400)) * (2 + np.sin(np.arange(400)))
    assert not multiplicative(values, 86_400_000_000)
    index = pd.date_range("2024-05-01 12:00", periods=400, freq="1us")
    frame = pd.DataFrame({"a": values}, index=index)
    forecast = Forecaster("naive", horizon=6).fit(frame).predict()
    assert list(forecast.index) == list(pd.date_range(index[-1], periods=7, freq="1us")[1:])


def test_a_yearly_level_falling_a_hundredfold_is_forecast_in_logarithms_with_intervals_at_its_level():
    """22 yearly counts falling from 1000 to 10.3: without a season no column was judged, naive's margins
    from windows in the hundreds gave an 80% interval of [0, 104] at 10.3 (h82 F18). Its swings about a line
    shrink with its level (`_about_steps`): it is forecast in logarithms, its intervals at its level; a
    yearly series growing by a fixed step, and one whose level moves less than LOG_SPAN, are not."""
    years = np.arange(22)
    cases = (1000 * np.exp(-0.22 * years) * (1 + 0.05 * np.sin(years))).round(1)
    frame = pd.DataFrame({"cases": cases}, index=pd.date_range("2000-01-01", periods=22, freq="YS"))
    assert multiplicative(cases[:15], None)
    gdp = 100 + 3 * years + np.random.default_rng(1).normal(0, 1, 22)
    assert not multiplicative(gdp, None) and not multiplicative(cases[8:] + 100, None)
    with pytest.warns(DataQualityWarning, match="forecast 'cases' in logarithms"):
        model = Forecaster("naive", horizon=4, level=[80]).fit(frame)
    ahead = model.predict()
    assert ahead["cases-lo-80"].min() > 3 and ahead["cases-hi-80"].iloc[0] < 20

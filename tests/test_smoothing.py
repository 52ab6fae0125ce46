"""Holt-Winters smoothing (`holt_winters`): against a scalar loop of the textbook recursions over the whole
grid, closed forms (a repeating season, a constant), its place among the baselines and the input it reads."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from forecaster.data.splits import earlier_period, split_borders
from forecaster.errors import ConfigError
from forecaster.models import fits_nothing, get_model
from forecaster.models.baselines import NOTHING_TO_FIT
from forecaster.models.smoothing import ALPHAS, BETAS, GAMMAS, PHIS, TREND_START_STEPS
from forecaster.training.planning import SMOOTHING_HISTORY, plan, split_for
from forecaster.training.settings import TrainSettings


def smoothed_by_hand(y: list[float], horizon: int, season: int) -> list[float]:
    """ETS(A,Ad,A) one series at a time (Hyndman & Athanasopoulos, FPP3 8.3, error-correction form), every
    grid point tried in turn, the lowest one-step squared error kept (the first of equals)."""
    best, forecast = math.inf, None
    for alpha in ALPHAS:
        for beta in BETAS:
            for phi in PHIS:
                for gamma in GAMMAS if season > 1 else (0.0,):
                    if season > 1:  # the line through the two first seasons' means, level at its first end
                        first, second = sum(y[:season]) / season, sum(y[season : 2 * season]) / season
                        trend = (second - first) / season
                        line = [first + trend * (t - (season - 1) / 2) for t in range(2 * season)]
                        off = [value - on_line for value, on_line in zip(y, line, strict=False)]
                        states = [(off[p] + off[season + p]) / 2 for p in range(season)]
                        states = [state - sum(states) / season for state in states]
                        level, start = line[season - 1], season
                    else:
                        steps = min(len(y) - 1, TREND_START_STEPS)
                        level, trend, states, start = y[0], (y[steps] - y[0]) / steps, [0.0], 1
                    total = 0.0
                    for t in range(start, len(y)):
                        error = y[t] - (level + phi * trend + states[t % season])
                        total += error * error
                        level, trend = level + phi * trend + alpha * error, phi * trend + alpha * beta * error
                        states[t % season] += gamma * (1 - alpha) * error
                    if total < best:
                        ahead = range(1, horizon + 1)
                        damped = [sum(phi**k for k in range(1, h + 1)) for h in ahead]
                        best = total
                        seasons = [states[(len(y) - 1 + h) % season] for h in ahead]
                        forecast = [level + damped[h - 1] * trend + seasons[h - 1] for h in ahead]
    return forecast


@pytest.mark.parametrize(("season", "length"), [(1, 2), (1, 30), (4, 9), (12, 60)])
def test_each_window_is_smoothed_under_the_grid_point_that_fits_it_best(season: int, length: int) -> None:
    rng = np.random.default_rng(season * 100 + length)
    steps = np.arange(length)
    seasonal = 3 * np.sin(2 * np.pi * steps / season)[None, :, None]
    windows = np.cumsum(rng.normal(size=(3, length, 2)), axis=1) + seasonal
    model = get_model("holt_winters", input_size=length, horizon=7, n_channels=2, season=season)
    assert fits_nothing(model)
    forecast = model(torch.tensor(windows)).numpy()
    for b in range(3):
        for c in range(2):
            expected = smoothed_by_hand(windows[b, :, c].tolist(), 7, season)
            np.testing.assert_allclose(forecast[b, :, c], expected, rtol=1e-9, atol=1e-9)


def test_a_repeating_season_and_a_constant_are_forecast_exactly() -> None:
    season = np.array([1.0, 4.0, -2.0, 0.5, 3.0, -1.0])
    repeated = np.tile(season, 5)[None, :, None] + 10.0  # 30 steps: no error, the season continues
    model = get_model("holt_winters", input_size=30, horizon=9, n_channels=1, season=6)
    forecast = model(torch.tensor(repeated))[0, :, 0]
    np.testing.assert_allclose(forecast, np.tile(season, 2)[:9] + 10.0, atol=1e-12)
    constant = torch.full((2, 20, 3), 7.5)
    flat = get_model("holt_winters", input_size=20, horizon=4, n_channels=3)(constant)
    assert flat.dtype == torch.float32 and torch.equal(flat, torch.full((2, 4, 3), 7.5))


def test_many_series_are_smoothed_in_chunks_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    windows = torch.randn(5, 24, 4, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    model = get_model("holt_winters", input_size=24, horizon=5, n_channels=4, season=4)
    whole = model(windows)
    monkeypatch.setattr("forecaster.models.smoothing.CHUNK_STATES", 1)  # one series a chunk
    torch.testing.assert_close(model(windows), whole, rtol=0, atol=0)
    assert model(windows[:0]).shape == (0, 5, 4)


def test_a_season_needs_two_in_the_input() -> None:
    with pytest.raises(ConfigError, match="'season' must be at most half of input_size \\(9\\)"):
        get_model("holt_winters", input_size=9, horizon=3, n_channels=1, season=5)


def test_the_defaults_smooth_the_longest_history_the_rows_hold_with_the_data_s_season_or_none() -> None:
    """A user file plans Holt-Winters last of the baselines, on the longest input the rows hold (up to
    SMOOTHING_HISTORY) that leaves the earlier validation period the others have (without it, that period's
    check was dropped for every candidate: one validation window chose for all), its season the
    frequency's where two fit, and none (season 1) for yearly rows."""
    from forecaster.data import read_frame

    rng = np.random.default_rng(0)
    for freq, rows, season in (("MS", 144, 12), ("YS", 40, 1), ("h", 2000, 24), ("QS", 60, 4)):
        index = pd.date_range("2000", periods=rows, freq=freq)
        frame = pd.DataFrame({"y": rng.normal(size=rows).cumsum()}, index=index)
        series = read_frame(frame)
        settings = TrainSettings(model_name="auto", horizon=6)
        candidates = {candidate.label: candidate for candidate in plan(settings, series)}
        smoothing = candidates["holt_winters"]
        baselines = [label for label in candidates if label in NOTHING_TO_FIT]
        assert baselines[-1] == "holt_winters" and baselines[0] == "naive"
        assert smoothing.model_options == {"season": season}
        longest = smoothing.input_size
        assert longest == SMOOTHING_HISTORY if rows == 2000 else longest > 0.45 * rows
        for candidate in (candidates["naive"], smoothing):
            borders = split_borders(rows, candidate.input_size, split_for(series, settings), freq, horizon=6)
            assert earlier_period(borders, candidate.input_size, 6, trained=False) is not None

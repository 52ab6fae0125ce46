"""Holt-Winters smoothing (`holt_winters`): against a scalar loop of the textbook recursions over the whole
grid, closed forms (a repeating season, a constant), its place among the baselines and the input it reads."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import torch

from forecaster.data.splits import earlier_period, split_borders
from forecaster.errors import ConfigError
from forecaster.models import fits_nothing, get_model, smoothing
from forecaster.models.baselines import NOTHING_TO_FIT
from forecaster.models.smoothing import ALPHAS, BETAS, GAMMAS, MIN_REFIT_SEASON, PHIS, TREND_START_STEPS
from forecaster.training.planning import SMOOTHING_HISTORY, plan, split_for
from forecaster.training.settings import TrainSettings


def run_by_hand(
    y: list[float], season: int, grid_point: tuple, start: list[float], clip: bool = True
) -> tuple[list, list]:
    """The one-step errors and the end states (level, trend, seasonal...) from the start states, the last
    error clipped at LAST_ERROR robust standard deviations of the earlier ones (`clip`)."""
    alpha, beta, phi, gamma = grid_point
    level, trend, states = start[0], start[1], list(start[2:])
    errors = []
    for t in range(season if season > 1 else 1, len(y)):
        error = y[t] - (level + phi * trend + states[t % season])
        if clip and t == len(y) - 1 and len(errors) >= smoothing.MIN_CLIP_ERRORS:
            earlier = torch.tensor([errors], dtype=torch.float64)
            bound = smoothing.LAST_ERROR * smoothing.robust_scale(earlier).item()
            error = min(max(error, -bound), bound) if bound > 0 else error
        errors.append(error)
        level, trend = level + phi * trend + alpha * error, phi * trend + alpha * beta * error
        states[t % season] += gamma * (1 - alpha) * error
    return errors, [level, trend, *states]


def smoothed_by_hand(y: list[float], horizon: int, season: int) -> list[float]:
    """ETS(A,Ad,A) one series at a time (Hyndman & Athanasopoulos, FPP3 8.3, error-correction form), every
    grid point tried in turn, the lowest one-step squared error kept (the first of equals); with a season,
    also every grid point from the start states that minimise it (least squares on the errors' numerical
    slopes), kept instead where AICc prefers it, the season is 12 steps or more and the series' steps
    correlate positively at its lag."""
    change = np.diff(y) - np.mean(np.diff(y))
    refitting = season >= MIN_REFIT_SEASON and np.sum(change[season:] * change[:-season]) > 0
    if season > 1:  # the line through the two first seasons' means, level at its first end
        first, second = sum(y[:season]) / season, sum(y[season : 2 * season]) / season
        trend = (second - first) / season
        line = [first + trend * (t - (season - 1) / 2) for t in range(2 * season)]
        off = [value - on_line for value, on_line in zip(y, line, strict=False)]
        states = [(off[p] + off[season + p]) / 2 for p in range(season)]
        start = [line[season - 1], trend, *[state - sum(states) / season for state in states]]
    else:
        steps = min(len(y) - 1, TREND_START_STEPS)
        start = [y[0], (y[steps] - y[0]) / steps, 0.0]
    best, refit = (math.inf, None), (math.inf, None)
    for grid_point in itertools.product(ALPHAS, BETAS, PHIS, GAMMAS if season > 1 else (0.0,)):
        errors, end = run_by_hand(y, season, grid_point, start)
        if sum(e * e for e in errors) < best[0]:
            best = (sum(e * e for e in errors), (grid_point, end))
        if refitting:  # the clipped errors moved along the unclipped recursions' slopes, as the model does
            units = np.eye(len(start))
            free, free_end = run_by_hand(y, season, grid_point, start, clip=False)
            moves = [run_by_hand(y, season, grid_point, list(start + unit), clip=False)[0] for unit in units]
            slopes = np.array(moves).T - np.array(free)[:, None]
            move = np.linalg.lstsq(slopes, -np.array(errors), rcond=None)[0]
            moved_errors = list(np.array(errors) + slopes @ move)
            moved_free_end = run_by_hand(y, season, grid_point, list(start + move), clip=False)[1]
            moved_end = list(np.array(end) + np.array(moved_free_end) - np.array(free_end))
            if sum(e * e for e in moved_errors) < refit[0]:
                refit = (sum(e * e for e in moved_errors), (grid_point, moved_end))
    steps = len(errors)
    refit_aicc = steps * math.log(max(refit[0], 0.0) or 1e-300) + smoothing.aicc_penalty(steps, 5 + season)
    if refitting and refit_aicc < steps * math.log(best[0] or 1e-300) + smoothing.aicc_penalty(steps, 4):
        best = refit
    (_, _, phi, _), (level, trend, *states) = best[1]
    ahead = range(1, horizon + 1)
    damped = [sum(phi**k for k in range(1, h + 1)) for h in ahead]
    return [level + damped[h - 1] * trend + states[(len(y) - 1 + h) % season] for h in ahead]


@pytest.mark.parametrize(("season", "length"), [(1, 2), (1, 30), (4, 9), (4, 40), (12, 60)])
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


def test_a_season_that_moves_fast_is_forecast_as_the_process_that_made_it() -> None:
    """Quarters drawn from ETS(A,Ad,A) at gamma 0.6 (1 - alpha), a season that moves faster than gamma 0.3
    lets it (AutoETS's fits on h77's seasonal series, 0.4-0.8), from two seasons on the start line: at its
    own grid point the one-step errors are the draws, no other point fits them as closely, and the forecast
    is the process's own, level + (phi + ... + phi^h) trend + season, from its end states."""
    alpha, beta, phi, gamma = 0.3, 0.05, 0.9, 0.6
    level, trend, states = 10.0, 0.0, [3.0, -1.0, -4.0, 2.0]
    series = [level + state for state in states * 2]
    for t, error in enumerate(np.random.default_rng(0).normal(size=112), start=8):
        series.append(level + phi * trend + states[t % 4] + error)
        level, trend = level + phi * trend + alpha * error, phi * trend + alpha * beta * error
        states[t % 4] += gamma * (1 - alpha) * error
    damped = [sum(phi**k for k in range(1, h + 1)) for h in range(1, 9)]
    expected = [level + damped[h - 1] * trend + states[(119 + h) % 4] for h in range(1, 9)]
    model = get_model("holt_winters", input_size=120, horizon=8, n_channels=1, season=4)
    forecast = model(torch.tensor(series)[None, :, None])[0, :, 0]
    np.testing.assert_allclose(forecast, expected, atol=1e-9)  # HEAD's grid (gammas to 0.3): 0.59 away


def test_a_damped_trend_the_start_misreads_is_forecast_exactly_from_refitted_start_states() -> None:
    """Without errors from its true start the model forecasts itself; the line through the first two seasons'
    means misreads a damped trend, and the least-squares start (chosen by AICc) recovers it."""
    season = np.array([2.0, -1.0, 0.5, -1.5, 3.0, 1.0, -2.5, 0.0, 1.5, -0.5, -1.0, -0.5])
    steps = np.arange(72)
    damped = np.cumsum(0.98 ** np.arange(1, 73))  # phi + ... + phi^(t + 1)
    series = 5.0 + 0.7 * damped + season[steps % 12]
    model = get_model("holt_winters", input_size=60, horizon=12, n_channels=1, season=12)
    forecast = model(torch.tensor(series[None, :60, None]))[0, :, 0]
    np.testing.assert_allclose(forecast, series[60:], atol=1e-8)


def test_a_wave_of_another_period_keeps_the_heuristic_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """test_selection's rate, 5 + sin(months / 6) read with a season of 12: a refitted start fits it closely
    in-sample (AICc would take it) and forecasts it worse; its steps correlate negatively at lag 12, so the
    start stays the line through the first two seasons."""
    wave = torch.tensor(5 + np.sin(np.arange(63) / 6))[None, :, None]
    model = get_model("holt_winters", input_size=63, horizon=6, n_channels=1, season=12)
    assert smoothing.season_lag_correlation(wave[:, :, 0], 12).item() < 0
    forecast = model(wave)
    monkeypatch.setattr(smoothing, "MIN_REFIT_SEASON", 13)  # no refit at all
    torch.testing.assert_close(forecast, model(wave), rtol=0, atol=0)
    monkeypatch.setattr(smoothing, "MIN_REFIT_SEASON", 12)
    monkeypatch.setattr(smoothing, "season_lag_correlation", lambda y, season: torch.ones(len(y)))
    assert not torch.equal(forecast, model(wave))  # the refit, let through, would move it


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


@pytest.mark.parametrize("share", [0.08, 0.4, 2.0, 5.0])
def test_a_partial_or_double_counted_last_month_moves_the_forecast_as_a_clipped_error(share: float) -> None:
    """h62 F1's 96 months of sales (~250 a month, a season), the last exported mid-month (8%, 40% of its
    level) or counted twice or five times: its one-step error, unclipped, had moved the level and the damped
    trend (40%: 274 -> 52 within six months; 8%: 0). It is clipped at LAST_ERROR robust standard deviations
    of the earlier one-step errors, so the forecast stays near the full month's; a last error within that
    bound is read as given."""
    rng = np.random.default_rng(5)
    months = np.arange(96)
    sales = 200 + months + 40 * np.sin(months * np.pi / 6) + rng.normal(0, 5, 96)
    model = get_model("holt_winters", input_size=96, horizon=12, n_channels=1, season=12)
    full = model(torch.tensor(sales[None, :, None]))[0, :, 0].numpy()
    exported = sales.copy()
    exported[-1] *= share
    forecast = model(torch.tensor(exported[None, :, None]))[0, :, 0].numpy()
    assert np.abs(forecast - full).max() < 0.15 * full.min()  # unclipped: 0.90-3.6 x its lowest month
    error, earlier = torch.tensor([[3.0, -40.0]]), torch.tensor([[[1.0, -1.0, 2.0, -2.0]] * 2])
    bound = smoothing.LAST_ERROR * smoothing.robust_scale(earlier[0, :1]).item()
    torch.testing.assert_close(smoothing.clipped_last(error, earlier), torch.tensor([[3.0, -bound]]))

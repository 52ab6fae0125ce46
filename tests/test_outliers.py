"""Isolated outliers: found by their jumps, filled for Holt-Winters and seasonal mean (gross ones for seasonal
naive, seasonal drift and the mean), said in a note."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from forecaster import Forecaster
from forecaster.data.series import DataQualityWarning
from forecaster.models.outliers import fill_isolated, fill_runs, isolated_outliers

MONTHS = pd.date_range("2016-01-01", periods=96, freq="MS")


def _seasonal(seed: int = 3) -> np.ndarray:
    """96 months of 200 + 50 sin(month) and noise of sd 8, whole numbers (h52's repro)."""
    noise = np.random.default_rng(seed).normal(0, 8, 96)
    return np.round(200 + 50 * np.sin(2 * np.pi * np.arange(96) / 12) + noise)


def _flags(values: np.ndarray, season: int = 12) -> np.ndarray:
    flags, _, _ = isolated_outliers(torch.tensor(values, dtype=torch.float64)[None], season)
    return np.flatnonzero(flags[0].numpy())


@pytest.mark.parametrize("where", [89, 94, 1])  # inside; next to the last cell, or the first
def test_a_typo_is_flagged_and_filled_near_the_value_it_replaced(where: int) -> None:
    clean = _seasonal()
    spiked = clean.copy()
    spiked[where] *= 20
    assert _flags(clean).size == 0
    assert _flags(spiked).tolist() == [where]
    filled = fill_isolated(torch.tensor(spiked)[None], 12)[0].numpy()
    assert abs(filled[where] - clean[where]) < 6 * 8  # its neighbours' mean: not the 20x typo
    np.testing.assert_array_equal(np.delete(filled, where), np.delete(spiked, where))


@pytest.mark.parametrize(
    "case",
    ["new level", "two far values in a row", "the last value", "a peak that grows every season"],
)
def test_what_moves_more_than_one_cell_or_ends_the_window_is_not_flagged(case: str) -> None:
    values = _seasonal()
    if case == "new level":
        values[60:] += 400
    elif case == "two far values in a row":
        values[70:72] *= 20
    elif case == "the last value":  # the cell before it had looked isolated, filled with half of it
        values[-1] *= 20
    else:  # every March far above the others, further each year (fpp3's souvenirs)
        values[2::12] += 100 * np.arange(1, 9)
    assert _flags(values).size == 0


@pytest.mark.parametrize(
    ("model", "back"),
    [("holt_winters", 6), ("seasonal_mean", 15), ("seasonal_naive", 6), ("seasonal_drift", 6),
     ("seasonal_drift", 18), ("mean", 6)],
)  # fmt: skip
def test_one_typo_no_longer_moves_a_baselines_forecast_and_is_said(model: str, back: int) -> None:
    """A cell times 20 six months back made Holt-Winters forecast every month of the next year at about twice
    its level (404 where the clean file says 197); 15 months back, seasonal mean pulled the other months down
    by 85 (h52). Seasonal naive repeated it as next year's month, and seasonal drift's change between seasons
    carried it into every month (h62). The mean averaged it in (h102 F2)."""
    clean = _seasonal()
    spiked = clean.copy()
    spiked[-back] *= 20

    def forecast(values: np.ndarray) -> tuple[np.ndarray, list[str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataQualityWarning)
            fitted = Forecaster(model, horizon=12).fit(pd.DataFrame({"sales": values}, index=MONTHS))
        said = [str(warning.message) for warning in caught]
        notes = [note for note in said if "fitted as if it were" in note]  # calibration's note aside
        return fitted.predict()["sales"].to_numpy(), notes

    (expected, clean_notes), (answered, notes) = forecast(clean), forecast(spiked)
    np.testing.assert_allclose(answered, expected, rtol=0.08)
    assert clean_notes == []
    when = MONTHS[-back].date()
    assert len(notes) == 1 and f"'sales' at {when}: {spiked[-back]:g} is " in notes[0]
    assert f"{model} fitted as if it were" in notes[0]
    assert notes[0].endswith("(the row is used as given everywhere else)")


def test_one_big_order_among_weekly_counts_leaves_the_mean_and_its_band_where_the_weeks_are() -> None:
    """h102 F2: weekly counts (3 weeks in 10 an order of 1-3) with one order of 60 five weeks before the end:
    the mean forecast 1.95 a week, its 80% band 0.89-3.02 covering no week of 0, the commonest count. The note
    names the weeks of 0 around it as 0, not the scaler's round trip (4.58e-16, h107 R5)."""
    rng = np.random.default_rng(102)
    weeks = np.where(rng.random(143) < 0.3, rng.integers(1, 4, 143), 0).astype(float)
    weeks[-6:-3] = 0, 60, 0
    frame = pd.DataFrame({"value": weeks}, index=pd.date_range("2022-01-02", periods=143, freq="W-SUN"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        forecast = Forecaster("mean", horizon=13, level=[80]).fit(frame).predict()
    usual = np.r_[weeks[-44:-5], weeks[-4:]].mean()  # the window's other 43 weeks
    assert abs(forecast["value"].iloc[0] - usual) < 0.05 and usual < 1
    assert (forecast["value-lo-80"] <= 0).all()
    notes = [str(warning.message) for warning in caught if "fitted as if it were" in str(warning.message)]
    assert len(notes) == 1 and "mean fitted as if it were 0 (the row" in notes[0], notes


def test_the_note_names_a_small_neighbours_value_beside_a_huge_typo_as_it_is() -> None:
    """Daily anomalies of +-0.5 with a typo of 1e9 between 0.1234 and -0.1230: the mean read it as 0.0002, but
    the note said 0, its value snapped within 1e-12 of the window's largest row, the typo itself (h117)."""
    rng = np.random.default_rng(0)
    days = np.round(rng.normal(0, 0.5, 300), 4)
    days[-7:-4] = 0.1234, 1e9, -0.1230
    frame = pd.DataFrame({"anomaly": days}, index=pd.date_range("2024-01-01", periods=300, freq="D"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        Forecaster("mean", horizon=4).fit(frame)
    notes = [str(warning.message) for warning in caught if "fitted as if it were" in str(warning.message)]
    assert len(notes) == 1 and "mean fitted as if it were 0.0002 (the row" in notes[0], notes


def test_a_typo_in_a_series_that_ends_early_among_independent_ones_is_said_at_its_own_end() -> None:
    """The note read every series' last rows of the table: a series ending 9 months early had its window
    padded with missing cells, and its typo went unsaid."""
    values = _seasonal()
    ragged = values.copy()
    ragged[-14] *= 20  # five months before its own end
    long = pd.concat([pd.DataFrame({"unique_id": "A", "ds": MONTHS, "y": values}),
                      pd.DataFrame({"unique_id": "B", "ds": MONTHS[:-9], "y": ragged[:-9]})])  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        Forecaster("holt_winters", horizon=6).fit(long, channels="independent")
    notes = [str(note.message) for note in caught if "robust standard deviations" in str(note.message)]
    assert len(notes) == 1 and f"'B' at {MONTHS[-14].date()}: {ragged[-14]:g} is " in notes[0]


def test_a_seasons_peak_in_a_window_of_one_season_is_repeated_as_it_is() -> None:
    """Seasonal naive on one season (a 36-month file's input) has no season before to tell a peak from a typo:
    filled at the 5 robust standard deviations Holt-Winters uses, departures' July (10.7 among 5-7) was
    forecast 6.1 for a truth of 10.0; the seasonal baselines fill only gross outliers (`outliers.FILLED`,
    h64), and a value x10 still is."""
    from forecaster.models import get_model

    window = torch.tensor([6.5, 7.4, 5.2, 4.9, 5.3, 6.6, 10.7, 5.5, 6.4, 6.9, 5.6, 5.4])
    model = get_model("seasonal_naive", input_size=12, horizon=12, n_channels=1, season=12).eval()
    np.testing.assert_array_equal(model(window[None, :, None])[0, :, 0].numpy(), window.numpy())
    typo = window.clone()
    typo[6] *= 10
    assert abs(float(model(typo[None, :, None])[0, 6, 0]) - 6.0) < 0.5  # its neighbours' mean


def _quarters(seed: int = 12) -> np.ndarray:
    """89 quarters from 2000 Q1 of a growing index with a season and noise (h66 F2's shape)."""
    rng = np.random.default_rng(seed)
    steps = np.arange(89)
    season = np.tile([-3.0, 1.0, 2.5, -0.5], 23)[:89] * 3
    return 100 * np.exp(0.004 * steps) + season + np.cumsum(rng.normal(0, 0.3, 89)) + rng.normal(0, 0.6, 89)


@pytest.mark.parametrize("model", ["seasonal_naive", "seasonal_drift", "holt_winters"])
def test_a_shock_over_a_few_quarters_of_the_last_year_is_not_repeated_a_year_later(model: str) -> None:
    """COVID's 2020 Q2-Q4 (-22, -8, -3) in a window ending 2021 Q1: seasonal drift forecast 2021 Q2 at 120.4
    where the truth was 142.4, inside an 80% band of +-1.3 (h66 F2). The shock is read as the seasons
    before plus the level change; a new level lasting to the window's end, and a clean window, are kept."""
    from forecaster.models import get_model

    series = _quarters()
    truth, clean = series[85:], series[:85]
    shocked = clean.copy()
    shocked[81:84] -= [22.0, 8.0, 3.0]
    shifted = clean.copy()
    shifted[81:] -= 22.0
    net = get_model(model, input_size=51, horizon=4, n_channels=1, season=4).eval()

    def forecast(values: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net(torch.tensor(values[-51:], dtype=torch.float32)[None, :, None])[0, :, 0].numpy()

    assert abs(forecast(shocked)[0] - truth[0]) < 4.0  # the dip of 22 not repeated
    np.testing.assert_allclose(forecast(shocked), forecast(clean), atol=4.0)
    window = torch.tensor(shifted[-51:])[None]
    assert torch.equal(fill_runs(window, 4), window)  # a lasting new level is kept
    assert torch.equal(fill_runs(torch.tensor(clean[-51:])[None], 4), torch.tensor(clean[-51:])[None])


def test_a_shock_read_as_the_seasons_before_is_said_at_training_and_at_predict() -> None:
    """Seasonal drift read 2020 Q2-Q3 of a COVID-shaped file as the years before (`fill_runs`) and changed its
    forecast without a word, where a filled typo is named (h70)."""
    series = _quarters()[:85]
    shocked = series.copy()
    shocked[81:84] -= [22.0, 8.0, 3.0]
    quarters = pd.period_range("2000Q1", periods=85, freq="Q").to_timestamp()

    def said(values: np.ndarray) -> tuple[list[str], list[str]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataQualityWarning)
            fitted = Forecaster("seasonal_drift", horizon=4).fit(pd.DataFrame({"gdp": values}, quarters))
            trained = len(caught)
            fitted.predict()
        notes = [(index < trained, str(warning.message)) for index, warning in enumerate(caught)]
        shocks = [(training, note) for training, note in notes if "read it as a passing shock" in note]
        return [note for early, note in shocks if early], [note for early, note in shocks if not early]

    assert said(series) == ([], [])
    at_training, at_predict = said(shocked)
    assert len(at_training) == 1 and at_training == at_predict
    assert f"'gdp' from {quarters[81].date()} to {quarters[82].date()} ({shocked[81]:g}, " in at_training[0]
    assert at_training[0].endswith("(the rows are used as given everywhere else)")


def test_the_service_says_a_shock_read_as_the_seasons_before_as_predict_does(tmp_path) -> None:
    """The CSV route names what predict names of the rows a forecast starts from (`history.window_notes`)."""
    from test_service import serving

    shocked = _quarters()[:85]
    shocked[81:84] -= [22.0, 8.0, 3.0]
    frame = pd.DataFrame({"gdp": shocked}, pd.period_range("2000Q1", periods=85, freq="Q").to_timestamp())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        Forecaster("seasonal_drift", horizon=4).fit(frame).save(tmp_path / "gdp")
    upload = {"file": ("gdp.csv", frame.to_csv(index_label="date"), "text/csv")}
    with serving(tmp_path) as client:
        response = client.post("/v1/models/gdp/forecast.csv", files=upload)
    assert response.status_code == 200
    assert any("seasonal_drift read it as a passing shock" in note
               for note in json.loads(response.headers["forecaster-notes"]))  # fmt: skip


def _mixed_rows(dtype: torch.dtype, length: int = 96) -> torch.Tensor:
    """Seeded windows with and without gross outliers: noise, typos (inside, next to an end), counts (a big
    order among them, a lone one among zeros), constants, a large offset, ties of rounding, NaN."""
    gen = torch.Generator().manual_seed(7)
    noise = torch.randn(40, length, generator=gen, dtype=torch.float64)
    typos = torch.randn(40, length, generator=gen, dtype=torch.float64)
    at = torch.randint(1, length - 1, (40,), generator=gen)
    typos[torch.arange(40), at] += torch.where(torch.rand(40, generator=gen) < 0.5, 1.0, -1.0) * 400
    counts = torch.poisson(torch.full((20, length), 0.6, dtype=torch.float64), generator=gen)
    counts[::2, length // 2] = 60  # a big order among counts
    lone = torch.zeros(4, length, dtype=torch.float64)
    lone[:, 30] = 5  # a lone order among zeros
    offset = 1e6 + torch.randn(6, length, generator=gen, dtype=torch.float64)
    offset[::2, 40] += 1e5
    ticks = 505.1 + 0.1 * torch.randint(0, 3, (6, length), generator=gen).to(torch.float64)
    ticks[::3, 20] = 5051.0
    rows = torch.cat([noise, typos, counts, lone, torch.full((4, length), 3.0), offset, ticks])
    rows[1, 1], rows[2, length - 2] = 500.0, -500.0  # next to an end
    return rows.to(dtype)


def _filled_as_before(y: torch.Tensor, season: int, threshold: float, spread_only: bool, read_as=None):
    """The fill as it was computed before `_may_flag` (h120): every row checked."""
    flags, local, _ = isolated_outliers(y, season, threshold, spread_only, read_as)
    return torch.where(flags, local, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "season, threshold, spread_only", [(1, 20.0, True), (1, 20.0, False), (1, 5.0, False), (48, 5.0, False),
                                       (12, 20.0, False)])  # fmt: skip
def test_the_fill_checking_rows_it_can_flag_fills_as_every_row_checked(dtype, season, threshold, spread_only):
    """The fill checks only the rows whose largest jump can be beyond `threshold` robust standard deviations
    (the mean scores every window: the full check had doubled its cost, h117 R4), and fills all alike."""
    rows = _mixed_rows(dtype)
    rows[3, 10] = float("nan")
    expected = _filled_as_before(rows, season, threshold, spread_only, dtype)
    got = fill_isolated(rows, season, threshold, spread_only, dtype)
    assert torch.equal(got.isnan(), expected.isnan())
    assert torch.equal(got.nan_to_num(), expected.nan_to_num()) and got.dtype == rows.dtype
    assert ((got != rows) & ~rows.isnan()).any()  # some rows were filled (a NaN left differs from itself)


def _ended_run_as_before(y: torch.Tensor) -> torch.Tensor:
    """`outliers.ended_run` as it was computed before h120: every window's chance asked."""
    steps = y.shape[1]
    run = (y == y[:, -1:]).flip(1).to(torch.int64).cumprod(1).sum(1, keepdim=True).to(torch.float64)
    ordered = y.sort(1).values
    first = torch.ones_like(ordered, dtype=torch.bool)
    first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    copies = torch.zeros_like(ordered, dtype=torch.float64).scatter_add_(
        1, first.cumsum(1) - 1, torch.ones_like(ordered, dtype=torch.float64))
    ways = torch.lgamma(copies + 1) - torch.lgamma((copies - run).clamp_min(0) + 1)
    ways = torch.where(copies >= run, ways, -torch.inf)
    log_chance = ways.logsumexp(1) + torch.lgamma(steps - run[:, 0] + 1) - math.lgamma(steps + 1)
    ended = (run[:, 0] >= 3) & (log_chance < math.log(0.01))
    return torch.where(ended, run[:, 0], 0).to(torch.int64)


def test_the_mean_checks_only_windows_it_can_fill_or_read_as_stopped_and_forecasts_alike(monkeypatch):
    """The mean's level with the fill's check on the windows that can be flagged alone, and the chance of an
    ended run asked of windows ending in 3 copies alone, equals the level with every window checked and asked
    (float32 and float64 batches of windows with and without gross outliers and runs): the mean scores every
    window, and the full checks had doubled its cost (h117 R4)."""
    from forecaster.models import get_model, outliers

    def level_as_before(x: torch.Tensor) -> torch.Tensor:
        batch, steps, channels = x.shape
        rows = x.transpose(1, 2).reshape(batch * channels, steps)
        filled = _filled_as_before(rows.double(), 1, outliers.GROSS, True, x.dtype).to(x.dtype)
        mean = outliers.clip_last(filled).mean(dim=1)
        level = torch.where(_ended_run_as_before(rows) > 0, rows[:, -1], mean)
        return level.view(batch, channels)[:, None, :]

    checked: dict[str, list[int]] = {}

    def counted(name: str):
        real, checked[name] = getattr(outliers, name), []
        return lambda y, *more: checked[name].append(len(y)) or real(y, *more)

    for name in ("isolated_outliers", "_unlikely_run"):
        monkeypatch.setattr(outliers, name, counted(name))
    for dtype in (torch.float32, torch.float64):
        rows = _mixed_rows(dtype)
        rows[:8, -3:] = rows[:8, -4:-3]  # ended in runs of 4 (noise: not by chance; counts may be)
        x = rows.view(-1, 4, rows.shape[1]).transpose(1, 2)  # (B, L, 4)
        model = get_model("mean", input_size=rows.shape[1], horizon=3, n_channels=4).eval()
        expected = level_as_before(x)
        assert (_ended_run_as_before(rows) > 0).sum() >= 8
        for counts in checked.values():
            counts.clear()
        assert torch.equal(model.level(x), expected)
        assert 0 < sum(checked["isolated_outliers"]) < len(rows) / 2, checked  # those with a gross jump
        assert 8 <= sum(checked["_unlikely_run"]) < len(rows) / 2, checked  # those ending in 3 copies


def test_the_outlier_note_hands_torch_arrays_it_may_write(monkeypatch) -> None:
    """pandas 3 answers a float column's values read-only, and `torch.from_numpy` of them printed PyTorch's
    "NumPy array is not writable" UserWarning in the middle of `forecaster train`'s lines (h150)."""
    writable = []
    original = torch.from_numpy

    def recording(array: np.ndarray) -> torch.Tensor:
        writable.append(array.flags.writeable)
        return original(array)

    monkeypatch.setattr(torch, "from_numpy", recording)
    Forecaster("holt_winters", horizon=12).fit(pd.DataFrame({"sales": _seasonal()}, index=MONTHS))
    assert writable and all(writable), writable

"""The one forecasting path (`forecaster.prediction`): numerics, and the checks of recent rows it shares
between `forecaster predict`, the service and the Python API."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from test_artifacts import SCALER, save, tiny  # noqa: F401  (tiny is a fixture)

from forecaster.artifacts import load_bundle
from forecaster.data import TimeSeries
from forecaster.errors import DataError, ForecasterError
from forecaster.prediction import HistoryError, check_forecast, check_history, forecast, predict_windows


@pytest.fixture
def bundle(tiny, tmp_path):  # noqa: F811
    return load_bundle(save(tiny, tmp_path / "bundle"))


def hourly(rows: int, start: str = "2024-01-01") -> pd.DatetimeIndex:
    return pd.date_range(start, periods=rows, freq="h", name="when")


def test_predict_windows_is_standardize_model_unstandardize(bundle):
    rng = np.random.default_rng(0)
    windows = rng.normal(5.0, 2.0, size=(2, 12, 3))
    scaled = torch.from_numpy(((windows - SCALER.mean) / SCALER.scale).astype(np.float32))
    with torch.inference_mode():
        outputs = bundle.model(scaled).double().numpy()
    oracle = outputs * SCALER.scale + SCALER.mean
    forecasts = predict_windows(bundle, windows)
    assert forecasts.shape == (2, 4, 3) and forecasts.dtype == np.float64
    # rounded to the digits float32 arithmetic gives: within ten ulps of each standardized output
    ulps = np.abs(forecasts - oracle) / (np.finfo(np.float32).eps * (np.abs(outputs) + 1) * SCALER.scale)
    assert ulps.max() <= 10 and not np.array_equal(forecasts, oracle)
    np.testing.assert_array_equal(predict_windows(bundle, np.asfortranarray(windows)), forecasts)


def test_check_history_keeps_the_last_window_and_continues_the_timestamps(bundle):
    values = np.arange(60.0).reshape(20, 3)
    prepared = check_history(bundle, hourly(20), values, horizon=2)
    np.testing.assert_array_equal(prepared.window, values[-12:])
    assert prepared.horizon == 2
    assert prepared.labels == ["2024-01-01T20:00:00", "2024-01-01T21:00:00"]
    assert check_history(bundle, pd.RangeIndex(12), values[:12]).labels == [12, 13, 14, 15]


@pytest.mark.parametrize(
    ("index", "values", "options", "part", "row", "message"),
    [
        (hourly(12), np.zeros((12, 2)), {}, "values", None, "expected the model's 3 columns"),
        (hourly(11), np.zeros((11, 3)), {}, "values", None, "at least 12 rows"),
        (hourly(30), np.zeros((30, 3)), {"max_rows": 20}, "values", None, "at most 20 rows"),
        (hourly(12), np.zeros((12, 3)), {"horizon": 5}, "horizon", None, "1 <= horizon <= 4"),
        (hourly(12), np.zeros((12, 3)), {"horizon": 0}, "horizon", None, "got 0"),
        (hourly(12).delete(5).insert(11, pd.Timestamp("2024-01-02")), np.zeros((12, 3)), {}, "timestamps",
         5, "does not follow the model's frequency 'h'"),
        (hourly(12)[::-1], np.zeros((12, 3)), {}, "timestamps", 1, "does not come after"),
    ],
)
def test_check_history_names_the_part_and_row_at_fault(bundle, index, values, options, part, row, message):
    with pytest.raises(HistoryError, match=message) as caught:
        check_history(bundle, index, values, **options)
    assert (caught.value.part, caught.value.row) == (part, row)


def test_a_non_finite_value_is_named_by_column_and_row(bundle):
    values = np.zeros((15, 3))
    values[9, 2] = np.nan
    with pytest.raises(HistoryError, match="column 'c2'") as caught:
        check_history(bundle, hourly(15), values)
    assert (caught.value.part, caught.value.row) == ("values", 9)


def test_forecast_names_the_file_line_and_refuses_overflowing_values(bundle):
    frame = pd.DataFrame(np.zeros((14, 3)), index=hourly(14), columns=["c0", "c1", "c2"])
    table = forecast(bundle, TimeSeries(frame, "h", "recent.csv", date_col="when"))
    assert list(table.columns) == ["c0", "c1", "c2"] and table.index.name == "when" and len(table) == 4
    shifted = frame.set_axis(hourly(14).delete(3).append(pd.DatetimeIndex(["2024-01-03"])), axis=0)
    with pytest.raises(DataError, match=r"recent.csv: line 5: .* does not follow"):
        forecast(bundle, TimeSeries(shifted, "h", "recent.csv", date_col="when"))
    with pytest.raises(HistoryError, match="the forecast is not finite"):  # arithmetic overflowed
        check_forecast(np.array([1.0, np.inf]))
    refused = r"recent.csv: line 4: value 1e\+308 in column 'c0'; expected numbers of \|value\| <= 1.84e\+19"
    with pytest.raises(DataError, match=refused):  # what train refuses (h56)
        forecast(bundle, TimeSeries(frame + 1e308, "h", "recent.csv", date_col="when"))


def test_counts_and_columns_never_negative_are_not_forecast_below_zero_and_measurements_may_be() -> None:
    """Drift extends a falling line below zero: for counts (whole numbers, none negative, in the rows the
    model reads) and for a column never below 0 in the training file (ten yearly sunspot numbers falling to
    2.9 were forecast -1.7, -6.3, -10.9) the forecast and every interval bound stop at 0, and none prints as
    -0; a measurement that went below zero in its file may go there again."""
    from forecaster.api import Forecaster
    from forecaster.data.scaling import value_floor
    from forecaster.errors import BundleError

    falling = 40 - 3 * np.arange(14) + np.tile([1, -1], 7)
    counts = pd.DataFrame({"year": np.arange(2000, 2014), "cases": falling})
    ahead = Forecaster(model="drift", horizon=4, level=[80]).fit(counts).predict()
    assert (ahead.to_numpy() >= 0).all() and not np.signbit(ahead.to_numpy()).any()
    tenths = counts.assign(cases=counts["cases"] + 0.1)
    measured = Forecaster(model="drift", horizon=4, level=[80]).fit(tenths)
    assert measured.bundle.training["nonnegative"] == ["cases"]
    floored = measured.predict()
    measured.bundle.training["nonnegative"] = []  # as a file with a value below 0 leaves it
    below = measured.predict()  # drift and its margins move with the series
    assert (below[["cases", "cases-lo-80"]].to_numpy() < 0).all()
    np.testing.assert_allclose(floored.to_numpy(), np.maximum(below.to_numpy(), 0), atol=1e-9)
    # each to float32's digits of its own value (`original_units`): 0.06158856 beside 0.1615886 - 0.1
    np.testing.assert_allclose(ahead.to_numpy(), np.maximum(below.to_numpy() - 0.1, 0), rtol=1e-6, atol=1e-9)
    signed = tenths.copy()
    signed.loc[0, "cases"] = -0.5
    model = Forecaster(model="drift", horizon=4).fit(signed)
    assert model.bundle.training["nonnegative"] == [] and (model.predict().to_numpy() < 0).all()
    # per column of each window: without a training record counts get 0; with one, the columns never negative
    # in the file, whole numbers or not, and no other (whole degrees seen at -13 in training: h41)
    windows = np.array([[[0, 1, -1.0], [2, 0.5, 3]], [[1, 1, 1], [2, 2, 2]], [[1, 0.5, 0.5], [2, 2, 2]]])
    np.testing.assert_array_equal(value_floor(windows), [[[0, -np.inf, -np.inf]], [[0, 0, 0]],
                                                         [[0, -np.inf, -np.inf]]])  # fmt: skip
    floors = value_floor(windows, ["a", "b", "c"], ["b", "c"])
    np.testing.assert_array_equal(floors, [[[-np.inf, 0, -np.inf]], [[-np.inf, 0, 0]], [[-np.inf, 0, 0]]])
    degrees = counts.assign(cases=counts["cases"] - 20)  # whole degrees below 0 in training, above at the end
    recent = degrees.iloc[-8:].assign(cases=lambda rows: rows["cases"] - rows["cases"].min())  # down to 0
    warm = Forecaster(model="naive", horizon=4, level=[80]).fit(degrees).predict(recent)
    assert (warm["cases-lo-80"] < 0).all() and (warm["cases"] == 0).all()
    with pytest.raises(BundleError, match="training 'nonnegative' must be a list of column names"):
        value_floor(windows, ["a", "b", "c"], "b")


def test_a_long_panel_floors_a_series_only_where_its_variable_is_never_below_zero() -> None:
    """Quarterly inflation of two countries in one long file, Japan's below 0 for years, the US's never: the
    US's bands were cut at 0, deflation impossible in a file holding years of it (h62). The floor follows
    the variable across the panel's series, and each variable of a panel of several its own."""
    from forecaster.api import Forecaster
    from forecaster.data.scaling import nonnegative_columns

    quarters = pd.period_range("2016Q1", periods=32, freq="Q").astype(str)
    step = np.random.default_rng(2).normal(0, 0.3, (2, 32))
    rows = [{"country": country, "quarter": quarter, "inflation": level + step[index, :k + 1].sum(),
             "output": 100.0 + k} for index, (country, level) in enumerate((("US", 1.0), ("JP", -1.5)))
            for k, quarter in enumerate(quarters)]  # fmt: skip
    panel = pd.DataFrame(rows)
    assert (panel.loc[panel["country"] == "US", "inflation"] > 0).all()
    model = Forecaster("naive", horizon=8, level=[95]).fit(panel[["country", "quarter", "inflation"]])
    assert model.bundle.training["nonnegative"] == []
    us = model.predict().query("country == 'US'")
    assert (us["naive-lo-95"].iloc[-1] < 0) and (us["naive"] > 0).all()  # a band not cut at 0
    both = Forecaster("naive", horizon=8).fit(panel, id_col="country", date_col="quarter",
                                             target_col="inflation,output")
    assert both.bundle.training["nonnegative"] == ["US/output", "JP/output"]
    wide = panel.pivot(index="quarter", columns="country", values="inflation")
    assert nonnegative_columns(wide) == ["US"]  # a wide table's columns are variables each


def test_a_model_that_fits_nothing_forecasts_whole_numbers_as_whole_numbers() -> None:
    """A weekly seasonal drift reading 53 weeks takes its change from two sums of 52 values: in float32 the
    cancellation wrote 772 as 771.9998 (h38). A model without parameters runs in float64, and the forecast is
    the closed form: the last season again plus the change of one season (x[-1] - x[-53])."""
    from forecaster.api import Forecaster

    weeks = pd.date_range("2018-12-31", periods=105, freq="W-MON")
    claims = np.random.default_rng(0).integers(400, 900, len(weeks))
    frame = pd.DataFrame({"week": weeks, "claims": claims})
    model = Forecaster("seasonal_drift", horizon=4, input_size=53).fit(frame)
    window = claims[-53:]
    np.testing.assert_array_equal(model.predict()["claims"], window[1:5] + (window[-1] - window[0]))


def test_an_overflow_below_a_floor_of_zero_is_refused_not_answered_zero() -> None:
    """A future covariate of 1e300 sent to a model of counts overflowed float32 to -inf, floored at 0: the
    service answered 0.0 with intervals of no width (h31). An overflow stays infinite for the check."""
    from forecaster.data.scaling import Scaler, original_units
    from forecaster.prediction import HistoryError, check_forecast

    scaler = Scaler(mean=np.array([10.0]), scale=np.array([2.0]))
    standardized = np.array([[1.0], [-np.inf], [-30.0]])
    floored = original_units(scaler, standardized, floor=np.array([0.0]))
    assert floored[0, 0] == 12.0 and np.isneginf(floored[1, 0]) and floored[2, 0] == 0.0
    with pytest.raises(HistoryError, match="the forecast is not finite"):
        check_forecast(floored)


def test_a_monthly_model_reads_month_ends_as_its_months() -> None:
    """Month ends (pandas' 'ME' periods) sent to a model of month starts were refused as off its time grid,
    while the 15th of each month was read as months: both are its months now; two dates in one month are
    still refused, naming the row."""
    from forecaster.api import Forecaster

    months = pd.date_range("2015-01-01", periods=96, freq="MS")
    frame = pd.DataFrame({"ds": months, "y": np.arange(96.0) + 10 * np.sin(np.arange(96) / 12 * 2 * np.pi)})
    model = Forecaster("seasonal_naive", horizon=3).fit(frame)
    expected = model.predict(frame.tail(40))
    ends = model.predict(frame.tail(40).assign(ds=months[-40:] + pd.offsets.MonthEnd(0)))
    pd.testing.assert_frame_equal(ends, expected)
    assert list(expected.index) == list(pd.date_range("2023-01-01", periods=3, freq="MS"))
    twice = frame.tail(40).assign(ds=months[-40:] + pd.offsets.MonthEnd(0))
    twice.loc[twice.index[-1], "ds"] = pd.Timestamp("2022-11-30")  # December's row dated in November
    with pytest.raises(ForecasterError, match="2022-11-30"):
        model.predict(twice)


def _last_row_notes(frame: pd.DataFrame, horizon: int, **variants: pd.DataFrame) -> dict[str, list[str]]:
    """The 'last row' notes of a naive model fitted on `frame` predicting from each variant of its rows."""
    import warnings

    from forecaster.api import Forecaster
    from forecaster.data.series import DataQualityWarning

    model, said = Forecaster("naive", horizon=horizon).fit(frame), {}
    for name, rows in variants.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataQualityWarning)
            model.predict(rows)
        said[name] = [str(warning.message) for warning in caught if "last row" in str(warning.message)]
    return said


def _last_set(frame: pd.DataFrame, value: float) -> pd.DataFrame:
    rows = frame.copy()
    rows.iloc[-1, 0] = value
    return rows


def test_a_last_row_far_from_the_row_before_and_a_season_earlier_is_said() -> None:
    """96 months of sales, the last exported mid-month (40% of its level): Holt-Winters' forecast fell to 0
    within six months, and nothing was said (h62 F1). A last row over LAST_ROW_APART robust standard
    deviations of the recent changes from the row before it and from a season earlier is named; a full
    month, or a seasonal peak as far from the row before as from nothing a year earlier, is not."""
    t = np.arange(96)
    sales = 240 + 0.5 * t + 30 * np.sin(2 * np.pi * t / 12) + np.random.default_rng(6).normal(0, 5, 96)
    frame = pd.DataFrame({"sales": sales.round(1)}, index=pd.date_range("2016-01-01", periods=96, freq="MS"))
    partial, peaked = _last_set(frame, round(0.4 * frame.iat[-1, 0], 1)), frame.copy()
    peaked.iloc[11::12, 0] += 150  # every December, the last row among them
    said = _last_row_notes(frame, 6, full=frame, partial=partial, peaked=peaked)
    assert said["full"] == [] and said["peaked"] == []
    assert len(said["partial"]) == 1 and f"the last row of 'sales' ({partial.iat[-1, 0]:.4g}) lies " in \
        said["partial"][0] and "from the row before it and from a season earlier" in said["partial"][0]


def test_a_last_row_one_tick_from_the_row_before_is_not_said_to_lie_far_apart() -> None:
    """Prices moving by ticks of 0.1 at 505.1: their changes differ by float rounding (1e-13), which the
    robust scale took for their spread, and one more tick was said to lie 1.2e12 robust standard deviations
    from the row before (h71). Rounding is a tie; a new level (+5) is still named."""
    ticks = np.round(505.1 + 0.1 * np.array([0, 1, 2, 3, 2, 3, 2, 1] * 6), 1)
    frame = pd.DataFrame({"price": ticks}, index=pd.date_range("2024-01-01", periods=len(ticks), freq="D"))
    tick, level = _last_set(frame, round(ticks[-2] + 0.2, 1)), _last_set(frame, round(ticks[-2] + 5, 1))
    said = _last_row_notes(frame, 3, tick=tick, level=level)
    assert said["tick"] == [] and len(said["level"]) == 1
    assert "the last row of 'price' (510.3)" in said["level"][0]


def test_a_trends_last_step_is_not_said_to_lie_apart_but_a_step_off_the_trend_is() -> None:
    """30 yearly values growing by 10 a year with noise of 1: the last row was said to lie 9 robust standard
    deviations from the row before it, a typo? (h75 F5): a change is measured from the recent changes'
    median, so the trend's own step is none; a last row 10 below the trend still is."""
    years = (100 + 10 * np.arange(30) + np.random.default_rng(2).normal(0, 1, 30)).round(2)
    frame = pd.DataFrame({"gdp": years}, index=pd.date_range("1994-01-01", periods=30, freq="YS"))
    said = _last_row_notes(frame, 3, clean=frame, off=_last_set(frame, years[-1] - 10))
    assert said["clean"] == [] and len(said["off"]) == 1
    assert "(each plus their median change)" in said["off"][0]


def test_holt_winters_clips_a_partial_last_month_and_says_so() -> None:
    """h62 F1 through the API: a Holt-Winters bundle forecast a month exported mid-month (40% of its level)
    as a fall toward 0 (274 -> 52 within six months); its last one-step error is now clipped
    (`smoothing.clipped_last`), the forecast stays near the full month's, and the note says what was done."""
    import warnings

    from forecaster.api import Forecaster
    from forecaster.data.series import DataQualityWarning

    t = np.arange(96)
    sales = 200 + t + 40 * np.sin(t * np.pi / 6) + np.random.default_rng(5).normal(0, 5, 96)
    frame = pd.DataFrame({"sales": sales.round(1)}, index=pd.date_range("2016-01-01", periods=96, freq="MS"))
    model = Forecaster("holt_winters", horizon=6).fit(frame)
    partial = frame.copy()
    partial.iloc[-1, 0] = round(0.4 * frame.iat[-1, 0], 1)
    full = model.predict(frame)["sales"].to_numpy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        clipped = model.predict(partial)["sales"].to_numpy()
    said = [str(warning.message) for warning in caught if "last row" in str(warning.message)]
    assert np.abs(clipped - full).max() < 0.15 * full.min()
    assert len(said) == 1 and "Holt-Winters moved its states by at most 5 robust standard" in said[0]


def test_the_mean_reads_a_far_last_row_at_its_level_and_says_so() -> None:
    """h94 F1 through the API: days of 200 +- 5 then 2000 were forecast 261 by a mean bundle, a 95% band of
    250-273 covering neither 200 nor 2000, and the note said the forecast started from the last row. The mean
    clips it (`outliers.clip_last`): the forecast stays within 1 of the clean window's mean, whose level the
    band covers, and the note says what was done."""
    import warnings

    from forecaster.api import Forecaster
    from forecaster.data.series import DataQualityWarning

    days = (200 + np.random.default_rng(94).normal(0, 5, 120)).round(2)
    frame = pd.DataFrame({"sales": days}, index=pd.date_range("2022-01-01", periods=120, freq="D"))
    model = Forecaster("mean", horizon=7).fit(frame)
    spiked = frame.copy()
    spiked.iloc[-1, 0] = 2000.0
    clean = model.predict(frame, level=[95])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        read = model.predict(spiked, level=[95])
    said = [str(warning.message) for warning in caught if "last row" in str(warning.message)]
    assert np.abs(read["sales"].to_numpy() - clean["sales"].to_numpy()).max() < 1
    assert (read["sales-lo-95"] < 200).all() and (read["sales-hi-95"] > 200).all()
    assert len(said) == 1 and "The window's mean reads it as at most 5 robust standard" in said[0]


def test_a_mean_of_a_window_too_short_to_clip_says_it_starts_from_a_far_last_row() -> None:
    """A mean of 4 rows holds 2 earlier changes, fewer than `clip_last` judges by: it averaged 2000 in as
    given (653) while the note said it had read it at most 5 robust standard deviations from the row
    before."""
    import warnings

    from forecaster.api import Forecaster
    from forecaster.data.series import DataQualityWarning

    days = (200 + np.random.default_rng(94).normal(0, 5, 120)).round(2)
    frame = pd.DataFrame({"sales": days}, index=pd.date_range("2022-01-01", periods=120, freq="D"))
    model = Forecaster("mean", horizon=7, input_size=4).fit(frame)
    frame.iloc[-1, 0] = 2000.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        read = model.predict(frame)
    said = [str(warning.message) for warning in caught if "last row" in str(warning.message)]
    assert read["sales"].iloc[0] == pytest.approx(frame["sales"].iloc[-4:].mean())
    assert len(said) == 1 and said[0].endswith("The forecast starts from it")


def test_rows_in_units_far_smaller_than_training_are_said_and_keep_their_digits() -> None:
    """15 yearly GDP values of 100 to 145 sent in thousands lay 13 standard deviations from their training
    mean, short of FAR_FROM_TRAINING: drift forecast them 0.1445 in [0, 4.2] unsaid, and sent in millions
    0.0001 for 1.445e-4 (h82 F1). Rows all far below the training level are noted, and a forecast computed
    in float64 keeps its digits; the rows as trained, and counts that came near 0 in training, are not
    noted."""
    import warnings

    from forecaster.api import Forecaster
    from forecaster.data.series import DataQualityWarning

    gdp = (100 + 3 * np.arange(15) + np.random.default_rng(1).normal(0, 1, 15)).round(1)
    counts = np.tile([0.0, 3.0, 1.0, 0.0, 5.0], 3)
    notes, forecasts = {}, {}
    sends = {"as trained": (gdp, gdp), "millions": (gdp, gdp * 1e-6), "thousands": (gdp, gdp * 1e-3),
             "counts": (counts, counts / 1000)}
    for name, (values, sent) in sends.items():
        years = pd.date_range("2008-01-01", periods=15, freq="YS")
        model = Forecaster("drift", horizon=3).fit(pd.DataFrame({"gdp": values}, index=years))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataQualityWarning)
            forecasts[name] = model.predict(pd.DataFrame({"gdp": sent}, index=years))["gdp"].to_numpy()
        notes[name] = [str(warning.message) for warning in caught if "units it was trained on" in
                       str(warning.message)]  # fmt: skip
    assert notes["as trained"] == [] and notes["counts"] == []
    assert len(notes["thousands"]) == 1 and "column 'gdp' holds values no larger than 0.1415, 1/793 of its " \
        "training rows' mean (112.2) and 14.4 of their standard deviations from it" in notes["thousands"][0]
    np.testing.assert_allclose(forecasts["millions"], forecasts["as trained"] * 1e-6, rtol=1e-6)


def test_a_window_the_mean_reads_as_stopped_is_said() -> None:
    """The mean forecasts a window ending in a run chance would not so place at the run's value
    (`outliers.ended_run`), and nothing said so: a price held 4 weeks forecast as held, no word of the
    window's average it set aside (h107). A window ending in a value of no run says nothing."""
    import warnings

    from forecaster.api import Forecaster
    from forecaster.data.series import DataQualityWarning

    prices = np.round(100 + np.random.default_rng(107).normal(0, 1, 120).cumsum(), 2)
    held = prices.copy()
    held[-4:] = held[-5]
    index = pd.date_range("2020-01-05", periods=120, freq="W")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # its scores' note
        model = Forecaster("mean", horizon=4).fit(pd.DataFrame({"price": prices}, index=index))
    for rows, stopped in ((prices, False), (held, True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DataQualityWarning)
            forecast = model.predict(pd.DataFrame({"price": rows}, index=index))
        notes = [str(warning.message) for warning in caught if "stopped there" in str(warning.message)]
        assert len(notes) == int(stopped)
        if stopped:
            assert f"'price' ends in 5 rows of {held[-1]:g}" in notes[0]
            np.testing.assert_allclose(forecast["price"].to_numpy(), held[-1], rtol=1e-6)

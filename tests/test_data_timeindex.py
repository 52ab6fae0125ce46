"""Frequency inference and future timestamps (shared by the reader, `forecaster predict` and the service)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster.data import DataQualityWarning, future_timestamps, infer_frequency, read_csv
from forecaster.errors import DataError


@pytest.mark.parametrize(
    ("start", "freq"),
    [("2016-07-01", "h"), ("2016-07-01", "15min"), ("2020-01-01 00:10", "10min"), ("1990-01-01", "D"),
     ("2002-01-01", "W-TUE"), ("2021-01-31", "ME"), ("2021-01-01", "MS")],
)
def test_infer_frequency_returns_the_pandas_alias(start, freq):
    assert infer_frequency(pd.date_range(start, periods=30, freq=freq)) == freq


def test_infer_frequency_is_none_when_it_cannot_know():
    assert infer_frequency(pd.RangeIndex(10)) is None
    assert infer_frequency(pd.DatetimeIndex(["2020-01-01", "2020-01-02"])) is None
    assert infer_frequency(pd.DatetimeIndex(["2020-01-01", "2020-01-02", "2020-01-04"])) is None


@pytest.mark.parametrize(
    ("index", "freq", "expected"),
    [
        (pd.date_range("2018-06-26 18:00", periods=8, freq="15min"), "15min",
         ["2018-06-26 20:00", "2018-06-26 20:15", "2018-06-26 20:30"]),
        (pd.date_range("2020-06-02", periods=5, freq="W-TUE"), None,
         ["2020-07-07", "2020-07-14", "2020-07-21"]),
        (pd.date_range("2021-01-31", periods=4, freq="ME"), "ME",
         ["2021-05-31", "2021-06-30", "2021-07-31"]),
        (pd.DatetimeIndex(["2020-01-01 00:00", "2020-01-01 01:00"]), "h",
         ["2020-01-01 02:00", "2020-01-01 03:00", "2020-01-01 04:00"]),
    ],
)
def test_future_timestamps_continue_the_frequency(index, freq, expected):
    future = future_timestamps(index, freq, 3)
    assert list(future) == [pd.Timestamp(t) for t in expected]
    assert isinstance(future, pd.DatetimeIndex)


def test_future_timestamps_keep_time_zone_and_name():
    index = pd.date_range("2024-03-30 22:00", periods=3, freq="h", tz="UTC", name="when")
    future = future_timestamps(index, "h", 2)
    assert future.tz is not None and str(future.tz) == "UTC" and future.name == "when"
    assert list(future) == [pd.Timestamp(f"2024-03-31 0{h}:00", tz="UTC") for h in (1, 2)]


def test_future_steps_of_integer_indexes():
    assert list(future_timestamps(pd.RangeIndex(0, 10), None, 3)) == [10, 11, 12]
    assert list(future_timestamps(pd.RangeIndex(0, 10, 2), None, 2)) == [10, 12]
    assert list(future_timestamps(pd.Index([3, 4, 5]), None, 2)) == [6, 7]


@pytest.mark.parametrize(
    ("index", "freq", "horizon", "expected"),
    [
        (pd.DatetimeIndex(["2020-01-01", "2020-01-02", "2020-01-04"]), None, 2, "cannot be inferred"),
        (pd.date_range("2020-01-01", periods=3, freq="D"), "fortnightly", 2, "unknown frequency"),
        (pd.RangeIndex(5), None, 0, "horizon must be an integer >= 1, got 0"),
        (pd.DatetimeIndex([]), "h", 2, "cannot continue an empty time index"),
        (pd.Index(["a", "b"]), None, 2, "cannot continue an index of dtype"),
    ],
)
def test_future_timestamps_errors(index, freq, horizon, expected):
    with pytest.raises(DataError, match=expected):
        future_timestamps(index, freq, horizon)


def _daily_file(tmp_path: Path, values: np.ndarray, name: str = "daily.csv", newest_first: bool = False
                ) -> Path:
    """A day-first daily file as central banks write it (TCMB's EVDS: 01-01-2023), blank cells for NaN."""
    days = pd.date_range("2023-01-01", periods=len(values), freq="D")
    cells = ["" if np.isnan(value) else f"{value:.4f}" for value in values]
    rows = [f"{day:%d-%m-%Y},{cell}\n" for day, cell in zip(days, cells, strict=True)]
    path = tmp_path / name
    path.write_text("Tarih,USD\n" + "".join(rows[::-1] if newest_first else rows))
    return path


def test_daily_rows_with_blank_weekends_read_as_business_days(tmp_path):
    """Every Saturday and Sunday blank (and one holiday): the weekends are left out, not refused as a tenth
    missing nor filled with invented prices; the holiday stays a short gap; the forecast goes on in business
    days, and a bundle's options (fill_missing 'auto') read the file the same way."""
    days = pd.date_range("2023-01-01", periods=91, freq="D")
    values = 18.8 + 0.01 * np.arange(91)
    values[days.day_of_week >= 5] = np.nan
    values[days == "2023-03-08"] = np.nan  # a weekday holiday
    path = _daily_file(tmp_path, values)
    with pytest.warns(DataQualityWarning, match="left out the 26 Saturdays and Sundays, which hold no"):
        series = read_csv(path)
    assert series.freq == "B" and len(series) == 65
    assert (series.frame.index.day_of_week < 5).all()
    assert series.frame.loc["2023-03-08", "USD"] == pytest.approx(18.8 + 0.01 * 66)  # between its neighbours
    with pytest.warns(DataQualityWarning, match="business days"):
        again = read_csv(path, **dataclasses.asdict(series.options))  # fill_missing "auto", as in bundles
    assert again.frame.equals(series.frame)
    assert again.options.fill_missing == "auto"
    after = pd.to_datetime(["2023-04-03", "2023-04-04"])  # Monday and Tuesday after Friday 2023-03-31
    assert list(future_timestamps(series.frame.index, "B", 2)) == list(after)


def test_blank_weekends_with_a_fill_asked_or_a_weekend_value_stay_daily(tmp_path):
    """The user's --fill-missing keeps every day; one Saturday with a value means weekends are data."""
    days = pd.date_range("2023-01-01", periods=91, freq="D")
    values = 18.8 + 0.01 * np.arange(91)
    values[days.day_of_week >= 5] = np.nan
    with pytest.warns(DataQualityWarning, match="filled 26 missing cell"):
        filled = read_csv(_daily_file(tmp_path, values), fill_missing="ffill")
    assert filled.freq == "D" and len(filled) == 91
    values[days == "2023-02-04"] = 19.0
    with pytest.raises(DataError, match="misses 23 of its 89 values"):  # the first and last day dropped
        read_csv(_daily_file(tmp_path, values, "saturday.csv"))


@pytest.mark.parametrize("newest_first", [False, True])
def test_refusals_name_the_file_lines_of_trimmed_and_reversed_rows(tmp_path, newest_first):
    """The empty first day is dropped (or the rows, newest first, read from the oldest): the missing cells
    are still named at the lines the file holds them (day 31 is line 32 from the top)."""
    values = 200.0 + np.arange(60)
    values[0], values[30:40] = np.nan, np.nan
    path = _daily_file(tmp_path, values, newest_first=newest_first)
    first = 22 if newest_first else 32  # 2023-02-09 from the top of the reversed file; 2023-01-31 else
    shown = ", ".join(str(first + k) for k in range(5))
    with pytest.raises(DataError, match=f"column 'USD' at line\\(s\\) {shown}, \\.\\.\\."):
        read_csv(path)

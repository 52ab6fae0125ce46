"""Frequency inference and future timestamps (shared by the reader, `forecaster predict` and the service)."""

from __future__ import annotations

import pandas as pd
import pytest

from forecaster.data import future_timestamps, infer_frequency
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

"""Calendar covariates: where each timestamp sits in the daily, weekly and yearly cycles, as sine and cosine.

They are known for any future timestamp, so they are future covariates that need no file at prediction;
which cycles appear depends on the step (an hourly series gets hour of day, day of week and time of year;
a monthly one only month of year).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from forecaster.data.timeindex import check_frequency
from forecaster.errors import DataError

_DAY = pd.Timedelta(days=1)


def _cycles(freq: str) -> list[str]:
    offset = check_frequency(freq)
    if isinstance(offset, pd.offsets.Tick):
        step = pd.Timedelta(offset)
        return [*(["hour"] if step < _DAY else []), *(["weekday"] if step <= _DAY else []), "year"]
    name = type(offset).__name__
    if name in ("Day", "BusinessDay"):
        return ["weekday", "year"]
    if name == "Week":
        return ["year"]
    if name.startswith(("Month", "BusinessMonth", "Quarter", "BusinessQuarter", "SemiMonth")):
        return ["month"]
    raise DataError(
        f"calendar covariates need a step shorter than a year with a cycle to describe; the data's "
        f"frequency is {freq!r}"
    )


def calendar_columns(freq: str) -> list[str]:
    """The names of the calendar covariates of a frequency, e.g. calendar_hour_sin, calendar_hour_cos."""
    return [f"calendar_{cycle}_{part}" for cycle in _cycles(freq) for part in ("sin", "cos")]


def calendar_features(index: pd.Index, freq: str | None) -> pd.DataFrame:
    """The calendar covariates of `index` (a DatetimeIndex with a known frequency)."""
    if not isinstance(index, pd.DatetimeIndex) or freq is None:
        raise DataError("calendar covariates need dates at a regular frequency; this data has none")
    hours = index.hour + index.minute / 60.0
    phases = {
        "hour": hours / 24.0,
        "weekday": (index.day_of_week + hours / 24.0) / 7.0,
        "year": (index.day_of_year - 1 + hours / 24.0) / 365.25,
        "month": (index.month - 1) / 12.0,
    }
    columns = {}
    for cycle in _cycles(freq):
        angle = 2.0 * np.pi * np.asarray(phases[cycle], dtype=np.float64)
        columns[f"calendar_{cycle}_sin"], columns[f"calendar_{cycle}_cos"] = np.sin(angle), np.cos(angle)
    return pd.DataFrame(columns, index=index)

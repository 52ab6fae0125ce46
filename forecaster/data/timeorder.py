"""The checks of a table's timestamps: sorted, one row per step, a regular frequency (or a regular grid with
missing steps, which `missing.fill_missing_cells` fills or refuses); registered benchmark files keep their
published quirks as notes."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from forecaster.data.grids import regular_grid
from forecaster.data.missing import advice, line, some
from forecaster.data.registry import DatasetSpec
from forecaster.data.timeindex import infer_frequency
from forecaster.errors import DataError

if TYPE_CHECKING:
    from collections.abc import Callable


class TimeClash(DataError):
    """Timestamps out of order or repeated, with the two rows (as `line` takes them) that clash first."""

    def __init__(self, message: str, rows: list[int]) -> None:
        super().__init__(message)
        self.rows = rows


def _irregular_steps(index: pd.DatetimeIndex, rows: np.ndarray) -> tuple[int, str]:
    """Count the steps that break the series' regular frequency and describe the first one (`rows`: each
    timestamp's row in the file, as `check_time_order` takes them)."""
    steps = np.diff(index.asi8)
    if not (steps > 0).any():
        return 0, "no regular frequency could be inferred"
    freq = infer_frequency(index[: min(len(index), 25)])
    if freq is None:
        values, counts = np.unique(steps[steps > 0], return_counts=True)
        freq = to_offset(pd.Timedelta(int(values[np.argmax(counts)]), unit=index.unit)).freqstr
    off = _off_grid(index, freq)
    if off.size:  # a date off the grid, not the gaps of missing steps around it, is what breaks the series
        p = off[0]
        later = infer_frequency(index[p:]) if len(index) - p >= 3 and off.size == len(index) - p else None
        if later is not None and later != freq:  # a publisher's weeks moved from Mondays to Fridays (h42)
            grids = f"{freq} before it, {later} from it on"
            return 1, f"the rows change grid at {line(rows[p])} ({index[p]}): {grids}"  # one step: not each
        return off.size, f"{line(rows[p])} is {index[p]}, off the {freq} grid of {line(rows[0])} ({index[0]})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        expected = index[:-1] + to_offset(freq)
    broken = np.flatnonzero((index[1:] != expected) & (steps != 0))
    if not broken.size:
        return 0, "no regular frequency could be inferred"
    p = broken[0]
    return broken.size, (
        f"{line(rows[p + 1])} is {index[p + 1]} but one {freq} step after {line(rows[p])} "
        f"({index[p]}) is {expected[p]}"
    )


def _weekdays_apart(frame: pd.DataFrame, index: pd.DatetimeIndex) -> str:
    """Where a long table's series (`frame`'s columns, on the rows of `index`) are each weekly but on
    different weekdays (stores dated on Sundays, one on Mondays), which weekday each is dated on: their dates
    together have no step, which was refused naming two dates of different series (h82 F17); else ""."""
    days: dict[str, list[str]] = {}
    for name in frame.columns:
        dates = index[frame[name].notna().to_numpy()]
        if not str(infer_frequency(dates)).startswith("W-"):
            return ""
        days.setdefault(f"{dates[0].day_name()}s", []).append(repr(str(name)))
    return "; ".join(f"{some(names)} on {day}" for day, names in days.items()) if len(days) > 1 else ""


def _off_grid(index: pd.DatetimeIndex, freq: str) -> np.ndarray:
    """Positions of the timestamps off the grid `freq` draws through the first: not a whole number of steps
    after it (an hourly or 7-day step), or not on an anchored offset (a Monday among W-SUN weeks)."""
    offset = to_offset(freq)
    if isinstance(offset, pd.offsets.Tick):
        return np.flatnonzero(((index - index[0]) % pd.Timedelta(offset)).asi8 != 0)
    return np.flatnonzero([not offset.is_on_offset(stamp) for stamp in index])


def _sampled(index: pd.DatetimeIndex) -> str:
    """Where steps of many lengths follow each other (a sensor logging every ~10 minutes), the median step,
    to resample to (the first step alone, "a 579s grid", said nothing of it); else ""."""
    steps = np.diff(index.asi8)
    if len(steps) < 10 or len(np.unique(steps)) * 10 < len(steps):
        return ""
    median = pd.Timedelta(int(np.median(steps)), unit=index.unit)
    median = to_offset(median.round("min" if median >= pd.Timedelta(minutes=2) else "s")).freqstr  # 605s
    return f"; the steps vary, {median} in the median: resample the rows to one step, such as {median}"


# Said of dekads, dated (the 1st, 11th, 21st) or labelled ("2021-01-D1"): the reader reads none
DEKADS = ("dekads, ten-day periods, three a month, which no constant frequency steps through (a month's "
          "last dekad has 8 to 11 days); expected a constant frequency (resample the rows to months, or give "
          "a row per day)")  # fmt: skip


def _dekads(index: pd.DatetimeIndex) -> bool:
    """Dates at midnight on the 1st, 11th and 21st of their months only, or on the 1st, 2nd and 3rd
    ("2021-01-1": dekads numbered, read as days)."""
    days = set(np.unique(index.day).tolist())
    return len(index) >= 6 and (index == index.normalize()).all() and days in ({1, 11, 21}, {1, 2, 3})


def _clock_turned_back(repeated: pd.DatetimeIndex) -> str:
    """The hint for repeats that are one hour of a night in spring or autumn, a local clock turned back at
    the end of daylight saving time (not a long table's series), else ""."""
    if repeated.tz is not None:  # instants: a clock turned back repeats none of them
        return ""
    within = repeated.max() - repeated.min() < pd.Timedelta(hours=1)
    if not (within and repeated.month[0] in (3, 4, 9, 10, 11) and repeated.hour[0] <= 3):
        return ""
    return (" (the hour repeated when a local clock is turned back at the end of daylight saving time: give "
            "the times with their UTC offset, +02:00 then +01:00, or in UTC)")  # fmt: skip


def before_year_one(index: pd.DatetimeIndex) -> int | None:
    """The position of the earliest timestamp where it is before the year 1, which pandas keeps and neither
    Python's calendar nor ISO 8601 writes; else None."""
    return int(np.argmin(index.asi8)) if len(index) and index.min().year < 1 else None


def check_time_order(
    path: str,
    index: pd.DatetimeIndex,
    date_col: str,
    spec: DatasetSpec | None,
    notes: list[str],
    rows: np.ndarray | None = None,
    keyed: bool = False,
    series: pd.DataFrame | None = None,
) -> tuple[str | None, pd.DatetimeIndex | None]:
    """(frequency, the full grid when steps are missing, which `fill_missing_cells` fills or refuses): reject
    unsorted, duplicate (TimeClash) and irregular timestamps (benchmark files: note them instead), and years
    before 1, which pandas keeps and neither Python's calendar nor ISO 8601 writes (a request of year 0 was a
    500). `rows`: each timestamp's row in the file where the table was reordered (a long table's times sorted:
    its repeats were named by their sorted places, 'line 2 and line 3' for lines 2 and 40, h75 F10); `keyed`:
    a long table's series already told apart, which the advice to name their column does not help; `series`:
    its rows, a column per series, whose weekdays are said where they differ (`_weekdays_apart`)."""
    rows = np.arange(len(index)) if rows is None else rows
    if (p := before_year_one(index)) is not None:
        raise DataError(f"{path}: {line(rows[p])}: {index[p]} in column {date_col!r} is before the year 1; "
                        "expected dates from the year 1 to 9999")  # fmt: skip
    steps = np.diff(index.asi8)
    long = " (a long table of several series: name the column telling them apart with id_col / --id-col)"
    long = advice(long)
    long = long if index.has_duplicates and not keyed else ""
    backwards = np.flatnonzero(steps < 0)
    if backwards.size:
        p = backwards[0]
        raise TimeClash(
            f"{path}: timestamps in column {date_col!r} are not sorted: {line(rows[p + 1])} "
            f"({index[p + 1]}) comes after {line(rows[p])} ({index[p]}) ({backwards.size} backward step(s)); "
            f"expected increasing time (sort the rows by {date_col!r}){long}",
            [rows[p], rows[p + 1]],
        )
    repeats = np.flatnonzero(steps == 0)
    if repeats.size:
        p = repeats[0]
        message = (
            f"duplicate timestamp {index[p]} in column {date_col!r} at {line(rows[p])} and "
            f"{line(rows[p + 1])} ({repeats.size} repeated row(s) in total)"
        )
        if spec is None:
            hint = _clock_turned_back(index[repeats]) or long
            clash = [rows[p], rows[p + 1]]
            raise TimeClash(f"{path}: {message}; expected one row per time step{hint}", clash)
        notes.append(message)
    freq = infer_frequency(index)
    if freq is None and len(index) >= 3:
        found = regular_grid(index) if spec is None else None
        if found is not None:
            return found
        count, first = _irregular_steps(index, rows)
        weekdays = _weekdays_apart(series, index) if series is not None and spec is None else ""
        if weekdays:
            raise DataError(f"{path}: the series dated by column {date_col!r} are weekly on different "
                            f"weekdays ({weekdays}); expected one weekday for every series (date each week "
                            "by its Monday, say)")  # fmt: skip
        if spec is None and _dekads(index):
            days = ", ".join(map(str, sorted(set(index.day))))
            raise DataError(f"{path}: column {date_col!r} dates its rows on days {days} of each month only: "
                            f"{DEKADS}")  # fmt: skip
        if spec is None:
            raise DataError(
                f"{path}: irregular time steps in column {date_col!r}: {first} ({count} irregular step(s)"
                f"{_sampled(index)}); expected a constant frequency (fill the gaps or resample the rows to "
                "one grid)"
            )
        if count:
            notes.append(f"{count} irregular step(s): {first}")
        freq = spec.freq
    return freq, None


def business_days(
    frame: pd.DataFrame, rows: np.ndarray, freq: str | None, notes: list[str]
) -> tuple[pd.DataFrame, np.ndarray, str | None]:
    """A daily table whose Saturdays and Sundays hold no value in any column (central banks' and exchanges'
    downloads list every day and leave weekends blank), as business days: those rows left out and said, so
    weekends are neither refused as gaps nor filled with invented prices. `rows`: each row's file place."""
    if freq != "D":  # every other table: no pass over its cells
        return frame, rows, freq
    weekend = np.asarray(frame.index.day_of_week >= 5)
    held = frame.notna().to_numpy().any(axis=1)
    if weekend.sum() < 4 or held[weekend].any() or not held[~weekend].any():
        return frame, rows, freq
    notes.append(f"left out the {int(weekend.sum())} Saturdays and Sundays, which hold no values: read as "
                 "business days")  # fmt: skip
    return frame[~weekend], rows[~weekend], "B"


def sorted_by_time(
    wide: pd.DataFrame,
    time_col: str,
    source: str,
    parse_dates: Callable[..., pd.DatetimeIndex],
    notes: list[str],
) -> pd.DataFrame:
    """A long table's times, pivoted in the order the file first lists them, sorted by the dates they read
    as: a long table's rows each carry their series and time, so their order says nothing (tools that read
    long tables sort them). Times that do not parse, or already in order (or newest first, which the reader
    turns), are left for the reader to check."""
    try:
        times = parse_dates(source, wide, time_col)
    except DataError:
        return wide
    steps = np.diff(times.asi8)
    if (steps >= 0).all() or (steps <= 0).all():
        return wide
    notes.append(f"sorted the rows by {time_col!r}: the table lists its times out of order")
    return wide.iloc[np.argsort(times.asi8, kind="stable")]  # each row's index: its place in the file

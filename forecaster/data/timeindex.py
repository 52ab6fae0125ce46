"""Frequency inference and future timestamps: the reader, `forecaster predict` and the service share them."""

from __future__ import annotations

import re
import warnings
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from forecaster.checks import check_int
from forecaster.errors import DataError

_OFFSET_OPTION = "future.infer_freq_returns_offset"


def _offset_results() -> AbstractContextManager:
    """Ask pandas for offsets from infer_freq where it can (pandas 3 warns about the string result)."""
    try:
        pd.get_option(_OFFSET_OPTION)
    except (pd.errors.OptionError, KeyError):
        return nullcontext()
    return pd.option_context(_OFFSET_OPTION, True)


def infer_frequency(index: pd.Index) -> str | None:
    """The pandas offset alias of a regular DatetimeIndex (e.g. "15min", "h", "W-TUE"), else None.

    None for integer indexes, fewer than three timestamps, or irregular steps.
    """
    if not isinstance(index, pd.DatetimeIndex) or len(index) < 3:
        return None
    with _offset_results():
        try:
            freq = pd.infer_freq(index)
        except (TypeError, ValueError):
            return None
    if freq is None:
        return None
    return to_offset(freq).freqstr


def season_length(freq: str | None, input_size: int | None = None) -> int | None:
    """Steps in one season of a frequency: a day of sub-daily steps (24 for hourly, 96 for 15 min), a week of
    days (7; 5 for business days), a year of weeks (52), months (12) or quarters (4); None when there is no
    season to repeat (yearly data, an unknown or irregular frequency) or, given `input_size`, when a season
    is longer than the input a model reads (seasonal naive repeats the last season it sees)."""
    season = _season_of(freq)
    return None if season is None or (input_size is not None and season > input_size) else season


def _season_of(freq: str | None) -> int | None:
    if freq is None:
        return None
    offset = check_frequency(freq)
    name = type(offset).__name__
    if isinstance(offset, pd.offsets.Tick):
        step = pd.Timedelta(offset)
        day = pd.Timedelta(days=1)
        if step < day and day % step == pd.Timedelta(0):
            return int(day // step)
        return 7 if step == day else None
    seasons = {"Day": 7, "BusinessDay": 5, "Week": 52, "MonthBegin": 12, "MonthEnd": 12,
               "BusinessMonthBegin": 12, "BusinessMonthEnd": 12, "QuarterBegin": 4, "QuarterEnd": 4,
               "BusinessQuarterBegin": 4, "BusinessQuarterEnd": 4}
    return seasons.get(name)


_SUGGESTED = re.compile(r"Did you mean (\w+)\?")


def renamed(freq: Any) -> str:
    """pandas' own suggestion for an alias it renamed ('H' is 'h' now, 'A' 'Y', 'T' 'min'), as a hint to add
    to a refusal: code written for pandas before 2.2, and most tutorials, spell them so (h72)."""
    try:
        to_offset(freq)
    except (ValueError, TypeError) as error:
        found = _SUGGESTED.search(str(error))
        return f" (pandas' old spelling of {found[1]!r})" if found else ""
    return ""


def check_frequency(freq: str) -> pd.DateOffset:
    """The pandas offset of alias `freq` (e.g. "15min", "h", "W-TUE"); DataError for anything else.

    pandas also parses steps that cannot continue a series ("0h", "-1h", 10**11 days), which would only
    fail once timestamps are computed; they are refused here with the rest.
    """
    try:
        offset = to_offset(freq)
        pd.Timestamp(0) + offset  # a step pandas' timestamps can take (at most 292 years)
    except (ValueError, TypeError, OverflowError):
        offset = None
    if offset is None or offset.n < 1:
        shown = freq if len(str(freq)) <= 40 else f"{str(freq)[:40]}..."
        raise DataError(
            f"unknown frequency {shown!r}{renamed(freq)}; expected a pandas offset alias of a positive step "
            "such as 15min, h, D"
        )
    return offset


def sub_daily(freq: str) -> bool:
    """Whether steps of `freq` are shorter than a day (counted in elapsed time; a day or longer is counted
    on a zone's clock, 23 or 25 hours across a change of daylight saving time)."""
    step = to_offset(freq)
    return isinstance(step, pd.offsets.Tick) and pd.Timedelta(step) < pd.Timedelta(days=1)


def daylight_saving(local: pd.DatetimeIndex, utc: pd.DatetimeIndex) -> bool:
    """Whether the UTC offsets of timestamps (their `local` clock times; the same instants in `utc`) change
    as a zone's daylight saving time changes them: by at most two hours at a time, at most four times in a
    calendar year (Morocco's pause for Ramadan); not every day, as dates of two zones mixed do (h82 F19)."""
    offsets = (local - utc.tz_localize(None)).to_numpy().astype("timedelta64[m]").astype(np.int64)
    steps = np.diff(offsets)
    changes = np.flatnonzero(steps)
    if np.abs(steps[changes]).max(initial=0) > 120:
        return False
    return bool(np.unique(local.year[changes + 1], return_counts=True)[1].max(initial=0) <= 4)


def in_zone(index: pd.DatetimeIndex, zone: Any, freq: str | None) -> pd.DatetimeIndex:
    """Timestamps read back at a fixed UTC offset or as local clock times, in the time zone they came in:
    steps of a day or longer keep their clock time (local midnights across DST), shorter ones their
    instant, as do days read in UTC across a zone's offsets (UTC midnights on Berlin's clock: answered at
    Berlin's midnight, two hours early)."""
    if (freq is None or sub_daily(freq) or str(index.tz) == "UTC") and index.tz is not None:
        return index.tz_convert(zone)
    return index.tz_localize(None).tz_localize(zone, nonexistent="shift_forward", ambiguous=False)


def future_timestamps(index: pd.Index, freq: str | None, horizon: int) -> pd.Index:
    """The `horizon` steps after the last value of `index`.

    A DatetimeIndex continues with `freq` (inferred from the index when None); a RangeIndex or an
    integer index continues with its step (1 unless a RangeIndex says otherwise).
    """
    check_int("horizon", horizon, minimum=1, error=DataError)
    if len(index) == 0:
        raise DataError("cannot continue an empty time index; expected at least one timestamp")
    if isinstance(index, pd.DatetimeIndex):
        freq = freq or infer_frequency(index)
        if freq is None:
            raise DataError(
                "cannot continue the timestamps: their frequency cannot be inferred "
                "(expected at least 3 regularly spaced timestamps, or an explicit frequency)"
            )
        offset = check_frequency(freq)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
            first = index[-1] + offset
        future = pd.date_range(first, periods=horizon, freq=offset, name=index.name)
        if future[-1].year > 9999:  # ISO 8601 and every reader of the answer stop at 9999-12-31
            raise DataError(f"a forecast {horizon} steps after {index[-1]} runs past the year 9999; expected "
                            "a horizon that ends by 9999-12-31")  # fmt: skip
        return future
    if pd.api.types.is_integer_dtype(index.dtype):
        step = index.step if isinstance(index, pd.RangeIndex) else 1
        start = int(index[-1]) + step
        return pd.RangeIndex(start, start + step * horizon, step, name=index.name)
    raise DataError(f"cannot continue an index of dtype {index.dtype}; expected timestamps or integer steps")


def steps_in_order(
    steps: np.ndarray, column: str, source: str, notes: list[str]
) -> tuple[np.ndarray, pd.RangeIndex]:
    """The order that sorts a long table's numbers of steps (neuralforecast's integer `ds`, with no_date;
    a sampled frame's scrambled its series), said in `notes`, and the index of the sorted steps that continues
    them (0, 2, ..., 398 goes on at 400); DataError naming a step that is no whole number, repeats or breaks
    their spacing (a forecast from the row count, 200, was labelled with steps the table held)."""
    order = np.argsort(steps, kind="stable")
    if (np.diff(order) != 1).any():
        notes.append(f"sorted the rows by {column!r}")
    steps = steps[order]
    spacing = float(np.diff(steps).min()) if len(steps) > 1 else 1.0
    if (steps != np.round(steps)).any() or spacing <= 0:
        shown = steps[np.flatnonzero(steps != np.round(steps))[0]] if spacing > 0 else steps[0]
        raise DataError(f"{source}: step {shown:g} in column {column!r} is not a whole number or repeats; "
                        "expected whole steps, each once per series (or dates, without no_date)")  # fmt: skip
    uneven = np.flatnonzero(np.diff(steps) != spacing)
    if uneven.size:
        before, after = steps[uneven[0]], steps[uneven[0] + 1]
        raise DataError(f"{source}: the steps in column {column!r} go from {before:g} to {after:g} where "
                        f"the others go by {spacing:g}; expected evenly spaced steps (add the missing rows, "
                        "or give dates, which fill_missing can fill)")  # fmt: skip
    return order, pd.RangeIndex(int(steps[0]), int(steps[-1] + spacing), int(spacing))


def names_a_frequency(freq: str) -> bool:
    """Whether `is_frequency` can compare rows with `freq`: an offset alias (`check_frequency`) or a period
    alias ("M", "Q", "Y")."""
    try:
        check_frequency(freq)
        return True
    except DataError:
        pass
    try:
        pd.Period("2000-01-01", freq=freq)
    except (ValueError, TypeError):
        return False
    return True


def alias_meaning(asked: str) -> str:
    """" ('W' is pandas' 'W-SUN')" where an alias stands for an anchored offset, else "": freq='W' on Monday
    weeks was refused without saying that 'W' means Sunday weeks (h72)."""
    try:
        name = to_offset(asked).freqstr
    except ValueError:
        return ""
    return f" ({asked!r} is pandas' {name!r})" if name != asked else ""


def is_frequency(index: pd.Index, freq: str | None, asked: str, periods: str | None = None) -> bool:
    """Whether rows at `freq` on `index` are at the frequency `asked`: the same offset ("W" is "W-SUN"), or a
    period alias they step through one by one ("M" for month starts, "Q", "Y": pandas 3 no longer takes
    them as offsets); for rows given as periods of the frequency `periods`, that one (`names_periods`)."""
    if periods is not None and names_periods(asked, periods):
        return True
    try:
        return freq is not None and to_offset(asked) == to_offset(freq)
    except ValueError:
        pass
    try:
        periods = pd.DatetimeIndex(index).to_period(asked)
    except (ValueError, TypeError):
        return False
    return bool((np.diff(periods.asi8) == 1).all())


def names_periods(asked: str, periods: str) -> bool:
    """Whether `asked` names the frequency of periods (`periods`, their alias) as a period alias ("W" is
    "W-SUN" weeks) or as the offset of their ends ("ME", "QE"): weeks read as their Monday starts, at
    "W-MON", refused the frame's own "W" (h161)."""
    for named in (lambda: pd.PeriodDtype(asked).freq, lambda: to_offset(asked)):
        try:
            if named() == pd.PeriodDtype(periods).freq:
                return True
        except (ValueError, TypeError):
            continue
    return False

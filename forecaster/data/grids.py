"""The grid of a time index: dates on different days of their periods snapped to the periods' first days (or
a holiday's moved weekly dates to their weekday), and the regular grid an index with missing steps lies on
(a weekly series with gaps), so that the missing rows can be filled."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from forecaster.data.timeindex import infer_frequency

_PERIODS = (("M", "months"), ("Q", "quarters"), ("Y", "years"))


def snap_to_periods(index: pd.DatetimeIndex) -> tuple[pd.DatetimeIndex, str] | None:
    """Dates on different days of consecutive months (a release on the 15th, then the 14th), quarters or
    years, as the first day of each period, and a note saying so; None unless each date falls in its own
    period and most follow one period after the last."""
    if len(index) < 3:
        return None
    local = index.tz_localize(None) if index.tz is not None else index  # periods of the local calendar
    for code, name in _PERIODS:
        periods = local.to_period(code)  # (of a zoned index, pandas warned that it drops the zone)
        steps = np.diff(periods.asi8)
        if (steps >= 1).all() and (steps == 1).mean() >= 0.5:
            starts = periods.to_timestamp().tz_localize(index.tz).rename(index.name)
            if starts.equals(index):
                return None
            first = f"{index[0].date()} -> {periods[0]}"
            into = (local.normalize() - periods.to_timestamp()).days  # a pay day, a release day (h62)
            days = f"on day {into[0] + 1} of each of" if (into == into[0]).all() else "on different days of"
            return starts, f"read dates {days} their {name} as {name} ({first})"
    return _snap_to_weekday(index)


# The steps a grid with gaps may hold, as a multiple of its rows and at least a number any file reaches: five
# rows a second apart then one three years on made a grid of 95 million steps, 26 s and 5 GB for a 6-row file
# (h96); rows on fewer than 1% of over a million steps are read as irregular, not as a grid with gaps.
_GRID_PER_ROW, _GRID_STEPS = 100, 1_000_000
_MAX_MOVED_SHARE = 0.1  # weekly releases a holiday moved: Baker Hughes' Thursday before Good Friday


def _snap_to_weekday(index: pd.DatetimeIndex) -> tuple[pd.DatetimeIndex, str] | None:
    """Weekly dates on one weekday but a few (at most _MAX_MOVED_SHARE) moved a day to three by a holiday
    (a Friday release on Thursday, Freddie Mac's Thursday survey on Thanksgiving's Wednesday), each as its
    week's day, and a note naming the first; None unless each then lies in its own week, most a week apart."""
    if len(index) < 5 or (index != index.normalize()).any():
        return None
    weekdays = index.day_of_week.to_numpy()
    usual = int(np.bincount(weekdays, minlength=7).argmax())
    moved = weekdays != usual
    if not moved.any() or moved.mean() > _MAX_MOVED_SHARE:  # none moved: a gap's, for regular_grid
        return None
    shift = (weekdays - usual + 3) % 7 - 3  # days from the nearest usual weekday, -3 to 3
    snapped = (index - pd.to_timedelta(shift, unit="D")).rename(index.name)
    days = np.diff(snapped.tz_localize(None).to_numpy().astype("datetime64[D]").astype(np.int64))
    if (days <= 0).any() or (days % 7).any() or (days == 7).mean() < 0.5:
        return None
    first = int(np.flatnonzero(moved)[0])
    day = f"{index[~moved][0]:%A}"
    return snapped, (f"read {int(moved.sum())} weekly date(s) off the week's {day} as that day, as a holiday "
                     f"moved them ({index[first].date()} -> {snapped[first].date()})")  # fmt: skip


def regular_grid(index: pd.DatetimeIndex) -> tuple[str, pd.DatetimeIndex] | None:
    """(frequency, every step from the first timestamp to the last) for an increasing index that lies on a
    regular grid with some steps missing; None when no grid holds every timestamp. The frequency is the
    one pandas infers most often on runs of five consecutive rows (at most 200 runs, spread out), else on
    runs of three, the fewest it infers from, where the grid misses fewer steps than half the rows (8 yearly
    rows missing the middle year hold no run of five years, h91 F6; 1990, 1995, 2000, 2001, 2002 are no
    years with gaps); None for fewer than five rows."""
    if len(index) < 5:
        return None
    for run in (5, 3):
        most = max(_GRID_PER_ROW * len(index), _GRID_STEPS) if run == 5 else (3 * len(index) - 1) // 2
        starts = np.unique(np.linspace(0, len(index) - run, num=min(200, len(index) - run + 1)).astype(int))
        found = Counter(freq for start in starts if (freq := infer_frequency(index[start : start + run])))
        for freq, _ in found.most_common(3):
            grid = _grid(index, freq, most)
            if grid is not None and len(grid) and grid[-1] == index[-1] and index.isin(grid).all():
                return freq, grid
    return None


def _grid(index: pd.DatetimeIndex, freq: str, most: int) -> pd.DatetimeIndex | None:
    """Every step of `freq` from the first timestamp of `index` to its last; None where that is more than
    `most` steps, counted before they are built (three rows a second apart among years' were 9.4 GiB) from
    the shortest of its first steps, not by building `most` of them (a million months took 7 s: every monthly
    file with a gap)."""
    offset = to_offset(freq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        try:
            first = pd.date_range(index[0], periods=8, freq=offset)
        except (OverflowError, pd.errors.OutOfBoundsDatetime):  # past 9999: fewer steps to the last row
            first = None
        if first is not None and (index[-1] - first[0]) / (first[1:] - first[:-1]).min() > 2 * most + 1:
            return None  # a month's steps differ by 10%, business days' by 3 days in 7: far more than `most`
        grid = pd.date_range(index[0], index[-1], freq=offset, name=index.name)
    return grid if len(grid) <= most else None

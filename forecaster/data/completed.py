"""A date column completed by a column beside it: hours of the day or hours ending (`with_hours`), times of
day, or the years of months written without one (`completed_dates`); read apart, the dates repeated.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from forecaster.data.dateparts import part_of
from forecaster.data.labeltexts import MONTH_NUMBERS

_HOUR_ENDING = re.compile(r"he|hour[ _]?ending|hr[ _]?end(?:ing)?", re.I)  # ERCOT's, PJM's, CAISO's
_CLOCK = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?")  # 17:24, 17:24:00, 17:24:00.5


def with_hours(raw: pd.DataFrame, index: pd.DatetimeIndex) -> tuple[pd.DatetimeIndex, str, str] | None:
    """Dates that repeat at midnight beside a column of hours 0-23 named like an hour (UCI's bike sharing:
    `dteday` and `hr`) as each date at its hour, or of hours 1-24 named as hours ending (power markets'
    `HE`, or holding 1-24 under a word, not `hh` or `hr`: no hour of the day is 24) as each date at the
    hour's end, as "24:00" times are read; that column's name and what it was read as. None for other
    tables."""
    if not index.has_duplicates or (index != index.normalize()).any():
        return None
    for column in raw.columns:
        ending = bool(_HOUR_ENDING.fullmatch(str(column).strip()))
        if part_of(column) != "hour" and not ending:
            continue
        hours = pd.to_numeric(raw[column], errors="coerce").to_numpy(dtype=np.float64)
        whole = np.isfinite(hours) & (hours == np.round(hours))
        worded = len(str(column).strip()) > 2  # `hh` numbering households 1-24 is no hour (h106)
        ending = ending or (worded and whole.all() and hours.min() == 1 and hours.max() == 24)  # IESO: Hour
        low = int(ending)  # HE 1 is the hour ending at 01:00, HE 24 the one ending at the next midnight
        if (whole & (hours >= low) & (hours <= 23 + low)).all():
            stamped = index + pd.to_timedelta(hours, unit="h")
            what = "the hour ending (1 at 01:00, 24 at the next midnight)" if ending else "the hour"
            return (stamped, str(column), what) if not stamped.has_duplicates else None
    return None


def completed_dates(raw: pd.DataFrame, date_col: str) -> tuple[pd.DataFrame, str, str] | None:
    """A date column completed by another column as one column of timestamps, that column, and a note; None
    for other tables. Dates without times beside times of day (UCI's household power `Date;Time`,
    MetaTrader's `<DATE>`, `<TIME>`): read apart, the times repeating every day made a panel of a series per
    time of day. Months without their year beside a year column (USDA QuickStats' `Year`, `Period` of JAN
    ... DEC): read alone, they were months of the year 1."""
    dates = raw[date_col]
    if not pd.api.types.is_string_dtype(dates) or not len(raw):
        return None
    others = [column for column in raw.columns if column != date_col]
    texts = dates.astype(str).str.strip()  # what follows reads whole columns only where a first value fits
    clocks = [column for column in others if pd.api.types.is_string_dtype(raw[column])
              and _CLOCK.fullmatch(str(raw[column].iloc[0]).strip())]  # fmt: skip
    if clocks and ":" not in texts.iloc[0] and not texts.str.contains(":").any():
        column = next((column for column in clocks if raw[column].str.fullmatch(_CLOCK).all()), None)
        if column is not None:
            note = f"read column {column!r} as the time of day of each date in {date_col!r}"
            return raw.assign(**{date_col: texts + " " + raw[column].str.strip()}), str(column), note
    years = [column for column in others if part_of(column) == "year"]
    if years and texts.iloc[0].lower().rstrip(".") in MONTH_NUMBERS:
        months = texts.str.lower().str.rstrip(".").map(MONTH_NUMBERS)
        for column in years:
            numbers = pd.to_numeric(raw[column], errors="coerce")
            if months.notna().all() and numbers.notna().all() and (numbers == numbers.round()).all():
                pairs = zip(numbers, months, strict=True)
                stamped = [f"{int(year):04d}-{int(month):02d}" for year, month in pairs]
                note = f"read the months of {date_col!r} in the years of column {column!r}"
                return raw.assign(**{date_col: stamped}), str(column), note
    return None

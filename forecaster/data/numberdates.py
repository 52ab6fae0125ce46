"""Dates written as numbers: whole years, YYYYMMDD or YYYYMM, R's decimal years, KOSIS's dotted months,
Unix times and Excel's serial days. Each reader answers None for numbers that are not its form, so a column
of values is never taken for dates by chance."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _whole_numbers(column: pd.Series) -> np.ndarray | None:
    """A column's values as float64 where every one is a finite whole number, else None (also for integers
    beyond float, which pandas keeps as Python ints)."""
    try:
        values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    except OverflowError:
        return None
    if not len(values) or not np.isfinite(values).all() or (values != np.round(values)).any():
        return None
    return values


def compact_dates(column: pd.Series) -> pd.DatetimeIndex | None:
    """Whole numbers written as dates without separators, YYYYMMDD (19580329, as NOAA and many databases
    export them) or YYYYMM (199501), of years 1000-2999, or YYYY0Q where every year runs 01 to 04 and no
    further (the SARB's quarters 201901 ... 201904: no months, read as January to April); None for other
    numbers."""
    values = _whole_numbers(column)
    if values is None:
        return None
    for low, high, pattern in ((10000101, 29991231, "%Y%m%d"), (100001, 299912, "%Y%m")):
        if values.min() >= low and values.max() <= high:
            parsed = pd.to_datetime(values.astype(np.int64).astype(str), format=pattern, errors="coerce")
            if parsed.isna().any():
                return None
            parts = values % 100
            quarters = pattern == "%Y%m" and len(values) >= 8 and parts.max() == 4 and _yearly_runs(values)
            return pd.DatetimeIndex(parsed if not quarters else pd.to_datetime(
                {"year": values // 100, "month": 3 * parts - 2, "day": 1}))  # fmt: skip
    return None


def estat_codes(column: pd.Series) -> pd.DatetimeIndex | None:
    """Japan's e-Stat time codes, YYYY00FFLL of a period's first and last months: 2020000101 for January
    2020, 2020000103 its first quarter, 2020000000 the year (read as Unix seconds in 2034, they had been
    refused as irregular); None unless every code is of one of these kinds."""
    values = _whole_numbers(column)
    if values is None or values.min() < 1000_00_00_00 or values.max() > 2999_00_12_12:
        return None
    codes = values.astype(np.int64)
    years, kinds, first, last = codes // 10**6, codes // 10**4 % 100, codes // 100 % 100, codes % 100
    if kinds.any():  # 10 is a fiscal year
        return None
    months = (first == last) & (first >= 1) & (first <= 12)
    quarters = (last == first + 2) & (first % 3 == 1) & (first <= 10)
    years_only = (first == 0) & (last == 0)
    if not (months.all() or quarters.all() or years_only.all()):
        return None
    return pd.DatetimeIndex(pd.to_datetime({"year": years, "month": np.maximum(first, 1), "day": 1}))


def week_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """Whole numbers YYYYWW (Delphi's and many epidemiological exports' `epiweek` 202101) as (years, weeks),
    for a column named like weeks; None unless every value has a week 1-53 of years 1000-2999."""
    values = _whole_numbers(column)
    if values is None or values.min() < 100001 or values.max() > 299953:
        return None
    years, weeks = np.divmod(values.astype(np.int64), 100)
    return None if weeks.min() < 1 or weeks.max() > 53 else (years, weeks)


def _yearly_runs(codes: np.ndarray, turn: int = 97) -> bool:
    """Whether YYYYNN codes (YYYYQ: a year's `turn` 7) in order run NN = 1, 2, 3, 4 in each year, then the
    next year's 1."""
    steps = np.diff(codes)
    steps = steps if (steps > 0).all() else -steps  # newest first too
    return bool(((steps == 1) | (steps == turn)).all() and (steps == turn).any())


def quarter_codes(column: pd.Series) -> pd.DatetimeIndex | None:
    """Quarters written as five-digit YYYYQ numbers (the CSO's TLIST(Q1): 20151 for 2015 Q1) alone in a date
    column, where each year runs 1 to 4 and then the next year's 1 (h75 F22: read as Excel's days of 1955);
    None for other numbers."""
    values = _whole_numbers(column)
    if values is None or values.min() < 10001 or values.max() > 29994 or not _yearly_runs(values, turn=7):
        return None
    years, quarters = np.divmod(values.astype(np.int64), 10)
    if quarters.min() < 1 or quarters.max() > 4:
        return None
    starts = pd.DataFrame({"year": years, "month": 3 * quarters - 2, "day": 1})
    return pd.DatetimeIndex(pd.to_datetime(starts))


def year_numbers(column: pd.Series) -> pd.DatetimeIndex | None:
    """A column of whole year numbers (1990, 1991, ...) as January 1 of each; None for other numbers."""
    values = _whole_numbers(column)
    if values is None or values.min() < 1000 or values.max() > 2999:
        return None
    return pd.DatetimeIndex([pd.Timestamp(int(year), 1, 1) for year in values])


def decimal_years(column: pd.Series) -> pd.DatetimeIndex | None:
    """Times as R writes a `ts` (1949.0833 for February 1949, 1960.25 for the second quarter of 1960), as
    the first day of each half-year, quarter or month (the coarsest that every value fits); None unless every
    value is one, of years 1000-2999, and some are not whole years."""
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    if not len(values) or not np.isfinite(values).all() or (values == np.round(values)).all():
        return None
    if values.min() < 1000 or values.max() >= 3000:
        return None
    for per_year in (2, 4, 12):
        periods = np.round(values * per_year)
        if np.abs(values * per_year - periods).max() < 1e-3:  # R prints 1949.08333333333
            years, parts = np.divmod(periods.astype(np.int64), per_year)
            months = parts * (12 // per_year) + 1
            return pd.DatetimeIndex([pd.Timestamp(int(year), int(month), 1)
                                     for year, month in zip(years, months, strict=True)])  # fmt: skip
    return None


def dotted_months(column: pd.Series, month_first: bool = True) -> pd.DatetimeIndex | None:
    """Months written with a dot, read as numbers: the year first (KOSIS: 2019.01, ..., 2019.1 for "2019.10")
    or the month (German spreadsheets: 1.2021 for "01.2021", 10.202 for "10.2020"); None unless every value
    is one, of years 1000-2999 (1800-2999 month first, where `month_first` allows it), in order, most a
    month apart."""
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    if len(values) < 2 or not np.isfinite(values).all():
        return None
    scale = 100 if values.min() >= 1000 and values.max() < 3000 else 10_000  # the part after the dot
    if scale == 10_000 and not month_first:
        return None
    if scale == 10_000 and (short := _short_year_months(values)) is not None:
        return short
    if (parts := _dotted_parts(values, scale)) is None:
        return None
    years, months = parts if scale == 100 else parts[::-1]
    earliest = 1000 if scale == 100 else 1800  # month first: 1.1 and 2.1 are no months of the year 1000
    if years.min() < earliest or years.max() >= 3000:
        return None
    return _months_in_order(years, months)


def _short_year_months(values: np.ndarray) -> pd.DatetimeIndex | None:
    """German spreadsheets' MM.YY months read as numbers (1.2 for "01.20", 1.21 for "01.21") as months of
    1930-2029, as Excel reads two-digit years, where they are in order, most a month apart, into another year:
    read as MM.YYYY they were the months of 2000, 2100 and 2200 (h75 F3). None for others (1.2 ... 12.2 alone
    may be 2000's months written 01.2000)."""
    if (parts := _dotted_parts(values, 100)) is None:
        return None
    months, short = parts
    years = short + np.where(short < 30, 2000, 1900)
    return _months_in_order(years, months) if len(np.unique(years)) > 1 else None


def _dotted_parts(values: np.ndarray, scale: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The whole numbers before the dot and the digits after it as a whole number of `scale` (100: two
    digits); None unless every value is exactly so written."""
    whole = np.floor(values)
    after = np.round((values - whole) * scale)
    return None if np.abs((values - whole) * scale - after).max() > 1e-6 else (whole, after)


def _months_in_order(years: np.ndarray, months: np.ndarray) -> pd.DatetimeIndex | None:
    """The months of `years` and `months` (1-12), in order (newest first as some downloads list them) and
    most a month apart; else None."""
    if months.min() < 1 or months.max() > 12:
        return None
    steps = np.diff(years * 12 + months)
    if not ((steps > 0).all() or (steps < 0).all()) or (np.abs(steps) == 1).mean() < 0.5:
        return None
    return pd.DatetimeIndex(pd.to_datetime(pd.DataFrame({"year": years, "month": months, "day": 1})))


def number_dates(column: pd.Series) -> pd.DatetimeIndex | None:
    """Dates written as numbers: whole years, YYYYMMDD or YYYYMM, YYYYQ quarters, R's decimal years,
    KOSIS's dotted months or e-Stat's time codes; None for others."""
    for read in (year_numbers, compact_dates, quarter_codes, decimal_years, dotted_months, estat_codes):
        if (dates := read(column)) is not None:
            return dates
    return None


def unix_times(column: pd.Series) -> tuple[pd.DatetimeIndex, str] | None:
    """A date column of Unix times (Grafana's and Prometheus' exports): whole seconds or milliseconds since
    1970 within the years 2001-2096, in UTC, and the unit; None for other numbers."""
    values = _whole_numbers(column)
    if values is None:
        return None
    for unit, low in (("s", 1e9), ("ms", 1e12)):
        if low <= values.min() and values.max() < 4.1 * low:
            stamps = pd.to_datetime(values.astype(np.int64), unit=unit, utc=True)
            return pd.DatetimeIndex(stamps, name=column.name), {"s": "seconds", "ms": "milliseconds"}[unit]
    return None


def excel_days(column: pd.Series) -> pd.DatetimeIndex | None:
    """A date column of Excel's serial day numbers (a spreadsheet's dates saved unformatted: 44562 for
    2022-01-01, days from 1899-12-30; 44562.5 its noon, the fraction the time of day, to the second: h82
    F12), within 1954-2119, that only rise or only fall; None for other numbers."""
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    if len(values) < 2 or not np.isfinite(values).all():
        return None
    steps = np.diff(values)
    if not (values.min() >= 20_000 and values.max() < 80_000 and ((steps > 0).all() or (steps < 0).all())):
        return None
    seconds = np.round(values * 86_400).astype(np.int64)  # 44562.0416666667 is 01:00, not 0.00003 s past
    return pd.DatetimeIndex(pd.Timestamp("1899-12-30") + pd.to_timedelta(seconds, unit="s"), name=column.name)

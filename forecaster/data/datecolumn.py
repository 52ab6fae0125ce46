"""The date column of a table: which column holds the dates (by name, else by what it holds), and its
values read as a DatetimeIndex, every form a refusal lists (`DATE_FORMS`) tried in one place."""

from __future__ import annotations

import re
from numbers import Number

import numpy as np
import pandas as pd

from forecaster.data.cells import MAX_DATUM_CHARS
from forecaster.data.columns import is_text, section_numbers
from forecaster.data.dateparts import EAST_ASIAN_YEARS, find_date_parts, part_named, week_dates
from forecaster.data.dates import (
    PERIOD_LABELS,
    across_offsets,
    first_day,
    parse_period_labels,
    parse_timestamps,
    period_label_misfits,
    utc_timestamps,
)
from forecaster.data.missing import SHOWN, advice, line
from forecaster.data.numberdates import (
    compact_dates,
    dotted_months,
    estat_codes,
    excel_days,
    number_dates,
    unix_times,
    week_codes,
    year_numbers,
)
from forecaster.data.timeorder import DEKADS
from forecaster.errors import DataError

DATE_NAMES = ("date", "datetime", "timestamp", "time", "ds", "period", "time_period", "date_time", "obs_date",
              "observation_date", "datum", "fecha", "timeperiod", "periode", "période", "periodo", "período",
              "okres")  # fmt: skip  # "period" as GUS (okres), INE, Istat and Statistics Norway write it
PERIOD_NAMES = ("quarter", "month", "week")  # also date_from's number columns: dates only if they hold labels
YEAR_NAMES = ("year", "yr", "jahr", "annee", "anno", *EAST_ASIAN_YEARS)


def find_year_column(raw: pd.DataFrame) -> str | None:
    """A column of whole year numbers named like a year (yearly data without a date column), else a first
    column of years 1, 2, 5 or 10 apart whatever its name (INSEE heads its years 'Libellé', GENESIS leaves
    them unnamed; censuses are 'Census year', h82 F11)."""
    for column in raw.columns:
        if column.lower() in YEAR_NAMES and year_numbers(raw[column]) is not None:
            return column
    first = raw.columns[0] if len(raw.columns) > 1 else None
    if first is not None and len(raw) >= 3 and (years := year_numbers(raw[first])) is not None:
        steps = np.unique(np.diff(years.year))
        return first if len(steps) == 1 and abs(steps[0]) in (1, 2, 5, 10) else None
    return None


def find_dates_of_long_rows(raw: pd.DataFrame) -> str | None:
    """The column of a long table's times (its id column left out): dates, else years."""
    return find_date_column(raw) or find_year_column(raw)


# e-Stat's name of its time codes ("time_code", "時間軸（月次） コード"): other columns of such numbers are
# values rounded to millions, as a "runtime" or "time_ns" in them is (h131: read as years 2000, 2001, ...)
_ESTAT_NAME = re.compile(r"(?i:\btime(?:[_ ]?code)?\b)|時間")


def find_date_column(raw: pd.DataFrame) -> str | None:
    """A text column (or one of YYYYMMDD numbers, Unix times or Excel's days) named like a date, else the
    first text column (named like a period first) whose values, a sample spread over the rows, are period
    labels or timestamps of years 1000-2999 (dateutil also reads ids such as "T1" or "M1", as year 1), not
    one date repeated (the day the file was made), else a
    column of YYYYMMDD or YYYYMM whole numbers or of e-Stat's time codes, else one of KOSIS's dotted months
    (2019.01). Of several columns named like a date, the first whose values are dates: a `Periodo` of
    "Anual" beside `fecha` was taken, and the file refused (h106)."""
    readers = (number_dates, unix_times, excel_days)
    named = [column for column in raw.columns if column.lower() in DATE_NAMES
             and (is_text(raw[column]) or any(read(raw[column]) is not None for read in readers))]
    if len(named) > 1 and not _sample_dated(raw[named[0]].dropna(), named[0]):
        named = [column for column in named if _sample_dated(raw[column].dropna(), column)] or named
    if named:
        return named[0]
    year = (find_date_parts(list(raw.columns)) or [None])[0]  # of date parts: MOSPI's fiscal "2018-19"
    for column in sorted(raw.columns, key=lambda name: name.lower() not in PERIOD_NAMES):
        values = raw[column].dropna()
        if not is_text(raw[column]) or values.empty or section_numbers(values.iloc[:20]) or column == year:
            continue
        if len(values) > 2 and (values.iloc[0] == values).all():  # NCHS's 'Data As Of' beside its weeks
            continue
        if _sample_dated(values, column):
            return column
    weekly = (column for column in raw.columns if not is_text(raw[column]))  # epiweek 202101: no month
    coded = (name for name in weekly if part_named(name) == "week" and week_codes(raw[name]) is not None)
    if (found := next(coded, None)):
        return found
    whole = (column for column in raw.columns if pd.api.types.is_numeric_dtype(raw[column]))  # NBP's: floats
    found = next((column for column in whole if compact_dates(raw[column]) is not None or (
        _ESTAT_NAME.search(str(column)) and estat_codes(raw[column]) is not None)), None)  # fmt: skip
    dotted = (column for column in raw.columns if pd.api.types.is_float_dtype(raw[column]))
    return found or next((column for column in dotted if dotted_months(raw[column], _month_named(column))
                          is not None), None)  # fmt: skip


def _sample_dated(values: pd.Series, column: str) -> bool:
    """Whether a text column's `values` (no NaN), a sample spread over the rows, are period labels or
    timestamps of years 1000-2999; numbers (YYYYMMDD, Unix times) are said by their readers."""
    if values.empty or not is_text(values):
        return not values.empty
    sample = values.iloc[np.unique(np.linspace(0, len(values) - 1, num=20).astype(int))]
    if _labelled(_weeks_named(sample, column), _weeks_named(values, column)):
        return True
    try:
        parsed = pd.DatetimeIndex(parse_timestamps(sample))
    except (ValueError, TypeError, OverflowError):  # offsets that change (summer time): pandas reads in UTC
        parsed = utc_timestamps(sample)
        return parsed is not None and _dated(parsed, column)
    return _dated(parsed, column)


def _labelled(sample: pd.Series, values: pd.Series) -> bool:
    """Whether a sample of a column's `values` are period labels: all of them, or 90% of the column of one
    kind (three quarters of the sample), so that the others are named, a week that does not exist
    ("2021-W53" last) or the NBS's January and February in one row ("2016年1-2月" among "2016年3月"), not
    "no date column found" (h75 F12, F14, F19); not where the others are the first rows, lines describing
    the columns below the header (INSEE's idBank, Période), which the reader skips later."""
    if parse_period_labels(sample) is not None:
        return True
    misfits = period_label_misfits(sample)
    if misfits is None or len(misfits[1]) > 0.25 * len(sample):
        return False
    misfits = period_label_misfits(values)  # the column's own share, not a sample's of 20
    if misfits is None or len(misfits[1]) > 0.1 * len(values):
        return False
    return not np.array_equal(misfits[1], np.arange(len(misfits[1])))  # no lines above the labels (INSEE's)


def _dated(parsed: pd.DatetimeIndex, column: str) -> bool:
    """Whether a sample of a column's values, read as timestamps, are dates of the years 1000-2999: all of
    them, or 90% where the column is named like a period, so that a cell cut short ("2022-12-0", the last
    line of a download) is named as no date (h75 F19: the column was not found, "no date column found")."""
    dated = parsed.notna() & (parsed.year >= 1000) & (parsed.year <= 2999)
    return bool(dated.all() or (str(column).lower() in PERIOD_NAMES and dated.mean() >= 0.9))


def _month_named(column: str) -> bool:
    """Whether a column is named like a date or a month: 1.2, 2.2, ... of a table of years is no 01.2000."""
    return str(column).strip().lower() in DATE_NAMES or part_named(column) == "month"


_YEAR_NUMBER = r"^(\d{4})-(\d{1,2})$"
_EPIDEMIOLOGICAL = re.compile(r"epi|mmwr", re.IGNORECASE)


def _weeks_named(column: pd.Series, date_col: str) -> pd.Series:
    """A text column named like weeks of years and weeks as ISO week labels '2021-W05': the ECDC's
    `year_week` '2021-05' (read as months where they stop by week 12, and refused beyond)."""
    if part_named(date_col) != "week" or not is_text(column):
        return column
    texts = column.astype(str).str.strip()
    if not texts.str.match(_YEAR_NUMBER).all():
        return column
    return texts.str.replace(_YEAR_NUMBER, r"\1-W\2", regex=True)


def _week_numbers(
    column: pd.Series, date_col: str, path: str, notes: list[str], count: str | None
) -> pd.DatetimeIndex | None:
    """Numbers YYYYWW of a column named like weeks (read as YYYYMM alike) as their weeks' first days, counted
    as `count` says (--weeks), else ISO's, or for an `epiweek` (Delphi's, the CDC's) epidemiological (MMWR)
    weeks, Sunday to Saturday, whose 2014 has a week 53 (its 535 values were refused as "not timestamps")."""
    codes = week_codes(column) if part_named(date_col) == "week" and not is_text(column) else None
    if codes is None:
        return None
    epidemiological = count is None and _EPIDEMIOLOGICAL.search(str(date_col)) is not None
    starts, _ = week_dates(*codes, path, notes, count or ("mmwr" if epidemiological else "iso"))
    if epidemiological:
        notes.append(f"read column {date_col!r} as epidemiological (MMWR) weeks, Sunday to Saturday")
    return starts.rename(date_col)


DATE_FORMS = (  # the forms of dates read, as the refusals of a date column in none of them list them
    "expected timestamps such as 2016-07-01 00:00:00, period labels such as 2020-Q1, 2020M01, 2020:1, "
    "2020-W05, FY2020 or 2019/20, whole years"
)


def parse_dates(
    path: str,
    raw: pd.DataFrame,
    date_col: str,
    notes: list[str] | None = None,
    weeks: str | None = None,
    dayfirst: bool = False,
) -> pd.DatetimeIndex:
    """Timestamps, period labels ("2020 Q1", "2020M01", "2020-W05") or whole years, as a DatetimeIndex;
    timestamps whose UTC offsets change as `dates.across_offsets` reads them (said in `notes`); YYYYWW
    numbers under a name of weeks counted as `weeks` (--weeks iso or mmwr) says (`_week_numbers`); dates
    that read day or month first alike read day first where `dayfirst` (`dates.parse_timestamps`)."""
    coded = _week_numbers(raw[date_col], date_col, path, notes if notes is not None else [], weeks)
    if coded is not None:
        return coded
    column = _weeks_named(raw[date_col], date_col)  # weeks named so, as labels
    if not is_text(column):
        numbers = number_dates(column)
        if numbers is not None:
            return numbers.rename(date_col)
        if (unix := unix_times(column)) is not None:
            said = f"read column {date_col!r} as Unix times in {unix[1]} (UTC)"
            (notes if notes is not None else []).append(said)
            return unix[0]
        if (days := excel_days(column)) is not None:
            (notes if notes is not None else []).append(f"read column {date_col!r} as Excel's day numbers")
            return days
        raise DataError(
            f"{path}: date column {date_col!r} holds numbers that are not years or dates; {DATE_FORMS}, "
            "YYYYMMDD numbers, R's decimal years (1949.0833), or Excel's serial days (44562.5)"
            + advice(" (date_from / --date-from year,quarter builds dates from separate columns; no_date / "
                     "--no-date indexes rows by steps)")
        )
    labels = parse_period_labels(column)
    if labels is not None:
        return labels.rename(date_col)

    def mixed() -> DataError:  # made when raised: its line is counted only then (`missing.line_number`)
        return DataError(f"{path}: date column {date_col!r} mixes time zones or UTC offsets "
                         f"({str(column.iloc[0])!r} on {line(0)}); expected one zone throughout (convert the "
                         "dates, e.g. to UTC)")  # fmt: skip

    number = column.map(lambda value: isinstance(value, Number) and pd.notna(value)).astype(bool)
    texts = column.where(~number)  # 12345 among date texts (JSON records): no date, not 12345 ns past 1970
    ties: list[str] = []  # month first taken where day first reads the dates as well
    try:
        parsed = parse_timestamps(texts, ties, dayfirst)
    except (ValueError, TypeError, OverflowError) as error:
        shifted = across_offsets(texts)
        if shifted is not None:
            (notes if notes is not None else []).append(shifted[1])
            return shifted[0]
        if utc_timestamps(texts) is not None:
            raise mixed() from None
        raise DataError(
            f"{path}: date column {date_col!r} cannot be parsed as timestamps ({error}); "
            "expected one format and one time zone"
        ) from None
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if bad.size and (shifted := across_offsets(texts)) is not None:  # pandas reads one offset only
        (notes if notes is not None else []).append(shifted[1])
        return shifted[0]
    if bad.size and utc_timestamps(texts) is not None:  # each a timestamp, read only where all share a zone
        raise mixed()
    if bad.size:
        misfits = period_label_misfits(column)  # most rows labels of one kind: the others are the bad ones
        kind = "timestamps" if misfits is None else f"{misfits[0]} labels like the others"
        bad = bad if misfits is None else misfits[1]
        shown = ", ".join(
            f"{line(p)} " + ("(empty)" if pd.isna(column.iloc[p]) else repr(str(column.iloc[p])))
            + _no_such_week(column.iloc[p]) for p in bad[:SHOWN]
        )
        one = f"expected {'a timestamp' if misfits is None else 'one form of label'} in every row"
        if bad.size == len(column) and (form := _unread_form(column.iloc[0])) is not None:
            raise DataError(f"{path}: date column {date_col!r} holds labels like {str(column.iloc[0])!r} "
                            f"({line(0)}): {form}")  # fmt: skip
        raise DataError(  # every value unread: a form not read, rather than a few bad cells
            f"{path}: date column {date_col!r} has {bad.size} value(s) that are not {kind}: {shown}; "
            + (DATE_FORMS if bad.size == len(column) else one)
        )
    _refuse_early_years(path, column, parsed, date_col)
    if notes is not None:
        notes.extend(f"column {date_col!r}: {tie}" for tie in ties)
    return pd.DatetimeIndex(parsed, name=date_col)


# Period labels of forms the reader knows and cannot read, said as what they are (h91 F9)
_UNREAD_FORMS = (
    (re.compile(r"\d{4}-\d{1,2}-D[1-3]"), DEKADS),
    (re.compile(r"\d{4}\s*[-_ ]?\s*P(?:0?[1-9]|1[0-3])"), "4-week periods, 13 a year (P01 to P13), whose "
     "first days depend on when the year's first period starts; expected the first day of each period as a "
     "date (dates 28 days apart are read)"),
)  # fmt: skip


def _unread_form(value: object) -> str | None:
    """What a label of a form in `_UNREAD_FORMS` is, and what is expected; None for others."""
    text = str(value).strip()
    return next((said for form, said in _UNREAD_FORMS if form.fullmatch(text[:MAX_DATUM_CHARS])), None)


def _no_such_week(value: object) -> str:
    """Why a week label of the others' form is none: " (2021 has no ISO week 53)", else "" (h75 F14: it was
    called not a week label like the others); a cell longer than any label is none (the patterns take
    quadratic time on a long run of spaces)."""
    text = str(value).strip()
    for pattern, part in PERIOD_LABELS:
        found = pattern.match(text) if part == "week" and len(text) <= MAX_DATUM_CHARS else None
        if found is not None:
            try:
                first_day(int(found["year"]), "week", int(found["week"]))
            except ValueError:
                return f" ({found['year']} has no ISO week {int(found['week'])})"
            return ""
    return ""


def _refuse_early_years(path: str, column: pd.Series, parsed: pd.Series, date_col: str) -> None:
    """Refuse dates before the year 1000 read from text without a four-digit year: pandas dates a day and
    month without their year ("Jan 22", "01/22" not in order as months) in the year 1, and no series is (h75
    F2: forecasts were dated 0002-01-01)."""
    early = (parsed.dt.year < 1000).to_numpy()
    if early.any():  # the texts searched only then: ETTm1's 70,000 timestamps
        early = early & ~column.astype(str).str.contains(r"\d{4}").to_numpy()
    if early.any():
        first = int(np.flatnonzero(early)[0])
        raise DataError(
            f"{path}: date column {date_col!r} has {int(early.sum())} value(s) read as dates before the year "
            f"1000, none with a four-digit year: {line(first)} {str(column.iloc[first])!r}; expected a year "
            "in every date (2022-01, Jan 2022; months with a two-digit year, Jan 22 or 01/22, in order)"
        )

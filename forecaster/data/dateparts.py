"""Dates from separate columns: year and quarter, month, week, or month, day and hour, as offices and weather
records publish them (Destatis' "Jahr;Monat", NOAA's year, month, day, hour; the CDC's YEAR, WEEK); a date
column beside a column of hours or of times of day is `completed`'s. Each period becomes its first day (ISO
weeks: their Monday).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from forecaster.data.cells import datum_texts
from forecaster.data.dates import QUARTER_WORDS, ROMAN_QUARTERS, SPAN_BETWEEN, first_day
from forecaster.data.keys import in_place_of
from forecaster.data.labeltexts import MONTH_NUMBERS
from forecaster.data.missing import line
from forecaster.errors import DataError, MissingDateColumnsError

# The column sets that `date_from` accepts, the finer part last.
DATE_PARTS = {("year",): "year", ("year", "quarter"): "quarter", ("year", "month"): "month",
              ("year", "week"): "week", ("year", "month", "day"): "day", ("year", "doy"): "day",
              ("year", "month", "day", "hour"): "hour"}  # fmt: skip
WEEK_COUNTS = ("iso", "mmwr")  # Monday to Sunday; epidemiological weeks, Sunday to Saturday
_RANGES = {"year": (1, 9999), "quarter": (1, 4), "month": (1, 12), "week": (1, 53), "day": (1, 31),
           "doy": (1, 366), "hour": (0, 23)}  # fmt: skip
# The parts as offices name them (Destatis' GENESIS "Jahr;Monat", INSEE, INE, Istat, CBS, IBGE, TurkStat's
# "Yıl;Ay"; the Met Office's "yyyy mm"; Japanese, Chinese and Korean years: h111), case ignored.
EAST_ASIAN_YEARS = ("年", "年份", "연도", "년도")
_PART_NAMES = {
    **dict.fromkeys(("year", "jahr", "année", "annee", "año", "ano", "anno", "jaar", "yyyy", "yr", "yıl",
                     "rok", "år", "aasta", "vuosi", *EAST_ASIAN_YEARS), "year"),  # fmt: skip
    **dict.fromkeys(("quarter", "quartal", "trimestre", "kwartaal", "qtr", "çeyrek", "kwartał", "kwartal",
                     "kvartal", "四半期", "季度", "분기"), "quarter"),  # fmt: skip
    **dict.fromkeys(("month", "monat", "mois", "mes", "mês", "mese", "maand", "mm", "mo", "mon", "ay",
                     "miesiąc", "månad", "måned", "kuukausi", "月", "月份", "월"), "month"),  # fmt: skip
    **dict.fromkeys(("week", "woche", "semaine", "semana", "settimana", "wk", "kw", "kalenderwoche", "vecka",
                     "uke", "uge", "viikko", "tydzień"), "week"),  # fmt: skip
    **dict.fromkeys(("day", "tag", "jour", "día", "dia", "giorno", "dag", "dd"), "day"),
    **dict.fromkeys(("hour", "stunde", "heure", "hora", "ora", "uur", "hh", "hr"), "hour"),
    **dict.fromkeys(("doy", "day of year", "day_of_year", "dayofyear", "jday"), "doy"),  # NASA POWER's DOY
}


# How a part's name may be qualified: UN Comtrade's refYear, WHO FluNet's ISO_WEEK and MMWR_YEAR
# "ISO week", the Treasury's "Calendar Month Number" and "Fiscal Year"
_QUALIFIED = re.compile(r"(?:(?:ref|iso|mmwr|epi|calendar|fiscal)[_ ]?)?(?P<part>.+?)"
                        r"(?:[_ ](?:number|num|no|nbr))?")


def part_of(name: object) -> str | None:
    """The date part a column's name says it holds (_PART_NAMES, case ignored, maybe _QUALIFIED), or None."""
    if str(name).strip() == "kW":  # kilowatts; KW, Kw: German calendar weeks (Kalenderwoche)
        return None
    text = str(name).strip().lower()
    qualified = _QUALIFIED.fullmatch(text)
    return _PART_NAMES.get(text) or (_PART_NAMES.get(qualified["part"]) if qualified else None)


def part_named(name: object) -> str | None:
    """The date part a column's name says it holds (`part_of`), also where a part's name of four letters or
    more closes a longer one: RKI's `Meldewoche`, the ECDC's `year_week`."""
    text = str(name).strip().lower()
    return part_of(name) or next((part for word, part in _PART_NAMES.items()
                                   if len(word) >= 4 and text.endswith(word)), None)  # fmt: skip


_PART_FLAG = re.compile(r"\s*(?P<flag>[*#\u2020\u2021]+|\([A-Za-z]{1,3}\.?\))$")  # "Nov #", "Dec (p)"


def date_part_kinds(columns: Sequence[str]) -> tuple[str, ...] | None:
    """The part each column holds, by its name (case ignored, _PART_NAMES), if they make one of DATE_PARTS."""
    kinds = tuple(part_of(column) or "" for column in columns)
    return kinds if kinds in DATE_PARTS else None


def find_date_parts(columns: Sequence[str]) -> list[str] | None:
    """Columns named year and quarter, month, week or month and day (and hour) (case ignored, _PART_NAMES),
    the most parts first found, then the finest (Power BI's Year, Quarter, Month are months); else None."""
    by_kind = {part_of(column): column for column in columns}
    finest = list(_RANGES)  # coarse to fine
    for kinds in sorted(DATE_PARTS, key=lambda kinds: (len(kinds), finest.index(kinds[-1])), reverse=True):
        if len(kinds) > 1 and all(kind in by_kind for kind in kinds):
            return [by_kind[kind] for kind in kinds]
    return None


# A quarter or a month written with its letter in a column of its own, as spreadsheets, pivots and offices
# write them: "Q1", Power BI's "Qtr 1", "Quarter 1", "T1" (trimestre), "K1" (kvartal), "1Q"; "M01" (h62 F2)
_LETTERED = {
    "quarter": re.compile(r"^(?:Q|Qtr\.?|Quarter|T|K)\s*(?P<number>[1-4])$|^(?P<before>[1-4])\s*Q$", re.I),
    "month": re.compile(r"^M(?P<number>0?[1-9]|1[0-2])$", re.I),
}


def _lettered(texts: pd.Series, kind: str) -> pd.Series:
    """A column's quarters or months written with their letter (`_LETTERED`) as numbers, else NaN (the groups
    taken column by column: a row-wise bfill of the object frame took 12 s on 70,000 rows, h106)."""
    found = texts.str.extract(_LETTERED[kind])
    return pd.to_numeric(found["number"].fillna(found["before"]) if "before" in found else found["number"])


def _roman_quarters(texts: pd.Series) -> pd.Series:
    """Quarters written in Roman numerals ("I kvartal"; DANE's "IIIpr", preliminary) as numbers, else NaN."""
    return pd.to_numeric(texts.str.extract(r"^(IV|I{1,3})(?![IVX])", expand=False).map(ROMAN_QUARTERS))


def _kinds_by_values(raw: pd.DataFrame, columns: Sequence[str]) -> tuple[str, ...] | None:
    """The parts of two date_from columns named in no language known (GUS's `Rok,Kwartał`, Estonia's
    `Aasta,Kvartal`): years, then quarters, months or weeks by the largest number the second holds."""
    if len(columns) != 2 or part_of(columns[1]) is not None:  # a part named (year, day) is that part
        return None
    if any(name not in raw.columns for name in columns):
        return None
    texts = raw[columns[1]].astype(str).str.strip()
    high = (pd.to_numeric(raw[columns[1]], errors="coerce").fillna(_roman_quarters(texts))
            .fillna(_lettered(texts, "quarter")).max())  # fmt: skip
    kind = next((kind for kind in ("quarter", "month", "week") if high <= _RANGES[kind][1]), None)
    return None if kind is None else ("year", kind)


def dates_from_parts(
    raw: pd.DataFrame, columns: Sequence[str], source: str, notes: list[str], weeks: str | None = None
) -> tuple[pd.DatetimeIndex, str | None]:
    """The index built from whole-number columns named year (and quarter, month or week), and how its weeks
    count (`WEEK_COUNTS`, `weeks` or as they fit; None without a week column); DataError naming the column
    and line of a value out of range."""
    kinds = date_part_kinds(columns) or _kinds_by_values(raw, columns)
    if kinds is None:
        raise DataError(
            f"{source}: date_from={list(columns)}: expected columns named "
            + " | ".join(",".join(key) for key in DATE_PARTS)
            + ", or two: a year and its quarter, month or week (whole numbers up to 4, 12 or 53)"
        )
    missing = [name for name in columns if name not in raw.columns]
    if missing:
        raise MissingDateColumnsError.among(
            f"{source}: date_from column(s) {', '.join(map(repr, missing))} not found", missing, raw.columns
        )
    numbers, fiscal = {}, False  # fiscal: years written as spans, 2018-19
    for kind, name in zip(kinds, columns, strict=True):
        texts = datum_texts(raw[name].astype(str).str.strip())
        flags = texts.str.extract(_PART_FLAG)["flag"] if kind != "year" else pd.Series(dtype=object)
        if flags.notna().any():  # C&SD's "Nov #": provisional figures
            texts = texts.str.replace(_PART_FLAG, "", regex=True)
            notes.append(f"read {int(flags.notna().sum())} {kind}(s) in column {name!r} without their flags "
                         f"({', '.join(dict.fromkeys(flags.dropna()))})")  # fmt: skip
        named = None  # "Januar", "März", "1. Quartal": GENESIS writes its months and quarters by name
        if kind == "month":
            named = texts.str.lower().map(MONTH_NUMBERS)
        elif kind == "quarter":  # "1. Quartal", or Roman as Statistics Estonia's "I kvartal"
            named = pd.to_numeric(texts.str.extract(f"^{QUARTER_WORDS.pattern}$", flags=re.I)["quarter"])
            named = named.fillna(_roman_quarters(texts))
        if kind in _LETTERED:
            named = named.fillna(_lettered(texts, kind))
        column = pd.to_numeric(raw[name] if kind == "year" else texts, errors="coerce").to_numpy(np.float64)
        if named is not None:
            column = np.where(np.isnan(column), named.to_numpy(dtype=np.float64), column)
        spans = _fiscal_years(texts) if kind == "year" else None
        if spans is not None:
            column, fiscal = spans, True
        if kind == "year" and len(column) > 1 and np.isfinite(column[0]) and raw[name].isna().any():
            column = pd.Series(column).ffill().to_numpy()  # a table's year on its first row only
            notes.append(f"carried each year in column {name!r} down to the rows below it, left blank")
        low, high = _RANGES[kind]
        whole = np.isfinite(column) & (column == np.round(column))
        bad = np.flatnonzero(~whole | (column < low) | (column > high))
        if bad.size:
            cell = raw[name].iloc[bad[0]]
            shown = "an empty cell" if pd.isna(cell) or not str(cell).strip() else str(cell)
            raise DataError(f"{source}: column {name!r} {line(bad[0])}: {shown} is not a {kind} number; "
                            f"expected whole numbers {low}-{high}")  # fmt: skip
        numbers[kind] = column.astype(int)
    part = DATE_PARTS[kinds]
    name = "+".join(map(str, columns))
    if fiscal and part in ("month", "quarter"):  # MOSPI's "2018-19, April" ... "2018-19, March"
        numbers["year"], note = _calendar_years(numbers["year"], numbers[part], part)
        notes.append(f"read column {columns[0]!r} as fiscal years {note}")
    if "doy" in numbers:  # the day of the year, 1 the first of January
        days = pd.to_datetime(pd.DataFrame({"year": numbers["year"], "month": 1, "day": 1}))
        days = pd.DatetimeIndex(days + pd.to_timedelta(numbers["doy"] - 1, unit="D"), name=name)
        beyond = np.flatnonzero(days.year != numbers["year"])
        if beyond.size:
            row = int(beyond[0])
            raise DataError(f"{source}: {line(row)}: year {numbers['year'][row]} has no day "
                            f"{numbers['doy'][row]}; expected a day of its year")  # fmt: skip
        return days, None
    if part in ("day", "hour"):  # NOAA, UCI's Beijing air: a calendar date in three or four columns
        days = pd.to_datetime(pd.DataFrame(numbers), errors="coerce")
        if days.isna().any():
            row = int(np.flatnonzero(days.isna().to_numpy())[0])
            date = "-".join(f"{numbers[kind][row]:02d}" for kind in ("year", "month", "day"))
            raise DataError(f"{source}: {line(row)}: {date} is no calendar day; expected a real date")
        return pd.DatetimeIndex(days, name=name), None
    if part == "week":
        index, weeks = week_dates(numbers["year"], numbers["week"], source, notes, weeks)
        return index.rename(name), weeks
    days = []
    for row, year in enumerate(numbers["year"]):
        value = int(numbers[part][row]) if part != "year" else 1
        try:
            days.append(first_day(int(year), part, value))
        except ValueError:
            raise DataError(
                f"{source}: {line(row)}: year {year} has no {part} {value}; expected a real {part}"
            ) from None
    return pd.DatetimeIndex(days, name=name), None


_SPAN = rf"^(?P<year>\d{{4}}){SPAN_BETWEEN}(?P<next>\d{{2}}|\d{{4}})$"  # "2018-19", "2018/2019"


def _fiscal_years(texts: pd.Series) -> np.ndarray | None:
    """The first years of fiscal years written as spans ("2018-19": 2018), each year's next after it; None
    unless every value is one (blanks left to be carried down)."""
    found = texts.where(texts != "nan").dropna().str.extract(_SPAN)
    if found.empty or found["year"].isna().any():
        return None
    first, second = pd.to_numeric(found["year"]), pd.to_numeric(found["next"])
    if not ((second == first + 1) | (second == (first + 1) % 100)).all():
        return None
    return pd.to_numeric(texts.str.extract(_SPAN)["year"]).to_numpy(dtype=np.float64)


def _calendar_years(years: np.ndarray, parts: np.ndarray, part: str) -> tuple[np.ndarray, str]:
    """The calendar years of months or quarters of fiscal years named by their first year: a fiscal year
    begins with the part its rows begin with most often (April in India, July in Australia), and the parts
    before that one fall in the next calendar year; and the note saying where the years begin."""
    starts = pd.Series(parts).groupby(years).first()
    start = int(starts.mode().iloc[0])
    shown = calendar.month_name[start] if part == "month" else f"quarter {start}"
    return years + (parts < start), f"beginning in {shown}"


def _week_starts(years: np.ndarray, weeks: np.ndarray, count: str) -> pd.DatetimeIndex:
    """Each week's first day, NaT where its year has no such week. ISO weeks (Monday first) and MMWR's
    epidemiological weeks (the CDC's and Brazil's, Sunday first) both count from the week holding 4 January,
    and a week belongs to the year holding its fourth day."""
    january = pd.DatetimeIndex(pd.to_datetime(pd.DataFrame({"year": years, "month": 1, "day": 4})))
    into_week = (january.day_of_week + (count == "mmwr")) % 7  # days since the week began
    starts = january + pd.to_timedelta(7 * (weeks - 1) - into_week, unit="D")
    return starts.where((starts + pd.Timedelta(days=3)).year == years)


def _weeks_left_out(starts: pd.DatetimeIndex) -> int:
    """How many weeks the rows skip between their first and last."""
    steps = np.diff(np.unique(starts.to_numpy().astype("datetime64[D]").astype(np.int64))) // 7
    return int(np.maximum(steps - 1, 0).sum())


def week_dates(
    years: np.ndarray, weeks: np.ndarray, source: str, notes: list[str], count: str | None
) -> tuple[pd.DatetimeIndex, str]:
    """The weeks' first days and how they count: as `count` says, else ISO's unless MMWR's fit better (a week
    53 of a year that has one only so, MMWR's 2014; or fewer weeks left out, ISO's 2015 having a week 53
    that MMWR's has not)."""
    starts = {kind: _week_starts(years, weeks, kind) for kind in WEEK_COUNTS}
    iso, mmwr = starts["iso"], starts["mmwr"]
    if count is None:
        fits = not mmwr.hasnans and (iso.hasnans or _weeks_left_out(mmwr) < _weeks_left_out(iso))
        count = "mmwr" if fits else "iso"
        if fits:
            why = (f"year {years[iso.isna()][0]} has a week 53 only so" if iso.hasnans else
                   f"read as ISO weeks, {_weeks_left_out(iso)} week(s) would be missing")  # fmt: skip
            notes.append(f"read weeks as epidemiological (MMWR) weeks, Sunday to Saturday: {why}")
        elif not mmwr.hasnans and _weeks_left_out(mmwr) == _weeks_left_out(iso):  # the CDC's FluView
            notes.append("read weeks as ISO weeks, Monday to Sunday; the CDC's epidemiological (MMWR) weeks, "
                         "Sunday to Saturday, fit as well: --weeks mmwr")  # fmt: skip
    if starts[count].hasnans:
        row = int(np.flatnonzero(starts[count].isna())[0])
        raise DataError(f"{source}: {line(row)}: year {years[row]} has no week {weeks[row]} as {count} "
                        f"counts weeks; expected a real week (weeks {'/'.join(WEEK_COUNTS)})")  # fmt: skip
    return starts[count], count


def _parts_of(index: pd.DatetimeIndex, kinds: Sequence[str], weeks: str | None) -> list[np.ndarray]:
    """Each of `kinds` (DATE_PARTS) of `index`'s dates; a week's year and number those of its fourth day,
    counted from its Monday (ISO) or Sunday (MMWR), as `_week_starts` reads them."""
    values = {"year": index.year, "quarter": index.quarter, "month": index.month, "day": index.day,
              "doy": index.day_of_year, "hour": index.hour}  # fmt: skip
    if "week" in kinds:
        since = (index.day_of_week + 1) % 7 if weeks == "mmwr" else index.day_of_week  # ISO's, as the reader
        fourth = index.normalize() - pd.to_timedelta(np.asarray(since) - 3, unit="D")
        values.update(year=fourth.year, week=(fourth.day_of_year - 1) // 7 + 1)
    return [np.asarray(values[kind], dtype=np.int64) for kind in kinds]


def written_as_parts(
    raw: pd.DataFrame, columns: Sequence[str], index: pd.DatetimeIndex, weeks: str | None
) -> tuple[str, ...] | None:
    """`columns`, where every row holds its date's parts in them as numbers (`index` read from them), for
    forecasts to be written in them (`parts_index`); None where the file wrote them otherwise (fiscal years,
    months by name, "Nov #") or names them in no language known."""
    kinds = date_part_kinds(columns)
    if kinds is None:
        return None
    for name, values in zip(columns, _parts_of(index, kinds, weeks), strict=True):
        if not np.array_equal(pd.to_numeric(raw[name], errors="coerce").to_numpy(np.float64), values):
            return None
    return tuple(columns)


def parts_index(index: pd.DatetimeIndex, columns: Sequence[str], weeks: str | None) -> pd.MultiIndex:
    """`index`'s dates as the date-part columns a file wrote its own in (`written_as_parts`): the CDC's
    YEAR, WEEK forecast as 2020, 14, not as 2020-04-05."""
    kinds = date_part_kinds(columns) or ()
    return pd.MultiIndex.from_arrays(_parts_of(index, kinds, weeks), names=list(columns))


_WEEKDAY_NAMES = frozenset({"weekday", "dayofweek", "day_of_week", "day of week", "dow", "wday"})


def restates_a_part(name: object, column: pd.Series, index: pd.DatetimeIndex) -> bool:
    """Whether a column named like a part of a date (year, quarter, month, ISO week, day, hour, weekday from
    0 or 1, Monday or Sunday first; a fiscal year or quarter from any month) holds that part of each of
    `index`'s dates: the dates written out again beside them (Kaggle's `date, year, month, weekday, sales`),
    no series to forecast."""
    kind = "weekday" if str(name).strip().lower() in _WEEKDAY_NAMES else part_of(name)
    if kind is None or not pd.api.types.is_numeric_dtype(column):
        return False
    monday, month = index.day_of_week.to_numpy(), index.month.to_numpy()
    iso, epi = _parts_of(index, ("year", "week"), "iso"), _parts_of(index, ("year", "week"), "mmwr")
    starts = range(2, 13)  # a fiscal year from another month, named by the year it ends or begins in
    fiscal = [index.year + ((month >= start) if ending else -(month < start).astype(int))
              for start in starts for ending in (True, False)]  # fmt: skip
    parts = {"year": [index.year, iso[0], epi[0], *fiscal],
             "quarter": [index.quarter, *(((month - start) % 12) // 3 + 1 for start in starts)],
             "month": [index.month], "day": [index.day], "week": [iso[1], epi[1]],
             "hour": [index.hour],
             "weekday": [monday, monday + 1, (monday + 1) % 7, (monday + 1) % 7 + 1]}  # fmt: skip
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return any(np.array_equal(values, np.asarray(part, dtype=np.float64)) for part in parts[kind])


def date_codes(index: pd.DatetimeIndex) -> list[np.ndarray]:
    """`index`'s dates as codes a column of numbers may write them in: 20141 for 2014 Q1 (the CSO's TLIST(Q1)
    beside its Quarter column), 201401 for January 2014, 20140101 for its first day, 140101 (the CFTC's
    YYMMDD); made once for all of a table's columns (per column, 3,000 series took 18 s)."""
    year = index.year.to_numpy(dtype=np.float64)
    month = year * 100 + index.month.to_numpy()
    day = month * 100 + index.day.to_numpy()
    return [year * 10 + index.quarter.to_numpy(), month, day, day % 1_000_000]


def codes_the_dates(column: pd.Series, codes: list[np.ndarray]) -> bool:
    """Whether a column of numbers writes each date as one of its `date_codes`: no series to forecast."""
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return False
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return any(np.array_equal(values, code) for code in codes)


_LABELS = {"year": "%Y", "month": "%Y-%m", "week": "%Y-%m-%d", "day": "%Y-%m-%d", "hour": "%Y-%m-%d %H:00"}


def parts_as_column(
    raw: pd.DataFrame, parts: Sequence[str], source: str, notes: list[str], weeks: str | None
) -> tuple[pd.DataFrame, str, str | None]:
    """`raw` with its date-part columns as one column of period labels ("2010-Q1", "2010-01") named by the
    parts joined ("year+quarter"), its name, and how the weeks count: a long table takes its times from one
    column (a panel of countries by year and quarter was refused as unsorted, or keyed by its quarter)."""
    index, counted = dates_from_parts(raw, parts, source, notes, weeks)
    part = DATE_PARTS[date_part_kinds(parts) or ()]
    labels = (index.year.astype(str) + "-Q" + index.quarter.astype(str) if part == "quarter"
              else index.strftime(_LABELS[part]))  # fmt: skip
    name = str(index.name)  # the parts joined: "year+quarter"
    return in_place_of(raw, list(parts), name, np.asarray(labels, dtype=object)), name, counted

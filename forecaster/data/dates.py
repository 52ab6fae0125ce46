"""Time indexes from what tables hold besides timestamps.

Official statistics often publish periods as labels ("2020 Q1", "Q1 2020", "2020-T1", "2020M01",
"2020-W05"), as year numbers, or as separate year / quarter / month / week columns (weather records: year,
month, day and hour); each becomes the period's first day (ISO weeks: their Monday). Dates read two ways (day
or month first) are read the way that gives a regular index (`grids`).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
from pandas.tseries.api import guess_datetime_format

from forecaster.data.cells import MAX_DATUM_CHARS
from forecaster.data.grids import snap_to_periods
from forecaster.data.labeltexts import MONTH_NUMBERS, PROVISIONAL, label_texts
from forecaster.data.shortyears import SHORT_YEAR_MONTHS, months_in_order
from forecaster.data.timeindex import daylight_saving, infer_frequency, sub_daily

QUARTER_WORDS = re.compile(r"(?P<quarter>[1-4])\.?\s*(?:quartal|quarter|trimestre)", re.IGNORECASE)  # GENESIS
_UNPADDED_MONTHS = re.compile(r"^(?P<year>\d{4}):(?P<month>\d{1,2})$")
# Between a fiscal year's two years: a slash or a dash, typeset too (en and em dashes, the minus sign:
# "2019–20"), or GOV.UK's "2019 to 2020" (h66)
SPAN_BETWEEN = r"\s*(?:[-/\u2010-\u2015\u2212]|to)\s*"
PERIOD_LABELS = (
    # quarters: Q, or T for trimestre / trimestre / Trimester (INSEE, INE, Istat: "2020-T1"), K for kvartal
    # (Statistics Sweden: "2020K1")
    (re.compile(r"^(?P<year>\d{4})\s*[-_ /:]?\s*[QTK](?P<quarter>[1-4])$", re.I), "quarter"),  # 1947:Q1
    (re.compile(r"^[QT](?P<quarter>[1-4])\s*[-_ /']?\s*(?P<year>\d{4}|\d{2})$", re.I), "quarter"),  # Q1-19
    # quarters in Roman numerals (Statistics Estonia's "I kvartal 2017", the KSH's "2015. I. negyedév")
    (re.compile(r"^(?P<quarter>I{1,3}|IV)\.?\s*(?:kvartal|trimestre|quarter|quartal|negyedév)?\s*(?P<year>\d{4})$",
                re.I), "quarter"),  # fmt: skip
    (re.compile(r"^(?P<year>\d{4})\.?\s*(?P<quarter>I{1,3}|IV)\.?\s*(?:kvartal|trimestre|negyedév)?$", re.I),
     "quarter"),
    (re.compile(r"^(?P<year>\d{4})\s*[-_ ]?\s*M(?P<month>\d{1,2})$", re.I), "month"),
    (re.compile(r"^(?P<year>\d{4})M(?P<month>\d{2})D(?P<day>\d{2})$", re.I), "day"),  # Eurostat's days
    # CBS open data's Perioden: "2018MM01", "2018KW01" (its years, "2018JJ00", are dropped among them)
    (re.compile(r"^(?P<year>\d{4})MM(?P<month>\d{2})$"), "month"),
    (re.compile(r"^(?P<year>\d{4})KW0(?P<quarter>[1-4])$"), "quarter"),
    # V: vecka, U: uge, KW: Kalenderwoche ("2020KW05", "KW 05/2020"; CBS's "2018KW01" above is a quarter)
    (re.compile(r"^(?P<year>\d{4})\s*[-_ ]?\s*(?:KW\s*|[WVU])(?P<week>\d{1,2})$", re.I), "week"),
    (re.compile(r"^(?:KW\s*|W)(?P<week>\d{1,2})\s*[-_ /]?\s*(?P<year>\d{4})$", re.I), "week"),  # "W07 2015"
    (re.compile(r"^(?P<year>\d{4})\s*[-_ ]?\s*[HS](?P<half>[12])$", re.I), "half"),
    (re.compile(r"^[HS](?P<half>[12])\s*[-_ ]?\s*(?P<year>\d{4})$", re.I), "half"),  # "H1 2008"
    # half-years in words: IBGE's "1º semestre 2008", "2008 1st half"
    (re.compile(r"^(?P<half>[12])\s*(?:º|°|o|st|nd)?\.?\s*(?:semestre|half|halbjahr)\s+(?:de\s+)?(?P<year>\d{4})$",
                re.I), "half"),  # fmt: skip
    (re.compile(r"^(?P<year>\d{4})\s+(?P<half>[12])\s*(?:º|°|o|st|nd)?\.?\s*(?:semestre|half|halbjahr)$",
                re.I), "half"),  # fmt: skip
    (re.compile(r"^(?P<year>\d{4})-A1$"), "year"),  # SDMX 2.0's annual period
    # EViews and FRED-era exports: "2020:1" a quarter, "2020:01" a month, and "1990:1" ... "1990:12" where
    # every month is among them (`_UNPADDED_MONTHS`: a quarterly file's "2016:5" is no month)
    (re.compile(r"^(?P<year>\d{4}):(?P<quarter>[1-4])$"), "quarter"),
    (re.compile(r"^(?P<year>\d{4}):(?P<month>\d{2})$"), "month"),
    (_UNPADDED_MONTHS, "month"),
    (re.compile(r"^FY\s*[-_ ]?\s*(?P<year>\d{4}|\d{2})$", re.I), "year"),  # fiscal years by their year, FY21
    (re.compile(rf"^FY\s*(?P<year>\d{{2}}){SPAN_BETWEEN}(?P<next>\d{{2}})$", re.I), "span"),  # "FY05/06"
    # fiscal and academic years ("2019/20", "2019-2020", UK and Indian public finance's "FY2019/20"): kept
    # only where the second year follows the first
    (re.compile(rf"^(?:FY\s*)?(?P<year>\d{{4}}){SPAN_BETWEEN}(?P<next>\d{{2}}|\d{{4}})$", re.I), "span"),
    # INEGI's quarters "2010/01" to "2010/04" (its months, "2010/01" to "2010/12", are no quarters), KOSIS's
    # "2015.1/4"
    (re.compile(r"^(?P<year>\d{4})/0(?P<quarter>[1-4])$"), "quarter"),
    (re.compile(r"^(?P<year>\d{4})\.(?P<quarter>[1-4])/4$"), "quarter"),
    (re.compile(r"^(?P<year>\d{4})\.(?P<month>0[1-9]|1[0-2])\s*월?$"), "month"),  # KOSIS's "2021.01" as text
    # Japanese and Chinese offices (e-Stat, the NBS): "2015年1月", "2015年第1四半期", "2015年"
    (re.compile(r"^(?P<year>\d{4})\s*年\s*(?P<month>\d{1,2})\s*月$"), "month"),
    (re.compile(r"^(?P<year>\d{4})\s*年\s*第?\s*(?P<quarter>[1-4])\s*(?:四半期|季度)$"), "quarter"),
    (re.compile(r"^(?P<year>\d{4})\s*年(?:度)?$"), "year"),
    # months by name in other languages than pandas reads ("2012 Januar", "März 2012": Destatis, INE), or
    # written on the year (the ECB's "2018Jan")
    (re.compile(r"^(?P<year>\d{4})\s*(?P<month>[^\W\d_]{3,})\.?$"), "month"),
    # the BCRP's "Ene.2012", INE Portugal's "Janeiro de 2014", ABS and Excel headers' "Mar-1998"
    (re.compile(r"^(?P<month>[^\W\d_]{3,})(?:\.\s*|\s+|-|/)(?:de\s+)?(?P<year>\d{4})$"), "month"),  # jan/2020
    # months before their year with a dot, as German spreadsheets and ERP exports write them: "01.2021"
    (re.compile(r"^(?P<month>\d{2})\.(?P<year>\d{4})$"), "month"),
    # Statistics South Africa's time series, months across the columns: "MO012018"
    (re.compile(r"^MO(?P<month>\d{2})(?P<year>\d{4})$"), "month"),
    # quarters in words before their year (IBGE's "1º trimestre 2016", "1st quarter 2016", "1. Quartal 2016")
    (re.compile(r"^(?P<quarter>[1-4])\s*(?:º|°|o|er|e|st|nd|rd|th)?\.?\s*(?:trimestre|quarter|quartal)\s+"
                r"(?:de\s+)?(?P<year>\d{4})$", re.I), "quarter"),
    (re.compile(r"^(?P<year>\d{4})\s+(?P<quarter>[1-4])\s*(?:e|de|st|nd|rd|th)?\.?\s*(?:kwartaal|quarter)$",
                re.I), "quarter"),  # CBS StatLine's "2010 1e kwartaal"
    # Excel's "mmm-yy" ("Jan-19": January 2019, its two-digit years from 1930 to 2029, as Excel reads them)
    (re.compile(r"^(?P<month>[^\W\d_]{3,4})\.?-(?P<year>\d{2})$"), "month"),  # a French Excel's "janv.-19"
    *((pattern, "month") for pattern in SHORT_YEAR_MONTHS),  # "Jan 22", "01/22": only in order (h75 F2)
)
_NAMED_OFFSET = re.compile(r"\s*(?:UTC|GMT)\s*(?P<sign>[+-])(?P<hours>\d{1,2})(?::?(?P<minutes>\d\d))?\s*$",
                           re.IGNORECASE)  # fmt: skip
# Words naming which day of its week or month a date is ("Week ending January 8, 2022", USDA's "Week ending
# 2022-01-08", retail's "W/E 01/08/2022", "w/c 3 Jan 2022"): the date is read alone
_WEEK_OF = re.compile(r"^\s*(?:(?:week|wk|month|period)\s+(?:ending|ended|beginning|starting|commencing|of)|"
                      r"w/e|w/c)\s*:?\s*", re.IGNORECASE)  # fmt: skip
ROMAN_QUARTERS = {"I": "1", "II": "2", "III": "3", "IV": "4"}
_HOUR_24 = re.compile(r"(?<=[ T])24:00(?::00)?$")
_LEAP_SECOND = re.compile(r"(?<=\d\d:\d\d):60(?=(?:[.,]0+)?(?:Z|[+-]\d\d(?::?\d\d)?)?$)")  # 23:59:60
# An interval written start - end ("13.03.2023 00:00 - 13.03.2023 00:15", ENTSO-E): the time is its start
_INTERVAL = re.compile(r"^(?P<start>\d[^-–]*\d)\s+[-–]\s+\d.*$")
# "...15:00+05:00", "...15:00:00.5Z": after a time, not a date's day ("2015-02-01" read as offset -01:00)
_OFFSET_AFTER_TIME = re.compile(r"\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?\s?(?:Z|[+-]\d\d(?::?\d\d)?)\s*$")
_GUESSED = 24  # the first values a format is inferred from where pandas infers none from the first
# Day, month and year in that order or month, day, year: 31.01.2020, 01/31/2020, 31-01-20.
NUMERIC_DATE = re.compile(
    r"^(?P<first>\d{1,2})(?P<sep>[./-])(?P<second>\d{1,2})(?P=sep)(?:\d{2}|\d{4})(?:$|[ T].*)"
)


def first_day(year: int, part: str, value: int) -> pd.Timestamp:
    """The first day of a period; ValueError for an impossible one (week 53 of a 52-week year)."""
    if part == "year":
        return pd.Timestamp(year, 1, 1)
    if part == "quarter":
        return pd.Timestamp(year, 3 * (value - 1) + 1, 1)
    if part == "half":
        return pd.Timestamp(year, 6 * (value - 1) + 1, 1)
    if part == "month":
        return pd.Timestamp(year, value, 1)
    if part == "day":  # a day's label carries its month too: value is month * 100 + day
        return pd.Timestamp(year, value // 100, value % 100)
    return pd.Timestamp.fromisocalendar(year, value, 1)


def parse_period_labels(values: pd.Series) -> pd.DatetimeIndex | None:
    """Quarter, month, ISO-week, half-year and fiscal-year labels pandas does not parse itself, as the first
    day of each period (a fiscal year "2019/20": January 1 of its first year); None unless every value is
    such a label, all of one kind."""
    texts = label_texts(values)
    first = texts.iloc[0] if len(texts) and isinstance(texts.iloc[0], str) else ""  # empty first: no label
    for pattern, part in PERIOD_LABELS:
        if not pattern.search(first):  # every label fits, the first too: 70,000 timestamps are not matched
            continue
        found, fits = _labels_of(texts, pattern, part)
        if not fits.all() or (pattern is _UNPADDED_MONTHS and found["month"].astype(int).nunique() < 12):
            continue
        if pattern in SHORT_YEAR_MONTHS and not months_in_order(found):  # days without a year? (h75 F2)
            continue
        if part == "span":
            return pd.DatetimeIndex([pd.Timestamp(int(year), 1, 1) for year in found["year"]])
        if part == "day":
            found["day"] = pd.to_numeric(found["month"]) * 100 + pd.to_numeric(found["day"])
        try:
            days = [first_day(int(row["year"]), part, int(row[part])) for _, row in found.iterrows()]
        except ValueError:
            return None
        return pd.DatetimeIndex(days)
    return None


def period_label_misfits(values: pd.Series) -> tuple[str, np.ndarray] | None:
    """Where most values, not all, are period labels of one kind ("1998/99", "1999/01"; "2015:1" ...
    "2015:5"): the kind ("fiscal year", "quarter", ...) and the positions of the values that are not."""
    texts = label_texts(values)
    for pattern, part in PERIOD_LABELS:
        found, fits = _labels_of(texts, pattern, part)
        if part not in ("span", "day") and fits.any():  # of the form, but no such period: "2001M13"
            pairs = found[fits][["year", part]].itertuples(index=False)
            fits[fits] = [_possible(year, part, value) for year, value in pairs]
        if 2 * fits.sum() > len(fits) and not fits.all():
            return {"span": "fiscal year"}.get(part, part), np.flatnonzero(~fits)
    return None


def _possible(year: str, part: str, value: str) -> bool:
    """Whether a period found as text exists (no 13th month, no week 53 of a 52-week year); a month found by
    its name is its number as "1.0"."""
    try:
        first_day(int(float(year)), part, int(float(value)))
    except ValueError:
        return False
    return True


def _labels_of(texts: pd.Series, pattern: re.Pattern, part: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The parts `pattern` finds in each text, and which texts are labels of its kind (a fiscal year's
    second year follows its first)."""
    found = texts.str.extract(pattern)
    if found["year"].str.len().eq(2).any():  # Excel's two-digit years
        short = pd.to_numeric(found["year"], errors="coerce")
        found["year"] = (short + np.where(short < 30, 2000, 1900)).astype("Int64").astype("string")
    if part == "quarter":  # Roman numerals as numbers
        found["quarter"] = found["quarter"].str.upper().replace(ROMAN_QUARTERS)
    if part == "month":  # a name (MONTH_NUMBERS) as its number; another word is no month
        named = found["month"].str.lower().map(MONTH_NUMBERS).astype("string")
        found["month"] = found["month"].where(found["month"].str.isdigit() != False, named)  # noqa: E712
    fits = found.notna().all(axis=1).to_numpy().copy()
    if part == "span" and fits.any():
        first, second = (pd.to_numeric(found[key], errors="coerce").to_numpy() for key in ("year", "next"))
        fits &= (second == first + 1) | (second == (first + 1) % 100)
    return found, fits


def _timestamps(column: pd.Series, dayfirst: bool, mixed: bool = True) -> pd.Series:
    """pandas' parse with one format inferred from the first value (`_later_format` where it infers none),
    else (`mixed`) each value on its own; an hour ending at 24:00 (ERCOT's "03/01/2023 24:00") is the next
    day's midnight, a leap second 23:59:60 the next second's."""
    column, shift = past_the_clock(timestamp_texts(column))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", pd.errors.PandasChangeWarning)  # '2012-Q2' read as a quarter for now
        later = _later_format(column, dayfirst)
        parsed = pd.to_datetime(column, errors="coerce", dayfirst=dayfirst, format=later)
        if mixed and parsed.isna().sum() > column.isna().sum():
            parsed = pd.to_datetime(column, errors="coerce", format="mixed", dayfirst=dayfirst)
    return parsed + shift if shift.any() else parsed


def past_the_clock(column: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """The column with a time of 24:00 at the end of a value (the end of its day, as ISO 8601 allows)
    written 00:00 and a leap second 23:59:60 written 23:59:59, and what each parsed value is to be moved on:
    a day, a second (a timedelta64 array, zero for the others)."""
    texts = column.astype(str)
    later = np.zeros(len(texts), dtype="timedelta64[s]")
    for pattern, written, step in ((_HOUR_24, "00:00", np.timedelta64(1, "D")),
                                   (_LEAP_SECOND, ":59", np.timedelta64(1, "s"))):  # fmt: skip
        found = texts.str.contains(pattern).to_numpy(bool)
        if found.any():
            texts = texts.where(~found, texts.str.replace(pattern, written, regex=True))
            column = column.where(~found, texts)
            later[found] += step
    return column, later


def _later_format(column: pd.Series, dayfirst: bool) -> str | None:
    """The format of one of the first values where pandas infers none from the first ("01/01/2020 12:00 AM":
    such a column was parsed value by value, 5 s a megabyte); None where it infers one or none is found."""
    firsts = column.dropna().astype(str).str.strip().iloc[:_GUESSED]
    if firsts.empty or guess_datetime_format(firsts.iloc[0], dayfirst=dayfirst):
        return None
    formats = (guess_datetime_format(text, dayfirst=dayfirst) for text in firsts.iloc[1:])
    return next((found for found in formats if found), None)


def timestamp_texts(column: pd.Series) -> pd.Series:
    """The column as dateutil is to read it: every value longer than any timestamp missing (dateutil takes
    quadratic time on a megabyte cell, a minute and a half for one), and an offset written after a zone's
    name ("UTC+5", "GMT-03:00") as the offset people mean by it, +05:00 (dateutil reads "UTC+5" as UTC-5, as
    POSIX zone strings mean it), a period marked provisional as the period, an interval as its start."""
    sized = column.where(column.astype(str).str.len() <= MAX_DATUM_CHARS)
    text = sized.map(lambda value: isinstance(value, str)).astype(bool)
    if not text.any():
        return sized
    def iso(found: re.Match) -> str:
        return f"{found['sign']}{int(found['hours']):02d}:{found['minutes'] or '00'}"

    texts, joined = sized[text], "\n".join(sized[text])  # one scan of plain timestamps: ETTm1's 70,000
    if "*" in joined:  # "2023-10*": a provisional period
        texts = texts.str.replace(PROVISIONAL, "", regex=True)
    upper = joined.upper()  # once: ETTm1's 70,000 timestamps are one string
    if any(word in upper for word in ("WEEK", "WK", "W/", "MONTH", "PERIOD")):  # "Week ending ..."
        texts = texts.str.replace(_WEEK_OF, "", regex=True)
    if " -" in joined or "–" in joined:  # ENTSO-E: "... 00:00 - ... 00:15"
        texts = texts.str.replace(_INTERVAL, r"\g<start>", regex=True)
    if "UTC" in upper or "GMT" in upper:
        texts = texts.str.replace(_NAMED_OFFSET, iso, regex=True)
    if "NOW" in upper or "TODAY" in upper:  # no date of the file: pandas reads the clock
        texts = texts.where(~clock_words(texts))
    return sized.where(~text, texts)


def clock_words(texts: pd.Series) -> pd.Series:
    """Which texts pandas reads as the clock's time, not as a date ("now", "today")."""
    return texts.astype(str).str.strip().str.lower().isin(("now", "today"))


def parse_timestamps(column: pd.Series, ties: list[str] | None = None, dayfirst: bool = False) -> pd.Series:
    """Timestamps (NaT where a value is none), reading dates written day or month before the year the way
    their file means them: dotted ones day first (31.01.2020, the European convention); slashed or dashed
    ones month first as pandas does, unless day first reads more rows (a monthly 01/02/2020 ... 01/01/2021
    has no 13th month) or, both reading every row, only day first keeps them in order or gives a regular
    series, also where other rows are ISO dates. pandas alone takes month first and switches per value,
    mixing the two readings. Where both readings are whole, in order and regular (a year's months written
    01/02/2021 read as 12 days), month first is taken and `ties` gets a note saying so, unless ISO dates
    beside them continue only day first's steps, or `dayfirst` (a bundle's training rows were read day
    first, `read_day_first`) takes day first (h75 F21: a model's own last 12 months were read as 12 days).
    Raises what pandas raises for values it cannot handle at all (mixed time zones)."""
    separators = column.dropna().astype(str).str.strip().str.extract(NUMERIC_DATE)["sep"]
    if separators.isna().all():
        return _timestamps(column, dayfirst=False)
    if separators.isna().any():  # a file switching from 2020-07-18 to 19/07/2020: each kind read its own way
        numeric = separators.notna().reindex(column.index, fill_value=False)
        others = _timestamps(column.where(~numeric), dayfirst=False)
        said: list[str] = []
        read = others.fillna(parse_timestamps(column.where(numeric), said))
        if said:  # both readings fit the numeric dates alone: the reading that continues the others' steps
            day_first = others.fillna(_timestamps(column.where(numeric), dayfirst=True))
            fits = [(_turns(parsed), not _regular(parsed)) for parsed in (read, day_first)]
            if fits[1] != fits[0]:
                return day_first if fits[1] < fits[0] else read  # the others decide: no tie to note
            if dayfirst:
                return day_first
        if ties is not None:
            ties.extend(said)
        return read
    # each reading in one format first: where only one reads every row it is the file's, and a reading that
    # does needs no value-by-value parse (11/29/2020 07:00 AM took 5 s a megabyte)
    readings = (True,) if (separators == ".").all() else (True, False)
    quick = {first: _timestamps(column, dayfirst=first, mixed=False) for first in readings}
    whole = {first: bool(parsed.isna().sum() == column.isna().sum()) for first, parsed in quick.items()}
    if len(readings) == 2 and whole[True] != whole[False]:
        return quick[True] if whole[True] else quick[False]
    full = {first: quick[first] if whole[first] else _timestamps(column, dayfirst=first)
            for first in readings}  # fmt: skip
    day_first = full[True]
    if len(readings) == 1:
        return day_first
    month_first = full[False]
    if day_first.isna().sum() != month_first.isna().sum():
        return day_first if day_first.isna().sum() < month_first.isna().sum() else month_first
    # pandas' month-first parse reads 13/01/2023 day first by itself: both read every row of daily dates
    # with holidays left out, but only day first keeps them in order (month first was refused as unsorted);
    # a long table's series one after another step back where each begins, the wrong reading at every month
    turns = [_turns(parsed) for parsed in (month_first, day_first)]
    if turns[0] != turns[1]:
        return day_first if turns[1] < turns[0] else month_first
    regular = [_regular(parsed) for parsed in (month_first, day_first)]
    if dayfirst and regular != [True, False]:
        return day_first
    if ties is not None and regular == [True, True] and whole[True] and not day_first.equals(month_first):
        texts, read = column.dropna().astype(str).str.strip(), day_first.dropna()
        shown = ", ".join(f"{stamp:%Y-%m-%d}" for stamp in read.iloc[:2])
        ties.append(f"read {texts.iloc[0]!r}, {texts.iloc[1]!r}, ... month first (MM/DD, as pandas does), "
                    f"though day first reads them as well ({shown}, ...): write dates as YYYY-MM-DD to be "
                    "sure")
    return day_first if regular == [False, True] else month_first


def read_day_first(column: pd.Series, parsed: pd.DatetimeIndex) -> bool:
    """Whether `parse_timestamps` read `column`'s slashed or dashed dates day first (into `parsed`, row by
    row): one whose first number, not its second, is its day. What a bundle records, so that its new rows,
    whose readings may tie, are read as its training rows were (`parse_timestamps`' `dayfirst`)."""
    texts = column.astype(str).str.strip()
    slashed = texts.str[:3].str.contains(r"\d[/-]").to_numpy() & ~pd.isna(parsed)  # ISO: none searched
    rows = np.flatnonzero(slashed)
    sample = rows[~texts.iloc[rows].str[:6].duplicated().to_numpy()]  # each day and month written once
    written = texts.iloc[sample].str.extract(NUMERIC_DATE)
    numbered = written["sep"].isin(["/", "-"]).to_numpy()
    first, second = (pd.to_numeric(written[key]).to_numpy()[numbered] for key in ("first", "second"))
    stamps = pd.DatetimeIndex(parsed[sample][numbered])
    return bool(((first == stamps.day) & (second == stamps.month) & (first != second)).any())


def _regular(parsed: pd.Series) -> bool:
    """Whether the distinct timestamps, in order, have a frequency, or are months, quarters or years on
    another day than the first (`snap_to_periods`: 05/02/2020 read day first, the 5th of each month)."""
    index = pd.DatetimeIndex(parsed.dropna().unique()).sort_values()
    return infer_frequency(index) is not None or snap_to_periods(index) is not None


def _turns(parsed: pd.Series) -> int:
    """How often timestamps step against their column's direction (0 where in order, newest first or last)."""
    steps = np.diff(parsed.dropna().to_numpy().astype("datetime64[ns]").astype(np.int64))
    return int(min((steps < 0).sum(), (steps > 0).sum()))


def utc_timestamps(column: pd.Series) -> pd.DatetimeIndex | None:
    """The values as UTC timestamps (pandas reads mixed zones no other way), or None unless every value is
    one."""
    sized = timestamp_texts(column)
    if sized.isna().any():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.DatetimeIndex(pd.to_datetime(sized, utc=True, format="mixed", errors="coerce"))
    return None if parsed.isna().any() else parsed.rename(column.name)


def across_offsets(column: pd.Series) -> tuple[pd.DatetimeIndex, str] | None:
    """Timestamps whose UTC offsets change along the column as one regular series, and a note saying how: in
    UTC where that is regular (hourly data), else, where the offsets change as daylight saving time does
    (`timeindex.daylight_saving`; not two zones mixed, h82 F19), as local clock times where those are (days at
    local midnight, 23 or 25 hours long in UTC), else in UTC where regular (UTC midnights on a local clock).
    None unless every value has an offset after its time ("GMT+5", read by dateutil as UTC-5, has none)."""
    if not timestamp_texts(column).astype(str).str.contains(_OFFSET_AFTER_TIME).all():
        return None
    utc = utc_timestamps(column)
    if utc is None:
        return None
    local = pd.DatetimeIndex([pd.Timestamp(value).tz_localize(None) for value in column], name=column.name)
    clock = daylight_saving(local, utc)
    how = "whose UTC offsets change (daylight saving time)" if clock else "which mix UTC offsets (time zones)"
    if (freq := infer_frequency(utc)) is not None and sub_daily(freq):  # months at local midnight: 'ME' in
        return utc, f"read the dates, {how}, in UTC"  # UTC (h49)
    freq = infer_frequency(local)
    if clock and freq is not None and not sub_daily(freq):
        return local, f"read the dates, {how}, as local clock times"
    if infer_frequency(utc) is not None:  # UTC midnights shown on Berlin's clock (a frame tz_convert-ed)
        return utc, f"read the dates, {how}, in UTC"
    if clock and len(utc) > 2:  # irregular (a missing hour, a repeated row): told of at its row as in winter,
        # not as "mixes time zones" (h161); by the usual step, hours in UTC, days on the local clock
        usual = pd.Timedelta(int(pd.Series(np.diff(utc.asi8)).mode().iloc[0]), unit=utc.unit)
        if usual < pd.Timedelta(days=1):
            return utc, f"read the dates, {how}, in UTC"
        return local, f"read the dates, {how}, as local clock times"
    return None

"""Which of a table's columns are its series: numbers, or text that reads as numbers, besides the dates and
the rows counted."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from forecaster.data.cells import cell_texts, counts_rows, not_a_number_cell, number_kind
from forecaster.data.dateparts import codes_the_dates, date_codes, restates_a_part
from forecaster.data.dates import NUMERIC_DATE, parse_timestamps
from forecaster.data.headerless import is_date
from forecaster.data.keys import name_words
from forecaster.data.marks import FLAG_NAMES, graded_or_codes
from forecaster.data.missing import SHOWN, line
from forecaster.data.variables import SDMX_VALUE
from forecaster.errors import DataError, MissingColumnsError

# What a column counting the rows is called when a table is written with its index (UCI's Beijing air: "No").
_ROW_COUNTER_NAMES = frozenset({"no", "no.", "nr", "nr.", "index", "row", "rownum", "#", "unnamed: 0"})


def check_names_once(source: str, repeated: Sequence[str]) -> None:
    """DataError naming the column names a table repeats: which of them a series is, is anyone's guess (a
    bundle re-reading 'OT' took the first of two)."""
    if repeated:
        names = ", ".join(map(repr, repeated))
        raise DataError(f"{source}: column name(s) {names} repeated; expected each column name once")


def without_repeated_codes(
    raw: pd.DataFrame, repeated: Sequence[str], notes: list[str]
) -> tuple[pd.DataFrame, list[str]]:
    """`raw` less the columns of a repeated name that hold codes rather than numbers (INSEE writes a 'Codes'
    column of statuses after each series: the file was refused), said in `notes`, and the repeated names
    left, which `check_names_once` refuses."""
    left, dropped = [], []
    for name in repeated:
        copies = _copies(raw, name)
        if all(_codes(raw[column]) for column in copies):
            raw, dropped = raw.drop(columns=copies), [*dropped, name]
        else:
            left.append(name)
    if dropped:
        notes.append(f"left out the columns named {', '.join(map(repr, dropped))} beside each series: codes "
                     "or flags, not values")  # fmt: skip
    return raw, left


def named_apart(
    raw: pd.DataFrame, repeated: Sequence[str], notes: list[str]
) -> tuple[pd.DataFrame, list[str]]:
    """`raw` with the columns of a repeated name told apart by the first row describing the columns (its
    first cell a label, not a date) where their cells all differ: the ABS names a seasonally adjusted and a
    trend series alike ('Gross domestic product: Chain volume measures ;') above its Series Type row (the
    file was refused); and the repeated names left, which `check_names_once` refuses."""
    left, renamed = [], {}
    described = raw.iloc[:12]
    labels = cell_texts(described.iloc[:, 0])
    described = described.iloc[: next((k for k, label in enumerate(labels) if not label or is_date(label)),
                                      len(described))]  # fmt: skip
    for name in repeated:
        copies = _copies(raw, name)
        cells = described[copies].apply(cell_texts)
        distinct = [k for k in range(len(cells)) if cells.iloc[k].nunique() == len(copies)]
        row = next((cells.iloc[k] for k in distinct if "" not in set(cells.iloc[k])), None)
        if row is None:
            left.append(name)
        else:
            renamed.update({copy: f"{name} ({cell})" for copy, cell in zip(copies, row, strict=True)})
    if renamed:
        told = ", ".join(map(repr, renamed.values()))
        notes.append(f"told the columns of one name apart by the row describing them: {told}")
    return raw.rename(columns=renamed), left


def _copies(raw: pd.DataFrame, name: str) -> list[str]:
    """The columns pandas read under a name the header repeats ("Codes", "Codes.1", ...)."""
    return [column for column in raw.columns
            if column == name or re.fullmatch(re.escape(name) + r"\.\d+", column)]  # fmt: skip


def _codes(column: pd.Series) -> bool:
    """Whether fewer than half a column's cells read as numbers (a comma may be their decimal mark)."""
    cells = column.dropna().astype(str).str.strip()
    cells = cells[cells != ""]
    numbers = pd.to_numeric(cells.str.replace(",", ".", regex=False), errors="coerce").notna()
    return 2 * int(numbers.sum()) < len(cells) or cells.empty


# "STATIONS_ID", "FormatID", the Treasury's "Source Line Number"
_ID_NAME = re.compile(r"(?i:(?:.*[_ ])?(?:id|station|stn|fips|line[_ ]number))|.*[a-z]I[dD]")
_DESCRIPTIVE_NAMES = frozenset({"latitude", "longitude", "lat", "lon", "lng", "elevation", "altitude",
                                "decimals", "coordinate", "population",  # NOAA's stations, StatCan, the ECDC
                                "reference period", "base year"})  # an index's base year: OECD.Stat's 2015
# e-Stat's "... コード", UN Comtrade's "reporterCode"
_CODE_NAME = re.compile(r"(?:(?:^|[_ ])(?i:code|kode|コード|代码)|[a-z0-9]Code)$")
# A column of 0 and 1 marking values provisional, estimated or revised beside them (h91 F4: forecast as a
# second series), named by the flag alone or after what it flags (`value_flag`, `OBS_STATUS` by `OBS_VALUE`;
# a `machine status` or a `demand_estimate` of its own is a series); written as letters ('p') it is text
_FLAG_WORDS = FLAG_NAMES | {"provisional", "preliminary", "estimate", "estimated", "revised"}


# A column of footnotes or their codes beside the values (the BLS' `footnote_codes`: "1", "P"), no series:
# one "1" among them had been forecast as a series, a "P" besides refused as text among numbers
_FOOTNOTE_NAME = re.compile(r"(?i:foot\s?notes?(?:[_ ]codes?)?)")


# Digits grouped in threes by any mark but a letter, '/', ':' or '-' (no date's), a decimal part after them
_GROUPED_NUMBER = re.compile(r"[-+\u2212\u2013]?\d{1,3}(?:[^\w/:-]\d{3})+(?:[.,]\d+)?")


def is_text(column: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column))


def section_numbers(texts: pd.Series) -> bool:
    """Numbers of sections (the UN SDG's indicators 8.5.2, 8.10.1), which dateutil reads as dates
    (2002-08-05): dotted numbers of one or two digits each, that are no day, month and year."""
    texts = texts.astype(str).str.strip()
    dotted = texts.str.fullmatch(r"\d{1,2}(?:\.\d{1,2})+").all()
    return bool(dotted and not texts.str.fullmatch(NUMERIC_DATE).all())


def numeric_columns(
    path: str,
    raw: pd.DataFrame,
    date_cols: list[str],
    targets: Sequence[str] | None,
    notes: list[str],
    index: pd.Index | None = None,
    what: str = "target",
    named_by_ids: bool = False,
) -> tuple[list[str], np.ndarray]:
    """The columns to forecast (or read as covariates: `what`) and their values; `index`, the rows' dates,
    to leave out the columns that restate them, unless the columns are `named_by_ids` (a long table's series:
    a series whose id is "ID" or "year" is no header of a row counter or the dates)."""
    explicit = targets is not None
    if explicit:
        chosen = list(targets)
        unknown = [name for name in chosen if name not in raw.columns]
        if unknown:
            raise MissingColumnsError.among(
                f"{path}: unknown {what} column(s) {', '.join(map(repr, unknown))}", unknown, raw.columns
            )
        dated = [name for name in chosen if name in date_cols]
        if dated:
            raise DataError(
                f"{path}: the date column {dated[0]!r} cannot be a {what}; expected numeric columns"
            )
        if len(set(chosen)) != len(chosen):
            raise DataError(f"{path}: target columns are repeated in {chosen}; expected each column once")
    else:
        chosen = [column for column in raw.columns if column not in date_cols]
        chosen = _not_series(raw, chosen, index, notes) if date_cols and not named_by_ids else chosen
    kept: list[str] = []
    arrays: list[np.ndarray] = []
    skipped: list[str] = []
    unread: dict[str, np.ndarray] = {}  # the text columns skipped: their cells no reading takes
    for name in chosen:
        column = raw[name]
        # complex, durations, dates: no real number to forecast; true/false ("TRUE" cells a CSV reader
        # turns into booleans) a flag, which a covariate may be, not a quantity to forecast
        if column.dtype.kind in "cmM" or (column.dtype.kind == "b" and what == "target"):
            if not explicit:
                skipped.append(name)
                continue
            held = "true/false" if column.dtype.kind == "b" else str(column.dtype)
            raise DataError(f"{path}: column {name!r} holds {held} values; expected real numbers")
        if is_text(column):
            try:
                numbers = pd.to_numeric(column, errors="coerce")
            except OverflowError:  # integers beyond uint64, which pandas keeps as Python ints: as text, ±inf
                numbers = pd.to_numeric(column.astype(str), errors="coerce")
            mixed = pd.api.types.infer_dtype(column, skipna=True) not in ("string", "empty")  # a file's: text
            odd = column.map(not_a_number_cell).to_numpy(dtype=bool) if mixed else np.zeros(len(column), bool)
            bad = np.flatnonzero((numbers.isna() & column.notna()).to_numpy() | odd)
            if bad.size:
                parsed = int(numbers.notna().sum())
                if not explicit and parsed < bad.size:
                    skipped.append(name)
                    unread[name] = bad
                    continue
                raise DataError(_text_among_numbers(path, raw, name, bad, "values" if odd.any() else "text"))
            column = numbers
        kept.append(name)
        arrays.append(column.to_numpy(dtype=np.float64, na_value=np.nan))
    if skipped:
        _check_one_time_axis(path, raw, skipped, index)
        notes.append(f"skipped non-numeric column(s) {', '.join(map(repr, skipped))}")
    if not kept:
        # a column of numbers each written with what no reading takes ('$1.2bn', '1.2 млн'): its cells named,
        # unless the letters after them say what to do (`graded_or_codes`)
        digits = [name for name in unread if 2 * raw[name].astype(str).str.contains(r"\d").sum() > len(raw)
                  and not _dates_like(raw[name])
                  and not graded_or_codes(raw, [name])]  # fmt: skip
        if digits:
            raise DataError(_text_among_numbers(path, raw, digits[0], unread[digits[0]], "text"))
        raise DataError(
            f"{path}: no numeric columns to forecast among {', '.join(map(repr, raw.columns))}; "
            f"expected at least one column of numbers besides the date{graded_or_codes(raw, skipped)}"
        )
    return kept, np.column_stack(arrays)


def _dates_like(column: pd.Series) -> bool:
    """Whether a text column's first cells are dates; a number grouped in thousands by a mark no reading takes
    (a figure space, U+2007: '1 234,5') is one to dateutil, not to a reader (h119: refused naming no cell)."""
    cells = column.dropna().iloc[:5].astype(str)
    return all(is_date(cell) and not _GROUPED_NUMBER.fullmatch(cell.strip()) for cell in cells)


def _text_among_numbers(path: str, raw: pd.DataFrame, name: str, bad: np.ndarray, held: str) -> str:
    """The message for a column of numbers whose cells at `bad` hold `held` ("text", "values") instead; of
    text, the cells no reading takes are named, not the markers and flagged numbers beside them."""
    if held == "text":
        taken = raw[name].map(lambda text: isinstance(text, str) and not number_kind(text)).to_numpy(bool)
        bad = np.flatnonzero(taken) if taken.any() else bad
    shown = ", ".join(f"{line(p)} {str(raw[name].iloc[p])!r}" for p in bad[:SHOWN])
    return (f"{path}: column {name!r} holds {held} where numbers are expected: {shown} ({bad.size} cell(s) "
            f"in total); expected a number in every cell{graded_or_codes(raw, [name])}")  # fmt: skip


def other_series(raw: pd.DataFrame, date_cols: list[str], taken: list[str], index: pd.Index) -> list[str]:
    """The columns of numbers beside `taken` (the targets given and the covariates) that a reading without
    targets would forecast: series the rows hold that a model did not learn (h75 F20: a World Bank table's
    new country, forecast by none, unsaid)."""
    others = [name for name in raw.columns if name not in taken and name not in date_cols
              and raw[name].dtype.kind in "iuf" and raw[name].notna().any()]  # fmt: skip
    series = _not_series(raw, [*taken, *others], index, []) if others and date_cols else others
    return [name for name in others if name in series]


def _check_one_time_axis(path: str, raw: pd.DataFrame, text: list[str], index: pd.Index | None) -> None:
    """Refuse blocks of columns side by side, each with its own dates (Bloomberg's BDH of several securities):
    a column of dates that agrees with the date column on most rows, not all, puts the values beside it on
    dates that are not theirs (DAX's on the S&P's trading days)."""
    if not isinstance(index, pd.DatetimeIndex) or len(index) < 3:
        return
    for name in text:
        if not all(is_date(str(value)) for value in raw[name].dropna().iloc[:5]):
            continue
        dates = pd.DatetimeIndex(parse_timestamps(raw[name]))
        given = dates.notna()  # a shorter block ends in empty cells
        same = dates == (index.tz_localize(None) if index.tz is not None else index)
        if given.sum() >= 3 and 2 * same.sum() >= given.sum() and not same[given].all():
            row = int(np.flatnonzero(given & ~same)[0])
            raise DataError(
                f"{path}: column {name!r} holds dates too, other than those of {index.name!r} from "
                f"{line(row)} ({dates[row].date()} beside {index[row].date()}): blocks of columns side by "
                "side, each with its own dates (Bloomberg's BDH of several securities); expected one date "
                "column for every value (a file per block, or the blocks aligned on one date column)"
            )


def _not_series(raw: pd.DataFrame, columns: list[str], index: pd.Index, notes: list[str]) -> list[str]:
    """`columns` less those that restate a dated table's rows: named as row counters and counting the rows
    (its index written out), the dates as decimal years (NOAA's "decimal date", SILSO's third column), codes
    (e-Stat's "コード" columns), an identifier (`_identifies`), parts of the
    dates (a year, month or weekday column beside them) or Unix times, or a station's coordinates; none of
    them a series to forecast (kept where nothing else is left). Complex columns, skipped later, are not
    looked at (numpy warned three times, casting them to real numbers)."""
    every, columns = columns, [name for name in columns if raw[name].dtype.kind != "c"]
    counters = [name for name in columns
                if str(name).strip().lower() in _ROW_COUNTER_NAMES and counts_rows(raw[name])]  # fmt: skip
    years = _decimal_years(index)  # once, not per column: Traffic has 862
    decimal = [name for name in columns if name not in counters and years is not None
               and pd.api.types.is_numeric_dtype(raw[name]) and _restates(raw[name], years)]  # fmt: skip
    ids = [name for name in columns if not is_text(raw[name]) and (_CODE_NAME.search(str(name).strip())
           or (_ID_NAME.fullmatch(str(name).strip()) and _identifies(raw[name])))]  # fmt: skip
    dated = isinstance(index, pd.DatetimeIndex) and len(index) >= 3
    codes = date_codes(index) if dated else []
    parts = [name for name in columns if dated and name not in counters + ids
             and (restates_a_part(name, raw[name], index) or codes_the_dates(raw[name], codes))]  # fmt: skip
    epochs = _epoch_numbers(index) if dated else {}
    unix = [name for name in columns if name not in counters + ids + parts and _is_epoch(raw[name], epochs)]
    # SDMX's OBS_VALUE, whose file's other columns are codes; not a "value" or "y" beside a user's own columns
    valued = [name for name in raw.columns if str(name).strip().lower() == SDMX_VALUE]
    constant = [name for name in columns if len(raw) >= 3 and name not in counters + ids + parts + unix
                and _described(name, raw[name], valued)]  # fmt: skip
    flags = [name for name in columns if _flags_another(name, raw.columns) and _zero_one(raw[name])]
    footnotes = [name for name in every if _FOOTNOTE_NAME.fullmatch(str(name).strip())  # a "1" among them
                 and pd.to_numeric(raw[name], errors="coerce").notna().any()]  # fmt: skip
    restating = counters + decimal + ids + parts + unix + constant + flags + footnotes
    if not restating or len(restating) == len(columns):
        return every
    for names, what in ((counters, "row numbers"), (decimal, "the dates as decimal years"),
                        (ids, "codes or identifiers"),
                        (parts, "parts or codes of the dates (year, month, weekday, 20141 ...)"),
                        (unix, "the dates as Unix times"),
                        (constant, "one place, format or code throughout"),
                        (flags, "flags of the values, 0 or 1"),
                        (footnotes, "footnotes or their codes")):  # fmt: skip
        if names:
            notes.append(f"skipped column(s) {', '.join(map(repr, names))}: {what} (targets keep them)")
    return [name for name in every if name not in restating]


def _identifies(column: pd.Series) -> bool:
    """Whether a column named as an id holds one value throughout (DWD's STATIONS_ID) or record numbers
    that only rise (CBS open data's ID, its years' rows left out)."""
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    rising = len(values) > 1 and (values % 1 == 0).all() and (np.diff(values) > 0).all()
    return bool(column.nunique() == 1 or rising)


def _flags_another(name: object, columns: pd.Index) -> bool:
    """Whether a column's name is a flag's (`_FLAG_WORDS`) alone, or after words naming another column."""
    words = name_words(name)
    if not words or words[-1] not in _FLAG_WORDS:
        return False
    stem = set(words[:-1])
    return not stem or any(stem <= set(name_words(other)) for other in columns if other != name)


def _zero_one(column: pd.Series) -> bool:
    """Whether a column of numbers holds only 0 and 1 (and empty cells)."""
    if not pd.api.types.is_numeric_dtype(column) or column.dtype.kind == "b":
        return False
    return bool(column.dropna().isin([0, 1]).all())


def _epoch_numbers(index: pd.DatetimeIndex) -> dict[str, np.ndarray]:
    """The dates of `index` as Unix times in seconds and in milliseconds (naive dates read as UTC)."""
    seconds = index.as_unit("s").asi8.astype(np.float64)
    return {"s": seconds, "ms": seconds * 1000}


def _is_epoch(column: pd.Series, epochs: dict[str, np.ndarray]) -> bool:
    """Whether `column` holds the dates as Unix times (a crypto export's `unix` beside its `date`)."""
    if not epochs or not pd.api.types.is_numeric_dtype(column):
        return False
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return any(np.array_equal(values, times) for times in epochs.values())


def _described(name: str, column: pd.Series, valued: list[str]) -> bool:
    """Whether a column named as what places or formats a series (a station's latitude, StatCan's DECIMALS),
    or any beside SDMX's OBS_VALUE (`valued`), holds one number throughout: it describes the series;
    elsewhere a policy rate unchanged for years is one (a `value` beside a constant `price` keeps both). An
    ECB series' ICP_ITEM '000000' (a code written in digits), STS_INSTITUTION 4 and UNIT_MULT 0 had been
    forecast as three series beside its OBS_VALUE."""
    named = str(name).strip().lower() in _DESCRIPTIVE_NAMES or any(other != name for other in valued)
    if not named or column.dtype.kind in "bc":
        return False
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)  # '000000'
    return bool(np.isfinite(values).all() and (values == values[0]).all())


def _decimal_years(index: pd.Index) -> np.ndarray | None:
    """The dates of `index` as decimal years (2024.0 for its January 1), None for no dates or fewer than 3."""
    if not isinstance(index, pd.DatetimeIndex) or len(index) < 3:
        return None
    return (index.year + (index.day_of_year - 1) / (365 + index.is_leap_year)).to_numpy()


def _restates(column: pd.Series, years: np.ndarray) -> bool:
    """Whether `column` rises with the dates, each within a month of its date as a decimal year (1958.2027
    for March 1958: NOAA writes mid-month)."""
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return bool((np.abs(values - years) <= 1 / 12).all() and (np.diff(values) > 0).all())


def steps_across(raw: pd.DataFrame) -> list[str]:
    """The columns of numbers numbered one after another under one prefix (d_1, d_2, ...; V2, V3, ...), where
    at least ten are: a competition's table of a series per row."""
    numbered = [re.fullmatch(r"(\D*?)(\d+)", str(name)) for name in raw.columns]
    runs = [(found[1], int(found[2]), name) for found, name in zip(numbered, raw.columns, strict=True)
            if found and pd.api.types.is_numeric_dtype(raw[name])]  # fmt: skip
    follows = [k > 0 and runs[k - 1][:2] == (prefix, number - 1)
               for k, (prefix, number, _) in enumerate(runs)] + [False]  # fmt: skip
    steps = [name for k, (_, _, name) in enumerate(runs) if follows[k] or follows[k + 1]]
    return steps if len(steps) >= 10 else []

"""Files without a header line (SILSO's sunspot numbers, NOAA's text tables, a column of dates and one of
values saved without names): their first line is data, not names, and their columns are named by what they
hold so that the reader finds the dates: year, month and day numbers, a date column, values.

A first line is data when its first cell is a date or a year of four digits and every other cell a number or
a missing-value marker: a header of names ("date,value") or of numbers only ("0,1,2", pandas' column
numbers) is kept as one.
"""

from __future__ import annotations

import re
import warnings
from itertools import accumulate

import numpy as np
import pandas as pd

from forecaster.data.cells import MAX_DATUM_CHARS, number_kind
from forecaster.data.dates import QUARTER_WORDS, parse_period_labels
from forecaster.data.labeltexts import MONTH_NUMBERS

_YEAR = re.compile(r"[12]\d{3}")
_PARTS = (("year", 1000, 2999), ("month", 1, 12), ("day", 1, 31))  # number columns, in this order
_VALUES = ("integer", "ambiguous", "dot", "comma", "marker")


def is_timestamp(text: str) -> bool:
    """Whether pandas reads `text` as a date ("Jan 2020" is one, "Total" is not; a line longer than any date
    is not, unparsed)."""
    if len(text) > MAX_DATUM_CHARS:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pd.notna(pd.to_datetime(text, errors="coerce"))


def is_date(text: str) -> bool:
    """A timestamp or a period label pandas does not read ("2020 Q1", "2023 Dezember")."""
    return is_timestamp(text) or parse_period_labels(pd.Series([text])) is not None


def is_data(cells: list[str]) -> bool:
    """Whether a first line is a row of values: a date or a year first, numbers or markers after it."""
    first = cells[0].strip()
    dated = bool(_YEAR.fullmatch(first)) or (number_kind(first) is None and is_date(first))
    return dated and all(number_kind(cell.strip()) in _VALUES for cell in cells[1:] if cell.strip())


def is_record(rows: list[list[str]], first: int) -> bool:
    """Whether a first line is a record like the two below it, not names: the same cells hold numbers, text
    and nothing in all three, numbers and text both, and a text cell is repeated below it (NOAA's GHCN
    by-year files: station, date, element, value, flags). A header of years above rows of a label and
    numbers ("Country,1990,1991") repeats no label."""
    lines = [[cell.strip() for cell in cells] for cells in rows[first : first + 3]]
    if len(lines) < 3 or len({len(cells) for cells in lines}) > 1:
        return False
    kinds = [tuple(_kind(cell) for cell in cells) for cells in lines]
    repeated = any(kind == "text" and cell == below
                   for kind, cell, below in zip(kinds[0], *lines[:2], strict=True))  # fmt: skip
    return kinds[0] == kinds[1] == kinds[2] and {"text", "number"} <= set(kinds[0]) and repeated


def _kind(cell: str) -> str:
    return "empty" if not cell else "text" if number_kind(cell) is None else "number"


def names(rows: list[list[str]], width: int) -> tuple[str, ...]:
    """Names for the columns of data rows: leading whole numbers in the ranges of a year, a month and a day
    (in that order) are "year", "month", "day"; else a first column of dates is "date"; one column left is
    "value", more "column 2", "column 3", ... by their place in the file."""
    columns = list(zip(*(cells for cells in rows if len(cells) == width), strict=True))
    named: list[str] = []
    for (part, low, high), cells in zip(_PARTS, columns, strict=False):
        numbers = pd.to_numeric(pd.Series(cells), errors="coerce")
        if numbers.isna().any() or (numbers % 1).any() or not numbers.between(low, high).all():
            break
        named.append(part)
    if named == ["year"] and not (pd.to_numeric(pd.Series(columns[0])).diff().iloc[1:] == 1).all():
        named = []  # years repeated over rows of something not named: no yearly index
    if named[2:] and len(set(zip(columns[0], columns[1], strict=True))) == len(columns[0]):
        named = named[:2]  # one row per month: a third column of small whole numbers is a count, no day
    if not named and is_date(columns[0][0].strip()):
        named = ["date"]
    rest = [f"column {k + 1}" for k in range(len(named), width)]
    return (*named, *(["value"] if len(rest) == 1 else rest))


def commented_names(cells: list[str], width: int) -> tuple[str, ...] | None:
    """The names of a header written as a comment ("# year month value" above a text table), where there is
    one name for each column; else None."""
    if not cells[0].startswith("#"):
        return None
    head = cells[0].lstrip("#").strip()
    words = [head] * bool(head) + [cell.strip() for cell in cells[1:]]  # "#" alone: a text table's
    return tuple(words) if len(words) == width and all(words) else None


def header_above_labels(rows: list[list[str]], first: int, width: int) -> int:
    """The first data row's index, or where that row is labelled (its first cell no date: ABS's "Collection
    Month,3,3,3,3" among Unit, Frequency, ... rows) above rows of dates, the index after the last row of
    `width` cells above it whose first cell is empty (ABS's line of series names), else after the first line
    where every line above is of `width` cells (the Bank of Japan's "Series code" line above Name, Unit,
    Frequency, Category and "Last update,20240312,..."): the labelled rows are no header (the Frequency line
    named every column 'Quarter', the Category line the Bank of Japan's) but describe the columns."""
    if not rows or is_data(rows[first]) or not any(is_data(cells) for cells in rows[first + 1 :]):
        return first
    blank = [row for row in range(first) if len(rows[row]) == width and not rows[row][0].strip()]
    if blank:
        return blank[-1] + 1
    return 1 if all(len(cells) == width for cells in rows[:first]) else first


# The words of a line of units under the series' names (Stats NZ's Infoshare: "Total exports" above "NZD"; an
# office's "EUR million", "2015=100", "%" under "GDP", "CPI", "Unemployment"; GENESIS' "Anzahl", a count,
# under "Bevölkerungsstand"): units, scales, an index base.
_UNITS = frozenset({"%", "percent", "per", "cent", "index", "number", "units", "persons", "usd", "eur", "gbp",
                    "jpy", "nzd", "aud", "cad", "chf", "cny", "sek", "nok", "dkk", "inr", "brl", "zar", "mxn",
                    "krw", "dollars", "euros", "thousand", "thousands", "million", "millions", "billion",
                    "billions", "bn", "mn", "mio", "mrd", "'000", "anzahl", "prozent", "tsd", "tausend",
                    "aantal", "antal", "procent"})  # fmt: skip
_INDEX_BASE = re.compile(r"\d{4}=100")
_SCALE = re.compile(r"1(?:[,.' ]?000)+|100")  # "1000 persons", "1.000 persons": a unit's scale (h49)


def _units(name: str) -> bool:
    words = re.findall(r"[^\s()\[\]]+", name.lower())
    return bool(words) and all(word in _UNITS or _INDEX_BASE.fullmatch(word) or _SCALE.fullmatch(word)
                               for word in words)  # fmt: skip


_CODE_KEY = re.compile(r"\b(?:codes?|key|id|identifiant|kennung|clave|código)\b", re.I)  # a key naming series


def keyed_line(cells: list[str]) -> bool:
    """A line of a key and its values ("Collection:,Average of observations", FRED-MD's "Transform:,5,2"),
    which names no column and holds no data."""
    return cells[0].strip().endswith(":")


def names_not_given(header: list[str]) -> bool:
    """Whether a header leaves its columns to a line above (`names_above`): it repeats a name, leaves a
    column unnamed, gives units only, or is a key's line (the ECB's "Period\\Unit:,[Percentage change ]")."""
    names = header[1:]
    return len(set(names)) < len(names) or not all(names) or all(map(_units, names)) or keyed_line(header)


def names_above(
    rows: list[list[str]], width: int, data: list[list[str]], header: list[str] | None = None
) -> tuple[tuple[str, ...], int] | None:
    """Where a header of several lines ends in one that repeats itself ("Unit,%,%,%" under
    "Country,Germany,France,Italy") or leaves a column unnamed (the Bundesbank's "Stand vom;06.10.2023;" under
    ";BBDE1.M.DE...;BBDE1.M.DE..._FLAGS"), the nearest line above of the same width that names every column
    but the first, or but the first two where the `data` rows hold years and month or quarter names there,
    named year and month or quarter (GENESIS: ";;Verbraucherpreisindex;Veränderung zum Vormonat" above
    ";;2020=100;in (%)" above "2012;Januar;89,8;..."); with the count of lines above the header it read."""
    # a separator ending every line (GENESIS' "31.12.2017;82792351;"): a last column empty throughout
    ended = width > 2 and all(not cells[-1].strip() for cells in (*rows, *data) if len(cells) == width)
    if ended and header is not None and not names_not_given([cell.strip() for cell in header[:-1]]):
        return None  # the header names its columns but that empty last one (the RBA's "Series ID,FIRMMCRT,")
    for cells in reversed(rows):
        names = [cell.strip() for cell in cells]
        if len(names) != width or keyed_line(names):  # the ECB's series key above "Collection:,..." lines
            continue
        if all(names[1 : width - ended]) and len(set(names[1 : width - ended])) == width - 1 - ended:
            return tuple(names), 1
        labelled = width > 2 and not any(names[:2]) and all(names[2:]) and len(set(names[2:])) == width - 2
        if labelled and (part := _year_and_part([cells for cells in data if len(cells) == width])):
            return ("year", part, *names[2:]), 1
    lines = ([cell.strip() for cell in cells] for cells in rows)
    coded = [names for names in lines if len(names) == width and keyed_line(names)
             and _CODE_KEY.search(names[0]) and len(set(filter(None, names[1:]))) == width - 1]  # fmt: skip
    if coded:  # a key naming one code per column (Banque de France's "Code série :" beside "Titre :", ...)
        return ("", *coded[-1][1:]), 1
    return None if header is None else _joined_names(rows, header, width)


def _carried(cells: list[str]) -> list[str]:
    """Each cell, a blank one as the last name before it: a merged cell's name over the columns it spans."""
    return list(accumulate(cells, lambda last, cell: cell or last))


def _joined_names(rows: list[list[str]], header: list[str], width: int) -> tuple[tuple[str, ...], int] | None:
    """Where the header repeats a name or names no column but the first (yfinance's "Date,,,"), names joined
    from the lines above that name two columns or more, a group's name carried over the blanks its merged
    cell left ("North,,South," above "Month,Food,Non-food,Food,Non-food": North Food, North Non-food, ...;
    "Price,Close,Close" above "Ticker,AAPL,MSFT": Close AAPL, Close MSFT); the first column the header's."""
    header = [cell.strip() for cell in header]
    named = [cell for cell in header[1:] if cell]
    if len(header) != width or (named and len(set(named)) == len(named)):  # a blank: an empty column
        return None
    block = [header] if named else []
    for cells in reversed(rows):
        cells = [cell.strip() for cell in cells]
        if len(cells) != width or len(set(filter(None, cells[1:]))) < 2:
            break
        block.insert(0, cells)
    if len(block) < 2:
        return None
    groups = [_carried(cells[1:]) for cells in block[:-1]]
    names = [" ".join(dict.fromkeys(part for part in parts if part))
             for parts in zip(*groups, block[-1][1:], strict=True)]  # fmt: skip
    if not all(names) or len(set(names)) < width - 1:
        return None
    return (header[0], *names), len(block) - bool(named)


def years_over_parts(rows: list[list[str]], first: int, width: int) -> tuple[str, ...] | None:
    """The names of a wide table whose periods head it in two lines, `first` and the next: years, each in a
    cell merged over its quarters or months (blanks after it) or written over each, above the parts
    ("Region,2019,,,,2020" above ",Q1,Q2,Q3,Q4,Q1": Region, 2019 Q1, ..., 2020 Q1), as ABS, Statistics Canada,
    ONS and BEA tables print them (the years were taken as the header, the parts as a row of data) after one
    or more columns naming the rows; None for any other header."""
    if first + 1 >= len(rows) or len(rows[first]) != width or len(rows[first + 1]) != width:
        return None
    years, parts = ([cell.strip() for cell in cells] for cells in rows[first : first + 2])
    ids = next((k for k, cell in enumerate(years) if _YEAR.fullmatch(cell)), 0)  # the columns naming rows
    if not ids or not all(parts[ids:]) or any(_YEAR.fullmatch(part) for part in parts):
        return None
    heads = years[ids:]
    if not all(_YEAR.fullmatch(cell) or not cell for cell in heads) or len(set(heads)) == len(heads):
        return None  # each year once: a header of years
    spread = _carried(heads)
    for labels in ([f"{year} {part}" for year, part in zip(spread, parts[ids:], strict=True)],
                   [f"{part} {year}" for year, part in zip(spread, parts[ids:], strict=True)]):  # fmt: skip
        dates = parse_period_labels(pd.Series(labels))
        if dates is not None and (np.diff(dates.asi8) > 0).all():
            return (*(part or year for part, year in zip(parts[:ids], years[:ids], strict=True)), *labels)
    return None


def _year_and_part(rows: list[list[str]]) -> str | None:
    """"month" or "quarter" where rows begin with a year and a month's name or a quarter's (GENESIS:
    "2012;Januar;...", "2010;1. Quartal;...")."""
    if not rows or not all(_YEAR.fullmatch(cells[0].strip()) for cells in rows):
        return None
    if all(cells[1].strip().lower() in MONTH_NUMBERS for cells in rows):
        return "month"
    return "quarter" if all(QUARTER_WORDS.fullmatch(cells[1].strip()) for cells in rows) else None

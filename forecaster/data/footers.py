"""The rows below a table's data that are none of it: notes ("Source: ..."), a rule drawn above them,
a copyright line, summary rows ("Total", "Average") and a second table, so that the reader reads only
the data (`layouts.arrange`)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from forecaster.data.dates import SPAN_BETWEEN
from forecaster.data.headerless import is_date, is_timestamp
from forecaster.data.legends import WORD, numbered_note
from forecaster.data.periods import SUMMARY_LABELS

# Rows of totals, averages, minimum and maximum below the data; more rows of labels are not a summary
MAX_SUMMARY_ROWS = 5
MAX_DESCRIPTION_ROWS = 20  # rows below a header that may describe its columns (units, types, ids)
_RULE = re.compile(r"[-_=*~ ]{3,}")
_NOTICES = ("©", "(c)", "(C)", "Copyright")  # a copyright line, whose commas split it into cells
# A row naming the source or the notes of each column (the Banco de España's "FUENTE" and "NOTAS" below its
# series), whose other cells are filled with words, no values: a note, as a copyright line is (a series named
# "Notes", banknotes below "Coins", is a row of values)
_SOURCE_ROW = re.compile(r"(?:fuentes?|notas?|sources?|notes?|quellen?|anmerkungen|fontes?)\s*:?", re.I)
_DOS_END = "\x1a"  # the end-of-file byte (^Z) DOS programs write after the last line
_YEARS_SPAN = re.compile(rf"(\d{{4}}){SPAN_BETWEEN}(\d{{4}})")  # "2008-2022", "2008–2022"
_COUNT = re.compile(r"(?<!\d)(?!1[89]\d\d(?!\d)|2[01]\d\d(?!\d))\d+")  # a number that is no year ("65")
_GROUP_RANGE = re.compile(rf"(?<!\d)\d{{1,3}}{SPAN_BETWEEN}\d{{1,3}}(?!\d)")  # "15 to 64", "5-14"


def _footnote(text: str) -> bool:
    """A note or a label after the data ("Source: ...", "Last Updated: 10/28/2026", "Total"), or a rule drawn
    above them ("__________", Destatis'), not a period."""
    if _RULE.fullmatch(text):
        return True
    if re.match(r"[^\W\d_]{3}[^:]*:", text):
        return True
    worded = bool(WORD.search(text))  # "2023 Dezember" is a period pandas does not read
    return worded and not is_date(text)


def _total_of_years(text: str, above: pd.Series) -> bool:
    """A span of years ending with the year of the last label above it and starting before it: a yearly
    table's total or average over its years ("2008-2022" below "2022": the file had no date column, h111 F5),
    not a step of a table of spans ("2015-2020" below "2010-2015")."""
    if (span := _YEARS_SPAN.fullmatch(text)) is None:  # the column above read for a span alone
        return False
    labels = above.dropna()
    last = re.findall(r"\d{4}", str(labels.iloc[-1])) if len(labels) else []
    return bool(last) and int(span[1]) < int(min(last)) and span[2] == max(last)


def drop_footer(raw: pd.DataFrame) -> tuple[pd.DataFrame, int, list[tuple[int, str]]]:
    """`raw` without its trailing empty rows, notes (text in the first cell only) and, below a row dated in
    its first cell, at most MAX_SUMMARY_ROWS summary rows ("Total", "Average" beside values); how many notes
    there were, and the summary rows' positions and labels."""
    first = raw.iloc[:, 0]
    alone = raw.iloc[:, 1:].isna().all(axis=1).to_numpy()
    end, summaries = _second_table(raw), []
    notes = len(raw) - end
    kept = None  # (end, notes) without the summary rows: what is dropped where no dated row stands above them
    while end > 0 and raw.shape[1] > 1 and len(summaries) <= MAX_SUMMARY_ROWS:
        cell = first.iloc[end - 1]
        text = str(cell).strip().strip(_DOS_END) if pd.notna(cell) else ""  # " ": Stats NZ's gaps
        footnote = bool(text) and (_footnote(text) or _total_of_years(text, first.iloc[: end - 1]))
        numbered = bool(text) and not footnote and numbered_note(raw.iloc[:end])
        if text and not (footnote or numbered):
            break
        # "©IMF, 2024, Source: ...", split by its commas; "FUENTE" with each column's source
        sourced = bool(_SOURCE_ROW.fullmatch(text)) and not any(
            is_datum(str(value).strip()) for value in raw.iloc[end - 1, 1:].dropna())
        notice = text.startswith(_NOTICES) or numbered or sourced
        if not alone[end - 1] and not notice:
            if pd.isna(cell) or _last_group(text, first.iloc[: end - 1]):
                break
            kept = (end, notes) if kept is None else kept
            summaries.append((end - 1, text))
        notes += int(bool(text) and (alone[end - 1] or notice))
        end -= 1
    if summaries:
        text = str(first.iloc[end - 1]).strip() if end else ""
        dated = is_datum(text) or is_timestamp(text) or _last_group(text, first.iloc[: end - 1])
        if len(summaries) > MAX_SUMMARY_ROWS or not dated:
            (end, notes), summaries = kept, []
    return (raw.iloc[:end] if end < len(raw) else raw), notes, summaries[::-1]


def _last_group(text: str, above: pd.Series) -> bool:
    """A group counted on from the range above it: an age table's last row ("65 and over" below "15 to 64";
    it was skipped as a summary, h142), not its total ("Total", "Total 2" of note 2). The label above is a
    range of small numbers, no date: any label holding a number had also taken the last rows of a long
    panel's series named with numbers for data ('short1' above 'tiny', whose 2 rows were then dropped)."""
    labels = above.dropna()
    last = str(labels.iloc[-1]).strip() if len(labels) else ""
    counted = bool(_COUNT.search(text)) and not SUMMARY_LABELS.match(text)
    return counted and bool(_GROUP_RANGE.search(last)) and not is_date(last)


def _second_table(raw: pd.DataFrame) -> int:
    """Where a second table starts below the data, else the row count: its title above the header repeated
    (Fama-French's annual factors below the monthly), or the first of the last rows that fill fewer cells
    than the data's rows mostly do, when it holds names only (UNdata's footnotes: a header "footnoteSeqID",
    "Footnote" over numbered notes)."""
    filled = raw.notna().sum(axis=1).to_numpy()
    if len(filled) < 3:
        return len(raw)
    header = [str(name).strip() for name in raw.columns]
    named = np.flatnonzero(raw.iloc[:, -1].astype(str).str.strip() == header[-1])  # one column looked at
    again = [row for row in named if sum(str(cell).strip() == name for cell, name in
                                         zip(raw.iloc[row], header, strict=True)) >= max(2, len(header) - 1)]
    if again:  # the header again, under a title alone (Fama-French's "Annual Factors: ...")
        start = int(again[0])
        while start > 0 and filled[start - 1] <= 1:
            start -= 1
        titled = start < again[0] and raw.iloc[start : again[0], 0].dropna().map(_footnote).any()
        return start if titled and start > 0 else len(raw)
    usual = int(np.bincount(filled).argmax())
    start = len(raw)
    while start > 0 and len(raw) - start < MAX_DESCRIPTION_ROWS and filled[start - 1] < usual:
        start -= 1
    cells = [str(cell).strip() for cell in raw.iloc[start].dropna()] if start < len(raw) else []
    names = len(cells) > 1 and all(WORD.search(cell) and not is_datum(cell) for cell in cells)
    return start if names and start > 0 else len(raw)


def is_datum(text: str) -> bool:
    """A first cell that looks like a date or a number, not a title (a digit, no word)."""
    return any(char.isdigit() for char in text) and not WORD.search(text)

"""The legend of special values and flags an office prints below its data: Eurostat's legacy downloads end in
"Special value:" and lines such as ":;not available", "b;break in time series", "p;provisional", which a
";" file splits into rows of a code and its meaning, no dates; Statistics Canada's in "Symbol legend:". The
legend is left out, said in a note; the flags on the values ("12.3 p", ": c") are `cells`' to read. Notes
numbered under their heading ("Footnotes:", then "1","Labour Force Survey estimates": Statistics Canada's)
are notes after the data too (`numbered_note`); their numbers after a label ("Food 5") are dropped from it
(`without_footnote_marks`). A line after the data saying a dash is zero (GENESIS') makes the dashes zeros
(`dashes_as_zero`).
"""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd

# The line heading a legend, and one of its entries: a marker (":", "..", "...") or a flag of one to three
# letters, then its meaning in words
_HEADING = re.compile(r"(?:special values?|available flags|flags?|symbols?|symbol legend|legend)\s*:?", re.I)
_ENTRY = re.compile(r"(?P<code>:|\.{2,3}|[A-Za-z]{1,3})\s+(?P<meaning>[^\W\d_]{3}.*)")
_MOST = 50  # the legend's lines at most (Eurostat's flags are a dozen)
_NOTES = re.compile(r"(?:foot\s?notes?|notes?(?: de bas de page)?)\s*:?", re.I)  # a heading of numbered notes
WORD = re.compile(r"[^\W\d_]{3}")  # a word: three letters in a row (a cell of words, not a date)
# A legend's line saying a dash is zero: Destatis' GENESIS "-  = nichts vorhanden (genau Null)", in English
# "- = nil (no figures or magnitude zero)"
_ZERO_DASH = re.compile(r"\s*(?P<dash>[-\u2013\u2014])\s*[=:]?\s*(?:nichts vorhanden|genau null|nil\b"
                        r"|exactly zero|magnitude zero).*", re.I)  # fmt: skip
_MARKED = re.compile(r"(?P<label>.*[^\W\d_].*?)(?P<marks>(?:\s+\d+)+)")  # "Food 5", "Canada 6 7"
# A label's last word that asks for a number after it, the label's own: "Under 5", "Top 10", "Level 3" (not
# "65 and over", "5 or above" closing it)
_BOUND = re.compile(r".*\b(?<!and )(?<!or )(?:under|over|below|above|to|than|aged?|top|level|phase|stage|tier"
                    r"|wave)", re.I)


def without_legend(raw: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """`raw` without the legend closing it: a heading row alone ("Special value:"), then to the end rows of
    entries (two cells at most) or further headings only; a note naming a few entries. Else `raw`."""
    tail = raw.iloc[-_MOST:]
    filled = tail.notna().sum(axis=1).to_numpy()
    lines: list[str] = []  # from the last up
    while len(lines) < len(tail) and filled[-len(lines) - 1] <= 2:
        cells = tail.iloc[-len(lines) - 1].dropna().astype(str).str.strip()
        line = " ".join(cell for cell in cells if cell)
        if not (_ENTRY.fullmatch(line) or _HEADING.fullmatch(line)):
            break
        lines.append(line)
    headed = [k for k, line in enumerate(lines) if _HEADING.fullmatch(line)]
    lines = lines[: headed[-1] + 1][::-1] if headed else []  # from the first heading down
    entries = [found for line in lines if (found := _ENTRY.fullmatch(line))]
    if not entries:
        return raw
    shown = ", ".join(f"{found['code']!r} {found['meaning']}" for found in entries[:3])
    notes.append(f"skipped the legend after the data: {len(lines)} line(s) from {lines[0]!r} "
                 f"({shown}{', ...' if len(entries) > 3 else ''})")  # fmt: skip
    return raw.iloc[: len(raw) - len(lines)]


def numbered_note(rows: pd.DataFrame) -> bool:
    """Whether the last of `rows` is a numbered note: from it up, rows of a note's number in the first cell
    and words beside it ("1","Seasonally adjusted"), under a heading alone ("Footnotes:"). Numbers without
    their heading may be data."""
    for k in range(len(rows) - 1, max(len(rows) - _MOST, 0) - 1, -1):
        cells = _filled(rows.iloc[k])
        if len(cells) == 1 and _NOTES.fullmatch(cells[0]):
            return k < len(rows) - 1
        if not (pd.notna(rows.iloc[k, 0]) and _note_row(cells)):
            return False
    return False


def _filled(row: pd.Series) -> list[str]:
    """A row's filled cells, as text."""
    return [str(cell).strip() for cell in row if pd.notna(cell) and str(cell).strip()]


def _note_row(cells: list[str]) -> bool:
    """Whether filled `cells` are a numbered note's: its number (3 digits at most), then words."""
    return len(cells) > 1 and cells[0].isdigit() and len(cells[0]) <= 3 and all(map(WORD.search, cells[1:]))


def dashes_as_zero(raw: pd.DataFrame, below: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """`raw` with its cells of a dash (but the first column's) read as 0 where a line below the data (`below`,
    the rows dropped after it) says the dash is zero, said in a note: as a missing value a month of no road
    deaths was filled in from its neighbours (GENESIS' legend, h125)."""
    legend = next((found for cell in below.iloc[:, 0].dropna().astype(str)
                   if (found := _ZERO_DASH.fullmatch(cell))), None)  # fmt: skip
    if legend is None:
        return raw
    raw, zeros = raw.copy(), 0
    for position in range(1, raw.shape[1]):
        column = raw.iloc[:, position]
        dashed = column.astype(str).str.strip() == legend["dash"]
        if dashed.any():
            raw.isetitem(position, column.mask(dashed, "0"))
            zeros += int(dashed.sum())
    if zeros:
        notes.append(f"read {zeros} cell(s) marked {legend['dash']!r} as 0, as the line after the data says "
                     f"({legend.group().strip()!r})")  # fmt: skip
    return raw


def without_footnote_marks(raw: pd.DataFrame, below: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """`raw` with the numbers of footnotes dropped from the labels they follow ("Food 5": Statistics Canada
    writes its notes' numbers into the row and column labels), in the first column and the header, where
    each is a note numbered after the data (`below`, the rows dropped after it) and the label stays one of
    its own; said in a note. Only where the header marks its labels so too ("Products and product groups 3
    4"): a lone "Under 5" of an age table with notes 1-5 lost its number (h142). A label's own number
    ("Product 5", no note 5; "Under 5", "Top 10" after a word asking for one, `_BOUND`) is kept."""
    listed: set[str] = set()
    heading = False
    for _, row in below.iterrows():
        cells = _filled(row)
        heading = heading or (len(cells) == 1 and bool(_NOTES.fullmatch(cells[0])))
        if heading and _note_row(cells):
            listed.add(cells[0])
    if not listed:
        return raw
    labels = [str(name) for name in raw.columns] + raw.iloc[:, 0].dropna().astype(str).tolist()
    taken = set(labels)

    def unmarked(label: str) -> str:
        found = _MARKED.fullmatch(label.strip())
        if found is None or not set(found["marks"].split()) <= listed or found["label"] in taken:
            return label
        if _BOUND.fullmatch(found["label"]):  # the first number is the label's own: only those after it marks
            own, *marks = found["marks"].split()
            return f"{found['label']} {own}" if marks else label
        return found["label"]

    changed = {label: new for label in labels if (new := unmarked(label)) != label}
    twice = Counter(changed.values())  # "Product 1" and "Product 2" under notes 1 and 2: labels of their own
    changed = {label: new for label, new in changed.items() if twice[new] == 1}
    if not any(str(name) in changed for name in raw.columns):
        return raw
    raw = raw.rename(columns=lambda name: changed.get(str(name), name))
    raw.isetitem(0, raw.iloc[:, 0].map(lambda cell: changed.get(str(cell), cell) if pd.notna(cell) else cell))
    shown = ", ".join(f"{old!r} as {new!r}" for old, new in list(changed.items())[:3])
    notes.append(f"read {len(changed)} label(s) without the numbers of the footnotes after the data "
                 f"({shown}{', ...' if len(changed) > 3 else ''})")  # fmt: skip
    return raw

"""Flags after the dates of a table's rows. Publishers mark their latest periods as estimated, provisional,
revised or forecast in the date cell itself ("2023 (e)", "2024 estimate", "Mar 2024 (p)", "2023F", "FY2024
(est.)"), or mark a footnote ("2023¹"): such a year was read as no date (the file refused) or its row dropped
as a summary below the data. The dates are read without their flags, said in a note; the values' own flags
are `cells`' to read."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from forecaster.data.cells import cell_texts, datum_texts
from forecaster.data.datecolumn import DATE_NAMES, PERIOD_NAMES, YEAR_NAMES
from forecaster.data.dateparts import part_named
from forecaster.data.headerless import is_date
from forecaster.data.marks import FOOTNOTE, is_footnote

_WORDS = (r"e|p|r|f|est|prel|estd|estimated?|estimates?|prelim|preliminary|prov|provisional|proj|projected|"
          r"projections?|forecasts?|fcst|revised|rev")  # fmt: skip
_DATE_END = r"[\d年月日期度년월일]"  # a digit, or a CJK label's 年, 月, 期: "2023年12月p" (h100 F9)
# A date, then a flag: in parentheses or brackets, set apart or written on (2023p), closed alone (KOSIS'
# "2023.12 월 p)"), or marks
_FLAG_PATTERN = re.compile(rf"(?P<date>.*{_DATE_END})\s*(?:[(\[](?P<enclosed>{_WORDS})\.?[)\]]|"
                           rf"(?P<word>{_WORDS})[.)]?|(?P<mark>(?:\*|{FOOTNOTE})+))$",
                           re.IGNORECASE)  # fmt: skip
_SAMPLE = 20  # cells of a column read as dates to tell it holds them


def _flags(texts: pd.Series) -> dict[str, tuple[str, str]]:
    """The texts with a flag after a date: {text: (the date before the flag, the flag)}. Only texts not
    ending in a digit are matched, each once (a column of 200,000 dates took seconds)."""
    candidates = texts[~texts.str[-1:].str.isdecimal() & (datum_texts(texts) != "")].unique()
    found = {}
    for text in candidates:
        if (match := _FLAG_PATTERN.match(text)) is not None:
            found[text] = (match["date"], (match["enclosed"] or match["word"] or match["mark"]).lower())
    return found


def _dates(texts: pd.Series) -> tuple[pd.Series, list[str]] | None:
    """(each text's date without its flag, NaN where none; the flags found) where some texts are flagged,
    all of those dates once unflagged, at most half of the texts, and most of a sample of the others dates
    too; else None."""
    flagged = _flags(texts)
    if not flagged:
        return None
    marked = texts.isin(list(flagged)).to_numpy()
    filled = (texts != "").to_numpy()
    if marked.sum() * 2 > filled.sum() or not all(is_date(date) for date, _ in flagged.values()):
        return None
    others = texts[filled & ~marked]
    sample = others.iloc[np.unique(np.linspace(0, len(others) - 1, num=_SAMPLE).astype(int))]
    if sum(map(is_date, sample)) * 2 <= len(sample):
        return None
    dates = texts.map({text: date for text, (date, _) in flagged.items()})
    return dates, [flag for _, flag in flagged.values()]


def _named_like_dates(name: object) -> bool:
    text = str(name).strip().lower()
    return text in DATE_NAMES or text in PERIOD_NAMES or text in YEAR_NAMES or part_named(name) is not None


def _said(dates: pd.Series, flags: list[str], where: str) -> str:
    shown = ", ".join(dict.fromkeys(flags))
    if all(map(is_footnote, flags)):
        return f"read {int(dates.notna().sum())} date(s) {where} without their footnote marks ({shown})"
    return (f"read {int(dates.notna().sum())} date(s) {where} without their flags ({shown}: estimated, "
            "provisional, revised or forecast values, read as the others)")


def unflagged_dates(raw: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """`raw` with the flags after the dates of a column of dates (the first, or one named like dates), and
    after the dates heading the columns of a wide table, removed (a note for each). Dates are told by
    `_dates`; a flagged header name is left where the date without its flag names another column too (a
    revision beside the first estimate)."""
    changed = {}
    for position, (name, column) in enumerate(raw.items()):
        if position and not _named_like_dates(name):  # the first column, or one named so: 10 ms a file else
            continue
        if not pd.api.types.is_numeric_dtype(column) and (found := _dates(cell_texts(column))) is not None:
            dates, flags = found
            changed[name] = column.where(dates.isna(), dates)
            notes.append(_said(dates, flags, f"in column {name!r}"))
    raw = raw.assign(**changed) if changed else raw
    names = pd.Series([str(name).strip() for name in raw.columns])
    found = _dates(names)
    if found is None or found[0].isin(names).any():
        return raw
    dates, flags = found
    notes.append(_said(dates, flags, "heading the columns"))
    return raw.set_axis(dates.fillna(names).tolist(), axis=1)

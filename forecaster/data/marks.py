"""Marks official statistics print on their values besides `cells`' flags: footnote marks ("89.8¹", "1 234²",
"7.1⁽ᵃ⁾", "12.5†"), and Statistics Canada's quality grades on the estimates of a column ("19,507.5A" to
"12.3E", excellent to use with caution), whose B is no billion, and the UK Government Analysis Function's
shorthand in square brackets ("582.5 [r]" revised, "[p]" provisional, "[e]" estimated).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pandas as pd

# Superscript digits (a footnote's number), a superscript letter in superscript parentheses, daggers: one
# or several
FOOTNOTE = r"(?:[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]|\u207d[^\u207e\s]{1,3}\u207e|[\u2020\u2021])+"
_FOOTNOTE = re.compile(FOOTNOTE)
# What names a column or a row as the flags of the values beside it (OBS_STATUS, the IMF's "Status" row)
FLAG_NAMES = frozenset({"flag", "flags", "status"})
# A flag after a value in square brackets (the GSS's; alone, "[x]", "[c]" and "[z]" mark a value missing)
BRACKETED = r"\[[A-Za-z]{1,3}\]"
# A number written as measured (a decimal mark or thousands separators, as no code is), then a grade
_GRADED = re.compile(r"[+-]?\d[\d,. '\u00a0\u202f]*[.,' \u00a0\u202f]\d+(?P<grade>[A-E])")
_LETTERED = re.compile(r"[+-]?\d[\d,. '\u00a0\u202f]*[A-E]")  # ... or any number so, as a code ("1001A")


def is_footnote(flag: str) -> bool:
    """Whether a mark stripped from a value is a footnote's (said apart from the flags a value carries)."""
    return _FOOTNOTE.fullmatch(flag) is not None


def without_grades(cells: pd.Series, plain: np.ndarray) -> tuple[pd.Series, int]:
    """The cells without their quality grades, and how many carried one, where more than half of them are
    numbers so graded and the rest `plain` (numbers or markers: "F", "x", ".."): the grades of a column,
    not a few cells' flags nor codes ("1001A"; a long table's key, "4.1A" on each date, repeats every one
    of its codes); else the cells as they are and 0."""
    graded = cells.str.fullmatch(_GRADED).to_numpy(bool)
    if 2 * graded.sum() <= len(cells) or not (graded | plain).all():
        return cells, 0
    if cells[graded].value_counts().min() > 1:
        return cells, 0
    return cells.where(~graded, cells.str[:-1]), int(graded.sum())


def b_among_grades(letters: np.ndarray, flags: Counter, capitals: int) -> bool:
    """Whether the B after numbers (`letters`, each K, M or B) is a grade (very good), not billions: the
    column's other flags are capitals all among the grades A, C, D and E."""
    return capitals > 0 and set(letters) == {"B"} and set(flags) <= set("acde")


def graded_or_codes(raw: pd.DataFrame, names: list[str]) -> str:
    """What to do with the first of the text columns `names` that are mostly numbers followed by a letter A
    to E, read neither way ("345A", or "5.8A" repeated as a long table's key is): "" where none is."""
    for name in names:
        texts = raw[name].dropna().astype(str).str.strip()
        if len(texts) and 2 * texts.str.fullmatch(_LETTERED).sum() > len(texts):
            return (f"; column {name!r} holds numbers each followed by a letter A to E ({texts.iloc[0]!r}, "
                    "...): quality grades (Statistics Canada's) or codes, not told apart: remove the letters "
                    "to read the numbers")  # fmt: skip
    return ""

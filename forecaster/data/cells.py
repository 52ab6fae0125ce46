"""Numbers as statistics offices print them: decimal commas and thousands separators ("9.990,64", "1 234,5",
"1,234.5", "1'234.5"), missing-value markers ("..", ":", ".", "-") and value flags ("12.3 p", ": c",
"12.3(P)", "12.3*"), and the footnote marks and quality grades of `marks` ("89.8¹", "19,507.5A").

A text column becomes numbers only when every cell is one of these; its decimal mark comes from its own
unambiguous cells ("12,5" / "12.25"), else from the file's (its delimiter's: `layouts.sniff`), so "1,234"
alone is never guessed.
"""

from __future__ import annotations

import numbers
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from forecaster.data.marks import BRACKETED, FOOTNOTE, b_among_grades, is_footnote, without_grades

# World Bank "..", Eurostat ":", FRED ".", GISTEMP "***", the Met Office "---", the Fed "ND" (no data),
# Banxico "N/E" (no existe), the BCRP's "n.d." (no disponible), the BEA's "(D)" (withheld) and "(NM)" (not
# meaningful), the IMF DataMapper's "no data", the Banco de España's "_", the ONS's "[x]" (not available),
# "[c]" (confidential) and "[z]" (not applicable), the Census Bureau's "(X)" and "(S)", the ABS's "np" (not
# published), the IMF WEO's "n/a" and "--", the RBA's "CLOSED" (a market's holiday in its exchange rates),
# and what other offices print for "not available" (dashes as typeset, "n.a.").
MARKERS = frozenset({"..", ":", ".", "-", "–", "—", "x", "…", "...", "n/a", "(na)", "na", "n.a.",
                     "***", "---", "--", "nd", "n/e", "n.d.", "(d)", "(nm)", "(x)", "(s)", "[x]", "[c]",
                     "[z]", "np", "no data", "_", "closed"})  # fmt: skip
# ... and as written, Statistics Canada's "F" (too unreliable to be published): a lower-case "f" is a flag
CASED_MARKERS = frozenset({"F"})
# The spaces typesetting puts inside a number (French "1 234,5", "5,0 %"): no-break, narrow no-break, thin,
# and figure and hair spaces (a digit's width and less, as typesetting groups digits: h122 left them unread)
_TYPESET_SPACES = "\u00a0\u202f\u2009\u2007\u200a"
# What groups thousands under either decimal mark: spaces, and the apostrophes of Swiss tables ("1'201.5")
_GROUP_MARKS = f"[ {_TYPESET_SPACES}'\u2019]"
# Shapes of a number without its sign; "ambiguous" ones read differently under either decimal mark.
_SHAPES = {
    "ambiguous": r"[1-9]\d{0,2}[.,]\d{3}",  # "0,985" groups no thousands: its comma is a decimal one
    "integer": rf"\d+|\d{{1,3}}(?:{_GROUP_MARKS}\d{{3}})+",
    "dot": rf"(?:\d{{1,3}}(?:[,]\d{{3}})+|\d{{1,3}}(?:{_GROUP_MARKS}\d{{3}})+|\d+)?\.\d+(?:[eE][+-]?\d+)?"
    r"|\d+\.?[eE][+-]?\d+|\d+\.|\d{1,3}(?:,\d{3}){2,}"
    r"|\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?",  # India's lakhs and crores: "15,22,535.13" (h66)
    "comma": rf"(?:\d{{1,3}}(?:[.]\d{{3}})+|\d{{1,3}}(?:{_GROUP_MARKS}\d{{3}})+|\d+),\d+"
    r"|\d{1,3}(?:\.\d{3}){2,}",
}
_PATTERNS = {kind: re.compile(rf"[+-]?(?:{shape})") for kind, shape in _SHAPES.items()}
# Investing.com's and market data's volumes: "201.65K", "2.47M", "1.2B", Gapminder's "110.0k", "1.65 k" (no
# office flags a value "k"; other flags are lower case or set apart), and rates written with their unit,
# "0.40%", "5.2 %", "5,0\u00a0%" (read in percent, or as fractions among a column's plain fractions:
# `_nearer_scaled`); a capital set apart is a flag
_SCALED = re.compile(rf"(?P<value>.*\d)(?:[ {_TYPESET_SPACES}](?=[k%]))?(?P<suffix>[KkMB%])")
_SCALES = {"K": 1e3, "k": 1e3, "M": 1e6, "B": 1e9, "%": 1.0}
# Money as spreadsheets format it: "$120,345.67", "105.510,44 €", "-£3.20", accounting's "($4,845.18)" for a
# negative amount (a revenue column so written was skipped as text, silently)
_MONEY = re.compile(r"(?P<open>\()?(?P<sign>[+-]?)\s*[$€£¥]?\s*(?P<value>\d[\d.,\s\u00a0\u202f]*?)\s*[$€£¥]?"
                    r"(?P<close>\))?")  # fmt: skip
_CURRENCY = re.compile(r"[$€£¥]")
# ... but a number in parentheses among decimal commas, no currency sign, is a value published as uncertain
# (Destatis, Statistik Austria, the FSO: "(1227,6)", "Aussagewert eingeschränkt"), not a negative one
_UNCERTAIN = re.compile(r"\((?P<value>\d[\d.\s\u00a0\u202f]*(?:,\d+)?)\)")
# A minus after the number, as SAP and other ERP systems export negative amounts: "1.234,56-", "263-"
_TRAILING_MINUS = re.compile(rf"(?P<value>\d[\d.,{_TYPESET_SPACES}]*)-")
# A value below a limit it is censored at (Google Trends' "<1", a laboratory's "<0.5"): half the limit, as
# censored values are commonly read
_BELOW = re.compile(r"<\s*(?P<value>\d[\d.,]*)")
# Flags after a value: Eurostat's lower-case letters ("12.3 p"), letters set apart ("12.3(P)"), the Met
# Office's "*" and "#", the GSS's "[r]"; capitals alone are a unit's code ("1 EUR", the Riksbank's series
# label), no flag
_FLAGGED = re.compile(rf"(?P<value>.*?\S)\s*(?P<flag>\([A-Za-z]{{1,3}}\)|{BRACKETED}|[a-z]{{1,3}}|\*|#"
                      rf"|{FOOTNOTE})")
# ... and one capital on the digits (Statistics Canada's "19,507.5E", Stats NZ's "460346P"), not a scale's
# (K, M, B): flags of a few cells, not a column of codes ("1001A", "1002C": at most half its cells)
_CAPITAL_FLAG = re.compile(r"(?P<value>.*\d)(?P<flag>[AC-JL-Z])")
# Minus signs besides "-": the Unicode minus, the en dash before a number Word and Excel typeset for one
# ("–1,5"; between numbers, "2019–2020", it is a range, text) and the triangles before a number Japan's
# offices print for one (e-Stat, the ministries: "△2.2", "▲2.2")
_TRIANGLE = r"^[\u25b2\u25b3]\s*(?=\d)"  # before a number: alone, a triangle is no number
_EN_DASH = r"^\u2013(?=\d)"  # noted when read: a leading en dash may also mean "up to" ("–5")
_MINUS = re.compile(rf"\u2212|{_EN_DASH}|{_TRIANGLE}")
_SIGNS = ("\u2212", "\u2013", "\u25b2", "\u25b3")
# The characters that group thousands, with a decimal point (False) or a decimal comma (True).
_GROUPS = {False: f"[,]|{_GROUP_MARKS}", True: f"[.]|{_GROUP_MARKS}"}
_SAMPLE = 100  # cells looked at first: a column of text stops there
# No number, date or period label is written in more characters ("2016-07-01T00:00:00.000000000+05:30" and
# spelled-out months fit): a longer cell is text, never given to the readers' patterns, some of which take
# quadratic time on a long run of spaces (a cell of 16,000 held a core 18 s; dateutil a minute on a megabyte)
MAX_DATUM_CHARS = 64
MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")


@dataclass
class Tally:
    """What was read besides plain numbers, for the reader's note."""

    markers: Counter = field(default_factory=Counter)
    flags: Counter = field(default_factory=Counter)
    grouped: int = 0  # numbers written with thousands separators
    scaled: Counter = field(default_factory=Counter)  # numbers written with K, M, B or % after them
    grades: int = 0  # numbers written with a quality grade after them (`marks.without_grades`)

    def notes(self) -> list[str]:
        said = []
        if self.markers:
            shown = ", ".join(repr(marker) for marker, _ in self.markers.most_common())
            said.append(f"read {sum(self.markers.values())} cell(s) marked {shown} as missing")
        footnotes = Counter({flag: count for flag, count in self.flags.items() if is_footnote(flag)})
        for counted, what in ((self.flags - footnotes, "stripped value flags"),
                              (footnotes, "dropped footnote marks")):  # fmt: skip
            if counted:
                shown = ", ".join(flag for flag, _ in counted.most_common(5)) + ", ..." * (len(counted) > 5)
                said.append(f"{what} ({shown}) from {sum(counted.values())} cell(s)")
        if self.grades:
            said.append(f"dropped the quality grades A to E (Statistics Canada's) after {self.grades} "
                        "number(s)")  # fmt: skip
        if self.grouped:
            said.append(f"read {self.grouped} number(s) written with thousands separators")
        if below := self.scaled["<"]:
            said.append(f"read {below} cell(s) below a limit ('<1') as half the limit")
        if magnitudes := sum(self.scaled[suffix] for suffix in "KkMB"):
            said.append(f"read {magnitudes} number(s) ending in K (k), M or B as thousands, millions or "
                        "billions")
        if percents := self.scaled["%"]:
            said.append(f"read {percents} number(s) written with % in percent")
        if fractions := self.scaled["fraction"]:
            said.append(f"read {fractions} number(s) written with % as fractions (9.5% as 0.095), as the "
                        "column's other numbers are written")  # fmt: skip
        if trailing := self.scaled["-"]:
            said.append(f"read {trailing} number(s) with a minus after them (1.234,56-) as negative")
        if triangles := self.scaled["△"]:
            said.append(f"read {triangles} number(s) with △ or ▲ before them (Japan's minus) as negative")
        if dashes := self.scaled["\u2013"]:
            said.append(f"read {dashes} number(s) with an en dash before them ('\u20131,5') as negative")
        if money := self.scaled["money"]:
            owed = self.scaled["owed"]
            said.append(f"read {money} amount(s) of money without their currency sign"
                        + (f", {owed} in parentheses as negative" if owed else ""))  # fmt: skip
        return said


def datum_texts(texts: pd.Series) -> pd.Series:
    """The texts, those longer than MAX_DATUM_CHARS empty: no number, date or label, given to no pattern."""
    return texts.where(texts.str.len() <= MAX_DATUM_CHARS, "")


def cell_texts(column: pd.Series) -> pd.Series:
    """Each cell as its text without surrounding spaces, an empty cell as "" (not "nan"; a column of floats
    filled with text is deprecated in pandas)."""
    return column.astype(object).fillna("").astype(str).str.strip()


def _unflagged(text: str) -> tuple[str, str | None]:
    """(the cell without a trailing flag, the flag) when what is left is a number or a marker."""
    if number_kind(text, flags=False) is not None:
        return text, None
    found = _FLAGGED.fullmatch(text) or _CAPITAL_FLAG.fullmatch(text)
    kind = None if found is None else number_kind(found["value"], flags=False)
    joined = found is not None and found.end("value") == found.start("flag") and found["flag"][0] not in "(["
    if kind is None or (kind == "marker" and joined):  # Eurostat's ": c", not "-inf" nor "xyz"
        return text, None
    flag = found["flag"]
    if flag.upper() in MONTHS and found["value"].isdigit():  # ONS month labels such as "1990 JAN"
        return text, None
    return found["value"], flag.strip("()[]").lower()


def _unmoneyed(text: str) -> str | None:
    """A cell of money without its currency sign, accounting's parentheses or an ERP's trailing minus as a
    minus ("($4,845.18)" is "-4,845.18", "1.234,56-" is "-1.234,56"); None for any other cell."""
    if trailing := _TRAILING_MINUS.fullmatch(text):
        return "-" + trailing["value"]
    found = _MONEY.fullmatch(text)
    if found is None or bool(found["open"]) != bool(found["close"]):
        return None
    if not (_CURRENCY.search(text) or found["open"]) or (found["open"] and found["sign"]):
        return None
    return ("-" if found["open"] else found["sign"]) + found["value"]


def number_kind(text: str, *, flags: bool = True) -> str | None:
    """What a cell shows: "marker", "integer", "ambiguous", "dot" or "comma" (its decimal mark), or None."""
    text = _MINUS.sub("-", text.strip())
    if len(text) > MAX_DATUM_CHARS:
        return None
    if flags and (money := _unmoneyed(text)) is not None:
        text = money
    if flags:
        scaled = _SCALED.fullmatch(text) or _BELOW.fullmatch(text)
        text = _unflagged(scaled["value"] if scaled else text)[0]
    if text.lower() in MARKERS or text in CASED_MARKERS:
        return "marker"
    return next((kind for kind, pattern in _PATTERNS.items() if pattern.fullmatch(text)), None)


def to_numbers(
    column: pd.Series, decimal: str | None, tally: Tally, *, empty: bool = False
) -> pd.Series | None:
    """The float64 values of a text column, or None unless every cell is a number, a marker or empty
    (and, unless `empty`, one at least is a number); `decimal` is the file's decimal mark if known. A blank
    text ("", as a JSON client or a form writes an empty cell) is missing, as an empty CSV cell is."""
    present = column.dropna()
    if any(number_kind(str(text)) is None for text in present.iloc[:_SAMPLE] if str(text).strip()):
        return None
    cells = present.astype(str).str.strip()
    blank = cells.eq("").to_numpy()
    places = np.flatnonzero(column.notna().to_numpy())[~blank]  # the rows of the cells read
    cells = cells[~blank]
    joined = "".join(cells.tolist())  # two regex passes over every cell were 9% of reading a column
    found = {sign for sign in _SIGNS if sign in joined}  # a "–" marker of no value alone passes no regex
    triangles = int(cells.str.contains(_TRIANGLE).sum()) if found & {"\u25b2", "\u25b3"} else 0
    dashes = int(cells.str.contains(_EN_DASH).sum()) if "\u2013" in found else 0
    signed = "\u2212" in found or triangles or dashes
    cells = cells.str.replace(_MINUS, "-", regex=True) if signed else cells
    if (cells.str.len() > MAX_DATUM_CHARS).any():
        return None
    kinds, graded = _plain_kinds(cells), 0
    if 2 * kinds.any(axis=1).sum() < len(cells):  # mostly no plain numbers: graded A to E, maybe
        cells, graded = without_grades(cells, kinds.any(axis=1) | _marked(cells))
        kinds = _plain_kinds(cells) if graded else kinds
    plain = kinds.any(axis=1)
    values, flags, suffixes, capitals = cells.to_numpy(dtype=object), Counter(), Counter(), 0
    scales, letters = np.ones(len(cells)), np.full(len(cells), "", dtype=object)  # letters: K, k, M or B
    percents = np.zeros(len(cells), dtype=bool)
    for position in np.flatnonzero(~kinds.any(axis=1)):  # markers, flagged, scaled cells and money
        if decimal == "," and (uncertain := _UNCERTAIN.fullmatch(values[position])):
            values[position] = uncertain["value"]
            flags.update(["( )"])
        elif (money := _unmoneyed(values[position])) is not None:
            said = ["-"] if values[position].endswith("-") else ["money"]
            suffixes.update(said + (["owed"] if values[position].startswith("(") else []))
            values[position] = money
        scaled = _SCALED.fullmatch(values[position])
        if scaled is not None and number_kind(scaled["value"], flags=False) not in (None, "marker"):
            values[position], scales[position] = scaled["value"], _SCALES[scaled["suffix"]]
            suffixes.update([scaled["suffix"]])
            letters[position] = scaled["suffix"] if scaled["suffix"] in "KkMB" else ""
            percents[position] = scaled["suffix"] == "%"
        elif (below := _BELOW.fullmatch(values[position])) and number_kind(below["value"], flags=False):
            values[position], scales[position] = below["value"], 0.5
            suffixes.update(["<"])
        value, flag = _unflagged(values[position])
        kind = number_kind(value, flags=False)
        if kind is None:
            return None
        capitals += bool(flag) and values[position][-1].isupper()
        values[position] = value
        kinds[position] = [kind == name for name in _PATTERNS]
        flags.update([flag] if flag else [])
    if 2 * capitals > len(cells):
        return None
    written = pd.Series(values, dtype=object)
    marked = _marked(written)
    ambiguous, whole, dot, comma = kinds[~marked].T
    if not empty and marked.all():
        return None
    dot, comma = (dot & ~ambiguous).any(), (comma & ~ambiguous).any()
    mark = "," if comma else "." if dot else decimal
    if mark is None and ambiguous.any():
        mark = _mark_by_size(written[~marked].reset_index(drop=True), ambiguous, whole)
    if (dot and comma) or (decimal is not None and mark != decimal) or (mark is None and ambiguous.any()):
        return None
    groups = _GROUPS[mark == ","]
    written = written[~marked]
    digits = written.str.replace(groups, "", regex=True).str.replace(",", ".", regex=False)
    try:
        parsed = pd.to_numeric(digits).to_numpy(np.float64)
    except (ValueError, OverflowError):  # e.g. an integer of more digits than Python converts: not a value
        return None
    letters = letters[~marked]
    lettered = letters != ""
    grade = lettered.any() and b_among_grades(letters[lettered], flags, capitals)  # beside "12.3A"
    if lettered.any() and (grade or _letters_flag(parsed, letters, plain[~marked])):  # StatCan's "19,087.5B"
        flags.update(letter.lower() for letter in letters[lettered])
        suffixes.subtract(letters[lettered])
        scales[np.flatnonzero(~marked)[lettered]] = 1.0
    percent, others = percents[~marked], plain[~marked] & ~lettered & ~percents[~marked]
    fewer = 0 < percent.sum() < others.sum()  # a few cells shown in percent (more: the column's unit)
    if fewer and _nearer_scaled(parsed[percent], np.full(percent.sum(), 0.01), parsed[others]):
        scales[np.flatnonzero(~marked)[percent]] = 0.01  # "9.5%" after "0.094": a cell shown in percent
        suffixes.subtract({"%": int(percent.sum())})
        suffixes.update({"fraction": int(percent.sum())})
    parsed = parsed * scales[~marked]
    numbers = np.full(len(column), np.nan)
    numbers[places[~marked]] = parsed
    tally.markers.update(values[marked])
    tally.flags.update(flags)
    tally.grouped += int(written.str.contains(groups).sum())
    tally.scaled.update(suffixes)
    tally.scaled.update({"△": triangles, "\u2013": dashes})
    tally.grades += graded
    return pd.Series(numbers, index=column.index, name=column.name)


def _marked(texts: pd.Series) -> np.ndarray:
    """Which texts are markers of a missing value."""
    return (texts.str.lower().isin(MARKERS) | texts.isin(CASED_MARKERS)).to_numpy(bool)


def _mark_by_size(written: pd.Series, ambiguous: np.ndarray, whole: np.ndarray) -> str | None:
    """The decimal mark of a column whose only separators are ambiguous ('1.234' beside '987', a German tab
    export of counts): the reading that makes those numbers the size of the column's plain whole numbers
    (log10 of the medians), as thousands or as decimals. None without plain numbers, or for both marks."""
    separators = set(written[ambiguous].str.extract(r"([.,])")[0])
    plain = np.abs(pd.to_numeric(written[whole & ~ambiguous].str.replace(_GROUP_MARKS, "", regex=True)))
    plain = plain[plain > 0].to_numpy(np.float64)
    if len(separators) != 1 or not plain.size:
        return None
    separator = separators.pop()
    shown = np.abs(pd.to_numeric(written[ambiguous].str.replace(separator, ".", regex=False)).to_numpy())
    typical, as_decimals = np.log10(np.median(plain)), np.log10(np.median(shown))
    grouping = abs(as_decimals + 3 - typical) < abs(as_decimals - typical)
    return ("," if separator == "." else ".") if grouping else separator


def doubtful_marks(rows: pd.DataFrame) -> list[str]:
    """The columns of `rows` (a file's first, as text) whose numbers show one ambiguous separator beside
    plain whole numbers ('1.234', '987'): pandas would read the dot as a decimal one, the column 1000x
    smaller in places; read as text, `to_numbers` decides by their size. One pass over all cells (a file of
    10,000 columns took 9 s column by column)."""
    cells = pd.Series(rows.to_numpy(dtype=object).ravel(order="F"))  # column after column
    present = cells.notna().to_numpy().reshape(rows.shape[1], -1)
    texts = cells.fillna("").astype(str).str.strip()
    ambiguous = texts.str.fullmatch(_PATTERNS["ambiguous"]).to_numpy().reshape(present.shape)
    candidates = np.flatnonzero(ambiguous.any(axis=1))
    if not candidates.size:
        return []
    length = present.shape[1]
    kinds = _plain_kinds(texts.iloc[(candidates[:, None] * length + np.arange(length)).ravel()])
    kinds = kinds.reshape(len(candidates), length, -1)
    numbers = kinds.any(axis=2) | ~present[candidates]
    marked = (kinds[..., 2:] & ~kinds[..., :1]).any(axis=(1, 2))  # a decimal mark of its own ('1.5')
    whole = (kinds[..., 1] & ~kinds[..., 0]).any(axis=1)
    return [str(rows.columns[k]) for k in candidates[numbers.all(axis=1) & ~marked & whole]]


def _letters_flag(written: np.ndarray, letters: np.ndarray, plain: np.ndarray) -> bool:
    """Whether the K, M or B after numbers (`letters`, "" where none) flags them (Statistics Canada's B,
    "very good") rather than scaling them: the numbers as written are closer in magnitude to the column's
    plain numbers than scaled. Investing.com's volumes ("2.47M", "1.2B") have no plain numbers beside them."""
    lettered = letters != ""
    scales = np.array([_SCALES[letter] for letter in letters[lettered]])
    return _nearer_scaled(written[lettered], scales, written[plain & ~lettered]) is False


def _nearer_scaled(shown: np.ndarray, scales: np.ndarray, reference: np.ndarray) -> bool | None:
    """Whether numbers `shown` times their `scales` are closer in magnitude (log10 of the medians) to the
    `reference` numbers of their column than as written; None where either holds no number but 0."""
    keep = shown != 0
    shown, scales, reference = np.abs(shown[keep]), scales[keep], np.abs(reference[reference != 0])
    if not (reference.size and shown.size):
        return None
    typical = np.log10(np.median(reference))
    as_written, as_scaled = np.log10(np.median(shown)), np.log10(np.median(shown * scales))
    return bool(abs(as_scaled - typical) < abs(as_written - typical))


def numbers_in_text_columns(raw: pd.DataFrame, decimal: str | None, tally: Tally) -> pd.DataFrame:
    """`raw` with its text columns of numbers, markers and flags as float64 columns (others untouched)."""
    converted = {}
    for name, column in raw.items():
        if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
            numbers = to_numbers(column, decimal, tally)
            if numbers is not None:
                converted[name] = numbers
    return raw.assign(**converted) if converted else raw


def _plain_kinds(texts: pd.Series) -> np.ndarray:
    """(N, kinds) whether each text is a plain number of each of _PATTERNS' kinds, matched column-wide."""
    return np.column_stack([texts.str.fullmatch(pattern).to_numpy(bool) for pattern in _PATTERNS.values()])


def number_cells(cells: pd.Series) -> np.ndarray:
    """Which text cells hold a number, plain or written as `number_kind` reads it (flagged, money, scaled);
    markers and other text do not. Plain numbers are matched column-wide, the others one by one."""
    texts = cells.astype(str).str.strip()
    found = _plain_kinds(texts).any(axis=1)
    for position in np.flatnonzero(~found & texts.str.contains(r"\d").to_numpy(bool)):
        found[position] = number_kind(texts.iloc[position]) not in (None, "marker")
    return found


def not_a_number_cell(value: Any) -> bool:
    """Whether a DataFrame's object cell is neither text, a real number nor empty: pandas reads True as 1,
    b"12" as 12 and 3+4j as 3, which a forecast must not be trained on silently."""
    if isinstance(value, (bool, np.bool_)):
        return True
    return not (value is None or isinstance(value, (str, numbers.Real, Decimal)) or pd.isna(value))


def counts_rows(column: pd.Series) -> bool:
    """Whether `column` counts the rows, from 1 or 0: an index written out, no data."""
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    return len(values) > 2 and any(np.array_equal(values, np.arange(len(values)) + first) for first in (0, 1))

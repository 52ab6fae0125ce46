"""Year and period-code columns as the US Bureau of Labor Statistics publishes them (year 2020, period M01;
quarters Q01-Q04, half-years S01-S02, years A01), made one column of period labels. The M13, Q05 and S03
rows are annual or semiannual averages of the same data, not further steps, so they are dropped; where a
file mixes kinds, the finest is kept. So are a year's rows among its months or quarters in one column of
labels (CBS StatLine: "2012" after "2012 december"), and a year's total among timestamps ("Total 2020" after
"2020-12"), and the quarters' and years' subtotals among monthly rows ("2019 Q1" after "2019-03").
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from forecaster.data.cells import datum_texts
from forecaster.data.dateparts import find_date_parts
from forecaster.data.dates import parse_period_labels, parse_timestamps, period_label_misfits
from forecaster.data.missing import line
from forecaster.errors import DataError

# Frequency codes and the kinds of period they name, finest first: BLS's period codes (M01, Q01, S01, A01) and
# SDMX's FREQ column (Eurostat's `freq`: A, Q, M, W, D)
FREQUENCIES = {"D": "daily", "W": "weekly", "M": "monthly", "Q": "quarterly", "S": "half-yearly",
               "A": "yearly"}  # fmt: skip
_CODE = r"(?P<kind>[MQSA])(?P<number>\d{2})"
_AVERAGE = {"M": 13, "Q": 5, "S": 3}  # the code of each kind's average over the year
_KINDS = {code: FREQUENCIES[code] for code in "MQSA"}  # BLS's
# A period label of each kind, finest first ("2000M1", "2000Q1", "2000": the IMF's IFS header; "2000-Q1")
PERIOD_FORMS = {
    "monthly": re.compile(r"\d{4}\s*[-_ ]?M(?:0?[1-9]|1[0-2])", re.I),
    "quarterly": re.compile(r"\d{4}\s*[-_ ]?Q[1-4]", re.I),
    "yearly": re.compile(r"\d{4}"),
}


def period_kind(label: object) -> str | None:
    """The kind of period a label writes (PERIOD_FORMS), None for any other label."""
    text = str(label).strip()
    return next((kind for kind, form in PERIOD_FORMS.items() if form.fullmatch(text)), None)


def mixed_periods(
    source: str, table: pd.DataFrame, date_col: str | None, rows: list[int]
) -> DataError | None:
    """The refusal of a file mixing kinds of period where its two `rows` (positions of `table`) clash in time:
    a column of frequency codes (SDMX's freq: A, Q) differs there, or their labels are of two kinds (a year,
    a quarter), so a long table's id column (the advice for repeated times) does not help; else None."""
    if max(rows) >= len(table):  # rows of another table (M3's series per row)
        return None
    texts = [name for name in table.columns if not pd.api.types.is_numeric_dtype(table[name])]
    coded = next((name for name in texts if _frequency_codes(table[name])), None)
    codes = [] if coded is None else table[coded].iloc[rows].astype(str).str.strip().str.upper().tolist()
    codes = codes if len(set(codes)) == 2 else []
    labels = table[date_col].iloc[rows].astype(str).str.strip() if date_col in table.columns else None
    written = [] if labels is None else [period_kind(label) for label in labels]
    kinds = [FREQUENCIES[code] for code in codes] if codes else written or [None]
    if None in kinds or kinds[0] == kinds[1]:
        return None
    said = [line(row) + ("" if labels is None else f" {labels.iloc[k]!r}") for k, row in enumerate(rows)]
    how = (f"the rows whose column {coded!r} is {codes[0]} or those whose {coded!r} is {codes[1]}" if codes
           else f"the {kinds[0]} rows or the {kinds[1]} ones")  # fmt: skip
    return DataError(f"{source}: the file mixes {kinds[0]} and {kinds[1]} periods in column {date_col!r} "
                     f"({' and '.join(said)}); expected periods of one kind: keep either {how}")  # fmt: skip


def _frequency_codes(column: pd.Series) -> bool:
    """Whether a column holds frequency codes alone, several of them (SDMX's freq of a file of two kinds)."""
    codes = column.dropna().astype(str).str.strip().str.upper()
    return len(codes) > 0 and bool(codes.isin(list(FREQUENCIES)).all()) and codes.nunique() > 1


def find_period_codes(raw: pd.DataFrame) -> tuple[str, str] | None:
    """(year column, period column) where columns named year and period hold whole years and period codes."""
    by_name = {str(column).strip().lower(): column for column in raw.columns}
    year, period = by_name.get("year"), by_name.get("period")
    if year is None or period is None:
        return None
    years = pd.to_numeric(raw[year], errors="coerce")
    codes = raw[period].astype(str).str.strip().str.upper()
    if years.isna().any() or (years % 1 != 0).any() or not codes.str.fullmatch(_CODE).all():
        return None
    return year, period


def period_labels(raw: pd.DataFrame, year: str, period: str) -> tuple[pd.DataFrame, str]:
    """`raw` with the period column as labels of the finest kind present ("2020M01", "2020Q1", "2020-H1",
    "2020"), the year column and the other kinds' rows dropped, and a note saying so."""
    found = raw[period].astype(str).str.strip().str.upper().str.extract(_CODE)
    kinds, numbers = found["kind"], found["number"].astype(int)
    averages = numbers == kinds.map(_AVERAGE).fillna(0).astype(int)
    kind = next(kind for kind in _KINDS if ((kinds == kind) & ~averages).any())
    keep = ((kinds == kind) & ~averages).to_numpy()
    years = pd.to_numeric(raw[year]).astype(int)[keep].astype(str)
    number = numbers[keep]
    labels = {
        "M": years + "M" + number.map("{:02d}".format),
        "Q": years + "Q" + number.astype(str),
        "S": years + "-H" + number.astype(str),
        "A": years,
    }[kind]
    table = raw[keep].drop(columns=[year]).assign(**{period: labels.to_numpy()})
    dropped = int((~keep).sum())
    skipped = f"; dropped {dropped} row(s) of averages or other periods" if dropped else ""
    return table, f"read columns {year!r} and {period!r} as {_KINDS[kind]} period codes (BLS){skipped}"


# A year's row among its months or quarters: CBS's "2018JJ00", "2017 Total", "Total 2017", "2017 Average";
# among timestamps ("2020-01", ...) only one a word says is a year's ("Total 2020")
_WORDED_YEAR = r"\d{4}\s*(?:total|annual|average|year)|(?:total|annual|average|year)\s*\d{4}"
_YEAR_ROW = rf"\d{{4}}(?:JJ00)?|{_WORDED_YEAR}"
# A quarter's row among months: "2019 Q1", "2019Q1", "2019-Q1", "Q1 2019", CBS's "2019 1e kwartaal" (h111
# F4), maybe with a total's word; its quarter's number
_QUARTER_ROW = (r"(?:\d{4}\s*[-_ ]?\s*Q[1-4]|Q[1-4]\s*[-_ ]?\s*\d{4}|\d{4}\s+[1-4]e?\s*kwartaal)"
                r"(?:\s*total)?|total\s*Q[1-4]\s*\d{4}")  # fmt: skip
_QUARTER_NUMBER = r"(?i)(?:Q|(?<=\d{4})\s+)([1-4])"  # spaces as `_QUARTER_ROW` takes them
# A year's summary beside its months or quarters (BLS: "Annual", "HALF1", "HALF2"; GISTEMP: "J-D", "D-N" and
# the seasons "DJF" ... "SON"; the Swiss FSO and Destatis: "Jahresdurchschnitt"), as a column or a row's label
SUMMARY_LABELS = re.compile(r"annual|ann|total|average|avg|mean|half ?[12]|h[12]|j-d|d-n|djf|mam|jja|son|"
                            r"jahres\w*|durchschnitt|moyenne.*|promedio|media|gemiddelde",
                            re.IGNORECASE)  # fmt: skip
SUBTOTAL = "subtotal"  # `year_totals`' kind of quarters' and years' rows among months
_FIRST_ROWS = 40  # the labels a subtotal shows among (after 12 months and a quarter's at most)


def years_among_periods(raw: pd.DataFrame) -> tuple[pd.DataFrame, str] | None:
    """`raw` without the rows of whole years among the month or quarter labels, or the timestamps, of its
    first column that is not numbers (CBS open data's Perioden follows an ID) (a year's total or average, not
    a further step), and a note naming them; None for other tables."""
    labels = next((raw[name] for name in raw.columns if not pd.api.types.is_numeric_dtype(raw[name])), None)
    totals = None if labels is None else year_totals(labels)
    if totals is None:
        return None
    kind, rows, shown = totals
    what, why = totals_said(totals)
    among = "monthly" if kind == SUBTOTAL else kind
    said = []
    apart = _uncovered(labels, rows) if kind != SUBTOTAL else np.zeros(len(rows), bool)
    if (~apart).any():
        shown = shown if apart.all() or not apart.any() else _shown(labels.iloc[rows[~apart]].astype(str))
        said.append(f"dropped {int((~apart).sum())} row(s) of {what} ({shown}) among the {among} rows: {why}")
    if apart.any():  # years before the quarters began (h80): no total of any of them
        said.append(f"dropped {int(apart.sum())} row(s) of whole years "
                    f"({_shown(labels.iloc[rows[apart]].astype(str))}) that no {kind} row falls in: a yearly "
                    f"series beside the {kind} rows, which are read")  # fmt: skip
    return raw.drop(index=raw.index[rows]).reset_index(drop=True), "; ".join(said)


def part_summaries(raw: pd.DataFrame, parts: list[str] | None) -> tuple[pd.DataFrame, str] | None:
    """`raw` without the rows whose month or quarter column (of the date `parts`, else those its names say)
    names a year's summary, GENESIS' "2019;Jahresdurchschnitt" after December (refused as "not a month
    number", h100 F12), and a note naming them; None for other tables."""
    parts = parts or find_date_parts(list(raw.columns))
    if not parts or len(parts) < 2 or any(part not in raw.columns for part in parts[:2]):  # said later
        return None
    cells = datum_texts(raw[parts[1]].astype(str).str.strip())
    rows = np.flatnonzero([bool(SUMMARY_LABELS.fullmatch(cell)) for cell in cells])
    if not rows.size or rows.size * 2 > len(raw):
        return None
    shown = _shown(raw[parts[0]].iloc[rows].astype(str) + " " + cells.iloc[rows])
    note = f"dropped {rows.size} row(s) of a year's summary ({shown}) in column {parts[1]!r}: no further step"
    return raw.drop(index=raw.index[rows]).reset_index(drop=True), note


def _uncovered(labels: pd.Series, rows: np.ndarray) -> np.ndarray:
    """Which of the year rows `rows` of `labels` name a year that none of the other labels falls in (a
    yearly series 2000-2009 above quarters from 2010 was dropped as "a year's total"); none where the
    others write no four-digit year ('Jan 22')."""
    years = labels.astype(str).str.extract(r"(?<!\d)(\d{4})(?!\d)")[0]
    others = years.drop(index=labels.index[rows])
    if others.isna().any():
        return np.zeros(len(rows), bool)
    return ~years.iloc[rows].isin(set(others)).to_numpy()


def totals_said(totals: tuple[str, np.ndarray, str]) -> tuple[str, str]:
    """What the labels `year_totals` found are, and why they are left out: rows of a file or columns of a
    wide header alike (a header of months with its quarters was said to hold "whole years")."""
    if totals[0] == SUBTOTAL:
        return "quarters or years", "subtotals of the months, no further steps"
    return "whole years", "a year's total"


def year_totals(labels: pd.Series) -> tuple[str, np.ndarray, str] | None:
    """(the kind of the others, the positions of the whole years among `labels` of months, quarters or
    timestamps, a few of them said): a year's total or average, no further step; else the quarters' and years'
    subtotals among months (`_subtotals_among_months`); None where there are none, or labels that are no
    years misfit."""
    sample = labels.iloc[:: max(1, len(labels) // 500)]  # a million timestamps are not matched 17 ways
    if period_label_misfits(sample) is not None:
        misfits, year_row = period_label_misfits(labels), _YEAR_ROW
    else:
        misfits, year_row = _worded_among_dates(labels), _WORDED_YEAR
    if misfits is None or misfits[0] not in ("month", "quarter", "dated"):
        return _subtotals_among_months(labels)
    kind, rows = misfits
    years = labels.iloc[rows].astype(str).str.strip().str.rstrip("*")
    if not years.str.fullmatch(year_row, case=False).all():
        return _subtotals_among_months(labels)
    return kind, rows, _shown(years)


def _shown(labels: pd.Series) -> str:
    return ", ".join(map(repr, labels[:3])) + (", ..." if len(labels) > 3 else "")


def _subtotals_among_months(labels: pd.Series) -> tuple[str, np.ndarray, str] | None:
    """("subtotal", the positions of the quarters' and years' rows among `labels` of months, a few said):
    sums or averages of the months beside them (an office's monthly table with its quarters and years), no
    steps of a series; None unless the other labels are months each after the one before, in most rows, and
    each of those rows is next to one of its months (not a block of years, then quarters, then months)."""
    subtotal = re.compile(f"{_QUARTER_ROW}|{_YEAR_ROW}", re.IGNORECASE)
    head = datum_texts(labels.iloc[:_FIRST_ROWS].astype(str).str.strip()).str.rstrip("*")
    if not head.str.fullmatch(subtotal).any():  # one a year at least: a million timestamps are not matched
        return None
    texts = datum_texts(labels.astype(str).str.strip()).str.rstrip("*")  # a long cell is no label
    coarser = texts.str.fullmatch(subtotal).to_numpy(bool)
    if 2 * coarser.sum() >= len(texts):  # a file of quarters or years is one
        return None
    finer = texts[~coarser]
    try:
        dates = parse_period_labels(finer)
        dates = pd.DatetimeIndex(parse_timestamps(finer)) if dates is None else dates
    except ValueError:  # mixed time zones: no months
        return None
    months = dates.year * 12 + dates.month
    if dates.hasnans or not (dates.is_month_start | dates.is_month_end).all():
        return None
    if not (np.diff(months) >= 1).all() or np.median(np.diff(months)) != 1:
        return None
    rows = np.flatnonzero(coarser)
    years = pd.to_numeric(texts.iloc[rows].str.extract(r"(\d{4})")[0]).to_numpy()
    quarters = pd.to_numeric(texts.iloc[rows].str.extract(_QUARTER_NUMBER)[0]).to_numpy()  # NaN: a year
    after = np.searchsorted(np.flatnonzero(~coarser), rows)  # the month after each row, one before it above
    beside = np.zeros(len(rows), bool)
    for month in (np.maximum(after - 1, 0), np.minimum(after, len(dates) - 1)):
        quarter = dates.quarter.to_numpy()[month]
        beside |= (dates.year.to_numpy()[month] == years) & (np.isnan(quarters) | (quarter == quarters))
    if not beside.all():
        return None
    return SUBTOTAL, rows, _shown(labels.iloc[rows].astype(str))


def _worded_among_dates(labels: pd.Series) -> tuple[str, np.ndarray] | None:
    """("dated", positions) of the labels with a year's word ("Total 2020") among timestamps, a sample of the
    others parsed; None where there are none or the others are no timestamps."""
    texts = labels.astype(str)
    worded = texts.str.contains(r"(?i)total|annual|average|year").to_numpy()  # one cheap pass
    if not worded.any() or 2 * worded.sum() > len(texts):
        return None
    rest = texts[~worded]
    sample = rest.iloc[np.unique(np.linspace(0, len(rest) - 1, num=20).astype(int))]
    return None if pd.DatetimeIndex(parse_timestamps(sample)).hasnans else ("dated", np.flatnonzero(worded))

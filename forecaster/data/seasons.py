"""Tables of one row per year and one column per season, or the other way round (NOAA's, BLS's, RKI's
SurvStat), read as the one series they print (`year_by_season`, `season_by_year`): a row per period with a
DATE_COLUMN, as `wide` gives the reader its wide tables.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from forecaster.data.cells import Tally, cell_texts, number_cells
from forecaster.data.dateparts import part_named
from forecaster.data.labeltexts import MONTH_NUMBERS
from forecaster.data.numberdates import year_numbers
from forecaster.data.periods import SUMMARY_LABELS
from forecaster.data.wide import DATE_COLUMN, period_numbers
from forecaster.errors import DataError


def _season_of(name: str) -> tuple[str, int] | None:
    """("month", 1-12) for a month's name (JAN, January, Januar, janvier: MONTH_NUMBERS), ("quarter", 1-4)
    for Q1 / QTR1, else None."""
    text = str(name).strip().upper()
    if (number := MONTH_NUMBERS.get(text.lower().rstrip("."))) is not None:
        return "month", number
    found = re.fullmatch(r"(?:Q|QTR ?)([1-4])", text)
    return ("quarter", int(found.group(1))) if found else None


def year_by_season(
    source: str, raw: pd.DataFrame, decimal: str | None, tally: Tally
) -> tuple[pd.DataFrame, str] | None:
    """A table of one row per year and one column per month (JAN ... DEC) or quarter (Q1 ... Q4), as NOAA,
    BLS and many statistics offices print one series, as that series: one row per month or quarter with a
    DATE_COLUMN, and a note; its summary columns (Annual, HALF1, NASA POWER's ANN) dropped. Text columns name
    the series of their rows (NASA POWER's PARAMETER: T2M, PRECTOTCORR). None for other tables."""
    columns = [str(name) for name in raw.columns]
    seasons = {name: _season_of(name) for name in columns}
    kinds = {season[0] for season in seasons.values() if season is not None}
    if len(kinds) != 1:  # names first: no column's values are read for other tables
        return None
    years = [name for name in columns if seasons[name] is None and year_numbers(raw[name]) is not None]
    if len(years) != 1:
        return None
    kind = kinds.pop()
    order = [name for name in columns if seasons[name] is not None]
    rest = [name for name in columns if name not in (*order, years[0])]
    count = 12 if kind == "month" else 4
    if [seasons[name][1] for name in order] != list(range(1, count + 1)):
        return None
    naming = [name for name in rest if not SUMMARY_LABELS.fullmatch(name.strip())]
    if any(number_cells(cell_texts(raw[name])).any() for name in naming):
        return None
    series = {}
    for key, rows in raw.groupby(naming, sort=False) if naming else [((), raw)]:
        first = year_numbers(rows[years[0]])
        labels = [str(year) for year in first.year]
        values = np.column_stack([period_numbers(source, rows, name, labels, decimal, tally)
                                  for name in order])  # fmt: skip
        if not (first.year == first.year[0] + np.arange(len(rows))).all():
            raise DataError(f"{source}: the years of column {years[0]!r} do not follow one another; expected "
                            f"one row per year of a year-by-{kind} table")  # fmt: skip
        name = " / ".join(map(str, key if isinstance(key, tuple) else (key,))) or "value"
        dates = pd.date_range(first[0], periods=values.size, freq="MS" if kind == "month" else "QS")
        series[name] = pd.Series(values.ravel(), index=dates.strftime("%Y-%m-%d"))
    frame = pd.DataFrame(series).sort_index().rename_axis(DATE_COLUMN).reset_index()
    summaries = [name for name in rest if name not in naming]
    dropped = f", dropping the summary column(s) {', '.join(map(repr, summaries))}" if summaries else ""
    named = ", ".join(map(repr, series))
    what = f"one {kind}ly series {named}: {len(raw)} years"
    if len(series) > 1:
        what = f"{len(series)} {kind}ly series {named} (by {', '.join(map(repr, naming))}): {len(raw)} rows"
    note = f"read the year-by-{kind} table as {what} ({years[0]!r}) x {count} {kind} columns{dropped}"
    return frame, note


def season_by_year(
    source: str, raw: pd.DataFrame, decimal: str | None, tally: Tally
) -> tuple[pd.DataFrame, str] | None:
    """A table of one row per week (1 ... 53) or month (1 ... 12, or their names) under a name saying so, and
    one column per year, as RKI's SurvStat prints a weekly count (`Meldewoche`, 2019, 2020, ...), as that one
    series: a row per week (ISO weeks: Mondays) or month with a DATE_COLUMN, and a note. None for other
    tables."""
    first, years = str(raw.columns[0]), [str(name) for name in raw.columns[1:]]
    numbers = [int(year) if year.isdecimal() and 1000 <= int(year) <= 2999 else None for year in years]
    if len(years) < 2 or None in numbers or np.any(np.diff(numbers) != 1) or len(raw) < 4:
        return None
    labels = raw[first].astype(str).str.strip()
    named = labels.str.lower().str.rstrip(".").map(MONTH_NUMBERS)
    seasons = named if named.notna().all() else pd.to_numeric(labels, errors="coerce")
    months = named.notna().all() or part_named(first) == "month"
    kind = "week" if part_named(first) == "week" else "month" if months and len(raw) <= 12 else None
    # (a first column of ages or ranks 1, 2, ... under another name: no seasons)
    if kind is None or seasons.isna().any() or list(seasons) != list(range(1, len(raw) + 1)) or len(raw) > 53:
        return None
    values = np.column_stack([period_numbers(source, raw, name, list(labels), decimal, tally)
                              for name in years])  # fmt: skip
    dates, kept = [], []
    for column, year in enumerate(numbers):
        for row, season in enumerate(seasons.astype(int)):
            try:
                day = (pd.Timestamp.fromisocalendar(year, season, 1) if kind == "week"
                       else pd.Timestamp(year, season, 1))  # fmt: skip
            except ValueError:  # a week 53 of a year that has none
                if np.isfinite(values[row, column]):
                    held = f"{values[row, column]:g}"
                    raise DataError(f"{source}: year {year} has no ISO week {season}, yet column {year!r} "
                                    f"holds {held} in it; expected weeks of the year") from None
                continue
            dates.append(day.strftime("%Y-%m-%d"))
            kept.append(values[row, column])
    frame = pd.DataFrame({DATE_COLUMN: dates, "value": kept})
    note = (f"read the {kind}-by-year table as one {kind}ly series 'value': {len(raw)} {kind}s ({first!r}) x "
            f"{len(years)} year columns ({years[0]} ... {years[-1]})")  # fmt: skip
    return frame, note

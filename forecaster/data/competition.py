"""Series written one per row with where each starts, as the M3 competition's files are (Series, N, NF,
Category, Starting Year, Starting Month or Starting Quarter, then the values 1, 2, ... of each, the shorter
ones ending in empty cells): read as a long table of id, date and value, each series from its own start."""

from __future__ import annotations

import numpy as np
import pandas as pd

from forecaster.data.columns import is_text, steps_across

COMPETITION_DATE = "date"  # the long table's date column, which a bundle names to read such files again
_YEAR = "starting year"
_PARTS = {"starting month": (12, "MS", 1), "starting quarter": (4, "QS-JAN", 3)}  # count, step, months in one


def rows_of_series(raw: pd.DataFrame, notes: list[str]) -> tuple[pd.DataFrame, str] | None:
    """(the long table, its id column) of a table of a series per row beside its starting year (and month or
    quarter), where every start is a real one and the ids are text, each once; else None."""
    named = {str(name).strip().lower(): name for name in raw.columns}
    steps = steps_across(raw)
    if _YEAR not in named or not steps:
        return None
    part = next((key for key in _PARTS if key in named), None)
    count, step, months = _PARTS[part] if part else (1, "YS-JAN", 12)
    years = pd.to_numeric(raw[named[_YEAR]], errors="coerce").to_numpy(np.float64)
    parts = np.ones(len(raw)) if part is None else pd.to_numeric(raw[named[part]], errors="coerce").to_numpy()
    whole = np.isfinite(years).all() and np.isfinite(parts).all() and (years == np.round(years)).all()
    if not whole or not (np.isin(parts, np.arange(1, count + 1)) & (years >= 1000) & (years <= 2999)).all():
        return None
    ids = next((name for name in raw.columns if name not in steps and is_text(raw[name])
                and raw[name].notna().all() and raw[name].is_unique), None)  # fmt: skip
    if ids is None:
        return None
    values = raw[steps].to_numpy(np.float64)
    lengths = np.array([_length(row) for row in values])
    kept = np.arange(values.shape[1]) < lengths[:, None]  # each row's values before its empty cells
    dates = [pd.date_range(pd.Timestamp(year, (first - 1) * months + 1, 1), periods=length, freq=step)
             for year, first, length in zip(years.astype(int), parts.astype(int), lengths, strict=True)]
    long = pd.DataFrame({ids: np.repeat(raw[ids].to_numpy(), lengths),  # one frame, not one per series
                         COMPETITION_DATE: pd.DatetimeIndex(np.concatenate(dates)), "value": values[kept]})
    starts = "starting year" + (f" and {part.split()[1]}" if part else "")
    notes.append(f"read {len(raw)} series written one per row, each from its {starts}, as a long table of "
                 f"{ids!r}, {COMPETITION_DATE!r} and 'value' (columns {steps[0]!r} ... {steps[-1]!r})")
    return long, ids


def _length(row: np.ndarray) -> int:
    """The values before the empty cells that end a shorter series."""
    present = np.flatnonzero(~np.isnan(row))
    return int(present[-1]) + 1 if present.size else 0


def starts_in_first_rows(raw: pd.DataFrame) -> bool:
    """Whether each column opens with its length, starting year and starting period (1-12) above its values,
    as the Tourism competition's files do: rows that --no-date would read as the series' first values."""
    if len(raw) < 4 or not all(pd.api.types.is_numeric_dtype(raw[name]) for name in raw.columns):
        return False
    values = raw.to_numpy(np.float64)
    lengths, years, periods = values[0], values[1], values[2]
    counted = np.array([_length(column) for column in values[3:].T])
    whole = np.isfinite(values[:3]).all() and (values[:3] == np.round(values[:3])).all()
    return bool(whole and (lengths == counted).all() and ((years >= 1000) & (years <= 2999)).all()
                and ((periods >= 1) & (periods <= 12)).all())  # fmt: skip

"""Missing cells of a read table: named with their file lines, or filled when the user asks to."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from forecaster.errors import DataError

SHOWN = 5


def line(position: int) -> int:
    """File line of a data row (the header is line 1)."""
    return int(position) + 2


def lines(positions: np.ndarray) -> str:
    shown = ", ".join(str(line(p)) for p in positions[:SHOWN])
    return shown + (", ..." if len(positions) > SHOWN else "")


def fill_missing_cells(
    path: Path, frame: pd.DataFrame, fill_missing: str | None, notes: list[str], *, spans: bool = False
) -> pd.DataFrame:
    """Missing cells: an error naming them, or filled by `fill_missing`. With `spans` (independent series)
    each column may start late and end early: only cells inside its first-to-last value count."""
    finite = np.isfinite(frame.to_numpy())
    if spans:
        empty = [str(frame.columns[j]) for j in np.flatnonzero(~finite.any(axis=0))]
        if empty:
            raise DataError(f"{path}: series {', '.join(map(repr, empty))} have no values at all")
        rows = np.arange(len(frame))[:, None]
        inside = (rows >= finite.argmax(axis=0)) & (rows <= len(frame) - 1 - finite[::-1].argmax(axis=0))
        missing = ~finite & inside
        if missing.any() and fill_missing is not None:
            filled = fill_missing_cells(path, frame.where(inside, 0.0), fill_missing, notes)
            return filled.where(inside, np.nan)
    else:
        missing = ~finite
    if not missing.any():
        return frame
    per_column = missing.sum(axis=0)
    if fill_missing is None:
        described = "; ".join(
            f"column {frame.columns[j]!r} at line(s) {lines(np.flatnonzero(missing[:, j]))}"
            for j in np.flatnonzero(per_column)[:3]
        )
        raise DataError(
            f"{path}: {int(per_column.sum())} missing or non-finite value(s): {described}; "
            "expected a number in every cell (or pass fill_missing='ffill' or 'interpolate' / --fill-missing)"
        )
    empty = [str(frame.columns[j]) for j in np.flatnonzero(per_column == len(frame))]
    if empty:
        raise DataError(
            f"{path}: column(s) {', '.join(map(repr, empty))} have no values at all; cannot fill them"
        )
    frame = frame.replace([np.inf, -np.inf], np.nan)
    if fill_missing == "ffill":
        frame = frame.ffill().bfill()
    else:
        frame = frame.interpolate(method="linear", limit_direction="both")
    notes.append(f"filled {int(per_column.sum())} missing cell(s) by {fill_missing}")
    return frame

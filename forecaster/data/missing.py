"""Missing cells of a read table: named with their file lines, or filled when the user asks to; and values
too large to train on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from forecaster.errors import DataError

SHOWN = 5
# The largest magnitude training takes: its square still fits float32, the precision of the model and its
# squared errors. Larger values overflow the scaler's variance or the standardized float32 windows into
# inf/NaN, which would surface only when the trained model is saved.
MAX_TRAINING_MAGNITUDE = float(np.sqrt(np.finfo(np.float32).max))


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


def check_magnitudes(path: Path | str, frame: pd.DataFrame) -> None:
    """Refuse, before any training, a value whose square overflows float32, naming its column and line."""
    values = frame.to_numpy(dtype=np.float64)
    large = np.argwhere(np.abs(values) > MAX_TRAINING_MAGNITUDE)
    if large.size:
        row, column = large[0]
        when = f" ({frame.index[row]})" if isinstance(frame.index, pd.DatetimeIndex) else ""
        name = str(frame.columns[column])
        raise DataError(
            f"{path}: line {line(row)}{when}: value {values[row, column]:g} in column {name!r} is too large "
            f"to train on: its square overflows float32; expected |value| <= {MAX_TRAINING_MAGNITUDE:.3g} "
            "(rescale the column, e.g. to thousands of its unit)"
        )

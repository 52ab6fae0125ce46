"""The benchmark record: results.csv, one row per finished cell, appended and synced as each cell ends.

Reading never writes, so a summary or a dry run can read the file while a grid appends to it; a last line
cut off mid-write (a killed run) is repaired before the next append, and that cell simply runs again.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from forecaster.atomic import write_atomically
from forecaster.errors import DataError

RESULT_COLUMNS = (
    "dataset", "horizon", "model", "repeat", "seed", "mse", "mae", "train_seconds", "epochs", "parameters",
    "windows", "device", "val_mse", "mse_step1", "val_blocks", "coverage_80", "coverage_95",
    "interval_score_80", "interval_score_95", "members", "earlier_validation",
)
# Columns added after the first record: older files lack them, and their rows read them as missing.
# val_blocks: the validation MSE by blocks of `horizon` windows (JSON), which choices need for their error;
# coverage_* / interval_score_*: the test-split coverage and interval score (standardized) of the bundle's
# calibrated 80% and 95% intervals (forecaster models only); members: what an auto row kept, as JSON
# {candidate: weight} (one candidate with weight 1, or an ensemble's members); earlier_validation: a
# candidate's validation MSE and block means on the earlier period, where the split's is short (JSON).
INTERVAL_COLUMNS = ("coverage_80", "coverage_95", "interval_score_80", "interval_score_95")
ADDED_COLUMNS = ("val_mse", "mse_step1", "val_blocks", *INTERVAL_COLUMNS, "members", "earlier_validation")
OPTIONAL_COLUMNS = (*INTERVAL_COLUMNS, "members", "earlier_validation")
RESULTS_FILE = "results.csv"


def repair_tail(path: Path) -> None:
    """Drop a last line cut off mid-write (no trailing newline) before appending: that cell runs again."""
    data = path.read_bytes() if path.is_file() else b""
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


def read_rows(path: Path, columns: Sequence[str]) -> pd.DataFrame:
    """The complete rows of a CSV record (an empty frame of `columns` if none).

    A last line still being written (no trailing newline) is left out and left alone: reading never writes,
    so a summary or a dry run can read the file while a grid appends to it.
    """
    data = path.read_bytes() if path.is_file() else b""
    complete = data[: data.rfind(b"\n") + 1]
    if not complete:
        return pd.DataFrame(columns=list(columns))
    return pd.read_csv(io.BytesIO(complete))


def read_results(path: Path) -> pd.DataFrame:
    """The complete rows of results.csv with RESULT_COLUMNS (empty if none); DataError for a foreign file."""
    frame = read_rows(path, RESULT_COLUMNS)
    for column in ADDED_COLUMNS:
        if column not in frame.columns:
            frame[column] = float("nan")
    missing = [column for column in RESULT_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(
            f"{path}: not a benchmark results file of this version; missing column(s) {', '.join(missing)} "
            f"(expected {', '.join(RESULT_COLUMNS)}; older files lack device: add it or use another --out)"
        )
    return frame


def upgrade_results(path: Path) -> None:
    """Rewrite an older results.csv with today's columns (the added ones empty), atomically, before the
    first row of today's columns is appended to it."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    header = path.open().readline().strip().split(",")
    if header == list(RESULT_COLUMNS):
        return
    frame = read_results(path)[list(RESULT_COLUMNS)]
    write_atomically(path, lambda staged: frame.to_csv(staged, index=False))


def append_result(path: Path, row: dict[str, Any], columns: Sequence[str] = RESULT_COLUMNS) -> None:
    """Append one row of `columns` (header first if the file is new) and push it to disk before the next
    cell starts; interval columns and members a row has no value for stay empty."""
    new = not path.is_file() or path.stat().st_size == 0
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        if new:
            writer.writeheader()
        writer.writerow({column: row[column] if column not in OPTIONAL_COLUMNS else row.get(column, "")
                         for column in columns})
        handle.flush()
        os.fsync(handle.fileno())

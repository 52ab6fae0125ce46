"""Oracles the benchmark tests share: a naive forecast's scores in numpy, and markdown tables as cells."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def numpy_naive_scores(csv_path: Path, input_size: int, horizon: int) -> tuple[float, float, int]:
    """Oracle: standardize the raw CSV with train-row statistics (7:1:2) and repeat each window's last value.

    Errors are summed one horizon step at a time, so ETTm2 at h=720 needs no (windows, h, C) array.
    """
    values = pd.read_csv(csv_path).drop(columns="date").to_numpy(float)
    n_rows = len(values)
    n_train, n_test = int(0.7 * n_rows), int(0.2 * n_rows)
    train = values[:n_train]
    test = ((values - train.mean(axis=0)) / train.std(axis=0))[n_rows - n_test - input_size:]
    windows = len(test) - input_size - horizon + 1
    last = test[input_size - 1:input_size - 1 + windows]
    squared = absolute = 0.0
    for step in range(horizon):
        errors = test[input_size + step:input_size + step + windows] - last
        squared += float(np.sum(errors**2))
        absolute += float(np.sum(np.abs(errors)))
    count = windows * horizon * values.shape[1]
    return squared / count, absolute / count, windows


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every markdown table in `text` as rows of stripped cells (the |---| rule dropped)."""
    tables: list[list[list[str]]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append([cell.strip().strip("*") for cell in line.strip("|").split("|")])
        previous = line
    return tables

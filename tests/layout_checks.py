"""Writing a file as a publisher lays it out and reading it back with the reader's one note line or its one
line of error: the checks the layout tests share."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from forecaster.data import DataQualityWarning, read_csv
from forecaster.errors import DataError


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


def read_noted(path: Path, **options) -> tuple[pd.DataFrame, str, str]:
    """(frame, frequency, the one note line) of a file read with a DataQualityWarning."""
    with pytest.warns(DataQualityWarning) as caught:
        series = read_csv(path, **options)
    assert len(caught) == 1
    return series.frame, series.freq, str(caught[0].message)


def one_line_error(path: Path, **options) -> str:
    with pytest.raises(DataError) as caught:
        read_csv(path, **options)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert caught.value.__cause__ is None
    return message

"""Turn a request (JSON body or CSV upload) into a checked (input_size, C) history for Bundle.predict.

Everything a model needs from its input is checked here, before batching, so that a bad request
fails alone with a 4xx naming its field, and never poisons a batch it would have shared.
"""

from __future__ import annotations

import re
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from forecaster.artifacts import Bundle
from forecaster.data import read_csv
from forecaster.data.timeindex import future_timestamps
from forecaster.errors import DataError
from service.errors import ApiError
from service.schemas import ForecastRequest

_DATE_ERRORS = (ValueError, TypeError, OverflowError, pd.errors.OutOfBoundsDatetime)


@dataclass(frozen=True)
class PreparedInput:
    """A validated request: the history the model sees and how to label its answer."""

    history: np.ndarray
    horizon: int
    timestamps: list[str] | list[int]


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(422, message, field=field)


RowError = Callable[[int, str], ApiError]  # (row of the series, message) -> the error naming that row


def _parse_timestamps(raw: list[str], field: str) -> pd.DatetimeIndex:
    """ISO 8601 strings -> DatetimeIndex; the error names the first string that does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return pd.DatetimeIndex(pd.to_datetime(raw, format="ISO8601"))
    except _DATE_ERRORS:
        pass
    for position, text in enumerate(raw):
        try:
            pd.to_datetime([text], format="ISO8601")
        except _DATE_ERRORS:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise _invalid(
                f"{field}[{position}]",
                f"{shown!r} is not an ISO 8601 timestamp (expected e.g. '2018-06-26 17:00:00')",
            ) from None
    raise _invalid(field, "timestamps mix time zones or formats; expected one ISO 8601 format and time zone")


def _check_time_grid(index: pd.DatetimeIndex, freq: str | None, row_error: RowError) -> None:
    """Strictly increasing and, when the model has a frequency, exactly on its grid."""
    steps = np.diff(index.asi8)
    backwards = np.flatnonzero(steps <= 0)
    if backwards.size:
        row = int(backwards[0]) + 1
        raise row_error(
            row, f"{index[row]} does not come after {index[row - 1]}; expected strictly increasing timestamps"
        )
    if freq is None:
        return
    offset = to_offset(freq)
    if not offset.is_on_offset(index[0]):
        raise row_error(0, f"{index[0]} is not on the model's {freq!r} time grid")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
            expected = index[:-1] + offset
    except _DATE_ERRORS:
        raise row_error(0, "timestamps run past the range pandas can represent") from None
    wrong = np.flatnonzero(index[1:] != expected)
    if wrong.size:
        row = int(wrong[0]) + 1
        raise row_error(
            row, f"{index[row]} does not follow the model's frequency {freq!r} (expected {expected[row - 1]})"
        )


def _prepare(
    bundle: Bundle,
    index: pd.Index,
    values: np.ndarray,
    horizon: int | None,
    *,
    values_field: str,
    horizon_field: str,
    row_error: RowError,
    max_rows: int,
) -> PreparedInput:
    data = bundle.data
    rows = values.shape[0]
    if rows < data.input_size:
        raise _invalid(
            values_field, f"expected at least {data.input_size} rows (the model's input_size), got {rows}"
        )
    if rows > max_rows:
        raise _invalid(values_field, f"expected at most {max_rows} rows per series, got {rows}")
    steps = data.horizon if horizon is None else horizon
    if not 1 <= steps <= data.horizon:
        raise _invalid(
            horizon_field, f"expected 1 <= horizon <= {data.horizon} (the model's horizon), got {steps}"
        )
    if isinstance(index, pd.DatetimeIndex):
        _check_time_grid(index, data.freq, row_error)
    try:
        future = future_timestamps(index, data.freq, steps)
    except DataError as error:
        raise row_error(rows - 1, str(error)) from None
    except _DATE_ERRORS:
        raise row_error(rows - 1, "the forecast would run past the dates pandas can represent") from None
    labels = (
        [stamp.isoformat() for stamp in future] if isinstance(future, pd.DatetimeIndex) else future.tolist()
    )
    history = np.ascontiguousarray(values[-data.input_size :], dtype=np.float64)
    return PreparedInput(history=history, horizon=steps, timestamps=labels)


def prepare_json(bundle: Bundle, request: ForecastRequest, *, prefix: str, max_rows: int) -> PreparedInput:
    """Check a JSON request (columns, lengths, timestamps, horizon) against the model it is sent to."""
    data = bundle.data
    values_field = f"{prefix}values"
    missing = [column for column in data.columns if column not in request.values]
    unknown = [column for column in request.values if column not in data.columns]
    if missing or unknown:
        problems = ([f"missing {missing}"] if missing else []) + ([f"unknown {unknown}"] if unknown else [])
        raise _invalid(
            values_field, f"expected exactly the model's columns {data.columns}; {', '.join(problems)}"
        )
    first = data.columns[0]
    rows = len(request.values[first])
    for column in data.columns[1:]:
        if len(request.values[column]) != rows:
            raise _invalid(
                f"{values_field}.{column}",
                f"has {len(request.values[column])} values; expected {rows} like {values_field}.{first}",
            )
    timestamps_field = f"{prefix}timestamps"
    if data.date_col is None:
        if request.timestamps is not None:
            raise _invalid(timestamps_field, "this model was trained without dates; leave timestamps out")
        index: pd.Index = pd.RangeIndex(rows)
    else:
        if request.timestamps is None:
            raise _invalid(timestamps_field, f"required: one ISO 8601 timestamp per row ({rows} rows)")
        if len(request.timestamps) != rows:
            raise _invalid(
                timestamps_field, f"has {len(request.timestamps)} entries; expected {rows}, one per row"
            )
        index = _parse_timestamps(request.timestamps, timestamps_field) if rows else pd.DatetimeIndex([])
    values = np.array([request.values[column] for column in data.columns], dtype=np.float64).reshape(
        len(data.columns), rows
    )
    return _prepare(
        bundle,
        index,
        values.T,
        request.horizon,
        values_field=values_field,
        horizon_field=f"{prefix}horizon",
        row_error=lambda row, message: _invalid(f"{timestamps_field}[{row}]", message),
        max_rows=max_rows,
    )


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def prepare_csv(
    bundle: Bundle, content: bytes, filename: str | None, horizon: int | None, *, max_rows: int
) -> PreparedInput:
    """Check an uploaded CSV with the same reader `forecaster predict` uses (forecaster.data.read_csv)."""
    data = bundle.data
    shown = _SAFE_NAME.sub("_", Path(filename or "").name)[:100].lstrip(".") or "upload"
    if not shown.endswith(".csv"):
        shown += ".csv"  # plain CSV only: no compression guessed from the client's file name
    with tempfile.TemporaryDirectory(prefix="forecaster-upload-") as folder:
        path = Path(folder) / shown
        path.write_bytes(content)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                series = read_csv(
                    path, date_col=data.date_col, targets=data.columns, no_date=data.date_col is None
                )
        except DataError as error:
            raise _invalid("file", str(error).replace(str(path), shown)) from None
    return _prepare(
        bundle,
        series.index,
        series.values,
        horizon,
        values_field="file",
        horizon_field="horizon",
        row_error=lambda row, message: _invalid("file", f"line {row + 2}: {message}"),
        max_rows=max_rows,
    )

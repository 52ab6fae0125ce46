"""Recent rows checked against a bundle before anything forecasts from them: columns, length, finite values,
timestamps on the model's time grid, the horizon asked and the future covariates' rows (`check_history`).
`prediction` forecasts from what it returns; the service checks a request's rows here before batching."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from forecaster.artifacts import Bundle, DataConfig
from forecaster.data import check_frequency, future_timestamps
from forecaster.data.calendar import calendar_features
from forecaster.data.missing import when
from forecaster.errors import DataError
from forecaster.history import unusable

_DATE_ERRORS = (ValueError, TypeError, OverflowError, pd.errors.OutOfBoundsDatetime)


class HistoryError(DataError):
    """Recent rows (or asked levels) a bundle cannot forecast from; `part` is "values", "timestamps",
    "horizon" or "level", `row` the 0-based row of the history at fault (None when no single row is) and
    `column` its column's name where one value is, so each caller can name the place its own way (a file
    line, a JSON field)."""

    def __init__(self, message: str, *, part: str, row: int | None = None, column: str | None = None) -> None:
        super().__init__(message)
        self.part, self.row, self.column = part, row, column


@dataclass(frozen=True)
class PreparedHistory:
    """Checked recent rows: the (input_size, C) float64 window the model sees and what its answer covers."""

    window: np.ndarray
    horizon: int
    future: pd.Index

    @property
    def labels(self) -> list[str] | list[int]:
        """The answer's timestamps as ISO 8601 strings, or step numbers for models trained without dates."""
        if isinstance(self.future, pd.DatetimeIndex):
            return [stamp.isoformat() for stamp in self.future]
        return [int(step) for step in self.future]


_PERIODS = (pd.offsets.MonthBegin, pd.offsets.MonthEnd, pd.offsets.QuarterBegin, pd.offsets.QuarterEnd,
            pd.offsets.YearBegin, pd.offsets.YearEnd)  # fmt: skip
_BEGINS = (pd.offsets.MonthBegin, pd.offsets.QuarterBegin, pd.offsets.YearBegin)


def _on_model_periods(index: pd.DatetimeIndex, freq: str | None) -> pd.DatetimeIndex:
    """Consecutive months, quarters or years of a model of such periods written on other days of them
    (month ends, as pandas writes its 'ME' periods, sent to a model of month starts: refused, while the 15th
    was read as months): on the model's days, which the forecast continues; any other dates as they are."""
    offset = None if freq is None or not len(index) else check_frequency(freq)
    if not isinstance(offset, _PERIODS) or offset.is_on_offset(index[0]):
        return index
    roll = offset.rollback if isinstance(offset, _BEGINS) else offset.rollforward
    snapped = pd.DatetimeIndex([roll(stamp) for stamp in index.normalize()], name=index.name)
    if len(snapped) > 1 and not (snapped[1:] == snapped[:-1] + offset).all():
        return index  # not one date per period: refused by `_check_time_grid`, naming the row
    return snapped


def _check_time_grid(index: pd.DatetimeIndex, freq: str | None) -> None:
    """Strictly increasing and, when the model has a frequency, exactly on its grid."""
    backwards = np.flatnonzero(np.diff(index.asi8) <= 0)
    if backwards.size:
        row = int(backwards[0]) + 1
        raise HistoryError(f"{index[row]} does not come after {index[row - 1]}; expected strictly increasing "
                           "timestamps", part="timestamps", row=row)  # fmt: skip
    if freq is None:
        return
    offset = check_frequency(freq)
    if not offset.is_on_offset(index[0]):
        raise HistoryError(f"{index[0]} is not on the model's {freq!r} time grid", part="timestamps", row=0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
            expected = index[:-1] + offset
    except _DATE_ERRORS:
        past = "timestamps run past the range pandas can represent"
        raise HistoryError(past, part="timestamps", row=0) from None
    wrong = np.flatnonzero(index[1:] != expected)
    if wrong.size:
        row = int(wrong[0]) + 1
        raise HistoryError(f"{index[row]} does not follow the model's frequency {freq!r} (expected "
                           f"{expected[row - 1]})", part="timestamps", row=row)  # fmt: skip


def check_history(
    bundle: Bundle,
    index: pd.Index,
    values: np.ndarray,
    *,
    horizon: int | None = None,
    max_rows: int | None = None,
    ahead: np.ndarray | pd.DataFrame | None = None,
) -> PreparedHistory:
    """Check recent rows (oldest first, the bundle's input columns in its order: targets, then any
    covariates), the horizon asked for, and `ahead`, the horizon's rows of the given future covariates
    (positional, or a table on their timestamps) for a model that has them.

    Only the last input_size rows are forecast from; the timestamps of every row given must be strictly
    increasing on the model's time grid. HistoryError names the part and row at fault.
    """
    data = bundle.data
    values = np.asarray(values, dtype=np.float64)
    rows = values.shape[0]
    columns = data.input_columns
    if values.ndim != 2 or values.shape[1] != len(columns):
        raise HistoryError(
            f"expected the model's {len(columns)} columns ({', '.join(columns)}), "
            f"got an array of shape {values.shape}",
            part="values",
        )
    if rows < data.input_size:
        raise HistoryError(
            f"expected at least {data.input_size} rows (the model's input_size), got {rows}", part="values"
        )
    if max_rows is not None and rows > max_rows:
        raise HistoryError(f"expected at most {max_rows} rows per series, got {rows}", part="values")
    steps = data.horizon if horizon is None else horizon
    if not 1 <= steps <= data.horizon:
        raise HistoryError(
            f"expected 1 <= horizon <= {data.horizon} (the model's horizon), got {steps}", part="horizon"
        )
    window = np.ascontiguousarray(values[-data.input_size :])
    if bad := unusable(window, "column", columns):
        raise HistoryError(bad[2], part="values", row=rows - data.input_size + bad[0], column=columns[bad[1]])
    below = np.argwhere((window <= 0) & bundle.scaler.logged)
    if below.size:
        row, column = below[0]
        raise HistoryError(
            f"{window[row, column]:g} in column {columns[column]!r}, which the model forecasts in logarithms "
            "(trained on positive values: --transform); expected values above 0",
            part="values",
            row=int(rows - data.input_size + row),
            column=columns[column],
        )
    if isinstance(index, pd.DatetimeIndex):
        index = _on_model_periods(index, data.freq)
        _check_time_grid(index, data.freq)
    try:  # the model's whole horizon where its covariates fill it (calendar rows), else the steps asked for
        future = future_timestamps(index, data.freq, data.horizon if data.future_columns else steps)
    except DataError as error:
        raise HistoryError(str(error), part="timestamps", row=rows - 1) from None
    except _DATE_ERRORS:
        raise HistoryError(
            "the forecast would run past the dates pandas can represent", part="timestamps", row=rows - 1
        ) from None
    if data.future_columns:
        window = np.vstack([window, _rows_ahead(data, future, steps, ahead)])
    return PreparedHistory(window=window, horizon=steps, future=future[:steps])


def _rows_ahead(data: DataConfig, future: pd.Index, steps: int, ahead: np.ndarray | pd.DataFrame | None):
    """The model's horizon rows: NaN but for the future covariates, the given ones (at least `steps` rows;
    later rows, whose forecasts are not asked for, repeat the last) and the calendar's."""
    given, parts = list(data.future_covariates or []), []
    if given:
        needed = f"the values of its future covariates {given} for the {steps} step(s) ahead"
        if ahead is None:
            raise HistoryError(f"this model needs {needed} (--future-csv, future_df, 'future')",
                               part="future")  # fmt: skip
        if isinstance(ahead, pd.DataFrame):
            _check_same_zone(future, ahead.index)
            missing = future[:steps].difference(ahead.index)
            if len(missing):
                raise HistoryError(f"the future rows lack {missing[0]}; expected {needed}", part="future")
            ahead = ahead.loc[future[:steps], given].to_numpy(dtype=np.float64)
        ahead = np.asarray(ahead, dtype=np.float64)
        if ahead.ndim != 2 or ahead.shape[1] != len(given) or len(ahead) < steps:
            raise HistoryError(f"expected {needed}, got an array of shape {ahead.shape}", part="future")
        if bad := unusable(ahead[:steps], "future covariate", given):  # (h75 F4)
            step = "" if isinstance(future, pd.DatetimeIndex) else "step "  # v2's rows have no dates
            raise HistoryError(f"at {step}{when(future[bad[0]])}: {bad[2]}", part="future")
        parts.append(np.vstack([ahead[:steps], np.repeat(ahead[steps - 1 : steps], data.horizon - steps, 0)]))
    if data.calendar:
        try:
            parts.append(calendar_features(future, data.freq).to_numpy())
        except DataError as error:
            raise HistoryError(str(error), part="timestamps") from None
    rows = np.full((data.horizon, len(data.input_columns)), np.nan)
    rows[:, -len(data.future_columns) :] = np.column_stack(parts)
    return rows


def _check_same_zone(future: pd.Index, given: pd.Index) -> None:
    """Future rows in UTC beside a history without a zone (or the reverse) hold none of its steps: say so,
    not that they lack the first step."""
    zones = [getattr(index, "tz", None) for index in (given, future)]
    if isinstance(given, pd.DatetimeIndex) and (zones[0] is None) != (zones[1] is None):
        given_zone, history_zone = (f"in {zone}" if zone else "without a time zone" for zone in zones)
        raise HistoryError(f"the future rows' timestamps are {given_zone}, the history's {history_zone}; "
                           "expected both in one zone or both without", part="future")  # fmt: skip

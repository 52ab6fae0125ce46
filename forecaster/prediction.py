"""Forecasts from a bundle and recent rows: the one path of `forecaster predict`, the service and the API.

`history` reads recent rows the bundle's way; `check_history` checks them against the bundle (columns,
length, finite values, timestamps on the model's time grid, horizon) and returns the window the model sees
with the timestamps of its answer; `predict_windows` is the numerics (train scaler, model, inverse scaler);
`forecast` chains them for a whole series; `Inference` (from `forecaster.inference`) runs the forward pass on
a device, for the service. Nothing here imports Lightning, so predicting starts fast.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from forecaster.artifacts import Bundle, DataConfig
from forecaster.calibration import uncalibrated
from forecaster.data import TimeSeries, check_frequency, future_timestamps
from forecaster.data.calendar import calendar_features
from forecaster.data.dateparts import parts_index
from forecaster.data.labels import write_labels
from forecaster.data.longforecast import melt_forecast
from forecaster.data.missing import some, when
from forecaster.data.panels import DEFAULT_TIME_COL
from forecaster.data.scaling import Scaler, original_units, value_floor
from forecaster.data.series import INDEPENDENT, say_note
from forecaster.data.timeindex import sub_daily
from forecaster.errors import ConfigError, DataError
from forecaster.history import far_from_training, left_out_in_training, of_series, unusable, window_notes
from forecaster.inference import Inference, eager_outputs
from forecaster.models import fits_nothing

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


def forecast_name(bundle: Bundle) -> str:
    """The name of the forecast column in long output (Nixtla's convention: the model's, as trained)."""
    return str(bundle.training.get("model", bundle.model_name))


def shaped(bundle: Bundle, table: pd.DataFrame, names: dict[str, Any] | None = None) -> pd.DataFrame:
    """A wide forecast table in the shape of the training data: long rows `unique_id, ds, <model>, ...` for
    a long-format model, else the table itself; its series named as the rows sent named them (`given_names`:
    a neuralforecast user filters `unique_id == 1`)."""
    if (data := bundle.data).id_col is not None:
        present = [name for name in data.columns if name in table]
        time_col = data.date_col or DEFAULT_TIME_COL
        table = melt_forecast(table, present, data.id_col, time_col, forecast_name(bundle), data.target_col)
    if not names:
        return table
    if data.id_col is not None and data.id_col in table.columns:
        return table.assign(**{data.id_col: table[data.id_col].map(lambda name: names.get(name, name))})
    return table.rename(columns=lambda name: names.get(name, name))


def given_names(df: Any, id_col: str | None) -> dict[str, Any]:
    """A frame's series names that are not text (ids 1, 2; columns 0, 1) by the text they are read as, as
    Python's own (numpy's int64 is no JSON number)."""
    if not isinstance(df, pd.DataFrame):  # a TimeSeries' names are text already
        return {}
    names = df.columns
    if id_col is not None and id_col in names:
        names = df[id_col].unique()
    return {str(name): getattr(name, "item", lambda name=name: name)() for name in names
            if not isinstance(name, str)}  # fmt: skip


def dated_as_history(table: pd.DataFrame, series: TimeSeries) -> pd.DataFrame:
    """A forecast table whose dates are written as `series`' file or frame wrote its own ("1988Q1", "1971",
    or in columns YEAR, WEEK); a frame's timestamps, periods and numbers keep their types (`text_times`)."""
    if not isinstance(table.index, pd.DatetimeIndex):
        return table
    if series.date_parts is not None:
        return table.set_axis(parts_index(table.index, series.date_parts, series.options.weeks), axis=0)
    return table.set_axis(write_labels(table.index, series.date_style), axis=0)


def csv_times(series: TimeSeries) -> dict[str, str]:
    """`to_csv`'s date format for a forecast of `series` where its steps are within a day: pandas writes
    timestamps all at midnight as dates ("2021-01-09" for an hourly model's one step), as a day's are."""
    naive = isinstance(series.index, pd.DatetimeIndex) and series.index.tz is None
    within_a_day = series.freq is not None and sub_daily(series.freq)
    return {"date_format": "%Y-%m-%d %H:%M:%S"} if naive and within_a_day else {}


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


def predict_outputs(bundle: Bundle, windows: np.ndarray, inference: Inference | None = None) -> np.ndarray:
    """(B, input_size [+ horizon], C_in) windows in original units (`check_history`'s) -> the model's
    standardized (B, horizon, C, 1 + 2K) outputs: point forecast, then its quantile head's bounds, if any
    (`models.forecast_outputs`), run by `inference` (default: eagerly on the CPU). A model that fits nothing
    runs eagerly in float64: a few float32 roundings of a seasonal drift wrote 772 as 771.9998 (h38)."""
    data = bundle.data
    expected = (data.input_size + (data.horizon if data.future_columns else 0), len(data.input_columns))
    if windows.ndim != 3 or windows.shape[1:] != expected:
        raise ValueError(
            f"expected windows of shape (batch, {expected[0]}, {expected[1]}), got {windows.shape}"
        )
    # C order whatever the caller's layout (pandas hands out Fortran-ordered arrays): oneDNN rounds
    # differently by memory layout, and the CLI, the API and the service must answer bit-identically.
    exact = fits_nothing(bundle.model)
    dtype = np.float64 if exact else np.float32
    with np.errstate(over="ignore"):  # overflow shows as a non-finite forecast, which check_forecast names
        scaled = np.ascontiguousarray(bundle.scaler.transform(windows), dtype=dtype)
    ahead = scaled[:, data.input_size :]  # horizon rows: only the future covariates are known
    ahead[np.isnan(ahead)] = 0.0
    tensor = torch.from_numpy(scaled)
    outputs = eager_outputs(bundle.model, tensor) if inference is None or exact else inference(tensor)
    return outputs.numpy()


def predict_windows(bundle: Bundle, windows: np.ndarray, inference: Inference | None = None) -> np.ndarray:
    """(B, input_size, C) windows in original units -> (B, horizon, C) float64 forecasts in original units."""
    with np.errstate(over="ignore"):
        outputs = predict_outputs(bundle, windows, inference)[..., 0]
        return _original(bundle, outputs, windows)


def _original(bundle: Bundle, standardized: np.ndarray, windows: np.ndarray) -> np.ndarray:
    """A bundle's standardized forecasts of (..., rows, C_in) `windows` in original units, none below their
    floor (`value_floor`), to the digits of the arithmetic they ran in (`predict_outputs`)."""
    targets = windows[..., : bundle.data.input_size, : len(bundle.data.columns)]
    floor = value_floor(targets, bundle.data.columns, (bundle.training or {}).get("nonnegative"))
    return original_units(_target_scaler(bundle), standardized, floor, fits_nothing(bundle.model))


def _target_scaler(bundle: Bundle) -> Scaler:
    return bundle.scaler.first(len(bundle.data.columns))


def check_forecast(forecast: np.ndarray) -> np.ndarray:
    """The forecast, unless float32 arithmetic overflowed on values far beyond those seen in training."""
    if not np.isfinite(forecast).all():
        raise HistoryError(
            "the forecast is not finite: the values are too large for the model's float32 arithmetic; "
            "expected values of the magnitude seen in training",
            part="values",
        )
    return forecast


def check_interval_levels(bundle: Bundle, levels: Sequence[int] | None) -> list[int]:
    """Asked interval levels, sorted, if the bundle can answer them; HistoryError (part "level") naming
    why not (no calibration, a level its quantile head lacks, too few calibration windows)."""
    if not levels:
        return []
    if bundle.calibration is None:
        raise HistoryError(uncalibrated(bundle.name), part="level")
    try:
        return bundle.calibration.check(levels)
    except ConfigError as error:
        raise HistoryError(str(error), part="level") from None


def interval_columns(
    bundle: Bundle, outputs: np.ndarray, levels: Sequence[int], window: np.ndarray
) -> dict[str, np.ndarray]:
    """The forecast's columns in Nixtla's naming, in original units: `<col>`, then `<col>-lo-<level>` and
    `<col>-hi-<level>` for each level, from the model's standardized (steps, C, 1 + 2K) outputs
    (`predict_outputs`) of `window` (`check_history`'s) and the bundle's calibration."""
    scaler = _target_scaler(bundle)
    levels = check_interval_levels(bundle, levels)
    steady = scaler.steady if bundle.data.channels == INDEPENDENT else None  # margins pooled in std units
    intervals = bundle.calibration.intervals(levels, outputs, steady) if levels else {}
    bounds = [bound for lo_hi in intervals.values() for bound in lo_hi]
    # converted at once: bound by bound, 256 histories at 99 levels held the service's event loop 5 s
    point, *converted = check_forecast(_original(bundle, np.stack([outputs[..., 0], *bounds]), window))
    original = {level: (converted[2 * k], converted[2 * k + 1]) for k, level in enumerate(intervals)}
    columns = {}
    for index, name in enumerate(bundle.data.columns):
        columns[name] = point[:, index]
        for level, (lo, hi) in original.items():
            for bound, values in (("lo", lo), ("hi", hi)):
                label = f"{name}-{bound}-{level}"
                if label in bundle.data.columns:  # a series named like another's bound would overwrite it
                    raise HistoryError(
                        f"the {level}% interval of column {name!r} would be named {label!r}, the name of "
                        "another column of the model; ask for other levels, or rename the columns and train "
                        "again",
                        part="level",
                    )
                columns[label] = values[:, index]
    return columns


def each_on_its_own(bundle: Bundle, series: TimeSeries) -> bool:
    """Whether `series` are some of a model's independent series, or end apart: then each is forecast
    after its own last value, not in one window of them all."""
    recent, whole = series.values[-bundle.data.input_size :], series.columns == bundle.data.columns
    return bundle.data.channels == INDEPENDENT and not (whole and np.isfinite(recent).all())


def forecast(
    bundle: Bundle,
    series: TimeSeries,
    *,
    horizon: int | None = None,
    levels: Sequence[int] = (),
    future: TimeSeries | None = None,
) -> pd.DataFrame:
    """The next `horizon` steps (default: the model's) after the last row of `series`, as a table, with
    conformal intervals at `levels` (e.g. 80, 95) in Nixtla's column naming; `future` holds the horizon's
    rows of a model's given future covariates (`read_future`). Independent series that end
    together are forecast in one pass, as the service does; otherwise each after its own last value (the
    table is empty where a series has no forecast).

    DataError names the file and line at fault, counting the header as line 1.
    """
    for note in left_out_in_training(bundle):
        say_note(f"{series.source}: {note}", stacklevel=2)
    if not each_on_its_own(bundle, series):
        return _forecast(bundle, series, horizon, levels, future)
    tables, ended = [], []
    for name in series.columns:  # a model shared by independent series: those given, each its own span
        values = series.frame[name].to_numpy()
        valid = np.flatnonzero(np.isfinite(values))
        first, last = (valid[0], valid[-1]) if valid.size else (0, len(values) - 1)
        ended += [f"{name!r} ({when(series.frame.index[last])})"] if last < len(values) - 1 else []
        view = of_series(bundle, [name])
        own = dataclasses.replace(series, frame=series.frame.iloc[first : last + 1][[name]])
        tables.append(_forecast(view, own, horizon, levels, None, first_row=first, named=name))
    if ended:  # a discontinued series (Freddie Mac's 5/1 ARM): its forecast lies before the others'
        say_note(f"{series.source}: note: series {some(ended)} end(s) before the last row "
                 f"({when(series.frame.index[-1])}): forecast after its own last value", stacklevel=2)
    return pd.concat(tables, axis=1, sort=True)


def _forecast(
    bundle: Bundle,
    series: TimeSeries,
    horizon: int | None,
    levels: Sequence[int],
    future: TimeSeries | None,
    first_row: int = 0,
    named: str | None = None,
) -> pd.DataFrame:
    """`series` forecast (`named`: one of a model's independent series, which a refusal names)."""
    try:
        ahead = None if future is None else future.frame
        prepared = check_history(bundle, series.index, series.inputs, horizon=horizon, ahead=ahead)
        outputs = predict_outputs(bundle, prepared.window[None])[0, : prepared.horizon]
        columns = interval_columns(bundle, outputs, levels, prepared.window)
    except HistoryError as error:
        if error.part in ("level", "horizon"):  # the request is at fault, not the file (h72)
            raise ConfigError(str(error)) from None
        where = f"line {first_row + error.row + 2}: " if error.row is not None else ""
        source = future.source if error.part == "future" and future is not None else series.source
        which = f"series {named!r}: " if named is not None else ""
        raise DataError(f"{source}: {which}{where}{error}") from None
    for note in [*window_notes(bundle, series), far_from_training(bundle, prepared.window)]:
        if note:
            say_note(f"{series.source}: {note}", stacklevel=3)
    if future is not None and (far := far_from_training(bundle, prepared.window, prepared.future)):
        say_note(f"{future.source}: {far}", stacklevel=3)  # its own file's (h75 F4)
    return forecast_table(bundle, series, prepared, columns)


def forecast_table(
    bundle: Bundle, series: TimeSeries, prepared: PreparedHistory, columns: dict[str, np.ndarray]
) -> pd.DataFrame:
    """The forecast's columns on the answer's timestamps, named as the history's time column."""
    dated = isinstance(prepared.future, pd.DatetimeIndex)
    index = prepared.future.rename(series.date_col or bundle.data.date_col or ("date" if dated else "step"))
    return pd.DataFrame(columns, index=index)

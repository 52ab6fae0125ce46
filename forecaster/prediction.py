"""Forecasts from a bundle and recent rows: the one path of `forecaster predict`, the service and the API.

`history` reads recent rows the bundle's way; `recent.check_history` checks them against the bundle and
returns the window the model sees with the timestamps of its answer; `predict_windows` is the numerics (train
scaler, model, inverse scaler); `forecast` chains them for a whole series; `Inference` (from
`forecaster.inference`) runs the forward pass on a device, for the service. Nothing here imports Lightning,
so predicting starts fast.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from forecaster.artifacts import Bundle
from forecaster.calibration import uncalibrated
from forecaster.data import TimeSeries
from forecaster.data.dateparts import parts_index
from forecaster.data.labels import write_labels
from forecaster.data.longforecast import melt_forecast
from forecaster.data.missing import line, some, when
from forecaster.data.panels import DEFAULT_TIME_COL
from forecaster.data.scaling import Scaler, original_units, value_floor
from forecaster.data.series import INDEPENDENT, say_note
from forecaster.data.timeindex import sub_daily
from forecaster.errors import ConfigError, DataError
from forecaster.history import (
    companion_model,
    far_from_training,
    forecast_series,
    held_by_companion,
    kept_model,
    left_out_in_training,
    of_series,
    window_notes,
)
from forecaster.inference import Inference, eager_outputs
from forecaster.models import fits_nothing
from forecaster.recent import HistoryError, PreparedHistory, check_history


def forecast_name(bundle: Bundle) -> str:
    """The name of the forecast column in long output (Nixtla's convention: the model's, as trained)."""
    return str(bundle.training.get("model", bundle.model_name))


def shaped(bundle: Bundle, table: pd.DataFrame, names: dict[str, Any] | None = None) -> pd.DataFrame:
    """A wide forecast table in the shape of the training data: long rows `unique_id, ds, <model>, ...` for
    a long-format model, else the table itself; its series named as the rows sent named them (`given_names`:
    a neuralforecast user filters `unique_id == 1`)."""
    if (data := bundle.data).id_col is not None:
        present = [name for name in forecast_series(bundle) if name in table]
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
    if held := held_by_companion(bundle, series.columns):
        return _with_companion(bundle, series, held, horizon, levels, future)
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


def _with_companion(
    bundle: Bundle,
    series: TimeSeries,
    held: list[str],
    horizon: int | None,
    levels: Sequence[int],
    future: TimeSeries | None,
) -> pd.DataFrame:
    """`held` forecast by the bundle's companion (`artifacts.COMPANION`), the other series by its model, each
    series' columns in the order the rows gave the series, with one note naming the companion's."""
    model = kept_model(bundle)
    scores = bundle.companion.training.get("selection")  # one where the run named it (or one applied)
    chosen = ", chosen on their validation windows" if isinstance(scores, dict) and len(scores) > 1 else ""
    say_note(f"{series.source}: note: {len(held)} series too short for {model}'s {bundle.data.input_size}-"
             f"step input are forecast by {companion_model(bundle)}{chosen}: {some(list(map(repr, held)))}",
             stacklevel=3)  # fmt: skip
    rest = [name for name in series.columns if name not in held]
    parts = [(bundle.companion, held, None)]
    if rest:
        parts.append((dataclasses.replace(bundle, companion=None), rest, future))
    groups: dict[str, list[str]] = {}
    tables = []
    for part, names, ahead in parts:
        tables.append(forecast(part, series.of_series(names), horizon=horizon, levels=levels, future=ahead))
        name = None
        for column in tables[-1].columns:  # a series' forecast, then its bounds
            name = column if column in names else name
            groups.setdefault(name, []).append(column)
    merged = pd.concat(tables, axis=1, sort=True)
    return merged[[column for name in series.columns for column in groups[name]]]


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
        where = f"{line(first_row + error.row)}: " if error.row is not None else ""  # a frame's "row 1"
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

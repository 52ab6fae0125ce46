"""Forecasting with a saved bundle from a CSV file: reading it the bundle's way, the forecast table, the plot.

Kept free of Lightning so that `forecaster predict` starts fast; the numbers come from `Bundle.predict`,
the same function the service calls.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from forecaster.artifacts import Bundle
from forecaster.data import TimeSeries, future_timestamps, read_csv
from forecaster.errors import DataError


def read_series_for_bundle(
    bundle: Bundle,
    path: str | Path,
    *,
    date_col: str | None = None,
    no_date: bool | None = None,
    fill_missing: str | None = None,
) -> TimeSeries:
    """Read a CSV with the bundle's columns (in the bundle's order); DataError names any missing column.

    The date column defaults to the one the bundle was trained with; `date_col`/`no_date` override it.
    """
    path = Path(path)
    if no_date is None:
        no_date = bundle.data.date_col is None and date_col is None
    if not no_date and date_col is None:
        date_col = bundle.data.date_col
    try:
        header = [
            str(column).strip() for column in pd.read_csv(path, nrows=0, encoding_errors="replace").columns
        ]
    except (OSError, ValueError, EOFError):
        header = None  # unreadable: read_csv below raises the precise DataError
    if header is not None:
        missing = [column for column in bundle.data.columns if column not in header]
        if missing:
            raise DataError(
                f"{path}: missing column(s) {', '.join(map(repr, missing))} that model {bundle.name!r} was "
                f"trained on; expected columns {', '.join(map(repr, bundle.data.columns))}, "
                f"the file has {', '.join(map(repr, header))}"
            )
        if date_col is not None and date_col not in header:
            raise DataError(
                f"{path}: date column {date_col!r} (the one model {bundle.name!r} was trained with) not "
                "found; name the file's date column with --date-col, or pass --no-date"
            )
    return read_csv(
        path, date_col=date_col, targets=bundle.data.columns, no_date=no_date, fill_missing=fill_missing
    )


def forecast_series(bundle: Bundle, series: TimeSeries) -> pd.DataFrame:
    """The `horizon` steps after the last row of `series`, on timestamps that continue its frequency."""
    if len(series) < bundle.data.input_size:
        raise DataError(
            f"{series.source}: {len(series)} rows, but model {bundle.name!r} needs at least "
            f"{bundle.data.input_size} rows of history (its input_size)"
        )
    forecast = bundle.predict(series.values)
    index = future_timestamps(series.index, series.freq or bundle.data.freq, bundle.data.horizon)
    index = index.rename(series.date_col or bundle.data.date_col or "step")
    return pd.DataFrame(forecast, index=index, columns=bundle.data.columns)


def plot_forecast(series: TimeSeries, forecast: pd.DataFrame, path: str | Path, history_rows: int) -> Path:
    """PNG with one panel per column: the last `history_rows` rows of history, then the forecast."""
    from matplotlib.figure import Figure

    history = series.frame.iloc[-history_rows:]
    columns = list(forecast.columns)
    figure = Figure(figsize=(10, 2.2 * len(columns)), layout="constrained")
    axes = figure.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    for axis, column in zip(axes, columns, strict=True):
        axis.plot(history.index, history[column], color="tab:blue", label="history")
        axis.plot(forecast.index, forecast[column], color="tab:orange", label="forecast")
        axis.axvline(history.index[-1], color="grey", linewidth=0.8, linestyle="--")
        axis.set_ylabel(column)
    axes[0].legend(loc="best")
    axes[0].set_title(f"{Path(series.source).name}: {len(forecast)}-step forecast")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    return path

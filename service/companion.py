"""A panel's companion (`artifacts.COMPANION`) on the routes that send numbers, not tables: its series, too
short for the model's windows, are read into a table of the series sent and forecast as the CSV route
forecasts one (`inputs.answered_apart`), each series by the model that holds it, outside the micro-batcher.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pandas as pd

from forecaster.artifacts import Bundle
from forecaster.data import TimeSeries
from forecaster.data.series import collected_notes
from forecaster.history import forecast_series
from service.errors import ApiError, listed
from service.inputs import answered_apart, json_rows
from service.registry import ServedModel
from service.schemas import ForecastRequest


def forecast_values(
    served: ServedModel, request: ForecastRequest, levels: list[int], *, prefix: str, max_rows: int
) -> dict[str, Any]:
    """A JSON request whose `values` send companion series (and any of the model's), answered in the JSON
    answer's fields with the numbers the CSV route answers for the same rows."""
    bundle, field = served.bundle, f"{prefix}values"
    every = forecast_series(bundle)
    known = set(every)  # as in `held_by_companion`: a request's names are as many as its bytes hold
    if unknown := [name for name in request.values if name not in known]:
        raise ApiError(422, f"unknown {listed(unknown)}; expected some of the series {every} (covariates "
                       "only with the model's own columns, without its companion's)",
                       field=field)  # fmt: skip
    if request.future is not None:
        raise ApiError(422, "the companion's series are forecast without future covariates; leave future "
                       "out", field=f"{prefix}future")  # fmt: skip
    sent = [name for name in every if name in request.values]
    with collected_notes() as read:  # dates of changing UTC offsets read in UTC, as the values route says
        index, values = json_rows(bundle, request, sent, prefix=prefix, max_rows=max_rows)
    series = TimeSeries(pd.DataFrame(values, index=index, columns=sent), bundle.data.freq, source=field)
    table, notes = answered_apart(bundle, series, request.horizon, levels, prefix=prefix, max_rows=max_rows)
    stamps = [stamp.isoformat() if isinstance(stamp, pd.Timestamp) else int(stamp) for stamp in table.index]
    forecast = {column: table[column].tolist() for column in table.columns}
    return {"model": served.name, "timestamps": stamps, "forecast": forecast, "notes": [*read, *notes]}


def forecast_windows(
    bundle: Bundle, windows: np.ndarray, held: list[str], levels: list[int], field: str,
    left: threading.Event, *, max_rows: int,
) -> list[tuple[dict[str, np.ndarray], list[str]]]:
    """The Open Inference Protocol's `short` tensor [B, input_size, S] of the companion's series (`held`),
    each history its rows as consecutive steps, answered as the CSV route answers them: its columns and
    notes; those after the client left (`left`, `routes.unless_client_leaves`) are not forecast."""
    answers = []
    for window in windows:
        if left.is_set():
            break
        series = TimeSeries(pd.DataFrame(window, columns=held), bundle.data.freq, source=field)
        table, notes = answered_apart(bundle, series, None, levels, prefix="", max_rows=max_rows)
        answers.append(({column: table[column].to_numpy() for column in table.columns}, notes))
    return answers

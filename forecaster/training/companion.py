"""A panel's companion: the series training leaves out, too short for the kept model's windows, that a
forecast fitting nothing can still split (naive: 1 + 2H rows) form a second panel. The forecasts that fit
nothing are planned on it (`planning.plan_baselines`), each series split over its own rows, and the one best
on those series' validation windows is kept, calibrated on their windows alone, as the bundle's
`artifacts.COMPANION` (`workflows.train_companion`). No one forecast serves them all: of h113's left-out
series, drift forecast the World Bank-style table's at 0.80x naive's MAE and the store panel's seasonal
SKUs' at 1.6x.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from forecaster.data import TimeSeries
from forecaster.data.splits import series_lengths, usable
from forecaster.models.baselines import NOTHING_TO_FIT
from forecaster.training.planning import Candidate, plan_baselines, split_for
from forecaster.training.settings import TrainSettings


def companion_panel(series: TimeSeries, settings: TrainSettings, short: list[str]) -> TimeSeries | None:
    """Those of the `short` series (left out of `series`) that hold naive's windows under the run's split,
    on the rows they span; None where none does (they stay left out, each named)."""
    split = split_for(series, settings)
    lengths = dict(zip(series.columns, series_lengths(series), strict=True))
    held = [name for name in short if usable(lengths[name], 1, settings.horizon, split, series.freq, False)]
    if not held:
        return None
    panel = series.of_series(held)
    spanned = np.flatnonzero(np.isfinite(panel.values).any(axis=1))
    return dataclasses.replace(panel, frame=panel.frame.iloc[spanned[0] : spanned[-1] + 1])


def companion_candidates(settings: TrainSettings, panel: TimeSeries) -> tuple[list[Candidate], str]:
    """The forecasts the companion chooses among (`plan_baselines`) and how train says it chose: the one the
    run names alone where it fits nothing and applies to them (statsforecast's and darts' named model
    forecasts every series it can: `--model drift` kept naive or Holt-Winters for these, h130 L1), else
    each that applies, naive unless one is clearly lower (`workflows.keep_best`)."""
    candidates = plan_baselines(settings, panel)
    if named := [candidate for candidate in candidates if candidate.model_name == settings.model_name]:
        return named, "the model asked for"
    asked = settings.model_name in NOTHING_TO_FIT
    unfit = f" ({settings.model_name}, asked for, does not fit them)" if asked else ""
    return candidates, ("chosen among the forecasts that fit nothing on their validation windows (naive "
                        f"unless one is clearly lower){unfit}")

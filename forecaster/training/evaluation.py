"""Scoring and recalibrating a saved bundle: `forecaster evaluate` and `forecaster calibrate`.

Nothing here imports Lightning (3-4 s of a 2-core CPU's start): a bundle's forecasts of a split's windows are
one pass of `scoring.evaluate_model`, the very code training's test scores come from, so both commands
print the same numbers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from forecaster.artifacts import COMPANION, Bundle
from forecaster.calibration import ALL_WINDOWS, Calibration, uncalibrated
from forecaster.data import TimeSeries, WindowDataset, check_frequency, season_length
from forecaster.data.config import DataConfig
from forecaster.data.series import INDEPENDENT
from forecaster.devices import accelerator_device
from forecaster.errors import BundleError, ConfigError, DataError
from forecaster.history import held_by_companion, of_series
from forecaster.training.growth import IN_PLACE
from forecaster.training.scoring import (
    baseline_metrics,
    calibrate,
    evaluate_model,
    interval_report,
    split_windows,
)


def evaluate_bundle(
    bundle: Bundle, series: TimeSeries, *, levels: Sequence[int] = (), accelerator: str = "auto"
) -> dict[str, Any]:
    """Score a loaded bundle on the test split of `series`, whose columns must be the bundle's, beside the
    naive and seasonal naive forecasts of the same windows (under their names); with `levels`, also its
    intervals' coverage, width and interval score per level (under "intervals"); the series its companion
    forecasts (`artifacts.COMPANION`) scored by it, under that name."""
    if held := held_by_companion(bundle, series.columns):
        options = {"levels": levels, "accelerator": accelerator}
        scored = evaluate_bundle(bundle.companion, series.of_series(held), **options)
        rest = [name for name in series.columns if name not in held]
        alone = dataclasses.replace(bundle, companion=None)
        own = evaluate_bundle(alone, series.of_series(rest), **options) if rest else {}
        return {**own, COMPANION: scored}
    check_series(bundle, series, some=True)
    if series.columns != bundle.data.columns:  # some of a model's independent series: scored alone
        bundle = of_series(bundle, series.columns)
    device = accelerator_device(accelerator)
    if levels and bundle.calibration is None:
        raise BundleError(uncalibrated(bundle.name))
    checked = bundle.calibration.check(levels) if levels else []
    data, scaler = bundle.data, bundle.scaler
    test = split_windows(data, scaler, series, "test")  # read once by every score below
    metrics = evaluate_model(bundle.model, test, data, scaler, device=device)
    metrics.update(baseline_metrics(test, data, scaler, reference_seasons(data)))
    if checked:
        metrics.update(interval_report(bundle.model, bundle.calibration, test, checked))
    return metrics


def reference_seasons(data: DataConfig) -> dict[str, int]:
    """The baselines every model is compared with, by the season they repeat: naive, and seasonal naive where
    the data's season fits the input."""
    season = season_length(data.freq, data.input_size)
    return {"naive": 1, **({} if season is None else {"seasonal_naive": season})}


def check_series(bundle: Bundle, series: TimeSeries, some: bool = False) -> None:
    """The bundle's columns (`some`: a model of independent series may be given some of its series) and,
    where both are known, its frequency: scores on hourly rows of a 15-minute model would be computed and
    mean nothing (prediction refuses them too)."""
    columns = bundle.data.columns
    subset = some and bundle.data.channels == INDEPENDENT and set(series.columns) <= set(columns)
    if series.columns != columns and not (subset and series.columns):
        raise DataError(
            f"{series.source}: columns {', '.join(map(repr, series.columns))} differ from the columns model "
            f"{bundle.name!r} was trained on ({', '.join(map(repr, bundle.data.columns))})"
        )
    trained = bundle.data.freq
    if trained and series.freq and check_frequency(series.freq) != check_frequency(trained):
        raise DataError(
            f"{series.source}: rows at frequency {series.freq!r}; model {bundle.name!r} was trained on "
            f"{trained!r} rows"
        )


def calibrate_bundle(bundle: Bundle, series: TimeSeries, on: str = "validation") -> Calibration:
    """New interval margins for a bundle from `series`: its validation split under the bundle's split
    (what training does), or every window of `series` (`on="all"`: recent rows, to recalibrate after the
    data moved); of the model's own series (its companion's are calibrated with it, `calibrate`)."""
    held = held_by_companion(bundle, series.columns)
    series = series.of_series([name for name in series.columns if name not in held])
    check_series(bundle, series)
    method = bundle.calibration.method if bundle.calibration else "conformal"
    data = bundle.data
    placed = next((bundle.training[key] for key in IN_PLACE if bundle.training.get(key)), None)
    if on == "validation" and placed:
        raise ConfigError(f"model {bundle.name!r} is {bundle.model_name} kept over {placed['model']}, which "
                          f"validation chose: validation holds no window of its input of {data.input_size} "
                          f"rows (training calibrated it with {placed['model']}'s); give --on all, every "
                          "window of the rows")  # fmt: skip
    if on == "validation":
        windows, where = split_windows(data, bundle.scaler, series, "val"), "the validation split of"
    elif data.channels == INDEPENDENT:
        raise ConfigError(
            "a model of independent series is recalibrated on its validation split (--on validation)"
        )
    elif len(series) >= data.input_size + data.horizon:
        scaled = bundle.scaler.transform(series.values).astype(np.float32)
        windows, where = WindowDataset(scaled, data.input_size, data.horizon), ALL_WINDOWS
    else:
        raise DataError(
            f"{series.source}: {len(series)} rows make no window; calibrating needs at least input_size + "
            f"horizon = {data.input_size + data.horizon} rows, better several times that"
        )
    return calibrate(bundle.model, {f"{where} {series.source}": windows}, method, data.freq)

"""The one scaler: per-channel standardization fit on the train rows only, stored as plain numbers.

The data module, bundles, metrics and the service all use `Scaler`: the mean and population std of each
channel (a constant one gets scale 1), applied in float64 as (x - mean) / scale, undone as x * scale + mean,
and written to a bundle as JSON numbers (no pickle). Not scikit-learn's StandardScaler: it takes any std
below 2.2e-15 for a constant channel, so a series in units of 1e-17 was left unscaled and forecast 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from forecaster.errors import BundleError, DataError


@dataclass(frozen=True, eq=False)
class Scaler:
    """Per-channel mean and scale (C,) float64 arrays."""

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, train_values: np.ndarray) -> Scaler:
        """Fit on the (N, C) train rows; DataError for an empty or non-finite array. A channel is constant
        where its std is 0 or below float64 rounding of its mean (1e10 + 1e-7 noise)."""
        values = np.asarray(train_values, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] < 1:
            raise DataError(
                f"the scaler needs a (rows, channels) array with at least one row, got shape {values.shape}"
            )
        if not np.isfinite(values).all():
            raise DataError("the scaler's train rows contain missing or non-finite values; expected numbers")
        size = np.abs(values).max(axis=0)  # squares of 1e-200 underflow to 0: the std is taken at unit size
        size = np.where(size > 0, size, 1.0)
        mean, std = values.mean(axis=0), (values / size).std(axis=0) * size
        constant = std <= 10 * np.finfo(np.float64).eps * np.abs(mean)
        return cls(mean, np.where(constant | (std == 0), 1.0, std))

    @property
    def n_channels(self) -> int:
        return int(self.mean.size)

    def first(self, count: int) -> Scaler:
        """The scaler of the first `count` channels (the targets, before any covariates)."""
        return Scaler(self.mean[:count], self.scale[:count])

    def channel(self, index: int) -> Scaler:
        """The scaler of one channel (an independent series)."""
        return Scaler(self.mean[index : index + 1], self.scale[index : index + 1])

    def transform(self, values: np.ndarray) -> np.ndarray:
        """(x - mean) / scale in float64, over the last axis (the channels)."""
        return (np.asarray(values, dtype=np.float64) - self.mean) / self.scale

    def inverse(self, values: np.ndarray) -> np.ndarray:
        """x * scale + mean in float64: back to original units."""
        return np.asarray(values, dtype=np.float64) * self.scale + self.mean

    def to_dict(self) -> dict[str, list[float]]:
        """JSON-ready: {"mean": [...], "scale": [...]}."""
        return {"mean": [float(v) for v in self.mean], "scale": [float(v) for v in self.scale]}

    @classmethod
    def from_dict(cls, state: Any, n_channels: int | None = None) -> Scaler:
        """Rebuild from `to_dict` output, checking every number (and the channel count when given)."""
        if not isinstance(state, Mapping) or set(state) != {"mean", "scale"}:
            raise DataError("the scaler must be an object with exactly the fields 'mean' and 'scale'")
        arrays = []
        for key in ("mean", "scale"):
            values = state[key]
            if not isinstance(values, list) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in values
            ):
                raise DataError(f"scaler {key!r} must be a list of numbers")
            arrays.append(np.asarray(values, dtype=np.float64))
        mean, scale = arrays
        expected = n_channels if n_channels is not None else mean.size
        if mean.size == 0 or mean.size != expected or scale.size != expected:
            raise DataError(
                f"scaler 'mean' and 'scale' must hold one number per column ({expected}), "
                f"got {mean.size} and {scale.size}"
            )
        if not (np.isfinite(mean).all() and np.isfinite(scale).all() and (scale > 0).all()):
            raise DataError("the scaler must hold finite means and positive finite scales")
        return cls(mean, scale)


def original_units(
    scaler: Scaler, standardized: np.ndarray, floor: np.ndarray | float = -np.inf
) -> np.ndarray:
    """(..., C) standardized forecasts in original units, rounded to the digits float32 arithmetic can give
    them: an ulp of the standardized value, times the column's scale (a naive forecast of 740 read
    740.0000069931347 unrounded); none below `floor` (per column, `value_floor`), and no -0."""
    values = scaler.inverse(standardized)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        noise = np.finfo(np.float32).eps * (np.abs(np.asarray(standardized, dtype=np.float64)) + 1)
        places = -np.ceil(np.log10(noise * np.abs(scaler.scale)))
        # beyond 300 places (a scale of 1e-300) 10 ** places overflows: such values are left as they are
        kept = ~np.isfinite(places) | (places > 300)
        places = np.where(kept, 0, places)
        power = 10.0 ** np.abs(places)
        rounded = np.where(places >= 0, np.round(values * power) / power, np.round(values / power) * power)
        rounded = np.where(kept, values, rounded)
    return np.maximum(rounded, floor) + 0.0


def value_floor(windows: np.ndarray, columns: Sequence[str] = (), nonnegative: Any = None) -> np.ndarray:
    """(..., 1, C) 0 for each column of the (..., L, C) rows a model reads that holds no negative value there
    and either counts (whole numbers) or is among `nonnegative`, the columns never below 0 in the file the
    model was trained on (a bundle's training record), else -inf: weekly cases of mean 0.6 were forecast -0,
    their 95% bounds -3; ten yearly sunspot numbers falling to 2.9 were forecast -1.7, -6.3, -10.9."""
    if not nonnegative_ok(nonnegative):
        raise BundleError("config.json: training 'nonnegative' must be a list of column names")
    values = np.asarray(windows, dtype=np.float64)
    whole = np.all(values == np.round(values), axis=-2, keepdims=True)
    known = np.isin(np.asarray(list(columns), dtype=object), nonnegative or []) if len(columns) else False
    above = np.all(values >= 0, axis=-2, keepdims=True)
    return np.where(above & (whole | known), 0.0, -np.inf)


def nonnegative_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of a training table with no value below 0 (missing cells aside), for `value_floor`."""
    return [str(name) for name in frame.columns if not (frame[name] < 0).any()]


def nonnegative_ok(value: Any) -> bool:
    """Whether a bundle's training record names its never-negative columns as `value_floor` reads them."""
    return value is None or (isinstance(value, list) and all(isinstance(name, str) for name in value))

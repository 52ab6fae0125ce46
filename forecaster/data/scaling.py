"""Per-channel standardization fit on the train rows only, persisted as plain numbers (no pickle)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.preprocessing import StandardScaler

from forecaster.errors import DataError


def fit_scaler(train_values: np.ndarray) -> StandardScaler:
    """A StandardScaler fit on the (N, C) train rows (population std; constant channels get scale 1)."""
    values = np.asarray(train_values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 1:
        raise DataError(
            f"the scaler needs a (rows, channels) array with at least one row, got shape {values.shape}"
        )
    if not np.isfinite(values).all():
        raise DataError("the scaler's train rows contain missing or non-finite values; expected numbers")
    return StandardScaler().fit(values)


def scaler_state(scaler: StandardScaler) -> dict[str, list[float]]:
    """The fitted scaler as JSON-ready numbers: {"mean": [...], "scale": [...]}."""
    return {"mean": [float(v) for v in scaler.mean_], "scale": [float(v) for v in scaler.scale_]}


def scaler_from_state(state: Mapping[str, Sequence[float]]) -> StandardScaler:
    """Rebuild a fitted StandardScaler from `scaler_state` output, validating every field."""
    missing = [key for key in ("mean", "scale") if key not in state]
    if missing:
        raise DataError(f"scaler state lacks field(s) {', '.join(missing)}; expected 'mean' and 'scale'")
    try:
        mean = np.asarray(state["mean"], dtype=np.float64)
        scale = np.asarray(state["scale"], dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("scaler state fields 'mean' and 'scale' must be lists of numbers") from None
    if mean.ndim != 1 or mean.shape != scale.shape or mean.size == 0:
        raise DataError(
            "scaler state 'mean' and 'scale' must be non-empty lists of one length, "
            f"got shapes {mean.shape} and {scale.shape}"
        )
    if not (np.isfinite(mean).all() and np.isfinite(scale).all() and (scale > 0).all()):
        raise DataError("scaler state must hold finite means and positive finite scales")
    scaler = StandardScaler()
    scaler.mean_ = mean
    scaler.scale_ = scale
    scaler.var_ = scale**2
    scaler.n_features_in_ = mean.size
    scaler.n_samples_seen_ = 0
    return scaler

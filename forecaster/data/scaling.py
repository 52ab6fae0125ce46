"""The one scaler: per-channel standardization fit on the train rows only, stored as plain numbers.

The data module, bundles, metrics and the service all use `Scaler`: the mean and population std of each
channel, applied in float64 as (x - mean) / scale, undone as x * scale + mean, and written to a bundle as JSON
numbers (no pickle). Not scikit-learn's StandardScaler: it takes any std below 2.2e-15 for a constant channel,
so a series in units of 1e-17 was left unscaled and forecast 0.

A channel constant in the train rows is scaled by the rows through validation (a product launched after the
train rows: its sales of 500 were 500 standard units); one constant there too gets scale 1 and is marked
`constant`: that scale measures no swings, so no interval is drawn from it.

A channel may be standardized in logarithms (`log`), where its swings grow with its level (`multiplicative`):
forecasts and interval bounds come back through exp, so intervals widen with the level they are at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from forecaster.data.missing import MAX_TRAINING_MAGNITUDE
from forecaster.errors import BundleError, DataError

MARKS = ("log", "constant")  # a scaler's optional per-channel true/false fields


@dataclass(frozen=True, eq=False)
class Scaler:
    """Per-channel mean and scale (C,) float64 arrays, which channels are in logarithms (`log`, (C,) bool;
    None: none), and which were constant in every row fit (`constant`, likewise)."""

    mean: np.ndarray
    scale: np.ndarray
    log: np.ndarray | None = None
    constant: np.ndarray | None = None

    def __post_init__(self) -> None:  # no channel marked is none: bundles without any are as before
        for field in MARKS:
            marks = getattr(self, field)
            object.__setattr__(self, field, None if marks is None or not np.any(marks) else
                               np.asarray(marks, dtype=bool))  # fmt: skip

    @classmethod
    def fit(cls, train_values: np.ndarray, log: np.ndarray | None = None,
            later_values: np.ndarray | None = None) -> Scaler:  # fmt: skip
        """Fit on the (N, C) train rows, the `log` channels in logarithms, a channel constant there on the
        `later_values` (the rows through validation) where they vary; DataError for an empty or non-finite
        array."""
        mean, std, constant = cls._moments(train_values, log)
        if constant.any() and later_values is not None:
            later_mean, later_std, still = cls._moments(later_values, log)
            mean, std = np.where(constant, later_mean, mean), np.where(constant, later_std, std)
            constant &= still
        return cls(mean, np.where(constant, 1.0, std), log, constant)

    @classmethod
    def fit_split(
        cls, values: np.ndarray, borders: Mapping[str, tuple[int, int]], log: np.ndarray | None = None
    ) -> Scaler:
        """The scaler of a split's (N, C) rows, fit on the train split's, or where it holds one row, which has
        no spread (a forecast that fits nothing needs no train window), on the rows before the test split's
        targets: 7 yearly rows at horizon 3 left 1, every scale was 1 and the 'standardized' scores were
        squared original units (h42). A channel constant in the train rows is fit on those too."""
        start, end = borders["train"]
        later = values[start : borders["val"][1]]
        return cls.fit(values[start:end], log, later) if end - start > 1 else cls.fit(later, log)

    @staticmethod
    def _moments(rows: np.ndarray, log: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean, population std and constancy of each channel of (N, C) rows: constant where the std is 0
        or below float64 rounding of the mean (1e10 + 1e-7 noise)."""
        values = np.asarray(rows, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] < 1:
            raise DataError(
                f"the scaler needs a (rows, channels) array with at least one row, got shape {values.shape}"
            )
        if not np.isfinite(values).all():
            raise DataError("the scaler's train rows contain missing or non-finite values; expected numbers")
        log = None if log is None or not np.any(log) else np.asarray(log, dtype=bool)  # to index the values
        if log is not None:
            if (values[:, log] <= 0).any():
                raise DataError("a column forecast in logarithms holds values at or below 0; expected "
                                "positive values (--transform none)")  # fmt: skip
            values = np.where(log, np.log(np.where(log, values, 1.0)), values)
        size = np.abs(values).max(axis=0)  # squares of 1e-200 underflow to 0: the std is taken at unit size
        size = np.where(size > 0, size, 1.0)
        mean, std = values.mean(axis=0), (values / size).std(axis=0) * size
        return mean, std, (std <= 10 * np.finfo(np.float64).eps * np.abs(mean)) | (std == 0)

    @property
    def n_channels(self) -> int:
        return int(self.mean.size)

    @property
    def logged(self) -> np.ndarray:
        """(C,) bool: the channels standardized in logarithms."""
        return np.zeros(self.mean.size, dtype=bool) if self.log is None else self.log

    @property
    def steady(self) -> np.ndarray:
        """(C,) bool: the channels constant in every row they were fit on (`constant`)."""
        return np.zeros(self.mean.size, dtype=bool) if self.constant is None else self.constant

    def first(self, count: int) -> Scaler:
        """The scaler of the first `count` channels (the targets, before any covariates)."""
        return self._part(slice(count))

    def channel(self, index: int) -> Scaler:
        """The scaler of one channel (an independent series)."""
        return self._part(slice(index, index + 1))

    def _part(self, part: slice) -> Scaler:
        return Scaler(self.mean[part], self.scale[part], self.logged[part], self.steady[part])

    def logged_columns(self, columns: Sequence[str]) -> list[str]:
        """Those of `columns` (the first channels, the targets) standardized in logarithms."""
        return [name for name, log in zip(columns, self.logged, strict=False) if log]

    @classmethod
    def joined(cls, scalers: Sequence[Scaler]) -> Scaler:
        """One scaler of the channels of several, in order (independent series, each fit on its own)."""
        return cls(*(np.concatenate([getattr(scaler, part) for scaler in scalers])
                      for part in ("mean", "scale", "logged", "steady")))  # fmt: skip

    def transform(self, values: np.ndarray) -> np.ndarray:
        """(x - mean) / scale in float64, over the last axis (the channels), of log x in the `log` ones (-inf
        or NaN at or below 0: callers refuse such rows, `prediction.check_history`)."""
        values = np.asarray(values, dtype=np.float64)
        if self.log is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                values = np.where(self.log, np.log(values), values)
        return (values - self.mean) / self.scale

    def inverse(self, values: np.ndarray) -> np.ndarray:
        """x * scale + mean in float64, through exp in the `log` channels: back to original units."""
        values = np.asarray(values, dtype=np.float64) * self.scale + self.mean
        if self.log is None:
            return values
        with np.errstate(over="ignore"):
            return np.where(self.log, np.exp(values), values)

    def to_dict(self) -> dict[str, list]:
        """JSON-ready: {"mean": [...], "scale": [...]}, and "log" / "constant": [true, false, ...] where any
        is."""
        state: dict[str, list] = {"mean": list(map(float, self.mean)), "scale": list(map(float, self.scale))}
        for field in MARKS:
            if getattr(self, field) is not None:
                state[field] = [bool(v) for v in getattr(self, field)]
        return state

    @classmethod
    def from_dict(cls, state: Any, n_channels: int | None = None) -> Scaler:
        """Rebuild from `to_dict` output, checking every number (and the channel count when given)."""
        if not isinstance(state, Mapping) or not {"mean", "scale"} <= set(state) <= {*MARKS, "mean", "scale"}:
            raise DataError("the scaler must be an object with the fields 'mean' and 'scale' (and 'log', "
                            "'constant')")  # fmt: skip
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
        # at most what training makes (its values' squares fit float32): a scale of 1e300 forecast 0.0 (h41)
        bounded = (np.abs(mean) <= MAX_TRAINING_MAGNITUDE).all() and (scale <= MAX_TRAINING_MAGNITUDE).all()
        if not (bounded and (scale > 0).all()):
            raise DataError("the scaler must hold finite means and positive finite scales of at most "
                            f"{MAX_TRAINING_MAGNITUDE:.3g}, as training makes them")  # fmt: skip
        for field in MARKS:
            marks = state.get(field)
            if marks is not None and (not isinstance(marks, list) or len(marks) != expected
                                      or not all(isinstance(v, bool) for v in marks)):  # fmt: skip
                raise DataError(f"scaler {field!r} must be a list of {expected} true/false values, one per "
                                "column")  # fmt: skip
        return cls(mean, scale, state.get("log"), state.get("constant"))


# A column is standardized in logarithms (`--transform auto`) where the coefficient of variation of its
# swings' spreads, block by block of its train rows, is LOG_EVIDENCE times as large as that of the spreads
# over their levels (Guerrero 1993's criterion, at lambda 1 against 0), on blocks whose levels span a
# factor of LOG_LEVELS: there the swings grow with the level. Two readings of the blocks, either clear: at
# least LOG_SEASONS whole seasons, each's spread about its own line (else a growing level's rise within each
# year reads as swings that grow with it), and at least LOG_BLOCKS blocks of a season (a quarter of a longer
# one) about the season's moving average (a weekly cycle, which a week's line absorbs). Held clearly: on a
# level that barely moves the readings differ by noise. Over 200 seeds each of 25 simulated series: never on
# additive seasons with linear or exponential growth, outliers, a level shift or noise growing with the level;
# 97-100% on quarterly, monthly and hourly multiplied seasons growing 8% a year or more, about half on
# monthly ones growing 6% a year and on noisy daily ones (tests/test_transform.py holds some of them).
# Weekly series of five years hold 3 yearly seasons in their train rows: too few. Judged on 3, two such
# files fired, and one, with spikes, chose seasonal drift in logarithms at 1.9x the test MSE of the values.
# Without a season (yearly rows), the blocks are of LOG_STEPS second differences (a fifth of them where
# more), each row's departure from the line through its neighbours, on levels spanning a factor of LOG_SPAN:
# 22 yearly counts falling from 1000 to 10 kept the margins of their hundreds, an 80% interval of [0, 104] at
# 10 (h82 F18). Over 200 seeds each of 15 to 150 simulated rows: at most 1 in 200 on linear trends and
# declines, random walks with and without drift, and exponential growth with additive noise until the noise
# vanishes beside its level; 40-100% on a level decaying 20% a year with swings of 5% of it, 97-100% on
# geometric random walks with drift and exponential growth of 60 rows (tests/test_transform.py holds one).
LOG_EVIDENCE, LOG_SEASONS, LOG_BLOCKS, LOG_LEVELS, LOG_STEPS, LOG_SPAN = 2.0, 4, 4, 1.5, 3, 5.0


def multiplicative(values: np.ndarray, season: int | None) -> bool:
    """Whether a column's seasonal swings (without a season, its swings about a line: `_about_steps`) grow
    with its level, so that it is better forecast in logarithms (positive values, blocks of a season the most
    recent kept; a season longer than the values, no evidence: a day of microsecond steps made a moving
    average of 86 billion, h45)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if (season and season >= len(values)) or (values <= 0).any():
        return False
    if not season:
        return _grows(*_about_steps(values))
    return _grows(*_about_lines(values, season)) or _grows(*_about_the_trend(values, season))


def _about_steps(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The root mean square of each block of LOG_STEPS second differences (a fifth of them where more, the
    most recent kept), and the mean level of the rows they are taken at; none where those levels span less
    than a factor of LOG_SPAN."""
    bends = np.diff(values, 2)
    block = max(LOG_STEPS, len(bends) // 5)
    count = len(bends) // block
    if count < LOG_BLOCKS:
        return np.ones(0), np.ones(0)
    kept = slice(len(bends) - count * block, len(bends))
    levels = values[1:-1][kept].reshape(count, block).mean(axis=1)
    if levels.max() < LOG_SPAN * levels.min():
        return np.ones(0), np.ones(0)
    return np.sqrt((bends[kept].reshape(count, block) ** 2).mean(axis=1)), levels


def _about_lines(values: np.ndarray, season: int) -> tuple[np.ndarray, np.ndarray]:
    """Each whole season's spread about its own straight line, and its mean."""
    count = len(values) // season
    if count < LOG_SEASONS:
        return np.ones(0), np.ones(0)
    seasons = values[len(values) - count * season :].reshape(count, season)
    means = seasons.mean(axis=1)
    steps = np.arange(season) - (season - 1) / 2
    residuals = seasons - means[:, None] - np.outer(seasons @ steps / (steps @ steps), steps)
    return np.sqrt((residuals**2).sum(axis=1) / max(season - 2, 1)), means


def _about_the_trend(values: np.ndarray, season: int) -> tuple[np.ndarray, np.ndarray]:
    """The spread of each block of a season (a quarter of one longer than a day of hours) about the centred
    moving average of a season, and that average's mean over the block."""
    trend = np.convolve(values, np.ones(season) / season, "valid")
    trend = (trend[:-1] + trend[1:]) / 2 if season % 2 == 0 else trend  # centred on a step
    start = (len(values) - len(trend)) // 2
    block = season if season <= 24 else -(-season // 4)
    count = len(trend) // block
    if count < LOG_BLOCKS:
        return np.ones(0), np.ones(0)
    kept = slice(len(trend) - count * block, len(trend))
    swings = (values[start : start + len(trend)] - trend)[kept].reshape(count, block)
    return swings.std(axis=1, ddof=1), trend[kept].reshape(count, block).mean(axis=1)


def _grows(spreads: np.ndarray, levels: np.ndarray) -> bool:
    """Guerrero's criterion on blocks' spreads and levels, held clearly (`multiplicative`)."""
    if not len(levels) or levels.max() < LOG_LEVELS * levels.min() or not (spreads > 1e-6 * levels).all():
        return False  # a level that barely moves; a season on its line (a straight ramp): no swings to judge

    def variation(ratios: np.ndarray) -> float:
        return float(ratios.std(ddof=1) / ratios.mean()) if ratios.mean() > 0 else np.inf

    return LOG_EVIDENCE * variation(spreads / levels) <= variation(spreads)


# The float64 ulps of a standardized value that a forecast computed in float64 (`exact`) may have lost in its
# chain of a transform, sums over the window and an inverse: 1024 leaves 13 digits of the training level.
EXACT_ULPS = 1024.0


def original_units(
    scaler: Scaler, standardized: np.ndarray, floor: np.ndarray | float = -np.inf, exact: bool = False
) -> np.ndarray:
    """(..., C) standardized forecasts in original units, rounded to the digits the model's arithmetic can
    give them: an ulp of float32 at the standardized value, times the column's scale (a naive forecast of 740
    read 740.0000069931347 unrounded); where it ran in float64 (`exact`), to float32's digits of the value
    itself where they are more, as far as EXACT_ULPS of float64's allow (a drift of 1.445e-4 sent to a model
    of 100s was written 0.0001, h82 F1). None below `floor` (per column, `value_floor`) but an overflow, which
    stays infinite for `check_forecast` to name (floored, -inf was answered 0 with intervals of no width),
    and no -0."""
    values = scaler.inverse(standardized)
    single, double = np.finfo(np.float32).eps, np.finfo(np.float64).eps
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ulps = np.abs(np.asarray(standardized, dtype=np.float64)) + 1
        unit = np.abs(scaler.scale) * np.where(scaler.logged, np.abs(values), 1.0)  # d exp(x) = exp(x) dx
        noise = single * ulps * unit
        if exact:
            noise = np.maximum(EXACT_ULPS * double * ulps * unit, np.minimum(noise, single * np.abs(values)))
        places = -np.ceil(np.log10(noise))
        # beyond 300 places (a scale of 1e-300) 10 ** places overflows: such values are left as they are
        kept = ~np.isfinite(places) | (places > 300)
        places = np.where(kept, 0, places)
        power = 10.0 ** np.abs(places)
        rounded = np.where(places >= 0, np.round(values * power) / power, np.round(values / power) * power)
        rounded = np.where(kept, values, rounded)
    return np.where(np.isfinite(rounded), np.maximum(rounded, floor), rounded) + 0.0


def value_floor(windows: np.ndarray, columns: Sequence[str] = (), nonnegative: Any = None) -> np.ndarray:
    """(..., 1, C) 0 for each column of the (..., L, C) rows a model reads that holds no negative value there
    and is among `nonnegative`, the columns never below 0 in the file the model was trained on (a bundle's
    training record), or without that record counts (whole numbers), else -inf: weekly cases of mean 0.6
    were forecast -0, their 95% bounds -3; ten yearly sunspot numbers falling to 2.9 were forecast -1.7,
    -6.3, -10.9. A column seen below 0 in training is not floored for whole numbers in the rows (temperatures
    in whole degrees had their 80% lower bound -4 answered 0, h41)."""
    if not names_ok(nonnegative):
        raise BundleError("config.json: training 'nonnegative' must be a list of column names")
    values = np.asarray(windows, dtype=np.float64)
    above = np.all(values >= 0, axis=-2, keepdims=True)
    if nonnegative is not None and len(columns):
        return np.where(above & np.isin(np.asarray(list(columns), dtype=object), nonnegative), 0.0, -np.inf)
    whole = np.all(values == np.round(values), axis=-2, keepdims=True)
    return np.where(above & whole, 0.0, -np.inf)


def nonnegative_columns(frame: pd.DataFrame, variables: Sequence[str] | None = None) -> list[str]:
    """The columns of a training table with no value below 0 (missing cells aside), for `value_floor`; with
    `variables` (the variable each column of a long panel measures), those whose variable is below 0 in no
    column: a rate negative in half a country panel was floored at 0 for the other countries (h62)."""
    below = [bool((frame[name] < 0).any()) for name in frame.columns]
    if variables is not None:
        negative = {variable for variable, low in zip(variables, below, strict=True) if low}
        below = [variable in negative for variable in variables]
    return [str(name) for name, low in zip(frame.columns, below, strict=True) if not low]


def names_ok(*values: Any) -> bool:
    """Whether fields of a bundle's training record (its never-negative columns as `value_floor` reads them,
    the series training left out) are lists of names, where they are given."""
    return all(value is None or (isinstance(value, list) and all(isinstance(name, str) for name in value))
               for value in values)  # fmt: skip

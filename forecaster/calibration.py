"""Prediction intervals: split-conformal calibration, stored with the model, and the intervals it gives.

From N calibration windows (the validation split at training time, or recent rows with `forecaster
calibrate`), a nonconformity score per window, horizon step and channel is ranked, and the margin of level
a is the ceil((N + 1) a)-th smallest score (Vovk et al. 2005; Lei et al. 2018): a new window exchangeable
with those is inside the interval with probability at least a.

- method "conformal" (every model): the score is |y - forecast|, the interval forecast +- margin, and
  margins are kept for every integer level 1-99.
- method "quantile" (a model with a learned quantile head): the score is max(lower - y, y - upper), the
  interval [lower - margin, upper + margin] (conformalized quantile regression, Romano et al. 2019), at the
  head's levels only. A margin may be negative: the head's interval was wider than needed.

Calibrated on fewer than FEW_WINDOWS windows (a short yearly or quarterly series holds 1-5), ranks of one
step's few scores cannot reach 80% or 95% and their margins jump from step to step. There the conformal
scores of every step are pooled once divided by their step's scale, the root mean square over the windows
made non-decreasing along the horizon: N * H scores rank one multiple of that scale per level, so intervals
widen with the horizon as the errors seen do (locally weighted conformal, Lei et al. 2018). On |N(0, h)|
errors at H = 10, the mean coverage of 400 such calibrations, each tested on 200 fresh windows, was 0.80 /
0.85 (80% / 95%) from 2 windows, 0.79 / 0.91 from 4 and 0.80 / 0.94 from 16 (tests/test_intervals.py holds
it within bounds); one window's scores alone calibrate nothing.

Few windows of a short series also see little of what it can do: trends turn and recessions come after them.
There a conformal interval is never narrower than a random walk's from the same windows: each level's
quantile of the series' one-step changes |y_t - y_t-1| times sqrt(h) (the naive method's interval, Hyndman &
Athanasopoulos, FPP3 5.5, with the empirical quantile of the uncentred changes, so that a trend counts as
uncertainty; of fewer than FEW_WINDOWS changes, their root mean square times the normal quantile). On 17
held-out files of 1-18 windows (short yearly, quarterly panels, noise), coverage rose from 0.56 / 0.72 to
0.67 / 0.83, five that answered no 95% interval answer it (one from a single window), and noise files,
covered already, got bands twice as wide. A level beyond the ranks the scores reach grows from the highest
they answer as the walk's margin grows (`_floored`).

From FEW_WINDOWS windows on, a level whose rank is one of a step's two highest scores is no narrower than
the normal reading of the step's scores (`_top_floored`). Every conformal margin is then made
non-decreasing along the horizon by sorting its steps (`_rearranged`): a later step is never given a
narrower interval for the noise of a few scores. On 137 held-out series (h55) the two, with the untied random
walk below, raised coverage from 0.827 / 0.900 to 0.827 / 0.907 and lowered the mean scaled interval score at
95% by 2.5% (at 80%: unchanged). Under FEW_WINDOWS windows, a level of the random walk whose empirical
quantile ties the level below's is no narrower than the normal reading of the changes (changes of
0 and +-1 answered 95% as the 80% interval, h52).

Margins are on the standardized scale; the train scaler maps intervals to original units. Intervals are
nested around the forecast: lower <= forecast <= upper, and a higher level is never narrower.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from forecaster.checks import MAX_LEVEL, check_levels
from forecaster.errors import ConfigError
from forecaster.models.outliers import GROSS

ALL_LEVELS = tuple(range(1, MAX_LEVEL + 1))
DEFAULT_LEVELS = (80, 95)
METHODS = ("conformal", "quantile")
# The relative float32 rounding a margin may lose against a lower level's (a level grown from the highest
# answered one as the random walk's margin grows, `_floored`, is a quotient: 0.2475939 above 0.24759391).
SHRINK_TOLERANCE = 1e-5
FEW_WINDOWS = 20  # below this, scores are pooled over the horizon's steps (conformal and quantile alike)
# Test coverage this far below an interval's level is no sampling noise of overlapping windows.
COVERAGE_SLACK = 0.15
# The metrics key naming the calibration whose intervals the "intervals" scores measured: metrics.json's are
# of training's, and a bundle recalibrated since (`forecaster calibrate`) holds margins they did not score.
SCORED_CALIBRATION = "intervals_calibrated_on"
# The metrics key of the windows training calibrated the saved margins on again, where those its test split
# scored covered far less than asked (`undercovered`).
RECALIBRATED = "intervals_recalibrated_on"
# How `forecaster calibrate --on all` names its windows: an evaluation of the same rows scores intervals on
# windows that made them (in sample).
ALL_WINDOWS = "every window of"


def undercovered(intervals: dict[str, dict[str, float]]) -> dict[str, float]:
    """The levels (as `interval_metrics` keys them) whose coverage fell COVERAGE_SLACK or more below them."""
    return {level: scores["coverage"] for level, scores in intervals.items()
            if scores["coverage"] < int(level) / 100 - COVERAGE_SLACK}  # fmt: skip


def uncalibrated(model: str) -> str:
    """What to say when intervals are asked of a bundle without a calibration file (saved before intervals
    existed, or the file was removed)."""
    return (
        f"model {model!r} has no interval calibration (no calibration.safetensors in its folder); add one "
        "with `forecaster calibrate --model DIR --dataset NAME` (or --csv FILE)"
    )


def _ranked(scores: np.ndarray, levels: Sequence[int]) -> np.ndarray:
    """(len(levels), ...) order statistics of `scores` (N, ...) at the conformal rank of each level;
    infinite where N is too small for the level (fewer than level / (100 - level) windows)."""
    ordered = np.sort(np.asarray(scores, dtype=np.float32), axis=0)
    count = ordered.shape[0]
    ranks = np.ceil((count + 1) * np.asarray(levels) / 100.0).astype(int)  # 1-based
    margins = np.full((len(levels), *ordered.shape[1:]), np.inf, dtype=np.float32)
    inside = ranks <= count
    margins[inside] = ordered[ranks[inside] - 1]
    return margins


def _pooled(scores: np.ndarray, levels: Sequence[int]) -> np.ndarray:
    """(len(levels), H, C) margins from few windows' (N, H, C) scores pooled over the horizon's steps, each
    step's divided by its scale (its root mean square, never smaller than an earlier step's). One window
    gives none: divided by its own scale, every score is 1."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) < 2:
        return np.full((len(levels), *scores.shape[1:]), np.inf, dtype=np.float32)
    scale = np.maximum.accumulate(np.sqrt(np.mean(scores**2, axis=0)), axis=0)  # (H, C)
    ratios = np.divide(scores, scale, out=np.zeros_like(scores), where=scale > 0)
    multiples = _ranked(ratios.reshape(-1, scores.shape[-1]), levels)  # (K, C) over N * H scores
    with np.errstate(invalid="ignore"):
        margins = multiples[:, None, :] * scale[None]
    return np.where(np.isinf(multiples)[:, None, :], np.inf, margins).astype(np.float32)


def _normal(scores: np.ndarray) -> np.ndarray:
    """(99, ...) margins of a normal reading of (N, ...) scores or changes: each level's two-sided normal
    quantile times their root mean square (the level's quantile of |e| for e ~ N(0, sigma^2))."""
    normal = np.array([NormalDist().inv_cdf((1 + level / 100) / 2) for level in ALL_LEVELS])
    rms = np.sqrt(np.mean(np.square(np.asarray(scores, dtype=np.float64)), axis=0))
    return normal.reshape(-1, *[1] * rms.ndim) * rms[None]


def _top_floored(margins: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """(99, H, C) per-step margins of N windows' (N, H, C) scores, those a level takes from the highest two
    scores of a step (rank N - 1 or N: 95% below 59 windows) no narrower than the normal reading of the step's
    scores: one or two scores decide such a margin (from 20-38 windows, 95%'s is the step's largest). On 65
    held-out series of 20-75 windows it raised 95% coverage from 0.870 to 0.879 (h55)."""
    count = len(scores)
    top = np.ceil((count + 1) * np.asarray(ALL_LEVELS) / 100.0) >= count - 1  # (99,): the highest levels
    # nested still: the larger of two margins that each grow with the level
    return np.where(top[:, None, None] & np.isfinite(margins), np.maximum(margins, _normal(scores)), margins)


def _rearranged(margins: np.ndarray) -> np.ndarray:
    """(K, H, C) margins made non-decreasing along the horizon by sorting each level's steps (rearrangement,
    Chernozhukov, Fernandez-Val & Galichon 2009: the sorted estimate of a non-decreasing curve is never
    farther from it): ranked alone, a step's margin can fall below an earlier step's for the noise of a few
    scores. The steps keep their widths, reordered: on 65 held-out series of 20-75 windows the mean width was
    unchanged and the mean scaled interval score 0.6% lower (h55). Levels with an infinite margin are kept."""
    finite = np.isfinite(margins).all(axis=1, keepdims=True)
    # nested still: the k-th smallest of margins no smaller than another level's is no smaller than its k-th
    return np.where(finite, np.sort(margins, axis=1), margins).astype(np.float32)


def _random_walk(changes: np.ndarray, horizon: int, season: int = 1) -> np.ndarray:
    """(99, H, C) margins of a random walk stepping by the `changes` (M, C) over `season` steps: each level's
    quantile of |change| times sqrt(k + 1), k the seasons before step h, (h - 1) // season (FPP3 5.5: sqrt(h)
    for naive, a season's swings being no error of seasonal naive's); from fewer than FEW_WINDOWS changes,
    their root mean square times the normal quantile: a handful's empirical quantiles tie (changes 2.5 and
    2.5 made 80% and 95% one interval, h38). From more, a level whose empirical quantile ties the level
    below's takes the normal one where wider: changes of 0 and +-1 made 80% and 95% one interval (h52)."""
    normal = _normal(changes)  # (99, C)
    if len(changes) < FEW_WINDOWS:
        quantiles = normal
    else:  # a level whose quantile ties the level below's is no narrower than the normal reading
        quantiles = np.quantile(np.abs(changes), np.asarray(ALL_LEVELS) / 100.0, axis=0)  # (99, C)
        tied = np.concatenate([np.zeros_like(quantiles[:1], dtype=bool), quantiles[1:] <= quantiles[:-1]])
        quantiles = np.maximum.accumulate(np.where(tied, np.maximum(quantiles, normal), quantiles), axis=0)
    growth = np.sqrt(np.arange(horizon) // season + 1)
    return (quantiles[:, None, :] * growth[None, :, None]).astype(np.float32)


def _floored(margins: np.ndarray, floor: np.ndarray) -> np.ndarray:
    """(99, H, C) margins no narrower than the random walk's `floor`; a level beyond the ranks the scores
    reach (an infinite margin) gets the highest answered level's margin grown as the walk's grows between the
    two levels: the walk's alone can be narrower than the highest answered margin, and nesting then answers
    95% as the 80% interval (4 windows of 2 steps in tests/test_intervals.py)."""
    margins = np.where(np.isinf(margins), np.inf, np.maximum(margins, floor))
    answered = np.isfinite(margins).sum(axis=0)  # (H, C): the levels 1 ... answered have a margin
    top = np.maximum(answered - 1, 0)[None]
    reached, walk = (np.take_along_axis(values, top, axis=0) for values in (margins, floor))
    flat = np.broadcast_to(reached, floor.shape).copy()  # a walk that never moved: the answered level's
    with np.errstate(invalid="ignore"):
        grown = np.divide(floor * reached, walk, out=flat, where=walk > 0)
    grown = np.where(answered[None] > 0, np.maximum(grown, floor), floor)
    return np.where(np.isinf(margins), grown, margins).astype(np.float32)


def margins_problem(margins: np.ndarray, method: str) -> str | None:
    """What makes stored margins unusable, or None: not numbers; for conformal intervals, below 0 or smaller
    at a higher level than at a lower (a file whose 80% and 95% rows were swapped answered 80% as 95%)."""
    if np.isnan(margins).any():
        return "margins must be numbers"
    if method != "conformal":  # a quantile head's margin may be negative, each level's its own
        return None
    if (margins < 0).any() or (margins[1:] < margins[:-1] * (1 - SHRINK_TOLERANCE)).any():
        return "conformal margins must be non-negative and never smaller at a higher level"
    return None


def split_outputs(outputs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(point, lower, upper) of a model's (..., H, C, 1 + 2K) outputs (`models.forecast_outputs`)."""
    levels = (outputs.shape[-1] - 1) // 2
    return outputs[..., 0], outputs[..., 1 : 1 + levels], outputs[..., 1 + levels :]


def nonconformity(outputs: np.ndarray, targets: np.ndarray, method: str) -> np.ndarray:
    """Scores of (N, H, C) targets: |y - point| (N, H, C) for "conformal"; for "quantile", by how much
    y falls outside each level's head interval, max(lower - y, y - upper) (N, H, C, K)."""
    point, lower, upper = split_outputs(outputs)
    if method == "conformal":
        return np.abs(targets - point)
    return np.maximum(lower - targets[..., None], targets[..., None] - upper)


@dataclass(frozen=True, eq=False)
class Calibration:
    """Margins (K, H, C) on the standardized scale for `levels`, how they apply (`method`), what calibrated
    them, and whether those windows' rows held a gross isolated outlier read as its neighbours' value
    (`filled`)."""

    levels: tuple[int, ...]
    margins: np.ndarray
    windows: int
    source: str
    method: str = "conformal"
    filled: bool = False

    @classmethod
    def from_scores(
        cls,
        scores: np.ndarray,
        levels: Sequence[int],
        source: str,
        method: str,
        changes: np.ndarray | None = None,
        season: int = 1,
    ) -> Calibration:
        """From `nonconformity` scores of N windows: (N, H, C) for "conformal" (margins for every level
        1-99; `levels` ignored), (N, H, C, K) for "quantile" at the head's K `levels`. `changes` (M, C), the
        changes over `season` steps of the windows' series (1: one-step), set the floor of a random walk (a
        seasonal one, for a model that repeats a season) under few windows' margins."""
        few = len(scores) < FEW_WINDOWS
        ranked = _pooled if few else _ranked
        if method == "conformal":
            margins = ranked(scores, ALL_LEVELS) if few else _top_floored(ranked(scores, ALL_LEVELS), scores)
            if few and changes is not None and len(changes):
                margins = _floored(margins, _random_walk(changes, scores.shape[1], season))
                walk = "a random walk of its one-step changes" if season == 1 else (
                    f"a seasonal random walk of its changes over {season} steps")
                source = f"{source}, no narrower than {walk}"
            return cls(ALL_LEVELS, _rearranged(margins), len(scores), source)
        margins = np.stack([ranked(scores[..., k], [level])[0] for k, level in enumerate(levels)])
        return cls(tuple(levels), margins, len(scores), source, method)

    @classmethod
    def head(cls, levels: Sequence[int], horizon: int, channels: int) -> Calibration:
        """The quantile head's own intervals, with no conformal margin (to report what calibration adds)."""
        margins = np.zeros((len(levels), horizon, channels), dtype=np.float32)
        return cls(tuple(levels), margins, 0, "the quantile head, uncalibrated", "quantile")

    @property
    def horizon(self) -> int:
        return int(self.margins.shape[1])

    def scored_in(self, metrics: dict) -> bool:
        """Whether `metrics` (a bundle's metrics.json) scored these margins: not once recalibrated, nor known
        in a bundle saved before the calibration's name was kept beside its scores."""
        return metrics.get(SCORED_CALIBRATION) == self.source

    def on_all_windows(self) -> bool:
        """Whether every window of a file calibrated these margins (`forecaster calibrate --on all`)."""
        return self.source.startswith(ALL_WINDOWS)

    def notes(self) -> list[str]:
        """Where the windows that calibrated these margins held a gross isolated outlier, read there as its
        neighbours' value (`scoring.filled`): a typo the bands leave alone, which a user should know of
        (h57); `fit` warns it, `forecaster calibrate` prints it."""
        if not self.filled:
            return []
        return [f"the windows that calibrated the intervals held a value over {GROSS:g} robust standard "
                "deviations from its neighbours (a typo or a one-off), read there as their value so that it "
                "sets no margin; the rows are used as given everywhere else"]  # fmt: skip

    def available_levels(self) -> list[int]:
        """The levels this calibration answers (enough windows for a finite margin)."""
        return [level for index, level in enumerate(self.levels) if np.isfinite(self.margins[index]).all()]

    def check(self, levels: Iterable[int]) -> list[int]:
        """`levels` checked against what this calibration can answer; ConfigError naming the problem."""
        checked = check_levels(levels)
        missing = [level for level in checked if level not in self.levels]
        if missing:
            raise ConfigError(
                f"interval level {missing[0]} is not available: the model's intervals come from its "
                f"quantile head, trained at levels {', '.join(map(str, self.levels))}"
            )
        for level in checked:
            if not np.isfinite(self.margins[self.levels.index(level)]).all():
                needed = int(np.ceil(level / (100 - level)))  # scores: windows, or windows x steps pooled
                if self.windows < FEW_WINDOWS:
                    needed = min(max(int(np.ceil(needed / self.horizon)), 2), FEW_WINDOWS)
                if self.windows >= needed:  # enough windows: a margin made infinite since (h41)
                    raise ConfigError(
                        f"interval level {level} has no finite margin, though the model was calibrated on "
                        f"{self.source}: its calibration file is damaged; calibrate it again (`forecaster "
                        "calibrate --model MODEL --csv FILE`)"
                    )
                answered = self.available_levels()
                lower = f"ask a level up to {max(answered)}, or" if answered else "it answers no level:"
                raise ConfigError(
                    f"interval level {level} needs at least {needed} calibration windows; the model was "
                    f"calibrated on {self.source}: {lower} recalibrate on more rows (`forecaster calibrate "
                    "--model MODEL --csv FILE --on all` takes every window of the file); the point forecast "
                    "needs no level"
                )
        return checked

    def intervals(
        self, levels: Iterable[int], outputs: np.ndarray, steady: np.ndarray | None = None
    ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """{level: (lo, hi)} for a model's standardized (..., H', C, 1 + 2K) outputs (H' <= the calibrated
        horizon): around the point (conformal) or the head's bounds (quantile); nested, never crossing the
        point. The `steady` (C,) independent series, constant in every row their scaler was fit on, span their
        value (0) and the point at every level: their scale (1) measures no swings, and margins pooled over
        the series drew a band of +-1.3 in any units around a rate held at 0.25 for 8 years (h52)."""
        point, lower, upper = split_outputs(outputs)
        if steady is not None and np.any(steady):
            low, high = np.minimum(point, 0), np.maximum(point, 0)
            return {level: (np.where(steady, low, lo), np.where(steady, high, hi))
                    for level, (lo, hi) in self.intervals(levels, outputs).items()}  # fmt: skip
        steps = point.shape[-2]
        result, lo, hi = {}, point, point
        for level in self.check(levels):
            index = self.levels.index(level)
            margin = self.margins[index, :steps]
            if self.method == "quantile":
                base_lo, base_hi = lower[..., index], upper[..., index]
            else:
                base_lo, base_hi = point, point
            lo = np.minimum(base_lo - margin, lo)
            hi = np.maximum(base_hi + margin, hi)
            result[level] = (lo, hi)
        return result

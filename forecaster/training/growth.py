"""A seasonal forecast in place of the one kept, where the file is too short for validation to hold it and the
rows before the test split show the season, or its growth.

A user's file a little short for its horizon leaves validation too few rows for a season's forecast: 24-35
monthly rows at horizon 12 split holdout leave under 12 rows before the validation window, and the kept
forecast (naive, the mean, drift) has no season (35 months of a season of +-40 with noise 6: naive kept, next
year's MAE 31.5, seasonal naive 5.6); 36 rows leave 12, one season, and seasonal naive kept carries no trend
(200 + 2t with a season: MAE 21.8 against AutoETS's 3.5, every month below the truth, h56 #2). The rows before
the test split hold more: on a monthly file they choose among naive, drift, seasonal naive and seasonal drift
by the AICc of their one-step errors (a season growing under a trend shows to no other check: 35 such months
kept naive, MAE 41.8, h59); where they show the season, seasonal naive is kept instead, and where they hold
two seasons that grew, seasonal drift over them. Each is scored on the test split as every choice is, out of
sample (the rows the checks read end where the test split's targets begin); validation holds no window of its
input, so its intervals are those of the forecast validation chose, calibrated there: wider than its errors
where the season shows or grew (they hold what that forecast misses), not narrower.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from forecaster.data import TimeSeries, season_length
from forecaster.data.series import INDEPENDENT
from forecaster.data.splits import split_borders
from forecaster.models import fits_nothing, get_model
from forecaster.models.assembly import assemble
from forecaster.training.planning import Candidate, rows_hold, season_input, split_for
from forecaster.training.scoring import season_of
from forecaster.training.settings import TrainSettings

if TYPE_CHECKING:  # the record keys are read where Lightning is not imported (evaluate, calibrate)
    from forecaster.training.fit import Fitted

# |t| of the mean seasonal difference beyond which the seasons grew (or shrank). h58, 257 segments of h48's
# real series cut to 36 monthly rows at horizon 12 and 20 quarterly at 8, the tool's forecast where it kept
# seasonal naive replaced by seasonal drift where the check fires: MASE against naive 0.617 -> 0.548 (AutoETS
# 0.498), 87 segments of 48 series changed, 59 better, 28 worse, MAE ratio 0.70 (CI over series 0.57-0.86);
# |t| > 2: 0.542, 108 changed at 0.73; always: 0.551, 177 at 0.85. A random walk's seasonal differences are
# overlapping sums, and 56% of simulated monthly walks pass 3, at 6% more error than seasonal naive's; a
# trend missed cost 70%.
GROWTH_T = 3.0
# The seasons it was measured on (monthly and quarterly files); random walks pass the check as often on a
# week of days or a day of hours (46-79%, h59), which no study of real series has weighed yet.
MEASURED_SEASONS = (4, 12)
# The ratio of mean squares (`season_shows`) below which the rows show the season. h60, 260 segments of h48's
# real series cut to 30 monthly rows at horizon 12 and 18 quarterly at 8 (the tool kept naive, mean, drift or
# Holt-Winters without a season on every one): below 0.5 on 122 segments of 49 series, 103 better, 19 worse,
# MAE 0.50x the tool's (CI over series 0.43-0.58), with the growth step after it 0.48x; MASE against naive
# 0.944 -> 0.667 (AutoETS 0.526, seasonal naive on every segment 0.711); 34 monthly rows: 67 changed, 0.48x.
# Below 0.25: 88 changed at 0.47x, giving up the gains between; always: 0.75x, quarterly's CI crossing 1.
# Simulated random walks without a season pass it 0-0.9% of the time, white noise 6-14% (at 4% more error).
SEASON_SHOWS = 0.5
# The fewest seasonal differences the season check reads: h60 measured it on 6 (30 months, 18 quarters) and 10
# (34 months); 25 months would hold one.
SEASONAL_DIFFERENCES = 6
# The seasons on which the rows before the test split choose among naive, drift, seasonal naive and seasonal
# drift by the AICc of their one-step errors (`one_step_aicc`) before the season check. h61, new cuts of
# h48's monthly series (32 rows, ending 6 months before each series' end) and 29 monthly series h48 lacked
# (30 and 32 rows): 182 of 351 segments changed, 152 better, 30 worse, MAE 0.47x the tool's (CI over series
# 0.41-0.54), MASE against naive 0.748 -> 0.503 (AutoETS 0.512, seasonal drift on every segment 0.495); the
# season check with seasonal drift in place of seasonal naive, 0.59x on 184, and this choice beat it 0.71x
# where they differ. Quarterly files are not (19 and 18 rows: 0.79x on 43 changed, CI over series 0.56-1.06,
# 23% of them 1.5x worse). Simulated 30-row monthly random walks are switched 10% of the time (9% at 32
# rows, 5% at 34) at 1.5x naive's error, white noise 35-43% at 1.05x, a trend without a season 20-34% (0.54x
# where it holds, 2.1x where it turns at the forecast origin).
CHOSEN_SEASONS = (12,)
# The training record's keys of a forecast kept in place of validation's choice, each naming that choice.
IN_PLACE = ("season_chosen", "season_shows", "seasons_grew")


def season_shows(rows: np.ndarray, season: int) -> np.ndarray:
    """Per column of (N, C) rows, the mean square of the seasonal differences x_t - x_(t-season) over that of
    the one-step differences: below 1 where last season's value is the better guess of the next."""
    seasonal = np.mean((rows[season:] - rows[:-season]) ** 2, axis=0)
    step = np.mean((rows[1:] - rows[:-1]) ** 2, axis=0)
    return seasonal / np.where(step > 0, step, np.inf)


def one_step_aicc(rows: np.ndarray, season: int) -> dict[str, np.ndarray]:
    """Per column of (N, C) rows, the AICc of four forecasts' one-step errors over the rows a season follows
    (t >= season, k of them): naive x_(t-1) and seasonal naive x_(t-season) (one parameter, the error's
    variance), drift and seasonal drift (those plus the mean step or seasonal difference): k log(SSE/k) + 2p +
    2p(p + 1)/(k - p - 1)."""
    changes, steps = rows[season:] - rows[:-season], rows[season:] - rows[season - 1 : -1]
    count, tiny = len(changes), 1e-12 * (1 + np.sum(rows**2, axis=0))

    def aicc(errors: np.ndarray, parameters: int) -> np.ndarray:
        sse = np.maximum(np.sum(errors**2, axis=0), tiny)
        extra = 2 * parameters * (parameters + 1) / (count - parameters - 1)
        return count * np.log(sse / count) + 2 * parameters + extra

    return {"naive": aicc(steps, 1), "drift": aicc(steps - steps.mean(axis=0), 2),
            "seasonal_naive": aicc(changes, 1),
            "seasonal_drift": aicc(changes - changes.mean(axis=0), 2)}  # fmt: skip


def seasonal_change_t(rows: np.ndarray, season: int) -> np.ndarray:
    """Per column of (N, C) rows, the mean of the seasonal differences x_t - x_(t-season) over its standard
    error, the differences taken as independent (inf where they all agree exactly, 0 where all are 0)."""
    changes = rows[season:] - rows[:-season]
    mean, spread = changes.mean(axis=0), changes.std(axis=0, ddof=1) / np.sqrt(len(changes))
    certain = np.where(mean == 0, 0.0, np.copysign(np.inf, mean))  # every change the same
    return np.where(spread > 0, mean / np.where(spread > 0, spread, 1.0), certain)


def seasonal_in_place(
    best: Fitted, fitted: list[Fitted], series: TimeSeries, settings: TrainSettings
) -> Fitted:
    """The kept forecast, or in its place a seasonal one validation could not hold, read over the rows before
    the test split's targets (under holdout n - horizon), in the scale the model reads (logarithms where a
    column is logged), every column passing: seasonal naive where the kept forecast fits nothing and has no
    season and those rows show the season (`season_shows`, SEASON_SHOWS), then seasonal drift over them in
    place of seasonal naive where they hold two seasons whose seasonal differences have |t| > GROWTH_T
    (`seasonal_change_t`). On a monthly season (CHOSEN_SEASONS) those rows first choose by AICc among naive,
    drift, seasonal naive and seasonal drift (`one_step_aicc`): a seasonal one chosen is kept, else the checks
    above. A user's file of a monthly or quarterly season (MEASURED_SEASONS), one table (not
    independent series, nor covariates: not measured), where the kept forecast was chosen among others (not
    named) at the input the run chose (no --input-size)."""
    season, data = season_length(series.freq), best.data
    chosen = len(fitted) > 1 and settings.input_size is None
    if series.dataset is not None or not chosen or season not in MEASURED_SEASONS:
        return best
    if data.channels == INDEPENDENT or data.input_columns != data.columns:
        return best
    split = split_for(series, settings)
    first = split_borders(len(series), 1, split, series.freq, horizon=settings.horizon, trained=False)["test"]
    before = first[0] + 1  # the rows before the test split's targets: its window's input at most
    rows = best.scaler.transform(series.values[:before])
    if not np.isfinite(rows).all():
        return best
    unvalidated = not rows_hold(season_input("seasonal_naive", season), series, settings, trained=False)
    held = before - season >= SEASONAL_DIFFERENCES
    if fits_nothing(best.model) and season_of(best.model) == 1 and unvalidated and held:
        scores = one_step_aicc(rows, season) if season in CHOSEN_SEASONS else {}
        name = _lowest(scores)
        if name in ("seasonal_naive", "seasonal_drift") and not rows_hold(
            season_input(name, season), series, settings, trained=False
        ):
            aicc = {label: [round(float(value), 2) for value in values] for label, values in scores.items()}
            record = {"model": best.candidate.label, "changes": before - season, "aicc": aicc}
            size = season if name == "seasonal_naive" else before
            return _in_place(best, name, season, size, "season_chosen", record)
        ratio = season_shows(rows, season)
        if (ratio < SEASON_SHOWS).all():
            shows = {"model": best.candidate.label, "ratio": [round(float(value), 3) for value in ratio],
                     "bound": SEASON_SHOWS}  # fmt: skip
            best = _in_place(best, "seasonal_naive", season, season, "season_shows", shows)
    if best.candidate.model_name != "seasonal_naive" or before < 2 * season:
        return best
    if rows_hold(season_input("seasonal_drift", season), series, settings, trained=False):
        return best  # validation holds seasonal drift: the choice made there stands
    t = seasonal_change_t(rows, season)
    if not (np.abs(t) > GROWTH_T).all():
        return best
    grew = {"model": best.candidate.label, "t": [round(float(value), 2) for value in t],
            "changes": before - season, "input_size": before, "bound": GROWTH_T}  # fmt: skip
    return _in_place(best, "seasonal_drift", season, before, "seasons_grew", grew)


def _lowest(scores: dict[str, np.ndarray]) -> str | None:
    """The forecast whose score is lowest on every column (None where the columns differ, or none scored)."""
    if not scores:
        return None
    lowest = {list(scores)[index] for index in np.argmin(np.stack(list(scores.values())), axis=0)}
    return lowest.pop() if len(lowest) == 1 else None


def _in_place(best: Fitted, model_name: str, season: int, input_size: int, key: str, record: dict) -> Fitted:
    """`model_name` over `input_size` rows in place of `best`, scored on the test split as `best` would have
    been; its intervals those of the forecast validation chose (`Fitted.calibrating`); `record` kept under
    `key` in its training record."""
    data = dataclasses.replace(best.data, input_size=input_size)
    options = {"season": season}
    sizes = {"input_size": input_size, "horizon": best.data.horizon, "n_channels": data.model_channels}
    model = assemble(get_model(model_name, **options, **sizes), data, fitting=True).eval()
    candidate = Candidate(model_name, model_name, options, best.candidate.lr, input_size,
                          best.candidate.toward_naive, best.candidate.seeds)  # fmt: skip
    training = {**best.training, "candidate": model_name, key: record,
                "windows": {**best.training["windows"], "val": 0}}  # fmt: skip
    calibrating = best.calibrating or (best.model, best.data)  # the forecast validation chose
    return dataclasses.replace(best, candidate=candidate, model=model, data=data, training=training,
                               history=None, calibrating=calibrating)  # fmt: skip

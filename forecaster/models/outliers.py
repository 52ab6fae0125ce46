"""Isolated outliers (a typo, a one-off) in a window, found and filled before a baseline smooths or averages
it.

A Hampel-type check (Hampel 1974; Pearson et al. 2016, "Generalized Hampel filters") on the series' jumps:
each cell less the mean of its two neighbours, seasonally adjusted where that leaves the smaller jumps (each
position's median deviation from a running median over a season and one step, from three seasons at least, as
Hyndman's tsoutliers reads an STL remainder). A cell is an isolated outlier where its jump is more than
`THRESHOLD` robust standard deviations of the window's jumps (1.4826 times their median absolute deviation)
and `DOMINANCE` times its neighbours' (with a season, its unadjusted jump `SEASON_DOMINANCE` times the same
position's a season before and after): a spike moves its neighbours' jumps by half of it the other way, while
a new level, a run of two far values, a trend's turn or a season's peak move two cells or two seasons alike.
The window's first and last cells have one neighbour and are never flagged (a last value far off may start a
new level: nothing after it says it does not), nor a cell next to them unless its inner neighbour's jump
echoes a spike's (a far last value is no spike in the cell before it). Flagged cells are filled with the mean
of their neighbours (seasonally adjusted) for the baselines in `FILLED` to fit their states on (Holt-Winters'
level, trend and season, seasonal mean's average season), repeat (seasonal naive's last season, seasonal
drift's and its change between seasons) or average (the mean's level), each beyond its own distance; the
user's rows are never changed, and validation and test score the forecasts against the rows as given.
Interval calibration forecasts and scores its windows with their gross outliers filled (`GROSS`,
`training.scoring.filled`): one typo was a 95% margin.
"""

from __future__ import annotations

import math

import torch

# Jumps further than this many robust standard deviations from their median: a normal one once in 1.7 million.
THRESHOLD = 5.0
# Interval calibration fills only cells this far (`training.scoring.filled`): the one-offs flagged in 15 of
# 137 held-out series (a strike week, the 1976 winter's deaths, lynx peaks) were 5-9, and an interval is to
# cover their like (filled at 5, the 95% bands of 3 monthly series doubled, h57); of 274 typos (a value x10),
# 256 were 20 or more.
GROSS = 20.0
# The forecasts that read the filled window (the rows are kept as given), each with the distance beyond which
# a cell is filled. Seasonal naive and seasonal drift repeat their window's cells, and on a short file read
# one or two seasons, where a season's peak is as far a jump as a typo (no season a year before to tell them
# apart): at THRESHOLD their end forecasts moved on 15 of 517 real 30-36 month / 18-20 quarter segments (h58,
# h60), all 15 worse (held-out MAE 1.004x, 1.008x: departures' and debitcards' peaks, souvenirs' March);
# at GROSS on none, nor on h48's 137 series, and a value x10 in the last two seasons was filled as at
# THRESHOLD (23 of 79 spiked segments' forecasts changed, all better: MAE 0.41x, 80% coverage 0.64 -> 0.72;
# h62's typo repeated as next June, 3390 for 325, now 318; h64).
# The mean's level averages its window: one order of 60 among weekly counts of 0-3 had lifted it from 0.6 to
# 1.95, its 80% band 0.89-3.02 covering no week of 0 (h102 F2). It fills at GROSS only where the window's
# jumps have a spread of their own (`SPREAD_ONLY`): a lone order among zeros, whose jumps' scale is their mean
# absolute deviation, lies beyond any such distance and is demand, not a typo (5 orders in 300 weeks had been
# forecast 0.031 a week for their rate of 0.077, h107 R3). Pre-registered and scored on h102's 150,162 windows
# of 307 real series (h110): 968 changed, series' MAE 0.994x (95% CI 0.978-1.002), no source above 1.017x.
FILLED = {"holt_winters": THRESHOLD, "seasonal_mean": THRESHOLD,
          "seasonal_naive": GROSS, "seasonal_drift": GROSS, "mean": GROSS}  # fmt: skip
SPREAD_ONLY = ("mean",)
# A spike's neighbours' jumps are half of its own, the other way: a cell is isolated where its jump is this
# many times theirs, and, with a season, its unadjusted jump `SEASON_DOMINANCE` times the same position's a
# season before and after (a peak that grows with the level, fpp3's souvenirs' March or visnights' VICMetro
# Q1, is no typo: seasonal adjustment by a median season leaves it far).
DOMINANCE, SEASON_DOMINANCE = 1.5, 3.0
# Next to a window's end only the inner neighbour's jump is measured: a spike there moves it by half its own
# the other way, and at least this share is asked of it (a far last value leaves it as it was: the cell before
# it had looked isolated, and was filled with half of that value).
ECHO = 0.25
# A season's position needs this many values for a median that one far value cannot move: windows of fewer
# seasons are read without seasonal adjustment.
MIN_SEASONS = 3
# Normal consistency of the median and mean absolute deviations (sigma = 1.4826 MAD = 1.2533 mean AD); the
# mean's only where the median's is 0 (counts, mostly 0).
MAD_SIGMA, MEAN_AD_SIGMA = 1.4826, 1.2533
# A last cell is judged by at least this many earlier errors or changes (`clip_last`, `smoothing.clips_last`).
MIN_CLIP_ERRORS = 3
# Changes differing by less than this share of the levels differ by float rounding, no spread (float64's 2e-16
# with a wide margin, far below a unit; a float32 window's own rounding where larger).
ROUNDING = 1e-12


def _running_median(y: torch.Tensor, window: int) -> torch.Tensor:
    """(N, L) -> (N, L) centred running medians, over fewer steps at the ends."""
    half = window // 2
    padded = torch.nn.functional.pad(y, (half, window - 1 - half), value=float("nan"))
    return padded.unfold(1, window, 1).nanmedian(-1).values


def robust_scale(values: torch.Tensor, noise: float | torch.Tensor = 0.0) -> torch.Tensor:
    """(N, L) -> (N,) the standard deviation of each row as its median absolute deviation gives it (its mean
    absolute deviation's where half the cells tie: counts, mostly 0). Deviations up to `noise` are ties: the
    changes of prices moving by one tick (0.1 at 505.1) differ by float rounding, 1e-13, which was a scale;
    one per row as (N, 1)."""
    deviation = _deviations(values, noise)
    scale = MAD_SIGMA * deviation.median(1).values
    return torch.where(scale > 0, scale, MEAN_AD_SIGMA * deviation.mean(1))


def _deviations(values: torch.Tensor, noise: float | torch.Tensor) -> torch.Tensor:
    """(N, L) -> each cell's absolute deviation from its row's median, those up to `noise` as 0 (ties)."""
    deviation = (values - values.median(1, keepdim=True).values).abs()
    return torch.where(deviation > noise, deviation, 0.0)


def precision(dtype: torch.dtype) -> float:
    """The relative float rounding of `dtype` that differences within are no spread (`ROUNDING`)."""
    return max(ROUNDING, 64 * torch.finfo(dtype).eps)


def _jumps(adjusted: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, L) -> each cell less the mean of its two neighbours (0 at the ends) and their robust scale (N,)."""
    jump = _jumps_only(adjusted)
    return jump, robust_scale(jump[:, 1:-1])


def _jumps_only(adjusted: torch.Tensor) -> torch.Tensor:
    """(N, L) -> each cell less the mean of its two neighbours, 0 at the ends."""
    jump = adjusted.new_zeros(adjusted.shape)
    jump[:, 1:-1] = adjusted[:, 1:-1] - (adjusted[:, :-2] + adjusted[:, 2:]) / 2
    return jump


def isolated_outliers(
    y: torch.Tensor, season: int, threshold: float = THRESHOLD, spread_only: bool = False,
    read_as: torch.dtype | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(N, L) float series and a season of `season` steps (1: none) -> (the flags (N, L) bool, the local
    estimates (N, L): the mean of the two neighbours, seasonally adjusted, the jumps' robust scale (N,)).
    With `spread_only`, nothing is flagged in a row whose jumps' median absolute deviation is within its
    float rounding (`SPREAD_ONLY`): of its median magnitude, not its largest (a typo of 4e8 among values of
    0.0004 had hidden its own spread), in the precision the model reads (`read_as`: scoring's float32
    windows had filled a typo that predict's float64 kept, h117)."""
    count, length = y.shape
    jump, scale = _jumps(y)
    raw = jump.abs()
    if season > 1 and length >= MIN_SEASONS * season:  # adjusted where that leaves the smaller jumps
        window = season + 1 - season % 2  # a running median over a season and one step (odd: centred)
        seasons = -(-length // season)
        detrended = y - _running_median(y, min(window, 2 * length - 1))
        detrended = torch.nn.functional.pad(detrended, (0, seasons * season - length), value=float("nan"))
        positions = detrended.view(count, seasons, season).nanmedian(1).values  # (N, m)
        adjusted_jump, adjusted_scale = _jumps(y - positions.repeat(1, seasons)[:, :length])
        adjusted = adjusted_scale < scale
        jump = torch.where(adjusted[:, None], adjusted_jump, jump)
        scale = torch.where(adjusted, adjusted_scale, scale)
    size = jump.abs()
    bigger = torch.nn.functional.pad(torch.maximum(size[:, :-2], size[:, 2:]), (1, 1), value=float("inf"))
    for cell, inner in ((1, 2), (length - 2, length - 3)):  # next to an end, whose jump is unmeasured (0)
        echoed = (jump[:, cell] * jump[:, inner] < 0) & (size[:, inner] > ECHO * size[:, cell])
        bigger[:, cell] = torch.where(echoed & (length >= 5), size[:, inner], float("inf"))
    flags = (size > threshold * scale[:, None]) & (size > DOMINANCE * bigger) & (scale[:, None] > 0)
    if spread_only:
        noise = precision(read_as or y.dtype) * y.abs().median(1, keepdim=True).values
        flags &= _deviations(jump[:, 1:-1], noise).median(1).values[:, None] > 0
    if 1 < season < length:  # nor a season's peak: unadjusted, the same position a season before and after
        peaks = torch.zeros_like(raw)  # jumps less
        peaks[:, season:] = raw[:, :-season]
        peaks[:, :-season] = torch.maximum(peaks[:, :-season], raw[:, season:])
        flags &= raw > SEASON_DOMINANCE * peaks
    return flags, y - jump, scale


def fill_isolated(
    y: torch.Tensor, season: int, threshold: float = THRESHOLD, spread_only: bool = False,
    read_as: torch.dtype | None = None,
) -> torch.Tensor:
    """(N, L) series with their isolated outliers filled by the local estimate (`isolated_outliers`), which
    reads only the rows `_may_flag` leaves (the mean scores every window: the full check had doubled its
    cost, h117 R4)."""
    if y.shape[1] < 3:
        return y
    rows = None
    if season <= 1 or y.shape[1] < MIN_SEASONS * season:  # no seasonal adjustment: the jumps bound the flags
        rows = _may_flag(y, threshold, spread_only).nonzero()[:, 0]
        if not len(rows):
            return y
        rows = rows if len(rows) < len(y) else None
    read = y if rows is None else y[rows]
    flags, local, _ = isolated_outliers(read, season, threshold, spread_only, read_as)
    if rows is None:
        return torch.where(flags, local, y)
    filled = y.clone()
    filled[rows] = torch.where(flags, local, read)
    return filled


def _may_flag(y: torch.Tensor, threshold: float, spread_only: bool) -> torch.Tensor:
    """(N, L) -> (N,) False where `isolated_outliers` flags nothing without seasonal adjustment: its largest
    jump is within `threshold` times any scale the row's jumps give (by counting, one median less), with a
    margin for rounding (a row holding NaN has a NaN scale: flagged nowhere, and False here alike)."""
    jump, margin = _jumps_only(y)[:, 1:-1], 1 + 1e-3
    deviation = (jump - jump.median(1, keepdim=True).values).abs()  # as `robust_scale` reads them
    largest = jump.abs().amax(1, keepdim=True)
    # the median deviation (`median`'s lower one, the k-th) is below `largest / (threshold * MAD_SIGMA)`
    # exactly where more than k deviations are
    k = (jump.shape[1] - 1) // 2
    near = (deviation < largest * margin / (threshold * MAD_SIGMA)).sum(1) > k
    tied = (deviation == 0).sum(1) > k  # a median deviation of 0: the mean's scale, or none (`spread_only`)
    by_mean = largest[:, 0] * margin > threshold * MEAN_AD_SIGMA * deviation.mean(1)
    return torch.where(tied, by_mean & (not spread_only), near) & (largest[:, 0] > 0)


# A shock over a few steps of the last season (COVID's 2020 Q2-Q4, a strike, a shutdown) is no isolated
# outlier, and seasonal naive, seasonal drift and Holt-Winters repeated it a season later (h66 F2: 2021 Q2
# forecast 120.4, truth 142.4). They read a run of 2 or more cells of the last season as the seasons
# before plus the level change (`fill_runs`) where each cell is beyond THRESHOLD robust standard deviations
# from its position in the RUN_SEASONS seasons before, all on one side, and the cells after it are back
# within THRESHOLD (a new level lasting to the window's end is kept). On h48's monthly and quarterly series
# with a run of 2 or 3 cells moved by 30%: held-out MAE 0.49x (seasonal drift), 0.56x (seasonal naive),
# 0.69x (Holt-Winters); on their clean windows at 9 origins 19 of 4,986 windows changed, geometric means
# 0.996-1.003x (h69, model level).
RUNS_FILLED = ("seasonal_naive", "seasonal_drift", "holt_winters")
RUN_SEASONS = 3
# A run is half a season at most, or 3 steps (COVID's three quarters): a longer one is a new level, and a
# month's 9-step run read so (us_employment's health services) cost seasonal drift 1.74x (h69).
MIN_LONGEST_RUN = 3
# Residuals of the seasons before that scale a departure (and two seasons' at least): with fewer the window is
# read as given. A random walk's last season wanders: read with a season of 12 from 56-60 steps (8-12 such
# residuals) 5-8% of random walks were filled, from 72 steps 2.7%, from 100 0.7% (h69).
MIN_RUN_REFERENCE = 8


def fill_runs(y: torch.Tensor, season: int, threshold: float = THRESHOLD) -> torch.Tensor:
    """(N, L) series with a departure of a few consecutive cells in their last season (2 to MIN_LONGEST_RUN
    or season // 2), one side of the same positions in the RUN_SEASONS seasons before (raised by the window's
    median change per season) and followed by cells back on them, read as those positions plus the last
    season's other cells' departure."""
    count, length = y.shape
    first = RUN_SEASONS * season
    if season < 3 or not count or length - first - season < max(MIN_RUN_REFERENCE, 2 * season):
        return y
    change = (y[:, season:] - y[:, :-season]).quantile(0.5, dim=1, keepdim=True)  # (N, 1) per season
    before = [y[:, first - j * season : length - j * season] + j * change for j in range(1, RUN_SEASONS + 1)]
    earlier = torch.stack(before).median(0).values
    departure = y[:, first:] - earlier  # (N, L - first)
    reference = departure[:, :-season]
    scale = robust_scale(reference)[:, None]
    z = (departure[:, -season - 1 :] - reference.quantile(0.5, dim=1, keepdim=True)) / scale  # (N, m + 1)
    side = torch.where(z > threshold, 1, torch.where(z < -threshold, -1, 0)) * (scale > 0)
    steps = torch.arange(season + 1, device=y.device)
    end = torch.where(side != 0, steps, -1).max(1).values  # the last far cell: 0 (the one before)..m
    rows = torch.arange(count, device=y.device)
    sign = side[rows, end.clamp_min(0)]
    run = torch.zeros_like(side, dtype=torch.bool)
    inside = end >= 1
    for back in range(season + 1):  # the cells on `sign`'s side in a row that end at `end`
        cell = (end - back).clamp_min(0)
        inside = inside & (end - back >= 0) & (side[rows, cell] == sign)
        run[rows, cell] |= inside
    size = run.sum(1)
    found = (end >= 1) & (end <= season - 1) & ~run[:, 0]  # inside the season, and a cell after it
    found &= (size >= 2) & (size <= max(season // 2, MIN_LONGEST_RUN))
    if not found.any():
        return y
    cells = run[:, 1:] & found[:, None]  # (N, m): the last season's cells filled
    rest = departure[:, -season:].masked_fill(cells, float("nan")).nanquantile(0.5, dim=1)
    estimate = earlier[:, -season:] + torch.nan_to_num(rest)[:, None]
    filled = y.clone()
    filled[:, -season:] = torch.where(cells, estimate, y[:, -season:])
    return filled


# A window ends in a run of one value at least this long (a pair is a tie of rounding), its copies so placed
# by chance less often than this under the mean's assumption (the window's values exchangeable): it stopped at
# that value (`ended_run`).
MIN_ENDED_RUN, RUN_CHANCE = 3, 0.01


def ended_run(y: torch.Tensor) -> torch.Tensor:
    """(N, L) -> (N,) the run each window ends in, r copies of its last value (0 where none), where r >=
    MIN_ENDED_RUN and chance would so place them less often than RUN_CHANCE: a window of exchangeable cells
    ends in r copies of some value v with chance sum over v of C(m_v, r) / C(L, r), m_v its copies among the
    L cells. Every value counts, as the one at the end is the one observed: asked of its copies alone, iid
    Poisson(1.5) counts ending in three zeros (13 of 67: 0.006 alone, 0.058 with 1, 2 and 3 beside) were
    forecast 0, and the rule fired on 1.4-1.9% of such windows (h107). For the mean, which assumes a return to
    the level: 17 weeks of 0 ending years of about 6 a week are a product stopped, not the window's 3.4 a week
    (h102 F1)."""
    run = (y == y[:, -1:]).flip(1).to(torch.int64).cumprod(1).sum(1)
    ended = torch.zeros_like(run)
    rows = (run >= MIN_ENDED_RUN).nonzero()[:, 0]  # chance asked of those alone: the mean scores every window
    if len(rows):
        ended[rows] = torch.where(_unlikely_run(y[rows], run[rows]), run[rows], 0)
    return ended


def _unlikely_run(y: torch.Tensor, run: torch.Tensor) -> torch.Tensor:
    """(N, L) windows and the run (N,) each ends in -> (N,) whether chance would place such a run less often
    than RUN_CHANCE (`ended_run`)."""
    steps, run = y.shape[1], run[:, None].to(torch.float64)
    ordered = y.sort(1).values  # each value's copies side by side (NaN: each a value of one copy)
    first = torch.ones_like(ordered, dtype=torch.bool)
    first[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    copies = torch.zeros_like(ordered, dtype=torch.float64).scatter_add_(
        1, first.cumsum(1) - 1, torch.ones_like(ordered, dtype=torch.float64))  # m_v per value, then 0s
    ways = torch.lgamma(copies + 1) - torch.lgamma((copies - run).clamp_min(0) + 1)  # log r! C(m_v, r)
    ways = torch.where(copies >= run, ways, -torch.inf)
    log_chance = ways.logsumexp(1) + torch.lgamma(steps - run[:, 0] + 1) - math.lgamma(steps + 1)
    return log_chance < math.log(RUN_CHANCE)


def clips(steps: int) -> bool:
    """Whether `clip_last` judges the last cell of a window of `steps` (MIN_CLIP_ERRORS earlier changes)."""
    return steps >= MIN_CLIP_ERRORS + 2


def clip_last(y: torch.Tensor, threshold: float = THRESHOLD) -> torch.Tensor:
    """(N, L) -> the same with each last cell moved to at most `threshold` robust standard deviations of the
    earlier one-step changes from the cell before it plus their median (the distance `predict` notes a last
    row apart by); as given where fewer than MIN_CLIP_ERRORS earlier changes or no spread in them judge it.
    For a forecast that assumes a return to the level, where a far last cell is no level (h94 F1)."""
    if not clips(y.shape[1]):
        return y
    centre, scale = last_expected(y)
    bound = torch.where(scale > 0, threshold * scale, torch.inf)
    last = torch.minimum(torch.maximum(y[:, -1], centre - bound), centre + bound)
    return torch.cat([y[:, :-1], last[:, None]], dim=1)


def last_expected(y: torch.Tensor, lag: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """(N, L) -> where each last cell is expected, the cell `lag` before it plus the median of the earlier
    `lag`-step changes, and those changes' robust scale (N,) (0: no spread to judge by): how far a last cell
    lies, for `clip_last` and predict's note of a last row apart alike."""
    changes = y[:, lag:-1] - y[:, : -1 - lag]
    # each row's own rounding: a batch's largest series had hidden a small series' spread (float32)
    noise = precision(y.dtype) * y.abs().amax(1, keepdim=True)
    return y[:, -1 - lag] + changes.median(1).values, robust_scale(changes, noise)

"""Holt-Winters exponential smoothing as a forecast that fits nothing: each window smoothed on its own.

Additive level, damped additive trend and, for a season of `season` > 1 steps, additive seasonal states:
ETS(A,Ad,A) in the error-correction form of Hyndman & Athanasopoulos ("Forecasting: Principles and
Practice", 3rd ed., section 8.3), its smoothing parameters chosen per window and series, as statistical
packages fit one model per series, by the lowest one-step squared error over the window from a grid
(`GRID`). Nothing is learned across windows, so it is scored, calibrated and chosen as the other
baselines are. Kept on every one of h43's 147 held-out short series (yearly to daily), it forecast with
0.64x naive's MASE (geometric mean) from an input of 70% of the rows; statsmodels' AICc-chosen Holt-Winters
(whole histories) 0.63x, and forecaster's defaults before it 0.72x (monthly: 0.51x, 0.45x, 0.63x). Its states
start from the line through the first two seasons' means, the level at the first season's end where smoothing
starts (it started at the season's centre, a trend of half a season behind): on h48's 137 series 0.98x the
held-out MAE of that start (monthly 0.95x, weekly 1.02x; bootstrap CIs include 1). With a season of 12
steps or more, every grid point is also smoothed from the start states that minimise its one-step squared
error (least squares: the recursions are linear in them, as ETS's maximum likelihood fits them), kept where
AICc says the lower error is worth the season + 1 states and the series' steps correlate positively at the
season's lag: on h48's 38 monthly series 0.90x the held-out MAE of Holt-Winters (CI 0.78-1.03), where it
fell furthest behind maximum-likelihood ETS, and the defaults' 0.92x (0.448 -> 0.410x naive, CI 0.82-1.00);
weekly windows leave AICc too few errors for 53 states. Not for quarters (the refit changed which forecast
the tool kept, 1.02x) nor without a season (1.04x on yearly series).
The season's parameter reaches 0.6 (1 - alpha) (`GAMMAS`; it stopped at 0.3): AutoETS's ETS(A,Ad,A), fitted to
h77's monthly seasonal windows, moved their seasons at a median 0.41 (1 - alpha), a quarter at 0.74 or more
(quarterly: 0.002 and 0.62). On h83's 156 fresh monthly and quarterly series (pre-registered, h93) it
forecast with 0.989x the held-out MAE of the grid to 0.3 (CI 0.978-0.999; seasonal 0.963x, non-seasonal
0.999x, no group above 1.003x): 0.717x naive's against 0.726x, AutoETS's 0.705x; from 72-month / 32-quarter
inputs 0.998x (CI 0.990-1.006). Its 42 more grid points were not measured slower: 1,000 ETTh1 windows of
7 columns, input 300, 31.4 s against 35.8 s (best of 3, a shared CPU); h83's 930 windows 46.8 against 45.2 s.
Each window is smoothed with its isolated outliers filled (`forecaster.models.outliers`; the rows themselves
are scored as given): one cell moved by 10 robust standard deviations of the steps (or times 10), in the last
two seasons of h48's 137 series, cost Holt-Winters 1.47-1.58x (times 10: 8.3-9.3x) its clean held-out MAE,
and 0.99-1.05x (1.00-1.01x) filled; on the clean series 0.99x (CI 0.98-1.00; at worst 1.15x, a price's
one-off).
The last row has no right-hand neighbour to fill it by, and a partial period (a month exported mid-month)
or a double-counted one is the commonest dirty export: its one-step error is clipped at LAST_ERROR robust
standard deviations of the window's earlier ones before it moves the states (`clipped_last`; h62 F1's 40%
month had sent the forecast from 274 to 52 within six months, and 8% to 0 with bands of [0, 0]). With the
last train row of h48's 79 monthly and quarterly series at 40% of its value, the tool's end forecast
(Holt-Winters kept on 17) had 0.75x the held-out MAE (CI 0.63-0.86; 17 better, none worse; 80% coverage
0.36 -> 0.46); no clean end forecast moved (those 79 series, 158 short 30-36 month / 18-20 quarter
segments; h67). A window of fewer than MIN_CLIP_ERRORS + 1 errors (the 4 quarters a 20-quarter file
smooths) is read as given.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
from torch import nn

from forecaster.checks import MAX_STEPS, setting
from forecaster.models.baselines import SeasonalNaiveConfig
from forecaster.models.config import check_history
from forecaster.models.outliers import MIN_CLIP_ERRORS, THRESHOLD, fill_isolated, fill_runs, robust_scale
from forecaster.models.registry import FORECAST, MODELS

# Smoothing parameters tried for every window: level (alpha), trend (beta, times alpha in the error-correction
# form), damping (phi) and season (gamma, times 1 - alpha so that gamma <= 1 - alpha). On h43's series the
# grid's 126 points before gamma 0.6 (now 168) forecast as well as 600 (0.628x and 0.631x naive's MASE from
# whole histories).
ALPHAS, BETAS = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0), (0.0, 0.05, 0.2)
PHIS, GAMMAS = (0.9, 0.98), (0.0, 0.1, 0.3, 0.6)
# Grid states and errors held at once (grid x series x (season + length)), in series chunks: 128 MB of
# float64 a chunk.
CHUNK_STATES = 1 << 24
# Start states are refitted for a season of 12 steps or more (monthly and longer): on quarterly series the
# refit changed which forecast the tool kept (fpp2's arrivals.UK: 0.11 -> 0.23 x naive's held-out MAE).
MIN_REFIT_SEASON = 12
# The first steps' mean change starts a trend where there is no season.
TREND_START_STEPS = 3
# The last step's one-step error moves the states by at most this many robust standard deviations of the
# window's earlier one-step errors (Huber), where they are at least `MIN_CLIP_ERRORS`: `clipped_last`.
LAST_ERROR = THRESHOLD


@dataclass(frozen=True)
class HoltWintersConfig(SeasonalNaiveConfig):
    """A season of `season` steps (1: none), two of which the input holds: they start the level, the trend
    and the seasonal states."""

    label = "holt_winters"

    input_size: int = setting(help="history length L", minimum=2, maximum=MAX_STEPS, cli=False)
    season_limit = "at most half of input_size ({input_size}): the first two seasons start the smoothing"
    season_optional = True

    @staticmethod
    def longest_season(input_size: int) -> int:
        return input_size // 2


def smoothing_grid(seasonal: bool) -> torch.Tensor:
    """(K, 4) rows of (alpha, beta, phi, gamma); gamma 0 alone without a season."""
    gammas = GAMMAS if seasonal else (0.0,)
    return torch.tensor(list(itertools.product(ALPHAS, BETAS, PHIS, gammas)), dtype=torch.float64)


@MODELS.register("holt_winters")
class HoltWintersForecaster(nn.Module):
    """Each series of each window smoothed from its first values, under the grid's parameters that forecast
    the window's own next steps best, then extrapolated: level + (phi + ... + phi^h) trend + season."""

    config_class = HoltWintersConfig
    task = FORECAST
    name = "holt_winters"

    def __init__(self, config: HoltWintersConfig) -> None:
        super().__init__()
        self.config = config
        self.register_buffer("grid", smoothing_grid(config.season > 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        config = self.config
        check_history(x, config.input_size, config.n_channels, self.name)
        batch, length, channels = x.shape
        series = x.transpose(1, 2).reshape(-1, length).double()
        chunk = max(1, CHUNK_STATES // (len(self.grid) * (config.season + 2 * length)))
        smoothed = [self._smooth(part) for part in series.split(chunk)] or [series[:, :0]]
        forecast = torch.cat(smoothed).view(batch, channels, config.horizon).transpose(1, 2)
        return forecast.to(x.dtype)

    def far_last_read(self) -> str | None:
        """What the forecast does with a last row far from the one before it (`history.last_row_apart`)."""
        if not clips_last(self.config):
            return None
        return (f"Holt-Winters moved its states by at most {LAST_ERROR:g} robust standard deviations of its "
                "one-step errors on it")

    def _smooth(self, y: torch.Tensor) -> torch.Tensor:
        """(N, L) float64 series -> (N, H) forecasts."""
        season, horizon, length = self.config.season, self.config.horizon, y.shape[1]
        y = fill_isolated(y, season)  # smoothed as if a typo were its neighbours' value
        y = fill_runs(y, season)  # and a few steps' shock in the last season as the seasons before
        alpha, beta, phi, gamma = (column[:, None] for column in self.grid.unbind(1))  # each (K, 1)
        if season > 1:  # the line through the first two seasons' means, and their mean deviation from it
            means = y[:, : 2 * season].view(len(y), 2, season).mean(2)
            trend = (means[:, 1] - means[:, 0]) / season
            steps = torch.arange(2 * season, dtype=y.dtype, device=y.device) - (season - 1) / 2
            line = means[:, :1] + trend[:, None] * steps  # (N, 2m), the first season's mean at its centre
            deviation = (y[:, : 2 * season] - line).view(len(y), 2, season).mean(1)
            deviation = deviation - deviation.mean(1, keepdim=True)
            level = line[:, season - 1]  # at the first season's last step, where smoothing starts
            seasonal = deviation.expand(len(self.grid), -1, -1).clone()  # (K, N, m)
        else:
            steps = min(length - 1, TREND_START_STEPS)
            level, trend = y[:, 0], (y[:, steps] - y[:, 0]) / steps
            seasonal = y.new_zeros(len(self.grid), len(y), 1)
        level, trend = level.expand(len(self.grid), -1), trend.expand(len(self.grid), -1)
        first = season if season > 1 else 1
        # The recursions are linear in the starting states (level, trend, seasonal): `basis` holds how the
        # states, and `slopes` how each one-step forecast, move with them, where AICc could take a refit.
        refitting = season >= MIN_REFIT_SEASON and math.isfinite(aicc_penalty(length - first, 5 + season))
        states, tracked = 2 + season, (length - first) * refitting
        basis = torch.eye(states, dtype=y.dtype, device=y.device).repeat(len(self.grid), 1, 1)  # (K, S, S)
        slopes = y.new_zeros(len(self.grid), tracked, states)
        errors = y.new_zeros(len(self.grid), len(y), tracked)
        squared = y.new_zeros(len(self.grid), len(y))
        clipping = clips_last(self.config)  # a partial or double-counted last period: no neighbour fills it
        seen = y.new_zeros(len(self.grid), len(y), (length - first) * clipping)  # the last error's scale
        for step in range(first, length):
            position = step % season
            error = y[:, step] - (level + phi * trend + seasonal[:, :, position])
            if clipping:
                error = clipped_last(error, seen[:, :, : step - first]) if step == length - 1 else error
                seen[:, :, step - first] = error
            squared = squared + error * error
            level = level + phi * trend + alpha * error
            trend = phi * trend + alpha * beta * error
            seasonal[:, :, position] = seasonal[:, :, position] + gamma * (1 - alpha) * error
            if refitting:
                errors[:, :, step - first] = error
                slope = basis[:, 0] + phi * basis[:, 1] + basis[:, 2 + position]  # (K, S)
                slopes[:, step - first] = slope
                basis[:, 0] = basis[:, 0] + phi * basis[:, 1] - alpha * slope
                basis[:, 1] = phi * basis[:, 1] - alpha * beta * slope
                basis[:, 2 + position] = basis[:, 2 + position] - gamma * (1 - alpha) * slope
        rows = torch.arange(len(y), device=y.device)
        best = squared.argmin(0)  # (N,): the first of equals
        if refitting:  # the refitted start where AICc says its lower error is worth its season + 1 states
            shift, refitted = _refit_start(errors, slopes, squared)
            steps = length - first
            gain = steps * (squared.min(0).values.log() - refitted.min(0).values.clamp_min(0).log())  # (N,)
            refit = gain > aicc_penalty(steps, 5 + season) - aicc_penalty(steps, 4)
            refit = refit & (season_lag_correlation(y, season) > 0)
            best = torch.where(refit, refitted.argmin(0), best)
            moved = torch.einsum("nst,nt->ns", basis[best], shift[best, rows])  # the end states' move
            moved = torch.where(refit[:, None], moved, torch.zeros_like(moved))
            level = level + moved[:, 0]
            trend = trend + moved[:, 1]
            seasonal = seasonal + moved[:, 2:]
        ahead = torch.arange(1, horizon + 1, dtype=y.dtype, device=y.device)
        damping = torch.cumsum(self.grid[best, 2:3] ** ahead, dim=1)  # (N, H): phi + ... + phi^h
        positions = (length - 1 + ahead.long()) % season
        extrapolated = level[best, rows, None] + damping * trend[best, rows, None]
        return extrapolated + seasonal[best, rows][:, positions]


def clipped_last(error: torch.Tensor, earlier: torch.Tensor) -> torch.Tensor:
    """(K, N) last one-step errors clipped at LAST_ERROR robust standard deviations (`outliers.robust_scale`)
    of each grid point's (K, N, T) earlier ones, the clipped error read wherever the last error is (the
    states' update, the squared errors the grid is chosen on, the refit's errors, whose slopes stay the
    unclipped recursions'); as given where their scale is 0. Read where the window holds MIN_CLIP_ERRORS
    earlier errors at least (`clips_last`)."""
    bound = LAST_ERROR * robust_scale(earlier.flatten(0, 1)).view_as(error)
    bound = torch.where(bound > 0, bound, math.inf)
    return torch.minimum(torch.maximum(error, -bound), bound)


def clips_last(config: HoltWintersConfig) -> bool:
    """Whether the config's window holds the MIN_CLIP_ERRORS earlier errors `clipped_last` reads."""
    return config.input_size - max(config.season, 1) - 1 >= MIN_CLIP_ERRORS


def aicc_penalty(steps: int, parameters: int) -> float:
    """AICc's penalty on `parameters` fitted to `steps` one-step errors (inf where no error is left free)."""
    free = steps - parameters - 1
    return 2 * parameters + 2 * parameters * (parameters + 1) / free if free > 0 else math.inf


def _refit_start(
    errors: torch.Tensor, slopes: torch.Tensor, squared: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(K, N, T) one-step errors, (K, T, S) their slopes in the S starting states and (K, N) squared sums ->
    the least-squares move of the starting states (K, N, S) and the squared errors after it (K, N), as
    maximum likelihood fits them; the seasonal states' sum is held (a shift of the level does the same)."""
    held = torch.ones(slopes.shape[2], dtype=slopes.dtype, device=slopes.device)
    held[:2] = 0
    gram = slopes.transpose(1, 2) @ slopes + torch.outer(held, held)  # (K, S, S)
    right = torch.einsum("knt,kts->kns", errors, slopes)
    shift = torch.einsum("kst,knt->kns", torch.linalg.pinv(gram), right)
    return shift, squared - (right * shift).sum(2)


def season_lag_correlation(y: torch.Tensor, season: int) -> torch.Tensor:
    """(N, L) series -> (N,) the autocorrelation of their steps (first differences) at the season's lag. The
    refitted start is kept only where it is positive, where the season repeats: a smooth wave of another
    period read with this season (test_selection's rate, 5 + sin(months / 6), -0.3 at lag 12) is fitted
    closely in-sample by refitted seasonal states that forecast it worse (0.23 -> 0.65 x naive's test MSE)."""
    steps = y.diff(dim=1)
    steps = steps - steps.mean(1, keepdim=True)
    lagged = (steps[:, season:] * steps[:, :-season]).sum(1)
    return lagged / (steps * steps).sum(1).clamp_min(torch.finfo(y.dtype).tiny)

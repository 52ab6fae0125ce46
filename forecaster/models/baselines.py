"""Baselines every forecast is held against, as forecaster models: naive, seasonal naive, drift, mean,
seasonal drift, seasonal mean, DLinear, NLinear.

All eight map each channel on its own ((B, L, C) -> (B, H, C), weights shared across channels).
`naive` repeats the last observed value, `seasonal_naive` the last observed season, `drift` extends the
line from the window's first value to its last, `mean` repeats the window's mean, `seasonal_drift` the
last season raised by the window's mean change from one season to the next, and `seasonal_mean` the
window's average season: nothing to fit.
`dlinear` and `nlinear` are the linear models of Zeng et al. (2023, "Are Transformers Effective for Time
Series Forecasting?", AAAI): DLinear maps a moving-average trend and the remainder with one linear layer
each, NLinear maps the window minus its last value and adds the last value back. They compute
neuralforecast's DLinear/NLinear forward (tested with copied weights) without importing neuralforecast,
Lightning or Ray, so serving them stays light.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import torch
from torch import nn

from forecaster.checks import MAX_CHANNELS, MAX_HORIZON, MAX_STEPS, setting
from forecaster.devices import sized_only
from forecaster.models.config import ModelConfig, check_history
from forecaster.models.outliers import (
    FILLED,
    RUNS_FILLED,
    SPREAD_ONLY,
    THRESHOLD,
    clip_last,
    clips,
    ended_run,
    fill_isolated,
    fill_runs,
)
from forecaster.models.registry import FORECAST, MODELS

# The baselines with nothing to fit (nor to tune), simplest first as `--model auto` plans them (Holt-Winters,
# `forecaster.models.smoothing`, fits each window's smoothing on that window alone).
NOTHING_TO_FIT = (
    "naive", "seasonal_naive", "drift", "mean", "seasonal_drift", "seasonal_mean", "holt_winters",
)  # fmt: skip
# Those that estimate a slope from their window's ends, and on a short file read as long a history as it holds
# (`planning.baseline_input`): a 2-step drift is the naive forecast plus one step's noise. Not mean: on the
# same files its level from the longer input forecast worse on all 11 series (1.45x MASE).
WHOLE_HISTORY = ("drift",)
# Those that read the longest input the rows hold (`planning.baseline_input`), whatever the default: smoothing
# from 70% of h43's rows forecast with 0.64x naive's MASE, from 96 steps at most 0.66x, from 48 0.66x.
LONGEST_HISTORY = ("holt_winters",)
# Those that read only the last value, so that a longer input forecasts the same: on a panel their default
# input counts the series they split without a train window (`planning.default_input_size`).
# Not drift nor the mean, whose slope and level are read from the whole input: from 2 steps drift forecast
# h113's long panel series with 1.24-1.64x naive's MAE (0.65-1.00x from the default input). Nor seasonal
# naive: that input is a step or two, no season (a monthly panel it had forecast was refused, h116 R2), and
# its outlier fill reads the whole window (a typo filled from 39 steps was repeated from 13).
LAST_VALUES = ("naive",)


@dataclass(frozen=True)
class BaselineConfig(ModelConfig):
    """The sizes every baseline has; naive and NLinear need nothing else."""

    label = "baseline"

    # Upper bounds (forecaster.checks): a bundle's sizes are checked before any tensor is allocated.
    input_size: int = setting(help="history length L", minimum=1, maximum=MAX_STEPS, cli=False)
    horizon: int = setting(help="forecast length H", minimum=1, maximum=MAX_HORIZON, cli=False)
    n_channels: int = setting(help="series forecast together", minimum=1, maximum=MAX_CHANNELS, cli=False)


@MODELS.register("naive")
class NaiveForecaster(nn.Module):
    """Every step of the horizon is the last observed value (`level`)."""

    config_class = BaselineConfig
    task = FORECAST
    name = "naive"

    def __init__(self, config: BaselineConfig) -> None:
        super().__init__()
        self.config = config

    def level(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, -1:, :]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        config = self.config
        check_history(x, config.input_size, config.n_channels, self.name)
        return self.level(x).expand(-1, config.horizon, -1).clone()


@dataclass(frozen=True)
class DriftConfig(BaselineConfig):
    """A window of two steps at least: the line through its first and last values."""

    label = "drift"

    input_size: int = setting(help="history length L", minimum=2, maximum=MAX_STEPS, cli=False)


@MODELS.register("drift")
class DriftForecaster(nn.Module):
    """Step h of the horizon is the last value plus h times the window's mean step, (x_L - x_1) / (L - 1):
    the random walk with drift (Hyndman & Athanasopoulos, "Forecasting: Principles and Practice", 3rd ed.,
    section 5.2), the naive forecast of a series that trends."""

    config_class = DriftConfig
    task = FORECAST

    def __init__(self, config: BaselineConfig) -> None:
        super().__init__()
        self.config = config
        steps = torch.empty(config.horizon) if sized_only() else (
            torch.arange(1, config.horizon + 1, dtype=torch.float32) / (config.input_size - 1))
        self.register_buffer("steps", steps[None, :, None], persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        config = self.config
        check_history(x, config.input_size, config.n_channels, "drift")
        last = x[:, -1:, :]
        return last + self.steps.to(x.dtype) * (last - x[:, :1, :])


@dataclass(frozen=True)
class MeanConfig(DriftConfig):
    """A window of two steps at least, as drift's: the mean of one step is naive again."""

    label = "mean"


@MODELS.register("mean")
class WindowMeanForecaster(NaiveForecaster):
    """Every step of the horizon is the mean of the window: the mean method (Hyndman & Athanasopoulos,
    "Forecasting: Principles and Practice", 3rd ed., section 5.2), the naive forecast of a series that returns
    to its level (Nile's flow, lynx's cycle), where the last value is the worse guess."""

    config_class = MeanConfig
    name = "mean"

    def level(self, x: torch.Tensor) -> torch.Tensor:
        """The mean with the last cell clipped (`outliers.clip_last`): by the method's own assumption a last
        value far off is no level (h94 F1: 2000 after days of 200 +- 5 had moved the mean to 261, a 95% band
        of 250-273 covering neither 200 nor 2000), and gross isolated outliers filled where the window's
        jumps have a spread (`FILLED`, `SPREAD_ONLY`: one big order among counts, not a lone one among zeros);
        the last value where the window ends in a run of it that chance would not so place
        (`outliers.ended_run`): the series stopped there."""
        batch, steps, channels = x.shape
        rows = x.transpose(1, 2).reshape(batch * channels, steps)
        filled = fill_isolated(rows.double(), 1, FILLED[self.name], self.name in SPREAD_ONLY, read_as=x.dtype)
        filled = filled.to(x.dtype)
        level = torch.where(self.stopped_runs(rows) > 0, rows[:, -1], clip_last(filled).mean(dim=1))
        return level.view(batch, channels)[:, None, :]

    def stopped_runs(self, rows: torch.Tensor) -> torch.Tensor:
        """(N, L) windows -> the run each ends in that the mean forecasts as the series stopped (0: none;
        `outliers.ended_run`), which `history.stopped_runs` notes."""
        return ended_run(rows)

    def far_last_read(self) -> str | None:
        """What the forecast does with a last row far from the one before it (`history.last_row_apart`)."""
        if not clips(self.config.input_size):
            return None
        return (f"The window's mean reads it as at most {THRESHOLD:g} robust standard deviations of the "
                "window's changes from the row before it")


@dataclass(frozen=True)
class SeasonalNaiveConfig(BaselineConfig):
    """A season of `season` steps, at most the history length."""

    label = "seasonal_naive"

    season: int = setting(1, "season length in steps (default: from the data's frequency)", minimum=1)
    season_limit = "at most input_size ({input_size}): the model repeats the last season it sees"
    season_optional = False  # True: where no season fits the input, none (season 1), not a refusal

    @staticmethod
    def longest_season(input_size: int) -> int:
        """The longest season an input of `input_size` steps lets the model use (`season_limit` says it)."""
        return input_size

    def validate(self) -> None:
        limit = self.season_limit.format(input_size=self.input_size)
        self.require(self.season <= self.longest_season(self.input_size), "season", limit)


def season_steps(input_size: int, horizon: int, season: int) -> torch.Tensor:
    """The input step each horizon step repeats: L - m + (h mod m) for season m (naive is season 1)."""
    if sized_only():
        return torch.empty(horizon, dtype=torch.long)
    return input_size - season + torch.arange(horizon) % season


@MODELS.register("seasonal_naive")
class SeasonalNaiveForecaster(nn.Module):
    """Step h of the horizon is the value one season earlier: x[L - m + (h mod m)] for season m. A gross
    isolated outlier (a typo: `outliers`, beyond `FILLED`'s distance) is repeated as its neighbours' value."""

    config_class = SeasonalNaiveConfig
    task = FORECAST
    name = "seasonal_naive"

    def __init__(self, config: SeasonalNaiveConfig) -> None:
        super().__init__()
        self.config = config
        source = season_steps(config.input_size, config.horizon, config.season)
        self.register_buffer("source", source, persistent=False)

    def filled(self, x: torch.Tensor) -> torch.Tensor:
        """(B, L, C) windows with each channel's isolated outliers beyond the model's distance in `FILLED`
        read as their neighbours' value (`outliers.fill_isolated`), and for seasonal naive and seasonal drift
        a few steps' shock in the last season as the seasons before (`outliers.fill_runs`)."""
        batch, length, channels = x.shape
        filled = fill_isolated(x.transpose(1, 2).reshape(-1, length).double(), self.config.season,
                               FILLED[self.name])  # fmt: skip
        if self.name in RUNS_FILLED:  # and a shock of a few steps in the last season (`outliers.fill_runs`)
            filled = fill_runs(filled, self.config.season)
        return filled.view(batch, channels, length).transpose(1, 2).to(x.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        config = self.config
        check_history(x, config.input_size, config.n_channels, self.name)
        return self.filled(x)[:, self.source, :]


@dataclass(frozen=True)
class SeasonalDriftConfig(SeasonalNaiveConfig):
    """A season shorter than the history: one season's change at least is seen."""

    label = "seasonal_drift"
    season_limit = "less than input_size ({input_size}): the model extends the change between seasons it sees"

    @staticmethod
    def longest_season(input_size: int) -> int:
        return input_size - 1


@MODELS.register("seasonal_drift")
class SeasonalDriftForecaster(SeasonalNaiveForecaster):
    """Seasonal naive plus the trend: step h is x[L - m + (h mod m)] + (h // m + 1) d, where d is the mean
    of the window's seasonal differences x_t - x_{t-m}, (sum of its last m values - sum of its first m) /
    (L - m): the seasonal random walk with drift, for a season that grows (air passengers: seasonal naive's
    test MSE 0.473, this 0.110). A gross isolated outlier is read as its neighbours' value, as seasonal
    naive's: a typo of +4000 in 24 months had raised every month of the next year by 330 (h62)."""

    config_class = SeasonalDriftConfig
    name = "seasonal_drift"

    def __init__(self, config: SeasonalDriftConfig) -> None:
        super().__init__(config)
        seasons_ahead = torch.empty(config.horizon) if sized_only() else (
            torch.arange(config.horizon, dtype=torch.float32) // config.season + 1)
        self.register_buffer("seasons_ahead", seasons_ahead[None, :, None], persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_history(x, self.config.input_size, self.config.n_channels, self.name)
        x = self.filled(x)
        last_season = x[:, self.source, :]
        season, seen = self.config.season, self.config.input_size - self.config.season
        change = (x[:, -season:].sum(1, keepdim=True) - x[:, :season].sum(1, keepdim=True)) / seen
        return last_season + self.seasons_ahead.to(x.dtype) * change


@dataclass(frozen=True)
class SeasonalMeanConfig(SeasonalNaiveConfig):
    """Two seasons at least in the history: of one, the average season is the last one again."""

    label = "seasonal_mean"
    season_limit = "at most half of input_size ({input_size}): the model averages the seasons it sees"

    @staticmethod
    def longest_season(input_size: int) -> int:
        return input_size // 2


@MODELS.register("seasonal_mean")
class SeasonalMeanForecaster(SeasonalNaiveForecaster):
    """The window's average season at the last season's level: step h is the mean of the values one, two, ...
    seasons before it, x[L - m + (h mod m) - k m] over every k the window holds, less the average season's
    mean, plus the last m values' mean. A season seen once repeats its noise (nottem's monthly temperatures:
    seasonal naive's test MSE 0.134, this 0.066); the level is the latest, as seasonal naive's (a season
    averaged at the window's level missed elec_equip's post-2009 level: 0.202, five times seasonal naive's
    test MSE, this 0.051). Isolated outliers are averaged as their neighbours' value (`outliers`): a typo is
    not carried into every later season."""

    config_class = SeasonalMeanConfig
    name = "seasonal_mean"

    def __init__(self, config: SeasonalMeanConfig) -> None:
        super().__init__(config)
        if sized_only():
            self.register_buffer("weights", torch.empty(config.horizon, config.input_size), persistent=False)
            return
        season, steps = config.season, torch.arange(config.input_size)
        last = season_steps(config.input_size, season, season)  # the last season's steps, in order
        same = steps[None, :] % season == torch.cat([self.source, last])[:, None] % season
        average = same.double() / same.sum(dim=1, keepdim=True)  # each step's average over the seasons
        latest = (steps >= config.input_size - season).double() / season
        weights = average[: config.horizon] - average[config.horizon :].mean(dim=0) + latest
        self.register_buffer("weights", weights.float(), persistent=False)  # (H, L)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        config = self.config
        check_history(x, config.input_size, config.n_channels, self.name)
        x = self.filled(x)  # averaged as if a typo were its neighbours' value (`outliers`)
        return torch.einsum("hl,blc->bhc", self.weights.to(x.dtype), x)


@dataclass(frozen=True)
class DLinearConfig(BaselineConfig):
    """DLinear's moving-average window (neuralforecast's default)."""

    label = "dlinear"

    moving_avg_window: int = setting(
        25, "odd window of DLinear's moving-average trend", minimum=1, maximum=MAX_STEPS
    )

    def validate(self) -> None:
        self.require(self.moving_avg_window % 2 == 1, "moving_avg_window", "odd")


class _ChannelWise(nn.Module, abc.ABC):
    """(B, L, C) -> (B, C, L) for a univariate map over the last axis, and its (B, C, H) answer back."""

    task = FORECAST

    def __init__(self, config: BaselineConfig) -> None:
        super().__init__()
        self.config = config

    @abc.abstractmethod
    def map(self, series: torch.Tensor) -> torch.Tensor:
        """(..., L) -> (..., H)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        config = self.config
        check_history(x, config.input_size, config.n_channels, type(self).__name__)
        return self.map(x.transpose(1, 2)).transpose(1, 2)


@MODELS.register("dlinear")
class DLinearForecaster(_ChannelWise):
    """Trend = moving average (edges padded with the first / last value); forecast = W_t trend + W_s rest."""

    config_class = DLinearConfig

    def __init__(self, config: DLinearConfig) -> None:
        super().__init__(config)
        self.linear_trend = nn.Linear(config.input_size, config.horizon)
        self.linear_season = nn.Linear(config.input_size, config.horizon)
        self.average = nn.AvgPool1d(config.moving_avg_window, stride=1)

    def map(self, series: torch.Tensor) -> torch.Tensor:
        pad = (self.config.moving_avg_window - 1) // 2
        edge = (*series.shape[:-1], pad)
        padded = torch.cat([series[..., :1].expand(edge), series, series[..., -1:].expand(edge)], dim=-1)
        trend = self.average(padded.flatten(0, 1)[:, None])[:, 0].view_as(series)
        return self.linear_trend(trend) + self.linear_season(series - trend)


@MODELS.register("nlinear")
class NLinearForecaster(_ChannelWise):
    """forecast = last + W (window - last)."""

    config_class = BaselineConfig

    def __init__(self, config: BaselineConfig) -> None:
        super().__init__(config)
        self.linear = nn.Linear(config.input_size, config.horizon)

    def map(self, series: torch.Tensor) -> torch.Tensor:
        last = series[..., -1:]
        return self.linear(series - last) + last

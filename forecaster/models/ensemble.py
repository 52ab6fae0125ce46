"""A weighted average of forecasters, the model `--model auto` keeps when a combination of its candidates
forecasts the validation split clearly better than any one of them.

    forecast = sum_k w_k * member_k(last L_k steps of the window),   w_k >= 0, sum_k w_k = 1

A weight may also be one per channel (w_kc, summing to 1 over k for each channel c): one-hot, it gives each
column of a file the forecast that fits it (`combine.per_column_of`).

Members keep their own input lengths (the ensemble reads the longest). The weights come from greedy
ensemble selection (Caruana, Niculescu-Mizil, Crew and Ksikes 2004, "Ensemble Selection from Libraries of
Models", ICML; what AutoGluon-TimeSeries' WeightedEnsemble does): `ROUNDS` times, add with replacement the
member that most lowers the validation MSE of the running average. The bundle keeps each member's name and
config and rebuilds every member from them, so loading an ensemble unpickles nothing either.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from forecaster.checks import MAX_CHANNELS, MAX_HORIZON, MAX_STEPS, is_number, setting
from forecaster.models.config import ModelConfig
from forecaster.models.registry import FORECAST, MODELS, forecast_outputs, get_model

ROUNDS = 25  # greedy selections: weights are multiples of 1/25
# More than `--model auto` plans with every --candidates model, each bagged (training.settings.BAG_SEEDS at
# each of two input sizes: 7 bagged models of 10 members and the two baselines).
MAX_MEMBERS = 128


@dataclass(frozen=True)
class EnsembleConfig(ModelConfig):
    """The members ({"name", "config"} of registered forecasters) and their weights."""

    label = "ensemble"

    input_size: int = setting(help="history length L: the longest member's", minimum=1, maximum=MAX_STEPS,
                              cli=False)
    horizon: int = setting(help="forecast length H", minimum=1, maximum=MAX_HORIZON, cli=False)
    n_channels: int = setting(help="series forecast together", minimum=1, maximum=MAX_CHANNELS, cli=False)
    members: list = setting([], "each member's registered name and config", cli=False)
    weights: list = setting([], "each member's weight, or one per channel (non-negative, summing to 1)",
                            cli=False)

    def validate(self) -> None:
        self.require(
            isinstance(self.members, list) and 2 <= len(self.members) <= MAX_MEMBERS,
            "members", f"a list of 2 to {MAX_MEMBERS} members",
        )
        self.require(
            all(isinstance(member, dict) and set(member) == {"name", "config"}
                and isinstance(member["name"], str) and isinstance(member["config"], dict)
                for member in self.members),
            "members", 'objects {"name": a registered forecaster, "config": its config}',
        )
        rows = [weight if isinstance(weight, list) else [weight] * self.n_channels for weight in self.weights]
        self.require(
            isinstance(self.weights, list) and len(self.weights) == len(self.members)
            and len({isinstance(weight, list) for weight in self.weights}) == 1
            and _sum_to_one(rows, self.n_channels),
            "weights", "one non-negative number per member, or one per member and channel, summing to 1",
        )
        for member in self.members:
            config = member["config"]
            self.require(member["name"].lower() != "ensemble", "members", "forecasters other than ensembles")
            self.require(
                config.get("horizon") == self.horizon and config.get("n_channels") == self.n_channels,
                "members", f"forecasters of horizon {self.horizon} and {self.n_channels} channel(s)",
            )
            size = config.get("input_size")
            self.require(
                isinstance(size, int) and 1 <= size <= self.input_size,
                "members", f"forecasters whose input_size is at most the ensemble's ({self.input_size})",
            )

    @property
    def quantile_levels(self) -> list[int]:
        """The levels of the members' quantile heads where they all have the same ones, else none."""
        levels = {tuple(member["config"].get("quantile_levels") or ()) for member in self.members}
        return list(levels.pop()) if len(levels) == 1 else []


def _sum_to_one(rows: list, channels: int) -> bool:
    """Whether `rows` are `channels` non-negative numbers each, whose columns sum to 1."""
    if not all(len(row) == channels and all(is_number(w) and w >= 0 for w in row) for row in rows):
        return False
    return all(math.isclose(sum(column), 1.0, abs_tol=1e-6) for column in zip(*rows, strict=True))


@MODELS.register("ensemble")
class Ensemble(nn.Module):
    """The weighted average of `members`' forecasts, each member reading its own last L_k steps."""

    config_class = EnsembleConfig
    task = FORECAST
    trainable = False  # built by `--model auto` from trained candidates, not trained by name

    def __init__(self, config: EnsembleConfig, members: list[nn.Module] | None = None) -> None:
        """Members built from `config`, or the given built ones (what `config` describes)."""
        super().__init__()
        self.config = config
        if members is None:
            members = [get_model(member["name"], **member["config"]) for member in config.members]
        self.members = nn.ModuleList(members)
        weights = torch.tensor(config.weights, dtype=torch.float32)  # (K,) or (K, C), for (B, H, C) forecasts
        self.register_buffer("weights", weights.reshape(len(weights), 1, 1, -1), persistent=False)

    @classmethod
    def of(cls, members: list[tuple[str, nn.Module]], weights: list[float], input_size: int = 1) -> Ensemble:
        """An ensemble of built models, given as (registered name, model), holding those very modules; a
        member that is itself an ensemble (a bagged candidate) gives its members, their weights scaled. It
        reads the longest member's input, or `input_size` where longer (the windows its weights were chosen
        on, when the candidate that read the longest is not among the members kept)."""
        flat = []
        for (name, model), weight in zip(members, weights, strict=True):
            if isinstance(model, Ensemble):
                flat += [(inner["name"], module, np.multiply(weight, share)) for inner, module, share in
                         zip(model.config.members, model.members, model.config.weights, strict=True)]
            else:
                flat.append((name, model, weight))
        members, weights = [(name, model) for name, model, _ in flat], [weight for *_, weight in flat]
        shape = max((np.shape(weight) for weight in weights), key=len)  # per channel where any member is
        first = members[0][1].config
        config = EnsembleConfig(
            members=[{"name": name, "config": model.config.to_dict()} for name, model in members],
            weights=[np.broadcast_to(np.asarray(weight, dtype=float), shape).tolist() for weight in weights],
            input_size=max(input_size, *(model.config.input_size for _, model in members)),
            horizon=first.horizon,
            n_channels=first.n_channels,
        )
        return cls(config, [model for _, model in members])

    def _check(self, x: torch.Tensor) -> None:
        if x.ndim != 3 or x.shape[1] != self.config.input_size:
            expected = f"(batch, {self.config.input_size}, channels)"
            raise ValueError(f"ensemble expects input {expected}, got {tuple(x.shape)}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._check(x)
        forecasts = zip(self.weights.to(x.dtype), member_forecasts(self.members, x), strict=True)
        return sum(weight * forecast for weight, forecast in forecasts)

    def bounds(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(point, lower, upper) averaged with the weights, quantile by quantile, for members with the same
        quantile head: the quantile average ("Vincentization"), sharper than averaging the distributions
        (Lichtendahl, Grushka-Cockayne and Winkler 2013, Management Science); calibration follows on
        validation as for any model."""
        if not self.config.quantile_levels:
            raise ValueError("this ensemble's members have no common quantile head")
        self._check(x)
        outputs = [forecast_outputs(member, x[:, x.shape[1] - member.config.input_size :])
                   for member in self.members]  # fmt: skip
        weights = self.weights.to(x.dtype).unsqueeze(-1)  # over the (B, H, C, 1 + 2Q) outputs
        averaged = sum(weight * output for weight, output in zip(weights, outputs, strict=True))
        count = (averaged.shape[-1] - 1) // 2
        return averaged[..., 0], averaged[..., 1 : 1 + count], averaged[..., 1 + count :]


def member_forecasts(members: Iterable[nn.Module], x: torch.Tensor) -> list[torch.Tensor]:
    """Each member's (B, H, C) forecast of the windows `x` (B, L, C_in), read from its own last L_k steps."""
    return [member(x[:, x.shape[1] - member.config.input_size :]) for member in members]


def select_weights(gram: np.ndarray, cross: np.ndarray, rounds: int = ROUNDS) -> np.ndarray:
    """(K,) greedy ensemble-selection weights from the members' validation forecasts f_k and targets y,
    given as gram[j, k] = <f_j, f_k> and cross[k] = <f_k, y> (the squared error of sum_k w_k f_k is
    w' G w - 2 w' c + |y|^2, so the forecasts themselves are not needed). Ties go to the earlier member."""
    counts = np.zeros(len(cross))
    for step in range(1, rounds + 1):
        trials = (counts[None, :] + np.eye(len(cross))) / step  # row k: the weights if member k is added
        losses = np.einsum("ij,jk,ik->i", trials, gram, trials) - 2 * trials @ cross
        counts[int(np.argmin(losses))] += 1
    return counts / rounds


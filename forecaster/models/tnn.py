"""A causal Toeplitz neural network forecaster: next-step prediction rolled out over the horizon."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from forecaster.models.config import ModelConfig, check_history
from forecaster.models.registry import register_model
from forecaster.nn.tnn import TnnBlock

# The config fields each Toeplitz operator takes (the others are ignored for that operator).
OPERATOR_OPTIONS: dict[str, tuple[str, ...]] = {
    "tno": ("rpe_dim", "rpe_layers", "decay"),
    "fd": ("rpe_dim", "rpe_layers"),
    "ski": ("rank", "sparse_width", "decay", "knots"),
}


@dataclass(frozen=True)
class CausalTnnConfig(ModelConfig):
    """Everything needed to rebuild a CausalTnnForecaster; round-trips through JSON (to_dict/from_dict).

    `operator` is "tno", "fd" or "ski"; `rpe_dim`/`rpe_layers` configure the TNO/FD-TNO kernel MLP,
    `rank`/`sparse_width`/`knots` the SKI-TNO, `decay` the TNO decay bias and the SKI time warp.
    """

    label = "TNN"

    input_size: int
    horizon: int
    n_channels: int
    d_model: int = 32
    n_layers: int = 2
    operator: str = "fd"
    gtu_expand: int = 1
    glu_expand: int = 2
    dropout: float = 0.0
    rpe_dim: int = 32
    rpe_layers: int = 2
    decay: float = 0.99
    rank: int = 16
    sparse_width: int = 9
    knots: int = 16

    def __post_init__(self) -> None:
        minimum = {"input_size": 1, "horizon": 1, "n_channels": 1, "d_model": 1, "n_layers": 1,
                   "gtu_expand": 1, "glu_expand": 1, "rpe_dim": 1, "rpe_layers": 0, "rank": 2,
                   "sparse_width": 1, "knots": 1}
        self.require_integers(minimum)
        self.require(self.operator in OPERATOR_OPTIONS, "operator", f"one of {sorted(OPERATOR_OPTIONS)}")
        self.require(self.sparse_width % 2 == 1, "sparse_width", "odd")
        decay = self.decay
        self.require(isinstance(decay, int | float) and 0 < decay < 1, "decay", "a number in (0, 1)")
        dropout = self.dropout
        self.require(isinstance(dropout, int | float) and not isinstance(dropout, bool) and 0 <= dropout < 1,
               "dropout", "a number in [0, 1)")

    def operator_options(self) -> dict[str, Any]:
        """The keyword arguments the chosen Toeplitz operator takes."""
        return {name: getattr(self, name) for name in OPERATOR_OPTIONS[self.operator]}


@register_model("tnn")
class CausalTnnForecaster(nn.Module):
    """Causal TNN (paper 003 operators): `next_step` predicts x[t + 1] from x[.. t] at every t at once.

    `forward` standardizes the window per series (mean, std over time), predicts one step, appends it,
    drops the oldest step and repeats `horizon` times, so every step sees exactly `input_size` values
    as in training windows; the result is returned in x's units.
    """

    def __init__(
        self,
        input_size: int,
        horizon: int,
        n_channels: int,
        d_model: int = 32,
        n_layers: int = 2,
        operator: str = "fd",
        gtu_expand: int = 1,
        glu_expand: int = 2,
        dropout: float = 0.0,
        rpe_dim: int = 32,
        rpe_layers: int = 2,
        decay: float = 0.99,
        rank: int = 16,
        sparse_width: int = 9,
        knots: int = 16,
    ) -> None:
        super().__init__()
        self.config = config = CausalTnnConfig(
            input_size=input_size,
            horizon=horizon,
            n_channels=n_channels,
            d_model=d_model,
            n_layers=n_layers,
            operator=operator,
            gtu_expand=gtu_expand,
            glu_expand=glu_expand,
            dropout=dropout,
            rpe_dim=rpe_dim,
            rpe_layers=rpe_layers,
            decay=decay,
            rank=rank,
            sparse_width=sparse_width,
            knots=knots,
        )
        self.embedding = nn.Linear(n_channels, config.d_model)
        self.blocks = nn.ModuleList(
            TnnBlock(
                config.d_model,
                operator=config.operator,
                causal=True,
                gtu_expand=config.gtu_expand,
                glu_expand=config.glu_expand,
                dropout=config.dropout,
                **config.operator_options(),
            )
            for _ in range(config.n_layers)
        )
        self.norm = nn.RMSNorm(config.d_model)
        self.head = nn.Linear(config.d_model, n_channels)

    def next_step(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, n, C) -> (B, n, C) where output t predicts x[:, t + 1]; causal: it only sees x[:, :t + 1]."""
        h = self.embedding(x)
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, input_size, n_channels) -> forecast (B, horizon, n_channels), both in x's units."""
        config = self.config
        check_history(x, config.input_size, config.n_channels, "CausalTnnForecaster")
        mean = x.mean(dim=1, keepdim=True)
        scale = torch.sqrt(x.var(dim=1, keepdim=True, correction=0) + 1e-5)
        window = (x - mean) / scale
        steps = []
        for _ in range(config.horizon):
            step = self.next_step(window)[:, -1:]
            steps.append(step)
            window = torch.cat([window[:, 1:], step], dim=1)
        return torch.cat(steps, dim=1) * scale + mean

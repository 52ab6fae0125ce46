"""A causal Toeplitz neural network forecaster: next-step prediction rolled out over the horizon."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from forecaster.checks import MAX_CHANNELS, MAX_HORIZON, MAX_LAYERS, MAX_STEPS, MAX_WIDTH, setting
from forecaster.models.config import ModelConfig, check_history
from forecaster.models.registry import FORECAST, MODELS
from forecaster.nn.tnn import TnnBlock

# The config fields each Toeplitz operator takes (the others are ignored for that operator).
OPERATOR_OPTIONS: dict[str, tuple[str, ...]] = {
    "tno": ("rpe_dim", "rpe_layers", "decay"),
    "fd": ("rpe_dim", "rpe_layers"),
    "ski": ("rank", "sparse_width", "decay", "knots"),
}


@dataclass(frozen=True)
class CausalTnnConfig(ModelConfig):
    """Everything needed to rebuild a CausalTnnForecaster; each field declared once, with its range.

    `operator` is "tno", "fd" or "ski"; `rpe_dim`/`rpe_layers` configure the TNO/FD-TNO kernel MLP,
    `rank`/`sparse_width`/`knots` the SKI-TNO, `decay` the TNO decay bias and the SKI time warp.
    """

    label = "TNN"

    # Upper bounds (forecaster.checks): a bundle's sizes are checked before any tensor is allocated; the
    # expansion factors multiply D (defaults 1 and 2), so 16 is already a very wide mixer.
    input_size: int = setting(help="history length L", minimum=1, maximum=MAX_STEPS, cli=False)
    horizon: int = setting(help="forecast length H", minimum=1, maximum=MAX_HORIZON, cli=False)
    n_channels: int = setting(help="series forecast together", minimum=1, maximum=MAX_CHANNELS, cli=False)
    d_model: int = setting(32, "model width D", minimum=1, maximum=MAX_WIDTH)
    n_layers: int = setting(2, "TNN blocks", minimum=1, maximum=MAX_LAYERS)
    operator: str = setting("fd", "Toeplitz operator", choices=OPERATOR_OPTIONS)
    gtu_expand: int = setting(1, "width factor of the token mixer (GTU)", minimum=1, maximum=16)
    glu_expand: int = setting(2, "width factor of the channel mixer (GLU)", minimum=1, maximum=16)
    dropout: float = setting(0.0, "dropout rate", minimum=0, below=1)
    rpe_dim: int = setting(
        32, "hidden width of the relative-position MLP (tno, fd)", minimum=1, maximum=MAX_WIDTH
    )
    rpe_layers: int = setting(
        2, "hidden layers of the relative-position MLP (tno, fd)", minimum=0, maximum=MAX_LAYERS
    )
    decay: float = setting(0.99, "decay bias (tno) and time warp (ski)", above=0, below=1)
    rank: int = setting(16, "low-rank size of the SKI operator", minimum=2, maximum=MAX_STEPS)
    sparse_width: int = setting(
        9, "odd width of the SKI operator's sparse part", minimum=1, maximum=MAX_STEPS
    )
    knots: int = setting(16, "interpolation knots of the SKI operator", minimum=1, maximum=MAX_STEPS)

    def validate(self) -> None:
        self.require(self.sparse_width % 2 == 1, "sparse_width", "odd")

    def operator_options(self) -> dict[str, Any]:
        """The keyword arguments the chosen Toeplitz operator takes."""
        return {name: getattr(self, name) for name in OPERATOR_OPTIONS[self.operator]}


@MODELS.register("tnn")
class CausalTnnForecaster(nn.Module):
    """Causal TNN (paper 003 operators): `next_step` predicts x[t + 1] from x[.. t] at every t at once.

    `forward` standardizes the window per series (mean, std over time), predicts one step, appends it,
    drops the oldest step and repeats `horizon` times, so every step sees exactly `input_size` values
    as in training windows; the result is returned in x's units.
    """

    config_class = CausalTnnConfig
    task = FORECAST

    def __init__(self, config: CausalTnnConfig) -> None:
        super().__init__()
        self.config = config
        n_channels = config.n_channels
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

"""The S3Attention forecaster (paper 001, Algorithm 3): (B, L, C) history -> (B, H, C) forecast."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from forecaster.models.config import ModelConfig, check_history, is_int
from forecaster.models.registry import register_model
from forecaster.nn.fourier import FourierExtrapolation
from forecaster.nn.skeleton import S3AttentionMixer
from forecaster.nn.smoother import ACTIVATIONS, NORMS


@dataclass(frozen=True)
class S3AttentionConfig(ModelConfig):
    """Everything needed to rebuild an S3AttentionForecaster; round-trips through JSON (to_dict/from_dict)."""

    label = "S3Attention"

    input_size: int
    horizon: int
    n_channels: int
    d_model: int = 32
    n_heads: int = 8
    e_layers: int = 2
    left_rank: int = 8
    right_rank: int = 8
    fold: int = 8
    n_harmonics: int | None = None
    dropout: float = 0.05
    ffn: bool = False
    seed: int = 0
    activation: str = "elu"
    norm: str = "batch_time"

    def __post_init__(self) -> None:
        minimum = {"input_size": 2, "horizon": 1, "n_channels": 1, "d_model": 1, "n_heads": 1, "e_layers": 1,
                   "left_rank": 1, "right_rank": 1, "fold": 1, "seed": 0}
        self.require_integers(minimum)
        harmonics = self.n_harmonics
        self.require(harmonics is None or (is_int(harmonics) and harmonics >= 0), "n_harmonics",
                 "null or an integer >= 0")
        self.require(self.d_model % self.n_heads == 0 and self.d_model % self.fold == 0, "d_model",
                 f"divisible by n_heads ({self.n_heads}) and fold ({self.fold})")
        dropout = self.dropout
        self.require(isinstance(dropout, int | float) and not isinstance(dropout, bool) and 0 <= dropout < 1,
                 "dropout", "a number in [0, 1)")
        self.require(isinstance(self.ffn, bool), "ffn", "true or false")
        self.require(self.activation in ACTIVATIONS, "activation", f"one of {ACTIVATIONS}")
        self.require(self.norm in NORMS, "norm", f"one of {NORMS}")


def sinusoidal_positions(length: int, d_model: int) -> torch.Tensor:
    """Fixed sine/cosine positional encoding (length, d_model) of "Attention is all you need"."""
    position = torch.arange(length, dtype=torch.float64)[:, None]
    frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    table = torch.zeros(length, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: d_model // 2])
    return table.to(torch.get_default_dtype())


class _EncoderLayer(nn.Module):
    """x + S3Attention(x) (no norm on the residual stream, as the reference), then an optional x + FFN(x)."""

    def __init__(self, config: S3AttentionConfig, seed: int) -> None:
        super().__init__()
        self.mixer = S3AttentionMixer(
            config.d_model,
            config.n_heads,
            config.input_size,
            left_rank=config.left_rank,
            right_rank=config.right_rank,
            fold=config.fold,
            dropout=config.dropout,
            activation=config.activation,
            norm=config.norm,
            seed=seed,
        )
        self.ffn = (
            nn.Sequential(
                nn.Linear(config.d_model, 4 * config.d_model),
                nn.GELU(),
                nn.Dropout(config.dropout),
                nn.Linear(4 * config.d_model, config.d_model),
                nn.Dropout(config.dropout),
            )
            if config.ffn
            else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.mixer(x)
        return x if self.ffn is None else x + self.ffn(x)


@register_model("s3attention")
class S3AttentionForecaster(nn.Module):
    """Forecaster of paper 001: instance standardization, S3Attention encoder, Fourier extrapolation.

    Standardizes each series over time with sigma = sqrt(unbiased var + 1) (the reference's +1, not an
    epsilon), embeds time steps by Conv1d(C -> D, kernel 1) plus fixed sinusoidal positions, applies
    `e_layers` of x + SkeletonAttention(Smoother(x)), projects back to C channels, extrapolates the
    horizon with the 1 + 2 * n_harmonics lowest frequencies (default n_harmonics = horizon) and undoes the
    standardization. Layer i samples its index sets with seed + i. Subtracting the mean makes the model
    shift-equivariant per channel: model(x + b) = model(x) + b.
    """

    def __init__(
        self,
        input_size: int,
        horizon: int,
        n_channels: int,
        d_model: int = 32,
        n_heads: int = 8,
        e_layers: int = 2,
        left_rank: int = 8,
        right_rank: int = 8,
        fold: int = 8,
        n_harmonics: int | None = None,
        dropout: float = 0.05,
        ffn: bool = False,
        seed: int = 0,
        activation: str = "elu",
        norm: str = "batch_time",
    ) -> None:
        super().__init__()
        self.config = S3AttentionConfig(
            input_size=input_size,
            horizon=horizon,
            n_channels=n_channels,
            d_model=d_model,
            n_heads=n_heads,
            e_layers=e_layers,
            left_rank=left_rank,
            right_rank=right_rank,
            fold=fold,
            n_harmonics=n_harmonics,
            dropout=dropout,
            ffn=ffn,
            seed=seed,
            activation=activation,
            norm=norm,
        )
        self.value_embedding = nn.Conv1d(n_channels, d_model, kernel_size=1)
        self.register_buffer("positions", sinusoidal_positions(input_size, d_model), persistent=False)
        self.embedding_dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(_EncoderLayer(self.config, seed + index) for index in range(e_layers))
        self.projection = nn.Linear(d_model, n_channels)
        self.extrapolation = FourierExtrapolation(input_size, horizon, n_harmonics)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, input_size, n_channels) -> forecast (B, horizon, n_channels), both in x's units."""
        config = self.config
        check_history(x, config.input_size, config.n_channels, "S3AttentionForecaster")
        mean = x.mean(dim=1, keepdim=True)
        scale = torch.sqrt(x.var(dim=1, keepdim=True, correction=1) + 1.0)
        h = self.value_embedding(((x - mean) / scale).transpose(1, 2)).transpose(1, 2)
        h = self.embedding_dropout(h + self.positions)
        for layer in self.layers:
            h = layer(h)
        return self.extrapolation(self.projection(h)) * scale + mean


# Reference per-dataset widths (REFERENCE.md 1.8): ETTm2, Exchange, ILI, Traffic D=32; Electricity D=512.
# ETTh1, ETTh2, ETTm1 and Weather have no reference run: they take D=32 like the other small-channel sets.
_PRESET_WIDTHS = {
    "ETTh1": 32,
    "ETTh2": 32,
    "ETTm1": 32,
    "ETTm2": 32,
    "Electricity": 512,
    "Exchange": 32,
    "Traffic": 32,
    "Weather": 32,
    "ILI": 32,
}
_PRESET_ALIASES = {"exchangerate": "Exchange", "nationalillness": "ILI"}


def preset(dataset_name: str) -> dict[str, Any]:
    """Reference model hyperparameters for a benchmark dataset (case-insensitive; file stems accepted).

    Returns width/depth keywords only (heads 8, ranks 8/8, fold 8, dropout 0.05, no FFN); pass them to
    `get_model("s3attention", input_size=..., horizon=..., n_channels=..., **preset(name))`.
    """
    key = re.sub(r"[^0-9a-z]", "", dataset_name.lower())
    canonical = {name.lower(): name for name in _PRESET_WIDTHS} | _PRESET_ALIASES
    if key not in canonical:
        raise ValueError(f"no S3Attention preset for dataset {dataset_name!r}; expected one of "
                         f"{', '.join(_PRESET_WIDTHS)}")
    return {
        "d_model": _PRESET_WIDTHS[canonical[key]],
        "n_heads": 8,
        "e_layers": 2,
        "left_rank": 8,
        "right_rank": 8,
        "fold": 8,
        "dropout": 0.05,
        "ffn": False,
    }

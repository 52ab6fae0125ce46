"""The S3Attention forecaster (paper 001, Algorithm 3): (B, L, C) history -> (B, H, C) forecast."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from forecaster.checks import (
    MAX_CHANNELS,
    MAX_HORIZON,
    MAX_LAYERS,
    MAX_SEED,
    MAX_STEPS,
    MAX_WIDTH,
    increasing_levels,
    parse_levels,
    setting,
)
from forecaster.devices import sized_only
from forecaster.models.config import ModelConfig, check_history
from forecaster.models.registry import FORECAST, MODELS
from forecaster.nn.fourier import FourierExtrapolation
from forecaster.nn.skeleton import S3AttentionMixer
from forecaster.nn.smoother import ACTIVATIONS, NORMS

ANCHORS = ("mean", "last", "seam")


@dataclass(frozen=True)
class S3AttentionConfig(ModelConfig):
    """Everything needed to rebuild an S3AttentionForecaster; each field declared once, with its range."""

    label = "S3Attention"

    # Upper bounds (forecaster.checks): a bundle's sizes are checked before any tensor is allocated.
    input_size: int = setting(help="history length L", minimum=2, maximum=MAX_STEPS, cli=False)
    horizon: int = setting(help="forecast length H", minimum=1, maximum=MAX_HORIZON, cli=False)
    n_channels: int = setting(help="series forecast together", minimum=1, maximum=MAX_CHANNELS, cli=False)
    d_model: int = setting(32, "model width D", minimum=1, maximum=MAX_WIDTH)
    n_heads: int = setting(8, "attention heads", minimum=1, maximum=MAX_WIDTH)
    e_layers: int = setting(2, "encoder layers", minimum=1, maximum=MAX_LAYERS)
    # Ranks above the axis they sample (input_size, head size) sample all of it.
    left_rank: int = setting(8, "sampled token positions of skeleton attention", minimum=1, maximum=MAX_STEPS)
    right_rank: int = setting(
        8, "sampled head dimensions of skeleton attention", minimum=1, maximum=MAX_WIDTH
    )
    fold: int = setting(8, "channel groups of the smoother", minimum=1, maximum=MAX_WIDTH)
    n_harmonics: int | None = setting(
        None, "Fourier harmonics kept (default: horizon)", minimum=0, maximum=MAX_STEPS
    )
    dropout: float = setting(0.05, "dropout rate", minimum=0, below=1)
    ffn: bool = setting(False, "add a feed-forward block to every layer")
    seed: int = setting(
        0, "seed of the sampled index sets (training's --seed)", minimum=0, maximum=MAX_SEED, cli=False
    )
    activation: str = setting("elu", "activation of the smoother", choices=ACTIVATIONS)
    norm: str = setting("batch_time", "normalization of the smoother", choices=NORMS)
    anchor: str = setting(
        "mean", "level removed before encoding and added back after decoding: the window's mean (the "
        "reference); or its last value, with a zero-initialized output layer so that the untrained model is "
        "the naive forecast (last); or that, with the decoded curve shifted to pass through the last "
        "observation, so that the forecast continues the series without a jump at step 1 (seam)",
        choices=ANCHORS,
    )
    skip: bool = setting(
        False, "add a zero-initialized linear map of the standardized window to the decoded horizon "
        "(NLinear's map): the short-term dynamics get a direct path, the encoder models what it misses",
    )
    quantile_levels: list = setting(
        [], "interval levels of a learned quantile head, e.g. 80,95 (trained with --loss quantile)",
        flag="--levels", parse=parse_levels,
    )

    def validate(self) -> None:
        self.require(self.d_model % self.n_heads == 0 and self.d_model % self.fold == 0, "d_model",
                     f"divisible by n_heads ({self.n_heads}) and fold ({self.fold})")
        if self.quantile_levels:
            self.require(increasing_levels(self.quantile_levels), "quantile_levels",
                         "distinct integers 1-99 in increasing order")


def sinusoidal_positions(length: int, d_model: int) -> torch.Tensor:
    """Fixed sine/cosine positional encoding (length, d_model) of "Attention is all you need"."""
    if sized_only():
        return torch.empty(length, d_model)
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


@MODELS.register("s3attention")
class S3AttentionForecaster(nn.Module):
    """Forecaster of paper 001: instance standardization, S3Attention encoder, Fourier extrapolation.

    Standardizes each series over time with sigma = sqrt(unbiased var + 1) (the reference's +1, not an
    epsilon) around its mean (or its last value, `anchor="last"`), embeds time steps by Conv1d(C -> D,
    kernel 1) plus fixed sinusoidal positions, applies `e_layers` of x + SkeletonAttention(Smoother(x)),
    projects back to C channels, extrapolates the horizon with the 1 + 2 * n_harmonics lowest frequencies
    (default n_harmonics = horizon) and undoes the standardization. Layer i samples its index sets with
    seed + i. Subtracting the level makes the model shift-equivariant per channel: model(x + b) = model(x)
    + b.

    With `quantile_levels`, a second projection of the encoder states, extrapolated the same way, gives
    the interval of each level as the point forecast minus and plus cumulative softplus widths (innermost
    level first), so the quantiles never cross each other or the point forecast (`bounds`).
    """

    config_class = S3AttentionConfig
    task = FORECAST

    def __init__(self, config: S3AttentionConfig) -> None:
        super().__init__()
        self.config = config
        input_size, horizon, n_channels, d_model = (
            config.input_size, config.horizon, config.n_channels, config.d_model
        )
        self.value_embedding = nn.Conv1d(n_channels, d_model, kernel_size=1)
        self.register_buffer("positions", sinusoidal_positions(input_size, d_model), persistent=False)
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.layers = nn.ModuleList(
            _EncoderLayer(config, config.seed + index) for index in range(config.e_layers)
        )
        self.projection = nn.Linear(d_model, n_channels)
        if config.anchor != "mean":
            nn.init.zeros_(self.projection.weight)
            nn.init.zeros_(self.projection.bias)
        self.skip = nn.Linear(input_size, horizon) if config.skip else None
        if self.skip is not None:
            nn.init.zeros_(self.skip.weight)
            nn.init.zeros_(self.skip.bias)
        levels = len(config.quantile_levels)
        self.spread = nn.Linear(d_model, 2 * levels * n_channels) if levels else None
        first_step = input_size - 1 if config.anchor == "seam" else None
        self.extrapolation = FourierExtrapolation(input_size, horizon, config.n_harmonics, first_step)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, input_size, n_channels) -> forecast (B, horizon, n_channels), both in x's units."""
        return self._decode(x, with_bounds=False)[0]

    def bounds(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(point, lower, upper) in x's units: point (B, H, C), lower and upper (B, H, C, K) for the K
        `quantile_levels` in increasing order, lower <= point <= upper and wider for higher levels."""
        if self.spread is None:
            raise ValueError("this S3AttentionForecaster has no quantile head (no quantile_levels)")
        return self._decode(x, with_bounds=True)

    def _decode(self, x: torch.Tensor, *, with_bounds: bool) -> tuple[torch.Tensor, ...]:
        config = self.config
        check_history(x, config.input_size, config.n_channels, "S3AttentionForecaster")
        level = x.mean(dim=1, keepdim=True) if config.anchor == "mean" else x[:, -1:]
        scale = torch.sqrt(x.var(dim=1, keepdim=True, correction=1) + 1.0)
        standardized = ((x - level) / scale).transpose(1, 2)  # (B, C, L)
        h = self.value_embedding(standardized).transpose(1, 2)
        h = self.embedding_dropout(h + self.positions)
        for layer in self.layers:
            h = layer(h)
        projected = self.projection(h)
        if with_bounds:
            projected = torch.cat([projected, self.spread(h)], dim=-1)
        decoded = self.extrapolation(projected)
        curve, spread = decoded[..., : config.n_channels], decoded[..., config.n_channels :]
        if config.anchor == "seam":  # the curve at the last input step stands on the last observation
            curve, spread = curve[:, 1:] - curve[:, :1], spread[:, 1:]
        if self.skip is not None:
            curve = curve + self.skip(standardized).transpose(1, 2)
        point = curve * scale + level
        if not with_bounds:
            return (point,)
        widths = F.softplus(spread.unflatten(-1, (2, len(config.quantile_levels), config.n_channels)))
        widths = widths.cumsum(dim=3).permute(2, 0, 1, 4, 3) * scale[..., None]  # (2, B, H, C, K)
        return point, point[..., None] - widths[0], point[..., None] + widths[1]

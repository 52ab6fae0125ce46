"""A forecast shrunk toward the naive one, step by step, with weights fitted on the validation windows.

    forecast_h = last + w_h * (model_h - last),   0 <= w_h <= 1

is the combination of the model with the naive forecast (Bates and Granger 1969) constrained to lie between
the two; w_h is the least-squares weight of step h over every validation window and channel. Where the model
adds nothing to the last value (step 1 of most series: the Fourier decoder's curve starts wherever the window
projects it) w_h goes to 0 and the forecast continues from the last observation; where the model helps, w_h
stays near 1. On the windows it was fitted on, the combination is at no step worse than either forecast.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch
from torch import nn

from forecaster.models.registry import forecast_outputs


def fit_weights(pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """(H,) weights in [0, 1] from batches of (model - last, truth - last), each (N, H, C): per step, the w
    minimizing sum (truth - last - w (model - last))^2, clipped to [0, 1] (0 where the model never moves)."""
    product = spread = None
    for deviation, truth in pairs:
        deviation, truth = np.asarray(deviation, np.float64), np.asarray(truth, np.float64)
        batch_product, batch_spread = (deviation * truth).sum(axis=(0, 2)), (deviation**2).sum(axis=(0, 2))
        product = batch_product if product is None else product + batch_product
        spread = batch_spread if spread is None else spread + batch_spread
    if product is None:
        raise ValueError("fitting weights toward the naive forecast needs at least one window")
    moved = spread > 0
    weights = np.zeros_like(product)
    weights[moved] = product[moved] / spread[moved]
    return np.clip(weights, 0.0, 1.0)


class TowardNaive(nn.Module):
    """`base`'s forecast shrunk toward the last observed value by per-step `weights` (H,)."""

    def __init__(self, base: nn.Module, weights: Iterable[float] | torch.Tensor) -> None:
        super().__init__()
        self.base = base
        self.register_buffer("weights", torch.as_tensor(list(weights), dtype=torch.float32)[:, None])

    @property
    def config(self):
        return self.base.config

    def _combined(self, x: torch.Tensor, point: torch.Tensor) -> torch.Tensor:
        length = self.base.config.input_size
        last = x[:, length - 1 : length, : point.shape[-1]]
        return last + self.weights.to(point.dtype) * (point - last)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._combined(x, self.base(x))

    def bounds(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The base's interval moved with its point forecast (its widths kept)."""
        outputs = forecast_outputs(self.base, x)
        point, count = outputs[..., 0], (outputs.shape[-1] - 1) // 2
        combined = self._combined(x, point)
        shift = (combined - point)[..., None]
        return combined, outputs[..., 1 : 1 + count] + shift, outputs[..., 1 + count :] + shift

"""Covariates around any forecaster: past ones as extra input channels, future ones on the decoder side.

The base model reads the history of every input channel (targets, past covariates, future covariates) and
forecasts them all; only the targets are kept. Future covariates' horizon rows then enter through a linear
map added to the forecast: from their values and their change since the last observed step (both on the
standardized scale) to each target. It starts at zero, so an untrained wrapper forecasts exactly as its
base (the naive-start guard of `fit` still holds), and it is linear so that its effect stays readable
(`head.weight`). Models without parameters (the baselines) get no map: they stay the floor to beat.
"""

from __future__ import annotations

import torch
from torch import nn


class WithCovariates(nn.Module):
    """(B, L [+ H], C_in) -> (B, H, targets): x holds the horizon rows of the `future` last channels."""

    def __init__(self, base: nn.Module, targets: int, future: int) -> None:
        super().__init__()
        self.base, self.targets, self.future = base, targets, future
        trainable = any(parameter.requires_grad for parameter in base.parameters())
        self.head = nn.Linear(2 * future, targets) if future and trainable else None
        if self.head is not None:
            nn.init.zeros_(self.head.weight)
            nn.init.zeros_(self.head.bias)

    @property
    def config(self):
        return self.base.config

    def _parts(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        length = self.base.config.input_size
        expected = length + (self.base.config.horizon if self.future else 0)
        if x.ndim != 3 or x.shape[1] != expected:
            raise ValueError(f"expects input (batch, {expected}, channels), got {tuple(x.shape)}")
        if not self.future:
            return x, None
        return x[:, :length], x[:, length:, -self.future :]

    def _effect(self, history: torch.Tensor, ahead: torch.Tensor | None) -> torch.Tensor | float:
        if self.head is None or ahead is None:
            return 0.0
        last = history[:, -1:, -self.future :]
        return self.head(torch.cat([ahead, ahead - last], dim=-1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        history, ahead = self._parts(x)
        return self.base(history)[..., : self.targets] + self._effect(history, ahead)

    def bounds(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        history, ahead = self._parts(x)
        point, lower, upper = self.base.bounds(history)
        effect = self._effect(history, ahead)
        shift = effect[..., None] if torch.is_tensor(effect) else effect
        keep = slice(0, self.targets)
        return point[..., keep] + effect, lower[:, :, keep] + shift, upper[:, :, keep] + shift

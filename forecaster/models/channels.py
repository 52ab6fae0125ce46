"""One model shared by many series: each series (channel) is forecast alone by a one-channel model.

`channels="independent"` trains a one-channel model on the windows of every series, each standardized by
its own train rows; at prediction this wrapper folds the series of a (B, L, S) history into the batch so
that all series are forecast in one pass, and the service and the CLI see an ordinary S-channel model.
"""

from __future__ import annotations

import torch
from torch import nn

from forecaster.models.registry import forecast_outputs


class ChannelIndependent(nn.Module):
    """(B, L, S) -> (B, H, S) through a one-channel `base` applied to each series."""

    def __init__(self, base: nn.Module) -> None:
        super().__init__()
        self.base = base

    @property
    def config(self):
        return self.base.config

    def _fold(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, series = x.shape
        return x.transpose(1, 2).reshape(batch * series, length, 1)

    def _unfold(self, y: torch.Tensor, batch: int) -> torch.Tensor:
        """(B * S, H, 1, ...) -> (B, H, S, ...)."""
        y = y.reshape(batch, -1, *y.shape[1:])  # (B, S, H, 1, ...)
        return y.squeeze(3).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._unfold(self.base(self._fold(x)), x.shape[0])

    def bounds(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        outputs = self._unfold(forecast_outputs(self.base, self._fold(x)), x.shape[0])
        count = (outputs.shape[-1] - 1) // 2
        return outputs[..., 0], outputs[..., 1 : 1 + count], outputs[..., 1 + count :]


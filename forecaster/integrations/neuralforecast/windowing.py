"""Training windows of channel-independent neuralforecast models, gathered only when sampled.

neuralforecast 3.3 materializes every overlapping window of every series at every training step (~0.5 GB
on ETTm2); `WindowsOnDemand` returns the same valid-window indices in the same order, so the sampled
batches and the training are bit-identical (tested), without the copy.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from neuralforecast.common._base_model import BaseModel


class _SeriesWindows:
    """The training windows of a channel-independent model, each gathered only when sampled.

    `windows[i]` equals row i of neuralforecast's materialized (n_series * Ws, L + h, C, 1) tensor, whose
    copy of every overlapping window (~0.5 GB on ETTm2) was rebuilt at every training step.
    """

    def __init__(self, unfolded: torch.Tensor) -> None:
        self.unfolded = unfolded  # (n_series, C, Ws, L + h) view of the series

    @property
    def device(self) -> torch.device:
        """Where the training step draws its sample indices."""
        return self.unfolded.device

    def __getitem__(self, flat_index: torch.Tensor) -> torch.Tensor:
        per_series = self.unfolded.shape[2]
        picked = self.unfolded[flat_index // per_series, :, flat_index % per_series]  # (k, C, L + h)
        return picked.permute(0, 2, 1).unsqueeze(-1).contiguous()


class WindowsOnDemand:
    """Mixin for neuralforecast univariate models: training windows gathered per sampled batch.

    Replaces only the train branch of `_create_windows` for series without static or sample-weight columns;
    it returns the same valid-window indices in the same order, so the sampled batches and the training are
    bit-identical (tested), without copying every window of every series at every step. Window validity
    (enough available points before and after the cut) comes from cumulative sums of the availability mask
    instead of a sum per window. Everything else is neuralforecast's own code.
    """

    def _create_windows(self, batch: dict[str, Any], step: str) -> Any:
        temporal_cols = batch["temporal_cols"]
        if (step != "train" or self.MULTIVARIATE or batch.get("static") is not None
                or "sample_weight" in temporal_cols):
            return super()._create_windows(batch, step)
        window_size = self.input_size + self.h
        temporal = batch["temporal"]
        if self.val_size + self.test_size > 0:
            temporal = temporal[:, :, : -self.val_size - self.test_size]
        temporal = self.padder_train(temporal)
        if temporal.shape[-1] < window_size:
            return super()._create_windows(batch, step)  # neuralforecast raises its own error
        unfolded = temporal.unfold(dimension=-1, size=window_size, step=self.step_size)
        available = temporal[:, temporal_cols.get_loc("available_mask")].double()
        counts = torch.nn.functional.pad(available.cumsum(dim=-1), (1, 0))  # counts[:, t] = sum of [:t]
        starts = torch.arange(unfolded.shape[2], device=temporal.device) * self.step_size
        insample = counts[:, starts + self.input_size] - counts[:, starts]
        condition = insample >= max(1, int(self.input_size * self.min_insample_fraction * self.n_series))
        if self.h > 0:
            outsample = counts[:, starts + window_size] - counts[:, starts + self.input_size]
            condition &= outsample >= max(1, int(self.h * self.min_outsample_fraction * self.n_series))
        if not condition.any():
            return super()._create_windows(batch, step)  # neuralforecast raises its own error
        final_condition = torch.nonzero(condition.flatten()).squeeze(-1)
        return _SeriesWindows(unfolded), None, batch.get("static_cols"), final_condition, None, temporal_cols


@functools.cache
def with_windows_on_demand(cls: type[BaseModel]) -> type[BaseModel]:
    """`cls` with WindowsOnDemand in front (which leaves multivariate models to neuralforecast)."""
    return type(cls.__name__, (WindowsOnDemand, cls), {"__module__": __name__, "__doc__": cls.__doc__})


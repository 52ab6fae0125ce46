"""Forecast error metrics as the literature reports them: over every (window, step, channel) element.

`mse`/`mae` score one pair of arrays. `ErrorSums` accumulates the same quantities batch by batch as
float64 sums and counts (never a mean of batch means), so a metric over all windows does not depend on
the batch size and partial sums from several processes can simply be added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from forecaster.data.scaling import Scaler


def _pair(
    pred: np.ndarray | torch.Tensor, target: np.ndarray | torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    pred_t = torch.as_tensor(pred).to(torch.float64)
    target_t = torch.as_tensor(target).to(pred_t.device, torch.float64)
    if pred_t.shape != target_t.shape:
        raise ValueError(
            f"prediction shape {tuple(pred_t.shape)} differs from target shape {tuple(target_t.shape)}"
        )
    if pred_t.numel() == 0:
        raise ValueError("cannot score empty arrays")
    return pred_t, target_t


def mse(pred: np.ndarray | torch.Tensor, target: np.ndarray | torch.Tensor) -> float:
    """Mean squared error over all elements, computed in float64."""
    pred_t, target_t = _pair(pred, target)
    return float(torch.mean((pred_t - target_t) ** 2))


def mae(pred: np.ndarray | torch.Tensor, target: np.ndarray | torch.Tensor) -> float:
    """Mean absolute error over all elements, computed in float64."""
    pred_t, target_t = _pair(pred, target)
    return float(torch.mean(torch.abs(pred_t - target_t)))


class ErrorSums:
    """Running error sums for standardized (B, H, C) forecasts, also in original units.

    The train-fit `scaler` maps standardized errors back to original units (an error scales by the
    scaler's per-channel scale; a channel in logarithms compares its forecasts through exp), so the
    original-unit metrics come from the same pass. The squared error of
    the first forecast step is kept apart: a model that jumps away from the last observation shows there.
    `totals` is one float64 tensor [sq, abs, sq_original, abs_original, elements, windows, sq_step1] that a
    distributed run reduces with a sum.
    """

    def __init__(self, scaler: Scaler | None, channels: int | None = None) -> None:
        """`scaler` None (independent series standardized each on its own: errors pooled over series in
        different units have no original scale) scores `channels` channels in standardized units only."""
        self.original = scaler is not None
        scale = scaler.scale if scaler is not None else np.ones(channels or 1)
        self.scale = torch.as_tensor(scale, dtype=torch.float64)
        # channels in logarithms: their errors in original units are those of the forecasts through exp
        self.through_exp = None if scaler is None or scaler.log is None else scaler
        self.totals = torch.zeros(7, dtype=torch.float64)

    def reset(self) -> None:
        """Start a new pass (keeps the device of the last update)."""
        self.totals = torch.zeros_like(self.totals)

    def update(self, pred: torch.Tensor, target: torch.Tensor) -> None:
        """Add one batch of standardized predictions and targets, both (B, H, C)."""
        pred64, target64 = _pair(pred.detach(), target.detach())
        if pred64.dim() != 3 or pred64.shape[-1] != self.scale.numel():
            raise ValueError(f"expected (B, H, {self.scale.numel()}) forecasts, got {tuple(pred64.shape)}")
        device = pred64.device
        if self.totals.device != device:
            self.totals, self.scale = self.totals.to(device), self.scale.to(device)
        error = pred64 - target64
        error_original = error * self.scale
        if self.through_exp is not None:
            back = [torch.as_tensor(self.through_exp.inverse(values.cpu().numpy()), device=device)
                    for values in (pred64, target64)]  # fmt: skip
            logged = torch.as_tensor(self.through_exp.log, device=device)
            error_original = torch.where(logged, back[0] - back[1], error_original)
        self.totals += torch.stack(
            [
                (error**2).sum(),
                error.abs().sum(),
                (error_original**2).sum(),
                error_original.abs().sum(),
                torch.tensor(float(error.numel()), dtype=torch.float64, device=device),
                torch.tensor(float(error.shape[0]), dtype=torch.float64, device=device),
                (error[:, 0] ** 2).sum(),
            ]
        )

    def compute(self, totals: torch.Tensor | None = None) -> dict[str, float | int]:
        """Metrics from `totals` (default: this accumulator's; distributed runs pass the summed totals)."""
        sq, ab, sq_orig, ab_orig, elements, windows, sq_step1 = (
            totals if totals is not None else self.totals
        ).tolist()
        if elements == 0:
            raise ValueError("no forecasts were scored: the evaluation split produced no windows")
        original = {"mse_original": sq_orig / elements, "mae_original": ab_orig / elements}
        return {
            "mse": sq / elements,
            "mae": ab / elements,
            **(original if self.original else {}),
            "mse_step1": sq_step1 / (windows * self.scale.numel()),
            "windows": int(windows),
        }


class IntervalSums:
    """Running sums for prediction intervals at several levels, over batches of (B, H, C) targets.

    Per level: coverage (share of targets inside), mean width, and the interval score of Gneiting and
    Raftery (2007), also called the Winkler score: width + (2 / a) * the distance by which the target falls
    outside, a = 1 - level; lower is better. On the scale the inputs are given in (standardized here).
    """

    def __init__(self, levels: list[int]) -> None:
        self.totals = {level: np.zeros(3) for level in levels}
        self.elements = 0

    def update(self, intervals: dict[int, tuple[np.ndarray, np.ndarray]], target: np.ndarray) -> None:
        """Add one batch: {level: (lo, hi)} and the targets, all of one shape."""
        target = np.asarray(target, dtype=np.float64)
        for level, (lo, hi) in intervals.items():
            lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
            outside = np.maximum(lo - target, 0.0) + np.maximum(target - hi, 0.0)
            width = hi - lo
            alpha = 1.0 - level / 100.0
            self.totals[level] += (
                np.count_nonzero((target >= lo) & (target <= hi)),
                width.sum(),
                (width + 2.0 / alpha * outside).sum(),
            )
        self.elements += target.size

    def compute(self) -> dict[str, dict[str, float]]:
        """{"80": {"coverage", "width", "interval_score"}, ...}."""
        if self.elements == 0:
            raise ValueError("no forecasts were scored: the evaluation split produced no windows")
        return {
            str(level): dict(
                zip(("coverage", "width", "interval_score"), (totals / self.elements).tolist(), strict=True)
            )
            for level, totals in self.totals.items()
        }

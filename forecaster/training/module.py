"""LightningModule that trains any (B, L, C) -> (B, H, C) forecaster the way the reference does.

MSE loss on the standardized scale, AdamW (lr 1e-4, weight decay 0.01), optional cosine schedule. A model
with a quantile head (`quantile_levels`) adds the pinball loss of its bounds to the point forecast's MSE,
so early stopping and checkpoints still follow the validation MSE of the point forecast.
With `cuda_graphs` the step is captured as a CUDA graph (`forecaster.training.graphs`): Lightning's manual
optimization then steps AdamW (fused on CUDA) after each replay, and the module clips gradients itself.
Validation errors are accumulated as sums over every window (ErrorSums) and the sums are added across
processes before anything is logged. Under DDP, Lightning's DistributedSampler repeats up to world_size - 1
validation windows to even out the ranks; test metrics are therefore scored in one process, without a
Trainer (`forecaster.training.scoring.evaluate_model`), where every window counts exactly once.
"""

from __future__ import annotations

import lightning.pytorch as pl
import torch
from torch import nn
from torch.nn import functional as F

from forecaster.checks import check_choice
from forecaster.data.scaling import Scaler
from forecaster.metrics import ErrorSums
from forecaster.models import quantile_levels
from forecaster.training.graphs import GraphedStep, adamw
from forecaster.training.settings import LR_SCHEDULES


def pinball_loss(
    lower: torch.Tensor, upper: torch.Tensor, target: torch.Tensor, levels: tuple[int, ...]
) -> torch.Tensor:
    """Mean quantile (pinball) loss of (B, H, C, K) bounds at quantiles (1 -+ level / 100) / 2 of the
    (B, H, C) targets (Koenker and Bassett 1978): minimized by the true quantiles."""
    # Quantiles as Python numbers, not a tensor built from a list: copying one from the host cannot be
    # captured in a CUDA graph (forecaster.training.graphs).
    losses = []
    for k, level in enumerate(levels):
        for quantile, bound in (((1 - level / 100) / 2, lower), ((1 + level / 100) / 2, upper)):
            residual = target - bound[..., k]
            losses.append(torch.maximum(quantile * residual, (quantile - 1) * residual))
    return torch.stack(losses, dim=-1).mean()


class ForecastModule(pl.LightningModule):
    """Wraps a forecasting model; the train `scaler` turns errors back into original units (None: errors
    in standardized units only, see `ErrorSums`)."""

    def __init__(
        self,
        model: nn.Module,
        scaler: Scaler | None,
        *,
        lr: float = 1e-4,
        weight_decay: float = 0.01,
        lr_schedule: str = "none",
        cuda_graphs: bool = False,
        max_grad_norm: float | None = None,
    ) -> None:
        super().__init__()
        check_choice("lr_schedule", lr_schedule, LR_SCHEDULES)
        self.model = model
        self.lr = lr
        self.weight_decay = weight_decay
        self.lr_schedule = lr_schedule
        # Graphed steps clip inside the graph (Lightning clips only under automatic optimization).
        self.automatic_optimization = not cuda_graphs
        self.graphed_step = None
        if cuda_graphs:
            self.graphed_step = GraphedStep(self.training_loss, list(model.parameters()), max_grad_norm)
        self.val_errors = ErrorSums(scaler)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def training_loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        levels = quantile_levels(self.model)
        if levels:
            point, lower, upper = self.model.bounds(x)
            return F.mse_loss(point, y) + pinball_loss(lower, upper, y, levels)
        return F.mse_loss(self(x), y)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        if self.graphed_step is None:
            loss = self.training_loss(x, y)
        else:
            loss = self.graphed_step(x, y)
            self.optimizers().step()
        self.log(
            "train_loss",
            loss,
            prog_bar=True,
            on_step=True,
            on_epoch=True,
            batch_size=x.shape[0],
            sync_dist=True,
        )
        return loss

    def on_train_epoch_end(self) -> None:
        """Manual optimization leaves the epoch's learning-rate step to the module."""
        scheduler = None if self.automatic_optimization else self.lr_schedulers()
        if scheduler is not None:
            scheduler.step()

    def on_fit_end(self) -> None:
        """The graph's memory (its static batch and gradients) is released with it."""
        if self.graphed_step is not None:
            self.graphed_step.release()

    def _summed(self, errors: ErrorSums) -> dict[str, float | int]:
        """Metrics over the windows of every process (a plain sum of the per-process totals)."""
        return errors.compute(self.trainer.strategy.reduce(errors.totals, reduce_op="sum"))

    def on_validation_epoch_start(self) -> None:
        self.val_errors.reset()

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch
        self.val_errors.update(self(x), y)

    def on_validation_epoch_end(self) -> None:
        metrics = self._summed(self.val_errors)
        # Already summed over ranks, so identical everywhere; sync_dist only tells Lightning so.
        self.log("val_mse", metrics["mse"], prog_bar=True, sync_dist=True)
        self.log("val_mae", metrics["mae"], prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        optimizer = adamw(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        if self.lr_schedule == "none":
            return optimizer
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
            optimizer, T_max=max(1, self.trainer.max_epochs)
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}

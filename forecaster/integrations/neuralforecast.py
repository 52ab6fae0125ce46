"""neuralforecast interop: S3Attention as a neuralforecast model, and the peers the benchmark trains.

Importing this module imports neuralforecast (the optional `baselines` extra), so callers import it
lazily. Importing it also registers `S3Attention` in neuralforecast's model table (see
`register_with_neuralforecast`): that is what lets `NeuralForecast.save`/`NeuralForecast.load` handle it.

Peers are trained on exactly the benchmark's data: the caller passes the train-fit standardized (N, C)
array (scaler_type "identity" here, since scaling happened before), the val/test sizes of the split, and
a budget translated from our epoch-based Lightning runs into neuralforecast steps (`PeerBudget`).
"""

from __future__ import annotations

import functools
import inspect
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytorch_lightning as pl
import torch
from neuralforecast.common._base_model import BaseModel
from neuralforecast.losses.pytorch import MSE

from forecaster.models import S3AttentionForecaster

# Lower-case benchmark name -> neuralforecast.models class name.
PEERS: dict[str, str] = {
    "patchtst": "PatchTST",
    "itransformer": "iTransformer",
    "dlinear": "DLinear",
    "fedformer": "FEDformer",
    "autoformer": "Autoformer",
    "informer": "Informer",
    "nhits": "NHITS",
    "timesnet": "TimesNet",
}

VAL_MONITOR = "ptl/val_loss"


class S3Attention(BaseModel):
    """S3AttentionForecaster (paper 001) as a multivariate neuralforecast model.

    The network sees each window as (batch, input_size, n_series) and forecasts (batch, h, n_series);
    it standardizes every window itself, so `scaler_type="identity"` is the default. Defaults follow the
    reference training: MSE loss, AdamW (torch default weight decay 0.01), learning rate 1e-4, batch of
    32 windows. Point losses with one output per series only (the network has no distribution head).
    """

    EXOGENOUS_FUTR = False
    EXOGENOUS_HIST = False
    EXOGENOUS_STAT = False
    MULTIVARIATE = True
    RECURRENT = False

    def __init__(
        self,
        h: int,
        input_size: int,
        n_series: int,
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
        futr_exog_list: list[str] | None = None,
        hist_exog_list: list[str] | None = None,
        stat_exog_list: list[str] | None = None,
        exclude_insample_y: bool = False,
        loss: Any = None,
        valid_loss: Any = None,
        max_steps: int = 1000,
        learning_rate: float = 1e-4,
        num_lr_decays: int = -1,
        early_stop_patience_steps: int = -1,
        val_monitor: str = VAL_MONITOR,
        val_check_steps: int = 100,
        batch_size: int = 32,
        valid_batch_size: int | None = None,
        windows_batch_size: int = 32,
        inference_windows_batch_size: int = 256,
        start_padding_enabled: bool = False,
        training_data_availability_threshold: float = 0.0,
        step_size: int = 1,
        scaler_type: str = "identity",
        random_seed: int = 1,
        drop_last_loader: bool = False,
        alias: str | None = None,
        optimizer: type[torch.optim.Optimizer] | None = torch.optim.AdamW,
        optimizer_kwargs: dict[str, Any] | None = None,
        lr_scheduler: type[torch.optim.lr_scheduler.LRScheduler] | None = None,
        lr_scheduler_kwargs: dict[str, Any] | None = None,
        dataloader_kwargs: dict[str, Any] | None = None,
        **trainer_kwargs: Any,
    ) -> None:
        loss = MSE() if loss is None else loss
        if loss.outputsize_multiplier != 1:
            raise ValueError(
                f"S3Attention forecasts one value per series and step; loss {type(loss).__name__} needs "
                f"{loss.outputsize_multiplier} outputs (use a point loss such as MSE or MAE)"
            )
        super().__init__(
            h=h,
            input_size=input_size,
            n_series=n_series,
            futr_exog_list=futr_exog_list,
            hist_exog_list=hist_exog_list,
            stat_exog_list=stat_exog_list,
            exclude_insample_y=exclude_insample_y,
            loss=loss,
            valid_loss=valid_loss,
            max_steps=max_steps,
            learning_rate=learning_rate,
            num_lr_decays=num_lr_decays,
            early_stop_patience_steps=early_stop_patience_steps,
            val_monitor=val_monitor,
            val_check_steps=val_check_steps,
            batch_size=batch_size,
            valid_batch_size=valid_batch_size,
            windows_batch_size=windows_batch_size,
            inference_windows_batch_size=inference_windows_batch_size,
            start_padding_enabled=start_padding_enabled,
            training_data_availability_threshold=training_data_availability_threshold,
            step_size=step_size,
            scaler_type=scaler_type,
            random_seed=random_seed,
            drop_last_loader=drop_last_loader,
            alias=alias,
            optimizer=optimizer,
            optimizer_kwargs=optimizer_kwargs,
            lr_scheduler=lr_scheduler,
            lr_scheduler_kwargs=lr_scheduler_kwargs,
            dataloader_kwargs=dataloader_kwargs,
            **trainer_kwargs,
        )
        self.network = S3AttentionForecaster(
            input_size=input_size,
            horizon=h,
            n_channels=n_series,
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

    def forward(self, windows_batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """insample_y (B, input_size, n_series) -> forecast (B, h, n_series)."""
        return self.network(windows_batch["insample_y"])


def register_with_neuralforecast() -> None:
    """Make `NeuralForecast.save`/`load` accept S3Attention (the one place that edits neuralforecast state).

    neuralforecast 3.x resolves a saved model's class through its closed table
    `neuralforecast.core.MODEL_FILENAME_DICT` (lower-case class name -> class) and refuses anything else,
    so the class is added there. Loading a saved S3Attention therefore needs this module imported first.
    """
    from neuralforecast.core import MODEL_FILENAME_DICT

    registered = MODEL_FILENAME_DICT.get("s3attention")
    if registered is not None and registered is not S3Attention:
        raise RuntimeError(f"neuralforecast already maps 's3attention' to {registered!r}")
    MODEL_FILENAME_DICT["s3attention"] = S3Attention


register_with_neuralforecast()


def to_long_format(values: np.ndarray) -> pd.DataFrame:
    """(N, C) array -> long frame: unique_id "000".. (sorts in column order), integer ds 0..N-1, y."""
    array = np.asarray(values)
    if array.ndim != 2:
        raise ValueError(f"expected a (rows, channels) array, got shape {array.shape}")
    n_rows, n_series = array.shape
    width = max(3, len(str(n_series - 1)))
    return pd.DataFrame(
        {
            "unique_id": np.repeat([f"{i:0{width}d}" for i in range(n_series)], n_rows),
            "ds": np.tile(np.arange(n_rows, dtype=np.int64), n_series),
            "y": array.T.reshape(-1).astype(np.float64),
        }
    )


@dataclass(frozen=True)
class PeerBudget:
    """Our Lightning budget in neuralforecast terms.

    One epoch = `steps_per_epoch` optimizer steps (the batches of our train loader); validation runs once
    per epoch and early stopping counts epochs. A step sees `batch_size` windows of all channels: a
    multivariate peer samples `batch_size` windows of all series, a channel-independent (univariate) peer
    samples `batch_size * n_series` single-series windows, the same (window, channel) pairs per step.
    """

    max_epochs: int
    patience: int
    batch_size: int
    steps_per_epoch: int

    @property
    def max_steps(self) -> int:
        return self.max_epochs * self.steps_per_epoch


def peer_class(name: str) -> type[BaseModel]:
    """The neuralforecast class of benchmark peer `name` (lower case, as in PEERS)."""
    import neuralforecast.models

    if name not in PEERS:
        raise ValueError(f"unknown peer {name!r}; expected one of {', '.join(PEERS)}")
    return getattr(neuralforecast.models, PEERS[name])


def peer_kwargs(
    name: str, horizon: int, input_size: int, n_series: int, budget: PeerBudget, seed: int
) -> dict[str, Any]:
    """Constructor arguments that make peer `name` follow our protocol; the rest stay neuralforecast defaults.

    MSE loss (neuralforecast defaults to MAE), scaler_type identity (data is pre-standardized), constant
    learning rate (num_lr_decays -1; NHITS would otherwise decay 3 times), the epoch/step budget above.
    """
    cls = peer_class(name)
    windows = budget.batch_size if cls.MULTIVARIATE else budget.batch_size * n_series
    kwargs = {
        "h": horizon,
        "input_size": input_size,
        "max_steps": budget.max_steps,
        "val_check_steps": budget.steps_per_epoch,
        "early_stop_patience_steps": budget.patience,
        "batch_size": n_series,
        "valid_batch_size": n_series,
        "windows_batch_size": windows,
        "inference_windows_batch_size": 8 * windows,
        "num_lr_decays": -1,
        "scaler_type": "identity",
        "random_seed": seed,
    }
    if cls.MULTIVARIATE:
        kwargs["n_series"] = n_series
    return kwargs


def describe_peer(name: str) -> str:
    """One line for the benchmark summary: class, channel handling, learning rate and optimizer used."""
    cls = peer_class(name)
    defaults = inspect.signature(cls.__init__).parameters
    mode = "multivariate (all series per window)" if cls.MULTIVARIATE else "channel-independent"
    windows = "batch" if cls.MULTIVARIATE else "batch x channels"
    return (
        f"neuralforecast.models.{cls.__name__}: {mode}; learning_rate {defaults['learning_rate'].default} "
        f"(neuralforecast default), Adam, constant rate; windows_batch_size = {windows}; "
        "other hyperparameters neuralforecast 3.3 defaults"
    )


class RestoreBestWeights(pl.Callback):
    """Keeps the weights of the lowest validation loss and loads them when fitting ends.

    Our own runs restore the best checkpoint; neuralforecast keeps the last weights after early stopping,
    so peers get this callback to be judged the same way.
    """

    def __init__(self, monitor: str = VAL_MONITOR) -> None:
        self.monitor = monitor
        self.best = math.inf
        self.state: dict[str, torch.Tensor] | None = None

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.best, self.state = math.inf, None

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        value = trainer.callback_metrics.get(self.monitor)
        if trainer.sanity_checking or value is None or not float(value) < self.best:
            return
        self.best = float(value)
        self.state = {key: tensor.detach().cpu().clone() for key, tensor in pl_module.state_dict().items()}

    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.state is not None:
            pl_module.load_state_dict(self.state)


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
def _with_windows_on_demand(cls: type[BaseModel]) -> type[BaseModel]:
    """`cls` with WindowsOnDemand in front (which leaves multivariate models to neuralforecast)."""
    return type(cls.__name__, (WindowsOnDemand, cls), {"__module__": __name__, "__doc__": cls.__doc__})


def build_peer(
    name: str, horizon: int, input_size: int, n_series: int, budget: PeerBudget, seed: int
) -> BaseModel:
    """Peer `name` with `peer_kwargs`, MSE train/val loss, best-weight restore and silent Lightning output."""
    return _with_windows_on_demand(peer_class(name))(
        **peer_kwargs(name, horizon, input_size, n_series, budget, seed),
        loss=MSE(),
        valid_loss=MSE(),
        callbacks=[RestoreBestWeights()],
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=False,
        num_sanity_val_steps=0,
    )


@dataclass
class PeerRun:
    """A fitted peer's test forecasts (windows, horizon, channels) and what training cost."""

    predictions: np.ndarray
    train_seconds: float
    epochs: int
    parameters: int


def forecast_test_windows(
    model: BaseModel, values: np.ndarray, val_size: int, test_size: int, steps_per_epoch: int
) -> PeerRun:
    """Fit before the last val_size + test_size rows, early-stop on the val rows, forecast every test window.

    These are the calls `NeuralForecast.cross_validation(df, val_size=val_size, test_size=test_size,
    step_size=1, refit=False)` makes, without its long output frame (windows x h x channels rows), which
    would not fit in memory for Weather at h=720. Test window i forecasts rows N - test_size + i .. + h.
    """
    from neuralforecast.tsdataset import TimeSeriesDataset

    long = to_long_format(values)
    dataset, uids, _, _ = TimeSeriesDataset.from_df(long)
    expected = list(dict.fromkeys(long["unique_id"]))
    if list(uids) != expected:
        raise RuntimeError(f"neuralforecast reordered the series: {list(uids)} instead of {expected}")
    started = time.perf_counter()
    model.fit(dataset, val_size=val_size, test_size=test_size)
    seconds = time.perf_counter() - started
    flat = model.predict(dataset, step_size=1)
    n_series, horizon = values.shape[1], model.h
    windows = test_size - horizon + 1
    predictions = flat.reshape(n_series, windows, horizon).transpose(1, 2, 0)
    return PeerRun(
        predictions=np.ascontiguousarray(predictions),
        train_seconds=seconds,
        epochs=math.ceil(len(model.train_trajectories) / steps_per_epoch),
        parameters=sum(parameter.numel() for parameter in model.parameters()),
    )

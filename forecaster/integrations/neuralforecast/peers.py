"""The benchmark's neuralforecast peers, trained on exactly the benchmark's data.

The caller passes the train-fit standardized (N, C) array (scaler_type "identity" here, since scaling
happened before), the val/test sizes of the split, and a budget translated from our epoch-based Lightning
runs into neuralforecast steps (`PeerBudget`). Channel-independent peers gather their training windows on
demand (`forecaster.integrations.neuralforecast.windowing`).
"""

from __future__ import annotations

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

from forecaster.integrations.neuralforecast.windowing import with_windows_on_demand

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


def build_peer(
    name: str, horizon: int, input_size: int, n_series: int, budget: PeerBudget, seed: int
) -> BaseModel:
    """Peer `name` with `peer_kwargs`, MSE train/val loss, best-weight restore and silent Lightning output."""
    return with_windows_on_demand(peer_class(name))(
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
    """A fitted peer's test forecasts (windows, horizon, channels), its best validation loss (MSE, as
    neuralforecast averages it over validation batches) and what training cost."""

    predictions: np.ndarray
    train_seconds: float
    epochs: int
    parameters: int
    val_loss: float


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
        val_loss=min((loss for _, loss in model.valid_trajectories), default=math.nan),
    )

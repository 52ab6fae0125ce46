"""The train and evaluate workflows behind `forecaster train` and `forecaster evaluate`.

train: series -> ForecastDataModule (split, train-fit scaler, windows) -> Lightning fit with early stopping
-> best checkpoint restored -> test metrics -> bundle. Test metrics come from `evaluate_model`, the very
code `forecaster evaluate` runs on the saved bundle, so both commands print the same numbers.
"""

from __future__ import annotations

import dataclasses
import platform
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import nn
from torch.utils.data import DataLoader

import forecaster
from forecaster.artifacts import Bundle, DataConfig, check_out_dir, save_bundle, work_dir_for
from forecaster.data import (
    ForecastDataModule,
    Scaler,
    TimeSeries,
    WindowDataset,
    get_spec,
    load_dataset,
    read_csv,
    split_borders,
)
from forecaster.errors import DataError, ForecasterError
from forecaster.models import MODELS, get_model, preset
from forecaster.training.module import ForecastModule
from forecaster.training.settings import TrainSettings
from forecaster.training.trainer import build_eval_trainer, build_trainer, checkpoint_dir

DEFAULT_INPUT_SIZE = 96
EVAL_BATCH_SIZE = 256


@dataclass
class SeriesSource:
    """Where a series comes from: a registered benchmark dataset, or a CSV file with its reading options."""

    dataset: str | None = None
    csv: Path | None = None
    data_dir: Path | None = None
    date_col: str | None = None
    targets: list[str] | None = None
    no_date: bool = False
    fill_missing: str | None = None

    def load(self) -> TimeSeries:
        if (self.dataset is None) == (self.csv is None):
            raise DataError("give exactly one data source: a dataset name (--dataset) or a CSV file (--csv)")
        if self.dataset is not None:
            return load_dataset(self.dataset, self.data_dir)
        return read_csv(
            self.csv,
            date_col=self.date_col,
            targets=self.targets,
            no_date=self.no_date,
            fill_missing=self.fill_missing,
        )


@dataclass
class TrainOutcome:
    """What rank 0 of a run returns: the bundle's path and contents, and the trained model (eval mode)."""

    bundle_path: Path
    metrics: dict[str, Any]
    training: dict[str, Any]
    model: nn.Module


@rank_zero_only
def _clear_checkpoints(work_dir: Path) -> None:
    shutil.rmtree(checkpoint_dir(work_dir), ignore_errors=True)


def _model_config(settings: TrainSettings, series: TimeSeries, input_size: int) -> dict[str, Any]:
    """The dataset preset, the run's seed (for models that sample), the user's options, the data's sizes."""
    fields = {field.name for field in dataclasses.fields(MODELS.get(settings.model_name).config_class)}
    return {
        **preset(settings.model_name, series.dataset),
        **({"seed": settings.seed} if "seed" in fields else {}),
        **settings.model_options,
        "input_size": input_size,
        "horizon": settings.horizon,
        "n_channels": len(series.columns),
    }


def _build_model(name: str, config: dict[str, Any]) -> nn.Module:
    try:
        return get_model(name, **config)
    except (TypeError, ValueError) as error:
        raise ForecasterError(f"cannot build model {name!r}: {error}") from None


def evaluate_model(
    model: nn.Module,
    data: DataConfig,
    scaler: Scaler,
    series: TimeSeries,
    *,
    accelerator: str = "auto",
    progress_bar: bool = True,
) -> dict[str, Any]:
    """Test-split MSE/MAE (standardized and original units) over every window, in one process.

    The split and scaling come from `data` and `scaler` (the bundle's), never refit on `series`.
    """
    borders = split_borders(
        len(series), data.input_size, data.split, series.freq, horizon=data.horizon, source=series.source
    )
    start, stop = borders["test"]
    windows = WindowDataset(
        scaler.transform(series.values[start:stop]).astype(np.float32), data.input_size, data.horizon
    )
    loader = DataLoader(windows, batch_size=EVAL_BATCH_SIZE, shuffle=False, drop_last=False)
    module = ForecastModule(model, scaler)
    build_eval_trainer(accelerator, progress_bar).test(module, dataloaders=loader, verbose=False)
    model.cpu()
    return dict(module.test_metrics)


def evaluate_bundle(
    bundle: Bundle, series: TimeSeries, *, accelerator: str = "auto", progress_bar: bool = True
) -> dict[str, Any]:
    """Score a loaded bundle on the test split of `series`, whose columns must be the bundle's."""
    if series.columns != bundle.data.columns:
        raise DataError(
            f"{series.source}: columns {', '.join(map(repr, series.columns))} differ from the columns model "
            f"{bundle.name!r} was trained on ({', '.join(map(repr, bundle.data.columns))})"
        )
    return evaluate_model(
        bundle.model, bundle.data, bundle.scaler, series, accelerator=accelerator, progress_bar=progress_bar
    )


def _versions() -> dict[str, str]:
    return {
        "forecaster": forecaster.__version__,
        "torch": torch.__version__,
        "lightning": lightning.__version__,
        "python": platform.python_version(),
    }


def train_forecaster(series: TimeSeries, out: str | Path, settings: TrainSettings) -> TrainOutcome | None:
    """Train, restore the best checkpoint, score the test split and save the bundle at `out`.

    Returns None on the non-zero ranks of a distributed run (only rank 0 scores and writes the bundle).
    """
    out = Path(out)
    check_out_dir(out, settings.overwrite)
    work_dir = work_dir_for(out)
    last_checkpoint = checkpoint_dir(work_dir) / "last.ckpt"
    if settings.resume and not last_checkpoint.is_file():
        raise ForecasterError(
            f"nothing to resume: {last_checkpoint} not found (start the run without --resume)"
        )
    if not settings.resume:
        _clear_checkpoints(work_dir)

    input_size = settings.input_size or (
        get_spec(series.dataset).input_size if series.dataset else DEFAULT_INPUT_SIZE
    )
    lightning.seed_everything(settings.seed, workers=True, verbose=False)
    datamodule = ForecastDataModule(
        series, input_size, settings.horizon, split=settings.split, batch_size=settings.batch_size
    )
    datamodule.setup("fit")
    scaler = datamodule.scaler
    model = _build_model(settings.model_name, _model_config(settings, series, input_size))
    module = ForecastModule(
        model,
        scaler,
        lr=settings.lr,
        weight_decay=settings.weight_decay,
        lr_schedule=settings.lr_schedule,
    )
    trainer = build_trainer(work_dir, settings.trainer)
    started = time.perf_counter()
    trainer.fit(
        module,
        train_dataloaders=datamodule.train_dataloader(),
        val_dataloaders=datamodule.val_dataloader(),
        ckpt_path=last_checkpoint if settings.resume else None,
    )
    seconds = time.perf_counter() - started
    if not trainer.is_global_zero:
        return None
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()

    callback = trainer.checkpoint_callback
    best = torch.load(callback.best_model_path, map_location="cpu", weights_only=True)
    module.load_state_dict(best["state_dict"])
    model.cpu().eval()

    data = DataConfig(
        source=series.source,
        columns=series.columns,
        freq=series.freq,
        date_col=series.date_col,
        input_size=input_size,
        horizon=settings.horizon,
        split=settings.split,
    )
    metrics = evaluate_model(
        model,
        data,
        scaler,
        series,
        accelerator=settings.trainer.accelerator,
        progress_bar=settings.trainer.progress_bar,
    )
    metrics["best_val_mse"] = float(callback.best_model_score)
    training = {
        "dataset": series.dataset,
        "epochs": trainer.current_epoch,
        "best_epoch": int(best["epoch"]) + 1,
        "stopped_early": bool(trainer.early_stopping_callback.stopped_epoch),
        "max_epochs": settings.trainer.max_epochs,
        "patience": settings.trainer.patience,
        "seed": settings.seed,
        "lr": settings.lr,
        "weight_decay": settings.weight_decay,
        "lr_schedule": settings.lr_schedule,
        "batch_size": settings.batch_size,
        "limit_train_batches": settings.trainer.limit_train_batches,
        "gradient_clip_val": settings.trainer.gradient_clip_val,
        "world_size": trainer.world_size,
        "resumed": settings.resume,
        "train_seconds": round(seconds, 3),
        "windows": datamodule.window_counts(),
        "versions": _versions(),
    }
    path = save_bundle(
        out,
        model=model,
        model_name=settings.model_name,
        metrics=metrics,
        training=training,
        data=data,
        scaler=scaler,
        overwrite=settings.overwrite,
    )
    return TrainOutcome(path, metrics, training, model)

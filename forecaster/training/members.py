"""The members of a fitted candidate: each trained through Lightning from its own seed, and on small data
several of them (bagging), whose forecasts `fit.fit_candidate` averages.

Averaging models trained from different seeds keeps their common signal and cancels part of what each
learned by chance; where the train split is small the run-to-run spread is large and a fit takes seconds,
so the average costs little and gains much (`settings.SMALL_TRAIN_WINDOWS`). The default bag's members also
read two input sizes (`fit.bag_input_sizes`, `settings.LONGER_INPUT`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import lightning
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import nn

from forecaster.artifacts import DataConfig
from forecaster.checks import MAX_SEED
from forecaster.data import ForecastDataModule, TimeSeries
from forecaster.errors import ConfigError, ForecasterError
from forecaster.training.graphs import use_cuda_graphs
from forecaster.training.module import ForecastModule
from forecaster.training.scoring import error_scaler
from forecaster.training.settings import BAG_SEEDS, SMALL_TRAIN_WINDOWS, TrainSettings
from forecaster.training.trainer import build_trainer, check_resumable, checkpoint_dir, reason

if TYPE_CHECKING:
    from forecaster.training.planning import Candidate

SEED_STRIDE = 10_000  # between the seeds of a bagged candidate's members (`member_seeds`)


class Built(NamedTuple):
    """What a candidate is trained from: its windows (set up for fitting), data config, model and config."""

    datamodule: ForecastDataModule
    data: DataConfig
    model: nn.Module
    config: dict[str, Any]


@rank_zero_only
def _clear(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def member_seeds(count: int | None, settings: TrainSettings, built: Built) -> list[int]:
    """The seeds a candidate is trained from: `count` of them, by default (None) BAG_SEEDS on small data
    without covariates trained on one device (settings.SMALL_TRAIN_WINDOWS), else the run's seed alone.
    Member k trains from seed + k * SEED_STRIDE: member 0 is the unbagged run, and runs of nearby seeds (the
    benchmark's repeats) share no member."""
    covariates = built.data.input_columns != built.data.columns
    distributed = settings.trainer.devices not in ("auto", 1)
    if count is None:
        small = built.datamodule.window_counts()["train"] < SMALL_TRAIN_WINDOWS
        count = BAG_SEEDS if small and not covariates and not distributed else 1
    elif count > 1 and (covariates or distributed):
        why = "models of the target columns alone" if covariates else "models trained on one device"
        fix = "a model reading covariates" if covariates else "with --devices, a run"
        raise ConfigError(f"--seeds {count} averages {why}; {fix} trains from one seed (--seeds 1)")
    return [(settings.seed + index * SEED_STRIDE) % (MAX_SEED + 1) for index in range(count)]


class Member(NamedTuple):
    """One trained member of a candidate: its best weights (on CPU) and how its training went."""

    model: nn.Module
    epochs: int
    best_epoch: int
    stopped_early: bool
    seconds: float
    world_size: int
    graphed: bool
    capture_error: str | None


def train_member(
    series: TimeSeries,
    built: Built,
    settings: TrainSettings,
    candidate: Candidate,
    work_dir: Path,
    callbacks: Sequence[lightning.Callback],
) -> Member | None:
    """Train `built` through Lightning, early stopping on validation; its best epoch's weights. None on the
    non-zero ranks of a DDP run."""
    datamodule, data, model, config = built
    options = settings.trainer
    graphed = use_cuda_graphs(options.cuda_graphs, options.accelerator, options.devices, options.strategy)
    module = ForecastModule(
        model,
        error_scaler(data, datamodule.scaler),
        lr=candidate.lr,
        weight_decay=settings.weight_decay,
        lr_schedule=settings.lr_schedule,
        cuda_graphs=graphed,
        max_grad_norm=options.gradient_clip_val,
    )
    run = {  # what a checkpoint must have been trained with for --resume to continue it
        "model": candidate.model_name,
        "config": config,
        "data": {key: value for key, value in data.to_dict().items() if key != "source"},
        "data_sha256": hashlib.sha256(np.ascontiguousarray(series.inputs).tobytes()).hexdigest()[:16],
        "optimizer": {
            "lr": candidate.lr,
            "weight_decay": settings.weight_decay,
            "schedule": settings.lr_schedule,
        },
    }
    resumed = check_resumable(work_dir, run, module.state_dict()) if settings.resume else None
    if resumed is None:  # a fresh fit: no checkpoint of another run (or a best one left without a last)
        _clear(checkpoint_dir(work_dir))
    # A graphed module clips its gradients itself, inside the graph.
    trainer_options = dataclasses.replace(options, gradient_clip_val=None) if graphed else options
    trainer = build_trainer(work_dir, trainer_options, run, callbacks)
    started = time.perf_counter()
    try:
        trainer.fit(
            module,
            train_dataloaders=datamodule.train_dataloader(),
            val_dataloaders=datamodule.val_dataloader(),
            ckpt_path=resumed,
        )
    except (MemoryError, torch.OutOfMemoryError) as error:
        raise ForecasterError(
            f"out of memory while training {candidate.label} with --batch-size {settings.batch_size} "
            f"({reason(error)}); try a smaller --batch-size"
        ) from None
    seconds = time.perf_counter() - started
    if not trainer.is_global_zero:
        return None
    capture_error = module.graphed_step.capture_error if graphed else None
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    best = torch.load(trainer.checkpoint_callback.best_model_path, map_location="cpu", weights_only=True)
    module.load_state_dict(best["state_dict"])
    return Member(
        model.cpu().eval(),
        epochs=trainer.current_epoch,
        best_epoch=int(best["epoch"]) + 1,
        stopped_early=bool(trainer.early_stopping_callback.stopped_epoch),
        seconds=seconds,
        world_size=trainer.world_size,
        graphed=graphed,
        capture_error=capture_error,
    )

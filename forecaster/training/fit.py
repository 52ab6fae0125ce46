"""Fitting one candidate: a model with its options, learning rate and input size, trained on the split's
train windows and judged on its validation windows.

Early stopping keeps the epoch with the lowest validation MSE. A model whose untrained form is the naive
forecast (S3Attention with `anchor="last"`, checked on the validation windows) keeps its trained weights only
if they beat its initial, naive ones by more than two standard errors (`scoring.simplest_consistent`; on a
short validation split, on an earlier validation period too): it stays the naive forecast unless
validation clearly says otherwise. Models without parameters (naive,
seasonal naive) are scored, not trained.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import lightning
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import nn

from forecaster.artifacts import Bundle, DataConfig
from forecaster.calibration import DEFAULT_LEVELS
from forecaster.data import ForecastDataModule, Scaler, TimeSeries, get_spec, season_length
from forecaster.data.missing import check_magnitudes
from forecaster.errors import ConfigError, DataError, ForecasterError
from forecaster.models import MODELS, get_model
from forecaster.models.assembly import assemble, naive_like
from forecaster.presets import (
    AUTO,
    DEFAULT,
    TRAINING_DEFAULTS,
    auto_candidates,
    preset,
    resolve,
    training_setting,
)
from forecaster.training.graphs import use_cuda_graphs
from forecaster.training.module import ForecastModule
from forecaster.training.scoring import (
    Score,
    error_scaler,
    simplest_consistent,
    split_windows,
    window_errors,
)
from forecaster.training.settings import TrainSettings
from forecaster.training.trainer import build_trainer, check_resumable, checkpoint_dir, reason

DEFAULT_INPUT_SIZE = 96
# A validation split holding fewer horizons than this (non-overlapping) is too short to judge a model on:
# each candidate is also trained on the rows before an earlier validation period (`splits.earlier_period`)
# and scored there, and a model is kept over a simpler one only if it is better on both periods.
MIN_VALIDATION_BLOCKS = 4
# What `--model auto` chooses among, simplest first (a tie goes to the simpler model).
AUTO_MODELS = ("naive", "seasonal_naive", "nlinear", "dlinear", "s3attention")


@dataclass(frozen=True)
class Candidate:
    """One model to fit: its registered name, config fields, learning rate and input size, and whether its
    trained forecast is shrunk toward the naive one (`models.toward_naive`)."""

    label: str
    model_name: str
    model_options: dict[str, Any]
    lr: float
    input_size: int
    toward_naive: bool = True


@dataclass
class Fitted:
    """A fitted candidate: best weights on CPU in eval mode, its data config and scaler, and the MSE of
    each of its validation windows (their mean is its validation MSE)."""

    candidate: Candidate
    model: nn.Module
    data: DataConfig
    scaler: Scaler
    val_errors: np.ndarray
    training: dict[str, Any]
    earlier: Score | None = None  # on the earlier validation period, trained on the rows before it
    start_errors: np.ndarray | None = None  # of its initial weights, where they forecast as naive

    @property
    def val_mse(self) -> float:
        return float(self.val_errors.mean())


def training_record(
    label: str, lr: float | None, windows: Any, parameters: int, **done: Any
) -> dict[str, Any]:
    """What a fitted candidate records of its training (a bundle keeps it under `training`): an untrained
    one's record, with what training `done` (epochs, train_seconds, ...) over it."""
    return {"candidate": label, "lr": lr, "epochs": 0, "best_epoch": 0, "stopped_early": False,
            "kept_initial_weights": True, "train_seconds": 0.0, "world_size": 1, "windows": windows,
            "parameters": parameters, **done}  # fmt: skip


def fitted_from_bundle(bundle: Bundle, label: str, series: TimeSeries) -> Fitted:
    """A candidate fitted earlier, from its bundle: the model as training left it (before `finish` shrank
    it), with its validation errors on `series` recomputed."""
    from forecaster.models.assembly import stored

    training = bundle.training
    candidate = Candidate(
        label,
        bundle.model_name,
        training.get("model_options", {}),
        training["lr"],
        bundle.data.input_size,
        training.get("toward_naive", True),
    )
    model = stored(bundle.model).eval()
    errors = window_errors(model, split_windows(bundle.data, bundle.scaler, series, "val"))
    recorded = {key: training[key] for key in training_record(label, None, None, 0) if key in training}
    earlier = training.get("earlier_validation")
    return Fitted(
        candidate, model, bundle.data, bundle.scaler, errors, {**recorded, "candidate": label},
        earlier=None if earlier is None else Score(earlier["mse"], np.asarray(earlier["blocks"])),
    )  # fmt: skip


def _fields(model_name: str) -> set[str]:
    return {field.name for field in dataclasses.fields(MODELS.get(model_name).config_class)}


def _candidate(
    label: str, model_name: str, preset_name: str, settings: TrainSettings, series: TimeSeries
) -> Candidate | None:
    """A candidate from a preset and the user's settings (which win); None if it cannot apply."""
    model_preset, training_preset = preset(model_name, preset_name, series.dataset)
    fields = _fields(model_name)
    options = {
        **model_preset,
        **({"seed": settings.seed} if "seed" in fields else {}),
        **{key: value for key, value in settings.model_options.items() if key in fields},
    }
    if settings.loss == "quantile":
        if "quantile_levels" not in fields:
            if settings.model_name != AUTO:
                raise ConfigError(
                    f"--loss quantile needs a model with a quantile head (s3attention); {model_name} has none"
                )
        elif not options.get("quantile_levels"):
            options["quantile_levels"] = list(DEFAULT_LEVELS)
    elif settings.loss == "mse":
        if settings.model_options.get("quantile_levels"):
            raise ConfigError("--levels sets the levels of a quantile head, which --loss mse does not train")
        options.pop("quantile_levels", None)  # the preset's head: --loss mse trains the point forecast alone
    spec_size = get_spec(series.dataset).input_size if series.dataset else DEFAULT_INPUT_SIZE
    input_size = settings.input_size or training_preset.get("input_size") or spec_size
    if "season" in fields and "season" not in options:
        season = season_length(series.freq)
        if season is None or season > input_size:
            if settings.model_name != AUTO:
                raise ConfigError(
                    f"seasonal_naive: the data's frequency {series.freq!r} gives no season that fits "
                    f"input_size {input_size}; give --season N (N <= input_size)"
                )
            return None
        options["season"] = season
    lr = settings.lr or training_preset.get("lr") or TRAINING_DEFAULTS["lr"]
    toward_naive = settings.toward_naive
    if toward_naive is None:
        toward_naive = training_setting(model_name, preset_name, series.dataset, "toward_naive")
    return Candidate(label, model_name, options, lr, input_size, toward_naive)


def plan(settings: TrainSettings, series: TimeSeries) -> list[Candidate]:
    """The candidates a run fits: one model with its preset, a model's `--preset auto` variants, or, for
    `--model auto`, the baselines, S3Attention's auto variants and any `--candidates`."""
    if settings.model_name == AUTO:
        models = list(dict.fromkeys([*AUTO_MODELS, *settings.candidates]))
        named = [(model, AUTO if model == "s3attention" else DEFAULT) for model in models]
    else:
        unknown = sorted(set(settings.model_options) - _fields(settings.model_name))
        if unknown:
            raise ConfigError(f"model {settings.model_name!r} has no option(s) {unknown}")
        named = [(settings.model_name, settings.preset)]
    pairs = [
        (model, name)
        for model, preset_name in named
        for name in (auto_candidates(model) if preset_name == AUTO else (resolve(model, preset_name),))
    ]
    counts = {model: sum(1 for other, _ in pairs if other == model) for model, _ in pairs}
    labels = {
        (model, name): model if counts[model] == 1 and name == resolve(model) else f"{model}:{name}"
        for model, name in pairs
    }
    planned = [_candidate(labels[model, name], model, name, settings, series) for model, name in pairs]
    distinct = {}  # the same candidate planned twice (paper = reference outside ILI) runs once
    for candidate in planned:
        if candidate is not None:
            key = (
                candidate.model_name,
                repr(sorted(candidate.model_options.items())),
                candidate.lr,
                candidate.input_size,
                candidate.toward_naive,
            )
            distinct.setdefault(key, candidate)
    return list(distinct.values())


@rank_zero_only
def _clear(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


class Built(NamedTuple):
    """What a candidate is trained from: its windows (set up for fitting), data config, model and config."""

    datamodule: ForecastDataModule
    data: DataConfig
    model: nn.Module
    config: dict[str, Any]


def build_candidate(
    series: TimeSeries, settings: TrainSettings, candidate: Candidate, earlier: bool = False
) -> Built:
    """The windows and the untrained model of `candidate`, as `fit_candidate` trains them (seed first)."""
    datamodule = ForecastDataModule(
        series,
        candidate.input_size,
        settings.horizon,
        split=settings.split,
        batch_size=settings.batch_size,
        earlier=earlier,
    )
    datamodule.setup("fit")
    data = DataConfig(
        source=series.source,
        columns=series.columns,
        freq=series.freq,
        date_col=series.date_col,
        input_size=candidate.input_size,
        horizon=settings.horizon,
        split=settings.split,
        date_from=series.options.date_from,
        fill_missing=series.options.fill_missing,
        id_col=series.options.id_col,
        target_col=series.options.target_col,
        channels=series.options.channels,
        past_covariates=series.options.past_covariates,
        future_covariates=series.options.future_covariates,
        calendar=series.options.calendar,
    )
    config = {
        **candidate.model_options,
        "input_size": candidate.input_size,
        "horizon": settings.horizon,
        "n_channels": data.model_channels,
    }
    try:
        model = assemble(get_model(candidate.model_name, **config), data, fitting=True)
    except (TypeError, ValueError) as error:
        raise ForecasterError(f"cannot build model {candidate.label!r}: {error}") from None
    return Built(datamodule, data, model, config)


def fit_candidate(
    series: TimeSeries,
    settings: TrainSettings,
    candidate: Candidate,
    work_dir: Path,
    callbacks: Sequence[lightning.Callback] = (),
    earlier: bool = False,
) -> Fitted | None:
    """Train `candidate` (checkpoints and logs in `work_dir`, `callbacks` added to Lightning's), and where
    the validation split is short (MIN_VALIDATION_BLOCKS) once more for the earlier validation period;
    `earlier`: train for that period alone. None on the non-zero ranks of a DDP run."""
    check_magnitudes(series.source, series.frame)
    if not settings.resume:
        _clear(checkpoint_dir(work_dir))
    lightning.seed_everything(settings.seed, workers=True, verbose=False)
    datamodule, data, model, config = build_candidate(series, settings, candidate, earlier)
    options = settings.trainer
    with torch.random.fork_rng(devices=[]):  # scoring must leave the random state of training untouched
        initial = window_errors(model, datamodule.val_set)
        starts_as_naive = np.array_equal(initial, window_errors(naive_like(model), datamodule.val_set))
    training = training_record(
        candidate.label,
        candidate.lr,
        datamodule.window_counts(),
        sum(parameter.numel() for parameter in model.parameters()),
    )
    start = initial if starts_as_naive else None
    before = None if earlier else _earlier_fit(series, settings, candidate, work_dir, len(datamodule.val_set))
    scored_before = None if before is None else Score.of(before.val_errors, settings.horizon)
    if not any(parameter.requires_grad for parameter in model.parameters()):
        scaler = datamodule.scaler
        return Fitted(candidate, model.eval(), data, scaler, initial, training, scored_before, start)

    initial_state = copy.deepcopy(model.state_dict())
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
    callback = trainer.checkpoint_callback
    best = torch.load(callback.best_model_path, map_location="cpu", weights_only=True)
    module.load_state_dict(best["state_dict"])
    trained = window_errors(model.cpu(), datamodule.val_set)
    horizon = settings.horizon
    periods = [[Score.of(initial, horizon), Score.of(trained, horizon)]]
    if before is not None and before.start_errors is not None:
        periods.append([Score.of(before.start_errors, horizon), scored_before])
    kept_initial = starts_as_naive and simplest_consistent(periods) == 0
    if kept_initial:
        model.load_state_dict(initial_state)
    training.update(
        epochs=trainer.current_epoch,
        best_epoch=0 if kept_initial else int(best["epoch"]) + 1,
        stopped_early=bool(trainer.early_stopping_callback.stopped_epoch),
        kept_initial_weights=kept_initial,
        train_seconds=round(seconds, 3),
        world_size=trainer.world_size,
        cuda_graphs=graphed and capture_error is None,
        **({"cuda_graphs_error": capture_error} if capture_error else {}),
    )
    errors = initial if kept_initial else trained
    return Fitted(candidate, model.eval(), data, datamodule.scaler, errors, training, scored_before, start)


def _earlier_fit(
    series: TimeSeries, settings: TrainSettings, candidate: Candidate, work_dir: Path, val_windows: int
) -> Fitted | None:
    """`candidate` fitted for the earlier validation period, where the validation split holds fewer than
    MIN_VALIDATION_BLOCKS horizons and the rows allow an earlier period; else None."""
    if math.ceil(val_windows / settings.horizon) >= MIN_VALIDATION_BLOCKS:
        return None
    try:
        return fit_candidate(series, settings, candidate, work_dir / "earlier", earlier=True)
    except DataError:  # too few rows before an earlier period
        return None

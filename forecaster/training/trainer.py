"""The one place that builds Lightning Trainers: every run stops early, checkpoints and reports alike.

A run keeps Lightning's checkpoints and CSV logs under its work dir (`.<name>.work/` beside the bundle),
never in the bundle or the current directory: `checkpoints/best.ckpt` (lowest val_mse) and
`checkpoints/last.ckpt` (for `--resume`).
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lightning.pytorch as pl
from lightning.pytorch.callbacks import (
    Callback,
    EarlyStopping,
    ModelCheckpoint,
    RichModelSummary,
    RichProgressBar,
    TQDMProgressBar,
)
from lightning.pytorch.loggers import CSVLogger

from forecaster.training.settings import TrainerOptions

MONITOR = "val_mse"


def _progress_callbacks(enabled: bool) -> list[Callback]:
    """Rich bars on a terminal; plain tqdm lines when output goes to a file or pipe."""
    if not enabled:
        return []
    if sys.stderr.isatty():
        return [RichProgressBar(), RichModelSummary()]
    return [TQDMProgressBar(refresh_rate=50)]


@contextmanager
def lightning_quiet(quiet: bool = True) -> Iterator[None]:
    """Hold back Lightning's informational lines (devices found, tips, why fit stopped) and its warnings
    while `quiet`: the project's own lines report a run (`--verbose` shows them)."""
    loggers = [logging.getLogger(name) for name in ("lightning.pytorch", "lightning.fabric")]
    levels = [logger.level for logger in loggers]
    if quiet:
        for logger in loggers:
            logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            if quiet:
                warnings.filterwarnings("ignore", module=r"(lightning|pytorch_lightning|lightning_fabric)\b")
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def checkpoint_dir(work_dir: Path) -> Path:
    return Path(work_dir) / "checkpoints"


def build_trainer(work_dir: str | Path, options: TrainerOptions) -> pl.Trainer:
    """Fitting Trainer: EarlyStopping and ModelCheckpoint on val_mse; logs and checkpoints in `work_dir`."""
    work_dir = Path(work_dir)
    checkpoint = ModelCheckpoint(
        dirpath=checkpoint_dir(work_dir),
        filename="best",
        monitor=MONITOR,
        mode="min",
        save_top_k=1,
        save_last=True,
        enable_version_counter=False,
    )
    early_stopping = EarlyStopping(monitor=MONITOR, mode="min", patience=options.patience)
    return pl.Trainer(
        default_root_dir=work_dir,
        logger=CSVLogger(save_dir=work_dir, name="logs"),
        callbacks=[checkpoint, early_stopping, *_progress_callbacks(options.progress_bar)],
        max_epochs=options.max_epochs,
        accelerator=options.accelerator,
        devices=options.devices,
        strategy=options.strategy,
        gradient_clip_val=options.gradient_clip_val,
        deterministic=options.deterministic,
        limit_train_batches=options.limit_train_batches,
        enable_progress_bar=options.progress_bar,
        enable_model_summary=options.progress_bar,
    )


def build_eval_trainer(accelerator: str = "auto", progress_bar: bool = True) -> pl.Trainer:
    """Single-device Trainer for scoring a test split exactly once per window (no distributed sampler)."""
    return pl.Trainer(
        accelerator=accelerator,
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=progress_bar,
        callbacks=_progress_callbacks(progress_bar)[:1],
    )

"""The one place that builds Lightning Trainers: every run stops early, checkpoints and reports alike.

A run keeps Lightning's checkpoints and CSV logs under its work dir (`.<name>.work/` beside the bundle),
never in the bundle or the current directory: `checkpoints/best.ckpt` (lowest val_mse) and
`checkpoints/last.ckpt` (for `--resume`). Checkpoints are written whole or not at all, carry the settings
of the run that wrote them, and `--resume` reads them only once they are known to be this run's.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import (
    Callback,
    EarlyStopping,
    ModelCheckpoint,
    RichModelSummary,
    RichProgressBar,
    TQDMProgressBar,
)
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.plugins import TorchCheckpointIO

from forecaster.atomic import stops_deferred
from forecaster.cluster import lightning_loggers
from forecaster.errors import ConfigError, ForecasterError, WriteRefusedError, one_line
from forecaster.training.settings import TrainerOptions

log = logging.getLogger(__name__)

MONITOR = "val_mse"
RUN_KEY = "forecaster_run"  # where a checkpoint keeps the settings of the run that wrote it
# What Lightning reads back from a checkpoint to continue a fit.
RESUMED_KEYS = (
    "pytorch-lightning_version",
    "epoch",
    "global_step",
    "state_dict",
    "optimizer_states",
    "loops",
)
FRESH = "start the run without --resume"


def _progress_callbacks(enabled: bool) -> list[Callback]:
    """Rich bars on a terminal; plain tqdm lines when output goes to a file or pipe."""
    if not enabled:
        return []
    if sys.stderr.isatty():
        return [RichProgressBar(), RichModelSummary()]
    return [TQDMProgressBar(refresh_rate=50)]


@contextmanager
def lightning_quiet(quiet: bool = True) -> Iterator[None]:
    """Hold back Lightning's informational lines (devices found, tips, why fit stopped, seeds set) and its
    warnings while `quiet`: the project's own lines report a run (`--verbose` shows them). The standalone
    packages' too: PatchTST and iTransformer train through neuralforecast's, 64 banner lines a fit (h62)."""
    loggers = lightning_loggers()
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


class AtomicCheckpointIO(TorchCheckpointIO):
    """Checkpoints written to a temporary file beside their path and renamed over it, so a failed write (a
    full disk, an interrupt) leaves the previous checkpoint whole: Lightning's own write goes through a
    temporary file elsewhere and is copied into place, leaving a partial file when the copy fails."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
        path = Path(path)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with stops_deferred():  # a stop inside torch's writer reads as a failed write
                with open(temporary, "wb") as file:
                    torch.save(checkpoint, file)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, path)
        except (OSError, RuntimeError) as error:  # torch's zip writer on a full disk: "unexpected pos 64"
            full = getattr(error, "errno", None) == errno.ENOSPC or shutil.disk_usage(path.parent).free < 1e6
            why = (os.strerror(errno.ENOSPC) if full  # not torch's "[enforce fail at ...]" (h84 F7)
                   else error.strerror if isinstance(error, OSError) and error.strerror else reason(error))
            raise WriteRefusedError(
                f"{'disk full' if full else 'cannot write'} while writing checkpoint {path}: {why}; the "
                "previous checkpoint, if any, is intact (free space, then run again; --resume continues)"
            ) from None
        finally:
            temporary.unlink(missing_ok=True)


def reason(error: BaseException) -> str:
    """The start of an error's first line (torch's messages run to paragraphs), else its type."""
    return one_line((str(error).strip().splitlines() or [type(error).__name__])[0], 100)


def _plain(run: dict[str, Any]) -> dict[str, Any]:
    """Run settings as a checkpoint keeps them (JSON types: tuples become lists), so that they compare."""
    return json.loads(json.dumps(run, sort_keys=True))


class _RunSettings(Callback):
    """Writes the run's settings into every checkpoint, for `check_resumable` to compare."""

    def __init__(self, run: dict[str, Any]) -> None:
        self.run = _plain(run)

    def on_save_checkpoint(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict
    ) -> None:
        checkpoint[RUN_KEY] = self.run


def _shown(value: Any) -> str:
    return one_line("(none)" if value is None else value if isinstance(value, str) else json.dumps(value), 30)


def _differences(saved: Any, now: Any, prefix: str = "") -> list[str]:
    """`key: then -> now` for each setting that differs, nested settings named by their path."""
    if isinstance(saved, dict) and isinstance(now, dict):
        keys = sorted(set(saved) | set(now))
        return [
            line for key in keys for line in _differences(saved.get(key), now.get(key), f"{prefix}{key}.")
        ]
    return [] if saved == now else [f"{prefix.rstrip('.')}: {_shown(saved)} -> {_shown(now)}"]


def _weight_differences(saved: dict[str, Any], expected: dict[str, torch.Tensor]) -> list[str]:
    """`missing name`, `unexpected name` and `name: saved shape -> expected shape`, in that order."""
    missing, unexpected = sorted(expected.keys() - saved.keys()), sorted(saved.keys() - expected.keys())
    shapes = [
        f"{key}: {tuple(getattr(saved[key], 'shape', ()))} -> {tuple(expected[key].shape)}"
        for key in sorted(expected.keys() & saved.keys())
        if not isinstance(saved[key], torch.Tensor) or saved[key].shape != expected[key].shape
    ]
    return [*(f"missing {key}" for key in missing), *(f"unexpected {key}" for key in unexpected), *shapes]


def check_anything_to_resume(work_dir: Path) -> None:
    """ForecasterError, before any training, where `--resume` finds no checkpoint of the run at all."""
    if not any(Path(work_dir).glob("**/checkpoints/last.ckpt")):
        raise ForecasterError(f"nothing to resume: no checkpoint in {work_dir} ({FRESH})")


def check_resumable(work_dir: Path, run: dict[str, Any], state: dict[str, torch.Tensor]) -> Path | None:
    """The last checkpoint of `work_dir`, once it and the best one are known to be whole checkpoints of this
    run: readable by `torch.load(weights_only=True)`, written with the same `run` settings, holding weights
    of the `state`'s names and shapes. Lightning would fail on any other with a traceback, or continue
    another run's training; ForecasterError names what differs instead. None where the interrupted run had
    not checkpointed this fit yet (a later member or phase of a bagged run, h84 F1): it trains afresh."""
    folder = checkpoint_dir(work_dir)
    if not (folder / "last.ckpt").is_file():
        return None
    for name in ("last.ckpt", "best.ckpt"):
        _check_checkpoint(folder / name, _plain(run), state)
    return folder / "last.ckpt"


def _check_checkpoint(path: Path, run: dict[str, Any], state: dict[str, torch.Tensor]) -> None:
    if not path.is_file():
        raise ForecasterError(f"nothing to resume: {path} not found ({FRESH})")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many kinds, with paragraphs (and terminal escapes) to show
        raise ForecasterError(
            f"cannot resume: {path} is not a readable checkpoint ({type(error).__name__}: truncated, not "
            f"written by torch, or holding more than weights and plain values); {FRESH}"
        ) from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get(RUN_KEY), dict):
        raise ForecasterError(f"cannot resume: {path} was not written by `forecaster train`; {FRESH}")
    absent = [key for key in RESUMED_KEYS if key not in checkpoint]
    if absent:
        raise ForecasterError(f"cannot resume: {path} lacks {', '.join(absent)}; {FRESH}")
    changed = _differences(checkpoint[RUN_KEY], run)
    if changed:
        raise ForecasterError(
            f"cannot resume from {path.name}: its run had other settings ({'; '.join(changed[:3])}); use "
            f"that run's settings, or {FRESH}"
        )
    saved = checkpoint["state_dict"]
    wrong = ["not a mapping"] if not isinstance(saved, dict) else _weight_differences(saved, state)
    if wrong:
        raise ForecasterError(
            f"cannot resume from {path.name}: its weights do not fit this model ({'; '.join(wrong[:3])}); "
            f"{FRESH}"
        )


class _StoppedStaysStopped(Callback):
    """A resumed fit that early stopping had ended trains no further: Lightning restores the stopping state
    but not the stop, and trained one more epoch of each finished member of a resumed bagged run."""

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if trainer.early_stopping_callback is not None and trainer.early_stopping_callback.stopped_epoch:
            trainer.should_stop = True


class TrainingLog(CSVLogger):
    """Lightning's CSV log of a run's metrics, which a full disk no longer ends the run over: the trained
    model was lost to `metrics.csv` written after the fit, "No space left on device" naming no file (h44).
    The log keeps what it could write, said once; the bundle is saved, or refused by its own check."""

    unwritten = False

    def save(self) -> None:
        try:
            super().save()
        except OSError as error:
            if not self.unwritten:
                self.unwritten = True
                log.warning("note: training log %s not written (%s); the run goes on without it",
                            Path(self.log_dir) / "metrics.csv", error.strerror or error)  # fmt: skip


def build_trainer(
    work_dir: str | Path, options: TrainerOptions, run: dict[str, Any], callbacks: Sequence[pl.Callback] = ()
) -> pl.Trainer:
    """Fitting Trainer: EarlyStopping and ModelCheckpoint on val_mse; logs and checkpoints in `work_dir`,
    each checkpoint written atomically with the `run` settings that `check_resumable` compares."""
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
        logger=TrainingLog(save_dir=work_dir, name="logs"),
        callbacks=[
            checkpoint,
            early_stopping,
            _RunSettings(run),
            _StoppedStaysStopped(),
            *_progress_callbacks(options.progress_bar),
            *callbacks,
        ],
        plugins=[AtomicCheckpointIO()],
        max_epochs=options.max_epochs,
        accelerator=options.accelerator,
        devices=options.devices,
        strategy=options.strategy,
        gradient_clip_val=options.gradient_clip_val,
        deterministic=options.deterministic,
        limit_train_batches=options.limit_train_batches,
        enable_progress_bar=options.progress_bar,
        enable_model_summary=options.verbose,  # Lightning's parameter table is its chatter too
    )


def check_devices(accelerator: str, devices: Any = "auto", strategy: str = "auto") -> None:
    """Refuse, before any model is built, what Lightning would refuse only once a fit starts (an unknown
    accelerator or strategy, CUDA where there is none, more GPUs than there are) and more CPU processes
    than CPUs: one line each."""
    from lightning.fabric.utilities.exceptions import MisconfigurationException
    from lightning.pytorch.accelerators import CPUAccelerator

    asked = f"--accelerator {accelerator}, --devices {devices}, --strategy {strategy}"
    try:
        with lightning_quiet():
            trainer = pl.Trainer(accelerator=accelerator, devices=devices, strategy=strategy, logger=False,
                                 enable_checkpointing=False, enable_progress_bar=False)  # fmt: skip
    except (ValueError, TypeError, RuntimeError, ImportError, MisconfigurationException) as error:  # tpu: xla
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ConfigError(f"{asked}: {reason}") from None
    cpus = os.cpu_count() or 1
    if isinstance(trainer.accelerator, CPUAccelerator) and trainer.num_devices > cpus:
        raise ConfigError(f"{asked}: {trainer.num_devices} processes on CPU; this machine has {cpus} CPUs")

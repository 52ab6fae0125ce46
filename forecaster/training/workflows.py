"""The train and evaluate workflows behind `forecaster train` and `forecaster evaluate`.

train: series -> the candidates the settings name (`fit.plan`: one model, a model's preset variants, or
`--model auto`) -> each fitted on the train windows and judged on the validation windows -> the best on
validation kept (the test split is never read for a choice) -> test metrics, with the naive forecast's on
the same windows -> bundle. Test metrics come from `evaluate_model`, the very code `forecaster evaluate`
runs on the saved bundle, so both commands print the same numbers.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning
import torch
from torch import nn

import forecaster
from forecaster.artifacts import Bundle, check_out_dir, save_bundle, work_dir_for
from forecaster.data import TimeSeries, load_dataset, read_csv
from forecaster.errors import ConfigError, DataError
from forecaster.training.fit import Fitted, fit_candidate, plan
from forecaster.training.scoring import block_means, evaluate_model, naive_metrics, simplest_within_evidence
from forecaster.training.settings import TrainSettings


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


def _select(
    series: TimeSeries, settings: TrainSettings, work_dir: Path
) -> tuple[Fitted, dict[str, float]] | None:
    """Fit every planned candidate; keep the simplest within two standard errors of the best on validation
    (candidates are planned simplest first)."""
    candidates = plan(settings, series)
    if len(candidates) > 1 and settings.trainer.devices not in ("auto", 1):
        raise ConfigError("choosing among candidates trains on one device; leave out --devices/--strategy")
    fitted: list[Fitted] = []
    for candidate in candidates:
        folder = work_dir if len(candidates) == 1 else work_dir / candidate.label.replace(":", "-")
        result = fit_candidate(series, settings, candidate, folder)
        if result is None:
            return None
        fitted.append(result)
    chosen = simplest_within_evidence(
        [result.val_mse for result in fitted],
        [block_means(result.val_errors, settings.horizon) for result in fitted],
    )
    return fitted[chosen], {result.candidate.label: result.val_mse for result in fitted}


def train_forecaster(series: TimeSeries, out: str | Path, settings: TrainSettings) -> TrainOutcome | None:
    """Fit the planned candidates, keep the best on validation, score the test split, save the bundle.

    Returns None on the non-zero ranks of a distributed run (only rank 0 scores and writes the bundle).
    """
    out = Path(out)
    check_out_dir(out, settings.overwrite)
    selected = _select(series, settings, work_dir_for(out))
    if selected is None:
        return None
    best, scores = selected
    options = settings.trainer
    metrics = evaluate_model(
        best.model,
        best.data,
        best.scaler,
        series,
        accelerator=options.accelerator,
        progress_bar=options.progress_bar,
    )
    metrics["best_val_mse"] = best.val_mse
    metrics["val_blocks"] = block_means(best.val_errors, settings.horizon).tolist()
    metrics["naive"] = {
        "val_mse": naive_metrics(best.data, best.scaler, series, "val")["mse"],
        **naive_metrics(best.data, best.scaler, series, "test"),
    }
    training = {
        "dataset": series.dataset,
        "model": settings.model_name,
        "preset": settings.preset,
        **best.training,
        "model_options": best.candidate.model_options,
        "selection": scores,
        "max_epochs": options.max_epochs,
        "patience": options.patience,
        "seed": settings.seed,
        "weight_decay": settings.weight_decay,
        "lr_schedule": settings.lr_schedule,
        "batch_size": settings.batch_size,
        "limit_train_batches": options.limit_train_batches,
        "gradient_clip_val": options.gradient_clip_val,
        "resumed": settings.resume,
        "versions": _versions(),
    }
    path = save_bundle(
        out,
        model=best.model,
        model_name=best.candidate.model_name,
        metrics=metrics,
        training=training,
        data=best.data,
        scaler=best.scaler,
        overwrite=settings.overwrite,
    )
    return TrainOutcome(path, metrics, training, best.model)

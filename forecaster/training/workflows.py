"""The train and evaluate workflows behind `forecaster train` and `forecaster evaluate`.

train: series -> the candidates the settings name (`planning.plan`: one model, a model's preset variants, or
`--model auto`) -> each fitted on the train windows and judged on the validation windows -> the best on
validation kept (the test split is never read for a choice) -> test metrics, with the naive forecast's on
the same windows -> bundle. Test metrics come from `evaluate_model`, the very code `forecaster evaluate`
(`evaluation`) runs on the saved bundle, so both commands print the same numbers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import platform
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_only as rank_zero
from torch import nn

import forecaster
from forecaster.artifacts import COMPANION, check_out_dir, model_digest, save_bundle, work_dir_for
from forecaster.atomic import held_by_this_run
from forecaster.calibration import DEFAULT_LEVELS, RECALIBRATED, Calibration, undercovered
from forecaster.data import Scaler, TimeSeries
from forecaster.data.config import DataConfig
from forecaster.data.missing import some
from forecaster.data.scaling import nonnegative_columns
from forecaster.data.series import INDEPENDENT, DataQualityWarning
from forecaster.data.splits import AUTO_SPLIT, HOLDOUT, resolve_split, series_lengths, usable
from forecaster.data.variables import column_variables
from forecaster.errors import ConfigError
from forecaster.models.assembly import stored
from forecaster.models.baselines import NOTHING_TO_FIT
from forecaster.models.ensemble import Ensemble
from forecaster.models.toward_naive import TowardNaive
from forecaster.presets import AUTO, DEFAULT
from forecaster.training.combine import ENSEMBLE, fits_nothing_count, with_combinations
from forecaster.training.companion import companion_candidates, companion_panel
from forecaster.training.evaluation import reference_seasons
from forecaster.training.fit import Fitted, fit_candidate
from forecaster.training.graphs import use_cuda_graphs
from forecaster.training.growth import seasonal_in_place
from forecaster.training.planning import (
    Candidate,
    plan_fitting,
    split_for,
)
from forecaster.training.references import naive_if_it_lost_since, with_references
from forecaster.training.scoring import (
    Score,
    baseline_metrics,
    block_means,
    calibrate,
    calibration_windows,
    erred_where_certain,
    evaluate_model,
    history_means,
    interval_method,
    interval_report,
    season_of,
    simplest_consistent,
    split_windows,
    toward_naive_weights,
    window_errors,
)
from forecaster.training.settings import RECIPE, TrainSettings, recipe
from forecaster.training.trainer import check_anything_to_resume, check_devices, lightning_quiet

log = logging.getLogger(__name__)


@dataclass
class TrainOutcome:
    """What rank 0 of a run returns: the bundle's path and contents, and the trained model (eval mode)."""

    bundle_path: Path
    metrics: dict[str, Any]
    training: dict[str, Any]
    model: nn.Module


def _versions() -> dict[str, str]:
    return {
        "forecaster": forecaster.__version__,
        "torch": torch.__version__,
        "lightning": lightning.__version__,
        "python": platform.python_version(),
    }


def without_short_series(
    series: TimeSeries, settings: TrainSettings, candidates: list[Candidate]
) -> TimeSeries:
    """Independent series: the ones too short to give every split a window (a 3-year series in a panel of
    40-year ones) are left out with one note, since the others still train one shared model (AutoGluon drops
    them alike); a panel where every series is too short is refused as before. Each candidate asks the
    windows it needs, a forecast that fits nothing no train window: EmplUK's firms of 7-9 years had been
    judged by drift's 2-step input as if trained (8 rows at horizon 2), and 103 of 140 were left out of a
    naive forecast that needs 5. The note names the models whose windows they lack (it had named the longest
    input planned, which a series left out by a trained model's shorter one may hold, h109). Split auto
    (`split_for`) notes the series split holdout."""
    if series.options.channels != INDEPENDENT or len(series.columns) < 2:
        return series
    split = split_for(series, settings)
    lengths = dict(zip(series.columns, series_lengths(series), strict=True))
    lacking = {name: [c for c in candidates if not usable(
        length, c.input_size, settings.horizon, split, series.freq, c.model_name not in NOTHING_TO_FIT)]
        for name, length in lengths.items()}  # fmt: skip
    short = [name for name, models in lacking.items() if models]
    if len(short) == len(series.columns):
        return series
    held = [f"{name!r} ({length} rows)" for name, length in lengths.items() if name not in short
            and resolve_split(split, length, settings.horizon) == HOLDOUT]
    if split == AUTO_SPLIT and held:
        warnings.warn(
            f"{series.source}: note: each series is split 7:1:2 where its validation and test rows hold the "
            f"horizon, else holdout (its last {settings.horizon} rows test, the {settings.horizon} before "
            f"validate): {len(held)} series split holdout, {some(held)}", DataQualityWarning, stacklevel=2,
        )  # fmt: skip
    if not short:
        return series
    shown = f"{split} (7:1:2, or holdout on few rows)" if split == AUTO_SPLIT else split
    needs = [f"{c.label} ({c.input_size} steps)" for c in candidates
             if any(c in lacking[name] for name in short)]  # fmt: skip
    warnings.warn(
        f"{series.source}: note: left out {len(short)} of {len(series.columns)} series too short for split "
        f"{shown} with horizon {settings.horizon} and the input of {some(needs)}: "
        f"{', '.join(map(repr, short))}",
        DataQualityWarning, stacklevel=2,
    )  # fmt: skip
    return dataclasses.replace(series, frame=series.frame.drop(columns=short))


def _fit_planned(
    series: TimeSeries, settings: TrainSettings, candidates: list[Candidate], work_dir: Path
) -> list[Fitted] | None:
    """Fit every planned candidate, simplest first; None on the non-zero ranks of a distributed run."""
    if len(candidates) > 1 and settings.trainer.devices not in ("auto", 1):
        raise ConfigError("choosing among candidates trains on one device; leave out --devices/--strategy")
    fitted: list[Fitted] = []
    for number, candidate in enumerate(candidates, start=1):
        if len(candidates) > 1:
            log.info("training candidate %d of %d: %s", number, len(candidates), candidate.label)
        folder = work_dir if len(candidates) == 1 else work_dir / candidate.label.replace(":", "-")
        result = fit_candidate(series, settings, candidate, folder)
        if result is None:
            return None
        fitted.append(result)
    return fitted


def keep_best(
    fitted: list[Fitted], series: TimeSeries, settings: TrainSettings, held_to_naive: bool = False
) -> tuple[Fitted, dict]:
    """The simplest fitted candidate within two standard errors of the best on validation, and on the earlier
    validation period where they were scored on one (`scoring.simplest_consistent`; for `--model auto` and
    `--preset auto`, their ensemble is offered last, `combine`), and every candidate's validation MSE.
    `held_to_naive`: the forecasts that fit nothing after the first are held against it as trained ones are
    (clearly lower), not only lower on every period and train split (`train_companion`)."""
    if AUTO in (settings.model_name, settings.preset):
        fitted = with_combinations(fitted, series)
    periods = [[Score.of(result.val_errors, settings.horizon) for result in fitted]]
    if all(result.earlier is not None for result in fitted):
        periods.append([result.earlier for result in fitted])
    baselines = 1 if held_to_naive else fits_nothing_count(fitted)
    histories = [result.history for result in fitted[:baselines]]
    seasons = [season_of(result.model) for result in fitted[:baselines]]
    chosen = simplest_consistent(periods, max(baselines, 1), histories, seasons)
    if len(fitted) > 1:
        _say_why(fitted, chosen, periods, baselines)
    return fitted[chosen], {result.candidate.label: result.val_mse for result in fitted}


def _say_why(fitted: list[Fitted], chosen: int, periods: list[list[Score]], baselines: int) -> None:
    """Log what the choice rests on beyond the validation MSEs train prints: the earlier period's MSEs, and
    why a candidate of lower validation MSE was not kept."""
    labels = [result.candidate.label for result in fitted]
    if len(periods) > 1:
        earlier = sorted(zip(labels, [score.mse for score in periods[1]], strict=True), key=lambda kv: kv[1])
        log.info("earlier validation period (trained on the rows before it): %s",
                 ", ".join(f"{label} {mse:.4f}" for label, mse in earlier))  # fmt: skip
    lowest = int(np.argmin([score.mse for score in periods[0]]))
    if lowest == chosen:
        return
    if max(lowest, chosen) < baselines:  # two forecasts that fit nothing: the simpler unless lower on each
        said = [f"{scores[lowest].mse:.4f} against {scores[chosen].mse:.4f}" for scores in periods]
        if means := history_means(fitted[lowest].history, fitted[chosen].history):
            said.append(f"train split {means[0].mean():.4f} against {means[1].mean():.4f}")
        elif season_of(fitted[chosen].model) > 1 and season_of(fitted[lowest].model) == 1:
            said.append("no train split to say: a forecast without a season replaces a seasonal one on two "
                        "blocks at least")  # fmt: skip
        log.info("kept %s though %s scored lower on validation: of the forecasts that fit nothing, a later "
                 "one is kept only where it is lower on every validation period and on the train split's "
                 "windows (%s)", labels[chosen], labels[lowest], ", ".join(said))  # fmt: skip
    else:
        blocks = len(periods[0][chosen].blocks)
        log.info("kept %s though %s scored lower on validation: not clearly lower (two standard errors of "
                 "%d block mean(s)%s), too little evidence to leave the simpler forecast",
                 labels[chosen], labels[lowest], blocks,
                 " on each period" if len(periods) > 1 else "")  # fmt: skip


def train_forecaster(
    series: TimeSeries, out: str | Path, settings: TrainSettings, record: dict[str, Any] | None = None
) -> TrainOutcome | None:
    """Fit the planned candidates, keep the best on validation, score the test split, save the bundle
    (`record`: more of how it was made, kept in its training record).

    Returns None on the non-zero ranks of a distributed run (only rank 0 scores and writes the bundle).
    """
    out = Path(out)
    check_out_dir(out, settings.overwrite)
    work_dir = work_dir_for(out)  # one run at a time: DDP's other ranks are rank 0's run, which holds it
    with held_by_this_run(work_dir, f"output {out}") if rank_zero.rank == 0 else contextlib.nullcontext():
        if settings.resume:
            check_anything_to_resume(work_dir)
        return _train_held(series, out, work_dir, settings, record)


def _train_held(
    series: TimeSeries, out: Path, work_dir: Path, settings: TrainSettings, record: dict[str, Any] | None
) -> TrainOutcome | None:
    options = settings.trainer
    check_devices(options.accelerator, options.devices, options.strategy)
    use_cuda_graphs(options.cuda_graphs, options.accelerator, options.devices, options.strategy)  # early
    with lightning_quiet(not options.verbose):
        settings, candidates = plan_fitting(settings, series)
        series, record = split_off_short(series, settings, candidates, work_dir, record)
        fitted = _fit_planned(series, settings, candidates, work_dir)
        if fitted is None:
            return None
        fitted = with_references(fitted, series, settings, work_dir)
        best, scores = keep_best(fitted, series, settings)
        best = seasonal_in_place(best, fitted, series, settings)
        best = naive_if_it_lost_since(best, fitted, series, settings, work_dir)
        return save_kept(best, scores, series, out, settings, record, companion_bundle(work_dir, record))


def split_off_short(
    series: TimeSeries, settings: TrainSettings, candidates: list[Candidate], work_dir: Path,
    record: dict[str, Any] | None,
) -> tuple[TimeSeries, dict[str, Any] | None]:
    """The series the `candidates` train on (`without_short_series`) and the training record saying which
    are left out, the short ones that hold naive's windows trained into a companion in `work_dir`
    (`train_companion`, `companion_bundle`): what train and tune save beside the kept model."""
    kept = without_short_series(series, settings, candidates)
    if short := [name for name in series.columns if name not in kept.columns]:  # said again at predict
        companion = train_companion(series, short, settings, work_dir) or {}
        held = companion.get(COMPANION, {}).get("series", [])
        record = {**(record or {}), **companion, "left_out": [name for name in short if name not in held]}
    if series.others:  # the columns the targets given left out: no new series at predict (h75 F20)
        record = {**(record or {}), "beside_targets": list(series.others)}
    return kept, record


def companion_bundle(work_dir: Path, record: dict[str, Any] | None) -> Path | None:
    """Where `split_off_short` saved the companion that `record` names, for `save_kept`; None without one."""
    return work_dir / f"{COMPANION}-bundle" if record and COMPANION in record else None


def train_companion(
    series: TimeSeries, short: list[str], settings: TrainSettings, work_dir: Path
) -> dict[str, Any] | None:
    """The companion of a panel's left-out series (`companion`), saved in `work_dir` for the bundle to take
    in, and its training record's field; None where none of them holds naive's windows, and on a distributed
    run's other ranks (which save no bundle: theirs, written over rank 0's, made its digest stale, h130)."""
    if rank_zero.rank != 0:
        return None
    panel = companion_panel(series, settings, short)
    candidates, chosen = ([], "") if panel is None else companion_candidates(settings, panel)
    if not candidates:
        return None
    size = candidates[0].input_size
    first = candidates[0].model_name
    one = dataclasses.replace(settings.trainer, devices=1, strategy="auto")  # nothing fitted, none shared
    asked = dataclasses.replace(settings, model_name=first, preset=DEFAULT, input_size=size, overwrite=True,
                                trainer=one)  # fmt: skip
    fitted = _fit_planned(panel, asked, candidates, work_dir / COMPANION)
    if fitted is None:
        return None
    best, scores = keep_best(fitted, panel, asked, held_to_naive=True)  # their train splits hold no window
    asked = dataclasses.replace(asked, model_name=best.candidate.model_name)
    path = save_kept(best, scores, panel, work_dir / f"{COMPANION}-bundle", asked).bundle_path
    warnings.warn(f"{series.source}: note: {len(panel.columns)} of them forecast by {best.candidate.label} "
                  f"({size}-step input), {chosen}: {', '.join(map(repr, panel.columns))}",
                  DataQualityWarning, stacklevel=2)  # fmt: skip
    forecast = [name for name in series.columns if name not in short or name in panel.columns]  # file order
    return {COMPANION: {"series": list(panel.columns),
                        "places": [forecast.index(name) for name in panel.columns],
                        "sha256": model_digest(path)}}  # fmt: skip


def save_kept(
    best: Fitted,
    scores: dict[str, float],
    series: TimeSeries,
    out: Path,
    settings: TrainSettings,
    record: dict[str, Any] | None = None,
    companion: Path | None = None,
) -> TrainOutcome:
    """Finish the kept candidate (`finish`) and save it as the bundle `out` (with its `companion` bundle),
    with how it was chosen."""
    options = settings.trainer
    finished = finish(
        best.model,
        best.data,
        best.scaler,
        series,
        toward_naive=best.candidate.toward_naive,
        naive_start=best.training["kept_initial_weights"],
        calibrating=best.calibrating,
    )
    metrics = {
        **finished.metrics,
        "best_val_mse": best.val_mse,
        "val_blocks": block_means(best.val_errors, settings.horizon).tolist(),
    }
    training = {
        "dataset": series.dataset,
        "model": settings.model_name,
        "preset": settings.preset,
        **best.training,
        "model_options": best.candidate.model_options,
        **({} if best.earlier is None else {
            "earlier_validation": {"mse": best.earlier.mse, "blocks": best.earlier.blocks.tolist()}
        }),
        "toward_naive": best.candidate.toward_naive,
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
        RECIPE: recipe(settings),  # what was asked: `Forecaster.load(p).fit(df)` trains it again
        "versions": _versions(),
        "nonnegative": nonnegative_columns(series.frame[series.columns],  # forecasts floored at 0 there
                                           column_variables(series.columns, series.options)),
        **(record or {}),
    }
    path = save_bundle(
        out,
        model=finished.model,
        model_name=ENSEMBLE if isinstance(stored(best.model), Ensemble) else best.candidate.model_name,
        metrics=metrics,
        training=training,
        data=best.data,
        scaler=best.scaler,
        calibration=finished.calibration,
        overwrite=settings.overwrite,
        companion=companion,
    )
    return TrainOutcome(path, metrics, training, finished.model)


def shrinks_toward_naive(model: nn.Module, *, toward_naive: bool, naive_start: bool) -> bool:
    """Whether `finish` shrinks `model` toward naive: asked for, and something trained off the naive start."""
    return toward_naive and not naive_start and any(p.requires_grad for p in model.parameters())


@dataclass
class Finished:
    """The kept model as it is saved, its test metrics (next to naive's) and its interval calibration."""

    model: nn.Module
    metrics: dict[str, Any]
    calibration: Calibration


def finish(
    model: nn.Module,
    data: DataConfig,
    scaler: Scaler,
    series: TimeSeries,
    *,
    toward_naive: bool,
    naive_start: bool,
    calibrating: tuple[nn.Module, DataConfig] | None = None,
) -> Finished:
    """What follows training, on the kept model: shrunk toward the naive forecast on the validation split
    (if `toward_naive`, and unless it has nothing trained or kept its naive start), scored on the test split
    next to naive, its intervals calibrated on validation (`calibration_windows`) and scored on test; on a
    user's file where they covered far less of the test split than asked, or had no width where it erred,
    calibrated again on the latest windows, validation's and test's (the margins of windows decades earlier,
    at a tenth of the level, covered 0.55 / 0.75 of 42 such series' later points at 80% / 95%; recalibrated
    so, 0.80 / 0.88, h43). `calibrating`: the model and data whose validation windows stand in for the
    model's where validation holds none of its input (`growth`).
    `forecaster benchmark --refinish` runs it again on saved bundles when these steps change."""
    calibrated, calibrated_data = calibrating or (model, data)
    validation = split_windows(calibrated_data, scaler, series, "val")
    shrinkage = {}
    if shrinks_toward_naive(model, toward_naive=toward_naive, naive_start=naive_start):
        weights = toward_naive_weights(model, validation)
        model = TowardNaive(model, weights).eval()
        shrinkage = {
            "weight_step1": float(weights[0]),
            "weight_mean": float(weights.mean()),
            "val_mse": float(window_errors(model, validation).mean()),
        }
    test = split_windows(data, scaler, series, "test")  # built once for every score of the test split
    metrics = evaluate_model(model, test, data, scaler)
    if shrinkage:
        metrics["toward_naive"] = shrinkage
    on_validation = baseline_metrics(validation, calibrated_data, scaler, reference_seasons(calibrated_data))
    for name, scores in baseline_metrics(test, data, scaler, reference_seasons(data)).items():
        scored = {"val_mse": on_validation[name]["mse"]} if name in on_validation else {}  # a season it holds
        metrics[name] = {**scored, **scores}
    method = interval_method(model, head_trained=not naive_start)
    windows = calibration_windows(calibrated, naive_start, calibrated_data, scaler, series, validation)
    calibration = calibrate(calibrated, windows, method, data.freq)
    levels = [level for level in DEFAULT_LEVELS if level in calibration.available_levels()]
    if levels:
        metrics.update(interval_report(model, calibration, test, levels))
        moved = series.dataset is None and (  # a user's file moved: the latest windows calibrate
            undercovered(metrics["intervals"]) or erred_where_certain(model, calibration, test, levels))
        if moved:
            tested = test if calibrating is None else split_windows(calibrated_data, scaler, series, "test")
            latest = {"the validation split": validation, "the test split": tested}
            calibration = calibrate(calibrated, latest, method, data.freq)
            metrics[RECALIBRATED] = calibration.source  # the scores above measured the first (out of sample)
    return Finished(model, metrics, calibration)

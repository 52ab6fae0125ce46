"""Fitting one candidate: a model with its options, learning rate and input size, trained on the split's
train windows and judged on its validation windows.

Early stopping keeps the epoch with the lowest validation MSE. A model whose untrained form is the naive
forecast (S3Attention with `anchor="last"`, checked on the validation windows) keeps its trained weights only
if they beat its initial, naive ones by more than two standard errors (`scoring.simplest_consistent`; on a
short validation split, on an earlier validation period too): it stays the naive forecast unless
validation clearly says otherwise. Models without parameters (the baselines of
`baselines.NOTHING_TO_FIT`) are scored, not trained.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning
import numpy as np
import torch
from torch import nn

from forecaster.artifacts import Bundle, DataConfig
from forecaster.data import ForecastDataModule, Scaler, TimeSeries
from forecaster.data.missing import check_magnitudes, some, when
from forecaster.errors import DataError, ForecasterError
from forecaster.models import get_model
from forecaster.models.assembly import assemble, naive_like
from forecaster.models.baselines import NOTHING_TO_FIT
from forecaster.models.ensemble import Ensemble
from forecaster.tensor_checks import check_model_size
from forecaster.training.members import Built, member_seeds, train_member
from forecaster.training.planning import Candidate, logged_channels, split_for
from forecaster.training.scoring import (
    Score,
    simplest_consistent,
    split_windows,
    train_split_history,
    window_errors,
)
from forecaster.training.settings import LONGER_INPUT, TrainSettings

log = logging.getLogger(__name__)

# A validation split holding fewer horizons than this (non-overlapping) is too short to judge a model on:
# each candidate is also trained on the rows before an earlier validation period (`splits.earlier_period`)
# and scored there, and a model is kept over a simpler one only if it is better on both periods.
MIN_VALIDATION_BLOCKS = 4


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
    history: np.ndarray | None = None  # fitting nothing: its train split errors, `train_split_history`
    # The model and data whose validation windows calibrate its intervals where validation holds none of its
    # input (`growth`); None: its own.
    calibrating: tuple[nn.Module, DataConfig] | None = None

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


def training_notes(training: dict[str, Any], metrics: dict[str, Any]) -> list[str]:
    """What a user of a trained model should know of it: it is the naive forecast (training kept its initial
    weights), or a baseline forecasts validation at least as well; the command line prints these, `fit`
    warns."""
    if not training["parameters"]:
        return []
    if training["kept_initial_weights"]:
        return [f"{training['candidate']} keeps its initial weights, the naive forecast: training did not "
                "clearly improve on them"]  # fmt: skip
    naive = metrics["naive"]["val_mse"]
    seasonal = metrics.get("seasonal_naive", {}).get("val_mse", float("inf"))
    auto = "validation; the model 'auto' (`--model auto`) keeps the best of it and the baselines"
    if naive <= metrics["best_val_mse"]:
        return [f"the naive forecast (the last value repeated) is at least as good as this model on {auto}"]
    if seasonal < metrics["best_val_mse"]:
        return [f"the seasonal naive forecast (the last season repeated) is better than this model on {auto}"]
    return []


def scored_notes(metrics: dict[str, Any], trained_here: bool = True, bands: bool = True) -> list[str]:
    """What the test split's scores say a user should know: the kept forecast scored above the naive one, and
    with `bands`, the coverage rests on few windows or fell far short; `trained_here`: of the run that chose
    the model (`train`, `fit`), not of rows scored later (`evaluate`). The command line prints these, `fit`
    warns (it had said nothing of a model at 2.55x the naive forecast's test MSE, h72 F9)."""
    from forecaster.calibration import FEW_WINDOWS, RECALIBRATED, undercovered

    notes, intervals, windows = [], metrics.get("intervals", {}) if bands else {}, metrics["windows"]
    short = [f"{level}% {coverage:.2f}" for level, coverage in undercovered(intervals).items()]
    naive_mse = metrics.get("naive", {}).get("mse")
    if naive_mse is not None and metrics["mse"] > naive_mse * (1 + 1e-6):  # not naive itself, its rounding
        scores = f"({metrics['mse']:.4f} against {naive_mse:.4f})"
        if trained_here:  # kept on validation, not clearly lost on test ("not by enough" of 18x on 1, h43)
            notes.append(f"on the test split the kept forecast scored above the naive forecast {scores}, on "
                         f"{windows} test window{'s' if windows != 1 else ''}: too little evidence to leave "
                         "what validation chose; --model naive keeps the naive forecast")  # fmt: skip
        else:
            notes.append(f"on these rows the model scored above the naive forecast {scores}; `forecaster "
                         "train --model naive` keeps the naive forecast")  # fmt: skip
    if intervals and windows < FEW_WINDOWS:  # a few overlapping windows: a handful of outcomes
        again = "`forecaster evaluate` on later rows measures" if trained_here else "later rows measure"
        notes.append(f"coverage measured on {windows} test window(s) says little; {again} it again")
    if RECALIBRATED in metrics and bands:  # train did what the note below advises
        missed = (f"covered far less of the test split than asked ({', '.join(short)})" if short else
                  "had no width where the test split erred")  # fmt: skip
        notes.append(f"the intervals {missed}: the series moved after the windows that calibrated them; the "
                     f"bundle's are calibrated again on the latest ({metrics[RECALIBRATED]}): later rows "
                     "measure them (`forecaster evaluate`)")  # fmt: skip
    elif short:  # said on few windows too: JJ's 95% intervals covered 0.53 of 8, unsaid (h34)
        notes.append(f"the intervals covered far less of the test split than asked ({', '.join(short)}): the "
                     "series moved after the windows that calibrated them; `forecaster calibrate --model M "
                     "--csv RECENT.csv --on all` recalibrates on recent rows")  # fmt: skip
    return notes


def transform_notes(bundle: Bundle) -> list[str]:
    """The columns a model forecasts in logarithms (`--transform`), which its user should know of: their
    forecasts stay positive, their intervals widen with the level, and rows at or below 0 are refused."""
    logged = bundle.scaler.logged_columns(bundle.data.columns)
    if not logged:
        return []
    return [f"forecast {some(list(map(repr, logged)))} in logarithms (--transform; none keeps the values as "
            "they are): forecasts stay positive and intervals widen with the level"]  # fmt: skip


def outlier_notes(bundle: Bundle, series: TimeSeries) -> list[str]:
    """The isolated outliers (a typo, a one-off) of each series' last input window that the kept forecast
    fitted its states as if they were their neighbours' value (`forecaster.models.outliers`); the rows stay as
    given."""
    from forecaster.models.outliers import FILLED, SPREAD_ONLY, isolated_outliers

    season = getattr(getattr(bundle.model, "config", None), "season", 1)  # the mean reads no season
    if bundle.model_name not in FILLED or season is None or bundle.data is None:
        return []
    notes = []
    for index, name in enumerate(bundle.data.columns):
        if name not in series.frame.columns:
            continue
        rows = series.frame[name].dropna().iloc[-bundle.data.input_size :]  # its own end (independent series)
        if len(rows) < 3:
            continue
        scaler = bundle.scaler.channel(index)
        values = np.array(rows, dtype=np.float64)  # a copy: pandas 3 answers a read-only view, torch warns
        scaled = scaler.transform(values[:, None])[:, 0]  # as the model reads them
        found = isolated_outliers(torch.from_numpy(scaled)[None], season, FILLED[bundle.model_name],
                                  bundle.model_name in SPREAD_ONLY)  # fmt: skip
        flags, local, scale = (part[0].numpy() for part in found)
        # the estimate in the rows' own units: weeks of 0 around a cell read 0, not the scaler's round trip
        # (4.58e-16, h107 R5), and 0.0002 is not snapped to 0 beside a typo of 1e9 (h117)
        estimate = isolated_outliers(torch.from_numpy(values)[None], season)[1][0].numpy()
        for step in np.flatnonzero(flags):
            distance = abs(scaled[step] - local[step]) / scale
            notes.append(f"{name!r} at {when(rows.index[step])}: {rows.iat[step]:g} is {distance:.0f} robust "
                         f"standard deviations from its neighbours; {bundle.model_name} fitted as if it were "
                         f"{estimate[step]:.4g} (the row is used as given everywhere else)")
    return notes


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


def _windows(
    series: TimeSeries, settings: TrainSettings, input_size: int, earlier: bool, trained: bool = True
) -> ForecastDataModule:
    """The split's windows of `input_size` steps, set up for fitting (`trained` False: a forecast that fits
    nothing, whose earlier period needs no train window)."""
    split = split_for(series, settings)
    datamodule = ForecastDataModule(
        series, input_size, settings.horizon, split=split, batch_size=settings.batch_size, earlier=earlier,
        trained=trained, log=logged_channels(series, settings),
    )
    datamodule.setup("fit")
    return datamodule


def build_candidate(
    series: TimeSeries, settings: TrainSettings, candidate: Candidate, earlier: bool = False
) -> Built:
    """The windows and the untrained model of `candidate`, as `fit_candidate` trains them (seed first)."""
    trained = candidate.model_name not in NOTHING_TO_FIT
    datamodule = _windows(series, settings, candidate.input_size, earlier, trained)
    split = datamodule.split
    data = DataConfig(
        source=series.source,
        columns=series.columns,
        freq=series.freq,
        date_col=series.date_col,
        input_size=candidate.input_size,
        horizon=settings.horizon,
        split=split,
        date_from=series.options.date_from,
        fill_missing=series.options.fill_missing,
        id_col=series.options.id_col,
        target_col=series.options.target_col,
        channels=series.options.channels,
        past_covariates=series.options.past_covariates,
        future_covariates=series.options.future_covariates,
        calendar=series.options.calendar,
        periods=series.options.periods,
        weeks=series.options.weeks,
        dayfirst=series.options.dayfirst,
        sheet=series.options.sheet,
    )
    config = {
        **candidate.model_options,
        "input_size": candidate.input_size,
        "horizon": settings.horizon,
        "n_channels": data.model_channels,
    }
    try:
        with torch.device("meta"):  # sized first: what loading would refuse is not trained (nor OOM-killed)
            check_model_size(get_model(candidate.model_name, **config), f"model {candidate.label!r}")
        model = assemble(get_model(candidate.model_name, **config), data, fitting=True)
    except ForecasterError:  # a config field out of its range says so itself
        raise
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
    """Train `candidate` (checkpoints and logs in `work_dir`, `callbacks` added to Lightning's) from each of
    its `member_seeds`, averaging their forecasts where there are several, and where the validation split is
    short (MIN_VALIDATION_BLOCKS) once more for the earlier validation period; `earlier`: train for that
    period alone. None on the non-zero ranks of a DDP run."""
    check_magnitudes(series.source, series.frame)
    lightning.seed_everything(settings.seed, workers=True, verbose=False)
    first = build_candidate(series, settings, candidate, earlier)
    datamodule, data, model = first.datamodule, first.data, first.model
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
        history = train_split_history(model, data, scaler, series)
        return Fitted(candidate, model.eval(), data, scaler, initial, training, scored_before, start, history)

    initial_state = copy.deepcopy(model.state_dict())
    seeds = member_seeds(candidate.seeds, settings, first)
    bagged = candidate.seeds is None and len(seeds) > 1
    sizes = bag_input_sizes(series, settings, candidate, earlier) if bagged else [candidate.input_size]
    planned = [(seed, size) for size in sizes for seed in seeds]
    members, scored = [], first  # scored: the member of the longest input, whose windows the average reads
    for index, (seed, size) in enumerate(planned):
        if len(planned) > 1:  # a long average is not silent
            period = " for the earlier validation period" if earlier else ""
            log.info("%s: training model %d of %d of the average (seed %d, input %d)%s", candidate.label,
                     index + 1, len(planned), seed, size, period)  # fmt: skip
        if index == 0:
            member = (first, settings, candidate, work_dir)
        else:
            member = _member(series, settings, candidate, seed, size, work_dir, earlier)
        scored = member[0] if size > scored.data.input_size else scored
        trained_member = train_member(series, *member, callbacks)
        if trained_member is None:
            return None
        members.append(trained_member)
    if len(members) > 1:
        named = [(candidate.model_name, member.model) for member in members]
        model = Ensemble.of(named, [1 / len(members)] * len(members))
    trained = window_errors(model, scored.datamodule.val_set)  # the same targets as first's windows
    horizon = settings.horizon
    periods = [[Score.of(initial, horizon), Score.of(trained, horizon)]]
    if before is not None and before.start_errors is not None:
        periods.append([Score.of(before.start_errors, horizon), scored_before])
    kept_initial = starts_as_naive and simplest_consistent(periods) == 0
    if kept_initial:
        model, scored = first.model, first
        model.load_state_dict(initial_state)
    training.update(
        epochs=members[0].epochs,
        best_epoch=0 if kept_initial else members[0].best_epoch,
        stopped_early=members[0].stopped_early,
        kept_initial_weights=kept_initial,
        train_seconds=round(sum(member.seconds for member in members), 3),
        world_size=members[0].world_size,
        cuda_graphs=all(member.graphed and member.capture_error is None for member in members),
        **({} if len(members) == 1 else {"seeds": [seed for seed, _ in planned],
                                          "member_epochs": [member.epochs for member in members]}),
        **({} if len(sizes) == 1 else {"member_inputs": [size for _, size in planned]}),
        **({"cuda_graphs_error": error} if (error := members[0].capture_error) else {}),
    )
    errors = initial if kept_initial else trained
    data, scaler = scored.data, scored.datamodule.scaler
    return Fitted(candidate, model.eval(), data, scaler, errors, training, scored_before, start)


def bag_input_sizes(
    series: TimeSeries, settings: TrainSettings, candidate: Candidate, earlier: bool
) -> list[int]:
    """The input sizes a default bag's members read: the candidate's, and LONGER_INPUT times it where the
    input size is not the user's (`settings.input_size`, also a tuned one) and the train split keeps at least
    as many windows as its input steps (`settings.LONGER_INPUT`)."""
    longer = LONGER_INPUT * candidate.input_size
    if settings.input_size is not None:
        return [candidate.input_size]
    try:
        datamodule = _windows(series, settings, longer, earlier)
    except DataError:  # too few rows (of some series) for the longer input
        return [candidate.input_size]
    fits = datamodule.window_counts()["train"] >= longer
    return [candidate.input_size, longer] if fits else [candidate.input_size]


def _member(
    series: TimeSeries,
    settings: TrainSettings,
    candidate: Candidate,
    seed: int,
    input_size: int,
    work_dir: Path,
    earlier: bool,
) -> tuple[Built, TrainSettings, Candidate, Path]:
    """A further member of a bagged candidate: built from `seed` (its weights, sampled index sets and
    shuffling) to read `input_size` steps, trained in its own folder under `work_dir`."""
    settings = dataclasses.replace(settings, seed=seed)
    options = candidate.model_options
    folder = work_dir / f"seed-{seed}"
    if input_size != candidate.input_size:
        folder = work_dir / f"input-{input_size}" / f"seed-{seed}"
    candidate = dataclasses.replace(
        candidate,
        model_options={**options, "seed": seed} if "seed" in options else options,
        input_size=input_size,
    )
    lightning.seed_everything(seed, workers=True, verbose=False)
    built = build_candidate(series, settings, candidate, earlier)
    return built, settings, candidate, folder


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

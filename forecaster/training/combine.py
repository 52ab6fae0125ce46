"""`--model auto`'s combinations of its fitted candidates, offered to the choice beside the candidates
themselves: the greedy-selection ensemble (`models.ensemble`) of their forecasts on the validation split, and,
on a file of several columns, the forecasts that fit nothing column by column (`per_column_of`).

The ensemble is one more candidate, the most complex: `scoring.simplest_within_evidence` keeps it only when
it beats the simplest adequate candidate on validation by clear evidence, as any other. In the benchmark
record (data/benchmark, 3 seeds, test MSE) it is kept at 16 of the 18 ETTm2 and Weather 96/192 runs and gives
ETTm2 0.111 / 0.139 / 0.171 / 0.235 and Weather 0.154 / 0.212 against the best single models' 0.117 / 0.145 /
0.180 / 0.235 and 0.160 / 0.221; on Exchange, ILI and Weather 336 and 720 a single candidate is
kept.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from forecaster.data import TimeSeries
from forecaster.data.series import INDEPENDENT
from forecaster.models.ensemble import Ensemble, member_forecasts, select_weights
from forecaster.training.fit import MIN_VALIDATION_BLOCKS, Fitted, training_record
from forecaster.training.planning import Candidate
from forecaster.training.scoring import Score, clearly_lower, forecast_batches, split_windows, window_errors

ENSEMBLE = "ensemble"
PER_COLUMN = "per-column"


def _moments(
    models: list[nn.Module], inputs: torch.Tensor, targets: torch.Tensor
) -> tuple[np.ndarray, np.ndarray]:
    """(gram (K, K), cross (K,)): the models' forecasts' inner products with each other and the targets."""
    size = len(models)
    gram, cross = np.zeros((size, size)), np.zeros(size)
    members = nn.ModuleList(models)  # moved together to the scoring device

    def stacked(held: nn.ModuleList, x: torch.Tensor) -> torch.Tensor:
        return torch.stack(member_forecasts(held, x))

    for batch, forecasts in forecast_batches(members, inputs, stacked):
        flat = forecasts.double().reshape(size, -1)
        gram += (flat @ flat.T).numpy()
        cross += (flat @ targets[batch].double().reshape(-1)).numpy()
    return gram, cross


def ensemble_of(fitted: list[Fitted], series: TimeSeries) -> Fitted | None:
    """The ensemble of `fitted` with greedy-selection weights on their validation windows, as one more
    fitted candidate; None where it would be a single candidate, where the candidates read covariates
    (their inputs are not one window of the targets) or differ in validation windows, or where the
    validation split is too short to judge on alone (`fit.MIN_VALIDATION_BLOCKS`, whether or not the rows
    allowed an earlier period: 25 yearly rows weighted naive and mean on one window and kept that, in
    sample): weights fitted to a few horizons would follow their noise."""
    if len(fitted) < 2 or any(result.earlier is not None for result in fitted):
        return None
    if math.ceil(len(fitted[0].val_errors) / fitted[0].data.horizon) < MIN_VALIDATION_BLOCKS:
        return None
    longest = max(fitted, key=lambda result: result.data.input_size)
    data, scaler = longest.data, longest.scaler
    if data.input_columns != data.columns:
        return None
    windows = split_windows(data, scaler, series, "val")
    if any(len(result.val_errors) != len(windows) for result in fitted):
        return None
    inputs, targets = windows.stacked()
    weights = select_weights(*_moments([result.model for result in fitted], inputs, targets))
    kept = [index for index, weight in enumerate(weights) if weight > 0]
    if len(kept) < 2:
        return None
    members = [fitted[index] for index in kept]
    model = Ensemble.of(
        [(result.candidate.model_name, result.model) for result in members],
        [weights[index] for index in kept],
        input_size=data.input_size,  # the windows it is scored on: the longest candidate's, kept or not
    ).eval()
    candidate = Candidate(ENSEMBLE, ENSEMBLE, {}, lr=0.0, input_size=data.input_size)
    training = training_record(
        ENSEMBLE,
        None,
        longest.training["windows"],
        sum(parameter.numel() for parameter in model.parameters()),
        kept_initial_weights=False,
        train_seconds=round(sum(result.training["train_seconds"] for result in members), 3),
        members={fitted[index].candidate.label: float(weights[index]) for index in kept},
    )
    return Fitted(candidate, model, data, scaler, window_errors(model, windows), training)


def with_combinations(fitted: list[Fitted], series: TimeSeries) -> list[Fitted]:
    """`fitted` (the forecasts that fit nothing first) with their per-column combination after the last of
    those, itself one, and the ensemble of all last."""
    baselines = fits_nothing_count(fitted)
    combined = per_column_of(fitted[:baselines], series)
    fitted = [*fitted[:baselines], *([combined] if combined else []), *fitted[baselines:]]
    ensemble = ensemble_of(fitted, series)
    return fitted if ensemble is None else [*fitted, ensemble]


def fits_nothing_count(fitted: list[Fitted]) -> int:
    """How many of `fitted` (simplest first) fit nothing: those before the first with parameters."""
    return next((k for k, result in enumerate(fitted) if result.training["parameters"]), len(fitted))


def per_column_of(baselines: list[Fitted], series: TimeSeries) -> Fitted | None:
    """The forecasts that fit nothing (simplest first) combined column by column, each column taking the
    one that fits it: a later one replaces the simpler where its validation MSE on that column is lower on
    every period scored and clearly lower on the train split (`scoring.clearly_lower`), as
    `scoring.fits_nothing_reference` asks for the whole file
    (a monthly file of employment, seasonal, beside a rate that is not: one forecast for both was naive's,
    test MSE 0.737; seasonal drift and naive, column by column, 0.258). None for one column, independent
    series, covariates, a registered dataset (its committed `auto` rows were chosen without it), or where
    every column takes the same forecast."""
    if len(baselines) < 2 or series.dataset is not None:
        return None
    if any(len(b.val_errors) != len(baselines[0].val_errors) for b in baselines):
        return None
    data = baselines[0].data
    columns = len(data.columns)
    if columns < 2 or data.channels == INDEPENDENT or data.input_columns != data.columns:
        return None
    scores = [np.stack([b.val_errors.mean(axis=0) for b in baselines])]  # (K, C) per period
    if all(b.earlier is not None for b in baselines):
        scores.append(np.stack([b.earlier.blocks.reshape(-1, columns).mean(axis=0) for b in baselines]))
    choice = np.zeros(columns, dtype=int)
    for k in range(1, len(baselines)):
        lower = np.all([period[k] < period[choice, np.arange(columns)] for period in scores], axis=0)
        for column in np.flatnonzero(lower):  # and clearly on the train split's windows both read
            lower[column] = clearly_lower(baselines[k].history, baselines[choice[column]].history, column,
                                          data.horizon)  # fmt: skip
        choice = np.where(lower, k, choice)
    used = sorted(set(choice.tolist()))
    if len(used) < 2:
        return None
    members = [baselines[k] for k in used]
    weights = [(choice == k).astype(float).tolist() for k in used]
    model = Ensemble.of([(b.candidate.model_name, b.model) for b in members], weights).eval()
    longest = max(members, key=lambda result: result.data.input_size)
    windows = split_windows(longest.data, longest.scaler, series, "val")
    earlier = None
    if len(scores) > 1:  # each column's block means from the forecast it takes; their mean stands for the MSE
        stacked = np.stack([b.earlier.blocks.reshape(-1, columns) for b in baselines])  # (K, blocks, C)
        blocks = stacked[choice, :, np.arange(columns)].T  # (blocks, C)
        earlier = Score(float(blocks.mean()), blocks.reshape(-1))
    candidate = Candidate(PER_COLUMN, ENSEMBLE, {}, lr=0.0, input_size=longest.data.input_size)
    chosen = {data.columns[c]: baselines[k].candidate.label for c, k in enumerate(choice)}
    training = training_record(PER_COLUMN, None, longest.training["windows"], 0, columns=chosen)
    errors = window_errors(model, windows)
    history, shapes = None, {None if b.history is None else b.history.shape for b in baselines}
    if len(shapes) == 1 and None not in shapes:  # each column's from the forecast it takes
        history = np.stack([b.history for b in baselines])[choice, :, np.arange(columns)].T
    return Fitted(candidate, model, longest.data, longest.scaler, errors, training, earlier, history=history)

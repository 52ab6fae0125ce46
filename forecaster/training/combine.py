"""`--model auto`'s combination of its fitted candidates: the greedy-selection ensemble (`models.ensemble`)
of their forecasts on the validation split, offered to the choice beside the candidates themselves.

The ensemble is one more candidate, the most complex: `scoring.simplest_within_evidence` keeps it only when
it beats the simplest adequate candidate on validation by clear evidence, as any other. In the benchmark
record (data/benchmark, 3 seeds, test MSE) it is kept at 16 of the 18 ETTm2 and Weather 96/192 runs and gives
ETTm2 0.111 / 0.139 / 0.171 / 0.235 and Weather 0.154 / 0.212 against the best single models' 0.117 / 0.145 /
0.180 / 0.235 and 0.160 / 0.221; on Exchange, ILI and Weather 336 and 720 a single candidate is
kept.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from forecaster.data import TimeSeries
from forecaster.models.ensemble import Ensemble, member_forecasts, select_weights
from forecaster.training.fit import Fitted, training_record
from forecaster.training.planning import Candidate
from forecaster.training.scoring import forecast_batches, split_windows, window_errors

ENSEMBLE = "ensemble"


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
    validation split is too short to judge on alone (candidates scored on an earlier period too,
    `fit.MIN_VALIDATION_BLOCKS`): weights fitted to a few horizons would follow their noise."""
    if len(fitted) < 2 or any(result.earlier is not None for result in fitted):
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

"""`--model auto`'s combination of its fitted candidates: the greedy-selection ensemble (`models.ensemble`)
of their forecasts on the validation split, offered to the choice beside the candidates themselves.

The ensemble is one more candidate, the most complex: `scoring.simplest_within_evidence` keeps it only when
it beats the simplest adequate candidate on validation by clear evidence, as any other. Measured on the
benchmark's seed-0 candidates (test MSE, data/benchmark): ETTm2-96 0.112 against the best single candidate's
0.115, Weather-96 0.155 against 0.161; on Exchange, where validation favours models that lose on test, the
evidence rule keeps naive as before.
"""

from __future__ import annotations

import numpy as np
import torch

from forecaster.data import TimeSeries
from forecaster.models.ensemble import Ensemble, select_weights
from forecaster.training.fit import Candidate, Fitted
from forecaster.training.scoring import EVAL_BATCH_SIZE, split_windows, window_errors

ENSEMBLE = "ensemble"


def _moments(
    ensemble: Ensemble, inputs: torch.Tensor, targets: torch.Tensor
) -> tuple[np.ndarray, np.ndarray]:
    """(gram (K, K), cross (K,)): the members' forecasts' inner products with each other and the targets."""
    size = len(ensemble.members)
    gram, cross = np.zeros((size, size)), np.zeros(size)
    with torch.inference_mode():
        for start in range(0, len(inputs), EVAL_BATCH_SIZE):
            batch = slice(start, start + EVAL_BATCH_SIZE)
            forecasts = torch.stack(ensemble.member_forecasts(inputs[batch].contiguous())).double()
            flat = forecasts.reshape(size, -1)
            gram += (flat @ flat.T).numpy()
            cross += (flat @ targets[batch].double().reshape(-1)).numpy()
    return gram, cross


def ensemble_of(fitted: list[Fitted], series: TimeSeries) -> Fitted | None:
    """The ensemble of `fitted` with greedy-selection weights on their validation windows, as one more
    fitted candidate; None where it would be a single candidate, or where the candidates read covariates
    (their inputs are not one window of the targets) or differ in validation windows."""
    if len(fitted) < 2:
        return None
    longest = max(fitted, key=lambda result: result.data.input_size)
    data, scaler = longest.data, longest.scaler
    if data.input_columns != data.columns:
        return None
    windows = split_windows(data, scaler, series, "val")
    if any(len(result.val_errors) != len(windows) for result in fitted):
        return None
    inputs, targets = windows.stacked()
    uniform = [1.0 / len(fitted)] * len(fitted)
    every = Ensemble.of([(result.candidate.model_name, result.model) for result in fitted], uniform)
    weights = select_weights(*_moments(every, inputs, targets))
    kept = [index for index, weight in enumerate(weights) if weight > 0]
    if len(kept) < 2:
        return None
    members = [fitted[index] for index in kept]
    model = Ensemble.of(
        [(result.candidate.model_name, result.model) for result in members],
        [weights[index] for index in kept],
    ).eval()
    candidate = Candidate(ENSEMBLE, ENSEMBLE, {}, lr=0.0, input_size=data.input_size)
    training = {
        "candidate": ENSEMBLE,
        "members": {fitted[index].candidate.label: float(weights[index]) for index in kept},
        "lr": None,
        "epochs": 0,
        "best_epoch": 0,
        "stopped_early": False,
        "kept_initial_weights": False,
        "train_seconds": round(sum(result.training["train_seconds"] for result in members), 3),
        "world_size": 1,
        "windows": longest.training["windows"],
        "parameters": sum(parameter.numel() for parameter in model.parameters()),
    }
    return Fitted(candidate, model, data, scaler, window_errors(model, windows), training)

"""The forecasts that fit nothing the product's default model is held against on a user's file: each
reference, and the combination that gives each column the reference that fits it (`combine.per_column_of`),
where they forecast validation better than the model on every period scored; and naive, which a choice among
several gives way to where it lost to naive clearly on the test split (`naive_if_it_lost_since`).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from forecaster.data import TimeSeries
from forecaster.presets import DEFAULT
from forecaster.training.combine import per_column_of
from forecaster.training.fit import Fitted, fit_candidate
from forecaster.training.planning import USER_BASELINES, baseline_input, plan, season_fits, season_input
from forecaster.training.scoring import (
    Score,
    block_means,
    clearly_lower,
    history_allows,
    season_of,
    simplest_within_evidence,
    split_windows,
    window_errors,
)
from forecaster.training.settings import TrainSettings

log = logging.getLogger(__name__)

# Beside the model's naive start; naive itself is a member of the per-column combination.
REFERENCES = ("naive", "seasonal_naive", *USER_BASELINES)
SEASONAL_LEVELS = ("seasonal_naive", "seasonal_mean")  # a season repeated at its level, no trend extended


def with_references(
    fitted: list[Fitted], series: TimeSeries, settings: TrainSettings, work_dir: Path
) -> list[Fitted]:
    """The product's default model (S3Attention, default preset) with the baselines before it where
    they forecast validation better on every period scored: references the model must clearly beat, as
    `--model auto` holds its candidates (the better of two is the reference, `simplest_consistent`). The model
    starts as the naive forecast and leaves it on the evidence of its windows, which a strong season or trend
    seen in few windows does not give (UKgas, quarterly, 108 rows: it kept its start, test MSE 9.14 against
    seasonal naive's 0.29). Not on the registered benchmark datasets, whose rows measure the model named, nor
    for other models and presets (what they are asked for). Not planned as candidates beside the model:
    candidates train on one device, and where naive is the better baseline the model's own start already
    holds it against naive (`members`: trained weights replace it only on clear evidence)."""
    if len(fitted) != 1 or series.dataset is not None:
        return fitted
    model = fitted[0]
    if (settings.model_name, settings.preset) != ("s3attention", DEFAULT) or not model.training["parameters"]:
        return fitted
    references = []
    for name in REFERENCES:
        input_size = baseline_input(name, series, settings, model.data.input_size)
        if not season_fits(name, series.freq, input_size):
            continue
        reference = _fitted_baseline(name, series, settings, input_size, work_dir)
        references += [] if reference is None else [reference]
    combined = per_column_of(references, series)
    naive = references[0].history if references else None
    two_seasons = functools.partial(_two_seasons, series=series, settings=settings, work_dir=work_dir)
    better = [reference for reference in [*references, *([combined] if combined else [])]
              if _better(reference, model, naive, settings.horizon, two_seasons)]  # fmt: skip
    return [*better, model]


LONG_SEASON = 52  # a weekly file's year: read twice, it leaves the train split a block of windows or none


def _two_seasons(
    reference: Fitted, series: TimeSeries, settings: TrainSettings, work_dir: Path
) -> np.ndarray | None:
    """A reference's train split errors (`Fitted.history`) at the shortest input that holds two of its
    seasons, where its own is longer: Holt-Winters reads 110 of 187 weekly rows, which leaves 8 train windows
    in one block, and no evidence can be clear on one block (h50)."""
    name, season = reference.candidate.model_name, season_of(reference.model)
    shortest = max(season_input(name, season), 2 * season)
    if shortest >= reference.data.input_size:
        return reference.history
    shorter = _fitted_baseline(name, series, settings, shortest, work_dir / "two_seasons")
    return None if shorter is None else shorter.history


def _better(
    reference: Fitted, model: Fitted, naive: np.ndarray | None, horizon: int,
    two_seasons: Callable[[Fitted], np.ndarray | None] = lambda reference: reference.history,
) -> bool:
    """Whether `reference` forecasts validation better than `model` on every period scored, and the train
    split's windows better than naive does (`naive`: its history; the model starts as naive, and trained
    has no history out of sample), said if so. Where the model kept its naive start and each period holds
    one block, validation says nothing either way (`simplest_within_evidence`): a seasonal reference clearly
    lower than naive on the train split is one (visnights QLDMetro, 68 quarters: seasonal naive 1% above
    naive on the one validation window, its train split MAE half naive's; naive kept, 1.5x seasonal naive's
    held-out MAE, h48). A season persists; a level or a trend need not: so chosen on 40 files, drift, the
    mean and seasonal drift scored 4.4x, 2.4x and 5.1x naive held out, while seasonal naive and the
    seasonal mean won on all three they were chosen on (SEASONAL_LEVELS); not a weekly file's year, which
    3.6 noisy years do not show (gasoline's seasonal mean so chosen: 1.7x naive). A season of LONG_SEASON
    steps or more must be clearly better than naive on the train split (its errors there over two seasons,
    `two_seasons`, scored only for such a reference; none or unclear, no reference)."""
    periods = [(reference.val_mse, model.val_mse)]
    if reference.earlier is not None and model.earlier is not None:  # both or neither: one short split
        periods.append((reference.earlier.mse, model.earlier.mse))
    name, label = reference.candidate.label, model.candidate.label
    if not all(ours < theirs for ours, theirs in periods):
        blind = model.training["kept_initial_weights"] and _one_block_each(model, horizon)
        seasonal = (reference.candidate.model_name in SEASONAL_LEVELS and reference.history is not naive
                    and season_of(reference.model) < LONG_SEASON)  # fmt: skip
        if not (blind and seasonal and _clearly_lower_everywhere(reference.history, naive, horizon)):
            return False
        log.info("%s forecasts the train split's windows clearly better than naive, and %s kept its naive "
                 "start on validation of one block: it is a reference %s must clearly beat",
                 name, label, label)  # fmt: skip
        return True
    if reference.history is not naive and not history_allows(reference.history, naive):  # unsaid before (h43)
        log.info("%s forecasts validation better than %s (%.4f against %.4f), not the train split's windows "
                 "better than naive: no reference", name, label, reference.val_mse, model.val_mse)
        return False
    long = season_of(reference.model) >= LONG_SEASON
    if long and not _clearly_lower_everywhere(two_seasons(reference), naive, horizon):
        log.info("%s forecasts validation better than %s (%.4f against %.4f), not the train split's windows "
                 "clearly better than naive, read over two of its seasons (a season of %d steps or more): no "
                 "reference", name, label, reference.val_mse, model.val_mse, LONG_SEASON)  # fmt: skip
        return False
    log.info("%s forecasts validation better than %s (%.4f against %.4f): it is a reference %s must clearly "
             "beat", name, label, reference.val_mse, model.val_mse, label)  # fmt: skip
    return True


def _clearly_lower_everywhere(errors: np.ndarray | None, naive: np.ndarray | None, horizon: int) -> bool:
    """Whether `errors` on the train split are clearly below naive's in every column (`clearly_lower`)."""
    columns = naive.shape[1] if naive is not None else 1
    return all(clearly_lower(errors, naive, column, horizon) for column in range(columns))


def _one_block_each(model: Fitted, horizon: int) -> bool:
    """Whether each validation period `model` was scored on holds one block of windows (`block_means`)."""
    periods = [Score.of(model.val_errors, horizon), *([model.earlier] if model.earlier is not None else [])]
    return all(len(score.blocks) == 1 for score in periods)


def _fitted_baseline(
    name: str, series: TimeSeries, settings: TrainSettings, input_size: int, work_dir: Path
) -> Fitted | None:
    baseline = dataclasses.replace(
        settings, model_name=name, preset=DEFAULT, model_options={}, loss=None, toward_naive=None,
        input_size=input_size,
    )
    [candidate] = plan(baseline, series)
    return fit_candidate(series, baseline, candidate, work_dir / candidate.label)


LOST_BY = 1.25  # the test MSE over naive's (worse on every block too) by which a choice lost to naive


def naive_if_it_lost_since(
    best: Fitted, fitted: list[Fitted], series: TimeSeries, settings: TrainSettings, work_dir: Path
) -> Fitted:
    """The naive forecast in place of a model chosen on validation among several (`--model auto`, the default
    model held against its references) where it forecasts the test split clearly worse than naive (two
    standard errors, `simplest_within_evidence`, or LOST_BY times naive's MSE and worse on every block of a
    horizon's windows, of which the test split of a short file holds one or two; fewer windows than that, a
    single one of 12 yearly counts, are no evidence): the series changed after
    validation, and the choice would lose to naive on the latest rows (a weekly level that dropped in the
    test split: seasonal naive kept, 2.4 times naive's error on the 13 weeks after the file; a yearly trend
    that turned: drift, 1.4 times). Your own files only; a benchmark row keeps the model chosen (its test
    split measures it, not a choice)."""
    if series.dataset is not None or len(fitted) < 2 or best.candidate.model_name == "naive":
        return best
    if best.training["parameters"] and best.training["kept_initial_weights"]:  # the model's naive start
        return best
    naive = next((result for result in fitted if result.candidate.model_name == "naive"), None)
    naive = naive or _fitted_baseline("naive", series, settings, best.data.input_size, work_dir)
    if naive is None:
        return best
    ours = window_errors(best.model, split_windows(best.data, best.scaler, series, "test"))
    theirs = window_errors(naive.model, split_windows(naive.data, naive.scaler, series, "test"))
    if not len(ours) or ours.shape != theirs.shape:
        return best
    blocks = [block_means(ours, settings.horizon), block_means(theirs, settings.horizon)]
    clearly = simplest_within_evidence([float(ours.mean()), float(theirs.mean())], blocks) == 1
    whole = len(ours) >= settings.horizon  # a block of a horizon's windows: one window is no evidence
    everywhere = whole and ours.mean() >= LOST_BY * theirs.mean() and bool((blocks[1] < blocks[0]).all())
    if not (clearly or everywhere):
        return best
    lost = {"model": best.candidate.label, "test_mse": float(ours.mean()),
            "naive_test_mse": float(theirs.mean())}  # fmt: skip
    return dataclasses.replace(naive, training={**naive.training, "naive_since_validation": lost})

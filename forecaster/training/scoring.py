"""Scoring a forecaster on one split of a series, under the split, input size and scaler it was trained with.

Every window of the split counts once (one process, no drop_last), so `forecaster train`, `forecaster
evaluate`, the benchmark and the choice among candidates all read the same numbers. The naive forecast is
scored on the very same windows, as the floor every model is compared with.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from forecaster.artifacts import DataConfig
from forecaster.calibration import FEW_WINDOWS, SCORED_CALIBRATION, Calibration, nonconformity
from forecaster.data import Scaler, TimeSeries, season_length
from forecaster.data.series import INDEPENDENT
from forecaster.data.windows import EveryNth, PooledWindows, Windows, thinned, window_sets
from forecaster.devices import default_device, module_device
from forecaster.metrics import ErrorSums, IntervalSums
from forecaster.models import fits_nothing, forecast_outputs, quantile_levels
from forecaster.models.outliers import GROSS, fill_isolated

EVAL_BATCH_SIZE = 256
MAX_SCORES = 20_000_000  # calibration scores of a model that fits nothing held at once (80 MB of float32)
CERTAINTY = 1e-6  # a test error (standardized) below this is float32 rounding, no move a zero margin missed
# Standard errors by which a more complex model must beat a simpler one on validation to be kept.
EVIDENCE = 2.0


@contextmanager
def scoring_on_device(*models: nn.Module, device: torch.device | None = None) -> Iterator[torch.device]:
    """The models in eval mode on the device the passes over validation and test windows run on, then back
    on their own device and in their own mode: one CUDA device where there is one (after a fit on a GPU these
    passes were the CPU's share of `forecaster train`: 28-35 s of a 58-70 s command on an H100), else the
    CPU, where nothing moves; or `device` where one is asked for."""
    device = device or default_device()
    before = [(model, module_device(model), model.training) for model in models]
    for model in models:
        model.to(device).eval()
    try:
        yield device
    finally:
        for model, home, training in before:
            model.to(home).train(training)


def forecast_batches(
    model: nn.Module,
    inputs: torch.Tensor,
    forward: Callable[..., torch.Tensor] | None = None,
    device: torch.device | None = None,
) -> Iterator[tuple[slice, torch.Tensor]]:
    """(batch, forecasts on the CPU) over `inputs` in EVAL_BATCH_SIZE windows, in order: `forward(model, x)`
    (default `model(x)`, the point forecast) run on `scoring_on_device`."""
    forward = forward or (lambda module, x: module(x))
    with scoring_on_device(model, device=device) as device, torch.inference_mode():
        for start in range(0, len(inputs), EVAL_BATCH_SIZE):
            batch = slice(start, start + EVAL_BATCH_SIZE)
            yield batch, forward(model, inputs[batch].contiguous().to(device)).cpu()


def split_windows(data: DataConfig, scaler: Scaler, series: TimeSeries, split: str) -> Windows:
    """The standardized (input, target) windows of `split` ("train", "val" or "test") under `data`: the train
    split may hold none (scoring reads it only for a forecast that fits nothing, which learned from none)."""
    sets = window_sets(series, data.input_size, data.horizon, data.split, scaler, trained=False, only=split)
    return sets[1][split]


def error_scaler(data: DataConfig, scaler: Scaler) -> Scaler | None:
    """What turns errors into original units: the targets' scaler, or None for independent series
    (`ErrorSums`)."""
    return None if data.channels == INDEPENDENT else scaler.first(len(data.columns))


def evaluate_model(
    model: nn.Module, windows: Windows, data: DataConfig, scaler: Scaler, device: torch.device | None = None
) -> dict[str, Any]:
    """MSE/MAE (standardized and original units), step-1 MSE and window count of a split's `windows`: every
    window once, in one process (a distributed fit's sampler repeats windows to even out its ranks)."""
    inputs, targets = windows.stacked()
    sums = ErrorSums(error_scaler(data, scaler), targets.shape[-1])
    for batch, point in forecast_batches(model, inputs, device=device):
        sums.update(point, targets[batch])
    return sums.compute()


def baseline_metrics(
    windows: Windows, data: DataConfig, scaler: Scaler, seasons: dict[str, int]
) -> dict[str, dict[str, Any]]:
    """Per baseline name, the metrics on a split's `windows` of the forecast that repeats the value one season
    earlier (`baselines.season_steps`: season 1 is naive); computed directly: nothing to run."""
    from forecaster.models.baselines import season_steps

    histories, targets = windows.stacked()
    results = {}
    for name, season in seasons.items():
        sums = ErrorSums(error_scaler(data, scaler), targets.shape[-1])
        source = season_steps(data.input_size, targets.shape[1], season)
        sums.update(histories[:, source, : targets.shape[-1]], targets)
        results[name] = sums.compute()
    return results


def window_errors(model: nn.Module, windows: Windows) -> np.ndarray:
    """The MSE of every window and channel (standardized scale): (N, C) float64, in window order; their
    mean is the MSE."""
    inputs, targets = windows.stacked()
    errors = [((point.double() - targets[batch].double()) ** 2).mean(dim=1).numpy()
              for batch, point in forecast_batches(model, inputs)]  # fmt: skip
    return np.concatenate(errors)


def train_split_history(
    model: nn.Module, data: DataConfig, scaler: Scaler, series: TimeSeries
) -> np.ndarray | None:
    """The MSE of `model`'s forecast of each train split window, laid out by the row its targets start at
    (T, C) (NaN where the input does not fit before it; series after series): the windows forecasts of
    different input sizes both read line up. For a forecast that fits nothing every window before
    validation is out of sample, so the choice among them can rest on the file's history, not only on a
    validation split of a horizon or two (`history_means`). None without a train window, with covariates, or
    on a registered dataset (its committed `auto` rows were chosen without it)."""
    if series.dataset is not None or data.input_columns != data.columns:
        return None
    windows = split_windows(data, scaler, series, "train")
    if not len(windows):
        return None
    errors = window_errors(model, windows)
    laid_out, start = [], 0  # float32: a file of Traffic's 862 columns holds 85 MB of float64 per forecast
    for part in getattr(windows, "parts", [windows]):
        rows = np.full((max(len(part.data) - part.horizon + 1, 0), errors.shape[1]), np.nan, np.float32)
        rows[part.input_size : part.input_size + len(part)] = errors[start : start + len(part)]
        laid_out.append(rows)
        start += len(part)
    return np.concatenate(laid_out)


def history_means(
    first: np.ndarray | None, second: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Per column, the mean errors of two forecasts over the train split windows both forecast
    (`train_split_history`); None where either has no history or they share no window."""
    if first is None or second is None or first.shape != second.shape:
        return None
    both = ~(np.isnan(first) | np.isnan(second)).any(axis=1)
    if not both.any():
        return None
    return first[both].mean(axis=0, dtype=np.float64), second[both].mean(axis=0, dtype=np.float64)


def history_allows(lower: np.ndarray | None, reference: np.ndarray | None) -> bool:
    """Whether the train split's windows leave `lower` lower than `reference` on the whole file, or say
    nothing (`history_means` None)."""
    means = history_means(lower, reference)
    return means is None or float(means[0].mean()) < float(means[1].mean())


def clearly_lower(first: np.ndarray | None, second: np.ndarray | None, column: int, horizon: int) -> bool:
    """Whether `first`'s errors on `column` are below `second`'s over the train split windows both forecast
    (`train_split_history`) by the evidence a model must show to be kept (`simplest_within_evidence` on their
    `block_means`); False without such history (a quarterly panel's choice per country rested on one
    validation window, and ended at 1.55x naive's test MSE)."""
    if first is None or second is None or first.shape != second.shape:
        return False
    both = ~(np.isnan(first[:, column]) | np.isnan(second[:, column]))
    if not both.any():
        return False
    ours, theirs = first[both, column].astype(np.float64), second[both, column].astype(np.float64)
    blocks = [block_means(theirs, horizon), block_means(ours, horizon)]
    return simplest_within_evidence([float(theirs.mean()), float(ours.mean())], blocks) == 1


def toward_naive_weights(model: nn.Module, windows: Windows) -> np.ndarray:
    """(H,) least-squares weights toward the naive forecast of `model` on `windows` (`TowardNaive`)."""
    from forecaster.models.toward_naive import fit_weights

    inputs, targets = windows.stacked()
    length = model.config.input_size

    def pairs() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for batch, point in forecast_batches(model, inputs):
            last = inputs[batch, length - 1 : length, : targets.shape[-1]]
            yield (point - last).numpy(), (targets[batch] - last).numpy()

    return fit_weights(pairs())


def block_means(errors: np.ndarray, horizon: int) -> np.ndarray:
    """Means of each channel over consecutive blocks of `horizon` windows, flattened: overlapping windows
    share targets, so only block means are close to independent, and channels are replicates of the same
    question (errors are (N, C), or (N,) for one channel; the last block may be shorter)."""
    errors = np.asarray(errors, dtype=np.float64).reshape(len(errors), -1)
    return np.concatenate(
        [errors[start : start + horizon].mean(axis=0) for start in range(0, len(errors), horizon)]
    )


@dataclass(frozen=True)
class Score:
    """A model's validation score on one period: the MSE over its windows and its `block_means`."""

    mse: float
    blocks: np.ndarray

    @classmethod
    def of(cls, errors: np.ndarray, horizon: int) -> Score:
        return cls(float(np.mean(errors)), block_means(errors, horizon))


def simplest_consistent(
    periods: list[list[Score]], baselines: int = 1, histories: list[np.ndarray | None] | None = None,
    seasons: list[int] | None = None,
) -> int:
    """Index of the model to keep among several (simplest first), scored on one or more validation periods
    (the validation split, then earlier ones, `splits.earlier_period`). The first `baselines` fit nothing
    (naive, seasonal naive, ...): the reference the others are held against, as the simplest model, is the
    first of them unless a later one has a lower MSE on every period and on the train split
    (`fits_nothing_reference`, `histories` and `seasons` theirs). Then `_simplest_clearly_better`."""
    reference = fits_nothing_reference(periods, baselines, histories, seasons)
    order = [reference, *range(baselines, len(periods[0]))]
    return order[_simplest_clearly_better([[scores[index] for index in order] for scores in periods])]


def fits_nothing_reference(
    periods: list[list[Score]], baselines: int, histories: list[np.ndarray | None] | None = None,
    seasons: list[int] | None = None,
) -> int:
    """Of the first `baselines` forecasts (simplest first), which fit nothing, the one the others are held
    against: a later one replaces the reference where its MSE is lower on every period, with no evidence
    asked (on E6's quarterly inflation, 107 rows, seasonal naive had a third of naive's validation MSE, and
    NLinear, held against naive, was kept at twice seasonal naive's test MSE). Lower on every period, not on
    average: on elec_equip the window's mean beat seasonal naive on average only through the 2008 crash of
    the earlier period, worse on the latest, and scored ten times seasonal naive's test MSE. And lower on the
    train split's windows both read (`histories`, `history_allows`), out of sample for forecasts that fit
    nothing: a validation split of a horizon or two is a coin's toss (weekly demand with gaps, 156 rows,
    horizon 13: drift beat naive on its 4 validation windows, 0.70 against 0.84, and on 8 of its 49 train
    windows; kept, it scored 1.7 times naive's test MSE). Where the train split says nothing and the
    periods hold one block, a forecast without a season does not replace a seasonal one (`seasons` theirs):
    on USAccDeaths, 54 months, a 2-month mean beat seasonal naive by 4% on one window, and scored 0.91x
    naive's held-out MAE against seasonal naive's 0.47x (h48)."""
    histories = histories or [None] * baselines
    seasons = seasons or [1] * baselines
    reference = 0
    for index in range(1, baselines):
        lower = all(scores[index].mse < scores[reference].mse for scores in periods)
        blind = history_means(histories[index], histories[reference]) is None and sum(
            len(scores[index].blocks) for scores in periods) < 2  # fmt: skip
        unseasoned = seasons[reference] > 1 and seasons[index] == 1
        if lower and history_allows(histories[index], histories[reference]) and not (blind and unseasoned):
            reference = index
    return reference


def _simplest_clearly_better(periods: list[list[Score]]) -> int:
    """Index of the model to keep among several (simplest first) on one or more validation periods. On one
    period it is `simplest_within_evidence`. On several, a model is eligible only if each period alone gives
    clear evidence that it beats the simplest one (one strong period must not carry a null one: on
    Exchange-720, NLinear beats naive by 14% on the validation split and by 0.3% on the earlier period, and
    loses on test); of the simplest one and the eligible, the first within EVIDENCE standard errors of the
    best on all periods together is kept (their mean MSE and all their block means)."""
    count = len(periods[0])
    if len(periods) == 1:
        return simplest_within_evidence([score.mse for score in periods[0]], [s.blocks for s in periods[0]])

    def clearly_better(index: int) -> bool:
        pairs = [(scores[0], scores[index]) for scores in periods]
        return all(simplest_within_evidence([a.mse, b.mse], [a.blocks, b.blocks]) == 1 for a, b in pairs)

    eligible = [0] + [index for index in range(1, count) if clearly_better(index)]
    means = [float(np.mean([scores[index].mse for scores in periods])) for index in eligible]
    blocks = [np.concatenate([scores[index].blocks for scores in periods]) for index in eligible]
    return eligible[simplest_within_evidence(means, blocks)]


def simplest_within_evidence(means: list[float], blocks: list[np.ndarray]) -> int:
    """Index of the first (simplest) of several models whose validation MSE is within EVIDENCE standard
    errors of the best one's, the error taken from the paired differences of the models' block means
    (`block_means`, the same windows for every model). This is the one-standard-error rule of Hastie,
    Tibshirani and Friedman (The Elements of Statistical Learning, 2009, 7.10) made stricter: in forecasting
    the validation period precedes the test period, which may differ, so a more complex model is kept only
    on clear evidence, and never on a single block. Clear evidence on one period can still mislead: on
    Exchange-720 the anchored S3Attention beats naive on validation by 2.2 standard errors and NLinear by 4.3,
    and both lose on test, because the channels of one panel share their validation period (they are not
    independent replicates); stricter rules tried (time blocks only, log ratios) broke the ILI and ETTm2
    choices. A second, earlier period does not (`simplest_consistent`).

    The standard error of a mean is at the mercy of a few extreme blocks (Weather-96 holds sensor fill values
    of -9999: the anchored S3Attention's validation MSE is 26% above anchored-skip's, 1.6 standard errors,
    while anchored-skip is better on 64% of 1,134 blocks, and on test by 11%). So the best model also counts
    as clearly better where it is better on more blocks than chance allows (`beaten_on_most_blocks`)."""
    best = int(np.argmin(means))
    for index, (mean, candidate) in enumerate(zip(means, blocks, strict=True)):
        difference = np.asarray(candidate) - np.asarray(blocks[best])
        spread = np.std(difference, ddof=1) / np.sqrt(len(difference)) if len(difference) > 1 else np.inf
        if mean - means[best] <= EVIDENCE * spread and not beaten_on_most_blocks(difference):
            return index
    return best


def beaten_on_most_blocks(difference: np.ndarray) -> bool:
    """Whether the blocks where a model's error exceeds another's (`difference` > 0) outnumber those where it
    is lower beyond chance: the exact one-sided sign test (ties dropped) at the level of EVIDENCE standard
    errors of a normal mean (2.3%), so few blocks never give such evidence (four of four: 6.3%)."""
    from scipy.stats import binomtest, norm

    worse, better = int(np.sum(difference > 0)), int(np.sum(difference < 0))
    if worse + better == 0:
        return False
    return binomtest(worse, worse + better, alternative="greater").pvalue < norm.sf(EVIDENCE)


def _outputs(model: nn.Module, windows: Windows) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Batches of (outputs (B, H, C, 1 + 2K), targets (B, H, C)), standardized, in window order."""
    inputs, targets = windows.stacked()
    for batch, outputs in forecast_batches(model, inputs, forecast_outputs):
        yield outputs.numpy(), targets[batch].numpy()


def interval_method(model: nn.Module, head_trained: bool) -> str:
    """How a model's intervals are made: around its quantile head when it has a trained one (a head whose
    weights training did not keep is untrained), else conformal around its point forecast."""
    return "quantile" if quantile_levels(model) and head_trained else "conformal"


def calibration_windows(
    model: nn.Module,
    naive_start: bool,
    data: DataConfig,
    scaler: Scaler,
    series: TimeSeries,
    validation: Windows,
) -> dict[str, Windows]:
    """The windows a kept model's intervals are calibrated on: the validation split's; on a user's file, the
    train split's too where the model fits nothing (a baseline, or a model that kept its naive start): its
    forecasts of every window before the test split are out of sample. Validation alone is a few whole
    horizons of overlapping windows (1 window on a 10-year monthly file at horizon 12; a year of daily rows at
    horizon 14 holds 24, 2 whole horizons). Of 210 baselines of 49 simulated short files, 7.1% covered under
    0.65 of 40 later horizons at 80% calibrated on validation, 4.3% on both. Train windows beyond MAX_SCORES
    scores are thinned evenly. Benchmark rows keep the protocol's."""
    windows = {"the validation split": validation}
    if (naive_start or fits_nothing(model)) and series.dataset is None:
        train = split_windows(data, scaler, series, "train")  # none where the input leaves no train window
        scores = validation[0][1].numel() if len(validation) else data.horizon  # a window's: H x C
        most = MAX_SCORES // scores - len(validation)
        windows = {"the train split": thinned(train, most), **windows} if len(train) and most > 0 else windows
    return windows


def filled(windows: Windows, season: int) -> tuple[Windows, bool]:
    """The same windows over their rows with each target channel's gross isolated outliers filled
    (`outliers.fill_isolated` beyond `GROSS` robust standard deviations, the check run once over a series'
    rows as the windows see them, `season` the data's), for calibration to forecast and score, and whether
    any was: one typo of 10000 among values of 100 +- 5 was the largest of a step's 20 scores and so its 95%
    margin, a band of 0-9993 (h52). Validation, test and the user's forecasts read the rows as given."""
    if isinstance(windows, PooledWindows):
        parts = [filled(part, season) for part in windows.parts]
        return PooledWindows([part for part, _ in parts]), any(changed for _, changed in parts)
    if isinstance(windows, EveryNth):
        inner, changed = filled(windows.windows, season)
        return EveryNth(inner, windows.step), changed
    given, others = windows.data[:, : windows.targets], windows.data[:, windows.targets :]
    filling = fill_isolated(given.T, season, GROSS).T
    clone = copy.copy(windows)  # the covariates' columns kept
    clone.data = torch.cat([filling, others], dim=1)
    return clone, bool((filling != given).logical_and(~given.isnan()).any())


def _changes(windows: Windows, lag: int) -> np.ndarray:
    """(M, C) changes over `lag` steps of the target channels along each window's input and horizon rows."""
    inputs, targets = windows.stacked()
    channels = targets.shape[-1]
    path = torch.cat([inputs[:, : windows.input_size, :channels], targets], dim=1)
    return (path[:, lag:] - path[:, :-lag]).reshape(-1, channels).numpy()


def season_of(model: nn.Module) -> int:
    """The season a model's forecast repeats (1 where it has none)."""
    return getattr(getattr(model, "config", None), "season", None) or 1


def calibrate(
    model: nn.Module, windows: dict[str, Windows], method: str, freq: str | None = None
) -> Calibration:
    """Split-conformal margins from the model's scores on the sets of `windows`, each named by its key (few
    windows' with the floor of a random walk of their one-step changes, or for a model that repeats a season
    of a seasonal one, whose swings are no error of its: a quarterly seasonal drift's 80% band was 7x its test
    error under the one-step walk's, h38). Under FEW_WINDOWS a quantile head's intervals are conformal too,
    around its point forecast: its bounds' few scores have no floor, and a 72-series panel of one validation
    window answered no level (h42). The windows are forecast and scored, and their changes taken, with their
    gross isolated outliers filled (`filled`, with the season of the data's frequency `freq`; said in the
    calibration's `filled`)."""
    count = sum(map(len, windows.values()))
    few = count < FEW_WINDOWS
    method = "conformal" if few else method
    season = season_length(freq) or 1  # the data's: a season's peak is no typo to any model
    scored, changed = zip(*(filled(group, season) for group in windows.values()), strict=True)
    batches = [batch for group in scored for batch in _outputs(model, group)]
    scores = np.concatenate([nonconformity(outputs, targets, method) for outputs, targets in batches])
    lag = season_of(model)
    changes = np.concatenate([_changes(group, lag) for group in scored]) if few else None
    where = f"{' and '.join(windows)}, {count} window{'' if count == 1 else 's'}"
    calibration = Calibration.from_scores(scores, quantile_levels(model), where, method, changes, lag)
    return replace(calibration, filled=any(changed))


def erred_where_certain(
    model: nn.Module, calibration: Calibration, windows: Windows, levels: list[int]
) -> bool:
    """Whether `windows` (the test split) erred at a step and channel where a conformal margin at `levels` is
    zero: the windows that calibrated it never saw the series move (59 equal months, then a first sale,
    answered 80% and 95% bands of no width, h52)."""
    if calibration.method != "conformal":
        return False
    certain = np.stack([calibration.margins[calibration.levels.index(level)] == 0 for level in levels]).any(0)
    if not certain.any():
        return False
    for outputs, targets in _outputs(model, windows):
        steps = targets.shape[1]
        if (certain[:steps] & (nonconformity(outputs, targets, "conformal") > CERTAINTY)).any():
            return True
    return False


def interval_metrics(
    model: nn.Module, calibration: Calibration, windows: Windows, levels: list[int]
) -> dict[str, dict[str, float]]:
    """Coverage, mean width and interval score (standardized) of the calibrated intervals at `levels`."""
    sums = IntervalSums(levels)
    for outputs, targets in _outputs(model, windows):
        sums.update(calibration.intervals(levels, outputs), targets)
    return sums.compute()


def interval_report(
    model: nn.Module, calibration: Calibration, windows: Windows, levels: list[int]
) -> dict[str, Any]:
    """{"intervals": scores per level, SCORED_CALIBRATION: the calibration they measured}, and for a quantile
    head also "intervals_head": what the head gives before its conformal margins (what calibration adds)."""
    report: dict[str, Any] = {"intervals": interval_metrics(model, calibration, windows, levels),
                              SCORED_CALIBRATION: calibration.source}  # fmt: skip
    if calibration.method == "quantile":
        head = Calibration.head(calibration.levels, calibration.horizon, calibration.margins.shape[2])
        report["intervals_head"] = interval_metrics(model, head, windows, levels)
    return report

"""Planning a run: the candidates `forecaster train` fits (one model with its preset, a model's preset
variants, or `--model auto`'s baselines and models), each with its options, learning rate and input size.

A baseline that cannot apply to the data (a season longer than the input, an input too short), and a trained
model whose train split would hold no window, is left out of `--model auto` and refused with what to change
when named; where the default model cannot read a user's file, `plan_fitting` chooses as `--model auto` does.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from forecaster.calibration import DEFAULT_LEVELS
from forecaster.data import TimeSeries, get_spec, season_length
from forecaster.data.missing import some
from forecaster.data.scaling import multiplicative
from forecaster.data.series import INDEPENDENT, DataQualityWarning
from forecaster.data.splits import (
    AUTO_SPLIT,
    DEFAULT_INPUT_SIZE,
    default_input,
    default_split,
    earlier_period,
    panel_rows,
    series_lengths,
    split_borders,
    usable,
)
from forecaster.errors import ConfigError, DataError
from forecaster.models import MODELS
from forecaster.models.baselines import LAST_VALUES, LONGEST_HISTORY, NOTHING_TO_FIT, WHOLE_HISTORY
from forecaster.presets import (
    AUTO,
    DEFAULT,
    TRAINING_DEFAULTS,
    auto_candidates,
    preset,
    resolve,
    training_setting,
)
from forecaster.training.settings import TrainSettings

# At or below this default input, drift's slope is read from the longest input the rows hold
# (`baseline_input`). Of h34's held-out series, the 11 with a default of 2-12 steps so forecast 0.90x the
# MASE (geometric mean; 8 below naive's, 5 before); lengthened on all 37 with a default under 96 steps (up
# to 64), 1.34x: a longer default already holds a trend's recent slope, which the whole history blurs (US
# payrolls after 2010).
SHORT_HISTORY = 12
# The longest input `LONGEST_HISTORY`'s smoothing reads: each window is smoothed step by step.
SMOOTHING_HISTORY = 300
# `--model auto`'s baselines, the forecasts that fit nothing, first: naive and seasonal naive on every series,
# the others (drift, mean, seasonal drift, seasonal mean, Holt-Winters) on a user's file only.
AUTO_BASELINES, USER_BASELINES = NOTHING_TO_FIT[:2], NOTHING_TO_FIT[2:]


def auto_models(dataset: str | None) -> list[str]:
    """`--model auto`'s models, simplest first: a tie goes to the simpler (the registered datasets' `auto`
    benchmark rows were chosen without the user-file baselines, and their bundles are not kept to choose
    again)."""
    users = USER_BASELINES if dataset is None else ()
    return [*AUTO_BASELINES, *users, "nlinear", "dlinear", "s3attention"]


@dataclass(frozen=True)
class Candidate:
    """One model to fit: its registered name, config fields, learning rate and input size, whether its
    trained forecast is shrunk toward the naive one (`models.toward_naive`), and how many seeds it is trained
    from (None: by the data's size, `members.member_seeds`)."""

    label: str
    model_name: str
    model_options: dict[str, Any]
    lr: float
    input_size: int
    toward_naive: bool = True
    seeds: int | None = None


def _config_fields(model_name: str) -> dict[str, dataclasses.Field]:
    return {field.name: field for field in dataclasses.fields(MODELS.get(model_name).config_class)}


def _fields(model_name: str) -> set[str]:
    return set(_config_fields(model_name))


def fitting_season(model_name: str, freq: str | None, input_size: int) -> int | None:
    """The season of the data's frequency where a seasonal model can use it with `input_size` steps."""
    return season_length(freq, MODELS.get(model_name).config_class.longest_season(input_size))


def season_fits(model_name: str, freq: str | None, input_size: int) -> bool:
    """False for a model that repeats a season (seasonal naive, seasonal drift) where none fits the input."""
    return "season" not in _fields(model_name) or fitting_season(model_name, freq, input_size) is not None


def _no_season(model_name: str, freq: str | None, input_size: int) -> str:
    """Why a seasonal model named by the user has no season: none in the data's frequency, or one longer than
    the input allows; and what to give."""
    season, longest = season_length(freq), MODELS.get(model_name).config_class.longest_season
    if season is None:
        return (f"{model_name}: the data's frequency {freq!r} has no season to repeat (yearly, irregular or "
                "unknown); give --season N, the steps of one season")  # fmt: skip
    needed = season_input(model_name, season)
    other = f" or --season N (N <= {longest(input_size)})" if longest(input_size) >= 1 else ""
    return (f"{model_name}: the data's season of {season} steps needs an input of {needed} steps, and the "
            f"input is {input_size}; give --input-size {needed} (the file needs the rows for it)"
            f"{other}")  # fmt: skip


def season_input(model_name: str, season: int) -> int:
    """The shortest input with which a seasonal model can use a season of `season` steps."""
    longest = MODELS.get(model_name).config_class.longest_season
    return next(size for size in range(1, 3 * season + 2) if longest(size) >= season)


def baseline_input(model_name: str, series: TimeSeries, settings: TrainSettings, input_size: int) -> int:
    """A forecast that fits nothing takes the input it needs (drift 2 steps, a season's model its seasons)
    where the default is shorter and every split still holds a window (it needs no train windows to learn
    from): seasonal drift on five years of monthly rows reads two seasons although a trained model gets one.
    Where the default is at most SHORT_HISTORY steps, drift reads the longest input the rows hold
    (`WHOLE_HISTORY`): on 12 yearly rows drift's slope was the last year's change (2 steps), and a series
    that rose in 10 of 11 years was forecast to fall. Holt-Winters (`LONGEST_HISTORY`) reads the longest
    input the rows hold, up to SMOOTHING_HISTORY steps, whatever the default. Neither on a panel of
    independent series, whose shorter series a longer input would leave out. An --input-size or --season
    given holds, and a registered dataset's input size (the protocol's)."""
    given = settings.input_size or "season" in settings.model_options or series.dataset
    if model_name not in NOTHING_TO_FIT or given:
        return input_size
    joint = series.options.channels != INDEPENDENT
    longest = {**dict.fromkeys(WHOLE_HISTORY, DEFAULT_INPUT_SIZE if input_size <= SHORT_HISTORY else 0),
               **dict.fromkeys(LONGEST_HISTORY, SMOOTHING_HISTORY)}.get(model_name, 0)  # fmt: skip
    if joint and longest > input_size:
        earlier = model_name in LONGEST_HISTORY and _earlier_holds(input_size, series, settings)
        held = (size for size in range(longest, input_size, -1)
                if rows_hold(size, series, settings, trained=False)
                and (not earlier or _earlier_holds(size, series, settings)))  # fmt: skip
        input_size = next(held, input_size)
    needed, season = _smallest_input(model_name), season_length(series.freq)
    if season is not None and not season_fits(model_name, series.freq, input_size):
        needed = max(needed, season_input(model_name, season))
    held = needed > input_size and rows_hold(needed, series, settings, trained=False)
    return needed if held else input_size


def _earlier_holds(input_size: int, series: TimeSeries, settings: TrainSettings) -> bool:
    """Whether an input of `input_size` steps leaves a forecast that fits nothing the split's earlier
    validation period (`splits.earlier_period`): a candidate without it drops that period's check for every
    candidate (Holt-Winters on the longest input did, and one validation window chose for all)."""
    split, horizon = split_for(series, settings), settings.horizon
    try:
        borders = split_borders(len(series), input_size, split, series.freq, horizon=horizon, trained=False)
    except DataError:  # no window in some split at that input
        return False
    return earlier_period(borders, input_size, horizon, trained=False) is not None


def rows_hold(input_size: int, series: TimeSeries, settings: TrainSettings, trained: bool) -> bool:
    """Whether the file's rows (a panel's: `panel_rows`) give each split the windows a model of `input_size`
    steps needs (the train split none where the model is not `trained`: a forecast that fits nothing learns
    from none)."""
    split = split_for(series, settings)
    panel_input = settings.input_size or default_input_size(series, settings)
    rows = panel_rows(series, settings.horizon, split, panel_input)
    return usable(rows, input_size, settings.horizon, split, series.freq, trained)


def _smallest_input(model_name: str) -> int:
    """The shortest input a model's config accepts (S3Attention: 2), 1 where it states none."""
    field = _config_fields(model_name).get("input_size")
    return int(field.metadata.get("minimum") or 1) if field is not None else 1


def split_for(series: TimeSeries, settings: TrainSettings) -> str:
    """The split scheme asked for, else 7:1:2 or, on a file too short for it, holdout (`default_split`);
    independent series each by their own rows (auto: one series of a wide table may span fewer rows)."""
    if settings.split:
        return settings.split
    if series.options.channels == INDEPENDENT:
        return AUTO_SPLIT
    return default_split(len(series), settings.horizon)


# The share of each column's rows its transform is judged on (`logged_channels`): 7:1:2's train rows, the
# same for every candidate (combinations average their standardized forecasts under one scaler).
TRANSFORM_ROWS = 0.7


def logged_channels(series: TimeSeries, settings: TrainSettings) -> np.ndarray | None:
    """Which input channels are standardized in logarithms (`Scaler.log`; None: none): every target under
    --transform log; under auto, the default on a user's file, those whose swings grow with their level
    (`scaling.multiplicative`); none on a registered dataset, whose papers standardize only."""
    transform = settings.transform or ("none" if series.dataset else "auto")
    if transform == "none":
        return None
    matrix, season = series.values, season_length(series.freq)
    rows = series.own_rows() if series.options.channels == INDEPENDENT else [slice(None)] * matrix.shape[1]
    judged = [column[part][: max(int(TRANSFORM_ROWS * len(column[part])), 1)]
              for column, part in zip(matrix.T, rows, strict=True)]  # fmt: skip
    positive = [not (column <= 0).any() for column in matrix.T]  # every row: validation and test too
    if transform == "log" and not all(positive):
        below = [name for name, fits in zip(series.columns, positive, strict=True) if not fits]
        raise DataError(f"{series.source}: --transform log forecasts the logarithm of each target, and "
                        f"{some(list(map(repr, below)))} hold(s) values at or below 0; expected positive "
                        "values, or --transform auto or none")  # fmt: skip
    logged = [fits and (transform == "log" or multiplicative(column, season))
              for fits, column in zip(positive, judged, strict=True)]  # fmt: skip
    if series.options.channels != INDEPENDENT:
        logged += [False] * (series.inputs.shape[1] - len(logged))  # covariates as they are
    return np.asarray(logged) if any(logged) else None


def default_input_size(series: TimeSeries, settings: TrainSettings) -> int:
    """A registered dataset's input size; else `splits.default_input` of the file under its split, for naive
    named (`LAST_VALUES`) the shorter where counting the series it splits without a train window keeps more
    of them: on 10 series of 100 years beside 90 of 6, --model naive read 34 steps and left the 90 out (h109
    R5). `--model auto` plans on the trained models' input."""
    if series.dataset:
        return get_spec(series.dataset).input_size
    split = split_for(series, settings)
    size = default_input(series, settings.horizon, split)
    if settings.model_name in LAST_VALUES:
        size = min(size, default_input(series, settings.horizon, split, trained=False))
    return size


class InputTooShort(DataError):
    """A file too short for a model's input before its validation and test horizons (`why` says so)."""

    def __init__(self, why: str, source: str) -> None:
        super().__init__(f"{source}: {why}: expected more rows or a shorter --horizon (--model naive "
                         "forecasts from 1 step)")  # fmt: skip
        self.why = why


def _candidate(
    label: str, model_name: str, preset_name: str, settings: TrainSettings, series: TimeSeries
) -> Candidate | None:
    """A candidate from a preset and the user's settings (which win); None if it cannot apply."""
    model_preset, training_preset = preset(model_name, preset_name, series.dataset)
    fields = _fields(model_name)
    options = {
        **model_preset,
        **({"seed": settings.seed} if "seed" in fields else {}),
        **{key: value for key, value in settings.model_options.items() if key in fields},
    }
    if settings.loss == "quantile":
        if "quantile_levels" not in fields:
            if settings.model_name != AUTO:
                raise ConfigError(
                    f"--loss quantile needs a model with a quantile head (s3attention); {model_name} has none"
                )
        elif not options.get("quantile_levels"):
            options["quantile_levels"] = list(DEFAULT_LEVELS)
    elif settings.loss == "mse":
        if settings.model_options.get("quantile_levels"):
            raise ConfigError("--levels sets the levels of a quantile head, which --loss mse does not train")
        options.pop("quantile_levels", None)  # the preset's head: --loss mse trains the point forecast alone
    if options.get("quantile_levels") and settings.interval_levels:  # neuralforecast's MQLoss(level=) so
        options["quantile_levels"] = sorted({*options["quantile_levels"], *settings.interval_levels})
    preset_size = training_preset.get("input_size")
    input_size = settings.input_size or preset_size or baseline_input(
        model_name, series, settings, default_input_size(series, settings)
    )
    smallest = _smallest_input(model_name)
    if input_size < smallest:  # a short file: the rows before the validation and test horizons are too few
        if settings.model_name == AUTO:
            return None
        raise InputTooShort(
            f"{len(series)} rows leave {model_name} an input of {input_size} step(s) before the validation "
            f"and test horizons of {settings.horizon}; it needs at least {smallest}", series.source
        )
    trained = model_name not in NOTHING_TO_FIT
    if settings.model_name == AUTO and not rows_hold(input_size, series, settings, trained):
        return None  # no window to learn from (a trained model) or to score on: named, the split says why
    if "season" in fields and "season" not in options:
        season = fitting_season(model_name, series.freq, input_size)
        if season is None and MODELS.get(model_name).config_class.season_optional:
            season = 1  # smoothing without a season
        if season is None:
            if settings.model_name != AUTO:
                raise ConfigError(_no_season(model_name, series.freq, input_size))
            return None
        options["season"] = season
    lr = settings.lr or training_preset.get("lr") or TRAINING_DEFAULTS["lr"]
    toward_naive, seeds = settings.toward_naive, settings.seeds
    if toward_naive is None:
        toward_naive = training_setting(model_name, preset_name, series.dataset, "toward_naive")
    if seeds is None:
        seeds = training_setting(model_name, preset_name, series.dataset, "seeds")
    return Candidate(label, model_name, options, lr, input_size, toward_naive, seeds)


def check_model_options(settings: TrainSettings) -> None:
    """ConfigError naming the options given that are no config fields of the model (`auto` takes none)."""
    if settings.model_name != AUTO:
        unknown = sorted(set(settings.model_options) - _fields(settings.model_name))
        if unknown:
            raise ConfigError(f"model {settings.model_name!r} has no option(s) {unknown}")


def plan(settings: TrainSettings, series: TimeSeries) -> list[Candidate]:
    """The candidates a run fits: one model with its preset, a model's `--preset auto` variants, or, for
    `--model auto`, the baselines, S3Attention's auto variants and any `--candidates`."""
    if settings.model_name == AUTO:
        models = list(dict.fromkeys([*auto_models(series.dataset), *settings.candidates]))
        named = [(model, AUTO if model == "s3attention" else DEFAULT) for model in models]
    else:
        check_model_options(settings)
        named = [(settings.model_name, settings.preset)]
    pairs = [
        (model, name)
        for model, preset_name in named
        for name in (auto_candidates(model) if preset_name == AUTO else (resolve(model, preset_name),))
    ]
    counts = {model: sum(1 for other, _ in pairs if other == model) for model, _ in pairs}
    labels = {
        (model, name): model if counts[model] == 1 and name == resolve(model) else f"{model}:{name}"
        for model, name in pairs
    }
    planned = [_candidate(labels[model, name], model, name, settings, series) for model, name in pairs]
    distinct = {}  # the same candidate planned twice (paper = reference outside ILI) runs once
    for candidate in planned:
        if candidate is not None:
            key = (
                candidate.model_name,
                repr(sorted(candidate.model_options.items())),
                candidate.lr,
                candidate.input_size,
                candidate.toward_naive,
                candidate.seeds,
            )
            distinct.setdefault(key, candidate)
    if not distinct:  # --model auto on a file too short for any: the split says what the rows lack
        split_borders(len(series), 1, split_for(series, settings), series.freq, horizon=settings.horizon,
                      source=series.source, trained=False)  # fmt: skip
        raise DataError(f"{series.source}: {len(series)} rows leave no model an input before the validation "
                        f"and test horizons of {settings.horizon}: expected more rows or a shorter --horizon")
    return list(distinct.values())


def plan_baselines(settings: TrainSettings, series: TimeSeries) -> list[Candidate]:
    """The forecasts that fit nothing (`NOTHING_TO_FIT`), each where it applies as `--model auto` plans it, on
    the longest input (up to DEFAULT_INPUT_SIZE) from which every series splits without a train window: a
    panel's companion (`training.companion`) chooses among them for series too short for the kept model."""
    split, lengths = split_for(series, settings), series_lengths(series)
    sizes = [size for size in range(1, DEFAULT_INPUT_SIZE + 1) if all(
        usable(length, size, settings.horizon, split, series.freq, trained=False) for length in lengths)]
    if not sizes:
        return []
    auto = dataclasses.replace(settings, model_name=AUTO, preset=DEFAULT, input_size=max(sizes))
    planned = [_candidate(name, name, DEFAULT, auto, series) for name in NOTHING_TO_FIT]
    return [candidate for candidate in planned if candidate is not None]


def plan_fitting(settings: TrainSettings, series: TimeSeries) -> tuple[TrainSettings, list[Candidate]]:
    """`plan`, and where the product's default model cannot read an input from a user's file (20 yearly rows
    at horizon 6 leave it 1 step), the choice `--model auto` makes among the models that fit, with a note:
    a user who named no model gets a forecast, as from any mature tool, not a refusal. The settings the
    candidates were planned under come back with them."""
    try:
        return settings, plan(settings, series)
    except InputTooShort as short:
        if (settings.model_name, settings.preset) != ("s3attention", DEFAULT) or series.dataset is not None:
            raise
        warnings.warn(f"{series.source}: note: {short.why}: chose as --model auto does, among the models "
                      "that fit", DataQualityWarning, stacklevel=2)  # fmt: skip
        auto = dataclasses.replace(settings, model_name=AUTO)
        return auto, plan(auto, series)

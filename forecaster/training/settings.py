"""What a training run is asked to do, declared once: the command line, the benchmark and the Python API
read their options and defaults from these dataclasses. Kept free of torch and Lightning so that building
the command line stays fast."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from forecaster.checks import (
    MAX_SEED,
    check_choice,
    check_fields,
    field_names,
    is_int,
    is_number,
    parse_names,
    setting,
)
from forecaster.data.splits import SPLIT_SCHEMES
from forecaster.errors import ConfigError
from forecaster.presets import AUTO, DEFAULT, resolve

LR_SCHEDULES = ("none", "cosine")
LOSSES = ("mse", "quantile")
TRANSFORMS = ("auto", "log", "none")
# Bagging on small data (`members.member_seeds`): where the train split holds fewer than SMALL_TRAIN_WINDOWS
# windows, a trainable candidate is trained from BAG_SEEDS seeds and their forecasts averaged. There the
# run-to-run spread is large and each fit takes seconds. ILI (about 600 train windows), S3Attention
# anchored-skip, test MSE mean (spread) over seeds 0-2 in data/benchmark, one model -> the average of five:
# 24: 2.326 (0.287) -> 2.105 (0.098); 36: 2.194 -> 2.173; 48: 2.563 -> 2.318; 60: 2.286 -> 2.362.
# The default bag also spans input sizes, as N-BEATS ensembles over lookbacks (Oreshkin, Carpov, Chapados
# and Bengio 2020, ICLR): where the input size is a default (no --input-size) and the train split keeps at
# least as many windows as LONGER_INPUT times its steps, BAG_SEEDS more members read that longer input.
# Judged on validation: ILI anchored-skip (data/benchmark), input 60 against 60 and 120 (ten members), mean
# over seeds 0-2 of the validation MSE at 24 / 36 / 48 / 60: 0.162 / 0.204 / 0.215 / 0.231 -> 0.182 / 0.198 /
# 0.209 / 0.226, and on the earlier validation period (36-60, trained on the rows before it) 0.305 / 0.309 /
# 0.291 -> 0.261 / 0.269 / 0.272: better but at 24, the horizon judged on the main period alone.
SMALL_TRAIN_WINDOWS = 2000
BAG_SEEDS = 5
LONGER_INPUT = 2
MAX_BAG_SEEDS = 32


def devices_value(text: str) -> int | str:
    """Lightning's devices: a count, or a name such as "auto"."""
    return int(text) if text.isdigit() else text


def batches_value(text: str) -> int | float:
    """Lightning's convention: an integer is a number of batches, a float a fraction of them."""
    return int(text) if text.isdigit() else float(text)


@dataclass
class TrainerOptions:
    """How Lightning runs a fit; accelerator/devices/strategy go to Lightning unchanged."""

    max_epochs: int = setting(10, "epoch budget", minimum=1)
    patience: int = setting(3, "early-stopping patience in epochs", minimum=1)
    accelerator: str = setting("auto", "cpu, gpu, ...")
    devices: Any = setting("auto", "number of devices, or auto", parse=devices_value)
    strategy: str = setting("auto", "e.g. ddp for several devices")
    gradient_clip_val: float | None = setting(
        None, "clip the gradient norm to this value", above=0, flag="--gradient-clip"
    )
    cuda_graphs: bool | None = setting(
        None, "capture the training step as a CUDA graph and replay it (default: on when training on one "
        "CUDA device; forecaster.training.graphs)",
    )
    deterministic: bool = setting(False, "use deterministic algorithms only")
    limit_train_batches: Any = setting(None, "batches per epoch: a count, or a fraction", parse=batches_value)
    progress_bar: bool = setting(
        True, "show a progress bar (default: train only at a terminal, tune off, the Python API on)",
        flag="--progress",
    )
    verbose: bool = setting(False, "also show Lightning's own messages: devices, tips, warnings")

    def __post_init__(self) -> None:
        check_fields(self, "training setting")
        batches = self.limit_train_batches
        whole = is_int(batches) and batches >= 1
        if batches is not None and not (whole or is_number(batches) and 0 < batches <= 1):
            raise ConfigError("training setting 'limit_train_batches' must be a count >= 1 or a fraction in "
                              f"(0, 1], got {batches!r}")  # fmt: skip


@dataclass
class TrainSettings:
    """What to train and how; `model_options` are config fields of the model over its preset."""

    horizon: int = setting(help="forecast length H", minimum=1)
    input_size: int | None = setting(
        None,
        "history length L (default: the preset's, else the dataset's, else 96, shortened on a short file so "
        "that training keeps as many windows as input steps)",
        minimum=1,
    )
    split: str | None = setting(
        None,
        "split scheme (default: 7:1:2, or holdout where 7:1:2 would leave validation or test fewer rows than "
        "the horizon: then the last H rows test and the H rows before them validate; auto: that choice for "
        "each independent series by its own rows, the default where they differ)",
        choices=SPLIT_SCHEMES,
    )
    model_name: str = setting(
        "s3attention",
        "forecasting model: s3attention, tnn, naive, seasonal_naive, drift, mean, seasonal_drift, "
        "seasonal_mean, dlinear, nlinear, patchtst, itransformer, or auto (the best of naive, "
        "seasonal_naive, and drift, mean, seasonal_drift and seasonal_mean on your own files, dlinear, "
        "nlinear and s3attention's candidates on the validation split)",
        flag="--model",
    )
    preset: str = setting(
        DEFAULT,
        "named settings of the model (forecaster.presets): default (the product's; s3attention: anchored), "
        "reference (the reference code's), paper (the papers' where they state them: ILI input 60), auto "
        "(the best of the model's variants on the validation split, or their ensemble), or another named "
        "variant",
    )
    candidates: list = setting(
        [], "with --model auto, more models to choose among (e.g. patchtst,itransformer)", parse=parse_names
    )
    model_options: dict = setting({}, cli=False)
    # the levels `predict` will be asked for (the Python API's `level`): a quantile head is trained at them
    # too, as it answers only its own levels, and `level=[50]` was refused after the whole fit (h72)
    interval_levels: list = setting([], cli=False)
    loss: str | None = setting(
        None, "mse: point forecasts, conformal intervals around them; quantile: also a learned quantile head "
        "at --levels (default 80,95; s3attention), conformally calibrated (default: quantile where the "
        "preset or --levels gives a head, else mse)", choices=LOSSES,
    )
    transform: str | None = setting(
        None, "log: forecast the logarithm of every target column (positive values only), so that forecasts "
        "stay positive and intervals widen with the level; none: the values as they are; auto (the default "
        "on your own files; none on the benchmark datasets): log where a column's seasonal swings (without a "
        "season, its swings about a line) grow with its level", choices=TRANSFORMS,
    )
    batch_size: int = setting(32, "windows per training step", minimum=1)
    lr: float | None = setting(  # a finite 1e300 overflowed inside AdamW, with Python's traceback
        None, "AdamW learning rate (default: the preset's, else 1e-4)", above=0, maximum=10
    )
    toward_naive: bool | None = setting(
        None, "shrink the trained forecast toward the naive one, per horizon step, by least-squares weights "
        "in [0, 1] fitted on the validation split: the forecast continues from the last observation, and no "
        "step is worse than naive on validation (default: the preset's: on, off under reference and paper)",
    )
    weight_decay: float = setting(0.01, "AdamW weight decay", minimum=0, maximum=10)
    lr_schedule: str = setting("none", "learning-rate schedule", choices=LR_SCHEDULES)
    seed: int = setting(
        0, "seed of the weights, sampled index sets and shuffling", minimum=0, maximum=MAX_SEED
    )
    seeds: int | None = setting(
        None, f"models trained from different seeds whose forecasts are averaged (default: {BAG_SEEDS} "
        f"where the train split holds fewer than {SMALL_TRAIN_WINDOWS:,} windows and the model reads no "
        "covariates, else 1)", minimum=1, maximum=MAX_BAG_SEEDS,
    )
    trainer: TrainerOptions = field(default_factory=TrainerOptions)
    resume: bool = setting(False, "continue an interrupted run from its last checkpoint")
    overwrite: bool = setting(False, "replace an existing bundle at --out")

    def __post_init__(self) -> None:
        check_fields(self, "training setting")
        from forecaster.models import FORECAST, model_names

        check_choice("model", self.model_name, [*model_names(FORECAST), AUTO])
        for name in self.candidates:
            check_choice("candidate model", name, model_names(FORECAST))
        if self.candidates and self.model_name != AUTO:
            raise ConfigError(f"candidates are what --model auto chooses among; model {self.model_name!r} is "
                              "one model: leave out --candidates or use --model auto")  # fmt: skip
        if self.model_name != AUTO and self.preset != AUTO:
            resolve(self.model_name, self.preset)


# What a bundle records of the settings that trained it (its recipe), so that `Forecaster.load(p).fit(df)`
# and `.cross_validation(df)` train the same recipe again (h72: lr, seed, epochs and transform were lost).
# Left out: where and how one run ran (a bundle trained on a GPU refits on a laptop), and run-only switches.
RECIPE = "recipe"  # the training record's field
RUN_ONLY = frozenset({"resume", "overwrite", "trainer"})
MACHINE_ONLY = frozenset({"accelerator", "devices", "strategy", "cuda_graphs", "progress_bar", "verbose"})


def recipe(settings: TrainSettings) -> dict[str, Any]:
    """The settings a bundle records: what was asked, not what the run chose (that is the training record)."""
    asked = {name: getattr(settings, name) for name in field_names(TrainSettings) - RUN_ONLY}
    trainer = {name: getattr(settings.trainer, name) for name in field_names(TrainerOptions) - MACHINE_ONLY}
    return {**asked, "trainer": trainer}


def from_recipe(recorded: Any, machine: TrainerOptions) -> TrainSettings:
    """Settings again from a bundle's recipe (checked as given ones), run with `machine`'s options; a name
    this version does not know (a later version's) is left out."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("trainer"), dict):
        raise ConfigError(f"a recipe must be an object with a 'trainer' object, got {str(recorded)[:80]}")
    known, kept = field_names(TrainSettings) - RUN_ONLY, field_names(TrainerOptions) - MACHINE_ONLY
    asked = {name: value for name, value in recorded.items() if name in known}
    trainer = {name: value for name, value in recorded["trainer"].items() if name in kept}
    trainer.update({name: getattr(machine, name) for name in MACHINE_ONLY})
    return TrainSettings(**asked, trainer=TrainerOptions(**trainer))

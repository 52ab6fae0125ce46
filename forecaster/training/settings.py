"""What a training run is asked to do, declared once: the command line, the benchmark and the Python API
read their options and defaults from these dataclasses. Kept free of torch and Lightning so that building
the command line stays fast."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from forecaster.checks import check_choice, check_fields, setting
from forecaster.data.splits import SPLIT_SCHEMES

LR_SCHEDULES = ("none", "cosine")


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
    gradient_clip_val: float | None = setting(None, "clip the gradient norm to this value", above=0,
                                              flag="--gradient-clip")
    deterministic: bool = setting(False, "use deterministic algorithms only")
    limit_train_batches: Any = setting(None, "batches per epoch: a count, or a fraction",
                                       parse=batches_value)
    progress_bar: bool = setting(True, "show a progress bar", flag="--progress")

    def __post_init__(self) -> None:
        check_fields(self, "training setting")


@dataclass
class TrainSettings:
    """What to train and how; `model_options` are config fields of the model over its dataset preset."""

    horizon: int = setting(help="forecast length H", minimum=1)
    input_size: int | None = setting(None, "history length L (default: the dataset's, else 96)", minimum=1)
    split: str = setting("7:1:2", "split scheme", choices=SPLIT_SCHEMES)
    model_name: str = setting("s3attention", "registered forecasting model", flag="--model")
    model_options: dict = setting({}, cli=False)
    batch_size: int = setting(32, "windows per training step", minimum=1)
    lr: float = setting(1e-4, "AdamW learning rate", above=0)
    weight_decay: float = setting(0.01, "AdamW weight decay", minimum=0)
    lr_schedule: str = setting("none", "learning-rate schedule", choices=LR_SCHEDULES)
    seed: int = setting(0, "seed of the weights, sampled index sets and shuffling", minimum=0)
    trainer: TrainerOptions = field(default_factory=TrainerOptions)
    resume: bool = setting(False, "continue an interrupted run from its last checkpoint")
    overwrite: bool = setting(False, "replace an existing bundle at --out")

    def __post_init__(self) -> None:
        check_fields(self, "training setting")
        from forecaster.models import FORECAST, model_names

        check_choice("model", self.model_name, model_names(FORECAST))

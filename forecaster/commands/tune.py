"""`forecaster tune`: search a model's settings on the validation split, retrain the best as a bundle."""

from __future__ import annotations

import argparse

from forecaster.checks import user_path
from forecaster.commands.common import add_source_arguments, print_metrics, series_source
from forecaster.commands.options import add_settings, given

HELP = "search a model's settings on validation (Ray Tune, Optuna, ASHA) and save the best as a bundle"
DESCRIPTION = (
    "Try --trials settings of --model from its search space (forecaster.tuning.space; --space FILE to change "
    "it), each trained on the train split and scored on the validation split, bad ones stopped early; "
    "retrain the best next to the untuned settings, keep it only if it is clearly better on validation, and "
    "write --out DIR: model/ (the bundle), kept.json (the settings kept), trials.csv (every trial) and "
    "space.json."
)


def configure(parser: argparse.ArgumentParser) -> None:
    from forecaster.commands.train import model_configs
    from forecaster.training.settings import TrainerOptions, TrainSettings
    from forecaster.tuning.search import TuneSettings

    add_source_arguments(parser, targets=True)
    add_settings(parser, TrainSettings, skip=("candidates", "resume"))
    add_settings(parser.add_argument_group("tuning"), TuneSettings)
    seen: set[str] = set()
    for name, config_class in model_configs().items():
        add_settings(parser.add_argument_group(f"{name} options (fixed for every trial)"), config_class,
                     seen=seen)
    add_settings(parser.add_argument_group("training of each trial"), TrainerOptions)
    parser.add_argument("--out", required=True, metavar="DIR", type=user_path, help="tuning folder to create")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from forecaster.checks import default_of
    from forecaster.commands.train import model_options
    from forecaster.training.settings import TrainerOptions, TrainSettings
    from forecaster.training.trainer import lightning_quiet
    from forecaster.tuning.search import METRIC, TuneSettings, describe_choice, tune_forecaster

    fields = given(args, TrainSettings)
    model = fields.get("model_name", default_of(TrainSettings, "model_name"))
    trainer = TrainerOptions(**{"progress_bar": False, **given(args, TrainerOptions)})
    base = TrainSettings(**fields, model_options=model_options(args, model), trainer=trainer)
    tuning = TuneSettings(**given(args, TuneSettings))
    with lightning_quiet(not trainer.verbose):
        outcome = tune_forecaster(series_source(args).load(), args.out, base, tuning)
    trials = outcome.trials
    counts = trials["status"].value_counts()
    print(f"{len(trials)} trials: " + ", ".join(f"{counts[status]} {status}" for status in counts.index))
    choice = outcome.choice
    print(f"best trial on validation ({METRIC} {choice['best_trial_val_mse']:.4f}): "
          + ", ".join(f"{name}={value}" for name, value in outcome.best.items()))
    print(describe_choice(choice))
    print_metrics(outcome.bundle.metrics)
    print(f"bundle saved to {outcome.out / 'model'}; every trial in {outcome.out / 'trials.csv'}")
    return 0

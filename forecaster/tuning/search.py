"""`forecaster tune`: a search over one model's settings on Ray Tune, then the best one retrained as a bundle.

The first trial is the model's untuned settings (where the space holds them), then Optuna's TPE sampler
proposes each trial's settings from the trials before it (seeded), ASHA stops trials
whose validation MSE after an epoch falls behind (successive halving, Li et al. 2020), and each trial is
an ordinary `fit_candidate` run on the train windows, judged on the validation windows: the test split is
read only by the final bundle's report. The best trial's settings are kept over the untuned ones only on clear
evidence (`keep_tuned`). The output folder holds the bundle (`model/`), the settings kept (`kept.json`), every
trial's settings and score (`trials.csv`) and the space searched (`space.json`); it is written whole or not
at all.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from forecaster.artifacts import check_out_dir, work_dir_for
from forecaster.atomic import held_by_this_run, move_into_place, staging_dir, sweep_stale
from forecaster.checks import check_fields, setting
from forecaster.cluster import (
    CpuWatch,
    quiet_lightning,
    ray_started,
    say_if_no_cpus,
    stops_as_exit,
)
from forecaster.data import TimeSeries
from forecaster.errors import ConfigError, ForecasterError
from forecaster.models.baselines import NOTHING_TO_FIT
from forecaster.training.settings import TrainSettings
from forecaster.tuning.space import TRAINING_SETTINGS, default_point, model_defaults, search_space, tune_space

if TYPE_CHECKING:
    from forecaster.training.fit import Fitted
    from forecaster.training.planning import Candidate

MODEL_DIR, TRIALS_FILE, SPACE_FILE, KEPT_FILE = "model", "trials.csv", "space.json", "kept.json"
UNTUNED, TUNED = "untuned", "tuned"
METRIC = "val_mse"


@dataclass
class TuneSettings:
    """How the search runs (what each trial trains is a TrainSettings)."""

    trials: int = setting(16, "settings tried; Optuna proposes each from the trials before it", minimum=1)
    jobs: int = setting(
        1, "trials at once, as Ray tasks each with its share of the CPUs and GPUs; above 1, which trials "
        "ASHA stops and what Optuna proposes depend on which trial reports first, so a rerun may keep other "
        "settings (1 repeats exactly)", minimum=1,
    )
    space: Path | None = setting(
        None, "JSON or YAML file of ranges over the model's default search space (see README)", parse=Path
    )
    grace_epochs: int = setting(2, "epochs every trial trains before ASHA may stop it", minimum=1)
    ray_address: str | None = setting(
        None, "the Ray cluster that runs the trials (host:port or ray://...; default: a Ray started here)"
    )

    def __post_init__(self) -> None:
        check_fields(self, "tuning setting")


@dataclass
class TuneOutcome:
    """The tuning folder, the bundle of the best settings and every trial (one row each)."""

    out: Path
    bundle: Any  # training.workflows.TrainOutcome, its path under `out`
    trials: pd.DataFrame
    best: dict[str, Any]
    choice: dict[str, Any]  # what KEPT_FILE holds


def settings_for(base: TrainSettings, trial: dict[str, Any]) -> TrainSettings:
    """`base` with a trial's settings: lr and input_size as training settings, the rest model options."""
    values = {name: value.item() if hasattr(value, "item") else value for name, value in trial.items()}
    options = {name: value for name, value in values.items() if name not in TRAINING_SETTINGS}
    return dataclasses.replace(
        base,
        lr=values.get("lr", base.lr),
        input_size=values.get("input_size", base.input_size),
        model_options={**base.model_options, **options},
    )


def _reporter() -> Any:
    """A Lightning callback that reports each epoch's validation MSE to Tune (what ASHA compares)."""
    import lightning
    from ray import tune

    class ReportEpochs(lightning.Callback):
        def on_validation_end(self, trainer: lightning.Trainer, module: lightning.LightningModule) -> None:
            if not trainer.sanity_checking:
                tune.report({METRIC: float(trainer.callback_metrics[METRIC]), "complete": False})

    return ReportEpochs()


def _trial(
    trial: dict[str, Any], *, series: TimeSeries, base: TrainSettings, threads: int, root: str
) -> None:
    """One trial in a Ray worker: fit the candidate its settings make, report its validation MSE. A trial
    trains from one seed (no bagging): ASHA follows one training's epochs, and the settings kept at the end
    are fitted as `forecaster train` fits them (`keep_tuned`)."""
    import torch
    from ray import tune

    from forecaster.training.fit import fit_candidate
    from forecaster.training.planning import plan

    torch.set_num_threads(threads)
    quiet_lightning()
    settings = dataclasses.replace(settings_for(base, trial), seeds=1)
    [candidate] = plan(settings, series)
    work = Path(root) / tune.get_context().get_trial_id()
    fitted = fit_candidate(series, settings, candidate, work, callbacks=[_reporter()])
    shutil.rmtree(work, ignore_errors=True)
    tune.report({METRIC: fitted.val_mse, "complete": True, "epochs": fitted.training["epochs"]})


def _search(
    series: TimeSeries, base: TrainSettings, tuning: TuneSettings, space: dict, first: dict, root: Path
) -> Any:
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # with verbose=0: no tables, no TensorBoard hints
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # trials.csv is the record
    os.environ.setdefault("TUNE_DISABLE_SIGINT_HANDLER", "1")  # Ctrl-C interrupts, as in every command
    import optuna
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.optuna import OptunaSearch

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    resources = ray.cluster_resources()
    threads = max(1, int(resources.get("CPU", 1) // tuning.jobs))
    trainable = tune.with_resources(
        tune.with_parameters(_trial, series=series, base=base, threads=threads, root=str(root / "trials")),
        {"cpu": threads, "gpu": resources.get("GPU", 0) / tuning.jobs},
    )
    watch = say_if_no_cpus(threads, "trial", tuning.ray_address)
    epochs = base.trainer.max_epochs
    tuner = tune.Tuner(
        trainable,
        param_space=tune_space(space),
        tune_config=tune.TuneConfig(
            metric=METRIC,
            mode="min",
            search_alg=OptunaSearch(seed=base.seed, points_to_evaluate=[first] if first else None),
            # Each epoch is one report, the finished trial's score one more.
            scheduler=ASHAScheduler(max_t=epochs + 1, grace_period=min(tuning.grace_epochs, epochs)),
            num_samples=tuning.trials,
            max_concurrent_trials=tuning.jobs,
            reuse_actors=True,  # a trial's worker stays for the next: no process start and imports each
        ),
        run_config=tune.RunConfig(storage_path=str(root.resolve()), name="search", verbose=0,
                                  callbacks=[_watching(watch)]),
    )
    return tuner.fit()


def _watching(watch: CpuWatch) -> Any:
    """A Tune callback that has `watch` check the cluster as the search steps (it paces itself): one that lost
    its workers mid-search had it wait without a word (h149)."""
    from ray import tune

    class SayWaits(tune.Callback):
        def on_step_begin(self, iteration: int, trials: list, **info: Any) -> None:
            watch.check()

    return SayWaits()


def trial_table(results: Any) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """One row per trial, in the order they started: status (complete, stopped by ASHA, or error), epochs,
    validation MSE (the finished model's; a stopped trial's last epoch's) and its settings; and each trial's
    settings by trial id, as Tune gave them (a table cell cannot hold None)."""
    rows, settings = [], {}
    for result in results:
        metrics = result.metrics or {}
        status = "error" if result.error is not None else "complete" if metrics.get("complete") else "stopped"
        epochs = metrics.get("epochs") if status == "complete" else metrics.get("training_iteration", 0)
        number = int(str(metrics.get("experiment_tag", "0")).split("_")[0])
        trial = metrics.get("trial_id", "")
        settings[trial] = {name: value.item() if hasattr(value, "item") else value
                           for name, value in result.config.items()}
        rows.append({"number": number, "trial": trial, "status": status,
                     "epochs": epochs, METRIC: metrics.get(METRIC, float("nan")), **result.config,
                     "error": "" if result.error is None else str(result.error).strip().splitlines()[-1]})
    return pd.DataFrame(rows).sort_values("number", ignore_index=True), settings


def tune_forecaster(
    series: TimeSeries, out: str | Path, base: TrainSettings, tuning: TuneSettings
) -> TuneOutcome:
    """Search `base.model_name`'s settings on validation, retrain the best, and write the tuning folder."""
    from forecaster.training.planning import plan, rows_hold

    out = Path(out)
    if out.parent.is_dir():
        sweep_stale(out)  # what a killed search left
    check_out_dir(out, base.overwrite, KEPT_FILE, (MODEL_DIR, TRIALS_FILE, SPACE_FILE, KEPT_FILE), ("kept",))
    if base.model_name == "auto" or base.preset == "auto":
        raise ConfigError(
            "tune searches one model's settings; give --model NAME (not auto) and a named --preset"
        )
    [default] = plan(base, series)
    if default.model_name in NOTHING_TO_FIT:
        raise ConfigError(f"{default.model_name} has nothing to tune")
    holds = functools.partial(rows_hold, series=series, settings=base, trained=True)
    space = search_space(base.model_name, default.input_size, tuning.space, holds)
    untuned = {"lr": default.lr, "input_size": default.input_size, **default.model_options}
    first = default_point(space, base.model_name, untuned)
    # Two searches into one --out both ran to the end, and the later one's output was refused or replaced
    # the other's (h149): one run at a time, as `train` and `benchmark`.
    with held_by_this_run(work_dir_for(out), f"output {out}"):
        return _tune_held(series, out, base, tuning, default=default, space=space, first=first)


def _tune_held(
    series: TimeSeries,
    out: Path,
    base: TrainSettings,
    tuning: TuneSettings,
    *,
    default: Candidate,
    space: dict,
    first: dict,
) -> TuneOutcome:
    """The search under the --out lock: `default` the untuned candidate, `space` the space, `first` its first
    point."""
    from forecaster.training.workflows import split_off_short

    staged = staging_dir(out)
    try:
        series, record = split_off_short(series, base, [default], work_dir_for(staged / MODEL_DIR), None)
        with ray_started(tuning.ray_address):
            if not base.trainer.verbose:  # a failed trial's reason is in trials.csv, not a traceback here
                logging.getLogger("ray.tune").setLevel(logging.CRITICAL)
            with stops_as_exit():
                trials, settings = trial_table(_search(series, base, tuning, space, first, staged))
        for work in ("search", "trials"):
            shutil.rmtree(staged / work, ignore_errors=True)
        bundle, best, choice = write_search(series, base, trials, settings, space, staged, record)
        move_into_place(staged, out, replace=base.overwrite)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    bundle.bundle_path = out / MODEL_DIR
    return TuneOutcome(out, bundle, trials, best, choice)


def keep_tuned(
    series: TimeSeries, base: TrainSettings, best: dict[str, Any], work: Path
) -> tuple[Fitted, dict[str, float], TrainSettings]:
    """The best trial's settings fitted next to the untuned ones (`forecaster train`'s), and the one kept
    (`keep_best`, untuned first): the best of many trials on one validation split is partly luck, so it is
    kept only on clear evidence, on the earlier validation period too where the split is short (Exchange-720:
    the best of 16 trials beat the untuned settings by 24% on validation and was twice as bad on test)."""
    from forecaster.training.fit import fit_candidate
    from forecaster.training.planning import plan
    from forecaster.training.workflows import keep_best

    tuned = settings_for(base, best)
    [untuned_candidate], [tuned_candidate] = plan(base, series), plan(tuned, series)
    fits = [(UNTUNED, base, untuned_candidate)]
    if _effective(tuned_candidate) != _effective(untuned_candidate):
        fits.append((TUNED, tuned, tuned_candidate))
    fitted = [
        fit_candidate(series, settings, dataclasses.replace(candidate, label=label), work / label)
        for label, settings, candidate in fits
    ]
    kept, scores = keep_best(fitted, series, base)
    return kept, scores, tuned if kept.candidate.label == TUNED else base


def _effective(candidate: Candidate) -> tuple:
    """What a candidate trains: its options over the defaults, learning rate, input size, shrinkage."""
    options = {**model_defaults(candidate.model_name), **candidate.model_options}
    return options, candidate.lr, candidate.input_size, candidate.toward_naive


def write_search(
    series: TimeSeries,
    base: TrainSettings,
    trials: pd.DataFrame,
    settings: dict[str, dict[str, Any]],
    space: dict,
    staged: Path,
    record: dict[str, Any] | None = None,
) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Write a finished search into `staged`: trials.csv, space.json, the settings kept (`keep_tuned`) in
    kept.json and their bundle in model/ (with the companion `record` names, `workflows.split_off_short`);
    returns the bundle's TrainOutcome, the best trial's settings and what kept.json holds."""
    from forecaster.training.workflows import companion_bundle, save_kept

    complete = trials[trials["status"] == "complete"]
    if complete.empty:
        errors = trials.loc[trials["error"] != "", "error"]
        raise ForecasterError(
            "no trial finished" + (f"; the first error: {errors.iloc[0]}" if len(errors) else "")
        )
    best_row = complete.loc[complete[METRIC].idxmin()]
    best = settings[best_row["trial"]]
    trials.to_csv(staged / TRIALS_FILE, index=False)
    (staged / SPACE_FILE).write_text(json.dumps(space, indent=2) + "\n")
    work = work_dir_for(staged / MODEL_DIR)
    kept, scores, kept_settings = keep_tuned(series, base, best, work)
    choice = {"kept": kept.candidate.label, "settings": best if kept.candidate.label == TUNED else {},
              "best_trial": best_row["trial"], "best_trial_val_mse": float(best_row[METRIC]),
              "val_mse": scores, "earlier_validation": kept.earlier is not None}
    (staged / KEPT_FILE).write_text(json.dumps(choice, indent=2) + "\n")
    tuned = {"tuning": {"trials": len(trials), "complete": len(complete), "space": space, "best": best,
                        **choice}}
    companion = companion_bundle(work, record)
    bundle = save_kept(kept, scores, series, staged / MODEL_DIR, kept_settings, {**(record or {}), **tuned},
                       companion)  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)
    return bundle, best, choice


def describe_choice(choice: dict[str, Any]) -> str:
    """One line saying which settings the bundle has and why (kept.json's `choice`)."""
    scores = choice["val_mse"]
    if len(scores) == 1:
        return "kept: the untuned settings (the best trial is them)"
    periods = "the validation split and the earlier validation period" if choice["earlier_validation"] else (
        "the validation split")
    if choice["kept"] == TUNED:
        return (f"kept: the best trial's settings ({METRIC} {scores[TUNED]:.4f} against the untuned "
                f"{scores[UNTUNED]:.4f}, clearly better on {periods})")
    return (f"kept: the untuned settings; the best trial ({METRIC} {scores[TUNED]:.4f} against "
            f"{scores[UNTUNED]:.4f}) is not clearly better on {periods} (two standard errors)")

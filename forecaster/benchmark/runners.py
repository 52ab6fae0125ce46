"""How one cell of the grid is trained and scored: forecaster models, naive and neuralforecast peers alike.

Forecaster model rows (s3attention, MODEL:PRESET) come from `forecaster.training.workflows.train_forecaster`
(the same code as `forecaster train`); peer rows from neuralforecast models fitted on the same standardized
array, split and budget (`forecaster.integrations.neuralforecast`) and scored by `forecaster.metrics` on the
very test windows of our `ForecastDataModule`; naive rows repeat each window's last input step. Every row
carries its validation MSE (what the made rows choose by) and its test MSE at step 1.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forecaster.benchmark.grid import BenchmarkConfig, Cell, Source, sources
from forecaster.benchmark.lineup import (
    MADE,
    NAIVE_MODEL,
    OWN_MODEL,
    TUNED,
    TUNED_TRIALS,
    candidates,
    product_spec,
)
from forecaster.errors import DataError


@dataclass
class Prepared:
    """A dataset loaded once per grid, and its data module per horizon."""

    series: Any
    input_size: int
    source: Source
    modules: dict[int, Any] = field(default_factory=dict)


def _data_module(prepared: Prepared, horizon: int, config: BenchmarkConfig) -> Any:
    from forecaster.data import ForecastDataModule

    if horizon not in prepared.modules:
        module = ForecastDataModule(
            prepared.series, prepared.input_size, horizon, split=config.split, batch_size=config.batch_size
        )
        module.setup()
        prepared.modules[horizon] = module
    return prepared.modules[horizon]


def bundle_dir(config: BenchmarkConfig, cell: Cell) -> Path:
    """Where a forecaster model's cell keeps its bundle: out/bundles/DATASET-hH-MODEL-rR."""
    folder = cell.model.replace(":", "-")
    return Path(config.out_dir) / "bundles" / f"{cell.dataset}-h{cell.horizon}-{folder}-r{cell.repeat}"


def _settings(cell: Cell, config: BenchmarkConfig, model: str, preset: str) -> Any:
    from forecaster.training.settings import TrainerOptions, TrainSettings

    return TrainSettings(
        horizon=cell.horizon,
        input_size=config.input_size,
        split=config.split,
        model_name=model,
        preset=preset,
        batch_size=config.batch_size,
        seed=cell.seed,
        seeds=config.seeds,
        trainer=TrainerOptions(max_epochs=config.max_epochs, patience=config.patience, progress_bar=False),
        overwrite=True,
    )


def _run_product(cell: Cell, prepared: Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """A row of `forecaster train --model MODEL --preset PRESET`; the bundle is kept under bundles/."""
    from forecaster.artifacts import work_dir_for
    from forecaster.training.workflows import train_forecaster

    out = bundle_dir(config, cell)
    outcome = train_forecaster(prepared.series, out, _settings(cell, config, *product_spec(cell.model)))
    shutil.rmtree(work_dir_for(out), ignore_errors=True)
    return _product_row(outcome)


def _product_row(outcome: Any) -> dict[str, Any]:
    metrics, earlier = outcome.metrics, outcome.training.get("earlier_validation")
    return {
        **interval_fields(metrics),
        "mse": metrics["mse"],
        "mae": metrics["mae"],
        "train_seconds": outcome.training["train_seconds"],
        "epochs": outcome.training["epochs"],
        "parameters": sum(parameter.numel() for parameter in outcome.model.parameters()),
        "windows": metrics["windows"],
        "val_mse": metrics["best_val_mse"],
        "mse_step1": metrics["mse_step1"],
        "val_blocks": json.dumps(metrics["val_blocks"]),
        **({} if earlier is None else {"earlier_validation": json.dumps(earlier)}),
    }


def _run_made(cell: Cell, prepared: Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """A row of `forecaster train --preset auto` (s3attention-auto) or `--model auto` (auto) at the cell's
    seed, kept (`keep_best`) among its candidates' bundles of that seed instead of training them again; the
    bundle is kept under bundles/."""
    from forecaster.artifacts import load_bundle
    from forecaster.training.combine import ENSEMBLE
    from forecaster.training.fit import fitted_from_bundle
    from forecaster.training.workflows import keep_best, save_kept

    fitted = []
    for name in candidates(cell.model, prepared.source):
        folder = bundle_dir(config, Cell(cell.dataset, cell.horizon, name, cell.repeat))
        fitted.append(fitted_from_bundle(load_bundle(folder), name, prepared.series))
    settings = _settings(cell, config, *MADE[cell.model])
    best, scores = keep_best(fitted, prepared.series, settings)
    outcome = save_kept(best, scores, prepared.series, bundle_dir(config, cell), settings)
    kept = best.training["members"] if best.candidate.label == ENSEMBLE else {best.candidate.label: 1.0}
    return {**_product_row(outcome), "members": json.dumps(kept)}


def tuning_dir(config: BenchmarkConfig, cell: Cell) -> Path:
    """Where a tuned cell's search is kept (`_run_tuned`): one per dataset and horizon, run once."""
    return Path(config.out_dir) / "tuning" / f"{cell.dataset}-h{cell.horizon}"


def _run_tuned(cell: Cell, prepared: Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """A row of S3Attention with the settings `forecaster tune` keeps at seed 0 (searched once per dataset
    and horizon, `config.jobs` trials at a time, under tuning/: kept.json), trained at the cell's seed."""
    from forecaster.artifacts import work_dir_for
    from forecaster.presets import DEFAULT
    from forecaster.training.workflows import train_forecaster
    from forecaster.tuning.search import KEPT_FILE, TuneSettings, settings_for, tune_forecaster

    search = tuning_dir(config, cell)
    if not search.exists():
        at_zero = _settings(Cell(cell.dataset, cell.horizon, cell.model, 0), config, OWN_MODEL, DEFAULT)
        tuning = TuneSettings(trials=TUNED_TRIALS, jobs=config.jobs, ray_address=config.ray_address)
        tune_forecaster(prepared.series, search, at_zero, tuning)
    record = {"tuning": json.loads((search / KEPT_FILE).read_text())}
    settings = settings_for(_settings(cell, config, OWN_MODEL, DEFAULT), record["tuning"]["settings"])
    outcome = train_forecaster(prepared.series, bundle_dir(config, cell), settings, record)
    shutil.rmtree(work_dir_for(bundle_dir(config, cell)), ignore_errors=True)
    return _product_row(outcome)


def interval_fields(metrics: dict[str, Any]) -> dict[str, float]:
    """The record's interval columns from a bundle's metrics ("intervals" by level); none if it has none."""
    intervals = metrics.get("intervals", {})
    return {
        f"{kind}_{level}": intervals[str(level)][key]
        for level in (80, 95)
        if str(level) in intervals
        for kind, key in (("coverage", "coverage"), ("interval_score", "interval_score"))
    }


def _run_naive(cell: Cell, prepared: Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """A naive row: every window forecast as its last input step, scored like every other model."""
    from forecaster.metrics import mae, mse
    from forecaster.training.scoring import block_means

    module = _data_module(prepared, cell.horizon, config)
    histories, targets = module.test_set.stacked()
    predictions = histories[:, -1:, :].expand_as(targets)
    val_histories, val_targets = module.val_set.stacked()
    val_errors = ((val_histories[:, -1:, :] - val_targets).double() ** 2).mean(dim=1).numpy()
    return {"mse": mse(predictions, targets), "mae": mae(predictions, targets), "train_seconds": 0.0,
            "epochs": 0, "parameters": 0, "windows": len(module.test_set),
            "val_mse": float(val_errors.mean()), "mse_step1": mse(predictions[:, :1], targets[:, :1]),
            "val_blocks": json.dumps(block_means(val_errors, cell.horizon).tolist())}


def _run_peer(cell: Cell, prepared: Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """A neuralforecast row on our module's standardized array, split and test windows."""

    import numpy as np

    from forecaster.data import split_borders
    from forecaster.integrations.neuralforecast import PeerBudget, build_peer, forecast_test_windows
    from forecaster.metrics import mae, mse

    module = _data_module(prepared, cell.horizon, config)
    series, input_size = prepared.series, prepared.input_size
    borders = split_borders(len(series), input_size, config.split, series.freq, horizon=cell.horizon)
    scaled = module.scaler.transform(series.values).astype(np.float32)
    train_stop = borders["train"][1]
    (val_start, val_stop), (test_start, test_stop) = borders["val"], borders["test"]
    if val_start != train_stop - input_size or test_start != val_stop - input_size:
        raise DataError(
            f"split {config.split}: val/test must start input_size rows before the previous split ends"
        )
    budget = PeerBudget(config.max_epochs, config.patience, config.batch_size, len(module.train_dataloader()))
    model = build_peer(cell.model, cell.horizon, input_size, len(series.columns), budget, cell.seed)
    run = forecast_test_windows(
        model, scaled[:test_stop], val_stop - train_stop, test_stop - val_stop, budget.steps_per_epoch
    )
    _, targets = module.test_set.stacked()
    if run.predictions.shape != tuple(targets.shape):
        raise RuntimeError(
            f"{cell.label()}: neuralforecast scored {run.predictions.shape} test forecasts, our test "
            f"split has {tuple(targets.shape)}; the window sets differ"
        )
    return {
        "mse": mse(run.predictions, targets),
        "mae": mae(run.predictions, targets),
        "train_seconds": round(run.train_seconds, 3),
        "epochs": run.epochs,
        "parameters": run.parameters,
        "windows": len(module.test_set),
        "val_mse": run.val_loss,
        "mse_step1": mse(run.predictions[:, :1], targets[:, :1]),
        "val_blocks": "",
    }


def run_cell(cell: Cell, prepared: Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """Train and score one cell; returns the metric fields of its results.csv row."""
    if cell.model == NAIVE_MODEL:
        return _run_naive(cell, prepared, config)
    if cell.model in MADE:
        return _run_made(cell, prepared, config)
    if cell.model == TUNED:
        return _run_tuned(cell, prepared, config)
    if product_spec(cell.model) is not None:
        return _run_product(cell, prepared, config)
    return _run_peer(cell, prepared, config)


def prepared_for(cell: Cell, prepared: dict[str, Prepared], config: BenchmarkConfig) -> Prepared:
    """The cell's dataset, loaded once while consecutive cells use it (only the latest is kept)."""
    if cell.dataset not in prepared:
        prepared.clear()
        from forecaster.data import get_spec, read_csv

        # The --csv file is read once: its source's input size needs its rows (it was read twice)
        csv = None if config.csv is None else read_csv(config.csv)
        known = {source.name: source for source in sources(config, csv)}
        if cell.dataset not in known:  # a cell of another grid: a registered dataset, or DataError
            spec = get_spec(cell.dataset)
            known[cell.dataset] = Source(spec.name, spec.input_size, spec.horizons, spec.freq)
        source = known[cell.dataset]
        series = csv if source.csv is not None else source.load(config.data_dir)
        prepared[cell.dataset] = Prepared(series, source.input_size, source)
    return prepared[cell.dataset]


def result_row(cell: Cell, metrics: dict[str, Any]) -> dict[str, Any]:
    """Called where the cell trained, so `device` names the hardware its train_seconds were measured on."""
    from forecaster.devices import machine_name

    return {"dataset": cell.dataset, "horizon": cell.horizon, "model": cell.model, "repeat": cell.repeat,
            "seed": cell.seed, **metrics, "device": machine_name()}

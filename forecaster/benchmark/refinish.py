"""Rows recorded by an older version of what follows training, brought up to date from their kept bundles.

`forecaster train` ends with steps that depend on the code, not on the trained weights
(`training.workflows.finish`): shrinking toward the naive forecast on validation, calibrating intervals on
validation, scoring the test split. `--refinish` runs them again on the kept bundle of every row made before
them (its bundle has no `toward_naive` setting, or the row has no interval columns), rewrites the bundle and
the row's test figures, and keeps the trained weights, their validation scores (what made rows choose by),
epochs and training time: the numbers a fresh run would record, without training again.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from forecaster.atomic import write_atomically
from forecaster.benchmark.grid import BenchmarkConfig, Cell, sources
from forecaster.benchmark.lineup import product_spec
from forecaster.benchmark.record import read_results
from forecaster.benchmark.runners import bundle_dir, interval_fields

# What a refinished bundle keeps from training; everything else in its metrics is computed again.
_TRAINED_METRICS = ("best_val_mse", "val_blocks")


def refinish(config: BenchmarkConfig, results_path: Path) -> int:
    """Refinish the grid's datasets' rows that need it and kept a bundle; returns how many (results.csv is
    rewritten atomically once, at the end)."""
    from forecaster.artifacts import load_bundle, resave_bundle
    from forecaster.models.toward_naive import TowardNaive
    from forecaster.presets import training_setting
    from forecaster.training.workflows import finish, shrinks_toward_naive

    results = read_results(results_path)
    by_name = {source.name: source for source in sources(config)}
    loaded: dict[str, object] = {}
    done = 0
    for index, row in results.iterrows():
        cell = Cell(str(row["dataset"]), int(row["horizon"]), str(row["model"]), int(row["repeat"]))
        folder, spec = bundle_dir(config, cell), product_spec(cell.model)
        if cell.dataset not in by_name or spec is None or not (folder / "config.json").is_file():
            continue
        bundle = load_bundle(folder)
        toward_naive = training_setting(*spec, cell.dataset, "toward_naive")
        trained = bundle.model.base if isinstance(bundle.model, TowardNaive) else bundle.model
        naive_start = bundle.training.get("kept_initial_weights", False)
        shrinks = shrinks_toward_naive(trained, toward_naive=toward_naive, naive_start=naive_start)
        if not pd.isna(row["coverage_80"]) and ("toward_naive" in bundle.training or not shrinks):
            continue  # finished by today's steps, or they would not change it
        if cell.dataset not in loaded:
            loaded[cell.dataset] = by_name[cell.dataset].load(config.data_dir)
        finished = finish(
            trained,
            bundle.data,
            bundle.scaler,
            loaded[cell.dataset],
            toward_naive=toward_naive,
            naive_start=naive_start,
        )
        kept = {key: value for key, value in bundle.metrics.items() if key in _TRAINED_METRICS}
        resave_bundle(bundle, folder, model=finished.model, metrics={**finished.metrics, **kept},
                      training={**bundle.training, "toward_naive": toward_naive},
                      calibration=finished.calibration, overwrite=True)  # fmt: skip
        metrics = finished.metrics
        figures = {"mse": metrics["mse"], "mae": metrics["mae"], "mse_step1": metrics["mse_step1"]}
        for column, value in {**figures, **interval_fields(metrics)}.items():
            results.loc[index, column] = value
        done += 1
    if done:
        write_atomically(results_path, lambda staged: results.to_csv(staged, index=False))
    return done

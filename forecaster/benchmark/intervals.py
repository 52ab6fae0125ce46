"""Interval columns for rows recorded before intervals existed, from the bundles their cells kept.

Each such bundle is calibrated on its validation split exactly as `forecaster train` now does at the end of
training (when it has no calibration yet; the file is added to the bundle), and its 80% / 95% intervals are
scored on the test split: the same numbers a fresh run would record.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from forecaster.benchmark.grid import BenchmarkConfig, Cell, sources
from forecaster.benchmark.lineup import product_spec
from forecaster.benchmark.record import read_results, write_atomically
from forecaster.benchmark.runners import bundle_dir, interval_fields


def fill_intervals(config: BenchmarkConfig, results_path: Path) -> int:
    """Fill the interval columns of the grid's datasets' rows that lack them and kept a bundle; returns
    how many rows were filled (results.csv is rewritten atomically once, at the end)."""
    from forecaster.artifacts import load_bundle, write_calibration
    from forecaster.calibration import DEFAULT_LEVELS
    from forecaster.training.scoring import interval_report, split_windows
    from forecaster.training.workflows import calibrate_bundle

    results = read_results(results_path)
    by_name = {source.name: source for source in sources(config)}
    loaded: dict[str, object] = {}
    filled = 0
    for index, row in results.iterrows():
        cell = Cell(str(row["dataset"]), int(row["horizon"]), str(row["model"]), int(row["repeat"]))
        folder = bundle_dir(config, cell)
        if cell.dataset not in by_name or product_spec(cell.model) is None or not pd.isna(row["coverage_80"]):
            continue
        if not (folder / "config.json").is_file():
            continue
        if cell.dataset not in loaded:
            loaded[cell.dataset] = by_name[cell.dataset].load(config.data_dir)
        series, bundle = loaded[cell.dataset], load_bundle(folder)
        if bundle.calibration is None:
            write_calibration(folder, calibrate_bundle(bundle, series))
            bundle = load_bundle(folder)
        levels = [level for level in DEFAULT_LEVELS if level in bundle.calibration.available_levels()]
        test = split_windows(bundle.data, bundle.scaler, series, "test")
        report = interval_report(bundle.model, bundle.calibration, test, levels) if levels else {}
        for column, value in interval_fields(report).items():
            results.loc[index, column] = value
        filled += 1
    if filled:
        write_atomically(results_path, lambda staged: results.to_csv(staged, index=False))
    return filled

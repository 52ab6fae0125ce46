"""`run_benchmark`: every cell of the grid missing from results.csv, recorded as it finishes, with the
reports rewritten after each one, so an interrupted grid loses at most the cells in progress."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forecaster.artifacts import CONFIG_FILE
from forecaster.atomic import check_writable, held_by_this_run
from forecaster.benchmark.executors import on_ray, ray_for, run_on_ray, run_sequentially
from forecaster.benchmark.grid import (
    BenchmarkConfig,
    Cell,
    GridPlan,
    check_settings,
    plan_grid,
    record_settings,
)
from forecaster.benchmark.lineup import TUNED
from forecaster.benchmark.progress import GridProgress
from forecaster.benchmark.record import (
    RESULTS_FILE,
    append_result,
    read_results,
    repair_tail,
    upgrade_results,
)
from forecaster.benchmark.refinish import refinish
from forecaster.benchmark.report import PLOT_FILE, SUMMARY_FILE, plot_results, write_summary
from forecaster.benchmark.rerun import forget_rows
from forecaster.cluster import quiet_lightning
from forecaster.errors import DataError


@dataclass
class BenchmarkOutcome:
    """Where the grid wrote its files and how many cells ran now versus were already done."""

    results: Path
    summary: Path
    plot: Path
    ran: list[Cell] = field(default_factory=list)
    skipped: list[Cell] = field(default_factory=list)
    refinished: int = 0  # older rows brought up to date from their bundles (--refinish)
    forgotten: list[Cell] = field(default_factory=list)  # rows forgotten to run again (--rerun)


def run_benchmark(config: BenchmarkConfig, rerun: Sequence[str] = ()) -> BenchmarkOutcome:
    """Run every cell missing from `out_dir/results.csv`, rewriting summary.md and the plot after each one;
    the rows of the models in `rerun` are forgotten first (`rerun.forget_rows`), so they run again.

    DataError (before any training) for an unknown dataset, model or split, a dataset file that cannot be
    found, or an `out_dir` whose results were made under other protocol settings.
    """
    from forecaster.data import locate_dataset

    out_dir = Path(config.out_dir)
    if (out_dir / CONFIG_FILE).is_file():  # a grid resumes its own folder, never writes into a bundle
        raise DataError(f"--out {out_dir} holds a model bundle ({CONFIG_FILE}); expected a benchmark's "
                        "folder (its results.csv) or a new one")
    check_writable(out_dir, f"--out {out_dir}")  # the folder itself, appended to: before Ray starts (seconds)
    # Two commands on one --out ran every cell twice and recorded each row twice (h149); a new folder left
    # empty (a refused grid, a Ray that failed to start) is removed.
    with held_by_this_run(out_dir, f"--out {out_dir}"):
        if rerun:
            check_settings(out_dir, config)  # nothing is forgotten from a record it would refuse
        forgotten = forget_rows(config, rerun)
        plan = plan_grid(config)
        # Each dataset is found once per run, here, and its folder given to the Ray tasks (it had been
        # looked for again on every round's tasks).
        folders = {} if config.csv is not None else {
            dataset: locate_dataset(dataset, config.data_dir).parent
            for dataset in dict.fromkeys(cell.dataset for cell in plan.todo)
        }
        with ray_for(config, plan.todo):
            return _run_rounds(config, plan, forgotten, folders)


def _run_rounds(
    config: BenchmarkConfig, plan: GridPlan, forgotten: list[Cell], folders: dict[str, Path]
) -> BenchmarkOutcome:
    """Write the settings, then run the plan's cells and each further round (made rows) until none is left;
    `folders` holds each dataset's folder (none for --csv)."""
    out_dir = Path(config.out_dir)
    record_settings(out_dir, config)
    results_path = out_dir / RESULTS_FILE
    repair_tail(results_path)
    upgrade_results(results_path)
    outcome = BenchmarkOutcome(
        results_path, out_dir / SUMMARY_FILE, out_dir / PLOT_FILE, skipped=plan.done, forgotten=forgotten
    )
    if config.refinish:
        outcome.refinished = refinish(config, results_path)
    quiet_lightning()
    # A made row (s3attention-auto, auto) joins the plan once its candidates at its seed are recorded: a
    # further round.
    while plan.todo:
        with GridProgress(len(plan.cells), len(plan.done), config.progress) as progress:

            def record(cell: Cell, row: dict[str, Any], progress: GridProgress = progress) -> None:
                append_result(results_path, row)
                outcome.ran.append(cell)
                progress.finish(cell, row)
                _write_reports(results_path, config, outcome)

            # A tuned cell runs its own search of `jobs` trials on Ray: it runs here, after the others.
            tuned = [cell for cell in plan.todo if cell.model == TUNED]
            rest = [cell for cell in plan.todo if cell.model != TUNED]
            if on_ray(config, rest):
                run_on_ray(rest, config, record, progress, folders)
            else:
                run_sequentially(rest, config, record, progress)
            run_sequentially(tuned, config, record, progress)
        plan = plan_grid(config)
    if not outcome.ran:  # nothing new (or only refinished rows): the reports still show every row
        _write_reports(results_path, config, outcome)
    return outcome


def _write_reports(results_path: Path, config: BenchmarkConfig, outcome: BenchmarkOutcome) -> None:
    """Rewrite summary.md and the plot from every row, after each cell, so they are current mid-grid."""
    results = read_results(results_path)
    write_summary(results, config, outcome.summary)
    plot_results(results, outcome.plot)

"""Where the cells run: one after another in this process, or as Ray tasks, `jobs` at a time, on a Ray
started for the grid on this machine or on a running cluster (`--ray-address`).

Only this process writes results.csv: a row is recorded once, as soon as its task returns, even when Ray ran
the task again after its worker died.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from forecaster.benchmark.grid import BenchmarkConfig, Cell
from forecaster.benchmark.lineup import TUNED
from forecaster.benchmark.progress import GridProgress
from forecaster.benchmark.runners import Prepared, prepared_for, result_row, run_cell, tuning_dir
from forecaster.cluster import WATCH_SECONDS, quiet_lightning, ray_started, say_if_no_cpus, stops_as_exit
from forecaster.errors import DataError, ForecasterError

Record = Callable[[Cell, dict[str, Any]], None]
Folders = dict[str, Path] | None  # each dataset's folder, where the driver found it
# Ray reuses its worker processes: each keeps the dataset of its latest cell loaded.
_WORKER_PREPARED: dict[str, Prepared] = {}
# Times Ray runs a cell again when its worker process dies (a crash, the OOM killer, a lost node).
RAY_RETRIES = 3


def _run_cell_on_ray(cell: Cell, config: BenchmarkConfig, threads: int) -> dict[str, Any]:
    """A Ray task: its share of the CPU threads, quiet Lightning loggers, the cell's row. A dataset it cannot
    load is said with the node it looked on: the folder this process found it in may be missing there, and
    the message named only the folder (h160)."""
    import ray
    import torch

    torch.set_num_threads(threads)
    quiet_lightning()
    try:
        prepared = prepared_for(cell, _WORKER_PREPARED, config)
    except DataError as error:
        raise DataError(f"{error} (on the Ray node at {ray.util.get_node_ip_address()})") from None
    return result_row(cell, run_cell(cell, prepared, config))


def on_ray(config: BenchmarkConfig, cells: list[Cell]) -> bool:
    """Whether `cells` (none tuned) run as Ray tasks: on a cluster (--ray-address) or several at once."""
    return bool(cells) and (config.ray_address is not None or (config.jobs > 1 and len(cells) > 1))


@contextmanager
def ray_for(config: BenchmarkConfig, todo: list[Cell]) -> Iterator[None]:
    """Ray for the whole grid, started (or joined) before it writes anything where a cell needs it, a tuned
    cell whose search is still to run always: a start that failed (no Ray at --ray-address) left a new --out
    holding only its benchmark.json (h140 F8), and the searches ran on a Ray started here, not on the cluster
    of --ray-address."""
    rest = [cell for cell in todo if cell.model != TUNED]
    searches = [cell for cell in todo if cell.model == TUNED and not tuning_dir(config, cell).exists()]
    if not on_ray(config, rest) and not searches:
        yield
        return
    with ray_started(config.ray_address):
        yield


def run_on_ray(
    todo: list[Cell], config: BenchmarkConfig, record: Record, progress: GridProgress, folders: Folders = None
) -> None:
    """Run cells as Ray tasks, `config.jobs` at a time, each asking for its share of the cluster's CPUs (and
    of its GPUs, where it has any); this process records each row when its task returns, so a task that Ray
    retries after its worker died (`max_retries` RAY_RETRIES) is recorded once. A failing cell stops new
    ones, the running ones finish and are recorded, then its error is raised: no finished work is lost. An
    interruption (Ctrl-C, SIGTERM) cancels the running tasks instead: they simply run again on resume.
    `folders`: where this process found each dataset (None: in --data-dir, or --csv)."""
    with ray_started(config.ray_address), stops_as_exit():
        _run_tasks(todo, config, record, progress, folders)


def _run_tasks(
    todo: list[Cell], config: BenchmarkConfig, record: Record, progress: GridProgress, folders: Folders
) -> None:
    import ray

    resources = ray.cluster_resources()
    threads = max(1, int(resources.get("CPU", 1) // config.jobs))
    gpus = resources.get("GPU", 0) / config.jobs
    task = ray.remote(_run_cell_on_ray).options(
        num_cpus=threads, num_gpus=gpus, max_retries=RAY_RETRIES, retry_exceptions=False
    )
    progress.start_parallel(config.jobs, threads)
    configs = for_workers(config, [cell.dataset for cell in todo], folders)
    watch = say_if_no_cpus(threads, "cell", config.ray_address)
    waiting, running, error = list(reversed(todo)), {}, None
    try:
        while running or (waiting and error is None):
            while waiting and error is None and len(running) < config.jobs:
                cell = waiting.pop()
                running[task.remote(cell, configs[cell.dataset], threads)] = cell
            done, _ = ray.wait(list(running), num_returns=1, timeout=WATCH_SECONDS)
            if not done:
                watch.check()
            for reference in done:
                cell = running.pop(reference)
                try:
                    record(cell, ray.get(reference))
                except ray.exceptions.RayTaskError as failure:
                    error = error or _cause(failure)
                except ray.exceptions.RayError as failure:  # not the cell's own error: its worker died
                    error = error or _lost(cell, failure)
    except BaseException:
        for reference in running:
            ray.cancel(reference, force=True)
        raise
    if error is not None:
        raise error


def run_sequentially(
    todo: list[Cell], config: BenchmarkConfig, record: Record, progress: GridProgress
) -> None:
    prepared: dict[str, Prepared] = {}
    for cell in todo:
        progress.start(cell)
        record(cell, result_row(cell, run_cell(cell, prepared_for(cell, prepared, config), config)))


def for_workers(config: BenchmarkConfig, datasets: list[str], folders: Folders) -> dict[str, BenchmarkConfig]:
    """The config each dataset's tasks get: paths as this process resolves them, the dataset's folder where
    this process found it (`folders`). A worker's working directory and environment are its own: a relative
    --out put the bundles under the folder `ray start` ran in, and $FORECASTER_DATA_DIR did not reach it
    (h140 F4)."""
    csv = None if config.csv is None else Path(config.csv).resolve()
    resolved = dataclasses.replace(config, out_dir=Path(config.out_dir).resolve(), csv=csv)
    configs = {}
    for dataset in dict.fromkeys(datasets):
        data = (folders or {}).get(dataset, config.data_dir)
        data = None if data is None else Path(data).resolve()
        configs[dataset] = dataclasses.replace(resolved, data_dir=data)
    return configs


def _cause(failure: Exception) -> BaseException:
    """The exception a task raised, without Ray's wrapping (whose message starts with the task's name,
    process and address in terminal colours)."""
    cause = getattr(failure, "cause", None)
    return cause if isinstance(cause, BaseException) else failure


def _lost(cell: Cell, failure: Exception) -> ForecasterError:
    """A task whose worker died at every try (the OOM killer, a lost node), in one line naming its cell: it
    was an internal error that cancelled the running cells instead of letting them finish (h140 F3)."""
    # Ray's first sentence, not its next naming its log files (12 words had "... -*.log files for", h141)
    what = re.split(r"(?<=\.)\s", " ".join(str(failure).split()), maxsplit=1)[0]
    return ForecasterError(
        f"{cell.label()}: Ray gave up on it after its worker died ({type(failure).__name__}: {what}); the "
        "cells that finished are in results.csv, rerun the command to resume"
    )

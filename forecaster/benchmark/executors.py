"""Where the cells run: one after another in this process, in a pool of spawned worker processes, or as Ray
tasks on a local Ray or a cluster (`--ray-address`).

With `jobs > 1` the cells run in that many workers, each with an equal share of the CPU threads; only this
process writes results.csv, so a row is recorded once, as soon as its cell finishes.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from forecaster.benchmark.grid import BenchmarkConfig, Cell
from forecaster.benchmark.progress import GridProgress
from forecaster.benchmark.runners import Prepared, prepared_for, result_row, run_cell

# How often a worker checks that the benchmark process that started it is still alive.
_PARENT_POLL_SECONDS = 1.0
Record = Callable[[Cell, dict[str, Any]], None]
# Each worker process keeps the dataset of its latest cell loaded.
_WORKER_PREPARED: dict[str, Prepared] = {}


def quiet_lightning() -> None:
    """One line per finished cell is the grid's log; Lightning's per-fit banners would drown it.

    Importing a Lightning package resets its logger to INFO, so each is imported before it is quieted. Three
    warnings repeat with every cell and are not the user's to act on: torch 2.13 deprecates a class that
    Lightning 2.6 still uses, neuralforecast's models keep unpicklable callbacks in their hyperparameters, and
    on machines with more than a few cores (a GPU host, say) Lightning advises DataLoader worker processes,
    which the runner does not use: its windows are slices of arrays already in memory.
    """
    for name in ("lightning.pytorch", "pytorch_lightning", "lightning.fabric", "lightning_fabric"):
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
            logging.getLogger(name).setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                            category=FutureWarning)
    warnings.filterwarnings("ignore", message="Attribute 'callbacks' removed from hparams",
                            category=UserWarning)
    warnings.filterwarnings("ignore", message=r"The '\w+' does not have many workers", category=UserWarning)
    warnings.filterwarnings("ignore", message=r"The number of training batches \(\d+\) is smaller",
                            category=UserWarning)




def _share_cores(threads: int) -> None:
    """A worker's setup: its share of the CPU threads and quiet Lightning loggers."""
    import torch

    torch.set_num_threads(threads)
    quiet_lightning()


def _start_worker(threads: int, parent_pid: int) -> None:
    """Runs once in each worker process: `_share_cores`, and a watchdog.

    The watchdog ends the worker once the benchmark process is gone, even killed by SIGKILL, so no orphan
    goes on training a cell whose row nobody will record.
    """
    _share_cores(threads)
    threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()


def _exit_with_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


@contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """While the grid runs, SIGTERM unwinds the parent (SystemExit) instead of killing it mid-bookkeeping."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def exit_on_sigterm(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, exit_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _run_cell_in_worker(cell: Cell, config: BenchmarkConfig) -> dict[str, Any]:
    return result_row(cell, run_cell(cell, prepared_for(cell, _WORKER_PREPARED, config), config))


# Times Ray runs a cell again when its worker process dies (a crash, the OOM killer, a lost node).
RAY_RETRIES = 3


def _run_cell_on_ray(cell: Cell, config: BenchmarkConfig, threads: int) -> dict[str, Any]:
    _share_cores(threads)
    return _run_cell_in_worker(cell, config)


def run_on_ray(todo: list[Cell], config: BenchmarkConfig, record: Record, progress: GridProgress) -> None:
    """Run cells as Ray tasks, `config.jobs` at a time, each asking for its share of the cluster's CPUs (and
    of its GPUs, where it has any); this process records each row when its task returns, so a task that Ray
    retries after its worker died (`max_retries` RAY_RETRIES; not yet exercised by a test) is recorded once.
    A failing cell stops new ones,
    the running ones finish and are recorded, then its error is raised, as with worker processes."""
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        address = None if config.ray_address == "local" else config.ray_address
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    try:
        resources = ray.cluster_resources()
        threads = max(1, int(resources.get("CPU", 1) // config.jobs))
        gpus = resources.get("GPU", 0) / config.jobs
        task = ray.remote(_run_cell_on_ray).options(
            num_cpus=threads, num_gpus=gpus, max_retries=RAY_RETRIES, retry_exceptions=False
        )
        progress.start_parallel(config.jobs, threads)
        waiting, running, error = list(reversed(todo)), {}, None
        try:
            while running or (waiting and error is None):
                while waiting and error is None and len(running) < config.jobs:
                    cell = waiting.pop()
                    running[task.remote(cell, config, threads)] = cell
                done, _ = ray.wait(list(running), num_returns=1)
                for reference in done:
                    cell = running.pop(reference)
                    try:
                        record(cell, ray.get(reference))
                    except ray.exceptions.RayTaskError as failure:
                        error = error or failure.as_instanceof_cause()
        except BaseException:
            for reference in running:
                ray.cancel(reference, force=True)
            raise
        if error is not None:
            raise error
    finally:
        if started_here:
            ray.shutdown()


def run_sequentially(
    todo: list[Cell], config: BenchmarkConfig, record: Record, progress: GridProgress
) -> None:
    prepared: dict[str, Prepared] = {}
    for cell in todo:
        progress.start(cell)
        record(cell, result_row(cell, run_cell(cell, prepared_for(cell, prepared, config), config)))


def run_in_workers(
    todo: list[Cell], config: BenchmarkConfig, record: Record, progress: GridProgress
) -> None:
    """Run cells in `config.jobs` spawned processes; the parent records each row as soon as it arrives.

    At most `jobs` cells are handed out at a time, so no worker ever holds a queued cell. If a cell fails,
    no further cell starts, the running ones finish and are recorded, then the first error is raised: no
    finished work is lost. An interruption (Ctrl-C, SIGTERM) stops the workers at once instead: the cells
    they were running are simply run again on resume.
    """
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    threads = max(1, (os.cpu_count() or 1) // config.jobs)
    progress.start_parallel(config.jobs, threads)
    waiting = list(reversed(todo))
    running: dict[Future[dict[str, Any]], Cell] = {}
    error: BaseException | None = None
    other_children = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(config.jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(threads, os.getpid()))
    try:
        with _sigterm_as_exit():
            while running or (waiting and error is None):
                while waiting and error is None and len(running) < config.jobs:
                    cell = waiting.pop()
                    running[pool.submit(_run_cell_in_worker, cell, config)] = cell
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    cell = running.pop(future)
                    if future.exception() is not None:
                        error = error or future.exception()
                    else:
                        record(cell, future.result())
    except BaseException:
        for worker in set(multiprocessing.active_children()) - other_children:
            worker.terminate()
        raise
    finally:
        pool.shutdown(cancel_futures=True)
    if error is not None:
        raise error



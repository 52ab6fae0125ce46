"""The benchmark grid: datasets x horizons x models x repeats, every model trained here under one protocol.

S3Attention rows come from `forecaster.training.workflows.train_forecaster` (the same code as
`forecaster train`); peer rows from neuralforecast models fitted on the same standardized array, split
and budget (`forecaster.integrations.neuralforecast`) and scored by `forecaster.evaluation.metrics` on the
very test windows of our `ForecastDataModule`. Each finished cell is appended to results.csv at once, so
an interrupted grid loses at most the cells in progress and a rerun skips every finished cell. With
`jobs > 1` the cells run in that many spawned worker processes, each with an equal share of the CPU
threads; only the parent process writes results.csv.
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import io
import json
import logging
import math
import os
import platform
import shutil
import signal
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from forecaster.errors import DataError, ForecasterError

RESULT_COLUMNS = (
    "dataset", "horizon", "model", "repeat", "seed", "mse", "mae", "train_seconds", "epochs", "parameters",
    "windows", "device",
)
DEFAULT_DATASETS = ("ETTm2", "Exchange", "Weather", "ILI")
DEFAULT_MODELS = (
    "s3attention", "naive", "patchtst", "itransformer", "dlinear", "fedformer", "autoformer", "informer",
    "nhits",
)
OWN_MODEL = "s3attention"
# Repeats the last observed value over the horizon: no training, the floor any learned model must beat.
NAIVE_MODEL = "naive"
LOCAL_MODELS = (OWN_MODEL, NAIVE_MODEL)
RESULTS_FILE = "results.csv"
SUMMARY_FILE = "summary.md"
PLOT_FILE = "mse_by_horizon.png"
SETTINGS_FILE = "benchmark.json"
# Settings that change what a row means: a rerun into the same directory must use the same ones.
PROTOCOL_FIELDS = ("split", "max_epochs", "patience", "batch_size")
# How often a worker checks that the benchmark process that started it is still alive.
_PARENT_POLL_SECONDS = 1.0

# Paper 001 Table 2 (REFERENCE.md section 2): S3Attention MSE / MAE at input 96 (ILI 36), 7:1:2 split.
PAPER_S3ATTENTION: dict[str, dict[int, tuple[float, float]]] = {
    "ETTm2": {96: (0.192, 0.283), 192: (0.255, 0.324), 336: (0.324, 0.364), 720: (0.431, 0.433)},
    "Electricity": {96: (0.218, 0.332), 192: (0.259, 0.361), 336: (0.267, 0.367), 720: (0.293, 0.385)},
    "Exchange": {96: (0.086, 0.204), 192: (0.188, 0.292), 336: (0.356, 0.433), 720: (0.727, 0.669)},
    "Traffic": {96: (0.592, 0.352), 192: (0.583, 0.343), 336: (0.598, 0.346), 720: (0.641, 0.397)},
    "Weather": {96: (0.182, 0.262), 192: (0.228, 0.306), 336: (0.295, 0.355), 720: (0.383, 0.418)},
    "ILI": {24: (2.431, 0.997), 36: (2.287, 0.972), 48: (2.418, 1.002), 60: (2.425, 1.043)},
}


@dataclass
class BenchmarkConfig:
    """One grid. `horizons` is "paper" (each dataset's registered horizons) or explicit values for all."""

    datasets: Sequence[str] = DEFAULT_DATASETS
    horizons: str | Sequence[int] = "paper"
    split: str = "7:1:2"
    models: Sequence[str] = DEFAULT_MODELS
    repeats: int = 5
    max_epochs: int = 10
    patience: int = 3
    batch_size: int = 32
    data_dir: Path | None = None
    out_dir: Path = Path("results")
    progress: bool = True
    command: str | None = None
    jobs: int = 1


@dataclass(frozen=True)
class Cell:
    """One training run of the grid; `seed` = repeat, so reruns reproduce the same row."""

    dataset: str
    horizon: int
    model: str
    repeat: int

    @property
    def seed(self) -> int:
        return self.repeat

    @property
    def key(self) -> tuple[str, int, str, int]:
        return (self.dataset, self.horizon, self.model, self.repeat)

    def label(self) -> str:
        return f"{self.dataset} h={self.horizon} {self.model} #{self.repeat}"


@dataclass
class BenchmarkOutcome:
    """Where the grid wrote its files and how many cells ran now versus were already done."""

    results: Path
    summary: Path
    plot: Path
    ran: list[Cell] = field(default_factory=list)
    skipped: list[Cell] = field(default_factory=list)


def parse_horizons(text: str) -> str | tuple[int, ...]:
    """CLI value "paper" or "96,192,..." -> "paper" or a tuple of positive ints (DataError otherwise)."""
    if text.strip().lower() == "paper":
        return "paper"
    try:
        horizons = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        horizons = ()
    if not horizons or min(horizons) < 1:
        raise DataError(
            f"--horizons {text!r}: expected 'paper' or comma-separated positive integers like 96,192"
        )
    return horizons


def _validate(config: BenchmarkConfig) -> tuple[list[str], list[str]]:
    """Canonical dataset names and lower-case model names; DataError names whatever is unknown."""
    from forecaster.data import SPLIT_SCHEMES, get_spec

    if config.split not in SPLIT_SCHEMES:
        raise DataError(f"unknown split {config.split!r}; expected one of {', '.join(SPLIT_SCHEMES)}")
    for name in ("repeats", "max_epochs", "patience", "batch_size"):
        if getattr(config, name) < 1:
            raise DataError(f"benchmark {name} must be >= 1, got {getattr(config, name)}")
    datasets = list(dict.fromkeys(get_spec(name).name for name in config.datasets))
    models = list(dict.fromkeys(name.strip().lower() for name in config.models))
    if not datasets or not models:
        raise DataError("the benchmark needs at least one dataset and one model")
    peers = [model for model in models if model not in LOCAL_MODELS]
    if peers:
        try:
            from forecaster.integrations.neuralforecast import PEERS
        except ImportError as error:
            raise ForecasterError(
                f"models {', '.join(peers)} come from neuralforecast, which is not installed ({error}); "
                "install it with `pip install 'forecaster[baselines]'`"
            ) from None

        unknown = [model for model in peers if model not in PEERS]
        if unknown:
            raise DataError(
                f"unknown benchmark model(s) {', '.join(unknown)}; expected {', '.join(LOCAL_MODELS)} or "
                f"one of {', '.join(PEERS)}"
            )
    return datasets, models


def grid_cells(config: BenchmarkConfig) -> list[Cell]:
    """Every cell in run order: dataset, horizon, repeat, model (so each repeat compares the models)."""
    from forecaster.data import get_spec

    datasets, models = _validate(config)
    cells = []
    for dataset in datasets:
        horizons = get_spec(dataset).horizons if config.horizons == "paper" else tuple(config.horizons)
        for horizon in horizons:
            for repeat in range(config.repeats):
                cells.extend(Cell(dataset, int(horizon), model, repeat) for model in models)
    return cells


def _repair_tail(path: Path) -> None:
    """Drop a last line cut off mid-write (no trailing newline) before appending: that cell runs again."""
    data = path.read_bytes() if path.is_file() else b""
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


def read_results(path: Path) -> pd.DataFrame:
    """The complete rows of results.csv with RESULT_COLUMNS (empty if none); DataError if the file is foreign.

    A last line still being written (no trailing newline) is left out and left alone: reading never writes,
    so a summary or a dry run can read the file while a grid appends to it.
    """
    data = path.read_bytes() if path.is_file() else b""
    complete = data[: data.rfind(b"\n") + 1]
    if not complete:
        return pd.DataFrame(columns=list(RESULT_COLUMNS))
    frame = pd.read_csv(io.BytesIO(complete))
    missing = [column for column in RESULT_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(
            f"{path}: not a benchmark results file of this version; missing column(s) {', '.join(missing)} "
            f"(expected {', '.join(RESULT_COLUMNS)}; older files lack device: add it or use another --out)"
        )
    return frame


def append_result(path: Path, row: dict[str, Any]) -> None:
    """Append one row (header first if the file is new) and push it to disk before the next cell starts."""
    new = not path.is_file() or path.stat().st_size == 0
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=RESULT_COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow({column: row[column] for column in RESULT_COLUMNS})
        handle.flush()
        os.fsync(handle.fileno())


def _protocol(config: BenchmarkConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in PROTOCOL_FIELDS}


def _check_settings(out_dir: Path, config: BenchmarkConfig) -> None:
    """Refuse to mix rows of another protocol into results made under the settings of the first run."""
    path = out_dir / SETTINGS_FILE
    if not path.is_file():
        return
    stored, current = json.loads(path.read_text()), _protocol(config)
    changed = {name: stored.get(name) for name in PROTOCOL_FIELDS if stored.get(name) != current[name]}
    if changed:
        detail = ", ".join(f"{name}={value!r} (now {current[name]!r})" for name, value in changed.items())
        raise DataError(
            f"{out_dir}: its results were made with {detail}; rerun with the same settings to resume, "
            "or choose another --out"
        )


def _record_settings(out_dir: Path, config: BenchmarkConfig) -> None:
    path = out_dir / SETTINGS_FILE
    if not path.is_file():
        path.write_text(json.dumps(_protocol(config), indent=2) + "\n")


@dataclass
class _Prepared:
    """A dataset loaded once per grid, and its data module per horizon."""

    series: Any
    input_size: int
    modules: dict[int, Any] = field(default_factory=dict)


def _data_module(prepared: _Prepared, horizon: int, config: BenchmarkConfig) -> Any:
    from forecaster.data import ForecastDataModule

    if horizon not in prepared.modules:
        module = ForecastDataModule(
            prepared.series, prepared.input_size, horizon, split=config.split, batch_size=config.batch_size
        )
        module.setup()
        prepared.modules[horizon] = module
    return prepared.modules[horizon]


def _run_own(cell: Cell, prepared: _Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """An S3Attention row: `forecaster train` on the dataset preset; the bundle is kept under bundles/."""
    from forecaster.artifacts import load_bundle
    from forecaster.training.trainer import TrainerOptions
    from forecaster.training.workflows import TrainSettings, train_forecaster, work_dir_for

    out = Path(config.out_dir) / "bundles" / f"{cell.dataset}-h{cell.horizon}-{cell.model}-r{cell.repeat}"
    settings = TrainSettings(
        horizon=cell.horizon,
        input_size=prepared.input_size,
        split=config.split,
        model_name=OWN_MODEL,
        model_options={"seed": cell.seed},
        batch_size=config.batch_size,
        seed=cell.seed,
        trainer=TrainerOptions(max_epochs=config.max_epochs, patience=config.patience, progress_bar=False),
        overwrite=True,
    )
    outcome = train_forecaster(prepared.series, out, settings)
    shutil.rmtree(work_dir_for(out), ignore_errors=True)
    model = load_bundle(outcome.bundle_path).model
    return {
        "mse": outcome.metrics["mse"],
        "mae": outcome.metrics["mae"],
        "train_seconds": outcome.training["train_seconds"],
        "epochs": outcome.training["epochs"],
        "parameters": sum(parameter.numel() for parameter in model.parameters()),
        "windows": outcome.metrics["windows"],
    }


def _test_windows(module: Any) -> tuple[Any, Any]:
    """Every test window of the data module in order: histories (N, L, C) and targets (N, H, C)."""
    import torch
    from torch.utils.data import DataLoader

    batches = DataLoader(module.test_set, batch_size=1024, shuffle=False)
    histories, targets = zip(*batches, strict=True)
    return torch.cat(histories), torch.cat(targets)


def _run_naive(cell: Cell, prepared: _Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """A naive row: every test window forecast as its last input step, scored like every other model."""
    from forecaster.evaluation.metrics import mae, mse

    module = _data_module(prepared, cell.horizon, config)
    histories, targets = _test_windows(module)
    predictions = histories[:, -1:, :].expand_as(targets)
    return {"mse": mse(predictions, targets), "mae": mae(predictions, targets), "train_seconds": 0.0,
            "epochs": 0, "parameters": 0, "windows": len(module.test_set)}


def _run_peer(cell: Cell, prepared: _Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """A neuralforecast row on our module's standardized array, split and test windows."""

    from forecaster.evaluation.metrics import mae, mse
    from forecaster.integrations.neuralforecast import PeerBudget, build_peer, forecast_test_windows

    module = _data_module(prepared, cell.horizon, config)
    borders, input_size = module.borders, prepared.input_size
    train_stop = borders["train"][1]
    (val_start, val_stop), (test_start, test_stop) = borders["val"], borders["test"]
    if val_start != train_stop - input_size or test_start != val_stop - input_size:
        raise DataError(
            f"split {config.split}: val/test must start input_size rows before the previous split ends"
        )
    budget = PeerBudget(config.max_epochs, config.patience, config.batch_size, len(module.train_dataloader()))
    model = build_peer(cell.model, cell.horizon, input_size, module.n_channels, budget, cell.seed)
    run = forecast_test_windows(
        model, module.scaled[:test_stop], val_stop - train_stop, test_stop - val_stop, budget.steps_per_epoch
    )
    _, targets = _test_windows(module)
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
    }


def run_cell(cell: Cell, prepared: _Prepared, config: BenchmarkConfig) -> dict[str, Any]:
    """Train and score one cell; returns the metric fields of its results.csv row."""
    runners = {OWN_MODEL: _run_own, NAIVE_MODEL: _run_naive}
    return runners.get(cell.model, _run_peer)(cell, prepared, config)


def _quiet_lightning() -> None:
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


def _prepared_for(cell: Cell, prepared: dict[str, _Prepared], config: BenchmarkConfig) -> _Prepared:
    """The cell's dataset, loaded once while consecutive cells use it (only the latest is kept)."""
    from forecaster.data import get_spec, load_dataset

    if cell.dataset not in prepared:
        prepared.clear()
        prepared[cell.dataset] = _Prepared(load_dataset(cell.dataset, config.data_dir),
                                           get_spec(cell.dataset).input_size)
    return prepared[cell.dataset]


def _result_row(cell: Cell, metrics: dict[str, Any]) -> dict[str, Any]:
    """Called where the cell trained, so `device` names the hardware its train_seconds were measured on."""
    return {"dataset": cell.dataset, "horizon": cell.horizon, "model": cell.model, "repeat": cell.repeat,
            "seed": cell.seed, **metrics, "device": _device()}


_WORKER_PREPARED: dict[str, _Prepared] = {}


def _start_worker(threads: int, parent_pid: int) -> None:
    """Runs once in each worker: its share of the CPU threads, quiet Lightning loggers, and a watchdog.

    The watchdog ends the worker once the benchmark process is gone, even killed by SIGKILL, so no orphan
    goes on training a cell whose row nobody will record.
    """
    import torch

    torch.set_num_threads(threads)
    _quiet_lightning()
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
    return _result_row(cell, run_cell(cell, _prepared_for(cell, _WORKER_PREPARED, config), config))


def _run_sequentially(todo: list[Cell], config: BenchmarkConfig, record: Any, progress: _Progress) -> None:
    prepared: dict[str, _Prepared] = {}
    for cell in todo:
        progress.start(cell)
        record(cell, _result_row(cell, run_cell(cell, _prepared_for(cell, prepared, config), config)))


def _run_in_workers(todo: list[Cell], config: BenchmarkConfig, record: Any, progress: _Progress) -> None:
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


@dataclass
class GridPlan:
    """A grid's cells (in grid order) against the rows its output directory's results.csv already holds."""

    cells: list[Cell]
    results: pd.DataFrame

    @functools.cached_property
    def finished(self) -> set[tuple[str, int, str, int]]:
        return {(str(row.dataset), int(row.horizon), str(row.model), int(row.repeat))
                for row in self.results.itertuples()}

    @property
    def done(self) -> list[Cell]:
        return [cell for cell in self.cells if cell.key in self.finished]

    @property
    def todo(self) -> list[Cell]:
        """Cells still to run, untrained first: they take seconds and put the naive floor in the summary."""
        return sorted((cell for cell in self.cells if cell.key not in self.finished),
                      key=lambda cell: cell.model != NAIVE_MODEL)


def plan_grid(config: BenchmarkConfig) -> GridPlan:
    """The grid against `out_dir/results.csv`; only reads (DataError as run_benchmark for bad settings)."""
    cells = grid_cells(config)
    out_dir = Path(config.out_dir)
    _check_settings(out_dir, config)
    return GridPlan(cells, read_results(out_dir / RESULTS_FILE))


def plan_table(plan: GridPlan) -> list[str]:
    """Markdown rows per dataset and model: cells done and to run, and what the rest will take.

    The estimate is the mean train_seconds of the (dataset, model)'s rows in results.csv (any horizon) times
    the cells left: one worker; `--jobs N` divides the wall time. Rows trained on this machine's device are
    used when there are any, since a record may gather runs from a GPU and a CPU.
    """
    counts: dict[tuple[str, str], list[int]] = {}
    for cell in plan.cells:
        counts.setdefault((cell.dataset, cell.model), [0, 0])[cell.key not in plan.finished] += 1
    here = plan.results[plan.results["device"].astype(str) == _device()]
    seconds = {
        **plan.results.groupby(["dataset", "model"])["train_seconds"].mean().to_dict(),
        **here.groupby(["dataset", "model"])["train_seconds"].mean().to_dict(),
    }
    lines = ["| dataset | model | done | to run | mean train s per finished cell | estimate for the rest |",
             "|---|---|---|---|---|---|"]
    for (dataset, model), (done, todo) in counts.items():
        mean = seconds.get((dataset, model))
        per_cell = "-" if mean is None else f"{mean:.0f}"
        rest = "0" if todo == 0 else ("unknown" if mean is None else f"{mean * todo / 3600:.1f} h")
        lines.append(f"| {dataset} | {model} | {done} | {todo} | {per_cell} | {rest} |")
    return lines


def run_benchmark(config: BenchmarkConfig) -> BenchmarkOutcome:
    """Run every cell missing from `out_dir/results.csv`, rewriting summary.md and the plot after each one.

    DataError (before any training) for an unknown dataset, model or split, a dataset file that cannot be
    found, `jobs` below 1, or an `out_dir` whose results were made under other protocol settings.
    """
    from forecaster.data import locate_dataset

    if not isinstance(config.jobs, int) or config.jobs < 1:
        raise DataError(f"jobs must be an integer >= 1, got {config.jobs!r}")
    plan = plan_grid(config)
    for dataset in dict.fromkeys(cell.dataset for cell in plan.todo):
        locate_dataset(dataset, config.data_dir)
    out_dir = Path(config.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    _record_settings(out_dir, config)
    results_path = out_dir / RESULTS_FILE
    _repair_tail(results_path)
    outcome = BenchmarkOutcome(results_path, out_dir / SUMMARY_FILE, out_dir / PLOT_FILE, skipped=plan.done)
    todo = plan.todo
    _quiet_lightning()
    with _Progress(len(plan.cells), len(outcome.skipped), config.progress) as progress:

        def record(cell: Cell, row: dict[str, Any]) -> None:
            append_result(results_path, row)
            outcome.ran.append(cell)
            progress.finish(cell, row)
            _write_reports(results_path, config, outcome)

        run = _run_in_workers if config.jobs > 1 and len(todo) > 1 else _run_sequentially
        run(todo, config, record, progress)
    if not outcome.ran:
        _write_reports(results_path, config, outcome)
    return outcome


def _write_reports(results_path: Path, config: BenchmarkConfig, outcome: BenchmarkOutcome) -> None:
    """Rewrite summary.md and the plot from every row, after each cell, so they are current mid-grid."""
    results = read_results(results_path)
    write_summary(results, config, outcome.summary)
    plot_results(results, outcome.plot)


class _Progress:
    """A rich bar over the grid plus one printed line per finished cell (readable in a nohup log)."""

    def __init__(self, total: int, completed: int, enabled: bool) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True, quiet=not enabled)
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=self.console, disable=not enabled,
        )
        self.task = self.progress.add_task("benchmark", total=total, completed=completed)
        if completed:
            self.console.print(f"resuming: {completed} of {total} cells already in results.csv")

    def __enter__(self) -> _Progress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, cell: Cell) -> None:
        self.progress.update(self.task, description=cell.label())

    def start_parallel(self, jobs: int, threads: int) -> None:
        self.progress.update(self.task, description=f"benchmark ({jobs} workers x {threads} threads)")

    def finish(self, cell: Cell, row: dict[str, Any]) -> None:
        self.progress.advance(self.task)
        self.console.print(
            f"{cell.label()}: mse {row['mse']:.4f} mae {row['mae']:.4f} "
            f"({row['epochs']} epochs, {row['train_seconds']:.0f} s)"
        )


def _aggregate(results: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean, sample std and count of `metric` per (dataset, horizon, model)."""
    return (
        results.groupby(["dataset", "horizon", "model"], sort=False)[metric]
        .agg(["mean", "std", "count"])
        .reset_index()
    )


def _cell_text(mean: float, std: float, count: int, repeats: int, best: bool) -> str:
    text = f"{mean:.3f}" if count < 2 or math.isnan(std) else f"{mean:.3f} ± {std:.3f}"
    if count < repeats:
        text += f" (n={count})"
    return f"**{text}**" if best else text


def _metric_table(results: pd.DataFrame, metric: str, models: list[str], repeats: int) -> list[str]:
    stats = _aggregate(results, metric)
    paper_index = 0 if metric == "mse" else 1
    lines = [
        "| dataset | horizon | " + " | ".join(models) + " | paper S3Attention |",
        "|---|---|" + "---|" * len(models) + "---|",
    ]
    for (dataset, horizon), group in stats.groupby(["dataset", "horizon"], sort=False):
        by_model = {row.model: row for row in group.itertuples()}
        best = min(by_model.values(), key=lambda row: row.mean).model
        cells = [
            _cell_text(by_model[m].mean, by_model[m].std, int(by_model[m].count), repeats, m == best)
            if m in by_model else "-"
            for m in models
        ]
        paper = PAPER_S3ATTENTION.get(dataset, {}).get(int(horizon))
        cells.append(f"{paper[paper_index]:.3f}" if paper else "-")
        lines.append(f"| {dataset} | {horizon} | " + " | ".join(cells) + " |")
    return lines


def _input_sizes(results: pd.DataFrame) -> str:
    """"96" or "96 (ILI 36)": the registered input size of each dataset in the results."""
    from forecaster.data import get_spec

    sizes = {name: get_spec(name).input_size for name in dict.fromkeys(results["dataset"].astype(str))}
    common = max(set(sizes.values()), key=list(sizes.values()).count) if sizes else 96
    others = ", ".join(f"{name} {size}" for name, size in sizes.items() if size != common)
    return f"{common} ({others})" if others else str(common)


def _device() -> str:
    """The GPU's name when CUDA is visible (Lightning and our trainer then train on it), else the CPU."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({os.cpu_count()} cores)"


def _machine() -> str:
    import torch

    return f"{platform.node() or 'unknown host'}, {_device()}, torch {torch.__version__}"


def _device_counts(results: pd.DataFrame) -> str:
    """"CPU (2 cores) 208 rows, NVIDIA H100 80GB HBM3 32 rows": a directory can gather runs from machines."""
    counts = results["device"].astype(str).value_counts(sort=False)
    return ", ".join(f"{device} {count} row{'s' if count != 1 else ''}" for device, count in counts.items())


def _model_order(results: pd.DataFrame) -> list[str]:
    """The models in results in one order (DEFAULT_MODELS first), whichever run writes the reports last."""
    present = list(dict.fromkeys(results["model"].astype(str)))
    return [m for m in DEFAULT_MODELS if m in present] + [m for m in present if m not in DEFAULT_MODELS]


def write_summary(results: pd.DataFrame, config: BenchmarkConfig, path: Path) -> Path:
    """summary.md: MSE and MAE tables (mean ± std, best per row in bold, paper column) and the settings."""
    results = results.sort_values(["dataset", "horizon", "repeat"], kind="stable")
    models = _model_order(results)
    lines = [
        "# Benchmark results",
        "",
        f"Written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {_machine()}.",
    ]
    if config.command:
        lines += ["", f"Latest command: `{config.command}` (the tables hold every row of results.csv, "
                  "whichever run into this directory made it)."]
    lines += [
        "",
        f"Split {config.split}; input {_input_sizes(results)}; train-fit StandardScaler; metrics on the "
        "standardized scale over every test window (stride 1, no drop_last). Cells: mean ± sample std over "
        f"repeats (seeds 0..{config.repeats - 1}); the lowest mean per row is bold; (n=k) marks cells with "
        "fewer repeats than asked. The last column is the paper's S3Attention (paper 001 Table 2).",
    ]
    if results.empty:
        lines += ["", "No finished cells yet."]
    else:
        lines += ["", f"Trained on: {_device_counts(results)} (results.csv's device column; its "
                  "train_seconds are only comparable between rows of one device)."]
        for metric in ("mse", "mae"):
            lines += ["", f"## {metric.upper()}", "", *_metric_table(results, metric, models, config.repeats)]
    not_run = [name for name in PAPER_S3ATTENTION if name not in set(results["dataset"].astype(str))]
    if not_run:
        lines += ["", f"Not run here: {', '.join(not_run)} (in the paper's table; no row in results.csv)."]
    lines += ["", "## Settings", "", *_settings_lines(config, models)]
    return _write_atomically(path, lambda staged: staged.write_text("\n".join(lines) + "\n"))


def _settings_lines(config: BenchmarkConfig, models: list[str]) -> list[str]:
    lines = [
        f"- Budget for every model: at most {config.max_epochs} epochs, early stopping after "
        f"{config.patience} epochs without a lower validation MSE, best-validation weights restored, batch "
        f"{config.batch_size} windows; MSE loss; no calendar features.",
    ]
    if OWN_MODEL in models:
        lines.append(
            "- s3attention: `forecaster train` (Lightning), dataset preset (D=32, 8 heads, ranks 8/8, "
            "fold 8, dropout 0.05), AdamW lr 1e-4 weight decay 0.01, constant rate; sampled index sets "
            "seeded by the repeat."
        )
    if NAIVE_MODEL in models:
        lines.append("- naive: the last input step repeated over the horizon (no training; identical for "
                     "every repeat).")
    peers = [model for model in models if model not in LOCAL_MODELS]
    if peers:
        from forecaster.integrations.neuralforecast import describe_peer

        lines.append(
            "- neuralforecast peers: the standardized array in long format (one unique_id per column, "
            "integer ds), scaler_type identity, val_size/test_size of the split with test forecasts at "
            "step 1 (= cross_validation refit=False), one epoch = our train loader's batches as steps, "
            "validation once per epoch, identical test window counts asserted; channel-independent peers "
            "gather only their sampled training windows (forecaster's WindowsOnDemand: the same batches and "
            "weights as neuralforecast's own windowing, which copies every window at every step)."
        )
        lines += [f"- {peer}: {describe_peer(peer)}" for peer in peers]
    return lines


def mse_figure(results: pd.DataFrame) -> Any:
    """Test MSE by horizon, a panel per dataset, a line per model (± std), paper S3Attention dashed.

    A model keeps one colour in every panel and the one legend lists every model drawn.
    """
    from matplotlib.figure import Figure

    datasets = list(dict.fromkeys(results["dataset"].astype(str)))
    colours = {model: f"C{index % 10}" for index, model in enumerate(_model_order(results))}
    figure = Figure(figsize=(4.5 * max(1, len(datasets)) + 1.5, 3.6), layout="constrained")
    axes = figure.subplots(1, max(1, len(datasets)), squeeze=False)[0]
    stats = _aggregate(results, "mse")
    legend: dict[str, Any] = {}
    for axis, dataset in zip(axes, datasets, strict=False):
        subset = stats[stats["dataset"].astype(str) == dataset]
        for model, group in subset.groupby("model", sort=False):
            group, name = group.sort_values("horizon"), str(model)
            legend[name] = axis.errorbar(group["horizon"], group["mean"], yerr=group["std"].fillna(0.0),
                                         marker="o", capsize=3, color=colours[name], label=name)
        paper = PAPER_S3ATTENTION.get(dataset, {})
        horizons = [h for h in sorted(subset["horizon"].unique()) if int(h) in paper]
        if horizons:
            (legend["paper S3Attention"],) = axis.plot(horizons, [paper[int(h)][0] for h in horizons], "k--x",
                                                       label="paper S3Attention")
        axis.set_title(dataset)
        axis.set_xlabel("horizon")
        axis.set_ylabel("test MSE (standardized)")
        axis.set_xticks(sorted(subset["horizon"].unique()))
    if legend:
        order = [*colours, *(label for label in legend if label not in colours)]
        figure.legend([legend[label] for label in order], order, loc="outside right upper", fontsize="small")
    return figure


def plot_results(results: pd.DataFrame, path: Path) -> Path:
    """mse_figure as a PNG, written atomically."""
    figure = mse_figure(results)
    return _write_atomically(path, lambda staged: figure.savefig(staged, dpi=100, format="png"))


def _write_atomically(path: Path, write: Any) -> Path:
    """Let `write` fill a sibling temp file, then rename it over `path`: a kill never leaves half a report."""
    staged = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(staged)
        os.replace(staged, path)
    finally:
        staged.unlink(missing_ok=True)
    return path

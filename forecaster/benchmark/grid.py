"""The grid of the accuracy protocol: datasets x horizons x models x repeats, checked before anything runs.

`BenchmarkConfig` declares every setting once (the command line reads its flags from it); `grid_cells`
expands it into cells in run order; `plan_grid` holds them against the rows already in the output
directory's results.csv, so a rerun resumes; `plan_table` estimates what is left.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from forecaster.benchmark.lineup import MADE, NAIVE_MODEL, TUNED, candidates, product_spec
from forecaster.benchmark.record import RESULTS_FILE, read_results
from forecaster.checks import check_fields, default_of, parse_names, setting
from forecaster.data.splits import PROTOCOL_SPLIT, SPLIT_SCHEMES, fitting_input_size, split_borders
from forecaster.errors import DataError, ForecasterError, unimportable
from forecaster.training.settings import MAX_BAG_SEEDS, TrainerOptions, TrainSettings

DEFAULT_DATASETS = ("ETTm2", "Exchange", "Weather", "ILI")
DEFAULT_MODELS = (
    "s3attention", "s3attention-auto", "auto", "naive", "patchtst", "itransformer", "dlinear", "fedformer",
    "autoformer", "informer", "nhits",
)
SETTINGS_FILE = "benchmark.json"
# Settings that change what a row means: a rerun into the same directory must use the same ones ("csv": the
# user's file by name and content, since its cells are keyed by the file's stem alone).
PROTOCOL_FIELDS = ("split", "max_epochs", "patience", "batch_size", "seeds", "input_size", "csv")


def parse_horizons(text: str) -> str | tuple[int, ...]:
    """CLI value "paper" or "96,192,..." -> "paper" or a tuple of positive ints (DataError otherwise)."""
    if text.strip().lower() == "paper":
        return "paper"
    try:
        horizons = tuple(dict.fromkeys(int(part) for part in text.split(",") if part.strip()))  # each once
    except ValueError:
        horizons = ()
    if not horizons or min(horizons) < 1:
        raise DataError(
            f"--horizons {text!r}: expected 'paper' or comma-separated positive integers like 96,192"
        )
    return horizons



@dataclass
class BenchmarkConfig:
    """One grid. `horizons` is "paper" (each dataset's registered horizons) or explicit values for all.

    The training budget defaults to `forecaster train`'s, so a cell trains as a user's run would.
    """

    datasets: Sequence[str] = setting(list(DEFAULT_DATASETS), "comma-separated datasets", parse=parse_names)
    horizons: Any = setting("paper", "'paper' (96,192,336,720; ILI 24,36,48,60) or e.g. 96,192",
                            parse=parse_horizons)
    split: str = setting(PROTOCOL_SPLIT, "split scheme", choices=SPLIT_SCHEMES)
    models: Sequence[str] = setting(
        list(DEFAULT_MODELS), "comma-separated: s3attention (the reference settings), MODEL:PRESET (any "
        "forecaster model and preset, e.g. s3attention:anchored, nlinear:reference), s3attention-auto and "
        "auto (chosen on validation), s3attention-tuned (forecaster tune), naive, and the neuralforecast "
        "peers patchtst, itransformer, dlinear, fedformer, autoformer, informer, nhits, timesnet (default: "
        "all but timesnet)", parse=parse_names,
    )
    repeats: int = setting(5, "runs per cell, seeds 0..repeats-1", minimum=1)
    max_epochs: int = setting(default_of(TrainerOptions, "max_epochs"), "epoch budget of every model",
                              minimum=1)
    patience: int = setting(default_of(TrainerOptions, "patience"), "early-stopping patience in epochs",
                            minimum=1)
    batch_size: int = setting(default_of(TrainSettings, "batch_size"), "windows per training step", minimum=1)
    seeds: int | None = setting(
        None, "models averaged per forecaster run (default: as forecaster train: several on small data)",
        minimum=1, maximum=MAX_BAG_SEEDS,
    )
    data_dir: Path | None = setting(None, "directory searched first for the dataset files", parse=Path)
    csv: Path | None = setting(None, "your own CSV instead of --datasets (give --horizons)", parse=Path)
    input_size: int | None = setting(
        None, "history length for --csv (default 96, shortened on a short file as `forecaster train` does)",
        minimum=1,
    )
    out_dir: Path = setting(Path("results"), "output directory (resumes its results.csv)", flag="--out",
                            parse=Path)
    jobs: int = setting(1, "cells trained at once, as Ray tasks each with its share of the CPUs and GPUs "
                        "(1: one after another in this process)", minimum=1)
    ray_address: str | None = setting(
        None, "the Ray cluster that runs the cells (host:port or ray://...; default: a Ray started on this "
        "machine for the grid when --jobs is above 1)",
    )
    progress: bool = setting(True, "progress bar and one line per finished cell", flag="--progress")
    refinish: bool = setting(
        False, "first rerun what follows training (shrinking toward naive, interval calibration, test "
        "scoring) on the kept bundles of rows recorded before those steps, keeping their trained weights",
    )
    command: str | None = setting(None, "the command line that made this grid, for summary.md", cli=False)

    def __post_init__(self) -> None:
        check_fields(self, "benchmark setting", error=DataError)
        if self.input_size is not None and self.csv is None:
            raise DataError("--input-size sets the history of --csv; the benchmark datasets read their "
                            "registered input sizes")


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



def _check_models(models: list[str]) -> None:
    """DataError naming a model the benchmark cannot run, or ForecasterError if neuralforecast is missing."""
    from forecaster.models import FORECAST, model_names
    from forecaster.presets import resolve

    peers = []
    for name in models:
        spec = product_spec(name)
        if spec is not None:
            if spec[0] not in model_names(FORECAST):
                raise DataError(f"benchmark model {name!r}: {spec[0]!r} is not a forecaster model")
            try:
                resolve(*spec)
            except ForecasterError as error:
                raise DataError(f"benchmark model {name!r}: {error}") from None
        elif name not in (*MADE, NAIVE_MODEL, TUNED):
            peers.append(name)
    if peers:
        try:
            from forecaster.integrations.neuralforecast import PEERS
        except ImportError as error:
            why = unimportable("neuralforecast", error)
            raise ForecasterError(
                f"models {', '.join(peers)} come from neuralforecast, which {why}; install it with "
                "`pip install 'forecaster[baselines]'`"
            ) from None
        unknown = [model for model in peers if model not in PEERS]
        if unknown:
            raise DataError(
                f"unknown benchmark model(s) {', '.join(unknown)}; expected naive, s3attention, "
                f"s3attention-auto, auto, s3attention-tuned, MODEL:PRESET or one of {', '.join(PEERS)}"
            )


@dataclass(frozen=True)
class Source:
    """One dataset of a grid, a registered benchmark or the user's CSV (`--csv`): what its cells need."""

    name: str
    input_size: int
    horizons: tuple[int, ...]
    freq: str | None
    csv: Path | None = None

    def load(self, data_dir: Path | None) -> Any:
        from forecaster.data import load_dataset, read_csv

        return read_csv(self.csv) if self.csv is not None else load_dataset(self.name, data_dir)


def sources(config: BenchmarkConfig, series: Any = None) -> list[Source]:
    """The grid's datasets; DataError for an unknown one, or for --csv without explicit horizons (`series`:
    the --csv file where already read)."""
    from forecaster.data import get_spec, read_csv

    if config.csv is not None:
        if config.horizons == "paper":
            raise DataError("--csv: give --horizons (e.g. 12,24); 'paper' horizons belong to the benchmarks")
        series = read_csv(config.csv) if series is None else series
        longest = max(config.horizons)
        input_size = config.input_size or fitting_input_size(len(series), longest, config.split, series.freq)
        name = Path(config.csv).stem
        source = Source(name, input_size, tuple(config.horizons), series.freq, Path(config.csv))
        return [_holding(source, len(series), config.split)]
    found = []
    for spec in dict.fromkeys(get_spec(name) for name in config.datasets):
        horizons = spec.horizons if config.horizons == "paper" else tuple(config.horizons)
        source = Source(spec.name, spec.input_size, horizons, spec.freq)
        found.append(_holding(source, spec.rows, config.split))
    return found


def _holding(source: Source, rows: int, split: str) -> Source:
    """`source`, whose `rows` must give every split of every horizon's cells a window (`split_borders`'s
    DataError otherwise: a dry run listed `--horizons 100000` on ETTh1 as to run, and training failed)."""
    for horizon in source.horizons:
        split_borders(rows, source.input_size, split, source.freq, horizon=horizon, source=source.name)
    return source


def grid_cells(config: BenchmarkConfig, results: pd.DataFrame | None = None) -> list[Cell]:
    """Every cell in run order: dataset, horizon, repeat, model (so each repeat compares the models).

    A made cell (s3attention-auto, auto) needs every candidate at its own seed: it is added once `results`
    holds them.
    """
    datasets = sources(config)
    models = list(dict.fromkeys(name.strip().lower() for name in config.models))
    if not datasets or not models:
        raise DataError("the benchmark needs at least one dataset and one model")
    _check_models(models)
    cells, recorded = [], recorded_cells(results)
    for source in datasets:
        dataset = source.name
        for horizon in source.horizons:
            direct = [model for model in models if model not in MADE]
            by_repeat = [list(direct) for _ in range(config.repeats)]
            for made in (model for model in models if model in MADE):
                names = candidates(made, source)
                for repeat in range(config.repeats):
                    by_repeat[repeat].extend(names)
                    if all((dataset, int(horizon), name, repeat) in recorded for name in names):
                        by_repeat[repeat].append(made)
            for repeat, names in enumerate(by_repeat):
                cells.extend(Cell(dataset, int(horizon), name, repeat) for name in dict.fromkeys(names))
    return cells


def recorded_cells(results: pd.DataFrame | None) -> set[tuple[str, int, str, int]]:
    """The (dataset, horizon, model, repeat) keys of the rows in `results` (none for None)."""
    if results is None:
        return set()
    rows = results.itertuples()
    return {(str(row.dataset), int(row.horizon), str(row.model), int(row.repeat)) for row in rows}


def _protocol(config: BenchmarkConfig) -> dict[str, Any]:
    given = {name: getattr(config, name) for name in PROTOCOL_FIELDS if name != "csv"}
    return {**given, "csv": None if config.csv is None else _csv_identity(Path(config.csv).resolve())}


def _csv_identity(path: Path) -> str:
    """A CSV by name and content; hashed again only once the file changed (the grid's plan is checked after
    every round, and a process may run grids on a file it edits between them)."""
    status = path.stat()
    return f"{path.name} sha256 {_sha256(path, status.st_mtime_ns, status.st_size)[:16]}"


@functools.cache
def _sha256(path: Path, mtime_ns: int, size: int) -> str:
    from forecaster.data.download import file_sha256

    return file_sha256(path)


def _bound(out_dir: Path) -> bool:
    """Whether results recorded under settings bind `out_dir` (a run that ended before its first row binds
    nothing)."""
    return (out_dir / SETTINGS_FILE).is_file() and (out_dir / RESULTS_FILE).is_file()


def check_settings(out_dir: Path, config: BenchmarkConfig) -> None:
    """Refuse to mix rows of another protocol into results made under the settings of the first run."""
    path = out_dir / SETTINGS_FILE
    if not _bound(out_dir):
        return
    stored, current = json.loads(path.read_text()), _protocol(config)
    # a setting a record predates is not compared: the record says nothing of it
    changed = {name: stored[name] for name in PROTOCOL_FIELDS
               if name in stored and stored[name] != current[name]}  # fmt: skip
    if changed:
        detail = ", ".join(f"{name}={value!r} (now {current[name]!r})" for name, value in changed.items())
        raise DataError(
            f"{out_dir}: its results were made with {detail}; rerun with the same settings to resume, "
            "or choose another --out"
        )


def record_settings(out_dir: Path, config: BenchmarkConfig) -> None:
    if not _bound(out_dir):
        (out_dir / SETTINGS_FILE).write_text(json.dumps(_protocol(config), indent=2) + "\n")




@dataclass
class GridPlan:
    """A grid's cells (in grid order) against the rows its output directory's results.csv already holds."""

    cells: list[Cell]
    results: pd.DataFrame

    @functools.cached_property
    def finished(self) -> set[tuple[str, int, str, int]]:
        return recorded_cells(self.results)

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
    out_dir = Path(config.out_dir)
    check_settings(out_dir, config)
    results = read_results(out_dir / RESULTS_FILE)
    return GridPlan(grid_cells(config, results), results)


def plan_table(plan: GridPlan) -> list[str]:
    """Markdown rows per dataset and model: cells done and to run, and what the rest will take.

    The estimate is the mean train_seconds of the (dataset, model)'s rows in results.csv (any horizon) times
    the cells left, one at a time; `--jobs N` divides the wall time. Rows trained on this machine's device are
    used when there are any, since a record may gather runs from a GPU and a CPU.
    """
    counts: dict[tuple[str, str], list[int]] = {}
    for cell in plan.cells:
        counts.setdefault((cell.dataset, cell.model), [0, 0])[cell.key not in plan.finished] += 1
    from forecaster.devices import machine_name

    here = plan.results[plan.results["device"].astype(str) == machine_name()]
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


"""`forecaster lra benchmark`: tasks x mixers x seeds, each cell one `train_lra` run on the same data.

Recorded as the forecasting benchmark records its cells (`forecaster.benchmark.record`): a row per finished
cell appended to results.csv and synced before the next starts, so a rerun into the same folder runs only
the cells missing from it; summary.md is rewritten after every cell. A cell that fails (files missing, a
mixer that does not fit) is reported in one line and the grid goes on. settings.json keeps the settings
the first run was given, and a rerun with other settings is refused rather than mixed into the table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from forecaster.atomic import write_atomically
from forecaster.benchmark.record import append_result, read_rows, repair_tail
from forecaster.checks import parse_names, setting
from forecaster.errors import ConfigError, DataError
from forecaster.lra.presets import get_preset
from forecaster.lra.settings import LRASettings
from forecaster.lra.tasks import get_task
from forecaster.lra.training import train_lra
from forecaster.nn.attention import parse_mixer_spec

RESULTS_FILE, SUMMARY_FILE, SETTINGS_FILE = "results.csv", "summary.md", "settings.json"
RESULT_COLUMNS = (
    "task", "model", "seed", "preset", "test_acc", "val_acc", "majority_class_rate", "steps", "batch_size",
    "lr", "n_train", "n_test", "seq_len", "train_seconds", "device", "data",
)
# LRASettings fields each cell sets itself; the others are the grid's, the same for every cell.
CELL_FIELDS = ("task", "mixer", "seed", "out", "overwrite")
# LRASettings fields that do not change what a cell learns, left out of settings.json.
_NOT_PROTOCOL = ("cache_dir", "eval_every", "accelerator", "progress")
# The lineup: S3Attention, softmax, Linformer, one of the TNN family and one MRA model.
DEFAULT_MIXERS = ("skeleton", "softmax", "linformer", "tnn", "mra2")

_TABLE1_TASKS = ("listops", "text", "retrieval", "image", "pathfinder")
# Paper 001 Table 1, test accuracy (%) per task in _TABLE1_TASKS order, by the mixer registered here.
PAPER_TABLE1: dict[str, tuple[str, tuple[float, ...]]] = {
    "skeleton": ("S3Attention (r, s1, s2 = 8)", (38.30, 69.27, 83.26, 53.90, 75.82)),
    "softmax": ("Transformer", (36.37, 64.27, 57.46, 42.44, 71.40)),
    "local": ("Local Attention", (15.82, 52.98, 53.39, 41.46, 66.63)),
    "linformer": ("Linformer", (35.70, 53.94, 52.27, 38.56, 76.34)),
    "reformer": ("Reformer", (37.27, 56.10, 53.40, 38.07, 68.50)),
    "linear": ("Linear Transformer", (16.13, 65.90, 53.09, 42.34, 75.30)),
    "performer": ("Performer", (18.01, 65.40, 53.82, 42.77, 77.05)),
    "nystromformer": ("Nystromformer", (37.34, 65.75, 81.29, 41.58, 70.94)),
    "fnet": ("FNet", (35.33, 65.11, 59.61, 38.67, 77.08)),
}


def paper_accuracy(model: str, task: str) -> float | None:
    """Paper 001 Table 1's accuracy (%) of the row for `model`'s mixer (options aside) on `task`, if any."""
    row = PAPER_TABLE1.get(model.split(":")[0])
    return row[1][_TABLE1_TASKS.index(task)] if row and task in _TABLE1_TASKS else None


def _parse_seeds(text: str) -> list[int]:
    return [int(part) for part in parse_names(text)]


@dataclass
class LRABenchmarkSettings:
    """The grid: which tasks, mixers and seeds, and where its record goes."""

    tasks: list[str] = setting(["listops", "pathfinder"], "LRA tasks, comma-separated", parse=parse_names)
    mixers: list[str] = setting(list(DEFAULT_MIXERS), "mixers, comma-separated, each a registered name "
                                "with options if any (name:key=value:...)", parse=parse_names)
    seeds: list[int] = setting([0], "seeds, comma-separated: a run of every cell each", parse=_parse_seeds)
    out: Path = setting(Path("runs/lra-benchmark"), "folder of results.csv, summary.md, settings.json and "
                        "the cells' bundles (runs/)", parse=Path)

    def __post_init__(self) -> None:
        for task in self.tasks:
            get_task(task)
        for mixer in self.mixers:
            parse_mixer_spec(mixer)
        if not self.tasks or not self.mixers or not self.seeds or min(self.seeds) < 0:
            raise ConfigError("the grid needs at least one task, one mixer and one seed, seeds >= 0")


@dataclass
class LRABenchmarkOutcome:
    """Where the grid wrote its files, and its cells: run now, found in results.csv, failed (a line each)."""

    results: Path
    summary: Path
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _cell_folder(task: str, model: str, seed: int) -> str:
    return f"{task}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', model)}-seed{seed}"


def _check_protocol(path: Path, protocol: dict[str, Any]) -> None:
    """Record the grid's settings on its first run; refuse a rerun whose settings differ."""
    if not path.is_file():
        write_atomically(path, lambda staged: staged.write_text(json.dumps(protocol, indent=2) + "\n"))
        return
    stored = json.loads(path.read_text())
    if stored != protocol:
        raise DataError(f"{path.parent}: its results were made with {json.dumps(stored)} (now "
                        f"{json.dumps(protocol)}); rerun with the same settings to resume, or choose another "
                        "--out")


def read_lra_results(path: Path) -> pd.DataFrame:
    """The finished cells in results.csv (empty if none); DataError if the file is not an LRA record."""
    frame = read_rows(path, RESULT_COLUMNS)
    missing = [column for column in RESULT_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(f"{path}: not an LRA benchmark record; missing column(s) {', '.join(missing)}")
    return frame


def run_lra_benchmark(
    grid: LRABenchmarkSettings,
    training: dict[str, Any],
    model: dict[str, Any],
    echo: Callable[[str], None] = print,
) -> LRABenchmarkOutcome:
    """Train every cell of `grid` missing from its results.csv with `training` (LRASettings fields but
    CELL_FIELDS) and `model` (LRAConfig fields), rewriting summary.md after each cell.

    ConfigError / DataError before any training for settings that no cell could use."""
    from forecaster.cluster import quiet_lightning

    specs = [parse_mixer_spec(mixer) for mixer in grid.mixers]
    first = LRASettings(task=grid.tasks[0], mixer=specs[0].name, **training)  # checks the shared settings
    protocol = {"preset": first.preset, **{name: str(value) if isinstance(value, Path) else value
                                           for name, value in training.items() if name not in _NOT_PROTOCOL},
                "model": model}  # fmt: skip
    grid.out.mkdir(parents=True, exist_ok=True)
    _check_protocol(grid.out / SETTINGS_FILE, protocol)
    outcome = LRABenchmarkOutcome(grid.out / RESULTS_FILE, grid.out / SUMMARY_FILE)
    repair_tail(outcome.results)
    rows = read_lra_results(outcome.results).itertuples()
    finished = {(str(row.task), str(row.model), int(row.seed)) for row in rows}
    quiet_lightning()
    for task in grid.tasks:
        for spec in specs:
            for seed in grid.seeds:
                label = f"{task} · {spec.label} · seed {seed}"
                if (task, spec.label, seed) in finished:
                    outcome.skipped.append(label)
                    continue
                out = grid.out / "runs" / _cell_folder(task, spec.label, seed)
                try:
                    settings = LRASettings(task=task, mixer=spec.name, seed=seed, out=out, overwrite=True,
                                           **training)  # fmt: skip
                    metrics = train_lra(settings, **{**model, "mixer_options": {
                        **model.get("mixer_options", {}), **spec.options}})  # fmt: skip
                except Exception as error:  # one cell's failure must not stop the grid
                    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
                    outcome.failed.append(f"{label}: failed: {type(error).__name__}: {message}")
                    echo(outcome.failed[-1])
                    continue
                row = {**metrics, "model": spec.label, "seed": seed}
                append_result(outcome.results, row, RESULT_COLUMNS)
                outcome.ran.append(label)
                echo(f"{label}: test accuracy {100 * row['test_acc']:.2f}% (majority class "
                     f"{100 * row['majority_class_rate']:.2f}%; {row['steps']} steps, "
                     f"{row['train_seconds']:.0f} s)")
                write_summary(read_lra_results(outcome.results), outcome.summary, protocol, outcome.failed)
    write_summary(read_lra_results(outcome.results), outcome.summary, protocol, outcome.failed)
    return outcome


def _percent(values: pd.Series, seeds: int) -> str:
    mean, count = 100 * values.mean(), len(values)
    text = f"{mean:.2f}" if count < 2 else f"{mean:.2f} ± {100 * values.std():.2f}"
    return text + (f" (n={count})" if count < seeds else "")


def _accuracy_table(results: pd.DataFrame) -> list[str]:
    """Task rows x mixer columns: test accuracy (%) mean ± sample std over seeds, the paper's beside it."""
    models = list(dict.fromkeys(results["model"].astype(str)))
    seeds = int(results.groupby(["task", "model"])["seed"].nunique().max())
    lines = ["| task | " + " | ".join(models) + " | majority class |", "|---|" + "---|" * (len(models) + 1)]
    for task, rows in results.groupby("task", sort=False):
        cells = []
        for model in models:
            own = rows[rows["model"].astype(str) == model]
            paper = paper_accuracy(model, str(task))
            text = _percent(own["test_acc"], seeds) if len(own) else "-"
            cells.append(text + (f" (paper {paper:.2f})" if paper is not None else ""))
        majority = 100 * rows["majority_class_rate"].mean()
        lines.append(f"| {task} | " + " | ".join(cells) + f" | {majority:.2f} |")
    return lines


def _runs_table(results: pd.DataFrame) -> list[str]:
    """The data, budget and device the rows were run with, one line per distinct combination."""
    keys = ["task", "preset", "steps", "batch_size", "lr", "n_train", "n_test", "seq_len", "device", "data"]
    lines = ["| task | preset | steps | batch | lr | train / test samples | length | device | data | models "
             "(seeds) | mean train s |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, rows in results.groupby(keys, sort=False, dropna=False):
        task, preset, steps, batch, lr, n_train, n_test, length, device, data = key
        models = ", ".join(f"{model} ({len(group)})" for model, group in rows.groupby("model", sort=False))
        lines.append(f"| {task} | {preset} | {steps} | {batch} | {lr:g} | {n_train} / {n_test} | {length} | "
                     f"{device} | {data} | {models} | {rows['train_seconds'].mean():.0f} |")
    return lines


def write_summary(results: pd.DataFrame, path: Path, protocol: dict[str, Any], failed: list[str]) -> Path:
    """summary.md: the accuracy table (with paper 001 Table 1 beside ours), the rows' data, budget and
    device, the grid's settings, and the cells that failed in the latest run."""
    from forecaster.devices import machine_name

    lines = ["# LRA benchmark", "", f"Written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {machine_name()}.",
             "", "Test accuracy (%) per task and mixer: mean ± sample std over seeds ((n=k): fewer seeds "
             "than the fullest cell). In parentheses, paper 001 Table 1 for the mixer's row (S3Attention: r, "
             "s1, s2 = 8); the paper trains on LRA's files, this grid on the data below. Last column: the "
             "share of the test split's most common training label."]  # fmt: skip
    if results.empty:
        lines += ["", "No finished cells yet."]
    else:
        lines += ["", "## Test accuracy", "", *_accuracy_table(results), "", "## Data, budget and device", "",
                  *_runs_table(results)]
    given = json.dumps({key: value for key, value in protocol.items() if key != "preset"})
    lines += ["", "## Settings", "", f"Every cell: `forecaster lra train` with preset `{protocol['preset']}` "
              f"(forecaster.lra.presets) and these settings given: `{given}`. The preset per task:", "",
              *(f"- {task}: {get_preset(protocol['preset'], task).source}"
                for task in dict.fromkeys(results["task"].astype(str)))]  # fmt: skip
    if failed:
        lines += ["", "## Failed in the latest run", "", *(f"- {line}" for line in failed)]
    return write_atomically(path, lambda staged: staged.write_text("\n".join(lines) + "\n"))


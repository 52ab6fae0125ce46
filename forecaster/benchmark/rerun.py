"""`forecaster benchmark --rerun MODELS`: forget recorded rows so that the grid trains them again.

The record resumes: a row in results.csv is never trained again. After a change to how a model trains, its
rows in the grid's datasets and horizons are forgotten (their results.csv lines and bundles) and the grid
runs them again at every repeat. A made row (s3attention-auto, auto) is kept among its candidates' bundles
at its seed, so it is forgotten with any candidate it was made from and made again from the new ones.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from forecaster.atomic import write_atomically
from forecaster.benchmark.grid import BenchmarkConfig, Cell, sources
from forecaster.benchmark.lineup import MADE, candidates
from forecaster.benchmark.record import RESULTS_FILE
from forecaster.benchmark.runners import bundle_dir


def forget_rows(config: BenchmarkConfig, models: Sequence[str]) -> list[Cell]:
    """Remove the rows of `models` (and of the made rows built from them) in the grid's datasets and horizons
    from results.csv, atomically, then their bundles; the forgotten cells, in record order."""
    path = Path(config.out_dir) / RESULTS_FILE
    if not models or not path.is_file():
        return []
    names = {name.strip().lower() for name in models}
    forgotten_models = {}
    for source in sources(config):
        made = {model for model in MADE if names & set(candidates(model, source))}
        for horizon in source.horizons:
            forgotten_models[(source.name, str(horizon))] = names | made
    # As text: every other line is written back exactly as it was read.
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    keys = zip(rows["dataset"], rows["horizon"], rows["model"].str.lower(), strict=True)
    forget = [model in forgotten_models.get((dataset, horizon), ()) for dataset, horizon, model in keys]
    cells = [Cell(row.dataset, int(row.horizon), row.model, int(row.repeat))
             for row in rows[forget].itertuples()]  # fmt: skip
    if cells:
        write_atomically(path, lambda staged: rows[[not flag for flag in forget]].to_csv(staged, index=False))
        for cell in cells:
            shutil.rmtree(bundle_dir(config, cell), ignore_errors=True)
    return cells

"""The accuracy protocol: every model trained here under one split, budget and metric, cell by cell.

`grid` (settings and cells), `record` (results.csv), `runners` (one cell of each kind of model),
`executors` (in this process or as Ray tasks), `progress`, `report` (summary.md and the plot) and
`run` (`run_benchmark`, which ties them together).
"""

from forecaster.benchmark.grid import (
    DEFAULT_DATASETS,
    DEFAULT_MODELS,
    BenchmarkConfig,
    Cell,
    GridPlan,
    grid_cells,
    parse_horizons,
    plan_grid,
    plan_table,
)
from forecaster.benchmark.record import RESULT_COLUMNS, append_result, read_results
from forecaster.benchmark.report import mse_figure, plot_results, write_summary
from forecaster.benchmark.run import BenchmarkOutcome, run_benchmark

__all__ = [
    "DEFAULT_DATASETS",
    "DEFAULT_MODELS",
    "RESULT_COLUMNS",
    "BenchmarkConfig",
    "BenchmarkOutcome",
    "Cell",
    "GridPlan",
    "append_result",
    "grid_cells",
    "mse_figure",
    "parse_horizons",
    "plan_grid",
    "plan_table",
    "plot_results",
    "read_results",
    "run_benchmark",
    "write_summary",
]

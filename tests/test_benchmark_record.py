"""The committed record behind README's Results (data/benchmark): rows of the protocol, a summary
regenerated from them, README's table copied from it, and naive rows equal to a numpy oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from benchmark_checks import markdown_tables, numpy_naive_scores

from forecaster.benchmark import RESULT_COLUMNS, read_results

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "benchmark"


def _published_results() -> pd.DataFrame:
    return read_results(PUBLISHED / "results.csv")


def test_published_results_are_rows_of_the_protocol() -> None:
    """data/benchmark is the record behind README's Results: each row must be a distinct, plausible cell."""
    from forecaster.data import get_spec

    settings = json.loads((PUBLISHED / "benchmark.json").read_text())
    assert settings == {"split": "7:1:2", "max_epochs": 10, "patience": 3, "batch_size": 32}
    results = _published_results()
    assert list(results.columns) == list(RESULT_COLUMNS) and not results.empty
    assert not results.duplicated(["dataset", "horizon", "model", "repeat"]).any()
    for row in results.itertuples():
        spec = get_spec(row.dataset)
        trained = row.parameters > 0
        ensemble = isinstance(row.members, str) and len(json.loads(row.members)) > 1  # trains nothing itself
        assert row.dataset == spec.name and row.horizon in spec.horizons and row.seed == row.repeat, row
        assert row.windows == int(0.2 * spec.rows) - row.horizon + 1, row  # 7:1:2 test windows, stride 1
        assert 0 < row.mae**2 <= row.mse, row  # Jensen: (mean |e|)^2 <= mean e^2
        epochs_ok = 1 <= row.epochs <= settings["max_epochs"] if trained and not ensemble else row.epochs == 0
        assert epochs_ok, row
        assert (row.parameters > 0 and row.train_seconds > 0) == trained, row


def test_published_summary_shows_the_mean_of_every_cell() -> None:
    """summary.md must be regenerated from results.csv, not edited: each model's cell starts with its mean,
    in the main tables or (MODEL:PRESET candidates, MSE) the candidates' table."""
    results = _published_results()
    text = (PUBLISHED / "summary.md").read_text()
    mse_table, mae_table = markdown_tables(text)[:2]
    candidates = markdown_tables(text[text.index("## Candidates"):])[0] if "## Candidates" in text else [[]]
    for metric, tables in (("mse", (mse_table, candidates)), ("mae", (mae_table,))):
        means = results.groupby(["dataset", "horizon", "model"])[metric].mean()
        assert len(tables[0]) - 1 == results.groupby(["dataset", "horizon"]).ngroups
        for (dataset, horizon, model), mean in means.items():
            table = next((t for t in tables if model in t[0]), None)
            if table is None:
                assert metric == "mae" and ":" in model, model  # candidates show their MSE only
                continue
            rows = {(row[0], int(row[1])): row for row in table[1:]}
            shown = rows[(dataset, horizon)][table[0].index(model)]
            assert shown.startswith(f"{mean:.3f}"), (metric, dataset, horizon, model, shown)


def _table_lines_from(text: str, header: str) -> list[str]:
    """The markdown table that starts at `header` in `text`, one string per line (bold kept)."""
    lines = text[text.index(header):].splitlines()
    return lines[: next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))]


def test_readme_results_table_is_the_published_summary() -> None:
    """README shows the record's MSE table as summary.md writes it: landing cells updates both."""
    summary = (PUBLISHED / "summary.md").read_text()
    header = next(line for line in summary.splitlines() if line.startswith("| dataset | horizon |"))
    readme = (PUBLISHED.parents[1] / "README.md").read_text()
    assert _table_lines_from(readme, header) == _table_lines_from(summary, header)


def test_published_naive_rows_equal_the_numpy_oracle(data_dir: Path) -> None:
    from forecaster.data import get_spec, locate_dataset

    naive = _published_results().query("model == 'naive'")
    assert set(naive["dataset"]) >= {"ETTm2", "Exchange", "Weather", "ILI"}
    for (dataset, horizon), rows in naive.groupby(["dataset", "horizon"]):
        spec = get_spec(dataset)
        mse, mae, windows = numpy_naive_scores(locate_dataset(dataset, data_dir), spec.input_size, horizon)
        assert (rows["windows"] == windows).all(), (dataset, horizon)
        assert rows["mse"].to_numpy() == pytest.approx(mse, rel=1e-5), (dataset, horizon)
        assert rows["mae"].to_numpy() == pytest.approx(mae, rel=1e-5), (dataset, horizon)


def _model_of_interval_row(described: str) -> str:
    """The record's model behind a row of README's interval table, from how the row describes it."""
    if "quantile head" in described:
        return "s3attention-tuned" if "s3attention-tuned" in described else "s3attention:quantile"
    return "s3attention:" + described.split("(", 1)[1].split(",", 1)[0].rstrip(")")


def test_readme_interval_table_is_the_published_summary() -> None:
    """README's prediction-interval rows quote summary.md's (its ETTm2 and Weather rows had gone stale)."""
    summary = (PUBLISHED / "summary.md").read_text()
    intervals = summary[summary.index("## Prediction intervals"):]
    published = {
        tuple(cells[:3]): cells[3:]
        for cells in (
            [cell.strip() for cell in line.strip("|").split("|")]
            for line in _table_lines_from(intervals, "| dataset |")[2:]
        )
    }
    readme = (PUBLISHED.parents[1] / "README.md").read_text()
    rows = _table_lines_from(readme, "| cell | intervals | n |")[2:]
    assert len(rows) == 8
    for line in rows:
        cell, described, *numbers = [part.strip() for part in line.strip("|").split("|")]
        dataset, horizon = cell.rsplit("-", 1)
        key = (dataset, horizon, _model_of_interval_row(described))
        assert numbers == published[key], (key, numbers, published[key])

"""The benchmark runner: a tiny real grid end to end, resuming, interruption, summary and plot."""

from __future__ import annotations

import json
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

pytest.importorskip("neuralforecast")

from forecaster.benchmark import (  # noqa: E402
    RESULT_COLUMNS,
    BenchmarkConfig,
    Cell,
    append_result,
    executors,  # noqa: E402
    grid_cells,
    mse_figure,
    parse_horizons,
    plan_grid,
    read_results,
    run_benchmark,
    write_summary,
)
from forecaster.benchmark.record import INTERVAL_COLUMNS  # noqa: E402
from forecaster.cli import main  # noqa: E402
from forecaster.devices import machine_name  # noqa: E402
from forecaster.errors import DataError  # noqa: E402

ILI_TEST_WINDOWS_H24 = 193 - 24 + 1  # int(0.2 * 966) test rows, stride-1 windows of horizon 24


def _tiny_args(data_dir: Path, out: Path) -> list[str]:
    return [
        "benchmark", "--datasets", "ILI", "--horizons", "24",
        "--models", "s3attention,nlinear:reference,dlinear", "--repeats", "1", "--max-epochs", "1",
        "--seeds", "1", "--data-dir", str(data_dir), "--out", str(out), "--no-progress",
    ]


@pytest.fixture(scope="module")
def tiny_grid(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real run of the tiny grid (ILI, h=24, s3attention, nlinear and the dlinear peer, 1 repeat, 1
    epoch)."""
    out = tmp_path_factory.mktemp("bench") / "results"
    assert main(_tiny_args(data_dir, out)) == 0
    return out


@pytest.mark.slow
def test_tiny_grid_writes_results_summary_and_plot(tiny_grid: Path) -> None:
    results = pd.read_csv(tiny_grid / "results.csv")
    assert list(results.columns) == list(RESULT_COLUMNS)
    assert results[["dataset", "horizon", "model", "repeat", "seed"]].values.tolist() == [
        ["ILI", 24, "s3attention", 0, 0],
        ["ILI", 24, "nlinear:reference", 0, 0],
        ["ILI", 24, "dlinear", 0, 0],
    ]
    assert (results["windows"] == ILI_TEST_WINDOWS_H24).all()
    assert (results["epochs"] == 1).all()
    assert (results["parameters"] > 0).all() and (results["train_seconds"] > 0).all()
    if not torch.cuda.is_available():
        assert (results["device"] == machine_name()).all()
    assert results[["mse", "mae"]].map(math.isfinite).all().all()
    assert (results["mse"] > 0).all() and (results["mae"] > 0).all()

    bundle = tiny_grid / "bundles" / "ILI-h24-s3attention-r0"
    bundle_metrics = json.loads((bundle / "metrics.json").read_text())
    assert results.loc[0, "mse"] == pytest.approx(bundle_metrics["mse"], rel=1e-12)

    summary = (tiny_grid / "summary.md").read_text()
    assert "| dataset | horizon | s3attention | dlinear | paper S3Attention |" in summary
    shown = results[~results["model"].str.contains(":")]  # candidates have their own table
    best = shown.loc[shown["mse"].idxmin()]
    row = next(line for line in summary.splitlines() if line.startswith("| ILI | 24 |"))
    assert f"**{best.mse:.3f}**" in row and row.endswith("| 2.431 |")
    assert "Electricity" in summary and "Traffic" in summary and "Not run here" in summary
    assert "neuralforecast.models.DLinear" in summary
    assert "forecaster benchmark --datasets ILI --horizons 24" in summary
    assert (tiny_grid / "mse_by_horizon.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_older_rows_are_refinished_from_their_bundles_as_a_fresh_run_records_them(
    tiny_grid: Path, data_dir: Path, tmp_path: Path
) -> None:
    """A forecaster row carries its bundle's 80% / 95% test coverage and interval score (a peer's stay
    empty). Rows recorded before training ended by shrinking toward naive and calibrating intervals (their
    bundles: the bare trained model, no calibration; their rows: no intervals, the bare model's figures) get
    from `--refinish` exactly what a fresh run records, and their bundles the same weights toward naive."""
    from forecaster.artifacts import load_bundle, save_bundle
    from forecaster.models.assembly import stored

    results = read_results(tiny_grid / "results.csv")
    own = results.set_index("model").loc["s3attention"]
    bundle = json.loads((tiny_grid / "bundles" / "ILI-h24-s3attention-r0" / "metrics.json").read_text())
    assert own["coverage_80"] == bundle["intervals"]["80"]["coverage"] and 0 < own["coverage_95"] <= 1
    assert own["interval_score_95"] == bundle["intervals"]["95"]["interval_score"]
    assert results.set_index("model").loc["dlinear", list(INTERVAL_COLUMNS)].isna().all()

    out = tmp_path / "older"
    shutil.copytree(tiny_grid, out)
    older = results.copy()
    older.loc[:, list(INTERVAL_COLUMNS)] = float("nan")
    older.loc[older["model"] == "nlinear:reference", ["mse", "mae", "mse_step1"]] = 9.0
    older.to_csv(out / "results.csv", index=False)
    for name in ("ILI-h24-s3attention-r0", "ILI-h24-nlinear-reference-r0"):
        kept = load_bundle(out / "bundles" / name)
        training = {key: value for key, value in kept.training.items() if key != "toward_naive"}
        save_bundle(out / "bundles" / name, model=stored(kept.model), model_name=kept.model_name,
                    metrics=kept.metrics, training=training, data=kept.data, scaler=kept.scaler,
                    overwrite=True)
    assert main([*_tiny_args(data_dir, out), "--refinish"]) == 0
    refinished = read_results(out / "results.csv")
    pd.testing.assert_frame_equal(refinished, results, check_exact=False, rtol=1e-9)
    nlinear = Path("bundles") / "ILI-h24-nlinear-reference-r0" / "config.json"
    fresh, again = (json.loads((root / nlinear).read_text()) for root in (tiny_grid, out))
    assert len(fresh["naive_weights"]) == 24 and again["naive_weights"] == fresh["naive_weights"]
    assert "## Prediction intervals" in (out / "summary.md").read_text()


@pytest.mark.slow
def test_second_run_with_same_results_does_nothing(tiny_grid: Path, data_dir: Path, monkeypatch) -> None:
    before = (tiny_grid / "results.csv").read_bytes()

    def must_not_train(*args, **kwargs):
        raise AssertionError("a finished cell was trained again")

    monkeypatch.setattr(executors, "run_cell", must_not_train)
    assert main(_tiny_args(data_dir, tiny_grid)) == 0
    assert (tiny_grid / "results.csv").read_bytes() == before


def test_grid_on_a_many_core_machine_drops_lightnings_dataloader_workers_advice(
    data_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    """On a 16-core GPU host Lightning advised `num_workers=15` for every cell's three loaders."""
    from lightning.pytorch.trainer.connectors import data_connector

    monkeypatch.setattr(data_connector, "suggested_max_num_workers", lambda num_devices: 15)
    args = ["benchmark", "--datasets", "ILI", "--horizons", "24", "--models", "s3attention", "--repeats", "1",
            "--max-epochs", "1", "--no-progress", "--data-dir", str(data_dir), "--out", str(tmp_path)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(args) == 0
    assert not [w for w in caught if "does not have many workers" in str(w.message)]


def _numpy_naive_scores(csv_path: Path, input_size: int, horizon: int) -> tuple[float, float, int]:
    """Oracle: standardize the raw CSV with train-row statistics (7:1:2) and repeat each window's last value.

    Errors are summed one horizon step at a time, so ETTm2 at h=720 needs no (windows, h, C) array.
    """
    import numpy as np

    values = pd.read_csv(csv_path).drop(columns="date").to_numpy(float)
    n_rows = len(values)
    n_train, n_test = int(0.7 * n_rows), int(0.2 * n_rows)
    train = values[:n_train]
    test = ((values - train.mean(axis=0)) / train.std(axis=0))[n_rows - n_test - input_size:]
    windows = len(test) - input_size - horizon + 1
    last = test[input_size - 1:input_size - 1 + windows]
    squared = absolute = 0.0
    for step in range(horizon):
        errors = test[input_size + step:input_size + step + windows] - last
        squared += float(np.sum(errors**2))
        absolute += float(np.sum(np.abs(errors)))
    count = windows * horizon * values.shape[1]
    return squared / count, absolute / count, windows


def test_naive_row_equals_a_numpy_last_value_forecast(data_dir: Path, tmp_path: Path) -> None:
    config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["naive"], repeats=1,
                             data_dir=data_dir, out_dir=tmp_path, progress=False)
    run_benchmark(config)
    row = read_results(tmp_path / "results.csv").iloc[0]

    mse, mae, windows = _numpy_naive_scores(data_dir / "national_illness.csv.gz", 36, 24)
    assert row["windows"] == ILI_TEST_WINDOWS_H24 == windows
    assert row["mse"] == pytest.approx(mse, rel=1e-5)
    assert row["mae"] == pytest.approx(mae, rel=1e-5)
    assert (row["epochs"], row["parameters"]) == (0, 0)
    assert "- naive: the last input step repeated" in (tmp_path / "summary.md").read_text()


def test_naive_cells_run_before_trained_ones(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    order: list[tuple[int, str]] = []

    def recording(cell, prepared, cfg):
        order.append((cell.horizon, cell.model))
        return _fake_metrics(cell)

    monkeypatch.setattr(executors, "run_cell", recording)
    run_benchmark(BenchmarkConfig(datasets=["ILI"], horizons=(24, 36), models=["s3attention", "naive"],
                                  repeats=1, data_dir=data_dir, out_dir=tmp_path, progress=False))
    assert order == [(24, "naive"), (36, "naive"), (24, "s3attention"), (36, "s3attention")]


def test_jobs_below_one_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="'jobs' must be an integer >= 1, got 0"):
        run_benchmark(BenchmarkConfig(datasets=["ILI"], models=["dlinear"], out_dir=tmp_path, jobs=0))


def _fake_metrics(cell: Cell) -> dict:
    value = 0.1 * (1 + cell.horizon / 24) + (0.05 if cell.model == "dlinear" else 0.0)
    return {"mse": value, "mae": value / 2, "train_seconds": 1.0, "epochs": 1, "parameters": 10, "windows": 5,
            "val_mse": value, "mse_step1": value / 4, "val_blocks": "[0.1, 0.2]"}


def test_interrupted_grid_continues_where_it_stopped(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    config = BenchmarkConfig(
        datasets=["ILI"], horizons=(24, 36), models=["s3attention", "dlinear"], repeats=1, max_epochs=1,
        data_dir=data_dir, out_dir=tmp_path, progress=False,
    )
    calls: list[Cell] = []

    def interrupted(cell, prepared, cfg):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(cell)
        return _fake_metrics(cell)

    monkeypatch.setattr(executors, "run_cell", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(config)
    assert len(read_results(tmp_path / "results.csv")) == 2
    interrupted_summary = (tmp_path / "summary.md").read_text()
    assert "| ILI | 24 | **0.200** | 0.250 | 2.431 |" in interrupted_summary
    assert "| ILI | 36 |" not in interrupted_summary
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "benchmark.json", "mse_by_horizon.png", "results.csv", "summary.md"]

    resumed: list[Cell] = []

    def recording(cell, prepared, cfg):
        resumed.append(cell)
        return _fake_metrics(cell)

    monkeypatch.setattr(executors, "run_cell", recording)
    outcome = run_benchmark(config)
    cells = grid_cells(config)
    assert calls == cells[:2] and resumed == cells[2:]
    assert outcome.skipped == cells[:2] and outcome.ran == cells[2:]
    results = read_results(tmp_path / "results.csv")
    assert [tuple(row) for row in results[["horizon", "model"]].values.tolist()] == [
        (24, "s3attention"), (24, "dlinear"), (36, "s3attention"), (36, "dlinear"),
    ]


def test_a_line_cut_off_mid_write_is_read_around_then_dropped_by_the_next_run(
    data_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    """Reading never writes (a grid may be appending); the next run drops the partial line and reruns it."""
    path = tmp_path / "results.csv"
    row = {"dataset": "ILI", "horizon": 24, "model": "dlinear", "repeat": 0, "seed": 0, "mse": 1.5,
           "mae": 1.0, "train_seconds": 2.0, "epochs": 3, "parameters": 4, "windows": 170,
           "device": "CPU (2 cores)", "val_mse": 1.0, "mse_step1": 0.5, "val_blocks": "[1.0]"}
    append_result(path, row)
    with path.open("a") as handle:
        handle.write("ILI,24,s3attention,0,0,1.2")
    before = path.read_bytes()
    [read] = read_results(path).to_dict("records")
    assert {key: read[key] for key in row} == row and all(pd.isna(read[key]) for key in INTERVAL_COLUMNS)
    assert path.read_bytes() == before

    monkeypatch.setattr(executors, "run_cell", lambda cell, prepared, cfg: _fake_metrics(cell))
    config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["s3attention", "dlinear"], repeats=1,
                             data_dir=data_dir, out_dir=tmp_path, progress=False)
    outcome = run_benchmark(config)
    assert outcome.ran == [Cell("ILI", 24, "s3attention", 0)]
    rows = read_results(path)
    assert rows[["model", "mse"]].values.tolist() == [["dlinear", 1.5], ["s3attention", 0.2]]
    assert path.read_text().count("\n") == 3


def test_dry_run_counts_cells_estimates_the_rest_and_writes_nothing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "grid"
    out.mkdir()
    rows = (("dlinear", 0, 100.0, machine_name()), ("dlinear", 1, 200.0, machine_name()),
            ("naive", 0, 0.0, machine_name()), ("patchtst", 0, 30.0, "Some GPU"))
    for model, repeat, seconds, device in rows:
        append_result(out / "results.csv", {
            "dataset": "ILI", "horizon": 24, "model": model, "repeat": repeat, "seed": repeat, "mse": 1.0,
            "mae": 0.5, "train_seconds": seconds, "epochs": 1, "parameters": 1, "windows": 170,
            "device": device, "val_mse": 1.0, "mse_step1": 0.5, "val_blocks": ""})
    before = sorted((path.name, path.read_bytes()) for path in out.iterdir())
    args = ["benchmark", "--datasets", "ILI", "--horizons", "24,36", "--models", "naive,dlinear,patchtst",
            "--repeats", "2", "--out", str(out), "--data-dir", str(tmp_path / "no-data"), "--dry-run"]
    assert main(args) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == f"{out}: 4 of 12 cells done, 8 to run"
    assert printed[3:] == [
        "| ILI | naive | 1 | 3 | 0 | 0.0 h |",
        "| ILI | dlinear | 2 | 2 | 150 | 0.1 h |",  # 2 cells x 150 s
        "| ILI | patchtst | 1 | 3 | 30 | 0.0 h |",  # only another device's row: it is all there is
    ]
    assert sorted((path.name, path.read_bytes()) for path in out.iterdir()) == before

    append_result(out / "results.csv", {  # a faster device's dlinear row (repeat 2, outside this grid)
        "dataset": "ILI", "horizon": 24, "model": "dlinear", "repeat": 2, "seed": 2, "mse": 1.0, "mae": 0.5,
        "train_seconds": 9.0, "epochs": 1, "parameters": 1, "windows": 170, "device": "Some GPU",
        "val_mse": 1.0, "mse_step1": 0.5, "val_blocks": ""})
    assert main(args) == 0
    assert "| ILI | dlinear | 2 | 2 | 150 | 0.1 h |" in capsys.readouterr().out.splitlines()
    (out / "benchmark.json").write_text(json.dumps({"split": "7:1:2", "max_epochs": 2, "patience": 3,
                                                    "batch_size": 32}))
    with pytest.raises(DataError, match=r"max_epochs=2 \(now 10\)"):
        plan_grid(BenchmarkConfig(datasets=["ILI"], out_dir=out))


def test_other_protocol_settings_are_refused(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(executors, "run_cell", lambda cell, prepared, cfg: _fake_metrics(cell))
    config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["dlinear"], repeats=1, max_epochs=1,
                             data_dir=data_dir, out_dir=tmp_path, progress=False)
    run_benchmark(config)
    config.max_epochs = 2
    with pytest.raises(DataError, match=r"max_epochs=1 \(now 2\)"):
        run_benchmark(config)


def _results_frame(rows: list[tuple[str, int, str, int, float]]) -> pd.DataFrame:
    """results.csv rows from (dataset, horizon, model, repeat, mse) with mae = mse / 2."""
    return pd.DataFrame(
        [{"dataset": d, "horizon": h, "model": m, "repeat": r, "seed": r, "mse": v, "mae": v / 2,
          "train_seconds": 1.0, "epochs": 1, "parameters": 1, "windows": 1, "device": "CPU (2 cores)",
          "val_mse": 1.0, "mse_step1": 0.5, "val_blocks": ""}
         for d, h, m, r, v in rows]
    )


def test_summary_reports_mean_std_best_and_paper(tmp_path: Path) -> None:
    results = _results_frame([
        ("ETTm2", 96, "s3attention", 0, 0.10), ("ETTm2", 96, "s3attention", 1, 0.20),
        ("ETTm2", 96, "dlinear", 0, 0.30), ("ETTm2", 96, "dlinear", 1, 0.30),
    ])
    config = BenchmarkConfig(datasets=["ETTm2"], models=["s3attention", "dlinear"], repeats=2)
    text = write_summary(results, config, tmp_path / "summary.md").read_text()
    mse_row, mae_row = [line for line in text.splitlines() if line.startswith("| ETTm2 | 96 |")]
    assert mse_row == "| ETTm2 | 96 | **0.150 ± 0.071** | 0.300 ± 0.000 | 0.192 |"
    assert mae_row == "| ETTm2 | 96 | **0.075 ± 0.035** | 0.150 ± 0.000 | 0.283 |"
    assert "input 96;" in text
    assert "Trained on: CPU (2 cores) 4 rows (" in text

    results.loc[results["model"] == "dlinear", "device"] = "NVIDIA H100 80GB HBM3"
    text = write_summary(results, config, tmp_path / "summary.md").read_text()
    assert "Trained on: CPU (2 cores) 2 rows, NVIDIA H100 80GB HBM3 2 rows (" in text


def test_results_written_before_the_device_column_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    columns = [column for column in RESULT_COLUMNS if column != "device"]
    path.write_text(",".join(columns) + "\nILI,24,dlinear,0,0,1.5,1.0,2.0,3,4,170\n")
    with pytest.raises(DataError, match=r"missing column\(s\) device"):
        read_results(path)


def test_summary_tables_do_not_depend_on_which_run_wrote_them(tmp_path: Path) -> None:
    """Runs over other models share one results.csv: the last one to write the summary must not reorder it."""
    results = _results_frame([("ILI", 24, model, 0, mse) for model, mse in (
        ("timesnet", 3.0), ("dlinear", 6.0), ("naive", 6.2), ("s3attention", 3.5))])
    written = [write_summary(results, BenchmarkConfig(models=models), tmp_path / f"{i}.md")
               for i, models in enumerate((["dlinear"], ["timesnet", "naive", "s3attention"]))]
    tables = [_markdown_tables(path.read_text()) for path in written]
    assert tables[0] == tables[1]
    assert tables[0][0][0] == ["dataset", "horizon", "s3attention", "naive", "dlinear", "timesnet",
                               "paper S3Attention"]


def test_plot_gives_each_model_one_colour_in_every_panel_and_one_legend() -> None:
    from matplotlib.colors import to_hex

    cells = [("ILI", 24, "dlinear"), ("ILI", 24, "s3attention"), ("Exchange", 96, "s3attention"),
             ("Exchange", 96, "naive"), ("Exchange", 96, "dlinear")]
    figure = mse_figure(_results_frame([(d, h, m, 0, 1.0) for d, h, m in cells]))
    colours: dict[str, set[str]] = {}
    for axis in figure.axes:
        for bars in axis.containers:  # one errorbar per model line; its first artist is the data line
            colours.setdefault(bars.get_label(), set()).add(to_hex(bars.lines[0].get_color()))
    assert {label: len(seen) for label, seen in colours.items()} == {"s3attention": 1, "naive": 1,
                                                                     "dlinear": 1}
    assert len(set.union(*colours.values())) == 3
    (legend,) = figure.legends
    assert [text.get_text() for text in legend.get_texts()] == ["s3attention", "naive", "dlinear",
                                                                 "paper S3Attention"]


def test_grid_and_argument_validation(tmp_path: Path) -> None:
    assert parse_horizons("paper") == "paper"
    assert parse_horizons("96, 192") == (96, 192)
    with pytest.raises(DataError, match="--horizons"):
        parse_horizons("96,x")
    cells = grid_cells(BenchmarkConfig(datasets=["national_illness"], models=["S3Attention"], repeats=2))
    assert [(c.dataset, c.horizon, c.repeat, c.seed) for c in cells] == [
        ("ILI", h, r, r) for h in (24, 36, 48, 60) for r in (0, 1)
    ]
    with pytest.raises(DataError, match="unknown benchmark model.*lstm"):
        grid_cells(BenchmarkConfig(models=["s3attention", "lstm"]))
    with pytest.raises(DataError, match="unknown dataset"):
        grid_cells(BenchmarkConfig(datasets=["nope"]))


def test_cli_prints_one_line_for_a_missing_dataset(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["benchmark", "--datasets", "Traffic", "--models", "dlinear", "--data-dir", str(empty),
                 "--out", str(tmp_path / "out"), "--no-progress"])
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("forecaster: error: dataset Traffic") and "\n" not in error
    assert not (tmp_path / "out").exists()


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


def _markdown_tables(text: str) -> list[list[list[str]]]:
    """Every markdown table in `text` as rows of stripped cells (the |---| rule dropped)."""
    tables: list[list[list[str]]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append([cell.strip().strip("*") for cell in line.strip("|").split("|")])
        previous = line
    return tables


def test_published_summary_shows_the_mean_of_every_cell() -> None:
    """summary.md must be regenerated from results.csv, not edited: each model's cell starts with its mean,
    in the main tables or (MODEL:PRESET candidates, MSE) the candidates' table."""
    results = _published_results()
    text = (PUBLISHED / "summary.md").read_text()
    mse_table, mae_table = _markdown_tables(text)[:2]
    candidates = _markdown_tables(text[text.index("## Candidates"):])[0] if "## Candidates" in text else [[]]
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
        mse, mae, windows = _numpy_naive_scores(locate_dataset(dataset, data_dir), spec.input_size, horizon)
        assert (rows["windows"] == windows).all(), (dataset, horizon)
        assert rows["mse"].to_numpy() == pytest.approx(mse, rel=1e-5), (dataset, horizon)
        assert rows["mae"].to_numpy() == pytest.approx(mae, rel=1e-5), (dataset, horizon)


@pytest.mark.slow
def test_a_users_csv_gets_the_same_comparison(tmp_path: Path) -> None:
    """`--csv FILE` runs the grid on one file of the user's, with the same rows and reports."""
    rng = np.random.default_rng(0)
    t = np.arange(400)
    frame = pd.DataFrame({"date": pd.date_range("2020-01-05", periods=400, freq="W-SUN"),
                          "sales": 100 + 10 * np.sin(2 * np.pi * t / 52) + rng.normal(0, 1, 400)})
    frame.to_csv(tmp_path / "shop.csv", index=False)
    args = ["benchmark", "--csv", str(tmp_path / "shop.csv"), "--horizons", "8", "--input-size", "60",
            "--models", "naive,nlinear:reference,seasonal_naive:reference", "--repeats", "1",
            "--max-epochs", "2", "--seeds", "1",
            "--out", str(tmp_path / "out"), "--no-progress"]
    assert main(args) == 0
    results = read_results(tmp_path / "out" / "results.csv")
    assert sorted(results["model"]) == ["naive", "nlinear:reference", "seasonal_naive:reference"]
    assert (results["dataset"] == "shop").all() and (results["windows"] == 80 - 8 + 1).all()
    seasonal = results.set_index("model").loc["seasonal_naive:reference"]
    assert seasonal["mse"] < results.set_index("model").loc["naive", "mse"]  # a yearly season of weeks
    assert "| shop | 8 |" in (tmp_path / "out" / "summary.md").read_text()
    paper = ["benchmark", "--csv", str(tmp_path / "shop.csv"), "--out", str(tmp_path / "x"), "--no-progress"]
    assert main(paper) == 2  # 'paper' horizons belong to the registered benchmarks


def test_a_short_csv_is_pointed_to_holdout_and_a_failed_run_binds_nothing(tmp_path: Path, capsys) -> None:
    """39 yearly rows: 7:1:2 gives no 6-year validation window; the error says --split holdout, and the out
    directory of that failed run takes the holdout run (its input shortened to 11 years, as train does)."""
    years = np.arange(1985, 2024)
    pd.DataFrame({"year": years, "v": np.arange(39.0) ** 1.5}).to_csv(tmp_path / "y.csv", index=False)
    args = ["benchmark", "--csv", str(tmp_path / "y.csv"), "--horizons", "6", "--models", "naive",
            "--repeats", "1", "--out", str(tmp_path / "out"), "--no-progress"]  # fmt: skip
    assert main(args) == 2
    assert "39 rows are too few for split 7:1:2 with input_size 11" in capsys.readouterr().err
    assert main([*args, "--split", "holdout"]) == 0
    results = read_results(tmp_path / "out" / "results.csv")
    assert results["windows"].tolist() == [1]
    last = np.arange(39.0) ** 1.5
    assert results["mse"].iloc[0] == pytest.approx(
        np.mean((last[33:] - last[32]) ** 2) / np.var(last[:27]), rel=1e-6
    )  # naive on the last 6 years, standardized by the 27 train years


def test_an_auto_cell_waits_for_every_candidate_of_its_seed(tmp_path: Path) -> None:
    config = BenchmarkConfig(datasets=["ILI"], horizons=[24], models=["auto"], repeats=2, out_dir=tmp_path)
    names = ["naive:reference", "nlinear:reference", "dlinear:reference", "s3attention:anchored",
             "s3attention:anchored-skip"]  # seasonal naive: a year of weeks exceeds ILI's input
    first = grid_cells(config, read_results(tmp_path / "results.csv"))
    assert [cell.model for cell in first] == names * 2
    rows = pd.DataFrame([{"dataset": "ILI", "horizon": 24, "model": name, "repeat": 0} for name in names])
    after = grid_cells(config, rows)
    assert [(cell.model, cell.repeat) for cell in after] == [
        *((name, 0) for name in names), ("auto", 0), *((name, 1) for name in names)
    ]


def test_an_s3attention_auto_cell_waits_for_its_variants_of_its_seed(tmp_path: Path) -> None:
    config = BenchmarkConfig(datasets=["ILI"], horizons=[24], models=["s3attention-auto"], repeats=2,
                             out_dir=tmp_path)  # fmt: skip
    names = ["s3attention:anchored", "s3attention:anchored-skip"]
    rows = pd.DataFrame([{"dataset": "ILI", "horizon": 24, "model": name, "repeat": repeat}
                         for name in names for repeat in (0, 1)])  # fmt: skip
    assert [(cell.model, cell.repeat) for cell in grid_cells(config, rows)] == [
        *((name, 0) for name in names), ("s3attention-auto", 0), *((name, 1) for name in names),
        ("s3attention-auto", 1),
    ]


@pytest.mark.slow
def test_made_rows_are_what_train_keeps_at_their_seed(tmp_path: Path) -> None:
    """The s3attention-auto and auto rows are made from their candidates' bundles: the same choice, bundle
    and test MSE as training `--preset auto` and `--model auto` from scratch at that seed."""
    from forecaster.data import read_csv
    from forecaster.training.settings import TrainerOptions, TrainSettings
    from forecaster.training.workflows import train_forecaster

    rng = np.random.default_rng(0)
    t = np.arange(500)
    frame = pd.DataFrame({"date": pd.date_range("2020-01-01", periods=500, freq="h"),
                          "load": 10 + 3 * np.sin(2 * np.pi * t / 24) + rng.normal(0, 0.5, 500),
                          "temp": 5 + np.cos(2 * np.pi * t / 24) + rng.normal(0, 0.5, 500)})
    frame.to_csv(tmp_path / "plant.csv", index=False)
    args = ["benchmark", "--csv", str(tmp_path / "plant.csv"), "--horizons", "12", "--input-size", "48",
            "--models", "naive,s3attention-auto,auto", "--repeats", "1", "--max-epochs", "2", "--seeds", "1",
            "--out", str(tmp_path / "out"), "--no-progress"]
    assert main(args) == 0
    results = read_results(tmp_path / "out" / "results.csv").set_index("model")
    assert list(results.index)[-1] == "auto" and "s3attention:anchored-skip" in results.index
    trainer = TrainerOptions(max_epochs=2, patience=3, progress_bar=False)
    for made, model, preset in (("s3attention-auto", "s3attention", "auto"), ("auto", "auto", "default")):
        settings = TrainSettings(horizon=12, input_size=48, model_name=model, preset=preset, seed=0, seeds=1,
                                 trainer=trainer)  # fmt: skip
        direct = train_forecaster(read_csv(tmp_path / "plant.csv"), tmp_path / made, settings)
        assert "ensemble" in direct.training["selection"], made  # the candidates' ensemble was offered
        kept = json.loads(results.loc[made, "members"])
        expected = direct.training.get("members", {direct.training["candidate"]: 1.0})
        # auto's baselines are `naive` in train and `naive:reference` bundles in the grid
        assert [name.split(":")[0] for name in kept] == [name.split(":")[0] for name in expected], made
        assert made == "auto" or list(kept) == list(expected)
        assert list(kept.values()) == pytest.approx(list(expected.values()))
        assert results.loc[made, "mse"] == pytest.approx(direct.metrics["mse"], rel=1e-5), made
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| plant | 12 |" in summary and "| dataset | horizon | s3attention-auto | auto |" in summary


def test_rerun_forgets_its_models_rows_and_bundles_and_the_rows_made_from_them(tmp_path: Path) -> None:
    from forecaster.benchmark.rerun import forget_rows

    path = tmp_path / "results.csv"
    models = ["naive:reference", "s3attention:anchored", "s3attention:anchored-skip", "s3attention-auto",
              "auto"]  # fmt: skip
    for horizon in (96, 192):
        for model in models:
            row = {column: "" for column in RESULT_COLUMNS}
            append_result(path, {**row, "dataset": "ETTm2", "horizon": horizon, "model": model, "repeat": 0,
                                 "seed": 0, "mse": 0.1, "members": json.dumps({"a": 0.5, "b": 0.5})})
            (tmp_path / "bundles" / f"ETTm2-h{horizon}-{model.replace(':', '-')}-r0").mkdir(parents=True)
    before = path.read_text().splitlines()
    config = BenchmarkConfig(datasets=["ETTm2"], horizons=[96], models=models, repeats=1, out_dir=tmp_path)
    forgotten = forget_rows(config, ["S3Attention:anchored"])
    assert [cell.model for cell in forgotten] == ["s3attention:anchored", "s3attention-auto", "auto"]
    gone = (["96", "s3attention:anchored"], ["96", "s3attention-auto"], ["96", "auto"])
    kept = [line for line in before if line.split(",")[1:3] not in gone]
    assert path.read_text().splitlines() == kept  # every other line as it was, quoting included
    assert sorted(bundle.name for bundle in (tmp_path / "bundles").iterdir()) == sorted(
        [f"ETTm2-h192-{model.replace(':', '-')}-r0" for model in models]
        + ["ETTm2-h96-naive-reference-r0", "ETTm2-h96-s3attention-anchored-skip-r0"]
    )
    assert forget_rows(config, ["naive:reference"])[0].model == "naive:reference"  # made rows: gone already


@pytest.mark.slow
def test_rerun_trains_its_rows_again_and_leaves_the_others(
    tiny_grid: Path, data_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    out = tmp_path / "again"
    shutil.copytree(tiny_grid, out)
    before = read_results(out / "results.csv").set_index("model")
    trained, run_cell = [], executors.run_cell

    def counted(cell, *rest):
        trained.append(cell)
        return run_cell(cell, *rest)

    monkeypatch.setattr(executors, "run_cell", counted)
    assert main([*_tiny_args(data_dir, out), "--rerun", "nlinear:reference"]) == 0
    assert "1 recorded row(s) forgotten to run again: nlinear:reference" in capsys.readouterr().out
    assert [cell.model for cell in trained] == ["nlinear:reference"]
    after = read_results(out / "results.csv").set_index("model")
    pd.testing.assert_frame_equal(after.loc[before.index, ["mse", "mae", "val_mse"]],
                                  before[["mse", "mae", "val_mse"]], rtol=1e-9)  # fmt: skip
    assert (out / "bundles" / "ILI-h24-nlinear-reference-r0" / "weights.safetensors").is_file()
    for refused in (["--rerun", "patchtst"], ["--rerun", "dlinear", "--dry-run"]):
        assert main([*_tiny_args(data_dir, out), *refused]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--rerun" in err[0], err

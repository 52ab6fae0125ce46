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
from benchmark_checks import markdown_tables, numpy_naive_scores

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
@pytest.mark.xdist_group("tiny_grid")  # one test process runs the grid for both of its tests
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
@pytest.mark.xdist_group("tiny_grid")
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


def test_refinish_keeps_a_bundles_companion(tiny_grid: Path, data_dir: Path, tmp_path: Path) -> None:
    """A refinished bundle holding a companion (`artifacts.COMPANION`) is written again with it: refinish
    saved the bundle without it, its record still naming it, and load refused the bundle (h143 2)."""
    from forecaster.api import Forecaster
    from forecaster.artifacts import COMPANION, load_bundle, model_digest, save_bundle
    from forecaster.data.registry import locate_dataset
    from forecaster.history import read_history
    from forecaster.prediction import forecast

    out = tmp_path / "older"
    shutil.copytree(tiny_grid, out)
    older = read_results(out / "results.csv")
    older.loc[older["model"] == "s3attention", list(INTERVAL_COLUMNS)] = float("nan")
    older.to_csv(out / "results.csv", index=False)
    weeks = pd.date_range("2020-01-07", periods=60, freq="W-TUE")
    rows = pd.DataFrame({"unique_id": "x0", "ds": weeks, "y": np.arange(60.0)})
    companion = Forecaster("naive", horizon=24).fit(rows).save(tmp_path / COMPANION)
    folder = out / "bundles" / "ILI-h24-s3attention-r0"
    kept = load_bundle(folder)
    training = {key: value for key, value in kept.training.items() if key != "toward_naive"}
    training[COMPANION] = {"series": ["x0"], "sha256": model_digest(companion)}
    save_bundle(folder, model=kept.model, model_name=kept.model_name, metrics=kept.metrics, training=training,
                data=kept.data, scaler=kept.scaler, overwrite=True, companion=companion)  # fmt: skip
    assert main([*_tiny_args(data_dir, out), "--refinish"]) == 0
    bundle = load_bundle(folder)
    assert bundle.companion is not None and bundle.companion.data.columns == ["x0"]
    refinished = read_results(out / "results.csv").set_index("model")
    assert "toward_naive" in bundle.training and refinished.loc["s3attention", "coverage_80"] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rows hold no 'x0': said, and the model's series forecast
        table = forecast(bundle, read_history(bundle, locate_dataset("ILI", data_dir)))
    assert list(table.columns) == bundle.data.columns and np.isfinite(table.to_numpy()).all()


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


def test_naive_row_equals_a_numpy_last_value_forecast(data_dir: Path, tmp_path: Path) -> None:
    config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["naive"], repeats=1,
                             data_dir=data_dir, out_dir=tmp_path, progress=False)
    run_benchmark(config)
    row = read_results(tmp_path / "results.csv").iloc[0]

    mse, mae, windows = numpy_naive_scores(data_dir / "national_illness.csv.gz", 36, 24)
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


def test_a_horizon_longer_than_a_dataset_holds_is_refused_before_any_cell(tmp_path: Path, capsys) -> None:
    """ILI's 966 rows under 7:1:2 leave 966 - int(0.7 * 966) - int(0.2 * 966) = 97 validation rows: one
    window of horizon 97, none of 98. A dry run listed --horizons 100000 on ETTh1 as to run (training
    failed each cell); both are refused in one line now, as is the ETT split on a dataset it does not fit."""
    args = ["benchmark", "--datasets", "ILI", "--models", "naive", "--repeats", "1", "--out",
            str(tmp_path / "grid"), "--data-dir", str(tmp_path / "no-data"), "--dry-run", "--horizons"]
    assert main([*args, "24,97"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "| ILI | naive | 0 | 2 | - | unknown |"
    assert main([*args, "24,98"]) == 2
    assert capsys.readouterr().err.strip() == (
        "forecaster: error: ILI: 966 rows are too few for split 7:1:2 with input_size 36 and horizon 98: "
        "needs at least 971 rows so that train, val and test each hold one window (or --split holdout: the "
        "last horizon tests, the one before validates); a horizon of at most 97 fits"
    )
    assert main(["benchmark", "--datasets", "Weather", "--split", "ett", "--out", str(tmp_path / "grid"),
                 "--dry-run"]) == 2  # fmt: skip
    assert capsys.readouterr().err.strip().startswith(
        "forecaster: error: Weather: 52696 rows are too few for split ett with input_size 96 and horizon 96"
    )
    assert not (tmp_path / "grid").exists()


def test_other_protocol_settings_are_refused(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(executors, "run_cell", lambda cell, prepared, cfg: _fake_metrics(cell))
    config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["dlinear"], repeats=1, max_epochs=1,
                             data_dir=data_dir, out_dir=tmp_path, progress=False)
    run_benchmark(config)
    config.max_epochs = 2
    with pytest.raises(DataError, match=r"max_epochs=1 \(now 2\)"):
        run_benchmark(config)
    config.max_epochs, config.seeds = 1, 2  # a row averages as many models as its run's --seeds asked
    with pytest.raises(DataError, match=r"seeds=None \(now 2\)"):
        run_benchmark(config)
    with pytest.raises(DataError, match="--input-size sets the history of --csv"):
        BenchmarkConfig(datasets=["ILI"], input_size=48)
    assert BenchmarkConfig(horizons=parse_horizons("24,24,36")).horizons == (24, 36)  # each cell once


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
    tables = [markdown_tables(path.read_text()) for path in written]
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
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| shop | 8 |" in summary
    latest = next(line for line in summary.splitlines() if line.startswith("Latest command:"))
    assert "--csv " in latest and "--datasets" not in latest  # the default datasets were not used (h36)
    paper = ["benchmark", "--csv", str(tmp_path / "shop.csv"), "--out", str(tmp_path / "x"), "--no-progress"]
    assert main(paper) == 2  # 'paper' horizons belong to the registered benchmarks


def test_a_users_csv_resumes_only_from_the_same_file_and_settings(tmp_path: Path, capsys) -> None:
    """Cells of --csv are keyed by the file's stem: another shop.csv, or the same one edited, resumed as done
    with the first file's scores (and a second file's row went into the record, which then refused every run);
    so did another --input-size or --seeds."""
    weeks = pd.date_range("2020-01-05", periods=120, freq="W-SUN")
    (tmp_path / "other").mkdir()
    for path, level in ((tmp_path / "shop.csv"), 100.0), ((tmp_path / "other" / "shop.csv"), 200.0):
        pd.DataFrame({"date": weeks, "sales": level + np.arange(120.0) % 7}).to_csv(path, index=False)
    out = tmp_path / "out"
    args = ["benchmark", "--horizons", "4", "--models", "naive", "--repeats", "1", "--out", str(out),
            "--no-progress"]  # fmt: skip
    assert main([*args, "--csv", str(tmp_path / "shop.csv")]) == 0
    recorded = (out / "results.csv").read_text()
    capsys.readouterr()
    assert main([*args, "--csv", str(tmp_path / "shop.csv")]) == 0
    assert "0 cells run, 1 already done" in capsys.readouterr().out
    changes = {"csv='shop.csv sha256 ": ["--csv", str(tmp_path / "other" / "shop.csv")],
               "input_size=None (now 8)": ["--csv", str(tmp_path / "shop.csv"), "--input-size", "8"],
               "seeds=None (now 2)": ["--csv", str(tmp_path / "shop.csv"), "--seeds", "2"]}  # fmt: skip
    for change, more in changes.items():
        assert main([*args, *more]) == 2
        said = capsys.readouterr().err
        assert f"its results were made with {change}" in said and "choose another --out" in said
        assert (out / "results.csv").read_text() == recorded
    edited = pd.read_csv(tmp_path / "shop.csv").iloc[:-1]  # the same file edited in place, in this process
    edited.to_csv(tmp_path / "shop.csv", index=False)
    assert main([*args, "--csv", str(tmp_path / "shop.csv")]) == 2
    assert "its results were made with csv='shop.csv sha256 " in capsys.readouterr().err
    bundle = tmp_path / "model"
    bundle.mkdir()
    (bundle / "config.json").write_text("{}")  # what train writes first of a bundle
    assert main([*args[:-2], str(bundle), "--no-progress", "--csv", str(tmp_path / "shop.csv")]) == 2
    assert "holds a model bundle (config.json)" in capsys.readouterr().err
    assert sorted(path.name for path in bundle.iterdir()) == ["config.json"]


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

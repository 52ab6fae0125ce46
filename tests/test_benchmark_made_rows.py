"""Made rows (s3attention-auto and auto, chosen from their candidates' bundles) and --rerun."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("neuralforecast")

from forecaster.benchmark import (  # noqa: E402
    RESULT_COLUMNS,
    BenchmarkConfig,
    append_result,
    grid_cells,
    read_results,
)
from forecaster.cli import main  # noqa: E402


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

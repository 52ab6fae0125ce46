"""`forecaster train / evaluate / predict` end to end, bad input, DDP on CPU, the real ETTm2 run."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors import safe_open

import forecaster
from forecaster.artifacts import load_bundle
from forecaster.cli import main
from forecaster.data import DataQualityWarning, read_csv
from forecaster.prediction import predict_windows

FORECASTER = Path(sys.executable).with_name("forecaster")
TINY = shlex.split("--d-model 8 --n-heads 2 --fold 2 --e-layers 1 --left-rank 4 --right-rank 2")
CSV_TRAIN = [  # the default preset named: the model itself, never the seasonal naive reference
    *shlex.split("--date-col Messzeit --targets HUFL,MUFL,OT --horizon 12 --input-size 24 --preset quantile"),
    *TINY,
    *shlex.split("--max-epochs 1 --limit-train-batches 3 --seed 3 --seeds 1 --accelerator cpu --no-progress"),
]


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """main() as the console script runs it: argparse errors exit via SystemExit."""
    try:
        code = main([str(arg) for arg in argv])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def plant_csv(data_dir: Path, tmp_path_factory) -> Path:
    """600 hourly ETTh1 rows as a user file: the date column renamed and moved last (not auto-detected)."""
    frame = pd.read_csv(data_dir / "ETTh1.csv.gz", nrows=600).rename(columns={"date": "Messzeit"})
    frame = frame[[*frame.columns[1:], "Messzeit"]]
    path = tmp_path_factory.mktemp("csv") / "plant.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def bundle_dir(plant_csv: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundles") / "plant"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(out.parent)
        assert main(["train", "--csv", str(plant_csv), *CSV_TRAIN, "--out", str(out)]) == 0
    return out


def test_train_on_user_csv_reports_and_saves(bundle_dir, capsys):
    bundle = load_bundle(bundle_dir)
    assert bundle.data.columns == ["HUFL", "MUFL", "OT"]
    assert (bundle.data.date_col, bundle.data.freq, bundle.data.input_size, bundle.data.horizon) == (
        "Messzeit", "h", 24, 12,
    )  # fmt: skip
    assert bundle.metrics["windows"] == 109
    assert sorted(p.name for p in bundle_dir.parent.iterdir()) == [".plant.work", "plant"]


def test_evaluate_json_matches_training_metrics(bundle_dir, plant_csv, tmp_path, capsys):
    code, out, _ = run_cli(["evaluate", "--model", bundle_dir, "--csv", plant_csv, "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    scores = {"mse", "mae", "mse_original", "mae_original", "mse_step1", "windows"}
    assert set(result) == {*scores, "naive", "seasonal_naive"}  # on the same windows, as train scored them
    saved = json.loads((bundle_dir / "metrics.json").read_text())
    assert {key: result[key] for key in scores} == {key: saved[key] for key in scores}
    for baseline in ("naive", "seasonal_naive"):
        assert result[baseline] == {key: saved[baseline][key] for key in scores}
    code, out, _ = run_cli(["evaluate", "--model", bundle_dir, "--csv", plant_csv], capsys)
    assert f"(standardized)  (naive {saved['naive']['mse']:.4f}, seasonal naive " in out
    assert out.splitlines()[0] == f"model plant (s3attention) on {plant_csv}, split 7:1:2"
    later = tmp_path / "later.csv"  # other rows: scored in the training scaler's units, and said so
    later.write_bytes(plant_csv.read_bytes())
    code, out, _ = run_cli(["evaluate", "--model", bundle_dir, "--csv", later], capsys)
    assert out.splitlines()[0] == (
        f"model plant (s3attention) on {later}, split 7:1:2; trained on {plant_csv}, standardized by its "
        "scaler"
    )


def test_evaluate_and_calibrate_score_without_lightning(bundle_dir, plant_csv, tmp_path, capsys):
    """Scoring a bundle is one pass over its windows: evaluate and calibrate ran Lightning's test loop or
    imported it (3-4 s of a 2-core CPU's start). The numbers are training's (above); a device it cannot use is
    refused in one line, as train refuses it."""
    code = (  # one process, one start of Python and torch: the modules each command left imported
        "import json, sys\n"
        "from forecaster.cli import main\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    assert main(argv) == 0\n"
        "    lightning = ('lightning', 'pytorch_lightning')\n"
        "    print(argv[0], sorted(m for m in sys.modules if m.startswith(lightning)))\n"
    )
    copy = shutil.copytree(bundle_dir, tmp_path / "plant")  # calibrate rewrites it
    commands = [["evaluate", "--model", bundle_dir, "--csv", plant_csv, "--json", "--accelerator", "cpu"],
                ["calibrate", "--model", copy, "--csv", plant_csv]]  # fmt: skip
    argvs = json.dumps([[str(arg) for arg in argv] for argv in commands])
    result = subprocess.run([sys.executable, "-c", code, argvs], capture_output=True, text=True, cwd=tmp_path,
                            timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    imported = [line for line in result.stdout.splitlines() if line.startswith(("evaluate [", "calibrate ["))]
    assert imported == ["evaluate []", "calibrate []"], result.stdout[-3000:]
    if not torch.cuda.is_available():
        gpu = ["evaluate", "--model", bundle_dir, "--csv", plant_csv, "--accelerator", "gpu"]
        code, _, err = run_cli(gpu, capsys)
        assert (code, err) == (2, "forecaster: error: --accelerator gpu: GPU is not available here\n")
    code, _, err = run_cli(["evaluate", "--model", bundle_dir, "--csv", plant_csv, "--accelerator", "tpu"],
                           capsys)  # fmt: skip
    assert code == 2 and err.endswith("--accelerator 'tpu': expected one of auto, cpu, gpu, cuda, mps\n")


def test_some_of_a_models_independent_series_are_scored_alone(plant_csv, tmp_path, capsys):
    """`evaluate` of a file holding some of a model of independent series' series said "forecast the 2
    others" and refused them (h45 #5). Each series is standardized and split on its own, so scoring two of
    them is what a model trained on those two alone scores; calibrate, whose margins all series share,
    still needs them all."""
    frame = pd.read_csv(plant_csv)
    some = tmp_path / "some.csv"
    frame[["Messzeit", "OT", "HUFL"]].to_csv(some, index=False)
    models = {}
    for name, path in (("all", plant_csv), ("two", some)):
        models[name] = tmp_path / name
        train = ["train", "--csv", path, "--model", "seasonal_naive", "--horizon", 12, "--input-size", 24,
                 "--targets", "HUFL,MUFL,OT" if name == "all" else "OT,HUFL", "--channels", "independent",
                 "--out", models[name]]  # fmt: skip
        assert run_cli(train, capsys)[0] == 0
    scored = {}
    for name, bundle in models.items():
        code, out, err = run_cli(["evaluate", "--model", bundle, "--csv", some, "--json"], capsys)
        assert code == 0, err
        scored[name] = pd.json_normalize(json.loads(out)).iloc[0].to_dict()
    assert scored["all"] == pytest.approx(scored["two"], rel=1e-6)
    assert scored["all"]["windows"] == 2 * json.loads((models["all"] / "metrics.json").read_text())[
        "windows"] // 3  # fmt: skip
    said = "no rows of series 'MUFL' that model 'all' learned: scored the 2 others"
    with pytest.warns(DataQualityWarning, match=f"^{some}: note: {said}$"):
        code, out, _ = run_cli(["evaluate", "--model", models["all"], "--csv", some, "--level", 80], capsys)
    assert code == 0 and "80% interval: coverage 0." in out
    code, _, err = run_cli(["calibrate", "--model", models["all"], "--csv", some], capsys)
    assert code == 2 and err == (f"forecaster: error: {some}: missing column(s) 'MUFL' that model 'all' was "
                                 "trained on; expected column(s) 'HUFL', 'MUFL', 'OT', the rows have "
                                 "'Messzeit', 'OT', 'HUFL'\n")  # fmt: skip


def test_predict_continues_the_hourly_timestamps(bundle_dir, plant_csv, tmp_path, capsys):
    output, plot = tmp_path / "out" / "forecast.csv", tmp_path / "forecast.png"
    code, out, err = run_cli(
        ["predict", "--model", bundle_dir, "--csv", plant_csv, "--output", output, "--plot", plot], capsys
    )
    assert code == 0, err
    forecast = pd.read_csv(output)
    assert list(forecast.columns) == ["Messzeit", "HUFL", "MUFL", "OT"]
    # ETTh1 row 599 is 2016-07-25 23:00; the 12 forecast hours follow it.
    expected_times = [f"2016-07-26 {hour:02d}:00:00" for hour in range(12)]
    assert forecast["Messzeit"].tolist() == expected_times
    history = read_csv(plant_csv, date_col="Messzeit", targets=["HUFL", "MUFL", "OT"]).values
    bundle = load_bundle(bundle_dir)
    expected = predict_windows(bundle, history[None, -bundle.data.input_size :])[0]
    np.testing.assert_allclose(forecast[["HUFL", "MUFL", "OT"]].to_numpy(), expected, rtol=1e-12)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    code, out, _ = run_cli(["predict", "--model", bundle_dir, "--csv", plant_csv], capsys)
    assert code == 0
    assert "2016-07-26 00:00:00" in out and "2016-07-26 11:00:00" in out and "OT" in out


@pytest.fixture(scope="module")
def bad_files(plant_csv: Path, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad")
    frame = pd.read_csv(plant_csv)
    frame.rename(columns={"MUFL": "mufl"}).to_csv(root / "renamed.csv", index=False)
    frame.iloc[:20].to_csv(root / "short.csv", index=False)
    halfhourly = frame.assign(Messzeit=pd.date_range("2016-07-01", periods=len(frame), freq="30min"))
    halfhourly.to_csv(root / "halfhourly.csv", index=False)
    frame.assign(HUFL=1e308).to_csv(root / "huge.csv", index=False)
    names = ("renamed", "short", "halfhourly", "huge")
    return {**{name: root / f"{name}.csv" for name in names}, "root": root}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--dataset", "ETTm2", "--horizon", "96"], "required: --out"),
        (
            ["train", "--dataset", "NoSuchSet", "--horizon", "96", "--out", "{root}/x"],
            "unknown dataset 'NoSuchSet'",
        ),
        (["evaluate", "--model", "{bundle}", "--csv", "{renamed}"], "missing column(s) 'MUFL'"),
        (
            ["predict", "--model", "{bundle}", "--csv", "{short}"],
            "short.csv: expected at least 24 rows (the model's input_size), got 20",
        ),
        (["evaluate", "--model", "{root}/nothing", "--dataset", "ETTh1"], "no model bundle at"),
        (
            ["evaluate", "--model", "{bundle}", "--csv", "{halfhourly}"],
            "halfhourly.csv: rows at frequency '30min'; model 'plant' was trained on 'h' rows",
        ),
        (
            ["calibrate", "--model", "{bundle}", "--csv", "{halfhourly}", "--on", "all"],
            "rows at frequency '30min'",
        ),
        (
            ["predict", "--model", "{bundle}", "--csv", "{halfhourly}"],
            "halfhourly.csv: line 3: 2016-07-01 00:30:00 does not follow the model's frequency 'h'",
        ),
        (["predict", "--model", "{bundle}", "--csv", "{huge}"],
         "value 1e+308 in column 'HUFL'; expected numbers of |value| <= 1.84e+19, as train takes"),
        (
            ["predict", "--model", "{bundle}", "--csv", "{halfhourly}", "--horizon", "13"],
            "1 <= horizon <= 12",
        ),
        (
            ["train", "--csv", "{short}", "--horizon", "12", "--out", "{bundle}"],
            "already exists; --overwrite (overwrite=True in Python) replaces it",
        ),
        (
            ["train", "--csv", "{short}", "--horizon", "4", "--out", "{root}", "--overwrite"],
            "is a folder forecaster did not write (no config.json in it)",
        ),
        (["train", "--csv", "{short}", "--horizon", "4", "--out", "{short}"], "short.csv is a file; expect"),
        (["predict", "--model", "{bundle}", "--csv", "{short}", "--output", "{root}"], "is a folder; expect"),
        (
            ["predict", "--model", "{bundle}", "--csv", "{short}", "--plot", "{root}/plot.txtz"],
            "'.txtz' is not an image format; expected one of ",
        ),
        (["train", "--csv", "{short}", "--horizon", "4", "--out", ".", "--overwrite"], "names no folder"),
        (["predict", "--model", "{bundle}", "--csv", "{short}", "--level", "80,100"], "<= 99, got 100"),
        (
            ["train", "--csv", "{short}", "--date-col", "Messzeit", "--horizon", "4", "--levels", "80",
             "--loss", "mse", "--out", "{root}/x"],
            "--levels sets the levels of a quantile head",
        ),  # fmt: skip
        (
            ["train", "--csv", "{short}", "--date-col", "Messzeit", "--horizon", "4", "--model", "dlinear",
             "--loss", "quantile", "--out", "{root}/x"],
            "--loss quantile needs a model with a quantile head",
        ),  # fmt: skip
    ],
)
def test_bad_input_prints_one_line_and_exits_2(argv, message, bundle_dir, bad_files, capsys):
    names = {"bundle": bundle_dir, **bad_files}
    code, out, err = run_cli([arg.format(**names) for arg in argv], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("forecaster") and message in lines[0]


def test_a_full_disk_under_predict_output_is_one_line_and_leaves_no_file(
    bundle_dir, plant_csv, tmp_path, capsys, monkeypatch
):
    def full_disk(frame, path, **options):
        Path(path).write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full_disk)
    out = tmp_path / "forecast.csv"
    argv = ["predict", "--model", bundle_dir, "--csv", plant_csv, "--output", str(out)]
    code, _, err = run_cli(argv, capsys)
    assert code == 1 and err.strip() == f"forecaster: error: {out}: No space left on device"
    assert os.listdir(tmp_path) == []


def test_a_quantile_head_is_trained_calibrated_and_scored_beside_its_raw_intervals(
    plant_csv, tmp_path, capsys
):
    """--loss quantile trains the head (pinball beside MSE); the bundle's intervals are its conformalized
    quantiles; train and `evaluate --level` print the same coverage, and the JSON also has the raw head's."""
    out = tmp_path / "quantile"
    quantile = ["--preset", "reference", "--loss", "quantile", "--out", out]
    code, text, err = run_cli(["train", "--csv", plant_csv, *CSV_TRAIN, *quantile], capsys)
    assert code == 0, err
    bundle = load_bundle(out)
    assert bundle.model.config.quantile_levels == [80, 95] and bundle.calibration.method == "quantile"
    assert bundle.calibration.levels == (80, 95) and "validation split" in bundle.calibration.source
    coverage = bundle.metrics["intervals"]["80"]["coverage"]
    assert f"80% interval: coverage {coverage:.3f}" in text
    evaluate = ["evaluate", "--model", out, "--csv", plant_csv, "--level", "80,95", "--json"]
    code, text, _ = run_cli(evaluate, capsys)
    result = json.loads(text)
    assert result["intervals"] == bundle.metrics["intervals"]
    assert set(result["intervals_head"]) == {"80", "95"}
    plot = tmp_path / "bands.png"
    code, text, err = run_cli(
        ["predict", "--model", out, "--csv", plant_csv, "--level", "95", "--plot", plot], capsys
    )
    assert code == 0, err
    assert "OT-lo-95" in text and "OT-hi-95" in text and plot.read_bytes()[:4] == b"\x89PNG"


def test_a_bundle_reads_new_rows_the_way_its_training_rows_were_read(tmp_path, capsys):
    """Trained with --fill-missing interpolate on a weekly file with missing weeks and cells, the bundle
    predicts on that same file with no flag; a quarterly file with year and quarter columns trains with
    --date-from and its forecast continues the quarters."""
    rng = np.random.default_rng(0)
    weeks = pd.date_range("2015-01-04", periods=160, freq="W-SUN")
    weekly = pd.DataFrame({"week": weeks.strftime("%Y-%m-%d"), "sales": 10 + rng.normal(0, 1, 160)})
    weekly = weekly.drop(index=[20, 21, 100]).reset_index(drop=True)
    weekly.loc[50, "sales"] = np.nan
    weekly.to_csv(tmp_path / "weekly.csv", index=False)
    small = [*TINY, "--max-epochs", "1", "--seeds", "1", "--no-progress"]
    code, _, err = run_cli(["train", "--csv", tmp_path / "weekly.csv", "--date-col", "week", "--fill-missing",
                            "interpolate", "--horizon", "4", "--input-size", "26", *small,
                            "--out", tmp_path / "weekly"], capsys)  # fmt: skip
    assert code == 0, err
    assert load_bundle(tmp_path / "weekly").data.read_options()["fill_missing"] == "interpolate"
    predict = ["predict", "--model", tmp_path / "weekly", "--csv", tmp_path / "weekly.csv"]
    code, out, err = run_cli(predict, capsys)
    assert code == 0, err
    assert "2018-01-28" in out  # the week after the last one (160 weeks from 2015-01-04)

    quarters = pd.DataFrame({"year": np.repeat(np.arange(1990, 2020), 4), "quarter": [1, 2, 3, 4] * 30})
    quarters["gdp"] = 100 + np.arange(120) * 0.5 + rng.normal(0, 1, 120)
    quarters.to_csv(tmp_path / "macro.csv", index=False)
    dates = ["--date-from", "year,quarter", "--horizon", "4", "--input-size", "12"]
    train = ["train", "--csv", tmp_path / "macro.csv", *dates, *small, "--out", tmp_path / "macro"]
    code, _, err = run_cli(train, capsys)
    assert code == 0, err
    bundle = load_bundle(tmp_path / "macro")
    assert bundle.data.freq == "QS-JAN" and bundle.data.date_from == ["year", "quarter"]
    predict = ["predict", "--model", tmp_path / "macro", "--csv", tmp_path / "macro.csv"]
    code, out, err = run_cli(predict, capsys)
    assert code == 0, err
    assert "\n2020 1 " in out and "\n2020 4 " in out  # in the file's year and quarter columns


def tree_keys(value, prefix: str = "") -> set[str]:
    if not isinstance(value, dict):
        return {prefix}
    return {key for name, child in value.items() for key in tree_keys(child, f"{prefix}/{name}")}


def tensor_shapes(bundle: Path) -> dict[str, list[int]]:
    with safe_open(bundle / "weights.safetensors", framework="pt") as weights:
        return {name: weights.get_slice(name).get_shape() for name in weights.keys()}  # noqa: SIM118


@pytest.mark.slow
def test_ddp_on_two_cpu_processes_writes_a_normal_bundle(bundle_dir, plant_csv, tmp_path):
    out = tmp_path / "ddp"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    argv = ["train", "--csv", plant_csv, *CSV_TRAIN, "--devices", "2", "--strategy", "ddp", "--out", out]
    result = subprocess.run(
        [str(FORECASTER), *map(str, argv)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "bundle saved to" in result.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in bundle_dir.iterdir())
    ddp_config = json.loads((out / "config.json").read_text())
    plain_config = json.loads((bundle_dir / "config.json").read_text())
    assert tree_keys(ddp_config) == tree_keys(plain_config)
    assert ddp_config["model"] == plain_config["model"] and ddp_config["data"] == plain_config["data"]
    assert (ddp_config["training"]["world_size"], plain_config["training"]["world_size"]) == (2, 1)
    assert tensor_shapes(out) == tensor_shapes(bundle_dir)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics.keys() == json.loads((bundle_dir / "metrics.json").read_text()).keys()
    assert metrics["windows"] == 109  # rank 0 scores every test window once
    load_bundle(out)


@pytest.mark.slow
def test_etth2_train_then_evaluate_json(data_dir, tmp_path):
    """ETTh2, not ETTm2: a quarter of the test windows to score, twice (the suite's budget)."""
    env = {**os.environ, "FORECASTER_DATA_DIR": str(data_dir), "OMP_NUM_THREADS": "1"}
    train = [
        "train", "--dataset", "ETTh2", "--horizon", "96", *TINY, "--max-epochs", "1",
        "--limit-train-batches", "2", "--no-progress", "--out", "runs/x",
    ]  # fmt: skip
    result = subprocess.run([str(FORECASTER), *train], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    evaluate = ["evaluate", "--model", "runs/x", "--dataset", "ETTh2", "--json"]
    result = subprocess.run(
        [str(FORECASTER), *evaluate], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads(result.stdout)
    # 7:1:2 of 17420 rows: the test split is the last 3484 rows plus 96 of history -> 3580 - 96 - 96 + 1.
    assert metrics["windows"] == 3389
    saved = json.loads((tmp_path / "runs" / "x" / "metrics.json").read_text())
    scores = {key: value for key, value in metrics.items() if not isinstance(value, dict)}
    assert scores == {key: saved[key] for key in scores}
    for baseline in ("naive", "seasonal_naive"):  # the same windows' forecasts, as training scored them
        assert metrics[baseline] == {key: saved[baseline][key] for key in scores}
    config = json.loads((tmp_path / "runs" / "x" / "config.json").read_text())
    assert config["data"]["input_size"] == 96 and config["model"]["config"]["d_model"] == 8
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_output_into_a_closed_pipe_ends_without_a_traceback(data_dir: Path) -> None:
    """`forecaster ... | head` with a reader that stops early: exit 1 quietly (Python's SIGPIPE recipe)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([str(FORECASTER), "data", "describe", "ILI", "--data-dir", str(data_dir)],
                                stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr, result.stderr


def test_a_neuralforecast_peer_trains_without_lightnings_lines(plant_csv, tmp_path):
    """PatchTST trains through neuralforecast, which imports the standalone Lightning packages and seeds
    every model it builds: 64 lines of banners and "Seed set to" for one fit (h62), none now."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    argv = ["train", "--csv", str(plant_csv), "--date-col", "Messzeit", "--targets", "OT", "--horizon", "6",
            "--input-size", "24", "--model", "patchtst", "--max-epochs", "1", "--limit-train-batches", "2",
            "--seeds", "1", "--accelerator", "cpu", "--out", str(tmp_path / "peer")]  # fmt: skip
    quiet = subprocess.run([str(FORECASTER), *argv], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    chatter = ("Seed set", "GPU available", "TPU available", "Trainer.fit", "Warning")
    assert not [word for word in chatter if word in quiet.stdout + quiet.stderr], quiet.stderr[-2000:]


def test_patchtst_trains_on_a_short_yearly_file_as_its_peers_do(tmp_path, capsys):
    """15 yearly rows at horizon 3: an input of 3 steps is one patch, and a batch of one window gave
    PatchTST's BatchNorm one value per channel: an internal error, exit status 3 (h82 F5)."""
    csv, out = tmp_path / "yearly.csv", tmp_path / "patchtst"
    values = 100 + 2.0 * np.arange(15) + np.random.default_rng(0).normal(size=15)
    pd.DataFrame({"year": np.arange(2009, 2024), "value": values.round(2)}).to_csv(csv, index=False)
    argv = ["train", "--csv", csv, "--horizon", 3, "--model", "patchtst", "--max-epochs", 1, "--seeds", 1,
            "--accelerator", "cpu", "--no-progress", "--out", out]  # fmt: skip
    code, printed, err = run_cli(argv, capsys)
    assert code == 0, err
    assert "input 3 steps" in printed and load_bundle(out).model_name == "patchtst"


def test_a_default_train_prints_only_its_own_lines(plant_csv, tmp_path):
    """Progress bar aside: no Lightning banners, tips or deprecation warnings unless --verbose."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with_progress = [arg for arg in CSV_TRAIN if arg != "--no-progress"]
    argv = ["train", "--csv", str(plant_csv), *with_progress, "--out", str(tmp_path / "quiet")]
    quiet = subprocess.run([str(FORECASTER), *argv], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    chatter = ("GPU available", "TPU available", "Tip:", "LeafSpec", "Warning", "Trainable params")
    assert not [word for word in chatter if word in quiet.stdout + quiet.stderr], quiet.stderr[-2000:]
    evaluate = ["evaluate", "--model", str(tmp_path / "quiet"), "--csv", str(plant_csv)]
    scored = subprocess.run([str(FORECASTER), *evaluate], capture_output=True, text=True, env=env)
    assert scored.returncode == 0 and scored.stderr == "" and scored.stdout.startswith("model quiet")
    argv = [*argv[:-1], str(tmp_path / "verbose"), "--verbose"]
    verbose = subprocess.run([str(FORECASTER), *argv], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "GPU available" in verbose.stdout + verbose.stderr
    version = subprocess.run([str(FORECASTER), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"forecaster {forecaster.__version__}"


def test_a_short_yearly_file_trains_on_a_holdout_split_with_an_input_that_fits(tmp_path, capsys):
    """39 yearly rows: 7:1:2 leaves 4 validation years for a 6-year horizon, and 96 input years no window;
    the kept forecast, drift, reads the 39 - 2 * 6 = 27 years before validation (a default of 11 is short)."""
    years = np.arange(1985, 2024)
    values = 50 * 1.01 ** np.arange(len(years)) + np.random.default_rng(0).normal(0, 0.1, len(years))
    csv, out = tmp_path / "population.csv", tmp_path / "population"
    pd.DataFrame({"year": years, "population": values.round(3)}).to_csv(csv, index=False)
    argv = ["train", "--csv", csv, "--horizon", 6, *TINY, "--max-epochs", 2, "--seeds", 1, "--no-progress"]
    code, printed, err = run_cli([*argv, "--out", out], capsys)
    assert code == 0, err
    assert "split holdout, input 27 steps, horizon 6: windows 0 train, 1 val, 1 test" in printed
    bundle = load_bundle(out)
    assert (bundle.model_name, bundle.data.split, bundle.data.input_size) == ("drift", "holdout", 27)
    forecast_csv = tmp_path / "f.csv"
    code, printed, err = run_cli(["predict", "--model", out, "--csv", csv, "--output", forecast_csv], capsys)
    assert code == 0, err
    forecast = pd.read_csv(forecast_csv)
    assert forecast["year"].astype(str).str[:4].tolist() == [str(year) for year in range(2024, 2030)]


def test_rows_too_few_for_the_default_model_choose_as_auto_does_a_named_model_is_one_line(tmp_path, capsys):
    """25 yearly rows on a line, horizon 8: holdout leaves 9 train rows, so an input of 1 step, which
    S3Attention (input >= 2) cannot read: with no model named, the run chooses as --model auto does among the
    candidates that can (drift reads the 9 years before validation, mean 2 steps, from no train window), with
    a note; a model named with settings of its own that cannot read it is refused in one line."""
    csv = tmp_path / "yearly.csv"
    frame = pd.DataFrame({"year": np.arange(1999, 2024), "value": np.linspace(10, 30, 25).round(2)})
    frame.to_csv(csv, index=False)
    argv = ["train", "--csv", csv, "--horizon", 8, *TINY, "--max-epochs", 1, "--no-progress"]
    code, _, err = run_cli([*argv, "--preset", "reference", "--out", tmp_path / "reference"], capsys)
    assert code == 2 and err.strip() == (
        f"forecaster: error: {csv}: 25 rows leave s3attention an input of 1 step(s) before the validation "
        "and test horizons of 8; it needs at least 2: expected more rows or a shorter --horizon (--model "
        "naive forecasts from 1 step)")
    assert not (tmp_path / "reference").exists()
    note = (r"note: 25 rows leave s3attention an input of 1 step\(s\) before the validation and test "
            r"horizons of 8; it needs at least 2: chose as --model auto does, among the models that fit$")
    chosen = {}
    for model in ("auto", None):
        out, named = tmp_path / str(model), ["--model", model] if model else []
        with pytest.warns(DataQualityWarning, match=note) if model is None else contextlib.nullcontext():
            code, printed, err = run_cli([*argv, *named, "--out", out], capsys)
        assert code == 0, err
        chosen[model] = printed.split("chose ")[1].splitlines()[0]
        assert "s3attention" not in chosen[model]  # not among the candidates
        bundle = load_bundle(out)
        assert (bundle.model_name, bundle.data.input_size) == ("drift", 9)  # a line's own forecast
        # one line per candidate as it starts, so a long choice is not silent
        progress = [line for line in err.splitlines() if "training candidate" in line]
        assert progress == [f"forecaster: training candidate {k} of 6: {name}" for k, name in
                            enumerate(["naive", "drift", "mean", "holt_winters", "nlinear", "dlinear"],
                                      start=1)]  # fmt: skip
    assert chosen["auto"] == chosen[None]
    assert load_bundle(tmp_path / "None").training["model"] == "auto"


def test_a_series_too_short_for_a_panel_of_independent_series_is_left_out_with_a_note(tmp_path, capsys):
    """Three 60-month series and one of 3 months: the long one train one model; the short one is named."""
    months = pd.period_range("2019-01", periods=60, freq="M").astype(str)
    rng = np.random.default_rng(0)
    rows = [(name, month, 10 + rng.normal()) for name in ("US", "DE", "FR") for month in months]
    rows += [("LU", month, 1.0) for month in months[-3:]]
    csv = tmp_path / "panel.csv"
    pd.DataFrame(rows, columns=["unique_id", "ds", "y"]).to_csv(csv, index=False)
    argv = ["train", "--csv", csv, "--horizon", 4, "--channels", "independent", *TINY, "--max-epochs", 1,
            "--seeds", 1, "--no-progress", "--out", tmp_path / "panel"]  # fmt: skip
    with pytest.warns(DataQualityWarning, match=r"note: left out 1 of 4 series too short .*: 'LU'$"):
        code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    assert load_bundle(tmp_path / "panel").data.columns == ["US", "DE", "FR"]


def test_a_panel_series_too_short_for_7_1_2_is_split_holdout_not_left_out(tmp_path, capsys):
    """Two 46-quarter series and one of 40 at horizon 5: under 7:1:2 the short one has 4 validation rows and
    was left out (so never forecast); split auto gives it holdout and the others 7:1:2, and the window counts
    are those of each series under its own scheme."""
    from forecaster.data.splits import split_borders, window_counts

    rng, rows, lengths = np.random.default_rng(0), [], {"A": 46, "B": 40, "C": 46}
    for name, length in lengths.items():
        quarters = pd.period_range(end="2020Q4", periods=length, freq="Q").astype(str)
        values = 100 + rng.normal(size=length).cumsum()
        rows += [(name, quarter, value) for quarter, value in zip(quarters, values, strict=True)]
    csv = tmp_path / "panel.csv"
    pd.DataFrame(rows, columns=["country", "quarter", "value"]).to_csv(csv, index=False)
    argv = ["train", "--csv", csv, "--horizon", 5, "--input-size", 8, *TINY, "--max-epochs", 1, "--seeds", 1,
            "--no-progress", "--out", tmp_path / "panel"]  # fmt: skip
    with pytest.warns(DataQualityWarning, match=r"1 series split holdout, 'B' \(40 rows\)$"):
        code, printed, err = run_cli(argv, capsys)
    assert code == 0, err
    bundle = load_bundle(tmp_path / "panel")
    assert (bundle.data.columns, bundle.data.split) == (["A", "B", "C"], "auto")
    expected = {"train": 0, "val": 0, "test": 0}
    for length in lengths.values():
        scheme = "holdout" if length == 40 else "7:1:2"
        counts = window_counts(split_borders(length, 8, scheme, horizon=5), 8, 5)
        expected = {name: expected[name] + counts[name] for name in expected}
    assert bundle.training["windows"] == expected == {"train": 58, "val": 3, "test": 11}
    assert "split auto (7:1:2 or holdout, series by series), input 8 steps" in printed
    code, forecast, err = run_cli(["predict", "--model", tmp_path / "panel", "--csv", csv], capsys)
    assert code == 0, err
    assert [line.split()[0] for line in forecast.splitlines()[1:]] == ["A"] * 5 + ["B"] * 5 + ["C"] * 5


def test_a_data_quality_note_prints_as_one_line_of_its_own(bundle_dir, plant_csv, tmp_path):
    """Three missing hours filled while reading: the project's note, not Python's file:line and source, and
    not called a warning (it said "forecaster: warning: gapped.csv: note: ...": it informs)."""
    gapped = tmp_path / "gapped.csv"
    pd.read_csv(plant_csv).drop(index=[300, 301, 302]).to_csv(gapped, index=False)
    argv = ["predict", "--model", bundle_dir, "--csv", gapped.name, "--output", "forecast.csv"]
    result = subprocess.run(
        [str(FORECASTER), *map(str, argv)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.splitlines() == [
        "forecaster: gapped.csv: note: filled 3 missing time step(s) by linear interpolation"
        " (--fill-missing to choose the method, --fill-missing none to refuse)"
    ]


def test_no_date_on_the_command_line_indexes_rows_by_integer_steps(tmp_path, capsys):
    """`--no-date` is on when given (a BooleanOptionalAction read the flag's own `--no-` as "off", so the
    refusal named the flag just given): train, predict and describe read a table with no dates."""
    csv = tmp_path / "heartrate.csv"
    pd.DataFrame({"hr": 80 + np.sin(np.arange(150) / 5).round(3)}).to_csv(csv, index=False)
    out, forecast = tmp_path / "hr", tmp_path / "forecast.csv"
    argv = ["train", "--csv", csv, "--no-date", "--horizon", 10, "--model", "naive", "--out", out]
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    assert load_bundle(out).data.read_options()["no_date"] is True
    code, _, err = run_cli(["predict", "--model", out, "--csv", csv, "--output", forecast], capsys)
    assert code == 0, err
    assert pd.read_csv(forecast)["step"].tolist() == list(range(150, 160))
    code, printed, err = run_cli(["data", "describe", "--csv", csv, "--no-date"], capsys)
    assert code == 0 and "date col   - (integer steps)" in printed, err


def test_a_kept_forecast_without_train_windows_says_it_needs_none(tmp_path, capsys):
    """Seasonal mean over two years of weekly rows leaves the train split no window of its input: the split
    line read 'windows 0 train', as if training had failed."""
    weeks = pd.date_range("2021-01-04", periods=150, freq="W-MON")
    values = 100 + 30 * np.sin(2 * np.pi * np.arange(150) / 52)
    pd.DataFrame({"week": weeks, "units": values}).to_csv(tmp_path / "weekly.csv", index=False)
    train = ["train", "--csv", str(tmp_path / "weekly.csv"), "--model", "seasonal_mean", "--horizon", "8",
             "--no-progress", "--out", str(tmp_path / "model")]  # fmt: skip
    assert main(train) == 0
    said = "windows 0 train, 8 val, 23 test (the kept forecast fits nothing: it needs no train window)"
    assert said in capsys.readouterr().out


@pytest.mark.parametrize("lengths", [(5, 6, 7), (7, 8, 9)])
def test_a_short_unbalanced_panel_forecasts_every_series_a_baseline_can(tmp_path, capsys, lengths):
    """EmplUK's shape (firms of 7-9 years; 5-7 with the last 2 held out) at horizon 2: every series holds
    naive's windows (1 + 2 x 2 rows), so none is left out. The held-out cut had been refused at its first
    firm of 5 rows (drift planned on the longest's 7), the full one had left out every firm of 7 (judged by
    drift's 2-step input as if trained: 8 rows) from a naive forecast that needs 5."""
    rng, rows, last = np.random.default_rng(0), [], {}
    for k in range(30):
        length = lengths[0] if k < 20 else lengths[1] if k < 26 else lengths[2]
        values = np.round(5 + rng.normal(size=length).cumsum(), 3)
        rows += [(f"f{k}", 1990 - length + t, value) for t, value in enumerate(values)]
        last[f"f{k}"] = values[-1]
    csv = tmp_path / "firms.csv"
    pd.DataFrame(rows, columns=["firm", "year", "emp"]).to_csv(csv, index=False)
    with pytest.warns(DataQualityWarning) as said:
        code, _, err = run_cli(["train", "--csv", csv, "--id-col", "firm", "--horizon", 2, "--no-progress",
                                "--seeds", 1, "--out", tmp_path / "m"], capsys)  # fmt: skip
    assert code == 0, err
    assert not [warning for warning in said if "left out" in str(warning.message)]
    assert load_bundle(tmp_path / "m").data.columns == list(last)
    code, forecast, err = run_cli(["predict", "--model", tmp_path / "m", "--csv", csv, "--output",
                                   tmp_path / "p.csv"], capsys)  # fmt: skip
    assert code == 0, err
    answered = pd.read_csv(tmp_path / "p.csv")
    assert sorted(answered["firm"].unique()) == sorted(last)
    if lengths[0] == 5:  # only naive holds a firm of 5 rows: each forecast is its firm's last value
        assert load_bundle(tmp_path / "m").model_name == "naive"
        point = answered.groupby("firm")[answered.columns[2]].agg(["min", "max"])
        assert np.allclose(point["min"], [last[name] for name in point.index])
        assert np.allclose(point["max"], point["min"])


def test_a_panel_of_few_long_series_among_short_ones_plans_the_models_its_input_holds(tmp_path):
    """10 series of 100 years beside 90 of 6 at horizon 2: the default input (34 steps, the long series'; a
    trained model needs 7 rows) leaves the short ones out whatever is planned, so the models are judged on the
    long ones. Judged on the short ones' 6 rows, no model of that input was planned and `--model auto` refused
    the panel (h109); before h108 the long ones trained, and they do again."""
    from forecaster.training.planning import plan_fitting
    from forecaster.training.settings import TrainSettings
    from forecaster.training.workflows import without_short_series

    rng, rows = np.random.default_rng(0), []
    for k in range(100):
        length = 100 if k < 10 else 6
        rows += [(f"s{k}", 2000 - length + t, 5 + v) for t, v in enumerate(rng.normal(size=length).cumsum())]
    pd.DataFrame(rows, columns=["id", "year", "y"]).to_csv(tmp_path / "p.csv", index=False)
    with pytest.warns(DataQualityWarning, match="left out 90 of 100 series"):
        series = read_csv(tmp_path / "p.csv", id_col="id")
        settings, planned = plan_fitting(TrainSettings(horizon=2, model_name="auto"), series)
        kept = without_short_series(series, settings, planned)
    assert {"naive", "nlinear", "s3attention"} <= {candidate.model_name for candidate in planned}
    assert kept.columns == [f"s{k}" for k in range(10)]


def test_a_short_unbalanced_panel_under_split_holdout_keeps_the_series_split_auto_keeps(tmp_path):
    """EmplUK's held-out shape (20 firms of 5 years, 6 of 6, 4 of 7) at horizon 2 splits every firm holdout
    under split auto, and --split holdout is that split: both plan naive alone and keep all 30 firms (the
    panel's rows were read for auto only, and --split holdout left 26 firms out, h109)."""
    from forecaster.training.planning import plan_fitting
    from forecaster.training.settings import TrainSettings
    from forecaster.training.workflows import without_short_series

    rng, rows = np.random.default_rng(0), []
    for k in range(30):
        length = 5 if k < 20 else 6 if k < 26 else 7
        rows += [(f"f{k}", 1990 - length + t, 5 + v) for t, v in enumerate(rng.normal(size=length).cumsum())]
    pd.DataFrame(rows, columns=["firm", "year", "emp"]).to_csv(tmp_path / "e.csv", index=False)
    series = read_csv(tmp_path / "e.csv", id_col="firm")
    for split in ("auto", "holdout"):
        settings, planned = plan_fitting(TrainSettings(horizon=2, model_name="auto", split=split), series)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            kept = without_short_series(series, settings, planned)
        assert [candidate.model_name for candidate in planned] == ["naive"], split
        assert len(kept.columns) == 30 and not [note for note in said if "left out" in str(note.message)]


def test_the_left_out_note_names_the_model_whose_windows_a_series_lacks(tmp_path):
    """20 months at horizon 4 hold seasonal naive's 12 steps (2 x 4 rows after them, no train window) but
    not a trained input of 9 (3 x 4): the note named the longest input planned, 12, which they hold (h109)."""
    from forecaster.training.planning import Candidate
    from forecaster.training.settings import TrainSettings
    from forecaster.training.workflows import without_short_series

    rng, rows = np.random.default_rng(0), []
    for k in range(30):
        dates = pd.date_range(end="2020-12-01", periods=40 if k < 27 else 20, freq="MS").strftime("%Y-%m")
        values = 50 + rng.normal(size=len(dates)).cumsum()
        rows += [(f"s{k}", date, value) for date, value in zip(dates, values, strict=True)]
    pd.DataFrame(rows, columns=["id", "month", "y"]).to_csv(tmp_path / "m.csv", index=False)
    series = read_csv(tmp_path / "m.csv", id_col="id")
    planned = [Candidate("nlinear", "nlinear", {}, 1e-3, 9),
               Candidate("seasonal_naive", "seasonal_naive", {"season": 12}, 1e-3, 12)]  # fmt: skip
    said = r"left out 3 of 30 series .* horizon 4 and the input of nlinear \(9 steps\): 's27', 's28', 's29'$"
    with pytest.warns(DataQualityWarning, match=said):
        kept = without_short_series(series, TrainSettings(horizon=4, model_name="auto"), planned)
    assert len(kept.columns) == 27


def _long_and_short_panel(path, short_length: int) -> dict[str, float]:
    """10 random walks of 100 years beside 90 of `short_length` (h109's R4/R5 shape), written to `path`; each
    series' last value."""
    rng, rows, last = np.random.default_rng(0), [], {}
    for k in range(100):
        length = 100 if k < 10 else short_length
        values = np.round(5 + rng.normal(size=length).cumsum(), 3)
        rows += [(f"s{k}", 2000 - length + t, value) for t, value in enumerate(values)]
        last[f"s{k}"] = values[-1]
    pd.DataFrame(rows, columns=["id", "year", "y"]).to_csv(path, index=False)
    return last


def test_a_named_split_on_a_panel_sizes_the_default_input_as_split_auto_does(tmp_path):
    """Each series of a panel is split over its own rows under --split holdout as under auto, so the default
    input is sized on the series alike: under holdout it had been the longest series' (47 steps), and the 90
    series of 20 years that auto trains S3Attention on were left out (h109 R4)."""
    from forecaster.training.planning import plan_fitting
    from forecaster.training.settings import TrainSettings
    from forecaster.training.workflows import without_short_series

    _long_and_short_panel(tmp_path / "p.csv", 20)
    series = read_csv(tmp_path / "p.csv", id_col="id")
    for split in (None, "holdout"):
        settings, planned = plan_fitting(TrainSettings(horizon=2, split=split), series)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            kept = without_short_series(series, settings, planned)
        assert [candidate.model_name for candidate in planned] == ["s3attention"], split
        assert planned[0].input_size <= 7, split
        assert len(kept.columns) == 100 and not [note for note in said if "left out" in str(note.message)]


@pytest.mark.parametrize(("model", "input_size", "kept"), [("naive", 1, 100), ("drift", 34, 10)])
def test_a_named_baseline_on_a_panel_reads_the_input_its_forecast_needs(tmp_path, model, input_size, kept):
    """Naive, named, is sized on the series it splits without a train window: on 90 series of 6 years beside
    10 of 100 at horizon 2 it read the trained models' 34 steps and left the 90 out (h109 R5); from 1 step it
    forecasts the same. Drift keeps the 34 steps its slope is read from (from 2, the long series' forecasts
    changed and lost to naive, h113), and the 90 stay out with the note."""
    from forecaster.training.planning import plan_fitting
    from forecaster.training.settings import TrainSettings
    from forecaster.training.workflows import without_short_series

    _long_and_short_panel(tmp_path / "p.csv", 6)
    series = read_csv(tmp_path / "p.csv", id_col="id")
    settings, planned = plan_fitting(TrainSettings(horizon=2, model_name=model), series)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        kept_series = without_short_series(series, settings, planned)
    assert [(candidate.model_name, candidate.input_size) for candidate in planned] == [(model, input_size)]
    assert len(kept_series.columns) == kept
    assert len([note for note in said if "left out 90 of 100" in str(note.message)]) == (kept < 100)


def test_a_named_naive_on_a_panel_forecasts_every_series_it_can(tmp_path, capsys):
    """--model naive forecasts a series of 6 years from its last value at horizon 2 (5 rows: validation and
    test windows), and predict answers all 100 series of h109's R5 panel, each with its last value (it had
    read 34 steps and forecast none of the 90)."""
    last = _long_and_short_panel(tmp_path / "p.csv", 6)
    with pytest.warns(DataQualityWarning) as said:
        code, _, err = run_cli(["train", "--csv", tmp_path / "p.csv", "--id-col", "id", "--horizon", 2,
                                "--model", "naive", "--no-progress", "--out", tmp_path / "m"],
                               capsys)  # fmt: skip
    assert code == 0, err
    assert not [warning for warning in said if "left out" in str(warning.message)]
    code, _, err = run_cli(["predict", "--model", tmp_path / "m", "--csv", tmp_path / "p.csv", "--output",
                            tmp_path / "f.csv"], capsys)  # fmt: skip
    assert code == 0, err
    answered = pd.read_csv(tmp_path / "f.csv")
    point = answered.groupby("id")[answered.columns[2]].agg(["min", "max"])
    assert sorted(point.index) == sorted(last)
    assert np.allclose(point["min"], [last[name] for name in point.index])
    assert np.allclose(point["max"], point["min"])


def test_a_named_seasonal_naive_on_a_panel_keeps_an_input_that_holds_its_season(tmp_path):
    """Seasonal naive repeats a season, so the input naive is sized to on a panel (1 step, counting the series
    split without a train window) is none for it: 28 monthly series of 120 rows beside 12 of 13-18 at horizon
    6 had seasonal naive forecast the 28, then refused ("the input is 1", h116 R2)."""
    from forecaster.training.planning import plan_fitting
    from forecaster.training.settings import TrainSettings

    rng, rows = np.random.default_rng(0), []
    for k in range(40):
        length = 120 if k < 28 else 13 + k % 6
        dates = pd.date_range(end="2019-12-01", periods=length, freq="MS")
        values = 100 + 20 * np.sin(2 * np.pi * dates.month / 12) + rng.normal(0, 1, length)
        rows += [(f"s{k}", date.date(), round(value, 2)) for date, value in zip(dates, values, strict=True)]
    pd.DataFrame(rows, columns=["id", "date", "y"]).to_csv(tmp_path / "p.csv", index=False)
    series = read_csv(tmp_path / "p.csv", id_col="id")
    for split in (None, "holdout"):
        _, planned = plan_fitting(TrainSettings(horizon=6, model_name="seasonal_naive", split=split), series)
        assert [candidate.model_name for candidate in planned] == ["seasonal_naive"], split
        assert planned[0].input_size >= planned[0].model_options.get("season", 12) == 12, split

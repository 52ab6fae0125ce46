"""A panel's companion (`forecaster.training.companion`): the series too short for the kept model's windows
that naive's windows fit are forecast by the forecast that fits nothing best on their validation windows."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_cli_train import run_cli
from test_service import serving

from forecaster.api import Forecaster
from forecaster.artifacts import COMPANION, load_bundle
from forecaster.cli import main
from forecaster.data import DataQualityWarning
from forecaster.errors import BundleError

HORIZON = 1  # each validation window a block: two series give `keep_best` two to judge by
SHORT = ["short0", "short1"]


def _panel(path: Path, trend: bool, shorts: tuple[str, ...] = tuple(SHORT)) -> None:
    """25 series of 100 days, `shorts` of 12 ending with them (a steady rise, or a level that shifts once)
    and one of 2 (below naive's 1 + 2H rows), in that order but for 'short0', written second."""
    rng, rows, days = np.random.default_rng(0), {}, pd.date_range("2020-01-01", periods=100, freq="D")
    for k in range(25):
        rows[f"long{k}"] = (days, 50 + 5 * np.sin(np.arange(100) / 3) + rng.normal(0, 1, 100))
    for name in shorts:
        rise = np.arange(12) * 3.0 if trend else np.where(np.arange(12) < 3, 0.0, 20.0)  # a level shift
        rows[name] = (days[-12:], 10 + rise + rng.normal(0, 0.3, 12))
    rows["tiny"] = (days[-2:], np.ones(2))
    order = list(dict.fromkeys(["long0", *shorts[:1], *rows]))
    table = [(name, day.date(), round(value, 3))
             for name in order for day, value in zip(*rows[name], strict=True)]  # fmt: skip
    pd.DataFrame(table, columns=["id", "date", "y"]).to_csv(path, index=False)


def _train(
    tmp_path: Path, capsys, trend: bool, shorts: tuple[str, ...] = tuple(SHORT), horizon: int = HORIZON
) -> Path:
    tmp_path.mkdir(exist_ok=True)
    _panel(tmp_path / "p.csv", trend, shorts)
    with pytest.warns(DataQualityWarning):
        code, _, err = run_cli(_train_argv(tmp_path, horizon), capsys)
    assert code == 0, err
    return tmp_path / "m"


def _train_argv(folder: Path, horizon: int = HORIZON) -> list[str]:
    """`train` of the panel `folder`/p.csv into `folder`/m."""
    argv = ["train", "--csv", folder / "p.csv", "--id-col", "id", "--horizon", horizon, "--no-progress",
            "--seeds", 1, "--max-epochs", 1, "--out", folder / "m"]  # fmt: skip
    return [str(arg) for arg in argv]


@pytest.fixture(scope="module")
def rising(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The panel whose short series rise, `p.csv`, and its bundle `m`, as `_train` makes them: trained once
    for the tests that read it or change a copy (`_rising_in`)."""
    folder = tmp_path_factory.mktemp("rising")
    _panel(folder / "p.csv", trend=True)
    with pytest.warns(DataQualityWarning):
        assert main(_train_argv(folder)) == 0
    return folder


def _rising_in(rising: Path, tmp_path: Path) -> Path:
    """A copy of `rising` in `tmp_path` (p.csv and the bundle m, as `_train(tmp_path, capsys, trend=True)`
    leaves them): the bundle's path."""
    shutil.copytree(rising, tmp_path, dirs_exist_ok=True)
    return tmp_path / "m"


@pytest.mark.parametrize(("trend", "kept", "other"), [(True, "drift", "naive"), (False, "naive", "drift")])
def test_the_companion_keeps_the_forecast_lower_on_validation(request, tmp_path, capsys, trend, kept, other):
    """Drift where the short series rise steadily, naive where their level shifted: chosen on their own
    validation windows as train chooses (`workflows.keep_best`: a later forecast that fits nothing only where
    clearly lower), not defaulted to naive (h113: drift was 0.80x naive on one panel's short series, 1.6x on
    another's)."""
    folder = request.getfixturevalue("rising") / "m" if trend else _train(tmp_path, capsys, trend)
    bundle = load_bundle(folder)
    record, companion = bundle.training[COMPANION], bundle.companion
    assert companion is not None and companion.data.columns == SHORT == record["series"]
    assert bundle.training["left_out"] == ["tiny"]
    selection = companion.training["selection"]
    assert companion.training["candidate"] == kept and selection[kept] < selection[other], selection
    if kept == "drift":
        assert selection["drift"] == min(selection.values()), selection
    assert "model" not in record  # its own record names it (`history.companion_model`), once


def test_one_validation_block_is_no_evidence_to_leave_naive(tmp_path, capsys):
    """At horizon 3 the two short series' validation windows make one block: drift lower there is kept only
    on clear evidence, which one block is not (their train splits hold no window to confirm it either).
    Under the rule for the forecasts that fit nothing alone (lower on each period and train split) drift was
    kept here, and on plm Gasoline's short series Holt-Winters so kept scored 2.47x naive's held-out MAE."""
    bundle = load_bundle(_train(tmp_path, capsys, trend=True, horizon=3))
    selection = bundle.companion.training["selection"]
    assert bundle.companion.training["candidate"] == "naive", selection
    assert selection["drift"] < selection["naive"], selection


def test_train_and_predict_answer_every_series_that_holds_naives_windows(rising, tmp_path, capsys):
    """Every series of 1 + 2H rows or more is forecast, in the order the file gave them, with one note naming
    those the companion forecasts; the API and the service answer the same numbers; evaluate scores and
    calibrate calibrates the companion's series by it."""
    model = _rising_in(rising, tmp_path)
    with pytest.warns(DataQualityWarning) as said:
        code, _, err = run_cli(["predict", "--model", model, "--csv", tmp_path / "p.csv", "--level", 80,
                                "--output", tmp_path / "f.csv"], capsys)  # fmt: skip
    assert code == 0, err
    notes = [str(note.message) for note in said if "forecast by drift" in str(note.message)]
    assert len(notes) == 1 and "2 series too short for s3attention" in notes[0], notes
    answered = pd.read_csv(tmp_path / "f.csv")
    names = list(dict.fromkeys(answered["id"]))
    assert names == ["long0", "short0", *[f"long{k}" for k in range(1, 25)], "short1"]
    history = pd.read_csv(tmp_path / "p.csv")
    for name in SHORT:  # drift continues the rise past the last value
        assert (answered.loc[answered["id"] == name, "s3attention"] > history.loc[history["id"] == name, "y"]
                .iloc[-1]).all()  # fmt: skip
    frame = history.assign(date=pd.to_datetime(history["date"]))
    api = Forecaster.load(model).predict(frame, level=[80])
    assert np.allclose(api["s3attention"], answered["s3attention"])
    assert list(dict.fromkeys(api["id"])) == names
    shutil.copytree(model, tmp_path / "served" / "m")
    with serving(tmp_path / "served", max_body_bytes=1_000_000) as client:
        upload = {"file": ("p.csv", (tmp_path / "p.csv").read_text(), "text/csv")}
        response = client.post("/v1/models/m/forecast.csv", files=upload, params={"level": 80})
        assert response.status_code == 200, response.text
        served = pd.read_csv(pd.io.common.StringIO(response.text))
        records = client.post("/v1/models/m/forecast", json={"data": history.to_dict("records")})
        assert records.status_code == 200, records.text
    assert list(dict.fromkeys(served["id"])) == names
    assert np.allclose(served["s3attention"], answered["s3attention"])
    assert np.allclose(served["s3attention-lo-80"], answered["s3attention-lo-80"])
    point = pd.DataFrame(records.json()["forecast"])["s3attention"]
    assert np.allclose(point, answered["s3attention"])
    assert any("forecast by drift" in note for note in records.json()["notes"])
    with pytest.warns(DataQualityWarning):  # evaluate and calibrate: each series by its own model
        code, out, err = run_cli(["evaluate", "--model", model, "--csv", tmp_path / "p.csv", "--json"],
                                 capsys)  # fmt: skip
    assert code == 0, err
    scored = json.loads(out)
    assert 0 < scored[COMPANION]["windows"] < scored["windows"]
    trained = (model / COMPANION / "calibration.safetensors").read_bytes()
    with pytest.warns(DataQualityWarning):
        code, out, err = run_cli(["calibrate", "--model", model, "--csv", tmp_path / "p.csv"], capsys)
    assert code == 0 and f"its companion's calibration ({len(SHORT)} series) written" in out, err
    assert load_bundle(model).companion.calibration is not None
    assert (model / COMPANION / "calibration.safetensors").read_bytes() != trained  # written by calibrate


def test_a_bundle_without_a_companion_loads_and_a_companion_not_its_own_is_refused(rising, tmp_path, capsys):
    """A bundle without a companion (as every bundle before it: a panel whose only short series is below
    naive's rows) loads and forecasts as before; a companion swapped or removed is refused by name (the
    parent's record holds its digest)."""
    old = _train(tmp_path / "old", capsys, trend=True, shorts=())
    loaded = load_bundle(old)
    assert loaded.companion is None and COMPANION not in loaded.training
    assert loaded.training["left_out"] == ["tiny"] and not (old / COMPANION).exists()
    assert len(Forecaster.load(old).predict(pd.read_csv(tmp_path / "old" / "p.csv"))) == 25 * HORIZON
    model = _rising_in(rising, tmp_path)
    for name in ("config.json", "weights.safetensors", "metrics.json", "calibration.safetensors"):
        shutil.copy(old / name, model / COMPANION / name)  # a bundle of its own, not the one saved with it
    with pytest.raises(BundleError, match="not the companion saved with"):
        load_bundle(model)
    shutil.rmtree(model / COMPANION)
    with pytest.raises(BundleError, match="no folder 'short'"):
        load_bundle(model)


def test_a_backtest_forecasts_the_companions_series_from_each_cutoff(tmp_path):
    """`cross_validation` answers the companion's series beside the model's, as `predict` does, each fit's
    companion trained on the rows up to its cutoff: a user backtesting a ragged panel got no rows for them
    (h130). Oracle: their level shifted once, so the companion keeps naive, whose forecast from each cutoff
    is the series' value at that cutoff. 'tiny', of 2 rows, holds none before the 2 windows: it is named and
    left out (its fit was given a series of no values: IndexError)."""
    _panel(tmp_path / "p.csv", trend=False)
    frame = pd.read_csv(tmp_path / "p.csv", parse_dates=["date"])
    model = Forecaster(horizon=HORIZON, seeds=1, max_epochs=1)
    with pytest.warns(DataQualityWarning) as said:
        backtest = model.cross_validation(frame, id_col="id", date_col="date", n_windows=2, refit=True)
    assert sorted(set(backtest["id"])) == sorted([*(f"long{k}" for k in range(25)), *SHORT])  # not 'tiny'
    trained = [note for note in said if "of them forecast by naive (" in str(note.message)]  # train's note
    assert len(trained) == 2  # each fit trains its own (predict says "are forecast by": not counted)
    assert any("series 'tiny' hold no row before the 2 window(s)" in str(note.message) for note in said)
    assert backtest["y"].notna().all() and len(backtest) == 27 * 2 * HORIZON
    short = backtest[backtest["id"].isin(SHORT)]
    values = frame.set_index(["id", "date"])["y"]
    at_cutoff = values.loc[list(zip(short["id"], short["cutoff"], strict=True))].to_numpy()
    assert short["cutoff"].nunique() == 2 and np.allclose(short["s3attention"], at_cutoff)
    assert np.allclose(short["y"], values.loc[list(zip(short["id"], short["date"], strict=True))])


def test_a_named_forecast_that_fits_nothing_forecasts_the_short_series_too(tmp_path, capsys):
    """`train --model naive` forecasts the series too short for naive's input by naive too, from the input
    they hold, as a model named to statsforecast or darts forecasts every series it can: the companion chose
    drift for them instead (h130 L1); a fitted Forecaster saves its companion with it (`save` wrote a
    bundle naming a companion it did not hold, which `load` refused: "no folder 'short'")."""
    _panel(tmp_path / "p.csv", trend=True)  # rising: left to choose, the companion keeps drift (above)
    frame = pd.read_csv(tmp_path / "p.csv", parse_dates=["date"])
    with pytest.warns(DataQualityWarning) as said:
        fitted = Forecaster("naive", horizon=HORIZON).fit(frame, id_col="id", date_col="date")
    assert any("forecast by naive (" in str(note.message) and "the model asked for" in str(note.message)
               for note in said), [str(note.message) for note in said]  # fmt: skip
    companion = fitted.bundle.companion
    assert companion.data.columns == SHORT and list(companion.training["selection"]) == ["naive"]
    fitted.save(tmp_path / "saved")
    with pytest.warns(DataQualityWarning) as said:
        answered = Forecaster.load(tmp_path / "saved").predict(frame)
    notes = [str(note.message) for note in said if "are forecast by" in str(note.message)]
    assert len(notes) == 1 and "forecast by naive: 'short0'" in notes[0], notes  # not "chosen on ..."
    last = frame.groupby("id")["y"].last()
    for name in SHORT:  # naive's forecast: the last value
        assert np.allclose(answered.loc[answered["id"] == name, "naive"], last[name])


def test_tune_saves_the_companion_beside_the_settings_it_keeps(tmp_path, capsys, monkeypatch):
    """`forecaster tune` leaves the short series out as train does and saves their companion in its bundle
    (`workflows.split_off_short`): it had saved none, and a tuned panel model left them unforecast. The
    search itself stands in for Ray here: one complete trial, the untuned settings."""
    from forecaster.tuning import search

    _panel(tmp_path / "p.csv", trend=True)
    trials = pd.DataFrame([{"number": 1, "trial": "t1", "status": "complete", "epochs": 1, "val_mse": 0.5,
                            "error": ""}])  # fmt: skip
    monkeypatch.setattr(search, "ray_started", lambda address: contextlib.nullcontext())
    monkeypatch.setattr(search, "_search", lambda *args: None)
    monkeypatch.setattr(search, "trial_table", lambda results: (trials, {"t1": {}}))
    with pytest.warns(DataQualityWarning):
        code, _, err = run_cli(["tune", "--csv", tmp_path / "p.csv", "--id-col", "id", "--horizon", HORIZON,
                                "--trials", 1, "--seeds", 1, "--max-epochs", 1, "--out", tmp_path / "t"],
                               capsys)  # fmt: skip
    assert code == 0, err
    bundle = load_bundle(tmp_path / "t" / "model")
    assert bundle.companion is not None and bundle.companion.data.columns == SHORT
    assert bundle.companion.training["candidate"] == "drift" and bundle.training["left_out"] == ["tiny"]
    assert bundle.training["tuning"]["kept"] == "untuned"
    frame = pd.read_csv(tmp_path / "p.csv", parse_dates=["date"])
    with pytest.warns(DataQualityWarning):
        answered = Forecaster.load(tmp_path / "t" / "model").predict(frame)
    assert set(SHORT) <= set(answered["id"])


def _resigned(folder: Path, edit) -> None:
    """`folder`'s config edited (`edit`) and named again by its weights' metadata, its calibration left out
    (it names the old config): a bundle tampered with consistently, not refused for its digests."""
    import hashlib

    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    from forecaster.artifacts import model_digest

    config = json.loads((folder / "config.json").read_text())
    edit(config)
    if COMPANION in config["training"]:  # the digest of its companion as it now is
        config["training"][COMPANION]["sha256"] = model_digest(folder / COMPANION)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    with safe_open(folder / "weights.safetensors", framework="pt") as handle:
        metadata = handle.metadata()
    metadata["config_sha256"] = hashlib.sha256((folder / "config.json").read_bytes()).hexdigest()
    save_file(load_file(folder / "weights.safetensors"), folder / "weights.safetensors", metadata=metadata)
    (folder / "calibration.safetensors").unlink(missing_ok=True)


def test_calibrate_reads_the_models_series_without_its_companions_and_load_refuses_a_tangled_one(
    rising, tmp_path, capsys
):
    """`calibrate` on rows of the model's series alone recalibrates it and keeps the companion's margins (it
    refused them, 'missing series short0, short1', as though the model needed them: h130); a companion naming
    one of the model's series (each forecast twice; predict blamed the user's file) or holding a companion of
    its own is refused at load, consistent digests or not."""
    model = _rising_in(rising, tmp_path)
    history = pd.read_csv(tmp_path / "p.csv")
    history[history["id"].str.startswith("long")].to_csv(tmp_path / "long.csv", index=False)
    kept = (model / COMPANION / "calibration.safetensors").read_bytes()
    said = "no rows of 'short0', 'short1' of its companion's series: read the 25 others"
    with pytest.warns(DataQualityWarning, match=said):
        code, out, err = run_cli(["calibrate", "--model", model, "--csv", tmp_path / "long.csv"], capsys)
    assert code == 0 and "written to" in out and "its companion's" not in out, err
    assert (model / COMPANION / "calibration.safetensors").read_bytes() == kept
    assert load_bundle(model).companion.calibration is not None
    overlap, nested = tmp_path / "overlap", tmp_path / "nested"
    shutil.copytree(model, overlap)
    _resigned(overlap / COMPANION, lambda config: config["data"].update(columns=["long0", "short1"]))
    _resigned(overlap, lambda config: config["training"][COMPANION].update(series=["long0", "short1"]))
    with pytest.raises(BundleError, match="a list of names, none of them the model's own"):
        load_bundle(overlap)
    shutil.copytree(model, nested)
    shutil.copytree(nested / COMPANION, nested / COMPANION / COMPANION)
    _resigned(nested / COMPANION / COMPANION, lambda config: config["data"].update(columns=["x0", "x1"]))
    record = json.loads((model / "config.json").read_text())["training"][COMPANION]
    record = {**record, "series": ["x0", "x1"]}
    _resigned(nested / COMPANION, lambda config: config["training"].update({COMPANION: record}))
    assert load_bundle(nested / COMPANION).companion is not None  # alone it loads
    _resigned(nested, lambda config: None)
    with pytest.raises(BundleError, match="or it holds a companion of its own"):
        load_bundle(nested)


def test_rows_lacking_one_companion_series_read_the_other_for_predict_and_calibrate(rising, tmp_path, capsys):
    """Rows lacking 'short1' of the companion's two: predict forecasts 'short0' by it, and calibrate reads it
    too (it read the model's series alone and called 'short0' a series not among the model's, h143 1),
    keeping the companion's margins, which are of each of its series, and saying why."""
    model = _rising_in(rising, tmp_path)
    history = pd.read_csv(tmp_path / "p.csv")
    history[history["id"] != "short1"].to_csv(tmp_path / "some.csv", index=False)
    with pytest.warns(DataQualityWarning) as said:
        code, _, err = run_cli(["predict", "--model", model, "--csv", tmp_path / "some.csv", "--output",
                                tmp_path / "f.csv"], capsys)  # fmt: skip
    assert code == 0, err
    assert "short0" in set(pd.read_csv(tmp_path / "f.csv")["id"]) and any(
        "no rows of 'short1' of its companion's series: forecast the 26 others" in str(note.message)
        for note in said
    )
    kept = (model / COMPANION / "calibration.safetensors").read_bytes()
    with pytest.warns(DataQualityWarning) as said:
        code, out, err = run_cli(["calibrate", "--model", model, "--csv", tmp_path / "some.csv"], capsys)
    assert code == 0 and "written to" in out, err
    notes = [str(note.message) for note in said]
    assert any("no rows of 'short1' of its companion's series: read the 26 others" in note for note in notes)
    assert not any("left out series 'short0'" in note for note in notes), notes
    assert "its companion's calibration kept" in out and "hold no 'short1'" in out, out
    assert (model / COMPANION / "calibration.safetensors").read_bytes() == kept


def test_overwrite_refuses_a_users_folder_named_as_the_companions(tmp_path):
    """--overwrite replaces a bundle's companion folder, but not a user's folder of that name, nor files of
    theirs in a companion's: `short` became one of the bundle's own names and a user's `short/notes.txt` was
    deleted unasked, where any other folder of theirs is refused (h130)."""
    from forecaster.artifacts import check_out_dir

    out = tmp_path / "m"
    (out / COMPANION).mkdir(parents=True)
    for folder in (out, out / COMPANION):
        (folder / "config.json").write_text(json.dumps({"format_version": 2}))
        (folder / "weights.safetensors").write_bytes(b"")
    check_out_dir(out, overwrite=True)  # a bundle and its companion: forecaster's own
    (out / COMPANION / "notes.txt").write_text("mine")
    with pytest.raises(BundleError, match="short holds what forecaster did not write \\('notes.txt'\\)"):
        check_out_dir(out, overwrite=True)
    shutil.rmtree(out / COMPANION)
    (out / COMPANION).mkdir()
    (out / COMPANION / "notes.txt").write_text("mine")
    with pytest.raises(BundleError, match="holds what forecaster did not write \\('short'\\)"):
        check_out_dir(out, overwrite=True)


@pytest.mark.slow
def test_ddp_on_two_cpu_processes_saves_a_bundle_whose_companion_loads(tmp_path):
    """Rank 0 alone fits and saves the companion: each rank did, the later rank's written over the one whose
    digest rank 0 recorded, and the bundle saved was refused ('not the companion saved with', h130)."""
    import os
    import subprocess

    from test_cli_train import FORECASTER

    _panel(tmp_path / "p.csv", trend=True)
    argv = ["train", "--csv", tmp_path / "p.csv", "--id-col", "id", "--horizon", HORIZON, "--no-progress",
            "--seeds", 1, "--max-epochs", 1, "--model", "s3attention", "--accelerator", "cpu", "--devices", 2,
            "--strategy", "ddp", "--out", tmp_path / "m"]  # fmt: skip
    result = subprocess.run([str(FORECASTER), *map(str, argv)], capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert load_bundle(tmp_path / "m").companion.data.columns == SHORT

"""`forecaster tune`: search spaces checked before any trial, a real Ray Tune search whose choice reads only
validation, and the tuned rows of the benchmark."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster.cli import main
from forecaster.errors import ConfigError
from forecaster.tuning.space import INPUT_SIZE_FACTORS, SPACES, default_point, search_space, tune_space

ILI_ROWS, ILI_TEST_ROWS = 966, 193  # int(0.2 * 966) test rows under 7:1:2


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """One Ray in this process for this module's searches, which use it rather than start their own (each
    start and stop took 6 s, and its workers started again). No xdist group: the two searches, the suite's
    last long tests, run in both test processes at once rather than one after the other."""
    ray = pytest.importorskip("ray")
    ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    yield
    ray.shutdown()


def test_the_default_space_searches_input_sizes_around_the_default() -> None:
    space = search_space("s3attention", 36)
    assert space["input_size"] == {"choice": [18, 36, 72, 144]}
    assert len(INPUT_SIZE_FACTORS) == 4
    assert {name: space[name] for name in SPACES["s3attention"]} == SPACES["s3attention"]
    assert set(search_space("nlinear", 96)) == {"lr", "input_size"}
    # only sizes the file's rows hold (384 steps of 400 rows was a failed trial); the untuned one is kept
    assert search_space("dlinear", 96, holds=lambda size: size < 300)["input_size"]["choice"] == [48, 96, 192]
    assert search_space("dlinear", 96, holds=lambda size: False)["input_size"] == {"choice": [96]}


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_a_space_file_replaces_and_adds_entries(tmp_path: Path, suffix: str) -> None:
    entries = {"lr": {"uniform": [0.001, 0.002]}, "input_size": 60, "fold": {"randint": [2, 4]}}
    path = tmp_path / f"space{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(entries))
    else:
        path.write_text("lr: {uniform: [0.001, 0.002]}\ninput_size: 60\nfold: {randint: [2, 4]}\n")
    space = search_space("s3attention", 36, path)
    assert {name: space[name] for name in entries} == entries
    assert space["d_model"] == SPACES["s3attention"]["d_model"]
    domains = tune_space(space)
    assert domains["input_size"] == 60
    drawn = set(domains["fold"].sample(size=300))
    assert drawn == {2, 3, 4}  # randint's declared high end is drawn too


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"depth": {"choice": [1]}}', "s3attention has no setting 'depth'; expected one of lr, input_size"),
        ('{"lr": {"normal": [0, 1]}}', "lr: expected one of loguniform, uniform, randint, choice"),
        ('{"lr": {"uniform": [0.3, 0.1]}}', "lr: uniform needs [low, high] numbers with low < high"),
        ('{"lr": {"loguniform": [0, 0.1]}}', "lr: loguniform needs low > 0"),
        ('{"e_layers": {"randint": [1, 2.5]}}', "e_layers: randint needs whole-number bounds"),
        ('{"d_model": {"choice": []}}', "d_model: choice needs a non-empty list of values"),
        ('["lr"]', "expected a mapping of setting names to ranges or values"),
        ('{"lr": ', "not valid JSON"),
    ],
)
def test_a_wrong_space_file_is_refused_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "space.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="^.*" + message.replace("[", r"\[").replace("]", r"\]")) as caught:
        search_space("s3attention", 36, path)
    assert "\n" not in str(caught.value)


UNTUNED = {"input_size": 96, "lr": 1e-3}


@pytest.mark.parametrize(("input_sizes", "expected"), [([36, 60, 104], {}), ([48, 96], UNTUNED)])
def test_the_untuned_settings_are_tried_first_only_where_each_range_holds_them(input_sizes, expected) -> None:
    """Optuna's first point must set every searched entry: README's `input_size: {choice: [36, 60, 104]}`,
    which leaves out the untuned 96, gave a point of `lr` alone and an internal error before any trial."""
    from ray.tune.search.optuna import OptunaSearch

    space = {"input_size": {"choice": input_sizes}, "lr": {"loguniform": [1e-4, 1e-2]}}
    first = default_point(space, "dlinear", UNTUNED)
    assert first == expected
    points = [first] if first else None
    OptunaSearch(space=tune_space(space), metric="val_mse", mode="min", points_to_evaluate=points)


def test_tune_refuses_what_it_cannot_search_at_once(data_dir: Path, tmp_path: Path, capsys) -> None:
    common = ["tune", "--dataset", "ILI", "--data-dir", str(data_dir), "--horizon", "24"]
    assert main([*common, "--model", "naive", "--out", str(tmp_path / "a")]) == 2
    (tmp_path / "space.toml").write_text("lr = 1")
    assert main([*common, "--model", "nlinear", "--space", str(tmp_path / "space.toml"),
                 "--out", str(tmp_path / "b")]) == 2
    errors = capsys.readouterr().err.splitlines()
    space = tmp_path / "space.toml"
    assert errors == ["forecaster: error: naive has nothing to tune",
                      f"forecaster: error: --space {space}: expected a .json, .yaml or .yml file"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["space.toml"]


@pytest.mark.parametrize("phase", ["_search", "write_search"])
def test_sigterm_ends_tune_in_one_line_with_status_143(data_dir, tmp_path, monkeypatch, capsys, phase):
    """`ray.init` put its SIGTERM handler over the CLI's (h84 F2): a search stopped by SIGTERM aborted with
    Ray's C++ dump (status 134), the retraining after it exited 15 without a word. Both end as every
    command's stop does. Ray's driver handler and its `ray.wait` stand in for Ray here: the search and
    retraining are the signal's targets, not Ray."""
    ray = pytest.importorskip("ray")
    import forecaster.tuning.search as search

    def init(**kwargs) -> None:  # what ray.init leaves in place
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))

    def terminated(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except BaseException:
            if phase == "_search":  # inside `ray.wait` what the handler raises comes out as SystemExit(1)
                raise SystemExit(1) from None
            raise
        raise AssertionError("SIGTERM was not handled")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.setattr(search, phase, terminated)
    if phase == "write_search":  # a search that found nothing, then the retraining
        monkeypatch.setattr(search, "_search", lambda *args: None)
        monkeypatch.setattr(search, "trial_table", lambda results: (pd.DataFrame(), {}))
    argv = ["tune", "--dataset", "ILI", "--data-dir", str(data_dir), "--horizon", "24", "--model", "nlinear",
            "--out", str(tmp_path / "tuned")]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 143
    assert capsys.readouterr().err.splitlines() == [
        "forecaster: terminated; nothing was half-written (earlier outputs are as they were)"]
    assert not list(tmp_path.iterdir())  # the staging folder removed


@pytest.mark.slow
def test_a_second_search_into_the_same_out_is_refused_while_the_first_runs(
    data_dir: Path, tmp_path: Path, capsys
) -> None:
    """Two searches into one --out both ran to the end, then one's output was refused or replaced the other's
    (h149): the second is refused at once, as a second `train` or `benchmark` is. The first is a real
    process, stopped once the second is refused; neither leaves a folder behind."""
    import subprocess
    import time

    pytest.importorskip("ray")
    out = tmp_path / "tuned"
    argv = ["tune", "--dataset", "ILI", "--data-dir", str(data_dir), "--horizon", "24", "--model", "nlinear",
            "--trials", "2", "--max-epochs", "5", "--out", str(out)]
    command = [sys.executable, "-m", "forecaster.cli", *argv]
    first = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    lock = tmp_path / ".tuned.work" / "lock"
    try:
        deadline = time.monotonic() + 120
        while not (lock.is_file() and lock.read_text().strip() == str(first.pid)):
            assert first.poll() is None and time.monotonic() < deadline, "the first search held no --out"
            time.sleep(0.2)
        assert main(argv) == 2
        # stopped once its search runs: a SIGTERM inside ray.init meets Ray's own handlers (status 15 or an
        # abort, no word), a window this test is not about
        while not any(tmp_path.rglob("search")):
            assert first.poll() is None and time.monotonic() < deadline, "the first search never started"
            time.sleep(0.2)
    finally:
        first.send_signal(signal.SIGTERM)
        _, first_said = first.communicate(timeout=120)
    assert capsys.readouterr().err == (f"forecaster: error: output {out} is in use by another run (process "
                                       f"{first.pid}, lock {lock}); wait for it to end, or choose another "
                                       "output\n")
    assert first.returncode == 143, first_said
    assert not list(tmp_path.iterdir())


def _ili_csv(data_dir: Path, path: Path, *, spoil_test: bool) -> Path:
    frame = pd.read_csv(data_dir / "national_illness.csv.gz")
    assert len(frame) == ILI_ROWS
    if spoil_test:  # the test rows only: what a choice on validation must never see
        values, test = frame.columns[1:], slice(ILI_ROWS - ILI_TEST_ROWS, None)
        frame[values] = frame[values].astype(float)
        noise = np.random.default_rng(0).normal(size=(ILI_TEST_ROWS, len(values)))
        frame.loc[frame.index[test], values] = frame.loc[frame.index[test], values] * 10 + noise
    frame.to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_a_search_on_a_ray_without_cpus_says_its_trials_wait(monkeypatch, tmp_path: Path) -> None:
    """A search on a head with no CPU (`ray start --head --num-cpus 0`) waited for ever without a word (h140
    F6); the trials wait on (an autoscaling cluster adds workers), but it is said, and again where the
    cluster loses its CPUs mid-search (h149; Tune's loop steps stand in for the search). Before local_ray
    (module scoped): this test's Ray, of no CPU, is shut down first."""
    ray = pytest.importorskip("ray")
    from ray import tune

    from forecaster import cluster
    from forecaster.errors import ForecasterWarning
    from forecaster.training.settings import TrainSettings
    from forecaster.tuning import search

    def tuner(*args, run_config, **kwargs) -> None:
        [watching] = run_config.callbacks
        watching.on_step_begin(0, [])  # still none: said at the start already
        with monkeypatch.context() as joined:
            joined.setattr(ray, "cluster_resources", lambda: {"CPU": 1})
            watching.on_step_begin(1, [])
        watching.on_step_begin(2, [])  # lost again
        raise KeyboardInterrupt  # the search would wait here

    for name in ("RAY_AIR_NEW_OUTPUT", "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "TUNE_DISABLE_SIGINT_HANDLER"):
        monkeypatch.delenv(name, raising=False)  # what _search sets goes with the test
    monkeypatch.setattr(tune, "Tuner", tuner)
    monkeypatch.setattr(cluster, "WATCH_SECONDS", 0)  # the watch looks at every step
    ray.init(num_cpus=0, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    try:
        with pytest.warns(ForecasterWarning) as said, pytest.raises(KeyboardInterrupt):
            search._search(None, TrainSettings(horizon=24), search.TuneSettings(), {}, {}, tmp_path)
        address = ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
    assert [str(warning.message) for warning in said] == [
        f"waiting for CPUs: the cluster at {address} has 0 free CPUs; each trial needs 1"] * 2


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_a_search_keeps_the_best_on_validation_and_never_reads_test(
    data_dir: Path, tmp_path: Path, capsys
) -> None:
    pytest.importorskip("ray")
    from forecaster.artifacts import load_bundle
    from forecaster.data import read_csv
    from forecaster.training.planning import plan
    from forecaster.training.settings import TrainSettings

    runs = {}
    for spoil in (False, True):
        csv = _ili_csv(data_dir, tmp_path / f"ili-{spoil}.csv", spoil_test=spoil)
        out = tmp_path / f"tuned-{spoil}"
        assert main(["tune", "--csv", str(csv), "--horizon", "24", "--model", "nlinear", "--trials", "3",
                     "--max-epochs", "2", "--seeds", "1", "--out", str(out)]) == 0
        names = sorted(path.name for path in out.iterdir())
        assert names == ["kept.json", "model", "space.json", "trials.csv"]
        assert not list(tmp_path.glob(".tuned-*"))  # no staging folder left behind
        runs[spoil] = (pd.read_csv(out / "trials.csv"), load_bundle(out / "model"),
                       json.loads((out / "kept.json").read_text()))
    printed = capsys.readouterr().out
    trials, bundle, kept = runs[False]
    assert trials["number"].tolist() == [1, 2, 3]
    [untuned] = plan(TrainSettings(horizon=24, model_name="nlinear"), read_csv(tmp_path / "ili-False.csv"))
    assert trials.loc[0, "input_size"] == untuned.input_size  # the first trial: the untuned settings
    assert trials.loc[0, "lr"] == pytest.approx(untuned.lr)
    assert set(trials["status"]) <= {"complete", "stopped"}
    complete = trials[trials["status"] == "complete"]
    best = complete.loc[complete["val_mse"].idxmin()]
    tuning = bundle.training["tuning"]
    assert tuning["best"] == {"lr": pytest.approx(best["lr"]), "input_size": best["input_size"]}
    assert kept["best_trial"] == best["trial"] and "kept: the " in printed
    # The bundle is the settings kept, trained again (same seed and windows): the best trial's or the untuned.
    settings = kept["settings"] or {"lr": untuned.lr, "input_size": untuned.input_size}
    assert kept["kept"] == ("tuned" if kept["settings"] else "untuned")
    assert bundle.data.input_size == settings["input_size"]
    assert bundle.training["lr"] == pytest.approx(settings["lr"])
    assert bundle.metrics["best_val_mse"] == pytest.approx(kept["val_mse"][kept["kept"]], rel=1e-6)
    if kept["kept"] == "tuned":
        assert bundle.metrics["best_val_mse"] == pytest.approx(best["val_mse"], rel=1e-4)
    spoiled_trials, spoiled_bundle, spoiled_kept = runs[True]
    pd.testing.assert_series_equal(spoiled_trials["val_mse"], trials["val_mse"], rtol=1e-6)
    assert spoiled_bundle.training["tuning"]["best"] == tuning["best"]
    assert spoiled_kept["kept"] == kept["kept"] and spoiled_kept["settings"] == kept["settings"]
    assert spoiled_bundle.metrics["mse"] > 10 * bundle.metrics["mse"]  # the test rows did change


@pytest.mark.parametrize(
    ("untuned_lr", "best_lr", "kept"), [(1e-7, 1e-2, "tuned"), (1e-2, 1.001e-2, "untuned")]
)
def test_the_best_trial_is_kept_over_the_untuned_settings_only_on_clear_evidence(
    data_dir: Path, tmp_path: Path, untuned_lr: float, best_lr: float, kept: str
) -> None:
    """NLinear at lr 1e-7 barely leaves its initial weights, at 1e-2 it learns ILI: clear evidence on both
    validation periods (the validation split of ILI-36 holds 2.7 horizons); learning rates 0.1% apart are no
    evidence."""
    from forecaster.data import load_dataset
    from forecaster.training.settings import TrainerOptions, TrainSettings
    from forecaster.tuning.search import keep_tuned

    series = load_dataset("ILI", data_dir=data_dir)
    base = TrainSettings(horizon=36, model_name="nlinear", lr=untuned_lr, seeds=1,
                         trainer=TrainerOptions(max_epochs=3, progress_bar=False))
    fitted, scores, settings = keep_tuned(series, base, {"lr": best_lr}, tmp_path)
    assert set(scores) == {"untuned", "tuned"} and fitted.earlier is not None
    assert fitted.candidate.label == kept and settings.lr == (best_lr if kept == "tuned" else untuned_lr)
    assert fitted.val_mse == scores[kept]


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_tuned_benchmark_rows_search_once_and_train_the_kept_settings_at_every_seed(
    data_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    pytest.importorskip("ray")
    pytest.importorskip("neuralforecast")
    from forecaster.artifacts import load_bundle
    from forecaster.benchmark import read_results, runners

    monkeypatch.setattr(runners, "TUNED_TRIALS", 2)
    assert main(["benchmark", "--datasets", "ILI", "--horizons", "24", "--models", "s3attention-tuned",
                 "--repeats", "2", "--max-epochs", "1", "--seeds", "1", "--data-dir", str(data_dir),
                 "--out", str(tmp_path),
                 "--no-progress"]) == 0
    rows = read_results(tmp_path / "results.csv")
    assert rows["repeat"].tolist() == [0, 1] and set(rows["model"]) == {"s3attention-tuned"}
    assert len(pd.read_csv(tmp_path / "tuning" / "ILI-h24" / "trials.csv")) == 2
    kept = json.loads((tmp_path / "tuning" / "ILI-h24" / "kept.json").read_text())
    for repeat in (0, 1):
        bundle = load_bundle(tmp_path / "bundles" / f"ILI-h24-s3attention-tuned-r{repeat}")
        assert bundle.training["tuning"] == kept
        assert bundle.training["seed"] == repeat
        if kept["kept"] == "tuned":
            assert bundle.training["lr"] == pytest.approx(kept["settings"]["lr"])
    assert "s3attention-tuned: `forecaster tune" in (tmp_path / "summary.md").read_text()

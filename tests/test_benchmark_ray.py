"""The benchmark's cells as Ray tasks: the rows of a sequential run, each recorded once, a worker that dies
mid-cell retried, stopping the command stopping its tasks, and a grid on a separately started Ray head."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("neuralforecast")
ray = pytest.importorskip("ray")

from forecaster.benchmark import BenchmarkConfig, Cell, executors, read_results, runners  # noqa: E402
from forecaster.benchmark.progress import GridProgress  # noqa: E402
from forecaster.cli import main  # noqa: E402
from forecaster.cluster import start_ray  # noqa: E402
from forecaster.errors import ConfigError, DataError, ForecasterError  # noqa: E402

# One test process at a time runs these (`make test` runs two): each finds the cells' processes among all.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("ray"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds Ray's processes in /proc"),
]
ILI_TEST_WINDOWS_H24 = 193 - 24 + 1
KEYS = ["dataset", "horizon", "model", "repeat"]
# The title Ray gives a worker process while it runs a benchmark cell.
CELL_TASK = b"ray::_run_cell_on_ray"


def _grid_args(data_dir: Path, out: Path, models: str, *more: str) -> list[str]:
    return ["benchmark", "--datasets", "ILI", "--horizons", "24", "--models", models, "--data-dir",
            str(data_dir), "--out", str(out), "--no-progress", "--seeds", "1", *more]


def _cell_tasks() -> list[int]:
    """PIDs of the worker processes running a benchmark cell right now."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().startswith(CELL_TASK):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting until {what}")
        time.sleep(0.2)


def _training(out: Path, count: int) -> bool:
    """True once `count` cells are training: their bundles' work folders exist."""
    return len(list((out / "bundles").glob(".*.work"))) >= count


@pytest.fixture(scope="class")
def local_ray():
    """One Ray in this process for the tests of `TestOnARunningRay`."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.usefixtures("local_ray")
class TestOnARunningRay:
    """`run_on_ray` uses a Ray already running in this process and leaves it up."""

    def test_a_failing_cell_keeps_the_cells_that_finish(self, data_dir: Path, tmp_path: Path) -> None:
        """The running cell finishes and is recorded; the cell after the failure never starts. The running
        cell trains long enough for the failure to come first: of one epoch it had once finished before the
        failing cell's worker started, and the cell after it ran (a loaded CI machine)."""
        config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["dlinear"], repeats=1,
                                 max_epochs=60, patience=60, data_dir=data_dir, out_dir=tmp_path,
                                 progress=False, jobs=2)  # fmt: skip
        good, broken = Cell("ILI", 24, "dlinear", 0), Cell("NoSuchData", 24, "dlinear", 0)
        after = Cell("ILI", 36, "dlinear", 0)
        recorded: list[tuple[Cell, dict]] = []
        with GridProgress(3, 0, enabled=False) as progress, pytest.raises(DataError, match="NoSuchData"):
            executors.run_on_ray([broken, good, after], config, lambda c, row: recorded.append((c, row)),
                                 progress)
        assert [cell for cell, _ in recorded] == [good]
        assert recorded[0][1]["windows"] == ILI_TEST_WINDOWS_H24
        assert ray.is_initialized()


    def test_a_dataset_missing_where_its_cell_runs_names_that_node(self, tmp_path: Path) -> None:
        """A dataset this process read but a worker's node lacks (here a --csv file gone since): the message
        named only the file, which on this process's machine was there."""
        csv = tmp_path / "mine.csv"
        config = BenchmarkConfig(csv=csv, horizons=(24,), models=["naive"], repeats=1, out_dir=tmp_path,
                                 progress=False, jobs=2)  # fmt: skip
        with GridProgress(1, 0, enabled=False) as progress, pytest.raises(DataError) as caught:
            executors.run_on_ray([Cell("mine", 24, "naive", 0)], config, lambda *row: None, progress)
        where = f"(on the Ray node at {ray.util.get_node_ip_address()})"
        assert str(caught.value) == f"{csv}: not found; expected a CSV, TSV or Excel file {where}"

    def test_each_row_is_recorded_when_its_task_finishes(self, data_dir: Path, tmp_path: Path) -> None:
        """A quick cell is recorded while a slow one (300 epochs) has not finished, not when the whole grid is
        done; an error in this process then cancels the task still running."""
        config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["s3attention", "naive"],
                                 repeats=1, max_epochs=300, patience=300, data_dir=data_dir, out_dir=tmp_path,
                                 progress=False, jobs=2)  # fmt: skip
        slow, quick = Cell("ILI", 24, "s3attention", 0), Cell("ILI", 24, "naive", 0)
        recorded: list[tuple[Cell, bool]] = []

        def record(cell: Cell, row: dict) -> None:
            recorded.append((cell, runners.bundle_dir(config, slow).exists()))
            raise OSError("no space left on device")  # writing the row failed

        with GridProgress(2, 0, enabled=False) as progress, pytest.raises(OSError, match="no space"):
            executors.run_on_ray([slow, quick], config, record, progress)
        assert recorded == [(quick, False)]  # the slow cell's bundle was not written yet
        _wait_until(lambda: not _cell_tasks(), 60, "the cancelled cell stops training")

    def test_a_cell_whose_worker_dies_at_every_try_is_named_in_one_line(
        self, data_dir: Path, tmp_path: Path, monkeypatch
    ) -> None:
        """Ray gives up on a task whose worker died (the OOM killer, a lost node) with WorkerCrashedError: it
        came out as 'internal error: WorkerCrashedError' and cancelled the other cells (h140 F3)."""
        monkeypatch.setattr(executors, "RAY_RETRIES", 0)
        config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["s3attention"], repeats=1,
                                 max_epochs=300, patience=300, data_dir=data_dir, out_dir=tmp_path,
                                 progress=False, jobs=2)  # fmt: skip
        killed: list[int] = []

        def kill_the_cell() -> None:
            _wait_until(lambda: _training(tmp_path, 1) and _cell_tasks(), 180, "the cell trains")
            killed.append(_cell_tasks()[0])
            os.kill(killed[0], signal.SIGKILL)

        killer = threading.Thread(target=kill_the_cell, daemon=True)
        killer.start()
        with GridProgress(1, 0, enabled=False) as progress, pytest.raises(ForecasterError) as caught:
            executors.run_on_ray([Cell("ILI", 24, "s3attention", 0)], config, lambda *row: None, progress)
        killer.join()
        assert killed and str(caught.value).startswith("ILI h=24 s3attention #0: Ray gave up on it after its "
                                                       "worker died (WorkerCrashedError: ")
        assert str(caught.value).endswith("rerun the command to resume")

    def test_the_cells_write_where_this_process_resolves_out(
        self, data_dir: Path, tmp_path: Path, monkeypatch
    ) -> None:
        """A worker keeps the working directory Ray started it in: a relative --out put the bundles there (the
        folder `ray start` ran in), not beside this process's results.csv (h140 F4)."""
        monkeypatch.chdir(tmp_path)  # Ray's workers started elsewhere, in the fixture
        config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["nlinear:reference"], repeats=1,
                                 max_epochs=1, data_dir=data_dir, out_dir=Path("grid"), progress=False,
                                 jobs=2)  # fmt: skip
        cell, recorded = Cell("ILI", 24, "nlinear:reference", 0), []
        with GridProgress(1, 0, enabled=False) as progress:
            executors.run_on_ray([cell], config, lambda *row: recorded.append(row), progress)
        assert len(recorded) == 1
        assert sorted(path.name for path in (tmp_path / "grid" / "bundles").iterdir()) == [
            "ILI-h24-nlinear-reference-r0"]


def test_an_address_where_no_ray_listens_is_refused_in_one_line(monkeypatch) -> None:
    """`ray.init` retried a wrong --ray-address for minutes, a warning every few seconds (h140 F1)."""

    def init(**kwargs) -> None:
        raise AssertionError("ray.init was called")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    port = _free_port()  # nothing listens there
    refused = rf"^--ray-address 127.0.0.1:{port}: no Ray answers there \("
    with pytest.raises(ConfigError, match=refused) as caught:
        start_ray(f"127.0.0.1:{port}")
    assert "ray start --head" in str(caught.value)
    with pytest.raises(ConfigError, match="^--ray-address 6379: expected HOST:PORT of a Ray head"):
        start_ray("6379")


def test_a_lost_cell_gives_rays_first_sentence_whole() -> None:
    """Ray's reason was cut at its 12th word, into the sentence naming its log files: "(WorkerCrashedError:
    The worker died unexpectedly while executing this task. Check python-core-worker-*.log files for)"."""
    said = executors._lost(Cell("ILI", 24, "naive", 0), ray.exceptions.WorkerCrashedError())
    assert str(said) == ("ILI h=24 naive #0: Ray gave up on it after its worker died (WorkerCrashedError: "
                         "The worker died unexpectedly while executing this task.); the cells that finished "
                         "are in results.csv, rerun the command to resume")


def test_a_grid_without_ray_installed_says_so_in_one_line(
    data_dir: Path, tmp_path: Path, monkeypatch
) -> None:
    """--jobs 2 without Ray was 'internal error: ModuleNotFoundError: No module named ray' (h140 F5)."""
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets where Ray is not installed
    config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["naive"], repeats=1,
                             data_dir=data_dir, out_dir=tmp_path, progress=False, jobs=2)  # fmt: skip
    with GridProgress(1, 0, enabled=False) as progress, pytest.raises(ConfigError, match=(
            r"^Ray is not installed; --jobs above 1, --ray-address and `forecaster tune` run on it: ")):
        executors.run_on_ray([Cell("ILI", 24, "naive", 0)], config, lambda *row: None, progress)


@pytest.mark.parametrize("failing", ["no-ray-at-the-address", "ray-not-installed", "no-ray-client"])
def test_a_grid_whose_ray_cannot_start_writes_nothing(
    data_dir: Path, tmp_path: Path, monkeypatch, capsys, failing: str
) -> None:
    """A start that failed left a new --out holding only benchmark.json, the run's settings (h140 F8): Ray
    is started before anything is written, also for a tuned cell, whose search needs it. The folders the
    run made above --out go too (it had left them empty, h149), not one that was there. A ray:// address
    where Ray Client is not installed (grpcio) was an internal error, Ray's ValueError."""
    out = tmp_path / "new" / "deeper" / "grid"
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1] if failing == "no-ray-client" else _free_port()
        if failing == "ray-not-installed":
            monkeypatch.setitem(sys.modules, "ray", None)
            grid = _grid_args(data_dir, out, "s3attention-tuned")
        else:
            monkeypatch.setitem(sys.modules, "grpc", None)  # what `import grpc` meets where it is missing
            scheme = "ray://" if failing == "no-ray-client" else ""
            grid = _grid_args(data_dir, out, "naive", "--ray-address", f"{scheme}127.0.0.1:{port}")
        assert main(grid) == 2
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and re.match(r"forecaster: error: (--ray-address|Ray is not installed)", said[0])
    if failing == "no-ray-client":
        assert said[0].startswith(f"forecaster: error: --ray-address ray://127.0.0.1:{port}: Ray Client "
                                  "(ray://) is not installed; pip install 'ray[client]'")  # fmt: skip
    assert tmp_path.is_dir() and not (tmp_path / "new").exists()


def test_a_read_only_out_is_refused_before_ray_starts(
    data_dir: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    """A grid resumed in an --out that cannot be written (a read-only mount) was refused once the Ray it
    started was up (a minute here); the folder itself is checked first (its parent was)."""
    out = tmp_path / "grid"
    out.mkdir()
    writable = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != out and writable(path, mode))
    monkeypatch.setattr(executors, "ray_started", lambda address: pytest.fail("Ray was started"))
    assert main(_grid_args(data_dir, out, "naive,nlinear:reference", "--repeats", "1", "--jobs", "2")) == 1
    assert capsys.readouterr().err == (f"forecaster: error: --out {out}: folder {out} is not writable; "
                                       "expected a folder this user can write\n")


def test_a_tuned_cell_searches_on_the_cluster_of_the_grid(monkeypatch, tmp_path: Path) -> None:
    """`s3attention-tuned` cells of a grid with --ray-address searched on a Ray started on this machine."""
    from forecaster.tuning import search

    asked = []

    def tune_forecaster(series, out, base, tuning) -> None:
        asked.append(tuning)
        raise KeyboardInterrupt  # enough seen

    monkeypatch.setattr(search, "tune_forecaster", tune_forecaster)
    config = BenchmarkConfig(datasets=["ILI"], horizons=(24,), models=["s3attention-tuned"], out_dir=tmp_path,
                             jobs=3, ray_address="10.0.0.7:6379")  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        runners._run_tuned(Cell("ILI", 24, "s3attention-tuned", 0), runners.Prepared(None, 96, None), config)
    assert [(tuning.ray_address, tuning.jobs) for tuning in asked] == [("10.0.0.7:6379", 3)]


def test_a_worker_killed_mid_cell_is_retried_and_recorded_once(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "grid"
    grid = _grid_args(data_dir, out, "s3attention,nlinear:reference", "--repeats", "1", "--max-epochs", "3",
                      "--jobs", "2")
    command = [sys.executable, "-m", "forecaster.cli", *grid]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_until(lambda: _training(out, 1) and _cell_tasks(), 300, "a cell trains")  # 180: once short
        killed = _cell_tasks()[0]
        os.kill(killed, signal.SIGKILL)
        log, _ = driver.communicate(timeout=300)
    finally:
        driver.kill()
    assert driver.returncode == 0, log
    rows = read_results(out / "results.csv")
    assert sorted(rows["model"]) == ["nlinear:reference", "s3attention"]
    assert not _alive(killed)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["SIGINT", "SIGTERM", "SIGKILL"])
def test_stopping_the_benchmark_stops_its_tasks(data_dir: Path, tmp_path: Path, signum: int) -> None:
    """Stopping the command mid-grid (Ctrl-C, SIGTERM: it shuts its Ray down; SIGKILL: Ray's workers notice
    their driver is gone) leaves no task training on, and no partial row; a stop is said in one line (h84
    F6). Ctrl-C went unheard inside `ray.wait` (Ray drops what the CLI's handler raised): the grid ran on."""
    out = tmp_path / "results"
    command = [sys.executable, "-m", "forecaster.cli", "benchmark", "--datasets", "ILI", "--horizons",
               "24,36", "--models", "s3attention", "--repeats", "1", "--max-epochs", "10000", "--patience",
               "10000", "--jobs", "2", "--data-dir", str(data_dir), "--out", str(out), "--no-progress"]
    err = tmp_path / "stderr.txt"
    with err.open("w") as written:  # Ctrl-C heard as at a terminal, also where pytest runs in the background
        driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=written,
                                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    tasks: list[int] = []
    try:
        _wait_until(lambda: _training(out, 2) and len(_cell_tasks()) == 2, 180, "both cells train")
        tasks = _cell_tasks()
        os.kill(driver.pid, signum)
        assert driver.wait(timeout=60) == (-signum if signum == signal.SIGKILL else 128 + signum)
        _wait_until(lambda: not any(_alive(pid) for pid in tasks), 60, "the tasks have stopped")
    finally:
        driver.kill()
        driver.wait()
        for pid in filter(_alive, tasks):  # a failed run must not leave them training for hours
            os.kill(pid, signal.SIGKILL)
    assert read_results(out / "results.csv").empty
    if signum != signal.SIGKILL:
        lines = err.read_text().splitlines()
        said = "interrupted" if signum == signal.SIGINT else "terminated"
        assert lines and lines[-1].startswith(f"forecaster: {said}; "), lines


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_grid_on_a_ray_head_started_apart_gives_the_rows_of_one_process(
    data_dir: Path, tmp_path: Path, capfd
) -> None:
    """`ray start --head` on loopback, as on a cluster's head node; `--ray-address` sends the cells there. The
    rows (deterministic models) are those of a sequential run, each recorded once, and the log is one line per
    cell (no Lightning banners from the workers, which import Lightning afresh)."""
    ray_cli = str(Path(sys.executable).parent / "ray")
    port = _free_port()
    start = [ray_cli, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus",
             "2", "--include-dashboard", "false", "--disable-usage-stats"]
    subprocess.run(start, check=True, capture_output=True, timeout=180)
    models = ("naive,nlinear:reference", "--repeats", "2", "--max-epochs", "2")
    try:
        capfd.readouterr()
        assert main([*_grid_args(data_dir, tmp_path / "ray", *models), "--jobs", "2", "--ray-address",
                     f"127.0.0.1:{port}"]) == 0
        log = "".join(capfd.readouterr())
        assert not ray.is_initialized()  # disconnected; the cluster stays up for its owner
    finally:
        _stop_head(port)
    assert "--ray-address 127.0.0.1:" in (tmp_path / "ray" / "summary.md").read_text()
    assert main(_grid_args(data_dir, tmp_path / "one", *models)) == 0
    on_ray = read_results(tmp_path / "ray" / "results.csv").sort_values(KEYS, ignore_index=True)
    alone = read_results(tmp_path / "one" / "results.csv").sort_values(KEYS, ignore_index=True)
    assert len(on_ray) == 4 and not on_ray.duplicated(KEYS).any()
    columns = [*KEYS, "mse", "mae", "val_mse"]
    pd.testing.assert_frame_equal(on_ray[columns], alone[columns])
    runner_lines = ("ILI h=24 ", "benchmark (2 Ray tasks x 1 threads)", "4 cells run", "summary: ")
    assert [line for line in log.splitlines() if line and not line.startswith(runner_lines)] == []


def test_a_head_with_token_authentication_takes_the_grid(data_dir: Path, tmp_path: Path) -> None:
    """`ray start` gives a head token authentication where the machine holds a token (~/.ray/auth_token,
    which any `ray.init` here writes); `ray.init` with an explicit address sent none, and the driver was
    refused after a minute of warnings: "Failed to connect to Ray cluster" (h140 F2). This process's
    environment is spared: the head and the command run with a home of their own holding a token,
    RAY_AUTH_MODE unset."""
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_AUTH")}
    env["HOME"] = str(home)
    port = _free_port()
    start = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--node-ip-address", "127.0.0.1",
             "--port", str(port), "--num-cpus", "1", "--include-dashboard", "false", "--disable-usage-stats"]
    try:
        subprocess.run(start, check=True, capture_output=True, timeout=180, env=env)
        grid = _grid_args(data_dir, tmp_path / "grid", "naive", "--repeats", "1", "--ray-address",
                          f"127.0.0.1:{port}")
        done = subprocess.run([sys.executable, "-m", "forecaster.cli", *grid], capture_output=True, text=True,
                              timeout=300, env=env)  # fmt: skip
    finally:
        _stop_head(port)
    assert done.returncode == 0, done.stderr[-2000:]
    assert read_results(tmp_path / "grid" / "results.csv")["model"].tolist() == ["naive"]


def test_a_head_without_cpus_says_the_grid_waits_and_runs_it_when_a_worker_joins(
    data_dir: Path, tmp_path: Path
) -> None:
    """A head started with `--num-cpus 0` and no worker had the grid wait for ever without a word (h140 F6):
    it is said once, and the grid waits on (the head of an autoscaling cluster has no CPUs either)."""
    ray_cli, port = str(Path(sys.executable).parent / "ray"), _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # whatever token this machine holds
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths are under it
    head = [ray_cli, "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus",
            "0", "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", temp]
    address = f"127.0.0.1:{port}"
    grid = _grid_args(data_dir, tmp_path / "grid", "naive", "--repeats", "1", "--ray-address", address)
    err, driver = tmp_path / "stderr.txt", None
    try:
        subprocess.run(head, check=True, capture_output=True, timeout=180, env=env)
        with err.open("w") as written:
            command = [sys.executable, "-m", "forecaster.cli", *grid]
            driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=written, env=env)
        _wait_until(lambda: "waiting for CPUs" in err.read_text(), 180, "the wait is said")
        worker = [ray_cli, "start", "--address", address, "--num-cpus", "1", "--disable-usage-stats"]
        subprocess.run(worker, check=True, capture_output=True, timeout=180, env=env)
        assert driver.wait(timeout=300) == 0, err.read_text()[-2000:]
    finally:
        if driver is not None:
            driver.kill()
            driver.wait()
        _stop_head(port)
        shutil.rmtree(temp, ignore_errors=True)
    assert err.read_text().splitlines() == [
        f"forecaster: warning: waiting for CPUs: the cluster at {address} has 0 free CPUs; each cell needs 1"]
    assert read_results(tmp_path / "grid" / "results.csv")["model"].tolist() == ["naive"]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit():
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                tree.setdefault(parent, []).append(int(entry.name))
        except OSError:
            continue
    return tree


def _stop_head(port: int) -> None:
    """Stop the Ray head on `port` and every process it started, and nothing else (`ray stop` would stop
    every Ray on the machine)."""
    tree, found = _children(), []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
            if re.search(rb"[:=]%d(\x00| |$)" % port, command):  # --port=P, --gcs-address=HOST:P
                found.append(int(entry.name))
        except OSError:
            continue
    stack = list(found)
    while stack:
        for child in tree.get(stack.pop(), []):
            if child not in found:
                found.append(child)
                stack.append(child)
    current = Path("/tmp/ray/ray_current_cluster")  # where `ray start` says which cluster is the latest
    if current.is_file() and current.read_text().strip().endswith(f":{port}"):
        current.unlink()
    for signum in (signal.SIGTERM, signal.SIGKILL):
        for pid in filter(_alive, found):
            os.kill(pid, signum)
        deadline = time.monotonic() + 10
        while any(map(_alive, found)) and time.monotonic() < deadline:
            time.sleep(0.2)

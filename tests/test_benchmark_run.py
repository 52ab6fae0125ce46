"""The benchmark's run around its cells: Ray started where a cell needs it and given resolved paths, stops
unwinding Ray's work, one command per --out, and why a peer model cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("neuralforecast")

from forecaster.benchmark import BenchmarkConfig, Cell, executors, grid_cells, read_results  # noqa: E402
from forecaster.cli import main  # noqa: E402
from forecaster.errors import ForecasterError  # noqa: E402


def test_ray_tasks_get_their_datasets_paths_resolved_once_per_dataset(data_dir, tmp_path, monkeypatch):
    """Each cell's task gets its dataset's folder and --out as this process resolves them, each dataset found
    once per run (h143 8): the run's check found it, then the tasks' submission again (h149). Ray stands in
    here, running each task as submitted."""
    import sys
    from contextlib import nullcontext
    from types import SimpleNamespace

    import forecaster.data
    from forecaster.benchmark import run_benchmark

    located, found, sent, rows = [], forecaster.data.locate_dataset, {}, {}

    def locate(name, folder=None):
        located.append(name)
        return found(name, folder)

    class Task:
        def options(self, **resources):
            return self

        def remote(self, cell, config, threads):
            sent[cell], rows[cell] = config, executors._run_cell_on_ray(cell, config, threads)
            return cell

    errors = SimpleNamespace(RayTaskError=RuntimeError, RayError=RuntimeError)
    fake = SimpleNamespace(cluster_resources=lambda: {"CPU": 2}, available_resources=lambda: {"CPU": 2},
                           remote=lambda function: Task(), get=rows.get, exceptions=errors,
                           wait=lambda running, num_returns, timeout=None: (running[:1], []))  # fmt: skip
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(executors, "ray_started", lambda address: nullcontext())
    monkeypatch.setattr(forecaster.data, "locate_dataset", locate)
    monkeypatch.chdir(tmp_path)
    config = BenchmarkConfig(datasets=["ILI", "ETTh1"], horizons=(24, 36), models=["naive"], repeats=1,
                             out_dir=Path("out"), data_dir=data_dir, jobs=2, progress=False)  # fmt: skip
    outcome = run_benchmark(config)
    assert sorted(located) == ["ETTh1", "ILI"] and len(outcome.ran) == 4 and set(outcome.ran) == set(sent)
    for cell, given in sent.items():
        assert given.out_dir == tmp_path / "out" and given.data_dir == found(cell.dataset, data_dir).parent


def test_a_cell_reads_the_csv_of_its_grid_once(tmp_path: Path, monkeypatch) -> None:
    """A --csv grid's cell read the whole file twice where it loaded it (a Ray worker, or this process),
    once to size its source, once for its series."""
    import pandas as pd

    import forecaster.data
    from forecaster.benchmark.runners import prepared_for

    csv = tmp_path / "mine.csv"
    pd.DataFrame({"date": pd.date_range("2020-01-01", periods=400, freq="D"), "y": range(400)}).to_csv(
        csv, index=False)  # fmt: skip
    reads, read = [], forecaster.data.read_csv
    monkeypatch.setattr(forecaster.data, "read_csv", lambda path, *args, **kwargs: reads.append(path)
                        or read(path, *args, **kwargs))  # fmt: skip
    config = BenchmarkConfig(csv=csv, horizons=(24,), models=["naive"], out_dir=tmp_path / "out")
    prepared = prepared_for(Cell("mine", 24, "naive", 0), {}, config)
    assert reads == [csv] and len(prepared.series) == 400 and prepared.source.csv == csv


def test_a_cluster_that_loses_its_cpus_mid_grid_says_the_wait(monkeypatch, tmp_path: Path) -> None:
    """The CPUs were checked once, as the tasks were submitted: a cluster whose workers were lost later had
    the grid wait again without a word (h149). Each loss is said once, while the wait lasts; Ray stands in
    here: each `wait` either returns a task or times out with the cluster at a given count of CPUs."""
    import sys
    import warnings
    from contextlib import nullcontext
    from types import SimpleNamespace

    from forecaster import cluster
    from forecaster.errors import ForecasterWarning

    waits, cpus = [0, 0, None, 1, 0, None], [1]  # None: a task returns; else the cluster's CPUs meanwhile

    class Task:
        def options(self, **resources):
            return self

        def remote(self, cell, config, threads):
            return cell

    def wait(running, num_returns, timeout=None):
        while timeout is None and waits[0] is not None:  # a wait without timeout returns when a task does
            waits.pop(0)
        if (then := waits.pop(0)) is None:
            return running[:1], running[1:]
        cpus[0] = then
        return [], running

    errors = SimpleNamespace(RayTaskError=RuntimeError, RayError=RuntimeError)
    context = SimpleNamespace(gcs_address="10.0.0.7:6379")
    resources = lambda: {"CPU": cpus[0]}  # noqa: E731 (its own tasks take none of the free ones)
    fake = SimpleNamespace(cluster_resources=resources, available_resources=resources, wait=wait,
                           remote=lambda function: Task(), get=lambda cell: {}, exceptions=errors,
                           get_runtime_context=lambda: context)  # fmt: skip
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(executors, "ray_started", lambda address: nullcontext())
    monkeypatch.setattr(cluster, "WATCH_SECONDS", 0)  # the watch looks after every wait
    config = BenchmarkConfig(datasets=["ILI"], out_dir=tmp_path, jobs=1)
    recorded = []
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        executors.run_on_ray([Cell("ILI", 24, "naive", 0), Cell("ILI", 36, "naive", 0)], config,
                             lambda cell, row: recorded.append(cell),
                             SimpleNamespace(start_parallel=lambda jobs, threads: None))  # fmt: skip
    line = "waiting for CPUs: the cluster at 10.0.0.7:6379 has 0 free CPUs; each cell needs 1"
    assert [(warning.category, str(warning.message)) for warning in said] == [(ForecasterWarning, line)] * 2
    assert len(recorded) == 2 and waits == []


def test_ray_is_started_for_a_tuned_cell_only_where_its_search_is_still_to_run(
    tmp_path: Path, monkeypatch
) -> None:
    """A resumed grid whose tuned cells' search was done (repeats 1.. left) trains them without Ray, as
    before Ray was started up front for the grid: it had been started for every tuned cell (h155), and where
    Ray is missing such a grid was refused "Ray is not installed"."""
    from contextlib import nullcontext

    from forecaster.benchmark import executors
    from forecaster.benchmark.lineup import TUNED
    from forecaster.benchmark.runners import tuning_dir

    started = []
    monkeypatch.setattr(executors, "ray_started", lambda address: started.append(address) or nullcontext())
    config = BenchmarkConfig(datasets=["ILI"], out_dir=tmp_path, jobs=1)
    cells = [Cell("ILI", 24, TUNED, 1), Cell("ILI", 24, "naive", 0)]
    tuning_dir(config, cells[0]).mkdir(parents=True)  # its search, kept
    with executors.ray_for(config, cells):
        assert started == []
    with executors.ray_for(config, [Cell("ILI", 36, TUNED, 0)]):  # a search to run: on Ray
        assert started == [None]


def test_each_stop_unwinds_rays_work_as_system_exit_then_reaches_the_handler_before() -> None:
    """Inside `ray.wait` Ray drops what a signal handler raises unless it is SystemExit (the CLI's Ctrl-C went
    unheard, h149): Ctrl-C, SIGTERM and SIGHUP each unwind as SystemExit(128 + signal), and the handler in
    place before (the CLI's one line) is given the signal after."""
    import signal

    from forecaster.atomic import STOP_SIGNALS
    from forecaster.cluster import stops_as_exit

    seen: list[int] = []
    for signum in STOP_SIGNALS:
        seen.clear()
        before = signal.signal(signum, lambda number, frame: seen.append(number))
        try:
            with pytest.raises(SystemExit) as caught, stops_as_exit():
                signal.raise_signal(signum)
                pytest.fail("the stop did not unwind")
        finally:
            signal.signal(signum, before)
        assert caught.value.code == 128 + signum and seen == [signum], signum


def test_a_grid_whose_out_another_command_runs_in_is_refused(data_dir: Path, tmp_path: Path, capsys) -> None:
    """Two commands on one --out (the grid started again in another terminal) ran every cell twice and
    recorded each row twice: the second is refused while the first holds the folder."""
    from forecaster.atomic import held_by_this_run

    out = tmp_path / "grid"
    grid = ["benchmark", "--datasets", "ILI", "--horizons", "24", "--models", "naive", "--repeats", "1",
            "--data-dir", str(data_dir), "--out", str(out), "--no-progress"]
    with held_by_this_run(out, "the first command"):
        assert main(grid) == 2
        assert not (out / "results.csv").exists()
    said = capsys.readouterr().err
    assert said.startswith(f"forecaster: error: --out {out} is in use by another run (process "), said
    assert main(grid) == 0 and len(read_results(out / "results.csv")) == 1


def test_a_run_removes_the_folders_it_made_and_none_that_were_there(tmp_path: Path) -> None:
    """A run's hold on its folder removed that folder after, left empty, even one the user had made, and left
    the folders above it that the run made (a failed `--out a/b/grid`, h149)."""
    from forecaster.atomic import held_by_this_run

    mine = tmp_path / "mine"
    mine.mkdir()
    with held_by_this_run(mine / "a" / "b", "a run"):
        assert (mine / "a" / "b" / "lock").is_file()
    with held_by_this_run(mine, "a run"):
        pass
    assert mine.is_dir() and not any(mine.iterdir())


class _NotInstalled:
    """A meta path finder for which `package` is not installed: `import` raises what it raises then."""

    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(self, name: str, *args: object) -> None:
        if name.partition(".")[0] == self.package:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


@pytest.mark.parametrize(("hidden", "said"), [
    ("ray", r"which cannot be imported \(No module named 'ray'\);"),  # neuralforecast imports Ray
    ("neuralforecast", r"which is not installed;"),
], ids=["ray-missing", "neuralforecast-missing"])
def test_a_peer_model_says_truly_why_neuralforecast_is_unusable(monkeypatch, hidden: str, said: str) -> None:
    """neuralforecast installed but Ray not was 'neuralforecast, which is not installed (No module named ray)'
    (h140 F9): each package named as it is, missing or there but failing to import."""
    import sys

    packages = ("neuralforecast", "ray", "forecaster.integrations.neuralforecast")
    for name in [name for name in sys.modules if name.startswith(packages)]:  # imported afresh
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NotInstalled(hidden), *sys.meta_path])
    expected = rf"^models dlinear come from neuralforecast, {said}"
    try:
        with pytest.raises(ForecasterError, match=expected) as caught:
            grid_cells(BenchmarkConfig(models=["dlinear"]))
    finally:  # no second copy of a module the failed import reached stays for the next tests
        for name in [name for name in sys.modules if name.startswith(packages)]:
            del sys.modules[name]
    assert str(caught.value).endswith("install it with `pip install 'forecaster[baselines]'`")

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
    """Each cell's task gets its dataset's folder and --out as this process resolves them, found once per
    dataset, not for every cell submitted (h143 8): Ray stands in here, running each task as submitted."""
    import sys
    from types import SimpleNamespace

    import forecaster.data

    located, found, sent = [], forecaster.data.locate_dataset, {}

    def locate(name, folder=None):
        located.append(name)
        return found(name, folder)

    class Task:
        def options(self, **resources):
            return self

        def remote(self, cell, config, threads):
            sent[cell] = config
            return cell

    errors = SimpleNamespace(RayTaskError=RuntimeError, RayError=RuntimeError)
    fake = SimpleNamespace(cluster_resources=lambda: {"CPU": 2}, available_resources=lambda: {"CPU": 2},
                           remote=lambda function: Task(),
                           wait=lambda running, num_returns: (running[:1], running[1:]), get=lambda cell: {},
                           exceptions=errors)  # fmt: skip
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(forecaster.data, "locate_dataset", locate)
    monkeypatch.chdir(tmp_path)
    config = BenchmarkConfig(datasets=["ILI", "ETTh1"], out_dir=Path("out"), data_dir=data_dir, jobs=2)
    cells = [Cell(name, horizon, "naive", 0) for name in ("ILI", "ETTh1") for horizon in (24, 36, 48)]
    recorded = []
    executors._run_tasks(cells, config, lambda cell, row: recorded.append(cell),
                         SimpleNamespace(start_parallel=lambda jobs, threads: None))  # fmt: skip
    assert sorted(located) == ["ETTh1", "ILI"] and set(recorded) == set(cells) == set(sent)
    for cell, given in sent.items():
        assert given.out_dir == tmp_path / "out" and given.data_dir == found(cell.dataset, data_dir).parent


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

"""The house rules of ../shared/ARCHITECTURE.md that the code itself can be held to: file sizes, which way
imports run, one scaler, and command-line flags that are the settings' own fields; and the test groups that
`make test` relies on."""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from forecaster.cli import build_parser
from forecaster.commands.train import model_options
from forecaster.models import FORECAST, MODELS, model_names

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("forecaster", "service", "kernels")
SOURCES = sorted(path for package in PACKAGES for path in (REPO / package).rglob("*.py"))
MAX_LINES = 450


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_source_file_is_over_the_size_limit() -> None:
    sizes = {str(path.relative_to(REPO)): len(path.read_text().splitlines()) for path in SOURCES}
    long = {name: lines for name, lines in sizes.items() if lines > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines: {long}"


@pytest.mark.parametrize(
    ("room", "forbidden"),
    [
        ("forecaster/training",
         ("forecaster.benchmark", "forecaster.bench", "forecaster.commands", "service")),
        ("forecaster/nn", ("lightning", "pandas", "forecaster.data", "forecaster.training", "service")),
        ("service", ("lightning", "forecaster.training", "forecaster.benchmark", "forecaster.commands")),
        ("forecaster/models", ("lightning", "forecaster.training", "forecaster.artifacts", "service")),
        ("forecaster/data", ("forecaster.models", "forecaster.training", "forecaster.artifacts", "service")),
    ],
)
def test_imports_run_the_way_the_house_plan_says(room: str, forbidden: tuple[str, ...]) -> None:
    wrong = {
        f"{path.relative_to(REPO)} imports {module}"
        for path in (REPO / room).rglob("*.py")
        for module in imported_modules(path)
        if any(module == name or module.startswith(f"{name}.") for name in forbidden)
    }
    assert not wrong, sorted(wrong)


def test_the_ground_floor_uses_nothing_above_it() -> None:
    ground = ("errors", "checks", "registry", "metrics", "devices")
    allowed = {f"forecaster.{name}" for name in ground} | {"forecaster.data.scaling"}
    for name in ground:
        modules = imported_modules(REPO / "forecaster" / f"{name}.py")
        above = {module for module in modules if module.startswith("forecaster")}
        assert above <= allowed, (name, above - allowed)


def test_there_is_one_scaler() -> None:
    pattern = re.compile(r"def standardize|StandardScaler")
    users = {str(path.relative_to(REPO)) for path in SOURCES if pattern.search(path.read_text())}
    assert users == {"forecaster/data/scaling.py"}


def test_a_series_own_rows_are_counted_in_one_place() -> None:
    """`splits.series_lengths` counts each series' rows from its first value to its last: hand copies of it
    were left beside it (h143 4)."""
    pattern = re.compile(r"(\w+)\.stop - \1\.start")
    users = {str(path.relative_to(REPO)) for path in SOURCES if pattern.search(path.read_text())}
    assert users == {"forecaster/data/splits.py"}


def test_train_flags_are_the_model_config_fields() -> None:
    """Every command-line field of every forecaster config has a flag that reaches the config, and no
    model flag is something a config lacks."""
    parser = build_parser(["train"])
    train = next(action for action in parser._subparsers._group_actions[0].choices.values()
                 if action.prog.endswith("train"))
    groups = {group.title: {action.dest for action in group._group_actions} for group in train._action_groups}
    for name in model_names(FORECAST):
        config = MODELS.get(name).config_class
        fields = {field.name for field in dataclasses.fields(config) if field.metadata.get("cli")}
        flags = groups[f"{name} options"]
        assert flags <= fields, flags - fields
        others = {dest for title, dests in groups.items() if title.endswith(" options") for dest in dests}
        assert fields <= others, fields - others

    base = ["train", "--dataset", "ETTm2", "--horizon", "24", "--out", "x"]
    args = parser.parse_args([*base, "--d-model", "16", "--ffn", "--norm", "layer", "--n-harmonics", "3"])
    expected = {"d_model": 16, "ffn": True, "norm": "layer", "n_harmonics": 3}
    assert model_options(args, "s3attention") == expected
    with pytest.raises(ValueError, match="--ffn, --norm: not an option of model 'tnn'"):
        model_options(parser.parse_args([*base, "--model", "tnn", "--ffn", "--norm", "layer"]), "tnn")


def test_a_flag_states_one_default() -> None:
    """A default the help explains itself (a season from the data's frequency, a progress bar only at a
    terminal) is not followed by the field's own value ("... (default: from the data's frequency) (default 1)"
    said two things)."""
    parser = build_parser(["train"])
    train = next(action for action in parser._subparsers._group_actions[0].choices.values()
                 if action.prog.endswith("train"))
    helps = {action.dest: action.help for action in train._actions if action.help}
    assert not [text for text in helps.values() if re.search(r"\(default[^)]*\) \(default[^)]*\)$", text)]
    assert helps["season"] == "season length in steps (default: from the data's frequency)"
    assert helps["progress_bar"].endswith("(default: train only at a terminal, tune off, the Python API on)")
    assert helps["batch_size"].endswith("(default 32)")  # a plain default is still shown


def test_flags_are_checked_when_parsed(capsys: pytest.CaptureFixture) -> None:
    parser = build_parser(["train"])
    base = ["train", "--dataset", "ETTm2", "--horizon", "24", "--out", "x"]
    for argv, message in (
        ([*base, "--d-model", "0"], "argument --d-model: expected an integer >= 1 and <= 16384, got 0"),
        ([*base, "--dropout", "1.5"], "argument --dropout: expected a finite number >= 0 and < 1, got 1.5"),
        ([*base, "--batch-size", "x"], "argument --batch-size: expected an integer, got 'x'"),
        ([*base, "--lr", "0"], "argument --lr: expected a finite number > 0 and <= 10, got 0.0"),
        ([*base, "--lr", "1e300"], "argument --lr: expected a finite number > 0 and <= 10, got 1e+300"),
        ([*base, "--norm", "group"], "argument --norm: expected one of batch_time"),
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        assert message in capsys.readouterr().err


def test_make_tests_groups_keep_their_tests_in_one_process(tmp_path: Path) -> None:
    """`make test` (`--dist loadgroup`) runs each `xdist_group` in one test process: the Ray tests find Ray's
    processes by name, and module fixtures start once. pytest 9.2 with xdist 3.8 silently spread them."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_grouped.py").write_text(
        "import os, pytest\n"
        "@pytest.mark.xdist_group('together')\n"
        "@pytest.mark.parametrize('k', range(6))\n"
        "def test_grouped(k):\n"
        "    with open('workers.txt', 'a') as out:\n"
        "        out.write(os.environ['PYTEST_XDIST_WORKER'] + '\\n')\n"
        "@pytest.mark.parametrize('k', range(6))\n"
        "def test_free(k):\n"
        "    pass\n"
    )
    command = [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    workers = (tmp_path / "workers.txt").read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, workers

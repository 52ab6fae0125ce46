"""LRA presets (the paper's and the default budget, given values winning) and `forecaster lra benchmark`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from forecaster.artifacts import load_bundle
from forecaster.cli import main
from forecaster.devices import machine_name
from forecaster.errors import ConfigError, DataError
from forecaster.lra.benchmark import (
    LRABenchmarkSettings,
    paper_accuracy,
    read_lra_results,
    run_lra_benchmark,
    write_summary,
)
from forecaster.lra.presets import PRESETS
from forecaster.lra.settings import LRASettings, apply_preset
from forecaster.lra.tasks import TASKS
from forecaster.nn.attention import names as mixer_names

TINY = ["--steps", "2", "--batch-size", "4", "--seq-len", "40", "--n-train", "8", "--n-eval", "4",
        "--d-model", "16", "--mlp-dim", "16", "--hidden-dim", "16", "--no-progress"]  # fmt: skip


def test_every_preset_sets_each_task_a_budget_and_an_optimizer():
    for name, tasks in PRESETS.items():
        assert set(tasks) == set(TASKS), name
        for task, preset in tasks.items():
            training = preset.training
            assert ("steps" in training) != ("epochs" in training), (name, task)
            assert {"lr", "weight_decay", "batch_size"} <= set(training), (name, task)
            assert {"d_model", "n_heads", "n_layers", "mlp_dim", "dropout", "pooling"} <= set(preset.model)


def test_paper_preset_is_paper_001_table_8_on_the_lra_code():
    settings, model = apply_preset(LRASettings(task="listops", mixer="skeleton", preset="paper"), {})
    assert (settings.epochs, settings.steps, settings.batch_size, settings.lr, settings.weight_decay) == (
        5, None, 32, 1e-4, 0.0)  # fmt: skip
    assert (settings.warmup_steps, settings.seq_len) == (1000, 2048)
    assert model == {"d_model": 64, "n_heads": 2, "n_layers": 2, "mlp_dim": 128, "hidden_dim": 128,
                     "pooling": "mean-all", "dropout": 0.0,
                     "mixer_options": {"block": "reference", "dropout": 0.0, "smoother_dropout": 0.0}}
    pathfinder, _ = apply_preset(LRASettings(task="pathfinder", preset="paper"), {})
    assert (pathfinder.epochs, pathfinder.batch_size, pathfinder.n_train, pathfinder.n_eval) == (
        100, 256, 160_000, 20_000)  # fmt: skip
    # Text: dropout 0.5 / 0.1 / 0.5; the attention dropout reaches mixers that declare one, and no other.
    _, softmax = apply_preset(LRASettings(task="text", mixer="softmax", preset="paper"), {})
    assert softmax["dropout"] == 0.5 and softmax["mixer_options"] == {"dropout": 0.1}


# The mixers whose reference code has no attention dropout, and where that code puts its one dropout.
_TNN = "OpenNLPLab/Tnn run_task.sh passes its one dropout to model.dropout, the blocks' residual dropout"
NO_ATTENTION_DROPOUT = {
    "tnn": _TNN,
    "ski_tnn": f"paper 003 trains SKI-TNN on the TNN code and settings: {_TNN}",
    "fd_tnn": f"paper 003 trains FD-TNN on the TNN code and settings: {_TNN}",
    "mra2": "mlpen/mra-attention's Attention has no dropout; its LRA configs set only the blocks' dropout",
    "mra2_s": "the MRA-2 code with approx_mode sparse",
}


@pytest.mark.parametrize("mixer", sorted(mixer_names()))
def test_paper_attention_dropout_reaches_the_mixers_whose_reference_has_one(mixer):
    """Every other mixer drops attention weights (or, without weights, the mixed values) in its reference."""
    _, model = apply_preset(LRASettings(task="text", mixer=mixer, preset="paper"), {})
    assert model["dropout"] == 0.5  # the embedding dropout, which every classifier takes
    assert ("dropout" in model["mixer_options"]) == (mixer not in NO_ATTENTION_DROPOUT), (
        NO_ATTENTION_DROPOUT.get(mixer, "the reference has an attention dropout"))


def test_default_preset_follows_the_measured_evidence_and_given_values_win():
    settings, model = apply_preset(LRASettings(task="listops"), {})
    assert (settings.preset, settings.steps, settings.lr, settings.batch_size) == ("default", 8000, 1e-3, 32)
    assert model["dropout"] == 0.0 and model["pooling"] == "mean"
    given = LRASettings(task="listops", mixer="skeleton", preset="paper", steps=100, lr=5e-4)
    settings, model = apply_preset(given, {"dropout": 0.2, "mixer_options": {"smoother_dropout": 0.3}})
    assert (settings.steps, settings.epochs, settings.lr, settings.batch_size) == (100, None, 5e-4, 32)
    assert model["dropout"] == 0.2 and model["d_model"] == 64
    assert model["mixer_options"] == {"block": "reference", "dropout": 0.0, "smoother_dropout": 0.3}
    with pytest.raises(ConfigError, match="--steps or --epochs"):
        LRASettings(task="listops", steps=10, epochs=1)
    with pytest.raises(ConfigError, match="preset"):
        LRASettings(task="listops", preset="fast")


def test_cli_train_flags_override_the_preset(tmp_path):
    args = ["lra", "train", "--task", "listops", "--model", "softmax", "--preset", "paper", *TINY, "--lr",
            "0.01", "--out", str(tmp_path / "run"), "--cache-dir", str(tmp_path / "cache")]  # fmt: skip
    args[args.index("--steps") : args.index("--steps") + 2] = ["--epochs", "1"]  # 1 x 8 samples / 4 = 2 steps
    assert main(args) == 0
    bundle = load_bundle(tmp_path / "run", task="classify")
    training = bundle.training
    assert (training["preset"], training["epochs"], training["steps"]) == ("paper", 1, 2)
    assert training["lr"] == 0.01
    assert training["warmup_steps"] == 2 and training["weight_decay"] == 0.0  # the preset's 1000, capped
    config = bundle.model.config
    assert (config.d_model, config.pooling, config.dropout, config.n_layers) == (16, "mean-all", 0.0, 2)


def test_paper_accuracy_names_table_1_rows():
    assert paper_accuracy("skeleton:block=reference", "pathfinder") == 75.82
    assert paper_accuracy("softmax", "listops") == 36.37
    assert paper_accuracy("tnn", "listops") is None and paper_accuracy("mra2", "image") is None


def test_lra_benchmark_records_each_cell_and_a_rerun_skips_them(tmp_path, capsys):
    out, cache = tmp_path / "grid", tmp_path / "cache"
    grid = ["lra", "benchmark", "--tasks", "listops", "--mixers", "softmax,linear", "--out", str(out), *TINY,
            "--cache-dir", str(cache)]  # fmt: skip
    assert main(grid) == 0
    assert "2 cells run, 0 already done, 0 failed" in capsys.readouterr().out
    results = pd.read_csv(out / "results.csv")
    assert results[["task", "model", "seed", "preset", "steps", "n_train"]].values.tolist() == [
        ["listops", "softmax", 0, "default", 2, 8], ["listops", "linear", 0, "default", 2, 8]]
    assert results["test_acc"].between(0, 1).all() and (out / "runs" / "listops-linear-seed0").is_dir()
    summary = (out / "summary.md").read_text()
    assert "| task | softmax | linear | majority class |" in summary
    assert "(paper 36.37)" in summary and "(paper 16.13)" in summary  # paper 001 Table 1, ListOps
    assert f"| listops | default | 2 | 4 | 0.001 | 8 / 4 | 40 | {machine_name()} |" in summary
    assert main(grid) == 0
    assert "0 cells run, 2 already done" in capsys.readouterr().out
    assert len(pd.read_csv(out / "results.csv")) == 2
    assert json.loads((out / "settings.json").read_text())["steps"] == 2
    assert main([*grid, "--lr", "0.5"]) == 2
    assert "rerun with the same settings to resume" in capsys.readouterr().err


def test_lra_benchmark_failing_cell_is_one_line_and_the_others_are_kept(tmp_path):
    (tmp_path / "grid").mkdir()
    (tmp_path / "grid" / "results.csv").write_text("dataset,horizon\nETTm2,96\n")
    mixers = ["softmax:kernel=bogus", "softmax"]  # the first fails when its model is built
    grid = LRABenchmarkSettings(tasks=["listops"], mixers=mixers, out=tmp_path / "grid")
    training = {"steps": 2, "batch_size": 4, "seq_len": 40, "n_train": 8, "n_eval": 4, "progress": False,
                "cache_dir": tmp_path / "cache"}
    with pytest.raises(DataError, match="not an LRA benchmark record"):
        run_lra_benchmark(grid, training, {"d_model": 16})
    (tmp_path / "grid" / "results.csv").unlink()
    lines: list[str] = []
    outcome = run_lra_benchmark(grid, training, {"d_model": 16}, echo=lines.append)
    assert outcome.failed == ["listops · softmax:kernel=bogus · seed 0: failed: ValueError: softmax kernel "
                              "must be 'sdpa' or 'math', got 'bogus'"]
    assert lines[0] == outcome.failed[0] and len(lines) == 2 and outcome.ran == ["listops · softmax · seed 0"]
    assert pd.read_csv(outcome.results)["model"].tolist() == ["softmax"]
    assert "## Failed in the latest run" in outcome.summary.read_text()


def test_the_committed_lra_record_is_whole_and_readme_states_it(tmp_path):
    """data/lra: rows made under its settings.json on LRA's data sizes, summary.md's accuracy table is what
    its rows make, and README's LRA table states each row's accuracy."""
    record = Path(__file__).resolve().parents[1] / "data" / "lra"
    results = read_lra_results(record / "results.csv")
    settings = json.loads((record / "settings.json").read_text())
    assert settings["preset"] == "paper" and set(results["preset"]) == {"paper"}
    assert not results.duplicated(["task", "model", "seed"]).any()
    listops = results[results["task"] == "listops"]
    assert (listops["n_train"] == 96_000).all() and (listops["n_test"] == 2_000).all()
    assert (listops["steps"] == 15_000).all()  # 5 epochs of 96,000 at batch 32, paper 001 Table 8
    assert (results["test_acc"] > results["majority_class_rate"]).all()
    remade = write_summary(results, tmp_path / "summary.md", settings, [])
    table = [line for line in remade.read_text().splitlines() if line.startswith("| listops |")][0]
    assert table in (record / "summary.md").read_text()
    readme = (record.parents[1] / "README.md").read_text().replace("**", "")
    for row in results.itertuples():
        assert f"{100 * row.test_acc:.2f} (val {100 * row.val_acc:.2f}" in readme

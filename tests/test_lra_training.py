"""LRA training through Lightning, the `forecaster lra train` and `forecaster bench attention` commands."""

from __future__ import annotations

import json

import pytest
import torch
from rich.console import Console
from safetensors.torch import load_file

from forecaster.artifacts import load_bundle
from forecaster.bench.attention import (
    AttentionBenchRow,
    AttentionBenchSettings,
    attention_bench_table,
    run_attention_bench,
)
from forecaster.cli import main
from forecaster.devices import machine_name
from forecaster.errors import BundleError
from forecaster.lra.settings import LRASettings
from forecaster.lra.training import train_lra, warmup_linear_decay
from forecaster.models.lra import LRAClassifier, LRAConfig
from forecaster.nn import attention
from forecaster.nn.attention import parse_mixer_spec
from forecaster.nn.attention.base import redraw_random_components


def test_warmup_then_linear_decay():
    factors = [warmup_linear_decay(step, warmup_steps=4, total_steps=12) for step in range(13)]
    assert factors[:4] == [0.25, 0.5, 0.75, 1.0]
    assert factors[4] == 1.0 and factors[8] == 0.5 and factors[12] == 0.0
    assert all(a >= b for a, b in zip(factors[3:], factors[4:], strict=False))


def test_train_lra_writes_a_reloadable_run(tmp_path):
    settings = LRASettings(task="listops", mixer="softmax", steps=3, batch_size=8, seq_len=48, n_train=16,
                           n_eval=8, out=tmp_path / "run", cache_dir=tmp_path / "cache", progress=False)
    metrics = train_lra(settings, d_model=16, mlp_dim=16, hidden_dim=16)
    assert metrics["steps"] == 3 and metrics["n_test"] == 8 and 0 <= metrics["test_acc"] <= 1
    assert 0 < metrics["majority_class_rate"] <= 1
    bundle = load_bundle(tmp_path / "run", task="classify")
    assert bundle.metrics == metrics and bundle.model_name == "lra_classifier"
    assert bundle.model.config.seq_len == 48 and bundle.model.config.vocab_size == 15  # LRA's tokens
    assert metrics["listops_tokens"] == "lra"
    saved = load_file(tmp_path / "run" / "weights.safetensors")
    assert all(torch.equal(tensor, saved[name]) for name, tensor in bundle.model.state_dict().items())
    assert bundle.training["task"] == "listops" and bundle.training["lr"] == 1e-3  # the default preset's
    assert metrics["preset"] == "default" and metrics["device"] == machine_name()  # Lightning's "auto"
    assert (tmp_path / ".run.work" / "logs" / "version_0" / "metrics.csv").is_file()
    with pytest.raises(BundleError, match="already exists"):
        train_lra(settings, d_model=16)


def test_train_lra_pixels_and_retrieval_pairs(tmp_path):
    pixels = train_lra(
        LRASettings(task="pathfinder", mixer="linear", steps=2, batch_size=4, n_train=8, n_eval=4,
                    out=tmp_path / "pf", cache_dir=tmp_path / "cache", progress=False),
        d_model=8,
        n_heads=1,
    )
    assert pixels["seq_len"] == 1024 and pixels["n_test"] == 4
    rows = "".join(f"{i % 2}\ta{i}\tb{i}\tdocument {i} text\tother {i} words\n" for i in range(6))
    for split in ("train", "eval", "test"):
        (tmp_path / f"new_aan_pairs.{split}.tsv").write_text(rows)
    pairs = train_lra(
        LRASettings(task="retrieval", mixer="skeleton", steps=2, batch_size=3, seq_len=32, data_dir=tmp_path,
                    out=tmp_path / "ret", progress=False),
        d_model=16,
    )
    assert pairs["n_train"] == 6
    assert load_bundle(tmp_path / "ret", task="classify").model_name == "lra_dual_classifier"


def _tiny_listops_run(tmp_path, name: str, mixer: str, mixer_options: dict) -> torch.nn.Module:
    """The classifier saved by 4 training steps (16 samples, batch 4)."""
    settings = LRASettings(task="listops", mixer=mixer, steps=4, batch_size=4, seq_len=48, n_train=16,
                           n_eval=4, out=tmp_path / name, cache_dir=tmp_path / "cache",
                           progress=False)  # fmt: skip
    train_lra(settings, d_model=16, mlp_dim=16, hidden_dim=16, mixer_options=mixer_options)
    return load_bundle(tmp_path / name, task="classify").model


@pytest.mark.parametrize(
    ("mixer", "options", "component", "redraws"),
    [
        ("reformer", {"chunk_len": 8}, "rotations", 3),  # before steps 1, 2 and 3 of 0..3
        ("performer", {"n_features": 8, "redraw_interval": 2}, "features", 1),  # before step 2
    ],
)
def test_training_redraws_the_random_components_on_schedule_and_reruns_save_the_same(
    tmp_path, mixer, options, component, redraws
):
    """Reformer hashes with new rotations every training step and Performer redraws its features every
    redraw_interval steps, as their reference codes do; each layer's draws come from its seeded generator,
    so a rerun saves the same weights, and the saved buffer is the last one trained with."""
    first = _tiny_listops_run(tmp_path, "first", mixer, options)
    second = _tiny_listops_run(tmp_path, "second", mixer, options)
    for name, tensor in first.state_dict().items():
        torch.testing.assert_close(second.state_dict()[name], tensor, atol=0, rtol=0, msg=name)
    fresh = type(first)(first.config)  # the draws the layers start from
    for block, trained in zip(fresh.encoder.blocks, first.encoder.blocks, strict=True):
        start = getattr(block.mixer, component).clone()
        for _ in range(redraws):
            block.mixer.redraw()
        assert not torch.equal(getattr(block.mixer, component), start)
        torch.testing.assert_close(getattr(trained.mixer, component), getattr(block.mixer, component),
                                   atol=0, rtol=0)  # fmt: skip


def test_redraw_interval_zero_keeps_the_first_draw():
    model = LRAClassifier(LRAConfig(mixer="reformer", seq_len=32, vocab_size=20, d_model=16,
                                    mixer_options={"chunk_len": 8, "redraw_interval": 0}))  # fmt: skip
    start = [block.mixer.rotations.clone() for block in model.encoder.blocks]
    assert redraw_random_components(model, step=5) == 0
    for block, first_draw in zip(model.encoder.blocks, start, strict=True):
        assert torch.equal(block.mixer.rotations, first_draw)
    with pytest.raises(ValueError, match="redraw_interval must be an integer >= 0"):
        attention.build("performer", d_model=8, n_heads=2, seq_len=8, redraw_interval=-1)


@pytest.mark.slow
def test_short_listops_run_of_the_skeleton_classifier_beats_the_majority_class(tmp_path):
    """300 steps on ListOps expressions of 16-64 tokens (full length: see the README's LRA note)."""
    metrics = train_lra(
        LRASettings(task="listops", mixer="skeleton", steps=300, batch_size=32, seq_len=64, n_train=2000,
                    n_eval=300, lr=1e-3, out=tmp_path / "run", cache_dir=tmp_path / "cache", progress=False),
        dropout=0.0,
    )
    assert metrics["test_acc"] > metrics["majority_class_rate"] + 0.1


def test_cli_lra_train_errors_name_the_missing_files(capsys):
    assert main(["lra", "train", "--task", "text"]) == 2
    assert "aclImdb" in capsys.readouterr().err
    assert main(["lra", "train", "--task", "listops", "--model", "nope"]) == 2
    assert "unknown mixer 'nope'" in capsys.readouterr().err
    assert main(["lra", "train", "--task", "listops", "--mixer-option", "n_features"]) == 2
    assert "not key=value" in capsys.readouterr().err


def test_cli_lra_train_runs(tmp_path, capsys):
    code = main(
        [
            "lra",
            "train",
            "--task",
            "listops",
            "--model",
            "performer",
            "--steps",
            "2",
            "--batch-size",
            "4",
            "--seq-len",
            "40",
            "--n-train",
            "8",
            "--n-eval",
            "4",
            "--d-model",
            "8",
            "--mixer-option",
            "n_features=16",
            "--out",
            str(tmp_path / "run"),
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert code == 0
    assert "test_acc" in capsys.readouterr().out
    options = load_bundle(tmp_path / "run", task="classify").model.config.mixer_options
    assert options == {"dropout": 0.0, "n_features": 16}  # the preset's attention dropout, the option given


def test_mixer_spec_parsing():
    spec = parse_mixer_spec("performer:n_features=128:kernel=math:redraw=true")
    assert spec.name == "performer" and spec.options == {"n_features": 128, "kernel": "math", "redraw": True}
    assert parse_mixer_spec("softmax:kernel=math").quadratic_memory
    with pytest.raises(ValueError, match="not key=value"):
        parse_mixer_spec("softmax:math")
    with pytest.raises(ValueError, match="unknown mixer 'nope'"):
        parse_mixer_spec("nope:x=1")


def test_memory_grows_quadratically_for_math_softmax_and_linearly_for_s3attention():
    """Peak bytes are deterministic allocation sizes: 4x the length costs ~16x with the n x n matrix."""
    settings = AttentionBenchSettings(
        models=["softmax:kernel=math", "skeleton"], lengths=[128, 512], batch=2, d_model=8, steps=1,
        device="cpu",
    )
    rows, _ = run_attention_bench(settings)
    peak = {(row.model, row.length): row.peak_bytes for row in rows}
    assert peak[("softmax:kernel=math", 512)] / peak[("softmax:kernel=math", 128)] > 10
    assert 3 < peak[("skeleton", 512)] / peak[("skeleton", 128)] < 5
    assert all(row.steps_per_second > 0 for row in rows)


def test_cli_bench_attention_table_and_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = main(
        [
            "bench",
            "attention",
            "--models",
            "softmax,fnet,local:window=8",
            "--lengths",
            "32,64",
            "--batch",
            "2",
            "--d-model",
            "16",
            "--steps",
            "1",
            "--device",
            "cpu",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    table = capsys.readouterr().out
    assert "steps/s 64" in table and "peak MiB 32" in table and "local:window=8" in table
    saved = json.loads(out.read_text())
    assert {(row["model"], row["length"]) for row in saved["rows"]} == {
        (m, n) for m in ("softmax", "fnet", "local:window=8") for n in (32, 64)
    }
    assert main(["bench", "attention", "--models", "softmax,bogus", "--lengths", "32"]) == 2
    assert "unknown mixer 'bogus'" in capsys.readouterr().err
    assert main(["bench", "attention", "--models", "softmax", "--lengths", "32", "--reference", "fnet"]) == 2
    assert "--reference 'fnet' is not one of --models" in capsys.readouterr().err


def test_bench_table_ratios_against_the_reference_row():
    rows = [
        AttentionBenchRow("softmax", 64, 2, 2.0, 400 * 2**20),
        AttentionBenchRow("softmax:kernel=math", 64, 2, 1.0, 800 * 2**20),
        AttentionBenchRow("skeleton", 64, 2, 4.0, 100 * 2**20),
    ]
    console = Console(width=200, record=True)
    console.print(attention_bench_table(rows, "t"))
    lines = {line.split()[1]: line for line in console.export_text().splitlines() if "│" in line}
    assert "4.00 (2.0x)" in lines["skeleton"] and "100 (4.0x)" in lines["skeleton"]
    console.print(attention_bench_table(rows, "t", reference="softmax:kernel=math"))
    lines = {line.split()[1]: line for line in console.export_text().splitlines() if "│" in line}
    assert "4.00 (4.0x)" in lines["skeleton"] and "100 (8.0x)" in lines["skeleton"]
    assert "(" not in lines["softmax:kernel=math"]


def test_bench_skips_runs_over_the_memory_budget():
    rows, _ = run_attention_bench(AttentionBenchSettings(
        models=["softmax:kernel=math"], lengths=[4096], batch=32, steps=1, memory_budget=2**20
    ))
    assert (
        rows[0].steps_per_second is None and rows[0].peak_bytes is None and rows[0].note.startswith("skipped")
    )

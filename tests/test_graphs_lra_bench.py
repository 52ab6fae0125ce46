"""CUDA graphs beyond forecasters: the LRA classifier's training step (numerics against eager on a GPU, the
run's record) and the graphed and compiled rows of `bench scaling` and `bench attention`."""

from __future__ import annotations

import re

import pytest
import torch
from rich.console import Console

from forecaster.bench.attention import (
    AttentionBenchRow,
    AttentionBenchSettings,
    attention_bench_table,
    run_attention_bench,
)
from forecaster.bench.scaling import ScalingSettings, run_scaling, scaling_table
from forecaster.bench.timing import compiled_if_asked
from forecaster.cli import main
from forecaster.lra.settings import LRASettings
from forecaster.lra.training import LRAModule, train_lra
from forecaster.models.lra import LRAClassifier, LRAConfig
from forecaster.training.graphs import WARMUP_STEPS


def _classifier_module(cuda_graphs: bool) -> LRAModule:
    torch.manual_seed(0)
    config = LRAConfig(mixer="skeleton", n_classes=10, seq_len=64, vocab_size=20, d_model=32, n_heads=2,
                       n_layers=2, mlp_dim=32, hidden_dim=32, dropout=0.0)  # fmt: skip
    return LRAModule(LRAClassifier(config).cuda(), lr=1e-3, weight_decay=0.01, warmup_steps=2,
                     total_steps=20, cuda_graphs=cuda_graphs)  # fmt: skip


def test_graphs_are_refused_on_the_cpu_in_one_line(capsys, tmp_path):
    code = main(["lra", "train", "--task", "listops", "--model", "softmax", "--accelerator", "cpu",
                 "--cuda-graphs", "--out", str(tmp_path / "run")])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "--cuda-graphs needs training on one CUDA device" in err[0]
    assert not (tmp_path / "run").exists()
    code = main(["bench", "scaling", "--lengths", "64", "--device", "cpu", "--modes", "eager,graphed"])
    assert code != 0
    assert "mode graphed replays CUDA graphs and needs a CUDA device, not cpu" in capsys.readouterr().err


def test_compiled_mode_times_the_classifier_under_torch_compile(capsys):
    model = torch.nn.Linear(2, 2)
    assert compiled_if_asked(model, "compiled") is not model and compiled_if_asked(model, "graphed") is model
    argv = ["bench", "attention", "--models", "skeleton", "--lengths", "32", "--batch", "2", "--steps", "1",
            "--d-model", "16", "--n-layers", "1", "--device", "cpu"]  # fmt: skip
    assert main([*argv, "--modes", "eager,compiled"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "skeleton" in line]
    assert len(rows) == 2 and "skeleton (compiled)" in rows[1] and re.search(r"\d+\.\d\d", rows[1])
    assert main([*argv, "--modes", "compiled-graphed"]) != 0
    assert "mode compiled-graphed replays CUDA graphs and needs a CUDA device" in capsys.readouterr().err


def test_tables_show_each_mode_against_the_reference_in_the_same_mode():
    rows = [
        AttentionBenchRow("softmax", 64, 2, 2.0, 400 * 2**20),
        AttentionBenchRow("skeleton", 64, 2, 4.0, 100 * 2**20),
        AttentionBenchRow("softmax", 64, 2, 3.0, None, mode="graphed", gpu_busy=0.9),
        AttentionBenchRow("skeleton", 64, 2, 12.0, None, mode="graphed", gpu_busy=0.8),
    ]
    console = Console(width=220, record=True)
    console.print(attention_bench_table(rows, "t"))
    lines = [line for line in console.export_text().splitlines() if "│" in line]
    graphed = next(line for line in lines if "skeleton (graphed)" in line)
    assert "12.00 (4.0x)" in graphed and "80%" in graphed
    assert "4.00 (2.0x)" in next(line for line in lines if "skeleton " in line and "graphed" not in line)


@pytest.mark.gpu
def test_a_graphed_classifier_step_follows_the_eager_trajectory():
    """20 steps with a partial batch among them: the same losses, accuracies and weights as eager steps."""
    torch.backends.cudnn.deterministic = True
    generator = torch.Generator().manual_seed(1)
    sizes = [16] * 7 + [5] + [16] * 12
    batches = [(torch.randint(1, 20, (n, 64), generator=generator).cuda(),
                torch.randint(0, 10, (n,), generator=generator).cuda()) for n in sizes]  # fmt: skip
    eager, graphed = _classifier_module(False), _classifier_module(True)
    eager_optimizer, graphed_optimizer = eager.configure_optimizers(), graphed.configure_optimizers()
    eager_optimizer, graphed_optimizer = eager_optimizer["optimizer"], graphed_optimizer["optimizer"]
    eager_trace, graphed_trace = [], []
    for tokens, labels in batches:
        eager_optimizer.zero_grad(set_to_none=True)
        loss, accuracy = eager.loss_and_accuracy(tokens, labels)
        loss.backward()
        eager_optimizer.step()
        eager_trace.append((loss.item(), accuracy.item()))
        loss, accuracy = graphed.graphed_step(tokens, labels)
        graphed_optimizer.step()
        graphed_trace.append((loss.item(), accuracy.item()))
    assert graphed.graphed_step.graph is not None and graphed.graphed_step.warmed_up == WARMUP_STEPS
    torch.testing.assert_close(torch.tensor(graphed_trace), torch.tensor(eager_trace), rtol=1e-5, atol=1e-5)
    for name, parameter in eager.named_parameters():
        torch.testing.assert_close(dict(graphed.named_parameters())[name], parameter, rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_lra_train_on_cuda_replays_its_step_and_says_so(tmp_path):
    settings = LRASettings(task="listops", mixer="skeleton", steps=12, batch_size=8, seq_len=48, n_train=40,
                           n_eval=8, out=tmp_path / "run", cache_dir=tmp_path / "cache", progress=False)
    metrics = train_lra(settings, d_model=16, mlp_dim=16, hidden_dim=16)
    assert metrics["cuda_graphs"] is True, metrics.get("cuda_graphs_error")
    assert metrics["steps"] == 12 and 0 <= metrics["test_acc"] <= 1


@pytest.mark.gpu
def test_bench_graphed_rows_are_captured_and_busier_than_eager():
    results = run_scaling(ScalingSettings(lengths=[1024], d_model=32, batch=2, heads=2, repeats=3,
                                          softmax_kernels=["sdpa"]))  # fmt: skip
    by_mode = {(result.layer, result.mode): result for result in results}
    assert set(by_mode) == {(layer, mode) for layer in ("s3attention", "softmax (sdpa)")
                            for mode in ("eager", "graphed")}  # fmt: skip
    s3_eager, s3_graphed = by_mode["s3attention", "eager"], by_mode["s3attention", "graphed"]
    assert s3_graphed.note == "" and s3_graphed.peak_bytes is None and s3_eager.peak_bytes > 0
    assert 0 < s3_eager.gpu_busy < s3_graphed.gpu_busy <= 1
    assert scaling_table(results, "t").row_count == 4
    settings = AttentionBenchSettings(models=["skeleton"], lengths=[256], batch=2, steps=3)
    rows, _ = run_attention_bench(settings)
    assert [row.mode for row in rows] == ["eager", "graphed"] and rows[1].note == ""
    assert rows[1].steps_per_second > 0 and 0 < rows[1].gpu_busy <= 1

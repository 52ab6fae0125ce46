"""The graph-captured training step (forecaster.training.graphs): where it is used, its numerics against the
eager step (GPU), a Lightning fit through it (GPU), and the train-step benchmark's table."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from forecaster.bench.train_step import TrainStepBenchSettings, run_train_step_bench, train_step_table
from forecaster.cli import main
from forecaster.data import load_dataset
from forecaster.errors import ConfigError
from forecaster.models import get_model
from forecaster.training.graphs import WARMUP_STEPS, GraphedStep, use_cuda_graphs
from forecaster.training.module import ForecastModule
from forecaster.training.settings import TrainerOptions, TrainSettings
from forecaster.training.workflows import train_forecaster


def test_cuda_graphs_are_used_only_on_one_cuda_device():
    cuda = torch.cuda.is_available() and torch.cuda.device_count() == 1
    assert use_cuda_graphs(None, "auto", "auto", "auto") is cuda
    assert use_cuda_graphs(None, "cpu", "auto", "auto") is False
    assert use_cuda_graphs(None, "gpu", 2, "ddp") is False
    assert use_cuda_graphs(False, "gpu", 1, "auto") is False
    with pytest.raises(ConfigError, match="--cuda-graphs needs training on one CUDA device"):
        use_cuda_graphs(True, "cpu", "auto", "auto")


def test_cuda_graphs_asked_for_on_the_cpu_is_one_clear_line(data_dir, tmp_path, capsys):
    code = main(["train", "--dataset", "ILI", "--data-dir", str(data_dir), "--horizon", "24",
                 "--accelerator", "cpu", "--cuda-graphs", "--out", str(tmp_path / "model")])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "--cuda-graphs needs training on one CUDA device" in err[0]
    assert not (tmp_path / "model").exists()


def test_train_step_bench_times_each_mode_on_the_same_batches(data_dir):
    settings = TrainStepBenchSettings(dataset="ILI", horizon=24, preset="default", modes=["eager", "graphed"],
                                      steps=3, warmup=4, device="cpu", data_dir=str(data_dir))  # fmt: skip
    bench = run_train_step_bench(settings)
    eager, graphed = bench.rows
    assert eager.mode == "eager" and eager.ms_per_step > 0 and eager.last_loss > 0
    assert graphed.ms_per_step is None and graphed.note == "needs CUDA"
    assert "ILI horizon 24, batch 32" in bench.title
    assert train_step_table(bench).row_count == 2


def _module(cuda_graphs: bool) -> ForecastModule:
    torch.manual_seed(0)
    model = get_model("s3attention", input_size=96, horizon=96, n_channels=7, dropout=0.0, seed=0)
    return ForecastModule(model.cuda(), None, lr=1e-3, cuda_graphs=cuda_graphs, max_grad_norm=0.5)


@pytest.mark.gpu
def test_a_graphed_step_follows_the_eager_loss_trajectory():
    """20 steps, partial batches among them, gradients clipped: the same losses to 1e-5."""
    torch.backends.cudnn.deterministic = True
    generator = torch.Generator().manual_seed(1)
    sizes = [32] * 6 + [9] + [32] * 8 + [9] + [32] * 4
    batches = [(torch.randn(n, 96, 7, generator=generator).cuda(), torch.randn(n, 96, 7, generator=generator)
                .cuda()) for n in sizes]  # fmt: skip
    eager, graphed = _module(False), _module(True)
    eager_optimizer, graphed_optimizer = eager.configure_optimizers(), graphed.configure_optimizers()
    eager_losses, graphed_losses = [], []
    for x, y in batches:
        eager_optimizer.zero_grad(set_to_none=True)
        loss = eager.training_loss(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(eager.parameters()), 0.5)
        eager_optimizer.step()
        eager_losses.append(loss.item())
        graphed_losses.append(graphed.graphed_step(x, y).item())
        graphed_optimizer.step()
    assert graphed.graphed_step.graph is not None and graphed.graphed_step.warmed_up == WARMUP_STEPS
    torch.testing.assert_close(torch.tensor(graphed_losses), torch.tensor(eager_losses), rtol=1e-5, atol=1e-5)
    for name, parameter in eager.named_parameters():
        torch.testing.assert_close(dict(graphed.named_parameters())[name], parameter, rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_a_lightning_fit_with_cuda_graphs_matches_the_eager_fit(data_dir, tmp_path):
    """One epoch (more would let a rounding difference pick another best epoch on ILI's short split)."""
    series = load_dataset("ILI", data_dir)
    outcomes = {}
    for graphs in (True, False):
        settings = TrainSettings(
            horizon=24, model_options={"dropout": 0.0}, toward_naive=False, seeds=1,
            trainer=TrainerOptions(max_epochs=1, progress_bar=False, cuda_graphs=graphs),
        )  # fmt: skip
        outcomes[graphs] = train_forecaster(series, tmp_path / str(graphs), settings)
    graphed, eager = outcomes[True], outcomes[False]
    assert graphed.training["cuda_graphs"] is True, graphed.training.get("cuda_graphs_error")
    assert eager.training["cuda_graphs"] is False
    assert graphed.training["epochs"] == eager.training["epochs"]
    assert graphed.metrics["mse"] == pytest.approx(eager.metrics["mse"], rel=1e-2)


@pytest.mark.gpu
def test_a_step_that_cannot_be_captured_trains_eagerly_and_random_draws_still_work():
    """The loss reads a value on the host (a sync a capture refuses) and draws dropout masks."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(8, 8).cuda()

    def loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = torch.nn.functional.dropout(layer(x), 0.5)
        return (out - y).square().mean() * (1.0 if out.sum().item() < 1e9 else 0.0)

    step = GraphedStep(loss, list(layer.parameters()), None)
    x, y = torch.randn(4, 8, device="cuda"), torch.randn(4, 8, device="cuda")
    losses = [step(x, y).item() for _ in range(WARMUP_STEPS + 3)]
    assert step.graph is None and step.capture_error and all(value > 0 for value in losses)
    assert layer.weight.grad is not None and torch.rand(3, device="cuda").shape == (3,)


@pytest.mark.gpu
def test_scoring_passes_run_on_the_gpu_and_leave_the_model_where_it_was(data_dir):
    """window_errors, toward_naive_weights and the interval passes run on CUDA (where `forecaster train`
    spent its post-fit time on the CPU): the same numbers as the CPU to float32 rounding, the model back on
    the CPU and in training mode afterwards."""
    from forecaster.data.windows import window_sets
    from forecaster.training.scoring import toward_naive_weights, window_errors

    series = load_dataset("ILI", data_dir)
    windows = window_sets(series, 36, 24, "7:1:2", None)[1]["val"]
    model = get_model("s3attention", input_size=36, horizon=24, n_channels=7, seed=0, anchor="last").train()
    inputs, targets = windows.stacked()
    with torch.inference_mode():
        expected = ((model.eval()(inputs).double() - targets.double()) ** 2).mean(dim=1).numpy()
    model.train()
    devices = []
    model.register_forward_pre_hook(lambda module, args: devices.append(args[0].device.type))
    errors = window_errors(model, windows)
    assert set(devices) == {"cuda"}, devices
    assert next(model.parameters()).device.type == "cpu" and model.training
    np.testing.assert_allclose(errors, expected, rtol=1e-4, atol=1e-6)
    assert toward_naive_weights(model, windows).shape == (24,)

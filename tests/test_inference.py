"""forecaster.inference: the forward pass behind every forecast, eager on the CPU or replayed per batch
bucket from CUDA graphs (GPU tests against the eager pass on the same device)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from forecaster.errors import ConfigError
from forecaster.inference import Inference, batch_buckets, eager_outputs
from forecaster.models import forecast_outputs, get_model


def test_batch_buckets_are_powers_of_two_then_the_largest_batch():
    assert batch_buckets(64) == [1, 2, 4, 8, 16, 32, 64]
    assert batch_buckets(48) == [1, 2, 4, 8, 16, 32, 48]
    assert batch_buckets(1) == [1]
    with pytest.raises(ConfigError, match="at least 1"):
        batch_buckets(0)


def _model(quantiles: bool = False) -> torch.nn.Module:
    levels = [80] if quantiles else []
    model = get_model("s3attention", input_size=96, horizon=24, n_channels=3, quantile_levels=levels, seed=0)
    return model.eval()


def _windows(rows: int) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(rows).normal(size=(rows, 96, 3)).astype(np.float32))


def test_on_the_cpu_inference_is_the_eager_forward_pass_bit_for_bit():
    model = _model(quantiles=True)
    inference = Inference(model, "cpu", cuda_graphs=True, max_batch=4)
    assert not inference.graphed and inference.mode == "eager on cpu"
    windows = _windows(9)  # above the largest batch: the CPU runs it whole
    with torch.inference_mode():
        expected = forecast_outputs(model, windows)
    assert expected.shape == (9, 24, 3, 3)
    assert torch.equal(inference(windows), expected)
    assert torch.equal(eager_outputs(model, windows), expected)


def test_a_device_torch_does_not_know_is_one_clear_error():
    with pytest.raises(ConfigError, match="'tpu9' is not a torch device name"):
        Inference(_model(), "tpu9")


@pytest.mark.gpu
@pytest.mark.parametrize("quantiles", [False, True])
def test_graphed_forecasts_equal_the_eager_pass_for_every_batch_size(quantiles, monkeypatch):
    """Sizes inside, between and above the buckets (padding, chunks): eager CUDA outputs to 1e-5, one graph
    per bucket used, and the padding never leaks into the answer."""
    # cuDNN convolutions default to TF32, whose rounding differs between batch sizes (1.2e-4 on an H100)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    monkeypatch.setattr(torch.backends.cudnn, "deterministic", True)
    model = _model(quantiles).cuda()
    graphed = Inference(model, "cuda", cuda_graphs=True, max_batch=16)
    for rows in (1, 3, 8, 13, 16, 40):
        windows = _windows(rows)
        expected = eager_outputs(model, windows)
        got = graphed(windows)
        assert got.device.type == "cpu" and got.shape == expected.shape
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    assert graphed.capture_error is None and graphed.mode == "graphed on cuda"
    assert sorted(graphed._graphs) == [1, 4, 8, 16]  # 3 -> 4, 13 -> 16, 40 -> 16 + 16 + 8


@pytest.mark.gpu
def test_warm_up_captures_every_bucket():
    inference = Inference(_model().cuda(), "cuda", max_batch=48)
    inference.warm_up((96, 3))
    assert sorted(inference._graphs) == [1, 2, 4, 8, 16, 32, 48]
    eager = Inference(inference.model, "cuda", cuda_graphs=False, max_batch=48)
    eager.warm_up((96, 3))
    assert not eager._graphs and eager.mode == "eager on cuda"

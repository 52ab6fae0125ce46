"""FourierExtrapolation continues sums of low harmonics exactly and follows the input's device and dtype."""

from __future__ import annotations

import inspect
import math

import pytest
import torch

import forecaster.nn.fourier as fourier_module
from forecaster.nn import FourierExtrapolation


def _harmonic_sum(steps: int, period: int, harmonics: int, channels: int, generator: torch.Generator):
    """Random-amplitude, random-phase sum of cos(2 pi k t / period) for k = 0..harmonics, per channel."""
    t = torch.arange(steps, dtype=torch.float64)[:, None, None]
    k = torch.arange(harmonics + 1, dtype=torch.float64)
    amplitude = torch.rand(harmonics + 1, channels, generator=generator, dtype=torch.float64) * 3
    phase = (torch.rand(harmonics + 1, channels, generator=generator, dtype=torch.float64) * 2 - 1) * math.pi
    return (amplitude * torch.cos(2 * math.pi * k[:, None] * t / period + phase)).sum(dim=1)  # (steps, C)


@pytest.mark.parametrize(("input_size", "horizon", "n_harmonics"), [(96, 48, 5), (97, 200, 12), (36, 24, 3)])
def test_sum_of_sinusoids_is_extrapolated_exactly(input_size: int, horizon: int, n_harmonics: int) -> None:
    generator = torch.Generator().manual_seed(input_size)
    series = torch.stack(
        [_harmonic_sum(input_size + horizon, input_size, n_harmonics, 4, generator) for _ in range(3)]
    )
    module = FourierExtrapolation(input_size, horizon, n_harmonics)
    forecast = module(series[:, :input_size])
    assert forecast.shape == (3, horizon, 4) and forecast.dtype == torch.float64
    torch.testing.assert_close(forecast, series[:, input_size:], rtol=0, atol=1e-6)


def test_higher_harmonics_are_dropped() -> None:
    length, horizon = 64, 16
    t = torch.arange(length + horizon, dtype=torch.float64)
    low = torch.cos(2 * math.pi * 2 * t / length)
    high = 0.5 * torch.sin(2 * math.pi * 9 * t / length)
    x = (low + high)[None, :length, None]
    forecast = FourierExtrapolation(length, horizon, n_harmonics=3)(x)
    torch.testing.assert_close(forecast[0, :, 0], low[length:], rtol=0, atol=1e-9)


def test_all_frequencies_kept_gives_the_periodic_continuation() -> None:
    torch.manual_seed(0)
    length, horizon = 20, 45
    x = torch.randn(2, length, 3, dtype=torch.float64)
    module = FourierExtrapolation(length, horizon)  # n_harmonics defaults to horizon: 2H + 1 >= L
    assert module.n_harmonics == horizon and module.frequency_index.numel() == length
    expected = x[:, torch.arange(length, length + horizon) % length]
    torch.testing.assert_close(module(x), expected, rtol=0, atol=1e-9)


def test_no_parameters_non_persistent_buffers_and_dtype_following() -> None:
    module = FourierExtrapolation(32, 8, 4)
    assert list(module.parameters()) == [] and module.state_dict() == {}
    x32 = torch.randn(2, 32, 3)
    out32 = module(x32)
    assert out32.dtype == torch.float32 and out32.device == x32.device
    out64 = module.to(torch.float64)(x32.double())
    assert out64.dtype == torch.float64
    torch.testing.assert_close(out32.double(), out64, rtol=0, atol=1e-5)
    assert "cuda" not in inspect.getsource(fourier_module).lower()


def test_wrong_length_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"\(\.\.\., 32, channels\)"):
        FourierExtrapolation(32, 8)(torch.randn(2, 31, 3))

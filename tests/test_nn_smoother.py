"""Smoother: its Fourier part against a dense circular convolution, the stages, and the conv stem options."""

from __future__ import annotations

import pytest
import torch

from forecaster.nn import Smoother, filter_groups, fourier_smooth, segment_average


def _dense_group_convolution(x: torch.Tensor, weight: torch.Tensor, fold: int) -> torch.Tensor:
    """Channel c = circular convolution of its group mean (group c // (D / fold)) with irfft(W[:, c])."""
    batch, length, d_model = x.shape
    group_size = d_model // fold
    kernels = torch.fft.irfft(weight, n=length, dim=0)  # (L, D) real impulse responses
    lag = (torch.arange(length)[:, None] - torch.arange(length)[None, :]) % length  # circulant lag t - s
    out = torch.empty_like(x)
    for c in range(d_model):
        group = x[:, :, (c // group_size) * group_size : (c // group_size + 1) * group_size].mean(dim=-1)
        circulant = kernels[:, c][lag]  # (L, L): out[t] = sum_s u[s] k[(t - s) mod L]
        out[:, :, c] = group @ circulant.T
    return out


@pytest.mark.parametrize(("length", "d_model", "fold"), [(16, 8, 4), (15, 12, 3), (9, 6, 6), (10, 4, 1)])
def test_fourier_part_equals_dense_circular_convolution(length: int, d_model: int, fold: int) -> None:
    torch.manual_seed(0)
    smoother = Smoother(d_model, length, fold=fold).double()
    with torch.no_grad():  # a nonzero imaginary DC/Nyquist must be ignored exactly as irfft ignores it
        smoother.spectral_weight.normal_()
    x = torch.randn(3, length, d_model, dtype=torch.float64)
    got = fourier_smooth(x, smoother.complex_weight, fold)
    expected = _dense_group_convolution(x, smoother.complex_weight.detach(), fold)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-12)


def test_segment_average_uses_contiguous_groups() -> None:
    x = torch.arange(12, dtype=torch.float64).reshape(1, 1, 12)
    assert segment_average(x, 3).flatten().tolist() == [1.5, 5.5, 9.5]


def test_filter_groups_broadcasts_group_spectrum_to_its_channels() -> None:
    torch.manual_seed(1)
    spectrum = torch.randn(2, 5, 3, dtype=torch.complex128)
    weight = torch.randn(5, 6, dtype=torch.complex128)
    got = filter_groups(spectrum, weight, 3)
    expected = spectrum.repeat_interleave(2, dim=-1) * weight
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="does not match"):
        filter_groups(spectrum, weight[:4], 3)


def test_smoother_output_is_the_stem_over_smoothed_and_input() -> None:
    torch.manual_seed(2)
    smoother = Smoother(8, 12, fold=2, norm="none", activation="relu").double().eval()
    x = torch.randn(2, 12, 8, dtype=torch.float64)
    smoothed = fourier_smooth(x, smoother.complex_weight, 2)
    stem = torch.nn.functional.conv1d(
        torch.cat([smoothed, x], dim=-1).transpose(1, 2), smoother.stem.weight, smoother.stem.bias, padding=1
    )
    torch.testing.assert_close(smoother(x), torch.relu(stem.transpose(1, 2)), rtol=0, atol=1e-12)


@pytest.mark.parametrize("norm", ["batch_time", "batch_channel", "layer", "none"])
def test_each_norm_normalizes_the_stem_output_along_its_own_axis(norm: str) -> None:
    """batch_time: one BN channel per time step (reference); batch_channel: per model channel (paper);
    layer: over D. Checked in eval mode against running statistics and affine parameters all randomized."""
    torch.manual_seed(6)
    length, d_model = 12, 8
    smoother = Smoother(d_model, length, fold=2, norm=norm).double()
    with torch.no_grad():
        for tensor in smoother.norm.parameters():
            tensor.normal_()
        if norm.startswith("batch"):
            smoother.norm.running_mean.normal_()
            smoother.norm.running_var.uniform_(0.5, 2.0)
    smoother.eval()
    x = torch.randn(3, length, d_model, dtype=torch.float64)
    smoothed = fourier_smooth(x, smoother.complex_weight, 2)
    stem = torch.nn.functional.conv1d(
        torch.cat([smoothed, x], dim=-1).transpose(1, 2), smoother.stem.weight, smoother.stem.bias, padding=1
    ).transpose(1, 2)  # (B, L, D)
    norm_module = smoother.norm
    if norm == "layer":
        stem = torch.nn.functional.layer_norm(stem, (d_model,), norm_module.weight, norm_module.bias)
    elif norm != "none":
        axis = (slice(None), None) if norm == "batch_time" else (None, slice(None))  # (L, 1) or (1, D)
        mean, var = norm_module.running_mean[axis], norm_module.running_var[axis]
        weight, bias = norm_module.weight[axis], norm_module.bias[axis]
        stem = (stem - mean) / torch.sqrt(var + norm_module.eps) * weight + bias
    with torch.no_grad():
        torch.testing.assert_close(smoother(x), torch.nn.functional.elu(stem), rtol=0, atol=1e-12)


@pytest.mark.parametrize("norm", ["batch_time", "batch_channel", "layer", "none"])
@pytest.mark.parametrize("activation", ["elu", "relu"])
def test_every_option_runs_and_backpropagates(norm: str, activation: str) -> None:
    torch.manual_seed(3)
    smoother = Smoother(16, 20, fold=4, dropout=0.1, norm=norm, activation=activation)
    x = torch.randn(4, 20, 16, requires_grad=True)
    out = smoother(x)
    assert out.shape == (4, 20, 16)
    out.square().mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in smoother.parameters())
    assert x.grad is not None and torch.isfinite(x.grad).all()


def test_batch_time_norm_has_one_channel_per_time_step() -> None:
    smoother = Smoother(8, 24, fold=2)
    assert isinstance(smoother.norm, torch.nn.BatchNorm1d) and smoother.norm.num_features == 24
    assert smoother.spectral_weight.shape == (13, 8, 2)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="fold"):
        Smoother(10, 16, fold=4)
    with pytest.raises(ValueError, match="norm"):
        Smoother(8, 16, norm="group")
    with pytest.raises(ValueError, match=r"\(batch, 16, 8\)"):
        Smoother(8, 16)(torch.randn(2, 15, 8))

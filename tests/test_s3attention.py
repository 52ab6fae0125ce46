"""S3AttentionForecaster: equivariance, reloads, gradients, config round trip, registry, presets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from forecaster.models import S3AttentionConfig, S3AttentionForecaster, get_model, model_names
from forecaster.presets import preset

SMALL = {"input_size": 48, "horizon": 24, "n_channels": 3, "d_model": 16, "n_heads": 4, "fold": 4}


def _trained_like(model: S3AttentionForecaster) -> S3AttentionForecaster:
    """Give BatchNorm non-trivial running statistics so eval mode is not an identity normalization."""
    model.train()
    shape = (8, model.config.input_size, model.config.n_channels)
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(shape, dtype=_dtype(model)) * 2 + 1)
    return model.eval()


def _dtype(model: torch.nn.Module) -> torch.dtype:
    return next(model.parameters()).dtype


def test_forward_shape_and_defaults() -> None:
    torch.manual_seed(0)
    model = get_model("s3attention", **SMALL)
    assert model(torch.randn(5, 48, 3)).shape == (5, 24, 3)
    assert model.extrapolation.n_harmonics == 24
    assert len(model.layers) == 2 and model.layers[0].ffn is None
    with pytest.raises(ValueError, match=r"\(batch, 48, 3\)"):
        model(torch.randn(5, 48, 4))


def test_shift_equivariance_per_channel() -> None:
    torch.manual_seed(1)
    model = _trained_like(get_model("s3attention", **SMALL, dropout=0.1).double())
    x = torch.randn(4, 48, 3, dtype=torch.float64)
    shift = torch.tensor([100.0, -37.5, 0.25], dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(model(x + shift), model(x) + shift, rtol=0, atol=1e-5)


def test_instance_standardization_adds_one_inside_the_square_root() -> None:
    torch.manual_seed(2)
    model = _trained_like(get_model("s3attention", **SMALL).double())
    seen: dict[str, torch.Tensor] = {}
    model.value_embedding.register_forward_hook(lambda _m, args, _out: seen.update(embedded=args[0]))
    model.extrapolation.register_forward_hook(lambda _m, _args, out: seen.update(decoded=out))
    x = 5 + 3 * torch.randn(2, 48, 3, dtype=torch.float64)
    mean = x.mean(dim=1, keepdim=True)
    scale = torch.sqrt(x.var(dim=1, keepdim=True, correction=1) + 1.0)
    with torch.no_grad():
        forecast = model(x)
    torch.testing.assert_close(seen["embedded"], ((x - mean) / scale).transpose(1, 2), rtol=0, atol=1e-12)
    torch.testing.assert_close(forecast, seen["decoded"] * scale + mean, rtol=0, atol=1e-12)


def test_state_dict_reload_into_a_different_seed_is_bit_identical() -> None:
    torch.manual_seed(3)
    source = _trained_like(get_model("s3attention", **SMALL, seed=0))
    target = get_model("s3attention", **SMALL, seed=1).eval()
    index_keys = [key for key in source.state_dict() if key.endswith(("left_index", "right_index"))]
    assert len(index_keys) == 4
    assert any(not torch.equal(source.state_dict()[k], target.state_dict()[k]) for k in index_keys)
    target.load_state_dict(source.state_dict())
    x = torch.randn(6, 48, 3)
    with torch.no_grad():
        assert torch.equal(source(x), target(x))


def test_config_json_round_trip_rebuilds_the_same_function() -> None:
    torch.manual_seed(4)
    model = _trained_like(get_model("s3attention", **SMALL, e_layers=3, n_harmonics=7, ffn=True, seed=11))
    config = json.loads(json.dumps(model.config.to_dict()))
    assert S3AttentionConfig.from_dict(config) == model.config
    rebuilt = get_model("s3attention", **config)
    rebuilt.load_state_dict(model.state_dict())
    rebuilt.eval()
    x = torch.randn(2, 48, 3)
    with torch.no_grad():
        assert torch.equal(model(x), rebuilt(x))


def test_gradients_reach_every_parameter() -> None:
    torch.manual_seed(5)
    for options in ({}, {"ffn": True, "norm": "layer", "activation": "relu"}):
        model = get_model("s3attention", **SMALL, **options).train()
        loss = (model(torch.randn(4, 48, 3)) - torch.randn(4, 24, 3)).square().mean()
        loss.backward()
        for name, parameter in model.named_parameters():
            assert parameter.grad is not None, f"{name} gets no gradient"
            assert torch.isfinite(parameter.grad).all() and parameter.grad.abs().sum() > 0, name


def test_config_validation_names_the_field() -> None:
    with pytest.raises(ValueError, match="'d_model'"):
        S3AttentionConfig(input_size=96, horizon=24, n_channels=7, d_model=30)
    with pytest.raises(ValueError, match="'dropout'"):
        S3AttentionConfig(input_size=96, horizon=24, n_channels=7, dropout=1.5)
    with pytest.raises(ValueError, match="'horizon'"):
        S3AttentionConfig.from_dict({"input_size": 96, "horizon": "24", "n_channels": 7})
    with pytest.raises(ValueError, match="unknown .*'width'"):
        S3AttentionConfig.from_dict({"input_size": 96, "horizon": 24, "n_channels": 7, "width": 3})
    with pytest.raises(ValueError, match="missing .*'n_channels'"):
        S3AttentionConfig.from_dict({"input_size": 96, "horizon": 24})


def test_registry() -> None:
    assert "s3attention" in model_names()
    model = get_model("S3Attention", input_size=36, horizon=24, n_channels=7)
    assert isinstance(model, S3AttentionForecaster)
    with pytest.raises(ValueError, match="unknown model 'nope'"):
        get_model("nope")


@pytest.mark.parametrize(
    ("name", "width"),
    [("ETTm2", 32), ("exchange_rate", 32), ("national_illness", 32), ("ILI", 32), ("traffic", 32),
     ("Electricity", 512), ("ECL", 512), ("weather", 32), ("etth1", 32), ("my_plant.csv", 32), (None, 32)],
)
def test_presets_follow_the_reference_widths(name: str | None, width: int) -> None:
    fields, _ = preset("s3attention", "reference", name)
    model = get_model("s3attention", input_size=36, horizon=24, n_channels=7, **fields)
    assert model.config.d_model == width
    config = model.config
    assert (config.n_heads, config.left_rank, config.right_rank, config.fold) == (8, 8, 8, 8)
    assert config.dropout == 0.05 and config.ffn is False


def test_readme_model_library_calls_run_as_written() -> None:
    """The Model library's inline calls are code users paste: `preset(...)` there had named the dataset
    as the preset and unpacked a tuple, a ConfigError."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Model library", 1)[1].split("\n## ", 1)[0]
    calls = [code for code in re.findall(r"`([^`]+)`", section.replace("\n  ", " ")) if code.startswith(
        ("S3AttentionForecaster(", 'get_model("s3attention"'))]
    assert len(calls) == 2, calls
    scope = {"S3AttentionForecaster": S3AttentionForecaster, "S3AttentionConfig": S3AttentionConfig,
             "get_model": get_model, "preset": preset}
    for call in calls:
        model = eval(call, scope)  # noqa: S307 - the README's own example
        assert isinstance(model, S3AttentionForecaster) and model.config.input_size == 96, call

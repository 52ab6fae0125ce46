"""The causal TNN forecaster: causal next-step predictions, an exact roll-out, config round trip, training."""

from __future__ import annotations

import json

import pytest
import torch

from forecaster.models import get_model
from forecaster.models.tnn import CausalTnnConfig, CausalTnnForecaster

SMALL = {"d_model": 8, "n_layers": 2, "rpe_dim": 8, "rank": 6, "sparse_width": 3, "knots": 4}


def tnn(input_size: int, horizon: int, n_channels: int, **options) -> CausalTnnForecaster:
    return get_model("tnn", input_size=input_size, horizon=horizon, n_channels=n_channels, **options)


@pytest.mark.parametrize("operator", ["tno", "fd", "ski"])
def test_next_step_is_causal(operator):
    torch.manual_seed(0)
    model = tnn(20, 4, 3, operator=operator, **SMALL).double().eval()
    x = torch.randn(2, 20, 3, dtype=torch.float64)
    with torch.no_grad():
        base = model.next_step(x)
        for t in (0, 9, 18):
            changed = x.clone()
            changed[:, t + 1 :] += 5.0 * torch.randn_like(changed[:, t + 1 :])
            out = model.next_step(changed)
            torch.testing.assert_close(out[:, : t + 1], base[:, : t + 1], rtol=0, atol=1e-6)
            assert not torch.allclose(out[:, t + 1 :], base[:, t + 1 :])


def test_forward_rolls_out_next_step_predictions():
    torch.manual_seed(1)
    model = tnn(16, 3, 2, operator="fd", **SMALL).double().eval()
    x = torch.randn(4, 16, 2, dtype=torch.float64) * 3 + 7
    with torch.no_grad():
        forecast = model(x)
        mean = x.mean(dim=1, keepdim=True)
        scale = (x.var(dim=1, keepdim=True, correction=0) + 1e-5).sqrt()
        window = (x - mean) / scale
        for step in range(3):
            predicted = model.next_step(window)[:, -1]
            torch.testing.assert_close(forecast[:, step], predicted * scale[:, 0] + mean[:, 0])
            window = torch.cat([window[:, 1:], predicted[:, None]], dim=1)
        # Standardizing per series makes the forecast shift- and scale-equivariant (up to the 1e-5 epsilon).
        torch.testing.assert_close(model(x - 5), forecast - 5, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(model(2 * x), 2 * forecast, rtol=1e-5, atol=1e-5)
    assert forecast.shape == (4, 3, 2)


def test_config_round_trips_through_json_and_the_registry():
    torch.manual_seed(2)
    model = tnn(12, 2, 3, operator="ski", **SMALL).eval()
    config = json.loads(json.dumps(model.config.to_dict()))
    assert CausalTnnConfig.from_dict(config) == model.config
    rebuilt = get_model("tnn", **config).eval()
    rebuilt.load_state_dict(model.state_dict())
    x = torch.randn(2, 12, 3)
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(x), model(x), rtol=0, atol=0)


@pytest.mark.parametrize(
    "field, value, message",
    [("operator", "lstm", "'operator' must be one of"), ("sparse_width", 4, "'sparse_width' must be odd"),
     ("decay", 1.0, "'decay' must be a finite number > 0 and < 1"),
     ("d_model", 0, "'d_model' must be an integer >= 1")],
)
def test_config_errors_name_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        tnn(12, 2, 3, **{field: value})
    with pytest.raises(ValueError, match=r"unknown TNN config field\(s\) \['depth'\]"):
        CausalTnnConfig.from_dict({"input_size": 4, "horizon": 1, "n_channels": 1, "depth": 3})
    with pytest.raises(ValueError, match="expects input"):
        tnn(12, 2, 3)(torch.zeros(1, 11, 3))


def test_next_step_training_learns_a_sinusoid():
    torch.manual_seed(3)
    t = torch.arange(200, dtype=torch.float32)
    series = torch.stack([torch.sin(2 * torch.pi * t / 12), torch.cos(2 * torch.pi * t / 7)], dim=-1)
    windows = series.unfold(0, 33, 8).permute(0, 2, 1)  # (21, 33, 2)
    model = tnn(32, 1, 2, operator="fd", d_model=16, n_layers=1, rpe_dim=16)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def loss() -> torch.Tensor:
        return torch.mean((model.next_step(windows[:, :-1]) - windows[:, 1:]) ** 2)

    initial = loss().item()
    for _ in range(40):
        optimizer.zero_grad()
        value = loss()
        value.backward()
        optimizer.step()
    assert loss().item() < 0.05 * initial

"""The ensemble `--model auto` may keep: greedy selection against explicit forecasts, the forward against
the weighted sum of its members, bundles that round-trip bit for bit and refuse tampered member lists, and
the service serving one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from test_service import serving

from forecaster.artifacts import load_bundle, save_bundle
from forecaster.data import Scaler
from forecaster.data.config import DataConfig
from forecaster.errors import BundleError, ConfigError
from forecaster.models import get_model, model_names
from forecaster.models.ensemble import MAX_MEMBERS, Ensemble, select_weights
from forecaster.models.toward_naive import TowardNaive

H, C = 6, 2


def _greedy_on_forecasts(forecasts: np.ndarray, target: np.ndarray, rounds: int) -> np.ndarray:
    """The oracle: Caruana's selection written on the forecasts themselves."""
    chosen: list[int] = []
    for _ in range(rounds):
        losses = [((forecasts[[*chosen, k]].mean(axis=0) - target) ** 2).sum() for k in range(len(forecasts))]
        chosen.append(int(np.argmin(losses)))
    return np.bincount(chosen, minlength=len(forecasts)) / rounds


@pytest.mark.parametrize("seed", range(5))
def test_greedy_weights_from_inner_products_match_selection_on_the_forecasts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    target = rng.normal(size=200)
    forecasts = target + rng.normal(size=(4, 200)) * rng.uniform(0.3, 2.0, size=(4, 1))
    gram, cross = forecasts @ forecasts.T, forecasts @ target
    np.testing.assert_allclose(select_weights(gram, cross, 25), _greedy_on_forecasts(forecasts, target, 25))


def test_greedy_weights_find_an_exact_member_and_an_exact_average() -> None:
    rng = np.random.default_rng(0)
    a, b, noise = rng.normal(size=(3, 100))
    exact = np.stack([a + noise, a, b])
    np.testing.assert_array_equal(select_weights(exact @ exact.T, exact @ a, 25), [0, 1, 0])
    pair = np.stack([a + noise, a - noise, b])
    np.testing.assert_array_equal(select_weights(pair @ pair.T, pair @ a, 24), [0.5, 0.5, 0])


def _members(seed: int = 0) -> list[tuple[str, torch.nn.Module]]:
    torch.manual_seed(seed)
    nlinear = get_model("nlinear", input_size=12, horizon=H, n_channels=C)
    torch.nn.init.normal_(nlinear.linear.weight, std=0.1)
    s3 = get_model("s3attention", input_size=24, horizon=H, n_channels=C, d_model=8, n_heads=2, fold=2,
                   left_rank=4, right_rank=4, seed=seed)  # fmt: skip
    return [("naive", get_model("naive", input_size=8, horizon=H, n_channels=C)), ("nlinear", nlinear),
            ("s3attention", s3)]  # fmt: skip


def test_the_forecast_is_the_weighted_sum_of_members_reading_their_own_window_lengths() -> None:
    members = _members()
    ensemble = Ensemble.of(members, [0.2, 0.3, 0.5]).eval()
    assert ensemble.config.input_size == 24
    x = torch.randn(5, 24, C)
    with torch.inference_mode():
        naive, nlinear, s3 = x[:, -1:].expand(-1, H, -1), members[1][1](x[:, -12:]), members[2][1](x)
        expected = 0.2 * naive + 0.3 * nlinear + 0.5 * s3
        torch.testing.assert_close(ensemble(x), expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match=r"ensemble expects input \(batch, 24, channels\)"):
        ensemble(x[:, -12:])
    assert "ensemble" not in model_names()  # made by --model auto, not trained by name
    # weights per channel: each column its own mix (one-hot: the member that fits it), nested ones kept
    per_channel = Ensemble.of(members[:2], [[1.0, 0.25], [0.0, 0.75]]).eval()
    with torch.inference_mode():
        mixed = torch.stack([naive[..., 0], 0.25 * naive[..., 1] + 0.75 * nlinear[..., 1]], dim=-1)
        torch.testing.assert_close(per_channel(x[:, -12:]), mixed, rtol=1e-6, atol=1e-6)
        nested = Ensemble.of([("ensemble", per_channel), members[2]], [0.5, 0.5]).eval()
        torch.testing.assert_close(nested(x), 0.5 * mixed + 0.5 * s3, rtol=1e-6, atol=1e-6)
    # kept members reading 12 steps, scored on the 24-step windows of a candidate not kept: it reads those
    # (--model auto raised "ensemble expects input (batch, 96, channels), got (61, 192, 1)")
    wider = Ensemble.of(members[:2], [[1.0, 0.25], [0.0, 0.75]], input_size=24).eval()
    with torch.inference_mode():
        torch.testing.assert_close(wider(x), mixed, rtol=1e-6, atol=1e-6)


def _save(root: Path, model: torch.nn.Module) -> Path:
    data = DataConfig(source="synthetic.csv", columns=["a", "b"], freq="h", date_col="date", input_size=24,
                      horizon=H, split="7:1:2")  # fmt: skip
    scaler = Scaler(np.array([10.0, 20.0]), np.array([2.0, 5.0]))
    return save_bundle(root, model=model, model_name="ensemble", data=data, scaler=scaler,
                       metrics={"mse": 0.5}, training={"members": {"naive": 0.2}})  # fmt: skip


def test_an_ensemble_bundle_round_trips_bit_for_bit_and_is_served(tmp_path: Path) -> None:
    ensemble = Ensemble.of(_members(), [0.2, 0.3, 0.5]).eval()
    shrunk = TowardNaive(ensemble, np.linspace(0.5, 1.0, H)).eval()
    path = _save(tmp_path / "models" / "hourly", shrunk)
    loaded = load_bundle(path)
    x = torch.randn(3, 24, C)
    with torch.inference_mode():
        torch.testing.assert_close(loaded.model(x), shrunk(x), rtol=0, atol=0)
    assert json.loads((path / "config.json").read_text())["model"]["config"]["weights"] == [0.2, 0.3, 0.5]
    history = np.random.default_rng(0).normal([10, 20], [2, 5], size=(24, C))
    stamps = [f"2021-03-01T{hour:02d}:00:00" for hour in range(24)]
    with serving(tmp_path / "models") as client:
        values = {"a": list(history[:, 0]), "b": list(history[:, 1])}
        answer = client.post("/v1/models/hourly/forecast", json={"timestamps": stamps, "values": values})
    assert answer.status_code == 200, answer.text
    scaled = torch.tensor((history - [10.0, 20.0]) / [2.0, 5.0], dtype=torch.float32)[None]
    with torch.inference_mode():
        expected = shrunk(scaled)[0].double().numpy() * [2.0, 5.0] + [10.0, 20.0]
    served = np.array([answer.json()["forecast"][column] for column in ("a", "b")]).T
    np.testing.assert_allclose(served, expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (lambda c: c["members"].__setitem__(0, {"name": "ensemble", "config": json.loads(json.dumps(c))}),
         "other than ensembles"),
        (lambda c: c.__setitem__("weights", [0.5, 0.5, 0.5]), "summing to 1"),
        (lambda c: c.__setitem__("weights", [1.2, -0.1, -0.1]), "non-negative"),
        (lambda c: c.__setitem__("weights", [[1, 0], [0, 0.5], [0, 0.4]]), "summing to 1"),
        (lambda c: c.__setitem__("weights", [[1, 0], 0.0, [0, 1]]), "one per member and channel"),
        (lambda c: c["members"][2]["config"].__setitem__("input_size", 48), "at most the ensemble's"),
        (lambda c: c["members"][1]["config"].__setitem__("horizon", 7), "horizon 6"),
        (lambda c: c.__setitem__("members", c["members"] * (MAX_MEMBERS // 3 + 1)),
         f"2 to {MAX_MEMBERS} members"),
        (lambda c: c["members"][1].__setitem__("name", "pickle"), "unknown model 'pickle'"),
        (lambda c: c["members"][2]["config"].__setitem__("d_model", 10**6), "d_model"),
    ],
)
def test_tampered_member_lists_are_refused_in_one_line(tmp_path: Path, tamper, message: str) -> None:
    path = _save(tmp_path / "bundle", Ensemble.of(_members(), [0.2, 0.3, 0.5]).eval())
    config = json.loads((path / "config.json").read_text())
    tamper(config["model"]["config"])
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises((BundleError, ConfigError)) as error:
        load_bundle(path)
    assert message in str(error.value) and "\n" not in str(error.value)

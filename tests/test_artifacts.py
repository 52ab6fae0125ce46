"""Model bundles: round trip, validation on load, atomic and non-clobbering saves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pytest
import safetensors.torch
import torch
from torch import nn

import forecaster.models
from forecaster import artifacts
from forecaster.artifacts import DataConfig, load_bundle, save_bundle
from forecaster.errors import BundleError, DataError

TINY = "tiny-test-linear"


@dataclass
class TinyConfig:
    input_size: int
    horizon: int
    n_channels: int

    def to_dict(self) -> dict:
        return asdict(self)


class TinyForecaster(nn.Module):
    """Linear map over a randomly permuted window; the permutation is a buffer, like skeleton indices."""

    def __init__(self, input_size: int, horizon: int, n_channels: int) -> None:
        super().__init__()
        self.config = TinyConfig(input_size, horizon, n_channels)
        self.linear = nn.Linear(input_size, horizon)
        self.register_buffer("order", torch.randperm(input_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x[:, self.order, :].transpose(1, 2)).transpose(1, 2)


def install_tiny_model(patch) -> None:
    """Make `forecaster.models` know the tiny model (patch is pytest's monkeypatch or a setattr-like)."""
    real_get, real_names = forecaster.models.get_model, forecaster.models.model_names

    def get_model(name: str, **config):
        return TinyForecaster(**config) if name == TINY else real_get(name, **config)

    patch.setattr(forecaster.models, "get_model", get_model)
    patch.setattr(forecaster.models, "model_names", lambda: sorted([*real_names(), TINY]))


@pytest.fixture
def tiny(monkeypatch) -> TinyForecaster:
    install_tiny_model(monkeypatch)
    torch.manual_seed(0)
    return TinyForecaster(input_size=12, horizon=4, n_channels=3).eval()


def data_config(n_channels: int = 3) -> DataConfig:
    return DataConfig(
        source="memory",
        columns=[f"c{i}" for i in range(n_channels)],
        freq="h",
        date_col="when",
        input_size=12,
        horizon=4,
        split="7:1:2",
        scaler_mean=[1.5, -2.0, 10.0][:n_channels],
        scaler_scale=[0.5, 3.0, 2.25][:n_channels],
    )


def save(model: nn.Module, path: Path, **kwargs) -> Path:
    return save_bundle(
        path,
        model=model,
        model_name=TINY,
        data=data_config(),
        metrics={"mse": 0.25, "windows": 7},
        training={"seed": 1, "epochs": 2},
        **kwargs,
    )


def snapshot(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_round_trip_restores_weights_buffers_and_metadata(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    assert sorted(p.name for p in path.iterdir()) == ["config.json", "metrics.json", "weights.safetensors"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]

    bundle = load_bundle(path)
    assert bundle.name == "bundle" and bundle.model_name == TINY
    assert bundle.model_config == {"input_size": 12, "horizon": 4, "n_channels": 3}
    assert bundle.data == data_config()
    assert bundle.metrics == {"mse": 0.25, "windows": 7}
    assert bundle.training == {"seed": 1, "epochs": 2}
    assert not bundle.model.training
    original, reloaded = tiny.state_dict(), bundle.model.state_dict()
    assert original.keys() == reloaded.keys()
    for key in original:
        assert torch.equal(original[key], reloaded[key]), key
    assert json.loads((path / "config.json").read_text())["format_version"] == artifacts.FORMAT_VERSION


def test_predict_matches_manual_standardize_model_unstandardize(tiny, tmp_path):
    bundle = load_bundle(save(tiny, tmp_path / "bundle"))
    rng = np.random.default_rng(0)
    history = rng.normal(5.0, 2.0, size=(2, 20, 3))
    mean, scale = np.array([1.5, -2.0, 10.0]), np.array([0.5, 3.0, 2.25])

    def oracle(window: np.ndarray) -> np.ndarray:
        scaled = torch.from_numpy(((window - mean) / scale).astype(np.float32))
        with torch.inference_mode():
            return tiny(scaled).double().numpy() * scale + mean

    batch = bundle.predict(history)
    assert batch.shape == (2, 4, 3) and batch.dtype == np.float64
    np.testing.assert_array_equal(batch, oracle(history[:, -12:]))
    single = bundle.predict(history[1])
    assert single.shape == (4, 3)
    np.testing.assert_array_equal(single, oracle(history[1:, -12:])[0])
    np.testing.assert_allclose(single, batch[1], rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize(
    ("history", "message"),
    [
        (np.zeros((12, 2)), "expects 3 columns"),
        (np.zeros((11, 3)), "at least 12 rows"),
        (np.zeros(12), "dims"),
        (np.zeros((0, 12, 3)), "empty batch"),
    ],
)
def test_predict_rejects_bad_history(tiny, tmp_path, history, message):
    bundle = load_bundle(save(tiny, tmp_path / "bundle"))
    with pytest.raises(DataError, match=message):
        bundle.predict(history)


def test_predict_names_the_non_finite_cell(tiny, tmp_path):
    bundle = load_bundle(save(tiny, tmp_path / "bundle"))
    history = np.zeros((15, 3))
    history[9, 2] = np.nan
    with pytest.raises(DataError, match="column 'c2' at row 9"):
        bundle.predict(history)


def test_existing_bundle_is_not_overwritten_without_flag(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    before = snapshot(path)
    with pytest.raises(BundleError, match="already exists"):
        save(TinyForecaster(12, 4, 3), path)
    assert snapshot(path) == before


def test_overwrite_replaces_the_bundle_and_leaves_nothing_else(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    other = TinyForecaster(12, 4, 3)
    save(other, path, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
    reloaded = load_bundle(path).model.state_dict()
    assert torch.equal(reloaded["linear.weight"], other.linear.weight)
    assert torch.equal(reloaded["order"], other.order)


@pytest.mark.parametrize("previous", [False, True])
def test_failed_save_leaves_no_bundle_and_keeps_the_previous(tiny, tmp_path, monkeypatch, previous):
    path = tmp_path / "bundle"
    if previous:
        save(tiny, path)
    before = snapshot(path) if previous else None

    def broken_save_file(tensors, filename, metadata=None):
        Path(filename).write_bytes(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.torch, "save_file", broken_save_file)
    with pytest.raises(OSError, match="disk full"):
        save(TinyForecaster(12, 4, 3), path, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["bundle"] if previous else [])
    if previous:
        assert snapshot(path) == before


def test_failed_final_rename_restores_the_previous_bundle(tiny, tmp_path, monkeypatch):
    path = save(tiny, tmp_path / "bundle")
    before = snapshot(path)
    real_replace = os.replace

    def replace(src, dst):
        if Path(src).name.startswith(".bundle.tmp-"):
            raise OSError("rename failed")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="rename failed"):
        save(TinyForecaster(12, 4, 3), path, overwrite=True)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
    assert snapshot(path) == before


KILLED_SAVE = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import pytest, safetensors.torch
    sys.path.insert(0, sys.argv[1])
    import test_artifacts as t

    patch = pytest.MonkeyPatch()
    t.install_tiny_model(patch)

    def die_midway(tensors, filename, metadata=None):
        Path(filename).write_bytes(b"half a file")
        os._exit(17)

    patch.setattr(safetensors.torch, "save_file", die_midway)
    t.save(t.TinyForecaster(12, 4, 3), Path(sys.argv[2]), overwrite=True)
    """
)


@pytest.mark.parametrize("previous", [False, True])
def test_process_killed_during_save_leaves_previous_intact(tiny, tmp_path, previous):
    path = tmp_path / "bundle"
    if previous:
        save(tiny, path)
    before = snapshot(path) if previous else None
    result = subprocess.run(
        [sys.executable, "-c", KILLED_SAVE, str(Path(__file__).parent), str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 17, result.stderr
    visible = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert visible == (["bundle"] if previous else [])
    if previous:
        assert snapshot(path) == before
        load_bundle(path)
    # The dead process's hidden temp dir is swept by the next save of the same bundle.
    save(tiny, tmp_path / "bundle", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


KILLED_BETWEEN_RENAMES = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import pytest
    sys.path.insert(0, sys.argv[1])
    import test_artifacts as t

    patch = pytest.MonkeyPatch()
    t.install_tiny_model(patch)
    real_replace = os.replace

    def replace(src, dst):
        if Path(src).name.startswith(".bundle.tmp-"):
            os._exit(18)  # the old bundle is already moved aside
        real_replace(src, dst)

    patch.setattr(os, "replace", replace)
    t.save(t.TinyForecaster(12, 4, 3), Path(sys.argv[2]), overwrite=True)
    """
)


def test_process_killed_between_renames_gets_the_previous_bundle_back(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    before = snapshot(path)
    result = subprocess.run(
        [sys.executable, "-c", KILLED_BETWEEN_RENAMES, str(Path(__file__).parent), str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 18, result.stderr
    assert not path.exists()
    # The next save of that bundle puts the previous one back first, so it is not overwritten silently.
    with pytest.raises(BundleError, match="already exists"):
        save(TinyForecaster(12, 4, 3), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
    assert snapshot(path) == before


def edit_config(path: Path, change) -> None:
    config = json.loads((path / "config.json").read_text())
    change(config)
    (path / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.update(format_version=99), "format_version 99"),
        (lambda c: c["model"].update(name="nope"), "unknown model 'nope'"),
        (lambda c: c["data"].update(scaler_mean=[0.0, 1.0]), "scaler_mean: expected a list of 3 numbers"),
        (lambda c: c["data"].update(scaler_scale=[1.0, 0.0, 1.0]), "scaler_scale: expected positive"),
        (lambda c: c["data"].update(input_size="96"), "input_size: expected a positive integer"),
        (lambda c: c["data"].pop("columns"), "missing field"),
        (lambda c: c["model"]["config"].update(n_channels=5), "n_channels 5 but the data config has 3"),
        (lambda c: [c["model"]["config"].update(input_size=9), c["data"].update(input_size=9)], "has shape"),
        (lambda c: c["model"]["config"].update(depth=5), "model config does not build"),
        (lambda c: c.update(training=[]), "'training' must be an object"),
    ],
)
def test_load_rejects_invalid_config(tiny, tmp_path, change, message):
    path = save(tiny, tmp_path / "bundle")
    edit_config(path, change)
    with pytest.raises(BundleError, match=message):
        load_bundle(path)


def test_load_reports_missing_files_and_bad_json(tiny, tmp_path):
    with pytest.raises(BundleError, match="no model bundle"):
        load_bundle(tmp_path / "absent")
    path = save(tiny, tmp_path / "bundle")
    (path / "metrics.json").write_text("{not json")
    with pytest.raises(BundleError, match="metrics.json: cannot read JSON"):
        load_bundle(path)
    (path / "metrics.json").unlink()
    with pytest.raises(BundleError, match="missing metrics.json"):
        load_bundle(path)


def test_load_never_unpickles_weights(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    torch.save(tiny.state_dict(), path / "weights.safetensors")
    with pytest.raises(BundleError, match="not a readable safetensors file"):
        load_bundle(path)


def test_load_rejects_renamed_tensors(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    tensors = safetensors.torch.load_file(path / "weights.safetensors")
    tensors["renamed"] = tensors.pop("order")
    safetensors.torch.save_file(tensors, path / "weights.safetensors")
    with pytest.raises(BundleError, match="missing order; unexpected renamed"):
        load_bundle(path)

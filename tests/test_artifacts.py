"""Model bundles: round trip, validation on load, atomic and non-clobbering saves."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import safetensors.torch
import torch
from torch import nn

from forecaster import artifacts, atomic
from forecaster.artifacts import DataConfig, load_bundle, save_bundle
from forecaster.atomic import write_atomically
from forecaster.checks import setting
from forecaster.data import Scaler
from forecaster.errors import BundleError, WriteRefusedError
from forecaster.models import FORECAST, MODELS
from forecaster.models.config import ModelConfig

TINY = "tiny-test-linear"


@dataclass(frozen=True)
class TinyConfig(ModelConfig):
    label = "tiny"

    input_size: int = setting(minimum=1)
    horizon: int = setting(minimum=1)
    n_channels: int = setting(minimum=1)


class TinyForecaster(nn.Module):
    """Linear map over a randomly permuted window; the permutation is a buffer, like skeleton indices."""

    config_class = TinyConfig
    task = FORECAST

    def __init__(self, config: TinyConfig) -> None:
        super().__init__()
        self.config = config
        self.linear = nn.Linear(config.input_size, config.horizon)
        self.register_buffer("order", torch.randperm(config.input_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x[:, self.order, :].transpose(1, 2)).transpose(1, 2)


def tiny_model() -> TinyForecaster:
    return TinyForecaster(TinyConfig(input_size=12, horizon=4, n_channels=3))


def install_tiny_model(patch) -> None:
    """Register the tiny model for one test (patch is pytest's monkeypatch)."""
    MODELS.names()  # load the real providers first
    patch.setitem(MODELS._entries, TINY, TinyForecaster)


@pytest.fixture
def tiny(monkeypatch) -> TinyForecaster:
    install_tiny_model(monkeypatch)
    torch.manual_seed(0)
    return tiny_model().eval()


def data_config(n_channels: int = 3) -> DataConfig:
    return DataConfig(
        source="memory",
        columns=[f"c{i}" for i in range(n_channels)],
        freq="h",
        date_col="when",
        input_size=12,
        horizon=4,
        split="7:1:2",
    )


SCALER = Scaler(np.array([1.5, -2.0, 10.0]), np.array([0.5, 3.0, 2.25]))


def save(model: nn.Module, path: Path, **kwargs) -> Path:
    return save_bundle(
        path,
        model=model,
        model_name=TINY,
        data=data_config(),
        scaler=SCALER,
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
    assert bundle.model.config.to_dict() == {"input_size": 12, "horizon": 4, "n_channels": 3}
    assert bundle.data == data_config()
    assert bundle.scaler.to_dict() == SCALER.to_dict()
    assert bundle.metrics == {"mse": 0.25, "windows": 7}
    assert bundle.training == {"seed": 1, "epochs": 2}
    assert not bundle.model.training
    original, reloaded = tiny.state_dict(), bundle.model.state_dict()
    assert original.keys() == reloaded.keys()
    for key in original:
        assert torch.equal(original[key], reloaded[key]), key
    assert json.loads((path / "config.json").read_text())["format_version"] == artifacts.FORMAT_VERSION


def test_existing_bundle_is_not_overwritten_without_flag(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    before = snapshot(path)
    with pytest.raises(BundleError, match="already exists"):
        save(tiny_model(), path)
    assert snapshot(path) == before


def test_a_bundle_another_run_wrote_meanwhile_is_not_replaced_without_overwrite(tiny, tmp_path, monkeypatch):
    """Two runs save to one folder that neither found: the later is refused, not reported as saved."""
    path = tmp_path / "bundle"
    monkeypatch.setattr(artifacts, "check_out_dir", lambda *args, **kwargs: None)  # both checked before
    save(tiny, path)
    before = snapshot(path)
    with pytest.raises(BundleError, match="written by another run while this one worked; use --overwrite"):
        save(tiny_model(), path)
    assert snapshot(path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]


def test_a_bundle_replaced_while_it_is_read_is_read_again_whole(tiny, tmp_path, monkeypatch):
    """`train --overwrite` beside a reader: files of two bundles never make one, a half-replaced folder is
    not reported as broken."""
    path = save(tiny, tmp_path / "bundle")
    other = tiny_model()
    real_load, calls = artifacts._load_bundle, []

    def replaced_midway(root, task, calibration):
        calls.append(root)
        if len(calls) == 1:  # the old bundle read half, then the folder replaced
            save(other, path, overwrite=True)
            raise BundleError("margins are torch.float32 (99, 8, 1), expected float32 (99, 6, 1)")
        return real_load(root, task, calibration)

    monkeypatch.setattr(artifacts, "_load_bundle", replaced_midway)
    assert torch.equal(load_bundle(path).model.state_dict()["order"], other.order) and len(calls) == 2
    calls.clear()
    monkeypatch.setattr(artifacts, "_load_bundle", lambda *args: calls.append(1) or real_load(*args))
    (path / "weights.safetensors").write_bytes(b"12345678")  # broken, and left so: one attempt, its error
    with pytest.raises(BundleError, match="not a readable safetensors file"):
        load_bundle(path)
    assert len(calls) == 1


def test_a_bundle_rewritten_in_place_is_a_new_version_and_a_stale_calibration_is_not_written(tiny, tmp_path):
    """`cp` over a bundle's file keeps the folder's inode and time: its files' identities tell it changed;
    a calibration of the bundle as it was is refused once it changed (another run replaced it)."""
    from forecaster.atomic import folder_version
    from forecaster.calibration import Calibration

    path = save(tiny, tmp_path / "bundle")
    before = folder_version(path)
    saved = (path / "metrics.json").read_text()
    with open(path / "metrics.json", "w") as handle:  # in place, as cp does (the same bytes: its weights
        handle.write(saved)  # name the metrics saved with them)
    assert folder_version(path) != before
    calibration = Calibration.from_scores(np.ones((30, 4, 3), np.float32), [], "recent rows", "conformal")
    with pytest.raises(BundleError, match="was replaced while it was calibrated .*nothing written"):
        artifacts.write_calibration(path, calibration, before)
    assert not (path / "calibration.safetensors").exists()
    artifacts.write_calibration(path, calibration, folder_version(path))
    margins = load_bundle(path).calibration.margins
    assert margins.base is None and margins.flags.owndata  # not the file's memory map: cp over it is harmless


def test_a_long_legal_folder_name_saves_and_reloads(tiny, tmp_path):
    path = save(tiny, tmp_path / ("m" * 250))  # its staging folder's name is cut, not past 255 bytes
    assert load_bundle(path).name == "m" * 250 and [p.name for p in tmp_path.iterdir()] == ["m" * 250]
    save(tiny_model(), path, overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == ["m" * 250]


def test_overwrite_replaces_the_bundle_and_leaves_nothing_else(tiny, tmp_path):
    path = save(tiny, tmp_path / "bundle")
    other = tiny_model()
    save(other, path, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
    reloaded = load_bundle(path).model.state_dict()
    assert torch.equal(reloaded["linear.weight"], other.linear.weight)
    assert torch.equal(reloaded["order"], other.order)


def test_overwrite_never_empties_a_folder_forecaster_did_not_write(tiny, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(BundleError, match=r"is a folder forecaster did not write \(no config.json in it\)"):
        save(tiny, folder, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"] and os.listdir(folder) == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert load_bundle(save(tiny, empty, overwrite=True)).model_name  # an empty folder is fine


def test_overwrite_never_empties_another_programs_config_nor_files_beside_a_bundle(tiny, tmp_path):
    """A config.json that is no bundle's (another program's settings), and a user's file put beside a
    bundle: both were deleted by --overwrite, which now names them and leaves every file as it was."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "config.json").write_text('{"name": "my app"}')
    (project / "src" / "main.py").write_text("print(1)")
    refused = r"project is a folder forecaster did not write \(its config.json is not forecaster's\)"
    with pytest.raises(BundleError, match=refused):
        save(tiny, project, overwrite=True)
    assert (project / "src" / "main.py").read_text() == "print(1)"
    bundle = save(tiny, tmp_path / "bundle")
    (bundle / "notes.txt").write_text("keep me")
    before = snapshot(bundle)
    refused = r"bundle holds what forecaster did not write \('notes.txt'\), which --overwrite would delete"
    with pytest.raises(BundleError, match=refused):
        save(tiny, bundle, overwrite=True)
    assert snapshot(bundle) == before


@pytest.mark.parametrize("previous", [False, True])
def test_failed_save_leaves_no_bundle_and_keeps_the_previous(tiny, tmp_path, monkeypatch, previous):
    path = tmp_path / "bundle"
    if previous:
        save(tiny, path)
    before = snapshot(path) if previous else None

    def broken_save_file(tensors, filename, metadata=None):
        Path(filename).write_bytes(b"half a file")  # as safetensors fails on a full disk (a traceback before)
        raise safetensors.SafetensorError("Error while serializing: I/O error: No space left on device "
                                          "(os error 28)")

    monkeypatch.setattr(safetensors.torch, "save_file", broken_save_file)
    with pytest.raises(WriteRefusedError) as failure:  # the CLI's exit status 1, not the input's 2
        save(tiny_model(), path, overwrite=True)
    assert str(failure.value) == (f"cannot write bundle {path}: No space left on device; nothing of it was "
                                  "written (an earlier bundle there is as it was)")  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == (["bundle"] if previous else [])
    if previous:
        assert snapshot(path) == before


@pytest.mark.skipif(sys.platform != "linux", reason="renameat2 is Linux's")
def test_overwrite_swaps_the_folders_in_one_step(tiny, tmp_path, monkeypatch):
    """Moved aside, then in, the bundle was missing for a moment: a service scanning then dropped its model
    (404s until the next scan) and a reader said "no model bundle" (h44). No rename of the save finds it
    missing now: the folders are exchanged."""
    path = save(tiny, tmp_path / "bundle")
    present, real_replace = [], os.replace

    def replace(src, dst):
        present.append(path.exists())
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    save(tiny_model(), path, overwrite=True)
    assert all(present) and snapshot(path) != {} and sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
    assert load_bundle(path).model_name


def test_failed_final_rename_restores_the_previous_bundle(tiny, tmp_path, monkeypatch):
    """Where folders cannot be exchanged (not Linux, or a file system without it), moved aside and back."""
    path = save(tiny, tmp_path / "bundle")
    before = snapshot(path)
    real_replace = os.replace
    monkeypatch.setattr(atomic, "_exchanged", lambda staged, target: False)

    def replace(src, dst):
        if Path(src).name.startswith(".bundle.tmp-"):
            raise OSError("rename failed")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    said = "cannot write bundle .*: rename failed; nothing of it was written"
    with pytest.raises(WriteRefusedError, match=said):
        save(tiny_model(), path, overwrite=True)
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
    t.save(t.tiny_model(), Path(sys.argv[2]), overwrite=True)
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
    patch.setattr(t.atomic, "_exchanged", lambda staged, target: False)  # where folders cannot be swapped
    real_replace = os.replace

    def replace(src, dst):
        if Path(src).name.startswith(".bundle.tmp-"):
            os._exit(18)  # the old bundle is already moved aside
        real_replace(src, dst)

    patch.setattr(os, "replace", replace)
    t.save(t.tiny_model(), Path(sys.argv[2]), overwrite=True)
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
        save(tiny_model(), path)
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
        (lambda c: c.update(format_version=True), "format_version True is not supported"),  # read as 1 (h44)
        (lambda c: c.update(postprocess={"multiply": 1000}), "unknown field.s. postprocess; expected format"),
        (lambda c: c["model"].update(name="nope"), "unknown model 'nope'"),
        (lambda c: c["scaler"].update(mean=[0.0, 1.0]), r"one number per column \(3\), got 2"),
        (lambda c: c["scaler"].update(scale=[1.0, 0.0, 1.0]), "positive finite scales"),
        (lambda c: c["scaler"].update(scale=[1.0, 1e300, 1.0]), "of at most 1.84e"),  # forecast 0.0 (h41)
        (lambda c: c.update(scaler=None), "'mean' and 'scale'"),
        (lambda c: c["data"].update(input_size="96"), "input_size must be an integer >= 1 and <= 100000,"),
        (lambda c: c["data"].update(freq="banana"), "data.freq: unknown frequency 'banana'"),
        (lambda c: c["data"].update(split="8:1:1"), "data.split: expected one of"),
        (lambda c: c["data"].update(columns=["a", "a", "b"]), "each column once"),
        (lambda c: c["data"].pop("columns"), "missing field"),
        (lambda c: c["model"]["config"].update(n_channels=5), "n_channels 5 but the data config has 3"),
        (lambda c: c["model"]["config"].update(depth=5), "model config does not build"),
        (lambda c: c.update(training=[]), "'training' must be an object"),
    ],
)
def test_load_rejects_invalid_config(tiny, tmp_path, change, message):
    path = save(tiny, tmp_path / "bundle")
    edit_config(path, change)
    with pytest.raises(BundleError, match=message):
        load_bundle(path)


def test_a_config_not_saved_with_the_weights_is_named(tiny, tmp_path):
    """Another bundle's config.json copied in was blamed on the calibration, whose advice (calibrate again)
    left a bundle running that config under this one's metrics (h49): the weights' metadata names the
    sha256 of the config saved with them. A bundle saved before that is held to its tensors' shapes."""
    from safetensors.torch import load_file, save_file

    path = save(tiny, tmp_path / "bundle")
    edit_config(path, lambda c: [c["model"]["config"].update(input_size=9), c["data"].update(input_size=9)])
    with pytest.raises(BundleError, match="config.json: not the config saved with weights.safetensors"):
        load_bundle(path)
    save_file(load_file(path / "weights.safetensors"), path / "weights.safetensors")  # no metadata: older
    with pytest.raises(BundleError, match=r"tensor order is int64 \(12,\), model expects int64 \(9,\)"):
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
    save(tiny, tmp_path / "run" / "model")  # a tuning run's folder, given for its bundle
    with pytest.raises(BundleError, match=r"missing config.json.*; bundles are in its folder.*run/model$"):
        load_bundle(tmp_path / "run")


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


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.update(order=t["order"].to(torch.int8)), "tensor order is int8"),
        (lambda t: t.update({"linear.weight": t["linear.weight"].to(torch.float64)}), "is float64"),
        (lambda t: t["linear.bias"].fill_(float("nan")), "linear.bias holds NaN or infinite values"),
    ],
)
def test_load_rejects_tensors_of_another_dtype_or_not_finite(tiny, tmp_path, change, message):
    path = save(tiny, tmp_path / "bundle")
    tensors = safetensors.torch.load_file(path / "weights.safetensors")
    change(tensors)
    safetensors.torch.save_file(tensors, path / "weights.safetensors")
    with pytest.raises(BundleError, match=message):
        load_bundle(path)


def test_a_classifier_bundle_is_refused_where_a_forecaster_is_expected(tmp_path):
    from forecaster.models import get_model

    model = get_model("lra_classifier", mixer="softmax", n_classes=2, seq_len=16, vocab_size=8, d_model=8)
    path = save_bundle(tmp_path / "lra", model=model, model_name="lra_classifier", metrics={}, training={})
    with pytest.raises(BundleError, match="holds a lra_classifier model .* expected a 'forecast' model"):
        load_bundle(path)
    assert load_bundle(path, task="classify").data is None


def test_a_failed_write_keeps_the_previous_file_leaves_no_temp_and_names_the_path(tmp_path):
    target = tmp_path / "forecast.csv"
    target.write_text("previous\n")

    def half_then_full(staged: Path) -> None:
        staged.write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")  # as a full disk fails a writer

    with pytest.raises(OSError, match="No space left on device") as failure:
        write_atomically(target, half_then_full)
    assert failure.value.filename == str(target)
    assert target.read_text() == "previous\n" and os.listdir(tmp_path) == ["forecast.csv"]


def test_a_pipe_is_written_in_place_not_renamed_over(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_atomically(fifo, lambda path: path.write_text("a,b\n"))
    reader.join(timeout=10)
    assert received == [b"a,b\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs /dev/shm")
def test_a_file_in_dev_shm_is_replaced_whole_and_dev_fd_written_in_place(tmp_path):
    """Every path under /dev was taken for a stream and written in place (h33): a failed write left half a
    file in /dev/shm, a tmpfs of regular files. /dev/fd/N, a folder linking into /proc, stays in place."""
    target = Path(f"/dev/shm/forecaster-test-{os.getpid()}.csv")
    target.write_text("previous\n")

    def half_then_full(staged: Path) -> None:
        staged.write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")

    try:
        with pytest.raises(OSError, match="No space left"):
            write_atomically(target, half_then_full)
        assert target.read_text() == "previous\n"
    finally:
        target.unlink()
    opened = tmp_path / "out.csv"
    with opened.open("w") as shell:
        write_atomically(Path(f"/dev/fd/{shell.fileno()}"), lambda path: path.write_text("a,b\n"))
    assert opened.read_text() == "a,b\n" and os.listdir(tmp_path) == ["out.csv"]


def test_a_link_is_followed_and_a_stream_the_shell_opened_is_written_in_place(tmp_path):
    """`--output /dev/stdout > out.csv` replaced the system's /dev/stdout (a link to /proc/self/fd/1) with a
    file and left out.csv empty, and `--output latest.csv` replaced the link, its target never written: a
    link into /proc (or /dev) is written through, a link to a file keeps pointing at the file written, and a
    replaced file keeps its permissions (600 became 644)."""
    real, latest = tmp_path / "real.csv", tmp_path / "latest.csv"
    real.write_text("old\n")
    real.chmod(0o600)
    latest.symlink_to(real.name)
    write_atomically(latest, lambda path: path.write_text("new\n"))
    assert latest.is_symlink() and real.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o600
    opened = tmp_path / "out.csv"
    stdout = tmp_path / "stdout"
    with opened.open("w") as shell:  # as `> out.csv` opens it, and /dev/stdout links to the descriptor
        stdout.symlink_to(f"/proc/self/fd/{shell.fileno()}")
        write_atomically(stdout, lambda path: path.write_text("a,b\n"))
    assert stdout.is_symlink() and opened.read_text() == "a,b\n"


SIZING = """
import sys, torch
from forecaster.models import MODELS

def shapes(model):  # every buffer, kept in the state dict or not, and each tensor registered twice again
    tensors = [*model.named_parameters(), *model.named_buffers(remove_duplicate=False)]
    return {key: (tuple(tensor.shape), tensor.dtype) for key, tensor in tensors}

common = {"input_size": 48, "horizon": 12, "n_channels": 3}
cases = [(name, {**common, **({"season": 12} if "season" in name else {})})
         for name in ("naive", "drift", "mean", "seasonal_naive", "seasonal_drift", "seasonal_mean",
                      "holt_winters", "nlinear", "dlinear", "s3attention", "tnn")]
def build(name, config):
    return MODELS.get(name)(MODELS.get(name).config_class.from_dict(config))

with torch.device("meta"):
    sized = {name: build(name, config) for name, config in cases}
print("torch._dynamo" in sys.modules)
for name, config in cases:
    built = build(name, config)
    assert shapes(sized[name]) == shapes(built), name
    assert len(list(sized[name].buffers())) == len(list(built.buffers())), name  # the size counts each once
print("same shapes")
"""


def test_a_bundle_is_sized_without_importing_torchs_compiler():
    """A bundle's model is built on the meta device first, to refuse one too large before it is allocated;
    arithmetic on meta tensors (a seasonal model's steps, S3Attention's positions) ran Python decompositions
    that import torch._dynamo: 1-3 s of `predict`'s start on a 2-core CPU. Tables a config determines are
    only shaped there (`devices.sized_only`), with the shapes and dtypes of the model built for real."""
    result = subprocess.run([sys.executable, "-c", SIZING], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == ["False", "same shapes"]

"""Hostile use of `forecaster train` and `forecaster predict`: each attack ends with one line on stderr and
exit 2, never a traceback, a partial checkpoint or a forecast file."""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import shlex
import shutil
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from test_cli_train import run_cli

from forecaster.cli import main
from forecaster.training.module import ForecastModule

TINY = shlex.split("--d-model 8 --n-heads 2 --fold 2 --e-layers 1 --left-rank 4 --right-rank 2")
TRAIN = [
    *shlex.split("--horizon 8 --input-size 32 --max-epochs 1 --limit-train-batches 2 --seed 1 --seeds 1"),
    *shlex.split("--accelerator cpu --no-progress"),
]


def refused(argv: list, capsys, status: int = 2) -> str:
    """Run a command that must fail: exit `status` (2: the input or options refused; 1: the system refused
    a write), one `forecaster: error:` line (a usage error names its subcommand, `forecaster train: error:`,
    as argparse does), no traceback; the line."""
    code, out, err = run_cli(argv, capsys)
    assert code == status, (out, err)
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and re.match(r"forecaster( [a-z]+)*: error: ", lines[0]), err
    return lines[0]


def quarter_hourly(rows: int = 800, columns: tuple[str, ...] = ("load", "temp")) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    steps = np.arange(rows)[:, None]
    values = (
        10
        + np.sin(2 * np.pi * steps / 96 + np.arange(len(columns)))
        + rng.normal(0, 0.1, (rows, len(columns)))
    )
    frame = pd.DataFrame(values, columns=list(columns))
    frame.insert(0, "date", pd.date_range("2024-01-01", periods=rows, freq="15min"))
    return frame


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path]:
    """A 15-minute CSV and a tiny S3Attention trained on it for one epoch: (csv, bundle)."""
    root = tmp_path_factory.mktemp("attacks")
    csv = root / "plant.csv"
    quarter_hourly().to_csv(csv, index=False)
    assert main(["train", "--csv", str(csv), *TRAIN, *TINY, "--out", str(root / "model")]) == 0
    return csv, root / "model"


@pytest.fixture
def resumable(trained, tmp_path) -> tuple[list, Path]:
    """A copy of the trained run's work dir with no bundle yet: (train argv that resumes it, checkpoints)."""
    csv, bundle = trained
    shutil.copytree(bundle.parent / ".model.work", tmp_path / ".model.work")
    argv = [
        "train",
        "--csv",
        csv,
        *TRAIN,
        *TINY,
        "--max-epochs",
        "2",
        "--resume",
        "--out",
        tmp_path / "model",
    ]
    return argv, tmp_path / ".model.work" / "checkpoints"


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garbage(path: Path) -> None:
    path.write_bytes(b"PK\x03\x04 this is not a checkpoint" * 100)


def _foreign(path: Path) -> None:
    torch.save({"state_dict": {"weight": torch.zeros(3)}, "epoch": 4}, path)


def _pickled(path: Path) -> None:
    torch.save({"state_dict": {}, "hparams": argparse.Namespace(lr=0.1)}, path)


def _reshaped(path: Path) -> None:
    checkpoint = torch.load(path, weights_only=True)
    name = next(iter(checkpoint["state_dict"]))
    checkpoint["state_dict"][name] = torch.zeros(7, 7, 7)
    torch.save(checkpoint, path)


@pytest.mark.parametrize(
    ("attack", "message"),
    [
        (_truncated, "last.ckpt is not a readable checkpoint"),
        (_garbage, "last.ckpt is not a readable checkpoint"),
        (_foreign, "last.ckpt was not written by `forecaster train`"),
        (_pickled, "last.ckpt is not a readable checkpoint"),
        (_reshaped, "cannot resume from last.ckpt: its weights do not fit this model"),
    ],
    ids=lambda value: getattr(value, "__name__", "")[1:],
)
def test_resume_from_a_damaged_or_foreign_last_checkpoint(resumable, attack, message, capsys):
    argv, checkpoints = resumable
    attack(checkpoints / "last.ckpt")
    line = refused(argv, capsys)
    assert message in line and line.endswith("start the run without --resume")


def test_resume_after_changing_the_model_size(resumable, capsys):
    argv, _ = resumable
    argv[argv.index("--d-model") + 1] = "16"
    line = refused(argv, capsys)
    assert "cannot resume from last.ckpt: its run had other settings (config.d_model: 8 -> 16)" in line


def test_resume_after_changing_the_csv_columns(resumable, tmp_path, capsys):
    argv, _ = resumable
    wider = tmp_path / "wider.csv"
    quarter_hourly(columns=("load", "temp", "wind")).to_csv(wider, index=False)
    argv[argv.index("--csv") + 1] = wider
    line = refused(argv, capsys)
    assert "its run had other settings" in line and "data.columns" in line


def test_resume_with_the_same_settings_still_continues(resumable, capsys):
    argv, _ = resumable
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert "trained 2 epoch(s)" in out


def test_resume_continues_the_members_that_checkpointed_and_trains_the_others(trained, tmp_path, capsys):
    """h84 F1: a bagged run stopped before its second member checkpointed was refused ("nothing to resume:
    .../seed-10001/checkpoints/last.ckpt not found"), so nearly every stop lost the run. The first member
    continues (and one that early stopping had ended trains no further), the second trains afresh."""
    csv, _ = trained
    argv = ["train", "--csv", csv, *TRAIN, *TINY, "--seeds", "2", "--out", tmp_path / "model"]
    assert run_cli([*argv, "--max-epochs", "2"], capsys)[0] == 0
    shutil.rmtree(tmp_path / "model")
    shutil.rmtree(tmp_path / ".model.work" / "seed-10001")  # stopped before the second member checkpointed
    last = tmp_path / ".model.work" / "checkpoints" / "last.ckpt"
    checkpoint = torch.load(last, weights_only=True)
    (stopping,) = [state for key, state in checkpoint["callbacks"].items() if key.startswith("EarlyStopping")]
    stopping.update(stopped_epoch=1, wait_count=3)  # as early stopping leaves a member it ended
    torch.save(checkpoint, last)
    code, _, err = run_cli([*argv, "--max-epochs", "3", "--resume"], capsys)
    assert code == 0, err
    training = json.loads((tmp_path / "model" / "config.json").read_text())["training"]
    assert training["member_epochs"] == [2, 3] and training["resumed"]


def _full_disk(written: list[int], zip_writer: bool = False):
    """torch.save that writes part of a checkpoint, then fails as a full disk does: an OSError, or
    (`zip_writer`, what torch's zip writer raises on a full tmpfs, a traceback before) a RuntimeError without
    the errno."""

    def save(obj, file, *args, **kwargs) -> None:
        file.write(b"\0" * 98_000)
        written.append(1)
        if zip_writer:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0")
        raise OSError(errno.ENOSPC, "No space left on device")

    return save


@pytest.mark.parametrize("zip_writer", [False, True])
def test_a_full_disk_while_checkpointing_leaves_no_partial_checkpoint(
    trained, tmp_path, monkeypatch, capsys, zip_writer
):
    csv, _ = trained
    written: list[int] = []
    monkeypatch.setattr(torch, "save", _full_disk(written, zip_writer))
    if zip_writer:  # the disk it leaves: nothing free
        monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9, 0))
    line = refused(["train", "--csv", csv, *TRAIN, *TINY, "--out", tmp_path / "model"], capsys, status=1)
    assert "disk full while writing checkpoint" in line  # the system's refusal: exit 1, not the input's 2
    assert "No space left on device" in line and "enforce fail" not in line  # not torch's words (h84 F7)
    assert written and not any((tmp_path / ".model.work" / "checkpoints").iterdir())
    assert not (tmp_path / "model").exists()


def test_a_stop_while_a_checkpoint_is_written_is_said_as_a_stop(trained, tmp_path, monkeypatch, capsys):
    """torch's zip writer calls Python to write its bytes and reports what that raises as a RuntimeError
    ("unexpected pos 64 vs 0"): a SIGTERM arriving there was said as a failed write (exit 2, CI saw it). The
    stop now waits for the checkpoint to be written whole, then is said as one (exit 143), nothing kept."""
    csv, _ = trained
    real_save, written = torch.save, []

    def save(obj, file, *args, **kwargs) -> None:
        try:  # as torch's C++ writer turns an exception of its Python callback into a RuntimeError
            os.kill(os.getpid(), signal.SIGTERM)
            file.write(b"")  # a handler raising runs here, between the writer's calls
        except BaseException:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64 vs 0") from None
        real_save(obj, file, *args, **kwargs)
        written.append(file.name)

    monkeypatch.setattr(torch, "save", save)
    code, _, err = run_cli(["train", "--csv", csv, *TRAIN, *TINY, "--out", tmp_path / "model"], capsys)
    assert code == 143 and err.strip().splitlines()[-1].startswith("forecaster: terminated; "), err
    assert written and not (tmp_path / "model").exists()


def test_a_full_disk_on_a_later_checkpoint_keeps_the_previous_one(resumable, monkeypatch, capsys):
    argv, checkpoints = resumable
    before = {path.name: path.read_bytes() for path in checkpoints.iterdir()}
    monkeypatch.setattr(torch, "save", _full_disk([]))
    assert "disk full while writing checkpoint" in refused(argv, capsys, status=1)
    assert {path.name: path.read_bytes() for path in checkpoints.iterdir()} == before


def test_running_out_of_memory_while_training_suggests_a_smaller_batch(
    trained, tmp_path, monkeypatch, capsys
):
    csv, _ = trained

    def exhausted(self, batch, batch_idx):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB\nmore details")

    monkeypatch.setattr(ForecastModule, "training_step", exhausted)
    line = refused(["train", "--csv", csv, *TRAIN, *TINY, "--out", tmp_path / "model"], capsys)
    assert "out of memory while training s3attention with --batch-size 32" in line
    assert line.endswith("try a smaller --batch-size")


def test_predict_refuses_a_huge_value_and_writes_no_file(trained, tmp_path, capsys):
    csv, bundle = trained
    frame = pd.read_csv(csv)
    frame.loc[len(frame) - 1, "temp"] = 1e308
    frame.to_csv(tmp_path / "huge.csv", index=False)
    output = tmp_path / "out" / "forecast.csv"
    argv = ["predict", "--model", bundle, "--csv", tmp_path / "huge.csv", "--output", output]
    assert "value 1e+308 in column 'temp'; expected numbers of |value| <= 1.84e+19" in refused(argv, capsys)
    assert not output.exists() and not output.parent.exists()


def test_predict_refuses_hourly_rows_for_a_15_minute_model(trained, tmp_path, capsys):
    _, bundle = trained
    frame = quarter_hourly(200)
    frame["date"] = pd.date_range("2024-01-01", periods=200, freq="h")
    frame.to_csv(tmp_path / "hourly.csv", index=False)
    output = tmp_path / "forecast.csv"
    line = refused(
        ["predict", "--model", bundle, "--csv", tmp_path / "hourly.csv", "--output", output], capsys
    )
    assert "hourly.csv: line 3: 2024-01-01 01:00:00 does not follow the model's frequency '15min'" in line
    assert not output.exists()


@pytest.mark.parametrize(("flag", "name"), [("--output", "loop"), ("--output", "loop/forecast.csv"),
                                          ("--plot", "loop/forecast.png")])
def test_predict_refuses_an_output_through_a_loop_of_links_before_any_work(trained, tmp_path, capsys, flag,
                                                                          name):
    """Python 3.11's pathlib raises RuntimeError on a link loop: status 3, "internal error", after the
    forecast was made (h112 F5)."""
    csv, bundle = trained
    (tmp_path / "loop").symlink_to(tmp_path / "pool")
    (tmp_path / "pool").symlink_to(tmp_path / "loop")
    line = refused(["predict", "--model", bundle, "--csv", csv, flag, tmp_path / name], capsys)
    assert line.endswith(f"{flag} {tmp_path / name}: a loop of symbolic links; expected a file name")


def test_predict_in_a_removed_working_folder_is_not_told_of_a_link_loop(trained, tmp_path, capsys,
                                                                      monkeypatch):
    """`--output f.csv` where the working folder was removed: resolving it fails to read the working folder
    (an OSError), which had been called "a loop of symbolic links" (h117); it is the system's one line."""
    csv, bundle = trained
    (tmp_path / "gone").mkdir()
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    line = refused(["predict", "--model", bundle, "--csv", csv, "--output", "f.csv"], capsys, status=1)
    assert "loop" not in line and "No such file or directory" in line


def test_train_refuses_a_huge_value_before_training(tmp_path, capsys):
    frame = quarter_hourly()
    frame.loc[500, "load"] = 1e308
    frame.to_csv(tmp_path / "huge.csv", index=False)
    line = refused(["train", "--csv", tmp_path / "huge.csv", *TRAIN, "--out", tmp_path / "model"], capsys)
    assert "huge.csv: at 2024-01-06 05:00:00: value 1e+308 in column 'load' is too large" in line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["huge.csv"]  # nothing trained or written


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        # a megabyte cell: dateutil would take minutes on it, Python refuses to convert its digits
        (
            "huge_cell.csv",
            b"date,value\n" + b"9" * 1_000_000 + b"\n",
            "has 1 value(s) that are not timestamps",
        ),
        (
            "huge_number.csv",
            b"date,value\n2020-01-01,1\n2020-02-01," + b"9" * 10_000 + b"\n",
            "column 'value' holds text where numbers are expected",
        ),
        ("not_a_zip.xlsx", b"date,value\n2020-01-01,1\n", "not an .xlsx workbook (a zip archive of sheets)"),
        ("wide_mixed.csv", b"name,1990,1991Q1,1992,1993\nX,1,2,3,4\n", "mix kinds of periods"),
    ],
)
def test_hostile_files_are_one_line_in_bounded_time(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    assert message in refused(["data", "describe", path], capsys)

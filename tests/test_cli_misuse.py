"""Careless and hostile use of the commands and the API (a second sweep): options Lightning would refuse only
once a fit starts, outputs over inputs, symbolic links, interrupts, numpy scalars, bundle files."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_cli_attacks import refused
from test_cli_train import run_cli

from forecaster.artifacts import CONFIG_FILE, WEIGHTS_FILE, load_bundle
from forecaster.cli import main
from forecaster.errors import BundleError, one_line, warning_line

FORECASTER = Path(sys.executable).with_name("forecaster")


@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("misuse") / "daily.csv"
    steps = np.arange(300)
    values = 10 + np.sin(2 * np.pi * steps / 7) + np.random.default_rng(0).normal(0, 0.1, steps.size)
    pd.DataFrame({"date": pd.date_range("2024-01-01", periods=steps.size, freq="D"), "y": values}).to_csv(
        path, index=False
    )
    return path


def _train(csv: Path, out: Path, *more: object) -> list[str]:
    return ["train", "--csv", csv, "--horizon", 4, "--input-size", 14, "--max-epochs", 1, "--out", out, *more]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--accelerator", "banana"], "invalid accelerator name"),
        (["--accelerator", "tpu"], "torch_xla"),  # Lightning's ImportError was an internal error
        (["--devices", "0"], "--devices 0"),
        (["--devices", str((os.cpu_count() or 1) + 1)], "processes on CPU; this machine has"),
        (["--strategy", "banana"], "invalid strategy name"),
        (["--limit-train-batches", "0"], "a count >= 1 or a fraction in (0, 1]"),
        (["--limit-train-batches", "nan"], "a count >= 1 or a fraction in (0, 1]"),
        (["--limit-train-batches", "1.5"], "a count >= 1 or a fraction in (0, 1]"),
        (["--candidates", "dlinear"], "leave out --candidates or use --model auto"),
        (["--level", "80"], "unrecognized arguments: --level 80; did you mean --levels?"),  # not cut short
    ],
)
def test_training_options_are_refused_before_any_work(csv, tmp_path, capsys, options, message):
    out = tmp_path / "model"
    line = refused(_train(csv, out, "--model", "nlinear", *options), capsys)
    assert message in line
    assert not out.exists() and not (tmp_path / ".model.work").exists()


def test_a_model_larger_than_a_bundle_may_hold_is_refused_before_it_is_built(csv, tmp_path, capsys):
    """Flags each within its range (D 16384, 64 layers) asked for 576 GiB of weights, and the run was
    OOM-killed after minutes: sized on the meta device, it is refused in one line as loading would."""
    out = tmp_path / "model"
    line = refused(_train(csv, out, "--d-model", 16384, "--n-heads", 1, "--e-layers", 64), capsys)
    assert re.search(r"model 's3attention': the model config asks for \d+\.\d GiB of weights and buffers; "
                     r"expected at most 1 GiB$", line), line
    assert not out.exists()


def test_a_seed_numpy_cannot_take_is_refused_by_the_parser(csv, tmp_path, capsys):
    code, _, err = run_cli(_train(csv, tmp_path / "m", "--seed", 2**32), capsys)
    assert code == 2 and "<= 4294967295" in err and "Traceback" not in err


@pytest.fixture(scope="module")
def naive_bundle(csv, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("naive") / "model"
    previous = os.umask(0o022)
    try:
        assert main([str(arg) for arg in _train(csv, out, "--model", "naive")]) == 0
    finally:
        os.umask(previous)
    return out


def test_bundle_files_are_readable_as_its_config_is(naive_bundle):
    modes = {path.name: path.stat().st_mode & 0o777 for path in naive_bundle.iterdir()}
    assert modes[CONFIG_FILE] == 0o644
    assert set(modes.values()) == {0o644}, modes  # a service running as another user loads the weights


def test_predict_refuses_to_write_over_its_own_input(csv, naive_bundle, tmp_path, capsys):
    history = tmp_path / "history.csv"
    history.write_bytes(csv.read_bytes())
    predict = ["predict", "--model", naive_bundle, "--csv", history]
    line = refused([*predict, "--output", history], capsys)
    assert "is the file of --csv" in line and history.read_bytes() == csv.read_bytes()
    assert "is empty" in refused([*predict, "--output", ""], capsys)
    before = {path.name: path.read_bytes() for path in naive_bundle.iterdir()}
    for flag, name in (("--output", "weights.safetensors"), ("--output", "config.json"), ("--plot", "p.png")):
        line = refused([*predict, flag, naive_bundle / name], capsys)
        assert f"is inside the model's folder {naive_bundle}; expected a file outside it" in line
    assert {path.name: path.read_bytes() for path in naive_bundle.iterdir()} == before
    code, _, err = run_cli([*predict, "--plot-history", 0], capsys)
    assert code == 2 and "expected a whole number >= 1, got '0'" in err
    for typo in ("1_2", "\uff18", "\u0661\u0662", "3.0"):  # int() read 12, 8 and 12; argparse's "invalid int"
        said = f"expected a whole number >= 1, got {typo!r} (see forecaster predict --help)"
        assert refused([*predict, "--horizon", typo], capsys).endswith(said)
    said = "expected comma-separated integers >= 1, got '8_0'"
    assert said in refused([*predict, "--level", "8_0"], capsys)


def test_levels_are_taken_comma_separated_or_one_argument_each(csv, naive_bundle, tmp_path, capsys):
    """`--level 80 95` was refused ("unrecognized arguments: 95"): both forms give the same forecast."""
    written = {}
    for name, levels in (("commas", ["80,95"]), ("apart", ["80", "95"])):
        out = tmp_path / f"{name}.csv"
        predict = ["predict", "--model", naive_bundle, "--csv", csv, "--level", *levels, "--output", out]
        assert run_cli(predict, capsys)[0] == 0
        written[name] = out.read_text()
    assert written["commas"] == written["apart"] and "-hi-95" in written["apart"]


def test_train_and_calibrate_into_a_read_only_folder_are_refused_first(csv, naive_bundle, tmp_path, capsys,
                                                                        monkeypatch):
    """On a read-only file system `train --out` failed once the run had ended ("Read-only file system"), and
    `calibrate` named its hidden temporary file (h44). The folders are as root sees a read-only mount."""
    locked, copy = tmp_path / "locked", tmp_path / "locked" / "model"
    locked.mkdir()
    shutil.copytree(naive_bundle, copy)
    writable = os.access
    read_only = (locked, copy)
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) not in read_only and writable(path, mode))
    train = ["train", "--csv", csv, "--model", "nlinear", "--horizon", 7, "--out", locked / "new"]
    expected = f"output {locked / 'new'}: folder {locked} is not writable; expected a folder this user can"
    assert refused(train, capsys, status=1) == f"forecaster: error: {expected} write"  # the system's (h84 F5)
    assert sorted(entry.name for entry in locked.iterdir()) == ["model"]  # no work folder: nothing ran
    before = (copy / "calibration.safetensors").read_bytes()
    line = refused(["calibrate", "--model", copy, "--csv", csv], capsys, status=1)
    assert line == (f"forecaster: error: cannot write {copy / 'calibration.safetensors'}: folder {copy} is "
                    "not writable; expected a folder this user can write")  # fmt: skip
    assert (copy / "calibration.safetensors").read_bytes() == before


def test_a_plot_into_a_folder_not_writable_is_refused_before_any_work(csv, naive_bundle, tmp_path, capsys,
                                                                       monkeypatch):
    """--plot into a read-only folder failed after --output was written, naming its hidden temp file; a
    device as --plot had '.png' added (/dev/null.png was created, as root)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    writable = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != locked and writable(path, mode))
    output = tmp_path / "forecast.csv"
    predict = ["predict", "--model", naive_bundle, "--csv", csv, "--output", output]
    line = refused([*predict, "--plot", locked / "x.png"], capsys, status=1)
    expected = f"--plot {locked / 'x.png'}: folder {locked} is not writable; expected a file in one that is"
    assert line == f"forecaster: error: {expected}"
    assert not output.exists()
    line = refused([*predict, "--plot", "-"], capsys)  # as --output -: it wrote '-.png' (h84 F8)
    assert line == ("forecaster: error: --plot -: a plot is not written to standard output; expected a file "
                    "name, e.g. forecast.png")  # fmt: skip
    afile = tmp_path / "afile"
    afile.write_text("")  # a file where a folder is named: it said 'afile: File exists'
    line = refused([*predict[:-1], afile / "x.csv"], capsys)
    assert line.endswith(f"--output {afile / 'x.csv'}: {afile} is a file; expected a file in a folder")
    bench = ["bench", "attention", "--json", afile / "x.json", "--device", "cpu", "--lengths", 64]
    assert refused(bench, capsys).endswith("is a file; expected a file in a folder")  # before measuring
    code, out, err = run_cli(["predict", "--model", naive_bundle, "--csv", csv, "--plot", os.devnull], capsys)
    assert code == 0 and f"plot written to {os.devnull}\n" in out and not Path(f"{os.devnull}.png").exists()


def test_a_dash_writes_the_forecast_to_standard_output_and_reads_no_standard_input(
    csv, naive_bundle, tmp_path, capsys, monkeypatch
):
    """`--output -` wrote a file named '-' (a pipe got nothing); `--csv -` said '-: not found'."""
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "forecast.csv"
    assert run_cli(["predict", "--model", naive_bundle, "--csv", csv, "--output", output], capsys)[0] == 0
    code, out, err = run_cli(["predict", "--model", naive_bundle, "--csv", csv, "--output", "-"], capsys)
    assert code == 0 and out == output.read_text() and not (tmp_path / "-").exists()
    line = refused(["predict", "--model", naive_bundle, "--csv", "-"], capsys)
    assert line == "forecaster: error: -: standard input is not read; expected a CSV, TSV or Excel file"


def test_output_through_a_link_into_a_missing_folder_makes_the_folder(csv, naive_bundle, tmp_path, capsys):
    """As `--output new/forecast.csv` makes `new`, a link to `new/forecast.csv` does: it ended with exit 1 and
    pandas' "Cannot save file into a non-existent directory"."""
    link = tmp_path / "latest.csv"
    link.symlink_to(tmp_path / "runs" / "forecast.csv")
    code, out, err = run_cli(["predict", "--model", naive_bundle, "--csv", csv, "--output", link], capsys)
    assert code == 0 and link.is_symlink() and (tmp_path / "runs" / "forecast.csv").is_file(), err


def test_a_symbolic_link_as_output_is_refused_and_its_target_kept(csv, naive_bundle, tmp_path, capsys):
    link = tmp_path / "link"
    link.symlink_to(naive_bundle)
    line = refused([*_train(csv, link, "--model", "naive"), "--overwrite"], capsys)
    assert "is a symbolic link" in line
    assert link.is_symlink() and (naive_bundle / WEIGHTS_FILE).is_file()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    assert "is a symbolic link" in refused(_train(csv, dangling, "--model", "naive"), capsys)
    assert not (tmp_path / ".dangling.work").exists()


def test_a_config_number_too_long_to_convert_is_a_bundle_error(naive_bundle, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in naive_bundle.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    config = json.loads((copy / CONFIG_FILE).read_text())
    text = json.dumps(config).replace(f'"horizon": {config["data"]["horizon"]}', '"horizon": ' + "9" * 5000)
    (copy / CONFIG_FILE).write_text(text)
    with pytest.raises(BundleError, match="a number too long to be a setting"):
        load_bundle(copy)


def test_numpy_scalars_are_taken_as_python_numbers(csv):
    from forecaster.api import Forecaster

    frame = pd.read_csv(csv)
    model = Forecaster("nlinear", horizon=np.int64(4), input_size=np.int64(14), max_epochs=np.int64(1),
                       lr=np.float32(0.001)).fit(frame)  # fmt: skip
    assert model.predict(frame).shape == (4, 1)


def _train_then_signal(csv: Path, tmp_path: Path, sent: int, epochs: int = 500) -> tuple[int, str]:
    """A `train` sent `sent` once it is inside its fit (Ctrl-C ignored, as by a shell, for a short one): its
    exit status and standard error."""
    argv = [str(arg) for arg in _train(csv, tmp_path / "model", "--max-epochs", epochs, "--patience", 500,
                                       "--no-progress")]  # fmt: skip
    handled = signal.SIG_IGN if epochs < 500 else signal.SIG_DFL  # a pytest-xdist worker ignores Ctrl-C

    def started() -> None:
        signal.signal(signal.SIGINT, handled)

    process = subprocess.Popen([str(FORECASTER), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=started)  # fmt: skip
    logs = tmp_path / ".model.work" / "logs"
    deadline = time.monotonic() + 120
    while not logs.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # inside the fit
    process.send_signal(sent)
    _, err = process.communicate(timeout=120)
    return process.returncode, err


@pytest.mark.parametrize(("sent", "code", "word"), [(signal.SIGINT, 130, "interrupted"),
                                                    (signal.SIGTERM, 143, "terminated"),
                                                    (signal.SIGHUP, 129, "hung up")])  # fmt: skip
def test_an_interrupted_train_says_so_in_one_line_and_keeps_nothing_half_written(csv, tmp_path, sent, code,
                                                                                word):
    """A closed terminal (SIGHUP) ended a run without a word (h44)."""
    returncode, err = _train_then_signal(csv, tmp_path, sent)
    assert returncode == code, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(f"forecaster: {word}; ")
    assert not (tmp_path / "model").exists() and not list(tmp_path.glob(".model.tmp-*"))


def test_a_stop_after_the_bundle_was_replaced_says_it_was_saved(csv, tmp_path, monkeypatch, capsys):
    """A stop landing after `train --overwrite` swapped the new bundle in said "earlier outputs are as they
    were", though the earlier bundle was gone (h84 F3): the line names the output saved before the stop."""
    import forecaster.cli as cli
    import forecaster.training.workflows as workflows

    out, save = tmp_path / "model", workflows.save_bundle
    assert main([str(arg) for arg in _train(csv, out, "--model", "naive")]) == 0

    def save_then_stop(*args, **kwargs):
        path = save(*args, **kwargs)
        cli._stop(signal.SIGTERM, None)  # as the signal's handler does, right after the save
        return path

    monkeypatch.setattr(workflows, "save_bundle", save_then_stop)
    capsys.readouterr()
    argv = _train(csv, out, "--model", "nlinear", "--seeds", 1, "--overwrite")
    assert main([str(arg) for arg in argv]) == 143
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"forecaster: terminated; {out} was saved whole before the stop, replacing any earlier version; "
        "nothing was half-written"
    )
    assert json.loads((out / CONFIG_FILE).read_text())["model"]["name"] == "nlinear"


def test_a_second_train_to_the_same_output_is_refused_at_once(csv, tmp_path, capsys):
    """Two runs to one --out shared its work folder: the second emptied the first's checkpoints, which then
    failed naming a hidden folder, or could save the other's weights (h84 F4). A run holds the folder; the
    lock file of a run that died blocks nothing."""
    from forecaster.atomic import LOCK_FILE, held_by_this_run

    out, work = tmp_path / "model", tmp_path / ".model.work"
    with held_by_this_run(work, "output model"):  # as a live run holds it
        line = refused(_train(csv, out, "--model", "naive"), capsys)
    assert line == (f"forecaster: error: output {out} is in use by another run (process "
                    f"{os.getpid()}, lock {work / LOCK_FILE}); wait for it to end, or choose another output")
    work.mkdir()
    (work / LOCK_FILE).write_text("999999999\n")  # left by a run that was killed
    assert main([str(arg) for arg in _train(csv, out, "--model", "naive")]) == 0
    assert (out / CONFIG_FILE).is_file() and not work.exists()  # a run that fitted nothing leaves no folder


def test_a_stop_the_shell_ignores_stays_ignored(csv, tmp_path):
    """A job a script starts in the background inherits Ctrl-C ignored: once forecaster's handler was in
    place, a Ctrl-C meant for the foreground ended it (h41)."""
    returncode, err = _train_then_signal(csv, tmp_path, signal.SIGINT, epochs=3)
    assert returncode == 0 and "interrupted" not in err, err
    assert (tmp_path / "model" / "config.json").is_file()


def _copy(bundle: Path, to: Path) -> Path:
    to.mkdir()
    for path in bundle.iterdir():
        (to / path.name).write_bytes(path.read_bytes())
    return to


def test_a_calibration_of_another_bundle_is_refused_and_calibrate_replaces_a_broken_one(
    csv, naive_bundle, tmp_path, capsys
):
    other_csv = tmp_path / "other.csv"
    frame = pd.read_csv(csv)
    frame["y"] = frame["y"] * 3 + 5  # other data: another scaler in config.json, the same weight shapes
    frame.to_csv(other_csv, index=False)
    other = tmp_path / "other"
    assert main([str(arg) for arg in _train(other_csv, other, "--model", "naive")]) == 0
    swapped = _copy(naive_bundle, tmp_path / "swapped")
    (swapped / "calibration.safetensors").write_bytes((other / "calibration.safetensors").read_bytes())
    line = refused(["predict", "--model", swapped, "--csv", csv, "--level", 80], capsys)
    assert "made for another model" in line and "forecaster calibrate --model" in line

    broken = _copy(naive_bundle, tmp_path / "broken")
    (broken / "calibration.safetensors").write_bytes(b"\x00" * 7)
    assert "not a readable calibration file" in refused(["predict", "--model", broken, "--csv", csv], capsys)
    code, out, _ = run_cli(["calibrate", "--model", broken, "--csv", csv], capsys)
    assert code == 0 and out.startswith("note: replacing an unusable calibration: ")
    assert load_bundle(broken).calibration is not None

    (broken / "calibration.safetensors").unlink()
    (broken / "calibration.safetensors").mkdir()
    line = refused(["predict", "--model", broken, "--csv", csv, "--level", 80], capsys)
    assert "not a regular file" in line
    (broken / CONFIG_FILE).unlink()
    (broken / CONFIG_FILE).mkdir()
    line = refused(["predict", "--model", broken, "--csv", csv], capsys)
    assert f"{CONFIG_FILE} not a regular file" in line


def test_a_benchmark_output_that_cannot_be_a_folder_and_a_bad_horizon_are_one_line(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    grid = ["benchmark", "--datasets", "ETTh1", "--horizons", 96, "--models", "naive", "--out"]
    assert refused([*grid, afile], capsys).endswith(f"{afile} is a file; expected a folder to write to")
    assert refused([*grid, afile / "sub"], capsys).endswith(f"{afile} is a file; expected folders above it")
    code, _, err = run_cli([*grid[:3], "--horizons", 0, "--out", tmp_path / "grid"], capsys)
    assert code == 2 and "expected 'paper' or comma-separated positive integers like 96,192" in err


def test_a_warning_of_several_notes_keeps_each_note_whole_and_cuts_only_an_echo():
    """A reader's notes joined past 500 characters were cut mid-word ("channels='multi ... (5 characters
    cut) ... e refuses)"); each note is kept whole, and only a note echoing a huge name is cut."""
    notes = [f"note {k}: " + "word " * 60 for k in range(4)]  # about 1,250 characters in all
    line = warning_line("; ".join(notes))
    assert line == "forecaster: warning: " + "; ".join(notes) and "characters cut" not in line
    echoed = warning_line("; ".join([notes[0], "left out column 'x" + "y" * 10**6 + "'"]))
    assert echoed.startswith("forecaster: warning: " + notes[0] + "; left out column 'xyyy")
    assert "characters cut" in echoed and len(echoed) < 1200
    assert warning_line("; ".join(notes), note=True) == "forecaster: " + "; ".join(notes)


def test_one_line_keeps_within_any_limit() -> None:
    """The one clipping of the project's texts promises its limit: the service's had sliced a text to a
    negative end below its own suffix's length, 100 characters clipped to 10 answering 110 (h107); a
    4,000,000-character key passed it by 3 (h101). A long limit keeps the start and the end, a short one the
    start."""
    for size in (2_000, 100_000, 4_000_000):
        assert len(one_line("k" * size, 2_000)) == 2_000
    for limit in (0, 2, 10, 30, 60, 200):
        assert len(one_line("k" * 100, limit)) <= limit
    assert one_line("a" * 50 + "z" * 50, 10) == "a" * 7 + "..." and one_line("k" * 100, 200) == "k" * 100
    assert one_line("a" * 100 + "z" * 100, 100).endswith("z" * 24)


def test_a_fault_of_ours_is_one_line_and_its_traceback_shown_with_verbose(tmp_path, capsys, monkeypatch):
    """A bug (a ValueError from deep inside training) printed a traceback after minutes of work; it is one
    line naming it as forecaster's fault, exit status 3, and --verbose shows the traceback to report."""
    import forecaster.commands.train as train

    def broken(args):
        raise ValueError("ensemble expects input (batch, 96, channels), got (61, 192, 1)")

    monkeypatch.setattr(train, "run", broken)
    argv = ["train", "--dataset", "ETTh1", "--horizon", "4", "--out", str(tmp_path / "m")]
    assert main(argv) == 3
    said = capsys.readouterr().err.splitlines()
    assert said == ["forecaster: internal error: ValueError: ensemble expects input (batch, 96, channels), "
                    "got (61, 192, 1) (a fault of forecaster, not of your input: --verbose shows the "
                    "traceback to report)"]  # fmt: skip
    with pytest.raises(ValueError, match="ensemble expects input"):
        main([*argv, "--verbose"])


def test_verbose_is_taken_by_every_command_and_a_closed_stdout_is_no_fault(csv, naive_bundle, capsys,
                                                                           monkeypatch):
    """The advice of an internal error, '--verbose shows the traceback', was refused by predict as an
    unrecognized argument; a shell's closed stdout (`>&-`) made predict an internal error (AttributeError)."""
    import forecaster.commands.predict as predict

    monkeypatch.setattr(predict, "run", lambda args: (_ for _ in ()).throw(KeyError("level")))
    argv = ["predict", "--model", str(naive_bundle), "--csv", str(csv)]
    assert main(argv) == 3
    with pytest.raises(KeyError, match="level"):
        main([*argv, "--verbose"])
    with pytest.raises(SystemExit, match="2"):  # a misspelled option is still named
        main([*argv, "--verbos"])
    assert "unrecognized arguments: --verbos" in capsys.readouterr().err
    monkeypatch.undo()
    monkeypatch.setattr(sys, "stdout", None)
    assert main(argv) == 0


def test_a_baseline_names_no_folder_of_checkpoints_it_never_wrote(csv, tmp_path, capsys):
    assert main([str(arg) for arg in _train(csv, tmp_path / "m", "--model", "seasonal_naive")]) == 0
    said = capsys.readouterr().out
    assert "bundle saved to" in said and "checkpoints and logs in" not in said  # it named .m.work
    assert not (tmp_path / ".m.work").exists()


def test_predict_writes_the_format_its_output_is_named(csv, naive_bundle, tmp_path, capsys):
    """`--output f.csv.gz` got plain text (pandas' read_csv then raised BadGzipFile) and `--output f.xlsx`
    CSV text Excel refuses: compressed as named, tabs for .tsv, other formats refused before any work."""
    predict = ["predict", "--model", str(naive_bundle), "--csv", str(csv), "--output"]
    expected = None
    for name, options in (("f.csv", {}), ("f.csv.gz", {}), ("f.tsv.bz2", {"sep": "\t"}), ("f.csv.zip", {})):
        assert main([*predict, str(tmp_path / name)]) == 0
        read = pd.read_csv(tmp_path / name, index_col=0, **options)
        expected = read if expected is None else expected
        pd.testing.assert_frame_equal(read, expected)
    assert len(expected) == 4 and list(expected.columns) == ["y"]
    for name in ("f.xlsx", "f.csv.zst", "f.csv.lz4"):  # zstd and lz4 were plain text under their name (h47)
        line = refused([*predict, str(tmp_path / name)], capsys)
        assert "forecasts are written as CSV; expected a name ending .csv, .tsv or .txt" in line
        assert not (tmp_path / name).exists()


def test_ctrl_c_before_the_command_runs_is_one_line_too(capsys, monkeypatch):
    """Ctrl-C in the first seconds of `train` (importing torch and Lightning, before the command's own
    handler) printed a KeyboardInterrupt traceback."""
    import forecaster.cli as cli

    def importing(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", importing)
    assert main(["train", "--help"]) == 130
    assert capsys.readouterr().err.splitlines() == [
        "forecaster: interrupted; nothing was half-written (earlier outputs are as they were)"]


def test_a_stop_wrapped_by_the_c_code_it_arrived_in_is_said_as_a_stop(monkeypatch, capsys) -> None:
    """Ctrl-C while `tune` waits on Ray's C code surfaces as a SystemError caused by the stop: it printed
    'internal error: SystemError: <cyfunction CoreWorker.wait> returned a result with an exception set'."""
    import forecaster.data.download
    from forecaster import cli

    def interrupted_in_c(*args, **kwargs):
        try:
            cli._stop(signal.SIGINT, None)
        except cli._Stopped as stop:
            raise SystemError("<cyfunction CoreWorker.wait> returned a result with an exception set") from (
                stop
            )

    monkeypatch.setattr(forecaster.data.download, "download_dataset", interrupted_in_c)
    assert main(["data", "download", "ILI"]) == 130
    assert capsys.readouterr().err == (
        "forecaster: interrupted; nothing was half-written (earlier outputs are as they were)\n"
    )


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["trian"], "forecaster: error: argument command: invalid choice: 'trian' (choose from 'data', "
         "'train', 'tune', 'evaluate', 'predict', 'calibrate', 'serve', 'benchmark', 'bench', 'lra'); did "
         "you mean 'train'? (see forecaster --help)"),
        (["data", "descrbe"], "forecaster data: error: argument data_command: invalid choice: 'descrbe' "
         "(choose from 'describe', 'download', 'verify'); did you mean 'describe'? (see forecaster data "
         "--help)"),
        (["predict", "--model", "m", "--csv", "f.csv", "--levle=80", "--verbose"], "forecaster predict: "
         "error: unrecognized arguments: --levle=80; did you mean --level? (see forecaster predict --help)"),
        (["bench", "smoother", "--lenghts", "8"], "forecaster bench smoother: error: unrecognized arguments: "
         "--lenghts 8; did you mean --lengths? (see forecaster bench smoother --help)"),
        (["predict", "--model", "m", "--csv", "f.csv", "--zzz", "1"], "forecaster predict: error: "
         "unrecognized arguments: --zzz 1 (see forecaster predict --help)"),  # nothing near: no guess
    ],
)  # fmt: skip
def test_a_misspelled_command_or_option_is_named_with_the_nearest_one_and_its_help(argv, line, capsys):
    """The line came from the top parser, which pointed at `forecaster --help` for a subcommand's option and
    guessed nothing; it comes from the (sub)command given the argument, with its nearest spelling."""
    with pytest.raises(SystemExit, match="2"):
        main(argv)
    assert capsys.readouterr().err == line + "\n"


def test_an_unknown_model_is_refused_naming_only_the_models_one_can_train(csv, tmp_path, capsys):
    """The registry's whole list named ensemble and the LRA classifiers, which `train` refuses by name."""
    line = refused(_train(csv, tmp_path / "model", "--model", "nosuch"), capsys)
    assert line.startswith("forecaster: error: model must be one of dlinear, drift, ")
    assert line.endswith("got 'nosuch'")
    assert "ensemble" not in line and "lra_classifier" not in line


def test_data_describe_of_a_folder_or_a_pipe_says_what_it_is(tmp_path, capsys):
    """`data describe --csv` of a folder, a FIFO or /dev/zero said "no such file, and not a registered
    dataset", where `train` says what the path is (h47 #13)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, what in ((tmp_path, "is a folder"), (fifo, "is not a regular file")):
        line = refused(["data", "describe", "--csv", path], capsys)
        assert line == f"forecaster: error: {path}: {what}; expected a CSV, TSV or Excel file"
    line = refused(["data", "describe", "--csv", tmp_path / "none.csv"], capsys)
    assert line.startswith(f"forecaster: error: {tmp_path / 'none.csv'}: no such file, and not a registered "
                           "dataset (ETTh1, ")


class _FullDevice:
    """A standard output on a full device (`> /dev/full`): every write fails, naming no file."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        pass


def test_a_full_standard_output_is_named(csv, capsys, monkeypatch):
    """`forecaster data describe > /dev/full` said only "No space left on device" (h101 F4)."""
    monkeypatch.setattr(sys, "stdout", _FullDevice())
    assert main(["data", "describe", "--csv", str(csv)]) == 1
    assert capsys.readouterr().err == "forecaster: error: standard output: No space left on device\n"

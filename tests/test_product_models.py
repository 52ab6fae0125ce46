"""Every forecaster model through the product path: `forecaster train --model ...` writes a bundle that
reloads bit-identically and is served like an S3Attention bundle; train says how it compares with naive."""

from __future__ import annotations

import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from test_service import serving

from forecaster.artifacts import load_bundle
from forecaster.cli import main
from forecaster.data import DataQualityWarning, load_dataset
from forecaster.prediction import check_history, predict_windows

QUICK = shlex.split(
    "--horizon 24 --max-epochs 1 --limit-train-batches 3 --seeds 1 --accelerator cpu --no-progress"
)


def _train(data_dir: Path, out: Path, *options: str) -> tuple[int, str]:
    code = main(
        ["train", "--dataset", "ILI", "--data-dir", str(data_dir), *QUICK, *options, "--out", str(out)]
    )
    return code, out


@pytest.mark.slow
@pytest.mark.parametrize(
    "model", ["naive", "seasonal_naive", "drift", "dlinear", "nlinear", "patchtst", "itransformer"]
)
def test_a_model_bundle_round_trips_and_is_served(model: str, data_dir: Path, tmp_path: Path, capsys) -> None:
    if model in ("patchtst", "itransformer"):
        pytest.importorskip("neuralforecast")
    extra = (
        ["--season", "12"] if model == "seasonal_naive" else []
    )  # weekly ILI: a year (52) exceeds input 36
    code, out = _train(data_dir, tmp_path / "models" / model, "--model", model, *extra)
    assert code == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "validation MSE" in printed and "(naive " in printed
    bundle = load_bundle(out)
    assert bundle.model_name == model
    series = load_dataset("ILI", data_dir)
    prepared = check_history(bundle, series.index[-40:], series.values[-40:])
    # On a new thread, as the service's inference thread is: torch's OpenMP thread count is per thread, and
    # this one's may have been set apart from the process's by an earlier test, which would split sums
    # differently from the service's.
    with ThreadPoolExecutor(max_workers=1) as thread:
        expected = thread.submit(predict_windows, bundle, prepared.window[None]).result()[0]
    if model == "naive":
        # through the float32 model path: equal to a few float32 steps
        np.testing.assert_allclose(expected, np.repeat(series.values[-1:], 24, axis=0), rtol=1e-6)
    with serving(tmp_path / "models") as client:
        body = {
            "timestamps": [stamp.isoformat() for stamp in series.index[-40:]],
            "values": {column: series.frame[column].iloc[-40:].tolist() for column in bundle.data.columns},
        }
        answer = client.post(f"/v1/models/{model}/forecast", json=body)
    assert answer.status_code == 200, answer.text
    served = np.array([answer.json()["forecast"][column] for column in bundle.data.columns]).T
    np.testing.assert_array_equal(served, expected)  # reloaded in the service, bit for bit


@pytest.mark.slow
def test_train_says_plainly_when_naive_is_better(data_dir: Path, tmp_path: Path) -> None:
    """Exchange at 96: the reference S3Attention, briefly trained, loses to the last value on validation."""
    argv = [
        "train",
        "--dataset",
        "Exchange",
        "--data-dir",
        str(data_dir),
        "--horizon",
        "96",
        "--preset",
        "reference",
        "--max-epochs",
        "1",
        "--limit-train-batches",
        "5",
        "--accelerator",
        "cpu",
        "--no-progress",
        "--out",
        str(tmp_path / "exchange"),
    ]
    said = "note: the naive forecast \\(the last value repeated\\) is at least as good as this model"
    with pytest.warns(DataQualityWarning, match=said):  # fit() warns, to the command line and Python callers
        assert main(argv) == 0

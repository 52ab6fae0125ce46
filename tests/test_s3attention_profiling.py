"""`forecaster bench scaling`: the memory probe against known allocations, memory growth, the CLI table."""

from __future__ import annotations

import torch

from forecaster.bench.scaling import ScalingSettings, run_scaling
from forecaster.bench.timing import estimate_peak_bytes, peak_memory_bytes
from forecaster.cli import main

CPU = torch.device("cpu")
MIB = 2**20


def test_peak_memory_is_the_running_maximum_of_allocations() -> None:
    def one_tensor() -> torch.Tensor:
        return torch.ones(1024, 1024)  # 4 MiB, freed when the step's result is dropped

    def sequential() -> None:
        first = torch.ones(1024, 1024)
        del first
        second = torch.ones(512, 1024)
        del second

    def overlapping() -> None:
        first = torch.ones(1024, 1024)
        second = torch.ones(512, 1024)
        del first, second

    assert 4 * MIB <= peak_memory_bytes(one_tensor, CPU) < 4 * MIB + 64 * 1024
    assert 4 * MIB <= peak_memory_bytes(sequential, CPU) < 4 * MIB + 64 * 1024
    assert 6 * MIB <= peak_memory_bytes(overlapping, CPU) < 6 * MIB + 64 * 1024


def test_math_softmax_memory_is_quadratic_and_s3attention_linear() -> None:
    results = run_scaling(ScalingSettings(lengths=[256, 512], d_model=16, batch=2, heads=2, repeats=1,
                                          softmax_kernels=["math"], device="cpu"))
    peaks = {(r.layer, r.length): r.peak_bytes for r in results}
    s3_growth = peaks["s3attention", 512] / peaks["s3attention", 256]
    math_growth = peaks["softmax (math)", 512] / peaks["softmax (math)", 256]
    assert 1.7 < s3_growth < 2.3, s3_growth
    assert 3.5 < math_growth < 4.3, math_growth
    # the stored attention weights (batch x heads x L x L floats) are part of the math kernel's peak
    assert peaks["softmax (math)", 512] > 2 * 2 * 512 * 512 * 4
    assert all(r.seconds is not None and r.seconds > 0 for r in results)


def test_estimates_skip_only_what_would_not_fit() -> None:
    linear = estimate_peak_bytes(2, 512, 16, 2, 4, quadratic=False)
    quadratic = estimate_peak_bytes(2, 512, 16, 2, 4, quadratic=True)
    assert quadratic - linear == 3 * 2 * 2 * 512 * 512 * 4
    budget_gib = (linear + quadratic) / 2 / 2**30
    settings = ScalingSettings(lengths=[512], d_model=16, batch=2, heads=2, repeats=1, device="cpu",
                               max_memory_gb=budget_gib)
    results = run_scaling(settings)
    notes = {r.layer: r.note for r in results}
    assert notes["s3attention"] == "" and notes["softmax (sdpa)"] == ""
    assert notes["softmax (math)"].startswith("OOM-skip: estimated")


def test_cli_prints_the_table(capsys) -> None:
    code = main(["bench", "scaling", "--lengths", "64,128", "--d-model", "16", "--batch", "2", "--heads", "2",
                 "--repeats", "1", "--warmup", "0", "--softmax-kernels", "sdpa"])
    out = capsys.readouterr().out
    assert code == 0
    assert "S3Attention layer vs softmax" in out and "peak MiB" in out and "time ÷ S3" in out
    rows = [line for line in out.splitlines() if "s3attention" in line or "softmax (sdpa)" in line]
    assert len(rows) == 4


def test_cli_rejects_unknown_kernel(capsys) -> None:
    code = main(["bench", "scaling", "--lengths", "64", "--softmax-kernels", "flash"])
    assert code == 2
    assert "softmax kernel must be one of sdpa, math, got 'flash'" in capsys.readouterr().err

"""The kernels package without a GPU: sources compile to PTX, dispatch falls back to PyTorch, bench runs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import types

import numpy as np
import pytest
import torch

import kernels
from forecaster.bench import smoother as smoother_bench
from forecaster.cli import main
from forecaster.errors import ForecasterError
from forecaster.nn import smoother
from kernels import runtime

ARCHITECTURES = ("sm_80", "sm_90")
PTX_ENTRY = re.compile(r"\.entry\s+(\w+)\(([^)]*)\)")


def test_every_cu_source_is_registered():
    on_disk = sorted(path.name for path in runtime.SOURCE_DIR.glob("*.cu"))
    assert on_disk == sorted(runtime.KERNELS)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("source", sorted(runtime.KERNELS))
def test_sources_compile_to_ptx_with_every_entry_point(source, architecture, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found")
    ptx = tmp_path / f"{source}.{architecture}.ptx"
    command = [nvcc, "-ptx", f"-arch={architecture}", *runtime.COMPILE_OPTIONS, "-Werror", "all-warnings"]
    completed = subprocess.run(
        [*command, str(runtime.source_path(source)), "-o", str(ptx)], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
    # Each entry's parameter widths must be those of the signature the Python side launches it with.
    entries = {
        name: re.findall(r"\.param\s+\.(\w+)", params) for name, params in PTX_ENTRY.findall(ptx.read_text())
    }
    width = {"in": "u64", "out": "u64", "i64": "u64", "i32": "u32"}
    expected = {
        f"{kernel}_{suffix}": [width[kind] for kind in parameters]
        for kernel, parameters in runtime.KERNELS[source].items()
        for suffix in ("f32", "f64")
    }
    assert entries == expected


def _fake_cupy(monkeypatch, available: bool) -> None:
    """Make `kernels.cupy_available()` (what the Smoother asks) answer `available` without CuPy or a GPU."""
    monkeypatch.setattr(kernels, "cupy_available", lambda: available)


LARGE = smoother.KERNELS_MIN_ELEMENTS


def test_backend_is_torch_on_cpu_and_for_half_precision(monkeypatch):
    _fake_cupy(monkeypatch, True)
    monkeypatch.delenv("FORECASTER_KERNELS", raising=False)
    assert smoother.smoother_backend(torch.device("cpu"), torch.float32, LARGE) == "torch"
    assert smoother.smoother_backend(torch.device("cuda"), torch.float16, LARGE) == "torch"
    assert smoother.smoother_backend(torch.device("cuda"), torch.float32, LARGE) == "kernels"
    assert smoother.smoother_backend(torch.device("cuda", 1), torch.float64, LARGE) == "kernels"


def test_backend_is_torch_below_the_size_where_kernels_pay_unless_forced_on(monkeypatch):
    _fake_cupy(monkeypatch, True)
    monkeypatch.delenv("FORECASTER_KERNELS", raising=False)
    assert smoother.smoother_backend(torch.device("cuda"), torch.float32, LARGE - 1) == "torch"
    monkeypatch.setenv("FORECASTER_KERNELS", " ON ")
    assert smoother.smoother_backend(torch.device("cuda"), torch.float32, 1) == "kernels"
    assert smoother.smoother_backend(torch.device("cpu"), torch.float32, LARGE) == "torch"


@pytest.mark.parametrize("value", ["off", "OFF", " off "])
def test_forecaster_kernels_off_forces_torch(monkeypatch, value):
    _fake_cupy(monkeypatch, True)
    monkeypatch.setenv("FORECASTER_KERNELS", value)
    assert smoother.smoother_backend(torch.device("cuda"), torch.float32, LARGE) == "torch"


def test_backend_is_torch_without_cupy(monkeypatch):
    _fake_cupy(monkeypatch, False)
    monkeypatch.setenv("FORECASTER_KERNELS", "on")
    assert smoother.smoother_backend(torch.device("cuda"), torch.float32, LARGE) == "torch"


def test_cupy_available_is_false_when_cupy_cannot_be_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    runtime.cupy_available.cache_clear()
    try:
        assert runtime.cupy_available() is False
    finally:
        runtime.cupy_available.cache_clear()


def test_cupy_available_asks_cupy_for_a_device(monkeypatch):
    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    runtime.cupy_available.cache_clear()
    try:
        assert runtime.cupy_available() is False
    finally:
        runtime.cupy_available.cache_clear()


def test_smoother_on_cpu_never_imports_kernels_or_cupy():
    code = (
        "import sys, torch\n"
        "from forecaster.nn import Smoother\n"
        "from forecaster.nn.smoother import smoother_backend\n"
        "torch.manual_seed(0)\n"
        "x = torch.randn(2, 12, 16, requires_grad=True)\n"
        "Smoother(16, 12, fold=4)(x).sum().backward()\n"
        "backend = smoother_backend(x.device, x.dtype, x.numel())\n"
        "print(backend, 'kernels' in sys.modules, 'cupy' in sys.modules)\n"
        "import kernels\n"
        "print('cupy' in sys.modules)\n"
    )
    environment = {**os.environ, "FORECASTER_KERNELS": "on"}
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["torch", "False", "False", "False"]


def test_kernel_functions_refuse_cpu_tensors_with_a_clear_error():
    x = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        kernels.segment_average(x, 4)
    spectrum = torch.randn(2, 3, 4, dtype=torch.complex64)
    with pytest.raises(ValueError, match="runs on CUDA tensors"):
        kernels.filter_groups(spectrum, torch.randn(3, 8, dtype=torch.complex64), 4)


def test_kernel_functions_validate_shapes_and_dtypes():
    with pytest.raises(ValueError, match="not divisible by fold 3"):
        kernels.segment_average(torch.randn(2, 5, 8), 3)
    with pytest.raises(ValueError, match="float32 or float64"):
        kernels.segment_average(torch.randn(2, 5, 8, dtype=torch.float16), 4)
    weight = torch.randn(3, 8, dtype=torch.complex64)
    with pytest.raises(ValueError, match=r"does not match \(\.\.\., 3, 4\)"):
        kernels.filter_groups(torch.randn(2, 4, 4, dtype=torch.complex64), weight, 4)
    with pytest.raises(ValueError, match="complex64 or complex128"):
        kernels.filter_groups(torch.randn(2, 3, 4, dtype=torch.complex128), weight, 4)
    x = torch.randn(2, 6, 8)
    with pytest.raises(ValueError, match="filter of its complex dtype"):
        kernels.fourier_smooth(x, torch.randn(4, 8, dtype=torch.complex128), 4)
    with pytest.raises(ValueError, match=r"does not match \(4, 8\)"):
        kernels.fourier_smooth(x, torch.randn(3, 8, dtype=torch.complex64), 4)
    with pytest.raises(ValueError, match="not divisible by fold 3"):
        kernels.fourier_smooth(x, torch.randn(4, 8, dtype=torch.complex64), 3)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((torch.zeros(4, 6), torch.zeros(4), np.int64(4), np.int32(6)), "runs on CUDA tensors"),
        ((torch.zeros(6, 4).t(), torch.zeros(4), np.int64(4), np.int32(6)), "must be a contiguous"),
        ((torch.zeros(4, 6), torch.zeros(4, dtype=torch.float64), np.int64(4), np.int32(6)), "torch.float32"),
        ((torch.zeros(4, 6), torch.zeros(4), np.int64(4), 6), "argument 3 of segment_mean_f32 must be i32"),
        ((torch.zeros(4, 6), torch.zeros(4), np.int64(4)), "takes 4 arguments, got 3"),
    ],
)
def test_launch_checks_arguments_before_touching_cupy(arguments, message):
    call = runtime.Launch("segment_average.cu", "segment_mean", torch.float32, 4, arguments)
    with pytest.raises(ValueError, match=message):
        runtime.launch(call)


def test_unknown_source_is_named():
    with pytest.raises(KeyError, match="unknown kernel source"):
        runtime.source_path("missing.cu")


@pytest.mark.parametrize(
    ("work", "slices", "multiprocessors"), [(1, 1, 132), (10**6, 32, 132), (10**9, 1, 108), (300, 10**6, 1)]
)
def test_grid_shape_covers_the_work_within_hardware_limits(work, slices, multiprocessors):
    grid_x, grid_y = runtime.grid_shape(work, slices, multiprocessors)
    cap = multiprocessors * runtime.BLOCKS_PER_MULTIPROCESSOR
    assert 1 <= grid_x <= cap
    assert grid_x * runtime.BLOCK_THREADS >= min(work, cap * runtime.BLOCK_THREADS)
    assert 1 <= grid_y <= min(slices, runtime.MAX_GRID_Y)


def test_fourier_traffic_bytes_by_hand():
    # B=1, L=4 (F=3), D=2, r=1, 4-byte floats: signal 32, averages 16, spectrum 24, weight 48, filtered 48.
    forward, total = smoother_bench.fourier_traffic_bytes(1, 4, 2, 1, 4)
    assert forward == (32 + 16) + (16 + 24) + (24 + 48 + 48) + (48 + 32)
    assert total - forward == (32 + 48) + (48 + 48 + 24) + (48 + 24 + 48) + (24 + 16) + (16 + 32)


def test_datasheet_bandwidth_matches_the_most_specific_name():
    assert smoother_bench.datasheet_bandwidth_gbs("NVIDIA H100 80GB HBM3") == 3350.0
    assert smoother_bench.datasheet_bandwidth_gbs("NVIDIA H100 PCIe") == 2000.0
    assert smoother_bench.datasheet_bandwidth_gbs("NVIDIA A100-SXM4-40GB") == 1555.0
    assert smoother_bench.datasheet_bandwidth_gbs("Some Future GPU") is None
    assert smoother_bench.peak_bandwidth_gbs(torch.device("cpu")) == (None, "no GPU")


def test_bench_smoother_on_cpu_prints_the_pytorch_path_only(capsys):
    argv = ["bench", "smoother", "--batch", "2", "--lengths", "15,16", "--d-model", "8", "--fold", "4"]
    assert main([*argv, "--repeats", "1", "--warmup", "0", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "kernel path: not run: the kernel path needs CUDA and CuPy (running on cpu)" in out
    rows = [line for line in out.splitlines() if re.match(r"^\W*8\W+1[56]\W", line)]
    assert len(rows) == 4  # two lengths x two scopes
    assert all(" torch " in row and " kernels " not in row for row in rows)


def test_bench_smoother_compiled_mode_times_the_whole_module_under_torch_compile(capsys):
    argv = ["bench", "smoother", "--batch", "2", "--lengths", "16", "--d-model", "8", "--fold", "4",
            "--device", "cpu", "--repeats", "1", "--warmup", "1", "--modes", "eager,compiled"]  # fmt: skip
    assert main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if re.match(r"^\W*8\W+16\W", line)]
    assert [re.findall(r"\b(fourier|smoother)\b.*\b(eager|compiled)\b", row)[0] for row in rows] == [
        ("fourier", "eager"), ("smoother", "eager"), ("smoother", "compiled")]
    assert re.search(r"\d+\.\d\dx", rows[2]) and not re.search(r"\d+\.\d\dx", rows[1])  # against eager
    assert main([*argv[:-4], "--warmup", "0", "--modes", "compiled"]) == 2
    assert "--modes compiled needs --warmup of at least 1" in capsys.readouterr().err


def test_bench_smoother_rejects_bad_settings(capsys):
    assert main(["bench", "smoother", "--d-model", "12", "--fold", "8", "--device", "cpu"]) == 2
    assert "multiple of fold 8" in capsys.readouterr().err
    assert main(["bench", "smoother", "--device", "tpu"]) == 2
    with pytest.raises(SystemExit):
        main(["bench", "smoother", "--lengths", "1024,x"])
    with pytest.raises(ForecasterError, match="lengths must be >= 2"):
        smoother_bench.SmootherBenchSettings(batch=2, lengths=[1], d_model=[8], device="cpu")

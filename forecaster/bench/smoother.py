"""`forecaster bench smoother`: the Smoother's kernel path (package `kernels`, CuPy) against its PyTorch path.

Two scopes are timed per (d_model, length), forward (under no_grad) and forward+backward (gradients for the
input and every parameter), as the median of `repeats` calls after `warmup` calls:
- "fourier": the stages the kernels replace with the FFTs between them (segment average, rFFT, group filter,
  irFFT; paper 001 eq. 3), i.e. `kernels.fourier_smooth` vs `forecaster.nn.smoother.fourier_smooth`;
- "smoother": the whole module in training mode (Fourier part, convolution stem, BatchNorm, ELU, dropout),
  switched between paths with FORECASTER_KERNELS (=off, =on), as a user would; with `--modes eager,compiled`
  also under torch.compile, whose generated kernels may fuse the elementwise work around the convolution and
  the FFTs (the kernel path's Fourier part is a custom operator it calls); whether that pays is what it shows.

Bandwidth is the Fourier part's fewest bytes (`fourier_traffic_bytes`: every stage reads its inputs once and
writes its outputs once) over its time, against the GPU's peak: 2 (DDR) x memory clock x bus width, read
through CuPy from cudaDevAttrMemoryClockRate and cudaDevAttrGlobalMemoryBusWidth; without CuPy, the datasheet
figure for the device name in PEAK_BANDWIDTH_GBS. On CPU, or without CuPy, only the PyTorch path runs and the
table says why the kernel path did not.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from rich.table import Table

from forecaster.bench.timing import compiled_if_asked, median_seconds
from forecaster.checks import check_choice, check_fields, parse_ints, parse_names, setting
from forecaster.devices import default_device, machine_name
from forecaster.errors import ConfigError
from forecaster.nn import smoother as torch_smoother

SCOPES = ("fourier", "smoother")
MODES = ("eager", "compiled")  # how the whole module runs: as Python calls it, or under torch.compile
# Datasheet peak memory bandwidth (GB/s) by device-name fragment, most specific first; used without CuPy.
PEAK_BANDWIDTH_GBS: dict[str, float] = {
    "H200": 4800.0,
    "H100 PCIe": 2000.0,
    "H100 NVL": 3900.0,
    "H100": 3350.0,
    "A100-SXM4-80GB": 2039.0,
    "A100 80GB PCIe": 1935.0,
    "A100": 1555.0,
    "L40S": 864.0,
    "A10": 600.0,
    "L4": 300.0,
    "T4": 320.0,
    "V100": 900.0,
}
_MEMORY_CLOCK_KHZ = 36  # cudaDevAttrMemoryClockRate
_BUS_WIDTH_BITS = 37  # cudaDevAttrGlobalMemoryBusWidth


@dataclass(frozen=True)
class SmootherBenchRow:
    """One (d_model, length, scope, path, mode) measurement; times are None when the run ran out of memory."""

    d_model: int
    length: int
    scope: str
    path: str
    mode: str
    forward_ms: float | None
    forward_backward_ms: float | None
    traffic_bytes: tuple[int, int] | None = None
    note: str = ""


@dataclass(frozen=True)
class SmootherBench:
    """The rows plus what the table header needs: setup, peak bandwidth and the kernel path's status."""

    rows: list[SmootherBenchRow]
    batch: int
    fold: int
    dtype: torch.dtype
    device_name: str
    peak_gbs: float | None
    peak_source: str
    kernel_status: str


def fourier_traffic_bytes(batch: int, length: int, d_model: int, fold: int, itemsize: int) -> tuple[int, int]:
    """Fewest bytes the Fourier part moves, (forward, forward+backward), when each stage touches memory once.

    Forward: segment average (B,L,D)->(B,L,r); rFFT ->(B,F,r) complex; filter with W (F,D) ->(B,F,D) complex;
    irFFT ->(B,L,D). Backward: rFFT of the gradient, the filter's two gradients (spectrum and W), irFFT of
    the spectrum gradient, the segment average's broadcast.
    """
    n_freq = length // 2 + 1
    signal = batch * length * d_model * itemsize
    averages = batch * length * fold * itemsize
    spectrum = batch * n_freq * fold * 2 * itemsize
    weight = n_freq * d_model * 2 * itemsize
    filtered = batch * n_freq * d_model * 2 * itemsize
    forward = (
        (signal + averages) + (averages + spectrum) + (spectrum + weight + filtered) + (filtered + signal)
    )
    backward = (
        (signal + filtered)
        + (filtered + weight + spectrum)
        + (filtered + spectrum + weight)
        + (spectrum + averages)
        + (averages + signal)
    )
    return forward, forward + backward


def peak_bandwidth_gbs(device: torch.device) -> tuple[float | None, str]:
    """The device's theoretical memory bandwidth in GB/s (None if unknown) and where the figure comes from."""
    if device.type != "cuda":
        return None, "no GPU"
    from kernels import cupy_available

    if cupy_available():
        import cupy

        clock_khz = cupy.cuda.runtime.deviceGetAttribute(_MEMORY_CLOCK_KHZ, device.index)
        bus_bits = cupy.cuda.runtime.deviceGetAttribute(_BUS_WIDTH_BITS, device.index)
        if clock_khz > 0 and bus_bits > 0:
            return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9, "2 x memory clock x bus width of the device"
    name = machine_name(device)
    gbs = datasheet_bandwidth_gbs(name)
    return gbs, f"datasheet figure for {name}" if gbs else f"unknown for {name}"


def datasheet_bandwidth_gbs(device_name: str) -> float | None:
    """The datasheet peak bandwidth of the first PEAK_BANDWIDTH_GBS fragment found in `device_name`."""
    return next((gbs for fragment, gbs in PEAK_BANDWIDTH_GBS.items() if fragment in device_name), None)


def kernel_path_status(device: torch.device, dtype: torch.dtype) -> str:
    """"available", or why the kernel path cannot run here (it needs a CUDA device and CuPy)."""
    if device.type != "cuda":
        return f"not run: the kernel path needs CUDA and CuPy (running on {device.type})"
    if dtype not in torch_smoother.KERNEL_DTYPES:
        return f"not run: the kernels take float32 or float64, not {dtype}"
    from kernels import cupy_available

    if not cupy_available():
        return "not run: CuPy is not importable (pip install 'forecaster[gpu]', CUDA 13 torch: [gpu-cuda13])"
    return "available"


@contextmanager
def _kernels_switch(path: str) -> Iterator[None]:
    """FORECASTER_KERNELS=off for the torch path, =on for the kernel path (any size); restored afterwards."""
    saved = os.environ.pop("FORECASTER_KERNELS", None)
    os.environ["FORECASTER_KERNELS"] = "off" if path == "torch" else "on"
    try:
        yield
    finally:
        os.environ.pop("FORECASTER_KERNELS", None)
        if saved is not None:
            os.environ["FORECASTER_KERNELS"] = saved


def _timed(step: Callable[[], object], device: torch.device, warmup: int, repeats: int) -> float:
    for _ in range(warmup):
        step()
    return median_seconds(step, device, repeats) * 1e3


def _measure(
    scope: str, path: str, mode: str, shape: tuple[int, int, int], fold: int, dtype: torch.dtype,
    device: torch.device, warmup: int, repeats: int,
) -> SmootherBenchRow:
    batch, length, d_model = shape
    generator = torch.Generator(device=device).manual_seed(0)
    options = {"device": device, "dtype": dtype, "generator": generator}
    x = torch.randn(shape, **options).requires_grad_()
    upstream = torch.randn(shape, **options)
    traffic = None
    if scope == "fourier":
        spectral_weight = torch.randn(length // 2 + 1, d_model, 2, **options).requires_grad_()
        if path == "kernels":
            import kernels

            smooth = kernels.fourier_smooth
        else:
            smooth = torch_smoother.fourier_smooth

        def run() -> torch.Tensor:
            return smooth(x, torch.view_as_complex(spectral_weight), fold)

        inputs = (x, spectral_weight)
        traffic = fourier_traffic_bytes(batch, length, d_model, fold, x.element_size())
    else:
        module = torch_smoother.Smoother(d_model, length, fold=fold).to(device=device, dtype=dtype).train()
        chosen = torch_smoother.smoother_backend(device, dtype, x.numel())
        if chosen != path:
            raise RuntimeError(f"the Smoother chose the {chosen} path where the bench asked for {path}")

        call = compiled_if_asked(module, mode)  # compiled during the warm-up calls (forward, then backward)

        def run() -> torch.Tensor:
            return call(x)

        inputs = (x, *module.parameters())

    def forward() -> None:
        with torch.no_grad():
            run()

    def forward_backward() -> None:
        torch.autograd.grad(run(), inputs, upstream)

    try:
        forward_ms = _timed(forward, device, warmup, repeats)
        forward_backward_ms = _timed(forward_backward, device, warmup, repeats)
    except torch.OutOfMemoryError:
        return SmootherBenchRow(d_model, length, scope, path, mode, None, None, traffic, "OOM")
    return SmootherBenchRow(d_model, length, scope, path, mode, forward_ms, forward_backward_ms, traffic)


@dataclass
class SmootherBenchSettings:
    """One `forecaster bench smoother` table."""

    batch: int = setting(32, "batch size", minimum=1)
    lengths: Sequence[int] = setting([1024, 4096, 16384], "e.g. 1024,4096", parse=parse_ints)
    d_model: Sequence[int] = setting([64, 256], "widths, e.g. 64,256", parse=parse_ints)
    fold: int = setting(8, "channel groups (segment average)", minimum=1)
    dtype: str = setting("float32", "precision", choices=("float32", "float64"))
    device: str | None = setting(None, "cuda, cuda:1 or cpu (default: cuda when available)")
    warmup: int = setting(3, "untimed calls before timing", minimum=0)
    repeats: int = setting(10, "timed calls (median shown)", minimum=1)
    modes: Sequence[str] = setting(["eager"], "eager, compiled (the whole module under torch.compile; "
                                   "at least one warm-up call compiles it)", parse=parse_names)

    def __post_init__(self) -> None:
        check_fields(self, "bench smoother setting")
        for mode in self.modes:
            check_choice("mode", mode, MODES)
        if "compiled" in self.modes and self.warmup < 1:
            raise ConfigError("--modes compiled needs --warmup of at least 1 (the call that compiles)")
        if min(self.lengths) < 2:
            raise ConfigError(f"lengths must be >= 2, got {list(self.lengths)}")
        if any(d % self.fold for d in self.d_model):
            raise ConfigError(
                f"each d_model must be a multiple of fold {self.fold}, got {list(self.d_model)}"
            )


def run_smoother_bench(
    settings: SmootherBenchSettings, progress: Callable[[str], None] | None = None
) -> SmootherBench:
    """Time both scopes on the PyTorch path, and on the kernel path where it can run, for every size."""
    device = default_device(settings.device)
    if device.type not in ("cpu", "cuda"):
        raise ConfigError(f"device {settings.device!r}: the smoother bench runs on cpu or cuda")
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    dtype, fold, batch = getattr(torch, settings.dtype), settings.fold, settings.batch
    status = kernel_path_status(device, dtype)
    paths = ("torch", "kernels") if status == "available" else ("torch",)
    rows = []
    for d_model in settings.d_model:
        for length in settings.lengths:
            # the Fourier part eagerly; the whole module in every asked mode
            runs = [("fourier", "eager"), *(("smoother", mode) for mode in settings.modes)]
            for (scope, mode), path in itertools.product(runs, paths):
                if progress is not None:
                    progress(f"d_model {d_model}, length {length}: {scope} on the {path} path, {mode}")
                with _kernels_switch(path):
                    rows.append(_measure(scope, path, mode, (batch, length, d_model), fold, dtype, device,
                                         settings.warmup, settings.repeats))  # fmt: skip
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    peak, source = peak_bandwidth_gbs(device)
    return SmootherBench(rows, batch, fold, dtype, machine_name(device), peak, source, status)


def _gbs(traffic: int | None, milliseconds: float | None) -> float | None:
    if traffic is None or not milliseconds:
        return None
    return traffic / (milliseconds * 1e-3) / 1e9


def smoother_bench_table(bench: SmootherBench) -> Table:
    """One row per measurement; all but the eager PyTorch rows carry their fwd+bwd speedup over that row."""
    peak = "unknown" if bench.peak_gbs is None else f"{bench.peak_gbs:.0f} GB/s"
    table = Table(
        title=f"Smoother, batch {bench.batch}, fold {bench.fold}, {str(bench.dtype).removeprefix('torch.')}, "
        f"{bench.device_name}; peak bandwidth {peak} ({bench.peak_source})",
        caption=f"kernel path: {bench.kernel_status}. GB/s: fewest bytes of the Fourier part / time.",
    )
    headers = ("d_model", "length", "scope", "path", "mode", "fwd ms", "fwd+bwd ms", "speedup", "fwd GB/s",
               "fwd+bwd GB/s", "% of peak", "note")
    for header in headers:
        table.add_column(header, justify="left" if header in ("scope", "path", "mode", "note") else "right")
    torch_times = {
        (row.d_model, row.length, row.scope): row.forward_backward_ms
        for row in bench.rows
        if row.path == "torch" and row.mode == "eager"
    }

    def number(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    for row in bench.rows:
        speedup = None
        baseline = torch_times.get((row.d_model, row.length, row.scope))
        if (row.path, row.mode) != ("torch", "eager") and baseline and row.forward_backward_ms:
            speedup = baseline / row.forward_backward_ms
        forward_gbs = _gbs(row.traffic_bytes and row.traffic_bytes[0], row.forward_ms)
        total_gbs = _gbs(row.traffic_bytes and row.traffic_bytes[1], row.forward_backward_ms)
        share = None if total_gbs is None or bench.peak_gbs is None else 100 * total_gbs / bench.peak_gbs
        table.add_row(
            str(row.d_model), str(row.length), row.scope, row.path, row.mode, number(row.forward_ms, 3),
            number(row.forward_backward_ms, 3), "-" if speedup is None else f"{speedup:.2f}x",
            number(forward_gbs, 1), number(total_gbs, 1), number(share, 1), row.note,
        )
    return table

"""Time and peak memory of a training step, S3Attention layer vs softmax (`forecaster bench scaling`).

Peak memory is the most memory held at any moment of one forward+backward step above what was held before
it (activations, temporaries, gradients). On CUDA it comes from torch.cuda.max_memory_allocated. On CPU it
comes from torch.profiler with profile_memory=True: every allocation and free of torch's CPU allocator is
recorded in order and the running total's maximum is taken (tracemalloc cannot see torch's allocator, and
the process RSS high-water mark cannot be reset between runs).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from rich.table import Table
from torch import nn

SOFTMAX_KERNELS = ("sdpa", "math")
S3_LAYER = "s3attention"
# Rough activation footprint of one forward+backward step, in units of batch * length * d_model elements.
# Used only to skip runs that would exhaust memory; measured peaks are what the table reports.
_LINEAR_FOOTPRINT = 40
# The math softmax kernel holds about three (batch, heads, length, length) matrices at its peak.
_QUADRATIC_FOOTPRINT = 3


@dataclass(frozen=True)
class ScalingResult:
    """One table cell group: a layer at a sequence length (seconds/peak_bytes are None when skipped)."""

    length: int
    layer: str
    seconds: float | None
    peak_bytes: int | None
    note: str = ""


def peak_memory_bytes(step: Callable[[], object], device: torch.device) -> int:
    """Peak bytes allocated by torch during `step()` above the amount allocated when it starts."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        start = torch.cuda.memory_allocated(device)
        step()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - start
    if device.type != "cpu":
        raise ValueError(f"peak memory is measured on cpu or cuda, not {device.type}")
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as prof:
        step()
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    allocations = sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: e["ts"])
    running = peak = 0
    for event in allocations:
        running += int(event["args"]["Bytes"])
        peak = max(peak, running)
    return peak


def median_seconds(step: Callable[[], object], device: torch.device, repeats: int) -> float:
    """Median wall time of `repeats` calls of `step()` (CUDA work is synchronized before the clock stops)."""
    timings = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        step()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def estimate_peak_bytes(
    batch: int, length: int, d_model: int, n_heads: int, itemsize: int, *, quadratic: bool
) -> int:
    """A generous peak-memory estimate used to skip runs; `quadratic` when the attention matrix is stored."""
    linear = _LINEAR_FOOTPRINT * batch * length * d_model * itemsize
    if quadratic:
        return linear + _QUADRATIC_FOOTPRINT * batch * n_heads * length * length * itemsize
    return linear


def default_memory_budget(device: torch.device) -> int:
    """Half the memory free right now (host RAM on CPU, device memory on CUDA): other work keeps running."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0] // 2
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.1f} MiB"


def machine_name(device: torch.device) -> str:
    """The GPU's name, or the CPU model (from /proc/cpuinfo where it exists) and torch's thread count."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    cpuinfo = Path("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
              if line.startswith("model name")] if cpuinfo.exists() else []
    return f"CPU {models[0] if models else platform.machine()}, {torch.get_num_threads()} threads"


def _build_layer(
    kernel: str | None, d_model: int, n_heads: int, length: int, rank: int, fold: int
) -> nn.Module:
    """The S3Attention mixer when `kernel` is None, else the registered softmax mixer on that SDPA kernel."""
    if kernel is None:
        from forecaster.nn import S3AttentionMixer

        return S3AttentionMixer(d_model, n_heads, length, left_rank=rank, right_rank=rank, fold=fold)
    from forecaster.nn import attention

    return attention.get("softmax", d_model=d_model, n_heads=n_heads, seq_len=length, kernel=kernel)


def run_scaling(
    lengths: Sequence[int],
    *,
    d_model: int = 64,
    batch: int = 8,
    n_heads: int = 8,
    rank: int = 8,
    fold: int = 8,
    repeats: int = 3,
    warmup: int = 1,
    softmax_kernels: Sequence[str] = SOFTMAX_KERNELS,
    device: str | torch.device | None = None,
    memory_budget: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[ScalingResult]:
    """Time and peak memory of one training step (forward + backward) per layer and sequence length.

    Layers: the S3Attention mixer (Smoother + SkeletonAttention, `rank` sampled tokens and head dims) and
    the softmax mixer on torch's scaled_dot_product_attention, per kernel in `softmax_kernels` ("sdpa": the
    backend torch picks, "math": the textbook kernel that stores the length x length matrix). After
    `warmup` untimed steps, one step is profiled for memory and `repeats` more are timed. Runs whose
    estimated peak exceeds `memory_budget` (default: half the free memory) are reported as OOM-skip.
    """
    unknown = sorted(set(softmax_kernels) - set(SOFTMAX_KERNELS))
    if unknown:
        raise ValueError(f"unknown softmax kernel(s) {unknown}; expected some of {SOFTMAX_KERNELS}")
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got repeats={repeats}, warmup={warmup}")
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    budget = default_memory_budget(device) if memory_budget is None else memory_budget
    layers = [(S3_LAYER, None), *((f"softmax ({kernel})", kernel) for kernel in softmax_kernels)]
    results = []
    for length in lengths:
        for name, kernel in layers:
            if progress is not None:
                progress(f"length {length}: {name}")
            estimate = estimate_peak_bytes(batch, length, d_model, n_heads, 4, quadratic=kernel == "math")
            if estimate > budget:
                note = f"OOM-skip: estimated {_size(estimate)} > budget {_size(budget)}"
                results.append(ScalingResult(length, name, None, None, note))
                continue
            torch.manual_seed(0)
            module = _build_layer(kernel, d_model, n_heads, length, rank, fold).to(device).train()
            results.append(_measure(name, module, batch, length, d_model, repeats, warmup, device))
    return results


def _measure(
    name: str, module: nn.Module, batch: int, length: int, d_model: int, repeats: int, warmup: int,
    device: torch.device,
) -> ScalingResult:
    x = torch.randn(batch, length, d_model, device=device, requires_grad=True)

    def release_gradients() -> None:
        module.zero_grad(set_to_none=True)
        x.grad = None

    def step() -> None:
        release_gradients()
        module(x).sum().backward()

    try:
        for _ in range(warmup):  # one-time allocations and kernel selection stay out of the measurements
            step()
        release_gradients()  # so the profiled step starts from parameters, input and nothing else
        peak = peak_memory_bytes(step, device)
        seconds = median_seconds(step, device, repeats)
    except torch.OutOfMemoryError:
        return ScalingResult(length, name, None, None, "OOM")
    finally:
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return ScalingResult(length, name, seconds, peak)


def scaling_table(results: Sequence[ScalingResult], title: str, caption: str | None = None) -> Table:
    """Time and peak memory per length and layer, and each softmax kernel's ratio to the S3Attention layer."""
    table = Table(title=title, caption=caption)
    for header in ("length", "layer", "fwd+bwd ms", "peak MiB", "time ÷ S3", "memory ÷ S3", "note"):
        table.add_column(header, justify="left" if header in ("layer", "note") else "right")
    reference = {r.length: r for r in results if r.layer == S3_LAYER}
    for result in results:
        base = reference.get(result.length)
        time_ratio = memory_ratio = "-"
        if result.layer != S3_LAYER and base is not None and result.seconds is not None and base.seconds:
            time_ratio = f"{result.seconds / base.seconds:.1f}x"
            if result.peak_bytes is not None and base.peak_bytes:
                memory_ratio = f"{result.peak_bytes / base.peak_bytes:.1f}x"
        table.add_row(
            str(result.length),
            result.layer,
            "-" if result.seconds is None else f"{result.seconds * 1e3:.1f}",
            "-" if result.peak_bytes is None else f"{result.peak_bytes / 2**20:.1f}",
            time_ratio,
            memory_ratio,
            result.note,
        )
    return table

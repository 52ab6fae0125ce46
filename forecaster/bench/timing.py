"""Time and peak memory of one step, the way every speed table measures them.

Peak memory is the most memory held at any moment of a step above what was held before it (activations,
temporaries, gradients). On CUDA it comes from torch.cuda.max_memory_allocated. On CPU it comes from
torch.profiler with profile_memory=True: every allocation and free of torch's CPU allocator is recorded in
order and the running total's maximum is taken (tracemalloc cannot see torch's allocator, and the process
RSS high-water mark cannot be reset between runs).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from forecaster.checks import check_choice
from forecaster.errors import ConfigError
from forecaster.training.graphs import WARMUP_STEPS

# How a speed table runs a step: from Python, replayed from a CUDA graph, and either with the model under
# torch.compile (its generated kernels may fuse elementwise work; compiled during the warm-up steps).
MODES = ("eager", "graphed", "compiled", "compiled-graphed")
DEFAULT_MODES = ("eager", "graphed")  # on CUDA; CPU: eager. Compiling is asked for: it takes minutes.
MODES_HELP = ("eager, graphed (replayed from a CUDA graph), compiled, compiled-graphed (under "
              "torch.compile); default: eager and graphed on CUDA, eager on CPU")

_LAUNCH_CALLS = ("LaunchKernel", "GraphLaunch")  # host API calls that put work on the GPU
# Rough activation footprint of one forward+backward step, in units of batch * length * d_model elements.
# Used only to skip runs that would exhaust memory; measured peaks are what the tables report.
_LINEAR_FOOTPRINT = 40
# The math softmax kernel holds about three (batch, heads, length, length) matrices at its peak.
_QUADRATIC_FOOTPRINT = 3


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


@dataclass(frozen=True)
class StepTiming:
    """A step's median wall time, its peak memory (None where not probed) and, on CUDA, the share of the
    wall time the GPU is busy."""

    seconds: float
    peak_bytes: int | None
    gpu_busy: float | None


def time_step(
    step: Callable[[], object], device: torch.device, repeats: int, *, warmup: int, graphed: bool,
    before_peak: Callable[[], None] = lambda: None,
) -> StepTiming:
    """`warmup` untimed calls (allocations, kernel choice; a graphed step's warm-up and capture too), one
    under the memory probe after `before_peak` (eager steps: a graph's memory is held between replays, so a
    replay's peak says nothing), the median of `repeats` timed calls, and on CUDA the GPU's busy share over
    as many more (torch.profiler)."""
    for _ in range(max(warmup, WARMUP_STEPS + 1) if graphed else warmup):
        step()
    peak = None
    if not graphed:
        before_peak()
        peak = peak_memory_bytes(step, device)
    seconds = median_seconds(step, device, repeats)
    busy = min(1.0, gpu_profile(step, repeats)[0] / 1000 / seconds) if device.type == "cuda" else None
    return StepTiming(seconds, peak, busy)


def gpu_profile(step: Callable[[], object], count: int) -> tuple[float, float, float]:
    """GPU milliseconds, kernels and host launch calls per `step()`, from torch.profiler over `count` calls
    (GPU busy = the GPU milliseconds over a step's wall time)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the profiler's notes on its own event buffers
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
            for _ in range(count):
                step()
            torch.cuda.synchronize()
    events = profiler.events()
    kernels = [event for event in events if event.device_type == DeviceType.CUDA]
    launches = [event for event in events if any(call in event.name for call in _LAUNCH_CALLS)]
    gpu_us = sum(event.time_range.elapsed_us() for event in kernels)
    return gpu_us / 1000 / count, len(kernels) / count, len(launches) / count


def estimate_peak_bytes(
    batch: int, length: int, d_model: int, n_heads: int, itemsize: int, *, quadratic: bool
) -> int:
    """A generous peak-memory estimate used to skip runs; `quadratic` when the attention matrix is stored."""
    linear = _LINEAR_FOOTPRINT * batch * length * d_model * itemsize
    if quadratic:
        return linear + _QUADRATIC_FOOTPRINT * batch * n_heads * length * length * itemsize
    return linear


def bench_modes(modes: Sequence[str] | None, device: torch.device) -> list[str]:
    """The modes a speed table measures (MODES); by default eager steps, and steps replayed from a CUDA
    graph (forecaster.training.graphs) where the device is CUDA."""
    if modes is None:
        return list(DEFAULT_MODES) if device.type == "cuda" else ["eager"]
    for mode in modes:
        check_choice("mode", mode, MODES)
        if is_graphed(mode) and device.type != "cuda":
            raise ConfigError(f"mode {mode} replays CUDA graphs and needs a CUDA device, not {device}")
    return list(modes)


def is_graphed(mode: str) -> bool:
    """Whether a MODES entry replays its step from a CUDA graph."""
    return mode.endswith("graphed")


def compiled_if_asked(model: Callable, mode: str) -> Callable:
    """The model under torch.compile for the compiled MODES, else the model itself."""
    return torch.compile(model, dynamic=False) if mode.startswith("compiled") else model


def default_memory_budget(device: torch.device) -> int:
    """Half the memory free right now (host RAM on CPU, device memory on CUDA): other work keeps running."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0] // 2
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2

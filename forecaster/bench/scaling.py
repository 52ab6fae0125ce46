"""Time and peak memory of a training step, S3Attention layer vs softmax (`forecaster bench scaling`).

Both are measured by `forecaster.bench.timing`: wall time of synchronized steps, peak memory above the
step's start (torch.cuda.max_memory_allocated on CUDA, torch.profiler allocator events on CPU). On CUDA each
step is also timed replayed from a CUDA graph (`forecaster.training.graphs.GraphedStep`, as training
replays it), and torch.profiler gives the share of the wall time the GPU is busy: eager, a layer of a
hundred short kernels waits on the host that launches them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from rich.table import Table
from torch import nn

from forecaster.bench import timing
from forecaster.checks import check_choice, check_fields, parse_ints, parse_names, setting
from forecaster.devices import default_device
from forecaster.training.graphs import GraphedStep

SOFTMAX_KERNELS = ("sdpa", "math")
S3_LAYER = "s3attention"


@dataclass(frozen=True)
class ScalingResult:
    """One table cell group: a layer at a sequence length in a mode (seconds/peak_bytes are None when
    skipped; a graphed step's memory is the graph's, held between replays, so its peak is None)."""

    length: int
    layer: str
    seconds: float | None
    peak_bytes: int | None
    note: str = ""
    mode: str = "eager"
    gpu_busy: float | None = None  # GPU time over wall time (CUDA)


def _size(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{n_bytes / 2**20:.1f} MiB"


def _build_layer(
    kernel: str | None, d_model: int, n_heads: int, length: int, rank: int, fold: int
) -> nn.Module:
    """The S3Attention mixer when `kernel` is None, else the registered softmax mixer on that SDPA kernel."""
    if kernel is None:
        from forecaster.nn import S3AttentionMixer

        return S3AttentionMixer(d_model, n_heads, length, left_rank=rank, right_rank=rank, fold=fold)
    from forecaster.nn import attention

    return attention.build("softmax", d_model=d_model, n_heads=n_heads, seq_len=length, kernel=kernel)


@dataclass
class ScalingSettings:
    """One `forecaster bench scaling` table."""

    lengths: Sequence[int] = setting([1024, 2048, 4096, 8192, 16384], "e.g. 1024,2048,4096", parse=parse_ints)
    d_model: int = setting(64, "width D", minimum=1)
    batch: int = setting(8, "batch size", minimum=1)
    heads: int = setting(8, "attention heads", minimum=1)
    rank: int = setting(8, "sampled tokens and head dimensions", minimum=1)
    fold: int = setting(8, "smoother channel groups", minimum=1)
    repeats: int = setting(3, "timed steps per cell (median)", minimum=1)
    warmup: int = setting(1, "untimed steps before measuring", minimum=0)
    softmax_kernels: Sequence[str] = setting(list(SOFTMAX_KERNELS), "softmax kernels to compare: sdpa, math",
                                             parse=parse_names)
    device: str | None = setting(None, "cuda, cuda:1 or cpu (default: cuda when available)")
    modes: Sequence[str] | None = setting(None, timing.MODES_HELP, parse=parse_names)
    max_memory_gb: float | None = setting(None, "skip runs estimated above this many GiB (default: half of "
                                          "the free memory)", above=0)

    def __post_init__(self) -> None:
        check_fields(self, "bench scaling setting")
        for kernel in self.softmax_kernels:
            check_choice("softmax kernel", kernel, SOFTMAX_KERNELS)


def run_scaling(
    settings: ScalingSettings, progress: Callable[[str], None] | None = None
) -> list[ScalingResult]:
    """Time and peak memory of one training step (forward + backward) per layer and sequence length.

    Layers: the S3Attention mixer (Smoother + SkeletonAttention, `rank` sampled tokens and head dims) and
    the softmax mixer on torch's scaled_dot_product_attention, per kernel in `softmax_kernels` ("sdpa": the
    backend torch picks, "math": the textbook kernel that stores the length x length matrix). After
    `warmup` untimed steps, one step is profiled for memory and `repeats` more are timed. Runs whose
    estimated peak exceeds the budget (default: half the free memory) are reported as OOM-skip.
    """
    device = default_device(settings.device)
    budget = (timing.default_memory_budget(device) if settings.max_memory_gb is None
              else int(settings.max_memory_gb * 2**30))
    batch, d_model, n_heads, repeats, warmup = (
        settings.batch, settings.d_model, settings.heads, settings.repeats, settings.warmup
    )
    lengths, rank, fold = settings.lengths, settings.rank, settings.fold
    softmax_kernels = settings.softmax_kernels
    layers = [(S3_LAYER, None), *((f"softmax ({kernel})", kernel) for kernel in softmax_kernels)]
    results = []
    for length in lengths:
        for name, kernel in layers:
            for mode in timing.bench_modes(settings.modes, device):
                if progress is not None:
                    progress(f"length {length}: {name}, {mode}")
                estimate = timing.estimate_peak_bytes(batch, length, d_model, n_heads, 4,
                                                      quadratic=kernel == "math")
                if estimate > budget:
                    note = f"OOM-skip: estimated {_size(estimate)} > budget {_size(budget)}"
                    results.append(ScalingResult(length, name, None, None, note, mode))
                    continue
                torch.manual_seed(0)
                module = _build_layer(kernel, d_model, n_heads, length, rank, fold).to(device).train()
                shape = (batch, length, d_model)
                results.append(_measure(name, module, mode, shape, repeats, warmup, device))
    return results


def _measure(
    name: str, module: nn.Module, mode: str, shape: tuple[int, int, int], repeats: int, warmup: int,
    device: torch.device,
) -> ScalingResult:
    """One layer's forward+backward step, with the gradient of its input as well as its parameters."""
    x = torch.randn(*shape, device=device, requires_grad=True)
    graphed, forward = None, timing.compiled_if_asked(module, mode)
    if timing.is_graphed(mode):
        graphed = GraphedStep(lambda inputs: forward(inputs).sum(), list(module.parameters()), None)

    def release_gradients() -> None:  # so the profiled step starts from parameters, input and nothing else
        module.zero_grad(set_to_none=True)
        x.grad = None

    def step() -> None:
        if graphed is not None:
            graphed(x)
            return
        release_gradients()
        forward(x).sum().backward()

    try:
        measured = timing.time_step(step, device, repeats, warmup=warmup, graphed=graphed is not None,
                                    before_peak=release_gradients)  # fmt: skip
    except torch.OutOfMemoryError:
        return ScalingResult(shape[1], name, None, None, "OOM", mode)
    finally:
        if graphed is not None:
            graphed.release()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    note = "" if graphed is None else graphed.fallback_note
    return ScalingResult(shape[1], name, measured.seconds, measured.peak_bytes, note, mode, measured.gpu_busy)


def scaling_table(results: Sequence[ScalingResult], title: str, caption: str | None = None) -> Table:
    """Time and peak memory per length, layer and mode, and each softmax kernel's ratio to the S3Attention
    layer in the same mode; the GPU-busy column on CUDA."""
    table = Table(title=title, caption=caption)
    busy = any(result.gpu_busy is not None for result in results)
    headers = ("length", "layer", "mode", "fwd+bwd ms", *(("GPU busy",) if busy else ()), "peak MiB",
               "time ÷ S3", "memory ÷ S3", "note")  # fmt: skip
    for header in headers:
        table.add_column(header, justify="left" if header in ("layer", "mode", "note") else "right")
    reference = {(r.length, r.mode): r for r in results if r.layer == S3_LAYER}
    for result in results:
        base = reference.get((result.length, result.mode))
        time_ratio = memory_ratio = "-"
        if result.layer != S3_LAYER and base is not None and result.seconds is not None and base.seconds:
            time_ratio = f"{result.seconds / base.seconds:.1f}x"
            if result.peak_bytes is not None and base.peak_bytes:
                memory_ratio = f"{result.peak_bytes / base.peak_bytes:.1f}x"
        table.add_row(
            str(result.length),
            result.layer,
            result.mode,
            "-" if result.seconds is None else f"{result.seconds * 1e3:.2f}",
            *(("-" if result.gpu_busy is None else f"{result.gpu_busy:.0%}",) if busy else ()),
            "-" if result.peak_bytes is None else f"{result.peak_bytes / 2**20:.1f}",
            time_ratio,
            memory_ratio,
            result.note,
        )
    return table

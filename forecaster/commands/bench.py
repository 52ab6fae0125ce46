"""`forecaster bench scaling / attention / smoother / serve / train-step`: speed and memory tables
(forecaster.bench)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from forecaster.checks import user_path
from forecaster.commands.common import checked_output
from forecaster.commands.options import add_settings, given

HELP = "speed and memory benchmarks that print tables"


def configure(parser: argparse.ArgumentParser) -> None:
    from forecaster.bench.attention import AttentionBenchSettings
    from forecaster.bench.scaling import ScalingSettings
    from forecaster.bench.serve import ServeBenchSettings
    from forecaster.bench.smoother import SmootherBenchSettings
    from forecaster.bench.train_step import TrainStepBenchSettings

    commands = parser.add_subparsers(dest="bench_command", required=True)
    serve = commands.add_parser(
        "serve", help="load-test the HTTP service and compare with in-process predictions",
        description="Sends --requests forecast requests with --concurrency keep-alive connections (to --url, "
        "or to a server it starts on a free loopback port) and computes the same forecasts in-process, one "
        "by one (half before the load, half after) and in batches, with the service's torch threads.",
    )  # fmt: skip
    add_settings(serve, ServeBenchSettings)
    serve.set_defaults(handler=_serve)

    smoother = commands.add_parser(
        "smoother", help="Smoother forward and forward+backward: CuPy kernel path vs PyTorch path, bandwidth"
    )
    add_settings(smoother, SmootherBenchSettings)
    smoother.set_defaults(handler=_smoother)

    attention = commands.add_parser(
        "attention", help="LRA training steps/s and peak memory per mixer and length (paper 001 Table 4)",
        description="Times optimizer steps of the LRA text classifier (D 64, 2 layers, 2 heads) with each "
        "mixer and measures the peak memory of one step: torch.cuda.max_memory_allocated on CUDA, torch's "
        "CPU allocator events (torch.profiler) on CPU. Ratios are relative to the first softmax row. "
        "Mixer options follow colons, e.g. softmax:kernel=math (the kernel that stores the n x n matrix).",
    )  # fmt: skip
    add_settings(attention, AttentionBenchSettings)
    attention.add_argument("--json", metavar="FILE", type=user_path,
                           help="also write the measurements to this JSON file")
    attention.add_argument("--reference", help="row the ratios compare with (default: the first softmax row)")
    attention.set_defaults(handler=_attention)

    scaling = commands.add_parser(
        "scaling", help="S3Attention layer vs softmax: forward+backward time and peak memory per length",
        description="One training step (forward + backward) of the S3Attention layer (Smoother + "
        "SkeletonAttention) and of the softmax mixer (scaled_dot_product_attention; kernel 'sdpa' = "
        "torch's choice, 'math' = the kernel that stores the length x length matrix) per sequence length. "
        "Peak memory: torch.cuda.max_memory_allocated on CUDA, torch.profiler allocator events on CPU. "
        "Runs whose estimated memory exceeds --max-memory-gb are marked OOM-skip instead of being attempted.",
    )  # fmt: skip
    add_settings(scaling, ScalingSettings)
    scaling.set_defaults(handler=_scaling)

    train_step = commands.add_parser(
        "train-step", help="a forecaster training step: eager vs torch.compile vs CUDA graph (--cuda-graphs)",
        description="Times the training step of the model `forecaster train --dataset D --horizon H --preset "
        "P` builds, on its first train batches, per mode (eager, compiled, graphed), with GPU time, kernels "
        "and host launch calls per step and the GPU's busy share on CUDA.",
    )  # fmt: skip
    add_settings(train_step, TrainStepBenchSettings)
    train_step.set_defaults(handler=_train_step)


def _console():
    """rich's console at the terminal's width; logs and pipes get tables at their natural width."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=200)


def _serve(args: argparse.Namespace) -> int:
    from forecaster.bench.serve import ServeBenchSettings, render_serve_bench, run_serve_bench

    result = run_serve_bench(ServeBenchSettings(**given(args, ServeBenchSettings)))
    render_serve_bench(result)
    return 1 if result["rows"][0].errors else 0


def _smoother(args: argparse.Namespace) -> int:
    from forecaster.bench.smoother import SmootherBenchSettings, run_smoother_bench, smoother_bench_table

    settings = SmootherBenchSettings(**given(args, SmootherBenchSettings))
    bench = run_smoother_bench(settings, progress=lambda message: print(message, file=sys.stderr))
    _console().print(smoother_bench_table(bench))
    return 0


def _attention(args: argparse.Namespace) -> int:
    import torch
    from rich.progress import Progress

    from forecaster.bench.attention import AttentionBenchSettings, attention_bench_table, run_attention_bench
    from forecaster.bench.timing import bench_modes
    from forecaster.devices import default_device, machine_name
    from forecaster.errors import ConfigError

    settings = AttentionBenchSettings(**given(args, AttentionBenchSettings))
    if args.json is not None:
        checked_output(args.json, "--json")  # before minutes of measuring
    if args.reference is not None and args.reference not in settings.models:
        raise ConfigError(f"--reference {args.reference!r} is not one of --models {list(settings.models)}")
    modes = bench_modes(settings.modes, default_device(settings.device))
    with Progress(transient=True) as progress:
        cells = len(settings.models) * len(settings.lengths) * len(modes)
        bar = progress.add_task("bench attention", total=cells)
        rows, batch = run_attention_bench(
            settings, progress=lambda label: progress.update(bar, advance=1, description=label)
        )
    machine = f"{machine_name(settings.device)}, {torch.get_num_threads()} torch threads"
    title = f"LRA text classifier, batch {batch}, D {settings.d_model}, {settings.n_layers} layers: {machine}"
    _console().print(attention_bench_table(rows, title, reference=args.reference))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": machine, "rows": [asdict(row) for row in rows]}, handle, indent=2)
    return 0


def _scaling(args: argparse.Namespace) -> int:
    import torch
    from rich.console import Console

    from forecaster.bench.scaling import ScalingSettings, run_scaling, scaling_table
    from forecaster.devices import default_device, machine_name

    settings = ScalingSettings(**given(args, ScalingSettings))
    device = default_device(settings.device)
    with Console(stderr=True).status("bench scaling") as status:
        results = run_scaling(settings, progress=status.update)
    title = (
        f"S3Attention layer vs softmax, forward+backward, batch {settings.batch}, D {settings.d_model}, "
        f"{settings.heads} heads, rank {settings.rank}, fold {settings.fold}"
    )
    memory = "torch.cuda.max_memory_allocated" if device.type == "cuda" else "torch.profiler allocator events"
    caption = (
        f"{machine_name(device)}, {torch.get_num_threads()} torch threads; median of {settings.repeats} "
        f"steps; peak above the step's start: {memory}"
    )
    _console().print(scaling_table(results, title, caption))
    return 0


def _train_step(args: argparse.Namespace) -> int:
    from forecaster.bench.train_step import TrainStepBenchSettings, run_train_step_bench, train_step_table

    settings = TrainStepBenchSettings(**given(args, TrainStepBenchSettings))
    bench = run_train_step_bench(settings, progress=lambda message: print(message, file=sys.stderr))
    _console().print(train_step_table(bench))
    return 0

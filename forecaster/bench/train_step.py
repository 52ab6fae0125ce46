"""`forecaster bench train-step`: one forecaster training step, eager against compiled against graphed.

The step is what `forecaster train` runs per batch (forward pass, loss, backward pass, AdamW step) for the
model its --dataset / --horizon / --preset build, on that run's first train batches (the same batches, in
the same order, and the same initial weights for every mode). Modes:
- eager: the step as Lightning runs it without graphs;
- compiled: the loss (forward pass) under torch.compile, the backward pass from its compiled graph;
- graphed: the captured step of `--cuda-graphs` (forecaster.training.graphs) with fused AdamW; CUDA only.
Each mode's time is the mean over `steps` steps after `warmup` (the graphed mode captures during warm-up),
timed in one stretch with the device synchronized at its ends, as training runs. On CUDA, torch.profiler
over `profiled` more steps gives the GPU time, kernels and host-side launches per step; GPU busy is the
GPU time over the wall time of a step.
"""

from __future__ import annotations

import copy
import itertools
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from rich.table import Table

from forecaster.bench.timing import gpu_profile
from forecaster.checks import MAX_SEED, check_choice, check_fields, parse_names, setting, user_path
from forecaster.devices import default_device, machine_name
from forecaster.errors import ConfigError
from forecaster.training.graphs import WARMUP_STEPS

MODES = ("eager", "compiled", "graphed")


@dataclass
class TrainStepBenchSettings:
    dataset: str = setting("ETTm2", "registered dataset whose train windows feed the steps")
    horizon: int = setting(96, "forecast length H", minimum=1)
    model_name: str = setting("s3attention", "forecasting model", flag="--model")
    preset: str = setting("paper", "the model's preset, as forecaster train --preset")
    batch_size: int = setting(32, "windows per step", minimum=1)
    modes: list = setting(list(MODES), "modes in order (the first is the reference)", parse=parse_names)
    steps: int = setting(100, "timed steps per mode", minimum=1)
    warmup: int = setting(10, "untimed steps first (compilation, capture)", minimum=WARMUP_STEPS + 1)
    profiled: int = setting(10, "steps under torch.profiler for kernel counts (CUDA)", minimum=1)
    device: str | None = setting(None, "cuda, cuda:1 or cpu (default: cuda when available)")
    data_dir: str | None = setting(None, "directory searched first for the dataset file", parse=user_path)
    seed: int = setting(0, "seed of the weights", minimum=0, maximum=MAX_SEED)

    def __post_init__(self) -> None:
        check_fields(self, "bench setting")
        for mode in self.modes:
            check_choice("mode", mode, MODES)


@dataclass(frozen=True)
class TrainStepRow:
    mode: str
    ms_per_step: float | None
    last_loss: float | None = None
    gpu_ms_per_step: float | None = None
    kernels_per_step: float | None = None
    launches_per_step: float | None = None
    note: str = ""


@dataclass(frozen=True)
class TrainStepBench:
    rows: list[TrainStepRow]
    title: str
    caption: str


Step = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _module_and_batches(settings: TrainStepBenchSettings, device: torch.device, count: int):
    """The ForecastModule a `forecaster train` run would fit (untrained) and its first `count` train
    batches on `device`, repeated from the start when an epoch holds fewer."""
    import lightning

    from forecaster.data import load_dataset
    from forecaster.training.fit import build_candidate
    from forecaster.training.module import ForecastModule
    from forecaster.training.planning import plan
    from forecaster.training.settings import TrainSettings

    series = load_dataset(settings.dataset, settings.data_dir)
    train = TrainSettings(
        horizon=settings.horizon,
        model_name=settings.model_name,
        preset=settings.preset,
        batch_size=settings.batch_size,
        seed=settings.seed,
    )
    candidate = plan(train, series)[0]
    lightning.seed_everything(settings.seed, verbose=False)
    built = build_candidate(series, train, candidate)
    if not any(parameter.requires_grad for parameter in built.model.parameters()):
        raise ConfigError(f"model {settings.model_name!r} has nothing to train, so no training step to time")
    loader = built.datamodule.train_dataloader()
    batches = [
        (x.to(device), y.to(device)) for x, y in itertools.islice(itertools.cycle(loader), count)
    ]  # fmt: skip
    module = ForecastModule(built.model, None, lr=candidate.lr, weight_decay=train.weight_decay)
    return module, batches


def _step(module, mode: str) -> tuple[Step, object]:
    """One training step of `mode` on a fresh copy of `module`'s model and optimizer, and that copy."""
    from forecaster.training.module import ForecastModule

    fresh = ForecastModule(
        copy.deepcopy(module.model), None, lr=module.lr, weight_decay=module.weight_decay,
        cuda_graphs=mode == "graphed",
    )  # fmt: skip
    optimizer = fresh.configure_optimizers()
    if mode == "graphed":
        def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            loss = fresh.graphed_step(x, y)
            optimizer.step()
            return loss

        return step, fresh
    loss_of = torch.compile(fresh.training_loss) if mode == "compiled" else fresh.training_loss

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_of(x, y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step, fresh


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _run(step: Step, batches: Iterator, count: int, device: torch.device) -> tuple[float, torch.Tensor]:
    """Mean seconds per step over `count` steps and the last loss."""
    _synchronize(device)
    start = time.perf_counter()
    for _ in range(count):
        loss = step(*next(batches))
    _synchronize(device)
    return (time.perf_counter() - start) / count, loss


def _measure(module, mode: str, batches: list, settings: TrainStepBenchSettings, device) -> TrainStepRow:
    if mode == "graphed" and device.type != "cuda":
        return TrainStepRow(mode, None, note="needs CUDA")
    step, fresh = _step(module, mode)
    stream = itertools.cycle(batches)
    with warnings.catch_warnings():  # inductor's notes on what it leaves to eager kernels
        warnings.simplefilter("ignore")
        _run(step, stream, settings.warmup, device)
    seconds, loss = _run(step, stream, settings.steps, device)
    row = {"mode": mode, "ms_per_step": seconds * 1000, "last_loss": float(loss)}
    if device.type == "cuda":
        gpu_ms, kernels, launches = gpu_profile(lambda: step(*next(stream)), settings.profiled)
        row.update(gpu_ms_per_step=gpu_ms, kernels_per_step=kernels, launches_per_step=launches)
    if fresh.graphed_step is not None:
        row["note"] = fresh.graphed_step.fallback_note
    return TrainStepRow(**row)


def run_train_step_bench(
    settings: TrainStepBenchSettings, progress: Callable[[str], None] = lambda message: None
) -> TrainStepBench:
    device = default_device(settings.device)
    count = settings.warmup + settings.steps + settings.profiled
    module, batches = _module_and_batches(settings, device, count)
    module.to(device)
    rows = []
    for mode in settings.modes:
        progress(f"bench train-step: {mode}")
        rows.append(_measure(module, mode, batches, settings, device))
    parameters = sum(parameter.numel() for parameter in module.model.parameters())
    title = (
        f"{settings.model_name} ({settings.preset}) training step, {settings.dataset} horizon "
        f"{settings.horizon}, batch {settings.batch_size}, {parameters:,} parameters"
    )
    caption = (
        f"{machine_name(device)}, {torch.get_num_threads()} torch threads, torch {torch.__version__}; "
        f"mean of {settings.steps} steps after {settings.warmup}; same weights and batches in every mode"
    )
    return TrainStepBench(rows, title, caption)


def _shown(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def train_step_table(bench: TrainStepBench) -> Table:
    """Rows in mode order; speed-up against the first timed row; GPU busy = GPU time / wall time."""
    table = Table(title=bench.title, caption=bench.caption)
    for column in ("mode", "ms / step", "speed-up", "GPU ms / step", "GPU busy", "kernels / step",
                   "launches / step", "last loss", "note"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("mode", "note") else "right")
    reference = next((row.ms_per_step for row in bench.rows if row.ms_per_step), None)
    for row in bench.rows:
        speedup = None if row.ms_per_step is None else reference / row.ms_per_step
        busy = None
        if row.gpu_ms_per_step is not None and row.ms_per_step:
            busy = min(1.0, row.gpu_ms_per_step / row.ms_per_step)
        table.add_row(
            row.mode,
            _shown(row.ms_per_step, 2),
            "-" if speedup is None else f"{speedup:.2f}x",
            _shown(row.gpu_ms_per_step, 3),
            "-" if busy is None else f"{busy:.0%}",
            _shown(row.kernels_per_step, 0),
            _shown(row.launches_per_step, 0),
            _shown(row.last_loss, 5),
            row.note,
        )
    return table

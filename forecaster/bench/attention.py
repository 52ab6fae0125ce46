"""`forecaster bench attention`: training speed and peak memory of LRA classifiers per mixer and length.

The measured unit is one optimizer step (forward, cross-entropy, backward, AdamW) of the LRA text
classifier (byte tokens, D 64, 2 layers, 2 heads) with the given mixer, as in paper 001 Table 4. Peak memory
is what the step allocates above what was held before it (activations, temporaries, gradients), measured by
`forecaster.bench.timing.peak_memory_bytes`: torch.cuda.max_memory_allocated on CUDA, the running
total of torch's CPU allocator events recorded by torch.profiler on CPU. Any registered mixer name works;
options follow a colon, e.g. `softmax:kernel=math` or `performer:n_features=128`. On CUDA each step is also
timed replayed from a CUDA graph (forward, loss and backward captured by `forecaster.training.graphs`, fused
AdamW after each replay, as `forecaster lra train` runs on CUDA), with the GPU's busy share of the wall time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from rich.table import Table

from forecaster.bench.timing import (
    MODES_HELP,
    bench_modes,
    compiled_if_asked,
    default_memory_budget,
    estimate_peak_bytes,
    is_graphed,
    time_step,
)
from forecaster.checks import check_fields, parse_ints, parse_names, setting
from forecaster.devices import default_device
from forecaster.models.lra import LRAClassifier, LRAConfig
from forecaster.nn.attention import MixerSpec, parse_mixer_spec
from forecaster.training.graphs import GraphedStep, adamw

DEFAULT_MODELS = (
    "softmax",
    "softmax:kernel=math",
    "skeleton",
    "linformer",
    "nystromformer",
    "performer",
    "reformer",
)
TEXT_VOCAB = 257  # byte-level tokens + padding, the LRA text task


@dataclass
class AttentionBenchSettings:
    """One `forecaster bench attention` table."""

    models: Sequence[str] = setting(list(DEFAULT_MODELS), "comma-separated registered mixers with optional "
                                    ":key=value options", parse=parse_names)
    lengths: Sequence[int] = setting([1024, 2048, 3072, 4096], "lengths, e.g. 1024,2048", parse=parse_ints)
    batch: int | None = setting(None, "batch size (default 32 on CUDA, 4 on CPU)", minimum=1)
    d_model: int = setting(64, "width D", minimum=1)
    n_layers: int = setting(2, "blocks", minimum=1)
    n_heads: int = setting(2, "heads", minimum=1)
    steps: int = setting(5, "timed steps per cell (median)", minimum=1)
    device: str | None = setting(None, "cuda, cuda:1 or cpu (default: cuda when available)")
    modes: Sequence[str] | None = setting(None, MODES_HELP, parse=parse_names)
    memory_budget: int | None = setting(None, "skip cells estimated above this many bytes", minimum=1,
                                        cli=False)

    def __post_init__(self) -> None:
        check_fields(self, "bench attention setting")
        self.specs = [parse_mixer_spec(model) for model in self.models]


@dataclass(frozen=True)
class AttentionBenchRow:
    """One (mixer, length, mode) cell pair; steps_per_second / peak_bytes are None when skipped (a graphed
    step's memory is the graph's, held between replays: its peak is None)."""

    model: str
    length: int
    batch: int
    steps_per_second: float | None
    peak_bytes: int | None
    note: str = ""
    mode: str = "eager"
    gpu_busy: float | None = None  # GPU time over wall time (CUDA)

    @property
    def label(self) -> str:
        return _label(self.model, self.mode)


def _label(model: str, mode: str) -> str:
    """A table row's name: the mixer, and the mode where it is not eager."""
    return model if mode == "eager" else f"{model} ({mode})"


def _training_step(
    spec: MixerSpec, mode: str, length: int, batch: int, d_model: int, n_layers: int, n_heads: int,
    device: torch.device,
) -> tuple[Callable[[], None], GraphedStep | None]:
    torch.manual_seed(0)
    config = LRAConfig(
        mixer=spec.name,
        n_classes=2,
        seq_len=length,
        vocab_size=TEXT_VOCAB,
        d_model=d_model,
        n_heads=n_heads,
        n_layers=n_layers,
        mlp_dim=2 * d_model,
        hidden_dim=2 * d_model,
        mixer_options=spec.options,
    )
    model = LRAClassifier(config).to(device)
    model.train()
    optimizer = adamw(model.parameters(), lr=1e-4, weight_decay=0.01)
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(1, TEXT_VOCAB, (batch, length), generator=generator).to(device)
    labels = torch.randint(0, 2, (batch,), generator=generator).to(device)

    forward = compiled_if_asked(model, mode)

    def loss(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(forward(inputs), targets)

    graphed = GraphedStep(loss, list(model.parameters()), None) if is_graphed(mode) else None

    def step() -> None:
        if graphed is not None:
            graphed(tokens, labels)
        else:
            optimizer.zero_grad(set_to_none=True)
            loss(tokens, labels).backward()
        optimizer.step()

    return step, graphed


def run_attention_bench(
    settings: AttentionBenchSettings, progress: Callable[[str], None] | None = None
) -> tuple[list[AttentionBenchRow], int]:
    """Measure every (mixer, length): one warm-up step, one step under the memory probe, then the median
    of `steps` timed steps; returns the rows and the batch size used. Runs whose estimated peak exceeds the
    memory budget (default half the free memory) are skipped and marked instead of being attempted."""
    device = default_device(settings.device)
    batch = settings.batch or (32 if device.type == "cuda" else 4)
    d_model, n_layers, n_heads = settings.d_model, settings.n_layers, settings.n_heads
    lengths, specs = settings.lengths, settings.specs
    budget = default_memory_budget(device) if settings.memory_budget is None else settings.memory_budget
    rows = []
    for spec in specs:
        for mode in bench_modes(settings.modes, device):
            for length in lengths:
                if progress is not None:
                    progress(f"{spec.label} @ {length}, {mode}")
                estimate = n_layers * estimate_peak_bytes(
                    batch, length, d_model, n_heads, 4, quadratic=spec.quadratic_memory
                )
                if estimate > budget:
                    note = f"skipped: ~{estimate / 2**30:.1f} GiB > budget {budget / 2**30:.1f} GiB"
                    rows.append(AttentionBenchRow(spec.label, length, batch, None, None, note, mode))
                    continue
                rows.append(_measure(spec, mode, length, batch, settings, device))
    return rows, batch


def _measure(
    spec: MixerSpec, mode: str, length: int, batch: int, settings: AttentionBenchSettings,
    device: torch.device,
) -> AttentionBenchRow:
    """Warm-up (the optimizer's state, kernel choice, the graph's capture), one step under the memory probe
    (eager), the median of `steps` timed steps, and the GPU's busy share over as many more (CUDA)."""
    graphed = None
    try:
        step, graphed = _training_step(
            spec, mode, length, batch, settings.d_model, settings.n_layers, settings.n_heads, device
        )
        # one warm-up step allocates the optimizer state and chooses kernels
        timing = time_step(step, device, settings.steps, warmup=1, graphed=graphed is not None)
    except torch.OutOfMemoryError:
        return AttentionBenchRow(spec.label, length, batch, None, None, "OOM", mode)
    finally:
        if graphed is not None:
            graphed.release()
        if device.type == "cuda":
            torch.cuda.empty_cache()
    note = "" if graphed is None else graphed.fallback_note
    return AttentionBenchRow(
        spec.label, length, batch, 1.0 / timing.seconds, timing.peak_bytes, note, mode, timing.gpu_busy
    )


def _cell(value: float | None, reference: float | None, fmt: str, inverse: bool) -> str:
    if value is None:
        return "-"
    text = format(value, fmt)
    if reference:
        ratio = reference / value if inverse else value / reference
        text += f" ({ratio:.1f}x)"
    return text


def attention_bench_table(
    rows: Sequence[AttentionBenchRow], title: str, reference: str | None = None
) -> Table:
    """Paper-001-Table-4 layout: steps/s then peak MiB per length (then the GPU's busy share, on CUDA), a row
    per mixer and mode; in parentheses the ratio to the `reference` mixer (default: the first softmax one)
    in the same mode: speed-up for steps/s, memory saving = reference MiB / model MiB."""
    lengths = sorted({row.length for row in rows})
    models = list(dict.fromkeys(row.model for row in rows))
    labels = list(dict.fromkeys(row.label for row in rows))
    cells = {(row.label, row.length): row for row in rows}
    if reference is not None and reference not in models:
        raise ValueError(f"reference row {reference!r} is not one of the measured models {models}")
    reference_model = reference or next((m for m in models if parse_mixer_spec(m).name == "softmax"), None)
    busy = any(row.gpu_busy is not None for row in rows)
    table = Table(title=title)
    table.add_column("model", justify="left")
    for heading in ("steps/s", "peak MiB", *(("GPU busy",) if busy else ())):
        for length in lengths:
            table.add_column(f"{heading} {length}", justify="right")
    table.add_column("note", justify="left")
    empty = AttentionBenchRow("", 0, 0, None, None)
    for label in labels:
        speeds, memories, shares, notes = [], [], [], []
        for length in lengths:
            row = cells.get((label, length), empty)
            reference_label = _label(reference_model, row.mode)
            compared = cells.get((reference_label, length), empty) if label != reference_label else empty
            speeds.append(_cell(row.steps_per_second, compared.steps_per_second, ".2f", inverse=False))
            memories.append(_cell(_mib(row.peak_bytes), _mib(compared.peak_bytes), ".0f", inverse=True))
            shares.append("-" if row.gpu_busy is None else f"{row.gpu_busy:.0%}")
            if row.note:
                notes.append(f"{length}: {row.note}")
        table.add_row(label, *speeds, *memories, *(shares if busy else ()), "; ".join(notes))
    return table


def _mib(size: int | None) -> float | None:
    return None if size is None else size / 2**20

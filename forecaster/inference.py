"""The forward pass behind every forecast (`prediction.predict_outputs`): eager on the CPU, or on a CUDA
device replayed from CUDA graphs captured once per batch-size bucket.

On a GPU a forecaster's forward pass is a few hundred short kernels whose launches, not their work, set
its time (issue 24). A graph captured for a batch size replays them all with one launch, but only for that
shape; a micro-batching service sees every size from 1 to its largest batch. So sizes are rounded up to
buckets (powers of two up to the largest batch, and the largest itself), each captured once, the padding
rows filled with copies of the first window and dropped from the answer: in eval mode every row of a
forecaster is computed on its own, so padding changes no forecast. Batches above the largest run in
chunks of it. A bundle whose forward pass cannot be captured runs eagerly and the error is kept.
"""

from __future__ import annotations

import logging
import threading

import torch
from torch import nn

from forecaster.devices import default_device, module_device
from forecaster.errors import ConfigError
from forecaster.models import forecast_outputs

log = logging.getLogger(__name__)

# Eager passes on a side stream before a capture (torch's own examples warm up with three).
WARMUP_PASSES = 3


def batch_buckets(max_batch: int) -> list[int]:
    """The batch sizes captured for a largest batch of `max_batch`: powers of two below it, then it."""
    if max_batch < 1:
        raise ConfigError(f"largest batch must be at least 1, got {max_batch}")
    return [1 << bit for bit in range(max_batch.bit_length()) if 1 << bit < max_batch] + [max_batch]


def eager_outputs(model: nn.Module, windows: torch.Tensor) -> torch.Tensor:
    """`forecast_outputs` of (B, L, C) windows run eagerly on the model's device, returned on the CPU."""
    with torch.inference_mode():
        return forecast_outputs(model, windows.to(module_device(model))).cpu()


class Inference:
    """`forecast_outputs` of `model` on `device` (default: the CPU): (B, L, C) float32 windows on the CPU
    -> (B, H, C, 1 + 2K) outputs on the CPU. On a CUDA device, `cuda_graphs` (default on; it means nothing
    on the CPU) replays each batch-size bucket up to `max_batch` from its own graph, captured at first use
    or by `warm_up`.

    One thread at a time: the graphs' input and output tensors are shared (the service's inference
    executor has one thread; a lock keeps any other caller safe).
    """

    def __init__(
        self,
        model: nn.Module,
        device: str | torch.device | None = "cpu",
        cuda_graphs: bool = True,
        max_batch: int = 64,
    ) -> None:
        self.device = default_device(device)
        self.graphed = self.device.type == "cuda" and cuda_graphs
        self.buckets = batch_buckets(max_batch)
        self.model = model.to(self.device).eval()
        self.capture_error: str | None = None  # why a capture failed; inference then stays eager
        self._graphs: dict[int, tuple[torch.cuda.CUDAGraph, torch.Tensor, torch.Tensor]] = {}
        self._lock = threading.Lock()

    @property
    def mode(self) -> str:
        """What runs the forward pass, as tables and logs name it."""
        if not self.graphed:
            return f"eager on {self.device}"
        if self.capture_error:
            return f"eager on {self.device} ({self.capture_error})"
        return f"graphed on {self.device}"

    def __call__(self, windows: torch.Tensor) -> torch.Tensor:
        if not self.graphed or self.capture_error is not None:
            return eager_outputs(self.model, windows)
        with self._lock, torch.inference_mode():
            step = self.buckets[-1]
            parts = [self._replay(windows[first : first + step]) for first in range(0, len(windows), step)]
            return parts[0] if len(parts) == 1 else torch.cat(parts)

    def warm_up(self, window_shape: tuple[int, int]) -> None:
        """Capture every bucket's graph now (a service does, so that no request waits for a capture)."""
        if self.graphed:
            for bucket in self.buckets:
                self(torch.zeros(bucket, *window_shape))

    def _replay(self, windows: torch.Tensor) -> torch.Tensor:
        rows = len(windows)
        bucket = next(size for size in self.buckets if size >= rows)
        if bucket not in self._graphs:
            try:
                self._graphs[bucket] = self._capture(bucket, tuple(windows.shape[1:]))
            except RuntimeError as error:  # an operation that cannot be captured (a host sync, say)
                self.capture_error = "not captured: " + str(error).strip().splitlines()[0][:200]
                log.warning("forecasts run eagerly on %s: %s", self.device, self.capture_error)
                torch.cuda.synchronize(self.device)
                return eager_outputs(self.model, windows)
        graph, static_in, static_out = self._graphs[bucket]
        static_in[:rows].copy_(windows)
        static_in[rows:].copy_(windows[:1].expand(bucket - rows, *windows.shape[1:]))
        graph.replay()
        return static_out[:rows].cpu()

    def _capture(self, bucket: int, window_shape: tuple[int, ...]):
        static_in = torch.zeros(bucket, *window_shape, device=self.device)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(WARMUP_PASSES):
                forecast_outputs(self.model, static_in)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):
            static_out = forecast_outputs(self.model, static_in)
        return graph, static_in, static_out

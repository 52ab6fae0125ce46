"""A training step captured once as a CUDA graph and replayed for every batch of the same shape.

Eager, one step of a small forecaster is hundreds of short kernels, and the host's work of launching them,
not the GPU's work, sets the step's time (issue 24: 11-15 ms of wall time for 0.93 ms of GPU work on an
H100). A replayed graph launches them all at once. The graph holds the forward pass, the loss, the backward
pass and gradient clipping, with dropout (torch registers its generator with the graph, so every replay
draws new masks) and BatchNorm's running statistics inside. The optimizer steps outside the graph as fused
AdamW (one kernel), through Lightning's manual optimization: Lightning still counts steps, runs the
learning-rate schedule and writes checkpoints as it does for eager steps.

Shapes are static: a batch of another shape (the last, partial batch of an epoch) runs eagerly, as do the
first WARMUP_STEPS full batches, on a side stream as capturing requires (torch.cuda.graphs' documentation),
so that lazy initialization (cuBLAS workspaces, autograd's buffers) happens before the capture. A model
whose step cannot be captured (an operation that waits for the host, say) trains eagerly and the error is
kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from forecaster.errors import ConfigError

# Eager full-batch steps before the capture (torch's own examples warm up with three).
WARMUP_STEPS = 3
# The batch's tensors -> a scalar loss, or a tuple of the loss and tensors to report (an accuracy, say).
LossFunction = Callable[..., torch.Tensor | tuple[torch.Tensor, ...]]
Outputs = torch.Tensor | tuple[torch.Tensor, ...]


def adamw(parameters, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW as every training loop here steps it: one fused kernel for every parameter on CUDA, where a
    graphed step leaves the optimizer outside the graph (and eager steps gain the same)."""
    parameters = list(parameters)
    fused = {"fused": True} if parameters and parameters[0].is_cuda else {}
    return torch.optim.AdamW(parameters, lr=lr, weight_decay=weight_decay, **fused)


def single_cuda_device(accelerator: str, devices: object, strategy: str) -> bool:
    """True when Lightning would train on exactly one CUDA device in this process."""
    if accelerator not in ("auto", "gpu", "cuda") or strategy not in ("auto", "single_device"):
        return False
    if not torch.cuda.is_available():
        return False
    if devices == "auto":
        return torch.cuda.device_count() == 1
    return devices in (1, "1", [0], (0,))


def use_cuda_graphs(wanted: bool | None, accelerator: str, devices: object, strategy: str) -> bool:
    """Whether a fit captures its training step: `wanted` None means wherever it can (one CUDA device),
    True insists (ConfigError elsewhere), False never."""
    possible = single_cuda_device(accelerator, devices, strategy)
    if wanted and not possible:
        found = (
            f"accelerator {accelerator}, devices {devices}, strategy {strategy}"
            if torch.cuda.is_available() else "no CUDA device on this machine"
        )
        raise ConfigError(
            "--cuda-graphs needs training on one CUDA device (accelerator auto or gpu, one device, no "
            f"distributed strategy); got {found}"
        )
    return possible if wanted is None else wanted


class GraphedStep:
    """loss, backward and gradient clipping of one batch (any number of tensors, e.g. inputs and targets):
    eager for WARMUP_STEPS full batches and for batches of another shape, replayed from a CUDA graph
    captured on the next full batch after that.

    The gradients live in the graph's memory once it is captured; they are zeroed in place, never set to
    None, so that replays and eager steps write the same tensors the optimizer reads.
    """

    def __init__(
        self, loss: LossFunction, parameters: Sequence[nn.Parameter], max_grad_norm: float | None
    ) -> None:
        self.loss = loss
        self.parameters = [parameter for parameter in parameters if parameter.requires_grad]
        self.max_grad_norm = max_grad_norm
        self.capture_error: str | None = None  # why a capture failed; the fit then stays eager
        self.release()

    @property
    def fallback_note(self) -> str:
        """What a table says of a step that could not be captured ("" where it was)."""
        return f"not captured, ran eagerly: {self.capture_error}" if self.capture_error else ""

    def release(self) -> None:
        """Forget the graph, its static batch and the gradients in its memory (a new fit warms up again)."""
        self.warmed_up = 0
        self.graph: torch.cuda.CUDAGraph | None = None
        self.static_batch: tuple[torch.Tensor, ...] | None = None
        self.static_outputs: tuple[torch.Tensor, ...] | None = None
        self.full_shape: tuple[torch.Size, ...] | None = None
        self.side_stream: torch.cuda.Stream | None = None  # warm-up and capture run on it
        for parameter in self.parameters:
            parameter.grad = None

    def __call__(self, *batch: torch.Tensor) -> Outputs:
        """What the loss function returns for the batch (tensors of their own, detached), with every
        parameter's .grad holding its gradient."""
        shape = tuple(tensor.shape for tensor in batch)
        if self.full_shape is None:
            self.full_shape = shape
        if shape != self.full_shape or self.capture_error is not None:
            return self._eager(batch)
        device = batch[0].device
        if self.warmed_up < WARMUP_STEPS:
            self.warmed_up += 1
            if self.side_stream is None:
                self.side_stream = torch.cuda.Stream(device)
            self.side_stream.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(self.side_stream):
                outputs = self._eager(batch)
            torch.cuda.current_stream(device).wait_stream(self.side_stream)
            return outputs
        if self.graph is None:
            try:
                self._capture(batch)
            except RuntimeError as error:  # an operation that cannot be captured (a host sync, say)
                self.graph, self.capture_error = None, str(error).strip().splitlines()[0][:200]
                _end_failed_capture(device)
                return self._eager(batch)
        with torch.no_grad():  # a static input that asks for its gradient is a leaf
            for static, tensor in zip(self.static_batch, batch, strict=True):
                static.copy_(tensor)
        self.graph.replay()
        return _returned(tuple(output.clone() for output in self.static_outputs))

    def _backward(self, loss: torch.Tensor) -> None:
        loss.backward()
        if self.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.parameters, self.max_grad_norm, foreach=True)

    def _eager(self, batch: tuple[torch.Tensor, ...]) -> Outputs:
        for parameter in self.parameters:
            if parameter.grad is not None:
                parameter.grad.zero_()
        outputs = _as_tuple(self.loss(*batch))
        self._backward(outputs[0])
        return _returned(tuple(output.detach() for output in outputs))

    def _capture(self, batch: tuple[torch.Tensor, ...]) -> None:
        """Record the step on static copies of the batch (leaves, as the batch's tensors are: an input that
        asks for its gradient gets it); the gradients are allocated inside the graph."""
        self.static_batch = tuple(
            tensor.detach().clone().requires_grad_(tensor.requires_grad) for tensor in batch
        )  # fmt: skip
        for parameter in self.parameters:
            parameter.grad = None
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, stream=self.side_stream):
            outputs = _as_tuple(self.loss(*self.static_batch))
            self._backward(outputs[0])
        # The same memory without its autograd graph, which would keep the capture's gradient
        # accumulators (and their stream) alive into later eager steps.
        self.static_outputs = tuple(output.detach() for output in outputs)


def _end_failed_capture(device: torch.device) -> None:
    """After a capture that failed part-way, give the device's random generator a fresh copy of its state:
    the failed capture never ended the generator's capture mode, and every later random draw (dropout)
    would be refused ("Offset increment outside graph capture")."""
    torch.cuda.synchronize(device)
    index = torch.cuda.current_device() if device.index is None else device.index
    generator = torch.cuda.default_generators[index]
    generator.graphsafe_set_state(generator.clone_state())


def _as_tuple(outputs: Outputs) -> tuple[torch.Tensor, ...]:
    return outputs if isinstance(outputs, tuple) else (outputs,)


def _returned(outputs: tuple[torch.Tensor, ...]) -> Outputs:
    """The loss alone where the loss function returned it alone."""
    return outputs if len(outputs) > 1 else outputs[0]


"""A bundle's weights checked against the model its config builds, before they are used: the memory the
config asks for (on the meta device), then tensor names from the file's header, then shapes, dtypes and
values (split out of `artifacts`, which loads and saves the files)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import torch
from torch import nn

from forecaster.errors import BundleError

# Weights and buffers a bundle's config may ask for: over 15 times the largest preset model (Electricity's
# D = 512 with input and horizon 720: 60 MiB), well below what a serving machine holds for several models.
MAX_MODEL_BYTES = 2**30
# A safetensors header's bytes: an entry takes about 100 (name, dtype, shape, offsets); the metadata, sha256s
# and a calibration's source, a few hundred.
HEADER_BYTES_PER_TENSOR, HEADER_BYTES_BESIDE = 1024, 2**16


def check_header_size(path: Path, tensors: int) -> None:
    """A safetensors file's header no longer than `tensors` entries need, read before safetensors parses
    it: a 91 MiB header of 1.35 M one-number tensors took 15 s and 1.2 GB to open (h112)."""
    bound = HEADER_BYTES_BESIDE + HEADER_BYTES_PER_TENSOR * tensors
    with path.open("rb") as handle:
        head, held = handle.read(8), os.fstat(handle.fileno()).st_size - 8
    size = int.from_bytes(head, "little") if len(head) == 8 else 0
    if bound < size <= held:  # past the file's end, it is no safetensors file: safetensors says so
        raise BundleError(f"{path}: a header of {size:,} bytes; expected at most {bound:,} (the model's "
                          f"{tensors} tensor(s) and their metadata)")  # fmt: skip


def check_model_size(model: nn.Module, where: Path | str) -> None:
    """Refuse a model (built on the meta device) whose weights and buffers would exceed MAX_MODEL_BYTES."""
    size = sum(tensor.numel() * tensor.element_size() for tensor in [*model.parameters(), *model.buffers()])
    if size > MAX_MODEL_BYTES:
        raise BundleError(
            f"{where}: the model config asks for {size / 2**30:.1f} GiB of weights and buffers; expected at "
            f"most {MAX_MODEL_BYTES / 2**30:g} GiB"
        )


def check_tensor_names(names: Iterable[str], model: nn.Module, model_name: str, where: Path) -> None:
    """The file's tensor names are the model's, read from its header before any tensor is made (1.35 M
    one-number tensors beside a model's had taken 2.2 GB and 29 s to refuse, h112)."""
    expected, names = model.state_dict().keys(), set(names)
    absent, unexpected = sorted(expected - names), sorted(names - expected)
    if absent or unexpected:
        raise BundleError(
            f"{where}: tensors do not match model {model_name!r}"
            + (f"; missing {', '.join(absent)}" if absent else "")
            + (f"; unexpected {', '.join(unexpected)}" if unexpected else "")
        )


def described(tensor: torch.Tensor) -> str:
    """A tensor's dtype and shape as messages show them: 'float32 (2, 6, 3)', not 'torch.float32'."""
    return f"{str(tensor.dtype).removeprefix('torch.')} {tuple(tensor.shape)}"


def check_tensors(tensors: dict[str, torch.Tensor], model: nn.Module, model_name: str, where: Path) -> None:
    """Shapes and dtypes as the model expects (of tensors whose names `check_tensor_names` passed from the
    header), finite floating-point values, non-negative running variances, and indices within the axis they
    index (for modules that declare `index_ranges()`, such as skeleton attention's samples): weights that
    would only forecast NaN or fail are refused here."""
    expected = model.state_dict()
    for key, tensor in tensors.items():
        want = expected[key]
        if tensor.shape != want.shape or tensor.dtype != want.dtype:
            raise BundleError(
                f"{where}: tensor {key} is {described(tensor)}, model expects {described(want)}"
            )
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise BundleError(f"{where}: tensor {key} holds NaN or infinite values; expected finite numbers")
        if key.rpartition(".")[2] == "running_var" and (tensor < 0).any():  # norms divide by sqrt(var + eps)
            raise BundleError(f"{where}: tensor {key} holds negative variances; expected values >= 0")
    for prefix, module in model.named_modules():
        for name, size in (module.index_ranges() if hasattr(module, "index_ranges") else {}).items():
            key = f"{prefix}.{name}" if prefix else name
            index = tensors[key]
            if index.numel() and (index.min() < 0 or index.max() >= size):
                raise BundleError(f"{where}: tensor {key} must hold indices from 0 to {size - 1}")

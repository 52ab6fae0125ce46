"""Which device to run on and what to call this machine in tables and records (the one copy of each)."""

from __future__ import annotations

import itertools
import os
import platform
from functools import cache
from pathlib import Path

import torch

from forecaster.errors import ConfigError


def default_device(requested: str | torch.device | None = None) -> torch.device:
    """`requested` checked, else CUDA when it is available, else the CPU."""
    if requested is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(requested)
    except (RuntimeError, TypeError) as error:
        raise ConfigError(f"device {requested!r} is not a torch device name ({error})") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {requested!r}: CUDA is not available on this machine")
    return device


def sized_only() -> bool:
    """Whether a model is being built on the meta device, only to be sized (a bundle's, before it is built:
    artifacts): tables its config determines are then made empty of their shape, as arithmetic on meta
    tensors runs Python decompositions that import torch's compiler, 1-3 s of `predict`'s start."""
    return torch.get_default_device().type == "meta"


# Lightning's accelerator names (`--accelerator`) as the torch device a pass that needs no Trainer runs on.
ACCELERATOR_DEVICES = {"auto": None, "cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "mps": "mps"}


def accelerator_device(accelerator: str) -> torch.device:
    """The one device `--accelerator` names for scoring a split (auto as `default_device`)."""
    if accelerator not in ACCELERATOR_DEVICES:
        raise ConfigError(f"--accelerator {accelerator!r}: expected one of {', '.join(ACCELERATOR_DEVICES)}")
    name = ACCELERATOR_DEVICES[accelerator]
    available = {"cuda": torch.cuda.is_available, "mps": torch.backends.mps.is_available}
    if name in available and not available[name]():
        raise ConfigError(f"--accelerator {accelerator}: {accelerator.upper()} is not available here")
    return default_device(name)


def module_device(module: torch.nn.Module) -> torch.device:
    """Where a module's parameters (or buffers) live; the CPU for one with neither (a naive forecaster)."""
    tensor = next(itertools.chain(module.parameters(), module.buffers()), None)
    return tensor.device if tensor is not None else torch.device("cpu")


@cache
def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo where it exists, else what `platform` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.is_file() else []
    found = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
    return found or platform.processor() or platform.machine() or "unknown"


def machine_name(device: str | torch.device | None = None) -> str:
    """The GPU's name, or "CPU <model> (<n> cores)": the hardware that benchmark tables and records name.

    Torch's thread count is a setting of a run, not of the machine: tables that depend on it print it.
    """
    device = default_device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU {cpu_model()} ({os.cpu_count()} cores)"

"""Relative position encoder: an MLP from one scalar (a lag or a frequency) to one value per channel."""

from __future__ import annotations

import torch
from torch import nn

ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "silu": nn.SiLU, "gelu": nn.GELU}


def activation(name: str) -> nn.Module:
    """The activation module called `name`; a clear error for unknown names."""
    if name not in ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; expected one of {', '.join(sorted(ACTIVATIONS))}")
    return ACTIVATIONS[name]()


class Rpe(nn.Module):
    """Linear(1, dim) -> [LayerNorm, act, Linear(dim, dim)] x layers -> LayerNorm, act, Linear(dim, out).

    TNN's kernel generator. With ReLU it is piecewise linear in its input (paper 003, Prop. 1);
    FD-TNO uses a smooth activation (SiLU, GELU) because smoothness in frequency means decay in time.
    """

    def __init__(self, out_features: int, dim: int = 32, layers: int = 3, act: str = "relu") -> None:
        super().__init__()
        self.inp = nn.Linear(1, dim)
        self.hidden = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(dim), activation(act), nn.Linear(dim, dim)) for _ in range(layers)
        )
        self.out = nn.Sequential(nn.LayerNorm(dim), activation(act), nn.Linear(dim, out_features))

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        """positions (m,) -> (m, out_features)."""
        hidden = self.inp(positions.to(self.inp.weight.dtype).unsqueeze(-1))
        for layer in self.hidden:
            hidden = layer(hidden)
        return self.out(hidden)

"""TNN blocks: the gated Toeplitz unit (token + channel mixing), the GLU channel mixer, the residual block."""

from __future__ import annotations

import torch
from torch import nn

from forecaster.nn.attention.base import check_inputs, zero_padded
from forecaster.nn.tnn.fd import FdTno
from forecaster.nn.tnn.rpe import activation
from forecaster.nn.tnn.ski import SkiTno
from forecaster.nn.tnn.toeplitz import Tno

OPERATORS: dict[str, type[nn.Module]] = {"tno": Tno, "ski": SkiTno, "fd": FdTno}


def make_operator(kind: str, channels: int, causal: bool = False, **options) -> nn.Module:
    """Build the Toeplitz operator `kind` ("tno", "ski" or "fd") over `channels` channels."""
    if kind not in OPERATORS:
        raise ValueError(f"unknown Toeplitz operator {kind!r}; expected one of {', '.join(OPERATORS)}")
    return OPERATORS[kind](channels, causal=causal, **options)


class Gtu(nn.Module):
    """Gated Toeplitz unit: out = W_o(dropout(act(W_u x) * TNO(act(W_v x)))).

    With a key padding mask (True = real token) the operator input is zeroed at padded positions, so
    padding cannot reach valid outputs, and the output is zero there.
    """

    def __init__(
        self,
        d_model: int,
        operator: str = "tno",
        causal: bool = False,
        expand: int = 1,
        act: str = "silu",
        dropout: float = 0.0,
        **operator_options,
    ) -> None:
        super().__init__()
        hidden = expand * d_model
        self.u_proj = nn.Linear(d_model, hidden)
        self.v_proj = nn.Linear(d_model, hidden)
        self.out_proj = nn.Linear(hidden, d_model)
        self.act = activation(act)
        self.dropout = nn.Dropout(dropout)
        self.operator = make_operator(operator, hidden, causal=causal, **operator_options)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, n, d_model), key_padding_mask (B, n) bool -> (B, n, d_model)."""
        check_inputs(x, key_padding_mask, self.u_proj.in_features)
        u = self.act(self.u_proj(x))
        v = self.act(self.v_proj(x))
        out = self.out_proj(self.dropout(u * self.operator(zero_padded(v, key_padding_mask))))
        return zero_padded(out, key_padding_mask)


class Glu(nn.Module):
    """Gated linear unit channel mixer: out = W_o(act(W_1 x) * W_2 x)."""

    def __init__(self, d_model: int, expand: int = 2, act: str = "silu") -> None:
        super().__init__()
        hidden = expand * d_model
        self.gate = nn.Linear(d_model, hidden)
        self.value = nn.Linear(d_model, hidden)
        self.out_proj = nn.Linear(hidden, d_model)
        self.act = activation(act)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., d_model) -> (..., d_model)."""
        return self.out_proj(self.act(self.gate(x)) * self.value(x))


class TnnBlock(nn.Module):
    """Pre-norm residual TNN layer: x + GTU(norm(x)), then + GLU(norm(x)) (RMSNorm as in TNN)."""

    def __init__(
        self,
        d_model: int,
        operator: str = "tno",
        causal: bool = False,
        gtu_expand: int = 1,
        glu_expand: int = 2,
        dropout: float = 0.0,
        **operator_options,
    ) -> None:
        super().__init__()
        self.token_norm = nn.RMSNorm(d_model)
        self.gtu = Gtu(d_model, operator=operator, causal=causal, expand=gtu_expand, **operator_options)
        self.channel_norm = nn.RMSNorm(d_model)
        self.glu = Glu(d_model, expand=glu_expand)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, n, d_model) -> (B, n, d_model)."""
        x = x + self.dropout(self.gtu(self.token_norm(x), key_padding_mask=key_padding_mask))
        return x + self.dropout(self.glu(self.channel_norm(x)))

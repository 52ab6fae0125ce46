"""What the attention mixers share: input checks, head splitting, and the q/k/v + output projection frame.

Every mixer is built by `forecaster.nn.attention.build(name, d_model=, n_heads=, seq_len=, **options)` and
called as `mixer(x, key_padding_mask=None)` on x (B, n, d_model) with mask (B, n) bool, True = real token.
Padded positions never influence the outputs at real positions, even where they hold inf or NaN: padded
keys and values are zeroed by masked_fill (never by multiplying with the mask: 0 * inf = NaN) or masked
before they are mixed. The outputs at padded positions are zero, except those of the `skeleton` mixer's
default forecasting block, which leaves them as computed (the LRA encoder's pooling drops them). Random
components (Performer features, Reformer rotations, Linformer projections) come from the module's own seeded
generator, so two mixers built with the same options are the same function; LRA training redraws Performer's
and Reformer's on their `redraw_interval` (`redraw_random_components`).
"""

from __future__ import annotations

import abc

import torch
from torch import Tensor, nn


def check_key_padding_mask(mask: Tensor | None, batch: int, seq_len: int) -> None:
    """Raise a ValueError unless `mask` is None or a bool (batch, seq_len) tensor (True = real token)."""
    if mask is not None and (mask.dtype != torch.bool or tuple(mask.shape) != (batch, seq_len)):
        raise ValueError(
            f"key_padding_mask must be a bool tensor of shape ({batch}, {seq_len}), got "
            f"{mask.dtype} {tuple(mask.shape)}"
        )


def check_inputs(x: Tensor, key_padding_mask: Tensor | None, d_model: int) -> None:
    if x.dim() != 3 or x.shape[-1] != d_model:
        raise ValueError(f"expected x of shape (batch, length, {d_model}), got {tuple(x.shape)}")
    check_key_padding_mask(key_padding_mask, x.shape[0], x.shape[1])


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    batch, length, width = x.shape
    return x.view(batch, length, n_heads, width // n_heads).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    batch, heads, length, head_dim = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * head_dim)


def zero_padded(x: Tensor, key_padding_mask: Tensor | None) -> Tensor:
    """x (B, n, D) with the padded positions set to 0 by masked_fill: multiplying by a 0/1 mask would
    carry an inf or NaN under the padding (0 * inf = NaN) into every sum it enters."""
    return x if key_padding_mask is None else x.masked_fill(~key_padding_mask[..., None], 0.0)


def zero_padded_heads(x: Tensor, key_padding_mask: Tensor | None) -> Tensor:
    """`zero_padded` for per-head tensors (B, h, n, hd)."""
    return x if key_padding_mask is None else x.masked_fill(~key_padding_mask[:, None, :, None], 0.0)


def seeded_generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def redraw_random_components(model: nn.Module, step: int) -> int:
    """Before training step `step` (> 0), redraw the random components of every mixer in `model` whose
    `redraw_interval` divides it, in place and from the mixer's own seeded generator: a rerun draws the same
    sequence, and the buffer saved after training is the last one trained with. Returns how many redrew."""
    if step <= 0:
        return 0
    due = [module for module in model.modules()
           if getattr(module, "redraw_interval", 0) and step % module.redraw_interval == 0]  # fmt: skip
    for module in due:
        module.redraw()
    return len(due)


class MultiHeadMixer(nn.Module, abc.ABC):
    """Shared frame of the attention mixers: q, k, v projections, per-head `attend`, output projection.

    Subclasses implement `attend(q, k, v, key_padding_mask)` on (B, h, n, hd) tensors; the frame validates
    the input and zeroes the outputs at padded positions. `dropout` acts on the attention weights, or on
    the mixed values for the kernelized mixers that never form weights (linear, performer).
    """

    def __init__(self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.d_model, self.n_heads, self.seq_len = d_model, n_heads, seq_len
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    @abc.abstractmethod
    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        """Mix (B, h, n, hd) values; padded keys must not contribute."""

    def forward(self, x: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        check_inputs(x, key_padding_mask, self.d_model)
        q, k, v = (split_heads(part, self.n_heads) for part in self.qkv(x).chunk(3, dim=-1))
        mixed = self.out(merge_heads(self.attend(q, k, v, key_padding_mask)))
        return zero_padded(mixed, key_padding_mask)


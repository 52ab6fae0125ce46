"""Checks every sequence mixer must pass, shared by the attention, TNN and MRA test modules."""

from __future__ import annotations

import torch


def padding_mask(lengths: list[int], n: int) -> torch.Tensor:
    """(len(lengths), n) bool mask, True for the first `length` positions of each row."""
    return torch.arange(n)[None, :] < torch.tensor(lengths)[:, None]


def assert_padding_cannot_reach_valid_outputs(
    mixer: torch.nn.Module,
    x: torch.Tensor,
    mask: torch.Tensor,
    *,
    scale: float = 100.0,
    atol: float = 1e-10,
    rtol: float = 1e-10,
    zero_at_padding: bool = True,
) -> None:
    """Replacing padded inputs by large noise changes no valid output; padded outputs are 0 if asked."""
    garbage = x.clone()
    noise = torch.randn(int((~mask).sum()), x.shape[-1], generator=torch.Generator().manual_seed(9))
    garbage[~mask] = scale * noise.to(x.dtype)
    with torch.no_grad():
        out, out_garbage = mixer(x, key_padding_mask=mask), mixer(garbage, key_padding_mask=mask)
    assert out.shape == x.shape
    torch.testing.assert_close(out_garbage[mask], out[mask], atol=atol, rtol=rtol)
    if zero_at_padding:
        assert out[~mask].abs().max() == 0


# Padded values that a 0/1 mask would turn into NaN (0 * inf = NaN), and one whose products overflow.
OVERFLOWING = (float("inf"), float("-inf"), float("nan"), 1e30)


def assert_overflowing_padding_cannot_reach_valid_outputs(
    mixer: torch.nn.Module, x: torch.Tensor, mask: torch.Tensor, *, zero_at_padding: bool = True
) -> None:
    """Padded inputs of inf, -inf, NaN or 1e30 leave the valid outputs finite and equal to the oracle's, the
    same mixer with the padding set to 0; padded outputs are 0 if asked. Each run sees the same torch seed."""
    outputs = []
    for value in (0.0, *OVERFLOWING):
        torch.manual_seed(0)
        with torch.no_grad():
            outputs.append(mixer(x.masked_fill(~mask[..., None], value), key_padding_mask=mask))
    oracle, *overflowing = outputs
    for value, out in zip(OVERFLOWING, overflowing, strict=True):
        assert torch.isfinite(out[mask]).all(), f"padding of {value} reached valid outputs"
        torch.testing.assert_close(out[mask], oracle[mask], atol=1e-6, rtol=1e-6, msg=f"padding of {value}")
        if zero_at_padding:
            assert (out[~mask] == 0).all(), f"padding of {value}"

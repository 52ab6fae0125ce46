"""SKI-TNO (paper 003, Alg. 1): a sparse depthwise convolution plus a low-rank W A W^T Toeplitz part.

The low-rank part interpolates linearly from r inducing points evenly spaced on [0, n - 1]: W has two
nonzeros per row (rows sum to 1, one-hot at inducing points) and is applied by gather / index_add,
never as a dense n x r matrix. A is the r x r Toeplitz matrix A[i, j] = k(p_i - p_j), applied by FFT.
The kernel k(t) = RPE(x(t)) is a piecewise-linear function on [-1, 1] (zero at 0) of the inverse time
warp x(t) = sign(t) * decay^|t|, so any length maps into the same interpolation range.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from forecaster.checks import check_int, check_number
from forecaster.nn.tnn.toeplitz import toeplitz_matvec


def interpolation_weights(
    n: int, rank: int, dtype: torch.dtype = torch.float32, device: torch.device | str | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Linear interpolation of the points 0..n-1 from r = rank points evenly spaced on [0, n - 1].

    Returns (lo, hi, w_lo, w_hi), each of length n: row t of W is w_lo[t] at column lo[t] plus w_hi[t]
    at column hi[t] = lo[t] + 1. Integer arithmetic keeps the inducing points exactly one-hot.
    """
    if rank < 1 or rank > n:
        raise ValueError(f"rank must be in [1, n = {n}], got {rank}")
    t = torch.arange(n, device=device)
    if rank == 1:
        lo = torch.zeros_like(t)
        frac = torch.zeros(n, dtype=dtype, device=device)
        return lo, lo, 1.0 - frac, frac
    scaled = t * (rank - 1)
    lo = torch.clamp(scaled // (n - 1), max=rank - 2)
    frac = ((scaled - lo * (n - 1)).to(torch.float64) / (n - 1)).to(dtype)
    return lo, lo + 1, 1.0 - frac, frac


def time_warp(t: torch.Tensor, decay: float) -> torch.Tensor:
    """x(t) = sign(t) * decay^|t|: lags of any size land in [-1, 1], distant lags near 0."""
    return torch.sign(t) * torch.tensor(decay, dtype=t.dtype, device=t.device).pow(t.abs())


class SkiTno(nn.Module):
    """Sparse + low-rank Toeplitz operator in O(n + r log r) per channel (paper 003, Alg. 1).

    `causal=True` applies the paper's causally masked form x'_i = sum_{j <= i} w_i^T A w_j x_j
    (appendix B) exactly, using segment prefix sums instead of the sequential recursion, and a
    convolution that only looks back (lags 0 .. m - 1) for the sparse part.
    """

    def __init__(
        self,
        channels: int,
        rank: int = 64,
        sparse_width: int = 33,
        causal: bool = False,
        decay: float = 0.99,
        knots: int = 32,
    ) -> None:
        super().__init__()
        if check_int("sparse_width", sparse_width, minimum=1) % 2 == 0:
            raise ValueError(f"sparse_width must be a positive odd number, got {sparse_width}")
        check_int("rank", rank, minimum=2)
        check_number("decay", decay, above=0, below=1)
        check_int("knots", knots, minimum=1)
        self.channels = channels
        self.rank = rank
        self.sparse_width = sparse_width
        self.causal = causal
        self.decay = decay
        self.knots = knots
        bound = 1.0 / math.sqrt(sparse_width)
        self.sparse_weight = nn.Parameter(torch.empty(channels, sparse_width).uniform_(-bound, bound))
        # Knot values of the piecewise-linear RPE at linspace(-1, 1, 2 * knots + 1) minus the fixed zero at 0.
        self.knot_values = nn.Parameter(0.02 * torch.randn(2 * knots, channels))

    def rpe(self, x: torch.Tensor) -> torch.Tensor:
        """Piecewise-linear RPE on [-1, 1] with RPE(0) = 0: x (m,) -> (m, channels)."""
        zero = self.knot_values.new_zeros(1, self.channels)
        values = torch.cat([self.knot_values[: self.knots], zero, self.knot_values[self.knots :]], dim=0)
        u = (x.to(values.dtype).clamp(-1.0, 1.0) + 1.0) * self.knots
        left = u.floor().long().clamp(0, 2 * self.knots - 1)
        frac = (u - left.to(u.dtype)).unsqueeze(-1)
        return values[left] * (1.0 - frac) + values[left + 1] * frac

    def warped_kernel(self, t: torch.Tensor) -> torch.Tensor:
        """k(t) = RPE(x(t)) at real-valued lags t (m,) -> (m, channels)."""
        return self.rpe(time_warp(t.to(self.knot_values.dtype), self.decay))

    def rank_for(self, n: int) -> int:
        """The number of inducing points used for length n (never more than n)."""
        return min(self.rank, n)

    def inducing_kernel(self, n: int) -> torch.Tensor:
        """A's lags k(d * spacing), d = -(r-1) .. r-1, as (2r - 1, channels)."""
        r = self.rank_for(n)
        spacing = (n - 1) / (r - 1) if r > 1 else 0.0
        steps = torch.arange(-(r - 1), r, dtype=self.knot_values.dtype, device=self.knot_values.device)
        return self.warped_kernel(steps * spacing)

    def sparse(self, x: torch.Tensor) -> torch.Tensor:
        """The banded part, a depthwise convolution of width m: y[i] = sum_k w[k] x[i + k - left].

        left = m // 2 (bidirectional) or m - 1 (causal: lags 0 .. m - 1 only).
        """
        width = self.sparse_width
        left = width - 1 if self.causal else width // 2
        padded = F.pad(x.transpose(1, 2), (left, width - 1 - left))
        return F.conv1d(padded, self.sparse_weight.unsqueeze(1), groups=self.channels).transpose(1, 2)

    def low_rank(self, x: torch.Tensor) -> torch.Tensor:
        """W A W^T x (causal: only the j <= i entries of W A W^T), x (B, n, C) -> (B, n, C)."""
        n = x.shape[1]
        r = self.rank_for(n)
        lo, hi, w_lo, w_hi = interpolation_weights(n, r, dtype=x.dtype, device=x.device)
        kappa = self.inducing_kernel(n)
        if self.causal and r > 1:
            return self._causal_low_rank(x, lo, w_lo, w_hi, kappa)
        z = x.new_zeros(x.shape[0], r, x.shape[2])
        z = z.index_add(1, lo, x * w_lo[:, None]).index_add(1, hi, x * w_hi[:, None])
        y = toeplitz_matvec(z, kappa)
        return y[:, lo] * w_lo[:, None] + y[:, hi] * w_hi[:, None]

    @staticmethod
    def _causal_low_rank(
        x: torch.Tensor, lo: torch.Tensor, w_lo: torch.Tensor, w_hi: torch.Tensor, kappa: torch.Tensor
    ) -> torch.Tensor:
        """sum_{j <= i} w_i^T A w_j x_j without the O(n r) prefix states of the recursion.

        Tokens with lo = a form segment a. For token i in segment a, s_i = sum_{j <= i} w_j x_j is
        (W^T x)[b] for b < a, the finished segment a - 1's weight on point a, and the running sums of
        segment a on points a and a + 1. Only rows a and a + 1 of A s_i are needed; their b < a parts
        are strictly causal Toeplitz products of W^T x (lags >= 1 and >= 2), done by FFT.
        """
        batch, n, channels = x.shape
        r = (kappa.shape[0] + 1) // 2
        x_lo, x_hi = x * w_lo[:, None], x * w_hi[:, None]
        seg_lo = x.new_zeros(batch, r, channels).index_add(1, lo, x_lo)
        seg_hi = x.new_zeros(batch, r, channels).index_add(1, lo, x_hi)
        prev_hi = torch.cat([seg_hi.new_zeros(batch, 1, channels), seg_hi[:, :-1]], dim=1)
        projected = seg_lo + prev_hi  # W^T x
        strict = kappa.clone()
        strict[: r] = 0.0  # keep lags >= 1
        y1 = toeplitz_matvec(projected, strict)
        strict2 = strict.clone()
        strict2[r] = 0.0  # keep lags >= 2
        y2 = toeplitz_matvec(projected, strict2)
        y2_next = torch.cat([y2[:, 1:], y2.new_zeros(batch, 1, channels)], dim=1)
        before_lo = torch.cumsum(seg_lo, dim=1) - seg_lo
        before_hi = torch.cumsum(seg_hi, dim=1) - seg_hi
        run_lo = torch.cumsum(x_lo, dim=1) - before_lo[:, lo]
        run_hi = torch.cumsum(x_hi, dim=1) - before_hi[:, lo]
        k0, k_plus, k_minus = kappa[r - 1], kappa[r], kappa[r - 2]
        carried = prev_hi[:, lo]
        row_a = y1[:, lo] + k0 * (carried + run_lo) + k_minus * run_hi
        row_next = y2_next[:, lo] + k_plus * (carried + run_lo) + k0 * run_hi
        return row_a * w_lo[:, None] + row_next * w_hi[:, None]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, n, channels) -> (B, n, channels)."""
        return self.sparse(x) + self.low_rank(x)

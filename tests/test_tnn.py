"""TNN operators against dense oracles: Toeplitz matmuls, causality, SKI interpolation, FD spectra."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from mixer_checks import assert_padding_cannot_reach_valid_outputs, padding_mask

from forecaster.nn import attention
from forecaster.nn.tnn import (
    FdTno,
    Glu,
    Gtu,
    SkiTno,
    TnnBlock,
    Tno,
    fft_size,
    interpolation_weights,
    toeplitz_matvec,
)

CHANNELS = 3


def dense_toeplitz(lag_fn, n: int) -> torch.Tensor:
    """(C, n, n) with T[c, i, j] = lag_fn(i - j)[c], built entry by entry from the lag values."""
    lags = torch.arange(-(n - 1), n, dtype=torch.float64)
    values = lag_fn(lags)  # (2n - 1, C)
    i = torch.arange(n)
    index = i[:, None] - i[None, :] + n - 1
    return values[index].permute(2, 0, 1)


def apply_dense(matrix: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """matrix (C, n, n) applied per channel to x (B, n, C)."""
    return torch.einsum("cij,bjc->bic", matrix, x)


def extract_operator(op, n: int, channels: int) -> torch.Tensor:
    """(C, n, n) matrix of a per-channel linear operator, from its action on the identity."""
    eye = torch.eye(n, dtype=torch.float64)[:, :, None].expand(n, n, channels).contiguous()
    return op(eye).permute(2, 1, 0)


def dense_interpolation(n: int, r: int) -> torch.Tensor:
    lo, hi, w_lo, w_hi = interpolation_weights(n, r, dtype=torch.float64)
    w = torch.zeros(n, r, dtype=torch.float64)
    w[torch.arange(n), lo] += w_lo
    w[torch.arange(n), hi] += w_hi
    return w


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.mark.parametrize("n", [7, 16, 33])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("decay", [None, 0.9])
def test_tno_fft_equals_dense_toeplitz(n, causal, decay):
    op = Tno(CHANNELS, causal=causal, decay=decay, rpe_dim=8, rpe_layers=2).double()

    def lag_fn(lags):
        values = op.rpe(lags)
        if decay is not None:
            values = values * (decay ** lags.abs())[:, None]
        if causal:
            values = values * (lags >= 0).to(values.dtype)[:, None]
        return values

    x = torch.randn(2, n, CHANNELS, dtype=torch.float64)
    with torch.no_grad():
        expected = apply_dense(dense_toeplitz(lag_fn, n), x)
        torch.testing.assert_close(op(x), expected, rtol=1e-10, atol=1e-10)


def test_toeplitz_matvec_rejects_wrong_kernel_length():
    with pytest.raises(ValueError, match="2n - 1 = 9"):
        toeplitz_matvec(torch.zeros(1, 5, 2), torch.zeros(8, 2))


@pytest.mark.parametrize(
    "make",
    [
        lambda: Tno(CHANNELS, causal=True, rpe_dim=8, rpe_layers=2),
        lambda: FdTno(CHANNELS, causal=True, rpe_dim=8, rpe_layers=2),
        lambda: SkiTno(CHANNELS, rank=6, sparse_width=5, causal=True, decay=0.8, knots=4),
    ],
    ids=["tno", "fd", "ski"],
)
@pytest.mark.parametrize("n", [16, 37])
def test_causal_operators_ignore_the_future(make, n):
    op = make().double()
    with torch.no_grad():
        op_matrix = extract_operator(op, n, CHANNELS)
        assert op_matrix.abs().max() > 1e-3  # a non-trivial operator
        upper = torch.triu(op_matrix, diagonal=1)
        assert upper.abs().max() < 1e-10
        x = torch.randn(2, n, CHANNELS, dtype=torch.float64)
        for t in (0, n // 2, n - 2):
            changed = x.clone()
            changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :]) * 10
            torch.testing.assert_close(op(changed)[:, : t + 1], op(x)[:, : t + 1], rtol=0, atol=1e-6)
            assert not torch.allclose(op(changed)[:, t + 1 :], op(x)[:, t + 1 :])


@pytest.mark.parametrize("n, r", [(50, 8), (64, 64), (100, 7), (33, 5), (2, 2)])
def test_ski_interpolation_matrix(n, r):
    w = dense_interpolation(n, r)
    torch.testing.assert_close(w.sum(dim=1), torch.ones(n, dtype=torch.float64), rtol=0, atol=1e-12)
    assert ((w != 0).sum(dim=1) <= 2).all()
    lo, hi, _, _ = interpolation_weights(n, r)
    assert torch.equal(hi, lo + 1) and lo.min() == 0 and hi.max() == r - 1
    # Nonzeros only on the two inducing points around t.
    outside = w.clone()
    outside[torch.arange(n), lo] = 0
    outside[torch.arange(n), hi] = 0
    assert outside.abs().max() == 0
    # Linear interpolation reproduces linear functions: W @ p = t for the inducing points p.
    spacing = (n - 1) / (r - 1)
    p = torch.arange(r, dtype=torch.float64) * spacing
    torch.testing.assert_close(w @ p, torch.arange(n, dtype=torch.float64), rtol=0, atol=1e-9)
    # Identity at inducing points that are observation points.
    for a in range(r):
        if (a * (n - 1)) % (r - 1) == 0:
            expected = torch.zeros(r, dtype=torch.float64)
            expected[a] = 1.0
            assert torch.equal(w[a * (n - 1) // (r - 1)], expected)


def test_ski_rpe_is_piecewise_linear_with_zero_at_origin():
    op = SkiTno(CHANNELS, rank=4, sparse_width=3, knots=5).double()
    with torch.no_grad():
        knots = np.linspace(-1, 1, 11)
        values = torch.cat([op.knot_values[:5], torch.zeros(1, CHANNELS), op.knot_values[5:]]).numpy()
        x = torch.linspace(-1, 1, 97, dtype=torch.float64)
        expected = np.stack([np.interp(x.numpy(), knots, values[:, c]) for c in range(CHANNELS)], axis=1)
        np.testing.assert_allclose(op.rpe(x).numpy(), expected, rtol=0, atol=1e-12)
        assert op.rpe(torch.zeros(1, dtype=torch.float64)).abs().max() == 0


def warped_kernel_reference(op: SkiTno, lags: torch.Tensor) -> torch.Tensor:
    warped = torch.sign(lags) * op.decay ** lags.abs()
    return op.rpe(warped)


@pytest.mark.parametrize("causal", [False, True])
def test_ski_full_rank_low_rank_part_is_the_dense_warped_kernel(causal):
    n = 24
    op = SkiTno(CHANNELS, rank=n, sparse_width=5, decay=0.9, knots=6, causal=causal).double()
    with torch.no_grad():
        low_rank = extract_operator(op.low_rank, n, CHANNELS)
        dense = dense_toeplitz(lambda lags: warped_kernel_reference(op, lags), n)
        if causal:
            dense = torch.tril(dense)
        torch.testing.assert_close(low_rank, dense, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n, r", [(40, 6), (61, 9), (32, 32)])
@pytest.mark.parametrize("causal", [False, True])
def test_ski_operator_is_sparse_band_plus_w_a_wt(n, r, causal):
    m = 5
    op = SkiTno(CHANNELS, rank=r, sparse_width=m, decay=0.95, knots=8, causal=causal).double()
    with torch.no_grad():
        w = dense_interpolation(n, r)
        p = torch.arange(r, dtype=torch.float64) * (n - 1) / (r - 1)
        diff = p[:, None] - p[None, :]
        a = warped_kernel_reference(op, diff.reshape(-1)).reshape(r, r, CHANNELS).permute(2, 0, 1)
        low_rank = w @ a @ w.T
        if causal:
            low_rank = torch.tril(low_rank)
        taps = op.sparse_weight  # (C, m), a cross-correlation
        band = torch.zeros(CHANNELS, n, n, dtype=torch.float64)
        offset = m - 1 if causal else m // 2
        for i in range(n):
            for k in range(m):
                j = i + k - offset
                if 0 <= j < n:
                    band[:, i, j] = taps[:, k]
        operator = extract_operator(op, n, CHANNELS)
        torch.testing.assert_close(operator, band + low_rank, rtol=1e-10, atol=1e-10)
        if not causal:
            rest = operator - extract_operator(op.sparse, n, CHANNELS)
            for c in range(CHANNELS):
                assert torch.linalg.matrix_rank(rest[c], atol=1e-9) <= r


def test_ski_rank_never_exceeds_length_and_validates_arguments():
    op = SkiTno(CHANNELS, rank=64, sparse_width=3).double()
    x = torch.randn(1, 10, CHANNELS, dtype=torch.float64)
    assert op.rank_for(10) == 10 and op(x).shape == x.shape
    assert op(x[:, :1]).shape == (1, 1, CHANNELS)
    with pytest.raises(ValueError, match="odd"):
        SkiTno(CHANNELS, sparse_width=4)
    with pytest.raises(ValueError, match="decay"):
        SkiTno(CHANNELS, decay=1.0)


@pytest.mark.parametrize("n", [5, 16, 23])
def test_fd_bidirectional_is_toeplitz_of_irfft_lags_with_real_outputs(n):
    op = FdTno(CHANNELS, causal=False, rpe_dim=8, rpe_layers=2).double()
    size = fft_size(n)
    assert size >= 2 * n and size & (size - 1) == 0
    with torch.no_grad():
        response = op.frequency_response(n)
        assert response.shape == (size // 2 + 1, CHANNELS)
        assert response.imag[0].abs().max() == 0 and response.imag[-1].abs().max() == 0
        lags = torch.fft.irfft(response, n=size, dim=0)
        dense = dense_toeplitz(lambda t: lags[t.long() % size], n)
        x = torch.randn(2, n, CHANNELS, dtype=torch.float64)
        y = op(x)
        torch.testing.assert_close(y, apply_dense(dense, x), rtol=1e-10, atol=1e-10)
        # The full complex product with the Hermitian extension of H is real and equals the output.
        full = torch.cat([response, response[1:-1].flip(0).conj()], dim=0)
        complex_out = torch.fft.ifft(torch.fft.fft(x, n=size, dim=1) * full, dim=1)[:, :n]
        assert complex_out.imag.abs().max() < 1e-12
        torch.testing.assert_close(complex_out.real, y, rtol=1e-10, atol=1e-10)


def test_fd_causal_response_is_a_hilbert_pair():
    n = 20
    op = FdTno(CHANNELS, causal=True, rpe_dim=8, rpe_layers=2).double()
    size = fft_size(n)
    with torch.no_grad():
        omega = torch.linspace(0, torch.pi, size // 2 + 1, dtype=torch.float64)
        response = op.frequency_response(n)
        torch.testing.assert_close(response.real, op.rpe(omega), rtol=1e-10, atol=1e-10)
        kernel = torch.fft.irfft(response, n=size, dim=0)
        assert kernel[size // 2 + 1 :].abs().max() < 1e-12  # zero at negative lags
        assert kernel[1 : size // 2].abs().max() > 1e-3


def test_gtu_glu_and_block_shapes_and_gradients():
    x = torch.randn(2, 19, 8, requires_grad=True)
    for operator in ("tno", "ski", "fd"):
        block = TnnBlock(8, operator=operator, causal=operator != "ski")
        y = block(x)
        assert y.shape == x.shape and torch.isfinite(y).all()
        y.square().mean().backward()
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in block.parameters())
    assert Glu(8)(x).shape == x.shape
    with pytest.raises(ValueError, match="unknown Toeplitz operator"):
        Gtu(8, operator="nope")


@pytest.mark.parametrize("name", ["tnn", "ski_tnn", "fd_tnn"])
@pytest.mark.parametrize("causal", [False, True])
def test_mixer_padding_cannot_reach_valid_outputs(name, causal):
    mixer = attention.build(name, d_model=12, n_heads=2, seq_len=40, causal=causal).double()
    x = torch.randn(3, 40, 12, dtype=torch.float64)
    assert_padding_cannot_reach_valid_outputs(mixer, x, padding_mask([40, 27, 9], 40))
    assert name in attention.names()

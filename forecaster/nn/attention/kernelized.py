"""Kernelized attention without the n x n matrix: Performer (random features) and linear attention."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from forecaster.checks import check_int
from forecaster.nn.attention.base import MultiHeadMixer, seeded_generator, zero_padded_heads
from forecaster.nn.attention.registry import register


def _orthogonal_gaussian(n_rows: int, dim: int, generator: torch.Generator) -> Tensor:
    """Rows in blocks of orthonormal directions with chi-distributed norms (ORF of Performer, sec. 2.4)."""
    blocks = []
    for _ in range(math.ceil(n_rows / dim)):
        q, r = torch.linalg.qr(torch.randn(dim, dim, generator=generator, dtype=torch.float64))
        # Sign fix: without it Householder QR biases each direction into a half-space (not Haar).
        blocks.append((q * torch.sign(torch.diagonal(r))).T)
    directions = torch.cat(blocks)[:n_rows]
    norms = torch.randn(n_rows, dim, generator=generator, dtype=torch.float64).norm(dim=1, keepdim=True)
    return (directions * norms).float()


@register("performer")
class PerformerAttention(MultiHeadMixer):
    """Performer FAVOR+ (Choromanski et al., 2021, "Rethinking Attention with Performers", ICLR).

    softmax(q k^T / sqrt(hd)) is estimated without bias by positive random features
    phi(x) = exp(w^T x - |x|^2 / 2) / sqrt(m) with orthogonal w; cost is linear in n. The features live in
    a buffer (saved with the weights); `redraw()` draws new ones from the module's seeded generator, which LRA
    training does every `redraw_interval` steps as performer-pytorch's feature_redraw_interval (default
    1000) does; 0 never redraws, as the Nystromformer LRA code, which calls its FastAttention directly.
    Padded keys are zeroed and their features removed.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        dropout: float = 0.0,
        n_features: int = 256,
        seed: int = 0,
        eps: float = 1e-6,
        redraw_interval: int = 1000,
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        self.n_features, self.eps = n_features, eps
        self.redraw_interval = check_int("performer redraw_interval", redraw_interval, minimum=0)
        self._generator = seeded_generator(seed)
        self.register_buffer("features", _orthogonal_gaussian(n_features, self.head_dim, self._generator))

    def redraw(self) -> None:
        """Draw fresh random features in place (Performer redraws them periodically during training)."""
        drawn = _orthogonal_gaussian(self.n_features, self.head_dim, self._generator)
        self.features.copy_(drawn.to(self.features))

    def _feature_map(self, x: Tensor, stabilizer_dims: tuple[int, ...]) -> Tensor:
        x = x * self.head_dim**-0.25
        projected = torch.einsum("bhnd,md->bhnm", x, self.features.to(x.dtype))
        half_norm = 0.5 * x.pow(2).sum(dim=-1, keepdim=True)
        # Any shift that is constant over the keys (or over one query's features) cancels in the ratio.
        shift = projected.amax(dim=stabilizer_dims, keepdim=True).detach()
        return (torch.exp(projected - half_norm - shift) + self.eps) / math.sqrt(self.n_features)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        k, v = zero_padded_heads(k, key_padding_mask), zero_padded_heads(v, key_padding_mask)
        phi_q = self._feature_map(q, stabilizer_dims=(-1,))
        phi_k = zero_padded_heads(self._feature_map(k, stabilizer_dims=(-2, -1)), key_padding_mask)
        context = torch.einsum("bhnm,bhnd->bhmd", phi_k, v)
        normalizer = torch.einsum("bhnm,bhm->bhn", phi_q, phi_k.sum(dim=2))
        return self.dropout(torch.einsum("bhnm,bhmd->bhnd", phi_q, context) / normalizer[..., None])


@register("linear")
class LinearAttention(MultiHeadMixer):
    """Linear attention (Katharopoulos et al., 2020, "Transformers are RNNs", ICML).

    Similarity phi(q)^T phi(k) with phi = elu + 1, normalized over the keys; the n x n matrix is never
    formed, so cost is linear in n. Padded keys get phi = 0.
    """

    def __init__(
        self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0, eps: float = 1e-6
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        self.eps = eps

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
        phi_k, v = zero_padded_heads(phi_k, key_padding_mask), zero_padded_heads(v, key_padding_mask)
        context = torch.einsum("bhnm,bhnd->bhmd", phi_k, v)
        normalizer = torch.einsum("bhnm,bhm->bhn", phi_q, phi_k.sum(dim=2)) + self.eps
        return self.dropout(torch.einsum("bhnm,bhmd->bhnd", phi_q, context) / normalizer[..., None])



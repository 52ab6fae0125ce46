"""The attention zoo: softmax and the efficient sequence mixers that S3Attention is compared with.

Every mixer is built by `forecaster.nn.attention.get(name, d_model=, n_heads=, seq_len=, **options)` and
called as `mixer(x, key_padding_mask=None)` on x (B, n, d_model) with mask (B, n) bool, True = real token.
Padded positions never influence the outputs at real positions (padded keys and values are zeroed or masked
before they are mixed), and the outputs at padded positions are zero. Random components (Performer
features, Reformer rotations, Linformer projections) come from the module's own seeded generator, so two
mixers built with the same options are the same function.
"""

from __future__ import annotations

import abc
import math
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from forecaster.nn.attention.registry import register
from forecaster.nn.skeleton import S3AttentionMixer

# Logit given to a token's own key in Reformer: below any real logit, far above a padded key's logit.
_SELF_LOGIT = -5e4


def _check_inputs(x: Tensor, key_padding_mask: Tensor | None, d_model: int) -> None:
    if x.dim() != 3 or x.shape[-1] != d_model:
        raise ValueError(f"expected x of shape (batch, length, {d_model}), got {tuple(x.shape)}")
    if key_padding_mask is not None and (
        key_padding_mask.shape != x.shape[:2] or key_padding_mask.dtype != torch.bool
    ):
        raise ValueError(
            f"expected key_padding_mask bool of shape {tuple(x.shape[:2])}, "
            f"got {key_padding_mask.dtype} {tuple(key_padding_mask.shape)}"
        )


def _split_heads(x: Tensor, n_heads: int) -> Tensor:
    batch, length, width = x.shape
    return x.view(batch, length, n_heads, width // n_heads).transpose(1, 2)


def _merge_heads(x: Tensor) -> Tensor:
    batch, heads, length, head_dim = x.shape
    return x.transpose(1, 2).reshape(batch, length, heads * head_dim)


def _zero_padded(x: Tensor, key_padding_mask: Tensor | None) -> Tensor:
    return x if key_padding_mask is None else x * key_padding_mask[..., None].to(x.dtype)


def _seeded_generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


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
        _check_inputs(x, key_padding_mask, self.d_model)
        q, k, v = (_split_heads(part, self.n_heads) for part in self.qkv(x).chunk(3, dim=-1))
        mixed = self.out(_merge_heads(self.attend(q, k, v, key_padding_mask)))
        return _zero_padded(mixed, key_padding_mask)


@register("softmax")
class SoftmaxAttention(MultiHeadMixer):
    """Full softmax attention (Vaswani et al., 2017, "Attention Is All You Need", NeurIPS).

    `kernel="sdpa"` lets torch pick the fastest scaled_dot_product_attention backend (on CPU and recent GPUs
    a memory-efficient kernel that never stores the n x n matrix); `kernel="math"` forces the textbook path
    that materializes it, which is what the quadratic memory of the papers' tables measures.
    """

    def __init__(
        self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0, kernel: str = "sdpa"
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        if kernel not in ("sdpa", "math"):
            raise ValueError(f"softmax kernel must be 'sdpa' or 'math', got {kernel!r}")
        self.kernel = kernel

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        attn_mask = None if key_padding_mask is None else key_padding_mask[:, None, None, :]
        dropout_p = self.dropout.p if self.training else 0.0
        with sdpa_kernel(SDPBackend.MATH) if self.kernel == "math" else nullcontext():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)


@register("linformer")
class LinformerAttention(MultiHeadMixer):
    """Linformer (Wang et al., 2020, "Linformer: Self-Attention with Linear Complexity", arXiv:2006.04768).

    Keys and values are projected along the sequence to `proj_dim` rows by per-head matrices E and F that
    belong to this instance (never shared across layers). Padded keys and values are zeroed before the
    projection, so they contribute nothing. E, F ~ N(0, 1/seq_len) keep the projected rows at the scale of
    the keys; inputs shorter than seq_len use the first n columns.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        dropout: float = 0.0,
        proj_dim: int = 256,
        seed: int = 0,
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        generator = _seeded_generator(seed)
        std = 1.0 / math.sqrt(seq_len)
        self.proj_k = nn.Parameter(torch.randn(n_heads, proj_dim, seq_len, generator=generator) * std)
        self.proj_v = nn.Parameter(torch.randn(n_heads, proj_dim, seq_len, generator=generator) * std)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        length = k.shape[2]
        if length > self.seq_len:
            raise ValueError(f"linformer was built for seq_len={self.seq_len}, got length {length}")
        if key_padding_mask is not None:
            keep = key_padding_mask[:, None, :, None].to(k.dtype)
            k, v = k * keep, v * keep
        k = torch.einsum("hpn,bhnd->bhpd", self.proj_k[:, :, :length], k)
        v = torch.einsum("hpn,bhnd->bhpd", self.proj_v[:, :, :length], v)
        dropout_p = self.dropout.p if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)


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
    a buffer (saved with the weights); `redraw_features()` draws new ones from the module's seeded generator.
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
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        self.n_features, self.eps = n_features, eps
        self._generator = _seeded_generator(seed)
        self.register_buffer("features", _orthogonal_gaussian(n_features, self.head_dim, self._generator))

    def redraw_features(self) -> None:
        """Draw fresh random features (Performer redraws them periodically during training)."""
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
        if key_padding_mask is not None:
            keep = key_padding_mask[:, None, :, None].to(k.dtype)
            k, v = k * keep, v * keep
        phi_q = self._feature_map(q, stabilizer_dims=(-1,))
        phi_k = self._feature_map(k, stabilizer_dims=(-2, -1))
        if key_padding_mask is not None:
            phi_k = phi_k * keep
        context = torch.einsum("bhnm,bhnd->bhmd", phi_k, v)
        normalizer = torch.einsum("bhnm,bhm->bhn", phi_q, phi_k.sum(dim=2))
        return self.dropout(torch.einsum("bhnm,bhmd->bhnd", phi_q, context) / normalizer[..., None])


def _segment_means(x: Tensor, n_segments: int) -> Tensor:
    """Means of `n_segments` contiguous, nearly equal segments along dim -2 (Nystromformer landmarks)."""
    length = x.shape[-2]
    segment = torch.arange(length, device=x.device) * n_segments // length
    averaging = F.one_hot(segment, n_segments).T.to(x.dtype)
    averaging = averaging / averaging.sum(dim=1, keepdim=True)
    return averaging @ x


def iterative_pinv(matrix: Tensor, n_iter: int) -> Tensor:
    """Moore-Penrose pseudo-inverse by the cubic Newton iteration of Nystromformer (Razavi et al., 2014).

    Starts from Z0 = A^T / (max column sum * max row sum) of each matrix, which guarantees convergence for
    the nonnegative row-stochastic matrices that softmax produces.
    """
    abs_matrix = matrix.abs()
    scale = abs_matrix.sum(dim=-2).amax(dim=-1) * abs_matrix.sum(dim=-1).amax(dim=-1)
    z = matrix.transpose(-1, -2) / scale[..., None, None]
    identity = torch.eye(matrix.shape[-1], dtype=matrix.dtype, device=matrix.device)
    for _ in range(n_iter):
        az = matrix @ z
        z = 0.25 * z @ (13 * identity - az @ (15 * identity - az @ (7 * identity - az)))
    return z


@register("nystromformer")
class NystromAttention(MultiHeadMixer):
    """Nystromformer (Xiong et al., 2021, "Nystromformer: A Nystrom-Based Algorithm for Approximating
    Self-Attention", AAAI).

    softmax(QK^T) ~ softmax(Q K~^T) pinv(softmax(Q~ K~^T)) softmax(Q~ K^T) with segment-mean landmarks
    Q~, K~ and an iterative pseudo-inverse; a depthwise convolution over the sequence of V (one filter per
    head, `conv_kernel` taps, 0 disables it) adds a local skip path. Padded q, k, v are zeroed and padded
    keys are masked out of the last factor.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        dropout: float = 0.0,
        n_landmarks: int = 64,
        pinv_iterations: int = 6,
        conv_kernel: int = 35,
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        if conv_kernel and conv_kernel % 2 == 0:
            raise ValueError(f"nystromformer conv_kernel must be odd (or 0 to disable), got {conv_kernel}")
        self.n_landmarks, self.pinv_iterations = n_landmarks, pinv_iterations
        self.conv = (
            nn.Conv2d(
                n_heads, n_heads, (conv_kernel, 1), padding=(conv_kernel // 2, 0), groups=n_heads, bias=False
            )
            if conv_kernel
            else None
        )

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        scale = self.head_dim**-0.25
        q, k = q * scale, k * scale
        if key_padding_mask is not None:
            keep = key_padding_mask[:, None, :, None].to(q.dtype)
            q, k, v = q * keep, k * keep, v * keep
        n_landmarks = min(self.n_landmarks, q.shape[2])
        q_landmarks, k_landmarks = _segment_means(q, n_landmarks), _segment_means(k, n_landmarks)
        kernel_1 = torch.softmax(q @ k_landmarks.transpose(-1, -2), dim=-1)
        kernel_2 = torch.softmax(q_landmarks @ k_landmarks.transpose(-1, -2), dim=-1)
        logits_3 = q_landmarks @ k.transpose(-1, -2)
        if key_padding_mask is not None:
            logits_3 = logits_3.masked_fill(~key_padding_mask[:, None, None, :], torch.finfo(q.dtype).min)
        kernel_3 = self.dropout(torch.softmax(logits_3, dim=-1))
        mixed = (kernel_1 @ iterative_pinv(kernel_2, self.pinv_iterations)) @ (kernel_3 @ v)
        return mixed if self.conv is None else mixed + self.conv(v)


@register("reformer")
class LSHAttention(nn.Module):
    """Reformer LSH attention (Kitaev et al., 2020, "Reformer: The Efficient Transformer", ICLR).

    Queries and keys share one projection (keys are the unit-normalized queries). Each of `n_hashes` rounds
    hashes tokens by random rotations into `n_buckets` buckets (argmax of [xR, -xR]), sorts by bucket and
    position, and attends within chunks of `chunk_len` plus the previous chunk. A token never attends to
    itself unless it has no other key. Rounds are combined by their log-sum-exp weights. Padded tokens go
    to an extra last bucket, so their values never change how real tokens are chunked.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        seq_len: int,
        dropout: float = 0.0,
        n_hashes: int = 2,
        chunk_len: int = 64,
        n_buckets: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        n_buckets = n_buckets if n_buckets is not None else max(1, 2 * (seq_len // (2 * chunk_len)))
        if n_buckets != 1 and n_buckets % 2:
            raise ValueError(f"reformer n_buckets must be 1 or even, got {n_buckets}")
        self.d_model, self.n_heads, self.seq_len = d_model, n_heads, seq_len
        self.head_dim = d_model // n_heads
        self.n_hashes, self.chunk_len, self.n_buckets = n_hashes, chunk_len, n_buckets
        self.qk = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self._generator = _seeded_generator(seed)
        self.register_buffer("rotations", self._draw_rotations())

    def _draw_rotations(self) -> Tensor:
        return torch.randn(
            self.head_dim, self.n_hashes, max(1, self.n_buckets // 2), generator=self._generator
        )

    def redraw_rotations(self) -> None:
        """Draw fresh hash rotations from the module's seeded generator."""
        self.rotations.copy_(self._draw_rotations().to(self.rotations))

    def _buckets(self, qk: Tensor, valid: Tensor) -> Tensor:
        """Bucket ids (B, h, n_hashes, n); padded tokens get the extra bucket n_buckets."""
        batch, heads, length, _ = qk.shape
        if self.n_buckets == 1:
            buckets = torch.zeros(batch, heads, self.n_hashes, length, dtype=torch.long, device=qk.device)
        else:
            rotated = torch.einsum("bhnd,dkr->bhknr", qk, self.rotations.to(qk.dtype))
            buckets = torch.cat([rotated, -rotated], dim=-1).argmax(dim=-1)
        return buckets.masked_fill(~valid[:, None, None, :], self.n_buckets)

    def forward(self, x: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        _check_inputs(x, key_padding_mask, self.d_model)
        batch, length, _ = x.shape
        padded_length = math.ceil(length / self.chunk_len) * self.chunk_len
        valid = (
            key_padding_mask if key_padding_mask is not None else x.new_ones(batch, length, dtype=torch.bool)
        )
        x = F.pad(_zero_padded(x, valid), (0, 0, 0, padded_length - length))
        valid = F.pad(valid, (0, padded_length - length), value=False)
        qk = _split_heads(self.qk(x), self.n_heads)
        v = _split_heads(self.value(x), self.n_heads)

        buckets = self._buckets(qk, valid)
        rounds = torch.arange(self.n_hashes, device=x.device)[:, None]
        positions = torch.arange(padded_length, device=x.device)
        sort_keys = (rounds * (self.n_buckets + 1) + buckets) * padded_length + positions
        order = sort_keys.flatten(2).argsort(dim=-1)  # (B, h, R * n)
        token = order % padded_length

        def gather(tensor: Tensor) -> Tensor:
            return tensor.gather(2, token[..., None].expand(-1, -1, -1, tensor.shape[-1]))

        n_chunks = self.n_hashes * padded_length // self.chunk_len
        chunk_shape = (batch, self.n_heads, n_chunks, self.chunk_len)
        queries = gather(qk).view(*chunk_shape, self.head_dim)
        values = gather(v).view(*chunk_shape, self.head_dim)
        query_token = token.view(chunk_shape)
        key_valid = valid.gather(1, token.flatten(1)).view(chunk_shape)
        keys = F.normalize(queries, dim=-1)
        if n_chunks > 1:

            def with_previous(tensor: Tensor) -> Tensor:
                return torch.cat([tensor, tensor.roll(1, dims=2)], dim=3)

            keys, values, key_token, key_valid = map(with_previous, (keys, values, query_token, key_valid))
        else:
            key_token = query_token

        logits = queries @ keys.transpose(-1, -2) * self.head_dim**-0.5
        logits = logits.masked_fill(query_token[..., None] == key_token[..., None, :], _SELF_LOGIT)
        logits = logits.masked_fill(~key_valid[..., None, :], torch.finfo(logits.dtype).min)
        log_normalizer = logits.logsumexp(dim=-1, keepdim=True)
        attended = self.dropout(torch.exp(logits - log_normalizer)) @ values

        unsort = order.argsort(dim=-1)
        attended = attended.flatten(2, 3).gather(2, unsort[..., None].expand(-1, -1, -1, self.head_dim))
        log_normalizer = log_normalizer.flatten(2).gather(2, unsort)
        attended = attended.view(batch, self.n_heads, self.n_hashes, padded_length, self.head_dim)
        round_weights = torch.softmax(
            log_normalizer.view(batch, self.n_heads, self.n_hashes, padded_length), 2
        )
        mixed = (attended * round_weights[..., None]).sum(dim=2)
        mixed = self.out(_merge_heads(mixed))[:, :length]
        return _zero_padded(mixed, key_padding_mask)


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
        if key_padding_mask is not None:
            keep = key_padding_mask[:, None, :, None].to(k.dtype)
            phi_k, v = phi_k * keep, v * keep
        context = torch.einsum("bhnm,bhnd->bhmd", phi_k, v)
        normalizer = torch.einsum("bhnm,bhm->bhn", phi_q, phi_k.sum(dim=2)) + self.eps
        return self.dropout(torch.einsum("bhnm,bhmd->bhnd", phi_q, context) / normalizer[..., None])


@register("local")
class LocalAttention(MultiHeadMixer):
    """Sliding-window attention (the "Local Attention" baseline of Tay et al., 2021, Long Range Arena, ICLR).

    Token i attends to the real tokens j with |i - j| <= window. Computed blockwise (blocks of `window`
    tokens see their own and both neighbouring blocks), so memory grows as n * window, not n^2.
    """

    def __init__(
        self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0, window: int = 64
    ) -> None:
        super().__init__(d_model, n_heads, seq_len, dropout)
        if window < 1:
            raise ValueError(f"local window must be >= 1, got {window}")
        self.window = window

    def attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Tensor | None) -> Tensor:
        batch, heads, length, head_dim = q.shape
        block = min(self.window, length)
        n_blocks = math.ceil(length / block)
        pad = n_blocks * block - length
        valid = (
            key_padding_mask if key_padding_mask is not None else q.new_ones(batch, length, dtype=torch.bool)
        )
        # Keys and values padded by one block on each side; block b sees padded blocks b, b+1, b+2.
        k_ext = F.pad(k, (0, 0, block, block + pad)).unfold(2, 3 * block, block)  # (B, h, nb, hd, 3blk)
        v_ext = F.pad(v, (0, 0, block, block + pad)).unfold(2, 3 * block, block)
        valid_ext = F.pad(valid, (block, block + pad), value=False).unfold(1, 3 * block, block)
        q_blocks = F.pad(q, (0, 0, 0, pad)).view(batch, heads, n_blocks, block, head_dim)

        query_pos = torch.arange(n_blocks * block, device=q.device).view(n_blocks, block, 1)
        key_pos = (torch.arange(n_blocks, device=q.device)[:, None] * block - block) + torch.arange(
            3 * block, device=q.device
        )
        in_window = (query_pos - key_pos[:, None, :]).abs() <= self.window
        allowed = in_window[None] & valid_ext[:, :, None, :]  # (B, nb, blk, 3blk)

        logits = (q_blocks @ k_ext) * head_dim**-0.5
        logits = logits.masked_fill(~allowed[:, None], torch.finfo(q.dtype).min)
        weights = self.dropout(torch.softmax(logits, dim=-1))
        mixed = weights @ v_ext.transpose(-1, -2)
        return mixed.reshape(batch, heads, n_blocks * block, head_dim)[:, :, :length]


@register("fnet")
class FourierMixing(nn.Module):
    """FNet token mixing (Lee-Thorp et al., 2022, "FNet: Mixing Tokens with Fourier Transforms", NAACL).

    The real part of the 2D DFT over (sequence, hidden); parameter-free. The DFT is orthonormal (scaled by
    1/sqrt(n * d)): FNet's post-LN blocks absorb any scale, but in the pre-LN LRA blocks an unscaled DFT
    would grow the residual stream by sqrt(n * d) per layer. Padded positions are zeroed first, so only
    their count (the transform length) is visible to real tokens, never their values.
    """

    def __init__(self, d_model: int, n_heads: int, seq_len: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.d_model, self.n_heads, self.seq_len = d_model, n_heads, seq_len
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        _check_inputs(x, key_padding_mask, self.d_model)
        x = _zero_padded(x, key_padding_mask)
        spectral = x if x.dtype in (torch.float32, torch.float64) else x.float()  # no half-precision FFTs
        mixed = torch.fft.fft2(spectral, dim=(-2, -1), norm="ortho").real.to(x.dtype)
        return _zero_padded(self.dropout(mixed), key_padding_mask)


# S3Attention (papers 000/001; SKTformer in 002): SkeletonAttention(Smoother(x)), padded positions zeroed
# before the Smoother and the mask passed on to the sampled keys; the module lives with its parts.
register("skeleton")(S3AttentionMixer)

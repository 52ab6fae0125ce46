"""Long Range Arena classifiers around any registered sequence mixer (REFERENCE.md section 3).

The common LRA encoder of the Nystromformer / Transformer-LS code bases: token embedding (or a Linear(1, D)
embedding of continuous pixels), learned positions, pre-LN blocks `x += mixer(LN(x))`, `x += MLP(LN(x))`
(GELU), a final LN, and mean pooling over the real tokens (or over all seq_len positions, or a CLS token).
`LRAClassifier` puts a Linear -> ReLU -> Linear head on the pooled vector; `LRADualClassifier` (Retrieval)
encodes both documents with the same encoder and classifies [a, b, a * b, a - b].
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from forecaster.checks import MAX_LAYERS, MAX_STEPS, MAX_WIDTH, setting
from forecaster.models.config import ModelConfig
from forecaster.models.registry import MODELS
from forecaster.nn import attention
from forecaster.nn.attention.base import zero_padded

# "mean-all" divides the real tokens' sum by seq_len, as the reference S3Attention LRA code pools (its
# lra/model.py zeroes padded outputs, model_wrapper.py averages over all 2048 positions; REFERENCE.md
# section 5).
POOLINGS = ("mean", "mean-all", "cls")


@dataclass(frozen=True)
class LRAConfig(ModelConfig):
    """Everything needed to rebuild an LRA classifier; `vocab_size=None` means continuous pixel inputs."""

    label = "LRA"

    mixer: str = setting("softmax", "registered sequence mixer", cli=False)
    # Upper bounds (forecaster.checks): a bundle's sizes are checked before any tensor is allocated; a
    # million classes or tokens is beyond any LRA task (ten classes, a vocabulary of a few hundred).
    n_classes: int = setting(10, "classes of the task", minimum=2, maximum=1_000_000, cli=False)
    seq_len: int = setting(2048, "longest input", minimum=1, maximum=MAX_STEPS, cli=False)
    vocab_size: int | None = setting(
        None, "token vocabulary (null: pixels)", minimum=2, maximum=1_000_000, cli=False
    )
    d_model: int = setting(64, "width D", minimum=1, maximum=MAX_WIDTH)
    n_heads: int = setting(2, "heads", minimum=1, maximum=MAX_WIDTH)
    n_layers: int = setting(2, "blocks", minimum=1, maximum=MAX_LAYERS)
    mlp_dim: int = setting(128, "hidden width of each block's MLP", minimum=1, maximum=MAX_WIDTH)
    hidden_dim: int = setting(128, "hidden width of the classification head", minimum=1, maximum=MAX_WIDTH)
    dropout: float = setting(0.1, "dropout of embeddings, MLP and residuals", minimum=0, below=1)
    pooling: str = setting(
        "mean",
        "sequence pooling: mean (real tokens), mean-all (over all seq_len positions), cls",
        choices=POOLINGS,
    )
    pad_id: int = setting(0, "token id of padding", minimum=0, cli=False)
    mixer_options: dict = setting({}, "options of the mixer", cli=False)


class PreLNBlock(nn.Module):
    """`x += dropout(mixer(LN(x)))`, `x += dropout(MLP(LN(x)))`. Block `layer` of a mixer drawing random
    components (index sets, features, projections) draws them from its options' seed + `layer`, as the
    forecasting encoder's layers do: all of them had drawn the same ones, where the reference code draws
    each layer's afresh."""

    def __init__(self, config: LRAConfig, mixer_len: int, layer: int) -> None:
        super().__init__()
        self.mixer_norm = nn.LayerNorm(config.d_model)
        options, declared = config.mixer_options, attention.declared_options(config.mixer)
        if "seed" in declared:
            options = {**options, "seed": options.get("seed", declared["seed"].default) + layer}
        self.mixer = attention.build(
            config.mixer, d_model=config.d_model, n_heads=config.n_heads, seq_len=mixer_len, **options
        )
        self.mlp_norm = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, config.mlp_dim),
            nn.GELU(),
            nn.Dropout(config.dropout),
            nn.Linear(config.mlp_dim, config.d_model),
        )
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        x = x + self.dropout(self.mixer(self.mixer_norm(x), key_padding_mask=mask))
        return x + self.dropout(self.mlp(self.mlp_norm(x)))


class LRAEncoder(nn.Module):
    """Embeds (B, n) tokens or pixels, pads them to seq_len, runs the blocks and pools to (B, d_model)."""

    def __init__(self, config: LRAConfig) -> None:
        super().__init__()
        self.config = config
        self.use_cls = config.pooling == "cls"
        self.mixer_len = config.seq_len + int(self.use_cls)
        if config.vocab_size is None:
            self.embedding: nn.Module = nn.Linear(1, config.d_model)
        else:
            self.embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.positions = nn.Parameter(torch.randn(self.mixer_len, config.d_model) * 0.02)
        self.cls = nn.Parameter(torch.zeros(1, 1, config.d_model)) if self.use_cls else None
        self.dropout = nn.Dropout(config.dropout)
        layers = range(config.n_layers)
        self.blocks = nn.ModuleList(PreLNBlock(config, self.mixer_len, layer) for layer in layers)
        self.norm = nn.LayerNorm(config.d_model)

    def _embed(self, inputs: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor]:
        config = self.config
        if inputs.dim() != 2:
            raise ValueError(f"expected inputs of shape (batch, length), got {tuple(inputs.shape)}")
        length = inputs.shape[1]
        if length > config.seq_len:
            raise ValueError(f"input length {length} exceeds the model's seq_len {config.seq_len}")
        if config.vocab_size is None:
            mask = torch.ones_like(inputs, dtype=torch.bool) if mask is None else mask
            embedded = self.embedding(inputs.to(self.positions.dtype)[..., None])
        else:
            if inputs.is_floating_point():
                raise ValueError("this classifier embeds token ids; got floating point inputs")
            # Reading the range waits for the GPU, which a CUDA graph's capture cannot; the eager warm-up
            # steps before a capture check the training batches' ids.
            capturing = inputs.is_cuda and torch.cuda.is_current_stream_capturing()
            if inputs.numel() and not capturing and (inputs.min() < 0 or inputs.max() >= config.vocab_size):
                raise ValueError(f"token ids must lie in 0..{config.vocab_size - 1}")
            mask = inputs != config.pad_id if mask is None else mask
            embedded = self.embedding(inputs)
        pad = config.seq_len - length
        embedded = nn.functional.pad(embedded, (0, 0, 0, pad))
        mask = nn.functional.pad(mask, (0, pad), value=False)
        if self.cls is not None:
            embedded = torch.cat([self.cls.expand(len(embedded), -1, -1), embedded], dim=1)
            mask = nn.functional.pad(mask, (1, 0), value=True)
        return embedded + self.positions, mask

    def forward(self, inputs: Tensor, mask: Tensor | None = None) -> Tensor:
        x, mask = self._embed(inputs, mask)
        x = self.dropout(x)
        for block in self.blocks:
            x = block(x, mask)
        x = self.norm(x)
        if self.use_cls:
            return x[:, 0]
        real = mask.sum(dim=1, keepdim=True).clamp(min=1).to(x.dtype)
        return zero_padded(x, mask).sum(dim=1) / (x.shape[1] if self.config.pooling == "mean-all" else real)


def _head(in_features: int, config: LRAConfig) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(in_features, config.hidden_dim), nn.ReLU(), nn.Linear(config.hidden_dim, config.n_classes)
    )


@MODELS.register("lra_classifier")
class LRAClassifier(nn.Module):
    """Single-sequence LRA classifier (ListOps, Text, Image, Pathfinder): inputs (B, n) -> logits.

    `mask` (B, n) bool, True = real token; by default tokens != pad_id, or every pixel (pixel 0 is not
    padding).
    """

    config_class = LRAConfig
    task = "classify"

    def __init__(self, config: LRAConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = LRAEncoder(config)
        self.head = _head(config.d_model, config)

    def forward(self, inputs: Tensor, mask: Tensor | None = None) -> Tensor:
        return self.head(self.encoder(inputs, mask))


@MODELS.register("lra_dual_classifier")
class LRADualClassifier(nn.Module):
    """Two-document LRA classifier (Retrieval): one shared encoder, head on [a, b, a * b, a - b]."""

    config_class = LRAConfig
    task = "classify"

    def __init__(self, config: LRAConfig) -> None:
        super().__init__()
        self.config = config
        self.encoder = LRAEncoder(config)
        self.head = _head(4 * config.d_model, config)

    def forward(
        self, inputs_a: Tensor, inputs_b: Tensor, mask_a: Tensor | None = None, mask_b: Tensor | None = None
    ) -> Tensor:
        a, b = self.encoder(inputs_a, mask_a), self.encoder(inputs_b, mask_b)
        return self.head(torch.cat([a, b, a * b, a - b], dim=-1))

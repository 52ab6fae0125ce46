"""LRA classifiers: shapes, padding handling, pooling, rebuild from config, the retrieval head."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from test_attention_zoo import RANDOM_COMPONENTS

from forecaster.models import get_model
from forecaster.nn import attention

SEQ_LEN = 32


def _classifier(mixer: str = "softmax", **config) -> torch.nn.Module:
    torch.manual_seed(0)
    settings = {
        "vocab_size": 20,
        "n_classes": 10,
        "seq_len": SEQ_LEN,
        "d_model": 16,
        "mlp_dim": 32,
        "hidden_dim": 32,
    }
    return get_model("lra_classifier", mixer=mixer, **{**settings, **config}).eval()


def _tokens(seed: int = 0) -> torch.Tensor:
    tokens = torch.randint(1, 20, (3, SEQ_LEN), generator=torch.Generator().manual_seed(seed))
    tokens[1, 20:] = 0
    tokens[2, 9:] = 0
    return tokens


@pytest.mark.parametrize("mixer", ["softmax", "skeleton", "performer", "reformer", "nystromformer", "fnet"])
@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_padding_tokens_and_short_inputs_do_not_change_logits(mixer, pooling):
    options = {"reformer": {"chunk_len": 8}, "nystromformer": {"n_landmarks": 8}}.get(mixer, {})
    model = _classifier(mixer, pooling=pooling, mixer_options=options)
    tokens = _tokens()
    logits = model(tokens)
    assert logits.shape == (3, 10) and torch.isfinite(logits).all()
    # Garbage behind an explicit mask is ignored; a shorter input is padded to seq_len internally.
    garbage = torch.where(tokens == 0, torch.randint(1, 20, tokens.shape), tokens)
    torch.testing.assert_close(model(garbage, tokens != 0), logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(model(tokens[2:, :9]), logits[2:], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mixer", sorted(attention.names()))
@pytest.mark.parametrize("pooling", ["mean", "mean-all"])
def test_an_inf_padding_embedding_leaves_the_logits_of_the_cut_off_input(mixer, pooling):
    """The pad token's embedding set to inf: padded positions of the residual stream turn inf and NaN, which
    a mixer or the pooling that zeroes them by multiplying with the mask carried into every logit."""
    options = {"reformer": {"chunk_len": 8}, "nystromformer": {"n_landmarks": 8}}.get(mixer, {})
    model = _classifier(mixer, pooling=pooling, mixer_options=options)
    tokens = _tokens()
    with torch.no_grad():
        cut_off = model(tokens[2:, :9])  # padded to seq_len internally with zero embeddings
        model.encoder.embedding.weight[0] = float("inf")
        logits = model(tokens)
    assert torch.isfinite(logits).all()
    torch.testing.assert_close(logits[2:], cut_off, atol=1e-5, rtol=1e-5)


def test_mean_pooling_averages_real_tokens_only():
    model = _classifier()
    tokens = _tokens()
    captured = {}
    model.encoder.norm.register_forward_hook(lambda module, args, output: captured.setdefault("h", output))
    pooled = model.encoder(tokens)
    mask = (tokens != 0).float()[..., None]
    expected = (captured["h"] * mask).sum(1) / mask.sum(1)
    torch.testing.assert_close(pooled, expected)


def test_pixel_inputs_use_a_continuous_embedding_and_no_implicit_padding():
    model = _classifier(vocab_size=None, n_classes=2)
    pixels = torch.rand(2, SEQ_LEN)
    pixels[:, -5:] = 0.0  # black pixels are data
    changed = pixels.clone()
    changed[:, -5:] = 0.5
    assert not torch.allclose(model(pixels), model(changed))
    assert isinstance(model.encoder.embedding, torch.nn.Linear)
    with pytest.raises(ValueError, match="exceeds the model's seq_len 32"):
        model(torch.rand(2, SEQ_LEN + 1))


def test_token_range_is_checked():
    with pytest.raises(ValueError, match=r"token ids must lie in 0..19"):
        _classifier()(torch.full((1, 4), 20))


def test_rebuild_from_config_through_the_model_registry():
    model = _classifier("linformer", mixer_options={"proj_dim": 8}, pooling="cls")
    rebuilt = get_model("lra_classifier", **model.config.to_dict()).eval()
    rebuilt.load_state_dict(model.state_dict())
    torch.testing.assert_close(rebuilt(_tokens()), model(_tokens()), atol=0, rtol=0)
    with pytest.raises(ValueError, match=r"unknown LRA config field\(s\)"):
        get_model("lra_classifier", mixer="softmax", width=3)


def test_dual_classifier_head_sees_a_b_product_and_difference():
    torch.manual_seed(0)
    model = get_model(
        "lra_dual_classifier", mixer="skeleton", vocab_size=20, n_classes=2, seq_len=SEQ_LEN, d_model=16,
        mlp_dim=32, hidden_dim=32,
    ).eval()
    a, b = _tokens(0), _tokens(1)
    encoded_a, encoded_b = model.encoder(a), model.encoder(b)
    features = torch.cat([encoded_a, encoded_b, encoded_a * encoded_b, encoded_a - encoded_b], dim=-1)
    torch.testing.assert_close(model(a, b), model.head(features))
    assert model.head[0].in_features == 64


def test_classifier_trains_on_a_trivial_task():
    """Label = whether token 5 occurs: a few AdamW steps must cut the loss (gradients flow end to end)."""
    model = _classifier("skeleton", n_classes=2, dropout=0.0).train()
    tokens = torch.randint(1, 20, (64, SEQ_LEN), generator=torch.Generator().manual_seed(1))
    tokens[:32] = torch.where(tokens[:32] == 5, 6, tokens[:32])
    tokens[32:, 7] = 5
    labels = (tokens == 5).any(dim=1).long()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


# What the zoo's mixers draw from their seeds, and the skeleton's sampled index sets.
RANDOM_PARTS = {"left_index", "right_index"}.union(*RANDOM_COMPONENTS.values())


def _random_parts(block: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The tensors a block's mixer drew from its seed (index sets, projections, features, rotations)."""
    return {name: tensor for name, tensor in block.mixer.state_dict().items()
            if name.rsplit(".", 1)[-1] in RANDOM_PARTS}  # fmt: skip


@pytest.mark.parametrize(("mixer", "options"), [
    ("skeleton", {}), ("skeleton", {"block": "reference"}), ("linformer", {"proj_dim": 8}),
    ("performer", {}), ("reformer", {"chunk_len": 8}),
])  # fmt: skip
def test_each_layer_draws_its_own_random_parts_from_the_seed_plus_its_index(mixer, options):
    """Every block of an LRA classifier had drawn the same index sets (projections, features): layer i now
    draws them from the mixer's seed + i, as the forecasting encoder's layers do, so layer 1 under seed 5 is
    layer 0 under seed 6."""
    three = _classifier(mixer, n_layers=3, mixer_options={**options, "seed": 5}).encoder.blocks
    parts = [_random_parts(block) for block in three]
    assert parts[0] and all(parts[0].keys() == other.keys() for other in parts)
    for first, second in ((0, 1), (0, 2), (1, 2)):
        differ = [name for name in parts[0] if not torch.equal(parts[first][name], parts[second][name])]
        assert differ, (first, second)
    shifted = _classifier(mixer, mixer_options={**options, "seed": 6})
    for name, tensor in _random_parts(shifted.encoder.blocks[0]).items():
        assert torch.equal(tensor, parts[1][name]), name

"""neuralforecast's PatchTST and iTransformer as forecaster models: built from a JSON config, trained by
`forecaster train` on the same windows as every other model, saved as safetensors, served like any bundle.

The network is neuralforecast's own module, called on (B, L, C) windows: channel by channel for PatchTST
(channel-independent), all channels at once for iTransformer (multivariate). neuralforecast (and with it
Lightning and Ray) is imported only when such a model is built, never by the registry.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from forecaster.checks import MAX_CHANNELS, MAX_HORIZON, MAX_SEED, MAX_STEPS, setting
from forecaster.errors import ConfigError
from forecaster.models.config import ModelConfig, check_history
from forecaster.models.registry import FORECAST, MODELS

# Arguments the wrapper sets itself; the rest of the class's signature is architecture the config may set.
_OWN_ARGUMENTS = {
    "self",
    "h",
    "input_size",
    "n_series",
    "random_seed",
    "loss",
    "valid_loss",
    "trainer_kwargs",
}


@dataclass(frozen=True)
class PeerConfig(ModelConfig):
    """The sizes, the seed neuralforecast initializes the weights with, and its architecture arguments."""

    label = "peer"

    # Upper bounds (forecaster.checks): a bundle's sizes are checked before any tensor is allocated.
    input_size: int = setting(help="history length L", minimum=1, maximum=MAX_STEPS, cli=False)
    horizon: int = setting(help="forecast length H", minimum=1, maximum=MAX_HORIZON, cli=False)
    n_channels: int = setting(help="series forecast together", minimum=1, maximum=MAX_CHANNELS, cli=False)
    seed: int = setting(
        0, "seed of the initial weights (training's --seed)", minimum=0, maximum=MAX_SEED, cli=False
    )
    options: dict = setting({}, "neuralforecast arguments of the model's architecture", cli=False)


class NeuralforecastPeer(nn.Module):
    """A neuralforecast model class (`network_class`, by name) as a (B, L, C) -> (B, H, C) forecaster."""

    config_class = PeerConfig
    task = FORECAST
    network_class: ClassVar[str]

    def __init__(self, config: PeerConfig) -> None:
        super().__init__()
        import neuralforecast.models

        self.config = config
        network_class = getattr(neuralforecast.models, self.network_class)
        allowed = set(inspect.signature(network_class.__init__).parameters) - _OWN_ARGUMENTS
        unknown = sorted(set(config.options) - allowed)
        if unknown:
            raise ConfigError(
                f"{self.network_class} has no argument(s) {unknown}; its arguments are {sorted(allowed)}"
            )
        sizes = {"n_series": config.n_channels} if network_class.MULTIVARIATE else {}
        seeding = logging.getLogger("lightning_fabric.utilities.seed")  # a "Seed set to" line a model (h62)
        level = seeding.level
        seeding.setLevel(logging.WARNING)
        try:
            self.network = network_class(
                h=config.horizon,
                input_size=config.input_size,
                random_seed=config.seed,
                **sizes,
                **config.options,
                enable_progress_bar=False,
                enable_model_summary=False,
                logger=False,
            )
        finally:
            seeding.setLevel(level)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        config = self.config
        check_history(x, config.input_size, config.n_channels, self.network_class)
        if self.network.MULTIVARIATE:
            return self.network({"insample_y": x})
        batch, length, channels = x.shape
        series = x.transpose(1, 2).reshape(batch * channels, length, 1)
        forecast = self.network({"insample_y": series})
        return forecast.reshape(batch, channels, config.horizon).transpose(1, 2)


@MODELS.register("patchtst")
class PatchTSTForecaster(NeuralforecastPeer):
    """PatchTST (Nie et al., 2023, "A Time Series is Worth 64 Words", ICLR): channel-independent patches."""

    network_class = "PatchTST"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """A training batch of one window of one series read as one patch (a short input) gives PatchTST's
        BatchNorm one value per channel, which has no batch statistics: 40 quarters at horizon 8 ended in
        torch's ValueError (h82 F5). Such a batch is normalized by the running statistics, as in
        evaluation."""
        patches = self.network.model.backbone.patch_num
        if not (self.training and x.shape[0] * x.shape[2] * patches == 1):
            return super().forward(x)
        norms = [module for module in self.network.modules() if isinstance(module, nn.BatchNorm1d)]
        for module in norms:
            module.eval()
        try:
            return super().forward(x)
        finally:
            for module in norms:
                module.train()


@MODELS.register("itransformer")
class ITransformerForecaster(NeuralforecastPeer):
    """iTransformer (Liu et al., 2024, ICLR): attention across the series, each series one token."""

    network_class = "iTransformer"

"""S3Attention as a multivariate neuralforecast model, its hyperparameters taken from S3AttentionConfig.

neuralforecast needs every hyperparameter in the model's signature: `NeuralForecast.load` passes back only
the saved arguments it finds there. So the config fields are named in `S3Attention.__init__`, with their
defaults read from S3AttentionConfig and forwarded from `locals()`; a test fails if that list and the config
drift apart. The other arguments are the ones neuralforecast's BaseModel requires, or where our defaults
differ from its own. Importing this module registers `S3Attention` in neuralforecast's model table (see
`register_with_neuralforecast`): that is what lets `NeuralForecast.save`/`NeuralForecast.load` handle it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
from neuralforecast.common._base_model import BaseModel
from neuralforecast.losses.pytorch import MSE

from forecaster.checks import default_of
from forecaster.models import S3AttentionConfig, S3AttentionForecaster

# The config fields the adapter takes by name; the rest come from neuralforecast's h, input_size, n_series
# and (quantile_levels) the loss's quantiles.
CONFIG_FIELDS = tuple(
    field.name for field in dataclasses.fields(S3AttentionConfig)
    if field.name not in ("input_size", "horizon", "n_channels", "quantile_levels")
)
_DEFAULT = {name: default_of(S3AttentionConfig, name) for name in CONFIG_FIELDS}


class S3Attention(BaseModel):
    """S3AttentionForecaster (paper 001) as a multivariate neuralforecast model.

    The network sees each window as (batch, input_size, n_series) and forecasts (batch, h, n_series);
    it standardizes every window itself, so `scaler_type="identity"` is the default. Defaults follow the
    reference training: MSE loss, AdamW (torch default weight decay 0.01), learning rate 1e-4, batch of
    32 windows. The S3AttentionConfig fields (d_model, n_heads, e_layers, ...) are keyword arguments; other
    keywords go to neuralforecast's BaseModel and Lightning. Point losses (MSE, MAE, ...) train the point
    forecast; a multi-quantile loss (`MQLoss(level=[80, 95])`, or quantiles q and 1 - q) builds the
    network's quantile head, so `predict` gives `S3Attention-lo-80`, `-hi-80`, ... as neuralforecast's
    models do. Distribution losses are refused (the network has no distribution head).
    """

    EXOGENOUS_FUTR = False
    EXOGENOUS_HIST = False
    EXOGENOUS_STAT = False
    MULTIVARIATE = True
    RECURRENT = False

    def __init__(
        self,
        h: int,
        input_size: int,
        n_series: int,
        d_model: int = _DEFAULT["d_model"],
        n_heads: int = _DEFAULT["n_heads"],
        e_layers: int = _DEFAULT["e_layers"],
        left_rank: int = _DEFAULT["left_rank"],
        right_rank: int = _DEFAULT["right_rank"],
        fold: int = _DEFAULT["fold"],
        n_harmonics: int | None = _DEFAULT["n_harmonics"],
        dropout: float = _DEFAULT["dropout"],
        ffn: bool = _DEFAULT["ffn"],
        seed: int = _DEFAULT["seed"],
        activation: str = _DEFAULT["activation"],
        norm: str = _DEFAULT["norm"],
        anchor: str = _DEFAULT["anchor"],
        skip: bool = _DEFAULT["skip"],
        loss: Any = None,
        valid_loss: Any = None,
        max_steps: int = 1000,
        learning_rate: float = 1e-4,
        val_check_steps: int = 100,
        batch_size: int = 32,
        valid_batch_size: int | None = None,
        windows_batch_size: int = 32,
        inference_windows_batch_size: int = 256,
        start_padding_enabled: bool = False,
        scaler_type: str = "identity",
        optimizer: type[torch.optim.Optimizer] | None = torch.optim.AdamW,
        **kwargs: Any,
    ) -> None:
        arguments = locals()
        fields = {name: arguments[name] for name in CONFIG_FIELDS}
        loss = MSE() if loss is None else loss
        outputs = _quantile_outputs(loss)
        levels = sorted({level for _, level in outputs if level})
        config = S3AttentionConfig(
            input_size=input_size, horizon=h, n_channels=n_series, quantile_levels=levels, **fields
        )
        super().__init__(
            h=h,
            input_size=input_size,
            n_series=n_series,
            loss=loss,
            valid_loss=valid_loss,
            max_steps=max_steps,
            learning_rate=learning_rate,
            val_check_steps=val_check_steps,
            batch_size=batch_size,
            valid_batch_size=valid_batch_size,
            windows_batch_size=windows_batch_size,
            inference_windows_batch_size=inference_windows_batch_size,
            start_padding_enabled=start_padding_enabled,
            scaler_type=scaler_type,
            optimizer=optimizer,
            **kwargs,
        )
        self.network = S3AttentionForecaster(config)
        self._outputs = outputs

    def forward(self, windows_batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """insample_y (B, input_size, n_series) -> forecast (B, h, n_series), or with a multi-quantile loss
        (B, h, n_series * Q), the loss's Q quantiles fastest (what its `domain_map` expects)."""
        x = windows_batch["insample_y"]
        if not self.network.config.quantile_levels:
            return self.network(x)
        point, lower, upper = self.network.bounds(x)
        levels = self.network.config.quantile_levels
        columns = [
            point if kind == "point" else (lower if kind == "lo" else upper)[..., levels.index(level)]
            for kind, level in self._outputs
        ]
        return torch.stack(columns, dim=-1).flatten(-2)


def _quantile_outputs(loss: Any) -> list[tuple[str, int]]:
    """What each output of `loss` is: ("point", 0) for a point loss or the median, ("lo"/"hi", level) for
    the quantiles (1 -+ level / 100) / 2 of a multi-quantile loss; ValueError for anything else."""
    name = type(loss).__name__
    if loss.outputsize_multiplier == 1 and not getattr(loss, "is_distribution_output", False):
        return [("point", 0)]
    quantiles = getattr(loss, "quantiles", None)
    if quantiles is None or getattr(loss, "is_distribution_output", False):
        raise ValueError(
            f"S3Attention has a point forecast and a quantile head; loss {name} needs a distribution "
            "(use MSE, MAE, or MQLoss(level=[80, 95]))"
        )
    outputs = []
    for quantile in torch.as_tensor(quantiles).tolist():
        level = round(abs(2 * quantile - 1) * 100)
        if abs(abs(2 * quantile - 1) * 100 - level) > 1e-3 or level > 99:  # float32 quantiles
            raise ValueError(
                f"loss {name}: quantile {quantile} is not (1 -+ level / 100) / 2 for an integer level 1-99"
            )
        outputs.append(("point", 0) if level == 0 else ("lo" if quantile < 0.5 else "hi", level))
    return outputs


def register_with_neuralforecast() -> None:
    """Make `NeuralForecast.save`/`load` accept S3Attention (the one place that edits neuralforecast state).

    neuralforecast 3.x resolves a saved model's class through its closed table
    `neuralforecast.core.MODEL_FILENAME_DICT` (lower-case class name -> class) and refuses anything else,
    so the class is added there. Loading a saved S3Attention therefore needs this module imported first.
    """
    from neuralforecast.core import MODEL_FILENAME_DICT

    registered = MODEL_FILENAME_DICT.get("s3attention")
    if registered is not None and registered is not S3Attention:
        raise RuntimeError(f"neuralforecast already maps 's3attention' to {registered!r}")
    MODEL_FILENAME_DICT["s3attention"] = S3Attention


register_with_neuralforecast()

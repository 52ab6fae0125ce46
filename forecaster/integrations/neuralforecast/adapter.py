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
from forecaster.models.covariates import WithCovariates

# The config fields the adapter takes by name; the rest come from neuralforecast's h, input_size, n_series
# and (quantile_levels) the loss's quantiles.
CONFIG_FIELDS = tuple(
    field.name
    for field in dataclasses.fields(S3AttentionConfig)
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

    Exogenous variables (`hist_exog_list`, `futr_exog_list`) work as in `forecaster train`: every series'
    historical and future variables are extra input channels, and the horizon rows of the future ones enter
    on the decoder side (`forecaster.models.covariates.WithCovariates`). They reach the network unscaled with
    the default `scaler_type="identity"`: give variables of a moderate scale, or a neuralforecast scaler.
    """

    EXOGENOUS_FUTR = True
    EXOGENOUS_HIST = True
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
        hist, futr = len(kwargs.get("hist_exog_list") or []), len(kwargs.get("futr_exog_list") or [])
        config = S3AttentionConfig(
            input_size=input_size, horizon=h, n_channels=n_series * (1 + hist + futr), quantile_levels=levels,
            **fields,
        )  # fmt: skip
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
        if hist or futr:
            self.network = WithCovariates(self.network, targets=n_series, future=futr * n_series)
        self._outputs = outputs

    def forward(self, windows_batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """insample_y (B, input_size, n_series) -> forecast (B, h, n_series), or with a multi-quantile loss
        (B, h, n_series * Q), the loss's Q quantiles fastest (what its `domain_map` expects)."""
        x = _inputs(windows_batch, self.input_size)
        if not self.network.config.quantile_levels:
            return self.network(x)
        point, lower, upper = self.network.bounds(x)
        levels = self.network.config.quantile_levels
        columns = [
            point if kind == "point" else (lower if kind == "lo" else upper)[..., levels.index(level)]
            for kind, level in self._outputs
        ]
        return torch.stack(columns, dim=-1).flatten(-2)


def _inputs(windows_batch: dict[str, torch.Tensor], input_size: int) -> torch.Tensor:
    """The network's input: the series, then their historical and future variables as channels
    ([B, X, L, N] -> [B, L, X * N]); with future variables also their horizon rows, zero elsewhere."""
    x = windows_batch["insample_y"]
    channels = lambda exog: exog.permute(0, 2, 1, 3).flatten(2)  # noqa: E731
    history = [x]
    if windows_batch.get("hist_exog") is not None:
        history.append(channels(windows_batch["hist_exog"]))
    futr = windows_batch.get("futr_exog")
    if futr is None:
        return torch.cat(history, dim=-1)
    futr = channels(futr)
    history = torch.cat([*history, futr[:, :input_size]], dim=-1)
    ahead = torch.zeros(
        x.shape[0], futr.shape[1] - input_size, history.shape[-1], dtype=x.dtype, device=x.device
    )
    ahead[..., -futr.shape[-1] :] = futr[:, input_size:]
    return torch.cat([history, ahead], dim=1)


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

"""A forecaster for its data: the registered model, wrapped for independent series or covariates, and
shrunk toward the naive forecast once trained.

`assemble` is used when a model is first built and when a bundle is loaded, so both give the same module;
`stored` is what a bundle saves (its config and weights; `naive_weights` the shrinkage, kept in its config),
and `naive_like` the naive forecast in the same wrapping, which `fit` compares an untrained model with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from torch import nn

from forecaster.models.baselines import NaiveForecaster
from forecaster.models.channels import ChannelIndependent
from forecaster.models.covariates import WithCovariates
from forecaster.models.toward_naive import TowardNaive

if TYPE_CHECKING:
    from forecaster.data.config import DataConfig


def assemble(
    base: nn.Module, data: DataConfig, *, fitting: bool = False, naive_weights: list[float] | None = None
) -> nn.Module:
    """`base` as its data needs it: with covariates, `WithCovariates`; for independent series (not while
    fitting, which trains the one-channel model on pooled windows), `ChannelIndependent`; with
    `naive_weights`, shrunk toward the naive forecast (`TowardNaive`)."""
    if data.input_columns != data.columns:
        model = WithCovariates(base, len(data.columns), len(data.future_columns))
    elif data.model_channels != len(data.columns) and not fitting:
        model = ChannelIndependent(base)
    else:
        model = base
    return model if naive_weights is None else TowardNaive(model, naive_weights)


def stored(model: nn.Module) -> nn.Module:
    """The module whose config and state a bundle keeps (a covariate wrapper keeps its map's weights)."""
    if isinstance(model, TowardNaive):
        model = model.base
    return model.base if isinstance(model, ChannelIndependent) else model


def naive_weights(model: nn.Module) -> list[float] | None:
    """The per-step weights toward the naive forecast a bundle keeps in its config; None if not shrunk."""
    return model.weights[:, 0].tolist() if isinstance(model, TowardNaive) else None


def naive_like(model: nn.Module) -> nn.Module:
    """The naive forecast with the same inputs and outputs as `model`."""
    if isinstance(model, WithCovariates):
        return WithCovariates(NaiveForecaster(model.config), model.targets, model.future)
    return NaiveForecaster(model.config)

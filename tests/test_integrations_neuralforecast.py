"""S3Attention inside neuralforecast (fit, predict, cross_validation, save/load) and the peer plumbing."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

pytest.importorskip("neuralforecast")

from neuralforecast import NeuralForecast  # noqa: E402
from neuralforecast.losses.pytorch import MSE, DistributionLoss, MQLoss  # noqa: E402
from neuralforecast.tsdataset import TimeSeriesDataset  # noqa: E402

from forecaster.data import WindowDataset  # noqa: E402
from forecaster.integrations.neuralforecast import (  # noqa: E402
    CONFIG_FIELDS,
    PeerBudget,
    RestoreBestWeights,
    S3Attention,
    build_peer,
    forecast_test_windows,
    peer_class,
    peer_kwargs,
    to_long_format,
)

SILENT = {"enable_progress_bar": False, "enable_model_summary": False, "logger": False}
H, L, C = 6, 24, 3


def _values(rows: int = 160) -> np.ndarray:
    """Three noisy daily-period sinusoids (float32), deterministic."""
    rng = np.random.default_rng(0)
    t = np.arange(rows)
    waves = [np.sin(2 * np.pi * t / 12 + phase) for phase in (0.0, 1.0, 2.0)]
    return (np.stack(waves, axis=1) + 0.1 * rng.standard_normal((rows, C))).astype(np.float32)


def _s3attention(**options) -> S3Attention:
    return S3Attention(
        h=H,
        input_size=L,
        n_series=C,
        d_model=16,
        n_heads=4,
        max_steps=6,
        val_check_steps=3,
        early_stop_patience_steps=2,
        random_seed=0,
        **SILENT,
        **options,
    )


def _by_series(frame, column: str, windows: int) -> np.ndarray:
    """Long cross-validation output (sorted by unique_id, cutoff, ds) -> (windows, H, C)."""
    return frame[column].to_numpy().reshape(C, windows, H).transpose(1, 2, 0)


def test_long_format_ids_sort_in_column_order() -> None:
    values = np.arange(24, dtype=np.float32).reshape(2, 12)
    frame = to_long_format(values)
    assert list(frame.columns) == ["unique_id", "ds", "y"]
    assert sorted(frame["unique_id"].unique()) == [f"{i:03d}" for i in range(12)]
    np.testing.assert_array_equal(frame[frame["unique_id"] == "011"]["y"], values[:, 11])
    np.testing.assert_array_equal(frame[frame["unique_id"] == "000"]["ds"], [0, 1])


@pytest.mark.slow
def test_s3attention_fit_predict_cross_validation_save_load(tmp_path) -> None:
    values = _values()
    frame = to_long_format(values)
    nf = NeuralForecast(models=[_s3attention()], freq=1)
    nf.fit(frame, val_size=24)

    forecast = nf.predict()
    assert len(forecast) == H * C
    assert forecast["ds"].tolist()[:H] == list(range(len(values), len(values) + H))
    model = nf.models[0]
    model.eval()
    with torch.inference_mode():
        direct = model.network(torch.from_numpy(values[-L:])[None])[0].numpy()
    model.train()
    np.testing.assert_allclose(_by_series(forecast, "S3Attention", 1)[0], direct, rtol=1e-5, atol=1e-5)

    test_size = 30
    windows = test_size - H + 1
    cv = nf.cross_validation(frame, val_size=24, test_size=test_size, n_windows=None, step_size=1)
    assert len(cv) == windows * H * C
    targets = np.stack([y.numpy() for _, y in WindowDataset(values[-test_size - L :], L, H)])
    np.testing.assert_allclose(_by_series(cv, "y", windows), targets, rtol=0, atol=1e-6)
    assert np.isfinite(cv["S3Attention"]).all()

    before = nf.predict()
    nf.save(str(tmp_path / "nf"), overwrite=True)
    loaded = NeuralForecast.load(str(tmp_path / "nf"))
    assert type(loaded.models[0]) is S3Attention
    for key, tensor in model.network.state_dict().items():
        torch.testing.assert_close(loaded.models[0].network.state_dict()[key], tensor, rtol=0, atol=0)
    np.testing.assert_array_equal(loaded.predict()["S3Attention"], before["S3Attention"])


def test_s3attention_refuses_distribution_losses_and_quantiles_of_no_level() -> None:
    with pytest.raises(ValueError, match="needs a distribution"):
        _s3attention(loss=DistributionLoss("Normal"))
    with pytest.raises(ValueError, match="quantile 0.33"):
        _s3attention(loss=MQLoss(quantiles=[0.333, 0.5, 0.667]))


@pytest.mark.slow
def test_s3attention_with_mqloss_predicts_nixtla_interval_columns_from_its_quantile_head() -> None:
    """MQLoss(level=[80, 95]) builds the quantile head: predict() gives neuralforecast's median / lo / hi
    columns, nested, equal to the network's own bounds on the last window (the median is the point)."""
    values = _values()
    nf = NeuralForecast(models=[_s3attention(loss=MQLoss(level=[80, 95]))], freq=1)
    nf.fit(to_long_format(values), val_size=24)
    forecast = nf.predict()
    names = ["median", "lo-95", "lo-80", "hi-80", "hi-95"]
    assert [column for column in forecast.columns if column.startswith("S3Attention")] == [
        f"S3Attention-{name}" for name in names
    ]
    by_name = {name: _by_series(forecast, f"S3Attention-{name}", 1)[0] for name in names}
    assert (by_name["lo-95"] <= by_name["lo-80"]).all() and (by_name["lo-80"] <= by_name["median"]).all()
    assert (by_name["median"] <= by_name["hi-80"]).all() and (by_name["hi-80"] <= by_name["hi-95"]).all()
    network = nf.models[0].network.eval()
    assert network.config.quantile_levels == [80, 95]
    with torch.inference_mode():
        point, lower, upper = (t[0].numpy() for t in network.bounds(torch.from_numpy(values[-L:])[None]))
    direct = {"median": point, "lo-80": lower[..., 0], "lo-95": lower[..., 1], "hi-80": upper[..., 0],
              "hi-95": upper[..., 1]}  # fmt: skip
    for name in names:
        np.testing.assert_allclose(by_name[name], direct[name], rtol=1e-5, atol=1e-5)


# One value per S3AttentionConfig field the adapter takes, none of them the default.
NON_DEFAULT = {
    "d_model": 24,
    "n_heads": 4,
    "e_layers": 1,
    "left_rank": 3,
    "right_rank": 2,
    "fold": 4,
    "n_harmonics": 5,
    "dropout": 0.2,
    "ffn": True,
    "seed": 9,
    "activation": "relu",
    "norm": "layer",
    "anchor": "seam",
    "skip": True,
}


def test_every_config_field_reaches_the_network_and_the_saved_hyperparameters() -> None:
    import dataclasses

    from forecaster.models import S3AttentionConfig

    fields = {field.name: field.default for field in dataclasses.fields(S3AttentionConfig)}
    from_neuralforecast = {"input_size", "horizon", "n_channels", "quantile_levels"}  # h, ..., the loss
    assert set(NON_DEFAULT) == set(CONFIG_FIELDS) == set(fields) - from_neuralforecast
    assert all(NON_DEFAULT[name] != fields[name] for name in NON_DEFAULT)
    model = S3Attention(h=H, input_size=L, n_series=C, **NON_DEFAULT, **SILENT)
    config = model.network.config
    assert (config.input_size, config.horizon, config.n_channels) == (L, H, C)
    for name, value in NON_DEFAULT.items():
        assert getattr(config, name) == value, name
        assert model.hparams[name] == value, name  # what NeuralForecast.load passes back


def test_the_adapter_signature_names_the_config_fields_and_neuralforecast_arguments_only() -> None:
    import dataclasses
    import inspect

    from neuralforecast.common._base_model import BaseModel

    from forecaster.models import S3AttentionConfig

    parameters = inspect.signature(S3Attention.__init__).parameters
    defaults = {field.name: field.default for field in dataclasses.fields(S3AttentionConfig)}
    for name in CONFIG_FIELDS:
        assert parameters[name].default == defaults[name], name
    others = set(parameters) - set(CONFIG_FIELDS) - {"self", "kwargs"}
    assert others <= set(inspect.signature(BaseModel.__init__).parameters), others - set(
        inspect.signature(BaseModel.__init__).parameters
    )
    with pytest.raises(ValueError, match="'d_model' must be divisible"):
        S3Attention(h=H, input_size=L, n_series=C, d_model=20, **SILENT)


def test_peer_kwargs_translate_the_epoch_budget() -> None:
    budget = PeerBudget(max_epochs=10, patience=3, batch_size=32, steps_per_epoch=20)
    univariate = peer_kwargs("dlinear", horizon=24, input_size=36, n_series=7, budget=budget, seed=4)
    assert univariate["max_steps"] == 200 and univariate["val_check_steps"] == 20
    assert univariate["early_stop_patience_steps"] == 3
    assert univariate["windows_batch_size"] == 32 * 7 and univariate["batch_size"] == 7
    assert univariate["scaler_type"] == "identity" and univariate["random_seed"] == 4
    assert "n_series" not in univariate
    multivariate = peer_kwargs("itransformer", horizon=24, input_size=36, n_series=7, budget=budget, seed=4)
    assert multivariate["windows_batch_size"] == 32 and multivariate["n_series"] == 7


def test_restore_best_weights_loads_the_lowest_validation_state() -> None:
    module = torch.nn.Linear(2, 1)
    callback = RestoreBestWeights()
    trainer = SimpleNamespace(sanity_checking=False, callback_metrics={})
    callback.on_fit_start(trainer, module)
    saved = {}
    for step, loss in enumerate([3.0, 1.0, 2.0]):
        with torch.no_grad():
            module.weight.fill_(float(step))
        saved[loss] = module.weight.detach().clone()
        trainer.callback_metrics = {"ptl/val_loss": torch.tensor(loss)}
        callback.on_validation_end(trainer, module)
    callback.on_fit_end(trainer, module)
    torch.testing.assert_close(module.weight, saved[1.0], rtol=0, atol=0)


@pytest.mark.slow
def test_forecast_test_windows_equals_cross_validation() -> None:
    values = _values()
    budget = PeerBudget(max_epochs=2, patience=1, batch_size=8, steps_per_epoch=4)
    val_size, test_size = 20, 30
    windows = test_size - H + 1
    model = build_peer("dlinear", H, L, C, budget, seed=0)
    run = forecast_test_windows(model, values, val_size, test_size, budget.steps_per_epoch)
    assert run.predictions.shape == (windows, H, C)
    assert run.epochs == 2 and run.parameters > 0

    cv = NeuralForecast(models=[build_peer("dlinear", H, L, C, budget, seed=0)], freq=1).cross_validation(
        to_long_format(values), val_size=val_size, test_size=test_size, n_windows=None, step_size=1
    )
    np.testing.assert_array_equal(_by_series(cv, "DLinear", windows), run.predictions)
    targets = np.stack([y.numpy() for _, y in WindowDataset(values[-test_size - L :], L, H)])
    np.testing.assert_allclose(_by_series(cv, "y", windows), targets, rtol=0, atol=1e-6)


def _neuralforecast_original(name: str, budget: PeerBudget, **options):
    """The unmodified neuralforecast class, built like build_peer builds ours."""
    return peer_class(name)(
        **peer_kwargs(name, H, L, C, budget, seed=0), loss=MSE(), valid_loss=MSE(), **SILENT, **options
    )


@pytest.mark.parametrize("name", ["dlinear", "patchtst"])
@pytest.mark.parametrize("start_padding", [False, True])
def test_windows_on_demand_are_neuralforecast_s_windows(name: str, start_padding: bool) -> None:
    """Same valid-window indices, same window at every index, with gaps in the availability mask."""
    import pandas as pd

    budget = PeerBudget(max_epochs=1, patience=1, batch_size=8, steps_per_epoch=4)
    original = _neuralforecast_original(name, budget, start_padding_enabled=start_padding)
    ours = build_peer(name, H, L, C, budget, seed=0)
    ours.padder_train = original.padder_train
    assert type(ours) is not type(original) and type(ours).__name__ == type(original).__name__
    rows = 120
    values = torch.from_numpy(_values(rows).T.copy())
    available = torch.ones(C, rows)
    available[0, 30:70] = 0.0  # longer than the input window: some windows have no available point
    available[2, 100:] = 0.0  # no available target after row 100
    batch = {
        "temporal": torch.stack([values, available], dim=1),
        "static": None,
        "static_cols": None,
        "temporal_cols": pd.Index(["y", "available_mask"]),
    }
    for model in (original, ours):
        model.val_size, model.test_size = 10, 5
    expected = original._create_windows(batch, "train")
    got = ours._create_windows(batch, "train")
    torch.testing.assert_close(got[3], expected[3], rtol=0, atol=0)
    all_windows = C * (rows - 15 - L + 1 + (L - 1 if start_padding else 0))  # train rows, padded
    assert expected[0].shape[0] == all_windows and 0 < len(got[3]) < all_windows  # the gaps excluded some
    torch.testing.assert_close(got[0][got[3]], expected[0][expected[3]], rtol=0, atol=0)
    assert (got[1], got[4], list(got[5])) == (None, None, ["y", "available_mask"])


@pytest.mark.slow
def test_peer_training_with_windows_on_demand_is_bit_identical() -> None:
    budget = PeerBudget(max_epochs=2, patience=2, batch_size=8, steps_per_epoch=5)
    dataset, *_ = TimeSeriesDataset.from_df(to_long_format(_values()))
    original = _neuralforecast_original("dlinear", budget)
    ours = build_peer("dlinear", H, L, C, budget, seed=0)
    for model in (original, ours):
        model.fit(dataset, val_size=20, test_size=30)
    assert len(ours.train_trajectories) == len(original.train_trajectories) == 10
    assert ours.train_trajectories == original.train_trajectories
    for (key, got), expected in zip(ours.state_dict().items(), original.state_dict().values(), strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0, msg=key)


@pytest.mark.slow
def test_s3attention_uses_future_and_historical_exogenous_variables() -> None:
    """y = 2 f + a wave + noise per series, f white noise known ahead: with `futr_exog_list` the backtest
    error falls far below the model without it; `predict` takes the horizon's rows in `futr_df`."""
    rng = np.random.default_rng(0)
    n, frames = 600, []
    for uid in ("a", "b"):
        f, x = rng.normal(size=n), rng.normal(size=n)
        y = 2 * f + np.sin(np.arange(n) / 10) + 0.1 * rng.normal(size=n)
        frames.append(pd.DataFrame({"unique_id": uid, "ds": np.arange(n), "y": y, "f": f, "x": x}))
    frame = pd.concat(frames, ignore_index=True)

    def backtest(**exog) -> tuple[float, NeuralForecast]:
        model = S3Attention(
            h=H, input_size=48, n_series=2, max_steps=100, learning_rate=1e-2, val_check_steps=50,
            random_seed=0, **SILENT, **exog,
        )  # fmt: skip
        nf = NeuralForecast(models=[model], freq=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = nf.cross_validation(frame, n_windows=10, step_size=12)
        return float(((out["S3Attention"] - out["y"]) ** 2).mean()), nf

    plain, _ = backtest()
    exogenous, nf = backtest(futr_exog_list=["f"], hist_exog_list=["x"])
    assert exogenous < 0.5 * plain, (exogenous, plain)
    ahead = pd.DataFrame(
        {"unique_id": np.repeat(["a", "b"], H), "ds": np.tile(np.arange(n, n + H), 2), "f": 0.0}
    )
    forecast = nf.predict(futr_df=ahead)
    assert len(forecast) == 2 * H and forecast["S3Attention"].notna().all()

"""Train-only scaling, sliding windows and the LightningDataModule."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils.data import RandomSampler, SequentialSampler

from forecaster.data import (
    ForecastDataModule,
    Scaler,
    TimeSeries,
    WindowDataset,
    load_dataset,
    split_borders,
)
from forecaster.data.scaling import original_units
from forecaster.errors import DataError

SHARED = ["ETTh1", "ETTh2", "ETTm1", "ETTm2", "Exchange", "Weather", "ILI"]


def _series(n: int, channels: int = 3, seed: int = 0) -> TimeSeries:
    rng = np.random.default_rng(seed)
    index = pd.date_range("2021-01-01", periods=n, freq="h", name="date")
    columns = [f"c{i}" for i in range(channels)]
    frame = pd.DataFrame(rng.normal(5.0, 2.0, (n, channels)), index=index, columns=columns)
    return TimeSeries(frame=frame, freq="h", source="synthetic", date_col="date")


def _load(data_dir, name: str) -> TimeSeries:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_dataset(name, data_dir)


@pytest.mark.parametrize("name", SHARED)
def test_scaler_equals_numpy_mean_and_std_on_exactly_the_train_rows(data_dir, name):
    series = _load(data_dir, name)
    module = ForecastDataModule(series, input_size=96 if name != "ILI" else 36, horizon=24)
    module.setup()
    n_train = int(0.7 * len(series))
    assert len(module.train_set) == n_train - (96 if name != "ILI" else 36) - 24 + 1
    train = series.values[:n_train]
    np.testing.assert_allclose(module.scaler.mean, train.mean(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(module.scaler.scale, train.std(axis=0, ddof=0), rtol=1e-12, atol=1e-12)
    # one row more would change the statistics: the fit uses the train rows only
    longer = series.values[: n_train + 500].mean(axis=0)
    assert not np.allclose(module.scaler.mean, longer, rtol=0, atol=1e-9)


def test_scaler_round_trips_through_json_and_matches_sklearn():
    from sklearn.preprocessing import StandardScaler

    values = np.random.default_rng(1).normal(3.0, [1.0, 10.0], (200, 2))
    scaler = Scaler.fit(values)
    state = json.loads(json.dumps(scaler.to_dict()))
    assert set(state) == {"mean", "scale"}
    assert all(isinstance(v, float) for v in state["mean"] + state["scale"])
    rebuilt = Scaler.from_dict(state, n_channels=2)
    oracle = StandardScaler().fit(values)
    np.testing.assert_allclose(rebuilt.transform(values), oracle.transform(values), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(scaler.transform(values), oracle.transform(values), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(rebuilt.inverse(rebuilt.transform(values)), values, rtol=1e-12)


def test_constant_channel_gets_unit_scale_and_is_marked_constant_through_json():
    scaler = Scaler.fit(np.column_stack([np.full(10, 7.0), np.arange(10.0)]))
    assert scaler.to_dict()["scale"][0] == 1.0
    assert scaler.to_dict()["constant"] == [True, False]
    assert Scaler.from_dict(json.loads(json.dumps(scaler.to_dict()))).steady.tolist() == [True, False]
    assert Scaler.fit(1e10 + np.array([[0.0], [1e-6], [0.0]])).scale[0] == 1.0  # below float64's rounding
    assert Scaler.fit(np.arange(6.0)[:, None]).constant is None  # nothing constant: nothing marked


def test_channel_constant_in_the_train_rows_is_scaled_by_the_later_rows_where_they_vary():
    """A product launched after the train rows (0 there, then about 500) was standardized by scale 1: its
    sales were 500 standard units, and pooled validation scores were those of that series alone (h52)."""
    train = np.column_stack([np.zeros(8), np.arange(8.0), np.full(8, 3.0)])
    later = np.vstack([train, [[500.0, 8.0, 3.0], [620.0, 9.0, 3.0]]])
    scaler = Scaler.fit(train, later_values=later)
    np.testing.assert_allclose(scaler.mean, [later[:, 0].mean(), 3.5, 3.0], rtol=1e-12)
    np.testing.assert_allclose(scaler.scale, [later[:, 0].std(), np.arange(8.0).std(), 1.0], rtol=1e-12)
    assert scaler.steady.tolist() == [False, False, True]  # constant in every row it was fit on


def test_a_series_launched_in_validation_is_standardized_by_its_rows_through_validation():
    frame = pd.DataFrame({"c0": np.r_[np.zeros(70), np.linspace(400, 600, 30)]},
                         index=pd.date_range("2021-01-01", periods=100, freq="h", name="date"))  # fmt: skip
    module = ForecastDataModule(TimeSeries(frame=frame, freq="h", source="s", date_col="date"), 10, 5)
    module.setup()
    through_validation = frame["c0"].to_numpy()[:80]  # 7:1:2
    np.testing.assert_allclose(module.scaler.scale, [through_validation.std()], rtol=1e-12)
    assert module.scaler.constant is None


@pytest.mark.parametrize("unit", [1e-15, 1e-17, 1e-200])
def test_a_series_of_tiny_values_is_standardized_and_forecast_to_its_own_digits(unit):
    """scikit-learn's StandardScaler takes any std below 2.2e-15 for a constant channel: a series in units of
    1e-17 was left unscaled (a naive forecast of 4.03e-17 answered 0) and rounded to 15 decimal places."""
    values = unit * (30 + np.sin(np.arange(50.0)))[:, None]
    scaler = Scaler.fit(values)
    np.testing.assert_allclose(scaler.scale, (values / unit).std() * unit, rtol=1e-12)
    standardized = scaler.transform(values[-1:]).astype(np.float32)  # a naive forecast, through float32
    np.testing.assert_allclose(original_units(scaler, standardized), values[-1:], rtol=1e-6)


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ({"mean": [0.0]}, "the fields 'mean' and 'scale' (and 'log', 'constant')"),
        ({"mean": [0.0], "scale": [1.0], "var": [1.0]}, "the fields 'mean' and 'scale' (and 'log', "),
        ({"mean": [0.0], "scale": [1.0], "constant": [1]}, "'constant' must be a list of 1 true/false"),
        ({"mean": [0.0, 1.0], "scale": [1.0]}, "one number per column"),
        ({"mean": [0.0], "scale": [0.0]}, "positive finite scales"),
        ({"mean": ["a"], "scale": [1.0]}, "list of numbers"),
        ({"mean": [True], "scale": [1.0]}, "list of numbers"),
        ([0.0, 1.0], "the fields 'mean' and 'scale'"),
    ],
)
def test_invalid_scaler_state_is_a_data_error(state, expected):
    with pytest.raises(DataError) as caught:
        Scaler.from_dict(state)
    assert expected in str(caught.value)


@pytest.mark.parametrize("stride", [1, 3])
def test_windows_are_consecutive_slices(stride):
    values = np.arange(40 * 2, dtype=np.float32).reshape(40, 2)
    dataset = WindowDataset(values, input_size=7, horizon=4, stride=stride)
    assert len(dataset) == (40 - 11) // stride + 1
    for i in (0, 1, len(dataset) - 1):
        x, y = dataset[i]
        start = i * stride
        assert x.dtype == torch.float32 and x.shape == (7, 2) and y.shape == (4, 2)
        np.testing.assert_array_equal(x.numpy(), values[start : start + 7])
        np.testing.assert_array_equal(y.numpy(), values[start + 7 : start + 11])
    np.testing.assert_array_equal(dataset[-1][0].numpy(), dataset[len(dataset) - 1][0].numpy())
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def test_stride_one_last_window_ends_at_the_last_row():
    values = np.random.default_rng(2).normal(size=(30, 1)).astype(np.float32)
    _, y = WindowDataset(values, 5, 3)[-1]
    np.testing.assert_array_equal(y.numpy(), values[-3:])


def test_thinned_windows_are_every_nth_of_each_series_ending_at_its_latest():
    """Thinning keeps evenly spaced windows of each series, its last window among them (the most recent
    history): the same slices as indexing the dense windows, stacked or one by one."""
    from forecaster.data.windows import PooledWindows, thinned

    first = WindowDataset(np.arange(40, dtype=np.float32)[:, None], 5, 3)  # 33 windows
    second = WindowDataset(np.arange(100, 130, dtype=np.float32)[:, None], 5, 3)  # 23 windows
    assert thinned(first, 33) is first
    kept = thinned(first, 11)  # every 3rd of 33: windows 2, 5, ..., 32
    inputs, targets = kept.stacked()
    assert len(kept) == 11 and inputs.shape == (11, 5, 1) and targets.shape == (11, 3, 1)
    for position, window in enumerate(range(2, 33, 3)):
        np.testing.assert_array_equal(inputs[position], first[window][0])
        np.testing.assert_array_equal(kept[position][1], first[window][1])
    pooled = thinned(PooledWindows([first, second]), 20)  # 56 windows, every 3rd of each series
    inputs, targets = pooled.stacked()
    assert len(pooled) == 11 + 8 == len(inputs)
    np.testing.assert_array_equal(targets[10], first[32][1])  # each series' latest kept
    np.testing.assert_array_equal(targets[-1], second[22][1])
    np.testing.assert_array_equal(pooled[11][0], second[1][0])


def test_too_short_array_has_no_windows():
    expected = r"10 rows hold no window of input_size 8 \+ horizon 4; expected at least 12"
    with pytest.raises(DataError, match=expected):
        WindowDataset(np.zeros((10, 1), dtype=np.float32), 8, 4)


def test_datamodule_windows_are_standardized_slices_of_their_split():
    series = _series(500)
    module = ForecastDataModule(series, input_size=24, horizon=12, batch_size=7, stride=2)
    module.setup()
    assert split_borders(500, 24, horizon=12) == {"train": (0, 350), "val": (326, 400), "test": (376, 500)}
    assert module.window_counts() == {
        "train": (350 - 36) // 2 + 1,
        "val": 400 - 326 - 36 + 1,
        "test": 500 - 376 - 36 + 1,
    }
    assert (len(module.train_set), len(module.val_set), len(module.test_set)) == tuple(
        module.window_counts().values()
    )
    expected = module.scaler.transform(series.values)
    x, y = module.test_set[5]
    np.testing.assert_allclose(x.numpy(), expected[376 + 5 : 376 + 29], rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), expected[376 + 29 : 376 + 41], rtol=1e-6)
    x, _ = module.train_set[3]
    np.testing.assert_allclose(x.numpy(), expected[6:30], rtol=1e-6)


def test_loaders_shuffle_train_and_keep_every_evaluation_window():
    module = ForecastDataModule(_series(500), input_size=24, horizon=12, batch_size=16)
    module.setup()
    assert isinstance(module.train_dataloader().sampler, RandomSampler)
    pairs = ((module.val_dataloader(), module.val_set), (module.test_dataloader(), module.test_set))
    for loader, dataset in pairs:
        assert isinstance(loader.sampler, SequentialSampler) and not loader.drop_last
        assert len(dataset) % 16 != 0
        batches = list(loader)
        assert sum(x.shape[0] for x, _ in batches) == len(dataset)
        torch.testing.assert_close(batches[0][0][1], dataset[1][0])


def test_datamodule_on_short_series_reports_rows_needed():
    module = ForecastDataModule(_series(100), input_size=96, horizon=96)
    with pytest.raises(DataError, match=r"synthetic: 100 rows are too few for split 7:1:2 .* needs at least"):
        module.setup()


def test_datamodule_ett_split_on_hourly_benchmark(data_dir):
    module = ForecastDataModule(_load(data_dir, "ETTh1"), input_size=96, horizon=96, split="ett")
    module.setup()
    assert split_borders(17420, 96, "ett", "h") == {
        "train": (0, 8640),
        "val": (8544, 11520),
        "test": (11424, 14400),
    }
    assert len(module.test_set) == 14400 - 11424 - 192 + 1

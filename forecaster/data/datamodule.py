"""LightningDataModule: a TimeSeries split, standardized on its train rows, cut into windows."""

from __future__ import annotations

import lightning as L
import numpy as np
from torch.utils.data import DataLoader

from forecaster.data.scaling import Scaler
from forecaster.data.series import INDEPENDENT, TimeSeries
from forecaster.data.splits import Borders, earlier_period, split_borders
from forecaster.data.windows import PooledWindows, WindowDataset
from forecaster.errors import DataError

Windows = WindowDataset | PooledWindows


def _scaler_rows(borders: Borders) -> slice:
    """The rows the scaler is fit on: the train split's, or where it holds one row, which has no spread (a
    forecast that fits nothing needs no train window), the rows before the test split's targets: 7 yearly rows
    at horizon 3 left 1, every scale was 1 and the 'standardized' scores were squared original units (h42)."""
    start, end = borders["train"]
    return slice(start, end if end - start > 1 else borders["val"][1])


def window_sets(
    series: TimeSeries,
    input_size: int,
    horizon: int,
    split: str,
    scaler: Scaler | None = None,
    strides: dict[str, int] | None = None,
    earlier: bool = False,
    trained: bool = True,
    log: np.ndarray | None = None,
    only: str | None = None,
) -> tuple[Scaler, dict[str, Windows]]:
    """The split's standardized train/val/test windows, and the scaler (fit on the train rows unless given,
    the `log` channels in logarithms); `earlier`: the split's `earlier_period` (DataError where it has none),
    whose train rows may hold no window for a model that is not `trained`; `only`: that split's windows alone
    (scoring reads one split, and a panel of thousands of series pays for every window set built).

    Multivariate: one split of the table, (L, C) windows. Independent series: each series split on its
    own first-to-last value and standardized by its own train rows, the (L, 1) windows of all pooled."""
    strides = strides or {}
    empty_allowed = {"train": not trained}  # the train rows of a model that fits nothing may hold no window

    def borders_of(n_rows: int, source: str) -> Borders:
        borders = split_borders(
            n_rows, input_size, split, series.freq, horizon=horizon, source=source, trained=trained
        )
        if not earlier:
            return borders
        moved = earlier_period(borders, input_size, horizon, trained)
        if moved is None:
            raise DataError(f"{source}: {n_rows} rows leave no train window before an earlier validation")
        return moved

    if series.options.channels != INDEPENDENT:
        values = series.inputs
        borders = borders_of(len(values), series.source)
        scaler = scaler or Scaler.fit(values[_scaler_rows(borders)], log)
        scaled = scaler.transform(values).astype(np.float32)
        targets = len(series.columns)
        future = range(values.shape[1] - len(series.future_covariates), values.shape[1])
        return scaler, {
            name: WindowDataset(
                scaled[a:b], input_size, horizon, strides.get(name, 1), targets=targets, future=future,
                allow_empty=empty_allowed.get(name, False),
            )
            for name, (a, b) in borders.items()
            if only in (None, name)
        }
    built = [name for name in ("train", "val", "test") if only in (None, name)]
    parts: dict[str, list[WindowDataset]] = {name: [] for name in built}
    scalers = []
    matrix = series.values
    for j, (name, rows) in enumerate(zip(series.columns, series.own_rows(), strict=True)):
        values = matrix[rows, j, None]
        borders = borders_of(len(values), f"{series.source}: series {name!r}")
        own_log = None if log is None else log[j : j + 1]
        own = Scaler.fit(values[_scaler_rows(borders)], own_log) if scaler is None else scaler.channel(j)
        scalers.append(own)
        scaled = own.transform(values).astype(np.float32)
        for which in parts:
            a, b = borders[which]
            parts[which].append(WindowDataset(scaled[a:b], input_size, horizon, strides.get(which, 1),
                                              allow_empty=empty_allowed.get(which, False)))  # fmt: skip
    pooled = {name: PooledWindows(datasets) for name, datasets in parts.items()}
    return Scaler.joined(scalers), pooled


class ForecastDataModule(L.LightningDataModule):
    """Train/val/test windows of one series under the protocol's split and train-only scaling.

    `stride` thins the train windows; val/test windows use `eval_stride` (default 1) so that test
    metrics cover every window as in the literature. Evaluation loaders never drop the last batch.
    `earlier`: the split's earlier validation period (`splits.earlier_period`) instead, for a model that is
    `trained` or fits nothing. `log`: the channels standardized in logarithms (`Scaler.log`).
    """

    def __init__(
        self,
        series: TimeSeries,
        input_size: int,
        horizon: int,
        split: str = "7:1:2",
        batch_size: int = 32,
        stride: int = 1,
        num_workers: int = 0,
        eval_stride: int = 1,
        earlier: bool = False,
        trained: bool = True,
        log: np.ndarray | None = None,
    ) -> None:
        super().__init__()
        self.series = series
        self.input_size = input_size
        self.horizon = horizon
        self.split = split
        self.batch_size = batch_size
        self.stride = stride
        self.eval_stride = eval_stride
        self.num_workers = num_workers
        self.earlier, self.trained, self.log = earlier, trained, log
        self.scaler: Scaler | None = None

    def setup(self, stage: str | None = None) -> None:
        """Fit the scaler on the train rows, build the three window datasets (once)."""
        if self.scaler is not None:
            return
        strides = {"train": self.stride, "val": self.eval_stride, "test": self.eval_stride}
        self.scaler, sets = window_sets(
            self.series, self.input_size, self.horizon, self.split, strides=strides, earlier=self.earlier,
            trained=self.trained, log=self.log,
        )
        self.train_set, self.val_set, self.test_set = sets["train"], sets["val"], sets["test"]

    def window_counts(self) -> dict[str, int]:
        """Windows per split (needs `setup()`)."""
        if self.scaler is None:
            raise RuntimeError("call setup() before window_counts()")
        return {"train": len(self.train_set), "val": len(self.val_set), "test": len(self.test_set)}

    def _loader(self, dataset: WindowDataset, shuffle: bool) -> DataLoader:
        return DataLoader(
            dataset,
            batch_size=self.batch_size,
            shuffle=shuffle,
            drop_last=False,
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_set, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_set, shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader(self.test_set, shuffle=False)

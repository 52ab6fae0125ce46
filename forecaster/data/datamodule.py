"""LightningDataModule: a TimeSeries split, standardized on its train rows, cut into windows."""

from __future__ import annotations

import lightning as L
import numpy as np
from torch.utils.data import DataLoader

from forecaster.data.scaling import Scaler
from forecaster.data.series import TimeSeries
from forecaster.data.splits import Borders, split_borders, window_counts
from forecaster.data.windows import WindowDataset


class ForecastDataModule(L.LightningDataModule):
    """Train/val/test windows of one series under the protocol's split and train-only scaling.

    `stride` thins the train windows; val/test windows use `eval_stride` (default 1) so that test
    metrics cover every window as in the literature. Evaluation loaders never drop the last batch.
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
        self.borders: Borders | None = None
        self.scaler: Scaler | None = None
        self.scaled: np.ndarray | None = None

    @property
    def n_channels(self) -> int:
        return len(self.series.columns)

    @property
    def columns(self) -> list[str]:
        return self.series.columns

    @property
    def freq(self) -> str | None:
        return self.series.freq

    def setup(self, stage: str | None = None) -> None:
        """Compute borders, fit the scaler on the train rows, build the three window datasets (once)."""
        if self.borders is not None:
            return
        values = self.series.values
        borders = split_borders(
            len(values), self.input_size, self.split, self.freq, horizon=self.horizon,
            source=self.series.source,
        )
        train_start, train_stop = borders["train"]
        self.scaler = Scaler.fit(values[train_start:train_stop])
        self.scaled = self.scaler.transform(values).astype(np.float32)
        strides = {"train": self.stride, "val": self.eval_stride, "test": self.eval_stride}
        sets = {
            name: WindowDataset(self.scaled[a:b], self.input_size, self.horizon, strides[name])
            for name, (a, b) in borders.items()
        }
        self.train_set, self.val_set, self.test_set = sets["train"], sets["val"], sets["test"]
        self.borders = borders

    def window_counts(self) -> dict[str, int]:
        """Windows per split (needs `setup()`)."""
        if self.borders is None:
            raise RuntimeError("call setup() before window_counts()")
        return window_counts(self.borders, self.input_size, self.horizon, self.stride, self.eval_stride)

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

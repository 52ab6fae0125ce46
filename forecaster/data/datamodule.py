"""LightningDataModule: a TimeSeries split, standardized on its train rows, cut into windows."""

from __future__ import annotations

import lightning as L
import numpy as np
from torch.utils.data import DataLoader

from forecaster.data.scaling import Scaler
from forecaster.data.series import TimeSeries
from forecaster.data.windows import WindowDataset, window_sets


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

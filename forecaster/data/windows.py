"""Sliding (input, target) windows over a standardized (N, C) array, and a split's window sets
(`window_sets`): nothing of Lightning's, so scoring a bundle stays light."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import Dataset

from forecaster.checks import check_int
from forecaster.data.scaling import Scaler
from forecaster.data.series import INDEPENDENT, TimeSeries
from forecaster.data.splits import Borders, earlier_period, split_borders, window_count
from forecaster.errors import DataError


class WindowDataset(Dataset):
    """Window i is x = values[s : s+L], y = values[s+L : s+L+H] with s = i * stride (float32 tensors).

    With covariates, the first `targets` columns are forecast (y holds only them) and the `future` columns
    are known ahead: x then also holds the H horizon rows, with every other column zero there.
    """

    def __init__(
        self,
        values: np.ndarray,
        input_size: int,
        horizon: int,
        stride: int = 1,
        *,
        targets: int | None = None,
        future: list[int] | tuple[int, ...] = (),
        allow_empty: bool = False,
    ) -> None:
        """`allow_empty`: no window is no error (the train rows of a model that fits nothing)."""
        array = np.asarray(values)
        if array.ndim != 2:
            raise DataError(f"windows need a (rows, channels) array, got shape {array.shape}")
        for name, value in (("input_size", input_size), ("horizon", horizon), ("stride", stride)):
            check_int(name, value, minimum=1, error=DataError)
        self.input_size = input_size
        self.horizon = horizon
        self.stride = stride
        self.data = torch.from_numpy(np.array(array, dtype=np.float32, copy=True))
        self.targets = array.shape[1] if targets is None else targets
        self.known = None  # 1 for the columns known ahead, where any is (one mask per series costs in panels)
        if len(future):
            self.known = torch.zeros(array.shape[1], dtype=torch.float32)
            self.known[list(future)] = 1.0
        self._length = window_count(0, array.shape[0], input_size, horizon, stride)
        if self._length == 0 and not allow_empty:
            raise DataError(
                f"{array.shape[0]} rows hold no window of input_size {input_size} + horizon {horizon}; "
                f"expected at least {input_size + horizon} rows"
            )

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if not -self._length <= i < self._length:
            raise IndexError(f"window {i} out of range for {self._length} windows")
        start = (i % self._length) * self.stride
        middle = start + self.input_size
        ahead = self.data[middle : middle + self.horizon]
        history = self.data[start:middle]
        if self.known is not None:
            history = torch.cat([history, ahead * self.known])
        return history, ahead[:, : self.targets]

    def stacked(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Every window at once, as views of the data: inputs (N, L, C) and targets (N, H, C)."""
        span = self.input_size + self.horizon
        if self._length == 0:  # fewer rows than a window (`allow_empty`): unfold cannot take the span
            rows = span if self.known is not None else self.input_size
            empty = self.data.new_zeros
            return empty(0, rows, self.data.shape[1]), empty(0, self.horizon, self.targets)
        unfolded = self.data.unfold(0, span, self.stride)[: self._length].transpose(1, 2)  # (N, L + H, C)
        inputs, ahead = unfolded[:, : self.input_size], unfolded[:, self.input_size :]
        if self.known is not None:
            inputs = torch.cat([inputs, ahead * self.known], dim=1)
        return inputs, ahead[..., : self.targets]


class PooledWindows(Dataset):
    """The windows of several one-channel WindowDatasets (one per series) in one dataset, series by series."""

    def __init__(self, parts: list[WindowDataset | EveryNth]) -> None:
        self.parts = parts
        self.input_size, self.horizon = parts[0].input_size, parts[0].horizon
        self._ends = np.cumsum([len(part) for part in parts])

    def __len__(self) -> int:
        return int(self._ends[-1])

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if not -len(self) <= i < len(self):
            raise IndexError(f"window {i} out of range for {len(self)} windows")
        i %= len(self)
        part = int(np.searchsorted(self._ends, i, side="right"))
        return self.parts[part][i - (int(self._ends[part - 1]) if part else 0)]

    def stacked(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Every window at once: inputs (N, L, 1) and targets (N, H, 1)."""
        inputs, targets = zip(*(part.stacked() for part in self.parts), strict=True)
        return torch.cat(inputs), torch.cat(targets)


class EveryNth(Dataset):
    """Every `step`-th window of one series' `windows`, counted back from its last (the latest is kept)."""

    def __init__(self, windows: WindowDataset, step: int) -> None:
        self.windows, self.step = windows, check_int("step", step, minimum=1)
        self.input_size, self.horizon = windows.input_size, windows.horizon
        self._first = (len(windows) - 1) % step if len(windows) else 0

    def __len__(self) -> int:
        return (len(self.windows) - self._first + self.step - 1) // self.step

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if not -len(self) <= i < len(self):
            raise IndexError(f"window {i} out of range for {len(self)} windows")
        return self.windows[self._first + (i % len(self)) * self.step]

    def stacked(self) -> tuple[torch.Tensor, torch.Tensor]:
        inputs, targets = self.windows.stacked()  # views of the data: nothing copied but what is kept
        return inputs[self._first :: self.step], targets[self._first :: self.step]


def thinned(windows: WindowDataset | PooledWindows, most: int) -> WindowDataset | PooledWindows | EveryNth:
    """`windows` where they are at most `most`, else every n-th of each series' (n the smallest keeping about
    `most`): a long history thinned evenly, its every period and series still among them."""
    if len(windows) <= most:
        return windows
    step = -(-len(windows) // max(most, 1))
    if isinstance(windows, PooledWindows):
        return PooledWindows([EveryNth(part, step) for part in windows.parts])
    return EveryNth(windows, step)


Windows = WindowDataset | PooledWindows


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
            n_rows, input_size, split, series.freq, horizon=horizon, source=source, trained=trained, only=only
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
        scaler = scaler or Scaler.fit_split(values, borders, log)
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
        own = Scaler.fit_split(values, borders, own_log) if scaler is None else scaler.channel(j)
        scalers.append(own)
        scaled = own.transform(values).astype(np.float32)
        for which in parts:
            a, b = borders[which]
            parts[which].append(WindowDataset(scaled[a:b], input_size, horizon, strides.get(which, 1),
                                              allow_empty=empty_allowed.get(which, False)))  # fmt: skip
    joined = Scaler.joined(scalers)
    # a series that never moved scores 0 whatever is forecast: pooled, its windows narrowed the others'
    # margins (two constant series of three gave the third's 80% band 40% of its width, h52)
    moving = ~joined.steady if not joined.steady.all() else np.ones(len(scalers), dtype=bool)
    pooled = {name: PooledWindows([part for part, kept in zip(datasets, moving, strict=True) if kept])
              for name, datasets in parts.items()}  # fmt: skip
    return joined, pooled

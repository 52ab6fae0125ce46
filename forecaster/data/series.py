"""What a table becomes: `TimeSeries` (time index + float64 targets) and the `ReadOptions` that made it.

The options are declared once: the reading flags of the command line, the keywords of `read_csv` /
`read_frame`, and what a bundle remembers so that new rows are read the way its training rows were.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from forecaster.checks import check_fields, parse_names, setting
from forecaster.data.dates import DATE_PARTS, date_part_kinds
from forecaster.errors import DataError

FILL_METHODS = ("ffill", "interpolate")
CHANNEL_MODES = ("multivariate", "independent")
INDEPENDENT = "independent"


class DataQualityWarning(UserWarning):
    """Something in a file that is usable but worth knowing (benchmark quirks, skipped or filled cells)."""


@dataclass(frozen=True)
class ReadOptions:
    """How a table becomes a series, declared once: the reading flags of the command line, the keywords of
    `read_csv` / `read_frame`, and what a bundle remembers so that new rows are read as its training rows."""

    date_col: str | None = setting(None, "name of the date column (default: found automatically)")
    no_date: bool = setting(False, "the table has no dates: index rows by integer steps", flag="--no-date")
    date_from: list | None = setting(
        None, "build the dates from whole-number columns: year | year,quarter | year,month | year,week",
        parse=parse_names,
    )
    targets: list | None = setting(
        None, "comma-separated columns to forecast (default: every numeric column)", parse=parse_names
    )
    id_col: str | None = setting(
        None, "long format: the column naming each series (e.g. unique_id); rows id, time, value become one "
        "model whose channels are the series (they must share their timestamps)",
    )
    target_col: str | None = setting(None, "long format: the column of values (default y)")
    channels: str = setting(
        "multivariate", "multivariate: the series are the channels of one model and must share their "
        "timestamps; independent: one model shared by every series, each standardized on its own train rows "
        "and split on its own (series may start and end at different times)", choices=CHANNEL_MODES,
    )
    fill_missing: str | None = setting(
        None, "fill missing cells, and missing time steps (gaps) of a regular series, by this method",
        choices=FILL_METHODS,
    )

    def __post_init__(self) -> None:
        check_fields(self, "reading option", error=DataError)
        if self.date_from is not None and date_part_kinds(self.date_from) is None:
            raise DataError(
                f"date_from={self.date_from}: expected columns named "
                + " | ".join(",".join(parts) for parts in DATE_PARTS)
            )
        if self.target_col is not None and self.id_col is None:
            raise DataError("target_col names the values of long format; give id_col (--id-col) as well")
        if self.id_col is not None and self.date_from is not None:
            raise DataError("long format takes its times from one column (date_col, default ds), "
                            "not from date_from")
        given = [name for name, on in (("date_col", self.date_col is not None), ("no_date", self.no_date),
                                       ("date_from", self.date_from is not None)) if on]  # fmt: skip
        if len(given) > 1:
            raise DataError(f"{' and '.join(given)} contradict each other; give one way to find the dates")


@dataclass
class TimeSeries:
    """A validated multivariate series: `frame` holds only float64 target columns on a time index;
    `options` are the reading options that made it, with the date column found."""

    frame: pd.DataFrame
    freq: str | None
    source: str
    date_col: str | None = None
    dataset: str | None = None
    options: ReadOptions = ReadOptions()

    @property
    def values(self) -> np.ndarray:
        """The (N, C) float64 matrix of target values."""
        return self.frame.to_numpy(dtype=np.float64)

    @property
    def columns(self) -> list[str]:
        return [str(column) for column in self.frame.columns]

    @property
    def index(self) -> pd.Index:
        return self.frame.index

    def __len__(self) -> int:
        return len(self.frame)

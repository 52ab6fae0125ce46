"""What a table becomes: `TimeSeries` (time index + float64 targets) and the `ReadOptions` that made it.

The options are declared once: the reading flags of the command line, the keywords of `read_csv` /
`read_frame`, and what a bundle remembers so that new rows are read the way its training rows were.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import pandas as pd

from forecaster.checks import check_fields, parse_names, setting
from forecaster.data.calendar import calendar_columns
from forecaster.data.dateparts import DATE_PARTS, WEEK_COUNTS, date_part_kinds
from forecaster.data.missing import (
    AUTO,
    MAX_GAP_SHARE,
    MAX_GAP_STEPS,
    MAX_MISSING_SHARE,
    NO_FILL,
    value_spans,
)
from forecaster.data.textfile import composed
from forecaster.errors import DataError, DataQualityWarning

FILL_METHODS = (AUTO, NO_FILL, "interpolate", "ffill")
CHANNEL_MODES = MULTIVARIATE, INDEPENDENT = ("multivariate", "independent")


_COLLECTED: ContextVar[list[str] | None] = ContextVar("collected_notes", default=None)


def say_note(text: str, stacklevel: int = 1) -> None:
    """A reading note: a DataQualityWarning, or within `collected_notes` one of its notes."""
    collected = _COLLECTED.get()
    if collected is None:
        warnings.warn(text, DataQualityWarning, stacklevel=stacklevel + 1)
    else:
        collected.append(text)


@contextmanager
def collected_notes() -> Iterator[list[str]]:
    """The reading notes said within (this thread's or task's only), in order, as texts. The service reads
    requests in worker threads, where `warnings.catch_warnings(record=True)`, which swaps the process's one
    hook, gave two requests reading at once each other's notes, or lost them (32 and 86 of 120 requests)."""
    notes: list[str] = []
    token = _COLLECTED.set(notes)
    try:
        yield notes
    finally:
        _COLLECTED.reset(token)


# The blocks of a file of several frequencies (ONS), coarsest first; the finest of at least ENOUGH_PERIODS
# rows is read unless one is asked for.
PERIOD_BLOCKS, ENOUGH_PERIODS = ("yearly", "quarterly", "monthly"), 24


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
    weeks: str | None = setting(
        None, "year and week columns count iso weeks (Monday to Sunday) or mmwr weeks (epidemiological, "
        "Sunday to Saturday: the CDC's); default: iso unless a week 53 or fewer gaps say mmwr",
        choices=WEEK_COUNTS,
    )
    targets: list | None = setting(
        None, "comma-separated columns to forecast (default: every numeric column)", parse=parse_names
    )
    id_col: str | None = setting(
        None, "long format: the column naming each series (e.g. unique_id), or several joined by commas "
        "(geo,na_item: a series per pair); rows id, time, value become one model whose channels are the "
        "series",
    )
    target_col: str | None = setting(
        None, "long format: the column of values (default y, or each numeric column that varies within a "
        "series), or several joined by commas: each a variable of every series"
    )
    channels: str | None = setting(
        None, "multivariate: the series are the channels of one model and must share their timestamps; "
        "independent: one model shared by every series, each standardized on its own train rows and split on "
        "its own (series may start and end at different times); default: multivariate, or independent for "
        "the series of a long table whose times differ", choices=CHANNEL_MODES,
    )
    fill_missing: str | None = setting(
        None, "missing cells and missing time steps (gaps) of a regular series: auto (the default) fills "
        f"them by linear interpolation unless a column misses more than {MAX_MISSING_SHARE:.0%} of its "
        f"values or has a gap longer than {MAX_GAP_STEPS} steps and {MAX_GAP_SHARE:.0%} of its rows; none "
        "refuses any; interpolate (linear) and ffill (the last value) fill every one, the nearest value at "
        "the ends",
        choices=FILL_METHODS,
    )
    past_covariates: list | None = setting(
        None, "comma-separated columns used as inputs but not forecast (known only up to the last row)",
        parse=parse_names,
    )
    future_covariates: list | None = setting(
        None, "comma-separated columns known ahead (plans, prices, holidays): inputs for the history and the "
        "horizon (predict --future-csv gives the horizon's rows)", parse=parse_names,
    )
    calendar: bool = setting(
        False, "add calendar covariates from the dates (hour of day, day of week, time of year, as the "
        "frequency allows): future covariates that need no file"
    )
    periods: str | None = setting(
        None, "a file of several frequencies one after another (an ONS time series: years, then quarters, "
        f"then months): the block to read (default: the finest with {ENOUGH_PERIODS} rows or more)",
        choices=PERIOD_BLOCKS,
    )
    dayfirst: bool = setting(
        False, "dates written 01/02/2020 that read day or month first alike are read day first: what a "
        "bundle records of its training rows, read so", cli=False,
    )
    sheet: str | None = setting(
        None, "the sheet of an .xlsx workbook to read, by name or number (1: the first); default: the "
        "visible sheet holding the most numbers"
    )

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):  # "year,quarter" or "OT" as the command line takes them
            value = getattr(self, field.name)
            if isinstance(value, str) and field.metadata.get("parse") is parse_names:
                value = parse_names(value)
            if isinstance(value, list):  # names as the reader composes a table's
                value = [composed(name) if isinstance(name, str) else name for name in value]
            object.__setattr__(self, field.name, composed(value) if isinstance(value, str) else value)
        check_fields(self, "reading option", error=DataError)
        named = self.date_from is not None and date_part_kinds(self.date_from) is not None
        if self.date_from is not None and not named and len(self.date_from) != 2:
            raise DataError(
                f"date_from={self.date_from}: expected columns named "
                + " | ".join(",".join(parts) for parts in DATE_PARTS) + ", or two: a year and its part"
            )  # two named otherwise: their parts read from their values (dateparts)
        if self.target_col is not None and self.id_col is None:
            raise DataError("target_col names the values of long format; give id_col (--id-col) as well")
        covariates = [*(self.past_covariates or []), *(self.future_covariates or [])]
        overlap = sorted(set(covariates) & set(self.targets or [])) or sorted(
            {name for name in covariates if covariates.count(name) > 1}
        )
        if overlap:
            raise DataError(f"column(s) {overlap} given twice; a column is a target or one kind of covariate")
        if (covariates or self.calendar) and (self.channels == INDEPENDENT or self.id_col is not None):
            raise DataError("covariates are read from wide tables of one multivariate model; long format and "
                            "independent series take none yet")
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
    date_style: str | None = None  # how the file wrote its dates (`data.labels`); None: as timestamps
    date_parts: tuple[str, ...] | None = None  # the date-part columns it wrote them in (`dateparts`)
    others: tuple[str, ...] = ()  # series beside the targets given, not read (`columns.other_series`)

    @property
    def values(self) -> np.ndarray:
        """The (N, C) float64 matrix of target values."""
        return self.frame[self.columns].to_numpy(dtype=np.float64)

    @property
    def columns(self) -> list[str]:
        """The targets: the columns forecast."""
        covariates = set(self.past_covariates) | set(self.future_covariates)
        return [str(column) for column in self.frame.columns if column not in covariates]

    @property
    def past_covariates(self) -> list[str]:
        return list(self.options.past_covariates or [])

    @property
    def future_covariates(self) -> list[str]:
        """Given future covariates, then the calendar's."""
        calendar = calendar_columns(self.freq) if self.options.calendar else []
        return [*(self.options.future_covariates or []), *calendar]

    @property
    def inputs(self) -> np.ndarray:
        """(N, C_in) float64: targets, past covariates, future covariates (the model's input channels)."""
        order = [*self.columns, *self.past_covariates, *self.future_covariates]
        return self.frame[order].to_numpy(dtype=np.float64)

    @property
    def index(self) -> pd.Index:
        return self.frame.index

    def of_series(self, names: list[str]) -> TimeSeries:
        """Some of independent series (`names`, of the targets) without the others: a bundle's companion
        forecasts and scores its own (`artifacts.COMPANION`)."""
        kept = set(names)
        return dataclasses.replace(self, frame=self.frame.drop(columns=[
            name for name in self.columns if name not in kept]))  # fmt: skip

    def own_rows(self) -> list[slice]:
        """Each target's rows from its first value to its last: what an independent series is split on (the
        series of a long panel start and end apart)."""
        return [slice(first, last + 1) for first, last in value_spans(np.isfinite(self.values))]

    def __len__(self) -> int:
        return len(self.frame)

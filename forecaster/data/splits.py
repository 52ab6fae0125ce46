"""Train/val/test borders of the forecasting protocol and the number of sliding windows in each.

Borders are half-open row ranges; val and test start `input_size` rows before their first target row
so that their first window forecasts the first row after the previous split (REFERENCE.md section 2).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd
from pandas.tseries.frequencies import to_offset

from forecaster.checks import check_int
from forecaster.data.series import INDEPENDENT
from forecaster.errors import DataError

if TYPE_CHECKING:
    from forecaster.data.series import TimeSeries

PROTOCOL_SPLIT, HOLDOUT, AUTO_SPLIT = "7:1:2", "holdout", "auto"
DEFAULT_INPUT_SIZE = 96  # the protocol's input length, and a user file's unless it is too short for it
# auto: `resolve_split` of the rows split, so each independent series of a panel gets its own (a 40-row series
# beside 46-row ones at horizon 5 has 4 validation rows under 7:1:2 and is split holdout, not left out)
SPLIT_SCHEMES = (PROTOCOL_SPLIT, "ett", HOLDOUT, AUTO_SPLIT)
SPLIT_NAMES = ("train", "val", "test")
ETT_HOURS = (12 * 30 * 24, 16 * 30 * 24, 20 * 30 * 24)
_HOUR = pd.Timedelta(hours=1)

Borders = dict[str, tuple[int, int]]


def rows_per_hour(freq: str | None) -> int:
    """Rows per hour of a frequency that divides one hour evenly (h -> 1, 15min -> 4); DataError otherwise."""
    expected = "expected hourly data or a step that divides one hour (15min, 10min, ...)"
    if freq is None:
        raise DataError(f"the ett split needs the data's frequency, but none is known; {expected}")
    try:
        step = pd.Timedelta(to_offset(freq))
    except (ValueError, TypeError):
        raise DataError(f"the ett split cannot use frequency {freq!r}; {expected}") from None
    if step <= pd.Timedelta(0) or step > _HOUR or _HOUR % step != pd.Timedelta(0):
        raise DataError(f"the ett split cannot use frequency {freq!r}; {expected}")
    return int(_HOUR // step)


def window_count(start: int, stop: int, input_size: int, horizon: int, stride: int = 1) -> int:
    """Windows of input_size + horizon rows inside [start, stop), taken every `stride` rows."""
    span = stop - start - input_size - horizon
    return span // stride + 1 if span >= 0 else 0


def window_counts(
    borders: Borders, input_size: int, horizon: int, stride: int = 1, eval_stride: int = 1
) -> dict[str, int]:
    """Windows per split: train windows every `stride` rows, val/test every `eval_stride` rows."""
    return {
        name: window_count(a, b, input_size, horizon, stride if name == "train" else eval_stride)
        for name, (a, b) in borders.items()
    }


def _ratio_rows(n_rows: int) -> tuple[int, int, int]:
    """Rows of train, val and test under 7:1:2 (as the reference code rounds them)."""
    n_train = int(n_rows * 0.7)
    n_test = int(n_rows * 0.2)
    return n_train, n_rows - n_train - n_test, n_test


def _raw_borders(n_rows: int, input_size: int, scheme: str, freq: str | None, horizon: int) -> Borders:
    scheme = resolve_split(scheme, n_rows, horizon)
    if scheme == HOLDOUT:
        return {
            "train": (0, n_rows - 2 * horizon),
            "val": (n_rows - 2 * horizon - input_size, n_rows - horizon),
            "test": (n_rows - horizon - input_size, n_rows),
        }
    if scheme == PROTOCOL_SPLIT:
        n_train, n_val, n_test = _ratio_rows(n_rows)
        return {
            "train": (0, n_train),
            "val": (n_train - input_size, n_train + n_val),
            "test": (n_rows - n_test - input_size, n_rows),
        }
    scale = rows_per_hour(freq)
    train_end, val_end, test_end = (hours * scale for hours in ETT_HOURS)
    return {
        "train": (0, train_end),
        "val": (train_end - input_size, val_end),
        "test": (val_end - input_size, test_end),
    }


def resolve_split(scheme: str, n_rows: int, horizon: int) -> str:
    """`scheme`, or for auto `default_split` of the rows: by rows and horizon only, so that every model of
    one choice, whatever its input, is scored on the same validation windows."""
    return default_split(n_rows, horizon) if scheme == AUTO_SPLIT else scheme


def usable(
    n_rows: int, input_size: int, horizon: int, scheme: str, freq: str | None, trained: bool = True,
    only: str | None = None,
) -> bool:
    """Whether every split holds a window; `trained` False (a forecast that fits nothing learns from no
    train window): validation and test do, and train holds rows to fit the scaler on; `only`: that split
    (a forecast whose input validation cannot hold is scored on the test split, `training.growth`)."""
    borders = _raw_borders(n_rows, input_size, scheme, freq, horizon)
    counts = window_counts(borders, input_size, horizon)
    if not trained:
        counts["train"] = borders["train"][1] - borders["train"][0]
    within = {name: start >= 0 and stop <= n_rows for name, (start, stop) in borders.items()}
    if only is not None:
        return within[only] and counts[only] >= 1
    return all(within.values()) and min(counts.values()) >= 1


def min_rows(
    input_size: int, horizon: int, scheme: str = "7:1:2", freq: str | None = None, trained: bool = True
) -> int | None:
    """Fewest rows from which every row count gives every split at least one window, train none where not
    `trained` (None if no row count can). Under 7:1:2 a count that does can be followed by one that does
    not (its rows are floors of fractions: at horizon 13, 114 rows leave validation 13 rows, 116 rows 12),
    and "at least" must hold for every count above."""
    if scheme == "ett":
        needed = ETT_HOURS[2] * rows_per_hour(freq)
        return needed if usable(needed, input_size, horizon, scheme, freq, trained) else None
    if scheme in (HOLDOUT, AUTO_SPLIT):  # holdout's bound is below 7:1:2's (auto is one of the two)
        # From holdout's bound (a horizon of 10**9 must not take 10**10 steps): its train rows n - 2h hold
        # a window.
        n_rows = input_size + (3 if trained else 2) * horizon
        while not usable(n_rows, input_size, horizon, scheme, freq, trained):
            n_rows += 1
        return n_rows
    # From a count every larger one works at (validation rows at least 0.1 n, test and train rows at least
    # 0.2 n - 2 and 0.7 n - 2, floats floored) down to the first of the counts that all work: a few steps.
    train = input_size + (horizon if trained else 0)
    n_rows = max(10 * horizon, 5 * (horizon + 2), math.ceil((train + 2) / 0.7))
    while n_rows > 1 and usable(n_rows - 1, input_size, horizon, scheme, freq, trained):
        n_rows -= 1
    return n_rows


def default_split(n_rows: int, horizon: int) -> str:
    """7:1:2 where its validation and test rows each hold a horizon; else holdout: a yearly file of 40 rows
    has 4 validation rows under 7:1:2, and a forecaster still needs one window to choose and one to score."""
    _, n_val, n_test = _ratio_rows(n_rows)
    return PROTOCOL_SPLIT if min(n_val, n_test) >= horizon else HOLDOUT


def fitting_input_size(
    n_rows: int, horizon: int, scheme: str, freq: str | None, preferred: int = DEFAULT_INPUT_SIZE
) -> int:
    """The longest input up to `preferred` (96) that leaves the train split at least as many windows as input
    steps: 96 steps of a 60-row file would leave no window to learn from (at least 1)."""
    train_rows = _raw_borders(n_rows, 1, scheme, freq, horizon)["train"][1]
    return max(1, min(preferred, (train_rows - horizon + 1) // 2))


# A panel's default input lets this share of its series train (the shortest few may be left out rather than
# shorten every series' input to theirs).
KEPT_SERIES = 0.9


def default_input(series: TimeSeries, horizon: int, split: str, trained: bool = True) -> int:
    """A user file's input: 96, shortened on a short file so that training keeps as many windows as input
    steps (`fitting_input_size`); for a panel of independent series (`_own_split`) whose shorter series that
    input would leave out, as for one of the shortest that any input splits (the KEPT_SERIES share of them
    keeps its windows: 24-year series beside 64-year ones were left out by the 64-year input of 20), under a
    named split too (h109: --split holdout read the longest series' 47 steps and left out 90 of 100 series
    that auto keeps). Not `trained` (naive named, `planning.default_input_size`): counting the series split
    without a train window."""
    whole = fitting_input_size(len(series), horizon, split, series.freq)
    if not _own_split(series, split):
        return whole
    lengths = _splittable_lengths(series, min_rows(1, horizon, split, trained=trained))
    if not lengths or all(usable(n, whole, horizon, split, series.freq, trained) for n in lengths):
        return whole
    return fitting_input_size(_kept_length(lengths), horizon, split, series.freq)


def panel_rows(series: TimeSeries, horizon: int, split: str, input_size: int) -> int:
    """The rows a model is planned on: a table's, or for a panel of independent series (each split over its
    own rows, under any split but ett's fixed borders) the length the KEPT_SERIES share of them reach, of
    those a forecast that fits nothing can split at the run's `input_size`, so that a model is not planned
    that would leave more of them out (EmplUK's firms of 5-7 rows had drift planned on the longest's 7, and
    the first firm of 5 refused the panel at horizon 2; under --split holdout 26 of 30 such firms were left
    out), nor a panel refused over series its input leaves out anyway (90 of 6 rows beside 10 of 100 at
    horizon 2 and input 34: every model had been judged on 6 rows, h109)."""
    if not _own_split(series, split):
        return len(series)
    lengths = _splittable_lengths(series, min_rows(input_size, horizon, split, trained=False))
    return _kept_length(lengths) if lengths else len(series)


def _own_split(series: TimeSeries, split: str) -> bool:
    """Whether each series is split over its own rows: a panel of independent series, under any split but
    ett's fixed borders."""
    return series.options.channels == INDEPENDENT and split != "ett"


def _splittable_lengths(series: TimeSeries, fewest: int) -> list[int]:
    """The lengths of a panel's series that hold `fewest` rows, in order (none where `fewest` is 0: no series
    splits)."""
    return sorted(n for n in series_lengths(series) if fewest and n >= fewest)


def _kept_length(lengths: list[int]) -> int:
    """The length the KEPT_SERIES share of sorted `lengths` reach."""
    return lengths[int((1 - KEPT_SERIES) * len(lengths))]


def series_lengths(series: TimeSeries, own: list[slice] | None = None) -> list[int]:
    """Each target's rows from its first value to its last (`TimeSeries.own_rows`, or `own` where the caller
    holds them already): an independent series'."""
    return [rows.stop - rows.start for rows in (series.own_rows() if own is None else own)]


def split_borders(
    n_rows: int,
    input_size: int,
    scheme: str = "7:1:2",
    freq: str | None = None,
    *,
    horizon: int | None = None,
    source: str | None = None,
    trained: bool = True,
    only: str | None = None,
) -> Borders:
    """Half-open train/val/test row ranges of `scheme` ("7:1:2", "ett", "holdout" or "auto"; ett needs `freq`,
    holdout's validation and test each hold the last `horizon` rows before the next split, auto is
    `default_split` of `n_rows`).

    With `horizon`, also checks that every split holds at least one window (train none where not `trained`)
    and otherwise raises a DataError saying how many rows are needed and how many there are (`source` names
    the file); `only`: that split alone (`usable`).
    """
    if scheme not in SPLIT_SCHEMES:
        raise DataError(f"unknown split {scheme!r}; expected one of {', '.join(SPLIT_SCHEMES)}")
    check_int("input_size", input_size, minimum=1, error=DataError)
    if horizon is not None:
        check_int("horizon", horizon, minimum=1, error=DataError)
    checked_horizon = 1 if horizon is None else horizon
    asked, scheme = scheme, resolve_split(scheme, n_rows, checked_horizon)  # named as resolved below
    borders = _raw_borders(n_rows, input_size, scheme, freq, checked_horizon)
    if not usable(n_rows, input_size, checked_horizon, scheme, freq, trained, only):
        needed = min_rows(input_size, checked_horizon, scheme, freq, trained)
        what = f"split {scheme} with input_size {input_size}" + (f" and horizon {horizon}" if horizon else "")
        origin = f"{source}: " if source else ""
        if needed is None:
            raise DataError(
                f"{origin}{what} cannot give every split a window (the ett val/test splits hold "
                f"{ETT_HOURS[1] - ETT_HOURS[0]} hours); expected a shorter horizon or the 7:1:2 split"
            )
        if only is not None:  # that split alone: the fewest rows that hold it (evaluating a `growth` bundle)
            fewer = (count for count in range(n_rows + 1, needed)
                     if usable(count, input_size, checked_horizon, scheme, freq, trained, only))  # fmt: skip
            least = next(fewer, needed)
            raise DataError(f"{origin}{n_rows} rows are too few for {what}: needs at least {least} rows so "
                            f"that the {only} split holds a window")  # fmt: skip
        shorter = ""
        if scheme == PROTOCOL_SPLIT and usable(n_rows, input_size, checked_horizon, HOLDOUT, freq, trained):
            shorter = " (or --split holdout: the last horizon tests, the one before validates)"
        elif trained and scheme == HOLDOUT:  # describe said 37 rows, train with the baselines 25
            fewer = min_rows(input_size, checked_horizon, scheme, freq, trained=False)
            shorter = f" ({fewer} for a forecast that fits nothing, --model naive)"
        fits = _longest_horizon(n_rows, input_size, asked, freq, trained, below=checked_horizon)
        shorter += f"; a horizon of at most {fits} fits" if horizon and fits else ""
        raise DataError(
            f"{origin}{n_rows} rows are too few for {what}: needs at least {needed} rows "
            f"so that {'train, val and test' if trained else 'val and test'} each hold one window{shorter}"
        )
    return borders


def _longest_horizon(
    n_rows: int, input_size: int, scheme: str, freq: str | None, trained: bool, below: int
) -> int:
    """The longest horizon under `below` that `n_rows` split (0: none), by bisection: a horizon's windows only
    fall as it grows (24 monthly rows at horizon 12 were refused, not told that 11 fits)."""
    low, high = 0, min(below - 1, n_rows)
    while low < high:
        middle = (low + high + 1) // 2
        held = usable(n_rows, input_size, middle, scheme, freq, trained)
        low, high = (middle, high) if held else (low, middle - 1)
    return low


def earlier_period(borders: Borders, input_size: int, horizon: int, trained: bool = True) -> Borders | None:
    """The split with its validation period moved back by its own length: train ends that many rows
    sooner and its last rows become the validation rows (test stays: nothing reads it there). None when the
    shortened train split would hold no window, or (`trained` False: a model that fits nothing needs none)
    fewer rows than the validation windows' input."""
    train_end = borders["train"][1]
    start = train_end - (borders["val"][1] - train_end)
    if start < max(input_size, 1) or (trained and window_count(0, start, input_size, horizon) < 1):
        return None
    return {"train": (0, start), "val": (start - input_size, train_end), "test": borders["test"]}

"""Missing cells of a read table: named with their file lines, filled by default when they are a few short
gaps, or filled as the user asks; and values too large to read (infinite) or to train on."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forecaster.errors import DataError

SHOWN = 5
# The largest magnitude training takes: its square still fits float32, the precision of the model and its
# squared errors. Larger values overflow the scaler's variance or the standardized float32 windows into
# inf/NaN, which would surface only when the trained model is saved.
MAX_TRAINING_MAGNITUDE = float(np.sqrt(np.finfo(np.float32).max))
AUTO, NO_FILL = "auto", "none"
# What the default (AUTO) fills by linear interpolation without being asked: a few short gaps inside a
# column are sensor dropouts or unreported weeks, and a straight line over them changes little of what a
# model learns; a column missing more than a tenth of its values, or one gap longer than three steps and
# longer than a twentieth of the column, would teach the model straight lines (a missed season, a changed
# collection), so the user chooses (--fill-missing interpolate / ffill) or repairs the file.
MAX_MISSING_SHARE = 0.10
MAX_GAP_STEPS = 3
MAX_GAP_SHARE = 0.05
# The rows AUTO drops where not every column has a value yet (or any more): series of a panel that start a
# few periods apart (World Bank and Eurostat tables begin with '..' for some countries), or a latest period
# not yet published for all. More than this share of the rows is a panel of different spans, for
# --channels independent.
MAX_EDGE_SHARE = 0.2
MISREAD_STEPS = 4  # missing time steps this many times the rows: misread dates, no gaps to fill (h75 F3)


# How messages place a data row: a file's line (the header is line 1), or a DataFrame's row position
# (`rows_of_a_frame`), so a DataFrame's row 10 is not called line 12.
_PLACES: ContextVar[tuple[str, int]] = ContextVar("places", default=("line", 2))


@contextmanager
def rows_of_a_frame() -> Iterator[None]:
    """Within it, messages place data rows by their DataFrame position ("row 10"), not by file line."""
    token = _PLACES.set(("row", 0))
    try:
        yield
    finally:
        _PLACES.reset(token)


# The lines a file's data records span beyond one each, up to a record (`records.LineMap`), while a file is
# read (`file_lines`): a quoted cell's line breaks, so that the line a message names is the one grep finds
_EXTRA: ContextVar[Callable[[int], int] | None] = ContextVar("extra_lines", default=None)


@contextmanager
def file_lines(extra: Callable[[int], int] | None) -> Iterator[None]:
    """Within it, `line_number` counts the lines each data record spans (`extra`: those beyond one; None:
    one each, a benchmark file's)."""
    token = _EXTRA.set(extra)
    try:
        yield
    finally:
        _EXTRA.reset(token)


def renumbered() -> None:
    """From here on in `file_lines`, rows are no records of the file (rows dropped, a table reshaped): their
    numbers count rows, as the reader's context then says."""
    _EXTRA.set(None)


# Whether messages advise on reading options (--fill-missing, --channels, ...): not to clients of the HTTP
# service, whose model reads their rows as its training data was read (`without_reading_advice`).
_ADVISE: ContextVar[bool] = ContextVar("advise", default=True)


@contextmanager
def without_reading_advice() -> Iterator[None]:
    """Within it, messages leave out `advice` on options the reader of them cannot give."""
    token = _ADVISE.set(False)
    try:
        yield
    finally:
        _ADVISE.reset(token)


def advice(text: str) -> str:
    """`text` (a hint on a reading option, with its leading space or separator), or "" where clients cannot
    give options."""
    return text if _ADVISE.get() else ""


def line_number(position: int) -> int:
    """The number a message gives a data row: its file line, or its DataFrame position."""
    extra = _EXTRA.get()
    return int(position) + _PLACES.get()[1] + (0 if extra is None else extra(int(position)))


def line(position: int) -> str:
    """A data row as messages name it: "line 12" of a file, "row 10" of a DataFrame."""
    return f"{_PLACES.get()[0]} {line_number(position)}"


def some(items: list[str]) -> str:
    """The first SHOWN of a list for a message, and how many more: 'US', 'DE' and 3 more."""
    return ", ".join(items[:SHOWN]) + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def when(stamp: Any) -> str:
    """A timestamp as a message names it: its date alone at midnight (weekly rows, 2015-03-15); a step of
    an index of steps as its number."""
    if not isinstance(stamp, pd.Timestamp):
        return str(stamp)
    return str(stamp.date()) if stamp == stamp.normalize() else str(stamp)


def lines(positions: np.ndarray, shift: int = 0) -> str:
    """Several data rows as messages name them: "line(s) 4, 9, ..." or "row(s) 2, 7, ..." (`shift`: lines
    above the header, where the numbers are the file's)."""
    shown = ", ".join(str(shift + line_number(p)) for p in positions[:SHOWN])
    return f"{_PLACES.get()[0]}(s) " + shown + (", ..." if len(positions) > SHOWN else "")


def names_lines(message: str) -> bool:
    """Whether a message names file lines as `line` and `lines` write them ("line 12", "line(s) 4, 9")."""
    return re.search(r"\bline(?:\(s\))? \d", message) is not None


# What offices and sensors write for a missing value: NOAA's -999.99, weather stations' -9999, ...
MISSING_CODES = (-99999.0, -9999.99, -9999.0, -999.99, -999.9, -999.0, -99.99, -99.9, -99.0)


def missing_codes(frame: pd.DataFrame, notes: list[str], published: bool = False) -> pd.DataFrame:
    """Cells of a missing-value code (MISSING_CODES) that is its column's lowest value, all its other values
    above a tenth of it (-999.99 beside CO2 readings of 300-420 ppm: as numbers, every standardized error read
    0.0000), as missing, said in `notes`; a benchmark file's (`published`) kept as numbers, said too. One pass
    over the table: only columns whose lowest value is a code are looked at again."""
    values = frame.to_numpy(dtype=np.float64)
    lowest = np.fmin.reduce(values, axis=0) if len(values) else np.array([])  # NaN ignored
    counts: dict[float, int] = {}
    coded = np.zeros(values.shape, dtype=bool)
    for j in np.flatnonzero(np.isin(lowest, MISSING_CODES)):
        column = values[:, j]
        cells = column == lowest[j]
        if np.fmin.reduce(np.where(cells, np.nan, column)) > lowest[j] / 10 or cells.all():
            coded[:, j] = cells
            counts[lowest[j]] = counts.get(lowest[j], 0) + int(cells.sum())
    said = ", ".join(f"{count} cell(s) of {code:g}" for code, count in sorted(counts.items()))
    if said and published:
        notes.append(f"{said} (a common sensor fill value), used as numbers")
    elif said:
        notes.append(f"read {said} as missing (a code far below its column's other values)")
    return frame if not said or published else frame.mask(coded)


def fill_missing_cells(
    path: Path | str,
    frame: pd.DataFrame,
    fill_missing: str,
    notes: list[str],
    *,
    spans: bool = False,
    rows: np.ndarray | None = None,
    freq: str | None = None,
) -> pd.DataFrame:
    """Missing cells and the rows added to a regular grid (missing time steps of a `freq` series): an error
    naming them (NO_FILL), a few short gaps interpolated (AUTO), or every one filled by `fill_missing`. With
    `spans` (independent series) each column may start late and end early: only cells inside its
    first-to-last value count. `rows`: each row's place among the file's data rows, -1 for a row added to
    the grid (default: the frame's rows are the file's, in order)."""
    rows = np.arange(len(frame)) if rows is None else rows
    if fill_missing == AUTO and not spans:
        frame, rows = _trim_edges(frame, rows, notes)
    added = rows < 0
    finite = np.isfinite(frame.to_numpy())
    places = np.arange(len(frame))[:, None]
    inside = (places >= finite.argmax(axis=0)) & (places <= len(frame) - 1 - finite[::-1].argmax(axis=0))
    inside &= finite.any(axis=0)
    if spans:
        empty = [str(frame.columns[j]) for j in np.flatnonzero(~finite.any(axis=0))]
        if empty:
            raise DataError(f"{path}: series {', '.join(map(repr, empty))} have no values at all")
        missing = ~finite & inside
    else:
        missing = ~finite
    if not missing.any():
        return frame
    if fill_missing == NO_FILL:
        _refuse(path, frame, missing, rows, freq)
    if fill_missing == AUTO:
        return _fill_short_gaps(path, frame, missing, inside, rows, freq, notes)
    if added.any():
        notes.append(f"added {int(added.sum())} missing time step(s) of the {freq} grid")
    if spans:
        filled = fill_missing_cells(path, frame.where(inside, 0.0), fill_missing, notes)
        return filled.where(inside, np.nan)
    empty = [str(frame.columns[j]) for j in np.flatnonzero(missing.all(axis=0))]
    if empty:
        raise DataError(
            f"{path}: column(s) {', '.join(map(repr, empty))} have no values at all; cannot fill them"
        )
    frame = frame.replace([np.inf, -np.inf], np.nan)
    if fill_missing == "ffill":
        frame = frame.ffill().bfill()
    else:
        frame = frame.interpolate(method="linear", limit_direction="both")
    notes.append(f"filled {int(missing.sum())} missing cell(s) by {fill_missing}")
    return frame


def value_spans(finite: np.ndarray) -> list[tuple[int, int]]:
    """Each column's first and last row holding a value (`finite`: which do; each column holds one)."""
    return [(int(rows[0]), int(rows[-1])) for rows in map(np.flatnonzero, finite.T)]


def _shared_rows(finite: np.ndarray) -> tuple[int, int] | None:
    """The first and last row where every column has a value (`finite`), where that drops at most
    MAX_EDGE_SHARE of the rows holding a value before or after (rows of no value drop nothing: the World
    Bank writes one country's GDP from 1960, empty to 2000); None where it drops more, or a column has no
    value."""
    if not finite.any(axis=0).all():
        return None
    first = int(finite.argmax(axis=0).max())
    last = len(finite) - 1 - int(finite[::-1].argmax(axis=0).max())
    valued = finite.any(axis=1)
    if last < first or valued[:first].sum() + valued[last + 1 :].sum() > MAX_EDGE_SHARE * valued.sum():
        return None
    return first, last


def spans_apart(frame: pd.DataFrame, notes: list[str]) -> bool:
    """Whether a wide table's series start or end too far apart to share their rows (`_shared_rows`), one
    published from 1995 beside others from 1960, or one ends before the last row (a country publishing
    late: shared rows would forecast every series from before the latest period): then read as independent
    series, as a long table's are, said in `notes` naming each series' span that differs."""
    finite = np.isfinite(frame.to_numpy())
    if frame.shape[1] < 2 or not finite.any(axis=0).all():
        return False
    shared = _shared_rows(finite)
    if shared is not None and shared[1] == np.flatnonzero(finite.any(axis=1))[-1]:  # rows of no value after:
        return False  # dropped (the next quarter's blank placeholder row made series independent, h49)
    spans = value_spans(finite)
    first, last = max(spans, key=lambda span: span[1] - span[0])
    apart = [f"{frame.columns[j]!r}" + (f" from {when(frame.index[a])}" if a != first else "")
             + (f" to {when(frame.index[b])}" if b != last else "")
             for j, (a, b) in enumerate(spans) if (a, b) != (first, last)]  # fmt: skip
    notes.append(f"read the series as independent, one model shared by series of their own spans "
                 f"({some(apart)}; channels='multivariate' / --channels multivariate refuses)")  # fmt: skip
    return True


def _trim_edges(frame: pd.DataFrame, rows: np.ndarray, notes: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows from the first where every column has a value to the last, where that drops at most
    MAX_EDGE_SHARE of them (else all rows, for the refusal to name the cells)."""
    shared = _shared_rows(np.isfinite(frame.to_numpy()))
    if shared is None:
        return frame, rows
    first, last = shared
    before, after = first, len(frame) - 1 - last
    if not before + after:
        return frame, rows
    where = [f"the first {before}" if before else "", f"the last {after}" if after else ""]
    if frame.shape[1] == 1:
        notes.append(f"dropped {' and '.join(filter(None, where))} row(s), empty before the series starts or "
                     "after it ends")  # fmt: skip
    else:
        notes.append(f"dropped {' and '.join(filter(None, where))} row(s), where not every column has a value"
                     + advice(" (--channels independent keeps each series' own span)"))
    return frame.iloc[first : last + 1], rows[first : last + 1]


def _fill_short_gaps(
    path: Path | str,
    frame: pd.DataFrame,
    missing: np.ndarray,
    inside: np.ndarray,
    rows: np.ndarray,
    freq: str | None,
    notes: list[str],
) -> pd.DataFrame:
    """AUTO: interpolate the gaps inside each column when they are few and short (MAX_MISSING_SHARE,
    MAX_GAP_STEPS, MAX_GAP_SHARE); refuse more, and cells before a column's first value or after its last,
    which no line passes through."""
    gaps = missing & inside
    span = inside.sum(axis=0)
    for j in np.flatnonzero(gaps.any(axis=0)):
        starts, lengths = _runs(gaps[:, j])
        longest = int(lengths.argmax())
        limit = max(MAX_GAP_STEPS, int(MAX_GAP_SHARE * span[j]))
        name = str(frame.columns[j])
        present = np.flatnonzero(inside[:, j] & ~gaps[:, j])
        every = np.unique(np.diff(present))
        if len(every) == 1 and every[0] > 1 and frame.shape[1] > 1:  # quarterly GDP among monthly rates
            reason = (f"column {name!r} has a value every {every[0]} rows, a coarser frequency than the "
                      "other columns'" + advice(" (targets / --targets naming the others leaves it out)"))
        elif gaps[:, j].sum() > MAX_MISSING_SHARE * span[j]:
            reason = (f"column {name!r} misses {int(gaps[:, j].sum())} of its {int(span[j])} values, more "
                      f"than {MAX_MISSING_SHARE:.0%}")  # fmt: skip
        elif lengths[longest] > limit:
            where = frame.index[starts[longest]]
            where = when(where) if isinstance(frame.index, pd.DatetimeIndex) else line(where)
            reason = f"column {name!r} has a gap of {lengths[longest]} steps from {where}, more than {limit}"
        else:
            continue
        _refuse(path, frame, missing, rows, freq, reason)
    if (missing & ~inside).any():
        _refuse(path, frame, missing & ~inside, rows, freq,
                "before a column's first value or after its last, where no line runs between two values",
                spans_differ=frame.shape[1] > 1)
    added = rows < 0
    steps, cells = int(added.sum()), int((gaps & ~added[:, None]).sum())
    filled = [f"{steps} missing time step(s)" if steps else "", f"{cells} empty cell(s)" if cells else ""]
    notes.append(f"filled {' and '.join(filter(None, filled))} by linear interpolation"
                 + advice(" (--fill-missing to choose the method, --fill-missing none to refuse)"))
    return frame.replace([np.inf, -np.inf], np.nan).interpolate(method="linear", limit_area="inside")


def _runs(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, length) of each run of True."""
    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    return starts, np.flatnonzero(edges == -1) - starts


def _refuse(
    path: Path | str,
    frame: pd.DataFrame,
    missing: np.ndarray,
    rows: np.ndarray,
    freq: str | None,
    reason: str | None = None,
    spans_differ: bool = False,
) -> None:
    """One line naming the missing time steps (else the missing cells at their file lines) and the option:
    where series start or end at different times (`spans_differ`), first the one that keeps their spans."""
    why = f" ({reason}, so not filled by default)" if reason else ""
    added = rows < 0
    if added.any() and missing[added].any():
        raise DataError(
            f"{path}: {int(added.sum())} missing time step(s) in column {frame.index.name!r} of a {freq} "
            f"series, the first {when(frame.index[added][0])}{why}; expected one row per step"
            + _fill_advice(frame, added)
        )
    in_file = missing & ~added[:, None]
    per_column = in_file.sum(axis=0)
    described = "; ".join(
        f"column {frame.columns[j]!r} at {lines(np.sort(rows[in_file[:, j]]))}"
        for j in np.flatnonzero(per_column)[:3]
    )
    complete = [str(name) for name, count in zip(frame.columns, per_column, strict=True) if not count]
    leave_out = (f"; or leave the others out: targets={complete} / --targets {','.join(complete)}"
                 if 0 < len(complete) <= 4 else "")  # fmt: skip  (ABS's Trend series suspended for 19 months)
    raise DataError(
        f"{path}: {int(per_column.sum())} missing or non-finite value(s): {described}{why}; "
        "expected a number in every cell"
        + advice(" (or give channels='independent' / --channels independent: one model shared by series of "
                 "their own spans; fill_missing / --fill-missing would invent the values)" if spans_differ
                 else f" (or pass fill_missing='ffill' or 'interpolate' / --fill-missing{leave_out})")
    )


def _fill_advice(frame: pd.DataFrame, added: np.ndarray) -> str:
    """The option filling missing time steps, unless they outnumber the rows read MISREAD_STEPS times: then
    the dates were misread (MM.YY months read as 2000, 2100, 2200; YYMM numbers as years: h75 F3), and
    filling invents thousands of rows."""
    if added.sum() > MISREAD_STEPS * (~added).sum():
        return (f"; {int(added.sum())} missing steps among {int((~added).sum())} rows point at dates read "
                f"in a form they are not written in (the first row read as {when(frame.index[~added][0])}): "
                "write them as YYYY-MM-DD")
    return advice(" (or pass fill_missing='interpolate' or 'ffill' / --fill-missing to fill the missing "
                  "rows)")


def check_finite(path: Path | str, frame: pd.DataFrame) -> None:
    """Refuse on reading an infinite cell ("inf", or beyond float64: "1e400", an integer of 400 digits): a
    value the file gives, not a missing one to fill."""
    values = frame.to_numpy(dtype=np.float64)
    _refuse_value(path, frame, values, np.isinf(values), "is too large for a float: an inf cell, or a number "
                  "beyond 1.8e308 in magnitude", "a finite number (a missing value left empty)")  # fmt: skip


def check_magnitudes(path: Path | str, frame: pd.DataFrame) -> None:
    """Refuse, before any training, a value whose square overflows float32, naming its column and time (the
    rows read, sorted or filled, are no longer the file's lines: a DataFrame's row 0 was named 'line 2')."""
    values = frame.to_numpy(dtype=np.float64)
    expected = f"|value| <= {MAX_TRAINING_MAGNITUDE:.3g} (rescale the column, e.g. to thousands of its unit)"
    problem = "is too large to train on: its square overflows float32"
    too_large = np.abs(values) > MAX_TRAINING_MAGNITUDE
    _refuse_value(path, frame, values, too_large, problem, expected, by_line=False)


def _refuse_value(
    path: Path | str, frame: pd.DataFrame, values: np.ndarray, bad: np.ndarray, problem: str, expected: str,
    by_line: bool = True,
) -> None:
    """One line naming the first `bad` cell: its line (`by_line`), time, value and column, and how many."""
    cells = np.argwhere(bad)
    if cells.size:
        row, column = cells[0]
        dated, stamp = isinstance(frame.index, pd.DatetimeIndex), when(frame.index[row])
        if by_line:
            place = f"{line(row)} ({stamp})" if dated else line(row)
        else:
            place = f"at {stamp}" if dated else f"step {stamp}"
        name = str(frame.columns[column])
        count = f" ({len(cells)} cell(s) in total)" if len(cells) > 1 else ""
        raise DataError(
            f"{path}: {place}: value {values[row, column]:g} in column {name!r} {problem}{count}; expected "
            f"{expected}"
        )

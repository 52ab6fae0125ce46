"""Turn any CSV into a validated `TimeSeries` (time index + float64 target columns).

Every problem is reported as one `DataError` line naming the file, the column, the first bad lines
(file line numbers, header = line 1) and what was expected, so no pandas traceback reaches a user.
Registered benchmark files are kept exactly as published: their known quirks only warn, so the
protocol's numbers stay comparable with the literature.
"""

from __future__ import annotations

import dataclasses
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from forecaster.data.calendar import calendar_features
from forecaster.data.dates import (
    dates_from_parts,
    find_date_parts,
    parse_period_labels,
    parse_timestamps,
    regular_grid,
    year_numbers,
)
from forecaster.data.missing import SHOWN, fill_missing_cells, line
from forecaster.data.panels import read_long
from forecaster.data.registry import DatasetSpec, find_spec_for_file, get_spec, locate_dataset
from forecaster.data.series import INDEPENDENT, DataQualityWarning, ReadOptions, TimeSeries
from forecaster.data.timeindex import infer_frequency
from forecaster.errors import DataError

DATE_NAMES = ("date", "datetime", "timestamp", "time", "ds", "period", "time_period")
YEAR_NAMES = ("year", "yr", "jahr", "annee", "anno")
FILL_VALUE = -9999
_DELIMITERS = {";": "semicolons", "\t": "tabs", "|": "'|' characters"}


def _is_text(column: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column))


def _parse(path: Path) -> pd.DataFrame:
    try:
        raw = pd.read_csv(path, encoding_errors="replace")
    except pd.errors.EmptyDataError:
        raise DataError(
            f"{path}: the file is empty; expected a header line and comma-separated rows"
        ) from None
    except pd.errors.ParserError as error:
        detail = str(error).strip().splitlines()[-1].replace("Error tokenizing data. C error: ", "")
        raise DataError(f"{path}: not a well-formed CSV file: {detail}") from None
    except (OSError, EOFError, UnicodeError, ValueError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: cannot be read as CSV: {error}") from None
    raw.columns = [str(column).strip() for column in raw.columns]
    if raw.shape[1] == 1:
        header = raw.columns[0]
        for delimiter, label in _DELIMITERS.items():
            if delimiter in header:
                raise DataError(
                    f"{path}: read as a single column {header[:60]!r}: the file seems to be separated "
                    f"by {label}; expected comma-separated values"
                )
    if raw.empty:
        raise DataError(f"{path}: has a header but no data rows; expected one row per time step")
    return raw


def _find_year_column(raw: pd.DataFrame) -> str | None:
    """A column of whole year numbers named like a year (yearly data without a date column)."""
    for column in raw.columns:
        if column.lower() in YEAR_NAMES and year_numbers(raw[column]) is not None:
            return column
    return None


def _find_date_column(raw: pd.DataFrame) -> str | None:
    """A text column named like a date, or a first column of timestamps or period labels."""
    for column in raw.columns:
        if column.lower() in DATE_NAMES and _is_text(raw[column]):
            return column
    first = raw.columns[0]
    if _is_text(raw[first]):
        head = raw[first].head(20)
        if parse_period_labels(head) is not None:
            return first
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                parsed = pd.to_datetime(head, errors="coerce")
            except (ValueError, TypeError, OverflowError):
                return None
        if parsed.notna().all():
            return first
    return None


def _parse_dates(path: str, raw: pd.DataFrame, date_col: str) -> pd.DatetimeIndex:
    """Timestamps, period labels ("2020 Q1", "2020M01", "2020-W05") or whole years, as a DatetimeIndex."""
    column = raw[date_col]
    if not _is_text(column):
        years = year_numbers(column)
        if years is not None:
            return years.rename(date_col)
        raise DataError(
            f"{path}: date column {date_col!r} holds numbers that are not years; expected timestamps such as "
            "2016-07-01 00:00:00, period labels such as 2020-Q1, or whole years (date_from / --date-from "
            "year,quarter builds dates from separate columns; no_date / --no-date indexes rows by steps)"
        )
    labels = parse_period_labels(column)
    if labels is not None:
        return labels.rename(date_col)
    try:
        parsed = parse_timestamps(column)
    except (ValueError, TypeError, OverflowError) as error:
        raise DataError(
            f"{path}: date column {date_col!r} cannot be parsed as timestamps ({error}); "
            "expected one format and one time zone"
        ) from None
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if bad.size:
        shown = ", ".join(
            f"line {line(p)} " + ("(empty)" if pd.isna(column.iloc[p]) else repr(str(column.iloc[p])))
            for p in bad[:SHOWN]
        )
        raise DataError(
            f"{path}: date column {date_col!r} has {bad.size} value(s) that are not timestamps: {shown}; "
            "expected a timestamp in every row"
        )
    return pd.DatetimeIndex(parsed, name=date_col)


def _irregular_steps(index: pd.DatetimeIndex) -> tuple[int, str]:
    """Count the steps that break the series' regular frequency and describe the first one."""
    steps = np.diff(index.asi8)
    if not (steps > 0).any():
        return 0, "no regular frequency could be inferred"
    freq = infer_frequency(index[: min(len(index), 25)])
    if freq is None:
        values, counts = np.unique(steps[steps > 0], return_counts=True)
        freq = to_offset(pd.Timedelta(int(values[np.argmax(counts)]), unit=index.unit)).freqstr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
        expected = index[:-1] + to_offset(freq)
    broken = np.flatnonzero((index[1:] != expected) & (steps != 0))
    if not broken.size:
        return 0, "no regular frequency could be inferred"
    p = broken[0]
    return broken.size, (
        f"line {line(p + 1)} is {index[p + 1]} but one {freq} step after line {line(p)} "
        f"({index[p]}) is {expected[p]}"
    )


def _check_time_order(
    path: str, index: pd.DatetimeIndex, date_col: str, spec: DatasetSpec | None, notes: list[str], fill: bool
) -> tuple[str | None, pd.DatetimeIndex | None]:
    """(frequency, the full grid when missing steps are to be filled): reject unsorted, duplicate and
    irregular timestamps, and missing steps unless `fill` (benchmark files: note them instead)."""
    steps = np.diff(index.asi8)
    backwards = np.flatnonzero(steps < 0)
    if backwards.size:
        p = backwards[0]
        raise DataError(
            f"{path}: timestamps in column {date_col!r} are not sorted: line {line(p + 1)} "
            f"({index[p + 1]}) comes after line {line(p)} ({index[p]}) ({backwards.size} backward step(s)); "
            f"expected increasing time (sort the file by {date_col!r})"
        )
    repeats = np.flatnonzero(steps == 0)
    if repeats.size:
        p = repeats[0]
        message = (
            f"duplicate timestamp {index[p]} in column {date_col!r} at lines {line(p)} and {line(p + 1)} "
            f"({repeats.size} repeated row(s) in total)"
        )
        if spec is None:
            raise DataError(f"{path}: {message}; expected one row per time step")
        notes.append(message)
    freq = infer_frequency(index)
    if freq is None and len(index) >= 3:
        found = regular_grid(index) if spec is None else None
        if found is not None:
            freq, grid = found
            if fill:
                return freq, grid
            first = grid[~grid.isin(index)][0]
            raise DataError(
                f"{path}: {len(grid) - len(index)} missing time step(s) in column {date_col!r} of a {freq} "
                f"series, the first {first}; expected one row per step (or pass fill_missing='interpolate' "
                "or 'ffill' / --fill-missing to fill the missing rows)"
            )
        count, first = _irregular_steps(index)
        if spec is None:
            raise DataError(
                f"{path}: irregular time steps in column {date_col!r}: {first} ({count} irregular step(s)); "
                "expected a constant frequency (fill the gaps or resample the file)"
            )
        if count:
            notes.append(f"{count} irregular step(s): {first}")
        freq = spec.freq
    return freq, None


def _numeric_columns(
    path: str,
    raw: pd.DataFrame,
    date_cols: list[str],
    targets: Sequence[str] | None,
    notes: list[str],
    what: str = "target",
) -> tuple[list[str], np.ndarray]:
    explicit = targets is not None
    if explicit:
        chosen = list(targets)
        unknown = [name for name in chosen if name not in raw.columns]
        if unknown:
            raise DataError(
                f"{path}: unknown {what} column(s) {', '.join(map(repr, unknown))}; "
                f"columns are {', '.join(map(repr, raw.columns))}"
            )
        dated = [name for name in chosen if name in date_cols]
        if dated:
            raise DataError(
                f"{path}: the date column {dated[0]!r} cannot be a {what}; expected numeric columns"
            )
        if len(set(chosen)) != len(chosen):
            raise DataError(f"{path}: target columns are repeated in {chosen}; expected each column once")
    else:
        chosen = [column for column in raw.columns if column not in date_cols]
    kept: list[str] = []
    arrays: list[np.ndarray] = []
    skipped: list[str] = []
    for name in chosen:
        column = raw[name]
        if _is_text(column):
            numbers = pd.to_numeric(column, errors="coerce")
            bad = np.flatnonzero((numbers.isna() & column.notna()).to_numpy())
            if bad.size:
                parsed = int(numbers.notna().sum())
                if not explicit and parsed < bad.size:
                    skipped.append(name)
                    continue
                shown = ", ".join(f"line {line(p)} {str(column.iloc[p])!r}" for p in bad[:SHOWN])
                raise DataError(
                    f"{path}: column {name!r} holds text where numbers are expected: {shown} "
                    f"({bad.size} cell(s) in total); expected a number in every cell"
                )
            column = numbers
        kept.append(name)
        arrays.append(column.to_numpy(dtype=np.float64, na_value=np.nan))
    if skipped:
        notes.append(f"skipped non-numeric column(s) {', '.join(map(repr, skipped))}")
    if not kept:
        raise DataError(
            f"{path}: no numeric columns to forecast among {', '.join(map(repr, raw.columns))}; "
            "expected at least one column of numbers besides the date"
        )
    return kept, np.column_stack(arrays)


def read_csv(path: str | Path, **options: Any) -> TimeSeries:
    """Read and validate a CSV file of one or more time series (`options`: the `ReadOptions` fields).

    The dates come from `date_col`, else a column named date/datetime/timestamp/time/ds/period, else a
    column of year numbers named year, else year and quarter / month / week columns, else a first column
    of timestamps or period labels; `date_from` names the year / quarter / month / week columns, and
    `no_date=True` indexes rows by integer steps. Targets default to every numeric column left. Missing
    cells, and missing rows of a regular series, are an error unless `fill_missing` is "ffill" or
    "interpolate". Registered benchmark files with their published shape keep their known quirks
    (duplicate timestamp, gaps) and only warn (`DataQualityWarning`).
    """
    read = ReadOptions(**options)
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    raw = _parse(path)
    spec = find_spec_for_file(path)
    notes: list[str] = []
    if spec is not None and raw.shape != (spec.rows, spec.columns):
        notes.append(
            f"named like benchmark {spec.name} but has {raw.shape[0]} rows x {raw.shape[1]} columns "
            f"(registered {spec.rows} x {spec.columns}), so it is validated as a user file"
        )
        spec = None
    return _read_table(raw, str(path), read, spec, notes)


def read_frame(frame: pd.DataFrame, *, source: str = "DataFrame", **options: Any) -> TimeSeries:
    """`read_csv` for a DataFrame already in memory: its columns, or a DatetimeIndex as the dates."""
    read = ReadOptions(**options)
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(frame).__name__}")
    raw = frame.copy()
    if isinstance(raw.index, pd.DatetimeIndex) and read.date_col is None and not read.no_date:
        name = raw.index.name or "date"
        if name in raw.columns:
            raise DataError(f"{source}: the index and a column are both named {name!r}; rename one")
        raw = raw.reset_index(names=name)
        raw[name] = raw[name].astype(str)  # read like a file's column of timestamps
        read = dataclasses.replace(read, date_col=name) if read.date_from is None else read
    else:
        raw = raw.reset_index(drop=True)
    raw.columns = [str(column).strip() for column in raw.columns]
    if raw.empty:
        raise DataError(f"{source}: the DataFrame has no rows; expected one row per time step")
    return _read_table(raw, source, read, None, [])


def _read_table(
    raw: pd.DataFrame, source: str, read: ReadOptions, spec: DatasetSpec | None, notes: list[str]
) -> TimeSeries:
    replaced = [column for column in raw.columns if "\ufffd" in column]
    if replaced:
        names = ", ".join(map(repr, replaced))
        notes.append(f"header name(s) {names} contain U+FFFD (bytes that were not UTF-8)")
    if len(set(raw.columns)) != len(raw.columns):
        repeated = sorted({column for column in raw.columns if list(raw.columns).count(column) > 1})
        names = ", ".join(map(repr, repeated))
        raise DataError(f"{source}: column name(s) {names} repeated; expected each column name once")

    freq: str | None = None
    date_col, date_from, grid = read.date_col, read.date_from, None
    if read.id_col is not None:
        raw, date_col = read_long(raw, read, source, _parse_dates)
    if read.no_date:
        index: pd.Index = pd.RangeIndex(len(raw))
    else:
        if date_col is None and date_from is None:
            date_col = _find_date_column(raw)
            date_from = find_date_parts(raw.columns) if date_col is None else None
            if date_col is None and date_from is None:
                date_col = _find_year_column(raw)
            if date_col is None and date_from is None:
                raise DataError(
                    f"{source}: no date column found (looked for a column named {'/'.join(DATE_NAMES)}, year "
                    "numbers, year with quarter / month / week columns, or a first column of timestamps); "
                    "name it with date_col (--date-col), give date_from (--date-from year,quarter), or pass "
                    "no_date=True (--no-date) to index rows by integer steps"
                )
        if date_col is not None and date_col not in raw.columns:
            raise DataError(
                f"{source}: date column {date_col!r} not found; columns are "
                f"{', '.join(map(repr, raw.columns))} (pass no_date=True / --no-date for a file without "
                "timestamps)"
            )
        if date_from is not None:
            index = dates_from_parts(raw, date_from, source)
        else:
            index = _parse_dates(source, raw, date_col)
        freq, grid = _check_time_order(source, index, index.name, spec, notes, read.fill_missing is not None)

    used_for_dates = [date_col] if date_col is not None else list(date_from or [])
    covariates = [*(read.past_covariates or []), *(read.future_covariates or [])]
    columns, matrix = _numeric_columns(source, raw, used_for_dates + covariates, read.targets, notes)
    if covariates:
        _, inputs = _numeric_columns(source, raw, used_for_dates, covariates, notes, what="covariate")
        matrix = np.column_stack([matrix, inputs])
    frame = pd.DataFrame(matrix, index=index, columns=columns + covariates)
    if grid is not None:
        notes.append(f"added {len(grid) - len(frame)} missing time step(s) of the {freq} grid")
        frame = frame.reindex(grid)
    frame = fill_missing_cells(source, frame, read.fill_missing, notes, spans=read.channels == INDEPENDENT)
    if read.calendar:
        frame = pd.concat([frame, calendar_features(frame.index, freq)], axis=1)
    fills = int((matrix == FILL_VALUE).sum())
    if fills:
        notes.append(f"{fills} cell(s) equal {FILL_VALUE} (a common sensor fill value), used as numbers")
    if notes:
        prefix = f"benchmark file {spec.name} kept as published" if spec is not None else "note"
        warnings.warn(f"{source}: {prefix}: {'; '.join(notes)}", DataQualityWarning, stacklevel=3)
    effective = dataclasses.replace(read, date_col=date_col, date_from=date_from, targets=columns)
    return TimeSeries(
        frame=frame, freq=freq, source=source, date_col=date_col, dataset=spec.name if spec else None,
        options=effective,
    )  # fmt: skip


def load_dataset(name: str, data_dir: str | Path | None = None, **options: Any) -> TimeSeries:
    """Load a registered benchmark dataset as published (all columns after the date, target last);
    `options` (`ReadOptions`) may choose targets and covariates or add the calendar's."""
    spec = get_spec(name)
    path = locate_dataset(spec.name, data_dir)
    series = read_csv(path, **options)
    if series.dataset != spec.name:
        raise DataError(
            f"{path}: has {len(series)} rows x {len(series.columns) + 1} columns; the registered "
            f"{spec.name} has {spec.rows} x {spec.columns}; replace it with "
            f"`forecaster data download {spec.name} --force`"
        )
    return series

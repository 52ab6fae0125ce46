"""Turn any CSV into a validated `TimeSeries` (time index + float64 target columns).

Every problem is reported as one `DataError` line naming the file, the column, the first bad lines
(file line numbers, header = line 1) and what was expected, so no pandas traceback reaches a user.
Registered benchmark files are kept exactly as published: their known quirks only warn, so the
protocol's numbers stay comparable with the literature.
"""

from __future__ import annotations

import dataclasses
import zipfile
from collections import Counter
from collections.abc import Sequence
from numbers import Number
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forecaster.data.calendar import calendar_features
from forecaster.data.cells import counts_rows
from forecaster.data.columns import (
    check_names_once,
    is_text,
    named_apart,
    numeric_columns,
    section_numbers,
    steps_across,
    without_repeated_codes,
)
from forecaster.data.dateparts import (
    completed_dates,
    dates_from_parts,
    find_date_parts,
    parts_as_column,
    with_hours,
)
from forecaster.data.dates import (
    across_offsets,
    compact_dates,
    dotted_months,
    excel_days,
    number_dates,
    parse_period_labels,
    parse_timestamps,
    period_label_misfits,
    snap_to_periods,
    unix_times,
    utc_timestamps,
    year_numbers,
)
from forecaster.data.excel import is_workbook, workbook_as_csv
from forecaster.data.frames import as_frame, check_names, in_time_order, index_as_columns
from forecaster.data.keys import key_parts, with_key
from forecaster.data.labels import label_style
from forecaster.data.layouts import Layout, arrange, sniff
from forecaster.data.missing import (
    AUTO,
    NO_FILL,
    SHOWN,
    advice,
    check_finite,
    fill_missing_cells,
    line,
    missing_codes,
    names_lines,
    rows_of_a_frame,
    some,
    spans_apart,
)
from forecaster.data.panels import find_long, long_columns, read_long
from forecaster.data.registry import DatasetSpec, find_spec_for_file, get_spec, locate_dataset
from forecaster.data.series import INDEPENDENT, MULTIVARIATE, ReadOptions, TimeSeries, say_note
from forecaster.data.textfile import EAST_ASIAN, ENCODING_NAMES, read_options
from forecaster.data.timeindex import infer_frequency
from forecaster.data.timeorder import check_time_order
from forecaster.errors import DataError, MissingDateColumnsError

DATE_NAMES = ("date", "datetime", "timestamp", "time", "ds", "period", "time_period", "date_time", "obs_date",
              "observation_date", "datum", "fecha", "timeperiod")  # fmt: skip
PERIOD_NAMES = ("quarter", "month", "week")  # also date_from's number columns: dates only if they hold labels
YEAR_NAMES = ("year", "yr", "jahr", "annee", "anno")


def _parse(path: Path, notes: list[str], text: Sequence[str] = ()) -> tuple[pd.DataFrame, Layout]:
    """The file's table as pandas reads it under its sniffed layout, the `text` columns kept as written (an
    id code '01' is no number 1)."""
    source: Any = path
    if is_workbook(path):
        source, note = workbook_as_csv(path)
        notes.extend([note] if note else [])
    sniffed = False
    try:
        opened = read_options(path) if source is path else {}
        named = {**ENCODING_NAMES, **EAST_ASIAN}.get(opened.get("encoding"))
        notes.extend([f"read as {named} text: its bytes are not UTF-8"] if named else [])
        layout = sniff(source, **opened)
        sniffed = True
        options = {"dtype": dict.fromkeys(text, str), **layout.read_options()}
        raw = pd.read_csv(source, encoding_errors="replace", **opened, **options)
    except DataError:  # a ValueError, said in full
        raise
    except pd.errors.EmptyDataError:
        raise DataError(
            f"{path}: the file is empty; expected a header line and comma-separated rows"
        ) from None
    except pd.errors.ParserError as error:
        detail = str(error).strip().splitlines()[-1].replace("Error tokenizing data. C error: ", "")
        raise DataError(f"{path}: not a well-formed CSV file: {detail}") from None
    except (OSError, EOFError, UnicodeError, ValueError, zipfile.BadZipFile) as error:
        header = list(layout.names or []) if sniffed and "Duplicate names" in str(error) else []
        if repeated := sorted({name for name in header if header.count(name) > 1}):  # AEMO: C line, I lines
            raise DataError(f"{path}: the line taken as the header (file line {layout.skip + 1}) names "
                            f"{some(list(map(repr, repeated)))} more than once; expected a header line "
                            "naming each column once") from None  # fmt: skip
        raise DataError(f"{path}: cannot be read as CSV: {error}") from None
    raw.columns = [str(column).strip() for column in raw.columns]
    if raw.empty:
        raise DataError(f"{path}: has a header but no data rows; expected one row per time step")
    raw, repeated = without_repeated_codes(raw, layout.repeated, notes)
    raw, repeated = named_apart(raw, repeated, notes)
    check_names_once(str(path), repeated)  # pandas renamed the second 'OT' 'OT.1'
    return raw, layout


def _find_year_column(raw: pd.DataFrame) -> str | None:
    """A column of whole year numbers named like a year (yearly data without a date column), else a first
    column of consecutive years whatever its name (INSEE heads its years 'Libellé', GENESIS leaves them
    unnamed)."""
    for column in raw.columns:
        if column.lower() in YEAR_NAMES and year_numbers(raw[column]) is not None:
            return column
    first = raw.columns[0] if len(raw.columns) > 1 else None
    if first is not None and len(raw) >= 3 and (years := year_numbers(raw[first])) is not None:
        steps = np.unique(np.diff(years.year))
        return first if len(steps) == 1 and abs(steps[0]) == 1 else None
    return None


def _find_dates_of_long_rows(raw: pd.DataFrame) -> str | None:
    """The column of a long table's times (its id column left out): dates, else years."""
    return _find_date_column(raw) or _find_year_column(raw)


def _find_date_column(raw: pd.DataFrame) -> str | None:
    """A text column (or one of YYYYMMDD numbers, Unix times or Excel's days) named like a date, else the
    first text column (named like a period first) whose values, a sample spread over the rows, are period
    labels or timestamps of years 1000-2999 (dateutil also reads ids such as "T1" or "M1", as year 1), else a
    column of YYYYMMDD or YYYYMM whole numbers, else one of KOSIS's dotted months (2019.01)."""
    for column in raw.columns:
        values = raw[column]
        numbers = (read(values) for read in (number_dates, unix_times, excel_days))
        if column.lower() in DATE_NAMES and (is_text(values) or any(dates is not None for dates in numbers)):
            return column
    for column in sorted(raw.columns, key=lambda name: name.lower() not in PERIOD_NAMES):
        values = raw[column].dropna()
        if not is_text(raw[column]) or values.empty or section_numbers(values.iloc[:20]):
            continue
        sample = values.iloc[np.unique(np.linspace(0, len(values) - 1, num=20).astype(int))]
        if parse_period_labels(sample) is not None:
            return column
        try:
            parsed = pd.DatetimeIndex(parse_timestamps(sample))
        except (ValueError, TypeError, OverflowError):
            continue
        if parsed.notna().all() and ((parsed.year >= 1000) & (parsed.year <= 2999)).all():
            return column
    whole = (column for column in raw.columns if pd.api.types.is_numeric_dtype(raw[column]))  # NBP's: floats
    found = next((column for column in whole if compact_dates(raw[column]) is not None), None)  # DWD's
    dotted = (column for column in raw.columns if pd.api.types.is_float_dtype(raw[column]))
    return found or next((column for column in dotted if dotted_months(raw[column]) is not None), None)


def _indexed_by_steps(
    raw: pd.DataFrame, read: ReadOptions, source: str, notes: list[str]
) -> tuple[pd.DataFrame, ReadOptions]:
    """A file without dates whose column named like one counts the rows (R writes a `ts` of no calendar with
    `time` 1, 2, 3, ...): indexed by steps, as no_date=True does, that column left out. Else the error that
    no date column was found."""
    for column in (name for name in raw.columns if name.lower() in DATE_NAMES):
        if counts_rows(raw[column]):
            first, last = pd.to_numeric(raw[column]).iloc[[0, -1]]
            notes.append(f"column {column!r} counts the rows ({first:.0f} to {last:.0f}), no dates: rows "
                         "indexed by steps")  # fmt: skip
            return raw.drop(columns=[column]), dataclasses.replace(read, no_date=True)
        _parse_dates(source, raw, column)  # refused with what the column named like a date holds
    if steps := steps_across(raw):  # M4's V2, V3, ...: --no-date forecast each step as a series
        raise DataError(f"{source}: the series are rows, their steps across {len(steps)} columns "
                        f"({steps[0]!r} ... {steps[-1]!r}); expected a series per column: transpose the "
                        "table, or melt it into rows of id, step and value read with --id-col and "
                        "--no-date")  # fmt: skip
    raise DataError(
        f"{source}: no date column found (looked for a column named {'/'.join(DATE_NAMES)}, year "
        "numbers, year with quarter / month / week (/ day / hour) columns, or a column of timestamps); "
        "name it with date_col (--date-col), give date_from (--date-from year,quarter), or pass "
        "no_date=True (--no-date) to index rows by integer steps"
    )


DATE_FORMS = (  # the forms of dates read, as the refusals of a date column in none of them list them
    "expected timestamps such as 2016-07-01 00:00:00, period labels such as 2020-Q1, 2020M01, 2020:1, "
    "2020-W05, FY2020 or 2019/20, whole years"
)


def _parse_dates(
    path: str, raw: pd.DataFrame, date_col: str, notes: list[str] | None = None
) -> pd.DatetimeIndex:
    """Timestamps, period labels ("2020 Q1", "2020M01", "2020-W05") or whole years, as a DatetimeIndex;
    timestamps whose UTC offsets change as `dates.across_offsets` reads them (said in `notes`)."""
    column = raw[date_col]
    if not is_text(column):
        numbers = number_dates(column)
        if numbers is not None:
            return numbers.rename(date_col)
        if (unix := unix_times(column)) is not None:
            said = f"read column {date_col!r} as Unix times in {unix[1]} (UTC)"
            (notes if notes is not None else []).append(said)
            return unix[0]
        if (days := excel_days(column)) is not None:
            (notes if notes is not None else []).append(f"read column {date_col!r} as Excel's day numbers")
            return days
        raise DataError(
            f"{path}: date column {date_col!r} holds numbers that are not years or dates; {DATE_FORMS}, "
            "YYYYMMDD numbers, or R's decimal years (1949.0833)"
            + advice(" (date_from / --date-from year,quarter builds dates from separate columns; no_date / "
                     "--no-date indexes rows by steps)")
        )
    labels = parse_period_labels(column)
    if labels is not None:
        return labels.rename(date_col)
    mixed = (
        f"{path}: date column {date_col!r} mixes time zones or UTC offsets ({str(column.iloc[0])!r} on "
        f"{line(0)}); expected one zone throughout (convert the dates, e.g. to UTC)"
    )
    number = column.map(lambda value: isinstance(value, Number) and pd.notna(value)).astype(bool)
    texts = column.where(~number)  # 12345 among date texts (JSON records): no date, not 12345 ns past 1970
    try:
        parsed = parse_timestamps(texts)
    except (ValueError, TypeError, OverflowError) as error:
        shifted = across_offsets(texts)
        if shifted is not None:
            (notes if notes is not None else []).append(shifted[1])
            return shifted[0]
        if utc_timestamps(texts) is not None:
            raise DataError(mixed) from None
        raise DataError(
            f"{path}: date column {date_col!r} cannot be parsed as timestamps ({error}); "
            "expected one format and one time zone"
        ) from None
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if bad.size and (shifted := across_offsets(texts)) is not None:  # pandas reads one offset only
        (notes if notes is not None else []).append(shifted[1])
        return shifted[0]
    if bad.size and utc_timestamps(texts) is not None:  # each a timestamp, read only where all share a zone
        raise DataError(mixed)
    if bad.size:
        misfits = period_label_misfits(column)  # most rows labels of one kind: the others are the bad ones
        kind = "timestamps" if misfits is None else f"{misfits[0]} labels like the others"
        bad = bad if misfits is None else misfits[1]
        shown = ", ".join(
            f"{line(p)} " + ("(empty)" if pd.isna(column.iloc[p]) else repr(str(column.iloc[p])))
            for p in bad[:SHOWN]
        )
        one = f"expected {'a timestamp' if misfits is None else 'one form of label'} in every row"
        raise DataError(  # every value unread: a form not read, rather than a few bad cells
            f"{path}: date column {date_col!r} has {bad.size} value(s) that are not {kind}: {shown}; "
            + (DATE_FORMS if bad.size == len(column) else one)
        )
    return pd.DatetimeIndex(parsed, name=date_col)


def read_csv(path: str | Path, **options: Any) -> TimeSeries:
    """Read and validate a CSV (or ;/tab/|-separated, or .xlsx) file of one or more time series (`options`:
    the `ReadOptions` fields).

    The table is first made tidy as statistics offices publish it (`layouts.arrange`: title lines and
    footnotes, decimal commas, missing-value markers, flags, periods as columns, ONS blocks; a workbook's
    data sheet, `excel`). The dates come from `date_col`, else a column named like a date, else a column of
    period labels or timestamps, else year numbers or year and quarter / month / week columns; `date_from`
    names those columns, and `no_date=True` indexes rows by integer steps. Repeated dates with one column of
    labels make a long panel (`panels.find_long`). Targets default to every numeric column left. Small gaps
    are interpolated and larger ones refused (`missing`), unless `fill_missing` says otherwise. Registered
    benchmark files with their published shape keep their known quirks (duplicate timestamp, gaps) and only
    warn (`DataQualityWarning`).
    """
    read = ReadOptions(**options)
    path = Path(path)
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "is not a regular file" if path.exists() else "not found"
        raise DataError(f"{path}: {what}; expected a CSV, TSV or Excel file")
    notes: list[str] = []
    keys = [] if read.id_col is None else [read.id_col, *key_parts(read.id_col)]
    raw, layout = _parse(path, notes, keys)
    spec = find_spec_for_file(path)
    if spec is not None and raw.shape != (spec.rows, spec.columns):
        notes.append(
            f"named like benchmark {spec.name} but has {raw.shape[0]} rows x {raw.shape[1]} columns "
            f"(registered {spec.rows} x {spec.columns}), so it is validated as a user file"
        )
        spec = None
    context = None
    if spec is None:  # benchmark files are read exactly as published
        raw, context, read = arrange(str(path), raw, layout, read, _find_date_column, notes)
    try:
        return _read_table(raw, str(path), read, spec, notes)
    except DataError as error:
        if context is None or not names_lines(str(error)):  # the line numbers' mapping, where some are named
            raise
        raise DataError(f"{error} ({context})") from None


def read_frame(frame: pd.DataFrame, *, source: str = "DataFrame", **options: Any) -> TimeSeries:
    """`read_csv` for a DataFrame (or a Series): its columns, its index where it holds data (`frames`)."""
    read = ReadOptions(**options)
    if read.periods is not None:
        raise DataError(
            f"{source}: periods={read.periods!r} chooses a block of a file of several frequencies (ONS) as "
            "read_csv reads it from its path (read_csv(path, periods=...).frame is a DataFrame to fit); a "
            "DataFrame holds one frequency: expected no periods"
        )
    frame, notes = in_time_order(as_frame(frame, source), read)
    raw, read = index_as_columns(frame, read, source)
    raw.columns = [str(column).strip() for column in raw.columns]
    if raw.empty:
        raise DataError(f"{source}: the DataFrame has no rows; expected one row per time step")
    with rows_of_a_frame():
        return _read_table(raw, source, read, None, notes)


def _read_table(
    raw: pd.DataFrame, source: str, read: ReadOptions, spec: DatasetSpec | None, notes: list[str]
) -> TimeSeries:
    if replaced := [column for column in raw.columns if "\ufffd" in column]:
        notes.append(f"header name(s) {', '.join(map(repr, replaced))} contain U+FFFD (bytes not text)")
    counts = Counter(raw.columns)  # built once: per name, 50,000 columns took minutes
    check_names_once(source, sorted(name for name, count in counts.items() if count > 1))

    freq: str | None = None
    date_col, date_from, grid, date_style = read.date_col, read.date_from, None, None
    completing_col: str | None = None  # the column of each date's hour, time of day or year (`dateparts`)
    long_parts = None  # the date-part columns of a long table, made one column (`dateparts.parts_as_column`)
    if read.id_col is not None:
        raw = with_key(raw, read.id_col, source)
        long_parts = None if read.date_col or read.no_date else read.date_from or find_date_parts(raw.columns)
        if long_parts:
            raw, joined, weeks = parts_as_column(raw, long_parts, source, notes, read.weeks)
            read = dataclasses.replace(read, date_col=joined, date_from=None, weeks=weeks)
            date_from = None
        read = long_columns(raw, read, source, _find_dates_of_long_rows)
        raw, date_col, read = read_long(raw, read, source, _parse_dates, notes)
    if not read.no_date and date_col is None and date_from is None:
        date_col = _find_date_column(raw)
        date_from = find_date_parts(raw.columns) if date_col is None else None
        if date_from is not None and spec is None:  # year and quarter repeating: a long table's, maybe
            said: list[str] = []
            dated, joined, weeks = parts_as_column(raw, date_from, source, said, read.weeks)
            if dated[joined].duplicated().any():
                raw, date_col, long_parts, date_from = dated, joined, date_from, None
                read = dataclasses.replace(read, weeks=weeks)
                notes.extend(said)
        if date_col is None and date_from is None:
            date_col = _find_year_column(raw)
        if date_col is None and date_from is None:
            raw, read = _indexed_by_steps(raw, read, source, notes)
    if read.no_date:
        steps = read.id_col is not None or isinstance(raw.index, pd.RangeIndex)  # a frame's 100, 101, ... too
        index: pd.Index = raw.index if steps else pd.RangeIndex(len(raw))
    else:
        if date_col is not None and date_col not in raw.columns:
            raise MissingDateColumnsError.among(
                f"{source}: date column {date_col!r} not found", [date_col], raw.columns,
                " (pass no_date=True / --no-date for a file without timestamps)",
            )  # fmt: skip
        if date_col is not None and date_from is None and (completed := completed_dates(raw, date_col)):
            raw, completing_col, note = completed
            notes.append(note)
        if spec is None and read.id_col is None and date_col is not None:
            raw, read = find_long(raw, read, date_col, source, _parse_dates, notes)
        if date_from is not None:
            index, weeks = dates_from_parts(raw, date_from, source, notes, read.weeks)
            read = dataclasses.replace(read, weeks=weeks)
        else:
            index = _parse_dates(source, raw, date_col, notes)
        if date_from is None and completing_col is None and (hourly := with_hours(raw, index)) is not None:
            index, completing_col = hourly[0].rename(index.name), hourly[1]
            notes.append(f"read column {completing_col!r} as the hour of each date in {date_col!r}")
        if len(index) > 2 and (np.diff(index.asi8) < 0).all():  # newest first, as INSEE and many downloads
            raw, index = raw.iloc[::-1].reset_index(drop=True), index[::-1]
            notes.append("read the rows, listed newest first, from the oldest")
        snapped = snap_to_periods(index) if spec is None and infer_frequency(index) is None else None
        if snapped is not None:
            index = snapped[0]
            notes.append(snapped[1])
        freq, grid = check_time_order(source, index, index.name, spec, notes)  # years before 1 refused first
        date_style = label_style(raw[date_col], index) if date_col is not None and date_from is None else None

    used_for_dates = [date_col] if date_col is not None else list(date_from or [])
    used_for_dates += [completing_col] if completing_col is not None else []
    covariates = [*(read.past_covariates or []), *(read.future_covariates or [])]
    columns, matrix = numeric_columns(source, raw, used_for_dates + covariates, read.targets, notes, index)
    check_names(source, [*columns, *covariates])
    if covariates:
        _, inputs = numeric_columns(source, raw, used_for_dates, covariates, notes, what="covariate")
        matrix = np.column_stack([matrix, inputs])
    frame = pd.DataFrame(matrix, index=index, columns=columns + covariates)
    check_finite(source, frame)
    frame = missing_codes(frame, notes, published=spec is not None)
    nothing = frame.isna().all().to_numpy() if read.targets is None else []  # vectorized: one pass for all
    empty = [name for name, none in zip(columns, nothing, strict=False) if none]
    if empty and len(empty) < len(columns):  # a World Bank table's countries without data
        frame = frame.drop(columns=empty)
        columns = [name for name, none in zip(columns, nothing, strict=False) if not none]
        notes.append(f"left out column(s) {some(list(map(repr, empty)))}: no values at all")
    added = None if grid is None else ~grid.isin(frame.index)
    frame = frame if grid is None else frame.reindex(grid)
    asked = read.fill_missing or AUTO
    fill = NO_FILL if spec is not None and read.fill_missing is None else asked  # benchmarks as published
    plain = spec is None and read.fill_missing is None and not covariates and not read.calendar
    mode = read.channels or (INDEPENDENT if plain and spans_apart(frame, notes) else MULTIVARIATE)
    frame = fill_missing_cells(source, frame, fill, notes, spans=mode == INDEPENDENT, added=added, freq=freq)
    if read.calendar:
        frame = pd.concat([frame, calendar_features(frame.index, freq)], axis=1)
    if notes:
        prefix = f"benchmark file {spec.name} kept as published" if spec is not None else "note"
        say_note(f"{source}: {prefix}: {'; '.join(notes)}", stacklevel=3)
    effective = dataclasses.replace(read, date_col=None if long_parts else date_col,
                                    date_from=long_parts or date_from, targets=columns, fill_missing=asked,
                                    channels=mode)  # fmt: skip
    return TimeSeries(
        frame=frame, freq=freq, source=source, date_col=date_col, dataset=spec.name if spec else None,
        options=effective, date_style=date_style,
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

"""Turn any CSV into a validated `TimeSeries` (time index + float64 target columns).

Every problem is reported as one `DataError` line naming the file, the column, the first bad lines
(file line numbers, header = line 1) and what was expected, so no pandas traceback reaches a user.
Registered benchmark files are kept exactly as published: their known quirks only warn, so the
protocol's numbers stay comparable with the literature.
"""

from __future__ import annotations

import dataclasses
import functools
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forecaster.checks import user_path
from forecaster.data.calendar import calendar_features
from forecaster.data.cells import Tally, counts_rows, doubtful_marks, numbers_in_text_columns
from forecaster.data.columns import (
    check_names_once,
    named_apart,
    numeric_columns,
    other_series,
    steps_across,
    without_repeated_codes,
)
from forecaster.data.competition import COMPETITION_DATE, rows_of_series, starts_in_first_rows
from forecaster.data.completed import completed_dates, with_hours
from forecaster.data.datecolumn import (
    DATE_NAMES,
    find_date_column,
    find_dates_of_long_rows,
    find_year_column,
    parse_dates,
)
from forecaster.data.dateparts import dates_from_parts, find_date_parts, parts_as_column, written_as_parts
from forecaster.data.dates import read_day_first
from forecaster.data.excel import ChosenSheet, is_workbook, sheet_named, workbook_as_csv
from forecaster.data.frames import check_names, in_time_order, index_as_columns, readable_frame, text_times
from forecaster.data.grids import snap_to_periods
from forecaster.data.keys import key_parts, padded_codes, with_key
from forecaster.data.labels import label_style, on_a_day
from forecaster.data.layouts import PREFIX_LINES, Layout, arrange, sniff
from forecaster.data.missing import (
    AUTO,
    NO_FILL,
    check_finite,
    file_lines,
    fill_missing_cells,
    missing_codes,
    names_lines,
    rows_of_a_frame,
    some,
    spans_apart,
)
from forecaster.data.panels import DEFAULT_TARGET_COL, DEFAULT_TIME_COL, find_long, long_columns, read_long
from forecaster.data.periods import mixed_periods
from forecaster.data.records import LineMap
from forecaster.data.registry import DatasetSpec, find_spec_for_file, get_spec, locate_dataset
from forecaster.data.series import INDEPENDENT, MULTIVARIATE, ReadOptions, TimeSeries, say_note
from forecaster.data.textfile import EAST_ASIAN, ENCODING_NAMES, composed_table, file_bytes, read_options
from forecaster.data.timeindex import infer_frequency
from forecaster.data.timeorder import TimeClash, business_days, check_time_order
from forecaster.data.variables import value_columns
from forecaster.errors import DataError, MissingDateColumnsError


def _parse(
    path: Path, notes: list[str], text: Sequence[str] = (), sheet: str | None = None
) -> tuple[pd.DataFrame, Layout, LineMap, ChosenSheet | None]:
    """The file's table as pandas reads it under its sniffed layout (a workbook's `sheet`), the `text`
    columns kept as written (an id code '01' is no number 1), the lines its rows span, the sheet chosen."""
    source: Any = path
    chosen = None  # a workbook's sheet chosen by its numbers
    if is_workbook(path):
        source, chosen = workbook_as_csv(path, sheet)
        notes.extend([chosen.said()] if chosen else [])
    elif sheet is not None:
        raise DataError(f"{path}: sheet={sheet!r} chooses a sheet of an .xlsx workbook, and this file is "
                        "read as text; expected no sheet")  # fmt: skip
    sniffed = False
    try:
        opened = read_options(path) if source is path else {}
        named = {**ENCODING_NAMES, **EAST_ASIAN}.get(opened.get("encoding"))
        notes.extend([f"read as {named} text: its bytes are not UTF-8"] if named else [])
        layout = sniff(source, **opened)
        sniffed = True
        layout, doubtful = _as_text(source, opened, layout)
        options = {"dtype": dict.fromkeys([*text, *layout.codes, *doubtful], str),
                   **layout.read_options()}  # fmt: skip
        raw = _ids_as_written(pd.read_csv(source, encoding_errors="replace", **opened, **options), source,
                              {**opened, **options}, text)  # fmt: skip
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
    given, raw.columns = list(raw.columns), [str(column).strip() for column in raw.columns]
    if same := [name for name, count in Counter(raw.columns).items() if count > 1]:  # 'a' and 'a ' (h45)
        spelled = [repr(str(name)) for name, kept in zip(given, raw.columns, strict=True) if kept in same]
        raise DataError(f"{path}: column names {some(spelled)} are one name but for spaces around it; "
                        "expected each column name once")  # fmt: skip
    if raw.empty:
        raise DataError(f"{path}: has a header but no data rows; expected one row per time step")
    raw, repeated = without_repeated_codes(raw, layout.repeated, notes)
    raw, repeated = named_apart(raw, repeated, notes)
    check_names_once(str(path), repeated)  # pandas renamed the second 'OT' 'OT.1'
    header = layout.ons is None and not layout.headerless
    return raw, layout, LineMap(lambda: file_bytes(source, opened), layout.skip, header, len(raw)), chosen


def _as_text(source: Any, opened: dict[str, Any], layout: Layout) -> tuple[Layout, list[str]]:
    """The columns to read as text, by the file's first rows: ids written as codes ('01', `padded_codes`),
    kept in the layout (which keeps them as written), and, where no decimal mark shows, numbers whose
    separator is in doubt ('1.234' beside '987', `doubtful_marks`); a buffer (a workbook's sheet) rewound for
    the whole read."""
    if layout.ons is not None:  # read as text throughout
        return layout, []
    head = pd.read_csv(source, nrows=PREFIX_LINES, dtype=str, encoding_errors="replace", **opened,
                       **layout.read_options())  # fmt: skip
    if hasattr(source, "seek"):
        source.seek(0)
    doubtful = doubtful_marks(head) if layout.decimal is None else []
    return dataclasses.replace(layout, codes=tuple(padded_codes(head))), doubtful


def _ids_as_written(
    raw: pd.DataFrame, source: Any, options: dict[str, Any], ids: Sequence[str]
) -> pd.DataFrame:
    """`raw` with its id columns `ids` as written where pandas read a cell as missing: Namibia's ISO code
    'NA' was 'an empty series id'; only an empty cell is one. The file is read again for those columns, only
    where such a cell is."""
    missing = [name for name in dict.fromkeys(ids) if name in raw.columns and raw[name].isna().any()]
    if not missing:
        return raw
    if hasattr(source, "seek"):
        source.seek(0)
    again = {**options, "usecols": missing, "keep_default_na": False, "na_values": [""]}
    written = pd.read_csv(source, encoding_errors="replace", **again)
    return raw.assign(**{name: written[name].to_numpy() for name in missing})


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
        parse_dates(source, raw, column)  # refused with what the column named like a date holds
    if starts_in_first_rows(raw):
        raise DataError(f"{source}: the first three rows hold each column's length, starting year and "
                        "starting period (the Tourism competition's layout), not values; expected a date "
                        "column, or a series per row with 'Starting Year' and 'Starting Quarter' or "
                        "'Starting Month' columns (M3's layout)")  # fmt: skip
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
    path = user_path(Path(path))
    if not path.is_file():
        what = ("is a folder" if path.is_dir() else "is not a regular file" if path.exists()
                else "standard input is not read" if str(path) == "-" else "not found")  # fmt: skip
        raise DataError(f"{path}: {what}; expected a CSV, TSV or Excel file")
    notes: list[str] = []
    keys = [] if read.id_col is None else [read.id_col, *key_parts(read.id_col)]
    raw, layout, spans, chosen = _parse(path, notes, keys, read.sheet)
    spec = find_spec_for_file(path)
    if spec is not None and raw.shape != (spec.rows, spec.columns):
        notes.append(
            f"named like benchmark {spec.name} but has {raw.shape[0]} rows x {raw.shape[1]} columns "
            f"(registered {spec.rows} x {spec.columns}), so it is validated as a user file"
        )
        spec = None
    context = None
    with sheet_named(str(path), chosen), file_lines(spans.extra if spec is None else None):  # h75 F13
        if spec is None:  # benchmark files are read exactly as published
            raw, context, read = arrange(str(path), raw, layout, read, find_date_column, notes)
        try:
            return _read_table(raw, str(path), read, spec, notes)
        except DataError as error:
            if context is None or not names_lines(str(error)):  # the line numbers' mapping, where named
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
    if read.sheet is not None:
        raise DataError(f"{source}: sheet={read.sheet!r} chooses a sheet of a workbook read_csv reads from "
                        "its path; a DataFrame is one table: expected no sheet")  # fmt: skip
    frame = readable_frame(frame, source)
    if frame.empty:  # before the rows are ordered: pandas cannot say whether no datetimes are sorted
        raise DataError(f"{source}: the DataFrame has no rows; expected one row per time step")
    frame, notes = in_time_order(frame, read)
    raw, read = index_as_columns(frame, read, source)
    raw.columns = [str(column).strip() for column in raw.columns]
    keys = [part for part in key_parts(read.id_col or "") if part in raw.columns]
    keys, tally = keys + padded_codes(raw.head(PREFIX_LINES)), Tally()
    raw = numbers_in_text_columns(raw, None, tally).assign(**{key: raw[key] for key in keys})  # as a file's
    notes.extend(tally.notes())  # '1,234.5' and '12%' were left out as text (ids stay as written: '01')
    with rows_of_a_frame():
        series = _read_table(raw, source, read, None, notes)
    timestamps = not text_times(frame, series.date_col) and not on_a_day(series.date_style)
    if series.date_style is not None and timestamps:  # years as numbers (h82 F21)
        series = dataclasses.replace(series, date_style=None)
    return series


def _read_table(
    raw: pd.DataFrame, source: str, read: ReadOptions, spec: DatasetSpec | None, notes: list[str]
) -> TimeSeries:
    raw = composed_table(raw)
    if replaced := [column for column in raw.columns if "\ufffd" in column]:
        notes.append(f"header name(s) {', '.join(map(repr, replaced))} contain U+FFFD (bytes not text)")
    counts = Counter(raw.columns)  # built once: per name, 50,000 columns took minutes
    check_names_once(source, sorted(name for name, count in counts.items() if count > 1))
    competition = not read.no_date and read.date_col in (None, COMPETITION_DATE)
    if competition and (rows := rows_of_series(raw, notes)):
        raw, ids = rows  # M3's series per row, each from its start: a long table
        read = dataclasses.replace(read, id_col=read.id_col or ids, date_col=COMPETITION_DATE)

    arranged = raw  # the rows as the file lists them, which `rows` place the rows read among
    freq: str | None = None
    date_col, date_from, grid, date_style, date_parts = read.date_col, read.date_from, None, None, None
    dates_as_read, dayfirst = functools.partial(parse_dates, dayfirst=read.dayfirst), False  # h75 F21
    rows: np.ndarray | None = None  # each row's place among the file's where not in order, for refusals
    completing_col: str | None = None  # the column of each date's hour, time of day or year (`dateparts`)
    long_parts = None  # the date-part columns of a long table, made one column (`dateparts.parts_as_column`)
    if read.id_col is not None:
        raw = with_key(raw, read.id_col, source)
        long_parts = None if read.date_col or read.no_date else read.date_from or find_date_parts(raw.columns)
        if long_parts:
            raw, joined, weeks = parts_as_column(raw, long_parts, source, notes, read.weeks)
            read = dataclasses.replace(read, date_col=joined, date_from=None, weeks=weeks)
            date_from = None
        read = long_columns(raw, read, source, find_dates_of_long_rows)
        if unused := _unused_numbers(raw, read):  # a regressor, as statsforecast takes one (h56)
            notes.append(f"left out numeric column(s) {some(list(map(repr, unused)))}: a long table's series "
                         "are forecast from their own values (target_col names the values; covariates come "
                         "with a wide table: past_covariates, future_covariates)")  # fmt: skip
        raw, date_col, read = read_long(raw, read, source, dates_as_read, notes)
        raw, rows = (raw, rows) if read.no_date else _in_file_order(raw)
    if not read.no_date and date_col is None and date_from is None:
        date_col = find_date_column(raw)
        date_from = find_date_parts(raw.columns) if date_col is None else None
        if date_from is not None and spec is None:  # year and quarter repeating: a long table's, maybe
            said: list[str] = []
            dated, joined, weeks = parts_as_column(raw, date_from, source, said, read.weeks)
            if dated[joined].duplicated().any():
                raw, date_col, long_parts, date_from = dated, joined, date_from, None
                read = dataclasses.replace(read, weeks=weeks)
                notes.extend(said)
        if date_col is None and date_from is None:
            date_col = find_year_column(raw)
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
            raw, read = find_long(raw, read, date_col, source, dates_as_read, notes)
            raw, rows = (raw, rows) if read.id_col is None else _in_file_order(raw)
        if date_from is not None:
            index, weeks = dates_from_parts(raw, date_from, source, notes, read.weeks)
            read = dataclasses.replace(read, weeks=weeks)
            date_parts = written_as_parts(raw, date_from, index, weeks)  # forecasts written in them
        else:
            index = dates_as_read(source, raw, date_col, notes, read.weeks)
            dayfirst = read_day_first(raw[date_col], index)
        if date_from is None and completing_col is None and (hourly := with_hours(raw, index)) is not None:
            index, completing_col = hourly[0].rename(index.name), hourly[1]
            notes.append(f"read column {completing_col!r} as {hourly[2]} of each date in {date_col!r}")
        if len(index) > 2 and (np.diff(index.asi8) < 0).all():  # newest first, as INSEE and many downloads
            rows = (np.arange(len(raw)) if rows is None else rows)[::-1]
            raw, index = raw.iloc[::-1].reset_index(drop=True), index[::-1]
            notes.append("read the rows, listed newest first, from the oldest")
        snapped = snap_to_periods(index) if spec is None and infer_frequency(index) is None else None
        if snapped is not None:
            index = snapped[0]
            notes.append(snapped[1])
        try:  # years before 1 refused first
            keyed = read.id_col is not None
            series = raw.drop(columns=date_col) if keyed and date_col is not None else None  # h82 F17
            freq, grid = check_time_order(source, index, index.name, spec, notes, rows, keyed, series)
        except TimeClash as clash:  # a year and its first quarter: periods of two kinds, said as such
            raise mixed_periods(source, arranged, date_col, clash.rows) or clash from None
        date_style = label_style(raw[date_col], index) if date_col is not None and date_from is None else None

    used_for_dates = [date_col] if date_col is not None else list(date_from or [])
    used_for_dates += [completing_col] if completing_col is not None else []
    covariates = [*(read.past_covariates or []), *(read.future_covariates or [])]
    columns, matrix = numeric_columns(source, raw, used_for_dates + covariates, read.targets, notes, index,
                                      named_by_ids=read.id_col is not None)
    check_names(source, [*columns, *covariates])
    given = read.targets is not None and read.id_col is None  # a long table's: `rows_of_targets` says them
    others = other_series(raw, used_for_dates, [*columns, *covariates], index) if given else []
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
    rows = np.arange(len(frame)) if rows is None else rows
    if grid is not None:  # the missing steps added, rows of no file line (-1)
        placed = np.full(len(grid), -1)
        placed[grid.isin(frame.index)] = rows
        frame, rows = frame.reindex(grid), placed
    if spec is None and read.fill_missing in (None, AUTO):  # AUTO: the default, as a bundle keeps it
        frame, rows, freq = business_days(frame, rows, freq, notes)
    asked = read.fill_missing or AUTO
    fill = NO_FILL if spec is not None and read.fill_missing is None else asked  # benchmarks as published
    plain = spec is None and read.fill_missing is None and not covariates and not read.calendar
    mode = read.channels or (INDEPENDENT if plain and spans_apart(frame, notes) else MULTIVARIATE)
    frame = fill_missing_cells(source, frame, fill, notes, spans=mode == INDEPENDENT, rows=rows, freq=freq)
    if read.calendar:
        frame = pd.concat([frame, calendar_features(frame.index, freq)], axis=1)
    if notes:
        prefix = f"benchmark file {spec.name} kept as published" if spec is not None else "note"
        say_note(f"{source}: {prefix}: {'; '.join(notes)}", stacklevel=3)
    effective = dataclasses.replace(read, date_col=None if long_parts else date_col,
                                    date_from=long_parts or date_from, targets=columns, fill_missing=asked,
                                    channels=mode, dayfirst=dayfirst)  # fmt: skip
    return TimeSeries(
        frame=frame, freq=freq, source=source, date_col=date_col, dataset=spec.name if spec else None,
        options=effective, date_style=date_style, date_parts=date_parts, others=tuple(others),
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


@dataclass
class SeriesSource:
    """Where a series comes from: a registered benchmark dataset, or a CSV file with its reading options
    (`forecaster.data.ReadOptions` fields)."""

    dataset: str | None = None
    csv: Path | None = None
    data_dir: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def load(self) -> TimeSeries:
        if (self.dataset is None) == (self.csv is None):
            raise DataError("give exactly one data source: a dataset name (--dataset) or a CSV file (--csv)")
        if self.dataset is not None:
            return load_dataset(self.dataset, self.data_dir, **self.options)
        return read_csv(self.csv, **self.options)


def _in_file_order(wide: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray | None]:
    """A long table's pivoted rows numbered from 0, and each one's row in the file (their index, the first of
    its time's rows) for messages; None where the index is not such rows (a DataFrame's own)."""
    rows = wide.index.to_numpy() if pd.api.types.is_integer_dtype(wide.index) else None
    return wide.reset_index(drop=True), rows


def _unused_numbers(raw: pd.DataFrame, read: ReadOptions) -> list[str]:
    """The numeric columns of a long table keyed by its given id column that give no series its values (not
    a key part, the time or a value column; a row counter is no variable)."""
    values = value_columns(read.target_col, raw.columns) or [read.target_col or DEFAULT_TARGET_COL]
    used = {*key_parts(read.id_col or ""), read.date_col or DEFAULT_TIME_COL, *values}
    return [str(name) for name in raw.columns if name not in used and pd.api.types.is_numeric_dtype(raw[name])
            and not pd.api.types.is_bool_dtype(raw[name]) and not counts_rows(raw[name])]  # fmt: skip

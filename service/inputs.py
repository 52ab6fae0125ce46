"""Turn a request (JSON body or CSV upload) into a checked history, through `forecaster.prediction`.

The checks are the ones `forecaster predict` runs (`check_history`); this module only parses what HTTP
brings and names the JSON field or file line at fault. Everything is checked before batching, so a bad
request fails alone with a 4xx and never poisons a batch it would have shared.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from forecaster.artifacts import Bundle, DataConfig
from forecaster.data import TimeSeries
from forecaster.data.calendar import calendar_features
from forecaster.data.frames import in_given_types, time_types
from forecaster.data.keys import key_columns
from forecaster.data.missing import without_reading_advice
from forecaster.data.series import collected_notes
from forecaster.data.textfile import ZIP_MAGIC, compression, marked_encoding
from forecaster.errors import ConfigError, DataError, ForecasterError, one_line
from forecaster.history import (
    far_from_training,
    forecast_series,
    future_covariates,
    left_out_in_training,
    read_future,
    read_history,
    read_rows,
    window_notes,
)
from forecaster.prediction import (
    csv_times,
    dated_as_history,
    each_on_its_own,
    forecast,
    forecast_table,
    given_names,
    shaped,
)
from forecaster.recent import HistoryError, PreparedHistory, check_history
from service.errors import MAX_MESSAGE_CHARS, ApiError, listed
from service.limits import answer_numbers, check_answer_numbers
from service.registry import ServedModel
from service.schemas import Cell, ForecastRequest, RecordsRequest, RecordsResponse
from service.timestamps import json_timestamps


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(422, message, field=field)


def _api_error(error: HistoryError, prefix: str) -> ApiError:
    """The HTTP face of a history the model cannot use: JSON field names, timestamps by position."""
    if error.part == "timestamps" and error.row is not None:
        return _invalid(f"{prefix}timestamps[{error.row}]", str(error))
    if error.part == "values" and error.row is not None and error.column is not None:  # h92 F7
        return _invalid(f"{prefix}values.{error.column}[{error.row}]", str(error))
    return _invalid(f"{prefix}{error.part}", str(error))


def _file_error(error: HistoryError) -> ApiError:
    """The HTTP face of a history read from an uploaded CSV: the file and its line (header = line 1)."""
    if error.part == "horizon":
        return _invalid("horizon", str(error))
    where = f"line {error.row + 2}: " if error.row is not None else ""
    return _invalid("file", f"{where}{error}")


def prepare_json(bundle: Bundle, request: ForecastRequest, *, prefix: str, max_rows: int) -> PreparedHistory:
    """Check a JSON request (columns, lengths, timestamps, horizon) against the model it is sent to."""
    data = bundle.data
    values_field = f"{prefix}values"
    sent = [*data.columns, *(data.past_covariates or []), *(data.future_covariates or [])]
    missing = [column for column in sent if column not in request.values]
    known = set(sent)  # a request's names are as many as its bytes hold (500,000: h132)
    unknown = [column for column in request.values if column not in known]
    if missing or unknown:
        problems = [f"missing {missing}"] if missing else []
        problems += [f"unknown {listed(unknown)}"] if unknown else []
        raise _invalid(values_field, f"expected exactly the model's columns {sent}; {', '.join(problems)}")
    index, values = json_rows(bundle, request, sent, prefix=prefix, max_rows=max_rows)
    timestamps_field = f"{prefix}timestamps"
    ahead = _future(bundle, request, f"{prefix}future")
    try:
        if data.calendar:
            values = np.column_stack([values, calendar_features(index, data.freq).to_numpy()])
        return check_history(bundle, index, values, horizon=request.horizon, max_rows=max_rows, ahead=ahead)
    except DataError as error:
        if isinstance(error, HistoryError):
            raise _api_error(error, prefix) from None
        raise _invalid(timestamps_field, str(error)) from None


def json_rows(
    bundle: Bundle, request: ForecastRequest, sent: list[str], *, prefix: str, max_rows: int
) -> tuple[pd.Index, np.ndarray]:
    """A JSON request's rows of the columns `sent` (equal lengths) and their index: its timestamps parsed
    for a dated model, positions otherwise."""
    values_field, first = f"{prefix}values", sent[0]
    rows = len(request.values[first])
    for column in sent[1:]:
        if len(request.values[column]) != rows:
            raise _invalid(
                f"{values_field}.{column}",
                f"has {len(request.values[column])} values; expected {rows} like {values_field}.{first}",
            )
    timestamps_field = f"{prefix}timestamps"
    if not bundle.data.dated:  # dates read from year and month columns are dates too (h82 F2)
        if request.timestamps is not None:
            raise _invalid(timestamps_field, "this model was trained without dates; leave timestamps out")
        index: pd.Index = pd.RangeIndex(rows)
    else:
        if request.timestamps is None:
            raise _invalid(timestamps_field, f"required: one ISO 8601 timestamp per row ({rows} rows)")
        if len(request.timestamps) != rows:
            raise _invalid(
                timestamps_field, f"has {len(request.timestamps)} entries; expected {rows}, one per row"
            )
        # more rows than max_rows: check_history refuses them before it reads the index, so none is parsed
        parsed = 0 < rows <= max_rows
        index = json_timestamps(request.timestamps, timestamps_field) if parsed else pd.RangeIndex(rows)
    values = (
        np.array([request.values[column] for column in sent], dtype=np.float64).reshape(len(sent), rows).T
    )
    return index, values


@dataclass(frozen=True)
class CsvUpload:
    """An uploaded CSV as read: its series, what reading changed (`notes`), and either the history checked
    for the micro-batcher (`prepared`) or the answer itself (`answer`: series forecast each after its own
    last value)."""

    series: TimeSeries
    notes: list[str]
    prepared: PreparedHistory | None = None
    answer: str | None = None

    def answered(self, bundle: Bundle, columns: dict[str, np.ndarray]) -> str:
        """The answer to a micro-batched upload from the forecast's columns (see `csv_answer`)."""
        assert self.prepared is not None
        return csv_answer(bundle, self.series, forecast_table(bundle, self.series, self.prepared, columns))


def csv_answer(bundle: Bundle, series: TimeSeries, table: pd.DataFrame) -> str:
    """The CSV route's answer as `forecaster predict` writes its file: the time, the forecast and its
    intervals, dates as the upload wrote its own ("2020-Q1") or as pandas writes timestamps ("2017-05-01"
    for days), long rows for a long model (it wrote ISO 8601 timestamps with a "T" where predict did not)."""
    written = shaped(bundle, dated_as_history(table, series))
    return written.to_csv(index=bundle.data.id_col is None, lineterminator="\n", **csv_times(series))


# Characters of notes a `Forecaster-Notes` header holds: under 5 KB once escaped to ASCII.
NOTES_CHARACTERS = 800


def notes_header(notes: list[str]) -> dict[str, str]:
    """What reading an upload changed (series left out, cells filled), for a CSV answer that has no place for
    it: a `Forecaster-Notes` header of a JSON list in ASCII (a header holds no other text), whole notes in
    NOTES_CHARACTERS, the one cut there ending "..." and a count of those left out (4 notes of 200 characters
    each cut a Eurostat TSV's reading note mid-word before its last step, the rows it dropped: h62)."""
    shown: list[str] = []
    left = NOTES_CHARACTERS
    for note in notes:
        if left < 10:
            break
        shown.append(note if len(note) <= left else f"{note[: left - 3]}...")
        left -= len(shown[-1])
    if len(shown) < len(notes):
        shown.append(f"and {len(notes) - len(shown)} more note(s)")
    return {"forecaster-notes": json.dumps(shown)} if notes else {}


def every_series(bundle: Bundle) -> DataConfig:
    """The bundle's data config naming every series it forecasts, its companion's too (`forecast_series`):
    the columns and rows an upload of them all holds."""
    return dataclasses.replace(bundle.data, columns=forecast_series(bundle))


def rows_allowed(data: DataConfig, max_rows: int) -> int:
    """--max-rows per series as the rows of a request: `max_rows` times the series of a long table."""
    return max_rows * (len(data.columns) if data.id_col else 1)


def check_record_count(data: DataConfig, count: int, max_rows: int) -> None:
    """--max-rows per series of `count` records in all."""
    limit = rows_allowed(data, max_rows)
    if count > limit:
        raise _invalid("data", f"{count} records; expected at most {limit} ({max_rows} per series)")


def check_records(data: DataConfig, records: list[dict[str, Cell]], max_rows: int) -> None:
    """--max-rows per series: a long table holds one record per series and time, counted by its id (one
    series of 40,000 records was read, the total cap being `max_rows` times the model's series, which
    `preflight.json_counts` counts before the body is validated)."""
    parts = key_columns(list(records[0]), data.id_col) if data.id_col else None
    if parts:
        counts = Counter(tuple(str(record.get(part)) for part in parts) for record in records)
        key, most = counts.most_common(1)[0]
        if most > max_rows:
            raise _invalid("data", f"series {'/'.join(key)!r} has {most} records; expected at most "
                           f"{max_rows} per series")  # fmt: skip


def _future(bundle: Bundle, request: ForecastRequest, field: str) -> np.ndarray | None:
    """The `future` rows of the model's given future covariates, as (steps, F); None when not sent."""
    if request.future is None:
        return None
    try:
        given = future_covariates(bundle)
    except ConfigError as error:
        raise _invalid(field, str(error)) from None
    if sorted(request.future) != sorted(given):
        raise _invalid(
            field,
            f"expected one list per future covariate of the model {given}, got {sorted(request.future)}",
        )
    lengths = {len(request.future[name]) for name in given}
    if len(lengths) != 1:
        raise _invalid(field, "expected lists of equal length, one value per step ahead")
    return np.array([request.future[name] for name in given], dtype=np.float64).T


_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def _readable_columns(data: DataConfig) -> int:
    """The most columns of a file the model reads: targets, covariates, date parts, and at most a date,
    a series id and a value column."""
    named = [*data.columns, *(data.past_covariates or []), *(data.future_covariates or [])]
    return len(named) + len(data.date_from or []) + 3


def _check_csv_size(bundle: Bundle, content: bytes, *, max_rows: int, max_extra_columns: int) -> None:
    """Refuse a CSV wider or longer than the model can use before pandas parses it: parsing time grows
    faster than the bytes (3 rows of 100,000 columns, 600 KB, took minutes). Cells are bounded by both
    caps, every line's counted (a narrow header over rows of 40,000 empty cells cost 90 s of a core). A
    compressed file, which the reader would unpack, is refused: its rows are not counted here."""
    packed = compression(content)
    if packed is not None:
        raise _invalid("file", f"a {packed}-compressed file; expected an uncompressed CSV file")
    if content.startswith(ZIP_MAGIC):  # the reader's advice (name it .xlsx) is no option for an upload
        raise _invalid("file", "a zip archive or an .xlsx workbook; expected an uncompressed CSV file (save "
                       "the sheet as CSV)")  # fmt: skip
    if b"\x00" in content[:65536] and marked_encoding(content) is None:  # the reader's line offers gzip
        raise _invalid("file", "binary data (NUL bytes), not CSV text; expected an uncompressed CSV file "
                       "(UTF-8, or UTF-16 with a byte-order mark)")  # fmt: skip
    data = every_series(bundle)
    text = content.decode("utf-8", errors="replace")
    readable = _readable_columns(data)
    allowed = readable + max_extra_columns
    header = text.split("\n", 1)[0]  # its delimiter: tabs had counted a 9,999-column upload as 1 (h66)
    records = csv.reader(io.StringIO(text, newline=""), delimiter=max(",;\t|", key=header.count))
    try:
        for line, record in enumerate(records, start=1):
            if len(record) > allowed:
                raise _invalid(
                    "file",
                    f"line {line} has {len(record)} columns; expected at most {allowed}: the {readable} "
                    f"model {bundle.name!r} may read and {max_extra_columns} more",
                )
    except csv.Error as error:  # a cell over the field limit was said without where it was (h52)
        raise _invalid("file", f"not a well-formed CSV file: line {records.line_num}: {error}") from None
    body = text.rstrip("\r\n")
    rows = max(body.count("\n"), body.count("\r"))  # lines after the header, whatever their ending
    most = rows_allowed(data, max_rows)
    if rows > most:
        raise _invalid("file", f"expected at most {most} rows after the header, got {rows} lines")


def prepare_csv(
    bundle: Bundle,
    content: bytes,
    filename: str | None,
    horizon: int | None,
    levels: list[int],
    *,
    max_rows: int,
    max_extra_columns: int,
    max_answer_numbers: int,
) -> CsvUpload:
    """Check an uploaded CSV's size, then read it with the reader `forecaster predict` uses
    (`history.read_history`) from a temporary file that is removed however the reading ends. Series of
    a model of independent series sent in part or ending apart are forecast here, each after its own last
    value as `forecaster predict` and the records route do; the others are checked for the micro-batcher."""
    _check_csv_size(bundle, content, max_rows=max_rows, max_extra_columns=max_extra_columns)
    shown = _SAFE_NAME.sub("_", Path(filename or "").name)[:100].lstrip(".") or "upload"
    if not shown.endswith(".csv"):
        shown += ".csv"  # plain CSV only: no compression guessed from the client's file name
    with tempfile.TemporaryDirectory(prefix="forecaster-upload-") as folder:
        path = Path(folder) / shown
        path.write_bytes(content)
        try:
            with collected_notes() as said, without_reading_advice():  # the forecast's own notes too
                series = read_history(bundle, path)
                _check_answer(bundle, series, horizon, levels, max_answer_numbers)
                apart = each_on_its_own(bundle, series)
                answer = _forecast_apart(bundle, series, horizon, levels, max_rows) if apart else None
            notes = [note.replace(str(path), shown) for note in _notes(said, str(path))]
            if answer is not None:
                return CsvUpload(series, notes, answer=answer)
        except ForecasterError as error:
            message = (str(error) + _as_read(_notes(said, str(path)))).replace(str(path), shown)
            raise _invalid("horizon" if "horizon" in message else "file", message) from None
    try:
        prepared = check_history(bundle, series.index, series.inputs, horizon=horizon, max_rows=max_rows)
    except HistoryError as error:
        refusal = _file_error(error)
        refusal.detail += _as_read(notes)
        raise refusal from None
    said = [*notes, *left_out_in_training(bundle), *window_notes(bundle, series)]
    return CsvUpload(series, [*said, *far_notes(bundle, prepared)], prepared=prepared)


def far_notes(bundle: Bundle, prepared: PreparedHistory) -> list[str]:
    """The notes a micro-batched forecast gives of rows far from the training rows (`far_from_training`), as
    `predict` gives them: its history's, and its future covariates' horizon rows' (the JSON route answered a
    column sent in other units, 11,000 standard deviations off, without a word: h92 F0)."""
    far = [far_from_training(bundle, prepared.window)]
    if bundle.data.future_covariates:
        far.append(far_from_training(bundle, prepared.window, prepared.future))
    return [note for note in far if note]


def _forecast_apart(
    bundle: Bundle, series: TimeSeries, horizon: int | None, levels: list[int], max_rows: int
) -> str:
    """The answer for series forecast each after its own last value, each at most `max_rows` long."""
    return csv_answer(bundle, series, forecasted_apart(bundle, series, horizon, levels, max_rows))


def answered_apart(
    bundle: Bundle, series: TimeSeries, horizon: int | None, levels: list[int], *, prefix: str, max_rows: int
) -> tuple[pd.DataFrame, list[str]]:
    """A JSON request's rows read as a table (`series`, its source the request's field) answered as the CSV
    route answers one (`forecasted_apart`), and what forecasting them said; 422 naming the field otherwise.
    The answer's size is the caller's to check, on the whole request (`check_answer_numbers`)."""
    try:
        with collected_notes() as said, without_reading_advice():
            table = forecasted_apart(bundle, series, horizon, levels, max_rows)
    except ForecasterError as error:
        message = str(error).removeprefix(f"{series.source}: ")
        raise _invalid(f"{prefix}horizon" if "horizon" in message else series.source, message) from None
    return table, _notes(said, series.source)


def forecasted_apart(
    bundle: Bundle, series: TimeSeries, horizon: int | None, levels: list[int], max_rows: int
) -> pd.DataFrame:
    """The forecast of series each after its own last value, each at most `max_rows` long: the one path of
    the uploads and JSON requests that the micro-batcher does not take."""
    rows = int(np.isfinite(series.values).sum(axis=0).max())
    if rows > max_rows:
        raise HistoryError(f"expected at most {max_rows} rows per series, got {rows}", part="values")
    try:
        return forecast(bundle, series, horizon=horizon, levels=levels)
    except DataError as error:  # a line of the upload or the horizon, said as the micro-batched path says it
        raise DataError(str(error).removeprefix(f"{series.source}: ")) from None


def _check_record_keys(data: DataConfig, records: list[dict], field: str, max_extra_columns: int) -> None:
    """Refuse records of more distinct keys than the model reads and `max_extra_columns` beside them before
    a table is built: records that each bring new keys make a rows x keys table (1,000 records of 100 keys
    of their own, 1.5 MB, took 11 s and 2.3 GB)."""
    allowed = _readable_columns(data) + max_extra_columns
    keys: set[str] = set()
    for record in records:
        keys.update(record)
        if len(keys) > allowed:
            raise _invalid(field, f"records with more than {allowed} distinct keys; expected the model's "
                           f"columns and at most {max_extra_columns} others")  # fmt: skip


def _check_answer(
    bundle: Bundle, series: TimeSeries, horizon: int | None, levels: list[int], max_answer_numbers: int
) -> None:
    """Refuse a table whose series' answer at `levels` would pass `max_answer_numbers` (as routes do)."""
    steps = bundle.data.horizon if horizon is None else min(horizon, bundle.data.horizon)
    check_answer_numbers(answer_numbers(steps, len(series.columns), len(levels)), max_answer_numbers, "level")


def forecast_records(
    served: ServedModel,
    request: RecordsRequest,
    levels: list[int],
    max_extra_columns: int,
    max_answer_numbers: int,
) -> RecordsResponse:
    """Rows sent as records, read as `Forecaster.predict` reads a DataFrame and answered with its table
    (the same numbers: one forecast, outside the micro-batcher)."""
    bundle = served.bundle
    every = every_series(bundle)
    _check_record_keys(every, request.data, "data", max_extra_columns)
    _check_record_keys(every, request.future or [], "future", max_extra_columns)
    read = "data"  # the records read when a refusal came: its field
    try:
        with collected_notes() as said, without_reading_advice():
            rows = pd.DataFrame.from_records(request.data)
            history = read_rows(bundle, rows)
            _check_answer(bundle, history, request.horizon, levels, max_answer_numbers)
            read = "future"
            future = (
                None
                if request.future is None
                else read_future(bundle, pd.DataFrame.from_records(request.future))
            )
            read = ""
            wide = forecast(bundle, history, horizon=request.horizon, levels=levels, future=future)
            wide = in_given_types(wide, time_types(rows), bundle.data.freq)  # years sent as numbers: numbers
            table = shaped(bundle, dated_as_history(wide, history), given_names(rows, bundle.data.id_col))
    except ForecasterError as error:  # the rows, their future or the horizon asked: a 422, never a 500
        message = str(error).removeprefix("DataFrame: ")
        field = read or ("horizon" if "horizon" in message else "future" if "future" in message else "data")
        raise _invalid(field, message + _as_read(_notes(said))) from None
    if served.bundle.data.id_col is None:
        table = table.reset_index()
    stamps = table.columns[table.dtypes.map(lambda dtype: pd.api.types.is_datetime64_any_dtype(dtype))]
    for column in stamps:  # as the CSV answer writes them: days as dates (they gained T00:00:00, h45)
        days = not csv_times(history) and table[column].dt.tz is None
        days = days and bool((table[column] == table[column].dt.normalize()).all())
        written = (lambda stamp: stamp.date().isoformat()) if days else (lambda stamp: stamp.isoformat())
        table[column] = table[column].map(written)
    # what reading changed (cells filled, rows dropped): the client has no console to see the notes on
    return RecordsResponse(model=served.name, forecast=table.to_dict(orient="records"), notes=_notes(said))


def _notes(said: list[str], source: str = "DataFrame") -> list[str]:
    """What reading the rows changed (cells filled, rows dropped), as the client is told it, each note
    clipped as a message is (a 4 MB key sent beside the columns was named whole in a 4 MB note, h101)."""
    return [one_line(note.removeprefix(f"{source}: "), MAX_MESSAGE_CHARS) for note in said]


def _as_read(notes: list[str]) -> str:
    """The notes appended to a refusal that they explain (a row with a missing value dropped: one row too
    few)."""
    return f" (as read: {'; '.join(notes)})" if notes else ""

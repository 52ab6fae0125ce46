"""A DataFrame's index as the reader's columns: pandas users keep dates (DatetimeIndex, PeriodIndex) and
panel keys (a `unique_id, ds` MultiIndex) in the index, where a file keeps them in columns; and the names a
table's series may have."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import re
from collections.abc import Iterable, Iterator
from os import PathLike
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset
from pandas.tseries.offsets import YearBegin, YearEnd

from forecaster.data.keys import key_columns
from forecaster.data.numberdates import year_numbers
from forecaster.data.series import ReadOptions, TimeSeries
from forecaster.errors import DataError

DATE_OBJECTS = "datetime.date"  # how `time_types` names a column of datetime.date objects
TIMESTAMPS = "datetime64"  # ... and one (or an index) of timestamps, answered so where labelled on a day
_INDEX_DATES = "date"  # the name an unnamed index of dates is read under
_SEVERAL = (list, tuple, set, dict, np.ndarray)  # cells of several values: unhashable, no number


def as_frame(data: Any, source: str = "DataFrame") -> pd.DataFrame:
    """A DataFrame as it is, a Series as a one-column DataFrame named by its name (else "value");
    DataError for anything else, or columns of several levels. An index of pyarrow timestamps or dates
    (`dtype_backend="pyarrow"`) is a DatetimeIndex: unnamed, its dates were dropped as row numbers."""
    if isinstance(data, pd.Series):
        data = data.to_frame("value" if data.name is None else str(data.name))
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame or Series, got {_kind(data)}")
    if isinstance(data.columns, pd.MultiIndex):  # its index as columns became "('date', '')"
        raise DataError(f"{source}: its columns have {data.columns.nlevels} levels of names; expected one "
                        "(df.columns = [' '.join(map(str, names)) for names in df.columns] joins them)")
    index = data.index
    if isinstance(index.dtype, pd.ArrowDtype) and pd.api.types.is_datetime64_any_dtype(index.dtype):
        data = data.set_axis(pd.DatetimeIndex(index, name=index.name), axis=0)
    return data


def _kind(data: Any) -> str:
    """A refused table's type, named so that a polars or pyarrow frame is not said to be a "DataFrame", with
    the call that makes a pandas one from it (a path is no frame either)."""
    kind, home = type(data).__name__, type(data).__module__.split(".")[0]
    if isinstance(data, str | PathLike):
        path = str(data) if len(str(data)) <= 80 else "..." + str(data)[-77:]  # its file's name kept
        return f"the path {path!r} (pd.read_csv(path) or forecaster.data.read_csv(path) reads it)"
    if home in ("builtins", "numpy"):
        return kind
    return f"{home}.{kind}" + (" (its .to_pandas() makes one)" if hasattr(data, "to_pandas") else "")


def readable_frame(data: Any, source: str = "DataFrame") -> pd.DataFrame:
    """`as_frame`, also refused where pandas itself would fail on it or a model could not be fed from a file
    (h44): a column without a name, an index named as a column (row numbers keep no name), cells that hold
    several values (lists)."""
    data = as_frame(data, source)
    names = [name is None or name != name or not str(name).strip() for name in data.columns]  # None, NaN, ""
    if any(names):  # trained as 'nan' or '', then no file could give the column (h44)
        raise DataError(f"{source}: column {names.index(True)} has no name; expected every column named (a "
                        "model reads its columns by name)")  # fmt: skip
    if clash := [name for name in data.index.names if name is not None and name in data.columns]:
        if _row_numbers(data.index):
            data = data.rename_axis(None)
        elif _copies(data, clash):  # set_index("date", drop=False): the column read, its copy dropped (h161)
            keep = [name for name in data.index.names if name not in clash]
            data = data.droplevel(clash) if keep else data.reset_index(drop=True)
        else:  # rename_axis('date') beside a 'date' column: reset_index failed
            raise DataError(f"{source}: its index is named {clash[0]!r}, as a column is; expected other "
                            "names or the column's values (df.rename_axis('...') renames the index, "
                            "df.reset_index(drop=True) drops it)")  # fmt: skip
    for name in [name for name, dtype in data.dtypes.items() if dtype == np.dtype(object)]:
        several = np.array([isinstance(cell, _SEVERAL) for cell in data[name]], dtype=bool)
        if several.any():
            row = int(np.argmax(several))
            kind = type(data[name].iloc[row]).__name__
            raise DataError(f"{source}: column {name!r} row {row} holds a {kind} of values; expected one "
                            "value per cell")  # fmt: skip
    return data


def _copies(data: pd.DataFrame, names: list[Any]) -> bool:
    """Whether the index levels `names` hold the values of the columns of those names, row for row."""
    columns = [data[name] for name in names]
    return all(isinstance(column, pd.Series) and pd.Index(column).equals(data.index.get_level_values(name))
               for name, column in zip(names, columns, strict=True))  # fmt: skip


def in_time_order(frame: pd.DataFrame, read: ReadOptions) -> tuple[pd.DataFrame, list[str]]:
    """A frame's rows sorted by their time (its DatetimeIndex or PeriodIndex, else its date column of
    timestamps), stably, and without exact duplicate rows, with notes saying so: pandas users' frames come
    out of merges and samples in any order (neuralforecast sorts them itself); a file is read as written."""
    notes, index = [], frame.index
    column = read.date_col if read.date_col in frame.columns else _only_timestamps(frame, read)
    # rows of no time are left where they are, for the reader to refuse at their own row (sorted last, a NaT
    # at row 50 was told of at row 199)
    stamps = column is not None and pd.api.types.is_datetime64_any_dtype(frame[column])
    if isinstance(index, pd.DatetimeIndex | pd.PeriodIndex) and not index.is_monotonic_increasing:
        if not index.hasnans:
            frame = frame.sort_index(kind="stable")
            notes.append("sorted the rows by the time of their index")
    elif stamps and not frame[column].hasnans:
        ids = key_columns(frame.columns, read.id_col) if read.id_col else None
        times = frame.groupby(ids, sort=False)[column] if ids else frame[column]
        if not (times.is_monotonic_increasing.all() if ids else times.is_monotonic_increasing):
            rank = frame.groupby(ids, sort=False).ngroup().to_numpy() if ids else 0  # first seen, first
            frame = frame.iloc[np.lexsort((frame[column].to_numpy(), np.broadcast_to(rank, len(frame))))]
            notes.append(f"sorted the rows by {column!r}" + (f" within each {read.id_col!r}" if ids else ""))
    keyed = frame if _row_numbers(frame.index) else frame.reset_index()  # an index holding time is compared
    repeated = np.zeros(len(frame), bool) if read.no_date else keyed.duplicated().to_numpy()  # steps repeat
    if repeated.any():
        frame = frame[~repeated]
        notes.append(f"dropped {int(repeated.sum())} exact duplicate row(s) (time and values of an earlier)")
    return frame, notes


def _only_timestamps(frame: pd.DataFrame, read: ReadOptions) -> str | None:
    """The one column of timestamps where no date column is named: the one the reader would find (a
    shuffled frame was refused as unsorted unless its date column was named)."""
    if read.date_col is not None or read.no_date or read.date_from:
        return None
    stamps = [name for name, dtype in frame.dtypes.items() if pd.api.types.is_datetime64_any_dtype(dtype)]
    return stamps[0] if len(stamps) == 1 else None


def _row_numbers(index: pd.Index) -> bool:
    """Whether an index is row numbers 0, 1, 2, ..., named or not (a name left by `rename_axis` made them a
    series to forecast); pandas 3 makes other consecutive whole numbers, years 1871-1970, a RangeIndex too."""
    return isinstance(index, pd.RangeIndex) and (index.start, index.step) == (0, 1)


def period_columns(frame: object) -> dict[Any, Any]:
    """A frame's columns of periods (pandas' yearly or quarterly `ds`), by name, with their frequency."""
    if not isinstance(frame, pd.DataFrame):
        return {}
    return {name: dtype.freq for name, dtype in frame.dtypes.items() if isinstance(dtype, pd.PeriodDtype)}


def period_frequency(frame: object, date_col: str | None) -> str | None:
    """The frequency (a period alias) of the periods a frame's rows are dated by (its PeriodIndex or a level
    of one, or its column `date_col` of periods), which the timestamps they are read as (their starts) may
    not name: W-SUN weeks start on Mondays. Another column of periods (a quarter beside monthly dates) is
    no frequency of the rows."""
    if not isinstance(frame, pd.DataFrame | pd.Series):
        return None
    if isinstance(frame, pd.DataFrame) and date_col in period_columns(frame):
        return frame[date_col].array.freqstr
    index = frame.index
    levels = [index.get_level_values(date_col)] if date_col in (index.names or ()) else [index]
    found = [level.freqstr for level in levels if isinstance(level, pd.PeriodIndex)]
    return found[0] if found else None


def text_times(frame: pd.DataFrame, name: str | None) -> bool:
    """Whether `frame` wrote the times read as `name` (its column, index level or index) as text labels
    ('2008', '2014Q1'), which its forecast is written back in; not as timestamps, periods, dates or numbers,
    which are answered in their own types (`time_types`). A column the reader made of several: text."""
    if name in frame.columns:
        times = frame[name]
    elif name in frame.index.names or not _row_numbers(frame.index):
        times = frame.index.get_level_values(name) if name in frame.index.names else frame.index
    else:
        return True
    return pd.api.types.infer_dtype(times, skipna=True) == "string"


def time_types(frame: object, date_col: str | None = None) -> dict[Any, Any]:
    """The types a forecast's times (and ids) are answered in, to merge on the frame's own: its columns of
    periods, by name, with their frequency (`period_columns`), of whole numbers (years read as dates) and of
    categories (ids) with their dtype; an index of whole numbers but row numbers too, unnamed as the `year`
    column it is read as; of timestamps, under the name the frame's dates were read as (`date_col`)."""
    if isinstance(frame, pd.Series):  # its frame's types: a Series of years was answered in dates (h75 F9)
        frame = as_frame(frame)
    if isinstance(frame, TimeSeries):  # its dates: on the 15th answered as timestamps, as on the 1st (h132)
        frame = frame.frame
    if not isinstance(frame, pd.DataFrame):
        return {}
    types = {name: dtype for name, dtype in frame.dtypes.items()
             if pd.api.types.is_integer_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype)}  # fmt: skip
    for name, column in frame.items():  # a database driver's DATE column: datetime.date objects (h66)
        first = column.dropna().iloc[:1].tolist() if column.dtype == object else []
        if first and isinstance(first[0], datetime.date) and not isinstance(first[0], datetime.datetime):
            types[name] = DATE_OBJECTS
    index = frame.index
    stamps = [name for name, dtype in frame.dtypes.items() if pd.api.types.is_datetime64_dtype(dtype)]
    for level in index.levels if isinstance(index, pd.MultiIndex) else [index]:  # (id, ds)'s ds: text (h131)
        # as `index_as_columns` names it; not where the dates are a column of that name (text: '2005M01')
        read = level.name if isinstance(index, pd.MultiIndex) else date_col or index.name or _INDEX_DATES
        if isinstance(level, pd.DatetimeIndex) and level.tz is None and read not in frame.columns:
            stamps.append(read)
    types.update(dict.fromkeys(stamps, TIMESTAMPS))
    levels = index.levels if isinstance(index, pd.MultiIndex) else [] if _row_numbers(index) else [index]
    for level in levels:
        if pd.api.types.is_integer_dtype(level):
            types.setdefault("year" if level.name is None else level.name, level.dtype)
        if isinstance(index, pd.MultiIndex) and isinstance(level.dtype, pd.PeriodDtype | pd.CategoricalDtype):
            # a (country, quarter) index's quarters and ids, as a column's (they were answered in dates, text)
            types[level.name] = level.dtype.freq if isinstance(level.dtype, pd.PeriodDtype) else level.dtype
    return {**types, **period_columns(frame)}


def in_given_types(answer: pd.DataFrame, types: dict[Any, Any], freq: str | None, *extra: str):
    """`answer` with its time index or column (and the `extra` columns of times, a backtest's cutoffs) in the
    types the frame gave (`time_types`): periods in, periods out; whole years in, whole years out (a
    long frame of yearly `ds` 1990, 1991 was answered 2010-01-01, which no merge on its `ds` finds); ids of
    categories in their categories (they were answered as text, h44)."""
    yearly = freq is not None and isinstance(to_offset(freq), (YearBegin, YearEnd))

    def converted(times: pd.Series | pd.DatetimeIndex, kind: Any) -> Any:
        if kind == DATE_OBJECTS:
            return pd.Index(times.date, name=times.name) if isinstance(times, pd.Index) else times.date
        return times.year.astype(kind) if _whole(kind) else times.to_period(kind)

    for name, kind in types.items():
        if kind == TIMESTAMPS:  # written on a day of the month ('2005-01-15', `labels.on_a_day`): timestamps
            if answer.index.name == name and (stamps := _iso_days(answer.index)) is not None:
                answer.index = pd.DatetimeIndex(stamps, name=name)
            for column in (name, *extra) if str(name) in answer.columns else ():
                if (stamps := _iso_days(answer[str(column)])) is not None:
                    answer[str(column)] = stamps
            continue
        if isinstance(kind, pd.CategoricalDtype):
            column = answer.get(str(name))
            if column is not None and column.isin(kind.categories).all():
                answer[str(name)] = column.astype(kind)
            continue
        if _whole(kind) and not yearly:
            continue
        if answer.index.name == name and isinstance(answer.index, pd.DatetimeIndex):
            answer.index = converted(answer.index, kind)
        for column in (name, *extra) if str(name) in answer.columns else ():
            if pd.api.types.is_datetime64_any_dtype(answer[str(column)]):
                answer[str(column)] = converted(answer[str(column)].dt, kind)
    return answer


def _whole(kind: Any) -> bool:
    """Whether a `time_types` kind is a dtype of whole numbers: numpy's, or the nullable `Int64` and pyarrow's
    of `dtype_backend=` (a year column of those raised pandas' TypeError, taken for a period's frequency)."""
    dtype = isinstance(kind, np.dtype | pd.api.extensions.ExtensionDtype)
    return dtype and pd.api.types.is_integer_dtype(kind)


def _iso_days(labels: pd.Index | pd.Series) -> pd.Index | pd.Series | None:
    """Labels of ISO days ('2005-01-15') as timestamps; None for anything else, left as written (a cutoff
    column of the user's own beside text dates, h131 L4)."""
    if labels.dtype != object:
        return None
    stamps = pd.to_datetime(labels, format="%Y-%m-%d", errors="coerce")
    return None if stamps.isna().any() else stamps


def index_as_columns(frame: pd.DataFrame, read: ReadOptions, source: str) -> tuple[pd.DataFrame, ReadOptions]:
    """The frame with its index as columns where it holds data, as pandas users keep dates and ids there: a
    DatetimeIndex, a PeriodIndex or an index of Timestamps (in several zones) is the dates (the date column
    asked for when the frame has no such column), a MultiIndex (`unique_id, ds`), a named or a text index
    its own columns (a RangeIndex too, but for row numbers 0, 1, 2, ..., named or not), an index of whole
    years the `year` column of a frame of numbers only (else it may be row numbers left by a filter); another
    unnamed numeric index is dropped. Columns of periods are their start times (a long frame of yearly periods
    whose series span different years was refused, its periods read as floats, '2000.0')."""
    periods = period_columns(frame)
    if periods:
        frame = frame.copy()
        for name in periods:
            frame[name] = frame[name].dt.to_timestamp(how="start")
    index = frame.index
    if isinstance(index, pd.PeriodIndex):
        index = index.to_timestamp(how="start").rename(index.name)
    if isinstance(index, pd.MultiIndex):  # its levels of periods too: days' were refused as no dates
        levels = [level.to_timestamp(how="start") if isinstance(level, pd.PeriodIndex) else level
                  for level in index.levels]  # fmt: skip
        index = index.set_levels(levels)
    stamps = index.dtype == object and pd.api.types.infer_dtype(index, skipna=False) == "datetime"
    dated = (isinstance(index, pd.DatetimeIndex) or stamps) and not read.no_date and read.date_from is None
    if dated and (read.date_col is None or read.date_col not in frame.columns):
        name = read.date_col or index.name or _INDEX_DATES
        if name in frame.columns:  # unnamed, it is read as 'date': "named" alone was no name of the user's
            unnamed = f" (an unnamed index of dates is read as {name!r})" if index.name is None else ""
            raise DataError(f"{source}: the index and a column are both named {name!r}{unnamed}; expected "
                            "other names (df.rename_axis('...') names the index)")  # fmt: skip
        raw = frame.set_axis(index, axis=0).reset_index(names=name)
        raw[name] = raw[name].astype(str)  # read like a file's column of timestamps
        return raw, dataclasses.replace(read, date_col=name)
    numbered = _row_numbers(index)
    undated = frame.select_dtypes(exclude="number").empty and not read.no_date  # no column holds dates
    if undated and not numbered and not isinstance(index, pd.MultiIndex) and index.name is None:
        years = year_numbers(pd.Series(index)) if pd.api.types.is_integer_dtype(index) else None
        index = index if years is None else index.rename("year")  # 1871, 1872, ...: yearly data
    names = [name for name in index.names if name is not None]
    text = index.dtype == object or isinstance(index.dtype, pd.StringDtype)  # such as dates kept as text
    if isinstance(index, pd.MultiIndex) or (not numbered and (names or text)):
        clash = sorted(set(map(str, names)) & set(map(str, frame.columns)))
        if clash:
            raise DataError(f"{source}: the index and a column are both named {clash[0]!r}; rename one")
        return frame.set_axis(index, axis=0).reset_index(), read
    if read.no_date and isinstance(index, pd.RangeIndex) and index.step == 1:  # steps 100, 101, ... go on
        return frame.set_axis(pd.RangeIndex(index.start, index.stop), axis=0), read
    return frame.reset_index(drop=True), read


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # tabs and line breaks of Excel headers pass


def check_names(source: str, names: Iterable[str]) -> None:
    """DataError for a series name holding control characters: printed as it is by describe and predict,
    an escape sequence in a header retitled the user's terminal and cleared the screen."""
    bad = next((name for name in names if _CONTROL.search(name)), None)
    if bad is not None:
        raise DataError(f"{source}: series name {bad!r} holds control characters; expected printable text")


@contextlib.contextmanager
def as_published(raw: pd.DataFrame, source: str) -> Iterator[None]:
    """Where no date column is found in a frame whose first column is text (`pd.read_csv` of an ONS or
    Eurostat download: its metadata rows, its periods as columns), the refusal also says that such layouts
    are read from the file's path (`fit` takes the TimeSeries read), as a frame is read as the table it is
    (h111 F9)."""
    try:
        yield
    except DataError as error:
        labels = raw.shape[1] > 0 and not pd.api.types.is_numeric_dtype(raw.iloc[:, 0])
        if not (labels and str(error).startswith(f"{source}: no date column found")):
            raise
        # short: the refusal's own advice (date_col, date_from, no_date) is cut past MESSAGE_LIMIT
        raise type(error)(f"{error} (a download: fit forecaster.data.read_csv(path))") from None

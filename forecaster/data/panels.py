"""Long <-> wide panels: the `unique_id, ds, y` rows of neuralforecast, statsforecast and Nixtla's API, and
long tables found without `id_col` (a country, quarter, value table of official statistics).

A long table of several series becomes one wide table (a time column, one column per series) so the series
are the channels of one multivariate model, which needs them on the same timestamps; forecasts go back to
long rows in `longforecast`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pandas as pd

from forecaster.data.cells import counts_rows
from forecaster.data.keys import (
    check_ids_given,
    determines,
    key_parts,
    named_as_ids,
    rows_of_targets,
    with_key,
    worded_key,
    written_codes,
)
from forecaster.data.missing import advice, line, some
from forecaster.data.series import INDEPENDENT, MULTIVARIATE, ReadOptions
from forecaster.data.timeindex import steps_in_order
from forecaster.data.timeorder import sorted_by_time
from forecaster.data.variables import (
    DEFAULT_TARGET_COL,
    joined_values,
    melt_variables,
    named_values,
    value_columns,
)
from forecaster.errors import DataError

DEFAULT_ID_COL = "unique_id"
DEFAULT_TIME_COL = "ds"
_SHOWN = 3
MAX_PIVOT_CELLS = 200_000_000  # 1.6 GB of float64; M5's 30,490 series over 1,941 days are 59 million


def pivot_long(
    raw: pd.DataFrame,
    id_col: str,
    time_col: str,
    target_col: str,
    source: str,
    *,
    aligned: bool = True,
    times: pd.Index | None = None,
) -> pd.DataFrame:
    """Long rows -> a wide table: `time_col`, then one column per series id (in order of appearance).

    `aligned`: every series must have the first series' timestamps (a multivariate model forecasts series
    on one shared time grid), and rows keep the file's order for the reader to check. Otherwise series may
    start and end at different times: rows are the union of the times in `times` order (the parsed
    `time_col`), empty where a series has no row. Rows are indexed by their time's first row in `raw` (for
    messages). DataError names a missing column, a repeated (id, time) pair, or a misaligned series."""
    missing = [name for name in (id_col, time_col, target_col) if name not in raw.columns]
    if missing:
        hints = ((time_col, "date_col / --date-col names the time column"),
                 (target_col, "target_col / --target-col the values"))  # fmt: skip
        named = [hint for name, hint in hints if name in missing]
        raise DataError(
            f"{source}: long format needs columns {id_col!r}, {time_col!r} and {target_col!r}; "
            f"missing {', '.join(map(repr, missing))} (columns are {', '.join(map(repr, raw.columns))})"
            + advice(f"; {', '.join(named)}" if named else "")
        )  # fmt: skip
    check_ids_given(raw, id_col, source)
    ids = raw[id_col].astype(str).str.strip()
    keys = pd.DataFrame({"id": ids, "time": raw[time_col].astype(str).str.strip()})
    repeated = keys.duplicated(keep=False).to_numpy()
    if repeated.any():
        first = keys[repeated].iloc[0]
        same = np.flatnonzero(((keys["id"] == first["id"]) & (keys["time"] == first["time"])).to_numpy())
        others = [name for name in raw.columns if name not in (id_col, time_col, target_col)
                  and raw[name].iloc[same].astype(str).nunique() > 1]  # fmt: skip
        hint = (f" (they differ in column {others[0]!r}: a second key, such as a store beside an item; name "
                f"both, id_col / --id-col '{id_col},{others[0]}')" if others else "")  # fmt: skip
        given = list(dict.fromkeys(map(repr, raw[id_col].iloc[same])))  # 1 and '1' in one frame's ids
        hint = f" (ids {given[0]} and {given[1]} are one series read as text)" if len(given) > 1 else hint
        raise DataError(
            f"{source}: series {first['id']!r} has time {first['time']!r} more than once (at "
            f"{', '.join(line(row) for row in same[:_SHOWN])}){hint}; expected one row per series and time"
        )
    order = list(dict.fromkeys(ids))
    if time_col in order:  # the wide table's columns are the ids beside the time column
        row = int(np.flatnonzero((ids == time_col).to_numpy())[0])
        raise DataError(f"{source}: {line(row)}: series id {time_col!r} is the name of the time column; "
                        "expected ids other than the time column's name")  # fmt: skip
    if aligned:
        _check_aligned(keys, order, source)
    cells = len(order) * keys["time"].nunique()
    if cells > MAX_PIVOT_CELLS:  # 12,000 series of one row each at its own time: 144 million cells
        raise DataError(f"{source}: {len(order):,} series over {cells // len(order):,} distinct times would "
                        f"make a table of {cells:,} cells; expected at most {MAX_PIVOT_CELLS:,} (series that "
                        "share their times, or fewer series per file)")  # fmt: skip
    key = raw[time_col] if times is None else times
    wide = (
        pd.DataFrame({"id": ids.to_numpy(), time_col: key, "value": raw[target_col].to_numpy()})
        .pivot(index=time_col, columns="id", values="value")
        .reindex(columns=order)
    )
    wide = wide.reindex(pd.unique(raw[time_col])) if aligned else wide  # the file's order, for the reader
    wide.columns = [str(name) for name in wide.columns]
    first = pd.Series(raw.index.to_numpy()).groupby(np.asarray(key), sort=False).min()
    return wide.reset_index().set_axis(first.reindex(wide.index).to_numpy())


def long_columns(
    raw: pd.DataFrame, read: ReadOptions, source: str, find_dates: Callable[[pd.DataFrame], str | None]
) -> ReadOptions:
    """`read` with the date and value columns of a long table given by its id column alone, where they are
    not named `ds` and `y`: the date column as a wide table's is found (`find_dates`), the values the one
    numeric column left that varies within a series (of several, the one named y, value or OBS_VALUE; a
    country's code or coordinates describe it); DataError naming the candidates where several could."""
    rest = raw.drop(columns=[read.id_col], errors="ignore")
    date_col, target_col = read.date_col, read.target_col
    if date_col is None and not read.no_date and DEFAULT_TIME_COL not in raw.columns:
        date_col = find_dates(rest)
    keyed = read.id_col in raw.columns  # else no values are guessed: the reader names the id column missing
    if target_col is None and DEFAULT_TARGET_COL not in raw.columns and keyed:
        numeric = [column for column in rest.columns  # a row counter (CBS StatLine's ID) is no variable
                   if column != date_col and not _labels(rest[column]) and not counts_rows(rest[column])]
        numeric = [column for column in numeric if not determines(raw, read.id_col, column)]
        named = named_values(numeric, read.id_col, date_col)
        if named or numeric:  # several: each a variable of every series
            target_col = named[0] if len(named) == 1 else joined_values(numeric, source)
    return dataclasses.replace(read, date_col=date_col, target_col=target_col)


def _blank_ends(raw: pd.DataFrame, id_col: str, target_col: str) -> list[str]:
    """How each series of a long table with no value in its first or last rows (in the file's order) lacks
    them, as a wide table's column lacking the latest rows: the SNB's cube of two series leaves the newest
    months of one blank, and sharing the rows forecast the other from before its latest two. A series with
    no value at all is not named here (the reader names it)."""
    values = raw[target_col]
    present = pd.Series(values.notna().to_numpy() & (values.astype(str).str.strip() != "").to_numpy())
    ids = pd.Series(raw[id_col].astype(str).str.strip().to_numpy())
    started = present.groupby(ids).cummax()
    unfinished = present[::-1].groupby(ids[::-1]).cummax()[::-1]
    blank = ~(started & unfinished) & present.groupby(ids).transform("any")
    return [f"series {name!r} has no value in {count} of its first or last rows"
            for name, count in blank.groupby(ids, sort=False).sum().items() if count]  # fmt: skip


class MisalignedError(DataError):
    """The series of a long table asked to share their times do not (`differ` says how, series by series)."""

    def __init__(self, message: str, differ: list[str]) -> None:
        super().__init__(message)
        self.differ = differ


def read_long(
    raw: pd.DataFrame,
    read: ReadOptions,
    source: str,
    parse_dates: Callable[..., pd.DatetimeIndex],
    notes: list[str],
) -> tuple[pd.DataFrame, str | None, ReadOptions]:
    """A long table as the reader's wide table, its date column (None with `no_date`) and `read` with its
    `channels`: aligned series in the file's row order, independent series on the union of their times,
    sorted by the times `parse_dates(source, raw, column)` reads. Channels not given: multivariate where the
    series share their times and values at their ends, else independent (a country published from a later
    year, `_blank_ends`), said in `notes`. Series not among `read.targets` (a model's) are left out first
    (`rows_of_targets`). Several value
    columns (`target_col` "gdp,unemployment") are each a variable of every series (`variables`)."""
    if value_columns(read.target_col, raw.columns) is not None:
        melted, inner = melt_variables(raw, read, source)
        wide, date_col, inner = read_long(melted, inner, source, parse_dates, notes)
        return wide, date_col, dataclasses.replace(read, channels=inner.channels)
    raw = rows_of_targets(raw, read.id_col, read.targets, source, notes)
    _check_values(raw, read.id_col, read.target_col or DEFAULT_TARGET_COL, source)
    if read.channels is None:
        try:
            shared = dataclasses.replace(read, channels=MULTIVARIATE)
            wide = read_long(raw, shared, source, parse_dates, notes)
            if not (differ := _blank_ends(raw, read.id_col, read.target_col or DEFAULT_TARGET_COL)):
                return wide
        except MisalignedError as error:
            differ = error.differ
        notes.append(f"read the series as independent, one model shared by series of their own spans "
                     f"({'; '.join(differ)}; channels='multivariate' / --channels multivariate "
                     "refuses)")  # fmt: skip
        read = dataclasses.replace(read, channels=INDEPENDENT)
    time_col = read.date_col or DEFAULT_TIME_COL
    independent, times = read.channels == INDEPENDENT, None
    if time_col in raw.columns and not read.no_date and raw[time_col].isna().any():
        parse_dates(source, raw, time_col)  # its line names the empty cells (the keys compared NaN with text)
    if independent and time_col in raw.columns:
        times = pd.to_numeric(raw[time_col]) if read.no_date else parse_dates(source, raw, time_col)
    wide = pivot_long(
        raw, read.id_col, time_col, read.target_col or DEFAULT_TARGET_COL, source,
        aligned=not independent, times=times,
    )  # fmt: skip
    if read.no_date:  # numbers (neuralforecast's integer `ds`): the rows in their order, continued by them
        steps = pd.to_numeric(wide[time_col], errors="coerce").to_numpy(dtype=np.float64)
        wide = wide.drop(columns=time_col).reset_index(drop=True)
        if len(steps) and np.isfinite(steps).all():
            order, index = steps_in_order(steps, time_col, source, notes)
            wide = wide.iloc[order].set_axis(index)
        return wide, None, read
    if not independent:  # rows in no order (ONS's CMD downloads, Redfin's tracker): sorted by time
        wide = sorted_by_time(wide, time_col, source, parse_dates, notes)
    if times is not None:  # each time written back as the file wrote it ("2010 Q1"), for the reader to parse;
        column = raw[time_col]  # a frame's timestamps kept: as text, a zone's read at one offset (h72 F4)
        typed = pd.api.types.is_datetime64_any_dtype(column)
        written = pd.Series(column.array if typed else column.astype(str).str.strip().to_numpy(), index=times)
        wide[time_col] = wide[time_col].map(written[~written.index.duplicated()])
    return wide, time_col, read


def _check_values(raw: pd.DataFrame, id_col: str, target_col: str, source: str) -> None:
    """A long table's cells of text or infinite values, named by their file line and series before the rows
    are pivoted (after, their lines were counted by time: 'line 32' for a cell on line 62)."""
    if target_col not in raw.columns or id_col not in raw.columns:
        return  # pivot_long names the missing column
    column = raw[target_col]
    if pd.api.types.is_complex_dtype(column):  # refused by its type once pivoted (numpy warned casting it)
        return
    numeric = pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)
    numbers = column if numeric else pd.to_numeric(column, errors="coerce")
    text = (numbers.isna() & column.notna()).to_numpy()
    infinite = np.isinf(numbers.to_numpy(dtype=np.float64, na_value=np.nan))
    for bad, problem, expected in ((text, "text where numbers are expected", "a number in every cell"),
                                   (infinite, "a value too large for a float", "a finite number")):
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise DataError(f"{source}: {line(raw.index[first])}: {str(column.iloc[first])!r} of series "
                            f"{str(raw[id_col].iloc[first])!r} in column {target_col!r} is {problem} "
                            f"({int(bad.sum())} cell(s) in total); expected {expected}")  # fmt: skip


def find_long(
    raw: pd.DataFrame,
    read: ReadOptions,
    date_col: str,
    source: str,
    parse_dates: Callable[..., pd.DatetimeIndex],
    notes: list[str],
) -> tuple[pd.DataFrame, ReadOptions]:
    """A table whose dates repeat, read (`read_long`) as a long panel when one column tells its series
    apart: `unique_id`, else its only column of labels besides the dates (`_distinct_labels`), or of ids
    written as numbers (`_numbered_ids`), with each (series, date) once. The values are the numeric columns
    left that vary and the date alone does not determine (`_measures`): the one named y, value or OBS_VALUE,
    else each, a variable of every series (`variables`), or the targets given. Else returned unchanged."""
    if not raw[date_col].duplicated().any():
        return raw, read
    # what describes every row alike (an SDMX or OECD export's dataflow, unit and frequency columns, a
    # mostly empty column of flags) tells no series apart and holds no values
    alike = [column for column in raw.columns if column != date_col and _alike(raw[column])]
    others = [column for column in raw.columns if column not in (date_col, *alike)]
    text = {column: _labels(raw[column]) for column in others}
    labels = _distinct_labels(raw, [column for column in others if text[column]], date_col)
    if len(labels) < 2 and not (labels and _few_repeats(raw, [*labels, date_col])):
        # ids written as whole numbers under an id's name (Kaggle's store and item), with a label or alone
        # (store-sales' store_nbr beside its family)
        keys = [column for column in others if column in labels or _numbered_ids(raw[column])]  # file order
        labels = _distinct_labels(raw, keys, date_col)
        text.update(dict.fromkeys(labels, True))
    id_col = DEFAULT_ID_COL if DEFAULT_ID_COL in others else labels[0] if len(labels) == 1 else None
    table = raw  # its columns, before several that tell the series apart are joined
    if id_col is None and len(labels) > 1:  # series told apart by several columns together
        # less what another determines (a unit by its item), and what the others and the date determine: a
        # status of each observation (OECD's OBS_STATUS: provisional values of the latest months) is no key
        key = [column for column in labels
               if not any(determines(raw, other, column) for other in labels if other != column)]
        key = [column for column in key
               if not determines(raw, [*(other for other in key if other != column), date_col], column)]
        key = worded_key(raw, key, labels)
        id_col = ",".join(key) if key and _few_repeats(raw, [*key, date_col]) else None
        raw = raw if id_col is None else with_key(raw, id_col, source)
    if id_col is None or not _few_repeats(raw, [id_col, date_col]):
        return raw, read
    if read.targets is not None and not set(read.targets) <= set(raw.columns) - {id_col, date_col}:
        return raw, read  # the model's series are no value columns here: the reader says what is amiss
    numeric = [column for column in others if column in raw.columns and column != id_col and not text[column]
               and _measures(raw, column, id_col, date_col)]  # fmt: skip
    values = list(read.targets or numeric)
    if len(values) > 1 and read.targets is None:
        # a unit code, a country's population describe a series: the id determines them
        values = [column for column in values if not determines(raw, id_col, column)] or values
        named = named_values(values, id_col, date_col)
        values = named if len(named) == 1 else values
    if not values:
        return raw, read
    parts = key_parts(id_col) if id_col not in others else [id_col]
    _refuse_vintages(table, parts, date_col, source, parse_dates)
    keyed = f"column {id_col!r}" if len(parts) == 1 else f"columns {' and '.join(map(repr, parts))}"
    found = f"read as a long panel keyed by {keyed}, since dates repeat in column {date_col!r}"
    joined = joined_values(values, source)
    long = dataclasses.replace(read, id_col=id_col, target_col=joined, date_col=date_col, targets=None)
    try:
        wide, _, long = read_long(raw, long, source, parse_dates, notes)
    except DataError as error:
        raise DataError(f"{error} ({found})") from None
    series = [column for column in wide.columns if column != date_col]
    shown = ", ".join(map(repr, series[:_SHOWN])) + (", ..." if len(series) > _SHOWN else "")
    said_alike = ", ".join(map(repr, alike))
    ignored = f" (ignored column(s) alike in every row or empty in most: {said_alike})" if alike else ""
    partly = [column for column in others if column in raw.columns and column not in (id_col, *numeric)
              and not text[column] and not pd.api.types.is_numeric_dtype(raw[column])
              and not pd.api.types.is_bool_dtype(raw[column])]  # mostly numbers, some text  # fmt: skip
    for column in partly:
        words = pd.to_numeric(raw[column], errors="coerce").isna() & raw[column].notna()
        text_at = int(np.flatnonzero(words.to_numpy())[0])
        ignored += (f" (left out column {column!r}: text among its numbers, {line(raw.index[text_at])} "
                    f"{str(raw[column].iloc[text_at])!r})")  # fmt: skip
    by_date = [column for column in others if column in raw.columns and not text[column]
               and column not in (id_col, *numeric, *partly) and not counts_rows(raw[column])]  # fmt: skip
    if by_date:  # Walmart's IsHoliday, a panel's Brent price beside each country's rows
        shared = some(list(map(repr, by_date)))
        ignored += f" (left out column(s) {shared}: the same in every series at each date)"
    if described := [name for name in others if name in raw.columns and text[name] and name not in parts]:
        ignored += f" (left out text column(s) {some(list(map(repr, described)))}: no key of the series)"
    unused = [column for column in numeric if column not in values]
    if unused:  # which variable is forecast is the user's choice: say which one was taken
        ignored += (f" (left out numeric column(s) {', '.join(map(repr, unused))}"
                    + advice(": targets / --targets names the values") + ")")  # fmt: skip
    notes.append(
        f"read as a long panel of {len(series)} series ({shown}) keyed by {keyed}, its values "
        f"from {_values_said(values)}{ignored}"
    )
    return wide, long


def _refuse_vintages(raw: pd.DataFrame, parts: list[str], date_col: str, source: str,
                     parse_dates: Callable[..., pd.DatetimeIndex]) -> None:  # fmt: skip
    """DataError where a column found to tell series apart holds dates itself, each after the dates it is
    beside in most rows: ALFRED's `vintage_date`, FRED's `realtime_start`, each date once per release that
    published it, were read as one series per vintage. Cohorts (a loan's origination, the dates after it) are
    series."""
    observed = None  # the date column's, parsed once
    for part in (part for part in parts if part != DEFAULT_ID_COL):
        labels = raw[part].dropna().drop_duplicates()
        try:
            dates = parse_dates(source, labels.to_frame(), part)
            if observed is None:
                observed = parse_dates(source, raw, date_col).to_numpy(dtype="datetime64[ns]")
        except DataError:
            continue
        if (dates != dates.normalize()).any():  # times of day ('12:00') beside the dates: no vintages
            continue
        released = raw[part].map(dict(zip(labels, dates, strict=True))).to_numpy(dtype="datetime64[ns]")
        if 2 * (observed <= released).sum() <= len(raw):  # a release follows the dates it holds
            continue
        raise DataError(
            f"{source}: the dates of column {date_col!r} repeat beside column {part!r}, which holds dates "
            f"too ({str(labels.iloc[0])!r}, ...): revisions of one series, one per vintage, not series; "
            "expected one row per date (keep the rows of one vintage)"
            + advice(f", or id_col={part!r} / --id-col {part} where its dates name series")
        )


def _values_said(values: list[str]) -> str:
    """Where a long panel's values are read from: a column, or columns each a variable of every series."""
    listed = ", ".join(map(repr, values))
    return f"column {listed}" if len(values) == 1 else f"columns {listed}, each a variable of every series"


def _few_repeats(raw: pd.DataFrame, key: list[str]) -> bool:
    """Whether each (series, date) of `key` is once but on a row in a hundred at most: so rare a repeat is
    the file's mistake, which `read_long` names by its lines, not a sign that the key is not found (a
    quarterly panel with one row twice was refused as unsorted, read as one series)."""
    return int(raw.duplicated(key).sum()) <= max(1, len(raw) // 100)


def _distinct_labels(raw: pd.DataFrame, labels: list[str], date_col: str) -> list[str]:
    """The label columns that could tell series apart, one per way of telling them: a column the date
    determines (a label such as "2020 Jan") names times, and one that goes with another one to one (a
    country's name beside its code: GEO and DGUID of Statistics Canada) names the same series, by the name
    rather than a code of digits (FAOSTAT's `Area` rather than its `Area Code (M49)` of '276, h91 F10)."""
    kept: list[str] = []
    for column in sorted(labels, key=lambda column: written_codes(raw[column])):  # stable: file order else
        if determines(raw, date_col, column):
            continue
        if not any(determines(raw, other, column) and determines(raw, column, other) for other in kept):
            kept.append(column)
    return kept


def _alike(column: pd.Series) -> bool:
    """Empty in most rows, or text with one value in every row (a constant number may be a series' value)."""
    present = column.dropna()
    if pd.api.types.is_numeric_dtype(present):
        return 2 * len(present) < len(column)
    present = present[present.astype(str).str.strip() != ""]
    return 2 * len(present) < len(column) or (len(present) == len(column) and present.nunique() == 1)


def _numbered_ids(column: pd.Series) -> bool:
    """Whole numbers under a name of ids (`store`, `item_id`, `Dept`), or codes of digits ('01'): series told
    apart by numbers, not rows numbered (store-sales' `id`)."""
    whole = pd.api.types.is_integer_dtype(column) or written_codes(column)
    return whole and named_as_ids(column.name) and not counts_rows(column)


def _measures(raw: pd.DataFrame, column: str, id_col: str, date_col: str) -> bool:
    """Whether a long table's column holds numbers measured per series: not true/false nor text, not the rows
    counted (Kaggle's store-sales `id`: its row numbers were forecast as a variable of every series) and not
    what the date alone determines (a day of the week, a holiday flag: Rossmann's DayOfWeek, Walmart's
    IsHoliday), unless named as values (`named_values`: euro-area members' exchange rates to the euro, alike
    in an SDMX-CSV OBS_VALUE: refused as unsorted, h47)."""
    values = raw[column]
    if pd.api.types.is_bool_dtype(values) or counts_rows(values):
        return False
    parsed = pd.to_numeric(values, errors="coerce")  # text of numbers only (Rossmann's StateHoliday: 0, a)
    numbers = pd.api.types.is_numeric_dtype(values) or parsed.notna().sum() == values.notna().sum()
    named = bool(named_values([str(column)], id_col, date_col))
    return numbers and (named or not determines(raw, date_col, column))


def _labels(column: pd.Series) -> bool:
    """Text, not numbers (fewer than half its values read as numbers)."""
    if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return False
    return 2 * int(pd.to_numeric(column, errors="coerce").notna().sum()) < int(column.notna().sum())


def _check_aligned(keys: pd.DataFrame, order: list[str], source: str) -> None:
    """MisalignedError naming the series (up to _SHOWN, and how many more) whose times differ."""
    times = {name: set(group) for name, group in keys.groupby("id", sort=False)["time"]}
    reference, said = times[order[0]], []
    for name in (name for name in order[1:] if times[name] != reference):  # one quarter short: "ends 1 ..."
        own, extra, lacking = times[name], times[name] - reference, reference - times[name]
        ends, starts = lacking and min(lacking) > max(own), lacking and max(lacking) < min(own)
        where = f"ends {len(lacking)} time(s) before" if ends else f"starts {len(lacking)} time(s) after"
        lacks = f"{where} series {order[0]!r}" if ends or starts else f"lacks {len(lacking)} of its times"
        differences = [f"has {len(extra)} time(s) that series {order[0]!r} lacks" if extra else "",
                       lacks if lacking else ""]  # fmt: skip
        said.append(f"series {name!r} {' and '.join(filter(None, differences))}")
    if said:
        more = f"; {len(said) - _SHOWN} more series differ" if len(said) > _SHOWN else ""
        raise MisalignedError(
            f"{source}: {'; '.join(said[:_SHOWN])}{more}; the series of one multivariate model must share "
            "their timestamps" + advice(" (align them, or give channels='independent' / --channels "
                                        "independent for one model shared by series of their own spans)"),
            said[:_SHOWN] + ([more[2:]] if more else []),
        )

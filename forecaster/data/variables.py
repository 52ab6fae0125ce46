"""Long panels of several measurements per series (a quarterly macro panel: country, quarter, gdp_growth,
unemployment_rate): each value column is a variable of every series, as each numeric column of a wide table
is a series. Rows are melted to one value per (series, variable, time), so that each pair is a series of its
own (`DE/gdp_growth`); forecasts come back with a column per variable, in the shape of the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from forecaster.data.keys import KEY_SEPARATOR, comma_names
from forecaster.data.series import ReadOptions
from forecaster.errors import DataError, MissingColumnsError

_VARIABLE, _VALUE = "variable", "value"  # the melted table's columns (renamed where the file has such)
# The value column of a long table when none is named (Nixtla's `y`).
DEFAULT_TARGET_COL = "y"
# What long exports call the column of values: Nixtla's y, SDMX's OBS_VALUE, most offices' value.
# SDMX's column of observations (ECB, OECD, Eurostat, Norges Bank): the others of its rows are codes
SDMX_VALUE = "obs_value"
VALUE_NAMES = (DEFAULT_TARGET_COL, "value", SDMX_VALUE, "values")
# AutoGluon's TimeSeriesDataFrame: item_id, timestamp, target. Only beside those two is "target" the values
# (elsewhere it may be a sales goal beside the sales).
_AUTOGLUON = ("item_id", "timestamp", "target")


def named_values(columns: Sequence[str], id_col: str, date_col: str | None) -> list[str]:
    """The value columns among a long table's numeric `columns` named as values (y, value, OBS_VALUE, and
    AutoGluon's target beside its item_id and timestamp)."""
    autogluon = (id_col, date_col) == _AUTOGLUON[:2]
    return [name for name in columns if name.lower() in VALUE_NAMES or (autogluon and name == _AUTOGLUON[2])]


def value_columns(target_col: str | None, columns: Sequence[str] = ()) -> list[str] | None:
    """The value columns of `target_col` where it names several, joined by commas; else None, as for a
    column of `columns` whose name holds a comma."""
    names = comma_names(target_col or "", "target_col / --target-col")
    return names if len(names) > 1 and target_col not in columns else None


def column_variables(columns: Sequence[str], read: ReadOptions) -> list[str] | None:
    """The variable each series column of a long panel measures (`DE/gdp_growth`: gdp_growth; of one value
    column, that column); None for a wide table, whose columns are each a variable of their own."""
    if read.id_col is None:
        return None
    if value_columns(read.target_col) is None:
        return [str(read.target_col)] * len(columns)
    return [name.rsplit(KEY_SEPARATOR, 1)[-1] for name in columns]


def joined_values(values: list[str], source: str) -> str:
    """Several value columns as one `target_col`; DataError for a name holding the joining comma."""
    joining = [name for name in values if "," in name] if len(values) > 1 else []
    if joining:
        raise DataError(f"{source}: value column {joining[0]!r} holds ',', which joins several value "
                        "columns; expected names without commas (or target_col / --target-col naming one "
                        "column)")  # fmt: skip
    return ",".join(values)


def _free(name: str, taken: pd.Index) -> str:
    """`name`, or `name_` ... where the table has a column of that name."""
    while name in taken:
        name += "_"
    return name


def melt_variables(raw: pd.DataFrame, read: ReadOptions, source: str) -> tuple[pd.DataFrame, ReadOptions]:
    """Rows of several value columns as rows of one value each, keyed by the series and the variable joined
    (`DE/gdp_growth`) in the file's row order, and the options that read them as a long table of one value
    column."""
    values = value_columns(read.target_col, raw.columns) or []
    missing = [name for name in values if name not in raw.columns]
    if missing:
        head = (f"{source}: value column(s) {', '.join(map(repr, missing))} not found (target_col "
                f"{read.target_col!r} names several by commas)")  # fmt: skip
        raise MissingColumnsError.among(head, missing, raw.columns)
    joining = [name for name in values if KEY_SEPARATOR in name]
    if joining:  # 'gdp/capita' would read back as a variable 'capita' of a series 'DE/gdp'
        raise DataError(f"{source}: value column {joining[0]!r} holds {KEY_SEPARATOR!r}, which joins a "
                        "series and its variable; expected value column names without it")  # fmt: skip
    variable, value = _free(_VARIABLE, raw.columns), _free(_VALUE, raw.columns)
    others = [name for name in raw.columns if name not in values]
    long = raw.melt(id_vars=others, value_vars=values, var_name=variable, value_name=value,
                    ignore_index=False)  # fmt: skip
    long = long.sort_index(kind="stable")  # a row's variables together, each on its file row (for its line)
    key, ids = f"{read.id_col},{variable}", long.pop(read.id_col)
    joined = ids.astype(str).str.strip() + KEY_SEPARATOR + long.pop(variable)
    long.insert(0, key, joined.where(ids.notna()))  # an empty id stays empty, for the reader to name
    return long, dataclasses.replace(read, id_col=key, target_col=value)


def by_variable(long: pd.DataFrame, id_col: str, time_col: str, name: str, values: list[str]) -> pd.DataFrame:
    """Long forecast rows of series joined with their variables (`id_col` holding `DE/gdp_growth`; `name`
    and its interval columns) as rows of `id_col`, `time_col` and a column per variable (`gdp_growth`,
    `gdp_growth-lo-80`, ...) in the order of `values`, as the file laid them out."""
    split = long[id_col].astype(str).str.rsplit(KEY_SEPARATOR, n=1, expand=True)
    keyed = long.assign(**{id_col: split[0].to_numpy(), _VARIABLE: split[1].to_numpy()})
    forecast = [column for column in long.columns if column not in (id_col, time_col)]  # name, name-lo-80
    order = {series: k for k, series in enumerate(dict.fromkeys(keyed[id_col]))}  # as the forecast named them
    wide = keyed.pivot(index=[id_col, time_col], columns=_VARIABLE, values=forecast).reset_index()
    wide.columns = [f"{variable}{column[len(name):]}" if variable else column
                    for column, variable in wide.columns]  # fmt: skip
    wide = wide.iloc[wide[id_col].map(order).argsort(kind="stable")].reset_index(drop=True)
    named = [f"{variable}{column[len(name):]}" for variable in values for column in forecast]
    return wide[[id_col, time_col, *(column for column in named if column in wide.columns)]]

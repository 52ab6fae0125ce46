"""Forecasts of a long panel back to long rows, named the Nixtla way (`unique_id, ds, <model>, <model>-lo-80,
...`), a key of several columns split into them again."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from forecaster.data.keys import KEY_SEPARATOR, key_parts, key_values
from forecaster.data.variables import by_variable, value_columns

_INTERVAL = re.compile(r"-(lo|hi)-\d+")


def melt_forecast(
    table: pd.DataFrame, series: list[str], id_col: str, time_col: str, name: str,
    target_col: str | None = None,
) -> pd.DataFrame:
    """A wide forecast (`<series>`, `<series>-lo-80`, ... on a time index) -> long rows `id_col, time_col,
    name, name-lo-80, ...`, series by series; with a column per variable where `target_col` names several
    (`variables.by_variable`)."""
    first = series[0]
    suffixes = [column[len(first):] for column in table.columns
                if column.startswith(first) and _INTERVAL.fullmatch(column[len(first):])]  # fmt: skip
    steps = len(table)  # built whole, not a frame per series (3,000 series took a minute)
    long = pd.DataFrame({id_col: np.repeat(np.asarray(series, dtype=object), steps),
                         time_col: table.index[np.tile(np.arange(steps), len(series))]})  # fmt: skip
    for suffix in ["", *suffixes]:
        named = [f"{column}{suffix}" for column in series]
        long[f"{name}{suffix}"] = table[named].to_numpy().T.reshape(-1)
    long = long[long[name].notna().to_numpy()].reset_index(drop=True)  # independent series end apart
    values = value_columns(target_col)
    if values is not None and all(str(column).rsplit(KEY_SEPARATOR, 1)[-1] in values for column in series):
        long = by_variable(long, id_col, time_col, name, values)
    return _split_key(long, id_col)


def _split_key(long: pd.DataFrame, id_col: str) -> pd.DataFrame:
    """Long rows whose id joins several columns (`with_key`) with those columns again, in its place."""
    names = key_parts(id_col)
    values = key_values(long[id_col], len(names)) if len(names) > 1 else None
    if values is None:
        return long
    at = list(long.columns).index(id_col)
    split = pd.DataFrame(values, columns=names, index=long.index)
    return pd.concat([long.iloc[:, :at], split, long.iloc[:, at + 1 :]], axis=1)

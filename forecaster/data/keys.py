"""Series ids of several columns (an official export's country and item, a store and an item): joined into
one series name ("DE/B1GQ") for reading, split back into their columns for forecasts; a model's series
picked out of a long table's rows (`rows_of_targets`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from forecaster.checks import first_repeated
from forecaster.data.missing import line, some
from forecaster.errors import ConfigError, DataError, MissingColumnsError

# Joins the values of an id of several columns (`key_columns`) into one series name: "DE/B1GQ". Within a
# value it is written as a look-alike, so that the name splits back into its columns (Kaggle store-sales'
# family 'BREAD/BAKERY' beside its store: '1/BREAD∕BAKERY'; such keys were refused).
KEY_SEPARATOR, _WITHIN_VALUE = "/", "\u2215"

_ID_WORDS = frozenset({"store", "item", "dept", "department", "shop", "sku", "product", "id", "series",
                       "region", "customer", "station", "sensor", "site", "family", "category", "location",
                       "warehouse"})  # fmt: skip


def name_words(name: object) -> list[str]:
    """The words of a column's name, lower case ("OBS_STATUS": obs, status)."""
    return [word for word in re.split(r"[\W_]+", str(name).lower()) if word]


def named_as_ids(name: object) -> bool:
    """Whether a column's name is one of ids (`store`, `item_id`, `Dept`): its whole numbers name series."""
    return bool(set(name_words(name)) & _ID_WORDS)


def padded_codes(rows: pd.DataFrame) -> list[str]:
    """The text columns of `rows` (a table's first) named as ids holding a whole number written with leading
    zeros: codes ('01': FIPS, ZIP, NUTS), which read as numbers lose their zeros and the series their names
    (a bundle refused its own file: the forecast named '1' what the file calls '01')."""
    return [str(name) for name, column in rows.items() if named_as_ids(name)
            and not pd.api.types.is_numeric_dtype(column)
            and column.astype(str).str.fullmatch(r"\s*0\d+\s*").any()]  # fmt: skip


def written_codes(column: pd.Series) -> bool:
    """Text of whole numbers only (`padded_codes` read so), maybe after the apostrophe Excel's text cells
    begin with (FAOSTAT's '276): ids, not a value."""
    if pd.api.types.is_numeric_dtype(column):
        return False
    present = column.dropna().astype(str).str.strip()
    return len(present) > 0 and bool(present.str.fullmatch(r"'?\d+").all())


def determines(raw: pd.DataFrame, key: str | list[str], other: str) -> bool:
    """Whether each value of column `key` (of columns `key` together) comes with one value of `other`."""
    return bool((raw.groupby(key, sort=False, dropna=False)[other].nunique(dropna=False) <= 1).all())


def worded_key(raw: pd.DataFrame, key: list[str], labels: list[str]) -> list[str]:
    """`key`, or where it is one column of codes (up to three letters, then digits: Statistics Canada's VECTOR
    'v41690973') the labels in words it determines that tell its series apart together (its GEO and product,
    '15 to 24 years'): the series of a StatCan table had been named by their vectors."""
    if len(key) != 1 or not raw[key[0]].astype(str).str.fullmatch(r"[A-Za-z]{0,3}\d+").all():
        return key
    codes = {column: raw[column].astype(str).str.fullmatch(r"\S*\d\S*").all() for column in labels}  # 'CA_1'
    words = [column for column in labels if column != key[0] and not codes[column]
             and determines(raw, key[0], column)]  # fmt: skip
    words = [column for column in words
             if not any(determines(raw, other, column) for other in words if other != column)]
    return words if words and determines(raw, words, key[0]) else key


def key_values(joined: pd.Series, count: int) -> list[list[str]] | None:
    """The column values of series names joined from `count` columns (`with_key`); None unless every name
    holds `count`."""
    values = joined.astype(str).str.split(KEY_SEPARATOR, regex=False)
    if not values.map(len).eq(count).all():
        return None
    return [[value.replace(_WITHIN_VALUE, KEY_SEPARATOR) for value in row] for row in values]


def comma_names(text: str, option: str) -> list[str]:
    """The column names `text` gives: itself, or several joined by commas ("geo,na_item"); ConfigError for a
    name given twice ("geo,geo" joined a column with itself, a list's repeat was refused only from Python)."""
    names = [name.strip() for name in text.split(",")]
    if twice := first_repeated(names):
        raise ConfigError(f"{option} names {twice!r} twice; expected each column once")
    return names


def key_parts(id_col: str) -> list[str]:
    """The column names an id_col gives: itself, or several joined by commas ("geo,na_item")."""
    return comma_names(id_col, "id_col / --id-col")


def key_columns(columns: pd.Index | list[str], id_col: str) -> list[str] | None:
    """The columns `id_col` names: itself, or its comma-separated columns whose values together name a series
    (`geo,na_item`: an official long export's country and item); None where it names no column."""
    if id_col in columns:
        return [id_col]
    parts = key_parts(id_col)
    return parts if len(parts) > 1 and all(part in columns for part in parts) else None


def with_key(raw: pd.DataFrame, id_col: str, source: str) -> pd.DataFrame:
    """`raw` with an id of several columns joined into one column named `id_col` (KEY_SEPARATOR between
    the values), in place of them; unchanged where `id_col` is a column or names none."""
    parts = key_parts(id_col)
    missing = [part for part in parts if part not in raw.columns]
    if len(parts) < 2 or (id_col in raw.columns and missing):
        return raw
    if id_col in raw.columns:  # which names the series is in doubt (a request's extra field overrode them)
        raise DataError(f"{source}: both a column named {id_col!r} and the columns it joins; expected one")
    if missing:
        raise DataError(
            f"{source}: id column(s) {', '.join(map(repr, missing))} not found (id_col {id_col!r} joins "
            f"columns by commas); columns are {', '.join(map(repr, raw.columns))}"
        )
    for part in parts:
        check_ids_given(raw, part, source)
    values = [raw[part].astype(str).str.strip().str.replace(KEY_SEPARATOR, _WITHIN_VALUE, regex=False)
              for part in parts]  # fmt: skip
    joined = values[0]
    for value in values[1:]:  # column by column: a join row by row took seconds on a million rows
        joined = joined + KEY_SEPARATOR + value
    return in_place_of(raw, parts, id_col, joined.to_numpy())


def check_ids_given(raw: pd.DataFrame, id_col: str, source: str) -> None:
    """DataError naming the first row without a series id: at predict time as in training (such a row was
    read as a series 'nan', left out, and its series forecast from the row before it)."""
    if raw[id_col].isna().any():
        row = int(raw[id_col].isna().to_numpy().argmax())
        raise DataError(f"{source}: {line(row)}: empty series id in column {id_col!r}")


def carried_ids(raw: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """`raw` with the labels of its first column carried down over the blanks below them, where that column
    reads as merged cells of a spreadsheet: a label on each block's first row, blanks below (most rows),
    two labels or more, each in one block ("France" above 23 blanks, then "Germany"), said in `notes`;
    such a panel was refused as unsorted, and with `--id-col` as "empty series id" (h100 F11)."""
    if raw.empty or not pd.api.types.is_string_dtype(raw.iloc[:, 0]):
        return raw
    cells = raw.iloc[:, 0].astype(str).str.strip().mask(raw.iloc[:, 0].isna(), "")
    filled = cells != ""
    if not filled.iloc[0] or filled.sum() < 2 or filled.sum() * 2 > len(cells):
        return raw
    labels = cells[filled]
    if labels.duplicated().any() or not labels.str.contains(r"[^\W\d_]").all():
        return raw
    notes.append(f"carried each label in column {raw.columns[0]!r} down to the rows below it, left blank "
                 "(merged cells)")  # fmt: skip
    return raw.assign(**{raw.columns[0]: cells.mask(~filled).ffill()})


def in_place_of(raw: pd.DataFrame, parts: list[str], name: str, values: np.ndarray) -> pd.DataFrame:
    """`raw` with one column `name` of `values` where the columns `parts` were, at the first one's place."""
    at = list(raw.columns).index(parts[0])
    joined = raw.drop(columns=parts)
    joined.insert(min(at, len(joined.columns)), name, values)
    return joined


def rows_of_targets(
    raw: pd.DataFrame, id_col: str, targets: Sequence[str] | None, source: str, notes: list[str]
) -> pd.DataFrame:
    """A long table's rows of the series `targets` (a model's), the others left out, said in `notes`, before
    the rows are pivoted: 12,000 series of one row each at its own time made a table of 12,000 x 12,000.
    MissingColumnsError names a target without rows and the series left out, for `history` to name."""
    if targets is None or id_col not in raw.columns:  # pivot_long names the missing column
        return raw
    check_ids_given(raw, id_col, source)
    ids = raw[id_col].astype(str).str.strip()
    asked = ids.isin(targets).to_numpy()
    if asked.all():
        return raw
    found, unread = list(dict.fromkeys(ids[asked])), list(dict.fromkeys(ids[~asked]))
    held = set(found)
    others, named = some(list(map(repr, unread))), some(list(map(repr, targets)))
    if not asked.any():
        raise DataError(f"{source}: no rows of the series {named} in column {id_col!r}, only of {others}; "
                        "expected rows of those series")  # fmt: skip
    if missing := [name for name in targets if name not in held]:
        raise MissingColumnsError(f"{source}: no rows of series {some(list(map(repr, missing)))} in column "
                                  f"{id_col!r}; the rows have {some(list(map(repr, found)))} and {others}",
                                  missing, found, unread)  # fmt: skip
    notes.append(left_out_series(unread, targets))
    return raw[asked]


def left_out_series(others: Sequence[str], targets: Sequence[str]) -> str:
    """The note naming the series rows hold beside a model's `targets`, which nothing forecasts: a long
    table's (`rows_of_targets`) and a wide table's (h75 F20: a World Bank table's new country, unsaid)."""
    return (f"left out series {some(list(map(repr, others)))}: not among the targets "
            f"{some(list(map(repr, targets)))} (a model's: the series it was trained on, which leave out "
            "those too short to train)")

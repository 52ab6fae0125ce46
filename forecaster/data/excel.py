"""Workbooks (.xlsx, .xlsm) as the CSV text the reader reads: statistics offices publish many tables as
spreadsheets, often with a contents or notes sheet before the data, so the visible sheet holding the most
numbers is the one read unless `sheet` names another, and everything after (title rows, periods as columns,
footnotes) is the reader's as for a CSV.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from forecaster.data.cells import number_cells
from forecaster.data.textfile import ZIP_MAGIC
from forecaster.errors import DataError, MissingSheetError, one_line

EXCEL_SUFFIXES = (".xlsx", ".xlsm")
_OLD_FORMATS = (".xls", ".ods", ".xlsb")
_WORKBOOK_MAGIC = (b"\xd0\xcf\x11\xe0", *ZIP_MAGIC)  # an .xls (OLE2 compound file); .ods, .xlsb: zips
# A workbook is a zip of XML that expands many times over in memory; larger tables belong in a CSV.
MAX_WORKBOOK_BYTES = 50 * 2**20
# Its XML, unpacked: 245 KB of zip holding 90 MB of XML (6 million cells, 15 bytes and 16 us each) took 97 s
# before it failed; 32 MiB is some 2 million cells.
MAX_WORKBOOK_XML_BYTES = 32 * 2**20
TEXT_SAMPLE = 2000  # text cells of a sheet told numbers or not (`_numbers`)


def is_workbook(path: Path) -> bool:
    """Whether `path` is named like a spreadsheet (DataError for the formats read only as CSV exports, when
    the file is one: a text file so named is read as text, as the IMF's WEO .xls, tab-separated UTF-16)."""
    suffix = path.suffix.lower()
    if suffix in _OLD_FORMATS:
        with path.open("rb") as handle:
            if not handle.read(4).startswith(_WORKBOOK_MAGIC):
                return False
        raise DataError(f"{path}: {suffix} workbooks are not read; expected .xlsx, or the sheet saved as CSV")
    return suffix in EXCEL_SUFFIXES


def _numbers(sheet: pd.DataFrame) -> int:
    """Its cells of numbers, with those stored as text that read as numbers (Excel's "Number Stored as
    Text", '12,000.0' in workbooks exported from web tables: h82 F7, the sheet was said to hold none), as
    TEXT_SAMPLE of its text cells spread over it hold them (a text date takes tens of microseconds to tell
    from a number: 200,000 took 14 s)."""
    values = sheet.to_numpy(dtype=object).ravel()
    texts = pd.Series([value for value in values if isinstance(value, str)], dtype=object)
    stored = sum(isinstance(value, int | float | np.number) and not pd.isna(value) for value in values)
    if texts.empty:
        return stored
    spread = np.unique(np.linspace(0, len(texts) - 1, TEXT_SAMPLE).round().astype(int))  # all, if fewer
    return stored + round(number_cells(texts.iloc[spread]).mean() * len(texts))


def _cell_text(value: object) -> object:
    """Whole floats as integers: a year typed into Excel is often stored as 1990.0. Text, integers too, as
    pandas made a column of whole and decimal numbers (years heading decimal values), or of whole numbers and
    a blank (a year heading a missing value), floats again: 1990.0."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) and np.isfinite(value) else value


def _chosen(path: Path, names: list[str], sheet: str) -> str:
    """The sheet `sheet` names: by its name (case and surrounding spaces aside), else by its number from 1."""
    for name in names:
        if str(name).strip().casefold() == sheet.strip().casefold():
            return name
    if sheet.strip().isdigit() and 1 <= int(sheet) <= len(names):
        return names[int(sheet) - 1]
    listed = ", ".join(f"{number} {str(name)!r}" for number, name in enumerate(names, start=1))
    said = f"{path}: no sheet {sheet!r}; expected a sheet's name or number: {listed}"
    raise MissingSheetError(said, listed)


@dataclass(frozen=True)
class ChosenSheet:
    """The sheet read by its numbers, none being named, beside the workbook's others: said in a note, and
    first in a refusal of its rows (`sheet_named`)."""

    name: str
    why: str  # "the most numbers", "... of the visible sheets"
    others: str  # the other sheets' names, the hidden ones said so

    def said(self, more: str = "") -> str:
        return f"read sheet {self.name!r} ({self.why}; also in the workbook: {self.others}{more})"


def workbook_as_csv(path: Path, sheet: str | None = None) -> tuple[io.StringIO, ChosenSheet | None]:
    """The sheet named by `sheet`, else the visible one with the most numbers, as CSV text (empty rows and
    columns dropped), and that sheet beside the others where the workbook has others and none was named;
    DataError for a workbook that is not one, too large, or without numbers."""
    size = path.stat().st_size
    if size > MAX_WORKBOOK_BYTES:
        raise DataError(
            f"{path}: a {size / 2**20:.0f} MiB workbook is more than the {MAX_WORKBOOK_BYTES // 2**20} MiB "
            "read; expected the sheet saved as CSV"
        )
    if not zipfile.is_zipfile(path):
        raise DataError(f"{path}: not an .xlsx workbook (a zip archive of sheets); expected .xlsx or CSV")
    try:  # the sizes its members declare bound what unpacking them yields
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (OSError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: cannot be read as an .xlsx workbook: {error}") from None
    if unpacked > MAX_WORKBOOK_XML_BYTES:
        raise DataError(f"{path}: its sheets unpack to {unpacked / 2**20:.0f} MiB of XML, more than the "
                        f"{MAX_WORKBOOK_XML_BYTES // 2**20} MiB read; expected the sheet saved as CSV")
    try:
        with pd.ExcelFile(path, engine="openpyxl") as book:
            sheets = pd.read_excel(book, sheet_name=None, header=None, dtype=object)
            states = {name: getattr(book.book[name], "sheet_state", "visible") for name in sheets}
    except (ValueError, OSError, KeyError, EOFError, zipfile.BadZipFile) as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataError(f"{path}: cannot be read as an .xlsx workbook: {detail}") from None
    hidden = [name for name, state in states.items() if state != "visible"]  # "hidden", "veryHidden"
    if sheet is not None:
        name = _chosen(path, list(sheets), sheet)
        if not _numbers(sheets[name]):
            raise DataError(f"{path}: sheet {str(name)!r} holds no numbers; expected a sheet of dates and "
                            "values")  # fmt: skip
    else:  # a visible sheet before hidden ones (lookup tables, calculations: h82 F10)
        counts = {name: _numbers(table) for name, table in sheets.items()}
        if not counts or max(counts.values()) == 0:
            raise DataError(f"{path}: no sheet holds numbers; expected a sheet of dates and values")
        name = max(counts, key=lambda name: (counts[name] > 0, name not in hidden, counts[name]))
    table = sheets[name].dropna(how="all").dropna(axis=1, how="all").map(_cell_text)
    text = io.StringIO(table.to_csv(index=False, header=False))
    others = [str(other) + " (hidden)" * (other in hidden) for other in sheets if other != name]
    if not others or sheet is not None:
        return text, None
    most = "the most numbers" + " of the visible sheets" * bool(hidden and name not in hidden)
    return text, ChosenSheet(str(name), most, ", ".join(others))


@contextmanager
def sheet_named(source: str, chosen: ChosenSheet | None) -> Iterator[None]:
    """A refusal of the rows of a sheet chosen by its numbers names it first (where a long message's middle
    is cut) and the option that chooses another: that it was another sheet than the data's went unsaid (h82
    F10). The error keeps its type (a missing column's is caught)."""
    try:
        yield
    except DataError as error:
        if chosen is not None:
            start = f"{source}: "
            said = str(error).removeprefix(start)
            error.args = (one_line(f"{start}{chosen.said('; sheet (--sheet) names another')}: {said}"),
                          *error.args[1:])  # fmt: skip
        raise

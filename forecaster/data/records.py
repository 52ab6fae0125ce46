"""A delimited file's first lines split into records, and what the splits tell of how it was written:
separators between spaces ("a , b"), thousands separators not quoted ("2005,1,000")."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable

import numpy as np

# The delimiters a file's cells may be split by, named as notes name them (spaces: a text table's columns)
DELIMITERS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "'|' characters", " ": "spaces"}


def split_records(lines: list[str], delimiter: str) -> list[tuple[int, list[str]]]:
    """(first file line, 0-based, and cells) of each record that is not blank."""
    if delimiter == " ":  # a text table: values in columns lined up by spaces
        return [(row, line.split()) for row, line in enumerate(lines) if line.strip()]
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter)
    records, start = [], 0
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                records.append((start, cells))
            start = reader.line_num
    except csv.Error:  # the prefix ends inside a quoted cell
        pass
    return records


def records_before(lines: list[str], line: int, delimiter: str) -> int:
    """The records (blank ones too) of the file lines before `line`, as pandas' `skiprows` counts them: a
    quoted title holding a line break is one record of two lines; skipping two took the header (h75 F1)."""
    if delimiter == " ":
        return line
    try:
        return sum(1 for _ in csv.reader(io.StringIO("\n".join(lines[:line])), delimiter=delimiter))
    except csv.Error:  # a quote left open: the lines as they are
        return line


def record_starts(data: bytes, skip: int, header: bool) -> np.ndarray:
    """The file line (from 0) each data record of `data` starts on, as pandas reads them after `skip` lines
    and the header record: a quoted cell's line breaks within its record (a '"' in a cell doubled, as CSV
    writes it), blank lines (spaces at most) no record."""
    text = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(text == ord("\n"))
    starts = np.concatenate([[0], ends + 1])[skip:]
    starts = starts[starts < len(text)]
    if not len(starts):
        return starts
    quotes = np.bitwise_xor.reduceat((text == ord('"')).view(np.uint8), starts)  # each line's, as parity
    inside = np.bitwise_xor.accumulate(quotes)  # a quoted cell open at the line's end
    first = np.concatenate([[True], inside[:-1] == 0])  # the lines a record starts on
    filled = np.logical_or.reduceat(text > ord(" "), starts)
    alone = np.concatenate([first[1:], [True]])  # a record of one line
    kept = first & (filled | ~alone)
    return np.flatnonzero(kept)[int(header) :] + skip


class LineMap:
    """The lines a file's data records span beyond one each, up to a record: 0 but for quoted line breaks
    (a comment cell of three lines) and blank lines. The file is read again for them only when a message
    names a line (`missing.line_number`); counts unlike pandas' rows (a quote inside an unquoted cell, '12"')
    leave the rows' numbers as they are."""

    def __init__(self, read: Callable[[], bytes], skip: int, header: bool, records: int) -> None:
        self.read, self.skip, self.header, self.records = read, skip, header, records
        self.starts: np.ndarray | None = None

    def extra(self, record: int) -> int:
        """The lines before data record `record` (from 0) beyond one per record and the header's."""
        if self.starts is None:
            starts = record_starts(self.read(), self.skip, self.header)
            self.starts = starts if len(starts) == self.records else np.zeros(0, int)
        if not 0 <= record < len(self.starts):
            return 0
        return int(self.starts[record]) - self.skip - int(self.header) - record


def padded(records: list[tuple[int, list[str]]]) -> bool:
    """Most records split at spaces hold a lone ",", ";" or "|": the file's separator, written between
    spaces."""
    lone = sum(any(cell in DELIMITERS for cell in cells) for _, cells in records)
    return 2 * lone > len(records)


_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def unquoted_thousands(records: list[tuple[int, list[str]]]) -> tuple[int, int, int, str] | None:
    """(file line, cells, the header's cells, the last ones joined) of the first record longer than the
    header (the first record) whose cells from the header's last column on join into a number grouped by
    commas ("2005,1,000" under "date,value"), where every longer record does: thousands separators not quoted
    split a value into columns (read as 'sales' 1 and 'column 3' 0, unsaid)."""
    width = len(records[0][1]) if records else 0
    longer = [(start, cells) for start, cells in records[1:] if len(cells) > width]
    if width < 2 or not longer:
        return None
    joined = [",".join(cell.strip() for cell in cells[width - 1 :]) for _, cells in longer]
    if not all(_GROUPED.fullmatch(text) for text in joined):
        return None
    return longer[0][0] + 1, len(longer[0][1]), width, joined[0]

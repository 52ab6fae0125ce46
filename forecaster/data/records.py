"""A delimited file's first lines split into records, and what the splits tell of how it was written:
separators between spaces ("a , b"), thousands separators not quoted ("2005,1,000")."""

from __future__ import annotations

import csv
import io
import re

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

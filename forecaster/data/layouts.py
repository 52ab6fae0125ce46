"""Tables as statistics offices publish them, made tidy before the reader validates them: values separated
by ";", tabs or "|" and written with decimal commas, title and metadata lines before the header, notes and
summary rows ("Total") after the data, spreadsheets' empty unnamed columns and repeated rows, periods as
columns (wide.py), and ONS time-series files (ons.py).

`sniff` looks only at the first PREFIX_LINES lines; pandas then reads the file once, with what was found.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from forecaster.data.cells import Tally, cell_texts, counts_rows, number_kind, numbers_in_text_columns
from forecaster.data.dateflags import unflagged_dates
from forecaster.data.footers import MAX_DESCRIPTION_ROWS, drop_footer, is_datum
from forecaster.data.headerless import (
    commented_names,
    header_above_labels,
    is_data,
    is_date,
    is_record,
    keyed_line,
    names_above,
    names_not_given,
    years_over_parts,
)
from forecaster.data.headerless import names as headerless_names
from forecaster.data.keys import carried_ids, key_parts
from forecaster.data.legends import dashes_as_zero, without_footnote_marks, without_legend
from forecaster.data.missing import line_number, lines, renumbered, some
from forecaster.data.numberdates import year_numbers
from forecaster.data.ons import block as ons_block
from forecaster.data.ons import first_row as ons_first_row
from forecaster.data.ons import series_names as ons_names
from forecaster.data.periods import find_period_codes, part_summaries, period_labels, years_among_periods
from forecaster.data.records import DELIMITERS, padded, records_before, split_records, unquoted_thousands
from forecaster.data.seasons import season_by_year, year_by_season
from forecaster.data.series import ReadOptions
from forecaster.data.wide import DATE_COLUMN, beside_periods, looks_wide, to_long
from forecaster.errors import DataError, OneBlockError

PREFIX_LINES = 200
# Columns a table may have: Traffic has 862; reading one of 1,000,000 (10 MB) took 131 s and 4.4 GB before
# it failed, of 100,000 30 s (a table of that many series is a long one: a row per series and time).
MAX_COLUMNS = 50_000
_SPANNED_ROWS = 50  # the lines a header of years over quarters or months may begin on
# "Unit,000" is no data, nor FRED-QD's "factors,1,0" and "transform,5,2" (no colon: "Transform:" is FRED-MD's)
_UNIT_KEY = re.compile(r"units?(?: of measure)?|einheit|unité|unidad|eenheid|factors|transform", re.I)
_NUMBERS = ("integer", "ambiguous", "dot", "comma")
_PRESUMED = (  # no mark seen in a ";" file: a Swiss file's rates '1.123' are read 1123, said, not as commas
    "no decimal mark seen: read ',' as the decimal mark and '.' as a thousands separator, as ';'-separated "
    "files write them ('1.234' is 1234, '1,234' is 1.234)")  # fmt: skip


@dataclass(frozen=True)
class Layout:
    """What the prefix showed: how pandas is to read the file."""

    delimiter: str = ","
    skip: int = 0  # file lines before the header (an ONS file: before its first data row)
    preamble: int = 0  # the lines among them that are not blank
    decimal: str | None = None  # the decimal mark of the numbers seen, when they show one
    mark_note: str = ""  # said of the decimal mark: commas seen ("12,5"), or presumed (`_PRESUMED`), or none
    ons: tuple[str, ...] | None = None  # an ONS file: the names of its series
    # a header with fewer cells than the rows ('"Période";""' above '"2025-T4";"937 974";"A"', INSEE): named
    # in full, as pandas would otherwise take the first column for the row index
    names: tuple[str, ...] | None = None
    unnamed: tuple[int, ...] = ()  # the columns whose header cell is empty (Excel's trailing ",,,")
    headerless: bool = False  # the first line after `skip` is data: `names` come from what columns hold
    repeated: tuple[str, ...] = ()  # names the header gives more than one column (pandas renames: "OT.1")
    naming: int = 0  # the lines of the preamble that name the columns (`names_above`), not skipped
    codes: tuple[str, ...] = ()  # ids written with leading zeros ('01'), read and kept as text (`_as_text`)
    skip_records: int | None = None  # the records of the `skip` lines, pandas' skiprows (None: as many)

    def read_options(self) -> dict[str, Any]:
        """pandas.read_csv options; none for a plain comma-separated file, which reads as it always did."""
        options: dict[str, Any] = {}
        if self.delimiter != ",":
            options["sep"] = r"\s+" if self.delimiter == " " else self.delimiter
            if self.decimal == ",":
                options["decimal"] = ","
        if self.skip:
            options["skiprows"] = self.skip if self.skip_records is None else self.skip_records
        if self.ons is not None:
            options.update(header=None, dtype=str)
        elif self.names is not None:
            options.update(header=None if self.headerless else 0, names=list(self.names))
            if self.delimiter == " ":  # a text table's notes after the values ("Provisional"): not read
                options["usecols"] = range(len(self.names))
        return options


def _prefix(source: Any, **options: Any) -> list[str]:
    """The first lines as text, decompressed and decoded as pandas reads the file with `options` (its
    compression and encoding; a buffer is rewound)."""
    start = source.tell() if hasattr(source, "seek") else None
    lines = pd.read_csv(
        source, header=None, sep="\x1f", quoting=csv.QUOTE_NONE, skip_blank_lines=False, dtype=str,
        na_filter=False, nrows=PREFIX_LINES, encoding_errors="replace", **options,
    )  # fmt: skip
    if start is not None:
        source.seek(start)
    texts = lines.iloc[:, 0].tolist()
    return [texts[0].removeprefix("\ufeff"), *texts[1:]]


def _data_row(cells: list[str]) -> bool:
    """A row of values: a number after the first cell (not a header of years), or no values at all beside a
    date."""
    kinds = [number_kind(cell) for cell in cells[1:] if cell.strip()]
    if any(kind in _NUMBERS for kind in kinds):
        return not looks_wide(cells, ordered=True)  # parses: only where a number may be a year
    markers = all(kind == "marker" for kind in kinds)
    return markers and is_datum(cells[0]) and not looks_wide(cells, ordered=True)


def sniff(source: Any, **options: Any) -> Layout:
    """The delimiter giving most rows one width (ties, or nine tenths as many rows: the most columns, then the
    comma), the header (the line above the first row of values; lines before it are metadata unless one
    looks like data), and the decimal mark of the values; `options`: pandas' compression and encoding of the
    file."""
    lines = _prefix(source, **options)
    layout = _layout(lines, source)
    return dataclasses.replace(layout, skip_records=records_before(lines, layout.skip, layout.delimiter))


def _layout(lines: list[str], source: Any) -> Layout:
    best: tuple[tuple[int, int], str, list, int] | None = None
    for delimiter in DELIMITERS:
        records = split_records(lines, delimiter)
        widths = Counter(len(cells) for _, cells in records if len(cells) > 1)
        if widths:
            width, rows = max(widths.items(), key=lambda item: (item[1], item[0]))
            if delimiter != " " and not any(len(cells) == width and _data_row(cells) for _, cells in records):
                # a wider table's rows of values, outnumbered (2 rows, then a legend's pairs: StatCan's)
                valued = [len(cells) for _, cells in records if len(cells) > width and _data_row(cells)]
                width = max(valued, key=lambda wide: (widths[wide], wide), default=width)
                rows = widths[width]
            # more columns on nine tenths of the rows win (not by spaces, a text's words): a ";" table's
            # decimal commas and two footnotes of a comma each split more lines by "," than ";" (Destatis)
            wider = delimiter != " " and best is not None and width > best[3] and 10 * rows >= 9 * best[0][0]
            if best is not None and (rows, width) <= best[0] and not wider:
                continue
            if delimiter == " " and best is not None and best[1] == "\t" and rows <= best[0][0]:
                continue  # words of a cell between tabs ("Stockholm county"): more columns, the same rows
            if delimiter == " " and padded(records):
                continue  # "a , b": separators with spaces around them, not a table lined up by spaces
            # a text table's rows are most lines, and most of them values (a date's time is no column)
            values = (len(cells) == width and _data_row(cells) for _, cells in records)
            if delimiter == " " and (2 * rows <= len(records) or 2 * sum(values) <= rows):
                continue
            best = ((rows, width), delimiter, records, width)
    if best is None:
        return Layout()
    _, delimiter, records, width = best
    where = source if isinstance(source, str | os.PathLike) else "the sheet"
    if width > MAX_COLUMNS:
        raise DataError(f"{where}: {width:,} columns; expected at most {MAX_COLUMNS:,} (a table of more "
                        "series is read in long format: a row per series and time, --id-col)")  # fmt: skip
    start, widest = max(((start, cells) for start, cells in records), key=lambda record: len(record[1]))
    if len(widest) > MAX_COLUMNS:  # one line of 8 million cells below a narrow header: 22 s of sniffing
        raise DataError(f"{where}: line {start + 1} has {len(widest):,} cells; expected at most "
                        f"{MAX_COLUMNS:,} columns, as many as its header's")  # fmt: skip
    if delimiter == "," and (split := unquoted_thousands(records)) is not None:
        line, cells, named, joined = split
        raise DataError(f"{where}: line {line} has {cells} fields under a header of {named}, its last ones "
                        f"{joined!r}: a number written with a thousands separator and no quotes; "
                        f'expected such numbers quoted ("1,000") or written without separators (1000)')
    rows = [cells for _, cells in records]
    ons = ons_names(rows, width)
    if ons is not None:
        first = ons_first_row(rows)
    else:
        first = next((row for row, cells in enumerate(rows) if len(cells) == width and _data_row(cells)), 0)
        first = header_above_labels(rows, first, width)
        if any(is_date(cells[0]) for cells in rows[:first] if len(cells) == width):
            first = 1  # "metadata" dated like data is data (not a series' id, "V41690973"): the header first
        periods = [row for row, cells in enumerate(rows[:first]) if looks_wide(cells, ordered=True)]
        while len(periods) > 1 and periods[-2] == periods[-1] - 1 and rows[periods[-2]] != rows[periods[-1]]:
            periods.pop()  # values that read as periods (Eurostat's 1130 ... 1000) under the header are data;
            # the header written twice (concatenated exports) is the header
        first = periods[-1] + 1 if periods else first  # a header of periods above a series without values
        first = max(first - 1, 0)  # the header
    values = [cell for cells in rows[first + 1 :] for cell in cells[1:]]
    kinds = [number_kind(cell) for cell in values]
    mark = Counter(kinds)
    decimal = "," if mark["comma"] and not mark["dot"] else "." if mark["dot"] and not mark["comma"] else None
    presumed = decimal is None and delimiter == ";" and bool(mark["ambiguous"])
    # a comma seen, not "1.234.567" alone (h82 F20)
    commas = any(kind == "comma" and "," in cell for cell, kind in zip(values, kinds, strict=True))
    mark_note = _PRESUMED if presumed else "read decimal commas" if decimal == "," and commas else ""
    if presumed:  # "1,000;19,640": fields split by ";" because "," marks their decimals (Excel's CSV where
        decimal = ","  # the comma is the decimal mark)
    elif decimal is None and delimiter == "," and mark["ambiguous"]:  # '1947,"60,323"': fields split by ","
        decimal = "."  # whose numbers quote their commas: thousands, as US agencies write them
    blank = first > 0 and rows[first][0].strip() == "#" and len(rows[first]) == 1  # KNMI's "# " under names
    commented = commented_names(rows[first - blank], width) if ons is None else None
    data_first = is_data(rows[first]) or is_record(rows, first)
    if ons is None and (commented or data_first or rows[first][0].startswith("#")):
        start = first + (not data_first)  # under a comment line: the data's first row
        names = commented or headerless_names(rows[start:], width)
        return Layout(delimiter, records[start][0], start, decimal, mark_note, None, names, headerless=True)
    tops = range(min(len(rows) - 1, _SPANNED_ROWS) if ons is None else 0)
    spanned = next(((top, names) for top in tops if (names := years_over_parts(rows, top, width))), None)
    if spanned is not None:  # a header of years over quarters or months: its names joined
        return Layout(delimiter, records[spanned[0] + 1][0], spanned[0], decimal, mark_note, None, spanned[1])
    header = [cell.strip() for cell in rows[first]]
    above = None  # (names, lines read) from the lines above the header
    if ons is None and len(header) == width and names_not_given(header):
        above = names_above(rows[:first], width, rows[first + 1 :], rows[first])
        if above is not None and not above[0][0]:  # the first column, unnamed above a row label: periods
            above = ((DATE_COLUMN, *above[0][1:]), above[1])
    names, naming = above or (None, 0)
    if ons is None and len(header) < width:  # above a units line ("degC degC days"), the line naming all
        above = names_above(rows[:first], width, rows[first + 1 :])
        names, naming = above or (None, 0)
        header += [""] * (width - len(header))
        names = names or tuple(cell or f"column {k + 1}" for k, cell in enumerate(header))
    if delimiter == " " and ons is None:  # named, so that notes after a row's values are left out
        fits = len(header) == width  # else a name of two words ("decimal date") split in two
        names = names or (tuple(header) if fits else headerless_names(rows[first + 1 :], width))
    # named by the line above: every column has a name but an empty last one (a separator ending each line)
    named = names if above is not None else header if ons is None else ()
    unnamed = tuple(k for k, cell in enumerate(named) if not cell)
    given = Counter(cell for cell in (names or header) if cell) if ons is None else Counter()
    repeated = tuple(sorted(cell for cell, count in given.items() if count > 1))
    return Layout(
        delimiter, records[first][0], first, decimal, mark_note, ons, names, unnamed, repeated=repeated,
        naming=naming,
    )


def _description_rows(raw: pd.DataFrame) -> int:
    """How many rows right below the header describe the columns instead of holding data (an ABS time-series
    spreadsheet's Unit, Series Type, ..., Series ID rows; the Banco de España's; FRED-MD's codes of a
    "Transform:" key): at most MAX_DESCRIPTION_ROWS whose first cell is text and no date, above rows whose
    first cells, a sample spread over them, all are dates or period labels ("ENE 2018"); else 0."""
    first = cell_texts(raw.iloc[:, 0])
    dated = (is_datum(text) or is_date(text) for text in first.iloc[: MAX_DESCRIPTION_ROWS + 1])
    start = next((row for row, is_date in enumerate(dated) if is_date), 0)
    if not start or not all(first.iloc[:start]):
        return 0
    keyed = all(keyed_line([text]) or _UNIT_KEY.fullmatch(text) for text in first.iloc[:start])
    if not keyed and all(_data_row(cell_texts(row).tolist()) for _, row in raw.iloc[:start].iterrows()):
        return 0  # numbers beside each: series named by codes, above one named like a date (EU27_2020)
    rest = first.iloc[start:]
    sample = rest.iloc[np.unique(np.linspace(0, len(rest) - 1, num=20).astype(int))]
    return start if all(is_datum(text) or is_date(text) for text in sample) else 0


def arrange(
    source: str,
    raw: pd.DataFrame,
    layout: Layout,
    read: ReadOptions,
    find_date: Callable[[pd.DataFrame], str | None],
    notes: list[str],
) -> tuple[pd.DataFrame, str | None, ReadOptions]:
    """The table in the reader's shape (one row per time step, numbers as floats), notes on what was done
    to it, how the line numbers of later messages map to the file (None: as they are), and `read` with the
    block of several frequencies that was read (`periods`), which a bundle reads again."""
    if read.periods is not None and layout.ons is None:
        raise OneBlockError(f"{source}: --periods {read.periods} chooses a block of a file of several "
                        "frequencies (an ONS time series); this file holds one: expected no "
                        "--periods")  # fmt: skip
    said = []
    if layout.delimiter != ",":
        said.append(f"read values separated by {DELIMITERS[layout.delimiter]}")
    if layout.mark_note:
        said.append(layout.mark_note)
    if layout.headerless:
        said.append(f"no header line: named the columns {', '.join(map(repr, raw.columns))} by their values")
    unnamed = [k for k in layout.unnamed if k < raw.shape[1]]
    empty = [k for k in unnamed if raw.iloc[:, k].isna().all()]
    numbered = [k for k in unnamed if counts_rows(raw.iloc[:, k])]
    # a bundle trained on such a file re-reads new rows with the column named "year" here
    dated = not read.no_date and read.date_col in (None, "year") and "year" not in raw.columns
    years = dated and 0 in unnamed and 0 not in empty + numbered and year_numbers(raw.iloc[:, 0]) is not None
    if empty:
        said.append(f"dropped {len(empty)} empty column(s) without a name")
    if numbered:
        said.append(f"dropped {len(numbered)} column(s) without a name holding row numbers (as R's write.csv "
                    "adds)")  # fmt: skip
    if years:  # sktime's Lynx.csv: ",0" over "1821,269"
        raw = raw.rename(columns={raw.columns[0]: "year"})
        said.append("read the first column, without a name, as years")
    raw = raw.drop(columns=raw.columns[empty + numbered])
    raw = unflagged_dates(raw, said) if not read.no_date else raw  # "2024 estimate" is no summary row
    whole = raw
    raw, footer, summaries = drop_footer(without_legend(raw, said))
    raw = dashes_as_zero(raw, whole.iloc[len(raw) :], said)
    raw = without_footnote_marks(raw, whole.iloc[len(raw) :], said)
    raw = carried_ids(raw, said) if not read.no_date else raw
    if raw.empty:
        raise DataError(f"{source}: has a header but no data rows; expected one row per time step")
    among = read.date_from is None and not read.no_date and layout.ons is None  # ONS: a block of years
    yearly = False  # rows of years or of a year's summary dropped: the line numbers count the rows kept
    rules = [years_among_periods] if among else []
    rules += [lambda table: part_summaries(table, read.date_from)] if not read.no_date else []
    for rule in rules:  # each on the rows the one before kept
        if (dropped := rule(raw)) is not None:
            (raw, note), yearly = dropped, True
            said.append(note)
    # a bundle trained on such a file re-reads new rows with the date column named here, or with the first
    # column's name where the file gives it one (INSEE's "Libellé")
    named_first = read.date_col is not None and read.date_col == raw.columns[0]
    found = read.date_col in (None, DATE_COLUMN) and find_date(beside_periods(raw)) in (None, raw.columns[0])
    describable = not read.no_date and layout.ons is None and (found or named_first)  # none, or the first
    described = _description_rows(raw) if describable else 0
    if described:
        labels = ", ".join(map(repr, raw.iloc[:described, 0].astype(str).str.strip()[:4]))
        said.append(f"skipped {described} row(s) below the header describing the columns ({labels}"
                    f"{', ...' if described > 4 else ''})")  # fmt: skip
        raw = raw.iloc[described:].reset_index(drop=True)
        if 0 in unnamed and not named_first:  # the first column, without a name, holds the dates
            raw = raw.rename(columns={raw.columns[0]: DATE_COLUMN})
    if layout.naming:
        names = some(list(raw.columns))
        said.append(f"named the columns from {layout.naming} line(s) above the header: {names}")
    if layout.preamble > layout.naming or footer:
        skipped = layout.preamble - layout.naming
        before = f"{skipped} metadata line(s) before the data" if skipped else ""
        after = f"{footer} after" if before else f"{footer} metadata line(s) after the data"
        said.append("skipped " + " and ".join(part for part in (before, after * bool(footer)) if part))
    if summaries:
        shown = ", ".join(f"line {layout.skip + line_number(row)} {label!r}" for row, label in summaries)
        said.append(f"skipped {len(summaries)} summary row(s) after the data: {shown}")
    repeated = np.zeros(len(raw), bool) if read.no_date else raw.duplicated().to_numpy()  # steps may repeat
    if repeated.any():
        said.append(f"dropped {int(repeated.sum())} exact duplicate row(s) (date and values as on an earlier "
                    f"line): {lines(np.flatnonzero(repeated), layout.skip)}")  # fmt: skip
        raw = raw[~repeated].reset_index(drop=True)
    kept = "the rows kept, " if repeated.any() or described or yearly else ""
    context = (
        f"line numbers count {kept}from the header, which is file line {layout.skip + 1}"
        if layout.skip or kept
        else None
    )
    if layout.headerless:  # line 2 is the first data row, which is file line skip + 1
        shift = f" {'+-'[layout.skip < 1]} {abs(layout.skip - 1)}" * (layout.skip != 1)
        context = f"the file has no header: line N above is file line N{shift}{', of rows kept' * bool(kept)}"
    tally, plain = Tally(), context
    # a bundle trained on a wide file re-reads new rows with the date column the transform names
    automatic = read.date_col in (None, DATE_COLUMN) and read.date_from is None and not read.no_date
    automatic = automatic and read.id_col is None
    if layout.ons is not None:
        raw, note, context, kind = ons_block(source, raw, layout.skip, layout.ons, read.periods)
        read = dataclasses.replace(read, periods=kind)
        said.append(note)
    elif read.date_from is None and not read.no_date and (codes := find_period_codes(raw)) is not None:
        raw, note = period_labels(raw, *codes)
        said.append(note)
        context = "line numbers count the rows kept"
    elif automatic and (by := year_by_season(source, raw, layout.decimal, tally)):  # its years: no date
        raw, note = by
        said.append(note)
        context = "in this year-by-season table line 2 means the first year's first season, line 3 its second"
    elif automatic and (by := season_by_year(source, raw, layout.decimal, tally)):  # SurvStat's weeks x years
        raw, note = by
        said.append(note)
        context = "in this season-by-year table line 2 means the first year's first season, line 3 its second"
    elif automatic and looks_wide(raw.columns) and find_date(beside_periods(raw)) is None:  # no dates apart
        raw, note = to_long(source, raw, layout.decimal, tally)
        said.append(note)
        context = "in this wide file line 2 means the first period column of the header, line 3 the second"
    if kept or context != plain:  # rows dropped or made anew: no records of the file, numbered as said
        renumbered()
    keys = [part for part in [*key_parts(read.id_col or ""), *layout.codes] if part in raw.columns]  # '01'
    raw = numbers_in_text_columns(raw, layout.decimal, tally).assign(**{key: raw[key] for key in keys})
    notes.extend(said + tally.notes())
    return raw, context, read

"""ONS time-series files: no header, key/value lines (Title, CDID, Unit, ...) then yearly, quarterly and
monthly blocks one after another, a column per series (one CDID, or several side by side as the ONS
explorer downloads them). The block kept is the one asked for (`periods`), else the finest of at least
ENOUGH_PERIODS rows (else the longest)."""

from __future__ import annotations

import re
from collections import Counter
from itertools import pairwise

import pandas as pd

from forecaster.data.cells import MONTHS, cell_texts
from forecaster.data.series import ENOUGH_PERIODS, PERIOD_BLOCKS
from forecaster.data.wide import DATE_COLUMN
from forecaster.errors import DataError

LABEL = re.compile(r"(?P<year>\d{4})(?: Q(?P<quarter>[1-4])| (?P<month>[A-Za-z]{3}))?")  # 1990 Q1, 1990 JAN


def _kind(found: re.Match) -> str:
    return "monthly" if found["month"] else "quarterly" if found["quarter"] else "yearly"


def series_names(rows: list[list[str]], width: int) -> tuple[str, ...] | None:
    """The series' names (CDIDs, else Titles) of an ONS file: its data rows labelled by years, quarters and
    months one after another, or a CDID line; None for any other file. A file of several series needs the
    CDID line (a table whose first column mixes years with quarters is not the ONS's otherwise, nor one whose
    kinds alternate)."""
    keys = {cells[0].strip().upper(): [cell.strip() for cell in cells[1:]] for cells in rows
            if len(cells) == width}  # fmt: skip
    labels = [LABEL.fullmatch(cells[0].strip()) for cells in rows]
    if any(found and found["month"] and found["month"].upper() not in MONTHS for found in labels):
        return None  # "2021 mei": CBS's Dutch months beside its years, not ONS's "1990 JAN"
    kinds = [_kind(found) for found in labels if found]
    runs = 1 + sum(kind != before for before, kind in pairwise(kinds))
    if "CDID" not in keys and (width != 2 or len(set(kinds)) < 2 or runs > len(set(kinds))):
        return None  # a year's row among its months ("2015", "2015 JAN", ...) is a total, not an ONS block
    cdids, titles = (keys.get(key, [""] * (width - 1)) for key in ("CDID", "TITLE"))
    alone = "value" if width == 2 else ""  # one series named by neither
    names = [cdid or title or alone for cdid, title in zip(cdids, titles, strict=True)]
    return tuple(names) if all(names) and len(set(names)) == len(names) else None


def first_row(rows: list[list[str]]) -> int:
    """The first row labelled by a period."""
    return next((row for row, cells in enumerate(rows) if LABEL.fullmatch(cells[0].strip())), 0)


def block(
    source: str, raw: pd.DataFrame, skip: int, names: tuple[str, ...], asked: str | None
) -> tuple[pd.DataFrame, str, str, str]:
    """The block kept (DATE_COLUMN and the series): the one `asked` for, else the finest that is long enough;
    a note naming the blocks skipped, how its line numbers map to the file, and the block's kind."""
    labels = cell_texts(raw.iloc[:, 0])
    found = [LABEL.fullmatch(label) for label in labels]
    bad = next((row for row, match in enumerate(found) if match is None), None)
    if bad is not None:
        raise DataError(
            f"{source}: line {skip + bad + 1}: {labels.iloc[bad]!r} is not a period label of an ONS "
            "time series; expected years (1990), quarters (1990 Q1) or months (1990 JAN) in the first column"
        )
    blocks: list[list] = []  # [kind, first row, row after the last]
    for row, match in enumerate(found):
        kind = _kind(match)
        if blocks and blocks[-1][0] == kind:
            blocks[-1][2] = row + 1
        else:
            blocks.append([kind, row, row + 1])
    if asked is not None and asked not in {block[0] for block in blocks}:
        held = ", ".join(dict.fromkeys(block[0] for block in blocks))
        raise DataError(f"{source}: has no {asked} rows (--periods {asked}); expected one of its blocks: "
                        f"{held}")  # fmt: skip
    enough = [block for block in blocks if block[2] - block[1] >= ENOUGH_PERIODS] or blocks
    enough = [block for block in blocks if block[0] == asked] or enough
    kept = max(enough, key=lambda block: (PERIOD_BLOCKS.index(block[0]), block[2] - block[1]))
    kind, rows = kept[0], range(kept[1], kept[2])
    matches = [found[row] for row in rows]
    wrong = next(
        (match["month"] for match in matches if match["month"] and match["month"].upper() not in MONTHS), None
    )
    if wrong is not None:
        raise DataError(f"{source}: {wrong!r} is not a month; expected JAN ... DEC in ONS month labels")
    # the labels as published ("2024 JAN"), which forecasts are written like (`labels.label_style`)
    frame = pd.DataFrame({DATE_COLUMN: [match[0] for match in matches]})
    for column, name in enumerate(names, start=1):
        frame[name] = raw.iloc[rows, column].to_numpy()
    skipped = Counter()
    for other in blocks:
        if other is not kept:
            skipped[other[0]] += other[2] - other[1]
    note = f"kept the {len(rows)} {kind} rows" + (
        ", skipped " + " and ".join(f"{count} {other}" for other, count in skipped.items()) + " (--periods "
        "chooses)" if skipped else ""
    )
    return frame, note, f"in this ONS file line 2 means the first of the kept {kind} rows", kind

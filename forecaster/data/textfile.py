"""What a file's bytes say about reading it: compressed (gzip, bz2, xz) whatever its name, text in
UTF-16 or UTF-32 (spreadsheets' "Unicode text" exports carry a byte-order mark), in Windows-1252 where it is
not UTF-8 (Excel's "CSV" export on a Western European Windows), or not text at all, which is refused in one
line rather than parsed into a misleading complaint about its columns.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path
from typing import Any

from forecaster.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
_PACKED = {GZIP_MAGIC: "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}
# UTF-32's marks first: its little-endian one begins with UTF-16's
_MARKS = {codecs.BOM_UTF32_LE: "utf-32", codecs.BOM_UTF32_BE: "utf-32",
          codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}  # fmt: skip
_HEAD = 8192  # bytes looked at: a text file holds no NUL byte among them
MAX_UNPACKED_BYTES = 2**30  # 8 times the largest benchmark file (Traffic, 130 MB unpacked)
_UTF8_LETTER = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}")
WINDOWS_TEXT = "cp1252"  # Latin-1's letters, and the euro sign and typographic quotes besides


def compression(head: bytes) -> str | None:
    """The compression pandas unpacks that a file beginning with `head` has ("gzip", "bz2", "xz"), if any."""
    return next((name for magic, name in _PACKED.items() if head.startswith(magic)), None)


def read_options(path: Path) -> dict[str, Any]:
    """pandas.read_csv's `compression` and `encoding` for the file's content; DataError for a zip archive not
    named .zip (pandas opens one of a single file by its name) or binary content."""
    with path.open("rb") as handle:
        head = handle.read(_HEAD)
    zipped = head.startswith(ZIP_MAGIC)
    packed = compression(head) or ("zip" if zipped and path.suffix.lower() == ".zip" else None)
    if packed is not None:
        _check_unpacked(path, packed)
        return {"compression": packed}
    encoding = next((name for mark, name in _MARKS.items() if head.startswith(mark)), None)
    if encoding is not None:
        return {"compression": None, "encoding": encoding}
    if zipped or b"\x00" in head:
        what = ("a zip archive (an .xlsx workbook is one: name it .xlsx)" if zipped
                else "binary data (NUL bytes)")  # fmt: skip
        raise DataError(
            f"{path}: {what}, not a CSV text file; expected text (UTF-8, or UTF-16 with a byte-order mark), "
            "or such a file compressed by gzip, bz2 or xz"
        )
    bad = _first_not_utf8(path)
    if bad is not None and _holds_utf8_letters(path):
        raise DataError(
            f"{path}: line {_line_at(path, bad)} is not UTF-8 though other lines are (two encodings in one "
            "file read a name two ways, 'Türkiye' and 'TÃ¼rkiye'); expected one encoding: save it as UTF-8"
        )
    return {"compression": None, **({} if bad is None else {"encoding": WINDOWS_TEXT})}


def _check_unpacked(path: Path, packed: str) -> None:
    """DataError for a compressed file that unpacks to more than MAX_UNPACKED_BYTES, counted a megabyte at a
    time before pandas reads it: 2 MB of gzip held a 2 GB line and took 14 GB of memory to refuse."""
    import bz2
    import gzip
    import lzma
    import zipfile

    try:
        if packed == "zip":
            with zipfile.ZipFile(path) as archive:
                members = archive.infolist()  # pandas refuses several members itself
                size = 0 if len(members) != 1 else _unpacked_size(archive.open(members[0]))
        else:
            with {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[packed](path) as handle:
                size = _unpacked_size(handle)
    except (OSError, EOFError, ValueError, lzma.LZMAError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: a {packed} file that does not unpack ({error}); expected a whole "
                        "file") from None  # fmt: skip
    if size > MAX_UNPACKED_BYTES:
        raise DataError(f"{path}: unpacks to more than {MAX_UNPACKED_BYTES >> 20:,} MiB; expected a "
                        "compressed CSV of at most that (unpack a larger one yourself to read it)")


def _unpacked_size(handle: Any) -> int:
    """Bytes a stream holds, read a megabyte at a time and stopped past MAX_UNPACKED_BYTES."""
    size = 0
    while size <= MAX_UNPACKED_BYTES and (chunk := handle.read(1 << 20)):
        size += len(chunk)
    return size


def _first_not_utf8(path: Path) -> int | None:
    """The offset of the file's first byte that is not UTF-8 (ASCII is), read a megabyte at a time; None if
    none: a Latin-1 'Veränderung' read as UTF-8 is 'Ver\ufffdnderung', and a 'März' label no month."""
    decoder, offset = codecs.getincrementaldecoder("utf-8")(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            pending = len(decoder.getstate()[0])  # bytes of a character the last chunk cut
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                return offset - pending + error.start
            offset += len(chunk)
    return None


def _holds_utf8_letters(path: Path) -> bool:
    """Whether the file holds UTF-8 letters of two or three bytes, which Windows-1252 text almost never does
    ('ü' in UTF-8 is 'Ã¼' in Windows-1252)."""
    with path.open("rb") as handle:
        tail = b""
        while chunk := handle.read(1 << 20):
            if _UTF8_LETTER.search(tail + chunk):
                return True
            tail = chunk[-2:]
    return False


def _line_at(path: Path, offset: int) -> int:
    """The line (from 1) that byte `offset` of the file is on."""
    lines, left = 1, offset
    with path.open("rb") as handle:
        while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
            lines, left = lines + chunk.count(b"\n"), left - len(chunk)
    return lines

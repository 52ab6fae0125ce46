"""What a file's bytes say about reading it: compressed (gzip, bz2, xz) whatever its name, text in
UTF-16 or UTF-32 (spreadsheets' "Unicode text" exports carry a byte-order mark), in Windows-1252 where it is
not UTF-8 (Excel's "CSV" export on a Western European Windows), in Shift-JIS where it reads as Japanese so
(Japanese offices' downloads), or not text at all, which is refused in one
line rather than parsed into a misleading complaint about its columns.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import io
import lzma
import re
import unicodedata
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from forecaster.errors import DataError

GZIP_MAGIC = b"\x1f\x8b"
# A zip archive: one holding files, or an empty one (its end record alone: "binary data (NUL bytes)", h101).
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_PACKED = {GZIP_MAGIC: "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}
# UTF-32's marks first: its little-endian one begins with UTF-16's
_MARKS = {codecs.BOM_UTF32_LE: "utf-32", codecs.BOM_UTF32_BE: "utf-32",
          codecs.BOM_UTF16_LE: "utf-16", codecs.BOM_UTF16_BE: "utf-16"}  # fmt: skip
_HEAD = 8192  # bytes looked at: a text file holds no NUL byte among them
MAX_UNPACKED_BYTES = 2**30  # 8 times the largest benchmark file (Traffic, 130 MB unpacked)
# A table's line, at most: Traffic's are 9 KB, a wide row of 100,000 numbers 1 MB; pandas took 26 s and
# 830 MB to read one line of 100 MB before it was refused (h47)
MAX_LINE_BYTES = 8 << 20
_UTF8_LETTER = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}")
WINDOWS_TEXT = "cp1252"  # Latin-1's letters, and the euro sign and typographic quotes besides
TURKISH_TEXT = "cp1254"  # the same but ğ, ı, ş, Ğ, İ, Ş in place of Icelandic letters
CENTRAL_TEXT = "cp1250"  # Central Europe's: Polish ł, ą, ś, Czech ř, ů, Hungarian ő (GUS, NBP, CNB, KSH)
ENCODING_NAMES = {WINDOWS_TEXT: "Windows-1252", TURKISH_TEXT: "Turkish Windows-1254",
                  CENTRAL_TEXT: "Central European Windows-1250"}  # fmt: skip
_INSIDE_WORD = re.compile(rb"(?<=[A-Za-z])[\x80-\xff]{1,3}(?=[A-Za-z])")  # GUS's "bie\xbf\xb9ce", bieżące
_TURKISH_WORDS = frozenset(["yıl", "yıllık", "aylık", "değişim", "oranı", "sayı", "şubat", "ağustos", "mayıs",
                            "kasım", "aralık", "şehir"])  # fmt: skip
# The East Asian encodings of offices' downloads (Japan's e-Stat, Korea's KOSIS, China's NBS), by name, tried
# in this order on a file that is not UTF-8 (`_reads_as`).
EAST_ASIAN = {"cp932": "Shift-JIS (cp932)", "cp949": "EUC-KR (cp949)", "gb18030": "GBK (GB18030)"}
_SAMPLE = 8 << 20  # bytes of a file whose text is counted by script
# Kana, Japanese punctuation and full-width forms are Shift-JIS lead bytes 0x81-0x83, of which Windows-1252
# text holds next to none (0x81 is none of its characters); half-width katakana ("narrow") are what UTF-8 or
# Latin letters read as cp932 mostly become; Latin letters read as cp932, cp949 or GBK are single kanji,
# syllables or ideographs touching ASCII letters, or runs of them between two ('Fußgänger' as GBK's Fu遟鋘ger,
# h125) ("lettered"), a language's words runs of two or more not so enclosed or single ones beside digits
# and punctuation (2020年1月, 2020년 1월).
_CJK = "\u4e00-\u9fff\uac00-\ud7a3"
_SCRIPTS = {"kana": re.compile("[\u3000-\u30ff\uff01-\uff5e]"), "narrow": re.compile("[\uff61-\uff9f]"),
            "hangul": re.compile("[\uac00-\ud7a3]"), "hanzi": re.compile("[\u4e00-\u9fff]"),
            "runs": re.compile(f"(?<![{_CJK}A-Za-z])[{_CJK}]{{2,}}|"
                               f"(?<![{_CJK}])[{_CJK}]{{2,}}(?![{_CJK}A-Za-z])"),
            "private": re.compile("[\ue000-\uf8ff]"),
            "lettered": re.compile(f"(?<=[A-Za-z])[{_CJK}]+(?=[A-Za-z])|(?<=[A-Za-z])[{_CJK}](?![{_CJK}])|"
                                   f"(?<![{_CJK}])[{_CJK}](?=[A-Za-z])")}  # fmt: skip
# A single ideograph or syllable whose second byte is ASCII is a Latin letter read with the byte before it
# ("°F" in "Temp (°F)" as GBK's 癋, touching no letter, h116 R1); GBK's and EUC-KR's own (GB 2312, KS X 1001)
# are two bytes beyond ASCII. Not Shift-JIS': its kanji's second bytes are often ASCII (年 is 0x94 "N").
_SINGLE = re.compile(f"(?<![{_CJK}])[{_CJK}](?![{_CJK}])")
# Hiragana and katakana, which Big5 read as GBK holds alone or in pairs (年月 as る, 中文資料 as いゅ戈,
# h116 R5) and Chinese next to none but in a Japanese name, a word of katakana (トヨタ, ソニー: h121)
_KANA_LETTERS = re.compile("[\u3041-\u3096\u30a1-\u30fa]")
_KATAKANA_WORDS = re.compile("[\u30a1-\u30fa\u30fc]{3,}")
# Words of two or more ideographs touching no ASCII letter, Big5's (`_big5`): Windows-1252's letters, each
# read with the byte after it, come in runs inside Latin words ('Fußgänger' as Fu罭鄚ger)
_RUN_WORDS = re.compile("(?<![A-Za-z])[\u4e00-\u9fff]{2,}(?![A-Za-z])")
# Runs of a line's bytes that are not UTF-8 (decoded with "surrogateescape"), and its UTF-8 beyond ASCII
_ESCAPED, _BEYOND = re.compile("[\udc80-\udcff]+"), re.compile("[^\x00-\x7f\udc80-\udcff]")


def composed(name: str) -> str:
    """`name` in Unicode's composed form (NFC), the one Windows, Excel and pandas write: macOS writes
    'Zürich' as u and a combining diaeresis, which every terminal shows alike, and a model trained on one
    spelling refused the other, naming both the same way (h66)."""
    return name if name.isascii() else unicodedata.normalize("NFC", name)


def composed_table(raw: pd.DataFrame) -> pd.DataFrame:
    """`raw` with its column names and its text cells (ids, labels) `composed`, other cells as they are."""
    raw = raw.set_axis([composed(str(name)) for name in raw.columns], axis=1)
    for position, dtype in enumerate(raw.dtypes):
        if not (pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype)):
            continue
        cells = raw.iloc[:, position]
        try:  # the texts beyond ASCII, each once: a million cells one by one took 5 s
            other = cells.notna() & ~cells.str.isascii().fillna(True).astype(bool)
        except AttributeError:  # a column of objects, none of them text
            continue
        spelled = {text: composed(text) for text in cells[other].unique()} if other.any() else {}
        if changed := {text: name for text, name in spelled.items() if name != text}:
            raw.isetitem(position, cells.replace(changed))
    return raw


def compression(head: bytes) -> str | None:
    """The compression pandas unpacks that a file beginning with `head` has ("gzip", "bz2", "xz"), if any."""
    return next((name for magic, name in _PACKED.items() if head.startswith(magic)), None)


def marked_encoding(head: bytes) -> str | None:
    """The encoding a byte-order mark at the start of `head` names, if any."""
    return next((name for mark, name in _MARKS.items() if head.startswith(mark)), None)


def read_options(path: Path) -> dict[str, Any]:
    """pandas.read_csv's `compression` and `encoding` for the file's content (a compressed file's by what it
    unpacks to: a gzip of UTF-16 or Windows-1252 text is read as such); DataError for a zip archive not named
    .zip (pandas opens one of a single file by its name), binary content, or a compressed file unpacking to
    more than MAX_UNPACKED_BYTES."""
    with path.open("rb") as handle:
        head = handle.read(_HEAD)
    zipped = head.startswith(ZIP_MAGIC)
    packed = compression(head) or ("zip" if zipped and path.suffix.lower() == ".zip" else None)
    scan = None
    if packed is not None:
        scan = _scan_unpacked(path, packed)
        head, zipped = scan.head, False
    encoding = marked_encoding(head)
    if encoding is not None:
        return {"compression": packed, "encoding": encoding}
    if zipped or b"\x00" in head:
        what = ("a zip archive (an .xlsx workbook is one: name it .xlsx)" if zipped
                else "binary data (NUL bytes)")  # fmt: skip
        raise DataError(
            f"{path}: {what}, not a CSV text file; expected text (UTF-8, or UTF-16 with a byte-order mark), "
            "or such a file compressed by gzip, bz2 or xz"
        )
    if scan is None:
        with path.open("rb") as handle:
            scan = _scan(handle, limit=None, path=path)
    marked = scan.head.startswith(codecs.BOM_UTF8)  # Windows-1252 after it was read as GBK (h47)
    if scan.not_utf8 is not None and not marked and (asian := _east_asian(path, packed)) is not None:
        return {"compression": packed, "encoding": asian}
    if scan.not_utf8 is not None and scan.utf8_letters:  # UTF-8's byte-order mark is one such letter
        with _opened(path, packed) as handle:
            line = _line_at(handle, scan.not_utf8)
        with _opened(path, packed) as handle:
            utf8 = "whole" if marked else _utf8_lines(handle)
        if utf8 is None:  # Big5 was said to mix encodings (h111)
            raise DataError(f"{path}: line {line} is not UTF-8, nor is any line of letters beyond ASCII (an "
                            "encoding not read here, as Big5); expected UTF-8 (or Windows-1252, Shift-JIS, "
                            "EUC-KR or GBK text): save it as UTF-8")  # fmt: skip
        if utf8 == "mixed":  # not Big5, as it had been called (h116 R6)
            raise DataError(f"{path}: line {line} is not UTF-8, and no line of letters beyond ASCII is UTF-8 "
                            "alone: they mix UTF-8 with another encoding; expected one encoding: save it as "
                            "UTF-8")  # fmt: skip
        though = ("the file begins with UTF-8's byte-order mark" if marked else "other lines are (two "
                  "encodings in one file read a name two ways, 'Türkiye' and 'TÃ¼rkiye')")  # fmt: skip
        raise DataError(f"{path}: line {line} is not UTF-8 though {though}; expected one encoding: save it "
                        "as UTF-8")  # fmt: skip
    if scan.not_utf8 is not None and not marked and _big5(path, packed):  # else Windows-1252 mojibake (h118)
        with _opened(path, packed) as handle:
            line = _line_at(handle, scan.not_utf8)
        raise DataError(f"{path}: line {line} is not UTF-8 but reads as Chinese in Big5, an encoding not "
                        "read here; expected UTF-8 (or Windows-1252, Shift-JIS, EUC-KR or GBK text): save it "
                        "as UTF-8")  # fmt: skip
    windows = {} if scan.not_utf8 is None else {"encoding": _windows_text(scan.head)}
    return {"compression": packed, **windows}


def file_bytes(source: Any, opened: dict[str, Any]) -> bytes:
    """The text pandas reads with `opened` (`read_options`), as bytes a line break and a quote are one byte
    of: unpacked, and UTF-16 or UTF-32 text as UTF-8; a sheet's (a buffer of text) as UTF-8."""
    if not isinstance(source, Path):
        return source.getvalue().encode("utf-8", "replace")
    with _opened(source, opened.get("compression")) as handle:
        data = handle.read()
    encoding = opened.get("encoding")
    wide = encoding is not None and encoding in _MARKS.values()
    return data.decode(encoding, "replace").encode("utf-8", "replace") if wide else data


def _windows_text(head: bytes) -> str:
    """Windows-1252, or Windows-1254 where the head read so holds Turkish words of the letters only it has
    (TurkStat's "Yıl;Ay;...": read as Windows-1252, "Yýl" named no year, "Þubat" no month), or Windows-1250
    where bytes within words are letters only in it (GUS's "Wskaźnik cen usług" read as Windows-1252:
    "WskaŸnik cen us³ug")."""
    words = set(re.findall(r"\w+", head.decode(TURKISH_TEXT, errors="replace").lower()))
    if words & _TURKISH_WORDS:
        return TURKISH_TEXT
    read = [(bytes([byte]).decode(CENTRAL_TEXT, "replace"), bytes([byte]).decode(WINDOWS_TEXT, "replace"))
            for run in _INSIDE_WORD.findall(head) for byte in run]  # fmt: skip
    central = any(central.isalpha() and not western.isalpha() for central, western in read)
    return CENTRAL_TEXT if central else WINDOWS_TEXT


@dataclass
class _Scan:
    """What one pass over a file's (unpacked) bytes found."""

    head: bytes  # the first _HEAD bytes
    size: int  # bytes read: all, or just past the limit
    not_utf8: int | None  # the offset of the first byte that is not UTF-8 (ASCII is), None if none
    utf8_letters: bool  # UTF-8 letters of two or three bytes, which Windows-1252 text almost never holds


def _scan(handle: Any, limit: int | None, path: Path) -> _Scan:
    """One pass a megabyte at a time, stopped past `limit` bytes (a compressed file's bound), finding a byte
    that is not UTF-8 and a UTF-8 letter: a Latin-1 'Veränderung' read as UTF-8 is 'Ver\ufffdnderung', and
    'ü' in UTF-8 is 'Ã¼' in Windows-1252. DataError at a line longer than MAX_LINE_BYTES, wherever it lies:
    the pass goes on once both are found (a Big5 file read as GBK had taken a 400 MB line to pandas, h116
    R4)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    head, size, bad, letters, tail = b"", 0, None, False, b""
    lines, run = 1, 0  # the line the chunk starts on, and the bytes of it before the chunk
    while (limit is None or size <= limit) and (chunk := handle.read(min(1 << 20, MAX_LINE_BYTES))):
        head = head or chunk[:_HEAD]
        if bad is None:
            pending = len(decoder.getstate()[0])  # bytes of a character the last chunk cut
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                bad = size - pending + error.start
        letters = letters or _UTF8_LETTER.search(tail + chunk) is not None
        tail, size = chunk[-2:], size + len(chunk)
        # a line within a chunk is shorter than the bound: only the one running across chunks is measured
        ends = [at for at in (chunk.find(b"\n"), chunk.find(b"\r")) if at >= 0]  # "\r" ends old Macs' lines
        if run + (min(ends) if ends else len(chunk)) > MAX_LINE_BYTES:
            raise DataError(f"{path}: line {lines} is longer than {MAX_LINE_BYTES / 2**20:g} MiB; expected a "
                            "table's lines, a row of values each")  # fmt: skip
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        lines, run = lines + chunk.count(b"\n"), len(chunk) - 1 - last if ends else run + len(chunk)
    return _Scan(head, size, bad, letters)


def _east_asian(path: Path, packed: str | None) -> str | None:
    """The first of EAST_ASIAN whose decoding of the file's bytes reads as its language (`_reads_as`)."""
    for encoding in EAST_ASIAN:
        with _opened(path, packed) as handle:
            counts = _script_counts(handle, encoding)
        if counts is not None and _reads_as(encoding, counts):
            return encoding
    return None


def _big5(path: Path, packed: str | None) -> bool:
    """Whether the file's first _SAMPLE bytes decode as Big5 (cp950, Taiwan's DGBAS and CBC) with words of
    ideographs (`_RUN_WORDS`) of more kinds than the single ones beside ASCII letters: Windows-1252's 'è' and
    '°' pair with the letter after them into one such ideograph ('Genève', '°C'), in runs only inside
    words. Without it a Big5 header with no UTF-8-looking byte pair was read as
    Windows-1252 ('¦~¤ë' for 年月), its series so named, silently (h118)."""
    with _opened(path, packed) as handle:
        data = handle.read(_SAMPLE)
    try:
        text = data.decode("cp950")
    except UnicodeDecodeError as error:  # a character cut at the bound decodes short of it
        if error.start < len(data) - 1 or len(data) < _SAMPLE:
            return False
        text = data[: error.start].decode("cp950")
    words = set("".join(_RUN_WORDS.findall(text)))
    lettered = set(_SCRIPTS["lettered"].findall(text))
    private, hanzi = (len(_SCRIPTS[name].findall(text)) for name in ("private", "hanzi"))
    return len(words) >= 2 and len(words) > len(lettered) and 10 * private <= hanzi


def _script_counts(handle: Any, encoding: str) -> Counter | None:
    """Characters of each of _SCRIPTS in the first _SAMPLE bytes decoded as `encoding` (for "runs", the
    characters in runs); None where a byte does not decode."""
    decoder, counts = codecs.getincrementaldecoder(encoding)(), Counter()
    kinds: dict[str, set[str]] = {"kana letters": set(), "hanzi": set()}  # each once: ids repeat names
    try:
        while (chunk := handle.read(1 << 20)) and counts["bytes"] < _SAMPLE:
            text = decoder.decode(chunk)
            counts["bytes"] += len(chunk)
            for name, pattern in _SCRIPTS.items():
                counts[name] += sum(map(len, pattern.findall(text)))
            if encoding != "cp932":
                counts["latin"] += sum(char.encode(encoding)[-1] < 0x80 for char in _SINGLE.findall(text))
            if encoding == "gb18030":
                kinds["kana letters"].update(_KANA_LETTERS.findall(_KATAKANA_WORDS.sub("", text)))
                kinds["hanzi"].update(_SCRIPTS["hanzi"].findall(text))
        if not chunk:
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return None
    counts.update({f"kinds of {name}": len(found) for name, found in kinds.items()})
    return counts


def _reads_as(encoding: str, counts: Counter) -> bool:
    """Whether text decoded as `encoding` reads as its language: Japanese with kana or Japanese punctuation,
    or kanji only (prefectures and years, which had been read as GBK: h111 F1), with at most a tenth as
    many half-width katakana; Korean and Chinese with at least four fifths syllables for Korean (Chinese GBK
    read as cp949 is half syllables, half hanja); each with its kanji, syllables or ideographs in words
    (`_SCRIPTS`), not mostly touching ASCII letters or ending in an ASCII byte as Latin text's would (the
    NBS' 2020年1月, h111 F2; `_SINGLE`)."""
    script = counts["hangul"] + counts["hanzi"]
    latin = max(counts["lettered"], counts["latin"])  # single characters a Latin letter's byte made
    words = script > 0 and (2 * counts["runs"] >= script or 2 * latin <= script)
    kana = 50 * counts["kinds of kana letters"] <= counts["kinds of hanzi"]  # `_KANA_LETTERS`
    words = words and 10 * counts["private"] <= script and kana  # Big5 read as GBK: private-use, kana
    if encoding == "cp932":
        japanese = counts["kana"] or (words and counts["hanzi"])
        return japanese > 0 and 10 * counts["narrow"] <= japanese
    return words and (encoding != "cp949" or 5 * counts["hangul"] >= 4 * script)


@contextlib.contextmanager
def _opened(path: Path, packed: str | None) -> Iterator[Any]:
    """The file's bytes as pandas reads them: unpacked (a zip archive's one member; several, which pandas
    refuses itself, as no bytes)."""
    if packed is None:
        with path.open("rb") as handle:
            yield handle
    elif packed == "zip":
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            with archive.open(members[0]) if len(members) == 1 else io.BytesIO() as handle:
                yield handle
    else:
        with {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}[packed](path) as handle:
            yield handle


def _scan_unpacked(path: Path, packed: str) -> _Scan:
    """The scan of what a compressed file unpacks to; DataError past MAX_UNPACKED_BYTES, counted before pandas
    reads it (2 MB of gzip held a 2 GB line and took 14 GB of memory to refuse), or if it does not unpack."""
    try:
        with _opened(path, packed) as handle:
            scan = _scan(handle, limit=MAX_UNPACKED_BYTES, path=path)
    except DataError:
        raise
    except (OSError, EOFError, ValueError, lzma.LZMAError, zipfile.BadZipFile) as error:
        raise DataError(f"{path}: a {packed} file that does not unpack ({error}); expected a whole "
                        "file") from None  # fmt: skip
    if scan.size > MAX_UNPACKED_BYTES:
        raise DataError(f"{path}: unpacks to more than {MAX_UNPACKED_BYTES >> 20:,} MiB; expected a "
                        "compressed CSV of at most that (unpack a larger one yourself to read it)")
    return scan


def _utf8_lines(handle: Any) -> str | None:
    """"whole" where a line of the first _SAMPLE bytes holding bytes beyond ASCII is UTF-8, else "mixed"
    where one holds Latin letters both in UTF-8 and not (`_latin_both_ways`: Windows-1252's 'Gen\xe8ve'
    beside UTF-8's 'Zürich'), else None. It reads at most _SAMPLE bytes (a line of 300 MB had been read
    whole, h116 R3)."""
    size, found = 0, None
    while size < _SAMPLE and (raw := handle.readline(_SAMPLE - size)):
        size += len(raw)
        if size >= _SAMPLE and not raw.endswith((b"\n", b"\r")):  # a line cut at the bound: unread
            break
        if raw.isascii():
            continue
        text = raw.decode("utf-8", "surrogateescape")  # a byte that is not UTF-8 as one of \udc80-\udcff
        if not (escaped := _ESCAPED.findall(text)):
            return "whole"
        found = found or ("mixed" if _latin_both_ways(escaped, _BEYOND.findall(text)) else None)
    return found


def _latin_both_ways(escaped: list[str], utf8: list[str]) -> bool:
    """Whether a line's bytes that are not UTF-8 (`escaped` runs) are lone Windows-1252 letters and its UTF-8
    letters beyond ASCII are Latin ones: Big5's characters are pairs, which UTF-8 reads as other scripts
    too (新竹縣 holds U+02FF)."""
    lone = all(len(run) == 1 and bytes([ord(run) - 0xDC00]).decode(WINDOWS_TEXT, "replace").isalpha()
               for run in escaped)  # fmt: skip
    return lone and bool(utf8) and all("\u00c0" <= char <= "\u024f" for char in utf8)


def _line_at(handle: Any, offset: int) -> int:
    """The line (from 1) that byte `offset` of a stream is on."""
    lines, left = 1, offset
    while left > 0 and (chunk := handle.read(min(left, 1 << 20))):
        lines, left = lines + chunk.count(b"\n"), left - len(chunk)
    return lines

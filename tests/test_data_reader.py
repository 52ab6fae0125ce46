"""CSV reader: validation messages for broken files, user-file options, benchmark quirks."""

from __future__ import annotations

import bz2
import codecs
import gzip
import lzma
import re
import shutil
import subprocess
import sys
import unicodedata
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster.cli import main
from forecaster.data import DataQualityWarning, load_dataset, read_csv, read_frame
from forecaster.errors import DataError

HOURS = [f"2020-01-01 {h:02d}:00" for h in range(12)]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _rows(dates: list[str], a: list[str], b: list[str] | None = None) -> str:
    b = b or [str(i) for i in range(len(dates))]
    return "date,a,b\n" + "".join(f"{d},{x},{y}\n" for d, x, y in zip(dates, a, b, strict=True))


def _ints(n: int) -> list[str]:
    return [str(i) for i in range(n)]


# Each broken file and the parts its one-line message must contain (file lines: header = line 1).
BROKEN = {
    "text_in_numeric": (
        _rows(HOURS, ["1", "2", "oops", "4", "5", "6", "7", "n.a", "9", "10", "11", "12"]),
        ["column 'a' holds text where numbers are expected", "line 4 'oops'", "line 9 'n.a'", "2 cell(s)"],
    ),
    "nans": (
        _rows(HOURS, ["1", "", "3", "4", "", "6", "7", "8", "9", "10", "11", "12"]),
        ["2 missing or non-finite value(s)", "column 'a' at line(s) 3, 6", "fill_missing"],
    ),
    "duplicate_dates": (
        _rows(HOURS[:5] + [HOURS[4]] + HOURS[5:11], _ints(12)),
        ["duplicate timestamp 2020-01-01 04:00:00 in column 'date' at line 6 and line 7", "one row per time"],
    ),
    "clock_turned_back": (  # local hours of 2023-10-29 in Berlin: 02:00 twice; not a long table's series
        _rows([f"2023-10-29 {h:02d}:00" for h in (0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10)], _ints(12)),
        ["duplicate timestamp 2023-10-29 02:00:00 in column 'date' at line 4 and line 5",
         "turned back at the end of daylight saving time: give the times with their UTC offset"],
    ),  # fmt: skip
    "empty_first_date": (  # a TypeError inside the label parser before (a traceback for the user)
        "day,cases\n,1\n" + "".join(f"2023-10-{d:02d},{d}\n" for d in range(9, 20)),
        ["date column 'day' has 1 value(s) that are not timestamps: line 2 (empty)"],
    ),
    "shuffled_dates": (
        _rows([HOURS[i] for i in (0, 1, 2, 7, 3, 4, 5, 6, 8, 9, 10, 11)], _ints(12)),
        ["not sorted: line 6 (2020-01-01 03:00:00) comes after line 5 (2020-01-01 07:00:00)", "sort the"],
    ),
    "missing_steps": (  # 4 hours in a row: more than the default fills
        _rows(HOURS[:3] + [f"2020-01-01 {h:02d}:00" for h in range(7, 16)], _ints(12)),
        ["4 missing time step(s) in column 'date' of a h series, the first 2020-01-01 03:00:00",
         "--fill-missing to fill the missing rows"],
    ),  # fmt: skip
    "irregular_steps": (
        _rows(HOURS[:6] + ["2020-01-01 05:30"] + HOURS[6:11], _ints(12)),
        ["irregular time steps", "line 8 is 2020-01-01 05:30:00, off the h grid of line 2", "constant"],
    ),
    "off_grid_among_gaps": (  # the date off the grid is named, not the missing steps before it
        _rows(HOURS[:2] + HOURS[4:8] + ["2020-01-01 08:20"] + HOURS[9:], _ints(10)),
        ["line 8 is 2020-01-01 08:20:00, off the h grid of line 2 (2020-01-01 00:00:00) (1 irregular step"],
    ),
    "missing_date_column": (
        "a,b\n" + "".join(f"{i},{i * 2}\n" for i in range(12)),
        ["no date column found", "--date-col", "no_date=True (--no-date)"],
    ),
    "empty_file": ("", ["the file is empty", "expected a header line"]),
    "header_only": ("date,a,b\n", ["has a header but no data rows"]),
    "ragged_row": (
        "date,a,b\n2020-01-01 00:00,1,2\n2020-01-01 01:00,1,2,3\n",
        ["not a well-formed CSV file", "Expected 3 fields in line 3, saw 4"],
    ),
    "repeated_column_name": (  # pandas renamed the second 'a' 'a.1'; a bundle re-reading 'a' took the first
        "date,a,b,a\n" + "".join(f"{hour},1,2,3\n" for hour in HOURS),
        ["column name(s) 'a' repeated; expected each column name once"],
    ),
    "bad_timestamp": (
        _rows(HOURS[:3] + ["yesterday"] + HOURS[4:], _ints(12)),
        ["date column 'date' has 1 value(s) that are not timestamps: line 5 'yesterday'"],
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_csv_gives_one_clear_data_error(tmp_path, case):
    text, parts = BROKEN[case]
    path = _write(tmp_path, f"{case}.csv", text)
    with pytest.raises(DataError) as caught:
        read_csv(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for part in parts:
        assert part in message
    assert "\n" not in message
    # raised `from None` or directly: no pandas exception chained into the traceback
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None or caught.value.__suppress_context__


@pytest.mark.parametrize(
    ("name", "expected"),
    [("absent.csv", "not found"), ("folder.csv", "is a folder"), ("/dev/null", "is not a regular file")],
)
def test_a_path_that_is_no_file_is_named_for_what_it_is(tmp_path, name, expected):
    (tmp_path / "folder.csv").mkdir()
    path = tmp_path / name  # an absolute name stays as it is
    with pytest.raises(DataError, match=f"^{path}: {expected}; expected a CSV, TSV or Excel file$"):
        read_csv(path)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_cli_prints_broken_csv_errors_as_one_line_with_exit_2(tmp_path, capsys, case):
    text, parts = BROKEN[case]
    path = _write(tmp_path, f"{case}.csv", text)
    assert main(["data", "describe", str(path), "--input-size", "2", "--horizon", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("forecaster: error: ")
    assert parts[0] in lines[0]


def test_too_few_rows_for_the_split_says_needed_and_present(tmp_path, capsys):
    path = _write(tmp_path, "short.csv", _rows(HOURS[:10], _ints(10)))
    assert len(read_csv(path)) == 10
    argv = ["data", "describe", str(path), "--split", "7:1:2", "--input-size", "96", "--horizon", "96"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    # oracle (REFERENCE.md section 2): each split of 7:1:2 needs L + H rows of windows, at every count from
    # the one named up (944 rows do, 945 not: the splits' rows are floors of fractions)
    fails = [n for n in range(1, 5000)
             if not (int(n * 0.7) >= 192 and int(n * 0.2) >= 96 and n - int(n * 0.7) - int(n * 0.2) >= 96)]
    needed = fails[-1] + 1
    assert err == (
        f"forecaster: error: {path}: 10 rows are too few for split 7:1:2 with input_size 96 and horizon 96: "
        f"needs at least {needed} rows so that train, val and test each hold one window"
    )


@pytest.mark.slow
def test_cli_subprocess_reports_bad_file_without_traceback(tmp_path):
    path = _write(tmp_path, "bad.csv", BROKEN["text_in_numeric"][0])
    exe = Path(sys.executable).with_name("forecaster")
    result = subprocess.run(
        [str(exe), "data", "describe", str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"forecaster: error: {path}: column 'a' holds text where numbers are expected: line 4 'oops', "
        "line 9 'n.a' (2 cell(s) in total); expected a number in every cell"
    ]


def test_user_file_reads_targets_frequency_and_index(tmp_path):
    text = "station,when,a,b\n" + "".join(f"x,{d},{i},{i / 2}\n" for i, d in enumerate(HOURS))
    path = _write(tmp_path, "ok.csv", text)
    with pytest.warns(DataQualityWarning, match=r"skipped non-numeric column\(s\) 'station'"):
        series = read_csv(path, date_col="when")
    assert series.columns == ["a", "b"]
    assert series.freq == "h"
    assert series.date_col == "when"
    assert isinstance(series.index, pd.DatetimeIndex) and series.index[0] == pd.Timestamp("2020-01-01")
    np.testing.assert_array_equal(series.values, np.column_stack([np.arange(12.0), np.arange(12.0) / 2]))
    assert read_csv(path, date_col="when", targets=["b"]).columns == ["b"]


def test_first_column_of_timestamps_is_found_without_a_date_name(tmp_path):
    text = "stamp,y\n" + "".join(f"2021-{m:02d}-01,{m}\n" for m in range(1, 13))
    series = read_csv(_write(tmp_path, "monthly.csv", text))
    assert series.date_col == "stamp"
    assert series.freq == "MS"


def test_no_date_indexes_rows_by_integer_steps(tmp_path):
    path = _write(tmp_path, "plain.csv", "a,b\n" + "".join(f"{i},{-i}\n" for i in range(5)))
    series = read_csv(path, no_date=True)
    assert isinstance(series.index, pd.RangeIndex) and list(series.index) == [0, 1, 2, 3, 4]
    assert series.freq is None and series.date_col is None
    np.testing.assert_array_equal(series.values[:, 1], -np.arange(5.0))


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"targets": ["a", "zzz"]}, "unknown target column(s) 'zzz'; columns are 'date', 'a', 'b'"),
        ({"targets": ["date"]}, "the date column 'date' cannot be a target"),
        ({"date_col": "when"}, "date column 'when' not found; columns are 'date', 'a', 'b'"),
        ({"date_col": "a"}, "date column 'a' holds numbers that are not years or dates; expected timestamps"),
        ({"fill_missing": "mean"}, "'fill_missing' must be one of auto, none, interpolate, ffill, got 'mean"),
        ({"no_date": True, "date_col": "date"}, "contradict each other"),
    ],
)
def test_bad_options_name_the_problem(tmp_path, kwargs, expected):
    path = _write(tmp_path, "ok.csv", _rows(HOURS, _ints(12)))
    with pytest.raises(DataError) as caught:
        read_csv(path, **kwargs)
    assert expected in str(caught.value)


def test_text_column_named_as_target_is_an_error(tmp_path):
    text = "date,a,label\n" + "".join(f"{d},{i},x{i}\n" for i, d in enumerate(HOURS))
    path = _write(tmp_path, "t.csv", text)
    with pytest.raises(DataError, match=r"column 'label' holds text where numbers are expected: line 2 'x0'"):
        read_csv(path, targets=["a", "label"])


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        # forward fill; a leading gap takes the first value
        ("ffill", [1.0, 1.0, 1.0, 1.0, 4.0, 4.0]),
        # linear interpolation inside; the ends take the nearest value
        ("interpolate", [1.0, 1.0, 2.0, 3.0, 4.0, 4.0]),
    ],
)
def test_fill_missing_fills_gaps(tmp_path, method, expected):
    path = _write(tmp_path, "gaps.csv", _rows(HOURS[:6], ["", "1", "", "", "4", ""]))
    with pytest.warns(DataQualityWarning, match=rf"filled 4 missing cell\(s\) by {method}"):
        series = read_csv(path, fill_missing=method)
    assert series.values[:, 0].tolist() == expected
    assert series.values[:, 1].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_fill_missing_cannot_fill_an_empty_column(tmp_path):
    """An empty column asked for is refused; one not asked for is left out (with a note)."""
    path = _write(tmp_path, "void.csv", _rows(HOURS[:4], ["", "", "", ""]))
    with pytest.raises(DataError, match=r"column\(s\) 'a' have no values at all"):
        read_csv(path, fill_missing="ffill", targets=["a", "b"])
    with pytest.warns(DataQualityWarning, match="left out column.s. 'a': no values at all"):
        assert read_csv(path, fill_missing="ffill").columns == ["b"]


INFINITE = (
    "value inf in column 'a' is too large for a float: an inf cell, or a number beyond 1.8e308 in magnitude; "
    "expected a finite number (a missing value left empty)"
)


@pytest.mark.parametrize("cell", ["1e400", "inf", "-inf", "Infinity", "9" * 400, "1" + "0" * 309])
@pytest.mark.parametrize("row", [2, 11])
def test_infinite_cells_and_numbers_beyond_float_are_refused_not_filled(tmp_path, capsys, cell, row):
    """Not empty cells to interpolate (nor, in the last row, a row to drop): one line naming the value, its
    column and line; integers too large for a float get it too, not an OverflowError."""
    a = [str(i) for i in range(12)]
    a[row] = cell
    path = _write(tmp_path, "inf.csv", _rows(HOURS, a))
    value = INFINITE.replace("value inf", "value -inf") if cell.startswith("-") else INFINITE
    expected = f"{path}: line {row + 2} ({pd.Timestamp(HOURS[row])}): {value}"
    with pytest.raises(DataError) as caught:
        read_csv(path)
    assert str(caught.value) == expected
    assert main(["data", "describe", str(path), "--input-size", "2", "--horizon", "1"]) == 2
    assert capsys.readouterr().err == f"forecaster: error: {expected}\n"


def test_a_value_too_large_to_train_on_is_refused_naming_its_time(tmp_path):
    """Named by its time: the rows trained on are no longer the file's lines (a DataFrame's row 0 was
    called 'line 2', h35)."""
    from forecaster.data.missing import check_magnitudes

    series = read_csv(_write(tmp_path, "large.csv", _rows(HOURS, ["1"] * 5 + ["9" * 25] + ["1"] * 6)))
    with pytest.raises(DataError) as caught:
        check_magnitudes(series.source, series.frame)
    assert str(caught.value) == (
        f"{series.source}: at 2020-01-01 05:00:00: value 1e+25 in column 'a' is too large to train "
        "on: its square overflows float32; expected |value| <= 1.84e+19 (rescale the column, e.g. to "
        "thousands of its unit)"
    )
    with pytest.raises(DataError, match=r"^DataFrame: step 5: value 1e\+25 in column 'a'"):
        check_magnitudes("DataFrame", series.frame.reset_index(drop=True))


def test_exchange_and_ili_dates_parse_with_their_frequencies(data_dir):
    exchange = load_dataset("Exchange", data_dir)
    assert exchange.index[1] == pd.Timestamp("1990-01-02") and exchange.freq == "D"
    assert load_dataset("ILI", data_dir).freq == "W-TUE"


def test_weather_is_kept_as_published_with_one_quirk_warning(data_dir):
    with pytest.warns(DataQualityWarning) as caught:
        series = load_dataset("Weather", data_dir)
    message = str(caught[0].message)
    assert "benchmark file Weather kept as published" in message
    assert "duplicate timestamp 2020-05-12 06:00:00 in column 'date' at line 19045 and line 19046" in message
    assert "line 21516 is 2020-05-29 11:10:00 but one 10min step after line 21515" in message
    assert "81 cell(s) of -9999 (a common sensor fill value), used as numbers" in message
    assert "U+FFFD" in message
    assert len(series) == 52696 and series.freq == "10min"
    assert (series.values == -9999).sum() == 81


def test_weather_under_another_name_is_validated_as_a_user_file(data_dir, tmp_path):
    """Its repeated row is an exact copy, dropped, its 100-minute gap is 9 missing steps, filled, and its 81
    cells of -9999 (wind speeds otherwise from 0) a missing-value code, filled too."""
    copy = tmp_path / "my_weather.csv.gz"
    shutil.copy(data_dir / "weather.csv.gz", copy)
    with pytest.warns(DataQualityWarning) as caught:
        series = read_csv(copy)
    message = str(caught[0].message)
    assert message.startswith(
        f"{copy}: note: dropped 1 exact duplicate row(s) (date and values as on an earlier line): "
        "line(s) 19046;"
    )
    assert "read 81 cell(s) of -9999 as missing (a code far below its column's other values)" in message
    assert "filled 9 missing time step(s) and 81 empty cell(s) by linear interpolation" in message
    assert series.dataset is None and len(series) == 52696 - 1 + 9 and series.freq == "10min"
    assert series.values.min() > -9999


@pytest.mark.parametrize(("values", "read_as"), [
    ([380.1, -999.99, 381.0, 381.5, -999.99, 382.0], [380.1, None, 381.0, 381.5, None, 382.0]),
    ([-3.2, 1.5, -99.9, 2.0, -1.0, 0.5], [-3.2, 1.5, None, 2.0, -1.0, 0.5]),
    ([-1500.0, -999.0, -800.0, -1200.0, -999.0, -700.0], [-1500.0, -999.0, -800.0, -1200.0, -999.0, -700.0]),
])  # fmt: skip
def test_a_missing_value_code_far_below_its_column_is_read_as_missing(tmp_path, values, read_as):
    """NOAA's weekly CO2 writes -999.99 for a missing week; read as a number, every standardized error was
    0.0000. A code far below its column's other values (all above a tenth of it) is missing, said in a note;
    one among values of its size (net flows around -1,000) is a number."""
    days = pd.date_range("2020-01-05", periods=6, freq="W-SUN").strftime("%Y-%m-%d")
    rows = "".join(f"{day},{value}\n" for day, value in zip(days, values, strict=True))
    path = _write(tmp_path, "co2.csv", "date,ppm\n" + rows)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        series = read_csv(path, fill_missing="none" if None not in read_as else "interpolate")
    expected = pd.Series(read_as, dtype=float).interpolate().to_numpy()
    np.testing.assert_allclose(series.values[:, 0], expected)
    notes = " ".join(str(warning.message) for warning in said)
    assert ("as missing (a code far below its column's other values)" in notes) == (None in read_as)


def test_independent_series_keep_their_own_spans_and_gaps_inside_them_are_named():
    from forecaster.data import read_frame

    rows = [("a", f"2020-0{month}-01", float(month)) for month in range(1, 10)]
    rows += [("b", f"2020-0{month}-01", 10.0 * month) for month in (3, 4, 6, 7)]  # starts late, May missing
    frame = pd.DataFrame(rows, columns=["unique_id", "ds", "y"])
    with pytest.raises(DataError, match="1 missing or non-finite value"):
        read_frame(frame, id_col="unique_id", channels="independent", fill_missing="none")
    series = read_frame(frame, id_col="unique_id", channels="independent", fill_missing="interpolate")
    assert series.freq == "MS" and series.columns == ["a", "b"]
    b = series.frame["b"].to_numpy()
    # Before its first and after its last value, b stays empty; the May gap is interpolated.
    np.testing.assert_array_equal(b[[0, 1, 7, 8]], [np.nan] * 4)
    np.testing.assert_array_equal(b[2:7], [30.0, 40.0, 50.0, 60.0, 70.0])


def test_utf16_utf32_and_windows_1252_files_read_like_utf8(tmp_path):
    text = "date,Température,b\n" + "".join(f"{d},{i},{i / 2}\n" for i, d in enumerate(HOURS))
    expected = read_csv(_write(tmp_path, "utf8.csv", text)).frame
    assert list(expected.columns) == ["Température", "b"]
    for encoding, mark in [("utf-16", b""), ("utf-16-be", codecs.BOM_UTF16_BE), ("utf-32", b"")]:
        path = tmp_path / f"{encoding}.csv"
        path.write_bytes(mark + text.encode(encoding))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no note: nothing was replaced or guessed
            pd.testing.assert_frame_equal(read_csv(path).frame, expected)
    # no mark and not UTF-8 (Excel's CSV on a Western European Windows): Windows-1252, said
    latin = tmp_path / "latin.csv"
    latin.write_bytes(text.encode("cp1252"))
    with pytest.warns(DataQualityWarning, match="note: read as Windows-1252 text: its bytes are not UTF-8"):
        pd.testing.assert_frame_equal(read_csv(latin).frame, expected)
    # TurkStat's Windows-1254: read as Windows-1252, 'Yıl' and 'Ay' were 'Yýl' and no year, 'Şubat' no month
    months = ["Ocak", "Şubat", "Mart", "Nisan", "Mayıs", "Haziran", "Temmuz", "Ağustos", "Eylül", "Ekim"]
    rows = "".join(f"2023;{month};{k},5\n" for k, month in enumerate(months))
    turkish = "Yıl;Ay;Aylık değişim (%)\n" + rows
    (tmp_path / "tufe.csv").write_bytes(turkish.encode("cp1254"))
    with pytest.warns(DataQualityWarning, match="note: read as Turkish Windows-1254 text"):
        series = read_csv(tmp_path / "tufe.csv")
    assert series.columns == ["Aylık değişim (%)"] and series.index[1] == pd.Timestamp("2023-02-01")
    # GUS's and the NBP's Windows-1250: read as Windows-1252, "Wskaźnik cen usług" was "WskaŸnik cen us³ug";
    # a Spanish file of Windows-1252 stays one ("España" would be "Espańa")
    names = {"cp1250": ("Wskaźnik cen usług;Stopa bezrobocia (%)", "Central European Windows-1250"),
             "cp1252": ("España;Año anterior (%);Volumen (m³)", "Windows-1252")}  # fmt: skip
    names["cp1250 "] = ("PKB ceny bieżące (mln zł);Kwartał", "Central European Windows-1250")  # two in a row
    for encoding, (header, named) in names.items():
        rows = "".join(f"{day};{k},5;{k},25\n" for k, day in enumerate(HOURS))
        rows = rows if header.count(";") == 1 else rows.replace("\n", ";1\n")
        (tmp_path / f"{encoding}.csv").write_bytes(f"date;{header}\n{rows}".encode(encoding.strip()))
        with pytest.warns(DataQualityWarning, match=f"note: read as {named} text"):
            assert read_csv(tmp_path / f"{encoding}.csv").columns == header.split(";")
    # compressed, by what they unpack to (a gzip of UTF-16 was refused as having no numeric columns, a gzip of
    # Windows-1252 read 'Temp\ufffdrature')
    for encoding in ("utf-16", "utf-32", "cp1252"):
        packed = tmp_path / f"{encoding}.csv.gz"
        packed.write_bytes(gzip.compress(text.encode(encoding)))
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            pd.testing.assert_frame_equal(read_csv(packed).frame, expected)
        notes = [str(warning.message) for warning in said]
        assert notes == ([f"{packed}: note: read as Windows-1252 text: its bytes are not UTF-8"]
                         if encoding == "cp1252" else [])  # fmt: skip


def test_a_shift_jis_download_reads_like_its_utf8_twin_and_latin_text_stays_windows_1252(tmp_path):
    """e-Stat's default CSV download is Shift-JIS (cp932): it was refused as two encodings in one file (some
    of its byte pairs look like UTF-8 letters). Read as its UTF-8 twin, said; Windows-1252 text, whose
    letters also decode as cp932 (as kanji, never as kana or Japanese punctuation), is not taken for it."""
    text = ('"統計名：","消費者物価指数"\n"注記：","***は数値が得られないもの"\n\n'
            '"時間軸（月次）","0001 総合","0161 生鮮食品"\n'
            + "".join(f'"{2015 + k // 12}年{k % 12 + 1}月","{95 + k / 10:.1f}","{90 + k / 5:.1f}"\n'
                      for k in range(36)))  # fmt: skip
    expected = read_csv(_write(tmp_path, "utf8.csv", text)).frame
    assert list(expected.columns) == ["0001 総合", "0161 生鮮食品"] and len(expected) == 36
    shift_jis = text.encode("cp932")
    for name, content in (("sjis.csv", shift_jis), ("sjis.csv.gz", gzip.compress(shift_jis))):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.warns(DataQualityWarning, match=r"read as Shift-JIS \(cp932\) text: its bytes are not"):
            pd.testing.assert_frame_equal(read_csv(path).frame, expected)
    latin = "Datum,Veränderung,Größe\n" + "".join(f"{d},{i},{i / 2}\n" for i, d in enumerate(HOURS))
    latin.encode("cp1252").decode("cp932")  # the premise: it decodes as cp932 too
    path = tmp_path / "latin.csv"
    path.write_bytes(latin.encode("cp1252"))
    with pytest.warns(DataQualityWarning, match="read as Windows-1252 text"):
        assert list(read_csv(path).frame.columns) == ["Veränderung", "Größe"]


@pytest.mark.parametrize(
    ("encoding", "named", "header"),
    [("gbk", "GBK (GB18030)", "月份,居民消费价格指数,食品烟酒价格指数"),  # China's NBS
     ("cp949", "EUC-KR (cp949)", "시점,소비자물가지수,식료품 및 비주류음료")],  # Korea's KOSIS
)
def test_chinese_and_korean_downloads_read_like_their_utf8_twins(tmp_path, encoding, named, header):
    """Both were refused as two encodings in one file (some byte pairs look like UTF-8 letters)."""
    text = header + "\n" + "".join(f"{2020 + k // 12}-{k % 12 + 1:02d},{100 + k / 10:.1f},{99 - k / 10:.1f}\n"
                                    for k in range(36))  # fmt: skip
    expected = read_csv(_write(tmp_path, "utf8.csv", text)).frame
    path = tmp_path / f"{encoding}.csv"
    path.write_bytes(text.encode(encoding))
    with pytest.warns(DataQualityWarning, match=rf"read as {re.escape(named)} text: its bytes are not UTF-8"):
        pd.testing.assert_frame_equal(read_csv(path).frame, expected)


@pytest.mark.parametrize(
    ("encoding", "named", "header", "date"),
    [("cp932", "Shift-JIS (cp932)", "年,北海道,東京都", "{year}"),  # kanji only: had been read as GBK
     ("gbk", "GBK (GB18030)", "月份,居民消费价格指数,食品烟酒价格指数", "{y}年{m}月"),  # the NBS' months
     ("cp949", "EUC-KR (cp949)", "시점,소비자물가지수,식료품", "{y}년 {m}월")],  # KOSIS'
)
def test_kanji_only_text_and_dates_in_words_read_like_their_utf8_twins(tmp_path, encoding, named, header,
                                                                        date):
    """A Shift-JIS table of kanji only (prefectures) was read as GBK, its series named 杒奀摴 for 北海道; GBK
    and EUC-KR files whose dates are written in words (2020年1月, 2020년 1월) were refused as two encodings
    in one file (h111 F1, F2). Big5, which is not read, is not taken for GBK, nor said to mix encodings."""
    text = header + "\n" + "".join(
        f"{date.format(y=2020 + k // 12, m=k % 12 + 1, year=1990 + k)},{100 + k / 10:.1f},{99 - k / 10:.1f}\n"
        for k in range(36))  # fmt: skip
    expected = read_csv(_write(tmp_path, "utf8.csv", text)).frame
    assert list(expected.columns) == header.split(",")[1:] and len(expected) == 36
    path = tmp_path / f"{encoding}.csv"
    path.write_bytes(text.encode(encoding))
    with pytest.warns(DataQualityWarning, match=rf"read as {re.escape(named)} text: its bytes are not UTF-8"):
        pd.testing.assert_frame_equal(read_csv(path).frame, expected)
    big5 = "年月,消費者物價指數,食物類\n" + "".join(f"{2020 + k // 12}-{k % 12 + 1:02d},{k},{k}\n"
                                                 for k in range(36))  # fmt: skip
    path.write_bytes(big5.encode("big5"))
    with pytest.raises(DataError, match="line 1 is not UTF-8, nor is any line of letters beyond ASCII"):
        read_csv(path)  # not "though other lines are" (h111 F3)


@pytest.mark.parametrize("names", [["Temp (°F)", "Málaga"], ["°C", "Zürich"], ["Temp (°F)"],
                                   ["Fußgänger", "Radfahrer"]])  # fmt: skip
def test_windows_1252_units_and_names_are_not_read_as_gbk_or_euc_kr(tmp_path, names):
    """Windows-1252's "°F" is one GBK ideograph or EUC-KR syllable touching no letter (癋, 캟), so a file of
    such units beside accented names read as GBK, its series named 'Temp (癋)' and 'M醠aga' (h116 R1);
    'Fußgänger' is a run of two between Latin letters (Fu遟鋘ger), read as a word of Chinese (h125)."""
    text = "date," + ",".join(names) + "\n" + "".join(
        f"2020-{month:02d}-01," + ",".join(f"{month}.5" for _ in names) + "\n" for month in range(1, 13))
    path = tmp_path / "latin.csv"
    path.write_bytes(text.encode("cp1252"))
    with pytest.warns(DataQualityWarning, match="read as Windows-1252 text"):
        assert read_csv(path).columns == names


@pytest.mark.parametrize(
    ("header", "ids"),
    [("年月,臺東縣,新竹縣,高雄市,雲林縣", []),  # 年月 read as GBK is る; 雲林縣 is 冻狶郡
     ("縣市,年月,數值", ["臺東縣", "新竹縣"])],  # a long table: its ids repeat on every line
    ids=["wide", "long"],
)  # fmt: skip
def test_big5_headers_whose_gbk_reading_holds_kana_are_not_read_as_gbk(tmp_path, header, ids):
    """Big5 tables of Taiwan's counties were read as GBK, their series named '籓狥郡' for 臺東縣 (h116 R5):
    Big5's 年月 is GBK's hiragana る, and Chinese text holds next to no kana."""
    rows = [f"{2020 + k // 12}-{k % 12 + 1:02d}" for k in range(24)]
    lines = [f"{name},{row},1.5" for name in ids for row in rows] or [
        row + ",1.5" * header.count(",") for row in rows]  # fmt: skip
    path = tmp_path / "big5.csv"
    path.write_bytes("\n".join([header, *lines, ""]).encode("big5"))
    with pytest.raises(DataError, match="line 1 is not UTF-8, nor is any line of letters beyond ASCII"):
        read_csv(path, id_col="縣市" if ids else None)


@pytest.mark.parametrize("header", ["日期,值", "年,人口", "date,失業率", "年月,臺北市,新北市"])
def test_big5_headers_of_no_utf8_looking_byte_pair_are_refused_not_read_as_windows_1252(tmp_path, header):
    """153 of 500 Big5 headers hold no byte pair UTF-8 reads as a letter, and were read as Windows-1252, the
    series of 'date,失業率' named '¥¢·~²v', silently (h118); they read as Big5's words of ideographs."""
    rows = [f"2020-{month:02d}" + ",1.5" * header.count(",") for month in range(1, 13)]
    path = tmp_path / "big5.csv"
    path.write_bytes("\n".join([header, *rows, ""]).encode("big5"))
    with pytest.raises(DataError, match="big5.csv: line 1 is not UTF-8 but reads as Chinese in Big5, an "
                                        "encoding not read here; expected UTF-8"):  # fmt: skip
        read_csv(path)


@pytest.mark.parametrize("names", [["トヨタ汽车销量", "本田汽车销量"], ["索尼(ソニー)销售额"]])
def test_gbk_chinese_naming_a_japanese_firm_in_katakana_reads_as_chinese(tmp_path, names):
    """A word of katakana is a Japanese name quoted in Chinese, not Big5 read as GBK, whose kana stand alone
    or in pairs: the NBS-style table naming Toyota had been refused as "an encoding not read here" (h121)."""
    rows = [f"2020-{month:02d}" + ",1.5" * len(names) for month in range(1, 13)]
    path = tmp_path / "gbk.csv"
    path.write_bytes("\n".join([",".join(["日期", *names]), *rows, ""]).encode("gb18030"))
    with pytest.warns(DataQualityWarning, match="GBK"):
        assert list(read_csv(path).columns) == names


def test_a_file_mixing_encodings_on_its_lines_of_letters_is_named_so_not_big5(tmp_path):
    """UTF-8's 'Zürich' beside Windows-1252's 'Genève' on the one line of letters had been called "an
    encoding not read here, as Big5" (h116 R6)."""
    header = b"date," + "Zürich".encode() + b"," + "Genève".encode("cp1252") + b"\n"
    path = tmp_path / "mixed.csv"
    path.write_bytes(header + "".join(f"2020-{m:02d}-01,{m}.5,{m}.25\n" for m in range(1, 13)).encode())
    with pytest.raises(DataError, match="mixed.csv: line 1 is not UTF-8, and no line of letters beyond ASCII "
                                        "is UTF-8 alone: they mix UTF-8 with another encoding; expected one "
                                        "encoding: save it as UTF-8"):  # fmt: skip
        read_csv(path)


@pytest.mark.parametrize("header", ["日期,丳亃亄".encode("big5"),  # rare names, UTF-8 letters' bytes: GBK
                                    "date,Zürich,".encode() + "Genève".encode("cp1252")],  # refused
                         ids=["read as gbk", "refused for its encoding"])
def test_a_long_line_is_refused_whatever_encoding_the_file_is_read_in(tmp_path, monkeypatch, header):
    """A Big5 file read as GBK took its line of 400 MB to pandas, 3.3 GB and a minute to refuse it: the scan
    had stopped at a byte that is not UTF-8 beside a UTF-8 letter, before measuring lines (h116 R4).
    MAX_LINE_BYTES (8 MiB; 64 KiB here) holds whatever the encoding found."""
    from forecaster.data import textfile

    monkeypatch.setattr(textfile, "MAX_LINE_BYTES", 2**16)
    columns = header.count(b",")
    path = tmp_path / "long.csv"
    path.write_bytes(header + b"\n2020-01-01" + b",1" * columns + b"\n2020-01-02," + b"1" * 2**17 + b"\n")
    with pytest.raises(DataError, match="long.csv: line 3 is longer than 0.0625 MiB; expected a table's"):
        read_csv(path)


def test_the_look_for_a_utf8_line_reads_no_further_than_its_sample(monkeypatch):
    """A file refused for its encoding is looked through for a UTF-8 line, at most _SAMPLE bytes: a Big5
    file's line of 300 MB (which `_scan` stops before measuring) had been read whole, 714 MB (h116 R3)."""
    import io

    from forecaster.data import textfile

    monkeypatch.setattr(textfile, "_SAMPLE", 1 << 10)
    handle = io.BytesIO("年月,消費者物價指數\n".encode("big5") + b"2020-01," + b"1" * (1 << 16) + b"\n")
    assert textfile._utf8_lines(handle) is None
    assert handle.tell() <= 1 << 10


def test_names_and_series_ids_written_decomposed_are_the_composed_ones(tmp_path):
    """macOS writes 'Zürich' as u and a combining diaeresis: a model trained on the composed name (Windows,
    pandas) refused it, naming both alike (h66). Column names, series ids and names given are composed."""
    names = ["Zürich", "Genève", "Besançon"]
    decomposed = [unicodedata.normalize("NFD", name) for name in names]
    assert decomposed != names  # the premise: two spellings of each name
    wide = pd.DataFrame(np.arange(72.0).reshape(24, 3) % 7, columns=decomposed)
    wide.insert(0, "date", pd.date_range("2020-01-01", periods=24, freq="MS").strftime("%Y-%m-%d"))
    wide.to_csv(tmp_path / "wide.csv", index=False)
    assert read_csv(tmp_path / "wide.csv").columns == names
    assert read_csv(tmp_path / "wide.csv", targets=names[1]).columns == names[1:2]
    assert read_frame(wide, targets=decomposed[1:]).columns == names[1:]
    long = wide.melt(id_vars="date", var_name="city", value_name="y")
    long.to_csv(tmp_path / "long.csv", index=False)
    assert sorted(read_csv(tmp_path / "long.csv", id_col="city").columns) == sorted(names)
    assert sorted(read_frame(long.assign(city=long["city"].astype("string"))).columns) == sorted(names)


def test_a_file_of_two_encodings_is_refused_naming_the_first_line_that_is_not_utf8(tmp_path):
    """A long table in UTF-8 but for some Latin-1 rows was read whole as Windows-1252: 'Türkiye' became
    two series, 'TÃ¼rkiye' and 'Türkiye'. Refused, naming the first Latin-1 line, wherever it lies."""
    quarters = [f"{year}Q{q}" for year in range(2000, 2010) for q in range(1, 5)]
    lines = [f"{country},{quarter},{i}.5\n" for country in ("Türkiye", "Côte d'Ivoire")
             for i, quarter in enumerate(quarters)]  # fmt: skip
    for latin_rows, line in (([13, 23], 15), ([0], 2)):
        content = b"country,quarter,value\n" + b"".join(
            text.encode("latin-1" if row in latin_rows else "utf-8") for row, text in enumerate(lines)
        )
        path = tmp_path / "panel.csv"
        path.write_bytes(content)
        with pytest.raises(DataError, match=f"panel.csv: line {line} is not UTF-8 though other lines are"):
            read_csv(path, id_col="country")
        path.with_suffix(".csv.xz").write_bytes(lzma.compress(content))
        with pytest.raises(DataError, match=f"panel.csv.xz: line {line} is not UTF-8 though other lines"):
            read_csv(path.with_suffix(".csv.xz"), id_col="country")


def test_a_utf8_byte_order_mark_before_windows_text_is_refused_not_read_as_gbk(tmp_path):
    """Excel's "CSV UTF-8" mark, then a Latin-1 editor's body: GBK read it, 'Bevölkerung' became
    'Bev鰈kerung' and the date column '锘縕eit' (h47). The mark says UTF-8: the first line that is not is
    named; without the mark the same bytes read as Windows-1252."""
    quarters = [f"{2000 + i // 4} Q{i % 4 + 1}" for i in range(24)]
    values = [f"{q};{8000 + i},5;{400 + i},25" for i, q in enumerate(quarters)]
    rows = ["Zeit;Bevölkerung;Erwerbstätige", *values]
    body = "\r\n".join(rows).encode("cp1252") + b"\r\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(codecs.BOM_UTF8 + body)
    with pytest.raises(DataError, match="bom.csv: line 1 is not UTF-8 though the file begins with UTF-8's "
                                        "byte-order mark; expected one encoding: save it as UTF-8"):
        read_csv(path)
    path.write_bytes(body)
    assert list(read_csv(path).columns) == ["Bevölkerung", "Erwerbstätige"]


def test_compressed_files_read_by_their_content_whatever_their_name(tmp_path):
    text = _rows(HOURS, _ints(12))
    expected = read_csv(_write(tmp_path, "plain.csv", text)).frame
    packed = {"gzip.csv": gzip.compress(text.encode()), "bz2.csv": bz2.compress(text.encode()),
              "plain.csv.gz": text.encode()}  # fmt: skip
    with zipfile.ZipFile(tmp_path / "named.csv.zip", "w") as archive:
        archive.writestr("data.csv", text)  # pandas opens a .zip of one file by its name, as before
    for name, content in packed.items():
        (tmp_path / name).write_bytes(content)
    for name in [*packed, "named.csv.zip"]:
        pd.testing.assert_frame_equal(read_csv(tmp_path / name).frame, expected)


def test_a_compressed_file_unpacking_past_the_bound_is_refused_before_pandas_reads_it(tmp_path, monkeypatch):
    """2 MB of gzip held a 2 GB line and took 14 GB of memory: what a compressed file unpacks to is counted
    first, against MAX_UNPACKED_BYTES (1 GiB; 1 MiB here), in every compression; a truncated one is named."""
    from forecaster.data import textfile

    monkeypatch.setattr(textfile, "MAX_UNPACKED_BYTES", 2**20)
    line = "date,value\n" + "2020-01-01," + "9" * 2**21 + "\n"
    packed = {"line.csv.gz": gzip.compress(line.encode()), "line.csv.bz2": bz2.compress(line.encode())}
    with zipfile.ZipFile(tmp_path / "line.csv.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("line.csv", line)
    for name, content in packed.items():
        (tmp_path / name).write_bytes(content)
    for name in [*packed, "line.csv.zip"]:
        with pytest.raises(DataError, match=f"{name}: unpacks to more than 1 MiB; expected a compressed CSV"):
            read_csv(tmp_path / name)
    text = _rows(HOURS, _ints(12))  # under the bound: read as before
    (tmp_path / "small.csv.gz").write_bytes(gzip.compress(text.encode()))
    expected = read_csv(_write(tmp_path, "s.csv", text)).frame
    pd.testing.assert_frame_equal(read_csv(tmp_path / "small.csv.gz").frame, expected)
    (tmp_path / "cut.csv.gz").write_bytes(gzip.compress(text.encode())[:-20])
    with pytest.raises(DataError, match="cut.csv.gz: a gzip file that does not unpack"):
        read_csv(tmp_path / "cut.csv.gz")


def test_a_line_longer_than_any_table_line_is_refused_as_soon_as_it_is_seen(tmp_path, monkeypatch):
    """One line of 100 MB (in 100 KB of gzip) took 26 s and 830 MB to refuse (h47): a line past
    MAX_LINE_BYTES (8 MiB; 64 KiB here) is named while the bytes are scanned, wherever it lies (across the
    scan's megabyte chunks here), in a plain or a compressed file; old Macs' lines end with "\\r" alone."""
    from forecaster.data import textfile

    monkeypatch.setattr(textfile, "MAX_LINE_BYTES", 2**16)
    rows = "".join(f"{stamp:%Y-%m-%d %H:%M},{k % 97}.25\n" for k, stamp in
                   enumerate(pd.date_range("2000-01-01", periods=45_000, freq="h")))  # fmt: skip
    content = ("date,value\n" + rows + "2004-07-26 16:00," + "9" * 2**17 + "\n").encode()
    assert len(content) - 2**17 < 2**20 < len(content)  # the long line crosses the first chunk's end
    (tmp_path / "long.csv.gz").write_bytes(gzip.compress(content))
    for name in ("long.csv", "long.csv.gz"):
        if name == "long.csv":
            _write(tmp_path, name, content.decode())
        with pytest.raises(DataError, match=f"{name}: line 45002 is longer than 0.0625 MiB; expected a "
                                            "table's lines, a row of values each"):  # fmt: skip
            read_csv(tmp_path / name)
    mac = _write(tmp_path, "mac.csv", ("date,value\n" + rows[: 2**17]).rsplit("\n", 1)[0].replace("\n", "\r"))
    assert mac.stat().st_size > 2**16 and len(read_csv(mac).frame) == rows[: 2**17].count("\n")


@pytest.mark.parametrize(
    ("content", "what"),
    [(b"PK\x03\x04" + b"\x14\x00" * 20, "a zip archive (an .xlsx workbook is one: name it .xlsx)"),
     (b"PK\x05\x06" + b"\x00" * 18, "a zip archive (an .xlsx workbook is one: name it .xlsx)"),  # empty: h101
     (b"date,a\n" + b"\x00" * 64, "binary data (NUL bytes)"),
     (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data (NUL bytes)")],
)  # fmt: skip
def test_an_archive_or_binary_file_named_csv_is_refused_as_not_text(tmp_path, content, what):
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    with pytest.raises(DataError) as caught:
        read_csv(path)
    assert str(caught.value) == (
        f"{path}: {what}, not a CSV text file; expected text (UTF-8, or UTF-16 with a byte-order mark), or "
        "such a file compressed by gzip, bz2 or xz"
    )


def test_exact_duplicate_rows_are_dropped_with_a_note(tmp_path):
    """A row repeated in every cell (an export artifact) is dropped; later lines are then counted without it.
    A repeated date with other values is still refused (BROKEN["duplicate_dates"])."""
    a, b = _ints(12), [str(i / 2) for i in range(12)]
    expected = read_csv(_write(tmp_path, "once.csv", _rows(HOURS, a, b))).frame
    twice = _rows(HOURS[:6] + HOURS[5:], a[:6] + a[5:], b[:6] + b[5:])
    path = _write(tmp_path, "twice.csv", twice)
    with pytest.warns(DataQualityWarning) as caught:
        series = read_csv(path)
    assert [str(warning.message) for warning in caught] == [
        f"{path}: note: dropped 1 exact duplicate row(s) (date and values as on an earlier line): line(s) 8"
    ]
    pd.testing.assert_frame_equal(series.frame, expected)
    broken = _write(tmp_path, "broken.csv", twice.replace(f"{HOURS[9]},9,", f"{HOURS[9]},oops,"))
    with pytest.raises(DataError, match=r"line 11 'oops' .*\(line numbers count the rows kept, from the "):
        read_csv(broken)
    with pytest.raises(DataError, match=r"missing time step\(s\)") as caught:  # a gap: no line is named
        read_csv(_write(tmp_path, "gap.csv", twice.replace(f"{HOURS[9]},9,4.5\n", "")), fill_missing="none")
    assert "line numbers count" not in str(caught.value)


def test_a_series_name_with_control_characters_is_refused_a_line_break_in_a_header_is_not(tmp_path):
    """describe and predict print series names as they are: an escape sequence in a header (or a long
    table's series column) retitled the terminal and cleared the screen. Excel's line break in a header
    cell stays a name."""
    rows = "".join(f"{day},{k}.5\n" for k, day in enumerate(HOURS))
    (tmp_path / "escape.csv").write_text("date,sales\x1b]0;pwned\x07\x1b[2J\n" + rows)
    with pytest.raises(DataError, match=r"escape.csv: series name 'sales\\x1b\]0;pwned\\x07\\x1b\[2J' holds "
                                         "control characters; expected printable text"):
        read_csv(tmp_path / "escape.csv")
    long = "".join(f"{name},{day},{k}\n" for name in ("DE", "F\x9bR") for k, day in enumerate(HOURS))
    (tmp_path / "long.csv").write_text("country,date,value\n" + long)
    with pytest.raises(DataError, match=r"series name 'F\\x9bR' holds control characters"):
        read_csv(tmp_path / "long.csv", id_col="country")
    (tmp_path / "excel.csv").write_text('date,"Sales\n(EUR)"\n' + rows)
    assert read_csv(tmp_path / "excel.csv").columns == ["Sales\n(EUR)"]


def test_a_table_of_more_columns_than_the_bound_is_refused_from_its_first_lines(tmp_path, monkeypatch):
    """1,000,000 columns (a 10 MB file) took 131 s and 4.4 GB before failing: the width the first lines show
    is checked against MAX_COLUMNS (50,000; 100 here) before pandas reads the table."""
    from forecaster.data import layouts

    monkeypatch.setattr(layouts, "MAX_COLUMNS", 100)
    names = ["date", *(f"c{k}" for k in range(100))]
    rows = [",".join(names)] + [",".join([f"2020-01-0{d}", *["1"] * 100]) for d in range(1, 4)]
    path = _write(tmp_path, "wide.csv", "\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"wide.csv: 101 columns; expected at most 100 \(a table of more"):
        read_csv(path)
    monkeypatch.setattr(layouts, "MAX_COLUMNS", 101)
    assert len(read_csv(path).columns) == 100
    # one line of more cells below a narrow header (8 million held the service 22 s, sniffing each cell)
    rows = ["day,cases", "2020-01-01,1", ",".join(["2020-01-02", *["1"] * 200]),
            *(f"2020-01-{d:02d},1" for d in range(3, 20))]  # fmt: skip
    with pytest.raises(DataError, match=r"deep.csv: line 3 has 201 cells; expected at most 101 columns"):
        read_csv(_write(tmp_path, "deep.csv", "\n".join(rows) + "\n"))


def test_a_header_line_naming_a_column_twice_is_named_not_left_to_pandas(tmp_path):
    """AEMO's MMS reports: a C line of report facts above the I line of column names; taken as the header,
    its repeated names were refused in pandas' words ("Duplicate names are not allowed.")."""
    facts = ("C,NEMP.WORLD,DISPATCHIS,AEMO,PUBLIC,2024/01/01,00:00:15,0000000412345678,DISPATCHIS,"
             "0000000412345678")  # fmt: skip
    names = "I,DISPATCH,PRICE,5,SETTLEMENTDATE,RUNNO,REGIONID,DISPATCHINTERVAL,INTERVENTION,RRP,EEP,ROP,FLAG"
    rows = [facts, names] + [f'D,DISPATCH,PRICE,5,"2024/01/01 00:{5 * k:02d}:00",1,NSW1,2024010100{k},0,'
                             f"{80 + k}.5,0,69.9,0" for k in range(1, 10)]  # fmt: skip
    path = tmp_path / "PUBLIC_DISPATCHIS.CSV"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError) as refused:
        read_csv(path)
    said = "names '0000000412345678', 'DISPATCHIS' more than once; expected a header line naming each column"
    assert str(refused.value) == f"{path}: the line taken as the header (file line 1) {said} once"


_LONG_CELLS = """
import sys
from forecaster.data import read_csv
from forecaster.errors import DataError
for path in sys.argv[1:]:
    try:
        read_csv(path)
        print("read", path)
    except DataError as error:
        print("refused", str(error)[:200].replace(" " * 100, " ").replace("\\t" * 100, " "))
"""


def test_cells_longer_than_any_number_or_date_are_text_read_in_linear_time(tmp_path):
    """A cell of '1', 100,000 spaces (tabs, no-break spaces) and 'x' was read as 1 flagged x, after minutes:
    the readers' patterns take quadratic time on a long run of spaces (a 16,000-character cell held a
    core 18 s, one of a date column 76 s). Longer than any number or date, such a cell is text: the column
    of numbers holding it is refused, and so is the date column, each naming the cell, within a bound."""
    dates = pd.date_range("2020-01-01", periods=60, freq="D").astype(str)
    paths = []
    for name, run in (("spaces", " "), ("tabs", "\t"), ("nbsp", "\u00a0")):
        for column in ("load", "date"):
            frame = pd.DataFrame({"date": dates, "load": np.arange(60.0)}).astype(object)
            frame.loc[30, column] = ("1" if column == "load" else "2020") + run * 100_000 + "x"
            paths.append(tmp_path / f"{name}-{column}.csv")
            frame.to_csv(paths[-1], index=False)
    result = subprocess.run([sys.executable, "-c", _LONG_CELLS, *map(str, paths)], capture_output=True,
                            text=True, timeout=60)  # fmt: skip
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and len(lines) == 6, result.stderr[-2000:]
    for line in lines[0::2]:
        assert line.startswith("refused") and "column 'load' holds text" in line and "line 32" in line, line
    for line in lines[1::2]:
        assert line.startswith("refused") and "date column 'date' has 1 value(s) that are not" in line, line


@pytest.mark.parametrize("twin", ["a ", "a\t", "\u00a0a"])
def test_column_names_equal_but_for_spaces_are_refused_naming_both(tmp_path, twin):
    """'a' and 'a ' in a header were one name once stripped, and reading a column by it gave two: an internal
    error on the command line and a 500 from the service (h45 #2)."""
    days = pd.date_range("2024-01-01", periods=30).strftime("%Y-%m-%d")
    frame = pd.DataFrame({"date": days, "a": np.arange(30.0), "b": np.ones(30), twin: np.arange(30.0) * 2})
    path = tmp_path / "twins.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=re.escape(f"{path}: column names 'a', {twin!r} are one name but for "
                                                  "spaces around it; expected each column name once")):
        read_csv(path)


def _eurostat(rows: list[tuple[str, str, str]], freq: bool = True) -> str:
    """An SDMX-CSV download (`freq,geo,TIME_PERIOD,OBS_VALUE`) of (freq, geo, period) rows, or without its
    freq column."""
    head = "freq,geo,TIME_PERIOD,OBS_VALUE" if freq else "geo,TIME_PERIOD,OBS_VALUE"
    values = [f"{(k * 7) % 50 + 0.5}" for k in range(len(rows))]  # no row counter
    lines = [f"{code},{geo},{period},{value}" if freq else f"{geo},{period},{value}"
             for value, (code, geo, period) in zip(values, rows, strict=True)]  # fmt: skip
    return "\n".join([head, *lines]) + "\n"


YEARS = [str(year) for year in range(2005, 2024)]
QUARTERS = [f"{year}-Q{quarter}" for year in YEARS for quarter in range(1, 5)]


def test_a_long_file_of_yearly_and_quarterly_rows_is_refused_as_mixing_them_at_its_own_lines(tmp_path):
    """Eurostat's freq A and Q rows of the same geos: the repeated 2005 was named 'at line 2 and line 3' (the
    sorted table's places; line 3 is 2006) with advice to name an id column, which geo already is (h75
    F10). The clash is named at the file's lines 2 and 40, as the two kinds of period it is."""
    rows = [("A", geo, year) for geo in ("FR", "DE") for year in YEARS]
    rows += [("Q", geo, quarter) for geo in ("FR", "DE") for quarter in QUARTERS]
    with pytest.raises(DataError) as caught:
        read_csv(_write(tmp_path, "estat.csv", _eurostat(rows)))
    message = str(caught.value)
    assert ("the file mixes yearly and quarterly periods in column 'TIME_PERIOD' (line 2 '2005' and line 40 "
            "'2005-Q1'); expected periods of one kind: keep either the rows whose column 'freq' is A or "
            "those whose 'freq' is Q") in message  # fmt: skip
    assert "--id-col" not in message


def test_a_series_of_years_then_quarters_is_refused_as_mixing_them_not_as_unsorted(tmp_path):
    """The same without the freq column, for one geo: 'timestamps ... are not sorted' (h75 F10); the labels
    of the rows that clash, a year and a quarter, say it."""
    rows = [("A", "FR", year) for year in YEARS] + [("Q", "FR", quarter) for quarter in QUARTERS]
    with pytest.raises(DataError) as caught:
        read_csv(_write(tmp_path, "estat.csv", _eurostat(rows, freq=False)))
    assert ("the file mixes yearly and quarterly periods in column 'TIME_PERIOD' (line 20 '2023' and line 21 "
            "'2005-Q1'); expected periods of one kind: keep either the yearly rows or the quarterly "
            "ones") in str(caught.value)  # fmt: skip


def test_a_long_tables_repeated_time_is_named_at_its_file_lines_not_its_sorted_places(tmp_path):
    """A long table's times are pivoted and sorted before they are checked: the repeat of 2020-01-01
    ('2020-01' on line 3, '2020-01-01' on line 7) was named at lines 2 and 3, the sorted places, and advised
    naming the id column the table is already keyed by (h75 F10)."""
    times = ["2020-03", "2020-01", "2020-02", "2020-04", "2020-05", "2020-01-01", "2020-06"]
    text = "geo,month,value\n" + "".join(f"{geo},{time},{k}\n" for geo in ("FR", "DE")
                                         for k, time in enumerate(times))  # fmt: skip
    with pytest.raises(DataError) as caught:
        read_csv(_write(tmp_path, "long.csv", text))
    message = str(caught.value)
    assert "duplicate timestamp 2020-01-01 00:00:00 in column 'month' at line 3 and line 7" in message
    assert message.endswith("expected one row per time step")


def test_an_irregular_step_of_a_long_table_names_its_line_in_the_file(tmp_path):
    """Series A and B, B's twelfth day at 05:00: the refusal named the places of the dates of both series
    together, "line 13", which holds A's (the rest of h75 F10, h82 F17); it names line 42, B's."""
    rows = [f"{key},{day + pd.Timedelta(hours=5 * (key == 'B' and k == 11)):%Y-%m-%d %H:%M},{k}"
            for key in "AB" for k, day in enumerate(pd.date_range("2020-01-01", periods=30, freq="D"))
            if not (key == "B" and k == 10)]  # fmt: skip
    path = tmp_path / "long.csv"
    path.write_text("id,date,v\n" + "\n".join(rows) + "\n")
    assert rows[40] == "B,2020-01-12 05:00,11"  # line 42
    with pytest.raises(DataError, match="irregular time steps in column 'date': line 42 is 2020-01-12 "
                       r"05:00:00, off the 24h grid of line 2 \(2020-01-01 00:00:00\)"):
        read_csv(path, id_col="id")


@pytest.mark.parametrize(
    ("cell", "value"),
    [("5,0\u00a0%", 5.0), ("5,0\u202f%", 5.0), ("5,0\u2009%", 5.0), ("1\u2009234,5", 1234.5),
     ("\u20131,5", -1.5), ("\u20131\u2009234,5", -1234.5), ("\u201312,5\u202f%", -12.5)],
)  # fmt: skip
def test_numbers_as_word_and_excel_typeset_them_read_as_numbers(tmp_path, cell, value):
    """A French '5,0 %' (a no-break space before '%'), thousands split by thin spaces ('1 234,5') and an en
    dash for a minus ('–1,5', cp1252's 0x96) were refused as text, or as "no numeric columns" naming no
    cell (h111 F6-F8), while '5,0%', no-break spaces and U+2212 read; each reads as '5,0%' would."""
    months = pd.date_range("2015-01-01", periods=36, freq="MS").strftime("%Y-%m")
    plain = [f"{10 + k % 7},5" for k in range(36)]
    cells = [cell if k % 3 == 0 else text for k, text in enumerate(plain)]
    text = "Date;Valeur\n" + "".join(f"{month};{c}\n" for month, c in zip(months, cells, strict=True))
    path = tmp_path / "typeset.csv"
    path.write_bytes(text.encode("cp1252" if cell == "\u20131,5" else "utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        read = read_csv(path).frame["Valeur"].tolist()
    assert read == [value if k % 3 == 0 else 10.5 + k % 7 for k in range(36)]


def test_an_en_dash_between_numbers_is_a_range_not_a_minus(tmp_path):
    """Only a leading en dash is a minus: '2019–2020' and '1–5' in a text column stay text."""
    rows = [f"2020-01-{d:02d};{2019 - d}\u2013{2020 - d};{d}\u2013{d + 4};\u2013{d},5" for d in range(1, 29)]
    path = _write(tmp_path, "ranges.csv", "date;season;band;change\n" + "\n".join(rows) + "\n")
    with pytest.warns(DataQualityWarning, match="skipped non-numeric column.s. 'season', 'band'"):
        frame = read_csv(path).frame
    assert list(frame.columns) == ["change"] and frame["change"].tolist() == [-d - 0.5 for d in range(1, 29)]


@pytest.mark.parametrize("space", ["\u2007", "\u200a"])  # a figure space, a hair space
def test_numbers_grouped_by_a_figure_or_hair_space_read_as_numbers(tmp_path, space):
    """'1 234,5' grouped by a figure or hair space, as typesetting groups digits, was refused as text (h122)
    where thin and no-break spaces read; it reads as the number written plainly."""
    rows = "".join(f"2020-{m:02d}-01;1{space}{m}34,5\n" for m in range(1, 7))
    path = tmp_path / "grouped.csv"
    path.write_text("date;value\n" + rows, encoding="utf-8")
    with pytest.warns(DataQualityWarning, match="with thousands separators"):
        assert read_csv(path).frame["value"].tolist() == [1000 + m * 100 + 34.5 for m in range(1, 7)]


@pytest.mark.parametrize("space", ["\u2008", "\u205f"])  # a punctuation space, a mathematical space
def test_numbers_grouped_by_an_unread_space_are_named_not_taken_for_dates(tmp_path, space):
    """'1 234,5' with a space not read as a group mark is a date to dateutil, so the column was refused as "no
    numeric columns to forecast", naming no cell (h119); it is refused as text where numbers are expected, its
    cells named."""
    rows = "".join(f"2020-{m:02d}-01;1{space}{m}34,5\n" for m in range(1, 7))
    path = tmp_path / "grouped.csv"
    path.write_text("date;value\n" + rows, encoding="utf-8")
    named = r"column 'value' holds text where numbers are expected: line 2 '1\S+134,5'"
    with pytest.raises(DataError, match=named):
        read_csv(path)


def test_a_leading_en_dash_read_as_a_minus_is_said(tmp_path):
    """A column of '–5' ("up to 5") had been skipped as text; read as -5 since the en dash became a minus, it
    must be said, as Japan's △ is (h121)."""
    rows = [f"2020-01-{d:02d};\u2013{d % 5 + 1};{d},5" for d in range(1, 29)]
    path = _write(tmp_path, "dashes.csv", "date;limit;value\n" + "\n".join(rows) + "\n")
    said = "read 28 number.s. with an en dash before them .'\u20131,5'. as negative"
    with pytest.warns(DataQualityWarning, match=said):
        frame = read_csv(path).frame
    assert frame["limit"].tolist() == [-(d % 5 + 1) for d in range(1, 29)]

"""Files shaped as statistics offices publish them: other delimiters, decimal commas, missing-value markers,
value flags, metadata lines, periods as columns, and ONS blocks of several frequencies."""

from __future__ import annotations

import dataclasses
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from layout_checks import one_line_error, read_noted, write

from forecaster.api import Forecaster
from forecaster.cli import main
from forecaster.data import DataQualityWarning, read_csv
from forecaster.data.layouts import sniff
from forecaster.data.records import DELIMITERS, LineMap, record_starts
from forecaster.errors import DataError

MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]


def _world_bank(tmp_path: Path) -> Path:
    """A World Development Indicators export (DataBank CSV): series by country, years as columns, '..'
    for a missing value, an empty line and two notes after the data."""
    years = range(1990, 2021)
    header = ["Series Name", "Series Code", "Country Name", "Country Code"] + [f"{y} [YR{y}]" for y in years]
    germany = [f"{100 + 0.25 * i}" for i in range(len(years))]
    france = [".." if y == 1995 else f"{200 - 0.5 * i}" for i, y in enumerate(years)]
    series = ["GDP growth (annual %)", "NY.GDP.MKTP.KD.ZG"]
    rows = [header, [*series, "Germany", "DEU", *germany], [*series, "France", "FRA", *france]]
    text = "\n".join(",".join(f'"{cell}"' for cell in row) for row in rows)
    footer = "\n\nData from database: World Development Indicators\nLast Updated: 10/28/2026\n"
    return write(tmp_path, "API_WDI.csv", text + footer)


def test_world_bank_export_becomes_one_column_per_country(tmp_path):
    path = _world_bank(tmp_path)
    frame, freq, note = read_noted(path, fill_missing="interpolate")
    assert list(frame.columns) == ["Germany", "France"]
    assert freq == "YS-JAN"
    assert frame.index.equals(pd.date_range("1990-01-01", "2020-01-01", freq="YS", name="period"))
    np.testing.assert_array_equal(frame["Germany"], 100 + 0.25 * np.arange(31))
    np.testing.assert_array_equal(frame["France"], 200 - 0.5 * np.arange(31))  # 1995 interpolated
    assert note.startswith(
        f"{path}: note: skipped 2 metadata line(s) after the data; read the wide layout: 2 row(s) as series "
        "over the 31 period columns of the header ('1990 [YR1990]' ... '2020 [YR2020]'); read 1 cell(s) "
        "marked '..' as missing; "
    )


def test_wide_rows_are_named_by_the_cells_that_tell_them_apart(tmp_path):
    lines = ["Country Name,Country Code,Series Name,2018,2019,2020,2021"]
    for country, code in (("Germany", "DEU"), ("France", "FRA")):
        for series in ("GDP", "Inflation"):
            lines.append(f"{country},{code},{series},1,2,3,4")
    frame, _, _ = read_noted(write(tmp_path, "wide.csv", "\n".join(lines) + "\n"))
    # the country code says nothing the name does not
    assert list(frame.columns) == [
        "Germany / GDP",
        "Germany / Inflation",
        "France / GDP",
        "France / Inflation",
    ]


def test_eurostat_tsv_with_flags_and_colons(tmp_path):
    months = [f"{year}-{month:02d}" for year in (2020, 2021) for month in range(1, 13)]
    de = [f"{100 + 0.5 * i} " for i in range(24)]
    fr = [f"{90 + 0.25 * i} " for i in range(24)]
    de[3], de[22], de[23] = "101.5 p", "111.0 e", "111.5 p"
    fr[5], fr[6], fr[10] = ": c", "91.5 bp", ":"
    text = "freq,unit,s_adj,geo\\TIME_PERIOD\t" + "\t".join(f"{m} " for m in months) + "\n"
    text += "M,I15,SCA,DE\t" + "\t".join(de) + "\nM,I15,SCA,FR\t" + "\t".join(fr) + "\n"
    path = write(tmp_path, "estat_prc_hicp_midx.tsv.gz", text)
    frame, freq, note = read_noted(path, fill_missing="interpolate")
    assert list(frame.columns) == ["DE", "FR"]
    assert freq == "MS"
    assert frame.index.equals(pd.date_range("2020-01-01", "2021-12-01", freq="MS", name="period"))
    np.testing.assert_array_equal(frame["DE"], 100 + 0.5 * np.arange(24))
    np.testing.assert_array_equal(frame["FR"], 90 + 0.25 * np.arange(24))
    assert note.startswith(
        f"{path}: note: read values separated by tabs; read the wide layout: 2 row(s) as series over the 24 "
        "period columns of the header ('2020-01' ... '2021-12'); read 2 cell(s) marked ':' as missing; "
        "stripped value flags (p, c, bp, e) from 5 cell(s); "
    )


def test_eurostat_tsv_rows_of_codes_above_an_aggregate_named_like_a_date(tmp_path):
    """Countries in alphabetical order, then EU27_2020 (a digit, no word: like a date): the rows above it
    are series with numbers, not an ABS-style block describing the columns (they had been skipped as such,
    and EU27_2020 alone forecast)."""
    years = list(range(2022, 2007, -1))
    geos = ["AT", "BE", "BG", "CY", "DK", "EU27_2020"]
    text = "unit,geo\\time\t" + "\t".join(f"{year} " for year in years) + "\n"
    for k, geo in enumerate(geos):
        cells = [f"{60 + k + 0.5 * i:.1f} " for i in range(len(years))]
        cells[1] = cells[1] + "e" if k == 1 else cells[1]
        text += f"PC,{geo}\t" + "\t".join(cells) + "\n"
    frame, freq, _ = read_noted(write(tmp_path, "tsdc_rate.tsv", text))
    assert list(frame.columns) == geos and freq in ("YS", "YS-JAN")
    assert frame.index[0] == pd.Timestamp("2008-01-01") and len(frame) == len(years)
    np.testing.assert_array_equal(frame["AT"], (60 + 0.5 * np.arange(len(years)))[::-1])


def test_eurostat_tsv_whose_first_series_reads_as_years_keeps_its_header(tmp_path):
    """The first series steps by 10 (1130 ... 1000, newest first) and reads as years: it is data under the
    header of years, not the header (10 "decades" 1000-1090 had been read, h91 F5)."""
    years = list(range(2023, 2009, -1))
    text = "unit,geo\\time\t" + "\t".join(f"{year} " for year in years) + "\n"
    text += "PC,EU27_2020\t" + "\t".join(f"{1130 - 10 * k}" for k in range(len(years))) + "\n"
    text += "PC,EL\t" + "\t".join(f"{180 - 10 * k}" for k in range(len(years))) + "\n"
    frame, freq, _ = read_noted(write(tmp_path, "estat.tsv", text))
    assert list(frame.columns) == ["EU27_2020", "EL"] and freq in ("YS", "YS-JAN")
    assert frame.index.equals(pd.date_range("2010-01-01", "2023-01-01", freq="YS", name="period"))
    np.testing.assert_array_equal(frame["EU27_2020"], 1000 + 10 * np.arange(len(years)))
    header = "year," + ",".join(map(str, range(2015, 2021))) + "\n"  # written twice: two exports joined
    twice = write(tmp_path, "twice.csv", header * 2 + "DE,1,2,3,4,5,6\nFR,2,3,4,5,6,7\n")
    frame, freq, _ = read_noted(twice)  # the header, not a row of data (h97: refused after h91 F5's fix)
    assert list(frame.columns) == ["DE", "FR"] and frame["FR"].tolist() == [2.0, 3, 4, 5, 6, 7]


def _ons(tmp_path: Path, months: int) -> Path:
    """An ONS time-series CSV: key/value metadata, then 34 years, 138 quarters and `months` months."""
    lines = [
        '"Title","Gross Domestic Product: chained volume measures: Seasonally adjusted £m"',
        '"CDID","ABMI"', '"Source dataset ID","QNA"', '"PreUnit","£"', '"Unit","m"',
        '"Release date","12-11-2026"', '"Next release","23 December 2026"', '"Important notes",""',
    ]  # fmt: skip
    lines += [f'"{year}","{400000 + year}"' for year in range(1990, 2024)]
    lines += [f'"{1990 + k // 4} Q{k % 4 + 1}","{100000 + 250 * k}"' for k in range(138)]
    lines += [f'"{2020 + k // 12} {MONTHS[k % 12]}","{33000 + k}"' for k in range(months)]
    return write(tmp_path, "abmi.csv", "\r\n".join(lines) + "\r\n")


def test_ons_file_keeps_its_quarterly_block_when_the_monthly_one_is_short(tmp_path):
    path = _ons(tmp_path, months=12)
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["ABMI"] and freq == "QS-JAN"
    assert frame.index.equals(pd.date_range("1990-01-01", "2024-04-01", freq="QS", name="period"))
    np.testing.assert_array_equal(frame["ABMI"], 100000 + 250 * np.arange(138))
    assert note == (
        f"{path}: note: skipped 8 metadata line(s) before the data; "
        "kept the 138 quarterly rows, skipped 34 yearly and 12 monthly (--periods chooses)"
    )


def test_an_ons_file_of_years_and_quarters_alone_keeps_both_blocks(tmp_path):
    """A quarterly series (GDP) has no monthly block: its years were dropped as a year's totals among the
    quarter rows, and --periods yearly was refused as having no yearly rows."""
    path = _ons(tmp_path, months=0)
    frame, freq, note = read_noted(path)
    assert freq == "QS-JAN" and len(frame) == 138
    assert note.endswith("kept the 138 quarterly rows, skipped 34 yearly (--periods chooses)")
    with pytest.warns(DataQualityWarning):
        yearly = read_csv(path, periods="yearly")
    assert yearly.freq == "YS-JAN" and len(yearly) == 34
    np.testing.assert_array_equal(yearly.frame["ABMI"], 400000 + np.arange(1990, 2024))


def test_an_ons_download_of_several_series_side_by_side_reads_each_by_its_cdid(tmp_path):
    """The ONS explorer's download of two series: a column per CDID under the same metadata lines. It was
    refused with "no date column". The rows before both series have started are left out, as in any file."""
    lines = ['"Title","Retail Sales Index: All Retailers","Retail Sales Index: Food"', '"CDID","J5EK","EAFS"',
             '"Source dataset ID","DRSI","DRSI"', '"Unit","Index","Index"',
             '"Important notes","",""']  # fmt: skip
    lines += [f'"{year}","{100 + year - 2010}","{90 + year - 2010}"' for year in range(2010, 2024)]
    lines += [f'"{2010 + k // 12} {MONTHS[k % 12]}","{100 + k}","{"" if k < 3 else 50 + k}"'
              for k in range(60)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "drsi.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["J5EK", "EAFS"] and freq == "MS" and len(frame) == 57
    np.testing.assert_array_equal(frame["J5EK"], 103 + np.arange(57))
    np.testing.assert_array_equal(frame["EAFS"], 53 + np.arange(57))
    assert "kept the 60 monthly rows, skipped 14 yearly" in note
    with pytest.warns(DataQualityWarning):
        yearly = read_csv(tmp_path / "drsi.csv", periods="yearly")
    np.testing.assert_array_equal(yearly.frame["EAFS"], 90 + np.arange(14))


def test_ons_file_keeps_the_monthly_block_once_it_has_enough_rows(tmp_path):
    frame, freq, note = read_noted(_ons(tmp_path, months=30))
    assert freq == "MS" and frame.index[0] == pd.Timestamp("2020-01-01") and len(frame) == 30
    np.testing.assert_array_equal(frame["ABMI"], 33000 + np.arange(30))
    assert note.endswith("kept the 30 monthly rows, skipped 34 yearly and 138 quarterly (--periods chooses)")


def test_ons_blocks_are_chosen_by_periods_and_a_bundle_reads_its_block_again(tmp_path, capsys):
    """--periods reads another block; the bundle remembers the one it was trained on (the next release's
    monthly block is long enough to be the default) and writes forecasts as the file labels its periods."""
    path = _ons(tmp_path, months=12)
    with pytest.warns(DataQualityWarning, match="kept the 138 quarterly rows.*[(]--periods chooses[)]"):
        series = read_csv(path)
    assert (series.options.periods, series.date_style) == ("quarterly", "{year} Q{quarter}")
    blocks = (("yearly", "YS-JAN", 34, "{year}"), ("monthly", "MS", 12, "{year} {MON}"))
    for periods, freq, rows, style in blocks:
        with pytest.warns(DataQualityWarning):
            other = read_csv(path, periods=periods)
        assert (other.freq, len(other), other.date_style) == (freq, rows, style)
    out, forecast = tmp_path / "bundle", tmp_path / "forecast.csv"
    assert main(["train", "--csv", str(path), "--horizon", "2", "--model", "naive", "--out", str(out)]) == 0
    (tmp_path / "next").mkdir()
    following = _ons(tmp_path / "next", months=30)  # the monthly block, long enough now, is not read
    assert main(["predict", "--model", str(out), "--csv", str(following), "--output", str(forecast)]) == 0
    capsys.readouterr()
    assert pd.read_csv(forecast)["period"].tolist() == ["2024 Q3", "2024 Q4"]
    assert main(["predict", "--model", str(out), "--csv", str(following), "--periods", "monthly"]) == 2
    assert "--periods monthly asks for another block than the quarterly one" in capsys.readouterr().err
    with pytest.warns(DataQualityWarning):  # the API: the block read from the file, its frame given
        history = read_csv(following, periods="quarterly").frame
    ahead = Forecaster.load(out).predict(history)
    assert list(ahead.index) == list(pd.date_range("2024-07-01", periods=2, freq="QS"))
    with pytest.raises(DataError, match="a DataFrame holds one frequency: expected no periods"):
        Forecaster(model="naive", horizon=2).fit(history, periods="quarterly")
    fred = write(tmp_path, "fred.csv", "DATE,GDP\n2020-01-01,1\n2020-04-01,2\n2020-07-01,3\n")
    assert "this file holds one: expected no --periods" in one_line_error(fred, periods="monthly")
    # its block's rows alone, under the header predict writes: refused as a --periods never given (h75 F6)
    block = ["period,ABMI", *(f"{1990 + k // 4} Q{k % 4 + 1},{100000 + 250 * k}" for k in range(138))]
    alone = write(tmp_path, "block.csv", "\n".join(block) + "\n")
    assert main(["predict", "--model", str(out), "--csv", str(alone), "--output", str(forecast)]) == 0
    assert pd.read_csv(forecast).values.tolist() == [["2024 Q3", 134250], ["2024 Q4", 134250]]


def test_semicolons_decimal_commas_and_metadata_lines(tmp_path):
    """Destatis-like: title lines padded with separators, decimal commas with '.' and space thousands
    separators (a column of whole thousands too, which pandas alone reads as 83.166), a rule and a source line
    after an empty one."""
    rows = ["2020-Q1;9.990,25;1 234,5;83.166", "2020-Q2;10.001,5;1 240,75;83.155",
            "2020-Q3;987,5;999,25;83.161", "2020-Q4;10.250,75;1 250;83.155", "2021-Q1;10.100;1 251,5;83.129",
            "2021-Q2;10.300,25;1\u00a0260,5;83.138"]  # fmt: skip
    text = "Volkswirtschaftliche Gesamtrechnungen;;;\nBruttoinlandsprodukt, Konsum: Deutschland;;;\n"
    text += "Quartal;BIP;Konsum;Einwohner\n" + "\n".join(rows)
    text += "\n;;;\n__________\nQuelle: Statistisches Bundesamt;;;\n"
    path = write(tmp_path, "81000-0002.csv", text)
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["BIP", "Konsum", "Einwohner"] and freq == "QS-JAN"
    assert frame.index.equals(pd.date_range("2020-01-01", periods=6, freq="QS", name="Quartal"))
    np.testing.assert_array_equal(frame["BIP"], [9990.25, 10001.5, 987.5, 10250.75, 10100.0, 10300.25])
    np.testing.assert_array_equal(frame["Konsum"], [1234.5, 1240.75, 999.25, 1250.0, 1251.5, 1260.5])
    np.testing.assert_array_equal(frame["Einwohner"], [83166, 83155, 83161, 83155, 83129, 83138])
    assert note == (
        f"{path}: note: read values separated by semicolons; read decimal commas; skipped 2 metadata line(s) "
        "before the data and 2 after; read 16 number(s) written with thousands separators"
    )


def test_month_labels_of_a_date_column_are_not_flagged_years(tmp_path):
    text = "date,value\n" + "".join(f"2020 {month},{i}.5\n" for i, month in enumerate(MONTHS))
    series = read_csv(write(tmp_path, "months.csv", text))
    assert series.freq == "MS" and series.index[-1] == pd.Timestamp("2020-12-01")
    np.testing.assert_array_equal(series.values[:, 0], np.arange(12) + 0.5)


def test_fred_dots_are_missing_values(tmp_path):
    days = pd.bdate_range("2020-01-13", periods=10)
    values = [".", *[f"{1.75 + 0.25 * i}" for i in range(1, 10)]]
    values[5] = "."  # 2020-01-20, a holiday
    text = "observation_date,DGS10\n" + "".join(
        f"{d:%Y-%m-%d},{v}\n" for d, v in zip(days, values, strict=True)
    )
    path = write(tmp_path, "DGS10.csv", text)
    frame, freq, note = read_noted(path, fill_missing="ffill")
    assert freq == "B" and frame.index.equals(pd.DatetimeIndex(days, name="observation_date"))
    expected = [2.0, 2.0, 2.25, 2.5, 2.75, 2.75, 3.25, 3.5, 3.75, 4.0]  # the first taken back, the holiday on
    np.testing.assert_array_equal(frame["DGS10"], expected)
    assert note.startswith(f"{path}: note: read 2 cell(s) marked '.' as missing; ")


def test_tidy_file_reads_as_before_without_a_note(tmp_path):
    text = "date,load,temp\n" + "".join(f"2024-01-01 {h:02d}:00,{h * 1.5},{-h}\n" for h in range(24))
    path = write(tmp_path, "tidy.csv", text)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)
        series = read_csv(path)
    expected = pd.read_csv(io.StringIO(text), index_col="date", parse_dates=True).astype(np.float64)
    pd.testing.assert_frame_equal(series.frame, expected, check_freq=False)
    assert series.freq == "h"


@pytest.mark.parametrize(("delimiter", "said"), [(";", "semicolons"), ("|", "'|' characters")])
def test_other_delimiters_are_sniffed_and_named(tmp_path, delimiter, said):
    text = f"date{delimiter}a{delimiter}b\n" + "".join(
        f"2020-01-01 {h:02d}:00{delimiter}{h}{delimiter}{h / 4}\n" for h in range(12)
    )
    path = write(tmp_path, "other.csv", text)
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["a", "b"] and freq == "h"
    np.testing.assert_array_equal(frame["b"], np.arange(12) / 4)
    assert note == f"{path}: note: read values separated by {said}"


def test_title_lines_and_footer_notes_are_skipped(tmp_path):
    head = '"Title","Gross domestic product"\n"Unit","m"\n"Release date","12-11-2026"\n\n"date","value"\n'
    rows = "".join(f'"2020-{month:02d}-01","{100 + month}"\n' for month in range(1, 13))
    path = write(
        tmp_path, "gdp.csv", head + rows + "Source: Office for Statistics\nNotes: seasonally adjusted\n"
    )
    frame, freq, note = read_noted(path)
    assert freq == "MS" and list(frame.columns) == ["value"]
    np.testing.assert_array_equal(frame["value"], 100 + np.arange(1, 13))
    assert note == f"{path}: note: skipped 3 metadata line(s) before the data and 2 after"
    broken = write(tmp_path, "broken.csv", head + rows.replace('"103"', '"n.v."'))
    message = one_line_error(broken, targets=["value"])
    assert message.endswith(
        "line 4 'n.v.' (1 cell(s) in total); expected a number in every cell (line numbers count from the "
        "header, which is file line 5)"
    )


def test_a_dos_end_of_file_byte_after_the_last_line_is_no_row(tmp_path):
    """DOS programs end a file with ^Z (0x1A): alone on the last line it is no row and no note (the file was
    refused: "no date column found"); after a number on the last line, that cell is named."""
    rows = "year,value\n" + "".join(f"{2000 + k},{10 + k}.5\n" for k in range(25))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no note
        series = read_csv(write(tmp_path, "dos.csv", rows + "\x1a"))
    assert series.freq.startswith("Y") and len(series.frame) == 25 and series.frame["value"].iloc[-1] == 34.5
    message = one_line_error(write(tmp_path, "glued.csv", rows[:-1] + "\x1a"))
    assert "column 'value' holds text where numbers are expected: line 26 '34.5\\x1a'" in message


def test_thousands_separators_only_where_the_file_shows_its_decimal_mark(tmp_path):
    rows = "".join(f'2020-01-0{d},"{d},234",{d}.5\n' for d in range(1, 8))
    frame, _, note = read_noted(write(tmp_path, "grouped.csv", "date,a,b\n" + rows))
    np.testing.assert_array_equal(frame["a"], [1234.0 + 1000 * d for d in range(7)])
    assert note.endswith("note: read 7 number(s) written with thousands separators")
    quoted = write(
        tmp_path, "quoted.csv", "date,a\n" + "".join(f'2020-01-0{d},"{d},234.5"\n' for d in range(1, 8))
    )
    assert read_noted(quoted)[0]["a"].tolist() == [1234.5 + 1000 * d for d in range(7)]
    # "1,234" alone, quoted in a file split by commas, groups thousands, as US agencies write whole numbers
    # (Census, BLS, BEA: the file was refused as having no numeric columns)
    thousands = write(
        tmp_path, "thousands.csv", "date,a\n" + "".join(f'2020-01-0{d},"{d},234"\n' for d in range(1, 8))
    )
    frame, _, note = read_noted(thousands)
    assert frame["a"].tolist() == [1234.0 + 1000 * d for d in range(7)]
    assert note.endswith("note: read 7 number(s) written with thousands separators")
    # split by tabs, "1,234" alone could be a thousand and some or one and a bit: not guessed
    ambiguous = write(
        tmp_path, "ambiguous.csv", "date\ta\n" + "".join(f"2020-01-0{d}\t{d},234\n" for d in range(1, 8))
    )
    message = one_line_error(ambiguous, targets=["a"])
    assert "column 'a' holds text where numbers are expected: line 2 '1,234'" in message


def test_indian_digit_grouping_in_lakhs_and_crores_reads_as_the_number(tmp_path):
    """RBI's, MOSPI's and GST tables group "15,22,535.13" (1,522,535.13) in lakhs: refused as no numeric
    column (h66). A crore with no decimals, "1,05,00,000", is 10,500,000."""
    cells = ["15,22,535.13", "9,87,654.50", "1,05,00,000", "12,345.6", "3,21,000"]
    rows = "".join(f'2020-0{m + 1},"{cell}"\n' for m, cell in enumerate(cells))
    frame, _, note = read_noted(write(tmp_path, "lakh.csv", "month,collection\n" + rows))
    assert frame["collection"].tolist() == [1522535.13, 987654.5, 10500000.0, 12345.6, 321000.0]
    assert note.endswith("read 5 number(s) written with thousands separators")


@pytest.mark.parametrize("delimiter", ["\t", "|"])
def test_an_ambiguous_separator_is_read_by_the_size_of_the_plain_numbers_beside_it(tmp_path, delimiter):
    """A German tab export of counts ('1.234' beside '987', no decimal mark anywhere) was read by pandas as
    1.234 next to 987, silently; the reading that makes such numbers the size of the column's plain whole
    numbers is taken: thousands there, decimals beside '3' ('1.500' is 1.5), and one of either size alone
    is taken as pandas reads it (three-decimal prices)."""
    counts = ["1.234", "1.456", "987", "1.002", "999", "1.050", "998", "1.010"]
    prices = ["1.500", "2.250", "3", "2.750", "3.125", "4", "3.500", "2.875"]
    rates = ["1.123", "1.145", "1.098", "1.087", "1.112", "1.134", "1.101", "1.099"]
    rows = "".join(delimiter.join([f"2020-{m + 1:02d}", *cells]) + "\n"
                   for m, cells in enumerate(zip(counts, prices, rates, strict=True)))  # fmt: skip
    header = delimiter.join(["month", "a", "b", "c"]) + "\n"
    frame, _, note = read_noted(write(tmp_path, "counts.tsv", header + rows))
    np.testing.assert_array_equal(frame["a"], [1234.0, 1456.0, 987.0, 1002.0, 999.0, 1050.0, 998.0, 1010.0])
    np.testing.assert_array_equal(frame["b"], [float(cell) for cell in prices])
    np.testing.assert_array_equal(frame["c"], [float(cell) for cell in rates])
    assert note.endswith("read 5 number(s) written with thousands separators")


def test_a_semicolon_files_presumed_decimal_comma_is_said_as_presumed(tmp_path):
    """A ';' file showing no decimal mark reads '1.123' as 1123 (German Excel's thousands), as it did, but the
    note claimed decimal commas it never saw; a Swiss file of rates '1.123' would be misread silently."""
    rows = "".join(f"2020-{m + 1:02d};1.{123 + m}\n" for m in range(12))
    frame, _, note = read_noted(write(tmp_path, "fx.csv", "Datum;EUR in CHF\n" + rows))
    assert frame["EUR in CHF"].tolist() == [1123.0 + m for m in range(12)]
    assert "no decimal mark seen: read ',' as the decimal mark and '.' as a thousands separator" in note
    assert "read decimal commas" not in note


def test_dots_grouping_thousands_alone_are_no_decimal_commas_said(tmp_path):
    """A ',' file of counts '987', '1.234', '1.234.567' (dots grouping thousands, no comma in any cell) was
    read right, but the note said "read decimal commas" (h82 F20); a ';' file's commas are still said."""
    counts = [987, 1234, 5678, 12345, 99999, 123456, 1234567, 2345678] * 3
    rows = "".join(f"{2000 + k},{format(count, ',').replace(',', '.')}\n" for k, count in enumerate(counts))
    frame, _, note = read_noted(write(tmp_path, "dots.csv", "year,visitors\n" + rows))
    assert frame["visitors"].tolist() == counts and "decimal comma" not in note
    assert note.endswith("read 21 number(s) written with thousands separators")
    rows = "".join(f"{2000 + k};{count},5\n" for k, count in enumerate(counts[:12]))
    assert "read decimal commas" in read_noted(write(tmp_path, "commas.csv", "year;visitors\n" + rows))[2]


def test_decimal_commas_of_three_digits_are_read_where_a_cell_or_the_delimiter_says_so(tmp_path):
    """"0,985" groups no thousands, so its column's comma is a decimal one ("1,002" beside it read 1002, the
    "0,985" 985); and a file split by ";" whose cells are all "1,000"-like writes decimal commas (it was
    refused as having no numeric columns), as Excel's CSV does where the comma is the decimal mark."""
    days = [f"2020-01-{d:02d}" for d in range(1, 9)]
    sales = ["1,002", "0,985", "1,075", "0,910", "1,110", "0,946", "1,008", "0,957"]
    path = write(tmp_path, "mixed.csv", "date;sales;temp\n" + "".join(
        f"{day};{value};19.{k}5\n" for k, (day, value) in enumerate(zip(days, sales, strict=True))))
    frame = read_csv(path).frame
    np.testing.assert_array_equal(frame["sales"], [float(value.replace(",", ".")) for value in sales])
    np.testing.assert_array_equal(frame["temp"], [float(f"19.{k}5") for k in range(8)])
    path = write(tmp_path, "semicolons.csv", "date;sales;temp\n" + "".join(
        f"{day};1{k},025;19,640\n" for k, day in enumerate(days)))
    frame = read_csv(path).frame
    np.testing.assert_array_equal(frame["sales"], [float(f"1{k}.025") for k in range(8)])
    np.testing.assert_array_equal(frame["temp"], [19.64] * 8)


def test_a_first_row_of_text_is_not_taken_for_metadata(tmp_path):
    path = write(tmp_path, "text.csv", "date,a\n2020-01-01,n.a\n2020-01-02,5\n2020-01-03,6\n")
    message = one_line_error(path)
    assert message == (
        f"{path}: column 'a' holds text where numbers are expected: line 2 'n.a' (1 cell(s) in total); "
        "expected a number in every cell"
    )


@pytest.mark.parametrize("cell", ["${:.2f}bn", "€{:.2f}M", "{:.2f} млн", "({:.2f}%)"])
def test_a_column_of_numbers_each_written_with_text_names_its_cells(tmp_path, cell):
    """Every cell a number with what no reading takes ('$1.20bn', '1.20 млн') was refused as "no numeric
    columns to forecast among 'month', 'value'", no cell named (h91 F7); a few such cells were named."""
    months = pd.date_range("2018-01-01", periods=12, freq="MS")
    cells = [cell.format(1.2 + k / 100) for k in range(12)]
    path = write(tmp_path, "units.csv", "month,value\n" + "".join(
        f'{month:%Y-%m},"{text}"\n' for month, text in zip(months, cells, strict=True)))  # fmt: skip
    assert one_line_error(path) == (
        f"{path}: column 'value' holds text where numbers are expected: line 2 {cells[0]!r}, line 3 "
        f"{cells[1]!r}, line 4 {cells[2]!r}, line 5 {cells[3]!r}, line 6 {cells[4]!r} (12 cell(s) in total); "
        "expected a number in every cell"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Country,1990,1995,2000,2001,2002\nDE,1,2,3,4,5\nFR,1,2,3,4,5\n",
         "the period columns of the header are not evenly spaced ('1990', '1995', '2000', '2001', '2002', "
         "...); expected one column per year"),
        ("Country,2010Q1,2010Q2,2010Q3,2010Q4\nDE,1,2,3,4\nFR,1,abc,3,4\n",
         "period column '2010Q2': the cell 'abc' of 'FR' is not a number; expected numbers or missing-value "
         "markers"),
        ("Country,2010Q1,2010-Q1,2010Q2,2010Q3\nDE,1,2,3,4\n", "('2010Q1' ... '2010Q3') repeat a period"),
        ("Country,2010Q3,2010Q4,2011,2012\nDE,1,2,3,4\n", "('2010Q3' ... '2012') mix kinds of periods"),
        ("Country,2018,2019,2020\nperiod,1,2,3\n", "column name(s) 'period' repeated"),
    ],
)  # fmt: skip
def test_wide_files_that_cannot_be_turned_around_name_the_problem(tmp_path, text, expected):
    path = write(tmp_path, "wide.csv", text)
    assert expected in one_line_error(path)


def test_ons_label_that_is_no_period_names_its_file_line(tmp_path):
    path = _ons(tmp_path, months=0)
    lines = path.read_bytes().decode().split("\r\n")
    lines[12] = '"1994 Q5","1"'
    path.write_bytes("\r\n".join(lines).encode())
    message = one_line_error(path)
    assert "line 13: '1994 Q5' is not a period label of an ONS time series" in message


def test_sniff_rewinds_a_buffer():
    buffer = io.StringIO("Title;;\nQuartal;BIP;x\n2020-Q1;1,5;2\n2020-Q2;2,5;3\n")
    layout = sniff(buffer)
    assert (layout.delimiter, layout.skip, layout.decimal) == (";", 1, ",") and buffer.tell() == 0


def test_cli_describes_published_layouts(tmp_path, capsys):
    for path, extra in ((_ons(tmp_path, months=0), []), (_world_bank(tmp_path), ["--fill-missing", "ffill"])):
        assert main(["data", "describe", str(path), "--horizon", "2", *extra]) == 0
        out = capsys.readouterr().out
        assert f"source     {path}" in out and "frequency  " in out
    assert "rows       31" in out and "Germany, France" in out


def test_a_model_trained_on_a_wide_file_forecasts_from_it(tmp_path, capsys):
    """The bundle remembers the date column the wide layout names ('period'); new rows of the same shape are
    turned around again, and the forecast continues the years."""
    path, out = _world_bank(tmp_path), tmp_path / "wdi"
    tiny = "--d-model 8 --n-heads 2 --fold 2 --e-layers 1 --left-rank 4 --right-rank 2 --max-epochs 1"
    argv = ["train", "--csv", str(path), "--horizon", "2", *tiny.split(), "--seeds", "1", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 0
    capsys.readouterr()
    forecast_csv = tmp_path / "f.csv"
    assert main(["predict", "--model", str(out), "--csv", str(path), "--output", str(forecast_csv)]) == 0
    forecast = pd.read_csv(forecast_csv)
    assert list(forecast.columns) == ["period", "Germany", "France"]
    assert forecast["period"].tolist() == [2021, 2022]  # as the header wrote its years ('1990 [YR1990]')


def test_a_wide_files_next_release_names_the_series_the_model_did_not_learn(tmp_path, capsys):
    """The next release of a World Bank table adds a country: it was forecast by none and said by none, where
    a long table's says it (h75 F20); the same note now. The training file itself has nothing to say."""
    path, out = _world_bank(tmp_path), tmp_path / "wdi"
    assert main(["train", "--csv", str(path), "--horizon", "2", "--model", "naive", "--out", str(out)]) == 0
    lines = path.read_text().splitlines()
    italy = lines[2].replace('"France","FRA"', '"Italy","ITA"')
    later = write(tmp_path, "API_WDI_next.csv", "\n".join([*lines[:3], italy, *lines[3:]]) + "\n")
    forecast_csv = tmp_path / "f.csv"
    note = f"{later}: note: left out series 'Italy': not among the targets 'Germany', 'France' (a model's: "
    with pytest.warns(DataQualityWarning, match=re.escape(note)):
        assert main(["predict", "--model", str(out), "--csv", str(later), "--output", str(forecast_csv)]) == 0
    assert list(pd.read_csv(forecast_csv).columns) == ["period", "Germany", "France"]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        assert main(["predict", "--model", str(out), "--csv", str(path), "--output", str(forecast_csv)]) == 0
    assert not [warning for warning in said if "left out series" in str(warning.message)]


@pytest.mark.parametrize(("header", "first"), [(["1994-Q1", "1994-Q2"], "2024-Q1"),
                                               (["2004M01", "2004M02"], "2006M07"),
                                               (["Mar-1994", "Jun-1994"], "Mar-2024")])  # fmt: skip
def test_a_wide_files_forecast_is_labelled_as_its_header_labels_periods(tmp_path, capsys, header, first):
    """Eurostat's '1994-Q1' and PX-Web's '2004M01' period columns: the forecast was dated '2024-01-01' where
    a long file's is '2024-Q1'; labelled as the header writes them now. ABS's quarters by their last month,
    'Mar-1994', were refused: "no date column found" (h42)."""
    steps = 30 if header[0] == "2004M01" else 120
    periods = {"1994-Q1": pd.period_range("1994Q1", periods=steps, freq="Q").strftime("%Y-Q%q"),
               "2004M01": pd.period_range("2004-01", periods=steps, freq="M").strftime("%YM%m"),
               "Mar-1994": pd.period_range("1994-03", periods=steps, freq="3M").strftime("%b-%Y")}[header[0]]
    assert list(periods[:2]) == header
    rows = ["geo," + ",".join(periods), "AT," + ",".join(str(100 + k) for k in range(steps)),
            "BE," + ",".join(str(200 + k % 7) for k in range(steps))]  # fmt: skip
    path = write(tmp_path, "wide.csv", "\n".join(rows) + "\n")
    out = tmp_path / "model"
    assert main(["train", "--csv", str(path), "--horizon", "2", "--model", "naive", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(out), "--csv", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[2].split()[0] == first


def _wdi_bulk(tmp_path: Path) -> Path:
    """The World Bank's bulk CSV (API_NY.GDP.MKTP.KD_DS2_en_csv_v2.csv): a byte-order mark, four lines
    before the header, every line ending with a comma, empty cells before a country's first year: 8
    countries from 1960, 3 from 2000, one from 2019, and first one without values (its row was taken for the
    header)."""
    years, rng = list(range(1960, 2024)), np.random.default_rng(0)
    header = ["Country Name", "Country Code", "Indicator Name", "Indicator Code", *map(str, years)]
    aruba = ["Aruba", "ABW", "GDP", "NY.GDP", *[""] * len(years)]
    lines = ['\ufeff"Data Source","World Development Indicators",', "", '"Last Updated Date","2024-06-28",',
             "", *(",".join(f'"{cell}"' for cell in row) + "," for row in (header, aruba))]  # fmt: skip
    for k, start in enumerate([1960] * 8 + [2000] * 3 + [2019]):
        values = 100 * np.exp(np.cumsum(rng.normal(0.02, 0.03, len(years))))
        cells = ["" if year < start else f"{value:.3f}" for year, value in zip(years, values, strict=True)]
        row = [f"Country {k}", f"C{k:02d}", "GDP", "NY.GDP", *cells]
        lines.append(",".join(f'"{cell}"' for cell in row) + ",")
    return write(tmp_path, "API_NY.GDP.MKTP.KD_DS2_en_csv_v2.csv", "\n".join(lines) + "\n")


def test_the_world_bank_bulk_csv_trains_one_model_of_its_countries_from_their_own_first_year(tmp_path):
    """Its header ends with an empty cell, so the years were not seen as periods and the file was refused
    as having no date column; then, its countries starting in different years, as multivariate. It is read
    as independent series; the default input lets 90% of the countries that any input trains keep their
    windows (24 years beside 64: the 24-year ones, under holdout, set it), the 5-year one is left out."""
    from forecaster.data.splits import fitting_input_size
    from forecaster.training.planning import default_input_size
    from forecaster.training.settings import TrainSettings

    path = _wdi_bulk(tmp_path)
    with pytest.warns(DataQualityWarning, match=r"independent, .*\('Country 8' from 2000-01-01, 'Country 9'"):
        series = read_csv(path)
    assert series.columns == [f"Country {k}" for k in range(12)] and series.options.channels == "independent"
    expected = fitting_input_size(24, 5, "holdout", None)
    assert default_input_size(series, TrainSettings(horizon=5)) == expected == 5
    # where the whole table's input leaves no series out, it is kept: 64-year series and one of 60 (20 steps,
    # not the 60-year one's 19)
    frame = series.frame[[f"Country {k}" for k in range(8)]].copy()
    frame.iloc[:4, 0] = np.nan
    assert fitting_input_size(60, 5, "7:1:2", None) == 19
    long_ones = dataclasses.replace(series, frame=frame)
    assert default_input_size(long_ones, TrainSettings(horizon=5)) == fitting_input_size(64, 5, "7:1:2", None)
    out = tmp_path / "wdi"
    tiny = "--d-model 8 --n-heads 2 --fold 2 --e-layers 1 --left-rank 4 --right-rank 2 --max-epochs 1"
    argv = ["train", "--csv", str(path), "--horizon", "5", *tiny.split(), "--seeds", "1", "--no-progress"]
    with pytest.warns(DataQualityWarning, match=r"left out 1 of 12 series too short .*: 'Country 11'$"):
        assert main([*argv, "--out", str(out)]) == 0
    forecast = tmp_path / "f.csv"
    left_out = r"note: model 'wdi' forecasts no series 'Country 11': left out in training, too short"  # h66
    with pytest.warns(DataQualityWarning, match=left_out):
        assert main(["predict", "--model", str(out), "--csv", str(path), "--output", str(forecast)]) == 0
    assert list(pd.read_csv(forecast).columns) == ["period", *[f"Country {k}" for k in range(11)]]


def test_a_header_of_several_lines_takes_the_line_that_tells_columns_apart(tmp_path):
    lines = ["Table 2.1: Unemployment", "Country,Germany,France", "Unit,%,%", "Seasonal adjustment,SA,SA"]
    lines += [f"{year}Q{q},{year - 2000 + q / 10},{10 + q}" for year in (2020, 2021) for q in range(1, 5)]
    frame, freq, note = read_noted(write(tmp_path, "table.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["Germany", "France"] and freq == "QS-JAN"
    np.testing.assert_array_equal(frame["France"], [11, 12, 13, 14] * 2)
    assert note.endswith("note: named the columns from 1 line(s) above the header: Country, Germany, France; "
                         "skipped 2 metadata line(s) before the data")  # fmt: skip


def test_empty_columns_without_a_name_are_dropped_and_named_ones_kept(tmp_path):
    """Excel's trailing ",,," (and a header shorter than its rows); a column named in the header, even
    'Unnamed: 3', is left out as a column without values, by name."""
    rows = "".join(f"2020-{month:02d}-01,{month},{month / 2},,,\r\n" for month in range(1, 13))
    for name, header in [("excel.csv", "date,a,b,,,\r\n"), ("short.csv", "date,a,b\r\n")]:
        frame, freq, note = read_noted(write(tmp_path, name, header + rows))
        assert freq == "MS" and list(frame.columns) == ["a", "b"]
        np.testing.assert_array_equal(frame["b"], np.arange(1, 13) / 2)
        assert note == f"{tmp_path / name}: note: dropped 3 empty column(s) without a name"
    named = write(tmp_path, "named.csv", "date,a,b,Unnamed: 3,,\r\n" + rows)
    frame, _, note = read_noted(named)
    assert list(frame.columns) == ["a", "b"] and "left out column(s) 'Unnamed: 3': no values at all" in note


def test_summary_rows_after_the_data_are_skipped_and_named(tmp_path):
    rows = "".join(f"2020-{month:02d}-01,{month},{10 * month}\n" for month in range(1, 13))
    footer = ",,\nTotal,78,780\nAverage,6.5,65\nSource: x\n"  # a blank row, two summaries, a note
    path = write(tmp_path, "totals.csv", "date,a,b\n" + rows + footer)
    frame, freq, note = read_noted(path)
    assert freq == "MS" and len(frame) == 12
    np.testing.assert_array_equal(frame["b"], 10 * np.arange(1, 13))
    assert note == (
        f"{path}: note: skipped 1 metadata line(s) after the data; skipped 2 summary row(s) after the data: "
        "line 15 'Total', line 16 'Average'"
    )
    # a label among the dates is no summary: refused as before
    middle = write(tmp_path, "middle.csv", "date,a,b\n" + rows.replace("2020-05-01", "Total"))
    assert "has 1 value(s) that are not timestamps: line 6 'Total'" in one_line_error(middle)


@pytest.mark.parametrize("span", ["2008-2022", "2008\u20132022", "2008 - 2022"])
def test_a_total_over_a_yearly_tables_years_is_a_summary_row(tmp_path, span):
    """'2008-2022' below the years 2008 ... 2022: the file was refused as having no date column (h111 F5).
    Fiscal years and spans that continue the rows above are steps, as before."""
    rows = "".join(f"{year},{5000 + year - 2008}\n" for year in range(2008, 2023))
    path = write(tmp_path, "years.csv", f"Year,Value\n{rows}{span},75105\n")
    frame, freq, note = read_noted(path)
    assert freq == "YS-JAN" and len(frame) == 15 and frame["Value"].iloc[-1] == 5014
    assert note == f"{path}: note: skipped 1 summary row(s) after the data: line 17 {span!r}"
    fiscal = "".join(f"{year}-{year + 1},{year - 1990}\n" for year in range(2000, 2021))
    assert len(read_csv(write(tmp_path, "fiscal.csv", "Year,Revenue\n" + fiscal)).frame) == 21
    spans = "".join(f"{year}-{year + 5},{year % 7}\n" for year in range(1950, 2020, 5))
    assert "has 14 value(s)" in one_line_error(write(tmp_path, "spans.csv", "Period,Growth\n" + spans))


def test_a_year_by_month_table_is_one_monthly_series(tmp_path):
    """NOAA's El Nino table (YEAR, JAN ... DEC) and BLS's (Year, Jan ... Dec, HALF1, HALF2): one row per
    year of twelve months, read in order as one monthly series, not as twelve yearly ones."""
    years = range(2015, 2025)
    rows = [["Year", *[month.title() for month in MONTHS], "HALF1", "HALF2"]]
    for year in years:
        cells = [f"{12 * (year - 2015) + month}" for month in range(12)]
        rows.append([str(year), *(cells[:9] + ["", "", ""] if year == 2024 else cells), "0", "0"])
    path = write(tmp_path, "bls.csv", "\n".join(",".join(row) for row in rows) + "\n")
    frame, freq, note = read_noted(path)
    assert freq == "MS" and frame.columns.tolist() == ["value"] and len(frame) == 9 * 12 + 9
    assert frame.index[0] == pd.Timestamp("2015-01-01") and frame.index[-1] == pd.Timestamp("2024-09-01")
    np.testing.assert_array_equal(frame["value"].to_numpy(), np.arange(117.0))
    assert note.startswith(
        f"{path}: note: read the year-by-month table as one monthly series 'value': 10 years ('Year') x 12 "
        "month columns, dropping the summary column(s) 'HALF1', 'HALF2'; dropped the last 3 row(s), empty "
        "before the series starts or after it ends"
    )


@pytest.mark.parametrize("publisher", ["swiss", "gistemp"])
def test_year_by_month_tables_in_other_languages_with_their_summaries_and_markers(tmp_path, publisher):
    """The Swiss FSO's CPI (Jahr, Januar ... Dezember, Jahresdurchschnitt; a title above, a source below, so
    the years are text) and NASA's GISTEMP (Year, Jan ... Dec, J-D, D-N, DJF ... SON; '***' for months to
    come): each one monthly series, not a yearly panel of twelve or eighteen series."""
    german = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
              "November", "Dezember"]  # fmt: skip
    months = german if publisher == "swiss" else [month.title() for month in MONTHS]
    summaries = ["Jahresdurchschnitt"] if publisher == "swiss" else ["J-D", "D-N", "DJF", "MAM", "JJA", "SON"]
    rows = ["Landesindex der Konsumentenpreise" if publisher == "swiss" else "Land-Ocean: Global Means",
            ",".join(["Jahr" if publisher == "swiss" else "Year", *months, *summaries])]  # fmt: skip
    for year in range(2020, 2024):
        cells = [f"{12 * (year - 2020) + month}" for month in range(12)]
        cells = cells[:3] + ["***"] * 9 if year == 2023 else cells
        rows.append(",".join([str(year), *cells, *["1"] * len(summaries)]))
    rows += ["Quelle: BFS"] if publisher == "swiss" else []
    frame, freq, note = read_noted(write(tmp_path, f"{publisher}.csv", "\n".join(rows) + "\n"))
    assert freq == "MS" and frame.columns.tolist() == ["value"] and frame.index[-1] == pd.Timestamp("2023-03")
    np.testing.assert_array_equal(frame["value"].to_numpy(), np.arange(39.0))
    assert f"x 12 month columns, dropping the summary column(s) {', '.join(map(repr, summaries))}" in note


def test_a_year_by_quarter_table_is_one_quarterly_series_and_other_columns_keep_the_table(tmp_path):
    quarters = write(tmp_path, "q.csv", "year,Q1,Q2,Q3,Q4\n2020,1,2,3,4\n2021,5,6,7,8\n2022,9,10,11,12\n")
    frame, freq, _ = read_noted(quarters)
    assert freq == "QS-JAN" and frame["value"].tolist() == list(np.arange(1.0, 13.0))
    # a column that is neither a season nor a summary: a table of yearly series, read as before
    text = "year,Q1,Q2,Q3,Q4,gdp\n2020,1,2,3,4,5\n2021,5,6,7,8,9\n2022,9,10,11,12,3\n"
    other = write(tmp_path, "o.csv", text)
    series = read_csv(other)
    assert series.freq == "YS-JAN" and series.columns == ["Q1", "Q2", "Q3", "Q4", "gdp"]


def test_columns_of_dates_beside_the_values_are_parsed_a_bounded_number_of_times(tmp_path, monkeypatch):
    """Ten columns of `01/01/2020 12:00 AM` beside 200 rows: sniffing parsed each cell of each row as a
    period on its own (4,386 parses, 20 s of a server's CPU for a 70 KB upload). The header's runs of
    periods are parsed whole now, and rows without a number are no header of years."""
    from forecaster.data import wide

    parses = []
    monkeypatch.setattr(wide, "_dates", lambda texts, parse=wide._dates: parses.append(1) or parse(texts))
    hours = pd.date_range("2020-01-01", periods=200, freq="h")
    frame = pd.DataFrame({"date": hours, "load": np.arange(200.0)})
    for column in range(10):
        frame[f"stamp {column}"] = hours.strftime("%m/%d/%Y %I:%M %p")
    path = tmp_path / "stamps.csv"
    frame.to_csv(path, index=False)
    series = read_csv(path)
    assert list(series.columns) == ["load"] and len(series) == 200
    assert len(parses) < 100  # a few per line sniffed, and no more for more columns or rows


def test_a_first_row_of_values_a_year_could_be_is_a_series_not_a_header(tmp_path):
    """Eurostat's deaths by month: Estonia's 1,200-1,500 a month are whole numbers a year could be, and the
    row was skipped as a second header of years (Estonia silently gone). A header's years are in order and
    evenly spaced; values are not."""
    months = pd.date_range("2015-01-01", periods=36, freq="MS").strftime("%Y-%m").tolist()
    rng = np.random.default_rng(3)
    rows = {name: rng.integers(low, low + 500, 36) for name, low in (("Estonia", 1200), ("Lithuania", 3000))}
    lines = [",".join(['"GEO (Labels)"', *(f'"{month}"' for month in months)])]
    lines += [",".join([f'"{name}"', *map(str, values)]) for name, values in rows.items()]
    frame, freq, note = read_noted(write(tmp_path, "demo_mmonth.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["Estonia", "Lithuania"] and freq == "MS" and len(frame) == 36
    np.testing.assert_array_equal(frame["Estonia"], rows["Estonia"])
    assert "metadata" not in note


def test_a_second_table_under_its_title_and_the_header_again_is_left_out(tmp_path):
    """Kenneth French's factors: the monthly table, then "Annual Factors: January-December" above the same
    header and the yearly rows, then a copyright line: "no date column found". A header repeated with no title
    above it (two files joined) is still refused."""
    months = [f"{1926 + (6 + k) // 12}{(6 + k) % 12 + 1:02d}" for k in range(60)]
    lines = ["This file was created by CMPT_ME_BEME_RETS using the 202401 CRSP database.", "",
             ",Mkt-RF,SMB,HML,RF"] + [f"{month},   {k / 10:.2f},   -3.65,   -4.39,    0.18"
                                        for k, month in enumerate(months)]  # fmt: skip
    annual = ["", " Annual Factors: January-December ", ",Mkt-RF,SMB,HML,RF",
              "1927,   22.17,    5.50,    1.08,    2.25", "1928,   17.00,   13.35,   -5.70,    2.33", "",
              "Copyright 2024 Kenneth R. French"]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "F-F_Factors.CSV", "\n".join(lines + annual)))
    assert freq == "MS" and len(frame) == 60 and frame["Mkt-RF"].iloc[-1] == 5.9
    assert "skipped 1 metadata line(s) before the data and 5 after" in note  # blank lines uncounted
    one_line_error(write(tmp_path, "joined.csv", "\n".join(lines + lines[2:])))  # not silently cut short


def test_years_in_merged_cells_above_their_quarters_or_months_head_a_wide_table(tmp_path):
    """ABS, Statistics Canada and ONS print a wide table's periods in two lines: each year in a cell merged
    over its quarters or months. The years were taken as the header and the parts as a row of data (no date
    column found); each column is named by both, "2019 Q1" ... "2021 Q4"."""
    years = "Region" + "".join(f",{year},,," for year in (2019, 2020, 2021))
    lines = [years, "," + ",".join(["Q1", "Q2", "Q3", "Q4"] * 3), "North," + ",".join(map(str, range(1, 13))),
             "South," + ",".join(map(str, range(2, 14)))]  # fmt: skip
    frame, freq, _ = read_noted(write(tmp_path, "quarters.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["North", "South"] and freq == "QS-JAN"
    assert frame.index.equals(pd.date_range("2019-01-01", periods=12, freq="QS", name="period"))
    np.testing.assert_array_equal(frame["South"], np.arange(2, 14))
    months = pd.date_range("2022-01-01", periods=14, freq="MS").strftime("%b").tolist()
    lines = ["Table 5: Employed persons", "", "Industry,2022" + "," * 12 + "2023,", "," + ",".join(months),
             "Mining," + ",".join(map(str, range(14))), "", "Source: a statistics office"]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "months.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame.index[[0, -1]].equals(pd.DatetimeIndex(["2022-01-01", "2023-02-01"]))
    assert "('2022 Jan' ... '2023 Feb')" in note and frame["Mining"].iloc[-1] == 13
    header_of_data = ["Region,2019,2020,2021", ",1,2,3", "North,4,5,6"]  # a row of numbers: data, no parts
    frame, _, _ = read_noted(write(tmp_path, "years.csv", "\n".join(header_of_data) + "\n"))
    assert len(frame) == 3 and frame.index[0] == pd.Timestamp("2019-01-01")
    # the BEA's NIPA tables: each year written over each of its quarters, after two columns naming the rows
    bea = ["Line,," + ",".join(str(year) for year in (2022, 2023) for _ in range(4)),
           "Line,," + ",".join(["Q1", "Q2", "Q3", "Q4"] * 2),
           '1,"Gross domestic product",' + ",".join(f'"25,{k}00.5"' for k in range(8)),
           '2,"Goods",' + ",".join(str(k) for k in range(8))]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "nipa.csv", "\n".join(bea) + "\n"))
    assert freq == "QS-JAN" and list(frame.columns) == ["Gross domestic product", "Goods"]
    assert frame.index[-1] == pd.Timestamp("2023-10-01") and frame.iloc[-1, 0] == 25_700.5


def test_kosis_months_heading_a_wide_table_as_text_are_periods(tmp_path):
    """KOSIS's wide download heads its months "2021.01" ... "2021.12": numbers to the eye, so no period
    columns were found and the file had no date column."""
    months = pd.date_range("2021-01-01", periods=24, freq="MS")
    header = "시도별," + ",".join(f"{month:%Y.%m}" for month in months)
    rows = [header, *(f"{region}," + ",".join(f"{100 + k + j / 10:.2f}" for j in range(24))
                      for k, region in enumerate(["전국", "서울특별시"]))]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "kosis.csv", "\n".join(rows) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["전국", "서울특별시"]
    assert frame.index[-1] == pd.Timestamp("2022-12-01")
    assert frame["서울특별시"].iloc[-1] == pytest.approx(103.3)


def test_a_tab_separated_long_table_keeps_the_words_of_its_cells_together(tmp_path):
    """SCB's and Kaggle's tab-separated exports: `Stockholm county<TAB>2018-01<TAB>380.0`. Split on spaces the
    rows were one column wider and as regular, so spaces won: series 'county' and 'city' keyed by the month,
    values from 'persons'. Tabs that give every row one width now win over the words between them."""
    months = pd.period_range("2018-01", periods=24, freq="M").astype(str)
    regions = (("Stockholm county", 380), ("Stockholm city", 200))
    rows = [f"{region}\t{month}\t{value:.1f}" for region, base in regions
            for month, value in zip(months, base + np.arange(24.0), strict=True)]  # fmt: skip
    path = write(tmp_path, "unemployment.tsv", "\n".join(["region\tmonth\tunemployed persons", *rows]) + "\n")
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["Stockholm county", "Stockholm city"] and freq == "MS"
    assert "keyed by column 'region'" in note and "'unemployed persons'" in note
    np.testing.assert_array_equal(frame["Stockholm city"], 200 + np.arange(24.0))


@pytest.mark.parametrize("separator", [",", ";", "|"])
def test_separators_written_between_spaces_split_the_columns(tmp_path, separator):
    """`date , sales , price`: split on spaces every row was one cell wider than on the separator and as
    regular, so spaces won and the lone separators were read as columns (',' named twice: refused)."""
    months = pd.date_range("2020-01-01", periods=30, freq="MS")
    sales, price = 100 + np.arange(30.0), 5 + np.arange(30.0) / 4
    rows = [f"{m:%Y-%m-%d} {separator} {s:.2f} {separator} {p:.2f}" for m, s, p in zip(months, sales, price,
                                                                                        strict=True)]
    text = "\n".join([f"date {separator} sales {separator} price", *rows]) + "\n"
    path = write(tmp_path, "padded.csv", text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        series = read_csv(path)
    said = [] if separator == "," else [f"{path}: note: read values separated by {DELIMITERS[separator]}"]
    assert [str(warning.message) for warning in caught] == said
    assert list(series.frame.columns) == ["sales", "price"] and series.freq == "MS"
    assert series.frame.index.equals(pd.DatetimeIndex(months, name="date"))
    np.testing.assert_array_equal(series.frame["sales"], sales)
    np.testing.assert_array_equal(series.frame["price"], price)


def test_a_wide_table_of_thousands_with_a_gap_is_read_wide(tmp_path):
    """A World Bank / WEO-like table of "1,037.1" values with one empty cell: the period column '2001', two
    cells of the same "1,037.1" beside a blank, read as dates (the year 2037), so the table was taken for
    one dated by its column '2001' and refused as series in rows (h47 F19). A period of the header is no
    date column."""
    years = range(2000, 2020)
    values = {"Australia": 1000 + 37.1 * np.arange(20), "Mexico": 1000 + 37.1 * np.arange(20)}
    rows = [",".join(["Country", *map(str, years)])]
    for name, series in values.items():
        cells = ["" if (name, k) in (("Australia", 19), ("Mexico", 10)) else f'"{v:,.1f}"'
                 for k, v in enumerate(series)]  # fmt: skip
        rows.append(",".join([name, *cells]))
    frame, freq, note = read_noted(write(tmp_path, "wdi.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == ["Australia", "Mexico"] and freq == "YS-JAN"
    assert frame.index.equals(pd.date_range("2000-01-01", periods=20, freq="YS", name=frame.index.name))
    np.testing.assert_allclose(frame["Mexico"], values["Mexico"], rtol=1e-12)  # the gap interpolated
    assert np.isnan(frame["Australia"].iloc[-1]) and "read the wide layout: 2 row(s)" in note


@pytest.mark.parametrize("first", [1000, 900])
def test_thousands_separators_without_quotes_are_refused_naming_the_line(tmp_path, first):
    """`2020-01-01,1,000` under `date,sales`: read as 'sales' 1 and 'column 3' 0 without a word, or where the
    values pass 999 mid-file, refused as "column 'month' ... 980 is not a month number" (h47 F2, F9)."""
    rows = ["date,sales", *(f"{2000 + k}-01-01,{first + 37 * k:,}" for k in range(30))]
    line = 2 if first == 1000 else 5  # 900 + 37 * 3 = 1,011
    message = one_line_error(write(tmp_path, "sales.csv", "\n".join(rows) + "\n"))
    assert message.endswith(f"line {line} has 3 fields under a header of 2, its last ones "
                            f"'{first + 37 * (line - 2):,}': a number written with a thousands separator and "
                            'no quotes; expected such numbers quoted ("1,000") or written without separators '
                            "(1000)")  # fmt: skip


@pytest.mark.parametrize(("cell", "said"), [
    ("-inf", "column 'value' holds text where numbers are expected: line 10 '-inf' (1 cell(s) in total)"),
    ("xyz", "column 'value' holds text where numbers are expected: line 10 'xyz' (1 cell(s) in total)"),
])  # fmt: skip
def test_a_flag_is_stripped_from_a_marker_only_apart_from_it(tmp_path, cell, said):
    """Beside a '..' marker, `-inf` was read as the marker '-' flagged 'inf', and `xyz` as 'x' flagged 'yz':
    missing values, interpolated (h47 F7); the refusal of a cell pandas reads named the '..' (F8). Eurostat's
    ': c' (confidential) is a marker with its flag."""
    values = [f"{100 + k}" for k in range(30)]
    values[4], values[8] = "..", cell
    rows = ["date,value", *(f"{2020 + k // 12}-{k % 12 + 1:02d}-01,{v}" for k, v in enumerate(values))]
    assert said in one_line_error(write(tmp_path, "a.csv", "\n".join(rows) + "\n"))
    values[8] = ": c"
    rows = ["date,value", *(f"{2020 + k // 12}-{k % 12 + 1:02d}-01,{v}" for k, v in enumerate(values))]
    frame, _, note = read_noted(write(tmp_path, "b.csv", "\n".join(rows) + "\n"))
    assert "read 2 cell(s) marked '..', ':' as missing; stripped value flags (c) from 1 cell(s)" in note
    assert frame["value"].iloc[8] == pytest.approx(108.0)  # interpolated


@pytest.mark.parametrize("breaks", [1, 3])
def test_a_quoted_title_spanning_lines_above_the_header_keeps_the_header(tmp_path, breaks):
    """A title cell with line breaks (Excel's Alt-Enter) above `month,rate`: pandas skips records, not lines,
    so skipping the title's lines took the header and the first rows too; the series was named '1.1000' and
    60 months read as 59, said only as a skipped metadata line (h75 F1)."""
    title = '"' + "\n".join(["Exchange rates, monthly."] + [f"Note {k}." for k in range(breaks)]) + '"'
    months = pd.date_range("2015-01-01", periods=60, freq="MS")
    rows = [f"{month:%Y-%m},{1.1 + k / 1000:.4f}" for k, month in enumerate(months)]
    text = "\n".join([title, "month,rate", *rows]) + "\n"
    frame, freq, note = read_noted(write(tmp_path, "rates.csv", text))
    assert list(frame.columns) == ["rate"] and freq == "MS"
    assert frame.index.equals(pd.DatetimeIndex(months, name="month"))
    np.testing.assert_allclose(frame["rate"], 1.1 + np.arange(60) / 1000)
    assert note.endswith("skipped 1 metadata line(s) before the data")


def _monthly_rows_with_a_comment(breaks: int) -> list[str]:
    """`month,rate,comment` rows, the sixth's comment a quoted cell of `breaks` line breaks, the 18th's rate
    the text 'abc'."""
    months = pd.date_range("2015-01-01", periods=30, freq="MS")
    rows = [f"{month:%Y-%m},{1.1 + k / 1000:.4f}," for k, month in enumerate(months)]
    rows[5] += '"' + "\n".join(["revised,"] + ["see notes"] * breaks) + '"'
    rows[17] = f"{months[17]:%Y-%m},abc,"
    return rows


@pytest.mark.parametrize(
    ("above", "header", "between"),
    [
        ([], "month,rate,comment", ""),  # h75 F13: line 32 for the 'abc' on file line 34
        ([], 'month,"rate\n(EUR/USD)",comment', ""),  # a header cell of two lines
        ([], "month,rate,comment", "\n"),  # blank lines between the rows, which pandas skips
        (['"Exchange rates,\nmonthly"', "Source: a bank", ""], "month,rate,comment", ""),  # from the header
    ],
)
def test_a_data_row_is_named_by_the_file_line_grep_finds_below_quoted_line_breaks(
    tmp_path, above, header, between
):
    """pandas counts records, not lines: a comment cell of three lines above the text 'abc' made the refusal
    name line 32 for the cell on file line 34 (h75 F13). Every message naming a data row's line counts the
    lines its record and those above span (quoted line breaks, blank lines)."""
    text = "\n".join([*above, header, *(row + between for row in _monthly_rows_with_a_comment(2))]) + "\n"
    path = write(tmp_path, "rates.csv", text)
    found = 1 + text.split("\n").index(next(line for line in text.split("\n") if ",abc," in line))
    message = one_line_error(path)
    assert "holds text where numbers are expected" in message
    skip = sum(part.count("\n") + 1 for part in above)  # the context's header is file line skip + 1
    assert f"line {found - skip} 'abc'" in message
    assert (f"from the header, which is file line {skip + 1})" in message) == (skip > 0)  # said only then


@pytest.mark.parametrize("name", ["rates.csv", "rates.csv.gz"])
def test_notes_and_date_part_refusals_name_file_lines_below_quoted_line_breaks(tmp_path, name):
    """The note on exact duplicate rows and a refusal of a month number name the file's lines too, in a
    compressed file as well (h75 F13: every message naming a line, one helper)."""
    rows = _monthly_rows_with_a_comment(3)
    rows[17] = rows[16]  # an exact duplicate on file line 22
    text = "month,rate,comment\n" + "\n".join(rows) + "\n"
    _, _, note = read_noted(write(tmp_path, name, text))
    assert "dropped 1 exact duplicate row(s)" in note and "line): line(s) 22" in note
    parts = ["year,month,rate,comment"] + [f"{2015 + k // 12},{k % 12 + 1},{k}," for k in range(30)]
    parts[6] += '"a\nb\nc"'
    parts[20] = "2016,13,19,"  # file line 23
    message = one_line_error(write(tmp_path, "p" + name, "\n".join(parts) + "\n"))
    assert "column 'month' line 23: 13 is not a month number" in message


def test_record_starts_follow_quotes_and_blank_lines_as_pandas_does():
    """The file line each data record starts on: a quoted cell's breaks (a doubled quote in it) stay in its
    record, blank lines and lines of spaces are none, CRLF is one break; `LineMap` keeps rows' numbers as
    they are where the count differs from pandas' rows (a stray quote, '12"')."""
    text = 'title\nmonth,rate\n2015-01,"a ""b""\nc"\n\n  \r\n2015-02,1\r\n2015-03,2\n'
    assert record_starts(text.encode(), 1, header=True).tolist() == [2, 6, 7]
    assert pd.read_csv(io.StringIO(text), skiprows=1).shape[0] == 3
    assert record_starts(text.encode(), 2, header=False).tolist() == [2, 6, 7]
    spans = LineMap(lambda: text.encode(), 1, True, records=3)
    assert [spans.extra(row) for row in range(3)] == [0, 3, 3]
    stray = LineMap(lambda: b'a,b\n1,12" x\n2,"y\nz"\n3,4\n', 0, True, records=3)
    assert [stray.extra(row) for row in range(3)] == [0, 0, 0]

"""Workbooks read like the CSV of their data sheet: the sheet with the most numbers, its title rows skipped,
periods as columns turned into rows; one line for what cannot be read."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from forecaster.cli import main
from forecaster.data import read_csv
from forecaster.errors import DataError


def _read(path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        series = read_csv(path)
    return series, " ".join(str(warning.message) for warning in caught)


def test_the_data_sheet_is_read_after_a_contents_sheet_and_title_rows(tmp_path):
    path = tmp_path / "gdp.xlsx"
    quarters = pd.date_range("2000-01-01", periods=40, freq="QS")
    values = np.round(100 + np.arange(40) * 0.5, 1)
    with pd.ExcelWriter(path) as workbook:
        contents = pd.DataFrame({"Contents": ["Table 1: GDP", "Notes"]})
        contents.to_excel(workbook, sheet_name="Contents", index=False)
        title = pd.DataFrame([["Table 1. GDP", None], ["EUR bn", None], ["Quarter", "GDP"]])
        title.to_excel(workbook, sheet_name="Table 1", index=False, header=False)
        body = pd.DataFrame({"quarter": quarters, "gdp": values})
        body.to_excel(workbook, sheet_name="Table 1", index=False, header=False, startrow=3)
    series, said = _read(path)
    assert series.columns == ["GDP"] and series.freq == "QS-JAN"
    assert list(series.index) == list(quarters)
    np.testing.assert_array_equal(series.values[:, 0], values)
    assert "read sheet 'Table 1' (the most numbers; also in the workbook: Contents)" in said
    assert "skipped 2 metadata line(s) before the data" in said


def test_years_as_columns_in_a_workbook_become_rows(tmp_path):
    path = tmp_path / "wdi.xlsx"
    years = list(range(1990, 2020))
    table = pd.DataFrame(
        [["Germany", "DEU", *np.arange(30.0)], ["France", "FRA", *(100 + np.arange(30.0))]],
        columns=["Country Name", "Country Code", *years],  # Excel stores the year headers as numbers
    )
    table.to_excel(path, index=False)
    series, _ = _read(path)
    assert series.columns == ["Germany", "France"] and series.freq == "YS-JAN"
    assert series.index[0] == pd.Timestamp("1990-01-01") and len(series) == 30
    np.testing.assert_array_equal(series.values[-1], [29.0, 129.0])


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "old.xls",
            b"\xd0\xcf\x11\xe0",
            "old.xls: .xls workbooks are not read; expected .xlsx, or the sheet saved as CSV",
        ),
        (
            "broken.xlsx",
            b"PK\x03\x04 not really a zip",
            "broken.xlsx: not an .xlsx workbook (a zip archive of sheets)",
        ),
        (
            "empty_zip.xlsx",
            b"PK\x05\x06" + b"\x00" * 18,
            "empty_zip.xlsx: cannot be read as an .xlsx workbook",
        ),
    ],
)
def test_a_workbook_that_cannot_be_read_is_one_line(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DataError, match=re.escape(message)):
        read_csv(path)
    assert main(["data", "describe", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_a_text_file_named_like_an_old_workbook_is_read_as_text(tmp_path):
    """The IMF's World Economic Outlook database downloads as WEOOct2023all.xls: tab-separated UTF-16 text
    (a BOM, no workbook's OLE2 header). It was refused as an .xls workbook; read as the text it is."""
    years = list(range(1990, 2021))
    lines = ["WEO Country Code\tCountry\tSubject Descriptor\tUnits\t" + "\t".join(map(str, years))]
    for code, country, level in (("134", "Germany", 100.0), ("132", "France", 80.0)):
        values = "\t".join(f"{level + 1.5 * k:,.3f}" for k in range(len(years)))
        lines.append(f"{code}\t{country}\tGross domestic product\tNational currency\t{values}")
    path = tmp_path / "WEOOct2023all.xls"
    path.write_bytes("\r\n".join(lines + [""]).encode("utf-16"))
    series, _ = _read(path)
    assert series.columns == ["Germany", "France"] and len(series) == len(years)
    np.testing.assert_allclose(series.values[:, 1], 80.0 + 1.5 * np.arange(len(years)))


def test_a_workbook_without_numbers_says_so(tmp_path):
    path = tmp_path / "notes.xlsx"
    pd.DataFrame({"Notes": ["see table 2", "provisional"]}).to_excel(path, index=False)
    with pytest.raises(DataError, match="no sheet holds numbers"):
        read_csv(path)


def test_a_workbook_whose_xml_unpacks_past_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """245 KB of .xlsx held 90 MB of XML (6 million cells) and took 97 s before it failed: the sizes its
    members declare are summed first, against MAX_WORKBOOK_XML_BYTES (32 MiB; 64 KiB here)."""
    from forecaster.data import excel

    path = tmp_path / "cells.xlsx"
    pd.DataFrame({"date": pd.date_range("2000-01-01", periods=2000, freq="D"), "value": np.arange(2000.0),
                  "other": np.arange(2000.0)}).to_excel(path, index=False)  # fmt: skip
    assert read_csv(path).columns == ["value", "other"]  # within the bound
    monkeypatch.setattr(excel, "MAX_WORKBOOK_XML_BYTES", 2**16)
    with pytest.raises(DataError, match=r"cells.xlsx: its sheets unpack to \d+ MiB of XML, more than the 0"):
        read_csv(path)


def test_years_typed_as_numbers_head_columns_of_decimal_values(tmp_path):
    """A wide sheet of countries by years whose values have decimals: pandas made each column floats again,
    so the header read 1995.0, 1996.0, ... and no date was found."""
    path = tmp_path / "wide.xlsx"
    years = list(range(1995, 2010))
    rows = [["Country", *years], *([name, *(1.5 + 10 * c + np.arange(15) / 4)]
                                    for c, name in enumerate(["Austria", "Belgium"]))]  # fmt: skip
    pd.DataFrame(rows).to_excel(path, index=False, header=False)
    series, said = _read(path)
    assert series.columns == ["Austria", "Belgium"] and series.freq == "YS-JAN"
    assert series.index[0] == pd.Timestamp("1995-01-01") and series.index[-1] == pd.Timestamp("2009-01-01")
    np.testing.assert_allclose(series.values[:, 1], 11.5 + np.arange(15) / 4)


def test_a_year_heading_a_blank_cell_is_read_with_the_others(tmp_path):
    """World Bank style: years as numbers over whole values, one of them missing (Chile, 2012). The column
    holding the blank became floats, headed 2012.0, and the years before it were dropped as not periods."""
    path = tmp_path / "wide.xlsx"
    rows = [["Country", *range(2010, 2024)], ["Austria", *range(100, 114)], ["Chile", *range(120, 134)]]
    rows[2][3] = None
    pd.DataFrame(rows).to_excel(path, index=False, header=False)
    series, said = _read(path)
    assert series.index[0] == pd.Timestamp("2010-01-01") and len(series.index) == 14
    assert "filled 1 empty" in said
    np.testing.assert_array_equal(series.values[:, 0], np.arange(100, 114))


def test_a_sheet_is_chosen_by_name_or_number_and_an_unknown_one_is_listed(tmp_path, capsys):
    """A workbook of monthly and annual sheets (the annual one holds more numbers: more columns): --sheet
    reads the one named (its name in any case, or its number from 1), the default the one of most numbers;
    a sheet that is not there, or one without numbers, is one line naming the workbook's sheets."""
    path = tmp_path / "trade.xlsx"
    months = pd.date_range("2015-01-01", periods=48, freq="MS")
    years = pd.DataFrame({"year": range(1960, 2020)} | {f"c{k}": np.arange(60.0) + k for k in range(4)})
    with pd.ExcelWriter(path) as workbook:
        pd.DataFrame({"Notes": ["Source: customs"]}).to_excel(workbook, sheet_name="Notes", index=False)
        pd.DataFrame({"month": months, "exports": np.arange(48.0)}).to_excel(
            workbook, sheet_name="Monthly", index=False
        )
        years.to_excel(workbook, sheet_name="Annual", index=False)
    series, said = _read(path)
    assert series.freq == "YS-JAN" and "read sheet 'Annual' (the most numbers" in said
    for sheet in ("Monthly", " monthly ", "2"):
        series = read_csv(path, sheet=sheet)
        assert series.columns == ["exports"] and series.freq == "MS" and list(series.index) == list(months)
    listed = r"trade.xlsx: no sheet 'Quarterly'; expected a sheet's name or number: 1 'Notes', 2 'Monthly'"
    with pytest.raises(DataError, match=listed + ", 3 'Annual'$"):
        read_csv(path, sheet="Quarterly")
    with pytest.raises(DataError, match=r"sheet 'Notes' holds no numbers"):
        read_csv(path, sheet="1")
    csv = tmp_path / "trade.csv"
    pd.DataFrame({"month": months, "exports": np.arange(48.0)}).to_csv(csv, index=False)
    text = r"trade.csv: sheet='Monthly' chooses a sheet of an .xlsx workbook, and this file is read as text"
    with pytest.raises(DataError, match=text):
        read_csv(csv, sheet="Monthly")
    model = tmp_path / "model"
    argv = ["train", "--csv", str(path), "--sheet", "Monthly", "--model", "naive", "--horizon", "6"]
    assert main([*argv, "--out", str(model)]) == 0
    output = tmp_path / "forecast.csv"
    assert main(["predict", "--model", str(model), "--csv", str(path), "--sheet", "Monthly",
                 "--output", str(output)]) == 0  # fmt: skip
    assert pd.read_csv(output)["month"].iloc[0] == "2019-01-01"

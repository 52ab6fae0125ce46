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
from forecaster.errors import DataError, DataQualityWarning, MissingDateColumnsError


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


def test_numbers_stored_as_text_are_the_sheets_numbers(tmp_path):
    """Excel's "Number Stored as Text" cells ('12,000.0', workbooks exported from web tables) were counted as
    no numbers: "no sheet holds numbers", even with --sheet, and a contents sheet of table numbers was read
    instead (h82 F7). They count, and read as the same rows saved as CSV do."""
    from openpyxl import Workbook

    months = pd.date_range("2015-01-01", periods=60, freq="MS")
    workbook = Workbook()
    contents = workbook.active
    contents.title = "Contents"
    for k in range(1, 20):
        contents.append([f"Table {k}", k])
    data = workbook.create_sheet("Data")
    data.append(["Period", "Value"])
    for k, month in enumerate(months):
        data.append([month.strftime("%b %Y"), f"{12000 + 1.5 * k:,.1f}"])
    path = tmp_path / "text_numbers.xlsx"
    workbook.save(path)
    series, said = _read(path)
    assert "read sheet 'Data' (the most numbers; also in the workbook: Contents)" in said
    assert series.freq == "MS" and list(series.index) == list(months)
    np.testing.assert_allclose(series.values[:, 0], 12000 + 1.5 * np.arange(60))
    with pytest.warns(DataQualityWarning, match="read 60 number"):
        assert read_csv(path, sheet="Data").values.shape == (60, 1)


def test_date_cells_across_a_wide_header_are_its_periods(tmp_path):
    """A series per row under months as real date cells: pandas writes them '2018-01-01 00:00:00', which
    the wide header's periods did not take ("no date column found", h82 F8); in a CSV too."""
    from openpyxl import Workbook

    months = pd.date_range("2018-01-01", periods=48, freq="MS")
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["Series", *(month.to_pydatetime() for month in months)])
    for k in range(3):
        sheet.append([f"Region {k}", *(100.0 + 10 * k + np.arange(48))])
    path = tmp_path / "wide.xlsx"
    workbook.save(path)
    csv = tmp_path / "wide.csv"
    csv.write_text("Series," + ",".join(months.strftime("%Y-%m-%d %H:%M:%S")) + "\n"
                   + "".join(f"Region {k}," + ",".join(map(str, 100 + 10 * k + np.arange(48))) + "\n"
                             for k in range(3)))  # fmt: skip
    for source in (path, csv):
        series, _ = _read(source)
        assert series.columns == ["Region 0", "Region 1", "Region 2"] and series.freq == "MS"
        assert list(series.index) == list(months)
        np.testing.assert_array_equal(series.values[-1], [147.0, 157.0, 167.0])


def test_a_hidden_sheet_is_read_after_the_visible_ones_and_a_chosen_sheet_refused_is_named(tmp_path, capsys):
    """A hidden lookup sheet of more numbers was read instead of the visible data sheet, and the refusal
    ("no date column found") did not say which sheet it had read (h82 F10): visible sheets come first, and a
    refusal of a sheet chosen by its numbers names it and --sheet."""
    from openpyxl import Workbook

    months = pd.date_range("2018-01-01", periods=48, freq="MS")
    workbook = Workbook()
    data = workbook.active
    data.title = "Data"
    data.append(["date", "sales"])
    for k, month in enumerate(months):
        data.append([month.to_pydatetime(), 200.0 + k])
    lookup = workbook.create_sheet("lookup")
    lookup.append(["code", "factor", "weight"])
    for k in range(100):
        lookup.append([k, k * 0.1, k * 0.2])
    lookup.sheet_state = "hidden"
    path = tmp_path / "hidden.xlsx"
    workbook.save(path)
    series, said = _read(path)
    assert series.columns == ["sales"] and list(series.index) == list(months)
    assert "read sheet 'Data' (the most numbers of the visible sheets; also in the workbook: lookup " \
           "(hidden))" in said
    lookup.sheet_state = "visible"
    workbook.save(path)
    chosen = ("hidden.xlsx: read sheet 'lookup' (the most numbers; also in the workbook: Data; sheet "
              "(--sheet) names another): no date column found (looked for")  # fmt: skip
    with pytest.raises(DataError, match=re.escape(chosen)):
        read_csv(path)
    assert main(["data", "describe", str(path)]) == 2
    assert chosen in capsys.readouterr().err
    with pytest.raises(MissingDateColumnsError, match="read sheet 'lookup' .*: date column 'date' not found"):
        read_csv(path, date_col="date")  # of its type, which a model's reading catches
    assert read_csv(path, sheet="Data").columns == ["sales"]


def test_a_model_trained_on_a_named_sheet_reads_that_sheet(tmp_path, capsys):
    """A bundle trained with --sheet Monthly forgot the sheet: predict on the same workbook read the annual
    sheet of more numbers and refused it (h82 F9). It remembers it, as other reading options; rows given as
    a CSV or a DataFrame are one table, read without it. A workbook without that sheet is refused saying the
    name came from the model (the chooser's refusal read as if the user had named it)."""
    from forecaster.api import Forecaster

    months = pd.date_range("2015-01-01", periods=60, freq="MS")
    rows = pd.DataFrame({"date": months, "sales": 12000.0 + 7 * np.arange(60)})
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as workbook:
        rows.to_excel(workbook, sheet_name="Monthly", index=False)
        pd.DataFrame({"year": range(1990, 2020)} | {c: np.arange(30.0) for c in "wxyz"}).to_excel(
            workbook, sheet_name="Annual", index=False
        )
    model, output = tmp_path / "model", tmp_path / "forecast.csv"
    argv = ["train", "--csv", str(path), "--sheet", "Monthly", "--model", "naive", "--horizon", "3"]
    assert main([*argv, "--out", str(model)]) == 0
    csv = tmp_path / "monthly.csv"
    rows.to_csv(csv, index=False)
    for source in (path, csv):
        assert main(["predict", "--model", str(model), "--csv", str(source), "--output", str(output)]) == 0
        assert pd.read_csv(output)["date"].tolist() == ["2020-01-01", "2020-02-01", "2020-03-01"]
    forecast = Forecaster.load(model).predict(rows)
    assert list(forecast["sales"]) == [12413.0] * 3
    with pd.ExcelWriter(path) as workbook:  # this year's edition names the sheet otherwise
        rows.to_excel(workbook, sheet_name="Monthly data", index=False)
    said = (f"{path}: no sheet 'Monthly', which model 'model' was trained on; expected sheet (--sheet) "
            "naming this workbook's sheet of its rows: 1 'Monthly data'")  # fmt: skip
    assert main(["predict", "--model", str(model), "--csv", str(path), "--output", str(output)]) == 2
    assert capsys.readouterr().err.strip() == f"forecaster: error: {said}"
    assert main(["predict", "--model", str(model), "--csv", str(path), "--sheet", "1", "--output",
                 str(output)]) == 0  # fmt: skip

"""Shapes official statistics publish that were refused: quarter and year subtotal rows among a monthly
series, Eurostat's legend of special values after the data, Statistics Canada's F / x / .. / ... cells and
quality grades (12.3A to 12.3E), and footnote marks on values (89.8¹, 12.5†). Each is read as a
statistician reads it, said in the note; look-alikes (quarters, years, codes, units) are read as before."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from layout_checks import one_line_error, read_noted, write

from forecaster import Forecaster
from forecaster.data import DataQualityWarning, read_csv, read_frame
from forecaster.errors import DataError

MONTHS = pd.date_range("2015-01-01", "2023-12-01", freq="MS")
VALUES = np.round(100 + 10 * np.sin(np.arange(len(MONTHS)) / 5) + np.arange(len(MONTHS)) / 10, 1)


def _quiet(path, **options):
    """The series read from `path` without a reading note."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)
        return read_csv(path, **options)


def _monthly_with_subtotals(quarter: str, year: str | None = None) -> str:
    """A monthly table with each quarter's sum after its third month (and each year's after December)."""
    lines = ["Period,Retail sales"]
    for k, (month, value) in enumerate(zip(MONTHS, VALUES, strict=True)):
        lines.append(f"{month:%Y-%m},{value}")
        if month.month % 3 == 0:
            lines.append(f"{quarter.format(y=month.year, q=month.quarter)},{VALUES[k - 2 : k + 1].sum():.1f}")
        if year is not None and month.month == 12:
            lines.append(f"{year.format(y=month.year)},{VALUES[k - 11 : k + 1].sum():.1f}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "quarter", ["{y} Q{q}", "{y}Q{q}", "Q{q} {y}", "{y} {q}e kwartaal", "{y}  {q}e kwartaal"]
)
def test_quarter_subtotals_among_months_are_dropped(tmp_path, quarter):
    """'2019-01, 2019-02, 2019-03, 2019 Q1, 2019-04, ...': the quarter rows were refused as no timestamps
    (and '2019Q1', which pandas reads as January, as timestamps out of order); they are the months' sums.
    CBS StatLine's '2019 1e kwartaal' among its months was refused as "no date column found" (h111 F4)."""
    frame, freq, note = read_noted(write(tmp_path, "retail.csv", _monthly_with_subtotals(quarter)))
    assert freq == "MS" and frame.index.equals(pd.DatetimeIndex(MONTHS, name="Period"))
    np.testing.assert_array_equal(frame["Retail sales"], VALUES)
    shown = ", ".join(repr(quarter.format(y=2015, q=q)) for q in (1, 2, 3))
    assert (f"dropped 36 row(s) of quarters or years ({shown}, ...) among the monthly rows: subtotals of the "
            "months, no further steps") in note  # fmt: skip


@pytest.mark.parametrize("year", ["{y} Total", "{y}"])
def test_quarter_and_year_totals_among_months_are_dropped(tmp_path, year):
    """Each year's total ('2019 Total', or a bare '2019') after December's row and its fourth quarter."""
    frame, freq, note = read_noted(write(tmp_path, "sales.csv", _monthly_with_subtotals("{y} Q{q}", year)))
    assert freq == "MS" and frame.index.equals(pd.DatetimeIndex(MONTHS, name="Period"))
    np.testing.assert_array_equal(frame["Retail sales"], VALUES)
    assert "row(s) of quarters or years ('2015 Q1', '2015 Q2', '2015 Q3', ...) among the monthly rows" in note


@pytest.mark.parametrize("summary", ["Jahresdurchschnitt", "Total"])
def test_a_year_summary_row_among_year_and_month_columns_is_dropped(tmp_path, summary):
    """GENESIS writes "2019;Jahresdurchschnitt;..." after each December: refused as "not a month number"
    (h100 F12)."""
    lines = ["Jahr;Monat;Index"]
    names = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
             "November", "Dezember"]  # fmt: skip
    for month, value in zip(MONTHS[:48], VALUES[:48], strict=True):
        lines.append(f"{month.year};{names[month.month - 1]};{value}".replace(".", ","))
        if month.month == 12:
            lines.append(f"{month.year};{summary};{VALUES[:12].mean():.1f}".replace(".", ","))
    frame, freq, note = read_noted(write(tmp_path, "genesis.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame.index.equals(pd.DatetimeIndex(MONTHS[:48], name="Jahr+Monat"))
    np.testing.assert_array_equal(frame["Index"], VALUES[:48])
    assert f"dropped 4 row(s) of a year's summary ('2015 {summary}', '2016 {summary}'" in note


def test_date_from_naming_a_missing_column_beside_summary_rows_says_so(tmp_path):
    """`--date-from jahr,Monat` where the file writes `Jahr`, its Monat holding Jahresdurchschnitt rows: an
    internal KeyError (h106), not the column not found."""
    lines = ["Jahr;Monat;Index", *(f"{y};{m};{100 + m}" for y in (2015, 2016, 2017) for m in range(1, 13)),
             "2017;Jahresdurchschnitt;106,5"]  # fmt: skip
    with pytest.raises(DataError, match="date_from column\\(s\\) 'jahr' not found; columns are 'Jahr'"):
        read_csv(write(tmp_path, "genesis.csv", "\n".join(lines) + "\n"), date_from=["jahr", "Monat"])


def test_quarters_years_and_blocks_of_them_are_read_as_before(tmp_path):
    """No finer rows to keep: a file of quarters reads as quarters, of years as years, quarters with their
    years' totals as quarters; years, quarters and months in blocks (no subtotals beside their months) are
    refused as before; and a monthly file with one quarter row among months of other quarters is not
    read as a subtotal's."""
    quarters = pd.period_range("2015Q1", "2023Q4", freq="Q")
    lines = ["Quarter,GDP", *(f"{q.year} Q{q.quarter},{300 + k}" for k, q in enumerate(quarters))]
    series = _quiet(write(tmp_path, "gdp.csv", "\n".join(lines) + "\n"))
    assert series.freq == "QS-JAN" and series.frame["GDP"].tolist() == list(range(300, 336))
    years = "".join(f"{year},{year - 2000}\n" for year in range(2000, 2024))
    series = _quiet(write(tmp_path, "years.csv", "Year,GDP\n" + years))
    assert series.freq == "YS-JAN" and series.frame["GDP"].tolist() == list(range(24))
    totals = [*lines[:5], "2015,1206", *lines[5:]]
    frame, freq, note = read_noted(write(tmp_path, "totals.csv", "\n".join(totals) + "\n"))
    assert freq == "QS-JAN" and len(frame) == 36 and "among the quarter rows: a year's total" in note
    blocks = ["Period,Value", *(f"{year},{year}" for year in range(2015, 2020))]
    blocks += [f"{year} Q{q},{q}" for year in range(2015, 2020) for q in range(1, 5)]
    blocks += [f"{month:%Y-%m},{k}" for k, month in enumerate(MONTHS[:60])]
    assert "is not a period label of an ONS time series" in one_line_error(
        write(tmp_path, "blocks.csv", "\n".join(blocks) + "\n")
    )
    misplaced = ["Period,Value", *(f"{month:%Y-%m},{k}" for k, month in enumerate(MONTHS[:36]))]
    misplaced.insert(20, "2015 Q1,100")
    assert "'2015 Q1'" in one_line_error(write(tmp_path, "misplaced.csv", "\n".join(misplaced) + "\n"))


def _eurostat(delimiter: str) -> tuple[str, dict[int, str]]:
    """A legacy Eurostat download: flagged and ':' cells, the legend of special values and flags after it."""
    cells = {40: f"{VALUES[40]} e", 60: ": c", 61: ":", 70: f"{VALUES[70]} b", 106: f"{VALUES[106]} p",
             107: f"{VALUES[107]} p"}  # fmt: skip
    lines = [delimiter.join(["TIME", "GEO", "Value"])]
    for k, (month, value) in enumerate(zip(MONTHS, VALUES, strict=True)):
        lines.append(delimiter.join([f"{month:%YM%m}", "EU27_2020", cells.get(k, str(value))]))
    legend = [":;not available", "c;confidential", "b;break in time series", "e;estimated", "p;provisional"]
    lines += ["", "Special value:", *(entry.replace(";", delimiter) for entry in legend)]
    return "\n".join(lines) + "\n", cells


@pytest.mark.parametrize("delimiter", [";", ","])
def test_the_legend_after_eurostat_data_is_skipped_and_flags_read(tmp_path, delimiter):
    """The legend's lines ('c;confidential') were read as rows dated 'c' and refused; its flags on the
    values are dropped, ':' read as missing (filled between its neighbours)."""
    text, cells = _eurostat(delimiter)
    frame, freq, note = read_noted(write(tmp_path, "prc_hicp.csv", text))
    assert freq == "MS" and frame.index.equals(pd.DatetimeIndex(MONTHS, name="TIME"))
    written = [k for k in range(len(MONTHS)) if k not in (60, 61)]
    np.testing.assert_array_equal(frame["Value"].to_numpy()[written], VALUES[written])
    between = VALUES[59] + (VALUES[62] - VALUES[59]) * np.array([1 / 3, 2 / 3])
    np.testing.assert_allclose(frame["Value"].iloc[60:62], between)
    assert ("skipped the legend after the data: 6 line(s) from 'Special value:' (':' not available, 'c' "
            "confidential, 'b' break in time series, ...)") in note  # fmt: skip
    assert "read 2 cell(s) marked ':' as missing; stripped value flags (p, e, c, b) from 5 cell(s)" in note


def test_a_quoted_eurostat_download_with_its_flag_column_and_two_legends(tmp_path):
    """The quoted comma-separated export: a 'Flag and Footnotes' column, 'Special value:' and 'Available
    flags:' headings each over its entries."""
    lines = ['"TIME","GEO","UNIT","Value","Flag and Footnotes"']
    for k, (month, value) in enumerate(zip(MONTHS, VALUES, strict=True)):
        cell, flag = (f"{value} p", "p") if k >= 105 else (str(value), "")
        lines.append(f'"{month:%YM%m}","Euro area","Index, 2015=100","{cell}","{flag}"')
    lines += ["", '"Special value:",""', '":","not available"', '"Available flags:",""', '"p","provisional"']
    frame, freq, note = read_noted(write(tmp_path, "ei_cphi.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["Value"]
    np.testing.assert_array_equal(frame["Value"], VALUES)
    assert "skipped the legend after the data: 4 line(s) from 'Special value:' (':' not available, 'p' " \
        "provisional)" in note
    assert "stripped value flags (p) from 3 cell(s)" in note


def _statcan() -> tuple[str, list[int]]:
    """'As displayed' Statistics Canada values: each with its quality grade A to E, and F, x, .., ... cells;
    beside them the geography and a code column ('1001A')."""
    lines = ['"REF_DATE","GEO","Code","VALUE"']
    missing = {10: "F", 11: "x", 12: "..", 13: "..."}
    for k, (month, value) in enumerate(zip(MONTHS, VALUES, strict=True)):
        cell = missing.get(k, f"{value:,.1f}{'ABCDE'[k % 5]}")
        lines.append(f'"{month:%Y-%m}","Canada","{1001 + k}{"ABCDE"[k % 5]}","{cell}"')
    return "\n".join(lines) + "\n", list(missing)


def test_statistics_canada_grades_and_symbols_are_read(tmp_path):
    """'100.0A' to '98.7E' in every cell (B no billions), 'F' (too unreliable) with 'x', '..' and '...': the
    column was no numbers at all; the code column stays text."""
    text, missing = _statcan()
    path = write(tmp_path, "1410028701.csv", text)
    frame, freq, note = read_noted(path)
    assert freq == "MS" and list(frame.columns) == ["VALUE"]
    kept = [k for k in range(len(MONTHS)) if k not in missing]
    np.testing.assert_array_equal(frame["VALUE"].to_numpy()[kept], VALUES[kept])
    assert "read 4 cell(s) marked 'F', 'x', '..', '...' as missing" in note
    assert "dropped the quality grades A to E (Statistics Canada's) after 104 number(s)" in note
    assert "skipped non-numeric column(s) 'GEO', 'Code'" in note
    with pytest.warns(DataQualityWarning, match="dropped the quality grades A to E"):
        again = read_frame(pd.read_csv(path))
    np.testing.assert_array_equal(again.frame["VALUE"].to_numpy()[kept], VALUES[kept])


def test_a_few_graded_cells_and_f_and_codes_that_look_graded(tmp_path):
    """A few grades among plain values with an 'F' (was refused for the 'F'); a long table keyed by codes
    ('4.1A' on each month) stays a panel of those series; an id 'A12' stays text."""
    cells = [f"{value}" if k % 7 else f"{value}{'ABCDE'[k % 5]}" for k, value in enumerate(VALUES)]
    cells[20] = "F"
    lines = ["REF_DATE,Station,VALUE", *(f"{m:%Y-%m},A12,{c}" for m, c in zip(MONTHS, cells, strict=True))]
    frame, freq, note = read_noted(write(tmp_path, "few.csv", "\n".join(lines) + "\n"))
    kept = [k for k in range(len(MONTHS)) if k != 20]
    assert freq == "MS" and list(frame.columns) == ["VALUE"]
    np.testing.assert_array_equal(frame["VALUE"].to_numpy()[kept], VALUES[kept])
    assert "read 1 cell(s) marked 'F' as missing" in note
    assert "skipped non-numeric column(s) 'Station'" in note
    codes = ("1.1A", "2.3B", "4.0C")
    rows = [f"{month:%Y-%m-%d},{code},{k}" for k, month in enumerate(MONTHS[:24]) for code in codes]
    frame, _, _ = read_noted(write(tmp_path, "long.csv", "\n".join(["Date,Series,Value", *rows]) + "\n"))
    assert list(frame.columns) == ["1.1A", "2.3B", "4.0C"] and frame["4.0C"].tolist() == list(range(24))


def test_a_grade_b_among_grades_is_no_billion_and_graded_whole_numbers_are_refused_naming_the_fix(tmp_path):
    """A rate graded A or B on alternate months, its values repeating: '5.1B' was read as 5.1 billion. Whole
    numbers each with a letter ('300A') are written so by codes too: refused, saying what to do."""
    rates = np.round(5 + (np.arange(60) % 4) / 10, 1)
    lines = ["REF_DATE,VALUE", *(f"{MONTHS[k]:%Y-%m},{rate}{'AB'[k % 2]}" for k, rate in enumerate(rates))]
    frame, freq, note = read_noted(write(tmp_path, "rates.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame["VALUE"].tolist() == rates.tolist()
    assert "stripped value flags (a, b) from 60 cell(s)" in note and "billions" not in note
    lines = ["REF_DATE,VALUE", *(f"{m:%Y-%m},{300 + 7 * k}{'ABCDE'[k % 5]}" for k, m in enumerate(MONTHS))]
    message = one_line_error(write(tmp_path, "counts.csv", "\n".join(lines) + "\n"))
    assert message.endswith("expected at least one column of numbers besides the date; column 'VALUE' "
                            "holds numbers each followed by a letter A to E ('300A', ...): quality grades "
                            "(Statistics Canada's) or codes, not told apart: remove the letters to read the "
                            "numbers")  # fmt: skip


SUPERSCRIPTS = "¹²³⁴⁵⁶⁷⁸⁹⁰"


def test_footnote_marks_on_values_are_dropped(tmp_path):
    """'5.0¹', '4.9⁰', '10 000²', '8 500²‡', '4.4†', '7.1⁽ᵃ⁾' were text where numbers are expected; '12 m²'
    (a unit) stays text, and a year heading a wide table marked '2023¹' is that year."""
    rates, employed = np.round(VALUES / 20, 1), (VALUES * 100).astype(int)
    lines = ["Month,Unemployment rate,Employed,Area"]
    for k, month in enumerate(MONTHS):
        rate = f"{rates[k]}{SUPERSCRIPTS[k % 10] if k % 9 == 0 else ''}{'†' if k == 51 else ''}"
        rate = f"{rates[k]}⁽ᵃ⁾" if k == 50 else rate
        count = f"{employed[k]:,}".replace(",", " ") + ("²" if k % 13 == 0 else "") + ("‡" if k == 52 else "")
        lines.append(f'{month:%Y-%m},{rate},"{count}",{k} m²')
    path = write(tmp_path, "lfs.csv", "\n".join(lines) + "\n")
    frame, freq, note = read_noted(path)
    assert freq == "MS" and list(frame.columns) == ["Unemployment rate", "Employed"]
    np.testing.assert_array_equal(frame["Unemployment rate"], rates)
    np.testing.assert_array_equal(frame["Employed"], employed)
    assert "dropped footnote marks (², ¹, ⁰, ⁹, ⁸, ...) from 23 cell(s)" in note
    assert "skipped non-numeric column(s) 'Area'" in note
    with pytest.warns(DataQualityWarning, match="dropped footnote marks"):
        model = Forecaster(model="naive", horizon=4).fit(pd.read_csv(path))
    assert len(model.predict()) == 4
    wide = "Series,2019,2020,2021,2022,2023¹\nGDP,1.9,-5.0,4.1,2.5,1.2\nCPI,1.3,0.4,2.6,8.0,6.1\n"
    frame, freq, note = read_noted(write(tmp_path, "wide.csv", wide))
    assert freq == "YS-JAN" and frame.index[-1] == pd.Timestamp("2023-01-01") and frame["CPI"].iloc[-1] == 6.1
    assert "read 1 date(s) heading the columns without their footnote marks (¹)" in note


def test_a_wide_header_of_months_with_their_quarters_says_it_left_out_the_quarters(tmp_path):
    """The subtotal columns of a wide header of months were left out as 'whole years': the note of rows and
    of columns is one (`periods.totals_said`)."""
    labels = []
    for month in MONTHS[:24]:
        labels.append(f"{month:%Y-%m}")
        labels += [f"{month.year} Q{month.quarter}"] if month.month % 3 == 0 else []
    monthly = iter(VALUES[:24])
    cells = [str(next(monthly)) if "Q" not in label else "0" for label in labels]
    text = f"Series,{','.join(labels)}\nSales,{','.join(cells)}\n"
    frame, freq, note = read_noted(write(tmp_path, "wide.csv", text))
    assert freq == "MS" and frame["Sales"].tolist() == VALUES[:24].tolist()
    assert ("left out 8 column(s) of quarters or years ('2015 Q1', '2015 Q2', '2015 Q3', ...): subtotals of "
            "the months, no further steps") in note  # fmt: skip


@pytest.mark.parametrize("flag", [" [r]", " [p]", "[e]"])
def test_uk_gss_flags_in_square_brackets_after_values_are_stripped(tmp_path, flag):
    """The UK Government Analysis Function's shorthand ('582.5 [r]' revised, '[p]' provisional, '[e]'
    estimated) was text where numbers are expected (h82 F13), while '582.5 (p)' read."""
    gdp = np.round(500 + 2.5 * np.arange(40), 1)
    cells = [f"{value}{flag}" if k in (33, 37, 38, 39) else f"{value}" for k, value in enumerate(gdp)]
    lines = ["quarter,gdp", *(f"{2014 + k // 4} Q{k % 4 + 1},{cell}" for k, cell in enumerate(cells))]
    frame, freq, note = read_noted(write(tmp_path, "gss.csv", "\n".join(lines) + "\n"))
    assert freq == "QS-JAN" and frame["gdp"].tolist() == gdp.tolist()
    assert note.endswith(f"stripped value flags ({flag.strip(' []')}) from 4 cell(s)")


@pytest.mark.parametrize("minus", ["\u25b3", "\u25b2"])
def test_japanese_minus_triangles_before_numbers_are_minus_signs(tmp_path, minus):
    """e-Stat and Japan's ministries write a negative change '△2.2' or '▲2.2': a column of half such cells
    was "no numeric columns" (h82 F14); read as minus signs and said, a Unicode minus beside them as ever."""
    changes = np.round(np.sin(np.arange(60)) * 3, 1)
    cells = [f"{minus}{abs(value)}" if value < 0 else f"{value}" for value in changes]
    cells[4] = f"\u2212{abs(changes[4])}"  # sin(4) < 0
    lines = ["年月,前年同月比", *(f"{2018 + k // 12}年{k % 12 + 1}月,{cell}" for k, cell in enumerate(cells))]
    frame, freq, note = read_noted(write(tmp_path, "estat.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame["前年同月比"].tolist() == changes.tolist()
    triangles = sum(cell.startswith(minus) for cell in cells)
    assert note.endswith(f"read {triangles} number(s) with △ or ▲ before them (Japan's minus) as negative")


@pytest.mark.parametrize("legend", [["  -  = nichts vorhanden (genau Null)", "  .  = Zahlenwert unbekannt"],
                                    []])  # fmt: skip
def test_a_dash_the_legend_after_the_data_calls_zero_reads_as_zero(tmp_path, legend):
    """GENESIS' legend says "- = nichts vorhanden (genau Null)": its dashes had been read as missing and
    filled in from their neighbours (a month of no road deaths as 200). Without such a line a dash is
    missing, as before."""
    months = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
              "November", "Dezember"]  # fmt: skip
    rows = [f"{2020 + k // 12};{months[k % 12]};{'-' if k in (3, 15) else 200 + k}" for k in range(36)]
    lines = ["GENESIS-Tabelle: 46241-0001", "Getötete: Deutschland, Monate", ";;Getötete", ";;Anzahl", *rows,
             "__________", *legend, "(C)opyright Statistisches Bundesamt (Destatis), 2023"]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "genesis.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and len(frame) == 36
    expected = [0.0 if k in (3, 15) else 200.0 + k for k in range(36)]
    if legend:
        assert frame["Getötete"].tolist() == expected
        assert "read 2 cell(s) marked '-' as 0, as the line after the data says ('-  = nichts" in note
    else:
        assert frame["Getötete"].iloc[3] == 203.0 and "read 2 cell(s) marked '-' as missing" in note

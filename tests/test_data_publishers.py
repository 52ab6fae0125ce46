"""Files as named statistics offices publish them (BLS, INSEE, ABS, the Bundesbank), read as they come and
read again as a bundle reads the next release: with the columns it found."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from layout_checks import one_line_error, read_noted, write

from forecaster.data import DataQualityWarning, read_csv
from forecaster.data.cells import Tally, to_numbers
from forecaster.errors import ForecasterError


def test_bls_year_and_period_codes_become_months_without_the_annual_averages(tmp_path):
    """A BLS download: Series ID, Year, Period (M01-M12, and M13 the year's average), Label, Value."""
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    lines = ["Series ID,Year,Period,Label,Value"]
    for series, base in (("LNS14000000", 5.0), ("LNS14000003", 4.0)):
        for year in (2022, 2023):
            for m, name in enumerate(months, 1):
                lines.append(f"{series},{year},M{m:02d},{year} {name},{base + m / 10}")
            lines.append(f"{series},{year},M13,{year} Annual,{base + 0.65}")
    path = write(tmp_path, "bls.csv", "\n".join(lines) + "\n")
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["LNS14000000", "LNS14000003"] and freq == "MS"
    assert frame.index.equals(pd.date_range("2022-01-01", "2023-12-01", freq="MS", name="Period"))
    np.testing.assert_allclose(frame["LNS14000003"], np.tile(4.0 + np.arange(1, 13) / 10, 2))
    said = "read columns 'Year' and 'Period' as monthly period codes (BLS); dropped 4 row(s) of averages"
    assert said in note
    # as a bundle re-reads new rows: with the columns it found
    again, _, _ = read_noted(path, date_col="Period", id_col="Series ID", target_col="Value")
    pd.testing.assert_frame_equal(again, frame)


def test_an_insee_series_newest_first_with_a_short_header(tmp_path):
    """INSEE's series download: key/value lines, a header of two cells above rows of three (period, value,
    status code), quarters written 2025-T4, space thousands separators, and the newest quarter first."""
    quarters = [f"{year}-T{q}" for year in range(2020, 2026) for q in range(1, 5)]
    values = [600_000 + 1_000 * k for k in range(len(quarters))]
    pairs = zip(quarters, values, strict=True)
    rows = [f'"{label}";"{value:,}";"A"'.replace(",", " ") for label, value in pairs]
    head = ['"Libellé";"Produit intérieur brut total"', '"idBank";"010565692"', '"Période";""']
    path = write(tmp_path, "insee.csv", "\n".join(head + rows[::-1]) + "\n")
    frame, freq, note = read_noted(path)
    assert freq == "QS-JAN" and list(frame.columns) == ["column 2"]
    assert frame.index[0] == pd.Timestamp("2020-01-01") and frame.index[-1] == pd.Timestamp("2025-10-01")
    np.testing.assert_array_equal(frame["column 2"], values)
    assert "read the rows, listed newest first, from the oldest" in note
    assert "skipped non-numeric column(s) 'column 3'" in note


@pytest.mark.parametrize("unit", ["000", "$ Millions"])
def test_an_abs_time_series_sheet_skips_the_rows_describing_its_columns(tmp_path, unit):
    """The Australian Bureau of Statistics' time-series spreadsheet as CSV: series names in the header (its
    first cell empty), then Unit, Series Type, ..., Series ID rows, then one row per quarter ("Mar-2006").
    Where the units are words, "Collection Month,3,3" was the first row of numbers: the Frequency line above
    it was read as the header, naming both columns 'Quarter' (refused as a repeated name)."""
    described = [f"Unit,{unit},{unit}", "Series Type,Seasonally Adjusted,Seasonally Adjusted",
                 "Data Type,STOCK,STOCK", "Frequency,Quarter,Quarter", "Collection Month,3,3",
                 "Series Start,Mar-2006,Mar-2006", "Series End,Dec-2010,Dec-2010", "No. Obs,20,20",
                 "Series ID,A84423043C,A84423041X"]  # fmt: skip
    quarters = pd.date_range("2006-03-01", periods=20, freq="QS-MAR")
    rows = [f"{stamp:%b-%Y},{114000 + 10 * k:.1f},{22500 + k:.1f}" for k, stamp in enumerate(quarters)]
    path = write(tmp_path, "6202001.csv", "\n".join([",Employed total ;  Persons ;,Full-time ;  Persons ;",
                                                      *described, *rows]) + "\n")  # fmt: skip
    frame, freq, note = read_noted(path)
    assert note.endswith("skipped 9 row(s) below the header describing the columns ('Unit', 'Series Type', "
                         "'Data Type', 'Frequency', ...)")  # fmt: skip
    assert freq == "QS-MAR" and frame.index[0] == pd.Timestamp("2006-03-01") and len(frame) == 20
    assert frame.iloc[-1].tolist() == [114190.0, 22519.0]
    # as a bundle re-reads new rows, and as a user names the column: the describing rows are skipped too
    again, _, _ = read_noted(path, date_col="Unnamed: 0")
    pd.testing.assert_frame_equal(again, frame, check_names=False)


def test_an_insee_file_whose_header_is_as_wide_as_its_rows_reads_again_by_its_date_column(tmp_path):
    """INSEE's download with its "Codes" column named: the header is the "Libellé" line, three lines describe
    the columns, and the bundle names "Libellé" as the date column when it reads the next release."""
    quarters = [f"{year}-T{q}" for year in range(2015, 2024) for q in range(1, 5)]
    rows = [f'"{label}";"{700 + k},{k % 10}0";"A"' for k, label in enumerate(quarters)]
    head = ['"Libellé";"PIB - Volume";"Codes"', '"idBank";"010565708";""',
            '"Dernière mise à jour";"31/10/2023 08:45";""', '"Période";"";""']  # fmt: skip
    path = write(tmp_path, "insee.csv", "\n".join(head + rows[::-1]) + "\n")
    frame, freq, note = read_noted(path)
    assert freq == "QS-JAN" and list(frame.columns) == ["PIB - Volume"] and len(frame) == 36
    assert "skipped 3 row(s) below the header describing the columns ('idBank'" in note
    series = read_csv(path, date_col="Libellé")
    pd.testing.assert_frame_equal(series.frame, frame)
    assert frame["PIB - Volume"].iloc[-1] == pytest.approx(735.5)


def _bundesbank(tmp_path, name: str, updated: str, months: int) -> str:
    """The Bundesbank's German CSV export: the series code on the first line (its first cell empty), a title,
    unit lines and the release time ("Stand vom") above the months, decimal commas, "." with a flag text for
    a missing value, and the source below."""
    code = "BBDE1.M.DE.W.AEA1.A2P000000.F.C.I15.A"
    head = [f";{code};{code}_FLAGS", ";Auftragseingang im Verarbeitenden Gewerbe / Deutschland;",
            "Einheit;Mio €;", "Einheitenmultiplikator;Eins;",
            f"Stand vom;{updated} 08:00:00 Uhr;"]  # fmt: skip
    stamps = pd.date_range("2015-01-01", periods=months, freq="MS")
    rows = [f"{stamp:%Y-%m};{48_000 + 25 * k:,.2f};".replace(",", "X").replace(".", ",").replace("X", ".")
            for k, stamp in enumerate(stamps)]  # fmt: skip
    rows[30] = f"{stamps[30]:%Y-%m};.;Kein Wert vorhanden"
    return write(tmp_path, name, "\n".join([*head, *rows, "", "Quelle: Deutsche Bundesbank"]) + "\n")


def test_a_bundesbank_export_is_named_by_its_series_code_and_reads_the_next_release(tmp_path):
    """The line above the months ("Stand vom;06.10.2023 08:00:00 Uhr;") names no column: the series is named
    by its code, not by the release time, which the next release changes."""
    frame, freq, note = read_noted(_bundesbank(tmp_path, "bbk.csv", "06.10.2023", 60))
    code = "BBDE1.M.DE.W.AEA1.A2P000000.F.C.I15.A"
    assert freq == "MS" and list(frame.columns) == [code] and frame.index.name == "period"
    assert frame[code].iloc[0] == 48_000 and frame[code].iloc[30] == pytest.approx(48_750)  # interpolated
    assert f"skipped non-numeric column(s) '{code}_FLAGS'" in note
    following = _bundesbank(tmp_path, "next.csv", "06.11.2023", 61)
    again = read_csv(following, date_col="period", targets=[code])
    assert len(again.frame) == 61 and again.frame.index[-1] == pd.Timestamp("2020-01-01")
    np.testing.assert_array_equal(again.frame[code].iloc[:60], frame[code])


def test_an_old_ecb_export_is_named_by_its_series_key_not_by_its_unit_line(tmp_path):
    """The ECB Statistical Data Warehouse's export: the series key on the first line (its first cell empty),
    then "Collection:" and "Period\\Unit:" key lines above the months, newest first. The unit line named the
    series ("[Percentage change ]") and the key was lost."""
    code = "ICP.M.U2.N.000000.4.ANR"
    stamps = pd.date_range("2021-01-01", periods=36, freq="MS")[::-1]
    rows = [f"{stamp:%Y%b},{k / 10:.1f}" for k, stamp in enumerate(stamps)]
    head = [f",{code}", '"Collection:","Average of observations through period (A)"',
            '"Period\\Unit:","[Percentage change ]"']  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "ecb.csv", "\n".join([*head, *rows]) + "\n"))
    assert freq == "MS" and list(frame.columns) == [code] and frame.index[0] == pd.Timestamp("2021-01-01")
    np.testing.assert_allclose(frame[code], np.arange(35, -1, -1) / 10)
    assert f"named the columns from 1 line(s) above the header: period, {code}" in note


def test_fred_md_reads_below_its_row_of_transformation_codes(tmp_path):
    """FRED-MD and FRED-QD (St. Louis Fed), the macro-forecasting panels: a "Transform:" row of each column's
    stationarity code under the header, read as data: "no date column found" (h72 F5)."""
    months = pd.date_range("2000-01-01", periods=40, freq="MS")
    rows = [f"{day.month}/1/{day.year},{1e4 + 10 * k:.3f},{5 + k / 10:.1f}" for k, day in enumerate(months)]
    path = write(tmp_path, "fredmd.csv", "\n".join(["sasdate,RPI,UNRATE", "Transform:,5,2", *rows]) + "\n")
    frame, freq, note = read_noted(path)
    assert freq == "MS" and list(frame.columns) == ["RPI", "UNRATE"] and frame.index.equals(
        months.rename("sasdate"))
    np.testing.assert_allclose(frame["UNRATE"], 5 + np.arange(40) / 10)
    assert "skipped 1 row(s) below the header describing the columns ('Transform:')" in note


def test_fred_qd_reads_below_its_rows_of_factors_and_transformation_codes(tmp_path):
    """FRED-QD writes two rows under its header, "factors" and "transform", without FRED-MD's colon: the
    file was "no date column found"."""
    quarters = pd.date_range("2000-01-01", periods=40, freq="QS")
    rows = [f"{day.month}/1/{day.year},{1e4 + 10 * k:.3f},{5 + k / 10:.1f}" for k, day in enumerate(quarters)]
    head = ["sasdate,GDPC1,UNRATE", "factors,1,0", "transform,5,2"]
    frame, freq, note = read_noted(write(tmp_path, "fredqd.csv", "\n".join([*head, *rows]) + "\n"))
    assert freq == "QS-JAN" and list(frame.columns) == ["GDPC1", "UNRATE"] and len(frame) == 40
    np.testing.assert_allclose(frame["UNRATE"], 5 + np.arange(40) / 10)
    assert "skipped 2 row(s) below the header describing the columns ('factors', 'transform')" in note


def test_silso_sunspots_without_a_header_read_every_row_with_year_and_month_found(tmp_path):
    """SILSO's monthly sunspot file: no header, semicolons, year;month;decimal year;number;sd;obs;flag."""
    rows = [f"{1749 + k // 12};{k % 12 + 1:02d};{1749 + (k % 12 + 0.5) / 12:8.3f};{50 + k:6.1f};-1.0;-1;1"
            for k in range(30)]  # fmt: skip
    path = write(tmp_path, "SN_m_tot_V2.0.csv", "\n".join(rows) + "\n")
    frame, freq, note = read_noted(path, targets=["column 4"])
    assert freq == "MS" and frame.index[0] == pd.Timestamp("1749-01-01") and len(frame) == 30  # row 1 kept
    np.testing.assert_allclose(frame["column 4"], 50.0 + np.arange(30))
    assert "no header line: named the columns 'year', 'month', 'column 3', 'column 4'," in note
    bad = write(tmp_path, "bad.csv", "\n".join([*rows[:9], rows[9].replace(";-1;", ";abc;"), *rows[10:]]))
    said = "line 11 'abc' (1 cell(s) in total); expected a number in every cell (the file has no header: "
    assert one_line_error(bad).endswith(said + "line N above is file line N - 1)")


@pytest.mark.parametrize("header", ["#    decimal  monthly\n#  date  average", "# year month date co2"])
def test_a_noaa_text_table_of_columns_lined_up_by_spaces_under_comment_lines(tmp_path, header):
    """NOAA GML's co2_mm_mlo.txt: '#' lines of notes, then year, month, the date as a decimal year (mid-month)
    and values lined up by spaces; a comment naming every column names them."""
    rows = [f"  {1980 + k // 12}   {k % 12 + 1:2d}   {1980 + (k + 0.5) / 12:9.4f}   {340 + k / 10:7.2f}"
            for k in range(40)]  # fmt: skip
    path = write(tmp_path, "co2_mm_mlo.txt", "# USE OF NOAA GML DATA\n#\n" + header + "\n" + "\n".join(rows))
    frame, freq, note = read_noted(path)
    date, name = ("date", "co2") if header.endswith("co2") else ("column 3", "column 4")
    assert freq == "MS" and list(frame.columns) == [name] and frame.index[0] == pd.Timestamp("1980-01-01")
    np.testing.assert_allclose(frame[name], 340 + np.arange(40) / 10)
    assert note.startswith(f"{path}: note: read values separated by spaces") and "metadata line(s)" in note
    assert f"skipped column(s) '{date}': the dates as decimal years (targets keep them)" in note
    assert read_csv(path, targets=[date]).columns == [date]


def test_a_date_and_value_saved_without_names_keep_their_first_row(tmp_path):
    dates = pd.date_range("2020-01-01", periods=20)
    path = write(tmp_path, "saved.csv", "".join(f"{day.date()},{k}.5\n" for k, day in enumerate(dates)))
    frame, freq, note = read_noted(path)
    assert freq == "D" and frame.index.equals(pd.DatetimeIndex(dates, name="date"))
    np.testing.assert_allclose(frame["value"], np.arange(20) + 0.5)
    years = write(tmp_path, "years.csv", "".join(f"{1950 + k},{k}\n" for k in range(20)))
    assert read_noted(years)[1] == "YS-JAN"
    rows = "".join(f"{2020 + k // 12},{k % 12 + 1},{k % 9 + 1}\n" for k in range(30))
    counts = write(tmp_path, "counts.csv", rows)
    frame, freq, _ = read_noted(counts)  # one row per month: its small whole numbers are counts, not days
    assert freq == "MS" and list(frame.columns) == ["value"] and frame["value"].iloc[9] == 1.0
    stamps = write(tmp_path, "stamps.csv", "date\n" + "".join(f"{day} 00:00:00\n" for day in dates))
    assert "no numeric columns to forecast among 'date';" in one_line_error(stamps)  # its time no column
    numbered = read_csv(write(tmp_path, "numbered.csv", "0,1\n5,6\n7,8\n9,10\n"), no_date=True)
    assert numbered.columns == ["0", "1"] and len(numbered.frame) == 3  # pandas' column numbers: a header


def test_a_ghcn_by_year_file_without_a_header_keeps_its_first_day(tmp_path):
    """NOAA's GHCN-Daily by-year file has no header: station, YYYYMMDD date, element, value, three flags and
    the observation time. Its first line was taken for names: TMAX lost its first day, and the panel was
    keyed by column 'TMAX' with its values from column '207'. A header of years above labelled rows is
    still a header."""
    days = pd.date_range("2023-01-01", periods=30)
    lines = [f"USW00094728,{day:%Y%m%d},{element},{k * 10 + offset},,,W,2400" for k, day in enumerate(days)
             for element, offset in (("TMAX", 200), ("TMIN", 50), ("PRCP", 0))]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "2023.csv", "\n".join(lines) + "\n"))
    assert "no header line" in note and freq == "D" and len(frame) == 30
    assert sorted(frame.columns) == ["PRCP", "TMAX", "TMIN"] and frame.index[0] == days[0]
    np.testing.assert_allclose(frame["TMAX"], np.arange(30) * 10 + 200)
    years = "Country,2019,2020,2021\nGermany,1.5,2.5,3.5\nFrance,1.0,2.0,3.0\nItaly,0.5,1.5,2.5\n"
    wide, freq, _ = read_noted(write(tmp_path, "years.csv", years))
    assert list(wide.columns) == ["Germany", "France", "Italy"] and freq == "YS-JAN" and len(wide) == 3


def test_period_codes_beside_the_dates_are_no_series(tmp_path):
    """The CSO's PxStat writes each quarter twice, as a code (TLIST(Q1): 20141) and a label (2014Q1); the
    code was forecast as a second series. IBGE's month codes (201901) likewise."""
    quarters = pd.period_range("2014Q1", periods=12, freq="Q")
    lines = ['"STATISTIC","Statistic Label","TLIST(Q1)","Quarter","UNIT","VALUE"']
    lines += [f'"NQQ25","GDP","{q.year}{q.quarter}","{q.year}Q{q.quarter}","Euro Million",{88000 + 100 * k}'
              for k, q in enumerate(quarters)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "cso.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["VALUE"] and freq == "QS-JAN" and frame["VALUE"].iloc[-1] == 89100
    assert "skipped column(s) 'TLIST(Q1)': parts or codes of the dates" in note
    months = pd.period_range("2019-01", periods=12, freq="M")
    lines = ["Mês,Mês (Código),Brasil"] + [f"{m.strftime('%m/%Y')},{m.year}{m.month:02d},{k / 10}"
                                          for k, m in enumerate(months)]  # fmt: skip
    frame, freq, _ = read_noted(write(tmp_path, "ibge.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["Brasil"] and freq == "MS"


def test_names_on_two_header_lines_are_joined(tmp_path):
    """A table's groups in merged cells above their columns ("North,,South," above "Month,Food,Non-food,Food,
    Non-food", months written Jan-19 as Excel shows them), yfinance's fields above its tickers, Stats NZ's
    adjustments above repeated series names with blank lines among its footnotes: each was refused (names
    repeated), or its columns named 'Unnamed: 1'."""
    months = pd.period_range("2019-01", periods=24, freq="M")
    lines = ["Table 3.1: Retail turnover,,,,", ",North,,South,", "Month,Food,Non-food,Food,Non-food"]
    lines += [f"{month:%b-%y},{k},{k + 1},{k + 2},{k + 3}" for k, month in enumerate(months)]
    lines.append("Source: office")
    frame, freq, note = read_noted(write(tmp_path, "retail.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["North Food", "North Non-food", "South Food", "South Non-food"]
    # the groups' line named the columns and only the title was skipped (both were said skipped, h38)
    assert "note: named the columns from 1 line(s) above the header: Month, North Food, " in note
    assert note.endswith("; skipped 1 metadata line(s) before the data and 1 after")
    assert freq == "MS" and frame.index[0] == pd.Timestamp("2019-01-01") and frame["South Food"].iat[-1] == 25
    days = pd.bdate_range("2023-01-03", periods=30)
    lines = ["Price,Close,Close,Volume,Volume", "Ticker,AAPL,MSFT,AAPL,MSFT", "Date,,,,"]
    lines += [f"{day.date()},{100 + k},{200 + k},{1000 * k},{2000 * k}" for k, day in enumerate(days)]
    frame, freq, note = read_noted(write(tmp_path, "tickers.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["Close AAPL", "Close MSFT", "Volume AAPL", "Volume MSFT"] and freq == "B"
    assert "named the columns from 2 line(s) above the header" in note and "metadata" not in note
    assert frame.index.name == "Date" and frame["Volume MSFT"].iloc[2] == 4000
    quarters = pd.period_range("2012Q1", periods=20, freq="Q")
    lines = ['"GDP - expenditure measure (Qrtly-Mar/Jun/Sep/Dec)"',
             '" ","Seasonally adjusted","Seasonally adjusted","Actual"',
             '" ","Household consumption","Gross fixed capital formation","Household consumption"']
    lines += [f"{q.year}Q{q.quarter},{30000 + k},{11000 + k},{29000 + k}" for k, q in enumerate(quarters)]
    lines += ['"Table information:"', '"Units:"', '"   Dollars (millions)"', '" "', '"Source: Stats NZ"']
    frame, freq, _ = read_noted(write(tmp_path, "infoshare.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["Seasonally adjusted Household consumption",
                                   "Seasonally adjusted Gross fixed capital formation",
                                   "Actual Household consumption"]  # fmt: skip
    assert freq == "QS-JAN" and len(frame) == 20
    # its monthly files name the series above their unit: the series was named 'NZD'
    lines = ['"Overseas Merchandise Trade - Exports (Monthly)"', '" ","Total exports"', '" ","NZD"']
    lines += [f"2017M{k + 1:02d},{4877132154 + k}" for k in range(12)]
    frame, freq, _ = read_noted(write(tmp_path, "exports.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["Total exports"] and freq == "MS"


@pytest.mark.parametrize(
    "units",
    [",EUR million,2015=100,%", ",EUR million,Index,Percent", "Unit,EUR million,2015=100,%",
     ",NZD bn,Index (2015=100),per cent", ",1000 persons,%,2015=100", "Unit,1.000 persons,Index,%",
     "Unit,000,000,000", "Unit,000s,Index,%"],  # h82 F16: '000' (thousands) was a value of 0, 'Unit' a date
)  # fmt: skip
def test_a_line_of_each_columns_unit_under_the_names_names_nothing(tmp_path, units):
    """A quarterly table as offices publish it, the series' units under their names: the units line was
    taken for the header, the series named 'EUR million', '2015=100' and '%' (--targets GDP refused) and
    the date column 'Unnamed: 0' (h38); only one unit repeated ("NZD,NZD") named nothing."""
    quarters = pd.period_range("2015Q1", periods=24, freq="Q")
    lines = ["Quarter,GDP,CPI,Unemployment", units]
    lines += [f"{q.year}-Q{q.quarter},{18000 + 50 * k},{100 + k / 10:.1f},{6 - k / 100:.2f}"
              for k, q in enumerate(quarters)]  # fmt: skip
    frame, freq, _ = read_noted(write(tmp_path, "accounts.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["GDP", "CPI", "Unemployment"] and frame.index.name == "Quarter"
    assert freq == "QS-JAN" and len(frame) == 24 and frame["GDP"].iat[-1] == 18000 + 50 * 23


def test_a_competitions_table_of_a_series_per_row_is_refused_saying_so(tmp_path):
    """M5's sales (id, item_id, ..., d_1 ... d_200) and M4's (V1, V2, ...): told to pass --no-date, a user
    got each step forecast as a series and a refusal of 3 rows too few."""
    steps = [f"d_{k}" for k in range(1, 31)]
    lines = [",".join(["id", "item_id", *steps])]
    lines += [",".join([f"HOBBIES_1_00{n}_CA_1", f"HOBBIES_1_00{n}", *map(str, range(30))]) for n in range(3)]
    said = one_line_error(write(tmp_path, "sales_train.csv", "\n".join(lines) + "\n"))
    assert "the series are rows, their steps across 30 columns ('d_1' ... 'd_30')" in said
    assert "expected a series per column: transpose the table" in said


def test_statistics_south_africas_months_across_the_columns_are_read(tmp_path):
    """Stats SA's time series (P0141's CPI): code columns H01 ... H25, then a month per column, MO012018 ...,
    a series per row; it was refused (no date column)."""
    months = pd.period_range("2018-01", periods=24, freq="M")
    header = ["H01", "H02", "H03", "H04", *(f"MO{month.month:02d}{month.year}" for month in months)]
    items = (("CPS00000", "All Items"), ("CPS01000", "Food"))
    rows = [["P0141", code, "Consumer Price Index", item, *(f"{90 + k / 10 + j:.1f}" for k in range(24))]
            for j, (code, item) in enumerate(items)]  # fmt: skip
    path = write(tmp_path, "P0141.csv", "\n".join(",".join(row) for row in [header, *rows]) + "\n")
    frame, freq, _ = read_noted(path)
    assert freq == "MS" and frame.index[0] == pd.Timestamp("2018-01-01") and len(frame) == 24
    assert list(frame.columns) == ["CPS00000", "CPS01000"]
    assert frame["CPS01000"].iat[-1] == pytest.approx(93.3)


def test_investing_com_volumes_in_k_m_b_and_changes_in_percent(tmp_path):
    """Investing.com's history: quoted cells, newest first, "Mar 15, 2024" dates, volumes "201.65K" and
    "2.47M" (read as flags before: 201.65 beside 2.47, thousands beside millions) and changes "-1.77%"."""
    days = pd.bdate_range("2024-01-01", periods=30)[::-1]
    volumes = ["201.65K", "2.47M", "1.2B"] * 10
    rows = [f'"{day:%b %d, %Y}","{80 + k / 10:.2f}","{volume}","{k / 100 - 0.1:.2f}%"'
            for k, (day, volume) in enumerate(zip(days, volumes, strict=True))]  # fmt: skip
    path = write(tmp_path, "Brent Oil Futures Historical Data.csv",
                 '\ufeff"Date","Price","Vol.","Change %"\n' + "\n".join(rows) + "\n")  # fmt: skip
    frame, freq, note = read_noted(path)
    assert freq == "B" and frame.index[-1] == days[0] and list(frame.columns) == ["Price", "Vol.", "Change %"]
    np.testing.assert_allclose(frame["Vol."].iloc[::-1], [201.65e3, 2.47e6, 1.2e9] * 10)
    np.testing.assert_allclose(frame["Change %"].iloc[::-1], np.arange(30) / 100 - 0.1, atol=1e-12)
    assert "read 30 number(s) ending in K (k), M or B as thousands, millions or billions; read 30 " \
        "number(s) written with % in percent" in note  # fmt: skip


def test_gapminder_numbers_ending_in_a_small_k_are_thousands(tmp_path):
    """Gapminder's wide CSVs write 110.0k beside 24.0M: the k was stripped as a flag (Andorra's 110,000 people
    read as 110, GDP per head of 1,800 as 1.8)."""
    years = list(range(2000, 2012))
    rows = [f"Andorra,{','.join(f'{66 + k}.0k' for k in range(12))}",
            f"Angola,{','.join(f'{16.4 + k / 2:.1f}M' for k in range(12))}"]  # fmt: skip
    path = write(tmp_path, "pop.csv", f"country,{','.join(map(str, years))}\n" + "\n".join(rows) + "\n")
    frame, freq, note = read_noted(path)
    assert freq == "YS-JAN" and list(frame.columns) == ["Andorra", "Angola"]
    np.testing.assert_allclose(frame["Andorra"], 1e3 * (66.0 + np.arange(12)))
    np.testing.assert_allclose(frame["Angola"], 1e6 * (16.4 + np.arange(12) / 2))
    assert "read 24 number(s) ending in K (k), M or B" in note



def test_a_k_set_apart_from_its_number_is_thousands_too(tmp_path):
    """'1.65 k' after months of plain thousands was read 1.65, its k stripped as a flag, where '1.65k' reads
    1650 (h91 F2)."""
    cells = [str(1200 + 10 * k) for k in range(45)] + ["1.65 k", "1.66 k", "1.67 k"]
    months = pd.date_range("2018-01-01", periods=48, freq="MS")
    path = write(tmp_path, "visitors.csv", "month,visitors\n" + "\n".join(
        f"{month:%Y-%m},{cell}" for month, cell in zip(months, cells, strict=True)) + "\n")  # fmt: skip
    frame, _, note = read_noted(path)
    np.testing.assert_allclose(frame["visitors"], 1200 + 10 * np.arange(48))
    assert "read 3 number(s) ending in K (k), M or B as thousands, millions or billions" in note
    tally = Tally()  # a capital set apart from its number is a flag's place, no scale (h96 F6)
    assert to_numbers(pd.Series(["12 B", "13 B", "14 B"]), None, tally) is None and not tally.scaled["B"]


def test_percents_among_a_columns_fractions_are_fractions(tmp_path):
    """A column of rates as fractions whose latest cells a spreadsheet shows in percent ('9.5%' after
    '0.094') was read 0.094 then 9.5 (h91 F3); a column all in percent stays in percent."""
    cells = [f"{0.05 + k / 1000:.3f}" for k in range(45)] + ["9.5%", "9.6%", "9.7%"]
    months = pd.date_range("2019-01-01", periods=48, freq="MS")
    path = write(tmp_path, "rate.csv", "month,rate\n" + "\n".join(
        f"{month:%Y-%m},{cell}" for month, cell in zip(months, cells, strict=True)) + "\n")  # fmt: skip
    frame, _, note = read_noted(path)
    np.testing.assert_allclose(frame["rate"], 0.05 + np.arange(48) / 1000)
    assert "read 3 number(s) written with % as fractions (9.5% as 0.095), as the column's other numbers " \
        "are written" in note  # fmt: skip
    in_percent = [f"{5 + k / 10:.1f}" for k in range(45)] + ["9.5%", "9.6%", "9.7%"]  # in line as written
    path.write_text("month,rate\n" + "\n".join(
        f"{month:%Y-%m},{cell}" for month, cell in zip(months, in_percent, strict=True)) + "\n")  # fmt: skip
    frame, _, note = read_noted(path)
    assert frame["rate"].iloc[-1] == pytest.approx(9.7) and "written with % in percent" in note
    mostly = pd.Series(["5.2%"] * 8 + ["0.05"])  # percents the most: the column's unit
    np.testing.assert_allclose(to_numbers(mostly, None, Tally()), [5.2] * 8 + [0.05])  # as written (h96 F5)

def test_a_met_office_station_file_of_text_columns_units_flags_and_provisional_rows(tmp_path):
    """The Met Office's historic station data: notes, then 'yyyy mm tmax ...' over a units line, values lined
    up by spaces, '*' for estimated and '#' for an automatic sensor after values, '---' for missing, and
    'Provisional' after the latest rows."""
    lines = ["Oxford", "Location: 450900E 207200N, Lat 51.761 Lon -1.262, 63 metres amsl",
             "Estimated data is marked with a * after the value.",
             "Missing data (more than 2 days missing in month) is marked by  ---.",
             "   yyyy  mm   tmax    tmin      af    rain     sun",
             "              degC    degC    days      mm   hours"]
    for k in range(36):
        year, month = 2021 + k // 12, k % 12 + 1
        sun = "---" if k == 5 else f"{50 + k}.0#"
        values = f"{10 + k / 10:.1f}*   {k / 10:.1f}   {k % 3:5d}   {40 + k:.1f}   {sun}"
        lines.append(f"   {year}  {month:2d}   {values}" + ("  Provisional" if k > 32 else ""))
    frame, freq, note = read_noted(write(tmp_path, "oxforddata.txt", "\n".join(lines) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["tmax", "tmin", "af", "rain", "sun"] and len(frame) == 36
    assert frame.index[0] == pd.Timestamp("2021-01-01") and frame.index[-1] == pd.Timestamp("2023-12-01")
    np.testing.assert_allclose(frame["tmax"], 10 + np.arange(36) / 10)
    assert frame["sun"].iloc[5] == 55.0  # '---' missing, filled between 54 and 56
    assert "read 1 cell(s) marked '---' as missing; stripped value flags (*, #) from 71 cell(s)" in note


def test_google_trends_below_one_and_the_feds_nd_cells(tmp_path):
    """Google Trends writes '<1' for under 1% of the peak (read as half the limit, with a note); the Fed's
    Data Download Program 'ND' for no data (missing, filled)."""
    weeks = pd.date_range("2023-01-01", periods=30, freq="W-SUN")
    cells = ["<1" if k % 7 == 3 else str(k) for k in range(30)]
    trends = "Category: All categories\n\nWeek,cobol: (Worldwide)\n" + "".join(
        f"{week.date()},{cell}\n" for week, cell in zip(weeks, cells, strict=True))
    frame, freq, note = read_noted(write(tmp_path, "multiTimeline.csv", trends))
    assert freq == "W-SUN" and frame["cobol: (Worldwide)"].iloc[3] == 0.5 and frame.iloc[4, 0] == 4.0
    assert "read 4 cell(s) below a limit ('<1') as half the limit" in note
    days = pd.bdate_range("2024-01-01", periods=20)
    fed = "Series Description,Federal funds effective rate\n" + "".join(
        f"{day.date()},{'ND' if k == 4 else 5 + k / 100}\n" for k, day in enumerate(days))
    frame, _, note = read_noted(write(tmp_path, "FRB_H15.csv", fed))
    assert frame.iloc[4, 0] == pytest.approx(5.04) and "read 1 cell(s) marked 'ND' as missing" in note


def test_undata_with_its_footnote_table_below_the_data(tmp_path):
    """UNdata's download: a long table, newest year first, a 'Value Footnotes' column, and below a blank line
    a second table of footnotes ("footnoteSeqID","Footnote"), which left no column of years."""
    rows = ['"Country or Area","Year","Item","Value","Value Footnotes"']
    for country, base in (("France", 100.0), ("Germany", 200.0)):
        rows += [f'"{country}","{year}","GDP","{base + year - 2000}","{1 if year == 2021 else ""}"'
                 for year in range(2021, 1999, -1)]  # fmt: skip
    rows += ["", '"footnoteSeqID","Footnote"', '"1","Data refer to provisional estimates."']
    frame, freq, note = read_noted(write(tmp_path, "UNdata_Export.csv", "\n".join(rows) + "\n"))
    assert freq == "YS-JAN" and list(frame.columns) == ["France", "Germany"] and len(frame) == 22
    np.testing.assert_allclose(frame["Germany"], 200.0 + np.arange(22))
    assert "skipped 2 metadata line(s) after the data" in note


@pytest.mark.parametrize("table", ["short", "full"])
def test_statistics_canadas_numbered_footnotes_after_the_data_are_skipped(tmp_path, table):
    """A StatCan download ends in "Footnotes:", numbered notes ("1","Seasonally adjusted"), the citation and
    its DOI: the numbered notes were dates that are not ("no date column found", h82 F6), in the short
    table and in the full one (REF_DATE, GEO, DGUID, ..., VALUE, STATUS) alike."""
    months = pd.period_range("2015-01", periods=96, freq="M")
    if table == "short":
        rows = ['"REF_DATE","VALUE"', *(f'"{m}","{1000 + 1.5 * k:.1f}"' for k, m in enumerate(months))]
    else:
        rows = ['"REF_DATE","GEO","DGUID","UOM","VALUE","STATUS"']
        rows += [f'"{month}","{geo}","2016A0000{g}","Persons","{1000 * g + 1.5 * k:.1f}",""'
                 for k, month in enumerate(months) for g, geo in enumerate(("Canada", "Ontario"), 1)]
    rows += ["", '"Footnotes:"', '"1","Labour Force Survey estimates"', '"2","Seasonally adjusted"',
             '"How to cite: Statistics Canada. Table 14-10-0287-01"', '"https://doi.org/10.25318/1410028701-eng"']
    frame, freq, note = read_noted(write(tmp_path, "1410028701.csv", "\n".join(rows) + "\n"))
    assert freq == "MS" and len(frame) == 96 and frame.index[-1] == pd.Timestamp("2022-12-01")
    assert frame.iloc[-1, -1] == (1000 if table == "short" else 2000) + 1.5 * 95
    assert "skipped 5 metadata line(s) after the data" in note


def test_numbers_beside_words_after_the_data_without_a_heading_are_still_refused(tmp_path):
    """A row "2","Seasonally adjusted" under yearly data is no note without the heading of notes above it:
    the reader does not guess it away (refused, as before)."""
    rows = ["year,value", *(f"{2000 + k},{10 + k}" for k in range(20)), "2,Seasonally adjusted"]
    message = one_line_error(write(tmp_path, "years.csv", "\n".join(rows) + "\n"))
    assert "no date column found" in message and "skipped" not in message  # its '2' no year: no year column


def test_jhu_covid_wide_file_with_slashed_dates_in_the_header(tmp_path):
    """JHU CSSE's time_series_covid19_confirmed_global.csv: Province/State, Country/Region, Lat, Long, then
    one column per day written 1/22/20 (month first): one daily series per row ('no date column' before)."""
    days = pd.date_range("2020-01-22", periods=40)
    header = ["Province/State", "Country/Region", "Lat", "Long", *[f"{d.month}/{d.day}/{d:%y}" for d in days]]
    rows = [",".join(header)]
    for place, lat in (("Afghanistan", 33.9), ("Australia", -35.5), ("Germany", 51.2)):
        province = "Australian Capital Territory" if place == "Australia" else ""
        rows.append(",".join([province, place, str(lat), "10.0", *[str(k * 2) for k in range(40)]]))
    frame, freq, note = read_noted(write(tmp_path, "time_series_covid19.csv", "\n".join(rows)))
    assert freq == "D" and frame.index.equals(pd.DatetimeIndex(days, name="period"))
    assert list(frame.columns) == ["Afghanistan", "Australian Capital Territory / Australia", "Germany"]
    assert "read the wide layout: 3 row(s) as series over the 40 period columns of the header ('1/22/20'" \
        in note  # fmt: skip


def test_statcan_as_displayed_names_its_rows_by_the_label_that_tells_them_apart(tmp_path):
    """Statistics Canada's "Download as displayed": its Prices and Seasonal adjustment labels are merged
    cells, written on the first row only; the series were named 'Chained (2017) dollars' and '', by that
    first column's blank, not by their Estimates (h100 F10)."""
    quarters = [f"Q{q} {y}" for y in range(2018, 2024) for q in range(1, 5)]
    rows = ['"Table: 36-10-0104-01  Gross domestic product, expenditure-based, Canada, quarterly"',
            '"Geography: Canada"', '"Prices 8","Seasonal adjustment 9","Estimates",' + ",".join(quarters),
            '"Chained (2017) dollars","Seasonally adjusted at annual rates","Gross domestic product",'
            + ",".join(f'"{2_000_000 + 1_000 * k:,}"' for k in range(24)),
            '"","","Household final consumption expenditure",' + ",".join(str(1_000 + k) for k in range(24)),
            '"Symbol legend:"', '".. not available for a specific reference period"']  # fmt: skip
    frame, freq, _ = read_noted(write(tmp_path, "3610010401.csv", "\n".join(rows)))
    assert freq == "QS-JAN" and len(frame) == 24
    assert list(frame.columns) == ["Gross domestic product", "Household final consumption expenditure"]
    assert frame.iloc[-1].tolist() == [2_023_000.0, 1_023.0]


def test_dwd_daily_climate_file_with_its_yyyymmdd_dates_station_id_and_end_of_record(tmp_path):
    """DWD's produkt_klima_tag_*.txt: ';' apart, padded, STATIONS_ID (one value), MESS_DATUM as YYYYMMDD
    numbers under a name no date is known by, -999 for missing, 'eor' ending each row."""
    days = pd.date_range("2019-01-01", periods=40)
    rows = ["STATIONS_ID;MESS_DATUM;QN_4; RSK; TMK;eor"] + [
        f"     1048;{day:%Y%m%d};    3;{-999 if k == 7 else k / 10:5.1f};{k % 5 - 2:5.1f};eor"
        for k, day in enumerate(days)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "produkt_klima_tag_01048.txt", "\n".join(rows)))
    assert freq == "D" and frame.index.equals(pd.DatetimeIndex(days, name="MESS_DATUM"))
    assert list(frame.columns) == ["QN_4", "RSK", "TMK"] and frame["RSK"].iloc[7] == pytest.approx(0.7)
    assert "skipped column(s) 'STATIONS_ID': codes or identifiers (targets keep them)" in note


def test_an_e_stat_table_with_japanese_month_labels_and_code_columns(tmp_path):
    """e-Stat's CSV (saved as UTF-8): key/value lines, code columns beside their labels ("時間軸（月次）
    コード" holding 2015000101), months written "2015年1月", '***' for no value."""
    months = pd.date_range("2015-01-01", periods=30, freq="MS")
    rows = ['"統計名：","消費者物価指数"', '"注記：","***は数値が得られないもの"', "",
            '"表章項目 コード","表章項目","時間軸（月次） コード","時間軸（月次）","0001 総合"']  # fmt: skip
    rows += [f'"01","指数","{m.year}00{m.month:02d}{m.month:02d}","{m.year}年{m.month}月","{95 + k / 10:.1f}"'
             for k, m in enumerate(months)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "FEH_00200573.csv", "\n".join(rows) + "\n"))
    assert freq == "MS" and frame.index.equals(pd.DatetimeIndex(months, name="時間軸（月次）"))
    assert list(frame.columns) == ["0001 総合"] and frame.iloc[-1, 0] == pytest.approx(97.9)
    assert "skipped column(s) '表章項目 コード', '時間軸（月次） コード': codes or identifiers" in note


def test_cbs_statline_months_with_each_years_row_among_them_and_provisional_stars(tmp_path):
    """CBS StatLine: a title, ';' apart, decimal commas, "2012 januari" ... "2012 december", then "2012" (the
    year's average), the latest months starred provisional, "Bron: CBS" below."""
    months = ["januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september",
              "oktober", "november", "december"]  # fmt: skip
    rows = ['"Consumentenprijzen; prijsindex 2015=100"', '"Perioden";"CPI (2015=100)"']
    for year in (2021, 2022, 2023):
        star = "*" if year == 2023 else ""
        rows += [f'"{year} {month}{star if k > 8 else ""}";"{year - 2000},{k:02d}"'
                 for k, month in enumerate(months)]  # fmt: skip
        rows.append(f'"{year}{star}";"{year - 2000},50"')
    rows.append('"Bron: CBS"')
    frame, freq, note = read_noted(write(tmp_path, "Consumentenprijzen.csv", "\n".join(rows) + "\n"))
    assert freq == "MS" and len(frame) == 36 and frame.index[-1] == pd.Timestamp("2023-12-01")
    np.testing.assert_allclose(frame.iloc[:12, 0], 21 + np.arange(12) / 100)
    assert "dropped 3 row(s) of whole years ('2021', '2022', '2023') among the month rows" in note


@pytest.mark.parametrize(("labels", "kind", "freq"), [([f" {m}" for m in ("JAN", "FEB", "MAR", "APR", "MAY",
                         "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")], "month", "MS"),
                         ([" Q1", " Q2", " Q3", " Q4"], "quarter", "QS-JAN")])  # fmt: skip
def test_years_rows_among_months_or_quarters_labelled_as_ons_does_are_totals(tmp_path, labels, kind, freq):
    """Stats SA's and others' `2015`, `2015 JAN` ... `2015 DEC`, `2016`, ...: labelled as the ONS labels its
    blocks, the kinds alternating. Read as ONS blocks, 12 of 96 months were kept, the header taken as a
    metadata line and the series named `value`; the year rows are totals among the months now."""
    rows, values = ["Period,Retail sales index"], []
    for year in range(2015, 2023):
        rows.append(f"{year},{1000 + year}")
        for label in labels:
            values.append(len(values) + 0.5)
            rows.append(f"{year}{label},{values[-1]}")
    frame, read_freq, note = read_noted(write(tmp_path, "retail.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == ["Retail sales index"] and read_freq == freq
    assert len(frame) == 8 * len(labels) and frame.index[0] == pd.Timestamp("2015-01-01")
    np.testing.assert_array_equal(frame.iloc[:, 0], values)
    assert f"dropped 8 row(s) of whole years ('2015', '2016', '2017', ...) among the {kind} rows" in note


def test_a_years_total_after_its_iso_months_is_dropped_as_a_total(tmp_path):
    """A tourism office's `2020-01` ... `2020-12`, then `Total 2020`: refused, naming the total rows, as no
    timestamps; the rows of a year's total are dropped, said, as they are among period labels."""
    rows = ["Month,Arrivals"]
    for year in (2020, 2021, 2022):
        rows += [f"{year}-{month:02d},{1000 * (year - 2019) + month}" for month in range(1, 13)]
        rows.append(f"Total {year},{12_000 * (year - 2019) + 78}")
    frame, freq, note = read_noted(write(tmp_path, "arrivals.csv", "\n".join(rows) + "\n"))
    assert freq == "MS" and len(frame) == 36 and frame["Arrivals"].iloc[-1] == 3012
    dropped = "dropped 2 row(s) of whole years ('Total 2020', 'Total 2021') among the dated rows"
    assert f"{dropped}: a year's total" in note
    assert "skipped 1 summary row(s) after the data: line 40 'Total 2022'" in note  # the last, as before


def test_years_before_the_quarters_began_are_not_called_their_totals(tmp_path):
    """A yearly series 2000-2009 above quarters from 2010, each year of those also totalled: the rows of
    2000-2009 were dropped as "a year's total" of quarters the file does not hold (h80). Both kinds are
    dropped, each said as what it is; the quarters are read."""
    rows = ["date,value", *(f"{year},{year - 1900}" for year in range(2000, 2010))]
    for year in range(2010, 2016):
        rows += [f"{year}Q{quarter},{100 + year - 2010}.{quarter}" for quarter in range(1, 5)]
        rows.append(f"{year},{400 + year}")
    frame, freq, note = read_noted(write(tmp_path, "gdp.csv", "\n".join(rows) + "\n"))
    assert freq == "QS-JAN" and len(frame) == 24 and frame["value"].iloc[0] == 100.1
    assert "dropped 6 row(s) of whole years ('2010', '2011', '2012', ...) among the quarter rows: a year's " \
        "total" in note
    assert "dropped 10 row(s) of whole years ('2000', '2001', '2002', ...) that no quarter row falls in: a " \
        "yearly series beside the quarter rows, which are read" in note


def test_a_years_total_column_among_quarter_columns_is_dropped_as_a_total(tmp_path):
    """A national-accounts table `Region,2015Q1,...,2015Q4,2015,2016Q1,...`: refused as periods of mixed
    kinds, where the same totals as rows are dropped; the year columns are totals among the quarters now."""
    header, rows = ["Region"], []
    for year in range(2015, 2021):
        header += [f"{year}Q{quarter}" for quarter in range(1, 5)] + [str(year)]
    for region, base in (("North", 100.0), ("South", 200.0)):
        years = [[base + 4 * (year - 2015) + quarter for quarter in range(4)] for year in range(2015, 2021)]
        rows.append(",".join([region, *(f"{value}" for four in years for value in [*four, sum(four)])]))
    table = "\n".join([",".join(header), *rows]) + "\n"
    frame, freq, note = read_noted(write(tmp_path, "regions.csv", table))
    assert freq.startswith("Q") and list(frame.columns) == ["North", "South"] and len(frame) == 24
    np.testing.assert_array_equal(frame["South"], [200.0 + 4 * (k // 4) + k % 4 for k in range(24)])
    assert "left out 6 column(s) of whole years ('2015', '2016', '2017', ...): a year's total" in note


@pytest.mark.parametrize("office", ["insee", "genesis"])
def test_a_first_column_of_consecutive_years_is_the_date_whatever_its_name(tmp_path, office):
    """INSEE's yearly download heads its years 'Libellé' (newest first); GENESIS leaves them unnamed under
    its title lines, with '-' where a change has no year before: no date column was found in either."""
    years = list(range(2005, 2024))
    if office == "insee":
        head = ['"Libellé";"Produit intérieur brut total";"Codes"', '"idBank";"010565692";""',
                '"Dernière mise à jour";"31/05/2023 08:45";""', '"Période";"";""']  # fmt: skip
        rows = [f'"{year}";"{2000 + 10 * k},5";"A"' for k, year in enumerate(years)][::-1]
        expected = 2000.5 + 10 * np.arange(len(years))
    else:
        head = ["GENESIS-Tabelle: 81000-0001", "VGR des Bundes - Bruttoinlandsprodukt;;", "Deutschland;;",
                ";Bruttoinlandsprodukt;Bruttoinlandsprodukt", ";Mrd. EUR;Veränderung gegenüber Vorjahr in %"]
        rows = [f"{year};{2000 + 10 * k},5;{'-' if k == 0 else '0,5'}" for k, year in enumerate(years)]
        rows += ["__________", "© Statistisches Bundesamt (Destatis), 2024"]
        expected = 2010.5 + 10 * np.arange(len(years) - 1)  # the first year lacks its change: dropped
    frame, freq, _ = read_noted(write(tmp_path, f"{office}.csv", "\n".join(head + rows) + "\n"))
    assert freq == "YS-JAN" and frame.index[-1] == pd.Timestamp("2023-01-01")
    np.testing.assert_allclose(frame.iloc[:, 0], expected)


@pytest.mark.parametrize("name", ["Census year", "Reference year", "Census"])
@pytest.mark.parametrize("step", [5, 10])
def test_a_first_column_of_census_years_is_the_date_whatever_its_name(tmp_path, name, step):
    """Censuses and UN WPP tables list years 5 or 10 apart; under a name other than a year's they were "no
    date column found" (h82 F11), while consecutive years were read whatever the name."""
    years = range(1900, 2021, step)
    path = write(tmp_path, "census.csv", f"{name},Population\n" + "".join(f"{y},{1000 + y}\n" for y in years))
    series = read_csv(path)
    assert series.freq == f"{step}YS-JAN" and series.date_col == name and series.index[-1].year == 2020
    assert series.frame["Population"].tolist() == [1000.0 + year for year in years]


def test_an_insee_download_of_two_series_each_with_its_codes_column(tmp_path):
    """INSEE writes a 'Codes' column of statuses (A, P) after each series' values: the repeated name was
    refused; the codes are left out, said. Repeated names of numbers are still refused."""
    months = [f"{year}-{month:02d}" for year in range(2020, 2024) for month in range(1, 13)]
    head = ['"Libellé";"Indice des prix - Ensemble";"Codes";"Indice des prix - Alimentation";"Codes"',
            '"idBank";"001759970";"";"001764288";""', '"Période";"";"";"";""']  # fmt: skip
    rows = [f'"{month}";"{100 + k / 10:.2f}";"A";"{110 + k / 5:.2f}";"{"P" if k == 47 else "A"}"'
            for k, month in enumerate(months)][::-1]  # fmt: skip
    text = "\n".join(head + [row.replace(".", ",") for row in rows]) + "\n"  # decimal commas
    frame, freq, note = read_noted(write(tmp_path, "insee.csv", text))
    assert freq == "MS"
    assert list(frame.columns) == ["Indice des prix - Ensemble", "Indice des prix - Alimentation"]
    np.testing.assert_allclose(frame.iloc[:, 1], 110 + np.arange(48) / 5)
    assert "left out the columns named 'Codes' beside each series: codes or flags, not values" in note
    numbers = write(tmp_path, "twice.csv", "date,OT,OT\n2020-01-01,1,2\n2020-01-02,3,4\n2020-01-03,5,6\n")
    assert "column name(s) 'OT' repeated" in one_line_error(numbers)


@pytest.mark.parametrize("periods", ["month", "quarter"])
def test_genesis_tables_of_year_and_month_or_quarter_named_by_the_lines_above_their_units(tmp_path, periods):
    """Destatis' GENESIS-Online CSV (Windows-1252): title lines, the series' names on a line whose first two
    cells are empty above a line of units ('in (%)' twice: refused as a repeated name), rows of a year and a
    month's or quarter's name ('2012;März', '2010;1. Quartal'), '...' where a value is not yet published, and
    a rule and copyright line after the data."""
    if periods == "month":
        labels = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
                  "Oktober", "November", "Dezember"]  # fmt: skip
        names = ";;Verbraucherpreisindex;Veränderung zum Vorjahresmonat;Veränderung zum Vormonat"
        units, freq = ";;2020=100;in (%);in (%)", "MS"
    else:
        labels = [f"{q}. Quartal" for q in range(1, 5)]
        names = ";;Originalwerte;X13 JDemetra+ Kalender- und saisonbereinigt;Veränderung in %"
        units, freq = ";;Kettenindex (2015=100);Kettenindex (2015=100);in (%)", "QS-JAN"
    head = ["GENESIS-Tabelle: 61111-0002", "Verbraucherpreisindex: Deutschland,;;;;", "Deutschland;;;;",
            names, units]  # fmt: skip
    values = [f"{90 + k / 10:.1f}".replace(".", ",") for k in range(3 * len(labels))]  # decimal commas
    rows = [f"{2012 + k // len(labels)};{label};{values[k]};{'...' if k < len(labels) else '1,5'};0,2"
            for k, label in enumerate(labels * 3)]  # fmt: skip
    path = tmp_path / "genesis.csv"
    path.write_bytes(("\n".join([*head, *rows, "__________", "© Statistisches Bundesamt (Destatis), 2024"])
                      + "\n").encode("cp1252"))  # fmt: skip
    with pytest.warns(DataQualityWarning):
        series = read_csv(path)
    assert series.columns == names.split(";")[2:] and series.freq == freq and len(series) == 3 * len(labels)
    assert series.frame.index[0] == pd.Timestamp("2012-01-01")
    np.testing.assert_allclose(series.frame.iloc[:, 0], 90 + np.arange(3 * len(labels)) / 10)


def test_a_semicolon_table_is_not_split_by_the_commas_of_its_decimals_and_footnotes(tmp_path):
    """A GENESIS table of one series, decimal commas, and Destatis' footnotes below it of a comma each: ","
    split more lines in two than ";" split in three, and the file was "no date column found" (h49)."""
    rows = [f"{2010 + k // 4};{k % 4 + 1}. Quartal;{1200 + k},{k % 10}" for k in range(40)]
    notes = ["__________", "( ) Aussagewert eingeschränkt, da der Zahlenwert statistisch unsicher ist",
             "© Statistisches Bundesamt (Destatis), 2024"]  # fmt: skip
    lines = ["Statistisches Bundesamt", "Tabelle: Erwerbstätige", "Jahr;Quartal;Erwerbstätige", *rows, *notes]
    frame, freq, note = read_noted(write(tmp_path, "erwerbstaetige.csv", "\n".join(lines) + "\n"))
    assert freq == "QS-JAN" and len(frame) == 40 and frame.index[0] == pd.Timestamp("2010-01-01")
    np.testing.assert_allclose(frame["Erwerbstätige"], [1200 + k + (k % 10) / 10 for k in range(40)])
    assert "read values separated by semicolons; read decimal commas" in note


def test_an_abs_sheet_naming_two_series_alike_tells_them_apart_by_their_series_type(tmp_path):
    """The ABS's national accounts sheet names its seasonally adjusted and trend GDP alike ('Gross domestic
    product: Chain volume measures ;'): refused as a repeated name, they are named by the first row that
    describes them apart (Series Type). Names repeated with no such row are still refused."""
    name = "Gross domestic product: Chain volume measures ;"
    described = ["Unit,$ Millions,$ Millions", "Series Type,Seasonally Adjusted,Trend",
                 "Frequency,Quarter,Quarter", "Collection Month,3,3",
                 "Series ID,A2304402X,A2304080V"]  # fmt: skip
    quarters = pd.date_range("2010-03-01", periods=12, freq="QS-MAR")
    rows = [f"{stamp:%b-%Y},{423000 + 100 * k},{421000 + 90 * k}" for k, stamp in enumerate(quarters)]
    path = write(tmp_path, "5206001.csv", "\n".join([f',"{name}","{name}"', *described, *rows]) + "\n")
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == [f"{name} (Seasonally Adjusted)", f"{name} (Trend)"] and freq == "QS-MAR"
    np.testing.assert_array_equal(frame.iloc[:, 1], 421000 + 90 * np.arange(12))
    assert f"told the columns of one name apart by the row describing them: '{name} (Seasonally" in note
    alike = write(tmp_path, "alike.csv", "\n".join([f',"{name}","{name}"', *described[:1], *rows]) + "\n")
    assert "repeated; expected each column name once" in one_line_error(alike)


def test_a_bank_of_japan_download_is_named_by_its_series_codes(tmp_path):
    """The Bank of Japan's time-series search CSV: Series code, Name, Unit, Frequency, Category and Last
    update lines above rows of '2012/01'; 'Last update,20240312,...' was the first row of numbers, so the
    Category line above it named the series ('Money Stock') and the date column."""
    head = ["Series code,\"MD02'MAM1NAM2M2MO\",\"FM08'FXERM07\"",
            'Name of time-series,"Money Stock/M2/Average Amounts Outstanding","US Dollar/Yen Spot Rate"',
            'Unit,"100 million yen","Yen per U.S. Dollar"', 'Frequency,"Monthly","Monthly"',
            'Category,"Money Stock","Foreign Exchange Rates"',
            'Last update,"20240312","20240301"']  # fmt: skip
    rows = [f"{2012 + k // 12}/{k % 12 + 1:02d},{8400000 + 1000 * k},{79 + k / 10:.2f}" for k in range(36)]
    frame, freq, note = read_noted(write(tmp_path, "boj.csv", "\n".join(head + rows) + "\n"))
    assert list(frame.columns) == ["MD02'MAM1NAM2M2MO", "FM08'FXERM07"] and freq == "MS"
    assert frame.index[0] == pd.Timestamp("2012-01-01") and len(frame) == 36
    np.testing.assert_array_equal(frame.iloc[:, 0], 8400000 + 1000 * np.arange(36))
    assert "skipped 5 row(s) below the header describing the columns ('Name of time-series', 'Unit'" in note


@pytest.mark.parametrize(
    ("cells", "said"),
    [(["$120,345.67", "$98,001.10", "($1,250.00)"], "12 amount(s) of money without their currency sign, 4"),
     (["105.510,44 €", "99.001,10 €", "-1.250,00 €"], "12 amount(s) of money without their currency"),
     (["105.510,44", "99.001,10", "1.250,00-"], "4 number(s) with a minus after them (1.234,56-)"),
     (["105.510,44", "99.001,10", "(1.250,00)"], "stripped value flags (( )) from 4 cell(s)")],
)  # SAP exports negative amounts with the minus after them; such a column was refused
def test_money_as_spreadsheets_format_it_is_read_as_numbers(tmp_path, cells, said):
    """A revenue column of '$120,345.67' was skipped as text (silently: only the other column was forecast);
    accounting's '($1,250.00)' is a negative amount. Among decimal commas and no currency sign, German-
    speaking offices' parentheses mark a value published as uncertain: it was read as negative (h49)."""
    months = [f"2023-{month:02d}" for month in range(1, 13)]
    separator = "," if cells[0].startswith("$") else ";"
    rows = [f'{month}{separator}"{cells[k % 3]}"{separator}{k}' for k, month in enumerate(months)]
    header = f"Month{separator}Revenue{separator}Orders"
    path = write(tmp_path, "revenue.csv", "\n".join([header, *rows]) + "\n")
    frame, _, note = read_noted(path)
    assert list(frame.columns) == ["Revenue", "Orders"]
    expected = [120345.67, 98001.10, -1250.0] if separator == "," else [105510.44, 99001.10, -1250.0]
    expected[2] = 1250.0 if cells[2] == "(1.250,00)" else expected[2]
    np.testing.assert_allclose(frame["Revenue"].to_numpy()[:3], expected)
    assert said in note


def test_a_currency_code_after_a_count_is_a_label_not_a_flagged_value(tmp_path):
    """The Riksbank labels its series '1 EUR': read as the number 1 flagged 'eur', it was forecast beside
    the rates. Eurostat's lower-case flags and flags in parentheses are still stripped."""
    days = pd.bdate_range("2022-01-03", periods=30)
    rows = [f"{day:%Y-%m-%d};1 EUR;{10 + k / 100:.4f}".replace(".", ",") for k, day in enumerate(days)]
    frame, _, note = read_noted(write(tmp_path, "sekeur.csv", "\n".join(["Date;Series;Value", *rows]) + "\n"))
    assert list(frame.columns) == ["Value"] and "skipped non-numeric column(s) 'Series'" in note
    flagged = [f"2022-{month:02d},{100 + month}{' p' if month == 11 else '(P)' if month == 12 else ''}"
               for month in range(1, 13)]  # fmt: skip
    frame, _, note = read_noted(write(tmp_path, "flags.csv", "\n".join(["month,index", *flagged]) + "\n"))
    assert frame["index"].tolist()[-2:] == [111.0, 112.0] and "stripped value flags" in note


def test_banxico_and_bea_markers_are_missing_values(tmp_path):
    """Banxico writes 'N/E' (no existe) and the BEA '(D)' for a withheld figure: refused as text where numbers
    are expected."""
    months = [f"2023-{month:02d}" for month in range(1, 13)]
    rows = [f"{month},{'N/E' if k == 5 else 17 + k / 10},{'(D)' if k == 6 else 300 + k}"
            for k, month in enumerate(months)]  # fmt: skip
    frame, _, note = read_noted(write(tmp_path, "fix.csv", "\n".join(["month,fix,income", *rows]) + "\n"))
    assert frame["fix"].iloc[5] == pytest.approx(17.5) and frame["income"].iloc[6] == pytest.approx(306.0)
    assert "read 2 cell(s) marked" in note and "filled 2 empty cell(s) by linear interpolation" in note


@pytest.mark.parametrize("marker", ["—", "[x]", "[c]", "[z]", "(X)", "(S)", "np", "N.A."])
def test_markers_of_the_ons_census_and_abs_are_missing_values(tmp_path, marker):
    """The ONS's "[x]", "[c]", "[z]", the Census Bureau's "(X)", the ABS's "np", an em dash as typeset: each
    was refused as text, where an en dash and "n.d." were read as missing (h49)."""
    rows = [f"2023-{month:02d},{marker if month == 6 else 100 + month}" for month in range(1, 13)]
    frame, _, note = read_noted(write(tmp_path, "m.csv", "\n".join(["month,value", *rows]) + "\n"))
    assert frame["value"].iloc[5] == pytest.approx(106.0) and f"read 1 cell(s) marked {marker!r}" in note


def test_a_noaa_station_file_and_a_crypto_export_forecast_their_measurements_only(tmp_path):
    """NCEI's GHCN-Daily CSV repeats the station's LATITUDE, LONGITUDE and ELEVATION on every row, and
    CryptoDataDownload writes each hour's Unix time in milliseconds beside its date: each was forecast as a
    series. A policy rate unchanged all along stays one."""
    days = pd.date_range("2023-01-01", periods=40)
    rows = ['"STATION","NAME","LATITUDE","LONGITUDE","ELEVATION","DATE","PRCP","TMAX","RATE"'] + [
        f'"USW00094728","NY CITY CENTRAL PARK, NY US","40.77898","-73.96925","42.7","{day:%Y-%m-%d}",'
        f'"{k % 3 / 10:.2f}","{40 + k % 7}","4.5"' for k, day in enumerate(days)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "ghcn.csv", "\n".join(rows)))
    assert freq == "D" and list(frame.columns) == ["PRCP", "TMAX", "RATE"]
    said = "skipped column(s) 'LATITUDE', 'LONGITUDE', 'ELEVATION': one place, format or code throughout"
    assert said in note
    hours = pd.date_range("2024-01-01", periods=48, freq="h")[::-1]  # newest first, as it is published
    rows = ["https://www.CryptoDataDownload.com", "unix,date,symbol,open,close,Volume BTC"] + [
        f"{stamp.value // 10**6},{stamp:%Y-%m-%d %H:%M:%S},BTC/USDT,{100 + k},{101 + k},{k % 5}.5"
        for k, stamp in enumerate(hours)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "Binance_BTCUSDT_1h.csv", "\n".join(rows)))
    assert freq == "h" and list(frame.columns) == ["open", "close", "Volume BTC"]
    assert "skipped column(s) 'unix': the dates as Unix times (targets keep them)" in note



def test_a_column_of_zero_and_one_flagging_provisional_values_is_no_series(tmp_path):
    """'month,value,provisional' with 1 on the latest months: the flags were forecast as a second series
    (h91 F4); named in targets they are read."""
    months = pd.date_range("2018-01-01", periods=60, freq="MS")
    rows = [f"{month:%Y-%m},{200 + 2 * k},{int(k >= 57)}" for k, month in enumerate(months)]
    path = write(tmp_path, "flagged.csv", "month,value,provisional\n" + "\n".join(rows) + "\n")
    frame, freq, note = read_noted(path)
    assert freq == "MS" and list(frame.columns) == ["value"]
    assert note.endswith("skipped column(s) 'provisional': flags of the values, 0 or 1 (targets keep them)")
    assert read_csv(path, targets=["value", "provisional"]).columns == ["value", "provisional"]
    for name, kept in (("value_flag", False), ("machine status", True), ("demand_estimate", True)):
        path.write_text(f"month,value,{name}\n" + "\n".join(rows) + "\n")  # flags of no other column: series
        assert read_csv(path).columns == (["value", name] if kept else ["value"]), name  # h96 F4

def test_published_tables_of_turkish_portuguese_and_swedish_periods_and_cbs_open_data(tmp_path):
    """The year written on a table's first row of each year only (Hong Kong's C&SD, TurkStat), Turkish and
    Portuguese month names under Yıl / Ay and Ano / Mês, Statistics Sweden's quarters "2010K1", and CBS open
    data's Perioden "2018MM01" after an ID, each year's "2018JJ00" total among the months: each was refused
    as having no date column (or "nan is not a year number")."""
    turkish = ("ocak", "şubat", "mart", "nisan", "mayıs", "haziran", "temmuz", "ağustos", "eylül", "ekim",
               "kasım", "aralık")  # fmt: skip
    rows = ["Yıl;Ay;Endeks"] + [f"{2018 + k // 12 if k % 12 == 0 else ''};{turkish[k % 12].title()};"
                                f"{300 + k},5" for k in range(30)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "tufe.csv", "\n".join(rows)))
    assert freq == "MS" and frame.index[13] == pd.Timestamp("2019-02-01") and frame.iloc[13, 0] == 313.5
    assert "carried each year in column 'Yıl' down to the rows below it, left blank" in note
    months = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro",
              "outubro", "novembro", "dezembro")  # fmt: skip
    rows = ["Ano,Mês,IPCA"] + [f"{2020 + k // 12},{months[k % 12]},{k / 10}" for k in range(24)]
    series = read_csv(write(tmp_path, "ipca.csv", "\n".join(rows)))
    assert series.freq == "MS" and series.index[-1] == pd.Timestamp("2021-12-01")
    rows = ["quarter,GDP"] + [f"{2010 + k // 4}K{k % 4 + 1},{1000 + k}" for k in range(12)]
    series = read_csv(write(tmp_path, "scb.csv", "\n".join(rows)))
    assert series.freq == "QS-JAN" and series.index[5] == pd.Timestamp("2011-04-01")
    periods = [f"{2018 + k // 13}{'JJ00' if k % 13 == 12 else f'MM{k % 13 + 1:02d}'}" for k in range(39)]
    rows = ['"ID";"Perioden";"CPI_1"'] + [f'"{k}";"{period}";"{100 + k}"' for k, period in enumerate(periods)]
    frame, freq, note = read_noted(write(tmp_path, "cbs.csv", "\n".join(rows)))
    assert freq == "MS" and len(frame) == 36 and list(frame.columns) == ["CPI_1"]
    assert "dropped 3 row(s) of whole years ('2018JJ00', '2019JJ00', '2020JJ00') among the month rows" in note


def test_the_imf_weo_with_its_column_after_the_years(tmp_path):
    """The IMF's World Economic Outlook: identifying columns, the years, then "Estimates Start After"; with
    that column last, no date column was found."""
    head = ["WEO Country Code", "ISO", "WEO Subject Code", "Country", "Units", *map(str, range(2000, 2024)),
            "Estimates Start After"]  # fmt: skip
    rows = [[code, iso, "NGDP_RPCH", country, "Percent change", *(f"{base + k / 10:.3f}" for k in range(24)),
             2022] for code, iso, country, base in ((134, "DEU", "Germany", 1), (132, "FRA", "France", 2))]
    text = pd.DataFrame(rows, columns=head).to_csv(index=False)
    frame, freq, note = read_noted(write(tmp_path, "WEOOct2023all.csv", text))
    assert freq == "YS-JAN" and len(frame) == 24 and frame.shape[1] == 2
    np.testing.assert_allclose(frame.iloc[:, 1], 2.0 + np.arange(24) / 10)
    assert "period columns of the header ('2000' ... '2023'); left out column 'Estimates Start After" in note


def test_the_imf_ifs_with_a_status_row_under_each_value_row(tmp_path):
    """The IMF's IFS bulk CSV: an Attribute column of "Value" rows, each followed by a "Status" row of flags
    ("P" provisional); the first flag was refused as not a number."""
    years = [str(year) for year in range(2005, 2023)]
    rows = []
    for country, code, base in (("Germany", 134, 80.0), ("France", 132, 90.0)):
        rows.append([country, code, "PCPI_IX", "Value", *(f"{base + k}" for k in range(18)), ""])
        rows.append([country, code, "PCPI_IX", "Status", *([""] * 17), "P", ""])
    head = ["Country Name", "Country Code", "Indicator Code", "Attribute", *years, ""]
    text = pd.DataFrame(rows, columns=head).to_csv(index=False)
    frame, freq, note = read_noted(write(tmp_path, "IFS.csv", text))
    assert freq == "YS-JAN" and list(frame.columns) == ["Germany", "France"]
    np.testing.assert_array_equal(frame["France"], 90.0 + np.arange(18))
    assert "left out 2 row(s) of text only (flags, units)" in note


def test_the_imf_ifs_header_of_every_frequency_reads_its_months(tmp_path):
    """IFS's wide export writes each year's columns as '2000', '2000Q1' ... '2000Q4', '2000M1' ... '2000M12':
    refused as mixing kinds of periods, and --periods as a file of one (h75 F11). The monthly columns are the
    series; the years and quarters (their totals or means) are said left out."""
    labels = []
    for year in range(2000, 2010):
        labels += [str(year), *(f"{year}Q{q}" for q in range(1, 5)), *(f"{year}M{m}" for m in range(1, 13))]
    values = {label: (100 + k if "M" in label else 9999) for k, label in enumerate(labels)}
    row = {"Country Name": "Germany", "Indicator Code": "PCPI_IX", **values}
    text = pd.DataFrame([row]).to_csv(index=False)
    frame, freq, note = read_noted(write(tmp_path, "IFS.csv", text))
    assert freq == "MS" and list(frame.columns) == ["Germany / PCPI_IX"] and len(frame) == 120
    assert frame.index[0] == pd.Timestamp("2000-01-01") and 9999 not in frame.iloc[:, 0].to_numpy()
    assert "left out the coarser periods' 10 yearly and 40 quarterly columns" in note


def test_bloomberg_blocks_side_by_side_each_with_its_own_dates_are_refused_not_misaligned(tmp_path):
    """A BDH of two securities side by side: each block its own Date column. The DAX's values were read on
    the S&P's dates (different holidays), its own dates skipped as text."""
    spx = pd.bdate_range("2023-01-03", periods=40)
    dax = spx.delete(20)  # a day the S&P traded and the DAX did not
    rows = ["SPX Index,,,DAX Index,,", "Date,PX_LAST,,Date,PX_LAST,"] + [
        f"{a.month}/{a.day}/{a.year},{3800 + k},,"
        + (f"{dax[k].month}/{dax[k].day}/{dax[k].year},{14000 + k}," if k < len(dax) else ",,")
        for k, a in enumerate(spx)]  # fmt: skip
    message = one_line_error(write(tmp_path, "bdh.csv", "\n".join(rows) + "\n"))
    said = "column 'DAX Index' holds dates too, other than those of 'SPX Index' from line 22 (2023-02-01"
    assert f"{said} beside 2023-01-31): blocks of columns side by side, each with its own dates" in message


def test_statcan_as_displayed_with_a_row_of_units_under_the_periods(tmp_path):
    """StatCan's "download as displayed": title lines, then Geography and the product across months, a row of
    units ("2002=100") under the header; the units were refused as the first cell that is no number."""
    months = pd.date_range("2022-01-01", periods=24, freq="MS").strftime("%B %Y").tolist()
    lines = ['"Consumer Price Index, monthly, not seasonally adjusted 1 2"', '"Frequency: Monthly"', '""',
             ",".join(f'"{name}"' for name in ["Geography", "Products and product groups 3 4", *months]),
             ",".join(['""', '""'] + ['"2002=100"'] * 24)]  # fmt: skip
    for place, base in (("Canada", 149.0), ("Ontario 5", 148.0)):
        lines.append(",".join([f'"{place}"', '"All-items"', *(f'"{base + k / 10:.1f}"' for k in range(24))]))
    frame, freq, note = read_noted(write(tmp_path, "1810000401.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["Canada", "Ontario 5"] and len(frame) == 24
    np.testing.assert_allclose(frame["Ontario 5"], 148.0 + np.arange(24) / 10)
    assert "left out 1 row(s) of text only (flags, units)" in note


def _pxweb(tmp_path, name: str, variables: dict[str, float], periods: list[str], first: bool = False) -> str:
    """A PxWeb table of two regions with each variable named beside its periods in the header, the period
    last ("Registrerte ledige 2018M01", Statistics Norway) or first ("2019 Väkiluku", Statistics Finland)."""
    head = ['"region"'] + [f'"{p} {v}"' if first else f'"{v} {p}"' for v in variables for p in periods]
    lines = ['"10540: Registrerte ledige, etter region"', "", ";".join(head)]
    for region, share in (("0 Hele landet", 1.0), ("03 Oslo", 0.2)):
        cells = [f"{base * share + k:g}" for base in variables.values() for k in range(len(periods))]
        lines.append(";".join([f'"{region}"', *cells]))
    return write(tmp_path, name, "\n".join(lines) + "\n")


def test_pxweb_tables_naming_their_variables_beside_the_periods(tmp_path):
    """PxWeb writes the table's variable into every period header: these were refused with "no date column".
    One variable names nothing new; two make a series of each region's each variable."""
    months = [f"{year}M{month:02d}" for year in (2018, 2019) for month in range(1, 13)]
    frame, freq, note = read_noted(_pxweb(tmp_path, "one.csv", {"Registrerte ledige": 60000}, months))
    assert freq == "MS" and list(frame.columns) == ["0 Hele landet", "03 Oslo"] and len(frame) == 24
    np.testing.assert_allclose(frame["03 Oslo"], 12000 + np.arange(24))
    assert "2 row(s) as series over the 24 period columns of the header ('Registrerte ledige 2018M01'" in note
    both = {"Registrerte ledige": 60000, "Registrerte ledige i prosent": 2}
    frame, freq, note = read_noted(_pxweb(tmp_path, "two.csv", both, months))
    assert list(frame.columns) == ["0 Hele landet / Registrerte ledige", "03 Oslo / Registrerte ledige",
                                   "0 Hele landet / Registrerte ledige i prosent",
                                   "03 Oslo / Registrerte ledige i prosent"]  # fmt: skip
    np.testing.assert_allclose(frame["03 Oslo / Registrerte ledige i prosent"], 0.4 + np.arange(24))
    assert "2 row(s) x 2 variables as series" in note
    years = [str(year) for year in range(2000, 2012)]
    frame, freq, note = read_noted(_pxweb(tmp_path, "fi.csv", {"Väkiluku": 5000}, years, first=True))
    assert freq == "YS-JAN" and frame["0 Hele landet"].iloc[-1] == 5011
    indexed = {"Konsumprisindeks (2015=100)": 110}  # an index and its base year: refused, "no date column"
    frame, freq, note = read_noted(_pxweb(tmp_path, "cpi.csv", indexed, months))
    assert freq == "MS" and list(frame.columns) == ["0 Hele landet", "03 Oslo"] and len(frame) == 24
    assert "of the variable(s) 'Konsumprisindeks (2015=100)'" in note
    shifted = _pxweb(tmp_path, "shifted.csv", both, months).read_text().replace("nt 2018M01", "nt 2020M01")
    message = one_line_error(write(tmp_path, "shifted.csv", shifted))
    assert "'Registrerte ledige' and 'Registrerte ledige i prosent' cover different periods" in message


def test_a_date_column_beside_a_column_of_times_of_day_is_one_timestamp(tmp_path):
    """UCI's household power file (`Date;Time`, day first) and MetaTrader's export (`2023.10.02,00:00`):
    read apart, the times repeating every day made a panel of a series per time of day, forecast daily."""
    minutes = pd.date_range("2006-12-16 17:24", periods=3000, freq="min")
    lines = ["Date;Time;Global_active_power;Voltage"] + [
        f"{stamp.day}/{stamp.month}/{stamp.year};{stamp:%H:%M:%S};{k % 7 / 3:.3f};{236 + k % 5}"
        for k, stamp in enumerate(minutes)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "household_power.txt", "\n".join(lines) + "\n"))
    assert freq == "min" and list(frame.columns) == ["Global_active_power", "Voltage"] and len(frame) == 3000
    assert frame.index[0] == minutes[0] and frame.index[-1] == minutes[-1]
    assert "read column 'Time' as the time of day of each date in 'Date'" in note
    hours = pd.date_range("2023-10-02", periods=100, freq="h")
    lines = [f"{stamp:%Y.%m.%d},{stamp:%H:%M},{1.05 + k / 1e4:.5f},{1000 + k}"
             for k, stamp in enumerate(hours)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "EURUSD60.csv", "\n".join(lines) + "\n"))
    assert freq == "h" and frame.shape == (100, 2) and frame.index[-1] == hours[-1]


def test_nasa_power_monthly_tables_of_one_or_two_parameters_with_their_annual_column(tmp_path):
    """NASA POWER's monthly CSV: PARAMETER, YEAR, JAN ... DEC, ANN. The ANN column and the PARAMETER column
    kept it from being read as a year-by-month table: 13 yearly series of months were forecast."""
    lines = ["-BEGIN HEADER-", "NASA/POWER CERES/MERRA2 Native Resolution Monthly and Annual", "-END HEADER-",
             "PARAMETER,YEAR,JAN,FEB,MAR,APR,MAY,JUN,JUL,AUG,SEP,OCT,NOV,DEC,ANN"]  # fmt: skip
    for parameter, base in (("T2M", 10.0), ("PRECTOTCORR", 100.0)):
        for year in range(1981, 1991):
            months = [base + 12 * (year - 1981) + month for month in range(12)]
            lines.append(",".join([parameter, str(year), *map(str, months), f"{np.mean(months):.2f}"]))
    frame, freq, note = read_noted(write(tmp_path, "POWER_Point_Monthly.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["T2M", "PRECTOTCORR"] and len(frame) == 120
    np.testing.assert_array_equal(frame["PRECTOTCORR"], 100.0 + np.arange(120))
    assert "as 2 monthly series 'T2M', 'PRECTOTCORR' (by 'PARAMETER'): 20 rows ('YEAR') x 12 month" in note
    assert "dropping the summary column(s) 'ANN'" in note
    one = "\n".join(lines[:14]) + "\n"
    frame, freq, note = read_noted(write(tmp_path, "t2m.csv", one))
    assert list(frame.columns) == ["T2M"] and len(frame) == 120 and frame["T2M"].iloc[-1] == 129.0


def test_wide_rows_are_named_by_their_names_before_their_number_codes(tmp_path):
    """Zillow's ZHVI: RegionID, SizeRank, RegionName, ... then the months. The series were named by RegionID
    (102001, 394913), the first column that tells the rows apart; a name tells them apart too."""
    months = pd.date_range("2000-01-31", periods=24, freq="ME").strftime("%Y-%m-%d").tolist()
    head = ["RegionID", "SizeRank", "RegionName", "RegionType", "StateName", *months]
    rows = [[102001, 0, "United States", "country", "", *(100.0 + k for k in range(24))],
            [394913, 1, "New York, NY", "msa", "NY", *(200.0 + k for k in range(24))]]  # fmt: skip
    text = pd.DataFrame(rows, columns=head).to_csv(index=False)
    frame, freq, note = read_noted(write(tmp_path, "Metro_zhvi.csv", text))
    assert list(frame.columns) == ["United States", "New York, NY"] and freq == "ME"


def test_months_named_without_their_year_beside_a_year_column_are_read_in_those_years(tmp_path):
    """USDA QuickStats: `Year` and `Period` (JAN ... DEC). The period column was found by its name and its
    months read as months of the year 1: a forecast for 0002-01-01."""
    months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    rows = [{"Year": year, "Period": month, "State": "IOWA", "Value": 3.0 + year - 2020 + k / 100}
            for year in (2020, 2021, 2022) for k, month in enumerate(months)]  # fmt: skip
    text = pd.DataFrame(rows).to_csv(index=False)
    frame, freq, note = read_noted(write(tmp_path, "quickstats.csv", text))
    assert freq == "MS" and frame.index[0] == pd.Timestamp("2020-01-01") and len(frame) == 36
    assert frame["Value"].iloc[-1] == 5.11
    assert "read the months of 'Period' in the years of column 'Year'" in note


def test_the_bcrp_s_dotted_spanish_months_and_the_philadelphia_fed_s_quarters(tmp_path):
    """The BCRP's `Ene.2012`, `Set.2012` with `n.d.` (no disponible) cells, and the Philadelphia Fed's
    real-time `1947:Q1`: both were refused with "no date column found"."""
    months = ["Ene", "Feb", "Mar", "Abr", "May", "Jun", "Jul", "Ago", "Set", "Oct", "Nov", "Dic"]
    lines = ['"Fecha","IPC (índice 2009 = 100)"'] + [
        f'"{month}.{year}","{"n.d." if (year, k) == (2013, 5) else 100 + 12 * (year - 2012) + k}"'
        for year in (2012, 2013) for k, month in enumerate(months)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "PN01270PM.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and len(frame) == 24 and frame.index[8] == pd.Timestamp("2012-09-01")
    assert "read 1 cell(s) marked 'n.d.' as missing" in note
    quarters = [f"{1947 + k // 4}:Q{k % 4 + 1}" for k in range(40)]
    text = "DATE,ROUTPUT19Q1\n" + "".join(f"{quarter},{1900 + k}\n" for k, quarter in enumerate(quarters))
    assert read_csv(write(tmp_path, "routputMvQd.csv", text)).freq == "QS-JAN"


def test_nasa_power_daily_rows_of_year_and_day_of_year(tmp_path):
    """NASA POWER's daily CSV: YEAR, DOY. The year repeated 365 times was refused as a duplicate timestamp,
    with the advice to name an id column. A day past its year's last is refused by its line."""
    days = pd.date_range("2020-01-01", "2021-12-31", freq="D")
    lines = ["YEAR,DOY,T2M"] + [f"{day.year},{day.day_of_year},{k / 10:.1f}" for k, day in enumerate(days)]
    series = read_csv(write(tmp_path, "POWER_Point_Daily.csv", "\n".join(lines) + "\n"))
    assert series.freq == "D" and series.frame.index.equals(pd.DatetimeIndex(days, name="YEAR+DOY"))
    lines[-1] = "2021,366,1.0"  # 2021 has 365 days
    message = one_line_error(write(tmp_path, "bad.csv", "\n".join(lines) + "\n"))
    assert "line 732: year 2021 has no day 366; expected a day of its year" in message


def test_a_knmi_daily_file_named_by_its_commented_header_above_a_blank_comment_without_its_station(tmp_path):
    """KNMI's etmgeg: comment lines, `# STN,YYYYMMDD,   TG,   TN,   RH`, then `# ` alone above the data. The
    blank comment hid the names (`column 1` ... `column 5`), and the station number, 260 on every row, was
    forecast as a series."""
    days = pd.date_range("2020-01-01", periods=400, freq="D")
    lines = ["# BRON: KONINKLIJK NEDERLANDS METEOROLOGISCH INSTITUUT (KNMI)", "# ",
             "# STN,YYYYMMDD,   TG,   TN,   RH", "# "]  # fmt: skip
    lines += [f"  260,{day:%Y%m%d},{k % 90:>5},{k % 70 - 30:>5},{k % 40:>5}" for k, day in enumerate(days)]
    frame, freq, note = read_noted(write(tmp_path, "etmgeg_260.txt", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["TG", "TN", "RH"] and freq == "D" and len(frame) == 400
    assert "skipped column(s) 'STN': codes or identifiers" in note


def test_an_nbp_archive_of_yyyymmdd_days_above_its_rows_of_currency_codes_and_units(tmp_path):
    """The NBP's yearly archive: `data;1USD;1EUR;...`, days as 20230102, then a blank line and rows of ISO
    codes, currency names and units. The rows below made the day column text, and text of YYYYMMDD was no
    date."""
    days = pd.bdate_range("2023-01-02", periods=60)
    lines = ["data;1USD;100HUF;nr tabeli"] + [f"{day:%Y%m%d};4,{3800 + k};1,{1700 + k};{k + 1}/A/NBP/2023"
                                              for k, day in enumerate(days)]  # fmt: skip
    lines += ["", "kod ISO;USD;HUF;", "nazwa waluty;dolar amerykański;forint (Węgry);",
              "liczba jednostek;1;100;"]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "archiwum_tab_a_2023.csv", "\n".join(lines) + "\n"))
    assert freq == "B" and list(frame.columns) == ["1USD", "100HUF"] and len(frame) == 60
    assert frame["1USD"].iloc[-1] == 4.3859 and "skipped 3 metadata line(s) after the data" in note


@pytest.mark.parametrize("week", ["{year}W{week:02d}", "{year}-W{week:02d}"])
def test_eurostat_weekly_deaths_with_a_column_of_each_years_unknown_week(tmp_path, week):
    """Eurostat's demo_r_mwk_ts, newest first: each year's weeks and its `2020W99`, deaths of an unknown
    week, mostly ':'. The W99 columns broke the header's run of periods: "no date column found"."""
    labels = []
    for year, weeks in ((2021, 10), (2020, 53)):  # newest first, each year's W99 before its weeks
        labels += [week.format(year=year, week=number) for number in (99, *range(weeks, 0, -1))]
    header = "sex,unit,geo\\time\t" + "\t".join(labels)
    rows = [f"T,NR,{geo}\t" + "\t".join(": " if label.endswith("99") else f"{base + k} p"
                                        for k, label in enumerate(labels))
            for geo, base in (("AT", 1700), ("BE", 2100))]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "demo_r_mwk_ts.tsv", "\n".join([header, *rows]) + "\n"))
    assert freq == "W-MON" and list(frame.columns) == ["AT", "BE"] and len(frame) == 63
    assert f"left out 2 column(s) of unknown weeks ({week.format(year=2021, week=99)!r}, ...)" in note


def test_a_un_sdg_export_is_dated_by_its_time_period_not_its_indicator_number(tmp_path):
    """The UN SDG database: Goal, Target, Indicator (8.5.2), ..., GeoAreaName, TimePeriod, Value, ..., Sex.
    dateutil read the indicator 8.5.2 as 2002-08-05: "duplicate timestamp ... in column 'Indicator'"."""
    rows = [{"Goal": 8, "Target": "8.5", "Indicator": "8.5.2", "SeriesCode": "SL_TLF_UEM",
             "GeoAreaName": area, "TimePeriod": year, "Value": base + (year - 2005) / 10, "Sex": sex}
            for area, base in (("Australia", 5.0), ("Brazil", 9.0)) for sex in ("FEMALE", "MALE")
            for year in range(2005, 2023)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "SDG.csv", pd.DataFrame(rows).to_csv(index=False)))
    assert freq == "YS-JAN" and len(frame) == 18 and frame.index[0] == pd.Timestamp("2005-01-01")
    assert list(frame.columns) == ["Australia/FEMALE", "Australia/MALE", "Brazil/FEMALE", "Brazil/MALE"]


def test_a_date_the_file_was_made_repeated_on_every_row_is_not_its_date_column(tmp_path):
    """NCHS's weekly deaths begin with 'Data As Of' (one day on every row) before 'Week Ending Date': the
    constant day was taken as the dates (a long panel of 2,430 series of one row)."""
    weeks = pd.date_range("2020-01-04", periods=30, freq="W-SAT")
    rows = [f"09/27/2023,{state},{week.year},{k + 1},{week:%Y-%m-%d},{1000 + 10 * s + k}"
            for s, state in enumerate(["Alabama", "Alaska"]) for k, week in enumerate(weeks)]  # fmt: skip
    header = "Data As Of,Jurisdiction of Occurrence,MMWR Year,MMWR Week,Week Ending Date,All Cause\n"
    frame, freq, note = read_noted(write(tmp_path, "nchs.csv", header + "\n".join(rows) + "\n"))
    assert freq == "W-SAT" and list(frame.index) == list(weeks)
    assert list(frame.columns) == ["Alabama", "Alaska"]
    np.testing.assert_array_equal(frame["Alaska"], 1010 + np.arange(30))


def test_columns_restating_the_dates_or_coding_the_rows_are_no_series(tmp_path):
    """WHO FluNet's ISO_YEAR, ISO_WEEK, MMWR_YEAR and MMWR_WEEK, the CFTC's YYMMDD date, UN Comtrade's
    refYear, reporterCode and partner2Code, the Drought Monitor's FIPS and StatisticFormatID were forecast as
    series beside the counts (a forecast of week 6 again, of the year 2023 in 2024)."""
    weeks = pd.date_range("2021-12-26", periods=60, freq="W-SUN")  # MMWR_WEEKSTARTDATE: week 52 of 2021, ...
    mmwr = (weeks + pd.Timedelta(days=1)).isocalendar()  # a Sunday's MMWR week is the next Monday's ISO week
    frame = pd.DataFrame({
        "MMWR_WEEKSTARTDATE": weeks.strftime("%Y-%m-%d"), "ISO_YEAR": mmwr["year"].to_numpy(),
        "ISO_WEEK": mmwr["week"].to_numpy(), "MMWR_YEAR": mmwr["year"].to_numpy(),
        "MMWR_WEEK": mmwr["week"].to_numpy(), "YYMMDD": weeks.strftime("%y%m%d").astype(int),
        "refYear": weeks.year, "reporterCode": 842, "partner2Code": 0, "FIPS": 6037, "StatisticFormatID": 1,
        "INF_A": 100 + np.arange(60), "INF_B": 50 + np.arange(60) % 7,
    })  # fmt: skip
    frame.to_csv(tmp_path / "flunet.csv", index=False)
    read, freq, note = read_noted(tmp_path / "flunet.csv")
    assert freq == "W-SUN" and list(read.columns) == ["INF_A", "INF_B"]
    assert ("skipped column(s) 'reporterCode', 'partner2Code', 'FIPS', 'StatisticFormatID': codes or "
            "identifiers") in note
    assert ("skipped column(s) 'ISO_YEAR', 'ISO_WEEK', 'MMWR_YEAR', 'MMWR_WEEK', 'YYMMDD', 'refYear': parts "
            "or codes of the dates") in note


def test_german_calendar_weeks_jahr_and_kw_are_date_parts(tmp_path):
    """RKI's SurvStat export `Jahr;KW;Fälle`: KW (Kalenderwoche) was no week column, so the years repeated
    and the file was refused as a duplicate timestamp, with advice to name an id column."""
    weeks = pd.date_range("2020-01-06", periods=60, freq="W-MON")
    iso = weeks.isocalendar()
    pairs = zip(iso["year"], iso["week"], strict=True)
    rows = [f"{year};{week};{100 + k}" for k, (year, week) in enumerate(pairs)]
    frame, freq, _ = read_noted(write(tmp_path, "rki.csv", "Jahr;KW;Fälle\n" + "\n".join(rows) + "\n"))
    assert freq == "W-MON" and list(frame.index) == list(weeks)
    np.testing.assert_array_equal(frame["Fälle"], 100 + np.arange(60))
    capacity = "".join(f"{year},{year - 1900}\n" for year in range(2000, 2016))  # kW: kilowatts, no week
    series = read_csv(write(tmp_path, "capacity.csv", "Year,kW\n" + capacity))
    assert series.freq == "YS-JAN" and series.columns == ["kW"] and series.frame["kW"].iloc[-1] == 115


def test_the_imf_datamappers_no_data_cells_and_copyright_line(tmp_path):
    """The IMF DataMapper's download: 'no data' before a country's first year, and a last line
    '©IMF, 2024, Source: World Economic Outlook (April 2024)' that its commas split into three cells (the
    file was refused: 'no data' and the copyright's cells were no numbers)."""
    years = list(range(1990, 2010))
    rows = [f"Albania,{','.join(f'{1 + k / 10:.1f}' for k in range(20))}",
            f"Andorra,{','.join(['no data'] * 5 + [f'{2 + k / 10:.1f}' for k in range(15)])}"]  # fmt: skip
    text = f"Real GDP growth (Annual percent change),{','.join(map(str, years))}\n" + "\n".join(rows)
    path = write(tmp_path, "imf.csv", text + "\n\n©IMF, 2024, Source: World Economic Outlook (April 2024)\n")
    frame, freq, note = read_noted(path)
    assert freq == "YS-JAN" and list(frame.columns) == ["Albania", "Andorra"] and len(frame) == 20
    assert frame["Andorra"].isna().sum() == 5 and frame["Andorra"].iloc[-1] == pytest.approx(3.4)
    assert "skipped 1 metadata line(s) after the data" in note and "read 5 cell(s) marked 'no data'" in note


def test_rki_survstat_weeks_down_the_rows_and_years_across_are_one_weekly_series(tmp_path):
    """RKI's SurvStat export (UTF-16, tabs): `Meldewoche` 1 ... 53 down the rows, a column per year. It was
    read as 53 yearly series of 4 rows each; now one weekly series, week 53 only where the year has one."""
    years = [2019, 2020, 2021]
    rows = []
    for week in range(1, 54):
        cells = [str(1000 * (year - 2019) + week) if week < 53 or year == 2020 else "" for year in years]
        rows.append("\t".join([f'"{week}"', *cells]))
    header = "\t".join(['"Meldewoche"', *(f'"{year}"' for year in years)])
    path = tmp_path / "survstat.csv"
    path.write_bytes(("\n".join([header, *rows]) + "\n").encode("utf-16"))
    frame, freq, note = read_noted(path)
    weeks = pd.date_range("2018-12-31", "2021-12-27", freq="W-MON")  # ISO week 1 of 2019 ... week 52 of 2021
    assert freq == "W-MON" and list(frame.index) == list(weeks) and list(frame.columns) == ["value"]
    assert frame["value"].iloc[52 + 52] == 1053.0 and frame["value"].iloc[-1] == 2052.0  # 2020's week 53
    assert "read the week-by-year table as one weekly series 'value': 53 weeks ('Meldewoche') x 3" in note
    months = "".join(f"{m},{m},{100 + m},{200 + m}\n" for m in range(1, 13))  # months by year alike
    frame, freq, _ = read_noted(write(tmp_path, "monat.csv", "Monat,2019,2020,2021\n" + months))
    assert freq == "MS" and len(frame) == 36 and frame["value"].iloc[12] == 101.0
    ages = "".join(f"{a},{a},{2 * a},{3 * a}\n" for a in range(1, 21))  # ages 1, 2, ... by year: no weeks
    frame, freq, _ = read_noted(write(tmp_path, "alter.csv", "Alter,2019,2020,2021\n" + ages))
    assert freq == "YS-JAN" and len(frame) == 3 and frame.shape[1] == 20


@pytest.mark.parametrize(
    ("last", "flag"),
    [("2023F", "f"), ("2023 (e)", "e"), ("2023 estimate", "estimate"), ("2023 (proj.)", "proj"),
     ("2023 Prelim", "prelim"), ("2023*", "*")],
)  # fmt: skip
def test_a_year_flagged_as_an_estimate_is_read_as_its_year(tmp_path, last, flag):
    """The latest year marked in its date cell as estimated, provisional or forecast ("2023F", "2023
    estimate"): the file was refused as having no date column, or that row dropped as a summary."""
    lines = ["Year,GDP", *(f"{year},{100 + year - 2000}" for year in range(2000, 2023)), f'"{last}",123.5']
    frame, freq, note = read_noted(write(tmp_path, "gdp.csv", "\n".join(lines) + "\n"))
    assert freq == "YS-JAN" and frame.index[-1] == pd.Timestamp("2023-01-01") and len(frame) == 24
    assert frame["GDP"].iloc[-1] == 123.5
    assert f"read 1 date(s) in column 'Year' without their flags ({flag}:" in note


def test_flagged_periods_heading_a_wide_table_and_labels_beside_them(tmp_path):
    """Fiscal years with the latest two flagged, as a wide table's header ("2022-23 (p)") and down a column
    (Census's "Mar 2024(p)" alike); a header naming a period twice, first estimate and revision, is left."""
    years = [f"{year}-{(year + 1) % 100:02d}" for year in range(2010, 2022)]
    header = ["State", *years, "2022-23 (p)", "2023-24 (e)"]
    rows = [",".join(header), *(f"S{k}," + ",".join(str(k + t) for t in range(14)) for k in range(3))]
    frame, freq, note = read_noted(write(tmp_path, "wide.csv", "\n".join(rows) + "\n"))
    assert freq == "YS-JAN" and len(frame) == 14 and frame.index[-1] == pd.Timestamp("2023-01-01")
    assert "read 2 date(s) heading the columns without their flags (p, e:" in note
    months = pd.date_range("2022-01-01", periods=27, freq="MS").strftime("%b %Y").tolist()
    months[-2:] = [f"{months[-2]}(r)", f"{months[-1]}(p)"]
    lines = ["Period,Sales", *(f"{month},{500 + k}" for k, month in enumerate(months))]
    frame, freq, note = read_noted(write(tmp_path, "census.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame.index[-1] == pd.Timestamp("2024-03-01") and frame["Sales"].iloc[-1] == 526
    assert "read 2 date(s) in column 'Period' without their flags (r, p:" in note
    revised = ["State", *years, "2021-22 (r)"]
    rows = [",".join(revised), *(f"S{k}," + ",".join(str(k + t) for t in range(13)) for k in range(3))]
    frame, _, note = read_noted(write(tmp_path, "revised.csv", "\n".join(rows) + "\n"))
    assert len(frame) == 12 and "flags" not in note and "left out column '2021-22 (r)'" in note


def test_a_flag_after_a_cjk_month_label_is_read_without_it(tmp_path):
    """e-Stat and Japan's ministries mark provisional months "2023年12月p": refused as "not month labels like
    the others", where "Mar 2024 (p)" reads (h100 F9)."""
    months = pd.date_range("2020-01-01", periods=48, freq="MS")
    labels = [f"{m.year}年{m.month}月" + ("p" if k >= 46 else "") for k, m in enumerate(months)]
    lines = ["時点,値", *(f"{label},{100 + k}" for k, label in enumerate(labels))]
    frame, freq, note = read_noted(write(tmp_path, "estat.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame.index[-1] == pd.Timestamp("2023-12-01") and frame["値"].iloc[-1] == 147
    assert "read 2 date(s) in column '時点' without their flags (p:" in note


def test_months_flagged_provisional_in_a_month_column_are_read(tmp_path):
    """Hong Kong's C&SD: Year on each year's first row, Month by name, the latest months marked "Nov #"
    (provisional figures, said in a footnote): refused as "Nov # is not a month number"."""
    months = pd.date_range("2021-01-01", periods=24, freq="MS")
    lines = ["Year,Month,Total"] + [
        f"{month.year if month.month == 1 else ''},{month.strftime('%b')}{' #' if k >= 22 else ''},{100 + k}"
        for k, month in enumerate(months)
    ] + ["", "# Provisional figures"]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "visitors.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame.index.equals(pd.DatetimeIndex(months, name="Year+Month"))
    assert frame["Total"].iloc[-1] == 123
    assert "read 2 month(s) in column 'Month' without their flags (#)" in note


def test_a_row_counter_beside_a_long_tables_id_column_is_no_variable(tmp_path):
    """CBS StatLine's download numbers its rows in an ID column: read with --id-col RegioS, ID was forecast
    as a variable of every region beside Banen and Werkloosheid, without a word; found alone, it was not."""
    quarters = [f"{year}KW0{q}" for year in (2015, 2016, 2017) for q in range(1, 5)]
    rows = [(region, quarter, 1000 + 10 * r + k, 50.0 + r + k / 10)
            for r, region in enumerate(["NL01", "LD01"]) for k, quarter in enumerate(quarters)]  # fmt: skip
    lines = ['"ID";"RegioS";"Perioden";"Banen_1";"Werkloosheid_2"'] + [
        f'{k};"{region}";"{quarter}";{jobs};{rate}' for k, (region, quarter, jobs, rate) in enumerate(rows)
    ]
    path = write(tmp_path, "cbs.csv", "\n".join(lines) + "\n")
    found, _, _ = read_noted(path)
    given, freq, _ = read_noted(path, id_col="RegioS")
    names = ["NL01/Banen_1", "NL01/Werkloosheid_2", "LD01/Banen_1", "LD01/Werkloosheid_2"]
    assert list(given.columns) == list(found.columns) == names
    assert freq == "QS-JAN" and given["LD01/Banen_1"].iloc[-1] == 1021


def test_a_years_total_row_after_each_december_is_dropped_as_one(tmp_path):
    """A tourism office's monthly table with "2017 Total" after each December: refused as having no date
    column, as CBS's "2018JJ00" rows had been before they were read as a year's totals."""
    months = pd.date_range("2017-01-01", periods=36, freq="MS")
    lines = ["Month,Overnight stays"]
    for k, month in enumerate(months):
        lines.append(f"{month.year} {month:%B},{400 + k}")
        if month.month == 12:
            lines.append(f"{month.year} Total,{sum(400 + j for j in range(k - 11, k + 1))}")
    frame, freq, note = read_noted(write(tmp_path, "stays.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and len(frame) == 36 and frame.iloc[:, 0].iloc[-1] == 435
    assert "dropped 2 row(s) of whole years ('2017 Total', '2018 Total') among the month rows" in note
    assert "skipped 1 summary row(s) after the data" in note and "'2019 Total'" in note


def test_fiscal_years_beside_their_months_are_one_monthly_series(tmp_path):
    """MOSPI's index of industrial production: Year "2018-19" beside Month "April" ... "March". Read as 12
    yearly series keyed by month name, forecast as such without a word; one monthly series from April 2018."""
    months = pd.date_range("2018-04-01", periods=36, freq="MS")
    years = [month.year - (month.month < 4) for month in months]
    pairs = enumerate(zip(years, months, strict=True))
    lines = ["Year,Month,General Index"] + [f"{year}-{(year + 1) % 100:02d},{month:%B},{120 + k}"
                                            for k, (year, month) in pairs]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "iip.csv", "\n".join(lines) + "\n"))
    assert freq == "MS" and frame.index.equals(pd.DatetimeIndex(months, name="Year+Month"))
    assert frame["General Index"].iloc[-1] == 155
    assert "read column 'Year' as fiscal years beginning in April" in note


def test_a_capital_flag_on_the_digits_is_stripped_and_a_column_of_codes_stays_text(tmp_path):
    """Statistics Canada's estimate "19,507.5E" in a column of thousands separators left the whole column out
    as text (said as non-numeric, or "no numeric columns" where it was the only one), and Stats NZ's
    provisional "460346P" was refused: one capital on the digits is a flag (not K, M or B, scales). A column
    mostly of such cells is codes ("1001A", "1002C"), not flagged values. Its quality flag B ("very good")
    was read as billions (19,087.5B as 1.9e13, h47 F21): a K, M or B on numbers that are, as written, in
    line with the column's plain numbers is a flag; where scaling puts them in line, a scale."""
    months = pd.period_range("2020-01", periods=24, freq="M").astype(str)
    employment = [f'"{19_500.5 + k:,.1f}{"E" if k == 7 else "B" if k in (3, 9) else ""}"' for k in range(24)]
    arrivals = [f"{460_000 + k}{'P' if k > 21 else ''}" for k in range(24)]
    codes = [f"{1000 + k}{'AC'[k % 2]}" for k in range(24)]
    volume = [f"{0.9 + k / 100:.2f}B" if k % 2 else f"{(0.9 + k / 100) * 1e9:.0f}" for k in range(24)]
    cells = zip(months, employment, arrivals, codes, volume, strict=True)
    rows = ["month,Employment (thousands),Arrivals,station,volume", *map(",".join, cells)]
    frame, freq, note = read_noted(write(tmp_path, "labour.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == ["Employment (thousands)", "Arrivals", "volume"] and freq == "MS"
    np.testing.assert_array_equal(frame["Employment (thousands)"], 19_500.5 + np.arange(24))
    np.testing.assert_array_equal(frame["Arrivals"], 460_000 + np.arange(24))
    np.testing.assert_allclose(frame["volume"], (0.9 + np.arange(24) / 100) * 1e9, rtol=1e-12)
    assert "stripped value flags (b, p, e) from 5 cell(s)" in note and "'station'" in note
    assert "read 12 number(s) ending in K (k), M or B as thousands, millions or billions" in note


def test_the_treasurys_calendar_and_fiscal_parts_of_each_date_are_no_series(tmp_path):
    """FiscalData's Debt to the Penny: Record Date newest first, the debts, then `Source Line Number` (1) and
    the date again as `Fiscal Year` (from October), `Fiscal Quarter Number`, `Calendar Year`, `Calendar
    Quarter Number`, `Calendar Month Number` and `Calendar Day Number`: all ten were forecast, unsaid."""
    days = pd.bdate_range("2023-08-01", periods=80)[::-1]
    debt = 26e12 + 1e9 * np.arange(80)[::-1]
    frame = pd.DataFrame({"Record Date": days.strftime("%Y-%m-%d"), "Debt Held by the Public": debt,
                          "Source Line Number": 1, "Fiscal Year": days.year + (days.month >= 10),
                          "Fiscal Quarter Number": (days.month - 10) % 12 // 3 + 1,
                          "Calendar Year": days.year, "Calendar Quarter Number": days.quarter,
                          "Calendar Month Number": days.month, "Calendar Day Number": days.day})  # fmt: skip
    frame.to_csv(tmp_path / "DebtPenny.csv", index=False)
    found, freq, note = read_noted(tmp_path / "DebtPenny.csv")
    assert list(found.columns) == ["Debt Held by the Public"] and freq == "B"
    np.testing.assert_array_equal(found.iloc[:, 0], debt[::-1])
    assert "skipped column(s) 'Source Line Number': codes or identifiers" in note
    assert "'Fiscal Year', 'Fiscal Quarter Number', 'Calendar Year', 'Calendar Quarter Number'" in note


def test_the_banco_de_espanas_description_rows_and_its_missing_mark(tmp_path):
    """BIEST's CSV: series codes as the header, eleven rows describing them (NÚMERO SECUENCIAL, ALIAS, ...,
    FRECUENCIA, NOTAS), then months in Spanish ("ENE 2018") and "_" for a value not published: refused with
    "no date column found" (a description row's numbers taken for data, "_" for text)."""
    months = pd.period_range("2018-01", periods=30, freq="M")
    spanish = ["ENE", "FEB", "MAR", "ABR", "MAY", "JUN", "JUL", "AGO", "SEP", "OCT", "NOV", "DIC"]
    described = [("NÚMERO SECUENCIAL", "1234567", "1234568"), ("ALIAS DE LA SERIE", "TI_1_1.1", "TI_1_2.1"),
                 ("DESCRIPCIÓN DE LAS UNIDADES", "Porcentaje", "Porcentaje"),
                 ("FRECUENCIA", "MENSUAL", "MENSUAL"), ("NÚMERO DE OBSERVACIONES", "30", "30"),
                 ("NOTAS", "", "")]  # fmt: skip
    rows = ['"NOMBRE DE LA SERIE","TI_1_1.1","TI_1_2.1"', *(",".join(f'"{cell}"' for cell in row)
                                                            for row in described)]  # fmt: skip
    rows += [f'"{spanish[m.month - 1]} {m.year}",{1 + k / 100:.3f},{"_" if k == 7 else f"{2 + k / 100:.3f}"}'
             for k, m in enumerate(months)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "be1901.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == ["TI_1_1.1", "TI_1_2.1"] and freq == "MS" and len(frame) == 30
    assert frame.index[0] == pd.Timestamp("2018-01-01") and frame["TI_1_2.1"].iloc[7] == pytest.approx(2.07)
    assert "skipped 6 row(s) below the header describing the columns ('NÚMERO SECUENCIAL'" in note
    assert "read 1 cell(s) marked '_' as missing" in note


def test_bank_of_canada_valet_with_series_named_by_v_numbers(tmp_path):
    """Valet's CSV: terms, a group and the series listed (a `V41690973` id looks like a datum: digits, no
    word) above the observations. A series list as wide as the table was taken for data, the first line for
    the header, and the file refused in pandas' words ("Expected 1 fields in line 5, saw 3")."""
    months = pd.date_range("2010-01-01", periods=36, freq="MS")
    lines = ['"TERMS AND CONDITIONS"', '"https://www.bankofcanada.ca/terms/"', "", '"SERIES"',
             '"id","label","description"', '"V41690973","Total CPI","Total CPI"',
             '"CPIXFET","CPIXFET","CPI excluding food and energy"', "", '"OBSERVATIONS"',
             '"date","V41690973","CPIXFET"']  # fmt: skip
    lines += [f'"{month:%Y-%m-%d}","{115 + 0.5 * k:.1f}","{110 + 0.25 * k:.2f}"'
              for k, month in enumerate(months)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "FX_CPI.csv", "\n".join(lines) + "\n"))
    assert list(frame.columns) == ["V41690973", "CPIXFET"] and freq == "MS"
    assert frame.index.equals(pd.DatetimeIndex(months, name="date"))
    np.testing.assert_allclose(frame["V41690973"], 115 + 0.5 * np.arange(36))
    assert "skipped 7 metadata line(s) before the data" in note


def _m3(path, part: str | None, starts: list[tuple[int, int]], lengths: list[int]) -> list[np.ndarray]:
    """An M3 competition file (M3C.xls saved as CSV): Series, N, NF, Category, Starting Year (and Month or
    Quarter), then each series' values under 1, 2, ..., a shorter one ending in empty cells."""
    width, series = max(lengths), []
    header = ["Series", "N", "NF", "Category", "Starting Year", *([part] if part else []),
              *map(str, range(1, width + 1))]  # fmt: skip
    lines = [",".join(header)]
    for k, ((year, first), length) in enumerate(zip(starts, lengths, strict=True)):
        values = 1000.0 + 100 * k + np.arange(length) * (k + 1)
        series.append(values)
        cells = [f"N{1402 + k}", str(length), "18", "MICRO", str(year), *([str(first)] if part else []),
                 *(f"{value:g}" for value in values), *[""] * (width - length)]  # fmt: skip
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return series


@pytest.mark.parametrize(("part", "step"), [("Starting Month", "MS"), ("Starting Quarter", "QS-JAN"),
                                            (None, "YS-JAN")])  # fmt: skip
def test_m3_series_per_row_are_read_each_from_its_start(tmp_path, part, step):
    """M3's files were refused as "the series are rows" with advice to transpose them or read them with
    --no-date, which would have read N, NF and the starts as values and lost every start."""
    starts, lengths = [(1990, 1), (1983, 3), (1982, 2)], [30, 42, 36]
    values = _m3(tmp_path / "m3.csv", part, starts, lengths)
    with pytest.warns(DataQualityWarning, match="read 3 series written one per row, each from its starting"):
        series = read_csv(tmp_path / "m3.csv")
    assert series.columns == ["N1402", "N1403", "N1404"] and series.options.id_col == "Series"
    months = {"Starting Month": 1, "Starting Quarter": 3, None: 12}[part]
    for name, (year, first), length, expected in zip(series.columns, starts, lengths, values, strict=True):
        first_date = pd.Timestamp(year, (first - 1) * months + 1, 1) if part else pd.Timestamp(year, 1, 1)
        column = series.frame[name].dropna()
        assert column.index.equals(pd.date_range(first_date, periods=length, freq=step, name="date")), name
        np.testing.assert_array_equal(column.to_numpy(), expected)


def test_an_m3_file_trains_and_forecasts_each_series_after_its_own_end(tmp_path, capsys):
    from forecaster.cli import main

    _m3(tmp_path / "m3.csv", "Starting Quarter", [(1990, 1), (1983, 3), (1982, 2)], [30, 42, 36])
    model, out = tmp_path / "model", tmp_path / "forecast.csv"
    assert main(["train", "--csv", str(tmp_path / "m3.csv"), "--model", "naive", "--horizon", "8",
                 "--no-progress", "--out", str(model)]) == 0  # fmt: skip
    predict = ["predict", "--model", str(model), "--csv", str(tmp_path / "m3.csv"), "--output", str(out)]
    assert main(predict) == 0
    written = pd.read_csv(out, parse_dates=["date"])
    ends = {"N1402": ("1997-04-01", 1029.0), "N1403": ("1993-10-01", 1182.0), "N1404": ("1991-01-01", 1305.0)}
    for name, (last, value) in ends.items():
        rows = written[written["Series"] == name]
        assert rows["date"].iloc[0] == pd.Timestamp(last) + pd.offsets.QuarterBegin(startingMonth=1), name
        assert len(rows) == 8 and (rows["naive"] == value).all(), name


def test_tourism_columns_that_open_with_their_length_and_start_are_refused_naming_the_layout(tmp_path):
    """The Tourism competition's files: a column per series whose first three rows are its length, starting
    year and starting quarter. The refusal said to pass --no-date, which reads those rows as values."""
    lengths, starts = [44, 52, 36], [(1994, 1), (1988, 3), (1998, 2)]
    columns = {}
    for k, (length, (year, quarter)) in enumerate(zip(lengths, starts, strict=True)):
        values = [length, year, quarter, *(500.0 + 10 * k + np.arange(length))]
        columns[f"Q{k + 1}"] = values + [np.nan] * (max(lengths) + 3 - len(values))
    pd.DataFrame(columns).to_csv(tmp_path / "quarterly_in.csv", index=False)
    message = one_line_error(tmp_path / "quarterly_in.csv")
    assert "the first three rows hold each column's length, starting year and starting period" in message
    assert "--no-date" not in message


@pytest.mark.parametrize(("year", "month"), [("年", "月"), ("年份", "月份"), ("연도", "월")])
def test_year_and_month_columns_named_in_japanese_chinese_or_korean(tmp_path, year, month):
    """A prefecture panel `地域,年,人口` and e-Stat's or KOSIS' year and month columns were refused as having
    no date column: 年, 年份 and 연도 name no year (h111 F1)."""
    prefectures = ("北海道", "青森県", "東京都")
    rows = [f"地域,{year},人口"] + [f"{name},{y},{5000 - 300 * j + y - 2005}"
                                    for j, name in enumerate(prefectures)
                                    for y in range(2005, 2023)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "pref.csv", "\n".join(rows) + "\n"))
    assert freq == "YS-JAN" and list(frame.columns) == list(prefectures) and frame.iloc[-1, 1] == 4717
    assert "read as a long panel of 3 series ('北海道', '青森県', '東京都') keyed by column '地域'" in note
    rows = [f"{year},{month},指数"] + [f"{2020 + k // 12},{k % 12 + 1},{100 + k}" for k in range(24)]
    series = read_csv(write(tmp_path, "monthly.csv", "\n".join(rows) + "\n"))
    assert series.freq == "MS" and series.index[13] == pd.Timestamp("2021-02-01")
    assert series.frame.iloc[13, 0] == 113


def test_an_oecd_stat_export_of_one_country_forecasts_its_values_not_its_base_year(tmp_path):
    """OECD.Stat's CSV gives each dimension a code and a label column, and an index's base year in a column
    'Reference Period' (2015 on every row): with one country it was forecast as a second series, unsaid."""
    header = ('"LOCATION","Country","SUBJECT","Subject","MEASURE","Measure","FREQUENCY","Frequency","TIME",'
              '"Time","Unit Code","Unit","PowerCode Code","PowerCode","Reference Period Code",'
              '"Reference Period","Value","Flag Codes","Flags"')  # fmt: skip
    months = pd.date_range("2019-01-01", periods=36, freq="MS")
    rows = [f'"FRA","France","CPALTT01","CPI: All items","IXOB","Index","M","Monthly","{month:%Y-%m}",'
            f'"{month:%b-%Y}","IDX","Index","0","Units","2015","2015",{100 + k / 4},"",""'
            for k, month in enumerate(months)]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "oecd.csv", "\n".join([header, *rows]) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["Value"]
    np.testing.assert_allclose(frame["Value"], 100 + np.arange(36) / 4)
    assert "skipped column(s) 'Reference Period': one place, format or code throughout" in note


def test_an_imf_weo_download_reads_its_dashes_as_missing_and_says_where_estimates_start(tmp_path):
    """The IMF WEO's tab-separated download writes "n/a" and "--" where a year has no value ("--" was refused
    as not a number) and ends each row in 'Estimates Start After': the years after it are the IMF's
    projections, which are read as values, and the note now says so."""
    years = list(range(2010, 2030))
    header = ("WEO Country Code\tISO\tWEO Subject Code\tCountry\tSubject Descriptor\tUnits\tScale\t"
              + "\t".join(map(str, years)) + "\tEstimates Start After")  # fmt: skip
    cells = ["--" if year == 2015 else "n/a" if year == 2029 else f"{1 + k / 10:.3f}" for k, year in
             enumerate(years)]  # fmt: skip
    row = "111\tUSA\tNGDP_RPCH\tUnited States\tGross domestic product, constant prices\tPercent change\t\t"
    lines = [header, row + "\t".join(cells) + "\t2022", "",
             "International Monetary Fund, World Economic Outlook Database, October 2023"]  # fmt: skip
    with pytest.warns(DataQualityWarning) as said:
        series = read_csv(write(tmp_path, "WEOOct2023all.xls", "\n".join(lines) + "\n"))
    note = " ".join(str(warning.message) for warning in said)
    assert series.freq == "YS-JAN" and series.frame.index[-1] == pd.Timestamp("2028-01-01")
    assert series.frame.iloc[5, 0] == pytest.approx(1.5)  # 2015's "--" filled between 1.4 and 1.6
    assert "read 1 cell(s) marked '--' as missing" in note
    assert "the periods after its year (2022 at the earliest) are estimates and projections" in note


_ESTAT_MONTHS = [f"{2020 + k // 12}00{k % 12 + 1:02d}{k % 12 + 1:02d}" for k in range(36)]
_ESTAT_QUARTERS = [f"{2015 + k // 4}00{3 * (k % 4) + 1:02d}{3 * (k % 4) + 3:02d}" for k in range(24)]


@pytest.mark.parametrize(("codes", "freq"), [(_ESTAT_MONTHS, "MS"), (_ESTAT_QUARTERS, "QS-JAN"),
                                             ([f"{2000 + k}000000" for k in range(12)], "YS-JAN")],
                         ids=["months", "quarters", "years"])  # fmt: skip
def test_estat_time_codes_read_as_their_periods(tmp_path, codes, freq):
    """e-Stat's API CSV codes its periods YYYY00FFLL, a period's first and last months (2020000101 for
    January 2020, 2020000103 its first quarter, 2020000000 the year): without the label column beside them
    the file was "no date column found", and with --date-col time_code they were Unix seconds in 2034."""
    rows = [f'"{code}","{100 + k / 10:.1f}"' for k, code in enumerate(codes)]
    path = write(tmp_path, "estat.csv", "\n".join(['"time_code","value"', *rows]) + "\n")
    for options in ({}, {"date_col": "time_code"}):
        series = read_csv(path, **options)
        assert series.freq == freq and series.frame.index[0].year == int(codes[0][:4])
        np.testing.assert_allclose(series.frame["value"], 100 + np.arange(len(codes)) / 10)
    gdp = "Year,GDP\n" + "".join(f"{2000 + k},{2000 + k}000000\n" for k in range(12))
    rounded = write(tmp_path, "gdp.csv", gdp)
    assert read_csv(rounded).date_col == "Year"  # a value in millions is no e-Stat year
    for name in ("runtime", "time_ns"):  # nor one named with "time" (h131: read as the years 2000-2011)
        lines = "".join(f"{2000 + k}000000,{k}\n" for k in range(12))
        timed = write(tmp_path, "timed.csv", f"{name},visits\n{lines}")
        with pytest.raises(ForecasterError, match="no date column found"):
            read_csv(timed)


@pytest.mark.parametrize("codes", [{22: "1"}, {22: "1", 35: "P"}], ids=["a number", "a number and a letter"])
def test_bls_footnote_codes_are_no_series(tmp_path, codes):
    """The BLS' flat files end each row in `footnote_codes`: a "1" on one row was forecast as a second series
    of one value, and a "P" besides it refused as text among numbers."""
    rows = ["series_id\tyear\tperiod\tvalue\tfootnote_codes"]
    for k in range(36):
        rows.append(f"LNU04000000\t{2018 + k // 12}\tM{k % 12 + 1:02d}\t{4 + k / 10:.1f}\t{codes.get(k, '')}")
        if k % 12 == 11:
            rows.append(f"LNU04000000\t{2018 + k // 12}\tM13\t9.9\t")  # the annual average
    frame, freq, note = read_noted(write(tmp_path, "ln.data.txt", "\n".join(rows) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["value"]
    np.testing.assert_allclose(frame["value"], 4 + np.arange(36) / 10)
    assert "skipped column(s) 'footnote_codes': footnotes or their codes" in note


def _statcan_displayed(products: list[str], notes: list[str]) -> str:
    """StatCan's "download as displayed" CSV: title lines, a header of months, a units row, a row per product,
    the symbol legend, its numbered footnotes and the citation."""
    months = ",".join(f'"{m:%B %Y}"' for m in pd.date_range("2022-01", periods=12, freq="MS"))
    rows = ['"Consumer Price Index, monthly, not seasonally adjusted 1 2"', '"Frequency: Monthly"',
            '"Table: 18-10-0004-01"', '"Geography: Canada"', '""',
            f'"Products and product groups 3 4",{months}', '"","2002=100"']
    rows += [f'"{name}",' + ",".join(f'"{100 + 10 * k + 0.1 * m:.1f}"' for m in range(12))
             for k, name in enumerate(products)]
    rows += ['""', '"Symbol legend:"', '"..","not available for a specific reference period"',
             '"E","use with caution"', '""', '"Footnotes:"',
             *(f'"{n}","{note}"' for n, note in enumerate(notes, 1)),
             '"How to cite: Statistics Canada. Table 18-10-0004-01"',
             '"https://doi.org/10.25318/1810000401-eng"']
    return "\n".join(rows) + "\n"


def test_a_statistics_canada_table_as_displayed_of_two_rows_reads(tmp_path):
    """Its 2 rows of 13 cells were outnumbered by the legend's and footnotes' pairs of cells, taken for the
    table's width: "not a well-formed CSV file: Expected 1 fields in line 6, saw 13" (h125 O1)."""
    text = _statcan_displayed(["All-items", "Food"], ["Monthly CPI", "Base 2002=100"])
    frame, freq, note = read_noted(write(tmp_path, "1810000401.csv", text))
    assert freq == "MS" and list(frame.columns) == ["All-items", "Food"] and len(frame) == 12
    assert frame.loc["2022-12-01", "Food"] == pytest.approx(111.1)


def test_statistics_canadas_footnote_numbers_are_dropped_from_the_labels_they_mark(tmp_path):
    """StatCan writes its notes' numbers into the labels ("Food 5"): the series was named 'Food 5' (h125 O2).
    A label's own number, no note's ("Product 7" of notes 1 to 5), is kept, and so are labels that would be
    one without their numbers ("Product 1", "Product 2" under notes 1 and 2)."""
    notes = ["Monthly CPI", "Base 2002=100", "Products", "Groups", "Food from stores and restaurants"]
    text = _statcan_displayed(["All-items", "Food 5", "Product 7", "Product 1", "Product 2"], notes)
    frame, _, note = read_noted(write(tmp_path, "1810000401.csv", text))
    assert list(frame.columns) == ["All-items", "Food", "Product 7", "Product 1", "Product 2"]
    assert "read 2 label(s) without the numbers of the footnotes after the data" in note
    assert "'Food 5' as 'Food'" in note


def test_each_label_is_read_for_footnote_numbers_once(tmp_path, monkeypatch):
    """Every label of the first column and the header is matched once: a label read without its numbers was
    matched again to say so (h143 7)."""
    from collections import Counter

    from forecaster.data import legends

    seen: list[str] = []
    marked = legends._MARKED

    class Counted:
        def fullmatch(self, label: str):
            seen.append(label)
            return marked.fullmatch(label)

    monkeypatch.setattr(legends, "_MARKED", Counted())
    notes = ["Monthly CPI", "Base 2002=100", "Products", "Groups", "Food from stores and restaurants"]
    text = _statcan_displayed(["All-items", "Food 5", "Product 7", "Product 1", "Product 2"], notes)
    frame, _, note = read_noted(write(tmp_path, "1810000401.csv", text))
    assert "Food" in frame.columns and "'Food 5' as 'Food'" in note
    assert "Food 5" in seen and max(Counter(seen).values()) == 1, Counter(seen).most_common(3)


def test_a_banco_de_espana_file_ending_in_its_source_and_notes_rows_reads(tmp_path):
    """The Banco de España's CSV ends in "FUENTE" and "NOTAS" rows, a cell per series: they were taken for
    data, so its "MAR 2015" quarters were no date column ("no date column found")."""
    quarters = pd.period_range("2015Q1", periods=36, freq="Q")
    spanish = dict(zip(("MAR", "JUN", "SEP", "DIC"), range(4), strict=True))
    rows = ['"NOMBRE DE LA SERIE","DSPC102020ANAESB1GQ_EUR.T","DSPC102020ANAESP31S14_EUR.T"',
            '"NÚMERO SECUENCIAL","3862121","3862122"', '"ALIAS DE LA SERIE","CN_1.1","CN_1.2"',
            '"DESCRIPCIÓN DE LA SERIE","PIB a precios de mercado","Gasto en consumo final"',
            '"DESCRIPCIÓN DE LAS UNIDADES","Millones de euros","Millones de euros"',
            '"FRECUENCIA","TRIMESTRAL","TRIMESTRAL"']
    names = {k: name for name, k in spanish.items()}
    rows += [f'"{names[q.quarter - 1]} {q.year}","{260000 + 900 * k}","{150000 + 400 * k}"'
             for k, q in enumerate(quarters)]
    rows += ['"FUENTE","Banco de España","Banco de España"', '"NOTAS","",""']
    frame, freq, note = read_noted(write(tmp_path, "be0101.csv", "\n".join(rows) + "\n"))
    assert freq.startswith("QS") and len(frame) == 36 and frame.index[-1] == pd.Timestamp("2023-12-01")
    assert frame.iloc[-1].tolist() == [260000 + 900 * 35, 150000 + 400 * 35]
    assert "skipped 2 metadata line(s) after the data" in note


@pytest.mark.parametrize("series", [1, 2])
def test_a_banque_de_france_export_is_named_by_its_series_codes_not_its_source_line(tmp_path, series):
    """Webstat writes only "key :;value" lines above its data (Titre, Code série, Unité, ..., Source): the
    series was named after its source, 'BCE', and two series of one source refused as 'BCE' twice."""
    codes = ["EXR.M.USD.EUR.SP00.E", "EXR.M.JPY.EUR.SP00.E"][:series]
    keys = [("Titre :", "Taux de change"), ("Code série :", None), ("Unité :", "Unités"),
            ("Méthode d'observation :", "Fin de période (E)"), ("Source :", "BCE")]
    rows = [";".join([key, *(codes if value is None else [value] * series)]) for key, value in keys]
    rows += [";".join([f"{k % 12 + 1:02d}/{2019 + k // 12}", *(f"{1 + j + k / 100:.2f}".replace(".", ",")
                                                                for j in range(series))]) for k in range(60)]
    frame, freq, note = read_noted(write(tmp_path, "webstat.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == codes and freq == "MS" and len(frame) == 60
    assert frame.iloc[-1].tolist() == pytest.approx([1.59, 2.59][:series])
    assert "named the columns from 1 line(s) above the header" in note


def test_a_series_named_notes_is_no_source_row_after_the_data(tmp_path):
    """A row whose first cell alone says source or notes is a note where its other cells are words (the Banco
    de España's "FUENTE"), not where they are values: banknotes' "Notes" below "Coins", a series as a row,
    was dropped as a metadata line."""
    months = pd.date_range("2020-01", periods=24, freq="MS")
    rows = ["Currency in circulation," + ",".join(f"{m:%Y-%m}" for m in months),
            "Coins," + ",".join(str(100 + k) for k in range(24)),
            "Notes," + ",".join(str(900 + 5 * k) for k in range(24))]  # fmt: skip
    frame, freq, note = read_noted(write(tmp_path, "currency.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == ["Coins", "Notes"] and freq == "MS" and len(frame) == 24
    np.testing.assert_array_equal(frame["Notes"], 900 + 5 * np.arange(24))
    assert "metadata line" not in note


def test_a_label_ending_in_its_own_number_keeps_it_where_the_header_marks_nothing(tmp_path):
    """An age table's `Under 5` under notes 1 to 5 read as `Under` (h142): its header, `Age group`, carries no
    note numbers, as StatCan's marked headers do, so the number is the label's own."""
    months = ",".join(f'"{m:%B %Y}"' for m in pd.date_range("2022-01", periods=12, freq="MS"))
    rows = ['"Children by age group"', '""', f'"Age group",{months}']
    rows += [f'"{name}",' + ",".join(f'"{100 + 10 * k + m}"' for m in range(12))
             for k, name in enumerate(["Under 5", "5 to 14"])]
    rows += ['""', '"Footnotes:"', *(f'"{n}","Note number {n} about the survey"' for n in range(1, 6))]
    frame, _, note = read_noted(write(tmp_path, "ages.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == ["Under 5", "5 to 14"]
    assert "without the numbers of the footnotes" not in note


def test_an_age_table_under_marked_headers_keeps_its_bounds_and_its_last_group(tmp_path):
    """StatCan's table as displayed, its title and header marked ('Age group 3'), rows `Under 5`, `5 to 14`,
    `15 and over`, notes 1 to 5: `Under 5` read as `Under`, and `15 and over` was skipped as a summary row
    below `5 to 14` (h142). The number after `Under` is the label's own; an age group is no summary."""
    months = ",".join(f'"{m:%B %Y}"' for m in pd.date_range("2022-01", periods=12, freq="MS"))
    rows = ['"Children by age group 1 2"', '""', f'"Age group 3",{months}']
    rows += [f'"{name}",' + ",".join(f'"{1000 + 100 * k + 1.5 * m:.1f}"' for m in range(12))
             for k, name in enumerate(["Under 5", "5 to 14", "15 and over", "Total"])]
    rows += ['""', '"Footnotes:"', *(f'"{n}","Note number {n} about the survey"' for n in range(1, 6))]
    frame, freq, note = read_noted(write(tmp_path, "1710000501.csv", "\n".join(rows) + "\n"))
    assert freq == "MS" and list(frame.columns) == ["Under 5", "5 to 14", "15 and over"]
    np.testing.assert_allclose(frame["15 and over"], 1200 + 1.5 * np.arange(12))
    assert "'Age group 3' as 'Age group'" in note and "'Under 5'" not in note
    assert "skipped 1 summary row(s) after the data: line 7 'Total'" in note  # a total still is one


@pytest.mark.parametrize("last", ["65 and over", "65+ years", "Aged 65 or older"])
def test_an_age_tables_open_last_group_is_no_summary_row(tmp_path, last):
    """Age groups as rows, months across: the last group, worded (`65 and over`), was skipped as "1 summary
    row(s) after the data", its series lost, as the row above it (`15 to 64`) holds digits and no word."""
    months = ",".join(f"{m:%b-%Y}" for m in pd.date_range("2023-01", periods=12, freq="MS"))
    rows = [f"Age,{months}"] + [f"{name}," + ",".join(str(1000 * (k + 1) + 7 * m) for m in range(12))
                                for k, name in enumerate(["0 to 4", "5 to 14", "15 to 64", last])]
    frame, freq, note = read_noted(write(tmp_path, "ages.csv", "\n".join(rows) + "\n"))
    assert list(frame.columns) == ["0 to 4", "5 to 14", "15 to 64", last] and freq == "MS"
    np.testing.assert_array_equal(frame[last], 4000 + 7 * np.arange(12))
    assert "summary" not in note


def test_a_long_panels_last_short_series_below_one_named_with_a_number_is_kept(tmp_path):
    """A long panel whose last series, 'kiosk', holds 2 rows below 'shop2': the age tables' rule (a label
    below one holding a number is a group) took 'shop2' for a group label above 2 summary rows and dropped
    'kiosk'; only a range above ('15 to 64') makes the rows below it a table's last group."""
    days = pd.date_range("2024-01-01", periods=12, freq="D")
    rows = ["id,date,y"] + [f"shop{k},{day:%Y-%m-%d},{10 * k + d}"
                            for k in (1, 2) for d, day in enumerate(days)]  # fmt: skip
    rows += [f"kiosk,{day:%Y-%m-%d},7" for day in days[-2:]]
    frame, _, note = read_noted(write(tmp_path, "shops.csv", "\n".join(rows) + "\n"), id_col="id")
    assert sorted(frame.columns) == ["kiosk", "shop1", "shop2"] and "summary" not in note
    assert frame["kiosk"].notna().sum() == 2


@pytest.mark.parametrize("end", ["", ";"])
def test_a_genesis_yearly_table_is_named_by_its_variable_not_its_unit(tmp_path, end):
    """GENESIS' yearly table of one variable: ";Bevölkerungsstand" above ";Anzahl" (a count, its unit) above
    "31.12.2017;82792351": the series was named 'Anzahl'. So it was where a ";" ends every line (its last
    column empty throughout, unnamed above)."""
    rows = ["GENESIS-Tabelle: 12411-0001", "Bevölkerung: Deutschland, Stichtag", "Deutschland",
            f";Bevölkerungsstand{end}", f";Anzahl{end}"]
    rows += [f"31.12.{year};{82792351 + 180000 * k - 7000 * k * k}{end}"
             for k, year in enumerate(range(2017, 2024))]
    rows += ["__________", "Stand: 21.11.2024 - 11:35:56"]
    path = tmp_path / "12411-0001.csv"
    path.write_bytes(("\n".join(rows) + "\n").encode("cp1252"))
    frame, _, note = read_noted(path)
    assert list(frame.columns) == ["Bevölkerungsstand"] and len(frame) == 7
    assert frame.iloc[-1, 0] == 82792351 + 180000 * 6 - 7000 * 36
    assert "named the columns from 1 line(s) above the header: period, Bevölkerungsstand" in note


def test_an_ecb_series_codes_and_attributes_written_in_digits_are_no_series(tmp_path):
    """The ECB data portal's SDMX-CSV of one series: its dimensions and attributes in columns beside
    OBS_VALUE, some written in digits alike in every row (ICP_ITEM '000000', STS_INSTITUTION 4, UNIT_MULT
    0). They were read as three more series, forecast beside the index."""
    head = "KEY,FREQ,REF_AREA,ICP_ITEM,STS_INSTITUTION,TIME_PERIOD,OBS_VALUE,OBS_STATUS,TITLE,UNIT_MULT"
    months = pd.period_range("2021-01", periods=24, freq="M")
    values = [round(105 + 0.3 * k + (k % 5) / 10, 1) for k in range(24)]
    rows = [f'ICP.M.U2.N.000000.4.INX,M,U2,"000000",4,{month},{value},{"P" if k > 21 else "A"},HICP,0'
            for k, (month, value) in enumerate(zip(months, values, strict=True))]
    path = write(tmp_path, "ecb.csv", "\n".join([head, *rows]) + "\n")
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["OBS_VALUE"] and freq == "MS" and len(frame) == 24
    np.testing.assert_allclose(frame["OBS_VALUE"], values)
    assert "skipped column(s) 'ICP_ITEM', 'STS_INSTITUTION', 'UNIT_MULT': one place, format or code" in note
    # beside a user's own "value" (or "y"), a constant column is a series: only SDMX's rows are coded (h164)
    own = "date,value,price\n" + "".join(f"2021-{m:02d}-01,{v},5\n" for m, v in enumerate(values[:12], 1))
    frame = read_csv(write(tmp_path, "own.csv", own)).frame
    assert list(frame.columns) == ["value", "price"] and (frame["price"] == 5).all()


def test_a_statcan_table_names_its_series_by_geography_and_product_not_by_vector(tmp_path):
    """Statistics Canada's full-table CSV: REF_DATE, GEO, DGUID, a dimension, ..., VECTOR (one per series),
    COORDINATE, VALUE, STATUS, .... The vector tells the series apart alone, so they were named
    'v41690973', ...; the words its vector stands for name them as the table shows them."""
    head = ("REF_DATE,GEO,DGUID,Products and product groups,UOM,VECTOR,COORDINATE,VALUE,STATUS,SYMBOL,"
            "TERMINATED,DECIMALS")
    geos, products = (("Canada", "2016A000011124"), ("Ontario", "2016A000235")), ("All-items", "Food")
    rows, expected = [], {}
    for month in pd.period_range("2022-01", periods=12, freq="M"):
        for g, (geo, dguid) in enumerate(geos):
            for p, product in enumerate(products):
                value = 140 + 10 * g + 5 * p + month.month / 10
                expected.setdefault(f"{geo}/{product}", []).append(value)
                vector, coordinate = f"v4169{g}97{p}", f"{g + 1}.{p + 2}"
                rows.append(f"{month},{geo},{dguid},{product},2002=100,{vector},{coordinate},{value},,,,1")
    path = write(tmp_path, "18100004.csv", "\n".join([head, *rows]) + "\n")
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == list(expected) and freq == "MS"
    for name, values in expected.items():
        np.testing.assert_allclose(frame[name], values)
    assert "keyed by columns 'GEO' and 'Products and product groups'" in note


@pytest.mark.parametrize("wide", [True, False])
def test_a_kosis_tables_provisional_last_period_is_read(tmp_path, wide):
    """KOSIS (Statistics Korea) marks its latest, provisional period "p)" after it: "2023.12 월 p)" heading
    the last column, "2023 p)" in the last row. The column was left out as no period ("after them") and the
    row refused as no date."""
    values = [round(100 + 0.4 * k + (k % 3) / 10, 1) for k in range(24)]
    if wide:
        months = [f"{2022 + k // 12}.{k % 12 + 1:02d} 월" for k in range(24)]
        months[-1] += " p)"
        text = "시도별,단위," + ",".join(months) + "\n전국,2020=100," + ",".join(map(str, values)) + "\n"
        expected = pd.date_range("2022-01-01", periods=24, freq="MS")
    else:
        years = [f"{2000 + k}" for k in range(24)]
        years[-1] += " p)"
        rows = [f"{year},{value}\n" for year, value in zip(years, values, strict=True)]
        text = "시점,실업률\n" + "".join(rows)
        expected = pd.date_range("2000-01-01", periods=24, freq="YS")
    path = tmp_path / "kosis.csv"
    path.write_bytes(text.encode("cp949"))
    frame, _, note = read_noted(path)
    assert len(frame) == 24 and list(frame.index) == list(expected)
    np.testing.assert_allclose(frame.iloc[:, 0], values)
    assert "without their flags (p: estimated, provisional, revised or forecast values" in note


def test_an_imf_ifs_tables_empty_status_rows_leave_the_series_named_by_country(tmp_path):
    """The IMF's IFS bulk CSV: a "Value" row and a "Status" row per country (Attribute column), months as
    columns "2018M1", a comma after each line. Where no value is flagged the Status rows are empty; the
    series were named 'Canada / Value' after them."""
    months = [f"{2018 + k // 12}M{k % 12 + 1}" for k in range(24)]
    head = '"Country Name","Country Code","Indicator Name","Indicator Code","Attribute",'
    lines = [head + ",".join(f'"{month}"' for month in months) + ","]
    expected = {}
    for country, code, base in (("Canada", 156, 130.0), ("Mexico", 273, 120.0)):
        expected[country] = [round(base + 0.25 * k, 2) for k in range(24)]
        cells = ",".join(f'"{value}"' for value in expected[country])
        lines.append(f'"{country}","{code}","Prices, Consumer Price Index","PCPI_IX","Value",{cells},')
        lines.append(f'"{country}","{code}","Prices, Consumer Price Index","PCPI_IX","Status",' + '"",' * 24)
    path = write(tmp_path, "ifs.csv", "\n".join(lines) + "\n")
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["Canada", "Mexico"] and freq == "MS" and len(frame) == 24
    for country, values in expected.items():
        np.testing.assert_allclose(frame[country], values)
    assert "left out 2 empty row(s) of flags" in note


def test_a_bea_tables_footnote_marks_are_no_part_of_its_series_names(tmp_path):
    """A BEA NIPA table as CSV: title lines, "Line"," ","2023M01",..., labels with the footnote marks the
    BEA writes into them ("Personal income\\1\\"), notes after "Legend / Footnotes:". The series were named
    with the marks."""
    months = [f"2022M{m:02d}" for m in range(1, 13)] + [f"2023M{m:02d}" for m in range(1, 13)]
    lines = ['"Table 2.6. Personal Income and Its Disposition, Monthly"', '"[Billions of dollars]"',
             '"Bureau of Economic Analysis"', '"Line"," ",' + ",".join(f'"{month}"' for month in months)]
    labels = ["Personal income\\1\\", "Compensation of employees", "Supplements to wages and salaries\\2\\"]
    values = {}
    for line, label in enumerate(labels, 1):
        values[label] = [21000.0 / line + 12.5 * k for k in range(24)]
        lines.append(f'"{line}","{label}",' + ",".join(f'"{value:,.1f}"' for value in values[label]))
    lines += ["", '"Legend / Footnotes:"', '"\\1\\ Personal income is ..."', '"\\2\\ Supplements ..."']
    path = write(tmp_path, "bea.csv", "\n".join(lines) + "\n")
    frame, freq, note = read_noted(path)
    names = ["Personal income", "Compensation of employees", "Supplements to wages and salaries"]
    assert list(frame.columns) == names and freq == "MS" and len(frame) == 24
    np.testing.assert_allclose(frame.to_numpy(), np.array(list(values.values())).T)
    assert "named the series without their footnote marks ('\\1\\', '\\2\\')" in note


@pytest.mark.parametrize("end", ["", ","])
def test_an_rba_exchange_rate_tables_closed_days_are_missing_values(tmp_path, end):
    """The RBA's F11 exchange rates: its header block (Title, ..., Series ID), business days "03-Jan-2023",
    and "CLOSED" where a market was shut. The file was refused as text among numbers. Where a "," ends every
    line the series keep the names of the Series ID line, not those of the Units line above it."""
    days = pd.bdate_range("2023-01-03", periods=30)
    head = ["F11 EXCHANGE RATES,,", "Title,AUD/USD Exchange Rate,Trade-weighted Index",
            "Frequency,Daily,Daily", "Units,USD,Index", "Source,WM/Reuters,RBA",
            "Publication date,02-Dec-2026,02-Dec-2026", "Series ID,FXRUSD,FXRTWI"]
    rows = [f"{day:%d-%b-%Y}," + ("CLOSED,CLOSED" if k == 12 else f"{0.68 + k / 1000},{62 + k / 10}")
            for k, day in enumerate(days)]
    path = write(tmp_path, "f11.csv", "".join(f"{line}{end}\n" for line in head + rows))
    frame, freq, note = read_noted(path)
    assert list(frame.columns) == ["FXRUSD", "FXRTWI"] and freq == "B" and list(frame.index) == list(days)
    np.testing.assert_allclose(frame["FXRTWI"], 62 + np.arange(30) / 10)  # day 12 filled from its neighbours
    assert "read 2 cell(s) marked 'CLOSED' as missing" in note

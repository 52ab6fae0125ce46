"""Dates from what tables hold (period labels, year numbers, year + quarter / month / week columns), missing
time steps filled on the series' own grid, and DataFrames read like files."""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from forecaster.data import DataQualityWarning, read_csv, read_frame
from forecaster.data.dates import across_offsets, parse_period_labels
from forecaster.errors import DataError


@pytest.mark.parametrize(
    ("labels", "first", "freq"),
    [
        (["2020 Q1", "2020 Q2", "2020 Q3", "2020 Q4", "2021 Q1"], "2020-01-01", "QS-JAN"),
        (["Q3 1999", "Q4 1999", "Q1 2000", "Q2 2000"], "1999-07-01", "QS-JAN"),
        (["2020M11", "2020M12", "2021M01", "2021M02"], "2020-11-01", "MS"),
        (["2020-W52", "2020-W53", "2021-W01", "2021-W02"], "2020-12-21", "W-MON"),  # ISO weeks: Mondays
        (["2019Q4", "2020Q1", "2020Q2"], "2019-10-01", "QS-JAN"),
        (["2019-T4", "2020-T1", "2020-T2"], "2019-10-01", "QS-JAN"),  # INSEE, INE, Istat: trimestre
        (["2020-H2", "2021-H1", "2021-H2", "2022-H1"], "2020-07-01", "2QS-JAN"),  # half-years (S1/S2 too)
        (["2019/20", "2020/21", "2021/22", "2022/23"], "2019-01-01", "YS-JAN"),  # fiscal years
        (["1999-2000", "2000-2001", "2001-2002"], "1999-01-01", "YS-JAN"),
        (["2001-02", "2002-03", "2003-04"], "2001-01-01", "YS-JAN"),  # not Feb 2001, Mar 2002, Apr 2003
        (["FY2019", "FY2020", "FY 2021"], "2019-01-01", "YS-JAN"),
        (["FY2019/20", "FY2020/21", "FY2021/22"], "2019-01-01", "YS-JAN"),  # UK, Australian, Indian public
        (["FY 2019-20", "FY 2020-21", "fy 2021-22"], "2019-01-01", "YS-JAN"),  # finance: refused (h38)
        (["2019 to 2020", "2020 to 2021", "2021 to 2022"], "2019-01-01", "YS-JAN"),  # GOV.UK's (h66)
        (["Oct-Dec 2004", "Jan-Mar 2005", "Apr\u2013Jun 2005"], "2004-10-01", "QS-JAN"),  # by their months,
        (["Nov-Jan 2010", "Dec-Feb 2010", "Jan-Mar 2010", "Feb-Apr 2010"], "2010-01-01", "MS"),  # ONS rolling
        (["2019\u201320", "2020\u201321", "2021\u201322"], "2019-01-01", "YS-JAN"),  # typeset: an en dash,
        (["2019\u20142020", "2020\u20142021", "2021\u20142022"], "2019-01-01", "YS-JAN"),  # an em dash,
        (["2019\u221220", "2020\u221221", "2021\u221222"], "2019-01-01", "YS-JAN"),  # a minus sign
        (["2019:4", "2020:1", "2020:2"], "2019-10-01", "QS-JAN"),  # EViews: quarters after a colon
        (["2019:12", "2020:01", "2020:02"], "2019-12-01", "MS"),  # and months of two digits
        ([f"1990:{m}" for m in range(1, 13)] + ["1991:1"], "1990-01-01", "MS"),  # or all 12 unpadded (h49)
        (["2023 september", "2023 oktober*", "2023 november**"], "2023-09-01", "MS"),  # CBS: * provisional
        (["2023-Q2", "2023-Q3", "2023-Q4*"], "2023-04-01", "QS-JAN"),
        (["2023-09-01", "2023-10-01*", "2023-11-01*"], "2023-09-01", "MS"),
        (["2015年11月", "2015年12月", "2016年1月"], "2015-11-01", "MS"),  # e-Stat, the NBS
        (["2015年第4四半期", "2016年第1四半期", "2016年第2四半期"], "2015-10-01", "QS-JAN"),
        (["2014年", "2015年", "2016年"], "2014-01-01", "YS-JAN"),
        (["平成31年3月", "平成31年4月", "令和元年5月", "令和元年6月"], "2019-03-01", "MS"),  # e-Stat: eras
        (["昭和63年", "昭和64年", "平成2年", "平成3年"], "1988-01-01", "YS-JAN"),  # Heisei began in 1989
        (["13.03.2023 00:00 - 13.03.2023 00:15", "13.03.2023 00:15 - 13.03.2023 00:30",
          "13.03.2023 00:30 - 13.03.2023 00:45"], "2023-03-13", "15min"),  # ENTSO-E: intervals, their start
        (["2010/03", "2010/04", "2011/01", "2011/02", "2011/03"], "2010-07-01", "QS-JAN"),  # INEGI's quarters
        (["2010/03", "2010/04", "2010/05", "2010/06", "2010/07"], "2010-03-01", "MS"),  # and its months
        (["2000/01", "2001/02", "2002/03", "2003/04"], "2000-01-01", "YS-JAN"),  # fiscal years, not quarters
        (["2015.3/4", "2015.4/4", "2016.1/4", "2016.2/4"], "2015-07-01", "QS-JAN"),  # KOSIS's quarters
        (["03/01/2023 23:00", "03/01/2023 24:00", "03/02/2023 01:00", "03/02/2023 02:00"], "2023-03-01 23:00",
         "h"),  # ERCOT's hours ending at 24:00, the next day's midnight
        (["Nov-99", "Dec-99", "Jan-00", "Feb-00"], "1999-11-01", "MS"),  # Excel's mmm-yy, not November 99th
        (["3º trimestre 2016", "4º trimestre 2016", "1º trimestre 2017"], "2016-07-01", "QS-JAN"),  # IBGE
        (["11.2020", "12.2020", "01.2021", "02.2021"], "2020-11-01", "MS"),  # German ERP exports' months
        # offices of the h24 sweep, refused as "no date column found" before
        (["2020V52", "2020V53", "2021V01", "2021V02"], "2020-12-21", "W-MON"),  # Statistics Sweden: vecka
        (["2020U52", "2020U53", "2021U01"], "2020-12-21", "W-MON"),  # Statistics Denmark, SSB: uge, uke
        (["Q3-19", "Q4-19", "Q1-20", "Q2-20"], "2019-07-01", "QS-JAN"),  # UK Finance
        (["III 2019", "IV 2019", "I 2020", "II 2020"], "2019-07-01", "QS-JAN"),  # Rosstat: Roman quarters
        (["2015. III. negyedév", "2015. IV. negyedév", "2016. I. negyedév"], "2015-07-01", "QS-JAN"),  # KSH
        (["III kvartal 2017", "IV kvartal 2017", "I kvartal 2018"], "2017-07-01", "QS-JAN"),  # Estonia
        (["111年11月", "111年12月", "112年1月"], "2022-11-01", "MS"),  # Taiwan's DGBAS: the Republic's years
        (["Dezember 2022", "Jänner 2023", "Februar 2023"], "2022-12-01", "MS"),  # Statistik Austria
        (["2022 grudzień", "2023 styczeń", "2023 luty"], "2022-12-01", "MS"),  # GUS
        (["červen 2023", "červenec 2023", "srpen 2023"], "2023-06-01", "MS"),  # CZSO: June, then July
        (["Week ending January 8, 2022", "Week ending January 15, 2022", "Week ending January 22, 2022"],
         "2022-01-08", "W-SAT"),  # the USDA's and CDC's words before a week's date
        (["W/E 01/08/2022", "W/E 01/15/2022", "W/E 01/22/2022"], "2022-01-08", "W-SAT"),  # retail's
        (["w/c 3 Jan 2022", "w/c 10 Jan 2022", "w/c 17 Jan 2022"], "2022-01-03", "W-MON"),  # week commencing
        (["Novembro de 2013", "Dezembro de 2013", "Janeiro de 2014"], "2013-11-01", "MS"),  # INE Portugal
        (["Juli 2020", "Agustus 2020", "September 2020"], "2020-07-01", "MS"),  # BPS Indonesia
        (["November 2020", "Desember 2020", "Januari 2021"], "2020-11-01", "MS"),
        (["H1 2008", "H2 2008", "H1 2009"], "2008-01-01", "2QS-JAN"),  # half-years before their year
        (["W52 2020", "W53 2020", "W01 2021"], "2020-12-21", "W-MON"),  # weeks before their year (h42)
        (["2021.11 월", "2021.12 월", "2022.01 월"], "2021-11-01", "MS"),  # KOSIS's months as text
        # the h30 sweep's, refused as "no date column found" before
        (["2022Nov", "2022Dec", "2023Jan"], "2022-11-01", "MS"),  # the ECB's statistical data warehouse
        (["2014年7-9月期", "2014年10-12月期", "2015年1-3月期"], "2014-07-01", "QS-JAN"),  # e-Stat, the ESRI
        (["nov.-18", "déc.-18", "janv.-19", "févr.-19", "mars-19"], "2018-11-01", "MS"),  # a French Excel's
        # abbreviations that cut no name short (h82 F15): Dutch Excel's and CBS's "mrt", the CZSO's "čvn"
        (["feb 2019", "mrt 2019", "apr 2019"], "2019-02-01", "MS"),
        (["mrt-19", "apr-19", "mei-19"], "2019-03-01", "MS"),
        (["kvě 2019", "čvn 2019", "čvc 2019", "srp 2019"], "2019-05-01", "MS"),
        # the h91 sweep's, refused as "no date column found" before (F8)
        (["ноябрь 2019", "декабрь 2019", "январь 2020"], "2019-11-01", "MS"),  # Rosstat
        (["nov/2019", "dez/2019", "jan/2020"], "2019-11-01", "MS"),  # IBGE, the BCB
        (["2019年第三季度", "2019年第四季度", "2020年第一季度"], "2019-07-01", "QS-JAN"),  # the NBS
        (["2019년 11월", "2019년 12월", "2020년 1월"], "2019-11-01", "MS"),  # KOSIS
        (["2019년 3분기", "2019년 4분기", "2020년 1분기"], "2019-07-01", "QS-JAN"),
        (["2020KW52", "2020KW53", "2021KW01"], "2020-12-21", "W-MON"),  # Kalenderwochen
        (["KW 52/2020", "KW 53/2020", "KW 01/2021"], "2020-12-21", "W-MON"),
        (["2019 3e kwartaal", "2019 4e kwartaal", "2020 1e kwartaal"], "2019-07-01", "QS-JAN"),  # CBS
        (["FY19", "FY20", "FY21"], "2019-01-01", "YS-JAN"),
        (["FY19/20", "FY20/21", "FY21/22"], "2019-01-01", "YS-JAN"),
        (["2º semestre 2019", "1º semestre 2020", "2º semestre 2020"], "2019-07-01", "2QS-JAN"),  # IBGE
        (["2019 2nd half", "2020 1st half", "2020 2nd half"], "2019-07-01", "2QS-JAN"),
        (["2019-A1", "2020-A1", "2021-A1"], "2019-01-01", "YS-JAN"),  # SDMX 2.0's years
        # the h100 sweep's, refused before (F4, F5, F6)
        (["2018年(平成30年)", "2019年(令和元年)", "2020年(令和2年)"], "2018-01-01", "YS-JAN"),  # e-Stat
        (["平成30年（2018年）", "令和元年（2019年）", "令和2年（2020年）"], "2018-01-01", "YS-JAN"),
        (["December / décembre 2018", "January / janvier 2019", "February / février 2019"], "2018-12-01",
         "MS"),  # Statistics Canada's bilingual tables
        (["décembre/December 2018", "janvier/January 2019", "février/February 2019"], "2018-12-01", "MS"),
        (["Dezember 2018 / December 2018", "Januar 2019 / January 2019", "Februar 2019 / February 2019"],
         "2018-12-01", "MS"),
        (["October to December 2013", "January to March 2014", "April to June 2014"], "2013-10-01", "QS-JAN"),
    ],
)
def test_period_labels_become_the_first_day_of_each_period(labels, first, freq) -> None:
    series = read_frame(pd.DataFrame({"TIME_PERIOD": labels, "value": np.arange(len(labels), dtype=float)}))
    assert series.index[0] == pd.Timestamp(first) and series.freq == freq and series.columns == ["value"]
    assert series.date_col == "TIME_PERIOD"


@pytest.mark.parametrize("labels", [["2018年(平成29年)", "2019年(平成30年)", "2020年(令和元年)"],
                                    ["January / février 2019", "February / mars 2019", "March / avril 2019"]])
def test_a_period_written_twice_that_disagrees_with_itself_is_refused(labels) -> None:
    """A Western and an era year, or two months' names, that name different periods: no guess (h100)."""
    with pytest.raises(DataError, match="TIME_PERIOD"):
        read_frame(pd.DataFrame({"TIME_PERIOD": labels, "value": [1.0, 2.0, 3.0]}))


@pytest.mark.parametrize("label", ["{m:%B} / {fr} {m:%Y}", "{q} to {m:%B} {m:%Y}", "{q:.3}-{m:%b} {m:%Y}"])
def test_an_empty_cell_among_month_ranges_or_two_names_is_named_alone(tmp_path, label) -> None:
    """One empty cell among "January / janvier 2018" or "January to March 2014" labels had every label named
    as no timestamp (line 2 'January / janvier 2015', ...), not its own line (h106)."""
    months = pd.date_range("2015-03-01", periods=24, freq="3MS")
    french = ["mars", "juin", "septembre", "décembre"]
    labels = [label.format(m=m, q=f"{m - pd.DateOffset(months=2):%B}", fr=french[m.quarter - 1])
              for m in months]  # fmt: skip
    labels[10] = ""
    path = tmp_path / "gap.csv"
    pd.DataFrame({"Period": labels, "value": np.arange(24.0)}).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"date column 'Period' has 1 value\(s\) .* line 12 \(empty\);"):
        read_csv(path)


def test_koreas_dotted_months_read_as_numbers_are_found_as_months(tmp_path) -> None:
    """KOSIS writes months "2019.01" ... "2019.12" under 시점 ("time point"), quoted; read as numbers,
    "2019.10" is 2019.1. The column was not found as dates."""
    months = [f"{2019 + k // 12}.{k % 12 + 1:02d}" for k in range(30)][::-1]  # newest first, as downloaded
    rows = [f'"{month}","{100 + k / 10:.2f}"' for k, month in enumerate(months)]
    lines = ['"시점","소비자물가지수(2020=100)"', *rows]
    (tmp_path / "kosis.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    series = read_csv(tmp_path / "kosis.csv")
    assert series.date_col == "시점" and series.freq == "MS" and len(series) == 30
    assert series.index[0] == pd.Timestamp("2019-01-01") and series.index[9] == pd.Timestamp("2019-10-01")
    assert series.frame.iloc[-1, 0] == 100.0  # the newest, listed first


def test_swiss_months_and_thousands_read_as_numbers_are_months_and_values(tmp_path) -> None:
    """The Swiss FSO's hotel nights: "01.2018" months (read by pandas as 1.2018, "10.2018" as 10.2018) and
    "3'245'385" values: no date column was found, and the values were text."""
    months = pd.period_range("2018-01", periods=30, freq="M")
    values = [f"{3_000_000 + 1_000 * k:,}".replace(",", "'") for k in range(30)]
    rows = [f'"{m.month:02d}.{m.year}";"{value}"' for m, value in zip(months, values, strict=True)]
    (tmp_path / "hesta.csv").write_text('"Monat";"Total"\n' + "\n".join(rows) + "\n")
    series = read_csv(tmp_path / "hesta.csv")
    assert series.date_col == "Monat" and series.freq == "MS" and len(series) == 30
    assert series.index[9] == pd.Timestamp("2018-10-01") and series.index[-1] == pd.Timestamp("2020-06-01")
    np.testing.assert_array_equal(series.frame["Total"], 3_000_000 + 1_000 * np.arange(30))


def test_gus_months_under_okres_read_as_numbers_are_months(tmp_path) -> None:
    """Statistics Poland heads its "01.2018" months `okres` (period): read as the numbers 1.2018 ... they were
    "no date column found" (h91 F8, h100 F3)."""
    months = pd.period_range("2018-01", periods=36, freq="M")
    rows = [f"{m.month:02d}.{m.year},{100 + k}" for k, m in enumerate(months)]
    (tmp_path / "gus.csv").write_text("okres,wartosc\n" + "\n".join(rows) + "\n")
    series = read_csv(tmp_path / "gus.csv")
    assert series.date_col == "okres" and series.freq == "MS" and len(series) == 36
    assert series.index[9] == pd.Timestamp("2018-10-01") and series.index[-1] == pd.Timestamp("2020-12-01")
    np.testing.assert_array_equal(series.frame["wartosc"], 100 + np.arange(36.0))


def test_a_year_column_of_numbers_is_a_yearly_index() -> None:
    series = read_frame(
        pd.DataFrame({"Year": [1999, 2000, 2001, 2002], "sunspots": [93.0, 119.6, 111.0, 104.0]})
    )
    assert series.freq == "YS-JAN" and series.index[-1] == pd.Timestamp("2002-01-01")
    with pytest.raises(DataError, match="holds numbers that are not years"):
        read_frame(pd.DataFrame({"a": [1.5, 2.5, 3.5], "b": [1.0, 2.0, 3.0]}), date_col="a")


def test_year_and_quarter_columns_make_the_dates_found_or_named(tmp_path) -> None:
    path = tmp_path / "macro.csv"
    frame = pd.DataFrame({"Year": np.repeat([2019, 2020], 4), "Quarter": [1, 2, 3, 4] * 2,
                          "gdp": np.arange(8.0), "rate": np.linspace(1, 2, 8)})  # fmt: skip
    frame.to_csv(path, index=False)
    for series in (read_csv(path), read_csv(path, date_from=["Year", "Quarter"])):
        assert series.freq == "QS-JAN" and series.columns == ["gdp", "rate"]
        assert series.index[5] == pd.Timestamp("2020-04-01")
        assert series.options.date_from == ["Year", "Quarter"]
    frame.loc[3, "Quarter"] = 5
    frame.to_csv(path, index=False)
    with pytest.raises(
        DataError, match=r"column 'Quarter' line 5: 5 is not a quarter number; expected whole"
    ):
        read_csv(path)
    frame.loc[3, "Quarter"] = None  # said as what it is, not as 'nan'
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"column 'Quarter' line 5: an empty cell is not a quarter number"):
        read_csv(path)
    with pytest.raises(DataError, match="date_from=\\['year', 'day'\\]: expected columns named"):
        read_csv(path, date_from=["year", "day"])


def test_year_month_day_hour_columns_are_the_dates_and_a_no_column_counting_rows_is_no_series(tmp_path):
    hours = pd.date_range("2010-01-01", periods=60, freq="h")  # UCI's Beijing air quality file, its shape
    frame = pd.DataFrame({"No": np.arange(1, 61), "year": hours.year, "month": hours.month, "day": hours.day,
                          "hour": hours.hour, "pm2.5": np.sin(np.arange(60.0)),
                          "TEMP": np.arange(60.0)})  # fmt: skip
    frame.to_csv(path := tmp_path / "prsa.csv", index=False)
    with pytest.warns(DataQualityWarning, match=r"skipped column\(s\) 'No': row numbers"):
        series = read_csv(path)
    assert series.freq == "h" and list(series.index) == list(hours) and series.columns == ["pm2.5", "TEMP"]
    assert series.options.date_from == ["year", "month", "day", "hour"]
    assert read_csv(path, targets=["No", "TEMP"]).columns == ["No", "TEMP"]  # asked for, it is kept
    days = frame.drop(columns=["No", "hour"]).iloc[:24].assign(day=np.arange(1, 25), month=2)  # 1-24 Feb
    days.to_csv(path := tmp_path / "daily.csv", index=False)
    assert read_csv(path).freq == "D" and read_csv(path).index[-1] == pd.Timestamp("2010-02-24")
    days.loc[5, "day"] = 30
    days.to_csv(path, index=False)
    with pytest.raises(DataError, match="daily.csv: line 7: 2010-02-30 is no calendar day; expected a real"):
        read_csv(path)


def _weekly_with_gaps() -> pd.DataFrame:
    index = pd.date_range("2021-01-03", periods=40, freq="W-SUN").delete([5, 6, 30])
    return pd.DataFrame({"sales": np.arange(37, dtype=float)}, index=index)


def test_missing_time_steps_are_refused_with_their_count_or_filled_on_request() -> None:
    frame = _weekly_with_gaps()
    with pytest.raises(DataError, match=r"3 missing time step\(s\) .* W-SUN series, the first 2021-02-07"):
        read_frame(frame, fill_missing="none")
    with pytest.warns(
        DataQualityWarning, match=r"added 3 missing time step\(s\) of the W-SUN grid; filled 3"
    ):
        series = read_frame(frame, fill_missing="interpolate")
    assert len(series) == 40 and series.freq == "W-SUN" and series.options.fill_missing == "interpolate"
    # interpolation in time: the two missing weeks lie on the line between their neighbours (4 and 5)
    np.testing.assert_allclose(series.frame["sales"].iloc[4:8], [4.0, 4 + 1 / 3, 4 + 2 / 3, 5.0])


def test_missing_months_use_the_calendar_grid() -> None:
    index = pd.date_range("2020-01-01", periods=24, freq="MS").delete([2, 13])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        series = read_frame(pd.DataFrame({"y": np.arange(22.0)}, index=index), fill_missing="ffill")
    assert series.freq == "MS" and len(series) == 24 and series.frame["y"].iloc[2] == 1.0


def test_a_dataframe_reads_like_the_same_csv(tmp_path) -> None:
    index = pd.date_range("2022-03-01", periods=30, freq="h", name="when")
    frame = pd.DataFrame({"load": np.arange(30.0), "temp": np.linspace(0, 1, 30)}, index=index)
    frame.to_csv(tmp_path / "same.csv")
    from_file, from_frame = read_csv(tmp_path / "same.csv"), read_frame(frame)
    pd.testing.assert_frame_equal(from_file.frame, from_frame.frame)
    assert (from_file.freq, from_file.date_col) == (from_frame.freq, from_frame.date_col) == ("h", "when")
    columns = read_frame(frame.reset_index(), targets=["temp"])
    assert columns.columns == ["temp"] and columns.date_col == "when"
    single = read_frame(frame["load"])  # a Series: one column, named by its name
    pd.testing.assert_frame_equal(single.frame, from_frame.frame[["load"]])
    with pytest.raises(DataError, match="expected a pandas DataFrame or Series, got ndarray"):
        read_frame(frame.to_numpy())


@pytest.mark.parametrize(
    ("dates", "expected"),
    [
        # dotted: day first, even where month first could read every value
        (["01.01.2012", "01.02.2012", "01.03.2012"], ["2012-01-01", "2012-02-01", "2012-03-01"]),
        (["05.01.2020 10:00", "05.01.2020 11:00"], ["2020-01-05 10:00", "2020-01-05 11:00"]),
        # slashed, monthly over a year: month first has no 13th month, so day first reads them
        ([f"01/{month:02d}/2020" for month in range(1, 13)] + ["01/01/2021"],
         [f"2020-{month:02d}-01" for month in range(1, 13)] + ["2021-01-01"]),
        (["31/01/2020", "29/02/2020", "31/03/2020"], ["2020-01-31", "2020-02-29", "2020-03-31"]),
        (["01/31/2020", "02/29/2020", "03/31/2020"], ["2020-01-31", "2020-02-29", "2020-03-31"]),
        # both readings regular: month first, as pandas reads it
        (["01/02/2020", "01/03/2020", "01/04/2020"], ["2020-01-02", "2020-01-03", "2020-01-04"]),
        # business days with a holiday left out, day first: month first reads 13/01 day first by itself, so
        # both read every row, but only day first keeps them in order (month first was refused as unsorted)
        (["09/01/2023", "10/01/2023", "12/01/2023", "13/01/2023", "16/01/2023"],
         ["2023-01-09", "2023-01-10", "2023-01-12", "2023-01-13", "2023-01-16"]),
        # ISO dates are never read day first (pandas' dayfirst would turn 2012-01-05 into May 1)
        (["2012-01-05", "2012-01-06", "2012-01-07"], ["2012-01-05", "2012-01-06", "2012-01-07"]),
    ],
)
def test_day_and_month_before_the_year_are_read_as_the_file_means_them(dates, expected) -> None:
    from forecaster.data.dates import parse_timestamps

    assert list(parse_timestamps(pd.Series(dates))) == [pd.Timestamp(day) for day in expected]


@pytest.mark.parametrize(
    ("dates", "tie"),
    [
        ([f"01/{month:02d}/2021" for month in range(1, 13)], True),  # a year's months, day first, or 12 days
        ([f"{day:02d}/01/2021" for day in range(1, 13)], True),  # 12 days, day first, or a year's months
        ([f"{month:02d}/01/{year}" for year in (2020, 2021) for month in range(1, 13)], False),  # 2 years
        ([f"01/{day:02d}/2021" for day in range(1, 20)], False),  # a day past 12
    ],
)
def test_dates_both_readings_fit_are_read_month_first_with_a_note(tmp_path, dates, tie) -> None:
    """Twelve months written dd/mm/yyyy were read as twelve days without a word (h35)."""
    path = tmp_path / "dates.csv"
    path.write_text("date,v\n" + "".join(f"{date},{k}\n" for k, date in enumerate(dates)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        series = read_csv(path)
    assert series.index[1] == pd.to_datetime(dates[1], format="%m/%d/%Y")
    said = [str(warning.message) for warning in caught if "month first" in str(warning.message)]
    day_first = pd.to_datetime(dates[1], format="%d/%m/%Y")
    expected = (f"{path}: note: column 'date': read {dates[0]!r}, {dates[1]!r}, ... month first (MM/DD, as "
                f"pandas does), though day first reads them as well (2021-01-01, {day_first:%Y-%m-%d}, ...)")
    assert [text.split(": write")[0] for text in said] == ([expected] if tie else [])


def test_month_and_fiscal_labels_that_do_not_follow_stay_unparsed() -> None:
    from forecaster.data.dates import parse_period_labels

    assert parse_period_labels(pd.Series(["2001-02", "2001-03"])) is None  # months, for pandas to read
    assert parse_period_labels(pd.Series(["2019/21", "2020/22"])) is None  # not one year to the next


def test_eurostat_daily_labels_are_days_and_impossible_ones_no_labels() -> None:
    """Eurostat's daily exchange rates label their columns 2024M03D28 (refused as no date column)."""
    days = parse_period_labels(pd.Series(["2024M02D28", "2024M02D29", "2024M03D01"]))
    assert list(days) == [pd.Timestamp("2024-02-28"), pd.Timestamp("2024-02-29"), pd.Timestamp("2024-03-01")]
    assert parse_period_labels(pd.Series(["2023M02D28", "2023M02D29"])) is None  # no 29 February in 2023


def test_three_irregular_timestamps_are_one_line_not_a_traceback(tmp_path) -> None:
    path = tmp_path / "three.csv"
    path.write_text("date,value\n2020-01-01,1\n2020-01-05,2\n2020-02-01,3\n")
    with pytest.raises(DataError, match="irregular time steps in column 'date'"):
        read_csv(path)


def test_dates_on_different_days_of_consecutive_months_read_as_months() -> None:
    """A monthly release dated the day it came out (the 15th, then the 14th, ...): the first of each month,
    said in the note; daily data with gaps is not taken for months."""
    days = [15, 14, 16, 15, None, 12, 15, 14, 15, 15, 13, 15]  # May 2020 not released
    released = [f"2020-{month:02d}-{day}" for month, day in enumerate(days, 1) if day is not None]
    values = [float(month) for month, day in enumerate(days, 1) if day is not None]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        series = read_frame(pd.DataFrame({"date": released, "v": values}))
    assert series.freq == "MS"
    assert list(series.index) == list(pd.date_range("2020-01-01", "2020-12-01", freq="MS"))
    np.testing.assert_array_equal(series.values[:, 0], np.arange(1.0, 13.0))  # May interpolated
    said = " ".join(str(warning.message) for warning in caught)
    assert "read dates on different days of their months as months (2020-01-15 -> 2020-01)" in said
    days = pd.date_range("2020-01-01", periods=40, freq="D").delete([5, 17]).strftime("%Y-%m-%d")
    assert read_frame(pd.DataFrame({"date": days, "v": np.arange(38.0)})).freq == "D"


def test_weekly_releases_a_holiday_moved_read_on_their_weeks_day() -> None:
    """Baker Hughes' Friday rig count on the Thursday before Good Friday, Freddie Mac's Thursday survey on
    Thanksgiving's Wednesday: refused as off the weekly grid; now each on its week's day, said in a note. A
    week missing stays a gap to fill; dates on many weekdays (daily data with gaps) are no weeks."""
    fridays = pd.date_range("2022-01-07", periods=60, freq="W-FRI")
    released = fridays.where(fridays != pd.Timestamp("2022-04-15"), pd.Timestamp("2022-04-14"))
    released = released.where(released != pd.Timestamp("2022-11-25"), pd.Timestamp("2022-11-23"))
    dates, values = released.delete(30).strftime("%m/%d/%Y"), np.delete(np.arange(60.0), 30)  # a week missing
    with pytest.warns(DataQualityWarning, match=r"read 2 weekly date\(s\) off the week's Friday as that day, "
                      r"as a holiday moved them \(2022-04-14 -> 2022-04-15\)"):  # fmt: skip
        series = read_frame(pd.DataFrame({"Date": dates, "rigs": values}))
    assert series.freq == "W-FRI" and list(series.index) == list(fridays)
    np.testing.assert_array_equal(series.values[:, 0], np.arange(60.0))  # the missing week interpolated
    days = pd.date_range("2022-01-03", periods=60, freq="B").delete([4, 9, 30])  # Mondays to Fridays
    with pytest.raises(DataError, match="irregular time steps"):
        read_frame(pd.DataFrame({"date": days[::2].strftime("%Y-%m-%d"), "v": np.arange(len(days[::2]))}))


def test_mixed_time_zones_are_named_as_such(tmp_path) -> None:
    """Each value is a timestamp; pandas reads them as one column only in one zone: where neither UTC nor
    the local clock gives a regular series, say that, not 'not timestamps' (a DataFrame of zoned Timestamps)
    or pandas' advice to pass utc=True (a CSV of offsets)."""
    clock = pd.date_range("2020-01-01", periods=24, freq="h")  # hourly local clock, offsets alternating
    stamps = [stamp.tz_localize("UTC" if k % 2 else "Asia/Tokyo") for k, stamp in enumerate(clock)]
    frame = pd.DataFrame({"date": stamps, "y": np.arange(24.0)})
    path = tmp_path / "zones.csv"
    frame.assign(date=[stamp.isoformat() for stamp in stamps]).to_csv(path, index=False)
    for read in (lambda: read_frame(frame), lambda: read_csv(path)):
        with pytest.raises(DataError, match="date column 'date' mixes time zones or UTC offsets") as caught:
            read()
        assert "utc=True" not in str(caught.value) and "00:00:00+09:00" in str(caught.value)


def test_an_offset_after_a_zone_name_is_the_offset_people_mean_and_naive_beside_zoned_is_refused():
    """dateutil reads "UTC+5" as UTC-5 (POSIX zone strings count west); people writing it mean +05:00. Naive
    timestamps beside ones with an offset were read as UTC, as if the offsets changed for daylight saving."""
    clock = [str(stamp) for stamp in pd.date_range("2016-08-11", periods=30, freq="h")]
    for suffix, offset in ((" UTC+5", "+05:00"), (" GMT-3", "-03:00"), (" UTC+05:30", "+05:30")):
        series = read_frame(pd.DataFrame({"date": [stamp + suffix for stamp in clock], "y": np.arange(30.0)}))
        assert series.index[0] == pd.Timestamp("2016-08-11 00:00:00" + offset)
    zoned = [stamp + "+00:00" for stamp in clock[15:]]
    mixed = pd.DataFrame({"date": clock[:15] + zoned, "y": np.arange(30.0)})
    with pytest.raises(DataError, match="date column 'date' mixes time zones or UTC offsets"):
        read_frame(mixed)
    months = [f"{2015 + k // 12}-{k % 12 + 1:02d}-01" for k in range(24)]  # a date's day is no offset (h47)
    alternate = [month + ("T00:00:00+05:00" if k % 2 == 0 else "") for k, month in enumerate(months)]
    with pytest.raises(DataError, match="date column 'date' mixes time zones or UTC offsets"):
        read_frame(pd.DataFrame({"date": alternate, "y": np.arange(24.0)}))


@pytest.mark.parametrize(("freq", "clock", "first"), [("h", "in UTC", "2020-02-29 23:00:00+00:00"),
                                                      ("D", "as local clock times", "2020-01-01 00:00:00"),
                                                      ("MS", "as local clock times", "2020-01-01 00:00:00")])
def test_dates_across_a_daylight_saving_change_read_as_one_regular_series(tmp_path, freq, clock, first):
    """Local times of one zone change UTC offset twice a year: hourly data is regular in UTC (its local clock
    skips and repeats an hour), daily and monthly data on the local clock (months at local midnight were read
    in UTC, month ends at 23:00 or 22:00, and the bundle refused its own training file, h49)."""
    start = "2020-03-01" if freq == "h" else "2020-01-01"
    index = pd.date_range(start, periods=24 * 60 if freq == "h" else 330, freq=freq, tz="Europe/Berlin")
    frame = pd.DataFrame({"y": np.arange(len(index), dtype=np.float64)}, index=index.rename("date"))
    frame.to_csv(tmp_path / "berlin.csv")
    for read in (lambda: read_frame(frame), lambda: read_csv(tmp_path / "berlin.csv")):
        with pytest.warns(DataQualityWarning, match=f"UTC offsets change .daylight saving time.. {clock}"):
            series = read()
        assert series.freq == freq and str(series.frame.index[0]) == first and len(series.frame) == len(index)
        np.testing.assert_array_equal(series.frame["y"].to_numpy(), frame["y"].to_numpy())
    if freq == "MS":  # fitted on the zone's months, forecast from them
        from forecaster.api import Forecaster

        ahead = Forecaster("drift", horizon=2).fit(frame).predict().index
        assert list(ahead) == list(pd.date_range(index[-1], periods=3, freq="MS", tz="Europe/Berlin")[1:])


def test_an_unnamed_column_of_timestamps_whose_offsets_change_is_found_as_the_dates(tmp_path):
    """`to_csv()` of a zoned index writes it unnamed: its offsets, changing with summer time, made pandas
    refuse the sample the column is found by, "no date column found", where the column named 'date' read
    (h128 O3)."""
    index = pd.date_range("2021-03-01", periods=40, freq="D", tz="US/Eastern")
    frame = pd.DataFrame({"y": np.arange(40.0)}, index=index)
    frame.to_csv(tmp_path / "eastern.csv")
    with pytest.warns(DataQualityWarning, match=r"UTC offsets change \(daylight saving time\), as local"):
        series = read_csv(tmp_path / "eastern.csv")
    assert series.freq == "D" and len(series.frame) == 40
    assert str(series.frame.index[0]) == "2021-03-01 00:00:00"
    np.testing.assert_array_equal(series.frame["y"].to_numpy(), np.arange(40.0))


@pytest.mark.parametrize(("numbers", "freq", "first"), [
    ([19580329, 19580405, 19580412, 19580419, 19580426], "W-SAT", "1958-03-29"),
    ([199501 + k for k in range(12)], "MS", "1995-01-01"),
    ([100 * (2019 + k // 4) + k % 4 + 1 for k in range(12)], "QS-JAN", "2019-01-01"),  # the SARB's YYYY0Q
])
def test_dates_written_as_yyyymmdd_or_yyyymm_numbers_are_found_and_read(numbers, freq, first) -> None:
    """NOAA's co2 series dates its weeks 19580329, 19580405, ...: found by the name, read as dates."""
    series = read_frame(pd.DataFrame({"date": numbers, "co2": np.arange(len(numbers), dtype=np.float64)}))
    assert series.freq == freq and series.frame.index[0] == pd.Timestamp(first)


R_AIRPASSENGERS = '"","time","AirPassengers"\n' + "".join(
    f'"{k + 1}",{1949 + k / 12:.14g},{100 + k}\n' for k in range(30)
)  # write.csv of an R ts: row numbers, then time as decimal years (1949.08333333333 is February)


def test_an_r_ts_export_is_a_monthly_series_without_its_row_numbers(tmp_path):
    path = tmp_path / "AirPassengers.csv"
    path.write_text(R_AIRPASSENGERS)
    with pytest.warns(DataQualityWarning, match="without a name holding row numbers"):
        series = read_csv(path)
    assert series.columns == ["AirPassengers"] and series.freq == "MS"
    assert series.index[0] == pd.Timestamp("1949-01-01") and series.index[-1] == pd.Timestamp("1951-06-01")
    assert series.values[:, 0].tolist() == list(range(100, 130))


def test_an_r_ts_of_no_calendar_counting_its_rows_is_indexed_by_steps(tmp_path):
    """WWWusage, BJsales: `time` is 1, 2, 3, ... (a ts without start or frequency), not dates to look for."""
    path = tmp_path / "WWWusage.csv"
    rows = "".join(f'"{k + 1}",{k + 1},{88 + k % 7}\n' for k in range(30))
    path.write_text('"","time","WWWusage"\n' + rows)
    with pytest.warns(DataQualityWarning, match=r"column 'time' counts the rows \(1 to 30\), no dates"):
        series = read_csv(path)
    assert series.columns == ["WWWusage"] and series.freq is None and series.options.no_date
    assert list(series.index) == list(range(30)) and series.values[:3, 0].tolist() == [88, 89, 90]
    path.write_text('"","time","x"\n' + "".join(f'"{k + 1}",{2 * k + 1},{k}\n' for k in range(30)))
    with pytest.raises(DataError, match="column 'time' holds numbers that are not years"):  # nor count rows
        read_csv(path)


@pytest.mark.parametrize(
    ("content", "first", "freq"),
    [
        ('"time","LakeHuron"\n' + "".join(f"{1875 + k},{580 + k / 10}\n" for k in range(20)), "1875",
         "YS-JAN"),
        ('"","time","UKgas"\n' + "".join(f'"{k + 1}",{1960 + k / 4},{160 + k}\n' for k in range(20)),
         "1960", "QS-JAN"),
        (",0\n" + "".join(f"{1821 + k},{269 + k}\n" for k in range(20)), "1821", "YS-JAN"),  # sktime Lynx
    ],
)  # fmt: skip
def test_years_under_a_time_header_r_quarters_and_an_unnamed_year_column_are_dates(tmp_path, content, first,
                                                                                   freq):
    path = tmp_path / "series.csv"
    path.write_text(content)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        series = read_csv(path)
    assert len(series.columns) == 1 and series.freq == freq and series.index[0] == pd.Timestamp(first)
    assert len(series) == 20


def test_a_date_column_in_no_form_read_lists_the_forms_read() -> None:
    """Every label unread is a form the reader does not know (not a few bad cells): the refusal lists the
    forms; a column named like a date holding other numbers (2009.1 for a quarter) says so without
    --date-col too."""
    labels = pd.DataFrame({"period": ["Y2019", "Y2020", "Y2021"], "value": [1.0, 2.0, 3.0]})
    forms = r"3 value\(s\) that are not timestamps.*FY2020 or 2019/20, whole years"
    with pytest.raises(DataError, match=forms):
        read_frame(labels)
    dotted = pd.DataFrame({"period": [2009.1, 2009.2, 2009.3, 2009.4, 2010.1], "value": np.arange(5.0)})
    with pytest.raises(DataError, match="date column 'period' holds numbers that are not years or dates"):
        read_frame(dotted)


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        ([f"{y}/{(y + 1) % 100:02d}" for y in range(1980, 1999)] + ["1999/01"],
         "1 value(s) that are not fiscal year labels like the others: row 19 '1999/01'"),
        ([f"{1995 + k // 4}:{k % 4 + 1}" for k in range(19)] + ["1999:7"],
         "1 value(s) that are not quarter labels like the others: row 19 '1999:7'"),
        # of the form but no such period: every row was named "not timestamps" (h47 F4)
        ([f"{2000 + k // 12}M{k % 12 + 1:02d}" for k in range(19)] + ["2001M13"],
         "1 value(s) that are not month labels like the others: row 19 '2001M13'"),
        ([f"2021-W{week:02d}" for week in range(33, 53)] + ["2021-W53"],
         "1 value(s) that are not week labels like the others: row 20 '2021-W53' (2021 has no ISO week 53)"),
    ],
)  # fmt: skip
def test_one_bad_label_among_period_labels_is_the_one_named(labels, said) -> None:
    """A wrong label among fiscal years or quarters: that one is named, not the 19 good ones."""
    frame = pd.DataFrame({"period": labels, "value": np.arange(len(labels), dtype=float)})
    with pytest.raises(DataError, match=re.escape(said) + "; expected one form of label in every row"):
        read_frame(frame)


def test_a_date_column_switching_from_iso_to_day_first_dates_reads_each_kind_its_own_way():
    """A file written as 2020-07-18 and then as 19/07/2020: read per cell, 01/08/2020 was 8 January and the
    file "not sorted"; ISO dates read as ISO, the others day first where only that is regular."""
    days = pd.date_range("2020-01-01", periods=400, freq="D")
    written = [f"{day:%Y-%m-%d}" if k < 200 else f"{day:%d/%m/%Y}" for k, day in enumerate(days)]
    frame = pd.DataFrame({"date": written, "sales": np.arange(400.0)})
    series = read_frame(frame)
    assert series.freq == "D"
    pd.testing.assert_index_equal(series.index, days.rename(series.index.name), check_names=False)


@pytest.mark.parametrize("freq, day_first", [("MS", True), ("D", False)])
def test_iso_dates_tell_how_the_ambiguous_dates_after_them_are_read(tmp_path, freq, day_first):
    """Three years of monthly ISO dates, then a year written 01/02/2021: each reading fits those 12 alone, so
    they were read month first as 12 days and the file looked daily, 1,060 steps missing (h45 #4). The
    reading that continues the ISO dates' steps is taken, without a note of a tie; days go on as days."""
    stamps = pd.date_range("2018-01-01" if freq == "MS" else "2020-11-26", periods=48, freq=freq)
    ambiguous = "%d/%m/%Y" if day_first else "%m/%d/%Y"
    written = [f"{stamp:%Y-%m-%d}" if k < 36 else f"{stamp:{ambiguous}}" for k, stamp in enumerate(stamps)]
    path = tmp_path / "dates.csv"
    path.write_text("date,v\n" + "".join(f"{date},{k}\n" for k, date in enumerate(written)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        series = read_csv(path)
    assert series.freq == freq and not caught
    pd.testing.assert_index_equal(series.index, stamps, check_names=False)


@pytest.mark.parametrize("day", [5, 12])
def test_months_on_a_day_other_than_the_first_written_day_first_are_read_as_months(tmp_path, day):
    """05/01/2020, 05/02/2020, ...: the 5th of each month, or 1-12 May read month first. Both readings fit
    every row in order, and pandas infers no frequency for the 5th of each month, so month first was taken:
    daily, 353 steps missing (h47 F12). Months on one day are as regular as months on the first."""
    months = pd.date_range("2020-01-01", periods=24, freq="MS") + pd.Timedelta(days=day - 1)
    path = tmp_path / "dates.csv"
    path.write_text("date,v\n" + "".join(f"{month:%d/%m/%Y},{k}\n" for k, month in enumerate(months)))
    with pytest.warns(DataQualityWarning, match=rf"read dates on day {day} of each of their months as"):
        series = read_csv(path)
    assert series.freq == "MS"
    pd.testing.assert_index_equal(series.index, months.to_period("M").to_timestamp(), check_names=False)


@pytest.mark.parametrize("written", ["%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y"])
def test_a_forecast_of_months_dated_on_one_day_is_dated_on_that_day(tmp_path, written) -> None:
    """Every row on the 15th (a pay day, a release day), read as months: the forecast was dated on the 1st
    and the note said the dates fell on different days (h62 F8); both say the 15th now."""
    from forecaster.cli import main

    months = pd.date_range("2019-01-01", periods=36, freq="MS") + pd.Timedelta(days=14)
    path, model, output = tmp_path / "paid.csv", tmp_path / "model", tmp_path / "forecast.csv"
    pd.DataFrame({"date": months.strftime(written), "v": np.arange(36.0)}).to_csv(path, index=False)
    train = ["train", "--csv", str(path), "--model", "naive", "--horizon", "3", "--out", str(model)]
    with pytest.warns(DataQualityWarning, match="read dates on day 15 of each of their months as months"):
        assert main(train) == 0
    assert main(["predict", "--model", str(model), "--csv", str(path), "--output", str(output)]) == 0
    ahead = pd.date_range("2022-01-01", periods=3, freq="MS") + pd.Timedelta(days=14)
    assert pd.read_csv(output)["date"].tolist() == list(ahead.strftime(written))


def _without_the_day_first_record(model) -> None:
    """`model` as a bundle saved before it recorded a day-first reading: the field left out of its config,
    whose sha256 the weights' metadata names (its calibration, which names the old one's, left out)."""
    import hashlib
    import json

    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    config = json.loads((model / "config.json").read_text())
    assert config["data"].pop("dayfirst") is True
    (model / "config.json").write_text(json.dumps(config, indent=2))
    with safe_open(model / "weights.safetensors", framework="pt") as handle:
        metadata = handle.metadata()
    metadata["config_sha256"] = hashlib.sha256((model / "config.json").read_bytes()).hexdigest()
    save_file(load_file(model / "weights.safetensors"), model / "weights.safetensors", metadata=metadata)
    (model / "calibration.safetensors").unlink()


def test_a_bundle_trained_on_day_first_dates_reads_new_rows_day_first(tmp_path) -> None:
    """Trained on 01/01/2013 ... 01/12/2022 (monthly only day first), the model read its own last 12 rows
    month first, as 12 days of January, and refused them (h75 F21): the bundle records the day-first reading
    and predict, the Python API and the service read new rows so. A bundle saved before reads as it did."""
    from test_service import serving

    from forecaster.api import Forecaster
    from forecaster.cli import main

    months = pd.date_range("2013-01-01", periods=120, freq="MS")
    frame = pd.DataFrame({"date": months.strftime("%d/%m/%Y"), "sales": 1000.0 + np.arange(120)})
    path, last, model = tmp_path / "uk.csv", tmp_path / "last12.csv", tmp_path / "models" / "uk"
    frame.to_csv(path, index=False)
    frame.tail(12).to_csv(last, index=False)
    train = ["train", "--csv", str(path), "--model", "naive", "--horizon", "3", "--input-size", "12"]
    assert main([*train, "--no-progress", "--out", str(model)]) == 0
    ahead = ["01/01/2023", "01/02/2023", "01/03/2023"]
    output = tmp_path / "forecast.csv"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["predict", "--model", str(model), "--csv", str(last), "--output", str(output)]) == 0
        forecast = Forecaster.load(model).predict(frame.tail(12))
    assert not [warning for warning in caught if "month first" in str(warning.message)]
    assert pd.read_csv(output)["date"].tolist() == ahead
    assert list(forecast.index) == ahead  # text dates answered in their labels, as the service does (h82 F21)
    with serving(tmp_path / "models") as client:
        records = client.post("/v1/models/uk/forecast", json={"data": frame.tail(12).to_dict("records")})
        upload = client.post("/v1/models/uk/forecast.csv", files={"file": ("last12.csv", last.read_text())})
    assert records.status_code == 200 and upload.status_code == 200, (records.text, upload.text)
    assert pd.read_csv(io.StringIO(upload.text))["date"].tolist() == ahead
    assert [row["date"] for row in records.json()["forecast"]] == ahead
    _without_the_day_first_record(model)
    with pytest.raises(DataError, match="does not follow the model's frequency 'MS'"):
        Forecaster.load(model).predict(frame.tail(12))


@pytest.mark.parametrize(("written", "dayfirst"),
                         [("%d/%m/%Y", True), ("%d-%m-%Y", True), ("%m/%d/%Y", False), ("%Y-%m-%d", False)])
def test_the_reading_records_day_first_only_where_it_took_it(written, dayfirst) -> None:
    """What a bundle keeps: day first where a date's first number was read as its day."""
    days = pd.date_range("2021-01-01", periods=60, freq="D")
    series = read_frame(pd.DataFrame({"date": days.strftime(written), "v": np.arange(60.0)}))
    assert series.options.dayfirst is dayfirst and series.freq == "D"


def test_day_first_dates_of_series_one_after_another_are_read_day_first():
    """A long table of independent series, hourly, written 29/11/2020 07:00: its column steps back where each
    series begins, so neither reading was in order and month first was taken; 12 days of each month read
    as months, the series ran to 11 December with 304 hours 'filled', and were forecast from there."""
    hours = pd.date_range("2020-01-01", periods=2000, freq="h")
    frame = pd.DataFrame({"unique_id": np.repeat(["A", "B", "C"], len(hours)),
                          "ds": np.tile(hours.strftime("%d/%m/%Y %H:%M"), 3),
                          "y": np.arange(3 * len(hours), dtype=float)})  # fmt: skip
    series = read_frame(frame, id_col="unique_id", channels="independent")
    pd.testing.assert_index_equal(series.index, hours, check_names=False)
    np.testing.assert_array_equal(series.frame["C"].to_numpy(), np.arange(4000.0, 6000.0))


def test_months_by_name_in_the_languages_offices_write_them(tmp_path):
    """Destatis' GENESIS export: 'Jahr;Monat' columns of 'Januar', 'März' (it was read as a long panel keyed
    by 'Monat'), and 'Zeitraum' labels '2012 Januar' (refused as no date column; the last row, '2023
    Dezember', was then dropped as a summary row), each in Windows-1252 with decimal commas."""
    german = ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
              "November", "Dezember"]  # fmt: skip
    rows = [f"{year};{month};{100 + 12 * (year - 2020) + k},5" for year in (2020, 2021) for k, month
            in enumerate(german)]  # fmt: skip
    parts = tmp_path / "genesis.csv"
    parts.write_bytes(("Jahr;Monat;Index\n" + "\n".join(rows) + "\n").encode("cp1252"))
    labels = tmp_path / "labels.csv"
    labels.write_bytes(("Zeitraum;Index\n" + "\n".join(f"{row.split(';')[0]} {row.split(';', 1)[1]}"
                                                      for row in rows) + "\n").encode("cp1252"))  # fmt: skip
    for path in (parts, labels):
        series = read_csv(path)
        assert list(series.index) == list(pd.date_range("2020-01-01", periods=24, freq="MS"))
        np.testing.assert_array_equal(series.values[:, 0], 100.5 + np.arange(24))
    french = parse_period_labels(pd.Series(["janvier 2020", "mars 2020", "déc. 2020"]))
    assert list(french) == list(pd.to_datetime(["2020-01-01", "2020-03-01", "2020-12-01"]))
    assert parse_period_labels(pd.Series(["Total 2020"])) is None  # a word, no month


def test_a_number_among_date_texts_is_named_as_no_timestamp():
    """JSON records with 12345 for a date: pandas read it as 12345 ns past 1970, refused as unsorted."""
    dates: list[object] = [str(day.date()) for day in pd.date_range("2020-01-01", periods=30)]
    dates[5] = 12345
    with pytest.raises(DataError, match="value\\(s\\) that are not timestamps: row 5 '12345'; expected a"):
        read_frame(pd.DataFrame({"date": dates, "y": np.arange(30.0)}))


def test_zoned_dates_snap_to_their_months_without_pandas_chatter() -> None:
    """A zoned index went through `to_period`, whose warning that it drops the zone reached the user's
    terminal (a 10-minute sensor log in UTC with an outage printed it three times)."""
    from forecaster.data.grids import snap_to_periods

    released = pd.DatetimeIndex(["2024-01-15", "2024-02-14", "2024-03-15", "2024-04-15"], tz="UTC")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        snapped, note = snap_to_periods(released)
        assert snap_to_periods(pd.date_range("2024-05-01", periods=50, freq="10min", tz="UTC")) is None
    assert snapped.equals(pd.date_range("2024-01-01", periods=4, freq="MS", tz="UTC"))
    assert note == "read dates on different days of their months as months (2024-01-15 -> 2024-01)"


@pytest.mark.parametrize(("unit", "scale"), [("seconds", 1), ("milliseconds", 1000)])
def test_a_date_column_of_unix_times_is_read_in_utc(tmp_path, unit, scale) -> None:
    """Prometheus writes Unix seconds, Grafana milliseconds: refused as numbers that are not dates. Other
    numbers under a date's name are still refused."""
    start = int(pd.Timestamp("2024-03-01", tz="UTC").timestamp())
    rows = "".join(f"{(start + 60 * k) * scale},{40 + k % 7}\n" for k in range(30))
    path = tmp_path / "metrics.csv"
    path.write_text("timestamp,cpu\n" + rows)
    with pytest.warns(DataQualityWarning, match=f"read column 'timestamp' as Unix times in {unit} .UTC."):
        series = read_csv(path)
    assert series.freq == "min" and series.index[0] == pd.Timestamp("2024-03-01", tz="UTC")
    path.write_text("timestamp,cpu\n" + "".join(f"{12345 + k},{k}\n" for k in range(30)))
    with pytest.raises(DataError, match="date column 'timestamp' holds numbers that are not years or dates"):
        read_csv(path)


def test_months_before_their_year_with_a_dot_are_months(tmp_path) -> None:
    """A German spreadsheet's months, 01.2021 ... 12.2021, in a file of ';' and decimal commas: no date column
    was found, and named, months 10-12 were called no timestamps while 01-09 read as something else."""
    months = pd.period_range("2021-01", periods=18, freq="M")
    path = tmp_path / "absatz.csv"
    rows = "".join(f"{m.month:02d}.{m.year};{k},5\n" for k, m in enumerate(months))
    path.write_text("Monat;Absatz\n" + rows)
    series = read_csv(path)
    assert series.freq == "MS" and series.index[9] == pd.Timestamp("2021-10-01") and len(series) == 18
    assert series.frame["Absatz"].iloc[2] == 2.5


def test_a_date_column_of_excels_day_numbers_is_read_as_days(tmp_path) -> None:
    """A spreadsheet's dates saved unformatted (44562 for 2022-01-01) were refused as numbers that are no
    dates; numbers that do not only rise (codes) still are."""
    path = tmp_path / "orders.csv"
    path.write_text("Date,Orders\n" + "".join(f"{44562 + k},{k % 9}\n" for k in range(40)))
    with pytest.warns(DataQualityWarning, match="read column 'Date' as Excel's day numbers"):
        series = read_csv(path)
    assert series.freq == "D" and series.index[0] == pd.Timestamp("2022-01-01") and len(series) == 40
    path.write_text("Date,Orders\n" + "".join(f"{44562 + k * (-1) ** k},{k}\n" for k in range(40)))
    with pytest.raises(DataError, match="date column 'Date' holds numbers that are not years or dates"):
        read_csv(path)


def test_excels_serial_days_with_a_time_of_day_are_read_as_date_times(tmp_path) -> None:
    """A sheet of date-time cells saved unformatted (44562.5 for noon, 44562.0416666667 for 01:00) was
    refused by a message listing every date form but Excel's serials (h82 F12): the fraction is the time of
    day, to the second; numbers that are no serials name them among the forms expected."""
    hours = pd.date_range("2022-01-01", periods=200, freq="h")
    serials = (hours - pd.Timestamp("1899-12-30")) / pd.Timedelta(days=1)
    path = tmp_path / "hourly.csv"
    pd.DataFrame({"Date": np.round(serials, 10), "Value": np.arange(200.0)}).to_csv(path, index=False)
    with pytest.warns(DataQualityWarning, match="read column 'Date' as Excel's day numbers"):
        series = read_csv(path)
    assert series.freq == "h" and list(series.index) == list(hours)
    path.write_text("Date,Value\n" + "".join(f"{44562.5 + k},{k}\n" for k in range(40)))
    with pytest.warns(DataQualityWarning, match="Excel's day numbers"):
        assert read_csv(path).index[1] == pd.Timestamp("2022-01-02 12:00")
    path.write_text("Date,Value\n" + "".join(f"{44562.5 + k * (-1) ** k},{k}\n" for k in range(40)))
    with pytest.raises(DataError, match=r"decimal years \(1949.0833\), or Excel's serial days \(44562.5\)"):
        read_csv(path)


def test_a_log_of_readings_at_varying_steps_is_refused_naming_the_median_step(tmp_path) -> None:
    """A sensor logging every ten minutes, give or take a minute: the refusal named the grid of the first
    step alone ('the 579s grid'); it says the steps vary and what one step to resample to."""
    rng = np.random.default_rng(0)
    stamps = pd.Timestamp("2024-05-01") + pd.to_timedelta(np.cumsum(rng.integers(540, 661, 200)), unit="s")
    path = tmp_path / "sensor.csv"
    pd.DataFrame({"timestamp": stamps, "pm25": rng.normal(10, 2, 200)}).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"the steps vary, 10min in the median: resample the rows to one"):
        read_csv(path)


def test_a_date_column_beside_a_column_of_hours_reads_each_date_at_its_hour(tmp_path) -> None:
    """UCI's bike sharing writes `dteday` and `hr`: refused as duplicate dates, with advice to name an id
    column, which none is."""
    days = np.repeat(pd.date_range("2011-01-01", periods=5).strftime("%Y-%m-%d"), 24)
    frame = pd.DataFrame({"dteday": days, "hr": np.tile(np.arange(24), 5), "cnt": np.arange(120.0)})
    path = tmp_path / "hour.csv"
    frame.to_csv(path, index=False)
    with pytest.warns(DataQualityWarning, match="read column 'hr' as the hour of each date in 'dteday'"):
        series = read_csv(path)
    assert series.freq == "h" and series.columns == ["cnt"]
    assert series.index[25] == pd.Timestamp("2011-01-02 01:00")


@pytest.mark.parametrize(
    ("date_col", "hour_col", "date_format"),
    [("Date", "HE", "%m/%d/%Y"), ("date", "hour", "%Y-%m-%d")],
)
def test_a_date_column_beside_hours_1_to_24_reads_each_hour_at_its_end(
    tmp_path, date_col: str, hour_col: str, date_format: str
) -> None:
    """Power markets write `Date, HE, load` (hour ending 1-24), IESO and CAISO number hours 1-24 under `Hour`:
    both were refused as duplicate dates with advice to name an id column (h91 F9, h100 F2). No hour of the
    day is 24, so they are hours ending; HE 24 ends at the next midnight, as "24:00" times are read."""
    days = np.repeat(pd.date_range("2023-01-01", periods=5).strftime(date_format), 24)
    frame = pd.DataFrame({date_col: days, hour_col: np.tile(np.arange(1, 25), 5), "load": np.arange(120.0)})
    path = tmp_path / "hours.csv"
    frame.to_csv(path, index=False)
    said = rf"read column '{hour_col}' as the hour ending \(1 at 01:00, 24 at"
    with pytest.warns(DataQualityWarning, match=said):
        series = read_csv(path)
    assert series.freq == "h" and series.columns == ["load"]
    assert series.index[0] == pd.Timestamp("2023-01-01 01:00")
    assert series.index[23] == pd.Timestamp("2023-01-02 00:00")
    assert series.index[-1] == pd.Timestamp("2023-01-06 00:00")


def test_households_numbered_1_to_24_under_hh_are_no_hours(tmp_path) -> None:
    """`hh` also names a household: 24 of them numbered 1-24 beside daily dates were read as one hourly
    series (h106); they stay a long table's rows, refused with the advice to name the id column."""
    days = np.repeat(pd.date_range("2023-01-01", periods=5).strftime("%Y-%m-%d"), 24)
    path = tmp_path / "households.csv"
    pd.DataFrame({"date": days, "hh": np.tile(np.arange(1, 25), 5), "kwh": np.arange(120.0)}).to_csv(
        path, index=False
    )
    with pytest.raises(DataError, match="duplicate timestamp 2023-01-01 00:00:00 in column 'date'"):
        read_csv(path)


@pytest.mark.parametrize(("period", "date"), [("periode", "datum"), ("Periodo", "fecha"), ("period", "date")])
def test_a_period_column_of_no_dates_beside_a_date_column_leaves_the_dates_to_it(tmp_path, period, date):
    """A column named like a period that holds a word ("Anual", "maand") beside one of dates: it was taken
    as the date column for its name, and the file refused (h106)."""
    months = pd.date_range("2020-01-01", periods=24, freq="MS").strftime("%Y-%m-%d")
    path = tmp_path / "two.csv"
    pd.DataFrame({period: "Anual", date: months, "valor": np.arange(24.0)}).to_csv(path, index=False)
    series = read_csv(path)
    assert series.date_col == date and series.freq == "MS" and series.index[-1] == pd.Timestamp("2021-12-01")


_DEKADS = [(year, month, k) for year in (2021, 2022) for month in range(1, 13) for k in (1, 2, 3)]


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        ([f"{y}-{m:02d}-D{k}" for y, m, k in _DEKADS], r"holds labels like '2021-01-D1' \(line 2\): dekads"),
        ([f"{y}-{m:02d}-{10 * k - 9:02d}" for y, m, k in _DEKADS],
         "on days 1, 11, 21 of each month only: dekads"),
        ([f"{y}-{m:02d}-{k}" for y, m, k in _DEKADS], "on days 1, 2, 3 of each month only: dekads"),
        ([f"{y} P{p:02d}" for y in (2020, 2021, 2022) for p in range(1, 14)],
         r"holds labels like '2020 P01' \(line 2\): 4-week periods, 13 a year"),
    ],
)  # fmt: skip
def test_dekads_and_four_week_periods_are_refused_as_what_they_are(tmp_path, labels, said) -> None:
    """Dekads (dated or labelled) and 4-week periods: no frequency reads them; refused as a 240h grid, 24h
    steps or "not timestamps" (h91 F9), now named, with what is expected."""
    path = tmp_path / "periods.csv"
    pd.DataFrame({"period": labels, "value": np.arange(len(labels), dtype=float)}).to_csv(path, index=False)
    with pytest.raises(DataError, match=said + ".*; expected "):
        read_csv(path)


def test_columns_that_write_the_dates_parts_out_again_are_no_series(tmp_path) -> None:
    """Kaggle's feature-engineered tables keep year, month, day, weekday and week beside the date; each was
    forecast as a series. A column named like a part that does not hold it stays a series."""
    days = pd.date_range("2020-01-01", periods=100, freq="D")
    frame = pd.DataFrame({"date": days.strftime("%Y-%m-%d"), "year": days.year, "month": days.month,
                          "day": days.day, "weekday": (days.day_of_week + 1) % 7,  # Sunday 0, as R's
                          "week": days.isocalendar()["week"].to_numpy(), "hour": np.arange(100) % 24,
                          "sales": np.arange(100.0)})  # fmt: skip
    frame.to_csv(tmp_path / "train.csv", index=False)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        series = read_csv(tmp_path / "train.csv")
    assert series.columns == ["hour", "sales"]  # every day at midnight: 'hour' is no hour of these dates
    note = "skipped column(s) 'year', 'month', 'day', 'weekday', 'week': parts or codes of the dates"
    assert note in str(said[-1].message)


def test_power_bis_year_quarter_month_hierarchy_is_monthly(tmp_path) -> None:
    """Power BI exports a date hierarchy as Year, Quarter ("Qtr 1") and Month (by name): read as years and
    quarters, its three months a quarter were refused ("Qtr 1 is not a quarter number", or as repeated
    quarters where the quarter is a number, which is then no series either)."""
    months = pd.date_range("2020-01-01", periods=36, freq="MS")
    frame = pd.DataFrame({"Year": months.year, "Quarter": [f"Qtr {q}" for q in months.quarter],
                          "Month": months.strftime("%B"), "Sales Amount": np.arange(36.0)})  # fmt: skip
    frame.to_csv(tmp_path / "named.csv", index=False)
    frame.assign(Quarter=months.quarter).to_csv(tmp_path / "numbered.csv", index=False)
    for name in ("named.csv", "numbered.csv"):
        series = read_csv(tmp_path / name)
        assert series.freq == "MS" and list(series.index) == list(months)
        assert series.columns == ["Sales Amount"] and series.options.date_from == ["Year", "Month"]


@pytest.mark.parametrize(
    ("header", "label"),
    [("Year,Quarter", "Q{}"), ("Year,Quarter", "Qtr {}"), ("Year,Quarter", "Quarter {}"),
     ("Year,Quarter", "{}Q"), ("Année,Trimestre", "T{}"), ("År,Kvartal", "K{}"), ("Tahun,Triwulan", "Q{}"),
     ("Year,Month", "M{:02d}"), ("Year,Month", "M{}")],
)
def test_a_quarter_or_month_written_with_its_letter_in_a_column_is_read(tmp_path, header, label) -> None:
    """Excel pivots, Power BI ("Qtr 1"), INSEE ("T1") and Statistics Sweden ("K1") write a year's quarter
    in a column of its own with its letter, as "M01" a month: refused as 'Q1 is not a quarter number' (h62
    F2), though "1", "1. Quartal" and "I kvartal" were read. A letter that is no part still is."""
    months = header.endswith("Month")
    parts = 12 if months else 4
    rows = "".join(f"{2005 + k // parts},{label.format(k % parts + 1)},{100 + k}\n" for k in range(3 * parts))
    path = tmp_path / "parts.csv"
    path.write_text(f"{header},Value\n{rows}")
    series = read_csv(path, date_from=header.split(","))
    expected = pd.date_range("2005-01-01", periods=3 * parts, freq="MS" if months else "QS-JAN")
    assert series.freq == ("MS" if months else "QS-JAN") and list(series.index) == list(expected)
    assert series.frame["Value"].tolist() == [100 + k for k in range(3 * parts)]
    beyond = label.format(parts + 1)  # Q5, M13
    path.write_text(f"{header},Value\n{rows.replace(label.format(2), beyond, 1)}")
    with pytest.raises(DataError, match=rf"line 3: {beyond} is not a (quarter|month) number"):
        read_csv(path, date_from=header.split(","))


def test_date_from_columns_named_in_any_language_are_read_by_what_they_hold(tmp_path) -> None:
    """`--date-from Tahun,Triwulan` (Indonesian) was refused as 'expected columns named year | year,quarter
    ...'; the second column's largest number says quarters; Roman quarters ('I kvartal') read as numbers."""
    roman = ["I", "II", "III", "IV"]
    rows = "".join(f"{2016 + k // 4},{roman[k % 4]} kvartal,{100 + k}\n" for k in range(12))
    path = tmp_path / "bps.csv"
    path.write_text("Tahun,Triwulan,PDB\n" + rows)
    series = read_csv(path, date_from=["Tahun", "Triwulan"])
    assert series.freq == "QS-JAN" and series.index[0] == pd.Timestamp("2016-01-01") and len(series) == 12
    assert series.index[-1] == pd.Timestamp("2018-10-01") and series.columns == ["PDB"]
    months = "".join(f"{2016 + k // 12},{k % 12 + 1},{k}\n" for k in range(24))
    (tmp_path / "bulan.csv").write_text("Tahun,Bulan,Inflasi\n" + months)
    assert read_csv(tmp_path / "bulan.csv", date_from=["Tahun", "Bulan"]).freq == "MS"


def test_offsets_that_change_every_day_are_two_zones_mixed_not_daylight_saving_time(tmp_path):
    """Days alternating -03:00 and +05:00 were read as local clock times, "whose UTC offsets change
    (daylight saving time)" (h82 F19): no zone changes its offset daily, nor by eight hours; refused as the
    mix of zones it is, by the reader and the Python API alike, and so by the service, whose yearly
    timestamps alternating +05:00 and Z were answered without their zone (it calls `across_offsets` too).
    Instants of two zones regular in UTC are read in UTC, as before, said as the mix they are."""
    days = pd.date_range("2022-01-01", periods=120, freq="D")
    stamps = [f"{day.date()}T00:00:00{'+05:00' if k % 2 else '-03:00'}" for k, day in enumerate(days)]
    frame = pd.DataFrame({"date": stamps, "v": np.arange(120.0)})
    frame.to_csv(tmp_path / "mixed.csv", index=False)
    for read in (lambda: read_frame(frame), lambda: read_csv(tmp_path / "mixed.csv")):
        with pytest.raises(DataError, match="date column 'date' mixes time zones or UTC offsets"):
            read()
    years = pd.Series([f"{2000 + k}-01-01T00:00:00{'Z' if k % 2 else '+05:00'}" for k in range(20)])
    assert across_offsets(years) is None
    berlin = pd.date_range("2020-01-01", periods=400, freq="D", tz="Europe/Berlin")  # a zone's: still read
    read = across_offsets(pd.Series([stamp.isoformat() for stamp in berlin]))
    assert read is not None and read[0].equals(berlin.tz_localize(None)) and "daylight saving time" in read[1]
    hours = pd.date_range("2024-01-01", periods=48, freq="h", tz="UTC")  # instants of two zones: in UTC
    texts = [(hour.tz_convert("Asia/Tokyo") if k % 2 else hour).isoformat() for k, hour in enumerate(hours)]
    read = across_offsets(pd.Series(texts))
    assert read is not None and read[0].equals(hours)
    assert read[1] == "read the dates, which mix UTC offsets (time zones), in UTC"

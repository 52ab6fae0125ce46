"""Forecast dates written as the history wrote its own, and forecasts without float32 noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster.cli import main
from forecaster.data import DataQualityWarning, read_csv
from forecaster.data.labels import label_style, write_labels


def _years(first: int, count: int) -> pd.DatetimeIndex:
    return pd.date_range(f"{first}-01-01", periods=count, freq="YS")


@pytest.mark.parametrize(
    ("labels", "index", "style", "next_labels"),
    [
        (["1987Q3", "1987Q4"], pd.date_range("1987-07-01", periods=2, freq="QS"), "{year}Q{quarter}",
         ["1988Q1", "1988Q2"]),
        (["Q3 1987", "Q4 1987"], pd.date_range("1987-07-01", periods=2, freq="QS"), "Q{quarter} {year}",
         ["Q1 1988", "Q2 1988"]),
        (["2020-T3", "2020-T4"], pd.date_range("2020-07-01", periods=2, freq="QS"), "{year}-T{quarter}",
         ["2021-T1", "2021-T2"]),
        (["2020M11", "2020M12"], pd.date_range("2020-11-01", periods=2, freq="MS"), "{year}M{month:02d}",
         ["2021M01", "2021M02"]),
        (["2020M8", "2020M9"], pd.date_range("2020-08-01", periods=2, freq="MS"),
         "{year}M{month}", ["2020M10", "2020M11"]),
        (["2020-W52", "2020-W53"], pd.date_range("2020-12-21", periods=2, freq="W-MON"),
         "{isoyear}-W{week:02d}", ["2021-W01", "2021-W02"]),
        (["202052", "202053"], pd.date_range("2020-12-21", periods=2, freq="W-MON"), "{isoyear}{week:02d}",
         ["202101", "202102"]),  # written back as ISO dates (h49)
        (["2019-H1", "2019-H2"], pd.date_range("2019-01-01", periods=2, freq="6MS"), "{year}-H{half}",
         ["2020-H1", "2020-H2"]),
        (["1969", "1970"], _years(1969, 2), "{year}", ["1971", "1972"]),
        (["20200130", "20200131"], pd.date_range("2020-01-30", periods=2, freq="D"),
         "{year}{month:02d}{day:02d}", ["20200201", "20200202"]),
        (["Nov 2020", "Dec 2020"], pd.date_range("2020-11-01", periods=2, freq="MS"), "{mon} {year}",
         ["Jan 2021", "Feb 2021"]),
        (["2020-11", "2020-12"], pd.date_range("2020-11-01", periods=2, freq="MS"), "{year}-{month:02d}",
         ["2021-01", "2021-02"]),
        (["2023 NOV", "2023 DEC"], pd.date_range("2023-11-01", periods=2, freq="MS"), "{year} {MON}",
         ["2024 JAN", "2024 FEB"]),  # ONS
        (["2020:3", "2020:4"], pd.date_range("2020-07-01", periods=2, freq="QS"), "{year}:{quarter}",
         ["2021:1", "2021:2"]),
        (["2020:11", "2020:12"], pd.date_range("2020-11-01", periods=2, freq="MS"), "{year}:{month:02d}",
         ["2021:01", "2021:02"]),
        (["FY2022", "FY2023"], _years(2022, 2), "FY{year:02d}", ["FY2024", "FY2025"]),
        (["FY22", "FY23"], _years(2022, 2), "FY{yy:02d}", ["FY24", "FY25"]),  # h91: were written FY2024
        (["FY22/23", "FY23/24"], _years(2022, 2), "FY{yy:02d}/{next2:02d}", ["FY24/25", "FY25/26"]),
        (["2022/23", "2023/24"], _years(2022, 2), "{year}/{next2:02d}", ["2024/25", "2025/26"]),
        (["1998/99", "1999/00"], _years(1998, 2), "{year}/{next2:02d}", ["2000/01", "2001/02"]),
        (["2022-2023", "2023-2024"], _years(2022, 2), "{year}-{next}", ["2024-2025", "2025-2026"]),
        (["FY2022/23", "FY2023/24"], _years(2022, 2), "FY{year}/{next2:02d}", ["FY2024/25", "FY2025/26"]),
        (["FY 2022-23", "FY 2023-24"], _years(2022, 2), "FY {year}-{next2:02d}",
         ["FY 2024-25", "FY 2025-26"]),
        (["2022 to 2023", "2023 to 2024"], _years(2022, 2), "{year} to {next}",
         ["2024 to 2025", "2025 to 2026"]),  # GOV.UK's financial years (h66)
        (["2022\u201323", "2023\u201324"], _years(2022, 2), "{year}\u2013{next2:02d}",
         ["2024\u201325", "2025\u201326"]),  # typeset with an en dash
        (["Nov-99", "Dec-99"], pd.date_range("1999-11-01", periods=2, freq="MS"), "{mon}-{yy:02d}",
         ["Jan-00", "Feb-00"]),  # Excel's mmm-yy
        (["30/01/2015", "31/01/2015"], pd.date_range("2015-01-30", periods=2, freq="D"),
         "{day:02d}/{month:02d}/{year}", ["01/02/2015", "02/02/2015"]),  # the RBNZ's days
        (["03/14/2024", "03/15/2024"], pd.date_range("2024-03-14", periods=2, freq="D"),
         "{month:02d}/{day:02d}/{year}", ["03/16/2024", "03/17/2024"]),  # the EIA's
        (["5/31/2023", "6/1/2023"], pd.date_range("2023-05-31", periods=2, freq="D"), "{month}/{day}/{year}",
         ["6/2/2023", "6/3/2023"]),  # Google Sheets'
        (["11/2020", "12/2020"], pd.date_range("2020-11-01", periods=2, freq="MS"), "{month:02d}/{year}",
         ["01/2021", "02/2021"]),  # written back as ISO dates (h47)
        (["11.2020", "12.2020"], pd.date_range("2020-11-01", periods=2, freq="MS"), "{month:02d}.{year}",
         ["01.2021", "02.2021"]),
        (["08 Jan 2010", "09 Jan 2010"], pd.date_range("2010-01-08", periods=2, freq="D"),
         "{day:02d} {mon} {year}", ["10 Jan 2010", "11 Jan 2010"]),  # the Bank of England's
        (["3º trimestre 2016", "4º trimestre 2016"], pd.date_range("2016-07-01", periods=2, freq="QS"),
         "{quarter}º trimestre {year}", ["1º trimestre 2017", "2º trimestre 2017"]),  # IBGE
        (["3rd quarter 2016", "4th quarter 2016"], pd.date_range("2016-07-01", periods=2, freq="QS"),
         "{qth} quarter {year}", ["1st quarter 2017", "2nd quarter 2017"]),  # dates written before (h42)
        # h95: labels read since h91, written back as ISO dates before
        (["2020년 8월", "2020년 9월"], pd.date_range("2020-08-01", periods=2, freq="MS"),
         "{year}년 {month}월", ["2020년 10월", "2020년 11월"]),  # KOSIS
        (["2020년 3분기", "2020년 4분기"], pd.date_range("2020-07-01", periods=2, freq="QS"),
         "{year}년 {quarter}분기", ["2021년 1분기", "2021년 2분기"]),
        (["2020年第三季度", "2020年第四季度"], pd.date_range("2020-07-01", periods=2, freq="QS"),
         "{year}年第{cnquarter}季度", ["2021年第一季度", "2021年第二季度"]),  # the NBS
        (["jan/2021", "fev/2021"], pd.date_range("2021-01-01", periods=2, freq="MS"),
         "{name:6.0.3.lower}/{year}", ["mar/2021", "abr/2021"]),  # IBGE, in Portuguese
        (["ноябрь 2020", "декабрь 2020"], pd.date_range("2020-11-01", periods=2, freq="MS"),
         "{name:14.0.0.lower} {year}", ["январь 2021", "февраль 2021"]),  # Rosstat
        (["2020KW52", "2020KW53"], pd.date_range("2020-12-21", periods=2, freq="W-MON"),
         "{isoyear}KW{week:02d}", ["2021KW01", "2021KW02"]),
        (["2019 1st half", "2019 2nd half"], pd.date_range("2019-01-01", periods=2, freq="6MS"),
         "{year} {hth} half", ["2020 1st half", "2020 2nd half"]),
        (["1º semestre 2019", "2º semestre 2019"], pd.date_range("2019-01-01", periods=2, freq="6MS"),
         "{half}º semestre {year}", ["1º semestre 2020", "2º semestre 2020"]),
        (["2010 3e kwartaal", "2010 4e kwartaal"], pd.date_range("2010-07-01", periods=2, freq="QS"),
         "{year} {quarter}e kwartaal", ["2011 1e kwartaal", "2011 2e kwartaal"]),  # CBS StatLine
        (["2010 3e kwartaal*", "2010 4e kwartaal*"], pd.date_range("2010-07-01", periods=2, freq="QS"),
         "{year} {quarter}e kwartaal", ["2011 1e kwartaal", "2011 2e kwartaal"]),  # provisional: ISO days
        (["2020年7-9月期", "2020年10-12月期"], pd.date_range("2020-07-01", periods=2, freq="QS"),
         "{year}年{qfirst}-{qlast}月期", ["2021年1-3月期", "2021年4-6月期"]),  # e-Stat: ISO days, h136
    ],
)  # fmt: skip
def test_a_style_that_writes_the_history_back_continues_it(labels, index, style, next_labels):
    assert label_style(pd.Series(labels), index) == style
    ahead = pd.date_range(index[-1], periods=3, freq=index.freq)[1:]
    assert list(write_labels(ahead, style)) == next_labels


@pytest.mark.parametrize(
    ("labels", "index"),
    [
        (["2020-01-30", "2020-01-31"], pd.date_range("2020-01-30", periods=2, freq="D")),  # timestamps stay
        (["1987Q3", "1987Q4"], pd.date_range("1987-07-02", periods=2, freq="QS") + pd.Timedelta("1D")),
        (["2020-11", "2020-12"], pd.date_range("2020-11-01", periods=2, freq="MS", tz="UTC")),
        # months by names two languages share, which name the next ones apart: Portuguese or Italian ("out",
        # "ott"), Spanish or Portuguese ("may", "mai"); an IBGE file's forecasts had been labelled in Italian
        (["ago 2021", "set 2021"], pd.date_range("2021-08-01", periods=2, freq="MS")),
        (["mar 2021", "abr 2021"], pd.date_range("2021-03-01", periods=2, freq="MS")),
    ],
)
def test_labels_the_index_does_not_write_back_keep_timestamps(labels, index):
    assert label_style(pd.Series(labels), index) is None


def _cli(argv: list[object]) -> int:
    return main([str(arg) for arg in argv])


def test_predict_writes_quarters_and_years_as_the_file_did_and_naive_repeats_the_last_value(tmp_path: Path):
    values = 900 + 100 * np.sin(np.arange(40))
    values[-1] = 740.0  # float32 standardization would write 740.0000069931347 back
    quarterly = tmp_path / "quarters.csv"
    labels = [f"{year}-Q{quarter}" for year in range(1978, 1988) for quarter in range(1, 5)]
    pd.DataFrame({"period": labels, "volume": values}).to_csv(quarterly, index=False)
    yearly = tmp_path / "years.csv"
    pd.DataFrame({"year": range(1931, 1971), "volume": values}).to_csv(yearly, index=False)
    expected_dates = {quarterly: ["1988-Q1", "1988-Q2", "1988-Q3"], yearly: ["1971", "1972", "1973"]}
    for path, expected in expected_dates.items():
        model, output = tmp_path / f"{path.stem}-model", tmp_path / f"{path.stem}-forecast.csv"
        assert _cli(["train", "--csv", path, "--model", "naive", "--horizon", 3, "--out", model]) == 0
        assert _cli(["predict", "--model", model, "--csv", path, "--output", output]) == 0
        written = pd.read_csv(output, dtype=str)
        assert list(written.iloc[:, 0]) == expected
        assert list(written["volume"]) == ["740.0"] * 3
        assert read_csv(path).date_style is not None


def test_dataframe_callers_get_their_times_types_not_the_files_labels(tmp_path: Path):
    """A frame's column of whole years is answered in whole years (the CLI writes them as text in the file's
    style); its column of dates in timestamps."""
    from forecaster.api import Forecaster

    frame = pd.DataFrame({"year": range(1931, 1971), "volume": np.arange(40.0)})
    forecast = Forecaster(model="naive", horizon=2).fit(frame).predict(frame)
    assert forecast.index.tolist() == [1971, 1972] and list(forecast["volume"]) == [39.0, 39.0]
    dated = frame.assign(year=pd.to_datetime(frame["year"].astype(str)))
    forecast = Forecaster(model="naive", horizon=2).fit(dated).predict()
    assert forecast.index.tolist() == [pd.Timestamp("1971-01-01"), pd.Timestamp("1972-01-01")]


def test_independent_series_of_a_long_table_keep_the_files_labels(tmp_path: Path):
    """Series of a long table that start at different quarters (`--channels independent`) are forecast from
    their own ends, with the quarters written as the file wrote them ("2010 Q1", not 2010-01-01)."""
    quarters = [f"{year} Q{quarter}" for year in range(2000, 2010) for quarter in range(1, 5)]
    rows = [(country, quarter, 100.0 + k) for country, start in (("US", 0), ("KR", 12))
            for k, quarter in enumerate(quarters[start:])]  # fmt: skip
    path = tmp_path / "panel.csv"
    pd.DataFrame(rows, columns=["country", "quarter", "gdp"]).to_csv(path, index=False)
    model, output = tmp_path / "model", tmp_path / "forecast.csv"
    argv = ["--csv", path, "--model", "naive", "--horizon", 2, "--channels", "independent", "--out", model]
    assert _cli(["train", *argv]) == 0
    assert _cli(["predict", "--model", model, "--csv", path, "--output", output]) == 0
    written = pd.read_csv(output, dtype=str)
    assert list(written["quarter"]) == ["2010 Q1", "2010 Q2"] * 2
    assert list(written["country"]) == ["US", "US", "KR", "KR"]
    assert list(written["naive"]) == ["139.0", "139.0", "127.0", "127.0"]


def test_a_bundle_of_an_unnamed_year_column_forecasts_from_its_own_file(tmp_path: Path):
    """sktime's Lynx.csv (",0" over "1821,269"): the years, read as the column `year` at training, are found
    the same way when the bundle reads the file again."""
    path = tmp_path / "lynx.csv"
    path.write_text(",0\n" + "".join(f"{1821 + k},{269 + 7 * k}\n" for k in range(40)))
    model, output = tmp_path / "model", tmp_path / "forecast.csv"
    assert _cli(["train", "--csv", path, "--model", "naive", "--horizon", 3, "--out", model]) == 0
    assert _cli(["predict", "--model", model, "--csv", path, "--output", output]) == 0
    written = pd.read_csv(output, dtype=str)
    assert list(written.columns) == ["year", "0"] and list(written["year"]) == ["1861", "1862", "1863"]


@pytest.mark.parametrize(
    ("columns", "index", "weeks"),
    [
        (["Year", "Quarter"], pd.date_range("2019-01-01", periods=9, freq="QS"), None),
        (["year", "month"], pd.date_range("2019-06-01", periods=14, freq="MS"), None),
        (["YEAR", "WEEK"], pd.date_range("2020-11-30", periods=12, freq="W-MON"), "iso"),  # ISO 2020 has W53
        (["YEAR", "WEEK"], pd.date_range("2014-11-30", periods=12, freq="W-SUN"), "mmwr"),  # MMWR 2014 too
        (["year", "doy"], pd.date_range("2020-12-25", periods=12, freq="D"), None),  # 2020 has 366 days
        (["year", "month", "day", "hour"], pd.date_range("2021-02-28 20:00", periods=8, freq="h"), None),
    ],
)
def test_date_parts_read_back_as_the_dates_they_were_written_from(columns, index, weeks):
    """`parts_index` writes dates in a file's part columns; the reader's `dates_from_parts` (the oracle)
    reads the same dates back from them, across ISO's and MMWR's weeks 53 and a leap year's day 366."""
    from forecaster.data.dateparts import dates_from_parts, parts_index, written_as_parts

    parts = parts_index(index, columns, weeks).to_frame(index=False)
    read, counted = dates_from_parts(parts, columns, "parts.csv", [], weeks)
    assert (read == index).all() and written_as_parts(parts, columns, index, weeks) == tuple(columns)
    assert ("WEEK" not in parts or 53 in parts["WEEK"].tolist()) and counted == weeks


@pytest.mark.filterwarnings("ignore:.*read weeks as epidemiological")
def test_predict_writes_the_files_date_part_columns(tmp_path: Path):
    """The CDC's YEAR, WEEK were forecast as one date column (2015-01-04): a file whose rows hold their dates
    in part columns has its forecast written in them; months written by name keep the forecast's dates."""
    weeks = [(2014, week) for week in range(1, 54)] + [(2015, week) for week in range(1, 28)]  # MMWR 2014: 53
    rows = pd.DataFrame(weeks, columns=["YEAR", "WEEK"]).assign(ILI=np.arange(80.0))
    named = pd.DataFrame({"Jahr": np.repeat(np.arange(2010, 2016), 12), "Monat": ["Januar", "Februar", "März",
                          "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November",
                          "Dezember"] * 6, "Umsatz": np.arange(72.0)})  # fmt: skip
    expected = {"weekly": ["YEAR,WEEK,ILI", "2015,28,79.0", "2015,29,79.0"],
                "named": ["date,Umsatz", "2016-01-01,71.0", "2016-02-01,71.0"]}
    for name, frame in (("weekly", rows), ("named", named)):
        path, model, output = (tmp_path / f"{name}{suffix}" for suffix in (".csv", "-model", "-out.csv"))
        frame.to_csv(path, index=False)
        assert _cli(["train", "--csv", path, "--model", "naive", "--horizon", 2, "--out", model]) == 0
        assert _cli(["predict", "--model", model, "--csv", path, "--output", output]) == 0
        assert output.read_text().splitlines() == expected[name]


@pytest.mark.parametrize(("column", "hours", "first"), [("Hour", range(24), "2023-03-06 00:00:00"),
                                                        ("HE", range(1, 25), "2023-03-06 01:00:00")])
def test_dates_completed_by_an_hour_column_are_forecast_as_hours_not_one_day_label(tmp_path, column, hours,
                                                                                   first):
    """A date beside an hour column: each forecast step was written as the day's label (`03/06/2023`
    three times), and after hours ending as the day before, a style of a literal day (h100 F1)."""
    days = np.repeat(pd.date_range("2023-03-01", periods=5).strftime("%m/%d/%Y"), 24)
    path = tmp_path / "hourly.csv"
    pd.DataFrame({"Date": days, column: np.tile(list(hours), 5), "load": np.arange(120.0)}).to_csv(
        path, index=False
    )
    with pytest.warns(DataQualityWarning, match=f"read column '{column}' as the hour"):
        series = read_csv(path)
    assert series.date_style is None
    ahead = pd.date_range(series.index[-1], periods=4, freq="h")[1:]
    assert list(write_labels(ahead, series.date_style).astype(str))[0] == first

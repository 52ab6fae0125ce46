"""Year and week columns: ISO weeks (Monday to Sunday) or the epidemiological weeks the CDC publishes its
FluView counts in (MMWR weeks, Sunday to Saturday), told apart by the weeks the file holds and kept in the
bundle so that a model's recent rows are read on its own grid."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from forecaster.cli import main
from forecaster.data import DataQualityWarning, read_csv
from forecaster.errors import DataError

# The first day of MMWR week 1, as the CDC's MMWR week tables give it (2014, 2020 and 2025 have 53 weeks).
MMWR_WEEK_ONE = {2014: "2013-12-29", 2015: "2015-01-04", 2016: "2016-01-03", 2017: "2017-01-01",
                 2018: "2017-12-31", 2019: "2018-12-30", 2020: "2019-12-29", 2021: "2021-01-03",
                 2022: "2022-01-02", 2023: "2023-01-01", 2024: "2023-12-31", 2025: "2024-12-29",
                 2026: "2026-01-04"}  # fmt: skip


def _mmwr_weeks(first: int, last: int) -> list[tuple[int, int, pd.Timestamp]]:
    """(year, week, Sunday) of every MMWR week from `first` to `last`, from the table above."""
    weeks = []
    for year in range(first, last + 1):
        start, end = pd.Timestamp(MMWR_WEEK_ONE[year]), pd.Timestamp(MMWR_WEEK_ONE[year + 1])
        weeks += [(year, k + 1, start + pd.Timedelta(weeks=k)) for k in range((end - start).days // 7)]
    return weeks


def _fluview(path, weeks: list[tuple[int, int, pd.Timestamp]]) -> None:
    """ILINet's national file: a title line, region columns, YEAR and WEEK, counts and 'X' where not kept."""
    rows = [("National", "X", year, week, round(2 + np.sin(k / 8), 5), 1000 + k, "X")
            for k, (year, week, _) in enumerate(weeks)]  # fmt: skip
    table = pd.DataFrame(rows, columns=["REGION TYPE", "REGION", "YEAR", "WEEK", "% WEIGHTED ILI", "ILITOTAL",
                                        "AGE 25-64"])  # fmt: skip
    path.write_text("PERCENTAGE OF VISITS FOR INFLUENZA-LIKE-ILLNESS REPORTED BY ILINET\n"
                    + table.to_csv(index=False))  # fmt: skip


def _read(path, **options):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        series = read_csv(path, **options)
    return series, " ".join(str(item.message) for item in said)


def test_fluview_weeks_with_a_week_53_that_iso_lacks_are_read_as_mmwr_weeks(tmp_path):
    """2014 has an MMWR week 53 and no ISO one: refused as 'year 2014 has no week 53' before."""
    weeks = _mmwr_weeks(2014, 2016)[39:]
    _fluview(tmp_path / "ilinet.csv", weeks)
    series, said = _read(tmp_path / "ilinet.csv")
    assert list(series.index) == [sunday for _, _, sunday in weeks] and series.freq == "W-SUN"
    assert series.columns == ["% WEIGHTED ILI", "ILITOTAL"] and series.options.weeks == "mmwr"
    assert "as epidemiological (MMWR) weeks, Sunday to Saturday: year 2014 has a week 53 only so" in said
    with pytest.raises(DataError, match=r"line 15: year 2014 has no week 53 as iso counts weeks; expected a "
                       r"real week \(weeks iso/mmwr\)"):  # fmt: skip
        read_csv(tmp_path / "ilinet.csv", weeks="iso")


def test_fluview_weeks_from_2015_are_not_given_the_iso_week_53_they_lack(tmp_path):
    """ISO's 2015 has a week 53; MMWR's has not. Read as ISO weeks, the rows missed a week, which was filled
    in (a week invented between 2015's week 52 and 2016's week 1)."""
    weeks = _mmwr_weeks(2015, 2016)
    _fluview(tmp_path / "ilinet.csv", weeks)
    series, said = _read(tmp_path / "ilinet.csv")
    assert len(series) == len(weeks) and series.freq == "W-SUN"
    np.testing.assert_array_equal(series.frame["ILITOTAL"].to_numpy(), 1000.0 + np.arange(len(weeks)))
    assert "read as ISO weeks, 1 week(s) would be missing" in said and "filled" not in said


def test_iso_weeks_stay_iso_weeks(tmp_path):
    """A year-and-week file that both counts fit alike (with the week 53 of 2020 both have): ISO's, and the
    note says that MMWR's fit as well (FluView's weeks, MMWR's, were so read a day early, unsaid)."""
    stamps = pd.date_range("2019-12-30", periods=60, freq="W-MON")
    iso = stamps.isocalendar()
    table = pd.DataFrame({"year": iso["year"].to_numpy(), "week": iso["week"].to_numpy(),
                          "y": np.arange(60.0)})  # fmt: skip
    table.to_csv(tmp_path / "weekly.csv", index=False)
    series, said = _read(tmp_path / "weekly.csv")
    assert list(series.index) == list(stamps) and series.options.weeks == "iso"
    assert "read weeks as ISO weeks, Monday to Sunday; the CDC's epidemiological (MMWR) weeks" in said


def test_a_model_of_mmwr_weeks_forecasts_recent_rows_on_its_sundays(tmp_path, capsys):
    """Recent rows of 2016 alone fit either count; the bundle's weeks read them as the training rows were
    (read as ISO weeks they were Mondays, off the model's W-SUN grid). Asked to count them as ISO weeks,
    predict says the model's count, not that a Monday is off its grid."""
    weeks = _mmwr_weeks(2014, 2016)[39:]
    _fluview(tmp_path / "ilinet.csv", weeks)
    model = tmp_path / "model"
    train = ["train", "--csv", str(tmp_path / "ilinet.csv"), "--targets", "ILITOTAL", "--model", "naive",
             "--horizon", "4", "--input-size", "8", "--no-progress", "--out", str(model)]  # fmt: skip
    assert main(train) == 0
    _fluview(tmp_path / "recent.csv", weeks[-10:])
    recent, out = tmp_path / "recent.csv", tmp_path / "forecast.csv"
    assert main(["predict", "--model", str(model), "--csv", str(recent), "--output", str(out)]) == 0
    written = pd.read_csv(out)  # in the file's YEAR and WEEK, the MMWR weeks after the last (the table's)
    later = _mmwr_weeks(2014, 2017)
    after = later.index(weeks[-1])
    expected = [week[:2] for week in later[after + 1 : after + 5]]
    assert list(zip(written["YEAR"], written["WEEK"], strict=True)) == expected
    assert written["ILITOTAL"].tolist() == [1009.0] * 4  # the last of the recent rows' 1000 + k
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--csv", str(recent), "--weeks", "iso"]) == 2
    assert ("--weeks iso counts weeks otherwise than the mmwr weeks model 'model' was trained on, and dates "
            "of other weekdays are not on its time grid; expected no --weeks, or --weeks mmwr"
            ) in capsys.readouterr().err  # fmt: skip


@pytest.mark.parametrize("weeks", [12, 60])
def test_a_column_named_like_weeks_reads_year_dash_number_as_iso_weeks(tmp_path, weeks):
    """The ECDC's `year_week` of 2021-01 ... 2021-12 was read as the months of 2021 (a monthly forecast of
    weekly counts), and past week 12 the file was refused; its constant population is no series."""
    mondays = pd.date_range("2020-12-28", periods=weeks, freq="W-MON")  # ISO week 53 of 2020, then 2021's
    iso = mondays.isocalendar()
    labels = [f"{year}-{week:02d}" for year, week in zip(iso["year"], iso["week"], strict=True)]
    rows = [f"Austria,8901064,{1000 + k},{label}" for k, label in enumerate(labels)]
    path = tmp_path / "ecdc.csv"
    path.write_text("country,population,weekly_count,year_week\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        series = read_csv(path)
    assert series.freq == "W-MON" and list(series.index) == list(mondays)
    assert series.columns == ["weekly_count"] and series.date_col == "year_week"


def test_year_and_week_numbers_in_one_column_named_like_weeks_are_weeks(tmp_path):
    """Delphi's and other epidemiological exports write `epiweek` 202101 ... 202152: read as months (YYYYMM)
    they stopped at week 12 and the file had no date column; a column named like weeks holds weeks."""
    weeks = [year * 100 + week for year in (2021, 2022) for week in range(1, 53)]
    path = tmp_path / "weeks.csv"
    path.write_text("week,cases\n" + "".join(f"{code},{k % 7 + 3}\n" for k, code in enumerate(weeks)))
    series = read_csv(path)
    assert series.freq == "W-MON" and len(series.index) == 104
    assert series.index[0] == pd.Timestamp("2021-01-04") and series.index[-1] == pd.Timestamp("2022-12-26")
    # an epiweek counts the CDC's weeks, Sunday to Saturday, whose 2014 has a week 53: its file was refused,
    # every value "not timestamps" (h42); ISO's 2014 has none, refused naming its line
    weeks = [year * 100 + week for year in (2013, 2014, 2015) for week in range(1, 53 + (year == 2014))]
    path.write_text("epiweek,cases\n" + "".join(f"{code},{k % 7 + 3}\n" for k, code in enumerate(weeks)))
    with pytest.warns(DataQualityWarning, match="read column 'epiweek' as epidemiological \\(MMWR\\) weeks"):
        series = read_csv(path)
    assert series.freq == "W-SUN" and len(series.index) == 157
    assert series.index[0] == pd.Timestamp("2012-12-30") and series.index[104] == pd.Timestamp("2014-12-28")
    assert series.index[105] == pd.Timestamp("2015-01-04")  # 2015's week 1 after 2014's week 53
    refusal = r": line 106: year 2014 has no week 53 as iso counts weeks; expected a real week \(weeks iso"
    with pytest.raises(DataError, match=refusal):  # --weeks holds, as for year and week columns
        read_csv(path, weeks="iso")
    path.write_text(path.read_text().replace("epiweek", "week"))
    with pytest.raises(DataError, match=refusal):
        read_csv(path)
    months = tmp_path / "months.csv"  # YYYYMM under another name: months still
    months.write_text("period,cases\n" + "".join(f"{2021 * 100 + m},{m}\n" for m in range(1, 13)))
    assert read_csv(months).freq == "MS"


def test_weeks_that_move_to_another_weekday_are_refused_saying_where(tmp_path):
    """A publisher's weekly rows on Mondays to 2012, on Fridays from 2013: every step is a week but one of 11
    days, and the refusal said line 212 was "off the W-MON grid" of the first, and to fill the gaps (h42);
    one step changes grid, not every one after it (h66: "130 irregular step(s)")."""
    weeks = pd.date_range("2008-12-29", "2012-12-31", freq="W-MON").append(
        pd.date_range("2013-01-11", periods=30, freq="W-FRI"))
    path = tmp_path / "weekday_shift.csv"
    rows = "".join(f"{day.date()},{9 + k % 5}\n" for k, day in enumerate(weeks))
    path.write_text("week_of,barrels\n" + rows)
    line = 2 + int(np.flatnonzero(weeks == pd.Timestamp("2013-01-11"))[0])
    refusal = (rf": the rows change grid at line {line} \(2013-01-11 00:00:00\): W-MON before it, W-FRI from "
               r"it on \(1 irregular step\(s\)\); expected a constant frequency \(fill the gaps or resample "
               r"the rows to one grid\)$")
    with pytest.raises(DataError, match=refusal):
        read_csv(path)


@pytest.mark.parametrize("id_col", [None, "store"])
def test_a_long_tables_series_on_different_weekdays_are_refused_naming_them(tmp_path, id_col):
    """Stores A and C dated on Sundays, B on Mondays, each a clean weekly series: refused as "irregular time
    steps" with "a 24h step" between dates of two stores, on lines that hold other dates (h82 F17)."""
    rows = [f"{store},{day.date()},{100 + k + 1000 * 'ABC'.index(store)}" for store, anchor, start in
            (("A", "W-SUN", "2020-01-05"), ("B", "W-MON", "2020-01-06"), ("C", "W-SUN", "2020-01-05"))
            for k, day in enumerate(pd.date_range(start, periods=120, freq=anchor))]  # fmt: skip
    path = tmp_path / "panel.csv"
    path.write_text("store,week,sales\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError) as caught:
        read_csv(path, id_col=id_col)
    assert str(caught.value) == (
        f"{path}: the series dated by column 'week' are weekly on different weekdays ('A', 'C' on Sundays; "
        "'B' on Mondays); expected one weekday for every series (date each week by its Monday, say)"
    )


def test_a_column_of_mmwr_week_numbers_beside_the_dates_restates_them(tmp_path):
    """Sundays with their MMWR week numbers beside them (2015's week 1 begins on 4 January, a Sunday) are
    the dates written again, no series: MMWR weeks were counted as the ISO week of the Monday after, a week
    late where 4 January is a Sunday, and the column was forecast."""
    weeks = _mmwr_weeks(2014, 2015)[48:70]
    table = pd.DataFrame({"date": [sunday for _, _, sunday in weeks], "week": [week for _, week, _ in weeks],
                          "cases": np.arange(22.0)})  # fmt: skip
    table.to_csv(tmp_path / "epi.csv", index=False)
    series, said = _read(tmp_path / "epi.csv")
    assert series.columns == ["cases"] and "skipped column(s) 'week': parts or codes of the dates" in said

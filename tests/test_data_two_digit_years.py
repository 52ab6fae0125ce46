"""Dates a hostile tester found misread (h75): months with a two-digit year other than "Jan-22" dated in the
year 1, German MM.YY months read as 2000, 2100 and 2200, YYYYQ quarter codes read as Excel's days, a week
that does not exist, and a date column with one cell cut short not found."""

from __future__ import annotations

import pandas as pd
import pytest

from forecaster.data import read_csv
from forecaster.errors import DataError

_MONTHS = pd.period_range("2020-01", periods=36, freq="M")
_VALUES = [100.0 + 1.5 * k for k in range(36)]


def _write(tmp_path, header: str, labels: list[str], values: list[float], sep: str = ",") -> str:
    path = tmp_path / "months.csv"
    rows = "".join(f"{label}{sep}{value}\n" for label, value in zip(labels, values, strict=True))
    path.write_text(header + "\n" + rows)
    return str(path)


@pytest.mark.parametrize(
    "form",
    ["%b %y", "%m/%y", "%b '%y", "%B %y", "%b%y", "%y-%b"],  # Jan 20, 01/20, Jan '20, January 20, 20-Jan
)
def test_months_with_a_two_digit_year_are_months_of_that_year(tmp_path, form) -> None:
    """(h75 F2) read as day 20 of January of the year 1 (forecasts dated 0002-01-01), or refused as
    unsorted."""
    labels = [month.strftime(form) for month in _MONTHS]
    series = read_csv(_write(tmp_path, "month,sales", labels, _VALUES))
    assert list(series.index) == list(_MONTHS.to_timestamp())
    assert series.freq == "MS" and series.frame["sales"].tolist() == _VALUES


def test_month_names_of_other_languages_with_a_two_digit_year_are_months(tmp_path) -> None:
    """(h75 F2) 'Mär 22', 'janv. 22' were refused as no date column, where 'Mär 2022' reads."""
    german = ["Jan 22", "Feb 22", "Mär 22", "Apr 22"]
    series = read_csv(_write(tmp_path, "Monat,Umsatz", german, _VALUES[:4]))
    assert series.index[2] == pd.Timestamp("2022-03-01") and series.frame["Umsatz"].tolist() == _VALUES[:4]
    french = ["janv. 22", "févr. 22", "mars 22", "avr. 22"]
    series = read_csv(_write(tmp_path, "mois,ventes", french, _VALUES[:4]))
    assert series.index[0] == pd.Timestamp("2022-01-01") and series.index[3] == pd.Timestamp("2022-04-01")


def test_days_without_their_year_are_refused_and_those_with_it_still_read(tmp_path) -> None:
    """(h75 F2) days of January without a year are no months of 2001 ... 2007, nor dates of the year 1;
    Excel's 'Jan-22', day-month-year with two digits and daily dates with their year keep their reading."""
    for first in ("Jan ", "01/"):
        labels = [f"{first}{day:02d}" for day in range(1, 8)]
        path = _write(tmp_path, "date,sales", labels, _VALUES[:7])
        said = ("7 value.s. read as dates before the year 1000, none with a four-digit year: "
                f"line 2 '{first}01'")
        with pytest.raises(DataError, match=said):
            read_csv(path)
    assert read_csv(_write(tmp_path, "month,x", ["Jan-22", "Feb-22", "Mar-22"], [1, 2, 3])).index[0] == (
        pd.Timestamp("2022-01-01"))
    days = ["20-Dec-21", "21-Dec-21", "22-Dec-21", "23-Dec-21"]
    assert read_csv(_write(tmp_path, "date,x", days, [1, 2, 3, 4])).index[0] == pd.Timestamp("2021-12-20")
    days = ['"Jan 22, 2022"', '"Jan 23, 2022"', '"Jan 24, 2022"', '"Jan 25, 2022"']
    assert read_csv(_write(tmp_path, "date,x", days, [1, 2, 3, 4])).index[-1] == pd.Timestamp("2022-01-25")


@pytest.mark.parametrize("sep", [",", ";"])
def test_german_mm_yy_months_are_months_of_two_digit_years(tmp_path, sep) -> None:
    """(h75 F3) '01.20' ... '12.22' were the months of 2000, 2100 and 2200, refused as 2376 missing steps."""
    labels = [f"{month.month:02d}.{month.year % 100:02d}" for month in _MONTHS]
    series = read_csv(_write(tmp_path, f"Monat{sep}Umsatz", labels, _VALUES, sep=sep))
    assert list(series.index) == list(_MONTHS.to_timestamp())
    assert series.frame["Umsatz"].tolist() == _VALUES


def test_many_more_missing_steps_than_rows_do_not_advise_filling(tmp_path) -> None:
    """(h75 F3) YYMM numbers 2001 ... 2212 read as years: the refusal advised --fill-missing, which filled
    176 years; it says the dates are likely misread instead."""
    labels = [f"{month.year % 100:02d}{month.month:02d}" for month in _MONTHS]
    path = _write(tmp_path, "period,value", labels, _VALUES)
    with pytest.raises(DataError, match=r"176 missing steps among 36 rows point at dates read in a form they "
                                        r"are not written in \(the first row read as 2001-01-01\)") as caught:
        read_csv(path)
    assert "--fill-missing" not in str(caught.value)


def test_yyyyq_quarter_codes_alone_are_quarters(tmp_path) -> None:
    """(h75 F22) 20151 ... 20234 were read as Excel's days of 1955 and refused as irregular."""
    quarters = pd.period_range("2015Q1", periods=36, freq="Q")
    labels = [f"{quarter.year}{quarter.quarter}" for quarter in quarters]
    series = read_csv(_write(tmp_path, "period,value", labels, _VALUES))
    assert list(series.index) == list(quarters.to_timestamp())
    assert series.freq == "QS-JAN" and series.frame["value"].tolist() == _VALUES


def test_a_week_53_of_a_year_without_one_is_named_so(tmp_path) -> None:
    """(h75 F14) 2021-W53 was 'not a week label like the others'."""
    weeks = [f"2021-W{week:02d}" for week in range(40, 53)] + ["2021-W53"]
    path = _write(tmp_path, "week,cases", weeks, _VALUES[:14])
    with pytest.raises(DataError, match=r"line 15 '2021-W53' \(2021 has no ISO week 53\)"):
        read_csv(path)


def test_one_date_cut_short_in_a_month_column_is_named(tmp_path) -> None:
    """(h75 F19) a last line cut to '2022-12-0' made the column 'month' vanish: 'no date column found'."""
    months = pd.period_range("2013-01", periods=119, freq="M")
    path = tmp_path / "cut.csv"
    rows = "".join(f"{month},{k}.5\n" for k, month in enumerate(months))
    path.write_text("month,sales\n" + rows + "2022-12-0\n")
    said = r"date column 'month' has 1 value\(s\) that are not timestamps: line 121 '2022-12-0'"
    with pytest.raises(DataError, match=said):
        read_csv(str(path))


def test_the_nbs_january_and_february_in_one_row_are_named_in_a_column_of_any_name(tmp_path) -> None:
    """(h75 F12) China's NBS prints January and February as one row, '2016年1-2月', before '2016年3月': the
    column '指标' (indicator) was not found, 'no date column found', until named with --date-col."""
    months = ["1-2月", *(f"{m}月" for m in range(3, 13))]
    labels = [f"{year}年{month}" for year in range(2016, 2024) for month in months]
    path = _write(tmp_path, "指标,工业增加值增长(%)", labels, [6.0 + k / 100 for k in range(len(labels))])
    said = r"date column '指标' has 8 value\(s\) that are not month labels like the others: line 2 '2016年1-2"
    with pytest.raises(DataError, match=said):
        read_csv(path)

"""Long panels of several measurements per series (a quarterly macro panel of countries' growth and
unemployment): each value column a variable of every series, trained as series of their own and forecast
back with a column per variable, from the command line, the API and the service alike."""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from forecaster.api import Forecaster
from forecaster.cli import main
from forecaster.data import DataQualityWarning, read_csv, read_frame
from forecaster.errors import DataError

COUNTRIES = {"DE": 1.0, "FR": 2.0, "IT": 3.0}
QUARTERS = [f"{2010 + k // 4}-Q{k % 4 + 1}" for k in range(40)]


def _panel(path):
    """country, quarter, growth, unemployment: growth of country c in quarter k is c + k / 100, unemployment
    10 c + k % 4 (a season)."""
    rows = [(country, quarter, base + k / 100, 10 * base + k % 4) for country, base in COUNTRIES.items()
            for k, quarter in enumerate(QUARTERS)]  # fmt: skip
    pd.DataFrame(rows, columns=["country", "quarter", "growth", "unemployment"]).to_csv(path, index=False)
    return path


def test_a_macro_panel_forecasts_each_variable_of_each_country_in_the_files_shape(tmp_path):
    path, model, out = _panel(tmp_path / "macro.csv"), tmp_path / "model", tmp_path / "forecast.csv"
    train = ["train", "--csv", str(path), "--model", "seasonal_naive", "--horizon", "4", "--input-size", "8",
             "--no-progress", "--out", str(model)]  # fmt: skip
    assert main(train) == 0
    predict = ["predict", "--model", str(model), "--csv", str(path), "--level", "80", "--output", str(out)]
    assert main(predict) == 0
    written = pd.read_csv(out)
    assert list(written.columns) == ["country", "quarter", "growth", "growth-lo-80", "growth-hi-80",
                                     "unemployment", "unemployment-lo-80", "unemployment-hi-80"]  # fmt: skip
    assert written["country"].tolist() == [country for country in COUNTRIES for _ in range(4)]
    assert written["quarter"].tolist()[:4] == ["2020-Q1", "2020-Q2", "2020-Q3", "2020-Q4"]
    last_year = np.arange(36, 40)  # seasonal naive repeats the last four quarters
    expected = {(country, "growth"): base + last_year / 100 for country, base in COUNTRIES.items()}
    expected |= {(country, "unemployment"): 10 * base + last_year % 4 for country, base in COUNTRIES.items()}
    for (country, variable), values in expected.items():
        rows = written[written["country"] == country]
        np.testing.assert_allclose(rows[variable], values)
        low, high = rows[f"{variable}-lo-80"], rows[f"{variable}-hi-80"]
        assert (low <= rows[variable]).all() and (rows[variable] <= high).all()
    api = Forecaster.load(model).predict(pd.read_csv(path))
    np.testing.assert_allclose(api["unemployment"], written["unemployment"])


def test_the_service_answers_a_macro_panel_with_a_column_per_variable(tmp_path):
    from test_service import serving

    path = _panel(tmp_path / "macro.csv")
    train = ["train", "--csv", str(path), "--model", "naive", "--horizon", "2", "--input-size", "4",
             "--no-progress", "--out", str(tmp_path / "models" / "macro")]  # fmt: skip
    assert main(train) == 0
    with serving(tmp_path / "models") as client:
        rows = pd.read_csv(path).to_dict("records")
        records = client.post("/v1/models/macro/forecast", json={"data": rows})
        upload = client.post("/v1/models/macro/forecast.csv", files={"file": ("m.csv", path.read_bytes())})
    assert records.status_code == 200 and upload.status_code == 200, (records.text, upload.text)
    assert records.json()["forecast"][0] == {"country": "DE", "quarter": "2020-Q1", "growth": 1.39,
                                             "unemployment": 13.0}  # fmt: skip
    answered = pd.read_csv(io.StringIO(upload.text))
    assert list(answered.columns) == ["country", "quarter", "growth", "unemployment"] and len(answered) == 6


def test_value_columns_are_named_or_refused_in_one_line(tmp_path):
    """--target-col names several by commas; a value column named with the joining '/' is refused."""
    path = _panel(tmp_path / "macro.csv")
    table = pd.read_csv(path).assign(extra=1.0)
    table.to_csv(path, index=False)
    series = read_csv(path, id_col="country", target_col="unemployment,growth")
    assert series.columns[:2] == ["DE/unemployment", "DE/growth"] and len(series.columns) == 6
    table.rename(columns={"growth": "gdp/capita"}).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"macro.csv: value column 'gdp/capita' holds '/', which joins a "
                       "series and its variable; expected value column names without it"):  # fmt: skip
        read_csv(path, id_col="country", target_col="gdp/capita,unemployment")
    with pytest.raises(DataError, match=r"value column\(s\) 'jobs' not found \(target_col "
                       r"'jobs,unemployment' names several by commas\); columns are 'country', "):
        read_csv(path, id_col="country", target_col="jobs,unemployment")


def test_a_panel_dated_by_year_and_quarter_columns_is_a_long_table(tmp_path):
    """country, year, quarter, gdp: the year and quarter repeat for each country. Read as a wide table the
    dates were refused as unsorted; with --id-col country the quarter became part of the key."""
    rows = [(country, 2010 + k // 4, k % 4 + 1, base + k / 10) for country, base in COUNTRIES.items()
            for k in range(40)]  # fmt: skip
    path = tmp_path / "ycq.csv"
    pd.DataFrame(rows, columns=["country", "year", "quarter", "gdp"]).to_csv(path, index=False)
    for options in ({}, {"id_col": "country"}, {"id_col": "country", "date_from": ["year", "quarter"]}):
        series = read_csv(path, **options)
        assert series.columns == list(COUNTRIES) and series.freq == "QS-JAN" and len(series) == 40
        assert series.index[5] == pd.Timestamp("2011-04-01") and series.frame["FR"].iloc[5] == 2.5
        assert series.options.date_from == ["year", "quarter"] and series.options.id_col == "country"
    model, out = tmp_path / "model", tmp_path / "forecast.csv"
    train = ["train", "--csv", str(path), "--model", "naive", "--horizon", "2", "--input-size", "4",
             "--no-progress", "--out", str(model)]  # fmt: skip
    assert main(train) == 0
    assert main(["predict", "--model", str(model), "--csv", str(path), "--output", str(out)]) == 0
    written = pd.read_csv(out)
    assert list(written.columns) == ["country", "year+quarter", "naive"]
    assert written.iloc[:2].values.tolist() == [["DE", "2020-Q1", 4.9], ["DE", "2020-Q2", 4.9]]


def test_a_panel_with_a_row_given_twice_is_refused_naming_its_lines_not_as_unsorted(tmp_path):
    """A quarterly panel with one (country, quarter) given twice with two values: the repeat hid the key, and
    the file was refused as one unsorted series. Found as a panel, the repeat is named by its lines; so too
    where the series are told apart by two columns."""
    path = tmp_path / "twice.csv"
    twice = (["A"], "DE", "column 'country'"), (["A", "B"], "DE/A", "columns 'country' and 'sector'")
    for sectors, name, keyed in twice:
        rows = [(country, 2010 + k // 4, k % 4 + 1, sector, base + k / 10)
                for country, base in COUNTRIES.items() for sector in sectors for k in range(40)]  # fmt: skip
        rows.insert(10, (*rows[9][:4], 99.0))
        pd.DataFrame(rows, columns=["country", "year", "quarter", "sector", "gdp"]).to_csv(path, index=False)
        said = f"series '{name}' has time '2012-Q2' more than once (at line 11, line 12)"
        with pytest.raises(DataError, match=f"{re.escape(said)}.*keyed by {keyed}"):
            read_csv(path)


def test_a_value_column_named_with_a_comma_reads_alone_and_is_named_among_several(tmp_path):
    """One value column 'unemp,rate' is that column (it was split into two missing ones); beside another
    value column the joining comma is refused in one line."""
    rows = [(country, quarter, base + k / 10) for country, base in COUNTRIES.items()
            for k, quarter in enumerate(QUARTERS)]  # fmt: skip
    path = tmp_path / "rates.csv"
    pd.DataFrame(rows, columns=["country", "quarter", "unemp,rate"]).to_csv(path, index=False)
    model, out = tmp_path / "model", tmp_path / "forecast.csv"
    train = ["train", "--csv", str(path), "--model", "naive", "--horizon", "2", "--input-size", "4",
             "--no-progress", "--out", str(model)]  # fmt: skip
    assert main(train) == 0
    assert main(["predict", "--model", str(model), "--csv", str(path), "--output", str(out)]) == 0
    assert pd.read_csv(out).iloc[0].tolist() == ["DE", "2020-Q1", 4.9]
    table = pd.read_csv(path).assign(jobs=lambda frame: frame["unemp,rate"] * 2)
    table.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"rates.csv: value column 'unemp,rate' holds ',', which joins "
                       "several value columns; expected names without commas"):  # fmt: skip
        read_csv(path)


def test_a_value_column_with_text_among_its_numbers_is_named_as_left_out(tmp_path):
    """'5,1' among '5.6' and 'n/a' keeps a column text: it was left out of the panel's variables unsaid."""
    rows = [(country, quarter, base + k / 10, "5,1" if (country, k) == ("FR", 5) else f"{5 + k / 10:.1f}")
            for country, base in COUNTRIES.items() for k, quarter in enumerate(QUARTERS)]  # fmt: skip
    table = pd.DataFrame(rows, columns=["country", "quarter", "growth", "unemployment"])
    table.to_csv(tmp_path / "p.csv", index=False)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        series = read_csv(tmp_path / "p.csv")
    assert series.columns == list(COUNTRIES)
    assert "(left out column 'unemployment': text among its numbers, line 47 '5,1')" in str(said[-1].message)


def test_a_number_describing_each_series_is_no_variable_of_a_panel_found_alone(tmp_path):
    """ECDC's weekly long file: country, week, population, cases. Found without --id-col, the population
    (one number per country, different between countries) was forecast as a variable of every series
    ('AT/population'); given --id-col, it was left out: each numeric column that varies within a series is a
    value, found alone or named, and the population is said as left out."""
    weeks = pd.date_range("2021-01-04", periods=30, freq="W-MON")
    cases = np.random.default_rng(3).poisson(100, 60)
    populations = np.repeat([8_901_064, 11_522_440], 30)
    table = pd.DataFrame({"country": np.repeat(["AT", "BE"], 30), "date": np.tile(weeks, 2),
                          "population": populations, "cases": cases})  # fmt: skip
    table.to_csv(tmp_path / "weekly.csv", index=False)
    for options in ({}, {"id_col": "country"}):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", DataQualityWarning)
            series = read_csv(tmp_path / "weekly.csv", **options)
        assert series.columns == ["AT", "BE"] and series.freq == "W-MON"
        np.testing.assert_array_equal(series.frame["BE"], cases[30:])
        assert options or "(left out numeric column(s) 'population'" in str(said[-1].message)


@pytest.mark.parametrize("frame", [False, True])
def test_autogluons_target_beside_item_id_and_timestamp_is_the_value_column(tmp_path, frame):
    """AutoGluon's long format names its values `target`: with a covariate beside it both were forecast as
    variables of every item (h128 O5). Only beside item_id and timestamp: elsewhere a `target` may be a
    sales goal beside the sales, and both stay variables."""
    rng = np.random.default_rng(0)
    days = list(pd.date_range("2020-01-01", periods=30, freq="D")) * 2
    table = pd.DataFrame({"item_id": ["A"] * 30 + ["B"] * 30, "timestamp": days,
                          "target": rng.normal(10, 2, 60).round(2), "price": rng.normal(5, 1, 60).round(2)})
    table.to_csv(tmp_path / "ag.csv", index=False)
    with pytest.warns(DataQualityWarning, match=r"its values from column 'target' \(left out numeric column"):
        indexed = table.set_index(["item_id", "timestamp"])
        series = read_frame(indexed) if frame else read_csv(tmp_path / "ag.csv")
    assert series.columns == ["A", "B"]
    np.testing.assert_array_equal(series.frame["B"].to_numpy(), table["target"].to_numpy()[30:])
    goals = table.rename(columns={"item_id": "store", "timestamp": "date", "price": "sales"})
    goals.to_csv(tmp_path / "goals.csv", index=False)
    with pytest.warns(DataQualityWarning, match="its values from columns 'target', 'sales', each a variable"):
        assert read_csv(tmp_path / "goals.csv").columns == ["A/target", "A/sales", "B/target", "B/sales"]


def test_autogluons_target_is_a_value_column_even_where_the_date_determines_it(tmp_path):
    """A long table's column the date alone determines (a weekday, a holiday flag) holds no values unless
    named as values: AutoGluon's `target` was not so named there (`named_values` was not asked), and items
    whose values coincide were refused as one series of unsorted times (h143 6)."""
    days = list(pd.date_range("2021-01-01", periods=40, freq="D")) * 2
    values = list(np.round(50 + 10 * np.sin(np.arange(40)), 3)) * 2
    table = pd.DataFrame({"item_id": ["A"] * 40 + ["B"] * 40, "timestamp": days, "target": values})
    table.to_csv(tmp_path / "ag.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        series = read_csv(tmp_path / "ag.csv")
    assert series.columns == ["A", "B"] and series.options.id_col == "item_id"
    np.testing.assert_array_equal(series.frame["B"].to_numpy(), values[40:])

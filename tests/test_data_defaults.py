"""What the reader does with no options: long panels found without --id-col, dates found in any column, and
a few short gaps filled by linear interpolation (more, and any with --fill-missing none, refused)."""

from __future__ import annotations

import shlex
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster.artifacts import load_bundle
from forecaster.cli import main
from forecaster.data import DataQualityWarning, read_csv, read_frame
from forecaster.data.missing import MAX_EDGE_SHARE, MAX_GAP_SHARE, MAX_GAP_STEPS, MAX_MISSING_SHARE
from forecaster.errors import DataError
from forecaster.training.planning import default_input_size, split_for
from forecaster.training.settings import TrainSettings

COUNTRIES = {"US": 5.0, "UK": 7.0, "JP": 3.0}
TINY = shlex.split(
    "--d-model 8 --n-heads 2 --fold 2 --e-layers 1 --left-rank 4 --right-rank 2 --max-epochs 1 --seeds 1 "
    "--accelerator cpu --no-progress"
)


def _panel(quarters: int = 120) -> pd.DataFrame:
    """country, quarter, unemployment: series k of country c is base(c) + k / 10."""
    labels = [f"{1995 + k // 4}-Q{k % 4 + 1}" for k in range(quarters)]
    return pd.DataFrame(
        [(c, label, base + k / 10) for c, base in COUNTRIES.items() for k, label in enumerate(labels)],
        columns=["country", "quarter", "unemployment"],
    )


def _write(tmp_path: Path, frame: pd.DataFrame, name: str = "data.csv") -> Path:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def _read(path_or_frame, **options):
    """The series and the one DataQualityWarning's text ("" without one)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataQualityWarning)
        read = read_frame if isinstance(path_or_frame, pd.DataFrame) else read_csv
        series = read(path_or_frame, **options)
    notes = [str(w.message) for w in caught if issubclass(w.category, DataQualityWarning)]
    assert len(notes) <= 1
    return series, notes[0] if notes else ""


def _refusal(frame: pd.DataFrame, **options) -> str:
    """The one-line DataError reading `frame` raises."""
    with pytest.raises(DataError) as caught:
        read_frame(frame, **options)
    return str(caught.value)


def test_a_long_panel_is_found_without_id_col(tmp_path):
    series, note = _read(_write(tmp_path, _panel()))
    assert "read as a long panel of 3 series ('US', 'UK', 'JP') keyed by column 'country'" in note
    assert series.columns == ["US", "UK", "JP"] and series.freq == "QS-JAN" and len(series) == 120
    assert series.index[0] == pd.Timestamp("1995-01-01") and series.index[-1] == pd.Timestamp("2024-10-01")
    for country, base in COUNTRIES.items():
        np.testing.assert_allclose(series.frame[country], base + np.arange(120) / 10)
    options = series.options
    assert (options.id_col, options.target_col, options.date_col) == ("country", "unemployment", "quarter")
    # the options recorded read the file the same way when given explicitly (as a bundle gives them)
    again = read_csv(tmp_path / "data.csv", id_col="country", target_col="unemployment", date_col="quarter")
    pd.testing.assert_frame_equal(again.frame, series.frame)


def test_a_bundles_targets_on_a_long_panel_name_the_series_they_leave_out(tmp_path):
    """As `predict` reads a file with a series its model was not trained on: a note, not silence."""
    path = _write(tmp_path, _panel())
    options = {"id_col": "country", "target_col": "unemployment", "date_col": "quarter"}
    with pytest.warns(DataQualityWarning, match="left out series 'UK': not among the targets 'US', 'JP'"):
        series = read_csv(path, **options, targets=["US", "JP"])
    assert series.columns == ["US", "JP"]


def test_a_bundles_targets_on_a_wide_table_name_the_series_they_leave_out(tmp_path):
    """A wide table's column of numbers beside the model's was ignored unsaid, where a long table's series is
    named (h75 F20): the same note, from the Python API, predict and the service's records and files alike;
    a covariate the model reads, the dates and a column numbering the rows are no series left out."""
    from test_service import serving

    from forecaster.api import Forecaster

    months = pd.date_range("2015-01-01", periods=60, freq="MS")
    frame = pd.DataFrame({"date": months.strftime("%Y-%m-%d"), "a": 100.0 + np.arange(60) % 7,
                          "b": 50.0 + np.arange(60) % 5, "price": 1.0 + np.arange(60) % 3})  # fmt: skip
    model = tmp_path / "models" / "wide"
    Forecaster("naive", horizon=3, input_size=12).fit(frame, past_covariates=["price"]).save(model)
    sent = frame.tail(24).assign(No=np.arange(1, 25), c=np.arange(24.0))
    note = "left out series 'c': not among the targets 'a', 'b' (a model's: the series it was trained on"
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        forecast = Forecaster.load(model).predict(sent)
        path = _write(tmp_path, sent, "next.csv")
        assert main(["predict", "--model", str(model), "--csv", str(path), "--output", "-"]) == 0
    assert list(forecast.columns) == ["a", "b"]
    notes = [str(warning.message) for warning in said if "left out series" in str(warning.message)]
    assert notes == [f"DataFrame: note: {note}, which leave out those too short to train)",
                     f"{path}: note: {note}, which leave out those too short to train)"]  # fmt: skip
    with serving(tmp_path / "models") as client:
        records = client.post("/v1/models/wide/forecast", json={"data": sent.to_dict(orient="records")})
        upload = client.post("/v1/models/wide/forecast.csv", files={"file": ("next.csv", path.read_text())})
    assert records.status_code == 200 and upload.status_code == 200, (records.text, upload.text)
    assert any(note in said for said in records.json()["notes"])
    assert note in upload.headers["forecaster-notes"]
    chosen = Forecaster("naive", horizon=3, input_size=12).fit(frame, targets=["a"])
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        Forecaster.load(model).predict(frame.tail(24))  # the training columns: nothing left out
        chosen.predict(sent)  # 'b' and 'price', which its training file held beside its target: not new
    notes = [str(warning.message) for warning in said if "left out series" in str(warning.message)]
    assert notes == ["DataFrame: note: left out series 'c': not among the targets 'a' (a model's: the series "
                     "it was trained on, which leave out those too short to train)"]


def test_nixtla_names_pick_the_id_and_y_among_several_numeric_columns():
    panel = _panel(12).rename(columns={"quarter": "ds", "unemployment": "y"})
    panel["unique_id"] = panel.pop("country").map({"US": 1, "UK": 2, "JP": 3})  # numeric ids, named unique_id
    panel["price"] = 1.0
    series, note = _read(panel)
    assert series.columns == ["1", "2", "3"] and series.options.target_col == "y"
    np.testing.assert_allclose(series.frame["2"], 7.0 + np.arange(12) / 10)
    assert "keyed by column 'unique_id'" in note


def test_several_value_columns_are_each_a_variable_of_every_series_unless_one_is_named():
    """A quarterly macro panel of two measurements per country: each is forecast, as each numeric column of a
    wide table is (the panel was refused as "2 columns could hold its values")."""
    panel = _panel(12).assign(gdp=lambda frame: 2 * frame["unemployment"])
    series, note = _read(panel)
    pairs = [f"{country}/{value}" for country in COUNTRIES for value in ("unemployment", "gdp")]
    assert series.columns == pairs
    np.testing.assert_allclose(series.frame["JP/gdp"], 2 * (3.0 + np.arange(12) / 10))
    assert "its values from columns 'unemployment', 'gdp', each a variable of every series" in note
    assert series.options.target_col == "unemployment,gdp" and series.options.id_col == "country"
    series, note = _read(panel, targets=["gdp"])
    np.testing.assert_allclose(series.frame["JP"], 2 * (3.0 + np.arange(12) / 10))
    assert "its values from column 'gdp' (left out numeric column(s) 'unemployment': targets" in note


def test_a_value_column_taken_by_its_name_names_the_numeric_columns_left_out():
    """Grunfeld's firm, year, invest, value, capital: 'value' is taken by name; the others are said."""
    panel = _panel(12).rename(columns={"unemployment": "value"})
    panel["invest"] = 3 * panel["value"]
    series, note = _read(panel)
    assert series.options.target_col == "value"
    assert "its values from column 'value' (left out numeric column(s) 'invest': targets / --targets" in note


def test_misaligned_panel_series_are_independent_unless_multivariate_is_asked():
    """A country published from a later quarter: its series keeps its own span in one model shared by the
    series (said); asked for one multivariate model, the series that differ are named, each."""
    panel = _panel(12).drop(index=[12, 13]).reset_index(drop=True)  # UK starts two quarters late
    series, note = _read(panel)
    assert series.options.channels == "independent" and np.isnan(series.frame["UK"].iloc[[0, 1]]).all()
    assert "read the series as independent, one model shared by series of their own spans (series 'UK" in note
    message = _refusal(panel, channels="multivariate")
    assert "series 'UK' starts 2 time(s) after series 'US'" in message and "--channels independent" in message
    late_and_early = _panel(12).drop(index=[12, 13, 33, 34, 35]).reset_index(drop=True)  # JP ends early too
    both = _refusal(late_and_early, channels="multivariate")
    said = "series 'UK' starts 2 time(s) after series 'US'; series 'JP' ends 3 time(s) before series 'US'"
    assert said + "; the series" in both
    gap = _panel(12).drop(index=[14]).reset_index(drop=True)  # a quarter missing inside UK's span
    assert "series 'UK' lacks 1 of its times; the series" in _refusal(gap, channels="multivariate")
    assert "read as a long panel keyed by column 'country', since dates repeat in column 'quarter'" in message
    assert _read(_panel(12))[0].options.channels == "multivariate"  # aligned: one model of all, as before
    series, _ = _read(panel, channels="independent")
    assert series.columns == ["US", "UK", "JP"] and np.isnan(series.frame["UK"].iloc[[0, 1]]).all()
    np.testing.assert_allclose(series.frame["UK"].iloc[2:], 7.0 + np.arange(2, 12) / 10)


def test_a_long_series_whose_latest_values_are_blank_is_read_as_lacking_those_rows(tmp_path):
    """The SNB's cube of two series writes the newest months of one with empty values: as rows it lacks,
    not rows that every series shares (they were dropped for both, and the other was forecast from before
    its latest two values). A gap inside a series stays a gap of one shared table."""
    panel = _panel(12)
    latest = panel["quarter"].isin(panel["quarter"].unique()[-2:]) & (panel["country"] == "JP")
    blank = panel.assign(unemployment=panel["unemployment"].where(~latest))
    series, note = _read(_write(tmp_path, blank))
    assert series.options.channels == "independent" and len(series) == 12
    assert "(series 'JP' has no value in 2 of its first or last rows; channels='multivariate'" in note
    np.testing.assert_allclose(series.frame["US"].iloc[-2:], 5.0 + np.arange(10, 12) / 10)
    inner = panel.assign(unemployment=panel["unemployment"].where(panel.index != 30))  # JP's 7th quarter
    series, note = _read(_write(tmp_path, inner))
    assert series.options.channels == "multivariate" and "filled 1 empty cell(s)" in note


def test_repeated_dates_without_a_column_of_labels_say_to_give_id_col():
    panel = _panel(12).assign(country=lambda frame: frame["country"].map({"US": 1, "UK": 2, "JP": 3}))
    with pytest.raises(DataError, match=r"not sorted: .* name the column telling them apart with id_col"):
        read_frame(panel)


@pytest.mark.parametrize(
    ("name", "dates", "first"),
    [
        ("obs_date", "2020-01-{:02d}", "2020-01-01"),
        ("observation_date", "2020-01-{:02d}", "2020-01-01"),
        ("Datum", "2020-01-{:02d}", "2020-01-01"),
        ("fecha", "2020-01-{:02d}", "2020-01-01"),
        ("date_time", "2020-01-01 {:02d}:00", "2020-01-01 01:00"),
        ("TIME_PERIOD", "20{:02d}-Q1", "2001-01-01"),
        ("month", "2020M{:02d}", "2020-01-01"),
        ("week", "2020-W{:02d}", "2019-12-30"),
        ("when", "2020-01-{:02d}", "2020-01-01"),  # any text column of timestamps, not only the first
    ],
)
def test_the_date_column_is_found_by_name_or_by_its_values(name, dates, first):
    frame = pd.DataFrame({"value": np.arange(12.0), name: [dates.format(k + 1) for k in range(12)]})
    series, _ = _read(frame)
    assert series.date_col == name and series.index[0] == pd.Timestamp(first)
    assert series.columns == ["value"]


def test_ids_that_dateutil_reads_as_year_one_are_not_dates():
    frame = pd.DataFrame({"sensor": ["T1"] * 10, "reading": np.arange(10.0),
                          "stamp": [f"2020-01-01 {h:02d}:00" for h in range(10)]})  # fmt: skip
    series, note = _read(frame)
    assert series.date_col == "stamp" and series.columns == ["reading"] and "skipped" in note


def _weekly(rows: int = 100) -> pd.DataFrame:
    """A weekly series whose value at week t is t**2: linear interpolation over a gap is exactly known."""
    weeks = pd.date_range("2020-01-05", periods=rows, freq="W-SUN")
    return pd.DataFrame({"week": weeks.strftime("%Y-%m-%d"), "y": np.arange(rows, dtype=float) ** 2})


def test_small_gaps_are_filled_by_linear_interpolation_by_default(tmp_path):
    frame = _weekly()
    frame.loc[30, "y"] = np.nan  # an empty cell between 29**2 and 31**2
    path = _write(tmp_path, frame.drop(index=[10, 11]))  # two missing weeks between 9**2 and 12**2
    series, note = _read(path)
    assert note.endswith(
        "note: filled 2 missing time step(s) and 1 empty cell(s) by linear interpolation (--fill-missing to "
        "choose the method, --fill-missing none to refuse)"
    )
    assert len(series) == 100 and series.freq == "W-SUN" and series.options.fill_missing == "auto"
    expected = np.arange(100.0) ** 2
    expected[10:12] = 81 + (144 - 81) * np.array([1, 2]) / 3
    expected[30] = (29**2 + 31**2) / 2
    np.testing.assert_allclose(series.frame["y"], expected)


@pytest.mark.parametrize(
    ("drop", "filled"),
    [
        (range(40, 45), True),  # 5 steps: max(3, 5% of 100 rows)
        (range(40, 46), False),  # 6 steps
    ],
)
def test_the_longest_gap_filled_by_default(drop, filled):
    assert max(MAX_GAP_STEPS, MAX_GAP_SHARE * 100) == 5
    frame = _weekly().drop(index=drop)
    if filled:
        series, _ = _read(frame)
        expected = np.arange(100.0) ** 2
        expected[40:45] = 39**2 + (45**2 - 39**2) * np.arange(1, 6) / 6  # on the line from week 39 to 45
        np.testing.assert_allclose(series.frame["y"], expected)
        return
    message = _refusal(frame)
    assert message.startswith("DataFrame: 6 missing time step(s) in column 'week' of a W-SUN series")
    assert "gap of 6 steps from 2020-10-11, more than 5, so not filled by default" in message
    assert "--fill-missing" in message and "\n" not in message


@pytest.mark.parametrize(("empty", "filled"), [(10, True), (11, False)])
def test_a_column_missing_more_than_a_tenth_is_refused(empty, filled):
    assert MAX_MISSING_SHARE == 0.10
    frame = _weekly()
    frame.loc[range(5, 5 + 8 * empty, 8), "y"] = np.nan  # single cells, far apart
    if filled:
        series, note = _read(frame)
        assert f"filled {empty} empty cell(s)" in note and np.isfinite(series.values).all()
        return
    message = _refusal(frame)
    assert message.startswith("DataFrame: 11 missing or non-finite value(s): column 'y' at row(s) 5, 13, ")
    assert "column 'y' misses 11 of its 100 values, more than 10%, so not filled by default" in message
    assert "--fill-missing" in message


def test_a_column_with_a_long_gap_beside_complete_ones_is_refused_naming_the_targets_to_keep(tmp_path):
    """ABS's Trend series suspended for 19 months beside the complete seasonally adjusted and original ones:
    the refusal offered only to fill the hole; leaving the column out keeps the others."""
    months = pd.date_range("2015-01-01", periods=100, freq="MS")
    frame = pd.DataFrame({"month": months, "sa": np.arange(100.0), "original": np.arange(100.0) + 1,
                          "trend": np.arange(100.0) + 2})  # fmt: skip
    frame.loc[60:78, "trend"] = np.nan
    path = _write(tmp_path, frame, "lfs.csv")
    with pytest.raises(DataError, match=r"or leave the others out: targets=\['sa', 'original'\] / "
                       r"--targets sa,original\)$"):  # fmt: skip
        read_csv(path)
    assert read_csv(path, targets=["sa", "original"]).columns == ["sa", "original"]


def test_a_short_yearly_series_missing_its_middle_year_is_yearly(tmp_path):
    """8 yearly rows, 2015-2023 without 2019, hold no five consecutive years: the 365-day step of 2015-2016
    was taken for the grid, "off the 8760h grid" (h91 F6); a yearly series missing 2019 is said as such."""
    years = [2015, 2016, 2017, 2018, 2020, 2021, 2022, 2023]
    frame = pd.DataFrame({"Year": years, "pop": [5.1 + (year - 2015) / 20 for year in years]})
    path = _write(tmp_path, frame, "pop.csv")
    with pytest.raises(DataError, match=r"1 missing time step\(s\) in column 'Year' of a YS-JAN series, the "
                       r"first 2019-01-01"):  # fmt: skip
        read_csv(path)
    series = read_csv(path, fill_missing="interpolate")
    assert series.freq == "YS-JAN" and series.frame["pop"].iloc[4] == pytest.approx(5.3)


@pytest.fixture
def built(monkeypatch) -> list[int]:
    """The lengths of the date ranges pandas builds within a test (grids are counted before built)."""
    lengths, date_range = [], pd.date_range

    def counted(*args, **kwargs) -> pd.DatetimeIndex:
        lengths.append(len(grid := date_range(*args, **kwargs)))
        return grid

    monkeypatch.setattr(pd, "date_range", counted)
    return lengths


def test_a_few_rows_a_second_apart_build_no_grid_of_seconds_over_the_span(built):
    """Runs of three rows (h91 F6) read a step of a second from three rows among years' and built every
    second of the span before counting its missing steps: six rows to 2040 asked for 9.4 GiB. The grid is
    counted as it is built, here over ten days (864,000 seconds)."""
    stamps = ["2000-01-01 00:00:00", "2000-01-01 00:00:01", "2000-01-01 00:00:02", "2000-01-03", "2000-01-07",
              "2000-01-11"]  # fmt: skip
    with pytest.raises(DataError, match="irregular time steps"):
        read_frame(pd.DataFrame({"date": stamps, "y": [1.0, 2, 3, 4, 5, 6]}))
    assert max(built, default=0) < 100, built


def test_five_rows_a_second_apart_build_no_grid_of_seconds_over_the_span(built):
    """Runs of five rows a second apart, then one three years on, built a grid of 95 million seconds (26 s,
    5 GB) to say the file missed them; a grid holds at most 100 steps a row or a million, here 30 days on."""
    stamps = [f"2000-01-01 00:00:0{k}" for k in range(5)] + ["2000-01-31"]
    with pytest.raises(DataError, match="irregular time steps"):
        read_frame(pd.DataFrame({"date": stamps, "y": [1.0, 2, 3, 4, 5, 6]}))
    assert max(built) <= 1_000_001, built  # 30 days of seconds: 2,592,001


def test_a_monthly_file_missing_a_month_builds_its_grid_only(built):
    """The grid's cap of a million steps was built to be counted: a million months, 7 s for every monthly
    file of 119 rows missing one (weeks 10 s, quarters 8 s, 0.15 s before). The grid counts its 120 months."""
    months = pd.date_range("2010-01-01", periods=120, freq="MS").delete(30)
    series = read_frame(pd.DataFrame({"date": months, "y": np.arange(119.0)}), fill_missing="interpolate")
    assert series.freq == "MS" and len(series.frame) == 120
    assert max(built) <= 1000, built


def test_fill_missing_none_refuses_any_gap_and_the_cli_shows_the_choice(tmp_path, capsys):
    frame = _weekly(20)
    frame.loc[7, "y"] = np.nan
    path = _write(tmp_path, frame.drop(index=[3]))
    with pytest.raises(DataError, match=r"1 missing time step\(s\) in column 'week' .* the first 2020-01-26"):
        read_csv(path, fill_missing="none")
    no_steps = _write(tmp_path, frame, "cells.csv")
    with pytest.raises(DataError, match=r"1 missing or non-finite value\(s\): column 'y' at line\(s\) 9; "):
        read_csv(no_steps, fill_missing="none")
    assert main(["data", "describe", str(path), "--fill-missing", "none", "--input-size", "2",
                 "--horizon", "1"]) == 2  # fmt: skip
    assert "missing time step(s)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert "--fill-missing {auto,none,interpolate,ffill}" in capsys.readouterr().out


def test_rows_before_every_column_starts_are_dropped_and_a_late_latest_period_reads_independent():
    """A panel whose series start a few periods apart (World Bank '..' for early years): the rows every column
    covers, up to MAX_EDGE_SHARE dropped. A latest period not yet published everywhere: dropping it would
    forecast every series from before its latest value, so each keeps its own span (independent series)."""
    frame = pd.DataFrame({"date": pd.date_range("2000-01-01", periods=40, freq="YS").astype(str),
                          "a": np.arange(40.0), "b": 100 + np.arange(40.0)})  # fmt: skip
    frame.loc[:2, "a"] = np.nan  # a starts in 2003
    series, said = _read(frame)
    assert series.index[0] == pd.Timestamp("2003-01-01") and series.index[-1] == pd.Timestamp("2039-01-01")
    np.testing.assert_array_equal(series.values, np.column_stack([np.arange(3.0, 40), 103 + np.arange(37.0)]))
    assert "dropped the first 3 row(s), where not every column has a value" in said
    assert series.options.channels == "multivariate"
    frame.loc[39, "b"] = np.nan  # b's 2039 not published yet
    series, said = _read(frame)
    assert series.options.channels == "independent" and [rows.stop for rows in series.own_rows()] == [40, 39]
    assert "read the series as independent, one model shared by series of their own spans ('a' from " \
        "2003-01-01 to 2039-01-01;" in said  # named beside the longest span, b's  # fmt: skip
    assert _read(frame, channels="multivariate")[0].index[-1] == pd.Timestamp("2038-01-01")  # asked: trimmed
    frame.loc[39, "a"] = np.nan  # the next period's placeholder row, blank in every column: no late series
    series, said = _read(frame)  # (it read as independent, the reason empty: "(; channels=...", h49)
    assert series.options.channels == "multivariate" and series.index[-1] == pd.Timestamp("2038-01-01")
    assert "read the series as independent" not in said


def test_cells_before_the_first_value_or_after_the_last_are_not_interpolated_by_default():
    frame = _weekly(40)
    frame.loc[31:, "y"] = np.nan  # the last 9 of 40 rows: more than MAX_EDGE_SHARE, but rows of no value
    assert MAX_EDGE_SHARE * 40 < 9
    series, note = _read(frame)
    assert len(series) == 31 and "dropped the last 9 row(s), empty before the series starts or after" in note
    series, _ = _read(frame, fill_missing="interpolate")  # asked for: the nearest value
    assert series.frame["y"].iloc[-1] == 30**2
    # beside a series that goes on, each keeps its own span, as independent series (a long table's are read
    # so); asked to be one multivariate model, the option that keeps each series' span is named, not a fill
    series, note = _read(frame.assign(z=1.0))
    assert series.options.channels == "independent" and [rows.stop for rows in series.own_rows()] == [31, 40]
    assert note.endswith("note: read the series as independent, one model shared by series of their own "
                         "spans ('y' to 2020-08-02; channels='multivariate' / --channels "
                         "multivariate refuses)")  # fmt: skip
    refusal = _refusal(frame.assign(z=1.0), channels="multivariate")
    assert "(or give channels='independent' / --channels independent" in refusal
    # a fill asked for, or covariates (inputs of one multivariate model): multivariate, filled or refused
    assert _read(frame.assign(z=1.0), fill_missing="interpolate")[0].options.channels == "multivariate"
    assert "(or give channels='independent'" in _refusal(frame.assign(z=1.0), past_covariates=["z"])


def test_a_bundle_trained_on_a_gappy_file_predicts(tmp_path, capsys):
    rng = np.random.default_rng(0)
    frame = _weekly(160)
    frame["y"] = 10 + np.sin(np.arange(160) / 4) + rng.normal(0, 0.1, 160)
    frame.loc[60, "y"] = np.nan
    gappy = frame.drop(index=[20, 21, 100])
    _write(tmp_path, gappy, "weekly.csv")
    out = tmp_path / "bundle"
    assert main(["train", "--csv", str(tmp_path / "weekly.csv"), "--horizon", "4", "--input-size", "12",
                 *TINY, "--out", str(out)]) == 0  # fmt: skip
    assert load_bundle(out).data.fill_missing == "auto"  # new rows are read with the same default
    capsys.readouterr()
    # the week before last missing and an empty cell among the last rows: both filled, the forecast follows
    recent = gappy.drop(index=[157]).copy()
    recent.loc[155, "y"] = np.nan
    _write(tmp_path, recent, "recent.csv")
    assert main(["predict", "--model", str(out), "--csv", str(tmp_path / "recent.csv")]) == 0
    printed = capsys.readouterr().out
    assert "2023-01-29" in printed and "2023-02-19" in printed  # the 4 weeks after the 160th
    # an empty last cell is no gap: the forecast starts after the last week with a value, and says so
    recent.loc[159, "y"] = np.nan
    _write(tmp_path, recent, "recent.csv")
    dropped = "dropped the last 1 row.s., empty before the series starts or after it ends"
    with pytest.warns(DataQualityWarning, match=dropped):
        assert main(["predict", "--model", str(out), "--csv", str(tmp_path / "recent.csv")]) == 0
    printed = capsys.readouterr().out
    assert "2023-01-22" in printed and "2023-02-12" in printed and "2023-02-19" not in printed
    # with --fill-missing none the file is refused, naming its missing weeks and the option
    argv = ["predict", "--model", str(out), "--csv", str(tmp_path / "recent.csv"), "--fill-missing", "none"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "4 missing time step(s)" in err and "--fill-missing" in err and "\n" not in err
    assert "line numbers count" not in err  # it names no line


def test_rows_where_no_series_has_a_value_are_dropped_however_many(tmp_path):
    """The World Bank's file of one country writes its GDP under every year from 1960, empty to 2000: those
    rows lose nothing, and the series is its 22 years (it was refused as 42 missing values, and
    --fill-missing ffill, which the refusal suggested, invented 41 years). Rows where some series has a value
    still count: three series empty to 2000 beside one from 1960 read as series of their own spans."""
    years = [str(year) for year in range(1960, 2024)]
    gdp = [""] * 41 + [f"{3.0e12 + 1e11 * k:.2f}" for k in range(22)] + [""]
    header = ",".join(f'"{name}"' for name in ["Country Name", "Country Code", *years]) + ",\n"
    path = tmp_path / "API_NY.GDP.MKTP.CD_DEU.csv"
    path.write_text('"Data Source","World Development Indicators",\n\n' + header
                    + ",".join(f'"{value}"' for value in ["Germany", "DEU", *gdp]) + ",\n")  # fmt: skip
    series, note = _read(path)
    assert len(series) == 22 and series.index[0] == pd.Timestamp("2001-01-01")
    assert not series.frame.isna().any().any()
    assert "dropped the first 41 and the last 1 row(s), empty before the series starts or after it" in note
    alone, settings = read_csv(path, channels="independent"), TrainSettings(horizon=3)
    assert len(alone) == 64 and split_for(alone, settings) == "auto"  # by its own 22 rows, not the table's
    assert default_input_size(alone, settings) == default_input_size(series, settings)
    frame = pd.DataFrame({"year": range(1960, 2024), "DE": np.r_[np.full(41, np.nan), np.arange(23.0)]})
    frame = frame.assign(FR=frame["DE"] * 2, IT=frame["DE"] * 3, US=np.arange(64.0))
    series, note = _read(frame)
    assert series.options.channels == "independent" and "'DE' from 2001-01-01" in note


def test_a_bundle_trained_on_a_found_panel_forecasts_long_rows(tmp_path, capsys):
    rng = np.random.default_rng(1)
    panel = _panel(60)
    panel["unemployment"] += rng.normal(0, 0.1, len(panel))
    _write(tmp_path, panel, "panel.csv")
    out = tmp_path / "panel"
    assert main(["train", "--csv", str(tmp_path / "panel.csv"), "--horizon", "4", "--input-size", "8",
                 *TINY, "--out", str(out)]) == 0  # fmt: skip
    assert load_bundle(out).data.id_col == "country"
    capsys.readouterr()
    assert main(["predict", "--model", str(out), "--csv", str(tmp_path / "panel.csv"),
                 "--output", str(tmp_path / "forecast.csv")]) == 0  # fmt: skip
    forecast = pd.read_csv(tmp_path / "forecast.csv")
    assert list(forecast.columns[:2]) == ["country", "quarter"]
    assert forecast["country"].tolist() == ["US"] * 4 + ["UK"] * 4 + ["JP"] * 4
    assert forecast["quarter"].iloc[0] == "2010-Q1"  # written as the file writes its quarters


def test_registered_benchmark_files_read_as_published(data_dir, tmp_path):
    series, note = _read(data_dir / "ETTh1.csv.gz")
    raw = pd.read_csv(data_dir / "ETTh1.csv.gz")
    assert note == "" and series.dataset == "ETTh1"
    np.testing.assert_array_equal(series.values, raw.drop(columns="date").to_numpy())
    # a registered file with an empty cell is refused as before (nothing is filled in a benchmark), while
    # the same rows under another name are a user file whose one empty cell the default fills
    raw.loc[100, "OT"] = np.nan
    with pytest.raises(DataError, match=r"1 missing or non-finite value\(s\): column .OT. at line\(s\) 102;"):
        read_csv(_write(tmp_path, raw, "ETTh1.csv"))
    shutil.move(tmp_path / "ETTh1.csv", tmp_path / "my_etth1.csv")
    series, note = _read(tmp_path / "my_etth1.csv")
    assert "filled 1 empty cell(s)" in note and np.isfinite(series.values).all()


@pytest.mark.parametrize("second", [200.0, 100.0])
def test_an_sdmx_export_is_a_panel_keyed_by_the_one_column_that_varies(tmp_path, second):
    """Eurostat's SDMX-CSV: dataflow, update time, frequency and unit alike in every row, a flag column
    mostly empty; only geo tells the series apart, and OBS_VALUE holds them, also where the series are
    alike (euro-area members' exchange rates to the euro: refused as unsorted, h47)."""
    months = [f"2020-{m:02d}" for m in range(1, 13)] + [f"2021-{m:02d}" for m in range(1, 13)]
    rows = [("ESTAT:PRC_HICP_MIDX(1.0)", "12/11/26 23:00:00", "M", "I15", geo, month, base + k,
             "p" if k == 23 else "")
            for geo, base in (("DE", 100.0), ("FR", second)) for k, month in enumerate(months)]  # fmt: skip
    columns = ["DATAFLOW", "LAST UPDATE", "freq", "unit", "geo", "TIME_PERIOD", "OBS_VALUE", "OBS_FLAG"]
    series, said = _read(_write(tmp_path, pd.DataFrame(rows, columns=columns)))
    assert series.columns == ["DE", "FR"] and series.freq == "MS" and len(series) == 24
    expected = np.column_stack([100 + np.arange(24.0), second + np.arange(24.0)])
    np.testing.assert_array_equal(series.values, expected)
    assert said.endswith(
        "read as a long panel of 2 series ('DE', 'FR') keyed by column 'geo', its values from column "
        "'OBS_VALUE' (ignored column(s) alike in every row or empty in most: 'DATAFLOW', 'LAST UPDATE', "
        "'freq', 'unit', 'OBS_FLAG')"
    )


def test_a_statistics_canada_table_is_keyed_by_geo_and_forecasts_value():
    """GEO and its DGUID name the same series (one to one), a label the date determines names times, and
    the unit's numeric id and the decimals are alike in every row: VALUE is the one column that varies."""
    months = [f"2020-{m:02d}" for m in range(1, 13)]
    rows = [(month, geo, code, f"{month} label", 17, 1, base + k)
            for geo, code, base in (("Canada", "2016A000011124", 100.0), ("Ontario", "2016A000235", 50.0))
            for k, month in enumerate(months)]  # fmt: skip
    columns = ["REF_DATE", "GEO", "DGUID", "Reference period", "UOM_ID", "DECIMALS", "VALUE"]
    series, said = _read(pd.DataFrame(rows, columns=columns))
    assert series.columns == ["Canada", "Ontario"] and series.freq == "MS"
    expected = np.column_stack([100 + np.arange(12.0), 50 + np.arange(12.0)])
    np.testing.assert_array_equal(series.values, expected)
    assert "read as a long panel of 2 series ('Canada', 'Ontario') keyed by column 'GEO'" in said


def test_a_faostat_table_is_keyed_by_its_area_names_not_its_quoted_codes():
    """FAOSTAT writes its M49 codes with Excel's text marker ('276) before the names that go with them one to
    one: the series were named '276 and '250 and forecast under `Area Code (M49)` (h91 F10)."""
    rows = [("QCL", f"'{code}", area, "'0111", "Wheat", year, base + year - 2000)
            for area, code, base in (("Germany", 276, 5000.0), ("France", 250, 7000.0))
            for year in range(2000, 2023)]  # fmt: skip
    columns = ["Domain Code", "Area Code (M49)", "Area", "Item Code (CPC)", "Item", "Year", "Value"]
    series, said = _read(pd.DataFrame(rows, columns=columns))
    assert series.columns == ["Germany", "France"]
    np.testing.assert_array_equal(series.values[:, 1], 7000 + np.arange(23.0))
    assert "read as a long panel of 2 series ('Germany', 'France') keyed by column 'Area'" in said


@pytest.mark.slow
def test_the_default_train_beats_naive_on_a_seasonal_weekly_file_with_gaps(tmp_path, capsys):
    """`forecaster train --csv F --horizon H` with nothing else on ten years of weekly sales missing one week
    in twenty: the gaps are filled, and the default model's test MSE is below the naive forecast's."""
    rng = np.random.default_rng(0)
    weeks = pd.date_range("2015-01-04", "2024-12-29", freq="W-SUN")
    sales = 50 + 10 * np.sin(2 * np.pi * np.arange(len(weeks)) / 52.18) + rng.normal(0, 2, len(weeks))
    kept = rng.random(len(weeks)) > 0.05
    frame = pd.DataFrame({"week": weeks[kept].strftime("%Y-%m-%d"), "sales": sales[kept].round(2)})
    out = tmp_path / "sales"
    argv = ["train", "--csv", str(_write(tmp_path, frame, "sales.csv")), "--horizon", "13", "--no-progress"]
    with pytest.warns(DataQualityWarning, match="missing time step.s. by linear interpolation"):
        assert main([*argv, "--out", str(out)]) == 0
    metrics = load_bundle(out).metrics
    assert metrics["mse"] < 0.5 * metrics["naive"]["mse"]
    assert metrics["best_val_mse"] < metrics["naive"]["val_mse"]


def test_a_column_without_any_value_is_left_out_with_a_note_unless_asked_for():
    """A World Bank table's countries without data: left out, named; a target asked for is still refused."""
    frame = _weekly().assign(empty=np.nan)
    series, note = _read(frame)
    assert series.columns == ["y"] and "left out column(s) 'empty': no values at all" in note
    with pytest.raises(DataError, match="'empty'"):
        read_frame(frame, targets=["y", "empty"])


def test_a_target_named_with_a_comma_is_given_in_double_quotes(tmp_path, capsys):
    """World Bank country names hold commas ("Korea, Rep."): --targets reads its text as a CSV line."""
    frame = _weekly().rename(columns={"y": "Korea, Rep."}).assign(Japan=1.0)
    frame.to_csv(tmp_path / "wb.csv", index=False)
    targets = '"Korea, Rep.", Japan'
    assert main(["data", "describe", str(tmp_path / "wb.csv"), "--horizon", "4", "--targets", targets]) == 0
    assert "2 target(s): Korea, Rep., Japan" in capsys.readouterr().out


def test_an_id_column_alone_finds_the_dates_and_the_one_varying_value_column(tmp_path):
    """gapminder: --id-col country, the years found as in a wide table; a country's code describes it (one
    value per country), so the values are lifeExp and pop, each a variable, or the one the user names."""
    countries = [("Chad", "Africa", 148), ("Peru", "Americas", 604)]
    rows = [(country, continent, year, 40 + k + year / 100, 1e6 * (k + 1) + year, code)
            for k, (country, continent, code) in enumerate(countries)
            for year in range(1952, 2012, 5)]  # fmt: skip
    path = tmp_path / "gapminder.csv"
    columns = ["country", "continent", "year", "lifeExp", "pop", "iso_num"]
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    both = read_csv(path, id_col="country")  # each a variable of every country
    assert both.columns == ["Chad/lifeExp", "Chad/pop", "Peru/lifeExp", "Peru/pop"]
    assert both.options.target_col == "lifeExp,pop" and both.frame["Peru/pop"].iloc[0] == 2e6 + 1952
    series = read_csv(path, id_col="country", target_col="lifeExp")
    assert series.columns == ["Chad", "Peru"] and series.freq == "5YS-JAN" and series.date_col == "year"
    assert series.values[0].tolist() == [40 + 19.52, 41 + 19.52]
    path.write_text(pd.DataFrame(rows, columns=["country", "continent", "year", "value", "pop", "iso_num"])
                    .drop(columns="pop").to_csv(index=False))  # fmt: skip
    assert read_csv(path, id_col="country").options.target_col == "value"


def test_a_column_of_a_coarser_frequency_is_named_as_such():
    """FRED's download of monthly UNRATE beside quarterly GDPC1 ('.' in two of every three months) was refused
    as missing 404 of 607 values, and the advice was to interpolate them: the column's frequency is named,
    and --targets."""
    months = pd.date_range("2000-01-01", periods=60, freq="MS")
    frame = pd.DataFrame({"date": months.strftime("%Y-%m-%d"), "rate": np.linspace(4, 6, 60),
                          "gdp": [100.0 + k if k % 3 == 0 else np.nan for k in range(60)]})  # fmt: skip
    message = _refusal(frame)
    assert ("(column 'gdp' has a value every 3 rows, a coarser frequency than the other columns' (targets / "
            "--targets naming the others leaves it out), so not filled by default)") in message
    assert _read(frame, targets=["rate"])[0].columns == ["rate"]


def test_vintages_of_one_series_are_refused_not_read_as_series(tmp_path):
    """ALFRED's long download of every vintage (the same quarter once per release, beside its vintage date)
    was read as a panel of one series per vintage, and forecast twice (h91 F1): a key of dates is refused,
    naming it; --id-col still reads it as series."""
    rows = [(quarter.date(), vintage, 100 + k + bump)
            for vintage, count, bump in (("2023-01-26", 35, 0.0), ("2023-04-27", 36, 0.3))
            for k, quarter in enumerate(pd.date_range("2015-01-01", periods=count, freq="QS"))]  # fmt: skip
    path = tmp_path / "gdp_vintages.csv"
    pd.DataFrame(rows, columns=["observation_date", "vintage_date", "GDP"]).to_csv(path, index=False)
    with pytest.raises(DataError) as refused:
        read_csv(path)
    assert str(refused.value) == (
        f"{path}: the dates of column 'observation_date' repeat beside column 'vintage_date', which holds "
        "dates too ('2023-01-26', ...): revisions of one series, one per vintage, not series; expected one "
        "row per date (keep the rows of one vintage), or id_col='vintage_date' / --id-col vintage_date where "
        "its dates name series"
    )
    assert read_csv(path, id_col="vintage_date").columns == ["2023-01-26", "2023-04-27"]


def test_cohorts_keyed_by_their_start_date_are_series_not_vintages(tmp_path):
    """Loans by their origination quarter, each balance dated after it, are a panel of cohorts: the vintage
    refusal (h91 F1) refused them, whose key's dates precede, not follow, the dates beside them."""
    rows = [(month.date(), start, 100.0 - k)
            for start in ("2018-01-01", "2018-04-01", "2018-07-01")
            for k, month in enumerate(pd.date_range(start, "2020-12-01", freq="MS"))]  # fmt: skip
    path = tmp_path / "cohorts.csv"
    pd.DataFrame(rows, columns=["month", "origination", "balance"]).to_csv(path, index=False)
    assert read_csv(path).columns == ["2018-01-01", "2018-04-01", "2018-07-01"]

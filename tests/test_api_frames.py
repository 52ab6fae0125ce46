"""DataFrames as pandas users hold them: dates and panel keys in the index, neuralforecast's integer `ds`,
object cells pandas would turn into numbers, names that clash with the forecast's interval columns."""

from __future__ import annotations

import datetime
import re
import warnings
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from forecaster import Forecaster
from forecaster.data import DataQualityWarning, read_csv, read_frame
from forecaster.errors import BundleError, ConfigError, DataError

HORIZON, INPUT = 6, 24


@pytest.fixture(autouse=True)
def _quiet_notes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def hourly(rows: int = 200) -> pd.DataFrame:
    index = pd.date_range("2021-01-01", periods=rows, freq="h")
    steps = np.arange(rows, dtype=np.float64)
    return pd.DataFrame({"a": np.sin(steps / 24 * 2 * np.pi), "b": steps / 10}, index=index)


def naive() -> Forecaster:
    return Forecaster("naive", horizon=HORIZON, input_size=INPUT)


@pytest.mark.parametrize("name", [None, "ts"])
def test_a_model_fitted_on_a_datetime_index_predicts_from_frames_of_the_same_shape(name):
    frame = hourly().rename_axis(name)
    model = naive().fit(frame)
    recent = model.predict(frame.iloc[-30:])
    assert recent.index[0] == frame.index[-1] + pd.Timedelta(hours=1) and len(recent) == HORIZON
    np.testing.assert_allclose(recent.to_numpy(), np.tile(frame.iloc[-1].to_numpy(), (HORIZON, 1)), rtol=1e-6)
    # rows ending earlier: the forecast follows them, not the training rows
    assert model.predict(frame.iloc[:-10]).index[0] == frame.index[-10]


def test_a_period_index_is_read_as_the_start_of_each_period_and_answered_in_periods():
    quarters = pd.DataFrame({"gdp": np.linspace(100.0, 180.0, 80)},
                            index=pd.period_range("1990Q1", periods=80, freq="Q"))  # fmt: skip
    table = naive().fit(quarters).predict(quarters)
    assert list(table.index[:2]) == [pd.Period("2010Q1", "Q"), pd.Period("2010Q2", "Q")]
    np.testing.assert_allclose(table["gdp"], 180.0, rtol=1e-6)


def test_a_zoned_index_is_answered_in_its_zone_across_a_clock_change():
    """Hourly history in Europe/Berlin ending the night before summer time: the forecast's local times skip
    02:00 as the zone's clock does (a fixed +01:00 offset would not)."""
    hours = pd.date_range(end="2024-03-30 23:00", periods=200, freq="h", tz="Europe/Berlin")
    frame = pd.DataFrame({"load": np.arange(200.0)}, index=hours)
    table = Forecaster(model="naive", horizon=4).fit(frame).predict(frame)
    assert str(table.index.tz) == "Europe/Berlin"
    assert [stamp.strftime("%H:%M%z") for stamp in table.index] == ["00:00+0100", "01:00+0100", "03:00+0200",
                                                                    "04:00+0200"]  # fmt: skip


def test_days_fitted_in_utc_are_forecast_from_rows_shown_on_a_zones_clock():
    """A model fitted on days at UTC midnight, sent the same rows converted to Europe/Berlin (01:00 in winter,
    02:00 in summer): refused as 'mixes time zones'; now read in UTC and answered at the next UTC midnights
    on Berlin's clock (local midnight would be two hours early)."""
    days = pd.date_range("2021-01-01", periods=200, freq="D", tz="UTC")
    frame = pd.DataFrame({"y": np.arange(200.0) % 7}, index=days)
    table = naive().fit(frame).predict(frame.tz_convert("Europe/Berlin"))
    assert str(table.index.tz) == "Europe/Berlin"
    following = days[-1] + pd.to_timedelta(np.arange(1, HORIZON + 1), "D")
    assert list(table.index.tz_convert("UTC")) == list(following)
    np.testing.assert_allclose(table["y"], frame["y"].iloc[-1], rtol=1e-6)


def test_an_index_of_timestamps_in_several_zones_is_read_as_dates():
    """Timestamps of UTC and Tokyo alternating (an object index, as pandas keeps them): one hourly series in
    UTC, as a file's column of them is read (it was 'no date column found')."""
    hours = pd.date_range("2024-01-01", periods=100, freq="h", tz="UTC")
    mixed = pd.Index([stamp.tz_convert("Asia/Tokyo") if k % 2 else stamp for k, stamp in enumerate(hours)])
    frame = pd.DataFrame({"y": np.arange(100.0)}, index=mixed)
    assert naive().fit(frame).predict(frame).index[0] == hours[-1] + pd.Timedelta(hours=1)


def test_a_unique_id_ds_multiindex_is_the_long_panel_it_indexes():
    frame = hourly()
    long = frame.reset_index(names="ds").melt(id_vars="ds", var_name="unique_id", value_name="y")
    indexed = long.set_index(["unique_id", "ds"])
    pd.testing.assert_frame_equal(naive().fit(indexed).predict(indexed), naive().fit(long).predict(long))


def test_blank_text_cells_are_missing_as_empty_csv_cells_are():
    """"" is how a JSON client or a form writes an empty cell: it was refused as text where numbers are
    expected, while None and "n/a" were read as missing (h56)."""
    frame = hourly(60).astype(object)
    frame.iloc[30, 0], frame.iloc[31, 1] = "", "  "
    with pytest.warns(DataQualityWarning, match=r"filled 2 empty cell\(s\)"):
        series = read_frame(frame)
    assert np.isfinite(series.values).all()
    np.testing.assert_allclose(series.values[31, 1], hourly(60).iloc[31, 1])  # a line through its neighbours


def test_a_long_frames_numeric_column_read_from_no_series_is_named_in_a_note():
    """statsforecast takes a long frame's extra columns as regressors; here a long table's series are
    forecast from their own values, and `price` (y = 100 - 20 price) was left out without a word (h56)."""
    stamps = pd.date_range("2015-01-01", periods=30, freq="D")
    price = np.random.default_rng(0).uniform(1, 2, 30)
    frame = pd.concat([pd.DataFrame({"unique_id": key, "ds": stamps, "price": price, "y": level - 20 * price,
                                     "row": np.arange(30) + 30 * k})
                       for k, (key, level) in enumerate([("a", 100.0), ("b", 50.0)])])  # fmt: skip
    said = r"DataFrame: note: left out numeric column\(s\) 'price': a long table's series are forecast from"
    with pytest.warns(DataQualityWarning, match=said):  # the row counter is no variable
        series = naive().read(frame)
    assert series.columns == ["a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the columns it reads: nothing to say
        naive().read(frame.drop(columns=["price", "row"]))


def test_integer_steps_in_a_long_ds_column_continue_with_no_date():
    rng = np.random.default_rng(0)
    long = pd.DataFrame({"unique_id": np.repeat(["a", "b"], 100), "ds": np.tile(np.arange(1, 101), 2),
                         "y": rng.normal(size=200).cumsum()})  # fmt: skip
    model = naive().fit(long, no_date=True)
    table = model.predict(long)
    assert table[table.unique_id == "a"]["ds"].tolist() == list(range(101, 101 + HORIZON))
    assert model.predict(long[long.ds <= 90])["ds"].iloc[0] == 91


def test_integer_steps_in_any_order_are_sorted_continued_by_their_spacing_and_gaps_refused():
    """Shuffled rows kept their order (each series' last value was another row's), and steps other than
    0, 1, 2, ... were forecast from the row count, labels the table held (h35)."""
    rng = np.random.default_rng(0)
    long = pd.DataFrame({"unique_id": np.repeat(["a", "b"], 100), "ds": np.tile(np.arange(0, 200, 2), 2),
                         "y": rng.normal(size=200).cumsum()})  # fmt: skip
    with pytest.warns(DataQualityWarning, match="sorted the rows by 'ds'"):
        table = naive().fit(long.sample(frac=1, random_state=3), no_date=True).predict()
    last = long.groupby("unique_id")["y"].last()
    assert table.groupby("unique_id")["naive"].first().tolist() == pytest.approx(last.tolist(), rel=1e-5)
    assert table[table.unique_id == "a"]["ds"].tolist() == list(range(200, 200 + 2 * HORIZON, 2))
    gap = long[(long.ds < 100) | (long.ds >= 150)]
    with pytest.raises(DataError, match="steps in column 'ds' go from 98 to 150 where the others go by 2"):
        naive().fit(gap, no_date=True)


def test_a_backtest_answers_in_the_ids_and_periods_of_the_frame_as_predict_does():
    """Integer ids came back as text (a merge with the frame raised) and periods as timestamps (h35)."""
    rng = np.random.default_rng(0)
    days = pd.date_range("2021", periods=60)
    ids, values = np.repeat([1, 2], 60), rng.normal(size=120)
    long = pd.DataFrame({"unique_id": ids, "ds": np.tile(days, 2), "y": values})
    backtest = naive().cross_validation(long, n_windows=2)
    assert len(backtest.merge(long, on=["unique_id", "ds"])) == len(backtest) == 2 * 2 * HORIZON
    quarters = pd.DataFrame({"v": rng.normal(size=60)}, index=pd.period_range("2000Q1", periods=60, freq="Q"))
    backtest = naive().cross_validation(quarters, n_windows=1)
    assert backtest["cutoff"].tolist() == [pd.Period("2013Q2", "Q")] * HORIZON
    assert backtest["date"].tolist() == list(quarters.index[-HORIZON:])


def test_times_given_as_text_labels_are_answered_in_their_labels_as_the_service_does():
    """Years '2008' and quarters '2014Q1' given as text (a column, an index, a long `ds`) came back as
    Timestamps from predict and cross_validation (h82 F21); timestamps and numbers keep their own types."""
    quarters = [f"{2000 + k // 4}Q{k % 4 + 1}" for k in range(60)]
    wide = pd.DataFrame({"quarter": quarters, "v": np.arange(60.0)})
    long = pd.DataFrame({"unique_id": "a", "ds": quarters, "y": np.arange(60.0)})
    assert naive().fit(wide).predict().index[:2].tolist() == ["2015Q1", "2015Q2"]
    assert naive().fit(wide.set_index("quarter")).predict().index[:2].tolist() == ["2015Q1", "2015Q2"]
    assert naive().fit(long).predict()["ds"][:2].tolist() == ["2015Q1", "2015Q2"]
    backtest = naive().cross_validation(long, n_windows=2)
    assert backtest["cutoff"].unique().tolist() == quarters[52:54] and backtest["y"].notna().all()
    assert backtest["ds"].tolist()[:HORIZON] == quarters[53 : 53 + HORIZON]
    years = pd.DataFrame({"v": np.arange(15.0)}, index=[str(year) for year in range(2008, 2023)])
    assert Forecaster("drift", horizon=2).fit(years).predict().index.tolist() == ["2023", "2024"]
    stamps = wide.assign(quarter=pd.PeriodIndex(quarters, freq="Q").to_timestamp())  # timestamps stay so
    assert naive().fit(stamps).predict().index[0] == pd.Timestamp("2015-01-01")


def test_categorical_ids_are_answered_in_their_categories():
    """A long frame's `unique_id` of dtype category came back as text from predict and cross_validation
    (h44): the answers keep the frame's categories, text or numbers, and merge on them as they are."""
    rng = np.random.default_rng(1)
    days = pd.date_range("2021", periods=60)
    for labels in (["b", "a"], [7, 3]):
        ids = pd.Categorical(np.repeat(labels, 60), categories=sorted(labels))
        long = pd.DataFrame({"unique_id": ids, "ds": np.tile(days, 2), "y": rng.normal(size=120)})
        model = naive().fit(long)
        for answer in (model.predict(), model.cross_validation(long, n_windows=2)):
            assert answer["unique_id"].dtype == long["unique_id"].dtype
            assert set(answer["unique_id"]) == set(labels)
        merged = model.predict().merge(long.tail(1), on="unique_id", how="inner")
        assert len(merged) == HORIZON


def test_a_backtest_leaves_the_fitted_model_as_it_was():
    """cross_validation fitted the Forecaster itself on the rows before its first cutoff: predict() then
    forecast days already in the frame, and save() wrote the backtest's model (h44)."""
    frame = pd.DataFrame({"v": np.arange(60.0)}, index=pd.date_range("2021", periods=60))
    model = naive().fit(frame)
    before, bundle = model.predict(), model.bundle
    model.cross_validation(frame, n_windows=2)
    assert model.bundle is bundle
    pd.testing.assert_frame_equal(model.predict(), before)
    assert before.index[0] == frame.index[-1] + pd.Timedelta(days=1) and (before["v"] == 59.0).all()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda frame: frame.rename_axis("a"), "its index is named 'a', as a column is; expected other"),
        (lambda frame: frame.reset_index(names="date").set_axis(pd.RangeIndex(5, 205, name="date")),
         "its index is named 'date', as a column is"),  # reset_index failed: "cannot insert date"
        (lambda frame: frame.assign(b=[[value] for value in frame["b"]]),
         "column 'b' row 0 holds a list of values; expected one value per cell"),  # "unhashable type"
        (lambda frame: frame.rename(columns={"b": None}), "column 1 has no name; expected every column"),
        (lambda frame: frame.rename(columns={"b": " "}), "column 1 has no name"),  # trained: no file fed it
    ],
)
def test_frames_pandas_itself_fails_on_are_refused_in_one_line(change, said):
    """Each ended in pandas' own exception and traceback, or trained a column no file could give (h44)."""
    with pytest.raises(DataError, match=re.escape(said)):
        naive().fit(change(hourly()))


def test_a_long_frame_with_no_rows_complex_values_or_its_index_named_as_its_key():
    """pandas' "'all' with datetime64 dtypes", numpy's ComplexWarning and "'unique_id' is both an index level
    and a column label" reached the caller (h44); row numbers named as the key are row numbers."""
    long = hourly().reset_index(names="ds").melt(id_vars="ds", var_name="unique_id", value_name="y")
    model = naive().fit(long)
    with pytest.raises(DataError, match="the DataFrame has no rows; expected one row per time step"):
        model.predict(long.iloc[:0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        with pytest.raises(DataError, match="holds complex128 values; expected real numbers"):
            model.predict(long.astype({"y": complex}))
    pd.testing.assert_frame_equal(model.predict(long.rename_axis("unique_id")), model.predict(long))


@pytest.mark.parametrize("cell", [3 + 4j, True, b"12"])
def test_object_cells_pandas_would_read_as_numbers_are_refused(cell):
    frame = hourly(50).astype({"a": object})
    frame.iloc[10, 0] = cell
    with pytest.raises(DataError, match=rf"column 'a' holds values where numbers are expected: "
                       rf"row 10 {re.escape(repr(str(cell)))}"):  # fmt: skip
        read_frame(frame)


def test_row_numbers_with_a_name_are_no_series():
    """A 0, 1, 2, ... index named by rename_axis was forecast as a series beside the frame's own (h35)."""
    frame = hourly().reset_index(names="date")
    table = naive().fit(frame.rename_axis("myidx")).predict()
    assert list(table.columns) == list(naive().fit(frame).predict().columns) == ["a", "b"]


def test_numbers_written_as_text_are_read_as_a_files_are_and_ids_kept_as_written():
    """'1,234.5' and '12%' were left out as text, the series lost but for a note (h35); a file's are read."""
    frame = hourly(60).assign(a=lambda f: (1000 + f.a * 100).round(1))
    written = frame.assign(a=frame.a.map("{:,.1f}".format), b=frame.b.map("{:.1f}%".format))
    with pytest.warns(DataQualityWarning) as caught:
        series = read_frame(written)
    said = " ".join(str(warning.message) for warning in caught)
    assert "thousands separators" in said and "read 60 number(s) written with % in percent" in said
    np.testing.assert_allclose(series.frame["a"], frame.a)
    np.testing.assert_allclose(series.frame["b"], frame.b.round(1))  # in percent, as written
    long = pd.DataFrame({"unique_id": np.repeat(["01", "02"], 60), "ds": np.tile(frame.index, 2),
                         "y": np.tile(written.a.to_numpy(), 2)})  # fmt: skip
    assert naive().fit(long).predict()["unique_id"].unique().tolist() == ["01", "02"]


def test_settings_are_checked_when_given_and_named_as_given():
    """An unknown option was refused at fit, `freq='bogus'` said to differ from the data's frequency (a
    DataError), and time_col beside no_date named a date_col never given (h35)."""
    with pytest.raises(ConfigError, match=r"model 'naive' has no option\(s\) \['max_epoch'\]"):
        Forecaster("naive", horizon=HORIZON, max_epoch=1)
    with pytest.raises(ConfigError, match="freq: unknown frequency 'bogus'; expected a pandas offset or"):
        Forecaster("naive", horizon=HORIZON, freq="bogus")
    for old, new in (("H", "h"), ("A", "Y"), ("T", "min")):  # pandas < 2.2's, still in most tutorials (h72)
        said = f"unknown frequency '{old}' (pandas' old spelling of '{new}'); expected"
        with pytest.raises(ConfigError, match=re.escape(said)):
            Forecaster("naive", horizon=HORIZON, freq=old)
    with pytest.raises(ConfigError, match="^time_col names a date column, which no_date or date_from says"):
        naive().fit(hourly().reset_index(names="when"), time_col="when", no_date=True)


def test_a_column_of_complex_numbers_is_skipped_with_the_projects_note_alone():
    """numpy's ComplexWarning came out three times before the note (h35)."""
    frame = hourly(50).astype({"a": complex}).reset_index(names="date")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert read_frame(frame).columns == ["b"]
    said = [str(warning.message) for warning in caught]
    assert said == ["DataFrame: note: skipped non-numeric column(s) 'a'"]


def test_object_cells_of_numbers_and_gaps_are_read():
    frame = hourly(50).astype({"a": object})
    frame.iloc[10:14, 0] = [np.float32(2.5), np.int64(3), Decimal("1.5"), None]
    values = read_frame(frame).frame["a"].to_numpy()
    np.testing.assert_allclose(values[10:13], [2.5, 3.0, 1.5])
    assert values[13] == pytest.approx((1.5 + values[14]) / 2)  # the gap interpolated


def test_a_column_named_like_another_columns_interval_bound_is_refused_not_overwritten():
    frame = hourly().rename(columns={"b": "a-lo-80"})
    model = Forecaster("naive", horizon=HORIZON, input_size=INPUT, level=[80]).fit(frame)
    clash = r"the 80% interval of column 'a' would be named 'a-lo-80', the name of another column of the"
    with pytest.raises(ConfigError, match=clash):
        model.predict()
    expected = ["a", "a-lo-90", "a-hi-90", "a-lo-80", "a-lo-80-lo-90", "a-lo-80-hi-90"]
    assert model.predict(level=[90]).columns.tolist() == expected


def test_saving_below_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("kept")
    model = naive().fit(hourly())
    with pytest.raises(BundleError, match=r"cannot be made: .*file is a file; expected folders above it"):
        model.save(tmp_path / "file" / "bundle")
    assert (tmp_path / "file").read_text() == "kept"


def test_a_series_an_index_of_years_and_comma_separated_options_are_taken_as_the_cli_takes_them():
    volumes = np.linspace(1000.0, 800.0, 100)
    series = pd.Series(volumes, index=pd.period_range("1871", periods=100, freq="Y"), name="volume")
    table = naive().fit(series).predict(series)
    assert table.columns.tolist() == ["volume"] and table.index[0] == pd.Period("1971", "Y")
    by_year = pd.DataFrame({"volume": volumes}, index=np.arange(1871, 1971))  # an unnamed index of years
    answer = naive().fit(by_year).predict(by_year).index  # whole years in, whole years out
    assert answer[:3].tolist() == [1971, 1972, 1973] and answer.dtype == np.int64 and answer.name == "year"
    for given in (by_year["volume"], by_year["volume"].rename_axis("year")):  # a Series' too (h75 F9)
        answer = naive().fit(given).predict().index
        assert answer[:3].tolist() == [1971, 1972, 1973] and answer.dtype == np.int64
    # as a RangeIndex, which pandas 3's set_index("year") makes of consecutive years (it was dropped as row
    # numbers: "no date column found"), named or not; row numbers 0, 1, 2, ... are still dropped
    for index in (pd.RangeIndex(1871, 1971, name="year"), pd.RangeIndex(1871, 1971)):
        ranged = by_year.set_axis(index, axis=0)
        assert naive().fit(ranged).predict().index[0] == 1971
    with pytest.raises(DataError, match="no date column found"):
        naive().fit(by_year.reset_index(drop=True))
    years, seasons = np.repeat(np.arange(1990, 2010), 4), np.tile([1, 2, 3, 4], 20)
    quarters = pd.DataFrame({"year": years, "quarter": seasons, "rate": np.linspace(1, 2, 80), "other": 1.0})
    model = naive().fit(quarters, date_from="year,quarter", targets="rate")
    quarterly = model.predict(quarters)
    assert quarterly.columns.tolist() == ["rate"] and quarterly.index[0] == (2010, 1)  # as given (h82 F21)
    assert quarterly.index.names == ["year", "quarter"]
    with pytest.raises(DataError, match="expected a pandas DataFrame or Series, got list"):
        naive().fit([1.0, 2.0])


def test_the_seasonal_naive_forecast_is_scored_beside_naive_as_a_baseline():
    """A weekly pattern repeated exactly: seasonal naive's error is zero (the closed form), naive's is not;
    a series whose season does not fit the input has no seasonal baseline."""
    days = pd.date_range("2021-01-01", periods=210, freq="D")
    weekly = pd.DataFrame({"y": np.tile([1.0, 5.0, 2.0, 8.0, 3.0, 9.0, 4.0], 30)}, index=days)
    metrics = Forecaster("naive", horizon=7, input_size=14).fit(weekly).metrics
    assert metrics["seasonal_naive"]["mse"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["seasonal_naive"]["val_mse"] == pytest.approx(0.0, abs=1e-12)
    assert metrics["naive"]["mse"] > 0.5
    short = Forecaster("naive", horizon=3, input_size=5).fit(weekly).metrics
    assert "seasonal_naive" not in short and "naive" in short


def test_series_named_by_numbers_are_answered_by_the_same_numbers():
    """Integer ids 1, 2 came back as '1', '2' (`p[p.unique_id == 1]` was empty), integer columns 0, 1 as '0',
    '1' (`p[0]` a KeyError): a neuralforecast or darts user gets their own names back."""
    weeks = pd.date_range("2021-01-03", periods=60, freq="W-SUN")
    long = pd.concat([pd.DataFrame({"unique_id": uid, "ds": weeks, "y": np.arange(60.0) + 10 * uid})
                      for uid in (1, 2)])  # fmt: skip
    model = naive().fit(long)
    for answer in (model.predict(), model.predict(long)):
        assert answer["unique_id"].tolist() == [1] * HORIZON + [2] * HORIZON
        assert answer[answer.unique_id == 2]["naive"].tolist() == [79.0] * HORIZON
    wide = pd.DataFrame({0: np.arange(60.0), 1: 100 + np.arange(60.0)}, index=weeks)
    answer = naive().fit(wide).predict(level=[80])
    assert list(answer.columns) == [0, "0-lo-80", "0-hi-80", 1, "1-lo-80", "1-hi-80"]
    assert answer[1].tolist() == [159.0] * HORIZON


def test_columns_of_several_levels_are_refused_saying_how_to_join_them():
    """A MultiIndex of columns was refused as lacking a date column, its index become "('date', '')"."""
    columns = pd.MultiIndex.from_tuples([("sales", "eu"), ("sales", "us")])
    days = pd.date_range("2021-01-01", periods=60, freq="D")
    frame = pd.DataFrame(np.c_[np.arange(60.0), np.arange(60.0)], index=days, columns=columns)
    with pytest.raises(DataError, match=r"DataFrame: its columns have 2 levels of names; expected one \("):
        naive().fit(frame)
    frame.columns = [" ".join(map(str, names)) for names in frame.columns]
    assert naive().fit(frame).bundle.data.columns == ["sales eu", "sales us"]


def test_a_frame_in_any_row_order_is_read_in_time_order_and_exact_copies_dropped():
    """Frames come out of merges and samples in any order (neuralforecast sorts them itself): a shuffled
    wide or long frame, or one with an exact copy of a row, was refused ("sort the file by 'date'",
    "duplicate timestamp"), as a file written so still is. Read sorted, the copy dropped, each said."""
    days = pd.date_range("2021-01-01", periods=60, freq="D")
    frame = pd.DataFrame({"y": np.arange(60.0)}, index=days)
    expected = naive().fit(frame).predict()
    shuffled, copied = frame.sample(frac=1, random_state=0), pd.concat([frame, frame.iloc[[30]]]).sort_index()
    for changed, said in ((shuffled, "sorted the rows by the time of their index"),
                          (copied, "dropped 1 exact duplicate row(s)")):  # fmt: skip
        with pytest.warns(DataQualityWarning, match=re.escape(said)):
            pd.testing.assert_frame_equal(naive().fit(changed).predict(), expected)
    long = pd.concat([pd.DataFrame({"unique_id": uid, "ds": days, "y": np.arange(60.0) + k})
                      for k, uid in enumerate("ab")])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # each series in time order: not resorted, nothing said
        expected = naive().fit(long).predict()
    with pytest.warns(DataQualityWarning, match="sorted the rows by 'ds' within each 'unique_id'"):
        shuffled = naive().fit(long.sample(frac=1, random_state=0)).predict()
    pd.testing.assert_frame_equal(shuffled, expected)
    dated = frame.reset_index(names="date")  # its column of timestamps found, not named (h35: refused)
    with pytest.warns(DataQualityWarning, match="sorted the rows by 'date'"):
        table = naive().fit(dated.sample(frac=1, random_state=0)).predict()
    pd.testing.assert_frame_equal(table, naive().fit(dated).predict())


def test_a_frame_of_steps_from_100_is_forecast_from_its_last_step():
    """With no_date, a RangeIndex from 100 was renumbered from 0: the forecast's steps were 80, 81, 82 after
    rows 100-179; now 180, 181, 182 (and a frame numbered from 0 goes on from its length, as before)."""
    frame = pd.DataFrame({"a": np.arange(80.0)}, index=pd.RangeIndex(100, 180))
    assert naive().fit(frame, no_date=True).predict().index.tolist() == list(range(180, 180 + HORIZON))
    numbered = frame.reset_index(drop=True)
    assert naive().fit(numbered, no_date=True).predict().index.tolist() == list(range(80, 80 + HORIZON))


def test_a_long_frame_of_yearly_periods_of_different_spans_fits_and_answers_periods() -> None:
    """Three yearly series starting in 2000, 2001 and 2002, `ds` a column of Periods as pandas users write
    yearly data: refused as "not timestamps: row 0 '2000.0'" (the periods became floats), and where the
    spans agreed the answer's `ds` was datetimes, which no merge on the frame's periods matches (h38)."""
    spans = [pd.period_range(str(2000 + k), periods=20, freq="Y") for k in range(3)]
    rows = [(f"S{k}", period, 50.0 + 2 * step + k)
            for k, span in enumerate(spans) for step, period in enumerate(span)]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["unique_id", "ds", "y"])
    model = Forecaster("drift", horizon=2).fit(frame)
    answer = model.predict()
    assert answer["ds"].dtype == pd.PeriodDtype("Y-DEC")
    ends = frame.groupby("unique_id")["ds"].max()
    assert answer.groupby("unique_id")["ds"].min().to_dict() == (ends + 1).to_dict()
    last = frame.groupby("unique_id")["y"].last()
    np.testing.assert_allclose(answer.groupby("unique_id")["drift"].first(), last + 2, rtol=1e-5)  # +2 a year
    assert model.predict(frame)["ds"].dtype == pd.PeriodDtype("Y-DEC")
    backtest = model.cross_validation(frame, n_windows=2)  # its times and cutoffs were datetimes
    assert (backtest[["ds", "cutoff"]].dtypes == pd.PeriodDtype("Y-DEC")).all()
    assert (backtest["y"] == backtest.merge(frame, on=["unique_id", "ds"])["y_y"]).all()


def test_a_long_frame_of_whole_years_is_answered_in_whole_years_to_merge_on() -> None:
    """`ds` 1990, 1991, ... (integers, as yearly panels are often kept) read as years: the forecast's and the
    backtest's `ds` and cutoffs were 2010-01-01, which no merge on the frame's `ds` finds (h38)."""
    years = np.arange(1990, 2010)
    frame = pd.DataFrame({"unique_id": np.repeat(["A", "B"], 20), "ds": np.tile(years, 2),
                          "y": np.r_[years - 1900.0, 3.0 * (years - 1980)]})  # fmt: skip
    model = Forecaster("drift", horizon=2).fit(frame)
    answer = model.predict()
    assert answer["ds"].dtype == frame["ds"].dtype and answer["ds"].tolist() == [2010, 2011] * 2
    truth = pd.DataFrame({"unique_id": ["A", "A", "B", "B"], "ds": [2010, 2011] * 2, "y": [110, 111, 90, 93]})
    merged = answer.merge(truth, on=["unique_id", "ds"])  # the closed form: drift continues each line
    np.testing.assert_allclose(merged["drift"], merged["y"], rtol=1e-6)
    backtest = model.cross_validation(frame, n_windows=2)
    assert (backtest[["ds", "cutoff"]].dtypes == frame["ds"].dtype).all()
    assert backtest["cutoff"].tolist() == [2006] * 4 + [2007] * 4  # windows 2007-08 and 2008-09


def test_a_long_frame_of_date_objects_is_answered_in_date_objects_to_merge_on() -> None:
    """A database driver's DATE column holds datetime.date objects: the forecast's `ds` were Timestamps, and
    a merge on the frame's own `ds` raised (h66); the backtest's `ds` and cutoffs likewise."""
    months = [stamp.date() for stamp in pd.date_range("2015-01-01", periods=60, freq="MS")]
    frame = pd.DataFrame({"unique_id": "a", "ds": months, "y": np.arange(60.0) + 100})
    model = Forecaster("drift", horizon=2).fit(frame)
    answer = model.predict()
    assert answer["ds"].tolist() == [datetime.date(2020, 1, 1), datetime.date(2020, 2, 1)]
    plan = pd.DataFrame({"unique_id": "a", "ds": answer["ds"].tolist(), "budget": [1, 2]})
    np.testing.assert_allclose(plan.merge(answer, on=["unique_id", "ds"])["drift"], [160.0, 161.0], rtol=1e-6)
    backtest = model.cross_validation(frame, n_windows=2)
    assert all(isinstance(day, datetime.date) for day in [*backtest["ds"], *backtest["cutoff"]])


def test_the_service_answers_records_of_whole_years_in_whole_years(tmp_path) -> None:
    """JSON records whose `ds` are numbers (1990, ...) were answered "2010", a string no client's merge on its
    numbers finds; labels sent as text keep the text ("2010")."""
    from test_service import serving

    years = np.arange(1990, 2010)
    frame = pd.DataFrame({"unique_id": np.repeat(["A", "B"], 20), "ds": np.tile(years, 2),
                          "y": np.r_[years - 1900.0, 3.0 * (years - 1980)]})  # fmt: skip
    model = Forecaster("drift", horizon=2).fit(frame)
    model.save(tmp_path / "models" / "yearly")
    with serving(tmp_path / "models") as client:
        numbers = client.post("/v1/models/yearly/forecast", json={"data": frame.to_dict(orient="records")})
        texts = frame.assign(ds=frame["ds"].astype(str)).to_dict(orient="records")
        labels = client.post("/v1/models/yearly/forecast", json={"data": texts})
    assert numbers.status_code == 200, numbers.text
    answer = pd.DataFrame(numbers.json()["forecast"])
    pd.testing.assert_frame_equal(answer, model.predict(), check_dtype=False)
    assert answer["ds"].tolist() == [2010, 2011] * 2
    assert [row["ds"] for row in labels.json()["forecast"]] == ["2010", "2011"] * 2


def test_the_service_answers_records_of_days_as_dates_as_its_csv_does(tmp_path) -> None:
    """Records of a daily model were answered "2024-04-01T00:00:00" where the CSV answer and `predict` write
    "2024-04-01" (h45 #9); an hourly model's keep their time."""
    from test_service import serving

    frames, expected = {}, {"daily": ["2024-03-01", "2024-03-02", "2024-03-03"],
                            "hourly": ["2024-01-03T12:00:00", "2024-01-03T13:00:00", "2024-01-03T14:00:00"]}
    for name, freq in (("daily", "D"), ("hourly", "h")):
        stamps = pd.date_range("2024-01-01", periods=60, freq=freq).strftime("%Y-%m-%d %H:%M:%S")
        frames[name] = pd.DataFrame({"date": stamps, "a": np.arange(60.0)})
        Forecaster("naive", horizon=3, input_size=5).fit(frames[name]).save(tmp_path / "models" / name)
    with serving(tmp_path / "models") as client:
        for name, rows in frames.items():
            answer = client.post(f"/v1/models/{name}/forecast", json={"data": rows.to_dict(orient="records")})
            assert answer.status_code == 200, answer.text
            assert [row["date"] for row in answer.json()["forecast"]] == expected[name]
            upload = {"file": ("rows.csv", rows.to_csv(index=False))}
            written = client.post(f"/v1/models/{name}/forecast.csv", files=upload).text.splitlines()[1:]
            assert [line.split(",")[0] for line in written] == [at.replace("T", " ") for at in expected[name]]


@pytest.mark.parametrize(
    "arrow", ["timestamp[ns][pyarrow]", "timestamp[us, tz=UTC][pyarrow]", "date32[pyarrow]"]
)
def test_an_unnamed_index_of_pyarrow_dates_is_read_as_dates(arrow):
    """`pd.read_csv(..., dtype_backend="pyarrow", index_col=0)` keeps dates in an index of pyarrow timestamps:
    unnamed, it was dropped as row numbers and the frame refused as holding no dates."""
    days = hourly(100).set_axis(pd.date_range("2021-01-01", periods=100, freq="D"), axis=0)
    zoned = days.tz_localize("UTC") if "tz=" in arrow else days
    shuffled = zoned.sample(frac=1, random_state=0)
    given = shuffled.set_axis(shuffled.index.astype(arrow), axis=0)
    table = naive().fit(given).predict()
    assert table.index[0].tz_localize(None) == pd.Timestamp("2021-04-11") and len(table) == HORIZON
    np.testing.assert_allclose(table.to_numpy(), np.tile(days.iloc[-1].to_numpy(), (HORIZON, 1)), rtol=1e-6)


def test_a_multiindex_level_of_periods_is_answered_in_periods_as_a_column_of_them_is():
    """A (country, quarter) MultiIndex of quarterly periods and categorical ids: its forecast's `quarter` held
    timestamps, which no merge on the frame's own quarters finds, and its ids text, where columns of periods
    and categories were answered in their own types."""
    quarters = pd.period_range("1995Q1", periods=48, freq="Q")
    countries = pd.Categorical(np.repeat(["US", "DE"], 48), categories=["US", "DE", "UK"])
    panel = pd.DataFrame({"country": countries, "quarter": np.tile(quarters, 2),
                          "gdp": np.linspace(100.0, 180.0, 96)})  # fmt: skip
    panel = panel.set_index(["country", "quarter"])
    model = naive().fit(panel)
    for table in (model.predict(), model.predict(panel), model.cross_validation(panel)):
        assert isinstance(table["quarter"].dtype, pd.PeriodDtype), table.dtypes
        assert table["country"].dtype == countries.dtype, table.dtypes  # ids in their categories
    assert model.predict()["quarter"].iloc[0] == pd.Period("2007Q1", "Q")


def test_tables_of_other_libraries_and_paths_are_refused_saying_what_to_pass(tmp_path):
    """A pyarrow (or polars) table was said to be a "DataFrame" the API refused as not one, a path
    `fit("sales.csv")` a str."""
    pyarrow = pytest.importorskip("pyarrow")
    frame = hourly(60)
    with pytest.raises(DataError, match=r"got pyarrow\.Table \(its \.to_pandas\(\) makes one\)$"):
        naive().fit(pyarrow.Table.from_pandas(frame))
    with pytest.raises(DataError, match=r"got the path '.*sales\.csv' \(pd\.read_csv\(path\) or forecaster"):
        naive().fit(tmp_path / "sales.csv")


def test_a_backtest_of_too_many_windows_says_how_many_fit():
    with pytest.raises(DataError, match=r"^DataFrame: 200 rows cannot hold 1000 window\(s\) of 6 steps 2 "
                       r"apart; expected at most 97 window\(s\) 2 apart$"):  # fmt: skip
        naive().cross_validation(hourly(), n_windows=1000, step_size=2)
    with pytest.raises(DataError, match=r"^DataFrame: 97 rows cannot hold 1 window\(s\) of 99 steps 1 apart; "
                       r"expected more rows than a horizon$"):  # fmt: skip
        Forecaster("naive", horizon=99, input_size=2).cross_validation(hourly(97))


@pytest.mark.parametrize("freq", ["D", "W-SUN", "M"])
def test_a_unique_id_ds_multiindex_of_periods_is_read_as_their_start_times(freq):
    """A (unique_id, ds) MultiIndex whose ds level holds daily or weekly periods (`to_period("D")`) was
    refused as 'not timestamps' ('2020-01-01', '2020-01-06/2020-01-12'): its periods were read as text, a
    column's as their start times."""
    days = pd.period_range("2020-01-01", periods=48, freq=freq)
    values = np.r_[np.linspace(1.0, 9.0, 48), np.linspace(5.0, 2.0, 48)]
    long = pd.DataFrame({"unique_id": np.repeat(["a", "b"], 48), "ds": np.tile(days, 2), "y": values})
    given = long.sample(frac=1, random_state=0).set_index(["unique_id", "ds"])
    table = naive().fit(given).predict()
    assert list(table["ds"].iloc[[0, HORIZON]]) == [days[-1] + 1] * 2
    assert isinstance(table["ds"].dtype, pd.PeriodDtype)
    np.testing.assert_allclose(table["naive"].to_numpy(), np.repeat([9.0, 2.0], HORIZON), rtol=1e-6)


def test_a_missing_time_is_refused_at_its_own_row_in_a_frame_that_is_sorted_first():
    """Rows are sorted by their time before reading; a NaT sorted last and was refused at the last row."""
    frame = hourly(100)
    frame.index = frame.index.where(np.arange(100) != 50, pd.NaT)
    for given in (frame, frame.iloc[::-1]):
        row = 50 if given is frame else 49
        with pytest.raises(DataError, match=rf"not timestamps: row {row} \(empty\); expected a timestamp"):
            naive().fit(given)
    long = frame.rename_axis("ds").reset_index().melt(id_vars="ds", var_name="unique_id", value_name="y")
    shuffled = long.sample(frac=1, random_state=0).reset_index(drop=True)
    first, second = np.flatnonzero(shuffled["ds"].isna())
    with pytest.raises(DataError, match=rf"not timestamps: row {first} \(empty\), row {second} \(empty\);"):
        naive().fit(shuffled)


@pytest.mark.parametrize("where", ["index", "column", "long"])
def test_monthly_timestamps_on_the_15th_are_answered_on_the_15th(where):
    """Months dated on the 15th are read as months (a note says so); as a CSV's dates they were answered on
    the 15th, as a frame's timestamps on the 1st, which no merge on the frame's own dates found (h128 O1)."""
    days = pd.date_range("2000-01-01", periods=60, freq="MS") + pd.Timedelta(days=14)
    frame = pd.DataFrame({"v": np.arange(60.0)}, index=days.rename(None if where == "index" else "date"))
    time = "ds" if where == "long" else "date"
    if where == "column":
        frame = frame.reset_index()
    if where == "long":  # neuralforecast's long frame of two series
        frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": days, "y": np.arange(60.0) + k})
                           for k, name in enumerate("ab")])  # fmt: skip
    model = naive().fit(frame)
    expected = [pd.Timestamp(2005, month, 15) for month in range(1, 7)]
    for table in (model.predict(), model.predict(frame)):
        stamps = table.index if where != "long" else pd.Index(table[time].unique())
        assert pd.api.types.is_datetime64_dtype(stamps) and list(stamps) == expected, stamps
    backtest = model.cross_validation(frame)
    for column in (time, "cutoff"):
        assert pd.api.types.is_datetime64_dtype(backtest[column]) and (backtest[column].dt.day == 15).all()
    given = frame.rename_axis(time).reset_index() if where == "index" else frame
    keys = [time, *(["unique_id"] if where == "long" else [])]
    merged = backtest.merge(given.rename(columns={"y": "v"}), on=keys)
    assert len(merged) == len(backtest) and (merged["y"] == merged["v"]).all()


def test_monthly_timestamps_on_the_15th_in_an_id_and_time_multiindex_are_answered_as_timestamps():
    """A (unique_id, ds) MultiIndex of months on the 15th: its ds had been answered as the text '2005-01-15',
    which no merge on the frame's own timestamps found (h131)."""
    days = pd.date_range("2000-01-01", periods=60, freq="MS") + pd.Timedelta(days=14)
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": days, "y": np.arange(60.0) + k})
                       for k, name in enumerate("ab")]).set_index(["unique_id", "ds"])  # fmt: skip
    model = naive().fit(frame)
    for table in (model.predict(), model.predict(frame), model.cross_validation(frame)):
        assert pd.api.types.is_datetime64_dtype(table["ds"]) and (table["ds"].dt.day == 15).all(), table
    given = frame.reset_index().rename(columns={"y": "v"})
    merged = model.cross_validation(frame).merge(given, on=["unique_id", "ds"])
    assert len(merged) and (merged["y"] == merged["v"]).all()


def test_timestamps_of_an_unnamed_index_are_answered_as_such_under_the_date_col_given():
    """An unnamed index of months on the 15th read as date_col='when': its forecast was the text
    '2005-01-15', the index being looked for as 'date' (h131)."""
    days = pd.date_range("2000-01-01", periods=60, freq="MS") + pd.Timedelta(days=14)
    frame = pd.DataFrame({"v": np.arange(60.0)}, index=days)
    model = naive().fit(frame, date_col="when")
    for stamps in (model.predict().index, model.predict(frame).index,
                   pd.Index(model.cross_validation(frame, date_col="when")["when"])):  # fmt: skip
        assert pd.api.types.is_datetime64_dtype(stamps) and (stamps.day == 15).all(), stamps


def test_a_time_series_read_of_months_on_the_15th_is_answered_in_timestamps(tmp_path):
    """`Forecaster.read` of a frame (or `read_csv` of a file) of months on the 15th, fitted and forecast as
    the TimeSeries it gives: its dates were answered as the text '2005-01-15' (h132), as those on the 1st are
    answered as timestamps, the frame's own being left behind (a frame's had been timestamps before h128)."""
    days = pd.date_range("2000-01-01", periods=60, freq="MS") + pd.Timedelta(days=14)
    frame = pd.DataFrame({"v": np.arange(60.0)}, index=days)
    frame.rename_axis("date").reset_index().to_csv(tmp_path / "m.csv", index=False)
    for series in (naive().read(frame), read_csv(tmp_path / "m.csv")):
        model = naive().fit(series)
        for stamps in (model.predict().index, model.predict(series).index,
                       pd.Index(model.cross_validation(series)["date"])):  # fmt: skip
            assert pd.api.types.is_datetime64_dtype(stamps) and (stamps.day == 15).all(), stamps


def test_an_unnamed_index_of_timestamps_beside_the_text_date_column_read_leaves_its_labels_as_written():
    """A frame whose dates are a text column 'date' ('2000M01') beside an unnamed index of timestamps: the
    index, read under no name, was taken for the 'date' answered, and predict failed parsing '2005M01' as an
    ISO date (h131)."""
    days = pd.date_range("2000-01-01", periods=60, freq="MS")
    frame = pd.DataFrame({"date": days.strftime("%YM%m"), "v": np.arange(60.0)}, index=days)
    model = naive().fit(frame, date_col="date")
    assert list(model.predict().index[:2]) == ["2005M01", "2005M02"]
    assert list(model.predict(frame).index[:2]) == ["2005M01", "2005M02"]


def test_a_frame_of_an_ons_download_read_by_pandas_is_refused_pointing_at_its_path(tmp_path):
    """`pd.read_csv` of an ONS time series keeps its metadata rows ("Title", "CDID", ...) above "1990 Q1":
    fit refused it with "no date column found" alone, though the file's path reads (h111 F9). A frame is
    read as the table it is; the refusal now says where such a layout is read."""
    meta = [("Title", "Gross Domestic Product: chained volume measures"), ("CDID", "ABMI"),
            ("Source dataset ID", "QNA"), ("PreUnit", "£"), ("Unit", "m"), ("Release date", "22-12-2023"),
            ("Next release", "28 March 2024"), ("Important notes", "")]
    rows = [*meta, *((f"{1990 + k // 4} Q{k % 4 + 1}", str(400000 + 1500 * k)) for k in range(40))]
    path = tmp_path / "abmi.csv"
    path.write_text("\n".join(f'"{a}","{b}"' for a, b in rows) + "\n")
    with pytest.raises(DataError) as caught:
        Forecaster("naive", horizon=2).fit(pd.read_csv(path))
    message = str(caught.value)
    assert "no date column found" in message
    assert message.endswith("(a download: fit forecaster.data.read_csv(path))")
    assert "characters cut" not in message and "pass no_date=True (--no-date)" in message  # its advice whole
    with pytest.warns(DataQualityWarning):  # the hint holds: the path read is fitted
        assert len(Forecaster("naive", horizon=2).fit(read_csv(path)).predict()) == 2
    with pytest.raises(DataError) as caught:  # a frame of numbers without dates: no word of files
        Forecaster("naive", horizon=2).fit(pd.DataFrame({"y": np.arange(40.0)}).reset_index(drop=True))
    assert "read from its path" not in str(caught.value)


@pytest.mark.parametrize("dtype", ["Int64", "int64[pyarrow]"])
def test_years_of_nullable_or_pyarrow_integers_are_answered_in_them(dtype):
    """`pd.read_csv(..., dtype_backend="numpy_nullable" / "pyarrow")` reads a `year` column as Int64 or
    int64[pyarrow]: predict raised pandas' TypeError "Argument 'freq' has incorrect type (expected str, got
    Int64Dtype)" (h161). Answered as a column of numpy years is, in the frame's own dtype."""
    years = pd.array(np.arange(1950, 2010), dtype=dtype)
    frame = pd.DataFrame({"year": years, "gdp": np.linspace(1.0, 60.0, 60)})
    model = naive().fit(frame)
    table = model.predict()
    assert table.index.dtype == years.dtype and list(table.index) == list(range(2010, 2010 + HORIZON))
    indexed = model.predict(frame.set_index("year"))
    assert indexed.index.dtype == years.dtype and indexed.index[0] == 2010
    backtest = model.cross_validation(frame, n_windows=2)
    assert backtest["year"].dtype == years.dtype  # the last 7 years: windows after 2002 and 2003
    assert backtest["cutoff"].tolist() == [2002] * HORIZON + [2003] * HORIZON


def test_a_zoned_index_of_pyarrow_timestamps_is_answered_in_its_zone():
    """`dtype_backend="pyarrow"` keeps zoned dates as timestamp[ns, Europe/Berlin][pyarrow]: they were read in
    their zone and forecast without it, 23:00 on Berlin's clock answered as naive 00:00 (h161). Answered as
    the same frame on a DatetimeIndex is, across the clock change."""
    hours = pd.date_range(end="2024-03-30 23:00", periods=200, freq="h", tz="Europe/Berlin")
    frame = pd.DataFrame({"load": np.arange(200.0)}, index=hours)
    arrow = frame.set_axis(hours.astype("timestamp[ns, Europe/Berlin][pyarrow]"), axis=0)
    expected = naive().fit(frame).predict(frame)
    model = naive().fit(arrow)
    for table in (model.predict(), model.predict(arrow)):
        assert str(table.index.tz) == "Europe/Berlin"
        pd.testing.assert_index_equal(table.index, expected.index, exact=False)
    backtest = model.cross_validation(arrow, n_windows=2)
    assert str(backtest["date"].dt.tz) == str(backtest["cutoff"].dt.tz) == "Europe/Berlin"


@pytest.mark.parametrize(("periods", "asked"), [("W-SUN", "W"), ("W-SAT", "W-SAT"), ("M", "ME"), ("Q", "QE"),
                                                ("Q", "Q-DEC")])  # fmt: skip
def test_a_period_index_is_checked_against_the_frequency_of_its_periods(periods, asked):
    """Weeks ending Sunday read as their Monday starts ('W-MON'): freq='W', the frame's own, was refused
    "the data's frequency is 'W-MON', not the freq='W' asked for ... freq='W-MON' for these rows" (h161);
    month and quarter periods refused the offsets of their ends, ME and QE."""
    index = pd.period_range("2001-01-01", periods=60, freq=periods)
    frame = pd.DataFrame({"y": np.arange(60.0)}, index=index)
    table = Forecaster("naive", horizon=2, input_size=8, freq=asked).fit(frame).predict()
    assert table.index.freqstr == frame.index.freqstr and table.index[0] == frame.index[-1] + 1


def test_a_freq_refused_on_periods_names_the_periods_frequency():
    quarters = pd.DataFrame({"y": np.arange(60.0)}, index=pd.period_range("2001Q1", periods=60, freq="Q"))
    expected = ("the data's frequency is 'Q-DEC', not the freq='M' asked for; expected rows at that "
                "frequency, freq='Q-DEC' for these rows, or no freq")  # fmt: skip
    with pytest.raises(DataError, match=re.escape(expected)):
        Forecaster("naive", horizon=2, input_size=8, freq="M").fit(quarters)


def test_another_column_of_periods_is_no_frequency_of_the_rows():
    """Monthly rows beside a column of their quarters: freq='Q' was taken (any period in the frame counted)
    and the model trained monthly, and a refusal named 'Q-DEC' as the rows' frequency (h164)."""
    months = pd.period_range("2020-01", periods=36, freq="M")
    frame = pd.DataFrame({"y": np.arange(36.0), "quarter": months.asfreq("Q")}, index=months)
    with pytest.raises(DataError, match=re.escape("the data's frequency is 'M', not the freq='Q' asked for")):
        Forecaster("naive", horizon=2, input_size=4, freq="Q").fit(frame)
    dated = frame.reset_index(names="date").assign(date=lambda rows: rows["date"].dt.to_timestamp())
    monthly = "the data's frequency is 'MS', not the freq='W' asked for"
    with pytest.raises(DataError, match=re.escape(monthly)):
        Forecaster("naive", horizon=2, input_size=4, freq="W").fit(dated, date_col="date")


def test_recent_rows_off_the_models_grid_are_placed_by_the_frames_row_not_a_file_line():
    """Rows every two days sent to a daily model: "DataFrame: line 3: 2021-01-03 ..." counted a header and
    a first line the frame does not have (h161); the reader places a frame's rows as "row N"."""
    frame = hourly().set_axis(pd.date_range("2021-01-01", periods=200, freq="D"), axis=0)
    model = naive().fit(frame)
    refused = r"^DataFrame: row 1: 2021-01-03 00:00:00 does not follow the model's frequency 'D'"
    with pytest.raises(DataError, match=refused):
        model.predict(frame.iloc[::2])


def test_a_zoned_index_across_a_clock_change_with_a_missing_or_repeated_hour_is_read_as_in_winter():
    """Berlin hours across the change to summer time, one hour missing (or one row repeated): refused as
    "date column 'date' mixes time zones or UTC offsets", the one zone's offsets taken for two zones
    (h161); the same rows in UTC, or in winter, are read with the gap filled (the repeat refused at its
    row). Read as the UTC frame is and answered in the zone."""
    hours = pd.date_range("2021-03-25", periods=300, freq="h", tz="Europe/Berlin")
    frame = pd.DataFrame({"y": np.sin(np.arange(300.0) / 5)}, index=hours)
    gap = frame.drop(hours[100])
    table = naive().fit(gap).predict()
    expected = naive().fit(gap.tz_convert("UTC")).predict()
    assert str(table.index.tz) == "Europe/Berlin"
    pd.testing.assert_frame_equal(table.tz_convert("UTC"), expected, check_index_type=False)
    repeated = pd.concat([frame.iloc[:101], frame.iloc[100:101].assign(y=5.0), frame.iloc[101:]])
    said = r"^DataFrame: duplicate timestamp .* at row 100 and row 101"
    with pytest.raises(DataError, match=said) as refused:
        naive().fit(repeated)
    assert "turned back" not in str(refused.value)


def test_an_index_set_from_a_column_it_was_kept_beside_is_read_as_that_column():
    """`df.set_index("date", drop=False)` and `set_index(["unique_id", "ds"], drop=False)`, as pandas users
    keep the key columns too: refused "its index is named 'date', as a column is" with advice,
    `rename_axis(None)`, that was refused in turn as "the index and a column are both named 'date'" (h161).
    An index holding its column's values is that column; one holding others is refused with advice that
    reads."""
    frame = hourly().rename_axis("date").reset_index()
    expected = naive().fit(frame).predict()
    pd.testing.assert_frame_equal(naive().fit(frame.set_index("date", drop=False)).predict(), expected)
    long = frame.melt(id_vars="date", var_name="unique_id", value_name="y").rename(columns={"date": "ds"})
    indexed = long.set_index(["unique_id", "ds"], drop=False)
    pd.testing.assert_frame_equal(naive().fit(indexed).predict(), naive().fit(long).predict())
    other = frame.set_index("date").assign(date=np.arange(200.0))  # a series named 'date'
    with pytest.raises(DataError, match=re.escape("df.rename_axis('...') renames the index")):
        naive().fit(other)
    assert list(naive().fit(other.rename_axis("when")).predict().columns) == ["a", "b", "date"]

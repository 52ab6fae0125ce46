"""Long tables whose series are told apart by several columns together (a country and an item in an official
export, a store and an item in sales): found without options or named `--id-col geo,na_item`, forecast back
in those columns."""

from __future__ import annotations

import io
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster.api import Forecaster
from forecaster.cli import main
from forecaster.data import DataQualityWarning, read_csv, read_frame
from forecaster.errors import DataError

QUARTERS = [f"{2005 + k // 4}-Q{k % 4 + 1}" for k in range(40)]
ITEMS = {"B1GQ": ("CLV10_MEUR", 100.0), "P3": ("CLV10_MEUR", 60.0), "PRC": ("PC", 2.0)}


def _export(path: Path) -> Path:
    """Eurostat's SDMX-CSV of two countries and three items: value k of (item, country c) is base + 10 c + k;
    the unit goes with the item, the dataflow and flag columns describe every row alike."""
    rows = [("ESTAT:NAMQ_10_GDP(1.0)", "Q", unit, item, geo, quarter, base + 10 * c + k, "")
            for item, (unit, base) in ITEMS.items() for c, geo in enumerate(("DE", "FR"))
            for k, quarter in enumerate(QUARTERS)]  # fmt: skip
    columns = ["DATAFLOW", "freq", "unit", "na_item", "geo", "TIME_PERIOD", "OBS_VALUE", "OBS_FLAG"]
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path


def test_an_export_keyed_by_two_columns_is_read_as_a_panel_of_their_pairs(tmp_path):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        series = read_csv(_export(tmp_path / "namq.csv"))
    names = [f"{item}/{geo}" for item in ITEMS for geo in ("DE", "FR")]
    assert series.columns == names and series.freq.startswith("QS") and len(series) == 40
    expected = [ITEMS[name.split("/")[0]][1] + 10 * ("FR" in name) + np.arange(40.0) for name in names]
    np.testing.assert_array_equal(series.values, np.column_stack(expected))
    assert series.options.id_col == "na_item,geo"
    assert str(said[-1].message).endswith(
        "read as a long panel of 6 series ('B1GQ/DE', 'B1GQ/FR', 'P3/DE', ...) keyed by columns 'na_item' "
        "and 'geo', its values from column 'OBS_VALUE' (ignored column(s) alike in every row or empty in "
        "most: 'DATAFLOW', 'freq', 'OBS_FLAG') (left out text column(s) 'unit': no key of the series)"
    )  # the unit goes with the item: no third key, and said left out (a status column was not said, h42)


def _trained_and_predicted(path: Path, tmp_path: Path, horizon: int, input_size: int) -> pd.DataFrame:
    """The forecast file `forecaster predict` writes for the export, after `train --id-col geo,na_item` into
    tmp_path / "model"."""
    bundle, out = tmp_path / "model", tmp_path / "forecast.csv"
    sizes = ["--horizon", str(horizon), "--input-size", str(input_size)]
    train = ["train", "--csv", str(path), "--id-col", "geo,na_item", "--model", "naive", *sizes,
             "--no-progress", "--out", str(bundle)]  # fmt: skip
    assert main(train) == 0
    assert main(["predict", "--model", str(bundle), "--csv", str(path), "--output", str(out)]) == 0
    return pd.read_csv(out)


@pytest.mark.parametrize(("option", "given", "twice"), [("--id-col", "geo,geo", "geo"),
                                                    ("--target-col", "OBS_VALUE, OBS_VALUE", "OBS_VALUE")])
def test_a_column_named_twice_by_a_joining_option_is_refused(tmp_path, capsys, option, given, twice):
    """`--id-col geo,geo` joined a column with itself and trained series 'DE/DE' (a list's repeat was refused
    from Python only)."""
    path, bundle = _export(tmp_path / "namq.csv"), tmp_path / "model"
    extra = ["--id-col", "geo,na_item"] if option == "--target-col" else []
    args = ["train", "--csv", str(path), option, given, *extra, "--model", "naive", "--horizon", "4",
            "--input-size", "8", "--no-progress", "--out", str(bundle)]  # fmt: skip
    assert main(args) == 2 and not bundle.exists()
    name = option.lstrip("-").replace("-", "_")
    said = f"{name} / {option} names {twice!r} twice; expected each column once"
    assert capsys.readouterr().err.strip() == f"forecaster: error: {said}"


def test_named_key_columns_train_and_forecast_back_in_those_columns(tmp_path):
    """`--id-col geo,na_item` through the command line; the forecast's rows name the country and the item
    in their own columns, as the file did, and agree with the API's."""
    path = _export(tmp_path / "namq.csv")
    written = _trained_and_predicted(path, tmp_path, horizon=4, input_size=8)
    assert list(written.columns) == ["geo", "na_item", "TIME_PERIOD", "naive"]
    assert written[["geo", "na_item"]].drop_duplicates().values.tolist() == [
        [geo, item] for item in ITEMS for geo in ("DE", "FR")  # as the file's rows first name them
    ]
    last = {(geo, item): base + 10 * c + 39 for item, (_, base) in ITEMS.items()
            for c, geo in enumerate(("DE", "FR"))}  # fmt: skip
    assert written["naive"].tolist() == [last[geo, item] for geo, item in written[["geo", "na_item"]].values]
    api = Forecaster.load(tmp_path / "model").predict(pd.read_csv(path))
    assert list(api.columns) == list(written.columns)
    np.testing.assert_array_equal(api["naive"].to_numpy(), written["naive"].to_numpy())


def test_a_frame_keyed_by_store_and_item_fits_and_predicts_with_both():
    days = pd.date_range("2024-01-01", periods=60, freq="D")
    frame = pd.DataFrame([(store, item, day, 10.0 * s + i + k % 7)
                          for s, store in enumerate(("north", "south"))
                          for i, item in enumerate(("tea", "rice"))
                          for k, day in enumerate(days)], columns=["store", "item", "ds", "y"])  # fmt: skip
    model = Forecaster("seasonal_naive", horizon=7, input_size=14).fit(frame, id_col="store,item")
    assert model.bundle.data.columns == ["north/tea", "north/rice", "south/tea", "south/rice"]
    forecast = model.predict(frame)
    assert list(forecast.columns[:3]) == ["store", "item", "ds"]
    rows = forecast[(forecast["store"] == "south") & (forecast["item"] == "rice")]
    np.testing.assert_array_equal(rows["seasonal_naive"].to_numpy(), 11.0 + np.arange(60, 67) % 7)


def test_key_columns_that_are_missing_or_empty_are_named(tmp_path):
    path = _export(tmp_path / "namq.csv")
    missing = r"namq.csv: id column\(s\) 'item' not found \(id_col 'geo,item' joins columns by commas\)"
    with pytest.raises(DataError, match=missing + "; columns are 'DATAFLOW', "):
        read_csv(path, id_col="geo,item")
    table = pd.read_csv(path)
    table.loc[5, "geo"] = None
    table.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"namq.csv: line 7: empty series id in column 'geo'"):
        read_csv(path, id_col="geo,na_item")
    stores = pd.DataFrame({"unique_id": ["a"] * 4, "store": ["x", "x", "y", "y"], "ds": [1, 2, 1, 2],
                           "y": [1.0, 2.0, 3.0, 4.0]})  # fmt: skip
    with pytest.raises(DataError, match=r"a second key, such as a store beside an item; name both, id_col / "
                       r"--id-col 'unique_id,store'\)"):  # fmt: skip
        Forecaster("naive", horizon=1, input_size=1).fit(stores, no_date=True)


def test_the_service_answers_a_two_column_key_in_those_columns(tmp_path):
    """Records of the export posted to a served bundle: each forecast record names its country and item."""
    from test_service import serving

    path = _export(tmp_path / "namq.csv")
    models = tmp_path / "models"
    train = ["train", "--csv", str(path), "--model", "naive", "--horizon", "2", "--input-size", "4",
             "--no-progress", "--out", str(models / "namq")]  # fmt: skip
    assert main(train) == 0
    records = pd.read_csv(path).astype(object).fillna("").to_dict(orient="records")
    with serving(models) as client:
        answer = client.post("/v1/models/namq/forecast", json={"data": records})
        upload = client.post("/v1/models/namq/forecast.csv", files={"file": ("namq.csv", path.read_bytes())})
    assert answer.status_code == 200, answer.text
    assert upload.status_code == 200, upload.text  # long rows too (it answered a wide table of joined names)
    uploaded = pd.read_csv(io.StringIO(upload.text))
    assert list(uploaded.columns) == ["na_item", "geo", "TIME_PERIOD", "naive"] and len(uploaded) == 12
    assert uploaded.iloc[0].tolist() == ["B1GQ", "DE", "2015-Q1", 139.0]  # dated as the records route dates
    forecast = answer.json()["forecast"]
    assert forecast[0] == {"na_item": "B1GQ", "geo": "DE", "TIME_PERIOD": "2015-Q1", "naive": 139.0}
    assert {(row["na_item"], row["geo"]) for row in forecast} == {(i, g) for i in ITEMS for g in ("DE", "FR")}


def test_a_status_of_each_observation_is_no_key(tmp_path):
    """OECD's OBS_STATUS: 'A' for normal values, 'P' for the provisional latest quarters. With the item and
    the country it told the rows apart (the latest quarters became series of their own, left out as too
    short); the status goes with each observation, as the country and item and date determine it."""
    path = _export(tmp_path / "oecd.csv")
    table = pd.read_csv(path)
    latest = np.where(table["geo"] == "DE", table["TIME_PERIOD"] == QUARTERS[-1],
                      table["TIME_PERIOD"].isin(QUARTERS[-2:]))  # not the date's alone: France's lag longer
    table["OBS_STATUS"] = np.where(latest, "P", "A")
    table.to_csv(path, index=False)
    series = read_csv(path)
    assert series.options.id_col == "na_item,geo" and len(series.columns) == 6 and len(series) == 40


def test_a_key_value_holding_the_separator_forecasts_back_as_written(tmp_path):
    """The parts of a key are joined by '/': an item 'P3/SA' beside a country was refused (Kaggle store-sales'
    family 'BREAD/BAKERY' beside its store), since 'DE/P3/SA' could not be split back. Within a value the
    separator is written as a look-alike; the forecasts carry the item as the file wrote it. A field named
    'geo,na_item' beside the columns it joins overrode them (a request forecast every series from another's
    rows)."""
    path = _export(tmp_path / "namq.csv")
    table = pd.read_csv(path)
    table.loc[table["na_item"] == "P3", "na_item"] = "P3/SA"
    table.to_csv(path, index=False)
    series = read_csv(path, id_col="geo,na_item")
    assert "DE/P3\u2215SA" in series.columns and len(series.columns) == 6
    written = _trained_and_predicted(path, tmp_path, horizon=2, input_size=4)
    rows = written[(written["geo"] == "FR") & (written["na_item"] == "P3/SA")]
    assert rows["naive"].tolist() == [60.0 + 10 + 39] * 2  # its last value, base + 10 c + k
    frame = pd.read_csv(_export(tmp_path / "plain.csv")).assign(**{"geo,na_item": "DE/B1GQ"})
    with pytest.raises(DataError, match="both a column named 'geo,na_item' and the columns it joins"):
        Forecaster("naive", horizon=1, input_size=4).fit(frame, id_col="geo,na_item", time_col="TIME_PERIOD",
                                                         target_col="OBS_VALUE")  # fmt: skip


def test_key_codes_are_read_as_written(tmp_path):
    """Region codes '01', '02', '10' were read as numbers: the series were named 'B1GQ/1', and a request
    carrying the file's own codes was refused as missing them."""
    path = _export(tmp_path / "regions.csv")
    table = pd.read_csv(path, dtype={"geo": str})
    table["geo"] = table["geo"].map({"DE": "01", "FR": "10"})
    table.to_csv(path, index=False)
    series = read_csv(path, id_col="na_item,geo")
    assert series.columns[:2] == ["B1GQ/01", "B1GQ/10"]
    table[table["na_item"] == "P3"].to_csv(tmp_path / "one.csv", index=False)  # one key column
    assert read_csv(tmp_path / "one.csv", id_col="geo").columns == ["01", "10"]


def test_namibias_code_na_is_a_series_id_and_an_empty_cell_is_none(tmp_path):
    """ISO 3166's 'NA' (Namibia) under --id-col country was pandas' missing value: 'line 2: empty series id'
    for a cell that holds one; an empty id cell is still refused, naming its line."""
    rows = [f"{country},{year},{base + year - 2000}.5" for country, base in (("NA", 50), ("ZA", 300))
            for year in range(2000, 2020)]  # fmt: skip
    path = tmp_path / "sacu.csv"
    path.write_text("\n".join(["country,year,gdp", *rows]) + "\n")
    series = read_csv(path, id_col="country")
    assert series.columns == ["NA", "ZA"]
    np.testing.assert_array_equal(series.frame["NA"], 50.5 + np.arange(20))
    path = tmp_path / "gap.csv"
    path.write_text("\n".join(["country,year,gdp", *rows[:5], ",2005,55.5", *rows[6:]]) + "\n")
    with pytest.raises(DataError, match="gap.csv: line 7: empty series id in column 'country'"):
        read_csv(path, id_col="country")


def test_codes_of_a_key_found_on_its_own_are_read_as_written(tmp_path):
    """FIPS codes '01', '02', '06', '10' under `id`, found without --id-col, were read as numbers: trained as
    series '1', '2', '6', the bundle refused its own file ('the rows have 01'); and '01', '1', '001' were one
    number, the panel refused as unsorted. Store numbers without zeros stay numbers (Kaggle's, above)."""
    rows = [(code, quarter, 100.0 + 5 * int(code) + k) for code in ("01", "02", "06", "10")
            for k, quarter in enumerate(QUARTERS[:24])]  # fmt: skip
    table = pd.DataFrame(rows, columns=["id", "date", "value"])
    table.to_csv(tmp_path / "fips.csv", index=False)
    series = read_csv(tmp_path / "fips.csv")
    assert series.columns == ["01", "02", "06", "10"] and series.options.id_col == "id"
    np.testing.assert_array_equal(series.frame["06"], 130.0 + np.arange(24))
    assert read_frame(table.assign(date=pd.PeriodIndex(table["date"], freq="Q").to_timestamp())).columns == [
        "01", "02", "06", "10"]  # fmt: skip
    assert main(["train", "--csv", str(tmp_path / "fips.csv"), "--model", "naive", "--horizon", "2",
                 "--out", str(tmp_path / "m")]) == 0  # fmt: skip
    out = tmp_path / "forecast.csv"
    assert main(["predict", "--model", str(tmp_path / "m"), "--csv", str(tmp_path / "fips.csv"),
                 "--output", str(out)]) == 0  # fmt: skip
    forecast = pd.read_csv(out, dtype={"id": str})
    assert forecast["id"].tolist() == ["01", "01", "02", "02", "06", "06", "10", "10"]
    np.testing.assert_array_equal(forecast["naive"], np.repeat([128.0, 133.0, 153.0, 173.0], 2))
    table["id"] = np.repeat(["01", "1", "001", "10"], 24)
    table.to_csv(tmp_path / "three.csv", index=False)
    assert read_csv(tmp_path / "three.csv").columns == ["01", "1", "001", "10"]

def test_the_records_route_caps_each_series_of_a_long_model(tmp_path):
    """--max-rows is per series: one series of many records beside the others' few was read whole (only
    the total, max_rows times the model's series, was capped)."""
    from forecaster.artifacts import load_bundle
    from service.errors import ApiError
    from service.inputs import check_records

    path = _export(tmp_path / "namq.csv")
    assert main(["train", "--csv", str(path), "--model", "naive", "--horizon", "2", "--input-size", "4",
                 "--no-progress", "--out", str(tmp_path / "namq")]) == 0  # fmt: skip
    data = load_bundle(tmp_path / "namq").data
    records = pd.read_csv(path).astype(object).fillna("").to_dict(orient="records")
    de = [record for record in records if (record["na_item"], record["geo"]) == ("B1GQ", "DE")]
    check_records(data, records, 40)  # 40 records of each of the 6 series
    with pytest.raises(ApiError, match="series 'B1GQ/DE' has 40 records; expected at most 30 per series"):
        check_records(data, de, 30)  # 40 records in all, below the total cap of 6 x 30


def _readings(spans: dict[tuple[str, str], tuple[int, int]]) -> pd.DataFrame:
    """Hourly readings of sensors at sites: reading k of a series is 10 + k % 5 from its first hour."""
    start = pd.Timestamp("2000-01-01")
    rows = [(site, sensor, start + pd.Timedelta(hours=k), 10.0 + k % 5)
            for (site, sensor), (first, count) in spans.items()
            for k in range(first, first + count)]  # fmt: skip
    return pd.DataFrame(rows, columns=["site", "sensor", "ts", "value"])


def test_the_csv_route_forecasts_independent_series_sent_in_part_or_ending_apart(tmp_path, capsys):
    """A model of independent series keyed by site and sensor: an upload of 3 of its 4 series, or of series
    ending at their own hours, is forecast each after its own last reading, as the records route and
    `forecaster predict` do (it was refused as 'expected the model's 4 columns' and as a non-finite value
    on a line of the pivoted table that the file does not have)."""
    from test_service import serving

    pairs = [(site, sensor) for site in ("north", "south") for sensor in ("temp", "hum")]
    models = tmp_path / "models"
    _readings({pair: (0, 200) for pair in pairs}).to_csv(tmp_path / "train.csv", index=False)
    train = ["train", "--csv", str(tmp_path / "train.csv"), "--id-col", "site,sensor", "--channels",
             "independent", "--model", "naive", "--horizon", "3", "--input-size", "12", "--no-progress",
             "--out", str(models / "sensors")]  # fmt: skip
    assert main(train) == 0
    three = _readings({pair: (0, 24) for pair in pairs[:3]})
    apart = _readings(dict(zip(pairs, [(0, 30), (6, 24), (0, 24), (3, 40)], strict=True)))
    with serving(models) as client:  # --max-rows 400
        for sent in (three, apart):
            upload = client.post("/v1/models/sensors/forecast.csv",
                                 files={"file": ("s.csv", sent.to_csv(index=False))})  # fmt: skip
            assert upload.status_code == 200, upload.text
            answer = pd.read_csv(io.StringIO(upload.text))
            assert list(answer.columns) == ["site", "sensor", "ts", "naive"]
            for (site, sensor), rows in sent.groupby(["site", "sensor"], sort=False):
                got = answer[(answer["site"] == site) & (answer["sensor"] == sensor)]
                last = rows["ts"].iloc[-1]
                hours = [str(last + pd.Timedelta(hours=k)) for k in (1, 2, 3)]
                assert got["ts"].tolist() == hours and got["naive"].tolist() == [rows["value"].iloc[-1]] * 3
            assert len(answer) == 3 * sent[["site", "sensor"]].drop_duplicates().shape[0]
            sent.to_csv(tmp_path / "sent.csv", index=False)  # as `forecaster predict` writes, byte for byte
            predict = ["predict", "--model", str(models / "sensors"), "--csv", str(tmp_path / "sent.csv"),
                       "--output", str(tmp_path / "predicted.csv")]  # fmt: skip
            assert main(predict) == 0 and (tmp_path / "predicted.csv").read_text() == upload.text
            count = sent[["site", "sensor"]].drop_duplicates().shape[0]  # not the dates of all (4 apart)
            assert f"forecast of 3 steps of {count} series ({3 * count} rows)" in capsys.readouterr().out
        said = json.loads(upload.headers["forecaster-notes"])  # the series ending apart, as predict says
        assert any("'south/temp' (2000-01-01 23:00:00) end(s) before the last row" in note for note in said)

        def post(rows: pd.DataFrame):
            upload = {"file": ("s.csv", rows.to_csv(index=False))}
            return client.post("/v1/models/sensors/forecast.csv", files=upload)

        said = json.loads(post(three).headers["forecaster-notes"])  # told, as the records route tells it
        assert "no rows of series 'south/hum' that model 'sensors' learned: forecast the 3 others" in said[0]
        refused = post(_readings({pairs[0]: (0, 401)}))  # --max-rows per series, as the micro-batched path
        assert refused.status_code == 422 and "expected at most 400 rows per series, got 401" in refused.text


def test_series_a_model_lacks_are_left_out_before_the_table_is_pivoted(tmp_path, monkeypatch):
    """Rows of 3,000 one-row series the model has not learned, each at its own hour, beside its own: pivoted
    first, they made a table of 3,000 x 3,000 (12,000 such rows took 2.5 GB in the service)."""
    from forecaster.data import panels

    model = Forecaster("naive", horizon=3, input_size=12).fit(
        _readings({("north", "temp"): (0, 200)}), id_col="site,sensor", date_col="ts", target_col="value"
    )
    pivoted = []
    monkeypatch.setattr(panels, "pivot_long", lambda raw, *args, pivot=panels.pivot_long, **options: (
        pivoted.append(raw[args[0]].nunique()) or pivot(raw, *args, **options)))  # fmt: skip
    strangers = _readings({(f"x{k}", "y"): (k, 1) for k in range(3000)})
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        forecast = model.predict(pd.concat([_readings({("north", "temp"): (0, 24)}), strangers]))
    assert pivoted and max(pivoted) == 1 and forecast["naive"].tolist() == [13.0] * 3
    note = "left out series 'x0/y', 'x1/y', 'x2/y', 'x3/y', 'x4/y' and 2995 more: not among the targets"
    assert note in " ".join(str(item.message) for item in said)


def test_rows_without_the_id_column_or_of_no_series_of_the_model_are_refused_in_one_line(tmp_path):
    """Rows sent to a model keyed by unique_id that lack the column, or hold none of its series: the
    service answered 500 (a KeyError, then an empty table's first date), predict an internal error. A row
    without its id was read as a series 'nan', left out, and its series forecast from the row before."""
    from test_service import serving

    hours = pd.date_range("2024-01-01", periods=40, freq="h")
    rows = pd.concat([pd.DataFrame({"unique_id": key, "ds": hours, "y": np.arange(40.0) + k})
                      for k, key in enumerate(("A", "B"))])  # fmt: skip
    Forecaster("naive", horizon=3, input_size=12).fit(rows).save(tmp_path / "models" / "keyed")
    recent = rows.groupby("unique_id").tail(12).astype({"ds": str})
    cases = {
        "long format needs columns 'unique_id', 'ds' and 'y'; missing 'unique_id'":
            recent.drop(columns="unique_id"),
        "no rows of the series 'A', 'B' in column 'unique_id', only of 'Z'; expected rows of those series":
            recent.assign(unique_id="Z"),
        "empty series id in column 'unique_id'":
            recent.assign(unique_id=recent["unique_id"].astype(object).where(np.arange(24) != 11, None)),
    }  # fmt: skip
    with serving(tmp_path / "models") as client:
        for said, sent in cases.items():
            records = client.post("/v1/models/keyed/forecast", json={"data": sent.to_dict(orient="records")})
            csv = {"file": ("r.csv", sent.to_csv(index=False))}
            upload = client.post("/v1/models/keyed/forecast.csv", files=csv)
            for answer in (records, upload):
                assert answer.status_code == 422 and said in answer.json()["message"], answer.text
            with pytest.raises(DataError, match=re.escape(said)):
                Forecaster.load(tmp_path / "models" / "keyed").predict(sent)


def test_a_series_named_as_the_time_column_is_refused_in_one_line(tmp_path):
    """An id 'ds' beside the time column 'ds' was an internal error (pandas: "cannot insert ds, already
    exists")."""
    rows = pd.DataFrame({"unique_id": ["A"] * 30 + ["ds"] * 30, "y": 1.0,
                         "ds": list(pd.date_range("2024-01-01", periods=30, freq="h")) * 2})  # fmt: skip
    rows.to_csv(tmp_path / "long.csv", index=False)
    with pytest.raises(DataError, match=r"long.csv: line 32: series id 'ds' is the name of the time column; "
                       "expected ids other than the time column's name"):  # fmt: skip
        read_csv(tmp_path / "long.csv", id_col="unique_id")


def test_a_long_table_whose_wide_table_would_not_fit_is_refused_before_it_is_built(tmp_path, monkeypatch):
    """Series that share no times make a wide table of series x times cells: refused over the cap, named."""
    from forecaster.data import panels

    monkeypatch.setattr(panels, "MAX_PIVOT_CELLS", 2_000)
    _readings({(f"s{k}", "t"): (k, 1) for k in range(50)}).to_csv(tmp_path / "apart.csv", index=False)
    with pytest.raises(DataError, match=r"apart.csv: 50 series over 50 distinct times would make a table of "
                       r"2,500 cells; expected at most 2,000"):  # fmt: skip
        read_csv(tmp_path / "apart.csv", id_col="site,sensor", target_col="value", channels="independent")
    _readings({(f"s{k}", "t"): (0, 40) for k in range(50)}).to_csv(tmp_path / "shared.csv", index=False)
    assert len(read_csv(tmp_path / "shared.csv", id_col="site,sensor").columns) == 50  # 2,000 cells


def test_a_series_named_as_its_id_column_trains_from_the_command_line(tmp_path):
    """A series whose id is its id column's name ('kind' among the kinds): training ended in an internal
    error after the bundle was written (the series' names were looked up as a DataFrame's column)."""
    rows = pd.DataFrame({"kind": np.repeat(["kind", "other"], 40), "ds": list(pd.date_range("2024-01-01",
                         periods=40, freq="D")) * 2, "y": np.tile(np.arange(40.0), 2)})  # fmt: skip
    rows.to_csv(tmp_path / "long.csv", index=False)
    train = ["train", "--csv", str(tmp_path / "long.csv"), "--id-col", "kind", "--model", "naive",
             "--horizon", "2", "--input-size", "4", "--no-progress", "--out", str(tmp_path / "m")]
    assert main(train) == 0
    assert Forecaster.load(tmp_path / "m").bundle.data.columns == ["kind", "other"]


@pytest.mark.parametrize(("cell", "said"), [("abc", "is text where numbers are expected"),
                                             ("inf", "is a value too large for a float")])  # fmt: skip
def test_a_long_tables_bad_cell_is_named_by_its_file_line_and_series(tmp_path, cell, said):
    """After pivoting, the line was counted by time ('line 32' for a cell on file line 62)."""
    rows = _readings({("north", "temp"): (0, 30), ("south", "temp"): (0, 40)})
    rows["value"] = rows["value"].astype(object)
    rows.loc[60, "value"] = cell  # the 31st reading of south/temp: file line 62
    rows.to_csv(tmp_path / "long.csv", index=False)
    with pytest.raises(DataError, match=rf"long.csv: line 62: '{cell}' of series 'south/temp' in column "
                       rf"'value' {said} \(1 cell\(s\) in total\)"):  # fmt: skip
        read_csv(tmp_path / "long.csv", id_col="site,sensor")


def test_kaggle_panels_keyed_by_numbered_stores_and_items_are_found(tmp_path):
    """Kaggle's store-item demand (date, store, item, sales) and Walmart's (Store, Dept, Date, Weekly_Sales,
    IsHoliday): ids written as numbers were not taken for keys (refused as unsorted dates); a holiday flag
    the date determines is no value, nor a column numbering the rows."""
    days = pd.date_range("2016-01-01", periods=60, freq="D")
    rows = [(day, store, item, 10 * store + item + k % 7) for store in (1, 2) for item in (1, 2, 3)
            for k, day in enumerate(days)]  # fmt: skip
    pd.DataFrame(rows, columns=["date", "store", "item", "sales"]).to_csv(tmp_path / "train.csv", index=False)
    series = read_csv(tmp_path / "train.csv")
    assert series.columns == ["1/1", "1/2", "1/3", "2/1", "2/2", "2/3"] and series.freq == "D"
    np.testing.assert_array_equal(series.frame["2/3"], 23.0 + np.arange(60) % 7)
    weeks = pd.date_range("2010-02-05", periods=30, freq="W-FRI")
    rows = [(store, dept, week, 1000.0 * store + dept + k, k % 13 == 0) for store in (1, 2) for dept in (1, 2)
            for k, week in enumerate(weeks)]  # fmt: skip
    walmart = pd.DataFrame(rows, columns=["Store", "Dept", "Date", "Weekly_Sales", "IsHoliday"])
    walmart["Brent"] = 60.0 + np.tile(np.arange(30.0), 4)  # a price the date alone determines, as IsHoliday
    walmart.to_csv(tmp_path / "walmart.csv", index=False)
    said = r"left out column\(s\) 'IsHoliday', 'Brent': the same in every series at each date"  # unsaid
    with pytest.warns(DataQualityWarning, match=said):
        series = read_csv(tmp_path / "walmart.csv")
    assert series.columns == ["1/1", "1/2", "2/1", "2/2"] and series.options.target_col == "Weekly_Sales"
    # store-sales' train.csv numbers its rows in an `id` column: no variable of every series (it was
    # forecast), and its series are a numbered store's family ('BREAD/BAKERY'): refused as duplicate dates
    rows = [(k, day, store, family, float(k % 5)) for k, (day, store, family) in
            enumerate((day, store, family) for day in days for store in (1, 2)
                      for family in ("AUTOMOTIVE", "BREAD/BAKERY"))]  # fmt: skip
    sales = pd.DataFrame(rows, columns=["id", "date", "store_nbr", "family", "sales"])
    sales.to_csv(tmp_path / "store_sales.csv", index=False)
    series = read_csv(tmp_path / "store_sales.csv")
    assert series.options.id_col == "store_nbr,family" and series.options.target_col == "sales"
    assert series.columns == ["1/AUTOMOTIVE", "1/BREAD\u2215BAKERY", "2/AUTOMOTIVE", "2/BREAD\u2215BAKERY"]


def test_the_note_of_series_not_sent_names_a_few_and_counts_the_rest():
    """A model of 300 independent series sent one: the note listed all 299 others (2.7 KB; 27 KB of 3,000)."""
    model = Forecaster("naive", horizon=2, input_size=4).fit(
        _readings({(f"s{k}", "t"): (0, 12) for k in range(300)}), id_col="site,sensor", date_col="ts",
        target_col="value", channels="independent",
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DataQualityWarning)
        model.predict(_readings({("s0", "t"): (0, 12)}))
    note = " ".join(str(item.message) for item in said)
    assert "no rows of series 's1/t', 's2/t', 's3/t', 's4/t', 's5/t' and 294 more that model" in note
    assert len(note) < 500


@pytest.mark.parametrize("id_col", [None, "geo,na_item"])
def test_an_export_whose_rows_are_in_no_order_is_read_as_the_sorted_one(tmp_path, id_col):
    """ONS's CMD downloads and Redfin's tracker list their long rows in no order: each row names its series
    and time, so the table is the same as the sorted file's (it was refused as 'not sorted'), with a note."""
    sorted_file = _export(tmp_path / "namq.csv")
    shuffled = pd.read_csv(sorted_file).sample(frac=1.0, random_state=0)
    shuffled.to_csv(tmp_path / "shuffled.csv", index=False)
    options = {} if id_col is None else {"id_col": id_col}
    with pytest.warns(DataQualityWarning, match="sorted the rows by 'TIME_PERIOD': the table lists its"):
        series = read_csv(tmp_path / "shuffled.csv", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        expected = read_csv(sorted_file, **options)
    assert series.freq == "QS-JAN" and len(series) == 40
    pd.testing.assert_frame_equal(series.frame[expected.frame.columns], expected.frame)


def test_a_shuffled_export_whose_times_do_not_parse_is_refused_in_the_readers_words(tmp_path):
    frame = pd.read_csv(_export(tmp_path / "namq.csv")).sample(frac=1.0, random_state=0)
    frame.loc[frame.index[3], "TIME_PERIOD"] = "sometime"
    frame.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(DataError, match="'sometime'"):
        read_csv(tmp_path / "bad.csv", id_col="geo,na_item")


def test_predict_counts_each_series_steps_where_wide_series_end_apart(tmp_path, capsys):
    """Two yearly columns, one ending two years early: the written table has a row per date of either (5),
    each series 3 steps; predict said "5 steps"."""
    years = pd.date_range("1980-01-01", periods=40, freq="YS").year
    frame = pd.DataFrame({"year": years, "a": np.arange(40.0), "b": np.arange(40.0) * 2})
    frame.loc[38:, "b"] = np.nan
    frame.to_csv(tmp_path / "two.csv", index=False)
    out = tmp_path / "model"
    train = ["train", "--csv", str(tmp_path / "two.csv"), "--model", "naive", "--horizon", "3",
             "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(train) == 0
    capsys.readouterr()
    predict = ["predict", "--model", str(out), "--csv", str(tmp_path / "two.csv"), "--output",
               str(tmp_path / "forecast.csv")]  # fmt: skip
    assert main(predict) == 0
    assert "forecast of 3 steps x 2 columns (5 rows: the series end apart)" in capsys.readouterr().out
    assert len(pd.read_csv(tmp_path / "forecast.csv")) == 5


def test_a_long_tables_series_are_forecast_whatever_their_ids_say():
    """Series of a long table named 'ID', 'Penn Station', 'year' or 'latitude', holding record numbers, the
    years or one value: each is a series its id names, none a header of a wide file's row numbers, dates or
    coordinates (they were left out as such, with a note that called them columns)."""
    months = pd.date_range("2021-01-01", periods=40, freq="MS")
    values = {"ID": np.arange(1.0, 41.0), "Penn Station": np.arange(100.0, 140.0),
              "year": months.year.to_numpy(float), "latitude": np.full(40, 5.0), "B": np.linspace(3, 9, 40)}
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": months, "y": series})
                       for name, series in values.items()])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)
        series = read_frame(frame, id_col="unique_id")
    assert sorted(series.columns) == sorted(values)
    np.testing.assert_array_equal(series.frame["year"].to_numpy(), months.year.to_numpy(float))


@pytest.mark.parametrize("cell", ["", "#N/A", "$5"])
@pytest.mark.parametrize("spans", ["shared", "own"])
def test_a_long_file_with_one_unreadable_date_names_its_line(tmp_path, cell, spans):
    """One blank date in the first of 3 series compared NaN with text while checking their times line up: an
    internal error (a 500 from the service, h45 #1), shared times or each series' own. Now the reader's line
    names the cell, as for a wide file."""
    days, rng = pd.date_range("2023-01-01", periods=40).strftime("%Y-%m-%d"), np.random.default_rng(45)
    rows = [(name, day, rng.normal()) for name in ("a", "b", "c") for k, day in enumerate(days)
            if spans == "shared" or k >= {"a": 0, "b": 3, "c": 6}[name]]  # fmt: skip
    frame = pd.DataFrame(rows, columns=["unique_id", "ds", "y"])
    frame.loc[20, "ds"] = cell  # the first series', which the others are compared with
    path = tmp_path / "long.csv"
    frame.to_csv(path, index=False)
    said = {"": "(empty)", "#N/A": "(empty)", "$5": "'$5'"}[cell]
    with pytest.raises(DataError, match=re.escape(f"date column 'ds' has 1 value(s) that are not timestamps: "
                                                  f"line 22 {said}; expected a timestamp in every row")):
        read_csv(path)
    frame.loc[20, "ds"] = None
    with pytest.raises(DataError, match="row 20 \\(empty\\); expected a timestamp in every row"):
        read_frame(frame)


@pytest.mark.parametrize("id_col", [None, "Country"])
def test_a_panel_whose_ids_are_merged_cells_carries_each_id_down(tmp_path, id_col):
    """A spreadsheet's panel writes each country once, on its first row (merged cells down): refused as
    unsorted, and with `--id-col Country` as an empty id in a column 'Country,variable' (h100 F11)."""
    lines = ["Country,Quarter,GDP"] + [
        f"{country if k == 0 else ''},{quarter},{base + k}"
        for country, base in (("France", 1000), ("Germany", 2000)) for k, quarter in enumerate(QUARTERS)
    ]  # fmt: skip
    path = tmp_path / "panel.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(DataQualityWarning, match="carried each label in column 'Country' down to the rows"):
        series = read_csv(path, id_col=id_col)
    assert series.freq == "QS-JAN" and len(series) == 40
    assert [name.split("/")[0] for name in series.columns] == ["France", "Germany"]
    np.testing.assert_array_equal(series.frame.iloc[-1], [1039.0, 2039.0])

"""Covariates: a future covariate that drives the target is used, past covariates are inputs only, calendar
covariates need no file, and the CLI, the API and the service give the same forecast."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from test_service import serving

from forecaster import Forecaster
from forecaster.cli import main
from forecaster.data import DataQualityWarning
from forecaster.errors import DataError
from forecaster.models.assembly import stored

HORIZON, INPUT = 12, 48
FAST = {"max_epochs": 5, "lr": 1e-2, "seed": 0}


@pytest.fixture(scope="module")
def driven() -> pd.DataFrame:
    """y = 2 f + a slow wave + noise, with f white noise: unpredictable from the past, known ahead."""
    rng = np.random.default_rng(0)
    n = 3000
    f = rng.normal(size=n)
    y = 2.0 * f + np.sin(np.arange(n) / 10.0) + 0.1 * rng.normal(size=n)
    stamps = pd.date_range("2020-01-01", periods=n, freq="h")
    return pd.DataFrame({"date": stamps.astype(str), "y": y, "f": f, "x": rng.normal(size=n)})


@pytest.fixture(scope="module")
def ahead(driven: pd.DataFrame) -> pd.DataFrame:
    start = pd.Timestamp(driven["date"].iloc[-1]) + pd.Timedelta(hours=1)
    stamps = pd.date_range(start, periods=HORIZON, freq="h").astype(str)
    return pd.DataFrame({"date": stamps, "f": np.random.default_rng(1).normal(size=HORIZON)})


@pytest.fixture(scope="module")
def with_future(driven) -> Forecaster:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Forecaster("nlinear", horizon=HORIZON, input_size=INPUT, **FAST).fit(
            driven, targets=["y"], future_covariates=["f"]
        )


def test_a_future_covariate_that_drives_the_target_is_used(driven, with_future):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = Forecaster("nlinear", horizon=HORIZON, input_size=INPUT, **FAST).fit(driven, targets=["y"])
    covariate, plain, naive = with_future.metrics["mse"], alone.metrics["mse"], alone.metrics["naive"]["mse"]
    assert covariate < 0.1 * plain and plain < naive, (covariate, plain, naive)
    # The map from the covariate's value ahead (and its change) to the target carries the effect: 2 f in
    # original units is 2 std(f) / std(y) on the standardized scale.
    weights = stored(with_future.bundle.model).head.weight.detach().sum().item()
    assert weights == pytest.approx(2.0 * driven["f"].std() / driven["y"].std(), rel=0.15)


def test_future_rows_through_the_cli_the_api_and_the_service(driven, ahead, with_future, tmp_path):
    history, future, bundle = tmp_path / "history.csv", tmp_path / "future.csv", tmp_path / "bundle"
    driven.to_csv(history, index=False)
    ahead.to_csv(future, index=False)
    with_future.save(bundle)
    out = tmp_path / "forecast.csv"
    assert main(["predict", "--model", str(bundle), "--csv", str(history), "--future-csv", str(future),
                 "--level", "80", "--output", str(out)]) == 0  # fmt: skip
    written = pd.read_csv(out, index_col=0)
    api = Forecaster.load(bundle).predict(driven, future_df=ahead, level=[80])
    np.testing.assert_array_equal(written["y"].to_numpy(), api["y"].to_numpy())
    recent = driven.iloc[-INPUT:]
    body = {
        "timestamps": recent["date"].tolist(),
        "values": {"y": recent["y"].tolist(), "f": recent["f"].tolist()},
        "future": {"f": ahead["f"].tolist()},
        "level": [80],
    }
    # the Open Inference Protocol: the horizon's covariates as a second tensor, `future` [B, horizon, F]
    rows = recent[["y", "f"]].to_numpy()
    tensors = [{"name": "history", "shape": [1, *rows.shape], "datatype": "FP64",
                "data": rows.ravel().tolist()},
               {"name": "future", "shape": [1, HORIZON, 1], "datatype": "FP64",
                "data": ahead["f"].tolist()}]  # fmt: skip
    v2 = {"inputs": tensors, "parameters": {"level": [80]}}
    with serving(tmp_path) as client:
        answer = client.post("/v1/models/bundle/forecast", json=body)
        missing = client.post("/v1/models/bundle/forecast", json={**body, "future": None})
        metadata = client.get("/v2/models/bundle").json()
        inferred = client.post("/v2/models/bundle/infer", json=v2)
        alone = client.post("/v2/models/bundle/infer", json={"inputs": tensors[:1]})
        upload = {"file": ("recent.csv", recent[["date", "y", "f"]].to_csv(index=False).encode())}
        uploaded = client.post("/v1/models/bundle/forecast.csv", files=upload)
    assert answer.status_code == 200, answer.text
    np.testing.assert_array_equal(answer.json()["forecast"]["y-hi-80"], api["y-hi-80"].to_numpy())
    assert missing.status_code == 422 and "future covariates ['f']" in missing.text
    assert metadata["inputs"][1] == {"name": "future", "datatype": "FP32", "shape": [-1, HORIZON, 1]}
    assert inferred.status_code == 200, inferred.text
    outputs = {output["name"]: output["data"] for output in inferred.json()["outputs"]}
    np.testing.assert_allclose(outputs["forecast"], api["y"].to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(outputs["hi-80"], api["y-hi-80"].to_numpy(), rtol=1e-6)
    assert alone.status_code == 422 and "expected an input tensor 'future' of shape [B, 12, 1]" in alone.text
    assert uploaded.status_code == 422, uploaded.text
    assert "send them as 'future' to /v1/models/bundle/forecast" in uploaded.text


def test_the_forecast_needs_the_future_rows(driven, with_future, ahead, tmp_path, capsys):
    with pytest.raises(DataError, match=r"needs the values of its future covariates \['f'\]"):
        with_future.predict(driven)
    with pytest.raises(DataError, match="the future rows lack"):
        with_future.predict(driven, future_df=ahead.iloc[1:])
    in_utc = ahead.assign(date=ahead["date"] + "Z")  # the same steps, but in UTC: not the history's
    with pytest.raises(DataError, match="timestamps are in UTC, the history's without a time zone"):
        with_future.predict(driven, future_df=in_utc)
    with pytest.raises(DataError, match="missing future covariate.s. 'f' that model .* needs over the"):
        with_future.predict(driven, future_df=ahead[["date"]])  # was an "unknown target column" (h35)
    with pytest.raises(DataError, match=r"duplicate timestamp .*; expected one row per time step$"):
        twice = pd.concat([ahead.iloc[[0]], ahead.iloc[[0]].assign(f=5.0), ahead.iloc[1:]])
        with_future.predict(driven, future_df=twice)  # told of id_col and long tables (h35)
    column = ahead.set_index(pd.to_datetime(ahead["date"]))["f"]  # one covariate's Series, as fit takes one
    expected = with_future.predict(driven, future_df=ahead)
    pd.testing.assert_frame_equal(with_future.predict(driven, future_df=column), expected)
    for given in (column.to_numpy(), column.to_dict()):  # taken for a path: pathlib's TypeError (h82 F4)
        with pytest.raises(DataError, match=f"^future_df: expected a pandas DataFrame or Series, got "
                           f"{type(given).__name__}$"):  # fmt: skip
            with_future.predict(driven, future_df=given)
    path = tmp_path / "bundle"
    with_future.save(path)
    driven.to_csv(tmp_path / "history.csv", index=False)
    assert main(["predict", "--model", str(path), "--csv", str(tmp_path / "history.csv")]) == 2
    assert "--future-csv" in capsys.readouterr().err


def test_future_rows_are_held_to_the_history_s_limits(driven, ahead, with_future, tmp_path, capsys):
    """Future rows were neither refused beyond what train takes nor noted far from training, as the history
    is: 1e30 was forecast as 1e30, 1e5 of a covariate of spread 1 unsaid, and 1e300 blamed on the history
    (h75 F4). The CLI, the API and the service refuse and note them alike, naming the future rows."""
    far, huge = ahead.copy(), ahead.copy()
    far.loc[2, "f"], huge.loc[2, "f"] = 1e5, 1e30
    refused = (f"at {ahead['date'][2]}: value 1e+30 in future covariate 'f'; expected numbers of |value| <= "
               "1.84e+19, as train takes")  # fmt: skip
    noted = f"note: future covariate 'f' on {ahead['date'][2]} holds 1e+05, "
    with pytest.raises(DataError) as caught:
        with_future.predict(driven, future_df=huge)
    assert str(caught.value) == f"future_df: {refused}"
    with pytest.warns(DataQualityWarning, match=re.escape(f"future_df: {noted}")):
        with_future.predict(driven, future_df=far)
    with_future.save(path := tmp_path / "bundle")
    driven.to_csv(history := tmp_path / "history.csv", index=False)
    for name, rows in (("huge.csv", huge), ("far.csv", far)):
        rows.to_csv(tmp_path / name, index=False)
    predict = ["predict", "--model", str(path), "--csv", str(history), "--output", str(tmp_path / "out.csv")]
    assert main([*predict, "--future-csv", str(tmp_path / "huge.csv")]) == 2
    assert capsys.readouterr().err == f"forecaster: error: {tmp_path / 'huge.csv'}: {refused}\n"
    with pytest.warns(DataQualityWarning, match=re.escape(f"{tmp_path / 'far.csv'}: {noted}")):
        assert main([*predict, "--future-csv", str(tmp_path / "far.csv")]) == 0
    recent = driven.iloc[-INPUT:]
    values = {"timestamps": recent["date"].tolist(), "values": {"y": recent["y"].tolist(),
              "f": recent["f"].tolist()}, "future": {"f": huge["f"].tolist()}}  # fmt: skip
    records = {"data": recent.drop(columns="x").to_dict(orient="records")}
    tensors = [{"name": "history", "shape": [1, INPUT, 2], "datatype": "FP64",
                "data": recent[["y", "f"]].to_numpy().ravel().tolist()},
               {"name": "future", "shape": [1, HORIZON, 1], "datatype": "FP64", "data": huge["f"].tolist()}]
    with serving(tmp_path) as client:
        route = "/v1/models/bundle/forecast"
        positional = client.post(route, json=values)
        refusal = client.post(route, json={**records, "future": huge.to_dict("records")})
        answer = client.post(route, json={**records, "future": far.to_dict("records")})
        inferred = client.post("/v2/models/bundle/infer", json={"inputs": tensors})
    for response in (positional, refusal):
        assert response.status_code == 422, response.text
        assert response.json()["details"] == [{"field": "future", "message": refused}]
    assert inferred.status_code == 422, inferred.text  # no timestamps: the step's number, 48 rows on
    assert inferred.json()["message"].endswith(refused.replace(f"at {ahead['date'][2]}", "at step 50"))
    assert answer.status_code == 200, answer.text
    assert [note for note in answer.json()["notes"] if note.startswith(noted)], answer.json()["notes"]


def test_past_covariates_are_inputs_and_not_forecast(driven, ahead, tmp_path):
    quick = {"max_epochs": 1, "limit_train_batches": 2}  # the columns asserted, not what was learned
    model = Forecaster("s3attention", horizon=HORIZON, input_size=INPUT, **quick).fit(
        driven, targets=["y"], past_covariates=["x"], future_covariates=["f"]
    )
    config = json.loads((model.save(tmp_path / "bundle") / "config.json").read_text())
    assert config["model"]["config"]["n_channels"] == 3 and len(config["scaler"]["mean"]) == 3
    table = model.predict(future_df=ahead)
    assert list(table.columns) == ["y"] and len(table) == HORIZON


def test_calendar_covariates_need_no_file_and_the_service_computes_them(driven, tmp_path):
    model = Forecaster("nlinear", horizon=HORIZON, input_size=INPUT, max_epochs=1).fit(
        driven[["date", "y"]], calendar=True
    )
    names = model.bundle.data.future_columns
    assert names[:2] == ["calendar_hour_sin", "calendar_hour_cos"] and len(names) == 6
    table = model.predict(level=[80])
    model.save(tmp_path / "calendar")
    recent = driven.iloc[-INPUT:]
    body = {"timestamps": recent["date"].tolist(), "values": {"y": recent["y"].tolist()}, "level": [80]}
    tensor = {"name": "history", "shape": [1, INPUT, 1], "datatype": "FP64", "data": recent["y"].tolist()}
    with serving(tmp_path) as client:
        answer = client.post("/v1/models/calendar/forecast", json=body)
        ready = client.get("/v2/models/calendar/ready").json()
        inferred = client.post("/v2/models/calendar/infer", json={"inputs": [tensor]})
    assert answer.status_code == 200, answer.text
    np.testing.assert_array_equal(answer.json()["forecast"]["y"], table["y"].to_numpy())
    # v2 carries no dates: not ready, and one line saying where it is answered (it asked for 7 columns, then
    # said calendar covariates need dates)
    assert ready == {"name": "calendar", "ready": False} and inferred.status_code == 422
    assert "forecast it on /v1/models/calendar/forecast" in inferred.text


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"targets": ["y"], "past_covariates": ["y"]}, "given twice"),
        ({"past_covariates": ["x"], "future_covariates": ["x"]}, "given twice"),
        ({"future_covariates": ["nope"]}, "unknown covariate column"),
        ({"calendar": True, "no_date": True}, "calendar covariates need dates"),
    ],
)
def test_covariate_refusals_are_one_line(driven, options, message):
    with pytest.raises(DataError, match=message):
        frame = driven.drop(columns="date") if options.get("no_date") else driven
        Forecaster("naive", horizon=HORIZON, input_size=INPUT).fit(frame, **options)


def test_records_with_future_rows(driven, ahead, with_future, tmp_path):
    with_future.save(tmp_path / "records")
    recent = driven.iloc[-INPUT:][["date", "y", "f"]]
    body = {"data": recent.to_dict(orient="records"), "future": ahead.to_dict(orient="records")}
    with serving(tmp_path) as client:
        answer = client.post("/v1/models/records/forecast", json=body)
        info = client.get("/v1/models/records").json()  # what a client must send: the future's columns
    assert (info["future_covariates"], info["past_covariates"], info["id_col"]) == (["f"], [], None)
    assert answer.status_code == 200, answer.text
    got = pd.DataFrame(answer.json()["forecast"])
    expected = with_future.predict(recent, future_df=ahead)
    assert list(got.columns) == ["date", "y"]
    np.testing.assert_array_equal(got["y"].to_numpy(), expected["y"].to_numpy())


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"horizon": 99}, "horizon"),
        ({"data": [{"date": "2020-01-01", "y": 1.0, "f": 0.0}]}, "data"),
        ({"future": [{"date": "1999-01-01", "f": 0.0}]}, "future"),
        ({"future": []}, "future"),  # "the DataFrame has no rows" was named field data
        ({"future": [{"date": "2099-01-01", "f": None}]}, "future"),
        ({"data": [{"date": "2020-01-01", "y": "x", "f": 0.0}] * 60}, "data"),
    ],
)
def test_bad_records_are_422_naming_the_field(driven, ahead, with_future, tmp_path, change, field):
    with_future.save(tmp_path / "records")
    recent = driven.iloc[-INPUT:][["date", "y", "f"]]
    body = {"data": recent.to_dict(orient="records"), "future": ahead.to_dict(orient="records"), **change}
    with serving(tmp_path) as client:
        answer = client.post("/v1/models/records/forecast", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["details"][0]["field"] == field, answer.json()


def test_cross_validation_takes_each_window_s_future_covariates(driven):
    model = Forecaster("nlinear", horizon=HORIZON, input_size=INPUT, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backtest = model.cross_validation(
            driven, n_windows=4, step_size=HORIZON, targets=["y"], future_covariates=["f"]
        )
    assert (
        list(backtest.columns) == ["unique_id", "date", "cutoff", "nlinear", "y"]
        and len(backtest) == 4 * HORIZON
    )
    np.testing.assert_array_equal(backtest["y"].to_numpy(), driven["y"].to_numpy()[-4 * HORIZON :])
    # The covariate is known in every window, so the backtest error is far below the target's variance.
    assert ((backtest["nlinear"] - backtest["y"]) ** 2).mean() < 0.1 * driven["y"].var()

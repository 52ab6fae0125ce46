"""A panel's companion (`artifacts.COMPANION`) on the service's routes that send numbers, not tables: the JSON
`values` route and the Open Inference Protocol accept its series and answer the CSV route's numbers; the
model listings say which series it forecasts."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd

from tests.test_companion import SHORT, _train
from tests.test_service import assert_error, serving


def test_values_and_oip_answer_the_companions_series_as_the_csv_route_and_listings_name_them(
    tmp_path, capsys
):
    model = _train(tmp_path, capsys, trend=True)
    shutil.copytree(model, tmp_path / "served" / "m")
    history = pd.read_csv(tmp_path / "p.csv")
    rows = {name: history.loc[history["id"] == name, "y"].tolist() for name in history["id"].unique()}
    days = history.loc[history["id"] == "short0", "date"].tolist()
    with serving(tmp_path / "served", max_body_bytes=1_000_000) as client:
        upload = {"file": ("p.csv", (tmp_path / "p.csv").read_text(), "text/csv")}
        response = client.post("/v1/models/m/forecast.csv", files=upload, params={"level": 80})
        assert response.status_code == 200, response.text
        answered = pd.read_csv(pd.io.common.StringIO(response.text)).set_index("id")
        listed = client.get("/v1/models").json()["models"][0]
        metadata = client.get("/v2/models/m").json()
        sent = {"values": {name: rows[name] for name in SHORT}, "timestamps": days, "level": [80]}
        values = client.post("/v1/models/m/forecast", json=sent)
        size = listed["input_size"]
        own = {"values": {name: rows[name][-size:] for name in listed["columns"]},
               "timestamps": history.loc[history["id"] == "long0", "date"].tolist()[-size:]}
        batch = client.post("/v1/models/m/forecast", json={"inputs": [own, sent]})
        short_size = listed["companion"]["input_size"]
        window = np.array([rows[name][-short_size:] for name in SHORT]).T
        own_window = np.array([rows[name][-size:] for name in listed["columns"]]).T
        tensors = [{"name": "history", "shape": [1, *own_window.shape], "datatype": "FP64",
                    "data": own_window.ravel().tolist()},
                   {"name": "short", "shape": [1, *window.shape], "datatype": "FP64",
                    "data": window.ravel().tolist()}]  # fmt: skip
        both = client.post("/v2/models/m/infer", json={"inputs": tensors, "parameters": {"level": [80]}})
        alone = client.post("/v2/models/m/infer", json={"inputs": tensors[1:]})
        stranger = {**sent["values"], "nope": rows["short1"]}
        unknown = client.post("/v1/models/m/forecast", json={**sent, "values": stranger})
        longer = [{**tensors[1], "shape": [1, short_size + 1, 2], "data": [1.0] * (2 * short_size + 2)}]
        shaped = client.post("/v2/models/m/infer", json={"inputs": longer})
    crowd = {"inputs": [{**sent, "level": [80, 95]}] * 8}  # 10 numbers each, 80 together
    with serving(tmp_path / "served", max_answer_numbers=60) as client:
        counted = client.post("/v1/models/m/forecast", json=crowd)
    assert_error(counted, 422, "level", "the answer would hold 80 numbers")
    assert listed["companion"] == {"model_name": "drift", "input_size": short_size, "columns": SHORT}
    assert {"name": "short", "datatype": "FP32", "shape": [-1, short_size, 2]} in metadata["inputs"]
    assert {"name": "short-forecast", "datatype": "FP32", "shape": [-1, 1, 2]} in metadata["outputs"]
    assert values.status_code == 200, values.text
    body = values.json()
    expected = [answered.loc[name, "s3attention"] for name in SHORT]
    assert body["timestamps"] == [answered.loc["short0", "date"] + "T00:00:00"]
    assert np.allclose([body["forecast"][name][0] for name in SHORT], expected)
    lower = [answered.loc[name, "s3attention-lo-80"] for name in SHORT]
    assert np.allclose([body["forecast"][f"{name}-lo-80"][0] for name in SHORT], lower)
    assert any("forecast by drift" in note for note in body["notes"]), body["notes"]
    assert batch.status_code == 200, batch.text
    [first, second] = batch.json()["outputs"]
    assert np.allclose(first["forecast"]["long3"], answered.loc["long3", "s3attention"])
    assert second["forecast"] == body["forecast"]
    assert both.status_code == 200, both.text
    outputs = {tensor["name"]: tensor for tensor in both.json()["outputs"]}
    assert set(outputs) == {"forecast", "lo-80", "hi-80", "short-forecast", "short-lo-80", "short-hi-80"}
    assert outputs["short-forecast"]["shape"] == [1, 1, 2]
    assert np.allclose(outputs["short-forecast"]["data"], expected, rtol=1e-6)
    lower = [answered.loc[name, "s3attention-lo-80"] for name in SHORT]
    assert np.allclose(outputs["short-lo-80"]["data"], lower, rtol=1e-6)
    assert np.allclose(outputs["forecast"]["data"][3], answered.loc["long3", "s3attention"], rtol=1e-5)
    assert alone.status_code == 200, alone.text
    assert [tensor["name"] for tensor in alone.json()["outputs"]] == ["short-forecast"]
    assert np.allclose(alone.json()["outputs"][0]["data"], expected, rtol=1e-6)
    assert_error(unknown, 422, "values", "unknown ['nope']; expected some of the series")
    assert_error(shaped, 422, "inputs[0].shape", f"expected shape [B, {short_size}, 2]")

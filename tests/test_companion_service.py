"""A panel's companion (`artifacts.COMPANION`) on the service's routes that send numbers, not tables: the JSON
`values` route and the Open Inference Protocol accept its series and answer the CSV route's numbers; the
model listings say which series it forecasts."""

from __future__ import annotations

import shutil
from functools import partial

import numpy as np
import pandas as pd
from test_companion import SHORT, _rising_in, rising  # noqa: F401  (rising is a fixture)
from test_service import assert_error, serving


def test_values_and_oip_answer_the_companions_series_as_the_csv_route_and_listings_name_them(
    rising, tmp_path  # noqa: F811
):
    model = _rising_in(rising, tmp_path)
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
    assert np.allclose(outputs["short-lo-80"]["data"], lower, rtol=1e-6)
    assert np.allclose(outputs["forecast"]["data"][3], answered.loc["long3", "s3attention"], rtol=1e-5)
    assert alone.status_code == 200, alone.text
    assert [tensor["name"] for tensor in alone.json()["outputs"]] == ["short-forecast"]
    assert np.allclose(alone.json()["outputs"][0]["data"], expected, rtol=1e-6)
    assert_error(unknown, 422, "values", "unknown ['nope']; expected some of the series")
    assert_error(shaped, 422, "inputs[0].shape", f"expected shape [B, {short_size}, 2]")


def test_the_companions_forecasts_stop_when_the_client_hangs_up(rising, tmp_path, monkeypatch):  # noqa: F811
    """A JSON batch naming the companion's series and an OIP `short` tensor are forecast one history at a
    time in a reading thread that a client gone abandons: each history's forecast after it left was still
    made (256 of the model's columns with a companion series: 9 s of forecasts, one at a time, per request
    sent and hung up on), as `routes.unless_client_leaves` says no work may go on."""
    import time

    import anyio
    import httpx
    from test_service_attacks import _request

    from forecaster.artifacts import load_bundle
    from service import companion
    from service.app import create_app
    from service.config import ServiceSettings

    model = _rising_in(rising, tmp_path)
    shutil.copytree(model, tmp_path / "served" / "m")
    history = pd.read_csv(tmp_path / "p.csv")
    rows = history.loc[history["id"] == "short0", "y"].tolist()
    days = history.loc[history["id"] == "short0", "date"].tolist()
    made, answered = [], companion.answered_apart

    def slowly(*args, **options):  # a history's forecast taking 0.1 s, as 256 columns' do on a busy CPU
        made.append(time.sleep(0.1))
        return answered(*args, **options)

    monkeypatch.setattr(companion, "answered_apart", slowly)
    app = create_app(ServiceSettings(models_dir=tmp_path / "served", max_inputs=16))
    size = load_bundle(model).companion.data.input_size
    window = {"name": "short", "shape": [16, size, 2], "datatype": "FP64", "data": rows[-size:] * 32}
    batch = {"inputs": [{"values": {"short0": rows}, "timestamps": days}] * 16}
    requests = [httpx.Request("POST", "http://service/v1/models/m/forecast", json=batch),
                httpx.Request("POST", "http://service/v2/models/m/infer", json={"inputs": [window]})]

    async def hung_up_on(scope: dict, body: bytes) -> int:
        """The forecasts made for a client that sends `body`, then hangs up 0.3 s later."""
        sent = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict:
            if sent:
                return sent.pop(0)
            await anyio.sleep(0.3)
            return {"type": "http.disconnect"}

        async def send(message: dict) -> None:
            assert message.get("status", 499) == 499, message  # none refused, none answered: it left

        made.clear()
        await app(scope, receive, send)
        await anyio.sleep(2.5)  # 16 histories' forecasts would be made by now
        return len(made)

    async def scenario() -> list[int]:
        async with app.router.lifespan_context(app):
            return [await hung_up_on(*_request(each)) for each in requests]

    counts = anyio.run(scenario)  # JSON's, OIP's
    assert all(0 < count < 8 for count in counts), counts


class _Counted(str):
    """A series name that counts the comparisons made with it: a name looked up in a list is compared with
    every series, in a set with none but its hash's."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_a_request_of_many_names_is_checked_in_comparisons_linear_in_them(monkeypatch):
    """A JSON request's names are as many as its bytes hold (500,000 in 8 MB): each was looked for in a list
    of the model's (or the companion's) series, on the event loop (`held_by_companion`, `prepare_json`) or in
    a reading thread holding the GIL (`forecast_values`): 6.6 s of the event loop for 1,000 such series.
    (h132) Each check now compares a name with at most a few series, not with each of them."""
    from types import SimpleNamespace

    import pytest

    from forecaster.history import held_by_companion
    from service import companion
    from service.errors import ApiError
    from service.inputs import prepare_json

    held, own = [_Counted(f"short{k}") for k in range(300)], [_Counted(f"long{k}") for k in range(300)]
    data = SimpleNamespace(columns=own, past_covariates=None, future_covariates=None)
    bundle = SimpleNamespace(data=data, companion=SimpleNamespace(data=SimpleNamespace(columns=held)))
    monkeypatch.setattr(companion, "forecast_series", lambda bundle: own + held)
    names = 3000
    request = SimpleNamespace(values={f"k{k}": [] for k in range(names)}, future=None)
    served = SimpleNamespace(bundle=bundle, name="m")
    counts = []
    _Counted.compared = 0
    assert not held_by_companion(bundle, request.values)
    counts.append(_Counted.compared)
    for check in (partial(prepare_json, bundle, request, prefix="", max_rows=1),
                  partial(companion.forecast_values, served, request, [], prefix="", max_rows=1)):
        _Counted.compared = 0
        with pytest.raises(ApiError, match="unknown"):
            check()
        counts.append(_Counted.compared)
    assert max(counts) <= 2 * (names + len(own) + len(held)), counts  # a list's: names x series, 900,000


def test_a_refusal_of_many_unknown_names_lists_a_few_and_counts_the_rest(rising, tmp_path):  # noqa: F811
    """A request of 50,000 junk names was refused listing them until the message was cut at its bound (its
    head and tail, 639,227 characters cut between): a few are named now and the rest counted, on the model's
    route and the companion's."""
    model = _rising_in(rising, tmp_path)
    shutil.copytree(model, tmp_path / "served" / "m")
    junk = {f"junk{k}": [1.0] * 12 for k in range(50_000)}
    with serving(tmp_path / "served", max_body_bytes=10_000_000) as client:
        for extra in ({}, {SHORT[0]: [1.0] * 12}):
            answer = client.post("/v1/models/m/forecast", json={"values": {**junk, **extra}})
            assert answer.status_code == 422 and len(answer.content) < 5_000, len(answer.content)
            assert "unknown ['junk0', 'junk1', 'junk2', 'junk3', 'junk4' and 49995 more]" in answer.text


def test_a_future_tensor_sent_with_the_companions_alone_is_refused_naming_why():
    """OIP `short` alone with a `future` tensor (covariates of `history` histories, none sent): the early
    return for `short` alone dropped it unread and answered as though it were not there (h132 L3)."""
    from types import SimpleNamespace

    import pytest

    from service.errors import ApiError
    from service.oip import RequestInput, _histories

    data = SimpleNamespace(future_covariates=["price"], horizon=1, input_size=4, input_columns=["y", "price"])
    bundle = SimpleNamespace(data=data, companion=SimpleNamespace(data=SimpleNamespace(columns=SHORT)))
    short = RequestInput(name="short", shape=[1, 2, 2], datatype="FP64", data=[1.0, 2.0, 3.0, 4.0])
    future = RequestInput(name="future", shape=[1, 1, 1], datatype="FP64", data=[5.0])
    served = SimpleNamespace(bundle=bundle, name="m")
    assert _histories(served, [short], max_inputs=4) == ([], "inputs[0].data", 0)  # alone: read apart
    with pytest.raises(ApiError, match="a 'future' tensor holds the covariates of the 'history' histories, "
                       "and none was sent") as refused:  # fmt: skip
        _histories(served, [short, future], max_inputs=4)
    assert refused.value.status_code == 422 and refused.value.field == "inputs[1].name"

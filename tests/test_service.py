"""The HTTP service in-process (httpx over ASGI with the app's lifespan): endpoints, exact answers,
micro-batching, and a 4xx with a named field for every class of bad input, including fuzzed bodies."""

from __future__ import annotations

import asyncio
import base64
import csv
import gzip
import io
import json
import math
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from urllib.parse import quote

import anyio.from_thread
import httpx
import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from forecaster.artifacts import DataConfig, load_bundle, save_bundle
from forecaster.data import Scaler
from forecaster.models import get_model
from forecaster.prediction import predict_windows
from service.app import create_app
from service.config import ServiceSettings
from service.errors import HTTP_ERROR_CODES, MAX_MESSAGE_CHARS

COLUMNS = ["load", "OT"]
INPUT_SIZE, HORIZON = 16, 4
MAX_ROWS, MAX_INPUTS, MAX_BODY = 400, 8, 64_000


def make_bundle(
    root: Path, name: str = "hourly", *, dated: bool = True, horizon: int = HORIZON, columns: list = COLUMNS,
    metrics: dict | None = None, **read,
) -> Path:
    """A small untrained S3Attention bundle (no training needed to test serving); `read`: DataConfig
    fields beside the defaults."""
    torch.manual_seed(0)
    columns = columns if dated else ["x"]
    model = get_model(
        "s3attention", input_size=INPUT_SIZE, horizon=horizon, n_channels=len(columns), d_model=8, n_heads=2,
        fold=2, left_rank=4, right_rank=4,
    )  # fmt: skip
    data = DataConfig(**{
        "source": "synthetic.csv", "columns": columns, "freq": "h" if dated else None,
        "date_col": "date" if dated else None, "input_size": INPUT_SIZE, "horizon": horizon, "split": "7:1:2",
        **read,
    })  # fmt: skip
    scaler = Scaler(np.array([10.0, 20.0][: len(columns)]), np.array([2.0, 5.0][: len(columns)]))
    return save_bundle(
        root / name, model=model.eval(), model_name="s3attention", data=data, scaler=scaler,
        metrics=metrics or {"test": {"mse": 0.25, "mae": 0.4}}, training={"epochs": 0},
    )  # fmt: skip


def history(rows: int = 20, seed: int = 0, start: str = "2021-03-01 00:00") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    index = pd.date_range(start, periods=rows, freq="h", name="date")
    return pd.DataFrame(rng.normal([10, 20], [2, 5], size=(rows, 2)), index=index, columns=COLUMNS)


def body_of(frame: pd.DataFrame, **extra) -> dict:
    return {
        "timestamps": [str(stamp) for stamp in frame.index],
        "values": {column: frame[column].tolist() for column in frame.columns},
        **extra,
    }


def forecast_array(answer: dict) -> np.ndarray:
    return np.array([answer["forecast"][column] for column in COLUMNS]).T


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("models")
    make_bundle(root)
    make_bundle(root, "stepped", dated=False)
    (root / "broken").mkdir()
    (root / "broken" / "config.json").write_text("{not json")
    return root


@pytest.fixture(scope="module")
def bundle(models_dir: Path):
    return load_bundle(models_dir / "hourly")


@asynccontextmanager
async def _running(app) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://service") as client:
            yield client


class Client:
    """Synchronous calls into an app that runs (with its lifespan) on an event loop in a helper thread."""

    def __init__(self, portal: anyio.from_thread.BlockingPortal, client: httpx.AsyncClient):
        self.portal, self.client = portal, client

    def request(self, method: str, url: str, **options) -> httpx.Response:
        return self.portal.call(partial(self.client.request, method, url, **options))

    def get(self, url: str, **options) -> httpx.Response:
        return self.request("GET", url, **options)

    def post(self, url: str, **options) -> httpx.Response:
        return self.request("POST", url, **options)

    def post_concurrently(self, url: str, bodies: list[dict]) -> list[httpx.Response]:
        async def send_all() -> list[httpx.Response]:
            return await asyncio.gather(*(self.client.post(url, json=body) for body in bodies))

        return self.portal.call(send_all)


@contextmanager
def serving(models_dir: Path, **options) -> Iterator[Client]:
    limits = {"max_rows": MAX_ROWS, "max_inputs": MAX_INPUTS, "max_body_bytes": MAX_BODY}
    app = create_app(ServiceSettings(models_dir=models_dir, **{**limits, **options}))
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_running(app)) as client,
    ):
        yield Client(portal, client)


@pytest.fixture(scope="module")
def client(models_dir: Path) -> Iterator[Client]:
    with serving(models_dir) as running:
        yield running


def metric_samples(client: Client) -> list:
    response = client.get("/metrics")
    assert response.status_code == 200
    return [sample for family in text_string_to_metric_families(response.text) for sample in family.samples]


def assert_error(response: httpx.Response, status: int, field: str | None, *needles: str) -> None:
    """The shared error shape with the expected status, field and words of the expectation."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "message", "details"}
    if field is not None:
        assert any(detail["field"] == field for detail in body["details"]), body
    for needle in needles:
        assert needle in body["message"], body


# ---- endpoints -------------------------------------------------------------------------------------------


def test_health_reports_loaded_and_skipped_bundles(client: Client) -> None:
    assert client.get("/health/live").json() == {"status": "live"}
    ready = client.get("/health/ready")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"
    assert ready.json()["models"] == ["hourly", "stepped"]
    assert "incomplete" in ready.json()["skipped"]["broken"]


def test_not_ready_without_any_loadable_bundle(tmp_path: Path) -> None:
    (tmp_path / "empty-bundle").mkdir()
    with serving(tmp_path) as running:
        response = running.get("/health/ready")
        assert response.status_code == 503
        assert response.json()["status"] == "not_ready"
        assert "incomplete" in response.json()["skipped"]["empty-bundle"]
        assert running.get("/health/live").status_code == 200


def test_model_listing_and_details(client: Client) -> None:
    models = client.get("/v1/models").json()["models"]
    assert [model["name"] for model in models] == ["hourly", "stepped"]
    hourly = client.get("/v1/models/hourly").json()
    assert hourly == models[0]
    assert hourly["input_size"] == INPUT_SIZE and hourly["horizon"] == HORIZON
    assert hourly["columns"] == COLUMNS and hourly["freq"] == "h" and hourly["date_col"] == "date"
    assert hourly["model_name"] == "s3attention" and hourly["metrics"]["test"]["mse"] == 0.25


def test_model_details_are_written_once_a_load_not_by_every_get(tmp_path: Path, monkeypatch) -> None:
    """A bundle's metrics.json of 54 MB (within its 64 MiB bound) was validated and written again by every
    GET of /v1/models: 1 s of the event loop each; 6 at once held /health/live 2.9 s (h112 F3)."""
    from service.registry import ServedModel

    built, info = [], ServedModel.info
    counted = property(lambda served: built.append(served.name) or info.fget(served))
    monkeypatch.setattr(ServedModel, "info", counted)
    make_bundle(tmp_path / "models")
    with serving(tmp_path / "models") as running:
        listed = [running.get("/v1/models").json()["models"] for _ in range(3)]
        detail = running.get("/v1/models/hourly").json()
        assert running.request("HEAD", "/v1/models").status_code == 200
    assert built == ["hourly"] and listed == [[detail]] * 3
    assert detail["metrics"] == {"test": {"mse": 0.25, "mae": 0.4}} and detail["horizon"] == HORIZON


def test_a_listing_tells_metrics_but_val_blocks_the_whole_file_has_its_own_route(tmp_path: Path) -> None:
    """/v1/models sent every bundle's metrics.json whole (up to 64 MiB): a real `val_blocks` holds 110,670
    numbers (2.1 MB, weather at horizon 1), 54 MB were served in every listing (h112 F3). The listing keeps
    the small entries; the whole file is one GET away; a NaN is null in both."""
    blocks = [0.5] * 110_670
    make_bundle(tmp_path / "models", metrics={"mse": 0.25, "mae": float("nan"), "val_blocks": blocks})
    make_bundle(tmp_path / "models", "many", metrics={f"m{i:06d}": i for i in range(20_000)})
    with serving(tmp_path / "models") as running:
        listing = running.get("/v1/models")
        detail = running.get("/v1/models/hourly").json()
        whole = running.get("/v1/models/hourly/metrics")
        crowded = running.get("/v1/models/many").json()
        assert running.get("/v1/models/nope/metrics").status_code == 404
    assert len(listing.content) < 200_000, len(listing.content)
    assert listing.json()["models"][0] == detail
    assert detail["metrics"] == {"mse": 0.25, "mae": None} and detail["metrics_complete"] is False
    assert whole.status_code == 200 and whole.json() == {"mse": 0.25, "mae": None, "val_blocks": blocks}
    told = json.dumps(crowded["metrics"], separators=(",", ":"))
    assert crowded["metrics_complete"] is False and 0 < len(told) <= 65_536
    assert crowded["metrics"] == {f"m{i:06d}": i for i in range(len(crowded["metrics"]))}


@pytest.mark.parametrize("name", ["nope", "..%2Fhourly", "%2E%2E", "hourly%00", "..%5C..%5Cetc", "a" * 300])
def test_unknown_model_names_and_traversal_answer_404(client: Client, name: str) -> None:
    for method, suffix in (("GET", ""), ("POST", "/forecast")):
        response = client.request(method, f"/v1/models/{name}{suffix}", json=body_of(history()))
        assert_error(response, 404, None)
        assert "hourly" in response.json()["message"] or "no route" in response.json()["message"]


def test_a_model_name_is_looked_up_before_the_body_and_a_failed_bundle_says_why(client: Client) -> None:
    """A bundle that failed to load was answered 'unknown model', and a body was validated before the name:
    '{}' sent to no model was a 422 about its fields (h75 F7)."""
    for body in ({}, {"values": 1}, "not json"):
        sent = {"content": body} if isinstance(body, str) else {"json": body}
        for route in ("/v1/models/nope/forecast", "/v2/models/nope/infer"):
            response = client.post(route, headers={"content-type": "application/json"}, **sent)
            assert_error(response, 404, "name", "unknown model 'nope'; available: hourly, stepped")
    reason = client.get("/health/ready").json()["skipped"]["broken"]
    for method, route in (("GET", "/v1/models/broken"), ("POST", "/v1/models/broken/forecast"),
                          ("GET", "/v2/models/broken")):  # fmt: skip
        response = client.request(method, route, json=body_of(history()))
        assert_error(response, 503, "name", f"model 'broken' is not served, its bundle failed to load: "
                     f"{reason}")  # fmt: skip


def test_a_member_given_twice_is_refused_naming_it(client: Client) -> None:
    """A member given twice in one JSON object was taken silently, the last copy winning (h75 F8); a name
    written with an escape is the same name, and a body of escapes but no member twice is answered."""
    frame, forecast = history(), "/v1/models/hourly/forecast"
    stamps, load = json.dumps(body_of(frame)["timestamps"]), json.dumps(frame["load"].tolist())
    values = f'"timestamps": {stamps}, "values": {{"load": {load}, "OT": {load}'
    cases = [
        (forecast, f'{{"horizon": 1, {values}}}, "horizon": 2}}', "horizon"),
        (forecast, f'{{{values}}}, "values": {{"load": {load}, "OT": {load}}}}}', "values"),
        (forecast, f'{{{values}, "load": {load}}}}}', "load"),
        (forecast, f'{{{values}, "lo\\u0061d": {load}}}}}', "load"),
        (forecast, '{"data": [{"date": "2021-03-01", "load": 1, "load": 2, "OT": 3}]}', "load"),
        ("/v2/models/hourly/infer", '{"inputs": [], "inputs": []}', "inputs"),
    ]
    json_type = {"content-type": "application/json"}
    for route, text, member in cases:
        response = client.post(route, content=text, headers=json_type)
        assert_error(response, 400, "body", f"member {member!r} given twice in one JSON object; expected "
                     "each name once")  # fmt: skip
    once = client.post(forecast, content=f'{{"h\\u006frizon": 1, {values}}}}}', headers=json_type)
    assert once.status_code == 200, once.text


def predict(bundle, values: np.ndarray) -> np.ndarray:
    """The forecast of the last input_size rows, as `forecaster.prediction` computes it in-process."""
    return predict_windows(bundle, np.asarray(values, dtype=np.float64)[None, -INPUT_SIZE:])[0]


def test_forecast_equals_bundle_predict_bit_for_bit(client: Client, bundle) -> None:
    frame = history(rows=40)
    answer = client.post("/v1/models/hourly/forecast", json=body_of(frame)).json()
    assert answer["model"] == "hourly"
    expected = predict(bundle, frame.to_numpy())
    assert np.array_equal(forecast_array(answer), expected)  # exact: JSON floats round-trip
    future = pd.date_range(frame.index[-1], periods=HORIZON + 1, freq="h")[1:]
    assert answer["timestamps"] == [stamp.isoformat() for stamp in future]
    # Older rows are ignored; a shorter horizon is the prefix of the full forecast.
    short = client.post(
        "/v1/models/hourly/forecast", json=body_of(frame.iloc[-INPUT_SIZE:], horizon=2)
    ).json()
    assert np.array_equal(forecast_array(short), expected[:2])
    assert short["timestamps"] == answer["timestamps"][:2]


def test_forecast_for_a_model_without_dates_numbers_the_steps(client: Client, models_dir: Path) -> None:
    values = np.random.default_rng(3).normal(10, 2, size=INPUT_SIZE + 5)
    answer = client.post("/v1/models/stepped/forecast", json={"values": {"x": values.tolist()}}).json()
    assert answer["timestamps"] == list(range(len(values), len(values) + HORIZON))
    expected = predict(load_bundle(models_dir / "stepped"), values[:, None])
    assert np.array_equal(np.array(answer["forecast"]["x"]), expected[:, 0])


def test_several_inputs_in_one_call_are_answered_in_order(models_dir: Path, bundle) -> None:
    frames = [history(seed=seed, start=f"2021-03-0{seed + 1}") for seed in range(3)]
    # One batch of exactly these three (batch size 3, patient wait): the answer is predict on that batch.
    with serving(models_dir, max_batch_size=3, max_wait_ms=60_000) as running:
        response = running.post("/v1/models/hourly/forecast", json={"inputs": [body_of(f) for f in frames]})
    outputs = response.json()["outputs"]
    stacked = predict_windows(bundle, np.stack([frame.to_numpy()[-INPUT_SIZE:] for frame in frames]))
    for frame, output, expected in zip(frames, outputs, stacked, strict=True):
        assert np.array_equal(forecast_array(output), expected)
        assert output["timestamps"][0] == (frame.index[-1] + pd.Timedelta(hours=1)).isoformat()


def test_concurrent_requests_share_one_forward_pass(models_dir: Path, bundle) -> None:
    frames = [history(seed=seed) for seed in range(4)]
    with serving(models_dir, max_batch_size=4, max_wait_ms=60_000) as running:
        responses = running.post_concurrently("/v1/models/hourly/forecast", [body_of(f) for f in frames])
        samples = metric_samples(running)
    assert [response.status_code for response in responses] == [200] * 4
    batches = {s.name: s.value for s in samples if s.labels == {"model": "hourly"}}
    # The four requests were answered by one forward pass over a batch of four.
    assert batches["forecaster_batch_size_count"] == 1 and batches["forecaster_batch_size_sum"] == 4
    for frame, response in zip(frames, responses, strict=True):
        # Batched convolutions may round differently from batch-of-one calls (float32 last bits), no more.
        np.testing.assert_allclose(
            forecast_array(response.json()), predict(bundle, frame.to_numpy()), rtol=1e-5
        )


def test_json_timestamps_across_daylight_saving_time_are_read_as_uploaded_ones(client: Client) -> None:
    """Berlin's hourly clock across 2021-03-28 (+01:00, then +02:00): the JSON route refused them as mixing
    time zones, which the CSV route reads in UTC; both answer alike now. UTC, not the offsets sent: offsets
    name no zone, so the next change of offset within the horizon is unknown; UTC is the one clock both
    routes can answer in."""
    frame = history(rows=30, start="2021-03-27 12:00")
    frame.index = frame.index.tz_localize("UTC").tz_convert("Europe/Berlin")
    assert {stamp.utcoffset() for stamp in frame.index} == {pd.Timedelta(hours=1), pd.Timedelta(hours=2)}
    body = {"timestamps": [stamp.isoformat() for stamp in frame.index],
            "values": {column: frame[column].tolist() for column in COLUMNS}}  # fmt: skip
    answered = client.post("/v1/models/hourly/forecast", json=body)
    assert answered.status_code == 200, answered.text
    upload = {"file": ("recent.csv", frame.to_csv(), "text/csv")}
    uploaded = client.post("/v1/models/hourly/forecast.csv", files=upload).text
    header, *rows = list(csv.reader(io.StringIO(uploaded)))
    assert [pd.Timestamp(row[0]) for row in rows] == list(map(pd.Timestamp, answered.json()["timestamps"]))
    values = [[float(cell) for cell in row[1:]] for row in rows]
    assert np.array_equal(values, forecast_array(answered.json()))
    # answered in UTC, not the offset sent, and said so, as the CSV and records routes say it (h112 F7)
    said = "note: read the dates, whose UTC offsets change (daylight saving time), in UTC"
    assert answered.json()["notes"] == [said] and answered.json()["timestamps"][0].endswith("+00:00")
    assert said in json.loads(client.post("/v1/models/hourly/forecast.csv", files=upload).headers[
        "forecaster-notes"])
    batch = client.post("/v1/models/hourly/forecast", json={"inputs": [body, body_of(history())]}).json()
    assert [output["notes"] for output in batch["outputs"]] == [[said], []]


def test_json_timestamps_are_iso_8601_in_one_zone_not_whatever_dateutil_reads(client: Client) -> None:
    """dateutil read "UTC+5" as UTC-5 (a POSIX zone string), a wrong weekday or a trailing NUL as nothing,
    and naive timestamps beside ones with an offset as UTC: each was answered 200."""
    frame = history(rows=30, start="2021-03-27 12:00")
    plain = [stamp.isoformat() for stamp in frame.index]
    values = {name: frame[name].tolist() for name in COLUMNS}
    for bad, shown in ((plain[-1] + " UTC+5", "UTC+5"), ("Monday " + plain[-1], "Monday "),
                       (plain[-1] + "\x00", "\\x00"), (plain[-1] + " UTC", " UTC")):  # fmt: skip
        body = {"timestamps": plain[:-1] + [bad], "values": values}
        assert_error(client.post("/v1/models/hourly/forecast", json=body), 422, "timestamps[29]", shown,
                     "is not an ISO 8601 timestamp")  # fmt: skip
    mixed = plain[:15] + [stamp + "+00:00" for stamp in plain[15:]]
    body = {"timestamps": mixed, "values": values}
    assert_error(client.post("/v1/models/hourly/forecast", json=body), 422, "timestamps", "mix time zones")


def test_timestamps_of_a_history_over_max_rows_are_not_read(client: Client) -> None:
    """Two UTC offsets alternating are read as text one by one; a history over --max-rows is refused by its
    length before any is read (200,000 of them held the event loop 9-21 s)."""
    rows = MAX_ROWS + 1
    body = {"timestamps": ["2020-01-01T00:00:00+01:00", "2020-01-01T00:00:00+02:00"] * (rows // 2 + 1),
            "values": {column: [0.0] * rows for column in COLUMNS}}  # fmt: skip
    body["timestamps"] = body["timestamps"][:rows]
    answer = client.post("/v1/models/hourly/forecast", json=body)
    assert answer.status_code == 422
    said = answer.json()["details"][0]["message"]
    assert said == f"expected at most {MAX_ROWS} rows per series, got {rows}"
    body = {"timestamps": body["timestamps"][:30], "values": {column: [0.0] * 30 for column in COLUMNS}}
    assert "mix time zones" in client.post("/v1/models/hourly/forecast", json=body).json()["message"]


def test_csv_upload_is_answered_as_csv_equal_to_predict(client: Client, bundle) -> None:
    frame = history(rows=30, seed=5)
    upload = {"file": ("recent.csv", frame.to_csv(), "text/csv")}
    response = client.post("/v1/models/hourly/forecast.csv", files=upload, params={"horizon": 3})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    header, *rows = list(csv.reader(io.StringIO(response.text)))
    assert header == ["date", *COLUMNS]
    answer = np.array([[float(cell) for cell in row[1:]] for row in rows])  # float(repr(x)) == x
    assert np.array_equal(answer, predict(bundle, frame.to_numpy())[:3])
    assert pd.Timestamp(rows[0][0]) == frame.index[-1] + pd.Timedelta(hours=1)
    # an hourly model's one step at midnight is written with its time, as its other steps are (pandas wrote
    # "2021-03-02", h31)
    midnight = history(rows=INPUT_SIZE, start="2021-03-01 08:00")
    upload = {"file": ("recent.csv", midnight.to_csv(), "text/csv")}
    response = client.post("/v1/models/hourly/forecast.csv", files=upload, params={"horizon": 1})
    assert response.text.splitlines()[1].startswith("2021-03-02 00:00:00,")


def test_rows_beyond_what_train_takes_are_refused_and_rows_on_another_scale_noted(client: Client) -> None:
    """1e20 (train refuses its square in float32) answered a forecast of 1e20 with bounds equal to it; 2.5e8
    sent to a model of values around 20 +- 5 is forecast, with a note (h56): its intervals keep the training
    rows' widths, which float32 does not even hold at that level. A refused value is named by its place."""
    frame = history(rows=INPUT_SIZE)
    frame.iloc[-1, 0] = 1e20
    response = client.post("/v1/models/hourly/forecast", json=body_of(frame))
    # named by its place in the body, as a CSV upload's by its line (h92 F7)
    assert_error(response, 422, f"values.load[{INPUT_SIZE - 1}]",
                 "value 1e+20 in column 'load'; expected numbers of |value| <= 1.84e+19")  # fmt: skip
    frame.iloc[-1, 0], frame.iloc[-1, 1] = 11.0, 2.5e8
    upload = {"file": ("units.csv", frame.to_csv(), "text/csv")}
    response = client.post("/v1/models/hourly/forecast.csv", files=upload)
    assert response.status_code == 200, response.text
    apart, note = json.loads(response.headers["forecaster-notes"])  # far from the row before it too (h62)
    assert apart.startswith("note: the last row of 'OT' (2.5e+08) lies ")
    assert note.startswith("note: column 'OT' holds 2.5e+08, 5e+07 standard deviations of its training "
                           "rows from their mean (20): model 'hourly' forecasts far beyond what it learned")
    records = frame.reset_index().assign(date=lambda table: table["date"].astype(str)).to_dict("records")
    apart, note = client.post("/v1/models/hourly/forecast", json={"data": records}).json()["notes"]
    assert apart.startswith("note: the last row of 'OT' (2.5e+08) lies ")
    assert note.startswith("note: column 'OT' holds 2.5e+08, 5e+07 standard deviations")  # as predict says it
    frame.iloc[-1, 1] = 20.0 + 5 * 999  # within 1000 standard deviations: nothing to say of training
    response = client.post("/v1/models/hourly/forecast.csv", files={"file": ("ok.csv", frame.to_csv())})
    assert response.status_code == 200
    [note] = json.loads(response.headers["forecaster-notes"])  # but far from the row before it (h62)
    assert note.startswith("note: the last row of 'OT' (5015) lies ")
    frame.iloc[-1, 1] = 20.0
    response = client.post("/v1/models/hourly/forecast.csv", files={"file": ("ok.csv", frame.to_csv())})
    assert response.status_code == 200 and "forecaster-notes" not in response.headers


def test_json_answers_note_rows_on_another_scale_as_the_other_routes_do(client: Client) -> None:
    """The JSON route answered a column sent in other units (OT in millionths, 5e6 training standard
    deviations off) without a word, where the CSV and records routes and `forecaster predict` note it
    (h92 F0); rows on the training scale get no note."""
    frame = history(rows=INPUT_SIZE)
    assert client.post("/v1/models/hourly/forecast", json=body_of(frame)).json()["notes"] == []
    frame["OT"] *= 1e6
    far = "note: column 'OT' holds 2.683e+07, 5.37e+06 standard deviations of its training rows from their"
    [note] = client.post("/v1/models/hourly/forecast", json=body_of(frame)).json()["notes"]
    assert note.startswith(far) and note.endswith("expected values in the units it was trained on"), note
    batch = client.post("/v1/models/hourly/forecast", json={"inputs": [body_of(history()), body_of(frame)]})
    assert [output["notes"] for output in batch.json()["outputs"]] == [[], [note]]


def test_a_records_note_naming_a_clients_key_is_clipped_as_refusals_are(client: Client) -> None:
    """A key sent beside the model's columns is named in a note ("left out series ..."): one of 4 MB was
    answered whole, a 4 MB note built and sent in seconds (h101 F1); a note is clipped as a message is."""
    records = history(rows=INPUT_SIZE).reset_index().assign(date=lambda table: table["date"].astype(str))
    records = records.to_dict("records")
    records[0]["k" * 30_000] = 1.0
    answer = client.post("/v1/models/hourly/forecast", json={"data": records})
    assert answer.status_code == 200, answer.text
    [note] = answer.json()["notes"]
    assert note.startswith("note: left out series 'kkk") and len(note) <= MAX_MESSAGE_CHARS, len(note)
    assert "characters cut) ... kkk" in note, note[-80:]


def test_metrics_count_requests_errors_and_latency_per_model(client: Client) -> None:
    client.post("/v1/models/hourly/forecast", json=body_of(history()))
    client.post("/v1/models/hourly/forecast", json={"values": {}})
    client.get("/v1/models/made-up-name")
    samples = metric_samples(client)

    def value(name: str, **labels: str) -> float:
        return sum(s.value for s in samples if s.name == name and labels.items() <= s.labels.items())

    route = "/v1/models/{name}/forecast"
    assert value("forecaster_requests_total", model="hourly", route=route, status="200") >= 1
    assert value("forecaster_request_errors_total", model="hourly", route=route, status="422") >= 1
    assert value("forecaster_request_errors_total", model="", status="404") >= 1
    assert value("forecaster_request_duration_seconds_count", model="hourly", route=route) >= 2
    assert not any(s.labels.get("model") == "made-up-name" for s in samples)


def test_the_notes_header_keeps_whole_notes_and_marks_what_it_cut() -> None:
    """A Eurostat TSV's reading note (its steps joined, the rows it dropped last) was cut at 200 characters
    mid-word with nothing to say so (h62 F7): whole notes up to NOTES_CHARACTERS, a cut one ends "...", and
    those left out are counted."""
    from service.inputs import NOTES_CHARACTERS, notes_header

    reading = "note: read values separated by tabs; " + "read the wide layout; " * 12 + "dropped 3 rows"
    assert 200 < len(reading) < NOTES_CHARACTERS
    assert json.loads(notes_header([reading])["forecaster-notes"]) == [reading]
    many = [reading, "x" * NOTES_CHARACTERS, "note: a third", "note: a fourth"]
    said = json.loads(notes_header(many)["forecaster-notes"])
    assert said[0] == reading and said[1] == "x" * (NOTES_CHARACTERS - len(reading) - 3) + "..."
    assert said[2:] == ["and 2 more note(s)"]
    assert notes_header([]) == {}
    assert len(notes_header(["\u00e9" * 5000] * 9)["forecaster-notes"]) < 5 * 1024  # escaped to ASCII


def test_openapi_documents_every_route_with_examples(client: Client) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ("/health/live", "/health/ready", "/v1/models", "/v1/models/{name}", "/metrics"):
        assert "get" in paths[path]
    forecast = paths["/v1/models/{name}/forecast"]["post"]
    assert {"single", "batch"} <= set(forecast["requestBody"]["content"]["application/json"]["examples"])
    assert forecast["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "ErrorResponse"
    )
    assert "multipart/form-data" in paths["/v1/models/{name}/forecast.csv"]["post"]["requestBody"]["content"]


def test_openapi_lists_the_error_answers_each_route_gives_in_their_shape(client: Client) -> None:
    """v2 listed only 200 and FastAPI's 422 (`{"detail": [...]}`), not the service's shape, and answered 400,
    404, 413, 415 and 503 unlisted; v1's forecast routes left out 400 (h92 F2)."""
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/v1/models/{name}/forecast", "/v1/models/{name}/forecast.csv", "/v2/models/{name}/infer",
                 "/v2/models/{name}/versions/{version}/infer"):  # fmt: skip
        listed = set(paths[path]["post"]["responses"])
        assert {"400", "404", "408", "413", "415", "422", "503"} <= listed, path
    for path in ("/v1/models/{name}", "/v2/models/{name}", "/v2/models/{name}/ready"):
        assert {"404", "503"} <= set(paths[path]["get"]["responses"]), path
    for path, operations in paths.items():
        for verb, operation in operations.items():
            for status, answer in operation["responses"].items():
                content = answer.get("content", {}).get("application/json", {})
                shape = content.get("schema", {}).get("$ref", "")
                assert status < "400" or shape.endswith(("/ErrorResponse", "/Readiness")) or not shape, (
                    verb, path, status, shape)  # fmt: skip
    answer = client.post("/v2/models/made-up/infer", json={})
    assert_error(answer, 404, "name", "unknown model 'made-up'")


# ---- bad input: every class answers 4xx naming the field and the expectation -------------------------------


def _raw(text: str) -> dict:
    return {"content": text.encode(), "headers": {"content-type": "application/json"}}


def _with_values(**columns) -> dict:
    body = body_of(history())
    body["values"].update(columns)
    return body


def _shuffled_timestamps(rows: int = 20) -> dict:
    body = body_of(history(rows))
    body["timestamps"][5], body["timestamps"][6] = body["timestamps"][6], body["timestamps"][5]
    return body


def _timestamps(stamps: list[str]) -> dict:
    return {**body_of(history(len(stamps))), "timestamps": stamps}


_ROWS = [str(stamp) for stamp in history().index]
_NO_FUTURE = "model 'hourly' has no future covariates; expected no rows of them"
_VALUES = body_of(history())["values"]
_HALF_HOURLY = [str(stamp) for stamp in pd.date_range("2021", periods=20, freq="30min")]
_GAP = [*_ROWS[:10], *(str(pd.Timestamp(stamp) + pd.Timedelta(hours=1)) for stamp in _ROWS[10:])]
# Nanosecond timestamps end one hour before pandas' last representable instant: the forecast cannot be dated.
_AT_THE_END = [str(stamp) for stamp in pd.date_range("2262-04-11 04:00:00.000000001", periods=20, freq="h")]
_BY_9999 = [str(stamp) for stamp in pd.date_range("9999-12-31 04:00", periods=20, freq="h", unit="s")]
# Years before 1: pandas keeps them, Python's calendar does not (a records request was a 500).
_BEFORE_1 = [f"-0001-04-11 {hour:02d}:00:00" for hour in range(20)]
_BODY_TEXT = json.dumps(body_of(history()))
BAD_JSON = [
    ("invalid json", _raw('{"values": '), 400, "body", "expected valid JSON"),  # syntax: 400, as not UTF-8
    ("not an object", {"json": [1, 2]}, 422, "body", "expected a JSON object"),
    ("values missing", {"json": {"timestamps": _ROWS}}, 422, "values", "required"),
    ("unknown field", {"json": {**body_of(history()), "extra": 1}}, 422, "extra", "unknown field"),
    ("a name in two spellings", {"json": _with_values(**{"Zürich": [1.0] * 20, "Zu\u0308rich": [1.0] * 20})},
     422, "values", "names ['Zürich'] more than once (spelled with and without combining accents)"),
    ("NaN value", _raw(json.dumps(_with_values(load=[math.nan] * 20))), 422, "values.load[0]", "finite"),
    ("infinite value", _raw(json.dumps(_with_values(OT=[0, math.inf] * 10))), 422, "values.OT[1]", "finite"),
    ("text value", {"json": _with_values(OT=["1.5"] * 20)}, 422, "values.OT[0]", "expected a number"),
    ("boolean value", {"json": _with_values(OT=[True] * 20)}, 422, "values.OT[0]", "expected a number"),
    ("missing column", {"json": {"timestamps": _ROWS, "values": {"load": _VALUES["load"]}}}, 422, "values",
     "['OT']"),
    ("unknown column", {"json": _with_values(temp=[1.0] * 20)}, 422, "values", "unknown ['temp']"),
    ("ragged columns", {"json": _with_values(OT=[1.0] * 19)}, 422, "values.OT", "expected 20"),
    ("too few rows", {"json": body_of(history(INPUT_SIZE - 1))}, 422, "values", f"at least {INPUT_SIZE}"),
    ("too many rows", {"json": body_of(history(MAX_ROWS + 1))}, 422, "values", f"at most {MAX_ROWS} rows"),
    ("too many records", {"json": {"data": history(MAX_ROWS + 1).reset_index().astype({"date": str})
                                   .to_dict(orient="records")}}, 422, "data",
     f"{MAX_ROWS + 1} records; expected at most {MAX_ROWS} ({MAX_ROWS} per series)"),
    ("timestamps missing", {"json": {"values": _VALUES}}, 422, "timestamps", "required"),
    ("timestamps count", {"json": {"timestamps": _ROWS[:-1], "values": _VALUES}}, 422, "timestamps",
     "expected 20"),
    ("unparsable timestamp", {"json": _timestamps([*_ROWS[:2], "yesterday", *_ROWS[3:]])}, 422,
     "timestamps[2]", "ISO 8601"),
    # pandas reads these as the clock's time or no time: the next row was blamed, or the server's clock shown
    *((f"{word!r} as a timestamp", {"json": _timestamps([word, *_ROWS[1:]])}, 422, "timestamps[0]",
       f"{word!r} is not an ISO 8601 timestamp") for word in ("", "NaT", "now", "today")),
    ("timestamp not text", {"json": _timestamps([*_ROWS[:2], 1614556800, *_ROWS[3:]])}, 422,
     "timestamps[2]", "expected a string"),
    ("out of order", {"json": _shuffled_timestamps()}, 422, "timestamps[6]", "strictly increasing"),
    ("duplicate timestamp", {"json": _timestamps([*_ROWS[:5], _ROWS[4], *_ROWS[6:]])}, 422, "timestamps[5]",
     "strictly increasing"),
    ("wrong frequency", {"json": _timestamps(_HALF_HOURLY)}, 422, "timestamps[1]", "frequency 'h'"),
    ("gap in time", {"json": _timestamps(_GAP)}, 422, "timestamps[10]", "frequency 'h'"),
    ("forecast past pandas dates", {"json": _timestamps(_AT_THE_END)}, 422, "timestamps[19]", "past"),
    ("forecast past the year 9999", {"json": _timestamps(_BY_9999)}, 422, None, "runs past the year 9999"),
    ("before the year 1", {"json": _timestamps(_BEFORE_1)}, 422, "timestamps[0]", "is before the year 1"),
    ("records before the year 1", {"json": {"data": [{"date": stamp, "load": 1.0, "OT": 2.0}
                                                     for stamp in _BEFORE_1]}}, 422, "data", "before the"),
    ("horizon above model's", {"json": body_of(history(), horizon=HORIZON + 1)}, 422, "horizon",
     f"<= {HORIZON}"),
    ("horizon zero", {"json": body_of(history(), horizon=0)}, 422, "horizon", "expected at least 1, got 0"),
    # said as lists of unequal length, or as names against the model's none (h92 F3)
    *((f"future {future} to a model of none", {"json": body_of(history(), future=future)}, 422, "future",
       _NO_FUTURE) for future in ({}, {"OT": [1.0]})),
    ("future records to a model of none", {"json": {"data": [{"date": _ROWS[0], "load": 1.0, "OT": 2.0}],
                                                    "future": [{"date": _ROWS[1], "OT": 2.0}]}},
     422, "future", _NO_FUTURE),
    ("null first date in records", {"json": {"data": [{"date": None, "load": 1.0, "OT": 2.0},
                                                      *({"date": stamp, "load": 1.0, "OT": 2.0} for stamp in
                                                        _ROWS[1:])]}}, 422, "data", "row 0 (empty)"),  # a 500
    ("thousands of invalid items", {"json": {"inputs": [{}] * 3000}}, 422, "inputs", "got 3000"),  # counted
    ("horizon float", {"json": body_of(history(), horizon=2.0)}, 422, "horizon", "expected an integer"),
    ("horizon text", {"json": body_of(history(), horizon="2")}, 422, "horizon", "expected an integer"),
    ("values overflow float32", {"json": _with_values(OT=[3e38, -3e38] * 10)}, 422,
     f"values.OT[{20 - INPUT_SIZE}]", "value 3e+38 in column 'OT'; expected numbers of |value| <= 1.84e+19"),
    ("empty inputs", {"json": {"inputs": []}}, 422, "inputs", "expected at least 1 item(s), got 0"),
    ("empty levels", {"json": body_of(history(), level=[])}, 422, "level", "expected at least 1 item(s)"),
    # checked before the histories are read (they were read first, unless the companion's series were sent)
    ("levels and too few rows", {"json": body_of(history(INPUT_SIZE - 1), level=[80])}, 422, "level",
     "has no interval calibration"),
    ("too many inputs", {"json": {"inputs": [body_of(history())] * (MAX_INPUTS + 1)}}, 422, "inputs",
     f"at most {MAX_INPUTS}"),
    ("bad item in inputs", {"json": {"inputs": [body_of(history()), body_of(history(), horizon=99)]}}, 422,
     "inputs[1].horizon", f"<= {HORIZON}"),
    ("level beside inputs", {"json": {"inputs": [body_of(history())], "level": [80]}}, 422, "level",
     "not a field of a batch: give level in each of its inputs"),
    # one line for a value that fits no member of a union (pydantic reports one per member)
    ("boolean record value", {"json": {"data": [{"date": _ROWS[0], "load": True, "OT": 1.0}]}}, 422,
     "data[0].load", "data[0].load: expected a string, a number or an integer"),
    ("text content type", {"content": _BODY_TEXT, "headers": {"content-type": "text/plain"}}, 415,
     "content-type", "application/json"),
    ("no content type", {"content": _BODY_TEXT}, 415, "content-type", "none"),
    ("not utf-8", {"content": b'{"values": {"\xff": [1]}}', "headers": {"content-type": "application/json"}},
     400, "body", "byte 0xff at offset 13 is not UTF-8"),
    ("utf-16", {"content": _BODY_TEXT.encode("utf-16"), "headers": {"content-type": "application/json"}},
     400, "body", "byte 0xff at offset 0 is not UTF-8; expected JSON text in UTF-8, not UTF-16LE"),
    # json.loads read UTF-16 and UTF-32 bytes; without a mark, NUL is UTF-8: 'Expecting property name' (h151)
    ("utf-16 without a mark", {"content": _BODY_TEXT.encode("utf-16-le"),
                               "headers": {"content-type": "application/json"}},
     400, "body", "body: NUL bytes at its start; expected JSON text in UTF-8, not UTF-16LE"),
    ("utf-32 without a mark", {"content": _BODY_TEXT.encode("utf-32-be"),
                               "headers": {"content-type": "application/json"}},
     400, "body", "body: NUL bytes at its start; expected JSON text in UTF-8, not UTF-32BE"),
    ("nested too deeply", _raw("[" * 20_000 + "]" * 20_000), 400, "body", "nested too deeply"),
    # json.loads keeps a lone surrogate, which pandas could not encode: a 500 for records
    ("unpaired surrogate in records", _raw('{"data": [{"\\ud800": 1, "date": "2021-03-01"}]}'), 400, "body",
     "an unpaired UTF-16 surrogate escape at offset 12; expected text of valid Unicode"),
    ("unpaired surrogate in a value", _raw('{"data": [{"OT": "\\udfff"}]}'), 400, "body",
     "an unpaired UTF-16 surrogate escape"),
    ("number of 5,000 digits", _raw('{"values": {"OT": [1' + "0" * 5000 + "]}}"), 400, "body",
     "a number of more than 4300 digits"),
    ("number of 4,000 digits", _raw('{"values": {"OT": [1' + "0" * 3999 + "]}}"), 422, "values.OT[0]",
     "a number of 4000 digits; expected numbers a float can hold"),  # was "expected a number" (h33)
    ("horizon of 31 digits", {"json": {"values": {"OT": [1.0]}, "horizon": 10**30}}, 422, "horizon",
     "1e+30 is past a 64-bit integer's range; expected an integer"),  # was "expected an integer" (h52)
    ("compressed body", {"content": gzip.compress(_BODY_TEXT.encode()),
                         "headers": {"content-type": "application/json", "content-encoding": "gzip"}},
     415, "content-encoding", "uncompressed body, got 'gzip'"),
]  # fmt: skip


def test_a_column_name_sent_decomposed_is_the_models_composed_one(tmp_path: Path) -> None:
    """'Zürich' sent as u and a combining diaeresis (macOS) was refused as missing and unknown, the two names
    printed alike (h66)."""
    make_bundle(tmp_path, columns=["Zürich", "OT"])
    with serving(tmp_path) as client:
        bodies = [body_of(history().rename(columns={"load": name})) for name in ("Zürich", "Zu\u0308rich")]
        answers = [client.post("/v1/models/hourly/forecast", json=body) for body in bodies]
    assert [answer.status_code for answer in answers] == [200, 200]
    assert answers[1].json()["forecast"] == answers[0].json()["forecast"]


def test_a_compressed_upload_is_refused_before_it_is_read(client: Client) -> None:
    """The CSV route too: the service decodes no Content-Encoding, so it says so rather than fail to parse."""
    upload = {"file": ("h.csv", gzip.compress(history().to_csv().encode()))}
    response = client.post("/v1/models/hourly/forecast.csv", files=upload, headers={"content-encoding": "br"})
    assert_error(response, 415, "content-encoding", "expected an uncompressed body, got 'br'")


@pytest.mark.parametrize(("case", "request_options", "status", "field", "needle"), BAD_JSON, ids=lambda v: v)
def test_bad_json_requests_answer_4xx_naming_the_field(
    client: Client, case: str, request_options: dict, status: int, field: str, needle: str
) -> None:
    response = client.post("/v1/models/hourly/forecast", **request_options)
    assert_error(response, status, field, needle)
    assert response.json()["error"] == HTTP_ERROR_CODES[status]  # syntax was 400 "invalid_input" (h92 F5)


def test_a_horizon_that_ends_by_the_year_9999_is_answered(client: Client) -> None:
    """Rows ending three hours before the year 10000: 3 steps fit, the model's 4 do not. Every route refused
    any horizon, the asked one ignored, and said to ask a shorter one (h31)."""
    stamps = pd.date_range(end="9999-12-31 20:00", periods=INPUT_SIZE, freq="h", unit="s", name="date")
    frame = history(rows=INPUT_SIZE).set_axis(stamps)
    answered = client.post("/v1/models/hourly/forecast", json=body_of(frame, horizon=3))
    assert answered.status_code == 200 and answered.json()["timestamps"][-1] == "9999-12-31T23:00:00"
    refused = client.post("/v1/models/hourly/forecast", json=body_of(frame))
    assert refused.status_code == 422 and "a forecast 4 steps after" in refused.text


def test_the_csv_routes_query_parameters_on_the_json_route_are_refused_not_ignored(client: Client) -> None:
    for name in ("horizon", "levels", "Level"):  # near misses of them too
        response = client.post(f"/v1/models/hourly/forecast?{name}=2", json=body_of(history()))
        assert_error(response, 422, "query", f"unexpected query parameter {name!r}", "JSON body")
    assert client.post("/v1/models/hourly/forecast?_=1700000000", json=body_of(history())).status_code == 200


def test_the_csv_routes_near_misses_and_a_repeated_horizon_are_refused_not_ignored(client: Client) -> None:
    upload = {"file": ("recent.csv", history(rows=30, seed=5).to_csv(), "text/csv")}
    for query, needle in (("levels=80", "unknown query parameter 'levels'; did you mean 'level'?"),
                          ("Horizon=2", "did you mean 'horizon'?"), ("lv=80", "did you mean 'level'?"),
                          ("h=3", "did you mean 'horizon'?"), ("confidence=80", "did you mean 'level'?"),
                          ("level=80,95", "repeated for several: ?level=80&level=95"),
                          ("horizon=2&horizon=3", "'horizon' given more than once")):  # fmt: skip
        response = client.post(f"/v1/models/hourly/forecast.csv?{query}", files=upload)
        assert_error(response, 422, "query", needle)
    assert client.post("/v1/models/hourly/forecast.csv?_=17&horizon=2", files=upload).status_code == 200


def test_head_answers_as_get_without_the_body_wherever_get_is_routed(client: Client) -> None:
    """Load balancers, monitors and `curl -I` probe with HEAD: the GET answer's status and headers."""
    for path in ("/health/live", "/health/ready", "/v1/models", "/v1/models/hourly", "/metrics",
                 "/v2/models/hourly", "/v1/models/nothing"):  # fmt: skip
        head, get = client.request("HEAD", path), client.get(path)
        assert (head.status_code, head.content) == (get.status_code, b"")
        assert head.headers["content-type"] == get.headers["content-type"]
    assert client.request("HEAD", "/v1/models/hourly/forecast").status_code == 405  # a POST route


def test_timestamps_refused_for_a_model_trained_without_dates(client: Client) -> None:
    body = {"timestamps": _ROWS, "values": {"x": [1.0] * 20}}
    assert_error(client.post("/v1/models/stepped/forecast", json=body), 422, "timestamps", "without dates")


def test_a_model_dated_from_year_and_month_columns_takes_iso_timestamps(tmp_path: Path) -> None:
    """Dates read from parts (`Jahr;Monat`) are dates: refused as "trained without dates", and answered
    in step numbers without them (h82 F2)."""
    make_bundle(tmp_path, "cpi", columns=["cpi"], freq="MS", date_col=None, date_from=["Jahr", "Monat"])
    stamps = [str(stamp.date()) for stamp in pd.date_range("2021-01", periods=20, freq="MS")]
    with serving(tmp_path) as running:
        assert running.get("/v1/models/cpi").json()["date_from"] == ["Jahr", "Monat"]
        values = {"cpi": [99.0] * 20}
        answer = running.post("/v1/models/cpi/forecast", json={"timestamps": stamps, "values": values})
        assert answer.status_code == 200, answer.text
        assert answer.json()["timestamps"][:2] == ["2022-09-01T00:00:00", "2022-10-01T00:00:00"]
        undated = running.post("/v1/models/cpi/forecast", json={"values": values})
        assert_error(undated, 422, "timestamps", "required")


def test_oversized_bodies_answer_413_json(client: Client) -> None:
    big = json.dumps(body_of(history())) + " " * MAX_BODY
    assert_error(client.post("/v1/models/hourly/forecast", **_raw(big)), 413, None, f"{MAX_BODY} bytes")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit counts streamed bytes
        for _ in range(10):
            yield b" " * 10_000

    streamed = client.post(
        "/v1/models/hourly/forecast", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_error(streamed, 413, None, "limit")


def test_unknown_routes_and_methods_answer_json(client: Client) -> None:
    assert_error(client.get("/v2/whatever"), 404, None, "no route")
    refused = client.get("/v1/models/hourly/forecast")
    assert_error(refused, 405, None, "method GET is not allowed on /v1/models/hourly/forecast; expected POST")
    assert refused.headers["allow"] == "POST"
    put = client.request("PUT", "/v1/models/hourly")
    assert put.headers["allow"] == "GET, HEAD"  # HEAD: service.head
    assert put.json()["message"].endswith("; expected GET or HEAD")  # h151: what was expected went unsaid


def test_two_content_types_are_refused_as_a_proxy_may_read_the_other(client: Client) -> None:
    body = json.dumps(body_of(history())).encode()
    headers = [("content-type", "application/json"), ("content-type", "text/plain")]
    response = client.post("/v1/models/hourly/forecast", content=body, headers=headers)
    said = "two Content-Type headers ('application/json' and 'text/plain')"
    assert_error(response, 400, "content-type", said)


def _csv_of(frame: pd.DataFrame) -> str:
    return frame.to_csv()


def _last_load(cell: str) -> str:
    """The history's CSV with its last row's first value written as `cell`."""
    head, last = _csv_of(history()).rstrip("\n").rsplit("\n", 1)
    stamp, _, rest = last.split(",", 2)
    return f"{head}\n{stamp},{cell},{rest}\n"


BAD_CSV = [
    ("missing column", _csv_of(history().drop(columns="OT")), 422, "'OT'"),
    # the reader's hint (--no-date) is no option for a client: the model names the column it reads dates from
    ("no date column", history().to_csv(index=False), 422, "missing date column(s) 'date' that model "
     "'hourly' reads its dates from, as its training data had them; the rows have 'load', 'OT'"),
    ("text cell", _csv_of(history()).replace("\n2021-03-01 03:00:00,", "\n2021-03-01 03:00:00,abc", 1), 422,
     "line 5"),
    ("unsorted", _csv_of(history().iloc[[1, 0, *range(2, 20)]]), 422, "not sorted"),
    ("now as a date", _csv_of(history()).replace("\n2021-03-01 03:00:00,", "\nnow,", 1), 422,
     "'now'"),
    ("too few rows", _csv_of(history(INPUT_SIZE - 2)), 422, f"at least {INPUT_SIZE} rows"),
    ("wrong frequency", _csv_of(history().set_axis(pd.date_range("2021", periods=20, freq="D", name="date"))),
     422, "frequency 'h'"),
    # not the reader's line, which offers gzip: this route refuses compressed files (h45)
    ("not a CSV", "\x00\x01binary\x02", 422, "binary data (NUL bytes), not CSV text; expected an "
     "uncompressed CSV file (UTF-8, or UTF-16 with a byte-order mark)"),
    ("UTF-16 without a mark", _csv_of(history()).encode("utf-16-le"), 422, "expected an uncompressed CSV"),
    # read as a value, not as a missing cell whose row is dropped (a forecast one step late, answered 200)
    *((f"cell {cell}", _last_load(cell), 422,
       "line 21 (2021-03-01 19:00:00): value inf in column 'load' is too large for a float") for cell in
      ("1e400", "inf", "9" * 400)),
    ("gzip file", gzip.compress(_csv_of(history()).encode()), 422, "a gzip-compressed file; expected an "
     "uncompressed CSV file"),
    # the reader's advice, to name it .xlsx, is no option for an upload the service names
    ("workbook", b"PK\x03\x04" + b"\x00" * 40, 422, "a zip archive or an .xlsx workbook; expected an "
     "uncompressed CSV file (save the sheet as CSV)"),
    ("empty", "", 422, "empty"),
    ("gaps", _csv_of(history().assign(load=lambda frame: frame["load"].where(frame.index.hour % 3 > 0))), 422,
     "expected a number in every cell"),  # with no advice on --fill-missing, which a client cannot give
]  # fmt: skip


@pytest.mark.parametrize(("case", "text", "status", "needle"), BAD_CSV, ids=[case[0] for case in BAD_CSV])
def test_bad_csv_uploads_answer_4xx(client: Client, case: str, text: str, status: int, needle: str) -> None:
    response = client.post("/v1/models/hourly/forecast.csv", files={"file": ("../../etc/x.tar", text)})
    assert_error(response, status, "file", needle)
    assert "/tmp" not in response.json()["message"] and "--" not in response.json()["message"]


def test_a_csv_cell_over_the_field_limit_is_refused_naming_its_line(models_dir: Path) -> None:
    """Past the csv module's 131,072-character cell limit the refusal named no line (h52)."""
    upload = {"file": ("h.csv", _csv_of(history()) + "x" * 200_000 + "\n")}
    with serving(models_dir, max_body_bytes=400_000) as client:
        response = client.post("/v1/models/hourly/forecast.csv", files=upload)
    assert_error(response, 422, "file", "not a well-formed CSV file: line 22: field larger than field limit")


def test_csv_route_checks_content_type_file_field_and_horizon(client: Client) -> None:
    upload = {"file": ("h.csv", _csv_of(history()))}
    json_body = client.post("/v1/models/hourly/forecast.csv", json=body_of(history()))
    assert_error(json_body, 415, "content-type", "multipart/form-data")
    no_file = client.post("/v1/models/hourly/forecast.csv", files={"other": ("h.csv", "x")})
    assert_error(no_file, 422, "file", "required")
    for header, reason in (("multipart/form-data", "Missing boundary in multipart"),
                           ("multipart/form-data; boundary=x", "")):  # starlette's words alone before
        broken = client.post("/v1/models/hourly/forecast.csv", content=b"--y\r\nnot a part\r\n",
                             headers={"content-type": header})  # fmt: skip
        assert_error(broken, 400, None, f"the multipart body cannot be read ({reason}", "curl -F file=@")
    as_text = client.post("/v1/models/hourly/forecast.csv", files={"file": (None, "abc")})  # no filename
    assert_error(as_text, 422, "file", "expected a file part (with a filename), got a plain form field")
    too_far = client.post("/v1/models/hourly/forecast.csv", files=upload, params={"horizon": 9})
    assert_error(too_far, 422, "horizon", f"<= {HORIZON}")
    for field, text in (("horizon", "soon"), ("horizon", "3_0"), ("horizon", " 3"), ("level", "80.0"),
                        ("level", "\u0663")):  # int() read "3_0" as 30, " 3" as 3, "80.0" as 80  # fmt: skip
        not_int = client.post("/v1/models/hourly/forecast.csv", files=upload, params={field: text})
        assert_error(not_int, 422, field, f"{text!r} is not a whole number in digits; expected such as")
        assert not_int.json()["message"].startswith(f"{field}: {text!r}")  # the field named once
    too_large = client.post("/v1/models/hourly/forecast.csv", files=upload, params={"horizon": "1234567890"})
    assert_error(too_large, 422, "horizon", "'1234567890' is too large; expected such as ?horizon=24")  # h31
    # a part the route does not read is refused, not ignored (`-F horizon=3` answered every step)
    as_form = client.post("/v1/models/hourly/forecast.csv", files=upload, data={"horizon": "3"})
    assert_error(as_form, 422, "form", "form field 'horizon' is not read; expected one 'file' part")
    two = client.post("/v1/models/hourly/forecast.csv", files=[("file", ("a.csv", _csv_of(history()))),
                                                               ("file", ("b.csv", _csv_of(history())))])
    assert_error(two, 422, "file", "several 'file' parts; expected one CSV per request")
    encoded = base64.b64encode(_csv_of(history()).encode())  # a mail client's part, read as text (h33)
    mailed = (b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"h.csv\"\r\n"
              b"Content-Transfer-Encoding: base64\r\n\r\n" + encoded + b"\r\n--b--\r\n")
    refused = client.post("/v1/models/hourly/forecast.csv", content=mailed,
                          headers={"content-type": "multipart/form-data; boundary=b"})
    assert_error(refused, 415, "file", "a part in Content-Transfer-Encoding 'base64' is not decoded")


def test_an_error_answer_is_bounded_whatever_the_request_held(client: Client) -> None:
    """300,000 unknown columns were listed in a 6.4 MB message, a 1 MB name echoed twice; a NaN in a flat
    v2 tensor or a records row is one line saying so, not every member of a union."""
    body = {"timestamps": [], "values": {f"c{k}": [] for k in range(4_000)}}  # within this client's limit
    answer = client.post("/v1/models/hourly/forecast", json=body)
    assert answer.status_code == 422 and len(answer.content) < 8_000, len(answer.content)
    assert "unknown ['c0', 'c1', 'c2', 'c3', 'c4' and 3995 more]" in answer.json()["message"]
    body = {"timestamps": [], "values": {"x" * 50_000: []}}
    answer = client.post("/v1/models/hourly/forecast", json=body)
    assert answer.status_code == 422 and len(answer.content) < 8_000, len(answer.content)
    records = [{"timestamp": str(stamp), **row} for stamp, row in zip(
        history().index, history().to_dict("records"), strict=True)]  # fmt: skip
    raw = json.dumps({"data": records}).replace(json.dumps(records[2][COLUMNS[0]]), "NaN", 1)
    json_type = {"content-type": "application/json"}
    answer = client.post("/v1/models/hourly/forecast", content=raw, headers=json_type)
    assert_error(answer, 422, f"data[2].{COLUMNS[0]}", "expected a finite number (no NaN or Infinity")
    assert len(answer.json()["details"]) == 1
    raw = json.dumps(body_of(history())).replace(json.dumps(history()[COLUMNS[1]].iloc[3]), "1e309", 1)
    answer = client.post("/v1/models/hourly/forecast", content=raw, headers=json_type)  # read as inf
    assert_error(answer, 422, f"values.{COLUMNS[1]}[3]", "nor one past 1.8e308")  # h151: said NaN or Infinity


def test_a_body_of_many_wrong_cells_is_refused_at_its_first(client: Client) -> None:
    """Every wrong cell was an error FastAPI built before the handler kept 1,000: 2.6 M empty strings (7.8 MB)
    held the event loop 45 s and 3.6 GB, one record of 300,000 wrong keys 3 errors a key (h92 F1)."""
    cells = 4_000  # within this client's limit
    wrong = [
        ({"timestamps": _ROWS, "values": {"load": [""] * cells, "OT": [1.0]}}, "values.load[0]"),
        ({"timestamps": [0] * cells, "values": {}}, "timestamps[0]"),
        ({"values": {f"c{k}": "" for k in range(cells)}}, "values.c0"),
        ({"data": [{f"c{k}": [] for k in range(cells)}]}, "data[0].c0"),
        ({"data": [1] * MAX_ROWS}, "data[0]"),  # as many as --max-rows lets through
    ]
    for body, field in wrong:
        answer = client.post("/v1/models/hourly/forecast", json=body)
        assert_error(answer, 422, field)
        assert len(answer.json()["details"]) == 1 and "more" not in answer.json()["message"], answer.text
    records = [{"date": stamp, "load": 1.0, **{f"c{k}": k for k in range(100)}} for stamp in _ROWS]
    records[1]["c99"] = [1]  # a record of more members than are validated at once: its wrong one named
    answer = client.post("/v1/models/hourly/forecast", json={"data": records})
    assert_error(answer, 422, "data[1].c99", "expected a string, a number or an integer")


def test_inputs_and_records_are_counted_before_they_are_validated(client: Client) -> None:
    """570,000 inputs of `{"values": {}}` (8 MB) were each validated as a request, 8 s of the event loop,
    before --max-inputs counted them; a million records before --max-rows did (h92)."""
    answer = client.post("/v1/models/hourly/forecast", json={"inputs": [{}] * (MAX_INPUTS + 1)})
    assert_error(answer, 422, "inputs", f"at most {MAX_INPUTS} inputs per request, got {MAX_INPUTS + 1}")
    answer = client.post("/v1/models/hourly/forecast", json={"data": [1] * (MAX_ROWS + 1)})
    assert_error(answer, 422, "data", f"{MAX_ROWS + 1} records; expected at most {MAX_ROWS} ({MAX_ROWS} per")
    answer = client.post("/v1/models/made-up/forecast", json={"data": [1] * (MAX_ROWS + 1)})
    assert_error(answer, 404, "name", "unknown model 'made-up'")


# ---- fuzzing: no body, however malformed, gets a 5xx or takes the service down -----------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
_numbers = st.one_of(st.floats(), st.integers(-(10**30), 10**30), st.text(max_size=3), st.none())


@st.composite
def _mutated_bodies(draw) -> object:
    """A valid body with one part replaced by something random (keeps most of the structure intact)."""
    rows = draw(st.integers(0, 24))
    frame = history(max(rows, 1)).iloc[:rows]
    body = body_of(frame, horizon=draw(st.integers(-2, HORIZON + 2)))
    target = draw(
        st.sampled_from(["timestamps", "values", "column", "cell", "stamp", "horizon", "wrap", "drop"])
    )
    if target in ("timestamps", "values", "horizon"):
        body[target] = draw(_json_values)
    elif target == "column":
        body["values"][draw(st.sampled_from([*COLUMNS, "new"]))] = draw(st.lists(_numbers, max_size=30))
    elif target == "cell" and rows:
        body["values"]["OT"][draw(st.integers(0, rows - 1))] = draw(_numbers)
    elif target == "stamp" and rows:
        body["timestamps"][draw(st.integers(0, rows - 1))] = draw(st.text(max_size=30) | st.integers())
    elif target == "wrap":
        return {"inputs": draw(st.lists(st.just(body) | _json_values, max_size=3))}
    elif target == "drop":
        body.pop(draw(st.sampled_from(["timestamps", "values", "horizon"])))
    return body


@settings(max_examples=150, deadline=None, database=None)
@given(body=st.one_of(_mutated_bodies(), _json_values))
def test_fuzzed_json_bodies_never_get_a_5xx(client: Client, body: object) -> None:
    response = client.post("/v1/models/hourly/forecast", content=json.dumps(body).encode(),
                           headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code < 500, response.text
    if response.status_code != 200:
        assert response.json()["message"]
    else:
        answers = response.json().get("outputs") or [response.json()]
        assert all(math.isfinite(v) for a in answers for values in a["forecast"].values() for v in values)


@settings(max_examples=100, deadline=None, database=None)
@given(
    raw=st.binary(max_size=200),
    content_type=st.sampled_from(["application/json", "text/csv", "multipart/form-data; boundary=x", ""]),
    name=st.sampled_from(["hourly", "stepped"]) | st.text(min_size=1, max_size=12),
    route=st.sampled_from(["forecast", "forecast.csv"]),
)
def test_fuzzed_raw_requests_never_get_a_5xx(client: Client, raw: bytes, content_type: str, name: str,
                                             route: str) -> None:  # fmt: skip
    headers = {"content-type": content_type} if content_type else {}
    response = client.post(f"/v1/models/{quote(name, safe='')}/{route}", content=raw, headers=headers)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["message"]
    assert client.get("/health/ready").status_code == 200


def test_a_folder_name_with_a_line_break_logs_one_quoted_line(tmp_path: Path, caplog) -> None:
    """A models subfolder named 'x\\nINFO:     fake' wrote a forged log line: its name is logged quoted."""
    import logging

    from service.registry import ModelRegistry

    (tmp_path / "x\nINFO:     fake").mkdir()
    (tmp_path / "nv\n").mkdir()  # a name ending in a line break was served (h44)
    with caplog.at_level(logging.WARNING, logger="service.registry"):
        assert ModelRegistry(root=tmp_path).bundles() == {}
    records = [record for record in caplog.records if "skipping bundle" in record.getMessage()]
    assert len(records) == 2 and all("\n" not in record.getMessage() for record in records)
    assert "\\nINFO:     fake" in records[1].getMessage() and "nv\\n" in records[0].getMessage()


def test_an_upload_repeating_its_boundary_is_refused_before_it_is_parsed(client: Client) -> None:
    """python-multipart parses each boundary delimiter on the event loop (8 MB of them held every other
    request for 2.5-4.6 s): a body that repeats its boundary past 64 times is refused unparsed, as one
    that cannot be read; an upload of one part is served."""
    head = b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n'
    body = head + b"\r\r\n--XyZ" * 6_000 + b"\r\n--XyZ--\r\n"
    refused = client.post("/v1/models/hourly/forecast.csv", content=body,
                          headers={"content-type": "multipart/form-data; boundary=XyZ"})  # fmt: skip
    assert_error(refused, 400, None, "the multipart body cannot be read (its boundary occurs 6,002 times, "
                 "expected at most 64)")  # fmt: skip
    served = client.post("/v1/models/hourly/forecast.csv", files={"file": ("h.csv", history(30).to_csv())})
    assert served.status_code == 200, served.text


def test_an_upload_cut_before_its_closing_boundary_is_named_as_cut(client: Client) -> None:
    """A body whose 'file' part was sent whole but not its closing boundary was answered 'file: required
    field is missing' (h112 F6): the part was sent, the body was cut. One whose Content-Type declares
    another boundary than its parts' was called cut short too (h151): it is named as such."""
    head = b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="h.csv"\r\n\r\n'
    whole = head + history(30).to_csv().encode() + b"\r\n--XyZ--\r\n"
    for cut in (whole[: -len(b"--XyZ--\r\n")], whole[: -len(b"--\r\n")], whole[: len(whole) // 2]):
        answer = client.post("/v1/models/hourly/forecast.csv", content=cut,
                             headers={"content-type": "multipart/form-data; boundary=XyZ"})  # fmt: skip
        assert_error(answer, 400, None, "the multipart body cannot be read (it ends before its closing "
                     "boundary: cut short)")  # fmt: skip
    for declared, shown in (("XyZW", "'XyZW' of 4"), ("b" * 5000, f"'{'b' * 40}...' of 5,000")):
        declaring = {"content-type": f"multipart/form-data; boundary={declared}"}
        answer = client.post("/v1/models/hourly/forecast.csv", content=whole, headers=declaring)
        assert_error(answer, 400, None, "the multipart body cannot be read (the boundary its Content-Type "
                     f"declares, {shown} characters, occurs nowhere in it); expected one 'file' part")
    served = client.post("/v1/models/hourly/forecast.csv", content=whole,
                         headers={"content-type": "multipart/form-data; boundary=XyZ"})  # fmt: skip
    assert served.status_code == 200, served.text

"""The service's throughput paths (issue 23): micro-batches formed from the requests that wait, and the
fast paths (orjson bodies, numpy timestamps and labels, httptools, the torch threads left to the event loop,
the frozen startup objects) answering exactly as the slow ones."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_service import INPUT_SIZE, body_of, forecast_array, history, make_bundle, predict, serving

from forecaster.artifacts import Bundle, load_bundle
from forecaster.data.dates import parse_timestamps
from forecaster.prediction import PreparedHistory, predict_outputs
from service import config as config_module
from service.batching import MicroBatcher
from service.config import ServiceSettings, default_torch_threads
from service.errors import ApiError
from service.schemas import BatchForecastResponse, ForecastResponse
from service.server import GuardedH11Protocol, GuardedHttpToolsProtocol, HeadDeadline, uvicorn_options
from service.timestamps import answer_labels, json_timestamps


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("models")
    make_bundle(root)
    return root


@pytest.fixture(scope="module")
def bundle(models_dir: Path) -> Bundle:
    return load_bundle(models_dir / "hourly")


def _windows(count: int) -> list[np.ndarray]:
    return [history(seed=seed).to_numpy()[-INPUT_SIZE:] for seed in range(count)]


class RecordingPredict:
    """predict_outputs that records each batch's size; with `hold_first`, the first batch waits for `gate`."""

    def __init__(self, bundle: Bundle, *, hold_first: bool = False):
        self.bundle, self.hold_first = bundle, hold_first
        self.sizes: list[int] = []
        self.started, self.gate = threading.Event(), threading.Event()

    def __call__(self, windows: np.ndarray) -> np.ndarray:
        self.sizes.append(len(windows))
        self.started.set()
        if self.hold_first and len(self.sizes) == 1:
            self.gate.wait(timeout=60)
        return predict_outputs(self.bundle, windows)


def _assert_batch_answers(bundle: Bundle, batches: list[list[np.ndarray]], results: list[np.ndarray]) -> None:
    """Each answer is bit for bit the in-process forecast of the batch it was part of; against one-by-one
    calls, batched convolutions may round the float32 last bits differently, no more."""
    expected = [row for windows in batches for row in predict_outputs(bundle, np.stack(windows))]
    for result, exact, window in zip(results, expected, [w for ws in batches for w in ws], strict=True):
        assert np.array_equal(result, exact)
        np.testing.assert_allclose(result, predict_outputs(bundle, window[None])[0], rtol=1e-5, atol=1e-6)


def _run(predict: RecordingPredict, scenario, **options) -> list[np.ndarray]:
    async def main() -> list[np.ndarray]:
        with ThreadPoolExecutor(max_workers=1) as executor:
            batcher = MicroBatcher(predict, executor=executor, **options)
            batcher.start()
            try:
                return await scenario(batcher)
            finally:
                await batcher.stop()

    return asyncio.run(main())


def test_requests_that_wait_while_a_batch_computes_form_the_next_batch(bundle: Bundle) -> None:
    windows = _windows(10)
    predict = RecordingPredict(bundle, hold_first=True)

    async def scenario(batcher: MicroBatcher) -> list[np.ndarray]:
        first = asyncio.ensure_future(batcher.submit(windows[0]))
        await asyncio.to_thread(predict.started.wait, 60)
        # The first batch computes off the event loop, which meanwhile takes the other nine requests.
        rest = [asyncio.ensure_future(batcher.submit(window)) for window in windows[1:]]
        await asyncio.sleep(0)
        predict.gate.set()
        return await asyncio.gather(first, *rest)

    results = _run(predict, scenario, max_batch_size=64, max_wait_s=0.0)
    assert predict.sizes == [1, 9]
    _assert_batch_answers(bundle, [windows[:1], windows[1:]], results)


def test_requests_already_waiting_share_a_batch_up_to_its_size(bundle: Bundle) -> None:
    windows = _windows(10)
    predict = RecordingPredict(bundle)

    async def scenario(batcher: MicroBatcher) -> list[np.ndarray]:
        return await asyncio.gather(*(batcher.submit(window) for window in windows))

    results = _run(predict, scenario, max_batch_size=4, max_wait_s=0.0)
    assert predict.sizes == [4, 4, 2]
    _assert_batch_answers(bundle, [windows[:4], windows[4:8], windows[8:]], results)


def test_a_request_arriving_within_the_wait_joins_the_batch(bundle: Bundle) -> None:
    windows = _windows(2)
    predict = RecordingPredict(bundle)

    async def scenario(batcher: MicroBatcher) -> list[np.ndarray]:
        first = asyncio.ensure_future(batcher.submit(windows[0]))
        await asyncio.sleep(0.05)  # well within the wait; the batch leaves as soon as it is full
        return await asyncio.gather(first, batcher.submit(windows[1]))

    results = _run(predict, scenario, max_batch_size=2, max_wait_s=60.0)
    assert predict.sizes == [2]
    _assert_batch_answers(bundle, [windows], results)


def test_concurrent_http_requests_are_answered_from_shared_batches(models_dir: Path, bundle: Bundle) -> None:
    frames = [history(seed=seed) for seed in range(12)]
    with serving(models_dir, max_batch_size=6, max_wait_ms=60_000) as running:
        responses = running.post_concurrently("/v1/models/hourly/forecast", [body_of(f) for f in frames])
    assert [response.status_code for response in responses] == [200] * 12
    for frame, response in zip(frames, responses, strict=True):
        np.testing.assert_allclose(
            forecast_array(response.json()), predict(bundle, frame.to_numpy()), rtol=1e-5, atol=1e-6
        )


def test_bodies_orjson_refuses_are_read_by_the_json_module(models_dir: Path, bundle: Bundle) -> None:
    frame = history()
    text = json.dumps(body_of(frame))
    with serving(models_dir) as running:
        plain = running.post("/v1/models/hourly/forecast", json=body_of(frame)).json()
        # a UTF-8 byte-order mark, which RFC 8259 lets readers ignore: orjson refuses it, the json module not
        marked = running.post(
            "/v1/models/hourly/forecast",
            content=text.encode("utf-8-sig"),
            headers={"content-type": "application/json"},
        )
    assert marked.status_code == 200 and marked.json() == plain
    assert np.array_equal(forecast_array(plain), predict(bundle, frame.to_numpy()))


def test_answers_serialized_by_orjson_are_the_documented_models(models_dir: Path) -> None:
    with serving(models_dir) as running:
        single = running.post("/v1/models/hourly/forecast", json=body_of(history()))
        several = running.post(
            "/v1/models/hourly/forecast",
            json={"inputs": [body_of(history()), body_of(history(seed=1), horizon=2)]},
        )
    for response, model in ((single, ForecastResponse), (several, BatchForecastResponse)):
        assert response.status_code == 200 and response.headers["content-type"] == "application/json"
        # Every field of the model and nothing else, with the values the model reads.
        assert model.model_validate_json(response.content).model_dump(mode="json") == response.json()
    assert len(several.json()["outputs"][1]["timestamps"]) == 2


PLAIN = [str(stamp) for stamp in pd.date_range("2021-03-01", periods=30, freq="h")]


@pytest.mark.parametrize(
    "stamps",
    [
        PLAIN,
        [stamp.replace(" ", "T") for stamp in PLAIN],
        [str(stamp) for stamp in pd.date_range("2020-02-28 22:00", periods=5, freq="h")],
        ["1000-01-01 00:00:00", "9999-12-31 23:59:59"],
        [str(stamp) for stamp in pd.date_range("2021-03-01", periods=5, freq="250ms")],
        [stamp.isoformat() for stamp in pd.date_range("2021-03-01", periods=5, freq="h", tz="UTC")],
        ["2021-03-01", "2021-03-02"],
    ],
    ids=["space", "T", "leap day", "years 1000-9999", "sub-second", "time zone", "dates"],
)
def test_timestamps_parse_as_pandas_reads_them(stamps: list[str]) -> None:
    expected = pd.DatetimeIndex(pd.to_datetime(stamps, format="ISO8601"))
    parsed = json_timestamps(stamps, "timestamps")
    assert parsed.equals(expected) and parsed.dtype == expected.dtype


@pytest.mark.parametrize(("end", "read"), [("2021-03-01T24:00:00", "2021-03-02 00:00"),
                                           ("2021-03-01T23:59:60", "2021-03-02 00:00"),
                                           ("2021-03-01T23:59:60Z", "2021-03-02 00:00+00:00")])  # fmt: skip
def test_an_hour_of_24_or_a_leap_second_is_read_as_a_file_reads_it(end: str, read: str) -> None:
    """ISO 8601's end of a day, 24:00, and a leap second, 23:59:60: read by the CSV and records routes and
    refused by the JSON route."""
    zone = "Z" if end.endswith("Z") else ""
    stamps = [f"2021-03-01 22:00:00{zone}", f"2021-03-01T23:00:00{zone}", end, f"2021-03-02 01:00:00{zone}"]
    parsed = json_timestamps(stamps, "timestamps")
    assert parsed.equals(pd.DatetimeIndex(parse_timestamps(pd.Series(stamps))))
    assert parsed[2] == pd.Timestamp(read)


@pytest.mark.parametrize("bad", ["2021-02-29 00:00:00", "2021-03-01 25:00:00", "2021-13-01 00:00:00"])
def test_impossible_plain_timestamps_are_named_by_position(bad: str) -> None:
    with pytest.raises(ApiError) as raised:
        json_timestamps([*PLAIN[:3], bad, *PLAIN[4:]], "timestamps")
    assert raised.value.field == "timestamps[3]" and "ISO 8601" in raised.value.detail


@pytest.mark.parametrize(
    "future",
    [
        pd.date_range("2021-03-01 05:00", periods=24, freq="h"),
        pd.date_range("2021-03-01 05:00", periods=4, freq="250ms"),
        pd.date_range("2021-03-01 05:00", periods=4, freq="h", tz="Europe/Berlin"),
        pd.RangeIndex(20, 24),
    ],
    ids=["hourly", "sub-second", "time zone", "steps"],
)
def test_answer_labels_are_the_prepared_labels(future: pd.Index) -> None:
    prepared = PreparedHistory(window=np.zeros((INPUT_SIZE, 2)), horizon=len(future), future=future)
    assert answer_labels(prepared) == prepared.labels


def test_both_http_protocols_carry_the_head_deadline() -> None:
    for name, protocol in (("httptools", GuardedHttpToolsProtocol), ("h11", GuardedH11Protocol)):
        assert issubclass(protocol, HeadDeadline)
        options = uvicorn_options(ServiceSettings(models_dir=".", http=name))
        assert options["http"] == f"service.server:{protocol.__name__}"
    assert ServiceSettings(models_dir=".").http == "httptools"


@pytest.mark.parametrize(("cores", "workers", "threads"), [(16, 1, 15), (16, 4, 3), (2, 1, 1), (1, 1, 1)])
def test_torch_threads_leave_each_worker_a_core_for_its_event_loop(
    monkeypatch: pytest.MonkeyPatch, cores: int, workers: int, threads: int
) -> None:
    monkeypatch.setattr(config_module.os, "cpu_count", lambda: cores)
    assert default_torch_threads(workers) == threads


def test_startup_objects_are_frozen_while_the_app_runs(models_dir: Path) -> None:
    with serving(models_dir) as running:
        assert running.get("/health/ready").status_code == 200
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_request_bodies_are_read_in_at_most_the_reading_threads(
    models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight records requests at once run at most `reading_threads` at a time: with anyio's 40 threads, a
    burst of 100 held a liveness probe for 2-15 s (h56 #7)."""
    from service import routes

    lock, running, most = threading.Lock(), [0], [0]

    def counted(*args, **kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            threading.Event().wait(0.05)  # long enough for every request to have reached its thread
            return forecast_records(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    forecast_records = routes.forecast_records
    monkeypatch.setattr(routes, "forecast_records", counted)
    records = history().reset_index().assign(date=lambda table: table["date"].astype(str)).to_dict("records")
    with serving(models_dir, reading_threads=2) as client:
        answers = client.post_concurrently("/v1/models/hourly/forecast", [{"data": records}] * 8)
    assert [answer.status_code for answer in answers] == [200] * 8
    assert most[0] == 2

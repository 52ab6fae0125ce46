"""Open Inference Protocol v2: health and metadata as the protocol says, and `infer` answering the v1
forecast's numbers (as FP32) for the same rows, with one-line 422s for malformed tensors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from test_service import COLUMNS, HORIZON, INPUT_SIZE, body_of, history, make_bundle, serving

from forecaster.calibration import Calibration


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from forecaster.artifacts import write_calibration

    root = tmp_path_factory.mktemp("oip")
    path = make_bundle(root)
    scores = np.abs(np.random.default_rng(0).normal(size=(200, HORIZON, len(COLUMNS))))
    write_calibration(path, Calibration.from_scores(scores, [], "test windows", "conformal"))
    return root


@pytest.fixture(scope="module")
def client(models_dir: Path) -> Iterator:
    with serving(models_dir) as running:
        yield running


def tensor(frames: list, name: str = "history", datatype: str = "FP32") -> dict:
    values = np.stack([frame.to_numpy()[-INPUT_SIZE:] for frame in frames]).astype(np.float32)
    return {"name": name, "shape": list(values.shape), "datatype": datatype, "data": values.ravel().tolist()}


def float32_history(seed: int):
    """History whose numbers are exact in FP32, so v1 (JSON doubles) and v2 (FP32) see the same input."""
    frame = history(rows=INPUT_SIZE, seed=seed)
    return frame.astype(np.float32).astype(np.float64)


def test_health_and_metadata_follow_the_protocol(client):
    assert client.get("/v2/health/live").json() == {"live": True}
    assert client.get("/v2/health/ready").json() == {"ready": True}
    for part in ("live", "ready"):
        assert client.request("HEAD", f"/v2/health/{part}").status_code == 200
    assert client.get("/v2/models/hourly/ready").json() == {"name": "hourly", "ready": True}
    metadata = client.get("/v2/models/hourly").json()
    assert metadata["inputs"] == [{"name": "history", "datatype": "FP32", "shape": [-1, INPUT_SIZE, 2]}]
    assert metadata["outputs"] == [{"name": "forecast", "datatype": "FP32", "shape": [-1, HORIZON, 2]}]
    assert client.get("/v2").json()["name"] == "forecaster"
    assert client.get("/v2/models/nope").status_code == 404
    assert client.get("/v2/models/nope/ready").status_code == 404


def test_the_versioned_routes_answer_the_served_version_and_name_it_otherwise(client):
    """The metadata lists one version and every answer carries it as model_version; Triton's and KServe's
    clients given it call `/v2/models/{name}/versions/{version}/...`, answered 404 'no route' (h62 F4)."""
    from forecaster import __version__

    served = f"/v2/models/hourly/versions/{__version__}"
    assert client.get("/v2/models/hourly").json()["versions"] == [__version__]
    assert client.get(served).json() == client.get("/v2/models/hourly").json()
    assert client.get(f"{served}/ready").json() == {"name": "hourly", "ready": True}
    body = {"id": "r1", "inputs": [tensor([float32_history(3)])], "parameters": {"level": [80]}}
    answer = client.post(f"{served}/infer", json=body)
    assert answer.status_code == 200 and answer.json()["model_version"] == __version__
    assert answer.json() == client.post("/v2/models/hourly/infer", json=body).json()
    for path in ("", "/ready", "/infer"):
        url = f"/v2/models/hourly/versions/9.9{path}"
        other = client.post(url, json=body) if path == "/infer" else client.get(url)
        assert other.status_code == 404 and other.json()["details"] == [
            {"field": "version", "message": f"unknown model version '9.9'; served: {__version__!r}"}
        ]
    assert client.get(f"/v2/models/nope/versions/{__version__}").status_code == 404


def _v2(client, frames: list, levels: list[int]) -> dict[str, np.ndarray]:
    body = {"id": "r1", "inputs": [tensor(frames)], "parameters": {"level": levels}}
    answer = client.post("/v2/models/hourly/infer", json=body)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["id"] == "r1" and result["model_name"] == "hourly"
    assert all(output["datatype"] == "FP32" for output in result["outputs"])
    return {
        output["name"]: np.asarray(output["data"], np.float32).reshape(output["shape"])
        for output in result["outputs"]
    }


def _v1(client, frame, levels: list[int]) -> dict[str, np.ndarray]:
    v1 = client.post("/v1/models/hourly/forecast", json=body_of(frame, level=levels)).json()["forecast"]
    names = [("forecast", "")] + [
        (f"{side}-{level}", f"-{side}-{level}") for level in levels for side in ("lo", "hi")
    ]
    return {
        name: np.array([v1[f"{column}{suffix}"] for column in COLUMNS]).T.astype(np.float32)
        for name, suffix in names
    }


def test_infer_equals_the_v1_forecast_bit_for_bit(client):
    frame = float32_history(1)
    got, expected = _v2(client, [frame], [80, 95]), _v1(client, frame, [80, 95])
    assert list(got) == ["forecast", "lo-80", "hi-80", "lo-95", "hi-95"]
    assert got["forecast"].shape == (1, HORIZON, 2)
    for name, values in expected.items():
        np.testing.assert_array_equal(got[name][0], values)


def test_a_batch_tensor_answers_each_history(client):
    """B histories in one tensor: each equals its own v1 forecast up to float32 rounding (matrix products
    of a batch of 3 and of 1 may round differently)."""
    frames = [float32_history(seed) for seed in range(3)]
    got = _v2(client, frames, [80])
    for position, frame in enumerate(frames):
        for name, values in _v1(client, frame, [80]).items():
            np.testing.assert_allclose(got[name][position], values, rtol=1e-6)


def test_nested_data_and_fp64_are_accepted(client):
    frame = float32_history(7)
    flat = client.post("/v2/models/hourly/infer", json={"inputs": [tensor([frame])]}).json()
    nested = tensor([frame], datatype="FP64")
    nested["data"] = frame.to_numpy()[None].tolist()
    assert (
        client.post("/v2/models/hourly/infer", json={"inputs": [nested]}).json()["outputs"] == flat["outputs"]
    )


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"shape": [1, INPUT_SIZE + 1, 2]}, "inputs[0].shape", f"expected shape [B, {INPUT_SIZE}, 2]"),
        ({"name": "x"}, "inputs[0].name", "expected the input tensor 'history'"),
        ({"data": [1.0, 2.0]}, "inputs[0].data", f"expected {INPUT_SIZE * 2} numbers"),
        ({"data": [[1.0], [2.0, 3.0]]}, "inputs[0].data", "numbers for shape"),
        # the history transposed (channels first): the right count of numbers, nested against the shape
        ({"data": np.zeros((1, 2, INPUT_SIZE)).tolist()}, "inputs[0].data",
         f"data nested as [1, 2, {INPUT_SIZE}]; expected it flat or nested as the shape"),
        ({"datatype": "INT8"}, "inputs[0].datatype", "expected 'FP32' or 'FP64', got 'INT8'"),
        ({"shape": [9, INPUT_SIZE, 2]}, "inputs[0].shape", "at most"),
    ],
)
def test_malformed_tensors_get_one_line_422(client, change, field, message):
    body = {"inputs": [{**tensor([float32_history(0)]), **change}]}
    answer = client.post("/v2/models/hourly/infer", json=body)
    assert answer.status_code == 422, answer.text
    details = answer.json()["details"]
    assert any(detail["field"].startswith(field) and message in detail["message"] for detail in details), (
        details
    )


def test_non_finite_values_and_bad_levels_are_named(client):
    big = tensor([float32_history(0)])
    big["data"][-3] = 1e39  # beyond FP32: infinite once read as FP32
    answer = client.post("/v2/models/hourly/infer", json={"inputs": [big]})
    assert answer.status_code == 422 and "value 1e+39 at flat index" in answer.text  # finite, not FP32
    assert "beyond FP32's range (+-3.403e+38); expected FP32 numbers, or datatype FP64" in answer.text
    as_fp64 = client.post("/v2/models/hourly/infer", json={"inputs": [{**big, "datatype": "FP64"}]})
    assert as_fp64.status_code == 422 and "beyond FP32" not in as_fp64.text  # the model's answer is named
    body = {"inputs": [tensor([float32_history(0)])], "parameters": {"level": ["80"]}}
    answer = client.post("/v2/models/hourly/infer", json=body)
    assert answer.status_code == 422 and answer.json()["details"][0]["field"] == "parameters.level"


def test_a_tensor_given_twice_is_named_as_repeated(client):
    """`{"inputs": [H, H]}` was answered "expected the input tensor 'history'; got 'history'" (h62 F4)."""
    history_tensor = tensor([float32_history(0)])
    answer = client.post("/v2/models/hourly/infer", json={"inputs": [history_tensor, history_tensor]})
    assert answer.status_code == 422 and answer.json()["details"] == [{
        "field": "inputs[1].name",
        "message": "the input tensor 'history' is given twice (inputs[0] too); expected the input tensor "
                   "'history'",
    }]


def test_outputs_asked_are_the_outputs_answered_and_unknown_or_repeated_ones_are_named(client):
    inputs = [tensor([float32_history(0)])]
    body = {"inputs": inputs, "parameters": {"level": [80]}, "outputs": [{"name": "hi-80"}]}
    answer = client.post("/v2/models/hourly/infer", json=body)
    assert answer.status_code == 200 and [output["name"] for output in answer.json()["outputs"]] == ["hi-80"]
    body["outputs"] = [{"name": "hi-80"}, {"name": "forecast"}]  # answered in the order asked
    answer = client.post("/v2/models/hourly/infer", json=body)
    assert [output["name"] for output in answer.json()["outputs"]] == ["hi-80", "forecast"]
    answer = client.post("/v2/models/hourly/infer?level=80", json={"inputs": inputs})
    assert answer.status_code == 422 and "unexpected query parameter 'level'" in answer.json()["message"]
    for extra, field, needle in (
        ({"outputs": [{"name": "lo-80"}]}, "outputs", "unknown output 'lo-80'; this request answers"),
        ({"outputs": [{"name": "forecast"}] * 2}, "outputs", "output 'forecast' asked twice"),
        ({"outputs": []}, "outputs", "no output asked"),
        ({"parameters": {"horizon": 4}}, "parameters", "unknown parameter 'horizon'"),
        ({"parameters": {"level": []}}, "parameters.level", "expected a list of at most 99 integer levels"),
        ({"parameters": {"level": [80] * 100}}, "parameters.level", "at most 99 integer levels"),  # unbounded
        ({"outputs": [{"name": "forecast"}] * 200}, "outputs", "at most 199"),  # each checked against all
        ({"inputs": [{**inputs[0], "parameters": {"level": [80]}}]}, "inputs[0].parameters",
         "unknown input parameter 'level'; expected interval levels in the request's \"parameters\""),
    ):
        answer = client.post("/v2/models/hourly/infer", json={"inputs": inputs, **extra})
        assert answer.status_code == 422 and answer.json()["details"][0]["field"] == field
        assert needle in answer.json()["message"]


def test_the_binary_tensor_extension_is_refused_by_name(client):
    tensor_header = {"name": "history", "shape": [1, INPUT_SIZE, 2], "datatype": "FP32",
                     "parameters": {"binary_data_size": INPUT_SIZE * 8}}  # fmt: skip
    header = json.dumps({"inputs": [tensor_header]}).encode()
    answer = client.post(
        "/v2/models/hourly/infer", content=header + np.zeros(INPUT_SIZE * 2, np.float32).tobytes(),
        headers={"content-type": "application/json", "inference-header-content-length": str(len(header))},
    )
    assert answer.status_code == 415 and "binary tensor data extension" in answer.json()["message"]


def test_a_nan_or_text_in_a_flat_tensor_is_one_detail_at_its_index(client):
    """The data union (flat or nested lists) reported 841 details for one NaN, most "expected a list" from
    the nested member: the closest member's error alone, at the value's index."""
    body = tensor([float32_history(0)])
    raw = json.dumps({"inputs": [body]}).replace(json.dumps(body["data"][3]), "NaN", 1)
    answer = client.post("/v2/models/hourly/infer", content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 422 and answer.json()["details"] == [
        {"field": "inputs[0].data[3]",
         "message": "expected a finite number (no NaN or Infinity, nor one past 1.8e308 such as 1e309)"}]
    body["data"][5] = "1.0"
    answer = client.post("/v2/models/hourly/infer", json={"inputs": [body]})
    assert answer.status_code == 422 and answer.json()["message"] == "inputs[0].data[5]: expected a number"


def test_histories_on_another_scale_are_noted_in_the_answers_parameters(client):
    """v2 answered a column sent in other units (OT in millionths) without a word, as v1 did (h92 F0): its
    notes are the response's `parameters`, each of a batch named by its history."""
    frame = float32_history(0)
    infer = "/v2/models/hourly/infer"
    assert "parameters" not in client.post(infer, json={"inputs": [tensor([frame])]}).json()
    far = frame.assign(OT=frame["OT"] * 1e6)
    [note] = client.post(infer, json={"inputs": [tensor([far])]}).json()["parameters"]["notes"]
    assert note.startswith("note: column 'OT' holds ") and "far beyond what it learned" in note, note
    batch = client.post(infer, json={"inputs": [tensor([frame, far])]}).json()
    assert batch["parameters"] == {"notes": [f"history 1: {note}"]}


def test_a_tensor_of_many_wrong_numbers_is_refused_at_its_first(client):
    """Each wrong number was an error per member of the data union, all built before the handler kept 1,000:
    400,000 empty strings (1.2 MB) held the event loop 16 s (h92 F1). Nested data is read as it nests."""
    for data, field in (([""] * 4_000, "inputs[0].data[0]"), ([[1.0, ""]] * 4_000, "inputs[0].data[0][1]"),
                        ([[[1.0], [None]]] * 2_000, "inputs[0].data[0][1][0]")):  # within this client's limit
        body = {"name": "history", "shape": [1, INPUT_SIZE, 2], "datatype": "FP32", "data": data}
        answer = client.post("/v2/models/hourly/infer", json={"inputs": [body]})
        assert answer.status_code == 422, answer.text
        assert answer.json()["details"] == [{"field": field, "message": "expected a number"}], answer.text


def test_a_forecast_beyond_fp32_is_refused_not_answered_as_null(tmp_path):
    """A naive model repeats an FP64 history's 1e39, which FP32 holds only as infinity: the answer's data was
    null at a 200. Such a history is refused as train refuses it (h56); forecasts that grow beyond FP32 from
    smaller values meet the output's own check."""
    import pandas as pd

    from forecaster.api import Forecaster

    frame = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=60, freq="h"), "a": np.arange(60.0)})
    Forecaster("naive", horizon=2, input_size=4).fit(frame).save(tmp_path / "naive")
    body = {"inputs": [{"name": "history", "shape": [1, 4, 1], "datatype": "FP64", "data": [1, 2, 3, 1e39]}]}
    with serving(tmp_path) as client:
        answer = client.post("/v2/models/naive/infer", json=body)
    assert answer.status_code == 422 and answer.json()["details"][0]["field"] == "inputs[0].data"
    assert "value 1e+39 in column 'a'; expected numbers of |value| <= 1.84e+19" in answer.text


def test_a_forecast_that_grows_beyond_fp32_meets_the_outputs_check(tmp_path):
    """Drift of a logged channel from 6e-6 to 1.6e19 (both within train's bound) forecasts exp(100), 2.7e43:
    finite as a float64, infinity as FP32, which JSON would write as null at a 200."""
    import pandas as pd

    from forecaster.api import Forecaster
    from forecaster.data.series import DataQualityWarning

    frame = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=60, freq="h"),
                          "a": np.exp(np.linspace(0, 3, 60))})  # fmt: skip
    with pytest.warns(DataQualityWarning, match="in logarithms"):
        Forecaster("drift", horizon=1, input_size=2, transform="log").fit(frame).save(tmp_path / "drift")
    body = {"inputs": [{"name": "history", "shape": [1, 2, 1], "datatype": "FP64", "data": [6e-6, 1.6e19]}]}
    with serving(tmp_path) as client:
        answer = client.post("/v2/models/drift/infer", json=body)
    assert answer.status_code == 422, answer.text
    assert "output 'forecast' reaches 4.267e+43, beyond FP32's" in answer.json()["message"]


def test_answers_past_the_numbers_limit_are_refused_before_they_are_forecast(models_dir):
    """256 histories at 99 levels answered 59 MB (v1) and 158 MB (v2), built and serialized on the event
    loop. An answer holds series x horizon x (1 + 2 x levels) numbers; past --max-answer-numbers: a 422."""
    frames = [float32_history(seed) for seed in range(3)]
    limit = 3 * HORIZON * len(COLUMNS) * (1 + 2 * 2)  # three histories at two levels, exactly
    with serving(models_dir, max_answer_numbers=limit) as client:
        v1 = {"inputs": [body_of(frame, level=[80, 95]) for frame in frames]}
        assert client.post("/v1/models/hourly/forecast", json=v1).status_code == 200
        v1["inputs"][0]["level"] = [50, 80, 95]
        refused = client.post("/v1/models/hourly/forecast", json=v1).json()
        v2 = {"inputs": [tensor(frames)], "parameters": {"level": [80, 95]}}
        assert client.post("/v2/models/hourly/infer", json=v2).status_code == 200
        v2["parameters"]["level"] = [50, 80, 95]
        refused_v2 = client.post("/v2/models/hourly/infer", json=v2).json()
        frame = frames[0].rename_axis("date").reset_index()  # the records and CSV routes: one table each
        records = {"data": frame.astype({"date": str}).to_dict(orient="records"), "level": [80]}
        upload = {"file": ("recent.csv", frame.to_csv(index=False).encode())}
        assert client.post("/v1/models/hourly/forecast", json=records).status_code == 200
        assert client.post("/v1/models/hourly/forecast.csv", files=upload, params={"level": [80]}).is_success
    one = HORIZON * len(COLUMNS) * 3  # one table at one level
    with serving(models_dir, max_answer_numbers=one - 1) as client:
        refused_records = client.post("/v1/models/hourly/forecast", json=records).json()
        refused_csv = client.post("/v1/models/hourly/forecast.csv", files=upload, params={"level": 80}).json()
    assert refused["message"].startswith(f"level: the answer would hold {limit + 2 * HORIZON * 2:,} numbers")
    assert f"expected at most {limit:,}" in refused["message"]
    assert refused_v2["details"][0]["field"] == "parameters" and "would hold" in refused_v2["message"]
    for refusal in (refused_records, refused_csv):
        assert refusal["message"].startswith(f"level: the answer would hold {one} numbers")


def test_a_level_asked_twice_is_refused_on_every_route(client):
    """`level: [80, 80]` was answered as [80], the copy dropped without a word, on v1 (one history, several,
    records), the CSV route and v2 alike (h151): no answer of named bounds holds `lo-80` twice."""
    frame = float32_history(0)
    table = frame.rename_axis("date").reset_index()
    records = {"data": table.astype({"date": str}).to_dict(orient="records"), "level": [95, 80, 95]}
    upload = {"file": ("recent.csv", table.to_csv(index=False).encode())}
    answers = {
        "level": client.post("/v1/models/hourly/forecast", json=body_of(frame, level=[80, 80])),
        "inputs[1].level": client.post("/v1/models/hourly/forecast", json={
            "inputs": [body_of(frame, level=[80]), body_of(frame, level=[80, 95, 80])]}),
        "records level": client.post("/v1/models/hourly/forecast", json=records),
        "csv level": client.post("/v1/models/hourly/forecast.csv", files=upload, params={"level": [80, 80]}),
        "parameters.level": client.post("/v2/models/hourly/infer", json={
            "inputs": [tensor([frame])], "parameters": {"level": [80, 80]}}),
    }  # fmt: skip
    for where, answer in answers.items():
        field = where.split()[-1]
        twice = 95 if where == "records level" else 80
        assert answer.status_code == 422, (where, answer.text[:300])
        assert answer.json()["details"] == [
            {"field": field, "message": f"interval level {twice} given twice; expected each level once, "
             "e.g. 80,95"}
        ], where
    assert client.post("/v1/models/hourly/forecast", json=body_of(frame, level=[95, 80])).status_code == 200

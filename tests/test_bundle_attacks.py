"""Tampered bundles (issue 23): each is refused at load, fast, by a one-line BundleError naming the field or
tensor at fault and what was expected, before anything the tampering asks for is allocated."""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from forecaster.artifacts import load_bundle, save_bundle
from forecaster.data import Scaler
from forecaster.data.config import DataConfig
from forecaster.errors import MESSAGE_LIMIT, BundleError
from forecaster.models import get_model

INPUT_SIZE, HORIZON = 24, 6
LEFT_INDEX = "layers.0.mixer.attention.left_index"


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """A small real S3Attention bundle (two layers, so two sampled index sets per kind)."""
    torch.manual_seed(0)
    model = get_model(
        "s3attention", input_size=INPUT_SIZE, horizon=HORIZON, n_channels=3, d_model=8, n_heads=2, fold=2
    )
    data = DataConfig(
        source="memory", columns=["a", "b", "c"], freq="h", date_col="date", input_size=INPUT_SIZE,
        horizon=HORIZON, split="7:1:2",
    )  # fmt: skip
    return save_bundle(
        tmp_path / "bundle", model=model, model_name="s3attention", metrics={}, training={}, data=data,
        scaler=Scaler(np.zeros(3), np.ones(3)),
    )  # fmt: skip


def edit_config(path: Path, change) -> None:
    config = json.loads((path / "config.json").read_text())
    change(config)
    (path / "config.json").write_text(json.dumps(config))


def edit_weights(path: Path, change) -> None:
    tensors = load_file(path / "weights.safetensors")
    change(tensors)
    save_file(tensors, path / "weights.safetensors")


def refused(path: Path, *fragments: str) -> str:
    """The one-line, readable BundleError that loading `path` raises; it contains every fragment."""
    with pytest.raises(BundleError) as caught:
        load_bundle(path)
    message = str(caught.value)
    assert "\n" not in message and len(message) <= MESSAGE_LIMIT, message
    for fragment in fragments:
        assert fragment in message
    return message


def test_the_untampered_bundle_loads_and_forecasts(bundle):
    forecast = load_bundle(bundle).model(torch.randn(2, INPUT_SIZE, 3))
    assert forecast.shape == (2, HORIZON, 3) and torch.isfinite(forecast).all()


@pytest.mark.parametrize("freq", ["banana", "0h", "-1h", "100000000000D"])
def test_a_frequency_that_cannot_continue_the_series_is_refused(bundle, freq):
    edit_config(bundle, lambda c: c["data"].update(freq=freq))
    refused(bundle, "config.json: data.freq: unknown frequency", repr(freq), "expected a pandas offset alias")


def refused_fast_and_small(path: Path, *fragments: str) -> None:
    """Refused in well under a second of work and without growing the process's peak memory."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    start = time.perf_counter()
    refused(path, *fragments)
    assert time.perf_counter() - start < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 256 * 1024


def test_a_huge_horizon_is_refused_before_anything_is_allocated(bundle):
    def change(config):
        config["data"]["horizon"] = config["model"]["config"]["horizon"] = 10**9

    edit_config(bundle, change)
    refused_fast_and_small(bundle, "data.horizon must be an integer >= 1 and <= 10000, got 1000000000")


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("e_layers", 10**4, "'e_layers' must be an integer >= 1 and <= 64, got 10000"),
        ("d_model", 10**6, "'d_model' must be an integer >= 1 and <= 16384, got 1000000"),
        ("seed", 2**80, "'seed' must be an integer >= 0 and <= 4294967295"),
    ],
)
def test_an_out_of_range_model_size_is_refused_by_name(bundle, field, value, expected):
    edit_config(bundle, lambda c: c["model"]["config"].update({field: value}))
    refused_fast_and_small(bundle, "model config does not build 's3attention'", expected)


def test_sizes_within_bounds_that_multiply_to_gigabytes_are_refused_before_allocating(bundle):
    def change(config):  # a linear skip map of 100,000 x 10,000 weights: 3.7 GiB
        config["data"].update(input_size=100_000, horizon=10_000)
        config["model"]["config"].update(input_size=100_000, horizon=10_000, skip=True)

    edit_config(bundle, change)
    refused_fast_and_small(bundle, "config.json: the model config asks for 3.7 GiB", "expected at most 1 GiB")


def test_a_window_of_sizes_within_bounds_that_multiply_to_gigabytes_is_refused(tmp_path):
    """A baseline's bundle (no weights to bound) edited to 100,000 steps of 500 columns, each within its
    bound: it loaded, and a served model's warm-up history took 1.4 GB; the bounds allowed 80 GB."""
    import pandas as pd

    from forecaster import Forecaster

    frame = pd.DataFrame({"y": np.arange(40.0)}, index=pd.date_range("2020-01-01", periods=40, freq="D"))
    path = Forecaster("naive", horizon=2, input_size=4).fit(frame).save(tmp_path / "naive")
    columns = [f"c{k}" for k in range(500)]

    def change(config):
        config["data"].update(input_size=100_000, columns=columns)
        config["model"]["config"].update(input_size=100_000, n_channels=500)
        config["scaler"].update(mean=[0.0] * 500, scale=[1.0] * 500)
        config["scaler"].update({"log": [False] * 500} if "log" in config["scaler"] else {})

    edit_config(path, change)
    (path / "calibration.safetensors").unlink()  # as a bundle from before intervals: it loads without
    refused_fast_and_small(path, "data: a window of 100,002 steps x 500 input columns holds 50,001,000")


@pytest.mark.parametrize(
    ("key", "value", "highest"),
    [(LEFT_INDEX, 10**6, INPUT_SIZE - 1), (LEFT_INDEX, -1, INPUT_SIZE - 1),
     ("layers.1.mixer.attention.right_index", 4, 3)],
)  # fmt: skip
def test_an_index_buffer_out_of_range_is_refused(bundle, key, value, highest):
    edit_weights(bundle, lambda tensors: tensors[key].__setitem__(0, value))
    refused(bundle, f"weights.safetensors: tensor {key} must hold indices from 0 to {highest}")


def test_other_index_sets_within_range_are_used_as_stored(bundle):
    """Indices come from the weights (the skeleton's contract), whatever the rebuilt model drew."""
    stored = torch.arange(0, 2 * 8, 2)
    edit_weights(bundle, lambda tensors: tensors.update({LEFT_INDEX: stored}))
    assert torch.equal(load_bundle(bundle).model.state_dict()[LEFT_INDEX], stored)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused(bundle, value):
    edit_weights(bundle, lambda tensors: tensors["value_embedding.weight"].fill_(value))
    refused(bundle, "tensor value_embedding.weight holds NaN or infinite values; expected finite numbers")


def test_negative_running_variances_are_refused(bundle):
    key = "layers.0.mixer.smoother.norm.running_var"
    edit_weights(bundle, lambda tensors: tensors[key].fill_(-1.0))
    refused(bundle, f"tensor {key} holds negative variances; expected values >= 0")


@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.float16])
def test_weights_of_another_dtype_are_refused_not_cast(bundle, dtype):
    def change(tensors):
        for key, tensor in tensors.items():
            if tensor.is_floating_point():
                tensors[key] = tensor.to(dtype)

    edit_weights(bundle, change)
    refused(bundle, f"is {str(dtype).removeprefix('torch.')} (", "model expects float32 (")


def test_an_error_echoing_a_huge_value_stays_one_short_line(bundle):
    edit_config(bundle, lambda c: c["data"].update(source=["x" * 100] * 100_000))
    message = refused(bundle, "config.json: data.source: expected a string, got ['xxx", "characters cut")
    assert message.endswith("xxx']")


def test_an_error_listing_many_tensors_stays_one_short_line(bundle):
    extra = {f"extra.{i}": torch.zeros(1) for i in range(500)}  # within the header's bound
    edit_weights(bundle, lambda tensors: tensors.update(extra))
    refused(bundle, "weights.safetensors: tensors do not match model 's3attention'; unexpected extra.0")


@pytest.mark.parametrize("name", ["config.json", "metrics.json"])
def test_deeply_nested_json_is_refused_in_one_line(bundle, name):
    (bundle / name).write_text("[" * 100_000 + "]" * 100_000)
    refused(bundle, f"{name}: cannot read JSON", "recursion")


@pytest.mark.parametrize("name", ["config.json", "metrics.json"])
def test_a_json_file_past_the_bound_is_refused_without_being_read_whole(bundle, name, monkeypatch):
    """A bundle's JSON files hold kilobytes; a 1 GB one was read whole (3 GB of memory) before it was
    refused: read to MAX_JSON_BYTES (1 MiB here) and no further (a sparse 256 MB file)."""
    from forecaster import atomic

    with (bundle / name).open("r+b") as handle:
        handle.seek(256 << 20)
        handle.write(b" ")
    monkeypatch.setattr(atomic, "MAX_JSON_BYTES", 1 << 20)
    refused_fast_and_small(bundle, f"{name}: more than 1 MiB; expected the bundle's own {name}, which holds")


@pytest.mark.parametrize("name", ["config.json", "metrics.json"])
def test_json_nested_past_the_bound_is_refused_as_the_bundle_loads(bundle, name):
    """A 600-byte metrics.json nested 300 deep loaded, and GET /v1/models answered 500 for every model
    (orjson writes at most 255 levels): refused at load, past MAX_JSON_DEPTH (32)."""
    (bundle / name).write_text('{"a": ' * 33 + "1" + "}" * 33)
    refused(bundle, f"{name}: nested more than 32 deep; expected the bundle's own {name}")


def test_a_bundle_file_linked_out_of_its_folder_is_refused(bundle, tmp_path):
    """metrics.json linked to a JSON file elsewhere (credentials) loaded where the weights predate the
    metrics' digest, and /v1/models served its content; a link within the folder, or a linked folder,
    loads."""
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"aws_secret_access_key": "s3cr3t"}))
    edit_weights(bundle, lambda tensors: None)  # saved without the metrics' digest, as older versions did
    kept = bundle / "kept.json"
    (bundle / "metrics.json").rename(kept)
    (bundle / "metrics.json").symlink_to(secret)
    refused(bundle, "metrics.json a link out of the bundle's folder; expected the files forecaster wrote")
    (bundle / "metrics.json").unlink()
    (bundle / "metrics.json").symlink_to("kept.json")
    assert load_bundle(bundle).metrics == {}
    (tmp_path / "linked").symlink_to(bundle)
    assert load_bundle(tmp_path / "linked").metrics == {}


@pytest.mark.parametrize("value", [5, "cases", [1, 2], {"cases": True}])
@pytest.mark.parametrize("key", ["nonnegative", "left_out", "beside_targets"])
def test_a_training_record_naming_columns_otherwise_than_by_a_list_is_refused(bundle, key, value):
    """The columns forecast at 0 or above (`training.nonnegative`), the series training left out and the
    columns beside the targets given are read at forecasts: a tampered value is refused as the bundle loads,
    not in the middle of a request."""
    edit_config(bundle, lambda c: c["training"].update({key: value}))
    refused(bundle, "config.json: field 'training' must be an object, its 'nonnegative', 'left_out' and "
            "'beside_targets' lists")


def test_json_whose_line_endings_or_indents_changed_loads_and_a_changed_value_does_not(bundle):
    """git's autocrlf (Windows checkouts) and JSON formatters rewrite a committed bundle's config.json and
    metrics.json byte for byte, not value for value: such a bundle was refused as "another bundle's" (h72)."""
    saved = load_bundle(bundle)
    for name in ("config.json", "metrics.json"):
        value = json.loads((bundle / name).read_text())
        (bundle / name).write_bytes(json.dumps(value, indent=4).replace("\n", "\r\n").encode())
    loaded = load_bundle(bundle)
    assert loaded.metrics == saved.metrics and loaded.data == saved.data and loaded.training == saved.training
    edit_config(bundle, lambda config: config["data"].update(columns=["a", "b", "x"]))
    refused(bundle, "config.json: not the config saved with weights.safetensors (another bundle's?)")


def test_metrics_not_saved_with_the_weights_are_refused_and_older_bundles_load(bundle):
    """A metrics.json copied from another bundle loaded and was served as this model's: the weights file
    names the sha256 of the metrics saved with it. A bundle saved before that (no such metadata) loads."""
    assert load_bundle(bundle).metrics == {}
    (bundle / "metrics.json").write_text(json.dumps({"mse": 0.1234}))
    refused(bundle, "metrics.json: not the metrics saved with weights.safetensors (another bundle's?)")
    edit_weights(bundle, lambda tensors: None)  # written again without metadata, as older versions did
    assert load_bundle(bundle).metrics == {"mse": 0.1234}


def write_safetensors(path: Path, entries: dict[str, tuple[str, list[int]]], metadata: dict[str, str],
                      data: bytes = b"") -> None:
    """A safetensors file written by hand: each entry's bytes zeros after `data` (a sparse file, nothing on
    disk), so millions of values cost nothing to make."""
    import struct

    header: dict = {"__metadata__": metadata}
    offset = 0
    for name, (dtype, shape) in entries.items():
        size = int(np.prod(shape)) * {"F32": 4, "I64": 8}[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", len(text)) + text + data)
        handle.truncate(8 + len(text) + offset)


CALIBRATION = {"method": "conformal", "windows": "20", "filled": "False", "source": "twenty windows"}


def test_a_weights_header_of_many_extra_tensors_is_refused_before_safetensors_parses_it(bundle):
    """1.35 M one-number tensors beside the model's (a 91 MiB header, under safetensors' 100 MB cap) took 29 s
    and 2.2 GB to refuse: safetensors parsed the header, then every tensor was made (h112 F2)."""
    import struct

    path = bundle / "weights.safetensors"
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + size])
    end = max(entry["data_offsets"][1] for key, entry in header.items() if key != "__metadata__")
    header.update({f"x{i}": {"dtype": "F32", "shape": [1], "data_offsets": [end + 4 * i, end + 4 * i + 4]}
                   for i in range(400_000)})  # fmt: skip
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + size :] + bytes(4 * 400_000))
    refused_fast_and_small(bundle, "weights.safetensors: a header of 27,",
                           "bytes; expected at most 100,352 (the model's 34 tensor(s) and their metadata)")


def test_a_calibration_of_millions_of_levels_is_refused_by_its_shape_without_listing_them(bundle):
    """10**8 levels (a sparse 762 MiB file) took 178 s and 2.6 GB: listed and printed before their count was
    checked; a served model's reload held every request 4.5 s at 2 * 10**7 (h112 F1)."""
    write_safetensors(bundle / "calibration.safetensors",
                      {"levels": ("I64", [10_000_000]), "margins": ("F32", [2, HORIZON, 3])}, CALIBRATION)
    refused_fast_and_small(bundle, "'levels' must be increasing int64 levels 1-99, got int64 (10000000,)")


def test_calibration_margins_of_another_shape_show_their_dtype_as_levels_do(bundle):
    """'float32 (3, 6, 3)', as levels and weights show theirs, not 'torch.float32' (h117 R5)."""
    write_safetensors(bundle / "calibration.safetensors",
                      {"levels": ("I64", [2]), "margins": ("F32", [3, HORIZON, 3])}, CALIBRATION,
                      np.array([80, 95]).tobytes())  # fmt: skip
    refused(bundle, f"margins are float32 (3, {HORIZON}, 3), expected float32 (2, {HORIZON}, 3)")


@pytest.mark.parametrize("windows", ["9" * 5000, "\u00b2"], ids=["5000 digits", "superscript two"])
def test_calibration_windows_int_cannot_read_are_refused_by_name(bundle, windows):
    """Past Python's 4,300 digits, or a superscript digit (`isdigit()` yet not `int()`): an internal error
    (status 3 in the CLI) instead of the file named (h112 F4)."""
    levels = np.array([80, 95]).tobytes()
    write_safetensors(bundle / "calibration.safetensors",
                      {"levels": ("I64", [2]), "margins": ("F32", [2, HORIZON, 3])},
                      {**CALIBRATION, "windows": windows}, levels)  # fmt: skip
    refused(bundle, "calibration.safetensors: metadata 'windows' must be a count, got '")

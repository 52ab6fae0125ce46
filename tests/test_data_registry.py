"""Dataset registry, data location, checksums and the download/convert path (on local files)."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path

import pytest

from forecaster.data import DATASETS, get_spec, load_dataset, locate_dataset
from forecaster.data.download import download_dataset, file_sha256, verify_dataset
from forecaster.errors import MESSAGE_LIMIT, DataError

SHARED = ["ETTh1", "ETTh2", "ETTm1", "ETTm2", "Exchange", "Weather", "ILI"]

# rows x columns (incl. date), frequency: REFERENCE.md section 2 and ../shared/datasets/README.md
PUBLISHED = {
    "ETTh1": (17420, 8, "h"),
    "ETTh2": (17420, 8, "h"),
    "ETTm1": (69680, 8, "15min"),
    "ETTm2": (69680, 8, "15min"),
    "Electricity": (26304, 322, "h"),
    "Exchange": (7588, 9, "D"),
    "Traffic": (17544, 863, "h"),
    "Weather": (52696, 22, "10min"),
    "ILI": (966, 8, "W-TUE"),
}


def test_registry_holds_the_nine_datasets_with_protocol_defaults():
    assert set(DATASETS) == set(PUBLISHED)
    for name, (rows, columns, freq) in PUBLISHED.items():
        spec = DATASETS[name]
        assert (spec.rows, spec.columns, spec.freq, spec.target) == (rows, columns, freq, "OT")
        assert spec.url is not None and spec.url.startswith("https://")
        if name == "ILI":
            assert (spec.input_size, spec.horizons) == (36, (24, 36, 48, 60))
        else:
            assert (spec.input_size, spec.horizons) == (96, (96, 192, 336, 720))
    assert {name for name, spec in DATASETS.items() if spec.sha256 is None} == {"Electricity", "Traffic"}


@pytest.mark.parametrize(
    ("alias", "name"),
    [("ettm2", "ETTm2"), ("exchange_rate", "Exchange"), ("national_illness", "ILI"), ("WEATHER", "Weather"),
     ("traffic.csv", "Traffic"), ("ECL", "Electricity"), ("exchange_rate.csv.gz", "Exchange")],
)
def test_get_spec_accepts_names_stems_and_file_names(alias, name):
    assert get_spec(alias).name == name


def test_get_spec_rejects_unknown_names_listing_the_known_ones():
    with pytest.raises(DataError, match=r"unknown dataset 'ETTx9'; expected one of ETTh1, .*ILI"):
        get_spec("ETTx9")


@pytest.mark.parametrize("name", SHARED)
def test_shared_dataset_matches_registered_shape_frequency_and_sha256(data_dir, name):
    spec = DATASETS[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        series = load_dataset(name, data_dir)
    # only weather.csv has quirks (duplicate timestamp, gap, -9999 cells); they warn and keep every row
    assert len(caught) == (1 if name == "Weather" else 0)
    assert series.frame.shape == (spec.rows, spec.columns - 1)
    assert series.values.dtype.name == "float64"
    assert series.columns[-1] == "OT"
    assert series.freq == spec.freq
    assert series.dataset == name
    assert file_sha256(locate_dataset(name, data_dir)) == spec.sha256


def test_file_sha256_hashes_the_uncompressed_content(tmp_path):
    plain = tmp_path / "a.csv"
    plain.write_bytes(b"date,OT\n2020-01-01,1\n")
    packed = tmp_path / "b.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    expected = hashlib.sha256(b"date,OT\n2020-01-01,1\n").hexdigest()
    assert file_sha256(plain) == file_sha256(packed) == expected


def _tiny_ett(directory: Path, suffix: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"ETTh1.csv{suffix}"
    path.write_bytes(b"date,OT\n")
    return path


def test_locate_order_is_explicit_dir_then_env_then_cwd_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cwd_file = _tiny_ett(tmp_path / "data", "")
    env_file = _tiny_ett(tmp_path / "env", ".gz")
    explicit_file = _tiny_ett(tmp_path / "explicit", "")
    monkeypatch.delenv("FORECASTER_DATA_DIR", raising=False)
    assert locate_dataset("etth1") == Path("data") / cwd_file.name
    monkeypatch.setenv("FORECASTER_DATA_DIR", str(tmp_path / "env"))
    assert locate_dataset("ETTh1") == env_file
    assert locate_dataset("ETTh1", tmp_path / "explicit") == explicit_file
    assert locate_dataset("ETTh1", tmp_path / "nowhere") == env_file


def test_missing_dataset_names_file_places_and_download_command(monkeypatch):
    with tempfile.TemporaryDirectory(dir="/tmp") as base:  # short paths: every place fits in the message
        monkeypatch.chdir(base)
        monkeypatch.setenv("FORECASTER_DATA_DIR", str(Path(base) / "env"))
        with pytest.raises(DataError) as caught:
            locate_dataset("Traffic", Path(base) / "mine")
        message = str(caught.value)
        assert "traffic.csv (or traffic.csv.gz) not found" in message
        for place in ("mine", "env", "data"):
            assert str(Path(base).resolve() / place) in message
        assert "forecaster data download Traffic" in message
        assert "\n" not in message


def test_folders_too_long_to_name_cut_the_list_of_places_not_the_remedy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError) as caught:
        locate_dataset("Traffic", tmp_path / ("x" * 200) / ("y" * 200))
    message = str(caught.value)
    assert len(message) <= MESSAGE_LIMIT and "characters cut" in message
    assert "get it with `forecaster data download Traffic`" in message
    assert message.endswith(str(tmp_path / "data"))


def test_download_converts_gzip_source_verifies_sha256_and_writes_plain_csv(data_dir, tmp_path):
    source = data_dir / "national_illness.csv.gz"
    target = download_dataset("ILI", tmp_path / "out", url=source.resolve().as_uri())
    assert target == tmp_path / "out" / "national_illness.csv"
    assert target.read_bytes() == gzip.decompress(source.read_bytes())
    assert file_sha256(target) == DATASETS["ILI"].sha256
    assert sorted(p.name for p in target.parent.iterdir()) == ["national_illness.csv"]
    series = load_dataset("ILI", target.parent)
    assert series.frame.shape == (966, 7)


def test_download_extracts_the_named_member_of_a_zip_source(data_dir, tmp_path):
    archive = tmp_path / "all_six_datasets.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("all_six_datasets/illness/readme.txt", "not the data")
        bundle.writestr(
            "all_six_datasets/illness/national_illness.csv",
            gzip.decompress((data_dir / "national_illness.csv.gz").read_bytes()),
        )
    target = download_dataset("ILI", tmp_path / "out", url=str(archive))
    assert file_sha256(target) == DATASETS["ILI"].sha256


def test_download_with_wrong_checksum_leaves_nothing_behind(data_dir, tmp_path):
    wrong = data_dir / "ETTh1.csv.gz"
    expected = r"ILI: the file from .* has sha256 f18de3ad.*, expected 8594cecb.*; not saved"
    with pytest.raises(DataError, match=expected):
        download_dataset("ILI", tmp_path / "new" / "out", url=str(wrong))
    assert list(tmp_path.iterdir()) == []  # not even the folders it made
    (tmp_path / "kept").mkdir()
    with pytest.raises(DataError, match=expected):
        download_dataset("ILI", tmp_path / "kept", url=str(wrong))
    assert list((tmp_path / "kept").iterdir()) == []  # a folder that was there stays


def test_download_into_a_file_says_so(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(DataError, match=r"afile is a file; expected a folder to download ILI into"):
        download_dataset("ILI", tmp_path / "afile", url="file:///nonexistent/x.csv")


def test_download_keeps_a_present_file_unless_forced(data_dir, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    present = out / "national_illness.csv"
    present.write_bytes(b"stale")
    assert download_dataset("ILI", out, url="file:///nonexistent/source.csv") == present
    assert present.read_bytes() == b"stale"
    download_dataset("ILI", out, url=str(data_dir / "national_illness.csv.gz"), force=True)
    assert file_sha256(present) == DATASETS["ILI"].sha256


def test_download_failure_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match=r"cannot download file:///nonexistent/x.csv"):
        download_dataset("ILI", tmp_path, url="file:///nonexistent/x.csv")


def test_verify_reports_ok_mismatch_and_missing(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORECASTER_DATA_DIR", raising=False)
    assert verify_dataset("ETTm2", data_dir)["status"] == "ok"
    shutil.copy(data_dir / "ETTh2.csv.gz", tmp_path / "ETTh1.csv.gz")
    assert verify_dataset("ETTh1", tmp_path)["status"] == "mismatch"
    assert verify_dataset("Traffic", tmp_path / "empty") == {
        "name": "Traffic", "path": None, "sha256": None, "status": "missing"
    }

"""The nine benchmark datasets of the long-horizon forecasting literature and where their files live.

The registry fixes what the protocol needs to know without reading a file (shape, frequency, default
input size and horizons, checksum, public source), so runs on different machines stay comparable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from forecaster.checks import user_path
from forecaster.errors import DataError

DATA_DIR_ENV = "FORECASTER_DATA_DIR"

_ETT_SOURCE = "https://raw.githubusercontent.com/zhouhaoyi/ETDataset/main/ETT-small"
_TSLIB_SOURCE = "https://huggingface.co/datasets/thuml/Time-Series-Library/resolve/main"
_LONG_HORIZONS = (96, 192, 336, 720)
_ILI_HORIZONS = (24, 36, 48, 60)


@dataclass(frozen=True)
class DatasetSpec:
    """One benchmark file as published: rows exclude the header, columns include the date column."""

    name: str
    file_name: str
    rows: int
    columns: int
    freq: str
    target: str = "OT"
    input_size: int = 96
    horizons: tuple[int, ...] = _LONG_HORIZONS
    sha256: str | None = None
    url: str | None = None

    @property
    def stem(self) -> str:
        """File name without `.csv` (the name the literature's scripts use, e.g. `exchange_rate`)."""
        return self.file_name.removesuffix(".csv")


def _ett(name: str, rows: int, freq: str, sha256: str) -> DatasetSpec:
    return DatasetSpec(name, f"{name}.csv", rows, 8, freq, sha256=sha256, url=f"{_ETT_SOURCE}/{name}.csv")


DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        _ett("ETTh1", 17420, "h", "f18de3ad269cef59bb07b5438d79bb3042d3be49bdeecf01c1cd6d29695ee066"),
        _ett("ETTh2", 17420, "h", "a3dc2c597b9218c7ce1cd55eb77b283fd459a1d09d753063f944967dd6b9218b"),
        _ett("ETTm1", 69680, "15min", "6ce1759b1a18e3328421d5d75fadcb316c449fcd7cec32820c8dafda71986c9e"),
        _ett("ETTm2", 69680, "15min", "db973ca252c6410a30d0469b13d696cf919648d0f3fd588c60f03fdbdbadd1fd"),
        DatasetSpec(
            "Electricity", "electricity.csv", 26304, 322, "h",
            url=f"{_TSLIB_SOURCE}/electricity/electricity.csv",
        ),
        DatasetSpec(
            "Exchange", "exchange_rate.csv", 7588, 9, "D",
            sha256="d55e7aa2641009814a18ba3279431b13f6d413b0eab195b9ff21988d8cf94e97",
            url=f"{_TSLIB_SOURCE}/exchange_rate/exchange_rate.csv",
        ),
        DatasetSpec("Traffic", "traffic.csv", 17544, 863, "h", url=f"{_TSLIB_SOURCE}/traffic/traffic.csv"),
        DatasetSpec(
            "Weather", "weather.csv", 52696, 22, "10min",
            sha256="34ee981d07313e51da2a50bb600072c8ae4a69cb4b0651f4cb93a069d7a2ba63",
            url=f"{_TSLIB_SOURCE}/weather/weather.csv",
        ),
        DatasetSpec(
            "ILI", "national_illness.csv", 966, 8, "W-TUE", input_size=36, horizons=_ILI_HORIZONS,
            sha256="8594cecb98c6f2f9dc014eca11c4d5d1e38ad5ce6ed0592d4abe65b146fce395",
            url=f"{_TSLIB_SOURCE}/illness/national_illness.csv",
        ),
    )
}

_ALIASES = {"ecl": "Electricity", "illness": "ILI", "exchange_rate": "Exchange"}
_LOOKUP: dict[str, str] = {
    **{key: name for key, name in _ALIASES.items()},
    **{spec.name.lower(): spec.name for spec in DATASETS.values()},
    **{spec.stem.lower(): spec.name for spec in DATASETS.values()},
}


def get_spec(name: str) -> DatasetSpec:
    """The registered dataset `name`: canonical name, file stem or file name, any letter case."""
    key = name.strip().lower().removesuffix(".gz").removesuffix(".csv")
    if key not in _LOOKUP:
        raise DataError(
            f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)} (or a path to a CSV file)"
        )
    return DATASETS[_LOOKUP[key]]


def find_spec_for_file(path: str | Path) -> DatasetSpec | None:
    """The registered dataset whose published file name `path` carries (`x.csv` or `x.csv.gz`), if any."""
    file_name = Path(path).name.lower().removesuffix(".gz")
    for spec in DATASETS.values():
        if spec.file_name.lower() == file_name:
            return spec
    return None


def data_search_dirs(data_dir: str | Path | None = None) -> list[Path]:
    """Where datasets are looked for, in order: the explicit directory, $FORECASTER_DATA_DIR, ./data."""
    candidates = [data_dir, os.environ.get(DATA_DIR_ENV) or None, Path("data")]
    dirs: list[Path] = []
    for candidate in candidates:
        folder = None if candidate is None else user_path(Path(candidate))  # '~/data' quoted (h82 F22)
        if folder is not None and folder not in dirs:
            dirs.append(folder)
    return dirs


def locate_dataset(name: str, data_dir: str | Path | None = None) -> Path:
    """Path of the registered dataset's file (`x.csv` or `x.csv.gz`) in the first directory holding it."""
    spec = get_spec(name)
    dirs = data_search_dirs(data_dir)
    for directory in dirs:
        for file_name in (spec.file_name, f"{spec.file_name}.gz"):
            path = directory / file_name
            if path.is_file():
                return path
    searched = ", ".join(str(directory.resolve()) for directory in dirs)
    raise DataError(  # the searched folders last: a message too long loses its middle, never the remedy
        f"dataset {spec.name}: {spec.file_name} (or {spec.file_name}.gz) not found; get it with `forecaster "
        f"data download {spec.name}` (source {spec.url}) or point --data-dir / ${DATA_DIR_ENV} at a "
        f"directory holding it; searched {searched}"
    )

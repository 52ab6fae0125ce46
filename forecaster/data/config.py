"""What a forecaster bundle knows about its data (`DataConfig`): columns, frequency, window sizes, split,
and how its training rows were read, so that new rows are read the same way. Stored in `config.json`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from forecaster.checks import check_int
from forecaster.data.series import INDEPENDENT, ReadOptions
from forecaster.data.splits import SPLIT_SCHEMES
from forecaster.data.timeindex import check_frequency
from forecaster.errors import BundleError, ForecasterError


@dataclass(frozen=True)
class DataConfig:
    """What a forecaster bundle must know about its data: which columns, how often, how long, which split."""

    source: str
    columns: list[str]
    freq: str | None
    date_col: str | None
    input_size: int
    horizon: int
    split: str
    # How the training rows were read beyond the date column (added after format 2 appeared: optional).
    date_from: list[str] | None = None
    fill_missing: str | None = None
    id_col: str | None = None
    target_col: str | None = None
    channels: str = "multivariate"

    @property
    def model_channels(self) -> int:
        """Channels of the stored model: one for a model shared by independent series."""
        return 1 if self.channels == INDEPENDENT else len(self.columns)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def read_options(self) -> dict[str, Any]:
        """The `ReadOptions` that read new rows the way the training rows were read."""
        dated = self.date_col is not None or self.date_from is not None
        return {"date_col": self.date_col, "date_from": self.date_from, "no_date": not dated,
                "fill_missing": self.fill_missing, "id_col": self.id_col,
                "target_col": self.target_col, "channels": self.channels}  # fmt: skip

    @classmethod
    def from_dict(cls, raw: Any, where: str = "data") -> DataConfig:
        """Validate a JSON object field by field; BundleError names the offending field."""
        if not isinstance(raw, dict):
            raise BundleError(f"{where}: expected an object, got {type(raw).__name__}")
        expected = {f.name for f in fields(cls)}
        optional = {"date_from", "fill_missing", "id_col", "target_col", "channels"}
        missing, unknown = sorted(expected - optional - raw.keys()), sorted(raw.keys() - expected)
        if missing or unknown:
            raise BundleError(
                f"{where}: " + "; ".join(
                    ([f"missing field(s) {', '.join(missing)}"] if missing else [])
                    + ([f"unknown field(s) {', '.join(unknown)}"] if unknown else [])
                )
            )
        for name in ("source", "split"):
            if not isinstance(raw[name], str):
                raise BundleError(f"{where}.{name}: expected a string, got {raw[name]!r}")
        if raw["split"] not in SPLIT_SCHEMES:
            raise BundleError(
                f"{where}.split: expected one of {', '.join(SPLIT_SCHEMES)}, got {raw['split']!r}"
            )
        for name in ("freq", "date_col"):
            if raw[name] is not None and not isinstance(raw[name], str):
                raise BundleError(f"{where}.{name}: expected a string or null, got {raw[name]!r}")
        if raw["freq"] is not None:
            try:
                check_frequency(raw["freq"])
            except ForecasterError as error:
                raise BundleError(f"{where}.freq: {error}") from None
        for name in ("input_size", "horizon"):
            check_int(f"{where}.{name}", raw[name], minimum=1, error=BundleError)
        columns = raw["columns"]
        if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
            raise BundleError(f"{where}.columns: expected a non-empty list of column names, got {columns!r}")
        if len(set(columns)) != len(columns):
            raise BundleError(f"{where}.columns: expected each column once, got {columns!r}")
        read = {name: raw[name] for name in optional if name in raw}
        try:
            ReadOptions(date_col=None, **read)
        except ForecasterError as error:
            raise BundleError(f"{where}: {error}") from None
        return cls(**{name: raw[name] for name in expected - optional}, **read)

"""What a forecaster bundle knows about its data (`DataConfig`): columns, frequency, window sizes, split,
and how its training rows were read, so that new rows are read the same way. Stored in `config.json`."""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any

from forecaster.checks import MAX_CHANNELS, MAX_HORIZON, MAX_STEPS, MAX_WINDOW_NUMBERS, check_int
from forecaster.data.calendar import calendar_columns
from forecaster.data.series import INDEPENDENT, ReadOptions
from forecaster.data.splits import SPLIT_SCHEMES
from forecaster.data.timeindex import check_frequency
from forecaster.errors import BundleError, ConfigError, ForecasterError


def _read_fields() -> list[str]:
    """The fields of how the training rows were read beyond the date column: those with a default (added
    after format 2 appeared, optional in a bundle), each a `ReadOptions` field of the same name."""
    return [field.name for field in fields(DataConfig) if field.default is not MISSING]


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
    past_covariates: list[str] | None = None
    future_covariates: list[str] | None = None
    calendar: bool = False
    periods: str | None = None
    weeks: str | None = None
    dayfirst: bool = False
    sheet: str | None = None  # a workbook's, as given (h82 F9: predict read another sheet and refused)

    def __post_init__(self) -> None:
        steps, width = self.input_size + self.horizon, len(self.input_columns)
        if steps * width > MAX_WINDOW_NUMBERS:
            raise ConfigError(f"a window of {steps:,} steps x {width:,} input columns holds "
                              f"{steps * width:,} numbers; expected at most {MAX_WINDOW_NUMBERS:,}")

    @property
    def dated(self) -> bool:
        """Whether rows carry dates: from a date column or from parts (year and month columns, ...)."""
        return self.date_col is not None or self.date_from is not None

    @property
    def future_columns(self) -> list[str]:
        """The future covariates: those given, then the calendar's."""
        return [*(self.future_covariates or []), *(calendar_columns(self.freq) if self.calendar else [])]

    @property
    def input_columns(self) -> list[str]:
        """The model's input channels, which the scaler covers: targets, past and future covariates."""
        return [*self.columns, *(self.past_covariates or []), *self.future_columns]

    @property
    def model_channels(self) -> int:
        """Input channels of the stored model: one for a model shared by independent series."""
        return 1 if self.channels == INDEPENDENT else len(self.input_columns)

    @property
    def output_channels(self) -> int:
        """Channels the stored model forecasts (what interval margins cover)."""
        return 1 if self.channels == INDEPENDENT else len(self.columns)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def read_options(self) -> dict[str, Any]:
        """The `ReadOptions` that read new rows the way the training rows were read."""
        date_col = None if self.date_from else self.date_col  # a long table's date parts, made one column
        return {"date_col": date_col, "no_date": not self.dated,
                **{name: getattr(self, name) for name in _read_fields()}}  # fmt: skip

    @classmethod
    def from_dict(cls, raw: Any, where: str = "data") -> DataConfig:
        """Validate a JSON object field by field; BundleError names the offending field."""
        if not isinstance(raw, dict):
            raise BundleError(f"{where}: expected an object, got {type(raw).__name__}")
        expected = {f.name for f in fields(cls)}
        optional = set(_read_fields())
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
        for name, most in (("input_size", MAX_STEPS), ("horizon", MAX_HORIZON)):
            check_int(f"{where}.{name}", raw[name], minimum=1, maximum=most, error=BundleError)
        columns = raw["columns"]
        if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
            raise BundleError(f"{where}.columns: expected a non-empty list of column names, got {columns!r}")
        if len(set(columns)) != len(columns):
            raise BundleError(f"{where}.columns: expected each column once, got {columns!r}")
        read = {name: raw[name] for name in optional if name in raw}
        for name in ("past_covariates", "future_covariates"):
            names = read.get(name)
            if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
                raise BundleError(f"{where}.{name}: expected a list of column names or null, got {names!r}")
        try:
            ReadOptions(date_col=None, targets=columns, **read)
            config = cls(**{name: raw[name] for name in expected - optional}, **read)
            width = len(config.input_columns)  # the calendar's columns need a frequency with cycles
            check_int("the number of input columns", width, maximum=MAX_CHANNELS)
        except ForecasterError as error:
            raise BundleError(f"{where}: {error}") from None
        return config

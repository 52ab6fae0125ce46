"""Request and response models of the HTTP API (strict: no type coercion, unknown fields refused)."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)
from pydantic_core import PydanticCustomError, ValidationError

from forecaster.checks import MAX_LEVEL
from forecaster.data.textfile import composed

_STRICT = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
T = TypeVar("T")
FEW_MEMBERS = 64  # an object's members validated at once; a larger one's one by one to its first wrong one

# A request's lists and objects report their first wrong item, not every one: FastAPI turns each error
# pydantic finds into a dict before any handler reads the first, and 2.6 M wrong cells (7.8 MB) held the
# event loop 45 s and 3.6 GB (h92 F1).
Listed = Annotated[list[T], Field(fail_fast=True)]


def _to_first_wrong_member(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A large object validated FEW_MEMBERS members at once, up to the first wrong one, whose errors alone
    are said (one record of 300,000 wrong members had 1.2 M errors, one per member of the cell's union); a
    chunk at a time, as member by member 400 right records of 100 members took 4x as long."""
    if not isinstance(value, dict) or len(value) <= FEW_MEMBERS:
        return handler(value)
    members, validated = list(value.items()), {}
    for start in range(0, len(members), FEW_MEMBERS):
        chunk = dict(members[start : start + FEW_MEMBERS])
        try:
            validated.update(handler(chunk))
        except ValidationError:
            for name, member in chunk.items():  # raises at the chunk's first wrong member
                handler({name: member})
            raise
    return validated


Members = Annotated[dict[str, T], WrapValidator(_to_first_wrong_member)]


class ErrorDetail(BaseModel):
    field: str | None = Field(description="Where the problem is, e.g. `inputs[0].values.OT[3]`.")
    message: str = Field(description="What was wrong and what was expected.")


class ErrorResponse(BaseModel):
    error: str = Field(description="Machine-readable kind, e.g. `invalid_input`, `not_found`.")
    message: str = Field(description="One line for humans.")
    details: list[ErrorDetail] = Field(default_factory=list)


class ForecastRequest(BaseModel):
    """The recent history of the series the model was trained on, oldest row first."""

    model_config = _STRICT

    timestamps: Listed[str] | None = Field(
        default=None,
        description=(
            "ISO 8601 timestamps, one per row, strictly increasing at the model's frequency. Required for "
            "models trained with dates (a date column, or `date_from` parts), refused for those without."
        ),
    )
    values: Members[Listed[float]] = Field(
        description=(
            "One list of finite numbers per trained column, all of equal length and at least the model's "
            "input_size; only the last input_size rows are used. Or some of the series a model's companion "
            "forecasts (`companion` in /v1/models), alone or with any of the model's: each at least the "
            "input of the model that holds it."
        ),
    )
    future: Members[Listed[float]] | None = Field(
        default=None,
        description="For a model with future covariates: one list per covariate with its values for the "
        "steps ahead (at least `horizon`). Calendar covariates come from the timestamps.",
    )
    horizon: int | None = Field(
        default=None, ge=1, description="Steps to forecast, 1 ..= the model's horizon (default: the model's)."
    )
    level: list[Annotated[int, Field(ge=1, le=MAX_LEVEL)]] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_LEVEL,
        description="Prediction-interval levels in percent, e.g. [80, 95]: `forecast` then also has "
        "`<col>-lo-<level>` and `<col>-hi-<level>` (Nixtla's naming); see the model's `intervals`.",
    )

    @field_validator("values", "future")
    @classmethod
    def _composed_names(cls, lists: dict[str, list[float]] | None) -> dict[str, list[float]] | None:
        """Column names as the reader composes a table's (`composed`): 'Zürich' sent decomposed is the
        model's 'Zürich'."""
        if lists is None:
            return None
        names = [composed(name) for name in lists]
        if twice := sorted(name for name, count in Counter(names).items() if count > 1):
            raise PydanticCustomError("names_twice", "names {names} more than once (spelled with and without "
                                      "combining accents); expected each column once", {"names": str(twice)})
        return dict(zip(names, lists.values(), strict=True))


class BatchForecastRequest(BaseModel):
    """Several independent forecast requests in one call, answered in order."""

    model_config = _STRICT

    inputs: Listed[ForecastRequest] = Field(min_length=1)


Cell = str | float | int | None


class RecordsRequest(BaseModel):
    """Rows as records, the way the model's training table was laid out: long (`{"unique_id", "ds", "y"}`,
    plus covariate columns) or wide (`{"date", "<col>", ...}`)."""

    model_config = _STRICT

    data: Listed[Members[Cell]] = Field(min_length=1, description="History rows, oldest first per series.")
    future: Listed[Members[Cell]] | None = Field(
        default=None, description="The horizon's rows of the model's future covariates (time and values)."
    )
    horizon: int | None = Field(default=None, ge=1)
    level: list[Annotated[int, Field(ge=1, le=MAX_LEVEL)]] | None = Field(
        default=None, min_length=1, max_length=MAX_LEVEL
    )


class RecordsResponse(BaseModel):
    model: str
    forecast: list[dict[str, Cell]] = Field(
        description="Forecast rows named as `forecaster predict` writes them: long models `unique_id, ds, "
        "<model>, <model>-lo-80, ...`, wide ones the time column, `<col>`, `<col>-lo-80`, ..."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What reading the rows changed, as `forecaster predict` notes it (cells filled, rows "
        "dropped).",
    )


def _body_kind(body: Any) -> str:
    if isinstance(body, dict) and "data" in body:
        return "records"
    return "batch" if isinstance(body, dict) and "inputs" in body else "single"


ForecastBody = Annotated[
    Annotated[ForecastRequest, Tag("single")]
    | Annotated[BatchForecastRequest, Tag("batch")]
    | Annotated[RecordsRequest, Tag("records")],
    Discriminator(_body_kind),
]


class ForecastResponse(BaseModel):
    model: str = Field(description="The bundle that answered.")
    timestamps: list[str] | list[int] = Field(
        description="The forecast steps: ISO 8601 timestamps continuing the input, or row numbers for "
        "models trained without dates."
    )
    forecast: dict[str, list[float]] = Field(
        description="One list of `horizon` values per column, then per asked level its lower and upper "
        "bounds as `<col>-lo-<level>` and `<col>-hi-<level>`."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="What the rows sent say of the forecast, as `forecaster predict` notes it (a column far "
        "from the rows the model was trained on, such as one in other units).",
    )


class BatchForecastResponse(BaseModel):
    outputs: list[ForecastResponse]


class CompanionInfo(BaseModel):
    """The forecast of a panel's series too short for the model's windows (`artifacts.COMPANION`)."""

    model_name: str = Field(description="The forecast that fits nothing kept for them, e.g. `naive`.")
    input_size: int
    columns: list[str] = Field(description="Its series: send them as the model's (CSV, records, `values`).")


class ModelInfo(BaseModel):
    name: str = Field(description="The bundle's directory name; used in URLs.")
    model_name: str = Field(description="Architecture, e.g. `s3attention`.")
    input_size: int
    horizon: int
    columns: list[str]
    freq: str | None = Field(description="Pandas offset alias of the timestamps, or null.")
    date_col: str | None
    date_from: list[str] = Field(
        default_factory=list,
        description="The columns the dates were read from (e.g. year and month), empty for a date column.",
    )
    metrics: dict[str, Any] = Field(
        description="The bundle's test metrics (its metrics.json) less entries of over 4 KiB of JSON, such "
        "as `val_blocks` (the validation MSE per block of `horizon` windows and channel, 10^5 numbers and "
        "more), and any past 64 KiB in all; the whole file: GET /v1/models/{name}/metrics."
    )
    metrics_complete: bool = Field(True, description="Whether `metrics` holds every entry of metrics.json.")
    intervals: dict[str, Any] | None = Field(
        description="How prediction intervals are made (method, the levels it answers, what calibrated "
        "them, whether `metrics.intervals` scored these margins: false once recalibrated, or in a bundle "
        "saved before that was recorded), or null for a bundle saved before intervals existed."
    )
    logarithms: list[str] = Field(
        default_factory=list,
        description="The columns forecast in logarithms (`--transform`): their values must be above 0.",
    )
    id_col: str | None = Field(None, description="The series id column of a model of long rows, or null.")
    past_covariates: list[str] = Field(
        default_factory=list, description="Columns the history must hold beside the forecast ones."
    )
    future_covariates: list[str] = Field(
        default_factory=list,
        description="Columns whose values over the horizon a request must give (`future`, records route).",
    )
    calendar: bool = Field(False, description="Calendar features made from the timestamps (regular dates).")
    companion: CompanionInfo | None = Field(
        None, description="The series too short for the model's windows and what forecasts them, or null."
    )


class ModelList(BaseModel):
    models: list[ModelInfo]


class Liveness(BaseModel):
    status: Literal["live"] = "live"


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    models: list[str] = Field(description="Loaded bundles.")
    skipped: dict[str, str] = Field(description="Bundles that failed validation, with the reason.")
    stale: dict[str, str] = Field(
        default_factory=dict,
        description="Loaded models whose folder changed to content that does not load (the loaded version "
        "still answers), with the reason.",
    )


FORECAST_EXAMPLES: dict[str, Any] = {
    "single": {
        "summary": "One series (send at least input_size rows)",
        "value": {
            "timestamps": ["2018-06-26 16:00:00", "2018-06-26 17:00:00", "2018-06-26 18:00:00"],
            "values": {"HUFL": [10.1, 9.7, 9.2], "OT": [8.4, 8.3, 8.1]},
            "horizon": 24,
        },
    },
    "batch": {
        "summary": "Several series in one call, answered in order",
        "value": {
            "inputs": [
                {"timestamps": ["2018-06-26 17:00:00", "2018-06-26 18:00:00"], "values": {"OT": [8.3, 8.1]}},
                {"timestamps": ["2018-06-27 17:00:00", "2018-06-27 18:00:00"], "values": {"OT": [9.0, 9.2]}},
            ]
        },
    },
}

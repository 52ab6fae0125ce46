"""The Open Inference Protocol (v2), which KServe and Triton clients speak, over the same models.

A model takes one input tensor `history` of shape [B, input_size, C] (B histories of the model's columns,
oldest row first, row-major), and a model of future covariates a second, `future` [B, horizon, F]: their
values over the horizon of each history. It answers `forecast` of shape [B, horizon, C] in original units;
with `parameters: {"level": [80, 95]}` it adds `lo-80`, `hi-80`, ... of the same shape. The numbers are the
v1 forecast's (`forecaster.prediction`), as FP32. Timestamps are not part of the protocol: the rows are
taken as consecutive steps (a model of calendar covariates, which need dates, is answered on v1 only). A
panel's series too short for the model (`artifacts.COMPANION`) come as `short` [B, its input_size, S], beside
`history` or alone, and are answered as `short-forecast` (`short-lo-80`, ...) [B, horizon, S].
"""

from __future__ import annotations

import math
import threading
from functools import partial
from typing import Annotated, Any, Literal

import numpy as np
import orjson
import pandas as pd
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from forecaster import __version__
from forecaster.checks import MAX_LEVEL
from forecaster.history import companion_series
from forecaster.recent import HistoryError, PreparedHistory, check_history
from service.bodies import OrjsonRoute
from service.companion import forecast_windows
from service.deps import Registry, Settings
from service.errors import LOOKUP_ERRORS, REQUEST_ERRORS, ApiError
from service.inputs import far_notes
from service.limits import answer_numbers, check_answer_numbers
from service.preflight import no_query_parameters, require_media_type
from service.registry import ServedModel
from service.routes import (
    checked_levels,
    forecast_histories,
    histories_numbers,
    in_thread,
    unless_client_leaves,
)
from service.schemas import Listed

router = APIRouter(prefix="/v2", tags=["open inference protocol v2"], route_class=OrjsonRoute)
INPUT, FUTURE, OUTPUT = "history", "future", "forecast"
SHORT = "short"  # the companion's series' tensor, answered as "short-forecast", "short-lo-80", ...
_STRICT = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
# The members of a tensor's data, named as pydantic names a union's members (service.errors reads them).
FLAT, ROWS, NESTED = "list[float]", "list[list[float]]", "list[list[list[float]]]"


def _nesting(data: Any) -> str:
    """The member a tensor's data is nested as, read down its first items: that member alone is validated
    (a wrong number was said once per member, three times)."""
    depth = 0
    while isinstance(data, list) and depth < 3:
        depth, data = depth + 1, data[0] if data else None
    return {2: ROWS, 3: NESTED}.get(depth, FLAT)


Data = Annotated[
    Annotated[Listed[float], Tag(FLAT)]
    | Annotated[Listed[Listed[float]], Tag(ROWS)]
    | Annotated[Listed[Listed[Listed[float]]], Tag(NESTED)],
    Discriminator(_nesting),
]


class TensorMetadata(BaseModel):
    name: str
    datatype: str
    shape: list[int]


class ModelMetadata(BaseModel):
    name: str
    versions: list[str]
    platform: str
    inputs: list[TensorMetadata]
    outputs: list[TensorMetadata]


class RequestInput(BaseModel):
    model_config = _STRICT

    name: str = Field(description=f"`{INPUT}`")
    shape: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=3, max_length=3)]
    datatype: Literal["FP32", "FP64"]
    data: Data = Field(description="The tensor's numbers, row-major: flat, or nested as the shape.")
    parameters: dict[str, Any] | None = None


class InferRequest(BaseModel):
    model_config = _STRICT

    id: str | None = None
    parameters: dict[str, Any] | None = Field(
        default=None, description='`{"level": [80, 95]}` adds interval tensors `lo-80`, `hi-80`, ...'
    )
    inputs: Annotated[list[RequestInput], Field(min_length=1, max_length=3)]
    # at most the point and the two bounds of each of 99 levels: each asked one is checked against them
    outputs: list[dict[str, Any]] | None = Field(default=None, max_length=1 + 2 * MAX_LEVEL)


class OutputTensor(BaseModel):
    name: str
    shape: list[int]
    datatype: Literal["FP32"] = "FP32"
    data: list[float]


class InferResponse(BaseModel):
    model_name: str
    model_version: str | None = None
    id: str | None = None
    outputs: list[OutputTensor]
    parameters: dict[str, list[str]] | None = Field(
        default=None, description='`{"notes": [...]}` where the histories lie far from the training rows.'
    )


@router.get("/health/live")
async def live() -> dict[str, bool]:
    """The process answers HTTP."""
    return {"live": True}


@router.get("/health/ready", responses={503: {"description": "No model loaded (yet)."}})
async def ready(request: Request, registry: Registry) -> JSONResponse:
    """Ready once at least one model is loaded (200), else 503."""
    is_ready = bool(request.app.state.ready and registry.models)
    return JSONResponse(status_code=200 if is_ready else 503, content={"ready": is_ready})


@router.get("")
async def server_metadata() -> dict[str, Any]:
    return {"name": "forecaster", "version": __version__, "extensions": []}


def _served_version(version: str) -> None:
    """The protocol's versioned routes (`/models/{name}/versions/{version}/...`, which Triton's and KServe's
    clients call given a model_version, h62 F4) answer the one version served; 404 naming it otherwise."""
    if version != __version__:
        raise ApiError(404, f"unknown model version {version[:50]!r}; served: {__version__!r}",
                       field="version")  # fmt: skip


VERSIONED = "/models/{name}/versions/{version}"
_IN_VERSION = [Depends(_served_version)]


@router.get("/models/{name}", response_model=ModelMetadata, responses=LOOKUP_ERRORS)
@router.get(VERSIONED, response_model=ModelMetadata, dependencies=_IN_VERSION, responses=LOOKUP_ERRORS)
async def model_metadata(name: str, registry: Registry) -> ModelMetadata:
    """The model's tensors: `history` [-1, input_size, C] (and `future` [-1, horizon, F]) in, `forecast`
    [-1, horizon, C] out; with a companion, `short` [-1, its input_size, S] in, `short-forecast` out."""
    bundle = registry.get(name).bundle
    data = bundle.data
    rows = [-1, data.input_size, len(data.input_columns)]
    inputs = [TensorMetadata(name=INPUT, datatype="FP32", shape=rows)]
    outputs = [TensorMetadata(name=OUTPUT, datatype="FP32", shape=[-1, data.horizon, len(data.columns)])]
    if data.future_covariates:
        shape = [-1, data.horizon, len(data.future_covariates)]
        inputs.append(TensorMetadata(name=FUTURE, datatype="FP32", shape=shape))
    if held := companion_series(bundle):
        shape = [-1, bundle.companion.data.input_size, len(held)]
        inputs.append(TensorMetadata(name=SHORT, datatype="FP32", shape=shape))
        outputs.append(TensorMetadata(name=f"{SHORT}-{OUTPUT}", datatype="FP32",
                                      shape=[-1, data.horizon, len(held)]))  # fmt: skip
    return ModelMetadata(name=name, versions=[__version__], platform=f"forecaster_{bundle.model_name}",
                         inputs=inputs, outputs=outputs)  # fmt: skip


@router.get("/models/{name}/ready", responses=LOOKUP_ERRORS)
@router.get(f"{VERSIONED}/ready", dependencies=_IN_VERSION, responses=LOOKUP_ERRORS)
async def model_ready(name: str, registry: Registry) -> dict[str, Any]:
    """Ready unless the model computes calendar covariates from dates, which this protocol does not carry."""
    return {"name": name, "ready": not registry.get(name).bundle.data.calendar}


def _histories(
    served: ServedModel, tensors: list[RequestInput], max_inputs: int
) -> tuple[list[PreparedHistory], str, int | None]:
    """The request's `history` (and `future`) tensors as checked histories (the checks of v1), the field
    of the history's numbers, and the place of a companion's `short` tensor; 422 naming the field
    otherwise."""
    data = served.bundle.data
    given = list(data.future_covariates or [])
    names = [INPUT, *([FUTURE] if given else [])]
    wanted = f"tensor {INPUT!r}" if len(names) == 1 else f"tensors {INPUT!r} and {FUTURE!r}, each once"
    if companion_series(served.bundle):
        names, wanted = [*names, SHORT], f"{wanted} (or {SHORT!r}, the companion's series, beside or alone)"
    found: dict[str, int] = {}
    for position, tensor in enumerate(tensors):
        if tensor.name in found:  # "expected 'history'; got 'history'" named the right tensor as wrong (h62)
            raise ApiError(422, f"the input tensor {tensor.name!r} is given twice (inputs["
                           f"{found[tensor.name]}] too); expected the input {wanted}",
                           field=f"inputs[{position}].name")  # fmt: skip
        if tensor.name not in names:
            raise ApiError(422, f"expected the input {wanted}; got {tensor.name!r}",
                           field=f"inputs[{position}].name")  # fmt: skip
        found[tensor.name] = position
    if INPUT not in found and SHORT in found:
        if FUTURE in found:  # it was read by no one: the companion's series take no covariates
            raise ApiError(422, f"a {FUTURE!r} tensor holds the covariates of the {INPUT!r} histories, and "
                           f"none was sent; expected {INPUT!r} beside it, or {SHORT!r} alone (the "
                           "companion's series take no covariates)",
                           field=f"inputs[{found[FUTURE]}].name")  # fmt: skip
        return [], f"inputs[{found[SHORT]}].data", found[SHORT]
    if INPUT not in found:
        raise ApiError(422, f"expected the input tensor {INPUT!r}", field="inputs")
    if given and FUTURE not in found:
        raise ApiError(422, f"this model needs its future covariates {given} over the {data.horizon} steps "
                       f"ahead: expected an input tensor {FUTURE!r} of shape [B, {data.horizon}, "
                       f"{len(given)}]", field="inputs")  # fmt: skip
    position = found[INPUT]
    windows = _values(tensors[position], position, [data.input_size, len(data.input_columns)], max_inputs)
    ahead = None
    if given:
        ahead = _values(tensors[found[FUTURE]], found[FUTURE], [data.horizon, len(given)], max_inputs)
        if len(ahead) != len(windows):
            raise ApiError(422, f"expected {len(windows)} futures, one per history, got {len(ahead)}",
                           field=f"inputs[{found[FUTURE]}].shape")  # fmt: skip
    histories = []
    for index, window in enumerate(windows):
        try:
            histories.append(check_history(served.bundle, pd.RangeIndex(len(window)), window,
                                           ahead=None if ahead is None else ahead[index]))  # fmt: skip
        except HistoryError as error:
            at = found[FUTURE] if error.part == "future" else position
            raise ApiError(422, f"history {index}: {error}", field=f"inputs[{at}].data") from None
    return histories, f"inputs[{position}].data", found.get(SHORT)


def _values(tensor: RequestInput, position: int, expected: list[int], max_inputs: int) -> np.ndarray:
    """A request tensor's numbers, [B, *expected] as float64 (FP32 ones as FP32 holds them); 422 naming the
    field otherwise."""
    field = f"inputs[{position}]"
    if tensor.shape[1:] != expected:
        shape = f"[B, {expected[0]}, {expected[1]}]"
        raise ApiError(422, f"expected shape {shape}, got {tensor.shape}", field=f"{field}.shape")
    if tensor.shape[0] > max_inputs:
        raise ApiError(
            422, f"expected at most {max_inputs} histories, got {tensor.shape[0]}", field=f"{field}.shape"
        )
    values = _numbers(tensor.data)
    if values is not None and values.ndim > 1 and list(values.shape) != tensor.shape:
        raise ApiError(  # nested data is read as nested: other nesting than the shape is no reshaping
            422, f"data nested as {list(values.shape)}; expected it flat or nested as the shape "
            f"{tensor.shape}", field=f"{field}.data",
        )
    if values is None or values.size != math.prod(tensor.shape):
        raise ApiError(
            422, f"expected {math.prod(tensor.shape)} numbers for shape {tensor.shape}", field=f"{field}.data"
        )
    if tensor.datatype == "FP32":
        largest = np.finfo(np.float32).max
        beyond = np.flatnonzero(np.abs(values) > largest)  # inf as FP32: named for what it is
        if beyond.size:
            raise ApiError(422, f"value {values.flat[beyond[0]]:g} at flat index {beyond[0]} is beyond "
                           f"FP32's range (+-{largest:.4g}); expected FP32 numbers, or datatype FP64",
                           field=f"{field}.data")  # fmt: skip
        values = values.astype(np.float32).astype(np.float64)
    return values.reshape(tensor.shape)


def _numbers(data: Data) -> np.ndarray | None:
    """The tensor's numbers, flat or nested with equal lengths; None for a ragged list."""
    try:
        return np.asarray(data, dtype=np.float64)
    except ValueError:
        return None


# Request parameters the protocol and its extensions define (Triton and KServe clients send them): accepted
# and left alone; any other is refused, so that a "horizon" a client expects to matter is not ignored.
_PROTOCOL_PARAMETERS = (
    "binary_data_output", "sequence_id", "sequence_start", "sequence_end", "priority", "timeout",
)


# An input tensor's parameters the protocol and its extensions define (KServe's binary data, Triton's shared
# memory): accepted and left alone, as the request's are.
_INPUT_PARAMETERS = ("binary_data", "binary_data_size", "content_type", "shared_memory_region",
                     "shared_memory_byte_size", "shared_memory_offset")  # fmt: skip


def _levels(served: ServedModel, parameters: dict[str, Any] | None) -> list[int]:
    """`parameters.level` (free-form in the protocol, so its type is checked here), then as v1 checks it."""
    unknown = sorted(set(parameters or {}) - {"level", *_PROTOCOL_PARAMETERS})
    if unknown:
        raise ApiError(422, f"unknown parameter {unknown[0]!r}; expected only \"level\" (the horizon is the "
                       "model's)", field="parameters")  # fmt: skip
    asked = (parameters or {}).get("level")
    if asked is not None and (
        not isinstance(asked, list) or not 1 <= len(asked) <= MAX_LEVEL  # v1's "at least 1", "at most 99"
        or not all(type(level) is int and 1 <= level <= MAX_LEVEL for level in asked)
    ):
        raise ApiError(422, f"expected a list of at most {MAX_LEVEL} integer levels 1-{MAX_LEVEL}, e.g. "
                       "[80, 95]", field="parameters.level")  # fmt: skip
    return checked_levels(served, asked, "parameters.level")


_INFER_CHECKS = [Depends(require_media_type("application/json")),
                 Depends(no_query_parameters('levels from "parameters": {"level": [...]} in its JSON body; '
                                             "the horizon is the model's"))]  # fmt: skip


@router.post("/models/{name}/infer", response_model=InferResponse, dependencies=_INFER_CHECKS,
             responses=REQUEST_ERRORS)
@router.post(f"{VERSIONED}/infer", response_model=InferResponse, dependencies=[*_IN_VERSION, *_INFER_CHECKS],
             responses=REQUEST_ERRORS)
async def infer(
    name: str, request: Request, body: InferRequest, registry: Registry, settings: Settings
) -> Response:
    """Forecasts for a [B, input_size, C] `history` tensor, as [B, horizon, C] `forecast`."""
    served = registry.get(name)
    if served.bundle.data.calendar:  # its history's shape named columns it computes, refused after
        raise ApiError(422, f"model {name!r} computes calendar covariates from each row's date, which this "
                       f"protocol does not carry: forecast it on /v1/models/{name}/forecast", field="inputs")
    levels = _levels(served, body.parameters)
    for position, tensor in enumerate(body.inputs):
        misplaced = sorted(set(tensor.parameters or {}) - set(_INPUT_PARAMETERS))
        if misplaced:  # "level" here was ignored: the request's parameters hold it
            raise ApiError(422, f"unknown input parameter {misplaced[0][:50]!r}; expected interval levels in "
                           'the request\'s "parameters": {"level": [...]} (the horizon is the model\'s)',
                           field=f"inputs[{position}].parameters")  # fmt: skip
    sent = {tensor.name for tensor in body.inputs}
    held = companion_series(served.bundle) if SHORT in sent else []
    own = [] if held and INPUT not in sent else served.bundle.data.columns
    keyed = {**_output_keys(own, levels, ""), **_output_keys(held, levels, f"{SHORT}-")}
    asked = list(keyed) if body.outputs is None else [output.get("name") for output in body.outputs]
    _check_outputs(asked, list(keyed))
    histories, field, at = _histories(served, body.inputs, settings.max_inputs)
    count = len(histories)
    numbers = histories_numbers(histories, [levels] * count)
    windows = np.empty((0,))
    if at is not None:  # the companion's series, read as tables (`service.companion`)
        windows = _values(body.inputs[at], at, [served.bundle.companion.data.input_size, len(held)],
                          settings.max_inputs)  # fmt: skip
        if count and len(windows) != count:
            raise ApiError(422, f"expected {count} {SHORT} histories, one per history, got {len(windows)}",
                           field=f"inputs[{at}].shape")  # fmt: skip
        numbers += len(windows) * answer_numbers(served.bundle.data.horizon, len(held), len(levels))
    check_answer_numbers(numbers, settings.max_answer_numbers, "parameters")
    fields = [field] * count
    answers = await unless_client_leaves(
        request, lambda: forecast_histories(served, histories, [levels] * count, fields)
    )
    short: list[tuple[dict, list[str]]] = []
    if at is not None:
        left = threading.Event()  # the client hung up: windows not forecast yet are left
        read = partial(forecast_windows, served.bundle, windows, held, levels, f"inputs[{at}].data", left,
                       max_rows=settings.max_rows)  # fmt: skip
        short = await unless_client_leaves(request, lambda: in_thread(request, read), left)
        answers = [{**own_answer, **columns} for own_answer, (columns, _) in
                   zip(answers or [{}] * len(short), short, strict=True)]  # fmt: skip
    tensors = [(tensor, keyed[tensor]) for tensor in asked]
    def answered() -> bytes:  # the notes too off the event loop: a check of each history's window
        notes = [(far_notes(served.bundle, item) if item else []) + (short[index][1] if short else [])
                 for index, item in enumerate(histories or [None] * len(short))]  # fmt: skip
        said = [f"history {index}: {note}" if len(notes) > 1 else note
                for index, each in enumerate(notes) for note in each]  # fmt: skip
        return _answer(name, body.id, tensors, answers, said)

    content = await in_thread(request, answered)
    return Response(content=content, media_type="application/json")


def _output_keys(columns: list[str], levels: list[int], prefix: str) -> dict[str, list[str]]:
    """The output tensors of `columns` (`prefix`: the companion's) and the answer's columns each stacks."""
    if not columns:
        return {}
    bounds = {f"{prefix}{side}-{level}": [f"{column}-{side}-{level}" for column in columns]
              for level in levels for side in ("lo", "hi")}  # fmt: skip
    return {f"{prefix}{OUTPUT}": list(columns), **bounds}


def _check_outputs(asked: list, names: list[str]) -> None:
    """Each asked output once and one the request answers, before anything is forecast."""
    if not asked:
        raise ApiError(422, 'no output asked; expected one or more, or no "outputs" for all', field="outputs")
    seen: set = set()
    for name in asked:
        if name not in names:
            raise ApiError(422, f"unknown output {name!r:.60}; this request answers {', '.join(names)} "
                           '(intervals need "parameters": {"level": [...]})', field="outputs")  # fmt: skip
        if name in seen:
            raise ApiError(422, f"output {name!r} asked twice; expected each output once", field="outputs")
        seen.add(name)


def _answer(
    name: str, request_id: str | None, asked: list[tuple[str, list[str]]], answers: list, notes: list[str]
) -> bytes:
    """The `InferResponse` of the asked tensors (each name with its answers' keys), in the order asked, as the
    protocol answers, and the `notes` of the histories (`parameters`), written by orjson in a worker thread:
    built as pydantic models on the event loop, 256 histories at 80 levels held every other request 1.2 s."""
    outputs = []
    for tensor_name, tensor_keys in asked:
        stacked = np.stack([np.column_stack([answer[key] for key in tensor_keys]) for answer in answers])
        beyond = np.abs(stacked) > np.finfo(np.float32).max  # as FP32 an infinity, which JSON writes as null
        if beyond.any():
            raise ApiError(422, f"output {tensor_name!r} reaches {stacked[beyond][0]:.4g}, beyond FP32's "
                           "range that this protocol answers in; expected a history whose forecast fits FP32 "
                           "(the v1 route answers in float64)", field="inputs[0].data")  # fmt: skip
        outputs.append({"name": tensor_name, "shape": list(stacked.shape), "datatype": "FP32",
                        "data": stacked.astype(np.float32).ravel().tolist()})  # fmt: skip
    answer = {"model_name": name, "model_version": __version__, "id": request_id, "outputs": outputs}
    return orjson.dumps({**answer, "parameters": {"notes": notes}} if notes else answer)

"""HTTP routes: health, model listing, JSON and CSV forecasts, Prometheus metrics."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated, Any, TypeVar

import anyio.to_thread
import numpy as np
import orjson
from fastapi import APIRouter, Body, Depends, File, Query, Request, UploadFile
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import Field
from starlette.requests import ClientDisconnect

from forecaster.checks import MAX_LEVEL
from forecaster.data.series import collected_notes
from forecaster.history import held_by_companion
from forecaster.prediction import check_interval_levels, interval_columns
from forecaster.recent import HistoryError, PreparedHistory
from service.batching import BatcherClosed
from service.bodies import OrjsonRoute
from service.companion import forecast_values
from service.deps import Metrics, Registry, Settings
from service.errors import LOOKUP_ERRORS, REQUEST_ERRORS, ApiError
from service.inputs import (
    check_records,
    far_notes,
    forecast_records,
    notes_header,
    prepare_csv,
    prepare_json,
)
from service.limits import answer_numbers, check_answer_numbers
from service.preflight import (
    csv_query_parameters,
    json_counts,
    no_query_parameters,
    one_file_part,
    require_media_type,
)
from service.registry import ServedModel
from service.schemas import (
    FORECAST_EXAMPLES,
    BatchForecastResponse,
    ForecastBody,
    ForecastRequest,
    ForecastResponse,
    Liveness,
    ModelInfo,
    ModelList,
    Readiness,
    RecordsRequest,
    RecordsResponse,
)
from service.timestamps import answer_labels

T = TypeVar("T")
INLINE_ROWS = 2048  # timestamps a JSON request may bring to be read on the event loop (96-720 usually)


router = APIRouter(route_class=OrjsonRoute)


@router.get("/health/live", response_model=Liveness, tags=["health"])
async def live() -> Liveness:
    """The process answers HTTP."""
    return Liveness()


@router.get(
    "/health/ready",
    response_model=Readiness,
    tags=["health"],
    responses={503: {"model": Readiness, "description": "Not ready: no model loaded (yet)."}},
)
async def ready(request: Request, registry: Registry) -> Any:
    """Ready once startup loaded at least one model; lists loaded and skipped bundles."""
    is_ready = bool(request.app.state.ready and registry.models)
    body = Readiness(
        status="ready" if is_ready else "not_ready", models=sorted(registry.models), skipped=registry.skipped,
        stale=registry.stale,
    )
    return JSONResponse(status_code=200 if is_ready else 503, content=body.model_dump())


@router.get("/v1/models", response_model=ModelList, tags=["models"])
async def list_models(registry: Registry) -> Response:
    """Every loaded model with its horizon, input size, columns, frequency and test metrics."""
    infos = [registry.models[name].info_json for name in sorted(registry.models)]
    separated = [piece for info in infos for piece in (b",", info)][1:]  # one copy: 54 MB took 70 ms
    return Response(b"".join([b'{"models":[', *separated, b"]}"]), media_type="application/json")


@router.get("/v1/models/{name}", response_model=ModelInfo, tags=["models"], responses=LOOKUP_ERRORS)
async def describe_model(name: str, registry: Registry) -> Response:
    """One loaded model."""
    return Response(registry.get(name).info_json, media_type="application/json")


@router.get(
    "/v1/models/{name}/metrics", response_model=dict[str, Any], tags=["models"], responses=LOOKUP_ERRORS
)
async def model_metrics(name: str, request: Request, registry: Registry) -> Response:
    """The model's whole metrics.json, `val_blocks` included (written once, off the event loop)."""
    served = registry.get(name)
    return Response(await in_thread(request, lambda: served.metrics_json), media_type="application/json")


def histories_numbers(histories: list[PreparedHistory], levels: list[list[int]]) -> int:
    """The numbers the answers to `histories` at `levels` hold together (`answer_numbers`)."""
    return sum(answer_numbers(history.horizon, history.window.shape[1], len(asked))
               for history, asked in zip(histories, levels, strict=True))  # fmt: skip


def checked_levels(served: ServedModel, levels: list[int] | None, field: str) -> list[int]:
    """The asked interval levels, checked before anything is batched (422 naming `field` otherwise; a level
    asked twice too, `check_levels`)."""
    try:
        return check_interval_levels(served.bundle, levels)
    except HistoryError as error:
        raise ApiError(422, str(error), field=field) from None


async def in_thread(request: Request, work: Callable[[], T]) -> T:
    """`work()` in one of the worker's reading threads (`ServiceSettings.reading_threads`), abandoned (left to
    finish on its own) if the request is cancelled: a request beyond them waits on the event loop, holding no
    GIL, so health probes and the micro-batched routes keep being answered."""
    readers = request.app.state.readers
    return await anyio.to_thread.run_sync(work, abandon_on_cancel=True, limiter=readers)


async def unless_client_leaves(
    request: Request, work: Callable[[], Awaitable[T]], left: threading.Event | None = None
) -> T:
    """`work()`, not begun if the client has hung up and cancelled if it hangs up first (ClientDisconnect,
    counted as 499): uvicorn lets a request run on after its client left. A worker thread it waits on is
    abandoned, not stopped; `left` is set for such work to stop at its next look (60 clients that sent 256
    histories each and hung up at once had their histories read in full: a later request waited 9 s, h41)."""
    if await request.is_disconnected():
        raise ClientDisconnect

    async def watch(scope: anyio.CancelScope) -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        if left is not None:
            left.set()
        scope.cancel()

    with anyio.CancelScope() as scope:
        watcher = asyncio.ensure_future(watch(scope))
        try:
            done = await work()
        finally:
            watcher.cancel()
        if left is None or not left.is_set():  # work told to stop may have returned a part
            return done
    raise ClientDisconnect


async def forecast_histories(
    served: ServedModel, prepared: list[PreparedHistory], levels: list[list[int]], fields: list[str]
) -> list[dict[str, np.ndarray]]:
    """Run the histories through the model's batcher; each answer is cut to its requested horizon and
    given its intervals, as the columns `forecaster predict` writes."""
    try:
        outputs = await asyncio.gather(*(served.batcher.submit(item.window) for item in prepared))
    except BatcherClosed as error:
        raise ApiError(503, str(error)) from None
    answers = []
    for item, output, asked, field in zip(prepared, outputs, levels, fields, strict=True):
        try:
            answers.append(interval_columns(served.bundle, output[: item.horizon], asked, item.window))
        except HistoryError as error:
            raise ApiError(422, str(error), field=field) from None
    return answers


@router.post(
    "/v1/models/{name}/forecast",
    response_model=ForecastResponse | BatchForecastResponse | RecordsResponse,
    tags=["forecast"],
    responses=REQUEST_ERRORS,
    dependencies=[
        Depends(require_media_type("application/json")),
        Depends(no_query_parameters("horizon, level and the history from its JSON body")),
        Depends(json_counts),
    ],
)
async def forecast(
    name: str,
    request: Request,
    registry: Registry,
    settings: Settings,
    body: Annotated[ForecastBody, Body(openapi_examples=FORECAST_EXAMPLES)],
) -> Response | RecordsResponse:
    """Forecast the next `horizon` steps after the given history.

    Send one request object, or `{"inputs": [...]}` with several; the answer has the same shape
    (`{"outputs": [...]}` in order). Concurrent requests are micro-batched into one forward pass.
    `{"data": [records]}` sends rows laid out as the training table (long `unique_id, ds, y` or wide)
    and is answered as `forecaster predict` writes its table.
    """
    served = registry.get(name)
    if isinstance(body, RecordsRequest):
        check_records(served.bundle.data, body.data, settings.max_rows)
        levels = checked_levels(served, body.level, "level")
        limits = settings.max_extra_columns, settings.max_answer_numbers
        records = partial(forecast_records, served, body, levels, *limits)
        return await unless_client_leaves(request, lambda: in_thread(request, records))
    single = isinstance(body, ForecastRequest)
    items = [body] if single else body.inputs  # as many as --max-inputs (`json_counts`)
    prefixes = [""] if single else [f"inputs[{i}]." for i in range(len(items))]
    left = threading.Event()  # the client hung up: histories not read (or forecast) yet are left
    # before any history is read, on either path (a history of 200,000 timestamps took seconds to read)
    levels = [checked_levels(served, item.level, f"{prefix}level")
              for item, prefix in zip(items, prefixes, strict=True)]  # fmt: skip
    if any(held_by_companion(served.bundle, item.values) for item in items):  # read as tables, as uploads
        most = served.bundle.data.horizon
        numbers = [answer_numbers(min(item.horizon or most, most), len(item.values), len(asked))
                   for item, asked in zip(items, levels, strict=True)]  # fmt: skip
        check_answer_numbers(sum(numbers), settings.max_answer_numbers, "level")  # each item's within it

        def tables() -> list[dict[str, Any]]:  # each a forecast of its own: none begun once the client left
            return [forecast_values(served, item, asked, prefix=prefix, max_rows=settings.max_rows)
                    for item, asked, prefix in zip(items, levels, prefixes, strict=True) if not left.is_set()]

        outputs = await unless_client_leaves(request, lambda: in_thread(request, tables), left)
        content = orjson.dumps(outputs[0] if single else {"outputs": outputs})
        return Response(content=content, media_type="application/json")

    said: list[list[str]] = []  # each history's reading notes: dates of changing UTC offsets read in UTC

    def prepare() -> list[PreparedHistory]:
        prepared = []
        for item, prefix in zip(items, prefixes, strict=True):
            if left.is_set():
                break
            with collected_notes() as notes:
                prepared.append(prepare_json(served.bundle, item, prefix=prefix, max_rows=settings.max_rows))
            said.append(notes)
        return prepared

    # a large request is read off the event loop (200,000 timestamps of two UTC offsets, read as text one by
    # one, held every other request for 9-21 s)
    rows = sum(len(item.timestamps or ()) for item in items)
    if rows <= INLINE_ROWS:
        prepared = prepare()
    else:
        prepared = await unless_client_leaves(request, lambda: in_thread(request, prepare), left)
    check_answer_numbers(histories_numbers(prepared, levels), settings.max_answer_numbers, "level")
    fields = [f"{prefix}values" for prefix in prefixes]
    answers = await unless_client_leaves(
        request, lambda: forecast_histories(served, prepared, levels, fields)
    )
    # ForecastResponse's fields, serialized by orjson as they are: validating our own answer against the
    # response models and dumping it through pydantic took 2.5x as long.
    outputs = [
        {
            "model": name,
            "timestamps": answer_labels(item),
            "forecast": {column: values.tolist() for column, values in answer.items()},
            "notes": [*notes, *far_notes(served.bundle, item)],
        }
        for item, answer, notes in zip(prepared, answers, said, strict=True)
    ]
    content = orjson.dumps(outputs[0] if single else {"outputs": outputs})
    return Response(content=content, media_type="application/json")


@router.post(
    "/v1/models/{name}/forecast.csv",
    tags=["forecast"],
    responses={**REQUEST_ERRORS, 200: {"content": {"text/csv": {}}, "description": "The forecast as CSV."}},
    response_class=Response,
    dependencies=[Depends(require_media_type("multipart/form-data")), Depends(csv_query_parameters)],
)
async def forecast_csv(
    name: str,
    request: Request,
    registry: Registry,
    settings: Settings,
    file: Annotated[
        UploadFile,
        File(description="CSV with the model's date column (if any) and columns; at least input_size rows."),
    ],
    horizon: Annotated[
        int | None, Query(ge=1, description="Steps to forecast (default: the model's).")
    ] = None,
    level: Annotated[
        list[Annotated[int, Field(ge=1, le=MAX_LEVEL)]] | None,
        Query(
            max_length=MAX_LEVEL,
            description="Interval levels, repeated (`?level=80&level=95`): adds `<col>-lo-<level>` and "
            "`<col>-hi-<level>` columns.",
        ),
    ] = None,
) -> Response:
    """Forecast from an uploaded CSV (read like `forecaster predict` reads files); answered as CSV."""
    one_file_part(await request.form())
    served = registry.get(name)
    if given := served.bundle.data.future_covariates:  # the rows ahead need a second table this route lacks
        raise ApiError(422, f"model {name!r} needs its future covariates {given} over the horizon, which an "
                       f"upload of its history cannot give: send them as 'future' to "
                       f"/v1/models/{name}/forecast or as the 'future' tensor of /v2/models/{name}/infer",
                       field="file")  # fmt: skip
    levels = checked_levels(served, level, "level")
    content = await file.read()
    read = partial(
        prepare_csv, served.bundle, content, file.filename, horizon, levels, max_rows=settings.max_rows,
        max_extra_columns=settings.max_extra_columns, max_answer_numbers=settings.max_answer_numbers,
    )  # fmt: skip

    async def answer() -> Response:
        upload = await in_thread(request, read)
        text = upload.answer
        if upload.prepared is not None:
            [columns] = await forecast_histories(served, [upload.prepared], [levels], ["file"])
            text = upload.answered(served.bundle, columns)
        return Response(content=text, media_type="text/csv", headers=notes_header(upload.notes))

    return await unless_client_leaves(request, answer)


@router.get(
    "/metrics", tags=["health"], response_class=Response, responses={200: {"content": {"text/plain": {}}}}
)
async def metrics(service_metrics: Metrics) -> Response:
    """Prometheus text: requests, latencies and errors per model and route; batch sizes."""
    return Response(content=service_metrics.render(), media_type=CONTENT_TYPE_LATEST)

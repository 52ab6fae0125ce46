"""Micro-batching: concurrent forecast requests for one model share a single forward pass.

Requests wait at most `max_wait_s` for company (and never past `max_batch_size`); the stacked batch
runs in an executor thread so the event loop keeps accepting requests while torch works.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import Executor

import numpy as np

from forecaster.checks import check_int, check_number

PredictFn = Callable[[np.ndarray], np.ndarray]
BatchObserver = Callable[[int, float], None]


class BatcherClosed(RuntimeError):
    """The batcher was stopped (service shutting down) before the request ran."""


class MicroBatcher:
    """Collects (L, C) histories from concurrent callers and answers each with its (H, C) forecast."""

    def __init__(
        self,
        predict: PredictFn,
        *,
        executor: Executor,
        max_batch_size: int,
        max_wait_s: float,
        on_batch: BatchObserver | None = None,
    ):
        check_int("max_batch_size", max_batch_size, minimum=1)
        check_number("max_wait_s", max_wait_s, minimum=0)
        self._predict = predict
        self._executor = executor
        self.max_batch_size = max_batch_size
        self.max_wait_s = max_wait_s
        self._on_batch = on_batch
        self._queue: asyncio.Queue[tuple[np.ndarray, asyncio.Future[np.ndarray]]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the collecting task on the running event loop."""
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop collecting and fail whatever is still queued."""
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
        while not self._queue.empty():
            _, future = self._queue.get_nowait()
            if not future.done():
                future.set_exception(BatcherClosed("the service is shutting down"))

    async def submit(self, history: np.ndarray) -> np.ndarray:
        """Forecast one history; all histories of a batcher must have the same shape."""
        if self._worker is None:
            raise BatcherClosed("the batcher is not running")
        future: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()
        await self._queue.put((history, future))
        return await future

    async def _collect(self) -> list[tuple[np.ndarray, asyncio.Future[np.ndarray]]]:
        """The first request to arrive, then those that join within `max_wait_s` of it: all already queued
        (those that came while the previous batch computed) without waiting, and one timer for the batch
        rather than one per request that joins."""
        batch = [await self._queue.get()]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.max_wait_s):
                while len(batch) < self.max_batch_size:
                    batch.append(await self._queue.get())
        return [(history, future) for history, future in batch if not future.cancelled()]

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = await self._collect()
            if not batch:
                continue
            started = loop.time()
            try:
                stacked = np.stack([history for history, _ in batch])
                forecasts = await loop.run_in_executor(self._executor, self._predict, stacked)
            except Exception as error:  # handed to each waiting request, which maps it to a response
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            if self._on_batch is not None:
                self._on_batch(len(batch), loop.time() - started)
            for (_, future), forecast in zip(batch, forecasts, strict=True):
                if not future.done():
                    future.set_result(forecast)

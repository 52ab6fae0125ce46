"""The settings of one service instance, declared once: pydantic-settings reads them from keyword
arguments or from FORECASTER_SERVE_* environment variables (how `forecaster serve` hands them to every
uvicorn worker), and `forecaster serve` builds its flags from the same fields."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from forecaster.checks import user_path

ENV_PREFIX = "FORECASTER_SERVE_"
# A look at the models folder takes about a millisecond; 1e-9 s between looks kept a core 80% busy (h101).
MIN_RELOAD_INTERVAL_S = 0.05
# Bytes of forecast bodies in progress per worker from which heavier ones are refused (README, "Overload and
# shutdown": 4 MiB halved the longest /health/live probe under 300 concurrent requests of 64 histories, 800 kB
# each; a cap of 16 such requests did not help, h135).
MAX_FORECAST_BYTES = 4 * 2**20
# A forecast body this small is taken past --max-forecast-bytes (and counted): light requests keep moving
# behind heavy ones. 64 KiB is a history of about 500 rows of 7 columns (`bench serve` sends about 12 kB).
LIGHT_BODY_BYTES = 64 * 1024


class ServiceSettings(BaseSettings):
    """Where the bundles are, how requests are batched, what one request may ask for, and how many
    connections clients may hold open and for how long."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    models_dir: Path = Field(
        description="directory of model bundles, one per subfolder", json_schema_extra={"flag": "--models"}
    )
    max_batch_size: int = Field(64, ge=1, description="histories per forward pass")
    max_wait_ms: float = Field(2.0, ge=0, description="longest wait to fill a micro-batch, in ms")
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1, description="largest request body, in bytes")
    max_buffered_bytes: int = Field(
        256 * 1024 * 1024,
        ge=1,
        description="request bodies and unsent answers one worker holds at once, in bytes (a body until its "
        "answer is sent); a body that would pass it is answered 503",
    )
    max_forecast_bytes: int = Field(
        MAX_FORECAST_BYTES,
        ge=1,
        description="bytes of forecast request bodies in progress on one worker (from the end of each body "
        f"until its answer is sent) from which a body over {LIGHT_BODY_BYTES // 1024} KiB is answered 503 "
        "with Retry-After before it is parsed",
    )
    max_rows: int = Field(10_000, ge=1, description="most rows per series in one request")
    max_inputs: int = Field(256, ge=1, description="most series in one request")
    max_answer_numbers: int = Field(
        2_000_000,
        ge=1,
        description="most numbers in one answer: series x horizon x (1 + 2 x levels); 256 histories at 99 "
        "levels answered 59 MB and held the event loop for seconds",
    )
    max_extra_columns: int = Field(
        64,
        ge=0,
        description="CSV upload columns allowed beyond those the model reads (checked before parsing)",
    )
    http: Literal["httptools", "h11"] = Field(
        "httptools", description="HTTP/1.1 parser: httptools (C) or h11 (pure Python, slower)"
    )
    limit_concurrency: int = Field(
        512, ge=1, description="most open connections and requests in flight per worker; beyond them 503"
    )
    backlog: int = Field(128, ge=1, description="connections waiting to be accepted")
    timeout_keep_alive: int = Field(5, ge=1, description="seconds an idle keep-alive connection stays open")
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="seconds a client has to send a request's headers, from connecting or its last answer",
    )
    body_timeout_s: float = Field(60.0, gt=0, description="seconds a client has to send a request's body")
    write_timeout_s: float = Field(
        30.0,
        gt=0,
        description="seconds an answer may wait for a client that does not read it before its connection is "
        "closed (each such answer is held in memory until then)",
    )
    shutdown_timeout_s: float = Field(
        25.0,
        gt=0,
        description="seconds a graceful shutdown (SIGTERM) waits for the answers in progress before it "
        "cancels them (503, or cut short once begun), less than Kubernetes' 30 s grace; a request still "
        "sending its body is answered 503 at once",
    )
    device: str = Field(
        "cpu",
        description="torch device of the forward passes: cpu, cuda or cuda:N (on the CPU the service answers "
        "bit-identically to `forecaster predict`)",
    )
    cuda_graphs: bool = Field(
        True,
        description="on a CUDA device, replay forward passes from CUDA graphs captured per batch-size bucket "
        "(powers of two up to --max-batch-size)",
    )
    reload_interval_s: float = Field(
        5.0,
        ge=0,
        description="seconds between looks at the models folder: a bundle replaced (train --overwrite) or "
        "recalibrated since it was loaded is loaded again and swapped in, a new one added, a removed one "
        f"dropped; 0: the bundles of startup only, else at least {MIN_RELOAD_INTERVAL_S}",
    )
    reading_threads: int = Field(
        2,
        ge=1,
        description="threads per worker that read request bodies (records, CSV uploads, long JSON histories) "
        "and answer records; each holds the GIL through pandas work, and with anyio's 40 a burst of 100 "
        "records requests kept the event loop from answering a liveness probe for 2-15 s",
    )
    torch_threads: int | None = Field(
        None,
        ge=1,
        description="torch threads per worker (default: CPU cores / workers, less one for its event loop)",
        json_schema_extra={"flag": "--threads"},
    )

    @field_validator("models_dir")
    @classmethod
    def _home_expanded(cls, models_dir: Path) -> Path:
        return user_path(models_dir)  # FORECASTER_SERVE_MODELS_DIR='~/models' (h82 F22)

    @field_validator("reload_interval_s")
    @classmethod
    def _reload_or_none(cls, seconds: float) -> float:
        if 0 < seconds < MIN_RELOAD_INTERVAL_S:
            raise ValueError(f"expected 0 (no reloads) or at least {MIN_RELOAD_INTERVAL_S} s between looks "
                             f"at the models folder, got {seconds:g}")  # fmt: skip
        return seconds

    @field_validator("device")
    @classmethod
    def _known_device(cls, device: str) -> str:
        from forecaster.devices import default_device

        default_device(device)  # ConfigError (a ValueError) for a name torch does not know or CUDA it lacks
        return device

    def environment(self) -> dict[str, str]:
        """These settings as the FORECASTER_SERVE_* variables that rebuild them in a worker process."""
        values = self.model_dump(exclude_none=True)
        return {f"{ENV_PREFIX}{name.upper()}": str(value) for name, value in values.items()}


def default_torch_threads(workers: int) -> int:
    """CPU cores per worker less the one its event loop needs for HTTP, JSON and validation: with every
    core given to torch, its threads and the event loop preempt each other and each forward pass waits for
    the slowest thread (2 cores shared with 32 clients: 4-85 forecasts/s one by one, against 340-450/s
    with one thread)."""
    return max(1, (os.cpu_count() or 1) // workers - 1)

"""`forecaster serve`: every bundle in a folder over HTTP (FastAPI on uvicorn), settings from one class."""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from forecaster.commands.options import add_settings, flags, given

HELP = "serve every model bundle in a directory over HTTP (FastAPI + uvicorn)"
DESCRIPTION = (
    "Each subdirectory of --models is a bundle served as /v1/models/<dir name>; API docs at /docs. Bundles "
    "that fail validation are skipped and listed by /health/ready. Every setting may also come from its "
    "FORECASTER_SERVE_<NAME> environment variable (FORECASTER_SERVE_MODELS_DIR for --models)."
)


def configure(parser: argparse.ArgumentParser) -> None:
    from service.config import ENV_PREFIX, ServiceSettings

    # --models may come from the environment instead, so argparse must not require it.
    [models] = [flag for flag in flags(ServiceSettings) if flag.name == "models_dir"]
    parser.add_argument(
        models.flag, dest=models.name, type=Path, default=argparse.SUPPRESS, metavar=models.name.upper(),
        help=f"{models.help} (or ${ENV_PREFIX}MODELS_DIR)",
    )  # fmt: skip
    add_settings(parser, ServiceSettings, skip=[models.name])
    server = parser.add_argument_group("server (uvicorn)")
    server.add_argument("--host", default="127.0.0.1", help="interface to bind (0.0.0.0 for all)")
    server.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    server.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    server.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn
    from pydantic import ValidationError

    from forecaster.checks import check_int
    from forecaster.errors import BundleError, ConfigError
    from service.config import ENV_PREFIX, ServiceSettings, default_torch_threads
    from service.server import check_address, open_file_limit, uvicorn_options
    from service.shutdown import serve_workers

    # each worker loads every model and runs torch on its own threads: more than the CPUs only thrash
    check_int("--workers", args.workers, minimum=1, maximum=os.cpu_count() or 1)
    check_int("--port", args.port, minimum=1, maximum=65535)
    fields = given(args, ServiceSettings)
    fields.setdefault("torch_threads", default_torch_threads(args.workers))
    try:
        settings = ServiceSettings(**fields)  # what the command line leaves out comes from the environment
    except ValidationError as error:
        first = error.errors()[0]
        if first["loc"] == ("models_dir",) and first["type"] == "missing":
            raise ConfigError(f"serve: --models is required (or set {ENV_PREFIX}MODELS_DIR)") from None
        message = first["msg"].removeprefix("Value error, ")  # pydantic's prefix for a validator's ValueError
        raise ConfigError(f"serve: {first['loc'][0]}: {message}") from None
    if not settings.models_dir.is_dir():
        raise BundleError(
            f"--models {settings.models_dir}: not a directory; expected a folder of bundle subfolders"
        )
    settings = settings.model_copy(update={"models_dir": settings.models_dir.resolve()})
    check_address(args.host, args.port)  # before the bundles load, not after (h75 F18)
    open_file_limit(settings)
    os.environ.update(settings.environment())  # each uvicorn worker rebuilds the settings from these
    options = {"host": args.host, "port": args.port, "workers": args.workers,
               **uvicorn_options(settings, args.log_level)}  # fmt: skip
    with _shared_metrics(args.workers):
        if args.workers == 1:
            uvicorn.run("service.app:create_app", factory=True, **options)
        else:  # uvicorn.run's supervisor, answering its accept backlog once every worker has ended
            serve_workers(uvicorn.Config("service.app:create_app", factory=True, **options))
    return 0


@contextlib.contextmanager
def _shared_metrics(workers: int) -> Iterator[None]:
    """Several workers count into one fresh folder (removed after), so /metrics answers for all of them;
    a folder the environment already names is the operator's and is used as it is."""
    from service.metrics import MULTIPROCESS_ENV

    if workers == 1 or os.environ.get(MULTIPROCESS_ENV):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="forecaster-metrics-") as folder:
        os.environ[MULTIPROCESS_ENV] = folder
        try:
            yield
        finally:
            del os.environ[MULTIPROCESS_ENV]

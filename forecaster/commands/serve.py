"""`forecaster serve`: every bundle in a folder over HTTP (FastAPI on uvicorn), settings from one class."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from forecaster.commands.options import add_settings, given

HELP = "serve every model bundle in a directory over HTTP (FastAPI + uvicorn)"
DESCRIPTION = (
    "Each subdirectory of --models is a bundle served as /v1/models/<dir name>; API docs at /docs. Bundles "
    "that fail validation are skipped and listed by /health/ready."
)


def configure(parser: argparse.ArgumentParser) -> None:
    from service.config import ServiceSettings

    add_settings(parser, ServiceSettings)
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
    from service.config import ServiceSettings

    fields = given(args, ServiceSettings)
    models = Path(fields["models_dir"])
    if not models.is_dir():
        raise BundleError(f"--models {models}: not a directory; expected a folder of bundle subfolders")
    check_int("--workers", args.workers, minimum=1)
    fields["models_dir"] = models.resolve()
    fields.setdefault("torch_threads", max(1, (os.cpu_count() or 1) // args.workers))
    try:
        settings = ServiceSettings(**fields)
    except ValidationError as error:
        raise ConfigError(f"serve: {error.errors()[0]['loc'][0]}: {error.errors()[0]['msg']}") from None
    os.environ.update(settings.environment())  # each uvicorn worker rebuilds the settings from these
    uvicorn.run(
        "service.app:create_app", factory=True, host=args.host, port=args.port, workers=args.workers,
        log_level=args.log_level,
    )
    return 0

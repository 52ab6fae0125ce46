"""Ray for the benchmark grid and for tuning: joining a cluster or starting one here, and quieting Lightning
in the worker processes, which import it afresh."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import signal
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from forecaster.atomic import stops_handled_by
from forecaster.errors import ConfigError, ForecasterWarning, unimportable

# Seconds to wait for a Ray head to accept a connection before refusing its address.
REACH_SECONDS = 10
# Seconds Ray's count of free CPUs may take to catch up (tasks just finished) before the wait is said.
SETTLE_SECONDS = 3
# Seconds between the checks of a running command that its cluster still has CPUs for its tasks (`CpuWatch`).
WATCH_SECONDS = 10


def lightning_loggers() -> list[logging.Logger]:
    """The loggers of the Lightning packages installed: the unified `lightning` and the standalone ones
    neuralforecast trains its peers with, each imported first (importing one resets its logger to INFO)."""
    loggers = []
    for name in ("lightning.pytorch", "pytorch_lightning", "lightning.fabric", "lightning_fabric"):
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
            loggers.append(logging.getLogger(name))
    return loggers


def quiet_lightning() -> None:
    """One line per finished cell is the grid's log; Lightning's per-fit banners would drown it.

    Importing a Lightning package resets its logger to INFO, so each is imported before it is quieted. Three
    warnings repeat with every cell and are not the user's to act on: torch 2.13 deprecates a class that
    Lightning 2.6 still uses, neuralforecast's models keep unpicklable callbacks in their hyperparameters, and
    on machines with more than a few cores (a GPU host, say) Lightning advises DataLoader worker processes,
    which the runner does not use: its windows are slices of arrays already in memory.
    """
    for logger in lightning_loggers():
        logger.setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
                            category=FutureWarning)
    warnings.filterwarnings("ignore", message="Attribute 'callbacks' removed from hparams",
                            category=UserWarning)
    warnings.filterwarnings("ignore", message=r"The '\w+' does not have many workers", category=UserWarning)
    warnings.filterwarnings("ignore", message=r"The number of training batches \(\d+\) is smaller",
                            category=UserWarning)


def start_ray(address: str | None) -> bool:
    """Connect to the Ray at `address` (None: start a new one on this machine, never a cluster that
    `ray start` left behind, which Ray would join otherwise; "auto" joins that one) unless this process
    already is; True when it connected here (and so must shut Ray down)."""
    try:
        import ray
    except ImportError as error:
        raise ConfigError(
            f"Ray {unimportable('ray', error)}; --jobs above 1, --ray-address and `forecaster tune` run on "
            "it: pip install 'forecaster[cluster]'"
        ) from None
    if ray.is_initialized():
        return False
    if address not in (None, "auto", "local"):
        check_reachable(address)
        if not address.startswith("ray://"):
            _send_token_where_found()
        elif importlib.util.find_spec("grpc") is None:  # was an internal error: Ray's ValueError
            raise ConfigError(f"--ray-address {address}: Ray Client (ray://) is not installed; pip install "
                              "'ray[client]', or give the head's HOST:PORT from a node of the cluster")
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    before = signal.getsignal(signal.SIGTERM)
    ray.init(address=address or "local", **quiet)
    if before is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, before)  # Ray's exits with status 15 and no word (h84 F2)
    return True


@contextmanager
def ray_started(address: str | None) -> Iterator[None]:
    """Ray for the work inside (`start_ray`), shut down after it where it was started here."""
    started = start_ray(address)
    try:
        yield
    finally:
        if started:
            import ray

            ray.shutdown()


def say_if_no_cpus(needed: int, each: str, address: str | None) -> CpuWatch:
    """Say once, as a warning, that the tasks wait for CPUs where the cluster has fewer free than one `each`
    needs: a head started with `--num-cpus 0` and no worker had the command wait for ever without a word
    (h140 F6). It waits on: on an autoscaling cluster, whose head has no CPUs, workers come on demand.
    Returns the watch for the rest of the run."""
    import ray

    watch = CpuWatch(needed, each, address)
    deadline = time.monotonic() + SETTLE_SECONDS
    while (free := ray.available_resources().get("CPU", 0)) < needed:
        if time.monotonic() > deadline:
            _say_waiting(free, needed, each, address)
            watch.said = True
            break
        time.sleep(0.5)
    return watch


class CpuWatch:
    """`check`, called while the tasks run, says the wait once each time the cluster is left with fewer CPUs
    than one `each` needs (its workers lost mid-run): the check at the start was the only one, and the
    command waited on without a word again (h149). Its own tasks taking every CPU is no wait, and a wait said
    at the start (`say_if_no_cpus`) is not said again."""

    def __init__(self, needed: int, each: str, address: str | None) -> None:
        self.needed, self.each, self.address, self.said = needed, each, address, False
        self.due = time.monotonic() + WATCH_SECONDS

    def check(self) -> None:
        """Look at the cluster, at most once every WATCH_SECONDS (callers may call it far more often)."""
        import ray

        if time.monotonic() < self.due:
            return
        self.due = time.monotonic() + WATCH_SECONDS
        short = ray.cluster_resources().get("CPU", 0) < self.needed
        if short and not self.said:
            _say_waiting(ray.available_resources().get("CPU", 0), self.needed, self.each, self.address)
        self.said = short


def _say_waiting(free: float, needed: int, each: str, address: str | None) -> None:
    import ray

    address = address or ray.get_runtime_context().gcs_address
    warnings.warn(f"waiting for CPUs: the cluster at {address} has {free:g} free CPUs; each {each} needs "
                  f"{needed}", ForecasterWarning, stacklevel=3)


def check_reachable(address: str) -> None:
    """Refuse an address where nothing listens: `ray.init` retried a wrong host or port for minutes on end,
    printing a warning every few seconds (h140 F1)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray-address {address}: expected HOST:PORT of a Ray head (or ray://HOST:PORT)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_SECONDS).close()
    except OSError as error:
        raise ConfigError(
            f"--ray-address {address}: no Ray answers there ({error.strerror or error}); expected the "
            "address `ray start --head` printed on the head node"
        ) from None


def _send_token_where_found() -> None:
    """Send the Ray token this machine holds, as `ray start` and `ray.init(address="auto")` do on their own
    (RAY_AUTH_MODE unset, a token in ~/.ray/auth_token or RAY_AUTH_TOKEN): an explicit address sent none,
    and the head that `ray start` gave token authentication refused the driver after a minute (h140 F2)."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    said = logging.getLogger(maybe_enable_token_auth_if_token_available.__module__)
    level = said.level
    said.setLevel(logging.ERROR)  # not its notice that the cluster has token authentication
    try:
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    finally:
        said.setLevel(level)


@contextmanager
def stops_as_exit() -> Iterator[None]:
    """While Ray works for this process (the benchmark's grid, tune's search), a stop (Ctrl-C, SIGTERM, a
    closed terminal) unwinds it as SystemExit, so the Ray it started is shut down and its tasks stop with it:
    Ray's C++ handler aborted on SIGTERM with a dump (status 134), and inside `ray.wait` Ray drops what a
    handler raises unless it is KeyboardInterrupt or SystemExit, so the CLI's Ctrl-C went unheard and the grid
    ran on (h149). Once unwound, the handler in place before gets the signal (the CLI's says so in one line,
    h84 F2, F6), else the status is 128 + the signal (one inside `ray.wait` comes out as SystemExit(1)).
    Stops the shell ignores stay ignored."""
    received: list[int] = []

    def exit_on_stop(signum: int, _frame: Any) -> None:
        received.append(signum)
        raise SystemExit(128 + signum)

    with stops_handled_by(exit_on_stop) as previous:
        try:
            yield
        except BaseException:
            if not received:
                raise
    if received:
        if callable(before := previous[received[0]]):
            before(received[0], None)
        raise SystemExit(128 + received[0])

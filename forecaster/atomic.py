"""Files and folders replaced whole: what a command writes appears complete or not at all, and a save killed
half-way is swept up (or its previous folder restored) by the next one."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import threading
import uuid
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, TypeVar

from forecaster.errors import BundleError, ForecasterError, WriteRefusedError

T = TypeVar("T")
MAX_JSON_BYTES = 64 * 2**20  # a bundle's config.json: its scaler holds two numbers a column
MAX_JSON_DEPTH = 32  # a bundle's files nest 5 deep; orjson writes at most 255 (/v1/models gave a 500 past it)


def read_json(path: Path) -> tuple[Any, bytes]:
    """A JSON file forecaster wrote (a bundle's config or metrics, a run's marker) and the bytes it was read
    from (what its digest is of), read to MAX_JSON_BYTES and nested MAX_JSON_DEPTH deep at most; BundleError
    naming the file otherwise (a 1 GB config.json was held whole before it was refused)."""
    try:
        with path.open("rb") as handle:
            content = handle.read(MAX_JSON_BYTES + 1)
        if len(content) > MAX_JSON_BYTES:
            raise BundleError(f"{path}: more than {MAX_JSON_BYTES >> 20} MiB; expected the bundle's own "
                              f"{path.name}, which holds kilobytes")  # fmt: skip
        value = json.loads(content.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise BundleError(f"{path}: cannot read JSON ({error})") from None
    except ValueError:  # an integer of more digits than Python converts
        raise BundleError(f"{path}: cannot read JSON (a number too long to be a setting)") from None
    nested = [(value, 1)]
    while nested:
        item, depth = nested.pop()
        if depth > MAX_JSON_DEPTH:
            raise BundleError(f"{path}: nested more than {MAX_JSON_DEPTH} deep; expected the bundle's own "
                              f"{path.name}")  # fmt: skip
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        nested.extend((child, depth + 1) for child in children)
    return value, content


def json_text(value: Any) -> str:
    """A bundle's JSON as forecaster writes it: the text its digest is of, and what the content of a copy
    whose line endings or indents were changed (git's autocrlf, a formatter) is written as again (h72)."""
    return json.dumps(value, indent=2) + "\n"


def write_json(path: Path, value: Any) -> None:
    """`json_text` of `value` in `path`, flushed to disk (the bundle's folder is moved into place next)."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(json_text(value))
        handle.flush()
        os.fsync(handle.fileno())


_RECORDS: list[list[Path]] = []  # the lists `recording_placed` fills while it lasts


@contextlib.contextmanager
def recording_placed(placed: list[Path]) -> Iterator[None]:
    """Append to `placed` each output put in place while it lasts: a stop that lands after a command
    replaced its output must not say the earlier one is as it was (h84 F3)."""
    _RECORDS.append(placed)
    try:
        yield
    finally:
        _RECORDS.remove(placed)


def _placed(path: Path) -> None:
    for placed in _RECORDS:
        placed.append(Path(path))


def write_atomically(path: Path, write: Callable[[Path], Any]) -> Path:
    """Let `write` fill a sibling temp file, then rename it over `path`: a kill or a full disk never leaves
    half a file. A device, a pipe or a stream (/dev/stdout, a link into /proc/self/fd) is written in place:
    renaming over it replaced it (the system's /dev/stdout became a file). A link to a file is followed: the
    file is replaced, with its permissions, and the link kept. A failed write names `path` (the writers' own
    errors often name no file)."""
    in_place = _a_stream(path)
    target = path if in_place else Path(os.path.realpath(path))
    staged = target if in_place else target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        write(staged)
        if not in_place:
            if target.exists():
                shutil.copymode(target, staged)  # a file of mode 600 stays private
            os.replace(staged, target)
            _placed(path)
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    finally:
        if not in_place:
            with contextlib.suppress(OSError):  # a read-only folder: its error named the temp file
                staged.unlink(missing_ok=True)
    return path


def _a_stream(path: Path) -> bool:
    """Whether `path` is, or links to, a descriptor in /proc (/dev/stdout -> /proc/self/fd/1, which the shell
    may have opened on a file: `> out.csv`) or something not a file (/dev/null, a pipe). A file in /dev/shm
    is a file, replaced whole (every path under /dev was written in place)."""
    current = Path(os.path.abspath(path))
    for _ in range(40):  # a loop of links ends here
        if "proc" in (current.parts[1:2] + Path(os.path.realpath(current.parent)).parts[1:2]):  # /dev/fd/1
            return True
        if not current.is_symlink():
            return current.exists() and not current.is_file()
        current = Path(os.path.abspath(current.parent / os.readlink(current)))
    return False


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # Ctrl-C, a kill, a closed terminal


@contextlib.contextmanager
def stops_handled_by(handler: Callable[[int, Any], Any]) -> Iterator[dict[int, Any]]:
    """`handler` takes the STOP_SIGNALS while it lasts, in the main thread (where signals arrive; elsewhere
    nothing changes); a stop the shell ignores (`nohup`, a job a script put in the background) stays ignored.
    Yields the handlers it replaced, put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield {}
        return
    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS
                if signal.getsignal(signum) is not signal.SIG_IGN}  # fmt: skip
    try:
        yield previous
    finally:
        for signum, before in previous.items():
            signal.signal(signum, signal.SIG_DFL if before is None else before)


@contextlib.contextmanager
def stops_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP held while a file is written and delivered after: torch's zip writer calls
    Python to write its bytes, and a stop raised there came back as a RuntimeError ("unexpected pos 64 vs 0"),
    a stopped train said as a failed write (exit 2, not 143)."""
    arrived: list[int] = []
    try:
        with stops_handled_by(lambda signum, frame: arrived.append(signum)):
            yield
    finally:
        if arrived:
            signal.raise_signal(arrived[0])


LOCK_FILE = "lock"  # in a run's work folder, naming the process that holds it (`held_by_this_run`)


@contextlib.contextmanager
def held_by_this_run(folder: Path, what: str) -> Iterator[None]:
    """`folder` (a run's work folder) held by this process while it lasts, through its LOCK_FILE; BundleError
    at once where a live run holds it: two `train` runs to one --out emptied each other's checkpoints and
    could mix their weights (h84 F4). The system's lock (flock) ends with its process: a killed run's file
    blocks nothing. Without flock (not POSIX) nothing is held. The folders it made (or a killed run left
    holding its lock only) are removed after where left empty, none other: a failed `--out a/b/grid` had left
    a/b behind (h149), and a user's empty folder went with the run."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    path = folder / LOCK_FILE
    made = list(itertools.takewhile(lambda entry: not entry.exists(), (folder, *folder.absolute().parents)))
    if folder.is_dir() and [entry.name for entry in folder.iterdir()] == [LOCK_FILE]:
        made = [folder]
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (held while the run lasts)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise BundleError(f"{what} is in use by another run (process {holder}, lock {path}); wait "
                              "for it to end, or choose another output") from None  # fmt: skip
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino:
                break
        handle.close()  # removed by the run that held it as this one opened it: lock the new file
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        handle.close()
        for made_here in made:  # the deepest first; one holding anything ends it
            try:
                made_here.rmdir()
            except FileNotFoundError:  # the run removed it itself
                continue
            except OSError:
                break


def check_folder_path(out: Path) -> None:
    """BundleError for an output folder that cannot be made: no folder name of its own ('.', '..', '/'), a
    file, or a path under a file."""
    if out.name in ("", ".."):
        raise BundleError(f"output {out} names no folder of its own; give one, e.g. {out / 'model'}")
    if out.exists() and not out.is_dir():
        raise BundleError(f"output {out} is a file; expected a folder to write to")
    blocking = next((parent for parent in out.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise BundleError(f"output {out} cannot be made: {blocking} is a file; expected folders above it")
    check_writable(out.absolute().parent, f"output {out}")  # its next version is written beside it


def check_writable(folder: Path, what: str) -> None:
    """WriteRefusedError (the system's refusal: exit status 1, h84 F5), before any work, where the nearest
    folder of `folder` that exists cannot be written (a read-only file system was found once a training run
    had ended, h44)."""
    existing = next(path for path in (folder, *folder.parents) if path.exists())
    if not os.access(existing, os.W_OK):
        raise WriteRefusedError(f"{what}: folder {existing} is not writable; expected a folder this user can "
                                "write")  # fmt: skip


def check_ours(
    out: Path, marker: str, keys: tuple[str, ...], owned: Collection[str], inner: Collection[str] = ()
) -> None:
    """BundleError for a non-empty folder forecaster did not write, which --overwrite would empty: ours holds
    `marker` as a JSON object with `keys` (a folder holding another program's config.json was emptied) and
    no entry but `owned` (a user's files beside a bundle were deleted with it); those of them named `inner`
    are folders ours alike (a user's folder named as a bundle's companion was deleted as one, h130)."""
    if not out.is_dir() or not any(out.iterdir()):
        return
    path, content = out / marker, None
    if path.is_file():  # not a FIFO
        with contextlib.suppress(BundleError):
            content = read_json(path)[0]
    if not isinstance(content, dict) or not set(keys) <= set(content):
        why = f"its {marker} is not forecaster's" if path.exists() else f"no {marker} in it"
        raise BundleError(f"output {out} is a folder forecaster did not write ({why}); --overwrite replaces "
                          "only forecaster's own output: choose another folder")  # fmt: skip
    foreign = sorted(entry.name for entry in out.iterdir() if entry.name not in owned
                     or (entry.name in inner and not (entry / marker).is_file()))  # fmt: skip
    if foreign:
        more = f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        shown = ", ".join(map(repr, foreign[:3])) + more
        raise BundleError(f"output {out} holds what forecaster did not write ({shown}), which --overwrite "
                          "would delete: move it out or choose another folder")
    for name in inner:
        check_ours(out / name, marker, keys, owned)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _hidden_name(target: Path) -> str:
    """The name a save of `target` gives its hidden staging and set-aside folders: the target's own, cut with
    a digest where a long one (a legal 250-byte name) would take them past the file system's 255 bytes."""
    name = target.name
    if len(name.encode()) <= 160:
        return name
    return f"{name.encode()[:100].decode(errors='ignore')}~{hashlib.sha256(name.encode()).hexdigest()[:16]}"


def staging_dir(target: Path) -> Path:
    """A new, empty hidden folder beside `target` to write its next version in (`move_into_place`); an
    error names `target`, the folder the caller gave, not the hidden one."""
    staged = target.parent / f".{_hidden_name(target)}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staged.mkdir()
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(target)) from None
    return staged


def sweep_stale(target: Path) -> None:
    """Drop temp dirs of killed saves of `target`; restore a folder a killed overwrite moved aside."""
    pattern = re.compile(rf"^\.{re.escape(_hidden_name(target))}\.(tmp|old)-(\d+)-")
    for entry in sorted(target.parent.iterdir()):
        match = pattern.match(entry.name)
        if not match or _pid_alive(int(match.group(2))):
            continue
        if match.group(1) == "old" and not target.exists():
            os.replace(entry, target)
        else:
            shutil.rmtree(entry, ignore_errors=True)


def move_into_place(staged: Path, target: Path, *, replace: bool) -> None:
    """Rename `staged` to `target`. With `replace`, an existing target is moved aside (restored on failure);
    without it, a target that appeared since the caller checked (another run writing the same folder) is
    left alone and BundleError says so: two runs never both report the same folder as theirs."""
    if not replace or not target.exists():
        try:
            os.rename(staged, target)  # onto an existing folder: fails unless it is empty
            _placed(target)
            return
        except OSError as error:
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                raise
            if not replace:
                raise BundleError(f"output {target} was written by another run while this one worked; use "
                                  "--overwrite (overwrite=True in Python) to replace it, or another "
                                  "folder") from None  # fmt: skip
    if _exchanged(staged, target):  # the old version now at `staged`
        _placed(target)
        shutil.rmtree(staged, ignore_errors=True)
        return
    aside = target.parent / f".{_hidden_name(target)}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    os.replace(target, aside)
    try:
        os.replace(staged, target)
    except BaseException:
        os.replace(aside, target)
        raise
    _placed(target)
    shutil.rmtree(aside, ignore_errors=True)


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # renameat2(2)'s "paths relative to the working folder", "swap them"


def _exchanged(staged: Path, target: Path) -> bool:
    """Swap two folders in one step (Linux's renameat2 with RENAME_EXCHANGE): moved aside, then in, the
    target was missing for a moment, and a service scanning then dropped its model (404s until the next
    scan) and a reader said "no model bundle" (h44). False where the system or file system cannot."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:  # not Linux, or a C library before glibc 2.28
        return False
    if renameat2(_AT_FDCWD, os.fsencode(staged), _AT_FDCWD, os.fsencode(target), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):  # an old kernel or a file system without it
        return False
    raise OSError(code, os.strerror(code), str(target))


def read_whole(folder: Path, read: Callable[[], T], attempts: int = 3) -> T:
    """`read()` of a folder's files, again where the folder was replaced or changed while it ran (`train
    --overwrite` or `calibrate` beside a reader): files of two versions never make one answer, nor does a
    half-replaced folder read as a broken one. The error of an attempt the folder stayed put for is raised."""
    for _ in range(attempts):
        before = folder_version(folder)
        try:
            result = read()
        except (ForecasterError, OSError, RuntimeError):
            if folder_version(folder) == before:
                raise
            continue
        if folder_version(folder) == before:
            return result
    raise BundleError(f"{folder} was replaced {attempts} times while it was read; expected it to stay put: "
                      "try again once the run writing it is done")


Version = tuple[Any, ...] | None


def folder_version(folder: Path) -> Version:
    """What changes when a folder is replaced (its inode), its entries are (its modification time) or a
    file in it is rewritten in place (`cp` over it: the file's inode, size and modification time); None for
    no folder."""
    try:
        status = os.stat(folder)
        with os.scandir(folder) as entries:
            shown = [entry for entry in entries if not entry.name.startswith(".")]
            files = sorted((entry.name, *_identity(entry.stat())) for entry in shown)
    except OSError:
        return None
    return status.st_ino, status.st_mtime_ns, tuple(files)


def _identity(status: os.stat_result) -> tuple[int, int, int]:
    return status.st_ino, status.st_size, status.st_mtime_ns

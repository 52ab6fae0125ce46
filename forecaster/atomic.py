"""Files and folders replaced whole: what a command writes appears complete or not at all, and a save killed
half-way is swept up (or its previous folder restored) by the next one."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_atomically(path: Path, write: Callable[[Path], Any]) -> Path:
    """Let `write` fill a sibling temp file, then rename it over `path`: a kill or a full disk never leaves
    half a file. A device or a pipe (/dev/stdout) is written in place: renaming over it would replace it.
    A failed write names `path` (the writers' own errors often name no file)."""
    in_place = path.exists() and not path.is_file()
    staged = path if in_place else path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(staged)
        if not in_place:
            os.replace(staged, path)
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    finally:
        if not in_place:
            staged.unlink(missing_ok=True)
    return path


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(target: Path) -> None:
    """Drop temp dirs of killed saves of `target`; restore a folder a killed overwrite moved aside."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(tmp|old)-(\d+)-")
    for entry in sorted(target.parent.iterdir()):
        match = pattern.match(entry.name)
        if not match or _pid_alive(int(match.group(2))):
            continue
        if match.group(1) == "old" and not target.exists():
            os.replace(entry, target)
        else:
            shutil.rmtree(entry, ignore_errors=True)


def move_into_place(staged: Path, target: Path) -> None:
    """Rename `staged` to `target`; an existing target is moved aside, restored on failure."""
    if not target.exists():
        os.rename(staged, target)
        return
    aside = target.parent / f".{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    os.replace(target, aside)
    try:
        os.replace(staged, target)
    except BaseException:
        os.replace(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)

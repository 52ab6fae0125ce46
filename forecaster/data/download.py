"""Fetch a registered dataset from its public source and verify it against the registry's sha256.

The network part is one `urllib` call; unpacking (gzip or zip sources), hashing and the atomic
write work on local files, so they are tested without internet (file:// URLs or plain paths).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import warnings
import zipfile
from pathlib import Path
from typing import IO

from forecaster.data.registry import DatasetSpec, data_search_dirs, get_spec, locate_dataset
from forecaster.data.textfile import GZIP_MAGIC, ZIP_MAGIC
from forecaster.errors import DataError, ForecasterWarning

_CHUNK = 1 << 20


def _open_csv(path: Path) -> IO[bytes]:
    """The uncompressed bytes of a CSV file that may be gzip-compressed."""
    with path.open("rb") as handle:
        magic = handle.read(2)
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else path.open("rb")


def file_sha256(path: str | Path) -> str:
    """sha256 of the uncompressed CSV content (a `.csv.gz` hashes like the `.csv` it holds)."""
    digest = hashlib.sha256()
    try:
        with _open_csv(Path(path)) as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except (OSError, EOFError) as error:
        raise DataError(f"{path}: cannot be read for its checksum: {error}") from None
    return digest.hexdigest()


def _fetch(url: str, target: Path) -> None:
    """Copy `url` (http(s)://, file:// or a local path) to `target`."""
    if "://" not in url:
        url = Path(url).resolve().as_uri()
    try:
        with urllib.request.urlopen(url, timeout=60) as response, target.open("wb") as out:
            shutil.copyfileobj(response, out, _CHUNK)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise DataError(f"cannot download {url}: {error}") from None


def _unpack(archive: Path, spec: DatasetSpec, out: Path) -> None:
    """Write the plain CSV held by `archive` (plain, gzip, or a zip containing spec.file_name) to `out`."""
    with archive.open("rb") as handle:
        magic = handle.read(4)
    if magic.startswith(ZIP_MAGIC):
        with zipfile.ZipFile(archive) as bundle:
            members = [m for m in bundle.namelist() if Path(m).name == spec.file_name]
            if not members:
                raise DataError(f"the downloaded zip archive holds no {spec.file_name}")
            with bundle.open(members[0]) as source, out.open("wb") as target:
                shutil.copyfileobj(source, target, _CHUNK)
        return
    try:
        with _open_csv(archive) as source, out.open("wb") as target:
            shutil.copyfileobj(source, target, _CHUNK)
    except (OSError, EOFError) as error:
        raise DataError(f"the download of {spec.file_name} is damaged: {error}") from None


def download_dataset(
    name: str, data_dir: str | Path | None = None, *, url: str | None = None, force: bool = False
) -> Path:
    """Download dataset `name` into the first data directory as a plain CSV, verified by sha256.

    The file appears atomically (temporary file + rename) and only if its checksum matches; a file that
    is already present is kept unless `force`. `url` overrides the registered source (a mirror).
    """
    spec = get_spec(name)
    directory = data_search_dirs(data_dir)[0]
    final = directory / spec.file_name
    present = [p for p in (final, directory / f"{spec.file_name}.gz") if p.is_file()]
    if present and not force:
        return present[0]
    source = url or spec.url
    if source is None:
        raise DataError(f"dataset {spec.name} has no public source registered; pass a url")
    if directory.exists() and not directory.is_dir():
        raise DataError(f"{directory} is a file; expected a folder to download {spec.name} into (--data-dir)")
    made = [folder for folder in (directory, *directory.parents) if not folder.exists()]  # innermost first
    directory.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(dir=directory, prefix=f".{spec.stem}-") as scratch:
            fetched = Path(scratch) / "download"
            plain = Path(scratch) / spec.file_name
            _fetch(source, fetched)
            _unpack(fetched, spec, plain)
            digest = file_sha256(plain)
            if spec.sha256 is None:
                warnings.warn(
                    f"{spec.name}: no registered sha256 to verify against; "
                    f"the downloaded file hashes to {digest}",
                    ForecasterWarning,
                    stacklevel=2,
                )
            elif digest != spec.sha256:
                raise DataError(
                    f"{spec.name}: the file from {source} has sha256 {digest}, expected {spec.sha256}; not "
                    "saved"
                )
            os.replace(plain, final)
    except BaseException:  # a failed download leaves no folder it made behind
        for folder in made:
            try:
                folder.rmdir()
            except OSError:  # something else was written there meanwhile
                break
        raise
    return final


def verify_dataset(name: str, data_dir: str | Path | None = None) -> dict[str, str | None]:
    """Locate a registered dataset and compare its sha256 with the registry.

    Status is "ok", "mismatch", "unknown" (no registered checksum) or "missing" (file not found).
    """
    spec = get_spec(name)
    try:
        path = locate_dataset(spec.name, data_dir)
    except DataError:
        return {"name": spec.name, "path": None, "sha256": None, "status": "missing"}
    digest = file_sha256(path)
    status = "unknown" if spec.sha256 is None else "ok" if digest == spec.sha256 else "mismatch"
    return {"name": spec.name, "path": str(path), "sha256": digest, "status": status}

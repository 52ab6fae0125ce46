"""Readers for the official Long Range Arena release files (lra_release.gz) and the datasets it builds on.

None of them unpickles: TSVs through csv, Pathfinder PNGs through Pillow, CIFAR-10 from its *binary*
batches (`cifar-10-binary.tar.gz`, records of 1 label byte + 3072 pixel bytes), IMDB from its text files.
Every problem raises DataError naming the file, row and what was expected.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from forecaster.errors import DataError

CIFAR10_RECORD_BYTES = 1 + 3 * 32 * 32
# ITU-R 601 luma weights, as tf.image.rgb_to_grayscale used by the LRA image task.
_GREY_WEIGHTS = np.array([0.2989, 0.5870, 0.1140])


def _require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise DataError(f"{what} not found at {path}")
    return path


def _tsv_rows(path: Path) -> list[list[str]]:
    previous = csv.field_size_limit(sys.maxsize)  # retrieval documents are long single fields
    try:  # the limit is the process's: the service's CSV check reads with the module's own (h52)
        with _require_file(Path(path), "LRA TSV file").open(newline="", encoding="utf-8") as handle:
            return list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    finally:
        csv.field_size_limit(previous)


def _label(path: Path, row: int, text: str, n_classes: int) -> int:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value.is_integer() or not 0 <= value < n_classes:
        raise DataError(f"{path}: row {row}: label {text!r} is not an integer in 0..{n_classes - 1}")
    return int(value)


def read_listops_tsv(path: str | Path) -> list[dict]:
    """`basic_{train,val,test}.tsv` of lra_release/listops-1000: header Source<TAB>Target, then one
    expression and its label a row."""
    path = Path(path)
    rows = _tsv_rows(path)
    if not rows or rows[0][:2] != ["Source", "Target"]:
        raise DataError(f"{path}: expected the header 'Source<TAB>Target' of an LRA ListOps file")
    samples = []
    for row_number, row in enumerate(rows[1:], start=2):
        if len(row) != 2:
            raise DataError(f"{path}: row {row_number}: expected 2 tab-separated fields, got {len(row)}")
        samples.append({"text": row[0], "label": _label(path, row_number, row[1], 10)})
    return samples


def read_retrieval_tsv(path: str | Path) -> list[dict]:
    """`new_aan_pairs.{train,eval,test}.tsv` of lra_release/tsv_data: rows of label, id1, id2, text1, text2
    (no header)."""
    path = Path(path)
    samples = []
    for row_number, row in enumerate(_tsv_rows(path), start=1):
        if len(row) != 5:
            raise DataError(
                f"{path}: row {row_number}: expected 5 tab-separated fields (label, id1, id2, text1, text2), "
                f"got {len(row)}"
            )
        samples.append({"text_a": row[3], "text_b": row[4], "label": _label(path, row_number, row[0], 2)})
    return samples


def read_imdb(root: str | Path, split: str) -> list[dict]:
    """The IMDB reviews of the LRA text task from the aclImdb folder layout: {split}/{pos,neg}/*.txt."""
    root = Path(root)
    samples = []
    for label, polarity in ((0, "neg"), (1, "pos")):
        folder = root / split / polarity
        if not folder.is_dir():
            raise DataError(f"IMDB folder {folder} not found; expected aclImdb/{split}/{polarity}/*.txt")
        samples += [
            {"text": file.read_text(encoding="utf-8"), "label": label}
            for file in sorted(folder.glob("*.txt"))
        ]
    return samples


def read_pathfinder(root: str | Path, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Images (N, H, W) uint8 and labels of one Pathfinder difficulty folder of lra_release (for example
    pathfinder32/curv_contour_length_14): its metadata/*.npy files are text lines
    `<image dir> <file name> <index> <label> ...`."""
    from PIL import Image

    root = Path(root)
    metadata_files = sorted((root / "metadata").glob("*.npy"), key=lambda p: (len(p.stem), p.stem))
    if not metadata_files:
        raise DataError(
            f"no Pathfinder metadata lists found in {root / 'metadata'} (expected metadata/*.npy)"
        )
    images, labels = [], []
    for metadata in metadata_files:
        for line_number, line in enumerate(metadata.read_text().splitlines(), start=1):
            if limit is not None and len(labels) >= limit:
                break
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 4:
                raise DataError(
                    f"{metadata}: line {line_number}: expected '<dir> <file> <index> <label> ...'"
                )
            image_path = _require_file(
                root / fields[0] / fields[1], f"Pathfinder image of {metadata}:{line_number}"
            )
            with Image.open(image_path) as image:
                images.append(np.asarray(image.convert("L"), dtype=np.uint8))
            labels.append(_label(metadata, line_number, fields[3], 2))
    shapes = {image.shape for image in images}
    if len(shapes) > 1:
        raise DataError(f"Pathfinder images in {root} have different sizes: {sorted(shapes)}")
    return np.stack(images), np.asarray(labels, dtype=np.int64)


def read_cifar10(root: str | Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Grey-scale images (N, 32, 32) uint8 and labels from cifar-10-batches-bin: data_batch_1..5.bin for
    "train", test_batch.bin for "test"."""
    root = Path(root)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] if split == "train" else ["test_batch.bin"]
    images, labels = [], []
    for name in names:
        path = _require_file(root / name, "CIFAR-10 binary batch")
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size == 0 or raw.size % CIFAR10_RECORD_BYTES:
            raise DataError(
                f"{path}: {raw.size} bytes is not a whole number of "
                f"{CIFAR10_RECORD_BYTES}-byte CIFAR-10 records"
            )
        records = raw.reshape(-1, CIFAR10_RECORD_BYTES)
        if records[:, 0].max() > 9:
            raise DataError(f"{path}: record {int(np.argmax(records[:, 0] > 9))} has label > 9")
        rgb = records[:, 1:].reshape(-1, 3, 32, 32).astype(np.float64)
        images.append(np.rint(np.einsum("c,nchw->nhw", _GREY_WEIGHTS, rgb)).clip(0, 255).astype(np.uint8))
        labels.append(records[:, 0].astype(np.int64))
    return np.concatenate(images), np.concatenate(labels)

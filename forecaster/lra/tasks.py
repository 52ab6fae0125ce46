"""The five LRA tasks as arrays: generated (ListOps, Pathfinder; cached as npz) or read from release files.

`load_task` returns train/val/test splits of `inputs` (token ids, or pixels 0..255), `labels` and, for
Retrieval, `inputs_b`. Token id 0 is padding, so the padding mask is `inputs != 0`; pixel inputs have no
padding (pixel 0 is black, not missing).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from forecaster.errors import DataError
from forecaster.lra import listops, pathfinder, readers
from forecaster.lra.tokenizers import ByteTokenizer, ListOpsTokenizer

LISTOPS_MAX_TOKENS = 2000
# Generated sizes (train, validation and test each) by default: LRA's ListOps files hold 96,000 / 2,000 /
# 2,000 samples; Pathfinder is kept small (LRA's 32x32 set has 200,000 images), see the README.
GENERATED_SIZES = {"listops": (96_000, 2_000), "pathfinder": (5_000, 1_000)}


@dataclass(frozen=True)
class TaskSpec:
    """One LRA task: sizes, whether it is generated here, and where its files come from otherwise (its
    training settings: `forecaster.lra.presets`)."""

    name: str
    n_classes: int
    seq_len: int
    pixels: bool
    dual: bool
    synthetic: bool
    files: str


_LRA_RELEASE = "https://storage.googleapis.com/long-range-arena/lra_release.gz"
TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec(
            name="listops", n_classes=10, seq_len=2048, pixels=False, dual=False, synthetic=True,
            files="basic_train.tsv, basic_val.tsv, basic_test.tsv of lra_release/listops-1000 "
            f"({_LRA_RELEASE})",
        ),
        TaskSpec(
            name="text", n_classes=2, seq_len=4096, pixels=False, dual=False, synthetic=False,
            files="the aclImdb folder (train/pos, train/neg, test/pos, test/neg) of "
            "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
        ),
        TaskSpec(
            name="retrieval", n_classes=2, seq_len=4096, pixels=False, dual=True, synthetic=False,
            files="new_aan_pairs.train.tsv, new_aan_pairs.eval.tsv, new_aan_pairs.test.tsv of "
            f"lra_release/tsv_data ({_LRA_RELEASE})",
        ),
        TaskSpec(
            name="image", n_classes=10, seq_len=1024, pixels=True, dual=False, synthetic=False,
            files="the cifar-10-batches-bin folder (data_batch_1..5.bin, test_batch.bin) of "
            "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
        ),
        TaskSpec(
            name="pathfinder", n_classes=2, seq_len=1024, pixels=True, dual=False, synthetic=True,
            files="a difficulty folder of lra_release/pathfinder32, e.g. curv_contour_length_14 "
            f"(metadata/*.npy, imgs/) ({_LRA_RELEASE})",
        ),
    )
}


@dataclass
class TaskData:
    """Arrays of one task, ready for the classifiers; `vocab_size` is None for pixel tasks."""

    spec: TaskSpec
    seq_len: int
    vocab_size: int | None
    splits: dict[str, dict[str, np.ndarray]]
    source: str

    def model_config(self) -> dict:
        """The LRAConfig fields that the data fixes."""
        return {"n_classes": self.spec.n_classes, "seq_len": self.seq_len, "vocab_size": self.vocab_size}

    def majority_rate(self, split: str = "test") -> float:
        """Accuracy of always answering the most common training label."""
        majority = Counter(self.splits["train"]["labels"].tolist()).most_common(1)[0][0]
        return float(np.mean(self.splits[split]["labels"] == majority))


def get_task(name: str) -> TaskSpec:
    if name not in TASKS:
        raise DataError(f"unknown LRA task {name!r}; expected one of {', '.join(TASKS)}")
    return TASKS[name]


def default_cache_dir() -> Path:
    """Where generated tasks are cached: $FORECASTER_CACHE_DIR/lra, else ~/.cache/forecaster/lra."""
    root = os.environ.get("FORECASTER_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "forecaster") / "lra"


def _token_dtype(vocab_size: int) -> type:
    """The smallest integer dtype that holds every token id of a vocabulary (what the cache files store)."""
    return np.uint8 if vocab_size <= 256 else np.int16


def _generate_listops(
    counts: dict[str, int], seed: int, seq_len: int, tokenization: str
) -> dict[str, np.ndarray]:
    """Distinct trees for every split at once, split in order as LRA's generator does."""
    # Below 2000 tokens the expressions are made shorter rather than truncated (truncation breaks labels).
    max_length = min(LISTOPS_MAX_TOKENS, seq_len + 1)
    min_length = 500 if max_length == LISTOPS_MAX_TOKENS else max_length // 4
    samples = listops.generate(sum(counts.values()), seed, min_length=min_length, max_length=max_length,
                               workers=os.cpu_count() or 1)  # fmt: skip
    tokenizer = ListOpsTokenizer(tokenization)
    dtype, flat, start = _token_dtype(tokenizer.vocab_size), {}, 0
    for split, count in counts.items():
        part = samples[start : start + count]
        start += count
        flat[f"{split}/inputs"] = tokenizer.encode_batch([s["text"] for s in part], seq_len).astype(dtype)
        flat[f"{split}/labels"] = np.array([s["label"] for s in part], dtype=np.int64)
    return flat


def _generate_pathfinder(counts: dict[str, int], seed: int, seq_len: int) -> dict[str, np.ndarray]:
    flat = {}
    for offset, (split, count) in enumerate(counts.items()):
        images, labels = pathfinder.generate(count, seed + offset, workers=os.cpu_count() or 1)
        flat[f"{split}/inputs"], flat[f"{split}/labels"] = images.reshape(count, seq_len), labels
    return flat


def _synthetic(
    spec: TaskSpec, seq_len: int, n_train: int, n_eval: int, seed: int, cache_dir: Path, tokenization: str
) -> TaskData:
    counts = {"train": n_train, "val": n_eval, "test": n_eval}
    listops_task = spec.name == "listops"
    # LRA's trees in this tokenization; Pathfinder with LRA's generator parameters
    kind = f"{spec.name}-lra-{tokenization}-draws{listops.DRAWS}" if listops_task else f"{spec.name}-lra"
    cache = cache_dir / f"{kind}-L{seq_len}-train{n_train}-eval{n_eval}-seed{seed}.npz"
    if cache.is_file():
        with np.load(cache, allow_pickle=False) as stored:
            flat = dict(stored)
    else:
        if listops_task:
            flat = _generate_listops(counts, seed, seq_len, tokenization)
        else:
            flat = _generate_pathfinder(counts, seed, seq_len)
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(".partial.npz")
        np.savez_compressed(partial, **flat)
        partial.replace(cache)
    splits: dict[str, dict[str, np.ndarray]] = {"train": {}, "val": {}, "test": {}}
    for key, array in flat.items():
        split, name = key.split("/")
        splits[split][name] = array
    vocab_size = None if spec.pixels else ListOpsTokenizer(tokenization).vocab_size
    return TaskData(spec, seq_len, vocab_size, splits, f"generated, cached at {cache}")


def _find(data_dir: Path, spec: TaskSpec, candidates: list[str]) -> Path:
    for candidate in candidates:
        if (data_dir / candidate).exists():
            return data_dir / candidate
    raise DataError(
        f"LRA {spec.name} files not found in {data_dir}: download {spec.files} and pass its folder"
    )


def _subsample(
    split: dict[str, np.ndarray], limit: int | None, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    count = len(split["labels"])
    keep = rng.permutation(count)[: count if limit is None else min(limit, count)]
    return {key: array[keep] for key, array in split.items()}


def _from_files(
    spec: TaskSpec, data_dir: Path, seq_len: int, tokenization: str
) -> tuple[dict, int | None, str]:
    if spec.name == "listops":
        folder = _find(data_dir, spec, ["basic_train.tsv", "listops-1000/basic_train.tsv"]).parent
        tokenizer = ListOpsTokenizer(tokenization)
        splits = {}
        for split in ("train", "val", "test"):
            samples = readers.read_listops_tsv(folder / f"basic_{split}.tsv")
            splits[split] = {
                "inputs": np.stack(
                    [tokenizer.encode(s["text"], seq_len, truncate=True) for s in samples]
                ).astype(_token_dtype(tokenizer.vocab_size)),
                "labels": np.array([s["label"] for s in samples], dtype=np.int64),
            }
        return splits, tokenizer.vocab_size, str(folder)
    if spec.name == "retrieval":
        folder = _find(data_dir, spec, ["new_aan_pairs.train.tsv", "tsv_data/new_aan_pairs.train.tsv"]).parent
        tokenizer = ByteTokenizer()
        dtype, splits = _token_dtype(tokenizer.vocab_size), {}
        for split, file_split in (("train", "train"), ("val", "eval"), ("test", "test")):
            samples = readers.read_retrieval_tsv(folder / f"new_aan_pairs.{file_split}.tsv")
            splits[split] = {
                "inputs": tokenizer.encode_batch([s["text_a"] for s in samples], seq_len).astype(dtype),
                "inputs_b": tokenizer.encode_batch([s["text_b"] for s in samples], seq_len).astype(dtype),
                "labels": np.array([s["label"] for s in samples], dtype=np.int64),
            }
        return splits, tokenizer.vocab_size, str(folder)
    if spec.name == "text":
        folder = _find(data_dir, spec, ["aclImdb/train/pos", "train/pos"]).parent.parent
        tokenizer = ByteTokenizer()
        dtype, encoded = _token_dtype(tokenizer.vocab_size), {}
        for split in ("train", "test"):
            samples = readers.read_imdb(folder, split)
            encoded[split] = {
                "inputs": tokenizer.encode_batch([s["text"] for s in samples], seq_len).astype(dtype),
                "labels": np.array([s["label"] for s in samples], dtype=np.int64),
            }
        # As in LRA, the IMDB test reviews are the evaluation set.
        splits = {"train": encoded["train"], "val": encoded["test"], "test": encoded["test"]}
        return splits, tokenizer.vocab_size, str(folder)
    if spec.name == "image":
        folder = _find(data_dir, spec, ["cifar-10-batches-bin/test_batch.bin", "test_batch.bin"]).parent
        train_images, train_labels = readers.read_cifar10(folder, "train")
        test_images, test_labels = readers.read_cifar10(folder, "test")
        train = {"inputs": train_images.reshape(len(train_images), -1), "labels": train_labels}
        test = {"inputs": test_images.reshape(len(test_images), -1), "labels": test_labels}
        return {"train": train, "val": test, "test": test}, None, str(folder)
    folder = _find(data_dir, spec, ["metadata", "pathfinder32/curv_contour_length_14/metadata"]).parent
    images, labels = readers.read_pathfinder(folder)
    order = np.random.default_rng(0).permutation(len(labels))
    images, labels = images.reshape(len(images), -1)[order], labels[order]
    n_val = n_test = len(labels) // 10
    n_train = len(labels) - n_val - n_test
    cuts = {
        "train": slice(0, n_train),
        "val": slice(n_train, n_train + n_val),
        "test": slice(n_train + n_val, None),
    }
    return {s: {"inputs": images[c], "labels": labels[c]} for s, c in cuts.items()}, None, str(folder)


def load_task(
    name: str,
    *,
    data_dir: str | Path | None = None,
    seq_len: int | None = None,
    n_train: int | None = None,
    n_eval: int | None = None,
    seed: int = 0,
    cache_dir: str | Path | None = None,
    tokenization: str = "lra",
) -> TaskData:
    """Arrays of LRA task `name`. Without `data_dir`, ListOps and Pathfinder are generated (sizes by default
    `GENERATED_SIZES`) and cached; Text, Retrieval and Image need their files (DataError says which).
    `tokenization` is what a ListOps model reads (`listops.TOKENIZATIONS`)."""
    spec = get_task(name)
    seq_len = spec.seq_len if seq_len is None else seq_len
    if spec.pixels and seq_len != spec.seq_len:
        raise DataError(f"LRA {name} images have {spec.seq_len} pixels; --seq-len {seq_len} cannot be used")
    if seq_len < 8:
        raise DataError(f"--seq-len must be at least 8, got {seq_len}")
    if data_dir is None:
        if not spec.synthetic:
            raise DataError(f"LRA {name} cannot be generated: download {spec.files} and pass --data-dir")
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        default_train, default_eval = GENERATED_SIZES[name]
        sizes = (n_train or default_train, n_eval or default_eval)
        return _synthetic(spec, seq_len, *sizes, seed, cache, tokenization)
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise DataError(f"--data-dir {data_dir} is not a directory; expected {spec.files}")
    splits, vocab_size, source = _from_files(spec, data_dir, seq_len, tokenization)
    rng = np.random.default_rng(seed)
    splits = {
        split: _subsample(arrays, n_train if split == "train" else n_eval, rng)
        for split, arrays in splits.items()
    }
    return TaskData(spec, seq_len, vocab_size, splits, source)

"""Training an LRA classifier with Lightning: AdamW, linear warmup then linear decay, accuracy logged.

`train_lra` is what `forecaster lra train` runs; it writes config.json, weights.safetensors, metrics.json
and Lightning's CSV log of loss and accuracy into the output folder.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.pytorch.loggers import CSVLogger
from safetensors.torch import save_file
from torch import Tensor, nn
from torch.utils.data import DataLoader, Dataset

from forecaster.lra.tasks import TaskData, load_task
from forecaster.models.lra import LRAClassifier, LRADualClassifier


class ArraySplit(Dataset):
    """One split of a TaskData as items {"inputs", "labels"[, "inputs_b"]}; pixels become floats in [0, 1]."""

    def __init__(self, arrays: dict[str, np.ndarray], pixels: bool) -> None:
        self.arrays, self.pixels = arrays, pixels

    def __len__(self) -> int:
        return len(self.arrays["labels"])

    def __getitem__(self, index: int) -> dict[str, Tensor]:
        item = {}
        for key, array in self.arrays.items():
            value = torch.from_numpy(np.asarray(array[index]))
            if key == "labels":
                item[key] = value.long()
            else:
                item[key] = value.float() / 255.0 if self.pixels else value.long()
        return item


def warmup_linear_decay(step: int, warmup_steps: int, total_steps: int) -> float:
    """Learning-rate factor: 0 -> 1 over warmup_steps, then linearly to 0 at total_steps."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


class LRAModule(L.LightningModule):
    """Cross-entropy training of an LRA classifier (single or dual input)."""

    def __init__(
        self, model: nn.Module, lr: float, weight_decay: float, warmup_steps: int, total_steps: int
    ) -> None:
        super().__init__()
        self.model = model
        self.lr, self.weight_decay = lr, weight_decay
        self.warmup_steps, self.total_steps = warmup_steps, total_steps

    def forward(self, batch: dict[str, Tensor]) -> Tensor:
        if "inputs_b" in batch:
            return self.model(batch["inputs"], batch["inputs_b"])
        return self.model(batch["inputs"])

    def _step(self, batch: dict[str, Tensor], stage: str) -> Tensor:
        logits = self(batch)
        loss = nn.functional.cross_entropy(logits, batch["labels"])
        accuracy = (logits.argmax(dim=-1) == batch["labels"]).float().mean()
        on_step = stage == "train"
        batch_size = len(batch["labels"])
        self.log(
            f"{stage}_loss", loss, prog_bar=True, on_step=on_step, on_epoch=not on_step, batch_size=batch_size
        )
        self.log(
            f"{stage}_acc",
            accuracy,
            prog_bar=True,
            on_step=on_step,
            on_epoch=not on_step,
            batch_size=batch_size,
        )
        return loss

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        return self._step(batch, "train")

    def validation_step(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        self._step(batch, "val")

    def test_step(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        self._step(batch, "test")

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: warmup_linear_decay(step, self.warmup_steps, self.total_steps)
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}


def build_classifier(data: TaskData, mixer: str, **config) -> nn.Module:
    """The classifier the task needs (dual for Retrieval) with the data-given sizes filled in."""
    model_class = LRADualClassifier if data.spec.dual else LRAClassifier
    return model_class(mixer=mixer, **data.model_config(), **config)


def train_lra(
    task: str,
    mixer: str,
    *,
    steps: int = 1000,
    batch_size: int | None = None,
    seq_len: int | None = None,
    data_dir: str | Path | None = None,
    n_train: int | None = None,
    n_eval: int | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    lr: float | None = None,
    weight_decay: float | None = None,
    warmup_steps: int | None = None,
    eval_every: int | None = None,
    cache_dir: str | Path | None = None,
    accelerator: str = "auto",
    progress: bool = True,
    **model_config,
) -> dict:
    """Train `mixer`'s classifier on LRA `task` for `steps` optimizer steps; returns (and saves) the metrics.

    Unset lr / weight_decay / batch_size take the paper's per-task values; warmup defaults to 10% of steps.
    """
    L.seed_everything(seed, workers=True, verbose=False)
    data = load_task(
        task,
        data_dir=data_dir,
        seq_len=seq_len,
        n_train=n_train,
        n_eval=n_eval,
        seed=seed,
        cache_dir=cache_dir,
    )
    spec = data.spec
    batch_size = batch_size or spec.batch_size
    model = build_classifier(data, mixer, **model_config)
    module = LRAModule(
        model,
        lr=spec.lr if lr is None else lr,
        weight_decay=spec.weight_decay if weight_decay is None else weight_decay,
        warmup_steps=max(1, steps // 10) if warmup_steps is None else warmup_steps,
        total_steps=steps,
    )
    loaders = {
        split: DataLoader(
            ArraySplit(arrays, spec.pixels), batch_size=batch_size, shuffle=split == "train", drop_last=False
        )
        for split, arrays in data.splits.items()
    }
    out_dir = Path(out) if out is not None else Path("runs") / "lra" / f"{task}-{mixer}-seed{seed}"
    out_dir.mkdir(parents=True, exist_ok=True)
    trainer = L.Trainer(
        max_steps=steps,
        accelerator=accelerator,
        devices=1,
        logger=CSVLogger(out_dir, name="logs"),
        enable_checkpointing=False,
        enable_progress_bar=progress,
        enable_model_summary=False,
        check_val_every_n_epoch=None,
        val_check_interval=min(steps, eval_every or max(1, steps // 4)),
        num_sanity_val_steps=0,
        log_every_n_steps=max(1, min(50, steps // 10)),
    )
    started = time.perf_counter()
    trainer.fit(module, loaders["train"], loaders["val"])
    seconds = time.perf_counter() - started
    val_metrics = trainer.validate(module, loaders["val"], verbose=False)[0]
    test_metrics = trainer.test(module, loaders["test"], verbose=False)[0]
    metrics = {
        "task": task,
        "model": mixer,
        "steps": steps,
        "batch_size": batch_size,
        "seq_len": data.seq_len,
        "n_train": len(data.splits["train"]["labels"]),
        "n_test": len(data.splits["test"]["labels"]),
        "val_acc": float(val_metrics["val_acc"]),
        "test_acc": float(test_metrics["test_acc"]),
        "majority_class_rate": data.majority_rate("test"),
        "train_seconds": seconds,
        "data": data.source,
        "out": str(out_dir),
    }
    model_cpu = {name: tensor.detach().cpu().contiguous() for name, tensor in model.state_dict().items()}
    save_file(model_cpu, str(out_dir / "weights.safetensors"))
    (out_dir / "config.json").write_text(
        json.dumps(
            {"task": task, "model_class": type(model).__name__, "model": model.config.to_dict()}, indent=2
        )
    )
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
    return metrics

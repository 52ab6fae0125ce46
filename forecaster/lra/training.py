"""Training an LRA classifier with Lightning: AdamW, linear warmup then linear decay, accuracy logged.

On one CUDA device the training step (forward, loss, backward) is captured as a CUDA graph and replayed, as
forecasters train (`forecaster.training.graphs`): a classifier step is a few hundred short kernels, and
launching them from Python, not the GPU's work, sets its time. Fused AdamW and the schedule step after each
replay through Lightning's manual optimization.

`train_lra` is what `forecaster lra train` and each cell of `forecaster lra benchmark` run; settings a run
leaves unset come from its preset (`forecaster.lra.presets`). It saves the classifier as a bundle
(`forecaster.artifacts`, reloaded with `load_bundle(path, task="classify")`) and keeps Lightning's CSV log of
loss and accuracy in the bundle's work folder `.<name>.work/` beside it.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, Dataset

from forecaster.artifacts import check_out_dir, save_bundle, work_dir_for
from forecaster.devices import machine_name
from forecaster.lra.settings import LRASettings, apply_preset
from forecaster.lra.tasks import TaskData, load_task
from forecaster.models.lra import LRAClassifier, LRAConfig, LRADualClassifier
from forecaster.nn.attention.base import redraw_random_components
from forecaster.tensor_checks import check_model_size
from forecaster.training.graphs import GraphedStep, adamw, use_cuda_graphs
from forecaster.training.trainer import TrainingLog


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


def _inputs(batch: dict[str, Tensor]) -> tuple[Tensor, ...]:
    """The model's inputs of a batch (two for the dual-input task)."""
    return (batch["inputs"], batch["inputs_b"]) if "inputs_b" in batch else (batch["inputs"],)


class LRAModule(L.LightningModule):
    """Cross-entropy training of an LRA classifier (single or dual input); with `cuda_graphs` the step is
    replayed from a CUDA graph and the optimizer and schedule step by hand (manual optimization)."""

    def __init__(
        self, model: nn.Module, lr: float, weight_decay: float, warmup_steps: int, total_steps: int,
        cuda_graphs: bool = False,
    ) -> None:  # fmt: skip
        super().__init__()
        self.model = model
        self.lr, self.weight_decay = lr, weight_decay
        self.warmup_steps, self.total_steps = warmup_steps, total_steps
        self.automatic_optimization = not cuda_graphs
        self.graphed_step = None
        if cuda_graphs:
            self.graphed_step = GraphedStep(self.loss_and_accuracy, list(model.parameters()), None)

    def forward(self, batch: dict[str, Tensor]) -> Tensor:
        return self.model(*_inputs(batch))

    def loss_and_accuracy(self, *batch: Tensor) -> tuple[Tensor, Tensor]:
        """Cross-entropy and accuracy of (inputs..., labels)."""
        *inputs, labels = batch
        logits = self.model(*inputs)
        accuracy = (logits.argmax(dim=-1) == labels).float().mean()
        return nn.functional.cross_entropy(logits, labels), accuracy

    def _step(self, batch: dict[str, Tensor], stage: str) -> Tensor:
        if self.graphed_step is not None and stage == "train":
            loss, accuracy = self.graphed_step(*_inputs(batch), batch["labels"])
            self.optimizers().step()
            self.lr_schedulers().step()
        else:
            loss, accuracy = self.loss_and_accuracy(*_inputs(batch), batch["labels"])
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

    def on_train_batch_start(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        """Mixers redraw their random components on their own `redraw_interval`, in place, outside any CUDA
        graph, which reads the same buffers."""
        redraw_random_components(self.model, self.global_step)

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        return self._step(batch, "train")

    def validation_step(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        self._step(batch, "val")

    def test_step(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        self._step(batch, "test")

    def on_fit_end(self) -> None:
        """The graph's memory (its static batch and gradients) is released with it."""
        if self.graphed_step is not None:
            self.graphed_step.release()

    def configure_optimizers(self):
        optimizer = adamw(self.model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: warmup_linear_decay(step, self.warmup_steps, self.total_steps)
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}


def build_classifier(data: TaskData, mixer: str, **fields: Any) -> nn.Module:
    """The classifier the task needs (dual for Retrieval) with the data-given sizes filled in."""
    model_class = LRADualClassifier if data.spec.dual else LRAClassifier
    return model_class(LRAConfig.from_dict({"mixer": mixer, **data.model_config(), **fields}))


def train_lra(settings: LRASettings, **model_fields: Any) -> dict[str, Any]:
    """Train the classifier of `settings.mixer` on its task; returns the metrics saved in the bundle.

    `model_fields` are LRAConfig fields (d_model, n_layers, mixer_options, ...); settings left None and
    model fields not given take the values of the preset (`forecaster.lra.settings.apply_preset`).
    """
    settings, model_fields = apply_preset(settings, model_fields)
    out_dir = settings.out_dir
    check_out_dir(out_dir, settings.overwrite)
    graphed = use_cuda_graphs(settings.cuda_graphs, settings.accelerator, 1, "auto")
    L.seed_everything(settings.seed, workers=True, verbose=False)
    data = load_task(
        settings.task,
        data_dir=settings.data_dir,
        seq_len=settings.seq_len,
        n_train=settings.n_train,
        n_eval=settings.n_eval,
        seed=settings.seed,
        cache_dir=settings.cache_dir,
        tokenization=settings.listops_tokens,
    )
    spec, batch_size, lr, weight_decay = data.spec, settings.batch_size, settings.lr, settings.weight_decay
    n_train = len(data.splits["train"]["labels"])
    steps = settings.steps or math.ceil(settings.epochs * n_train / batch_size)
    warmup_steps = min(steps, max(1, steps // 10) if settings.warmup_steps is None else settings.warmup_steps)
    with torch.device("meta"):  # sized first: what loading would refuse is not trained (nor OOM-killed)
        check_model_size(build_classifier(data, settings.mixer, **model_fields), f"model {settings.mixer!r}")
    model = build_classifier(data, settings.mixer, **model_fields)
    module = LRAModule(model, lr=lr, weight_decay=weight_decay, warmup_steps=warmup_steps, total_steps=steps,
                       cuda_graphs=graphed)  # fmt: skip
    loaders = {
        split: DataLoader(
            ArraySplit(arrays, spec.pixels), batch_size=batch_size, shuffle=split == "train", drop_last=False
        )
        for split, arrays in data.splits.items()
    }
    trainer = L.Trainer(
        max_steps=steps,
        accelerator=settings.accelerator,
        devices=1,
        logger=TrainingLog(work_dir_for(out_dir), name="logs"),
        enable_checkpointing=False,
        enable_progress_bar=settings.progress,
        enable_model_summary=False,
        check_val_every_n_epoch=None,
        val_check_interval=min(steps, settings.eval_every or max(1, steps // 4)),
        num_sanity_val_steps=0,
        log_every_n_steps=max(1, min(50, steps // 10)),
    )
    started = time.perf_counter()
    trainer.fit(module, loaders["train"], loaders["val"])
    seconds = time.perf_counter() - started
    val_metrics = trainer.validate(module, loaders["val"], verbose=False)[0]
    test_metrics = trainer.test(module, loaders["test"], verbose=False)[0]
    metrics = {
        "task": settings.task,
        "model": settings.mixer,
        "preset": settings.preset,
        "steps": steps,
        **({"epochs": settings.epochs} if settings.epochs else {}),
        "batch_size": batch_size,
        "lr": lr,
        "seq_len": data.seq_len,
        **({"listops_tokens": settings.listops_tokens} if settings.task == "listops" else {}),
        "n_train": n_train,
        "n_test": len(data.splits["test"]["labels"]),
        "val_acc": float(val_metrics["val_acc"]),
        "test_acc": float(test_metrics["test_acc"]),
        "majority_class_rate": data.majority_rate("test"),
        "train_seconds": seconds,
        "cuda_graphs": graphed and module.graphed_step.capture_error is None,
        **({"cuda_graphs_error": error} if graphed and (error := module.graphed_step.capture_error) else {}),
        "device": machine_name(trainer.strategy.root_device),
        "data": data.source,
        "out": str(out_dir),
    }
    resolved = {key: str(value) if isinstance(value, Path) else value  # the preset's values filled in
                for key, value in asdict(settings).items()}  # fmt: skip
    training = {**resolved, "steps": steps, "warmup_steps": warmup_steps, "seq_len": data.seq_len,
                "out": str(out_dir)}
    model_name = "lra_dual_classifier" if data.spec.dual else "lra_classifier"
    save_bundle(out_dir, model=model.cpu(), model_name=model_name, metrics=metrics, training=training,
                overwrite=settings.overwrite)
    return metrics

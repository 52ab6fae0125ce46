"""The settings of one LRA run (`forecaster lra train`), filled in from its task's preset (presets.py)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from forecaster.checks import MAX_SEED, check_fields, setting
from forecaster.errors import ConfigError
from forecaster.lra.listops import TOKENIZATIONS
from forecaster.lra.presets import BUDGET, PRESETS, get_preset, mixer_options
from forecaster.lra.tasks import TASKS
from forecaster.nn.attention import MIXERS


@dataclass
class LRASettings:
    """One LRA run; settings left None take the values of `preset` for the task (forecaster.lra.presets)."""

    task: str = setting(help="LRA task", choices=tuple(TASKS))
    mixer: str = setting("skeleton", "registered sequence mixer", flag="--model")
    preset: str = setting("default", "task settings: default (a budget that learns) or paper (paper 001's "
                          "settings and budget); flags given win", choices=tuple(PRESETS))
    steps: int | None = setting(None, "optimizer steps (default: the preset's)", minimum=1)
    epochs: int | None = setting(None, "passes over the training samples, instead of --steps (default: the "
                                 "preset's)", minimum=1)
    batch_size: int | None = setting(None, "samples per step (default: the preset's)", minimum=1)
    seq_len: int | None = setting(None, "sequence length (default: the preset's, else the task's: ListOps "
                                  "2048)", minimum=1)
    data_dir: Path | None = setting(None, "folder of the task's files (default: generate ListOps/Pathfinder)",
                                    parse=Path)
    n_train: int | None = setting(None, "training samples (default: the preset's, else all, or generated: "
                                  "ListOps 96000, Pathfinder 5000)", minimum=1)
    n_eval: int | None = setting(None, "validation and test samples each (default: the preset's, else all, "
                                 "or generated: ListOps 2000, Pathfinder 1000)", minimum=1)
    listops_tokens: str = setting("lra", "what a ListOps model reads: lra (LRA's input pipeline: operators "
                                  "and digits) or brackets (with ']')", choices=TOKENIZATIONS)
    seed: int = setting(0, "seed for data generation, weights and shuffling", minimum=0, maximum=MAX_SEED)
    out: Path | None = setting(None, "bundle folder (default runs/lra/<task>-<model>-seed<seed>)", parse=Path)
    cache_dir: Path | None = setting(None, "cache of generated tasks (default $FORECASTER_CACHE_DIR/lra)",
                                     parse=Path)
    lr: float | None = setting(None, "AdamW peak learning rate (default: the preset's)", above=0, maximum=10)
    weight_decay: float | None = setting(None, "AdamW weight decay (default: the preset's)", minimum=0,
                                         maximum=10)
    warmup_steps: int | None = setting(None, "linear warmup steps (default: the preset's, else 10% of the "
                                       "steps)", minimum=0)
    eval_every: int | None = setting(None, "validate every N steps (default --steps / 4)", minimum=1)
    accelerator: str = setting("auto", "Lightning accelerator (auto, cpu, gpu)")
    cuda_graphs: bool | None = setting(None, "capture the training step as a CUDA graph and replay it "
                                       "(default: on when training on one CUDA device)")
    overwrite: bool = setting(False, "replace an existing bundle at --out")
    progress: bool = setting(True, "show a progress bar")

    def __post_init__(self) -> None:
        check_fields(self, "LRA setting")
        MIXERS.get(self.mixer)
        if self.steps is not None and self.epochs is not None:
            raise ConfigError("give --steps or --epochs, not both")

    @property
    def out_dir(self) -> Path:
        return Path(self.out or Path("runs") / "lra" / f"{self.task}-{self.mixer}-seed{self.seed}")


def apply_preset(settings: LRASettings, model_fields: dict[str, Any]) -> tuple[LRASettings, dict[str, Any]]:
    """(settings, model fields) of one run with its preset filled in: LRASettings fields left None and model
    fields not given take the preset's values; a given steps or epochs replaces the preset's budget."""
    preset = get_preset(settings.preset, settings.task)
    budget_given = any(getattr(settings, name) is not None for name in BUDGET)
    fill = {name: value for name, value in preset.training.items()
            if getattr(settings, name) is None and not (budget_given and name in BUDGET)}  # fmt: skip
    options = mixer_options(preset, settings.mixer, model_fields.get("mixer_options", {}))
    return replace(settings, **fill), {**preset.model, **model_fields, "mixer_options": options}

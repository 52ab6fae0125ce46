"""Named LRA training settings per task, each value with its source; `forecaster lra train --preset NAME`.

`paper`: what paper 001 states for S3Attention (r, s1, s2 = 8), the row of its Table 1, filled in from the
LRA code the paper says it was built on ("the official codes of [23]", Transformer-LS) where the paper is
silent. Sources, cited by key below:

- T8: paper 001 Table 8 (Appendix; the same values as Tables 10 and 11): epochs, learning rate, weight
  decay, batch size, r, s1, s2 = 8, 8, 8 (the skeleton mixer's defaults fold, left_rank, right_rank), and
  dropout in embedding / attention / smoother.
- LS: NVIDIA/transformer-ls, lra/run_tasks.py defaults and run_listops.sh / run_text.sh: D 64
  (embedding_dim = transformer_dim), MLP 128 (transformer_hidden_dim; also the head's hidden width),
  2 heads, 2 layers, AdamW, warmup then linear decay (OneCycleLR, anneal "linear"), max_seq_len 2048 for
  ListOps and 4096 for Text and Retrieval, ListOps warmup 1000.
- REF: the reference S3Attention LRA code as REFERENCE.md section 5 reads it: its own block (the skeleton
  mixer's `block=reference`) and the classifier averaged over all positions (pooling `mean-all`).
- NY: mlpen/Nystromformer LRA/code/lra_config.py, which the Transformer-LS LRA code adapts: the warmup
  steps of the other tasks (Text 8000, Retrieval 800, Image 175, Pathfinder 312) and the Pathfinder split
  (80/10/10 of the 200,000 images of a difficulty, LRA/datasets/pathfinder.py). ListOps keeps LRA's
  96,000 / 2,000 / 2,000 (`tasks.GENERATED_SIZES`); the other tasks read their files whole.
Epochs are passes over the training samples: ListOps 5 x 96,000 / 32 = 15,000 steps, Pathfinder
100 x 160,000 / 256 = 62,500 (NY: 62,400). T8's attention dropout goes to every mixer that declares a
`dropout` option (their own defaults are 0).

`default`: what `forecaster lra train` runs unless told otherwise, a budget that learns. ListOps, measured
(REFERENCE.md section 5, one H100, batch 32): lr 1e-4 with dropout 0.1 ends below the majority class
after 3,000 steps, while lr 1e-3 without dropout learns within 8,000 steps (skeleton 28.0%, softmax 35.3%
on 20,000 samples, over-fitting them); so lr 1e-3, no dropout, 8,000 steps on LRA's 96,000 samples,
with the classifier and mixers those runs had (mean pooling over the real tokens, the forecasting block).
On LRA's data that default reached 36.25% test accuracy (skeleton, seed 0, one H100, README).
Pathfinder, not yet measured: the paper's batch and weight decay with that learning rate, no dropout and
that classifier, 5,000 steps on 50,000 generated images. Text, Retrieval and Image: the paper's settings.

Values a run is given (command-line flags, `LRASettings` fields that are not None, model fields) win over
the preset's; a given --steps or --epochs replaces the preset's budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from forecaster.nn.attention import declared_options


@dataclass(frozen=True)
class TaskPreset:
    """One task's settings: `training` (LRASettings fields), `model` (LRAConfig fields), the dropout of
    mixers that take one (`attention_dropout`), and options of named mixers (`mixer_options`)."""

    training: dict[str, Any]
    model: dict[str, Any]
    attention_dropout: float = 0.0
    mixer_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    source: str = ""


# LS: the classifier of the Transformer-LS / Nystromformer LRA code.
_SIZES = {"d_model": 64, "n_heads": 2, "n_layers": 2, "mlp_dim": 128, "hidden_dim": 128}


def _paper(training: dict[str, Any], embedding: float, attention: float, smoother: float) -> TaskPreset:
    """T8's dropouts (embedding -> the classifier's dropout; attention -> each mixer's; smoother -> the
    skeleton mixer's smoother) over the LS classifier with REF's pooling and block."""
    skeleton = {"block": "reference", "dropout": attention, "smoother_dropout": smoother}
    return TaskPreset(training, {**_SIZES, "pooling": "mean-all", "dropout": embedding}, attention,
                      {"skeleton": skeleton}, "paper 001 Table 8 on the LRA code it names")


PAPER: dict[str, TaskPreset] = {
    # T8: 5 epochs, lr 1e-4, no weight decay, batch 32, no dropout; LS: length 2048, warmup 1000.
    "listops": _paper({"epochs": 5, "lr": 1e-4, "weight_decay": 0.0, "batch_size": 32, "warmup_steps": 1000,
                       "seq_len": 2048}, 0.0, 0.0, 0.0),
    # T8: 30 epochs, lr 1e-4, weight decay 1e-2, batch 32, dropout 0.5 / 0.1 / 0.5; LS 4096; NY warmup 8000.
    "text": _paper({"epochs": 30, "lr": 1e-4, "weight_decay": 1e-2, "batch_size": 32, "warmup_steps": 8000,
                    "seq_len": 4096}, 0.5, 0.1, 0.5),
    # T8: 15 epochs, lr 1e-4, weight decay 1e-2, batch 32, dropout 0.1 / 0.1 / 0.1; LS 4096; NY warmup 800.
    "retrieval": _paper({"epochs": 15, "lr": 1e-4, "weight_decay": 1e-2, "batch_size": 32,
                         "warmup_steps": 800, "seq_len": 4096}, 0.1, 0.1, 0.1),
    # T8: 60 epochs, lr 1e-3, weight decay 1e-2, batch 256, dropout 0.1 / 0.1 / 0.5; NY warmup 175.
    "image": _paper({"epochs": 60, "lr": 1e-3, "weight_decay": 1e-2, "batch_size": 256, "warmup_steps": 175},
                    0.1, 0.1, 0.5),
    # T8: 100 epochs, lr 1e-4, weight decay 1e-2, batch 256, dropout 0 / 0 / 0.5; NY: warmup 312, and
    # 160,000 / 20,000 / 20,000 images (80/10/10 of LRA's 200,000).
    "pathfinder": _paper({"epochs": 100, "lr": 1e-4, "weight_decay": 1e-2, "batch_size": 256,
                          "warmup_steps": 312, "n_train": 160_000, "n_eval": 20_000}, 0.0, 0.0, 0.5),
}

_MEASURED = "lr 1e-3 without dropout, which learns where lr 1e-4 with dropout 0.1 does not (REFERENCE.md 5)"
DEFAULT: dict[str, TaskPreset] = {
    **PAPER,
    "listops": TaskPreset(
        {"steps": 8000, "lr": 1e-3, "weight_decay": 0.0, "batch_size": 32},
        {**_SIZES, "pooling": "mean", "dropout": 0.0},
        source=f"{_MEASURED}; 8,000 steps of batch 32 on LRA's 96,000 samples",
    ),
    "pathfinder": TaskPreset(
        {"steps": 5000, "lr": 1e-3, "weight_decay": 1e-2, "batch_size": 256, "n_train": 50_000,
         "n_eval": 2_000}, {**_SIZES, "pooling": "mean", "dropout": 0.0},
        source=f"the paper's batch and weight decay with {_MEASURED} on ListOps; 5,000 steps of batch 256 "
        "on 50,000 generated images (not yet measured)",
    ),
}

PRESETS: dict[str, dict[str, TaskPreset]] = {"default": DEFAULT, "paper": PAPER}
BUDGET = ("steps", "epochs")  # two ways of giving the budget: a run that gives either replaces both


def get_preset(name: str, task: str) -> TaskPreset:
    """The settings of preset `name` (one of PRESETS, as LRASettings checks) for `task`."""
    return PRESETS[name][task]


def mixer_options(preset: TaskPreset, mixer: str, given: dict[str, Any]) -> dict[str, Any]:
    """The options of `mixer` under `preset` (the attention dropout where the mixer's builder declares a
    `dropout` option, then the preset's options for it), with the `given` options winning."""
    own = {"dropout": preset.attention_dropout} if "dropout" in declared_options(mixer) else {}
    return {**own, **preset.mixer_options.get(mixer, {}), **given}

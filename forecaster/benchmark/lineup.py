"""What each model name of the benchmark means, and how its two made rows are made.

- `naive`: the last input step repeated (scored directly); `s3attention`: the reference settings, as the
  record has always meant (`forecaster train --preset reference`).
- `MODEL:PRESET` (e.g. `s3attention:anchored`, `nlinear:reference`): `forecaster train --model MODEL
  --preset PRESET`, on the cell's dataset, horizon and seed.
- a neuralforecast peer (`patchtst`, `itransformer`, `dlinear`, ...): trained by neuralforecast.
- `s3attention-auto` and `auto`: what `forecaster train --preset auto` (S3Attention's variants) and
  `forecaster train --model auto` (the baselines and those variants) keep at each seed, made from their
  candidates' bundles of the same seed (`forecaster.training.workflows.keep_best`: one candidate, or their
  ensemble, each kept only on clear evidence on validation), so the candidates are trained once for their
  own rows and both of these.
- `s3attention-tuned`: `forecaster tune --model s3attention --trials 16` at seed 0 on the cell's dataset and
  horizon (Optuna and ASHA over `forecaster.tuning.space`, scored on validation), the settings it keeps
  (`forecaster.tuning.search.keep_tuned`) then trained at every seed; the search (trials.csv, kept.json) is
  kept under tuning/DATASET-hH/.

The test split is never read for a choice.
"""

from __future__ import annotations

from typing import Any

from forecaster.presets import AUTO as AUTO_PRESET
from forecaster.presets import DEFAULT, auto_candidates, preset

NAIVE_MODEL, OWN_MODEL = "naive", "s3attention"
S3_AUTO, AUTO, TUNED = "s3attention-auto", "auto", "s3attention-tuned"
TUNED_TRIALS = 16
# Rows made from their candidates' bundles (runners): the `forecaster train` model and preset that keep them.
MADE = {S3_AUTO: (OWN_MODEL, AUTO_PRESET), AUTO: (AUTO, DEFAULT)}


def product_spec(name: str) -> tuple[str, str] | None:
    """(model, preset) that `forecaster train` runs for a benchmark name, or None for naive and peers."""
    if name == OWN_MODEL:
        return OWN_MODEL, "reference"
    if ":" in name:
        model, preset = name.split(":", 1)
        return model, preset
    return None


def candidates(name: str, source: Any) -> list[str]:
    """The models s3attention-auto or auto chooses among on a grid `Source`, simplest first: those of
    `forecaster train --model auto` (`planning.auto_models`; the user-file baselines on a `--csv` source),
    each as a bundle of its `reference` preset (naive:reference is the naive row's forecast, saved for auto to
    load), a seasonal one only where a season fits the input, and a preset that trains like an earlier one
    there left out."""
    from forecaster.training.planning import auto_models, season_fits

    s3, seen = [], []
    for name_ in auto_candidates(OWN_MODEL):
        resolved = preset(OWN_MODEL, name_, source.name)
        if resolved not in seen:
            seen.append(resolved)
            s3.append(f"{OWN_MODEL}:{name_}")
    if name == S3_AUTO:
        return s3
    dataset = None if source.csv is not None else source.name
    others = [model for model in auto_models(dataset) if model != OWN_MODEL]
    fitting = [model for model in others if season_fits(model, source.freq, source.input_size)]
    return [f"{model}:reference" for model in fitting] + s3

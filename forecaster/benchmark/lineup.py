"""What each model name of the benchmark means, and how its two chosen rows are chosen.

- `naive`: the last input step repeated (scored directly); `s3attention`: the reference settings, as the
  record has always meant (`forecaster train --preset reference`).
- `MODEL:PRESET` (e.g. `s3attention:anchored`, `nlinear:reference`): `forecaster train --model MODEL
  --preset PRESET`, on the cell's dataset, horizon and seed.
- a neuralforecast peer (`patchtst`, `itransformer`, `dlinear`, ...): trained by neuralforecast.
- `s3attention-auto`: not trained itself. For each dataset and horizon, the candidate `forecaster train
  --preset auto` keeps at seed 0 is chosen: the simplest within two standard errors of the lowest validation
  MSE. The row reports that candidate's runs over every seed.
- `auto`: what `forecaster train --model auto` keeps at each seed, made from its candidates' bundles of the
  same seed (`forecaster.training.workflows.keep_best`: one candidate, or their ensemble), so the
  candidates are trained once for both their own rows and this one.
- `s3attention-tuned`: `forecaster tune --model s3attention --trials 16` at seed 0 on the cell's dataset and
  horizon (Optuna and ASHA over `forecaster.tuning.space`, scored on validation), the settings it keeps
  (`forecaster.tuning.search.keep_tuned`) then trained at every seed; the search (trials.csv, kept.json) is
  kept under tuning/DATASET-hH/.

The test split is never read for a choice.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from forecaster.presets import auto_candidates, preset

NAIVE_MODEL, OWN_MODEL = "naive", "s3attention"
S3_AUTO, AUTO, TUNED = "s3attention-auto", "auto", "s3attention-tuned"
TUNED_TRIALS = 16
DERIVED = (S3_AUTO,)  # rows taken from a candidate's rows; auto's rows are made (runners)
# The baselines `--model auto` adds to S3Attention's variants (forecaster.training.fit.AUTO_MODELS), as
# `forecaster train` bundles (naive:reference is the naive row's forecast, saved for auto to load).
_AUTO_BASELINES = ("naive:reference", "seasonal_naive:reference", "nlinear:reference", "dlinear:reference")


def product_spec(name: str) -> tuple[str, str] | None:
    """(model, preset) that `forecaster train` runs for a benchmark name, or None for naive and peers."""
    if name == OWN_MODEL:
        return OWN_MODEL, "reference"
    if ":" in name:
        model, preset = name.split(":", 1)
        return model, preset
    return None


def candidates(name: str, source: Any) -> list[str]:
    """The models s3attention-auto or auto chooses among on a grid `Source`, simplest first; seasonal
    naive only where a season fits the input, and a preset that trains like an earlier one there left out."""
    from forecaster.data import season_length

    s3, seen = [], []
    for name_ in auto_candidates(OWN_MODEL):
        resolved = preset(OWN_MODEL, name_, source.name)
        if resolved not in seen:
            seen.append(resolved)
            s3.append(f"{OWN_MODEL}:{name_}")
    if name == S3_AUTO:
        return s3
    season = season_length(source.freq)
    fits = season is not None and season <= source.input_size
    return [model for model in _AUTO_BASELINES if fits or not model.startswith("seasonal_naive")] + s3


def choose(results: pd.DataFrame, dataset: str, horizon: int, names: list[str]) -> tuple[str | None, dict]:
    """The name `forecaster train` would keep (`simplest_consistent` on the seed-0 validation MSEs and
    block means, and on the earlier validation period where every candidate has one,
    `forecaster.training.scoring`), and every name's validation MSE; None while some candidate has no seed-0
    row with a validation MSE yet."""
    from forecaster.training.scoring import Score, simplest_consistent

    rows = results[(results["dataset"].astype(str) == dataset) & (results["horizon"] == horizon)
                   & (results["repeat"] == 0)]
    scores, latest, earlier = {}, [], []
    for name in names:
        found = rows[rows["model"].astype(str) == name]
        if found.empty or not math.isfinite(float(found["val_mse"].iloc[0])):
            return None, scores
        if not isinstance(found["val_blocks"].iloc[0], str) or not found["val_blocks"].iloc[0]:
            return None, scores
        scores[name] = float(found["val_mse"].iloc[0])
        latest.append(Score(scores[name], np.asarray(json.loads(found["val_blocks"].iloc[0]), dtype=float)))
        before = found["earlier_validation"].iloc[0]
        if isinstance(before, str) and before:
            earlier.append(Score(json.loads(before)["mse"], np.asarray(json.loads(before)["blocks"])))
    periods = [latest, earlier] if len(earlier) == len(latest) else [latest]
    return names[simplest_consistent(periods)], scores


def chosen_rows(results: pd.DataFrame, sources: dict[str, Any]) -> pd.DataFrame:
    """The rows of s3attention-auto: per dataset and horizon, the chosen candidate's rows under the
    chosen row's name, with the candidate in column `chosen` (none where a candidate's seed 0 is missing;
    `sources` are the grid's datasets by name)."""
    derived = []
    for (dataset, horizon), group in results.groupby(["dataset", "horizon"], sort=False):
        for name in DERIVED:
            if str(dataset) not in sources:
                continue
            names = candidates(name, sources[str(dataset)])
            chosen, _ = choose(group, str(dataset), int(horizon), names)
            if chosen is not None:
                rows = group[group["model"].astype(str) == chosen]
                derived.append(rows.assign(model=name, chosen=chosen))
    columns = [*results.columns, "chosen"]
    return pd.concat(derived, ignore_index=True) if derived else pd.DataFrame(columns=columns)

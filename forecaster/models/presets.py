"""Named config values, in one place: the reference code's per-dataset settings of each model.

A preset holds only what differs from the model's config defaults, which are the reference settings of
the small-channel datasets (S3Attention: D=32, 8 heads, ranks 8/8, fold 8, dropout 0.05, no FFN;
REFERENCE.md 1.8). Electricity is the one dataset the reference runs wider.
"""

from __future__ import annotations

from typing import Any

from forecaster.data.registry import get_spec
from forecaster.errors import DataError

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "s3attention": {"Electricity": {"d_model": 512}},
}


def preset(model: str, dataset: str | None) -> dict[str, Any]:
    """Config fields of `model`'s preset for a benchmark dataset (any spelling the data registry accepts).

    Empty for datasets without a preset and for files that are not registered benchmarks.
    """
    if dataset is None:
        return {}
    try:
        name = get_spec(dataset).name
    except DataError:
        return {}
    return dict(PRESETS.get(model.lower(), {}).get(name, {}))

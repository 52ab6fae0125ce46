"""`forecaster data describe`: what a dataset or CSV looks like under a split, without loading torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forecaster.checks import check_int
from forecaster.data.reader import load_dataset, read_csv
from forecaster.data.registry import DATASETS, get_spec, locate_dataset
from forecaster.data.scaling import Scaler
from forecaster.data.series import INDEPENDENT, TimeSeries, collected_notes
from forecaster.data.splits import (
    AUTO_SPLIT,
    default_input,
    default_split,
    series_lengths,
    split_borders,
    usable,
    window_counts,
)
from forecaster.errors import DataError

DEFAULT_HORIZON = 96


def load_source(name_or_path: str, *, data_dir: str | Path | None = None, **options: Any) -> TimeSeries:
    """An existing CSV path is read as a user file; otherwise the name must be a registered dataset.

    A registered name without reader options (`ReadOptions` fields) loads exactly as published (shape
    checked); with options (e.g. `targets=["OT"]`) its located file goes through `read_csv` like any other.
    """
    path = Path(name_or_path)
    if path.is_file():
        return read_csv(path, **options)
    try:
        spec = get_spec(name_or_path)
    except DataError:
        if path.exists():  # a folder, a device, a pipe: read_csv says which
            return read_csv(path, **options)
        raise DataError(
            f"{name_or_path}: no such file, and not a registered dataset ({', '.join(DATASETS)})"
        ) from None
    if any(options.values()):
        return read_csv(locate_dataset(spec.name, data_dir), **options)
    return load_dataset(spec.name, data_dir)


def describe(
    name_or_path: str,
    *,
    data_dir: str | Path | None = None,
    split: str | None = None,
    input_size: int | None = None,
    horizon: int | None = None,
    stride: int = 1,
    **options: Any,
) -> dict[str, Any]:
    """Rows, columns, frequency, date range, split borders and window counts as one JSON-ready dict
    (`options`: how a CSV is read, the `ReadOptions` fields).

    Input size and horizon default to the registry's values for benchmark files (first horizon),
    else to what `forecaster train` would use (horizon 96); the split to 7:1:2, or holdout on a short file.
    A file too short to split at the default horizon is described without a split ("split" None, "unsplit"
    saying why): describing it is how a user learns which horizon fits. The reading notes are returned
    under "warnings" instead of said.
    """
    with collected_notes() as notes:
        series = load_source(name_or_path, data_dir=data_dir, **options)
    spec = get_spec(series.dataset) if series.dataset else None
    defaulted = horizon is None and spec is None
    horizon = horizon or (spec.horizons[0] if spec else DEFAULT_HORIZON)
    check_int("stride", stride, minimum=1, error=DataError)
    borders, unsplit, windows = {}, None, {}
    independent = series.options.channels == INDEPENDENT and split in (None, AUTO_SPLIT)
    try:
        split = AUTO_SPLIT if independent else split or default_split(len(series), horizon)
        input_size = input_size or (
            spec.input_size if spec else default_input(series, horizon, split)
        )
        if independent:  # as `train` splits them: each series by its own rows, the too short left out
            windows = _series_windows(series, input_size, horizon, stride)
        else:
            borders = split_borders(
                len(series), input_size, split, series.freq, horizon=horizon, source=series.source
            )
            windows = window_counts(borders, input_size, horizon, stride)
    except DataError as error:
        if not defaulted:
            raise
        split, input_size = None, None
        reason = str(error).removeprefix(f"{series.source}: ")
        unsplit = f"{reason} (horizon {horizon} is the default: give --horizon)"
    index = series.index
    return {
        "source": series.source,
        "dataset": series.dataset,
        "rows": len(series),
        "columns": series.columns,
        "date_col": series.date_col,
        "date_from": series.options.date_from,
        "freq": series.freq,
        "start": str(index[0]),
        "end": str(index[-1]),
        "split": split,
        "input_size": input_size,
        "horizon": horizon,
        "stride": stride,
        "unsplit": unsplit,
        "borders": {name: [a, b] for name, (a, b) in borders.items()},
        "windows": windows,
        "series_split": independent and not unsplit,
        "warnings": notes,
    }


def _series_windows(series: TimeSeries, input_size: int, horizon: int, stride: int) -> dict[str, int]:
    """Windows of independent series, each split by its own rows (`resolve_split`), summed over the series
    that give every split one, as `train` keeps them (and, as it does, not over those constant through
    validation unless all are, `Scaler.steady`); where none does, the longest one's refusal."""
    lengths = series_lengths(series)
    kept = [j for j, n in enumerate(lengths) if usable(n, input_size, horizon, AUTO_SPLIT, series.freq)]
    kept = kept or [lengths.index(max(lengths))]
    splits = {j: split_borders(lengths[j], input_size, AUTO_SPLIT, series.freq, horizon=horizon,
                               source=series.source) for j in kept}  # fmt: skip
    rows = series.own_rows()
    steady = {j: Scaler.fit_split(series.values[rows[j], j, None], borders).steady[0]
              for j, borders in splits.items()}  # fmt: skip
    moving = [j for j in kept if not steady[j]] or kept
    counts = [window_counts(splits[j], input_size, horizon, stride) for j in moving]
    return {name: sum(count[name] for count in counts) for name in counts[0]}


def _date_parts(columns: list[str] | None) -> str | None:
    return f"{', '.join(columns)} (date parts)" if columns else None


def format_description(info: dict[str, Any]) -> str:
    """A short human-readable table of `describe` output."""
    columns = info["columns"]
    shown = ", ".join(columns[:8]) + (f", ... ({len(columns)} in total)" if len(columns) > 8 else "")
    lines = [
        f"source     {info['source']}" + (f" (benchmark {info['dataset']})" if info["dataset"] else ""),
        f"rows       {info['rows']}",
        f"columns    {len(columns)} target(s): {shown}",
        f"date col   {info['date_col'] or _date_parts(info.get('date_from')) or '- (integer steps)'}",
        f"frequency  {info['freq'] or 'unknown'}",
        f"range      {info['start']} -> {info['end']}",
    ]
    if info["unsplit"]:
        return "\n".join([*lines, f"split      none: {info['unsplit']}"])
    lines.append(f"split      {info['split']}  input_size {info['input_size']}  horizon {info['horizon']}  "
                 f"train stride {info['stride']}")  # fmt: skip
    if info["series_split"]:  # independent series: no borders of one table
        counts = ", ".join(f"{count} {name}" for name, count in info["windows"].items())
        return "\n".join([*lines, f"windows    {counts} (each series split by its own rows: 7:1:2, holdout)"])
    lines += ["", f"{'split':<6} {'rows':>18} {'windows':>9}"]
    for name, (a, b) in info["borders"].items():
        lines.append(f"{name:<6} {f'[{a}, {b})':>18} {info['windows'][name]:>9}")
    return "\n".join(lines)

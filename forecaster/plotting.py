"""The plot `forecaster predict --plot` writes: history, forecast and interval bands, one panel per column."""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from forecaster.atomic import write_atomically
from forecaster.data import DataQualityWarning, TimeSeries
from forecaster.errors import ConfigError

_GLYPH = re.compile(r"Glyph (\d+)")  # the code point matplotlib's warning of a missing glyph names


def plot_path(path: str | Path) -> Path:
    """Where a plot is written: `path` in a format matplotlib writes (by its suffix), `.png` added to a name
    without one (not to a device or a pipe: /dev/full.png was created); ConfigError for another suffix,
    before any work."""
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(path)
    formats = FigureCanvasBase.get_supported_filetypes()
    if not path.suffix:
        return path if path.exists() and not path.is_file() else path.with_name(f"{path.name}.png")
    if path.suffix[1:].lower() not in formats:
        raise ConfigError(f"plot {path}: '{path.suffix}' is not an image format; expected one of "
                          f"{', '.join(f'.{name}' for name in sorted(formats))}")
    return path


def plot_forecast(
    series: TimeSeries, forecast: pd.DataFrame, path: Path, history_rows: int, columns: Sequence[str]
) -> Path:
    """An image (`path` as `plot_path` gives it) with one panel per column: the last `history_rows` rows of
    history, then the forecast, with the bands of the interval columns the table holds (`<col>-lo-<level>` /
    `<col>-hi-<level>`)."""
    from matplotlib.figure import Figure

    history = series.frame.iloc[-history_rows:]
    figure = Figure(figsize=(10, 2.2 * len(columns)), layout="constrained")
    axes = figure.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    for axis, column in zip(axes, columns, strict=True):
        axis.plot(history.index, history[column], color="tab:blue", label="history")
        levels = sorted(
            (int(name.rsplit("-", 1)[1]) for name in forecast.columns if name.startswith(f"{column}-lo-")),
            reverse=True,
        )
        for shade, level in enumerate(levels):
            axis.fill_between(
                forecast.index,
                forecast[f"{column}-lo-{level}"],
                forecast[f"{column}-hi-{level}"],
                color="tab:orange",
                alpha=0.15 + 0.15 * shade,
                linewidth=0,
                label=f"{level}%",
            )
        axis.plot(forecast.index, forecast[column], color="tab:orange", label="forecast")
        # each series' own end: a panel's series that ended early is forecast from there (h75 F17)
        axis.axvline(history[column].last_valid_index(), color="grey", linewidth=0.8, linestyle="--")
        axis.set_ylabel(column)
    axes[0].legend(loc="best")
    steps = int(forecast[list(columns)].notna().sum().max())  # not the panel's dates, which series span apart
    axes[0].set_title(f"{Path(series.source).name}: {steps}-step forecast")
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = path.suffix[1:].lower() or "png"  # a device or a pipe has no suffix
    with warnings.catch_warnings(record=True) as caught:
        warnings.filterwarnings("always", "Glyph .* missing from", UserWarning)
        write_atomically(path, lambda staged: figure.savefig(staged, dpi=100, format=kind))
    missing = sorted({chr(int(found[1])) for note in caught if (found := _GLYPH.search(str(note.message)))})
    if missing:  # matplotlib's warning per character, with its source line (h75 F16), as one note
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        warnings.warn(f"{path}: note: the plot's font has no glyph for {len(missing)} character(s) of the "
                      f"labels ({shown}), drawn as boxes; a font that has them (Noto Sans CJK for Chinese, "
                      "Japanese, Korean) draws them", DataQualityWarning, stacklevel=2)  # fmt: skip
    return path

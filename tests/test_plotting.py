"""`forecaster predict --plot`'s image: the title gives the model's steps and each panel marks its own series'
end (a panel's series end apart); characters the font lacks are one note, not matplotlib's warning each."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from forecaster.data import DataQualityWarning, TimeSeries
from forecaster.plotting import plot_forecast


def test_a_ragged_panel_with_chinese_names_is_plotted_with_its_steps_and_one_note(tmp_path, monkeypatch):
    """h75 F16 and F17: 11 warnings (22 lines) of matplotlib for the Chinese names; a 4-step forecast of a
    panel whose second series ends 2 quarters early titled '6-step', its start drawn at the first's end."""
    quarters, name = pd.date_range("2015-01-01", periods=24, freq="QS"), "第一产业"
    frame = pd.DataFrame({name: np.arange(24.0), "GDP": np.r_[np.arange(22.0), np.nan, np.nan]}, quarters)
    series = TimeSeries(frame=frame, freq="QS-JAN", source="nbs.csv")
    ahead = pd.date_range(quarters[-2], periods=6, freq="QS")
    gap = [np.nan, np.nan]
    forecast = pd.DataFrame({name: [*gap, 24.0, 24, 24, 24], "GDP": [21.0, 21, 21, 21, *gap]}, ahead)
    drawn: list[Figure] = []
    save = Figure.savefig

    def kept(figure: Figure, *args, **options) -> None:
        drawn.append(figure)
        save(figure, *args, **options)

    monkeypatch.setattr(Figure, "savefig", kept)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plot_forecast(series, forecast, tmp_path / "plot.png", 24, [name, "GDP"])
    said = [str(warning.message) for warning in caught]
    assert len(said) == 1 and caught[0].category is DataQualityWarning
    glyphs = ", ".join(sorted(name))
    expected = f"the plot's font has no glyph for 4 character(s) of the labels ({glyphs}), drawn as boxes"
    assert said[0].startswith(f"{tmp_path / 'plot.png'}: note: {expected}")
    first, second = drawn[0].axes
    assert first.get_title() == "nbs.csv: 4-step forecast"
    ends = [pd.Timestamp(axis.lines[-1].get_xdata()[0]) for axis in (first, second)]
    assert ends == [quarters[-1], quarters[-3]] and (tmp_path / "plot.png").stat().st_size > 0

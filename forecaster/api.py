"""The Python face: `Forecaster(...).fit(df)`, `.predict()`, `.cross_validation(df)`, `.save()`, `.load()`.

A DataFrame is read as the CLI reads a CSV (`forecaster.data.read_frame`): wide (a time column or index and
one column per series) or long (`unique_id, ds, y` rows, neuralforecast's convention), its series the channels
of one multivariate model or, with `channels="independent"`, series of their own spans forecast by one shared
model; covariates as the CLI takes them. Training is `forecaster train`'s workflow and prediction is
`forecaster predict`'s path, so the CLI, the service and this class give the same numbers.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forecaster.artifacts import Bundle, load_bundle, resave_bundle
from forecaster.checks import check_int, check_levels, field_names, is_int, user_path
from forecaster.data import DataQualityWarning, ReadOptions, TimeSeries, read_frame
from forecaster.data.frames import as_frame, as_published, in_given_types, period_frequency, time_types
from forecaster.data.keys import key_columns
from forecaster.data.labels import write_labels
from forecaster.data.longforecast import melt_forecast
from forecaster.data.missing import rows_of_a_frame, some
from forecaster.data.panels import DEFAULT_ID_COL, DEFAULT_TARGET_COL, DEFAULT_TIME_COL
from forecaster.data.splits import series_lengths
from forecaster.data.timeindex import alias_meaning, in_zone, is_frequency, names_a_frequency, renamed
from forecaster.errors import BundleError, ConfigError, DataError
from forecaster.history import forecast_series, read_future, read_rows
from forecaster.prediction import dated_as_history, forecast, forecast_name, given_names, shaped
from forecaster.training.planning import InputTooShort, check_model_options
from forecaster.training.settings import RECIPE, TrainerOptions, TrainSettings, from_recipe


def settings_from(model: str, horizon: int, input_size: int | None, options: dict[str, Any]) -> TrainSettings:
    """Keyword options sorted into training settings, Lightning options and model config fields (the
    model's own check names any it does not take)."""
    reading = sorted(set(options) & field_names(ReadOptions))
    if reading:
        raise ConfigError(f"{reading[0]} says how to read the data: give it to fit(df, {reading[0]}=...)")
    trainer = {key: options.pop(key) for key in list(options) if key in field_names(TrainerOptions)}
    trainer.setdefault("progress_bar", False)
    named = field_names(TrainSettings) - {"trainer"}
    fields = {key: options.pop(key) for key in list(options) if key in named}
    return TrainSettings(
        horizon=horizon, input_size=input_size, model_name=model, **fields, model_options=options,
        trainer=TrainerOptions(**trainer),
    )  # fmt: skip


def _as_given(times: pd.Index, given: pd.Index | None, freq: str | None) -> pd.Index:
    """Forecast times as the frame's index gave its own: periods in, periods out; a zone read back (an
    offset in the bundle)."""
    if isinstance(given, pd.PeriodIndex) and isinstance(times, pd.DatetimeIndex):
        return times.to_period(given.freq).rename(given.name)
    if getattr(given, "tz", None) is not None and isinstance(times, pd.DatetimeIndex):
        return in_zone(times, given.tz, freq)
    return times


def _index_of(df: pd.DataFrame | pd.Series | TimeSeries) -> pd.Index:
    """The index a frame's forecast is answered in, as the reader took it (`as_frame`): pyarrow timestamps
    in a zone (`dtype_backend="pyarrow"`) were read in their zone and answered without it."""
    return as_frame(df).index if isinstance(df, pd.DataFrame | pd.Series) else df.index


def _cut(series: TimeSeries, stops: dict[str, int]) -> TimeSeries:
    """`series` up to each series' own stop (independent series end apart): its rows up to the last stop,
    the values of a series that stops before blank after it."""
    last = max(stops.values())
    frame = series.frame.iloc[:last]
    if min(stops.values()) < last:  # copied only where a series stops before the others
        frame = frame.copy()
        for column, stop in stops.items():
            frame.iloc[stop:, frame.columns.get_loc(column)] = np.nan
    return dataclasses.replace(series, frame=frame)


def _trained_on(series: TimeSeries, bundle: Bundle) -> TimeSeries:
    """`series` without the independent series too short to train (a note named them), which the model
    does not forecast: a backtest's forecast of them raised ValueError (h82 F3)."""
    return series.of_series(forecast_series(bundle))


# The training record's field of `Forecaster.save`'s default interval levels.
DEFAULT_LEVEL = "default_level"


def _column_names(option: str, name: Any) -> str:
    """A column's name, or several in a list or tuple as the comma-joined text `--id-col` takes (pandas'
    groupby and darts take lists: `id_col=["country", "indicator"]` raised Python's TypeError, h72)."""
    if isinstance(name, list | tuple) and name and all(isinstance(part, str) for part in name):
        return ",".join(name)
    if not isinstance(name, str):
        raise ConfigError(f"{option} names a column, or several in a list such as ['country', 'indicator'], "
                          f"got {name!r}")  # fmt: skip
    return name


def _before_windows(
    series: TimeSeries, span: int, windows: str, horizon: int, step_size: int
) -> tuple[TimeSeries, dict[str, int]]:
    """A backtest's series without those that hold no row before its windows (the `span` rows up to each
    one's end), named in a note, and each kept one's end (its windows end at its own last value): a fit was
    given a series of no values (IndexError, h137), one that ended early refused the backtest (h141). None
    holding one: refused, saying how many windows the longest fits."""
    own = dict(zip(series.columns, series.own_rows(), strict=True))  # read once: lengths and ends
    lengths = dict(zip(own, series_lengths(series, list(own.values())), strict=True))
    within = [column for column, length in lengths.items() if length <= span]
    if len(within) == len(lengths):
        most_rows = max(lengths.values())
        most = (most_rows - 1 - horizon) // step_size + 1
        fewer = f"at most {most} window(s) {step_size} apart" if most > 0 else "more rows than a horizon"
        raise DataError(f"{series.source}: {most_rows} rows cannot hold {windows}; expected {fewer}")
    if within:
        warnings.warn(f"{series.source}: note: series {some(list(map(repr, within)))} hold no row before the "
                      f"{windows}: not backtested", DataQualityWarning, stacklevel=3)  # fmt: skip
        series = series.of_series([column for column in series.columns if column not in within])
    return series, {column: own[column].stop for column in series.columns}


def _refit_every(refit: Any, n_windows: int) -> int:
    """Windows per fit of a backtest: all of them (refit=False), one (True), or every `refit` windows."""
    if isinstance(refit, bool | np.bool_):
        return 1 if refit else n_windows
    if not is_int(refit) or refit < 1:
        raise ConfigError(f"refit must be True, False or a number of windows >= 1, got {refit!r:.40}")
    return int(refit)


def _levels(level: Any) -> list[int]:
    """Interval levels given to the API: none (None, []), one level, or several (`check_levels`)."""
    if level is None or (isinstance(level, (list, tuple)) and not level):
        return []
    return check_levels(level)


class Forecaster:
    """A forecaster of `horizon` steps from `input_size` past steps.

    `model` is any forecasting model (s3attention, tnn, naive, seasonal_naive, drift, mean, seasonal_drift,
    seasonal_mean, dlinear, nlinear, patchtst, itransformer) or "auto"; other keywords are training settings
    (preset, lr, seed, max_epochs, ...) or the model's config fields. `freq`, when given, is checked against
    the data's frequency; `level` gives the default prediction-interval levels of `predict`.
    """

    def __init__(
        self,
        model: str = "s3attention",
        horizon: int | None = None,
        input_size: int | None = None,
        freq: str | None = None,
        level: Sequence[int] | None = None,
        **options: Any,
    ) -> None:
        if horizon is None:
            raise ConfigError("Forecaster needs horizon=H, the number of steps to forecast")
        self.settings = settings_from(model, horizon, input_size, dict(options))
        check_model_options(self.settings)  # a typo (max_epoch=1) was refused at fit, not here (h35)
        if freq is not None and not names_a_frequency(freq):  # 'bogus' was said to differ from the data's
            raise ConfigError(f"freq: unknown frequency {str(freq)[:40]!r}{renamed(freq)}; expected a pandas "
                              "offset or period alias such as h, D, W, MS or Q")  # fmt: skip
        self.freq = freq
        self.loaded_from: str | None = None  # the bundle `load` read, whose freq `freq` then is
        self.level = _levels(level)
        self.bundle: Bundle | None = None
        self.metrics: dict[str, Any] = {}
        self.history: TimeSeries | None = None
        self.history_index: pd.Index | None = None  # the fitted frame's: periods or a zone answered in
        self.labels: dict[str, Any] = {}  # the fitted frame's series names that are not text, by their text
        self.history_times: dict[str, Any] = {}  # the fitted frame's types of times, answered in them

    @classmethod
    def from_settings(cls, settings: TrainSettings, *, level: Sequence[int] | None = None) -> Forecaster:
        """A Forecaster for settings built elsewhere (the command line's flags)."""
        forecaster = cls(model=settings.model_name, horizon=settings.horizon, level=level)
        forecaster.settings = settings
        return forecaster

    def read(
        self,
        df: pd.DataFrame | TimeSeries,
        *,
        id_col: str | Sequence[str] = DEFAULT_ID_COL,
        time_col: str | None = None,
        target_col: str | Sequence[str] = DEFAULT_TARGET_COL,
        **read: Any,
    ) -> TimeSeries:
        """A DataFrame as a series: long when it has `id_col`, else wide; `read` holds further
        `ReadOptions` (targets, fill_missing, date_from, no_date)."""
        if isinstance(df, TimeSeries):
            return df
        df = as_frame(df)
        id_col, target_col = _column_names("id_col", id_col), _column_names("target_col", target_col)
        unknown = sorted(set(read) - field_names(ReadOptions))
        if unknown:
            known = sorted(field_names(ReadOptions) | {"time_col"})
            raise ConfigError(f"unknown reading option {unknown[0]!r}; expected one of {', '.join(known)}")
        if key_columns(df.columns, id_col):  # with no_date, the time column (`ds`) holds integer steps
            read.update(id_col=id_col, target_col=target_col)
            if not (read.get("no_date") or read.get("date_from")) or time_col is not None:
                read["date_col"] = time_col or read.get("date_col") or DEFAULT_TIME_COL  # date_col= too
        elif time_col is not None:
            if read.get("no_date") or read.get("date_from"):  # was said of a date_col not given (h35)
                raise ConfigError("time_col names a date column, which no_date or date_from says there is "
                                  "none of; give one way to find the dates")  # fmt: skip
            read["date_col"] = time_col
        with as_published(df, "DataFrame"):
            series = read_frame(df, **read)
        periods = period_frequency(df, series.date_col)  # the rows' own frequency, of their periods (W-SUN)
        if self.freq is not None and not is_frequency(series.index, series.freq, self.freq, periods):
            given = periods or series.freq
            known = f", freq={given!r} for these rows," if given else ""
            said, other = f"the freq={self.freq!r} asked for", f"{known} or no freq"
            if self.loaded_from is not None:  # not asked for: the model's own (h92 F4)
                said = f"{self.freq!r}, the frequency of the model loaded from {self.loaded_from}"
                other = ", or a new Forecaster for rows of another"
            raise DataError(f"the data's frequency is {given!r}, not {said}{alias_meaning(self.freq)}; "
                            f"expected rows at that frequency{other}")  # fmt: skip
        return series

    def fit(self, df: pd.DataFrame | TimeSeries, *, out: str | Path | None = None, **read: Any) -> Forecaster:
        """Train on `df` (the 7:1:2 split, or holdout on a short frame: train, validation for early stopping,
        model choice and interval calibration, test for the reported metrics); with `out`, the bundle is also
        saved there."""
        from forecaster.history import runs_filled
        from forecaster.training.fit import outlier_notes, scored_notes, training_notes, transform_notes
        from forecaster.training.workflows import train_forecaster

        series = self.read(df, **read)
        with tempfile.TemporaryDirectory(prefix="forecaster-fit-") as scratch:
            # unsaved, messages name the model as asked for ("that model 'nlinear' was trained on")
            target = user_path(Path(out)) if out is not None else Path(scratch) / self.settings.model_name
            settings = dataclasses.replace(self.settings, interval_levels=self.level)  # a head trained so
            outcome = train_forecaster(series, target, settings)
            if outcome is None:  # a non-zero rank of a distributed run
                return self
            self.bundle = load_bundle(outcome.bundle_path)
        calibration = self.bundle.calibration
        notes = [*training_notes(self.bundle.training, self.bundle.metrics), *transform_notes(self.bundle),
                 *outlier_notes(self.bundle, series), *runs_filled(self.bundle, series),
                 *(calibration.notes() if calibration else []),
                 *scored_notes(self.bundle.metrics, bands=bool(self.level))]  # bands: of intervals asked for
        for note in notes:  # it is the naive forecast; it forecasts in logarithms
            warnings.warn(f"{series.source}: note: {note}", DataQualityWarning, stacklevel=2)
        self.metrics, self.history = outcome.metrics, _trained_on(series, self.bundle)
        self.history_index = _index_of(df)
        self.labels = given_names(df, self.bundle.data.id_col)
        self.history_times = time_types(df, series.date_col)
        return self

    def __repr__(self) -> str:
        asked = f"Forecaster({self.settings.model_name!r}, horizon={self.settings.horizon})"
        if self.bundle is None:
            return f"{asked}, not fitted"
        metrics, columns = self.bundle.metrics, self.bundle.data.columns
        tested = ""
        if metrics.get("mse") is not None:  # a frame too short to test has no test metrics
            tested = f", test MSE {metrics['mse']:.4g} (naive {metrics['naive']['mse']:.4g})"
        return f"{asked}, fitted: {self.bundle.training['candidate']} on {some(list(columns))}{tested}"

    def _fitted(self) -> Bundle:
        if self.bundle is None:
            raise ConfigError("this Forecaster is not fitted: call fit(df) or Forecaster.load(path) first")
        return self.bundle

    def history_from(self, df: pd.DataFrame | TimeSeries | None) -> TimeSeries:
        """Recent rows read the way the bundle's training rows were (the training data when None)."""
        bundle = self._fitted()
        if df is None:
            if self.history is None:
                raise ConfigError("a loaded Forecaster predicts from given rows: predict(df)")
            return self.history
        return df if isinstance(df, TimeSeries) else read_rows(bundle, df)

    def predict(
        self,
        df: pd.DataFrame | TimeSeries | None = None,
        *,
        future_df: pd.DataFrame | pd.Series | TimeSeries | None = None,
        horizon: int | None = None,
        level: Sequence[int] | None = None,
    ) -> pd.DataFrame:
        """The `horizon` steps (default: the model's) after the last row of `df` (default: the training
        data), with intervals at `level` (default: the constructor's): long rows `unique_id, ds, <model>,
        <model>-lo-80, ...` for a long-format model, else a table on the time index with `<col>`,
        `<col>-lo-80`, ... A model with given future covariates needs their rows for the horizon in
        `future_df` (a date column and those columns, or a Series named as the one); calendar covariates
        come from the dates."""
        bundle = self._fitted()
        levels = self.level if level is None else _levels(level)
        horizon = None if horizon is None else check_int("horizon", horizon, minimum=1)
        future = (
            future_df
            if future_df is None or isinstance(future_df, TimeSeries)
            else read_future(bundle, future_df, "future_df")
        )
        history = self.history_from(df)
        with rows_of_a_frame() if isinstance(df, pd.DataFrame | pd.Series) else contextlib.nullcontext():
            table = forecast(bundle, history, horizon=horizon, levels=levels, future=future)  # its "row 1"
        given = _index_of(df) if df is not None else self.history_index
        table.index = _as_given(table.index, given, bundle.data.freq)
        table = dated_as_history(table, history)  # labels given as text ('2014Q1') or in parts, so answered
        answer = shaped(bundle, table, given_names(df, bundle.data.id_col) if df is not None else self.labels)
        types = time_types(df, history.date_col) if df is not None else self.history_times
        return in_given_types(answer, types, bundle.data.freq)

    def cross_validation(
        self,
        df: pd.DataFrame | TimeSeries,
        *,
        n_windows: int = 1,
        step_size: int = 1,
        level: Sequence[int] | None = None,
        refit: bool | int = False,
        **read: Any,
    ) -> pd.DataFrame:
        """Backtest on the last `n_windows` windows of `df`, `step_size` steps apart (neuralforecast's
        convention and defaults: the windows cover the last horizon + step_size * (n_windows - 1) rows).
        Fits a copy on the rows up to the first cutoff (this Forecaster's model, fitted or loaded, stays as it
        was), again on the rows up to each later cutoff with `refit=True`, every `refit` windows with an
        integer (neuralforecast's and statsforecast's refit); forecasts each window from the rows up to its
        cutoff (and the window's own rows of any future covariates); series that end apart (independent)
        each at their own end, as neuralforecast does, and those too short for the model by the companion
        each fit trains for them (`artifacts.COMPANION`), as `predict` forecasts them. Long rows:
        `unique_id`, the time column (`ds`, or a wide frame's), `cutoff`, `<model>`[, intervals], `y`, ids
        and times of `df`'s types (periods in, periods out)."""
        n_windows = check_int("n_windows", n_windows, minimum=1)
        step_size = check_int("step_size", step_size, minimum=1)
        every = _refit_every(refit, n_windows)
        series = self.read(df, **read)
        span = self.settings.horizon + step_size * (n_windows - 1)
        windows = f"{n_windows} window(s) of {self.settings.horizon} steps {step_size} apart"
        series, ends = _before_windows(series, span, windows, self.settings.horizon, step_size)
        levels = self.level if level is None else _levels(level)
        given, names, parts = _index_of(df), {}, []

        def written(times: pd.Index) -> pd.Index:  # as `df` gave and wrote its own times
            return write_labels(_as_given(times, given, data.freq), series.date_style)

        for window in range(n_windows):
            stops = {column: end - span + window * step_size for column, end in ends.items()}
            if window % every == 0:
                held = f"{windows} hold out the last {span - window * step_size} rows"
                bundle = self._backtest_fit(series, stops, levels, held)
                data, name = bundle.data, forecast_name(bundle)
                id_col, time_col = data.id_col or DEFAULT_ID_COL, data.date_col or DEFAULT_TIME_COL
                # the fit's model's series and its companion's, each refit on these rows (`_trained_on`);
                # those too short for both are left out by the fit, which names them
                names, trained = given_names(df, data.id_col), _trained_on(series, bundle)
            stops = {column: stops[column] for column in trained.columns}
            history, stop = _cut(trained, stops), max(stops.values())
            ahead = dataclasses.replace(series, frame=series.frame.iloc[stop : stop + self.settings.horizon])
            table = forecast(bundle, history, levels=levels, future=ahead if data.future_covariates else None)
            table.index = written(table.index)
            long = melt_forecast(table, trained.columns, id_col, time_col, name)
            last = series.index[[stops[column] - 1 for column in trained.columns]]
            cutoffs = written(last)
            rows = table[trained.columns].notna().sum().to_numpy()  # melted series by series, their rows each
            long.insert(list(long.columns).index(time_col) + 1, "cutoff", cutoffs.repeat(rows))
            rows_ahead = slice(min(stops.values()), stop + self.settings.horizon)  # each series' own window
            actual = series.frame[trained.columns].iloc[rows_ahead]
            actual = actual.set_axis(written(series.index[rows_ahead]))
            actual = melt_forecast(actual, trained.columns, id_col, time_col, DEFAULT_TARGET_COL)
            parts.append(long.merge(actual, how="left", on=[c for c in actual if c != DEFAULT_TARGET_COL]))
        long = pd.concat(parts, ignore_index=True)
        if names and id_col in long:  # ids 1, 2 answered as given, not as the text they were read as
            long[id_col] = long[id_col].map(lambda label: names.get(label, label))
        return in_given_types(long, time_types(df, series.date_col), data.freq, "cutoff")

    def _backtest_fit(
        self, series: TimeSeries, stops: dict[str, int], levels: list[int], held: str
    ) -> Bundle:
        """A copy of this Forecaster fitted on each series' rows before its stop, its head trained at
        `levels`; too few rows said as the backtest's (`held`: the windows and the rows they hold out), not as
        train's --horizon (h52)."""
        backtest = copy.copy(self)  # this one's own model, fitted or loaded, stays as it was (h44)
        backtest.level = levels
        try:
            return backtest.fit(_cut(series, stops))._fitted()
        except DataError as error:
            source = series.source
            why = error.why if isinstance(error, InputTooShort) else str(error).removeprefix(f"{source}: ")
            raise DataError(
                f"{source}: {held} and leave {min(stops.values())} to fit on, too few: {why}; expected fewer "
                "or closer windows (n_windows, step_size) or more rows"
            ) from None

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the fitted model as a bundle directory (atomically; safetensors and JSON, no pickle), with
        its companion (`artifacts.COMPANION`) and the default interval levels (`level`) that `load` restores:
        a job loading it each morning answered points only (h56)."""
        bundle = self._fitted()
        training = {**bundle.training, DEFAULT_LEVEL: self.level} if self.level else bundle.training
        return resave_bundle(bundle, user_path(path), training=training, overwrite=overwrite)

    @classmethod
    def load(cls, path: str | Path, *, level: Sequence[int] | None = None) -> Forecaster:
        """A Forecaster around a saved bundle (from `save` or `forecaster train`), ready to predict at
        `level`, else the levels it was saved with; `fit` and `cross_validation` train the recipe the bundle
        records (model or auto, preset, lr, seed, epochs, transform, ...) on this machine."""
        bundle = load_bundle(user_path(path))
        forecaster = cls(
            model=forecast_name(bundle), horizon=bundle.data.horizon, input_size=bundle.data.input_size,
            freq=bundle.data.freq, level=bundle.training.get(DEFAULT_LEVEL) if level is None else level,
        )  # fmt: skip
        if RECIPE in bundle.training:  # bundles trained before it was recorded refit the model's defaults
            try:
                forecaster.settings = from_recipe(bundle.training[RECIPE], forecaster.settings.trainer)
            except ConfigError as error:
                raise BundleError(f"{path}: its training record's recipe is not one this version trains: "
                                  f"{error}; expected a bundle written by forecaster") from None  # fmt: skip
        forecaster.bundle, forecaster.metrics, forecaster.loaded_from = bundle, bundle.metrics, str(path)
        return forecaster

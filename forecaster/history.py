"""Recent rows read the way a bundle's training rows were: from a CSV (`read_history`), a DataFrame
(`read_rows`) or the horizon's future covariates (`read_future`), with the bundle's columns in its order; a
model of independent series reads those of its series the rows hold; `far_from_training` notes rows on
another scale than the model learned. `prediction` forecasts from them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from forecaster.artifacts import COMPANION, Bundle
from forecaster.data import TimeSeries, read_csv
from forecaster.data.excel import is_workbook
from forecaster.data.keys import left_out_series
from forecaster.data.missing import MAX_TRAINING_MAGNITUDE, NO_FILL, some, when, without_reading_advice
from forecaster.data.panels import DEFAULT_TIME_COL
from forecaster.data.scaling import Scaler
from forecaster.data.series import INDEPENDENT, say_note
from forecaster.data.timeindex import season_length
from forecaster.errors import (
    ConfigError,
    DataError,
    MissingColumnsError,
    MissingDateColumnsError,
    MissingSheetError,
    OneBlockError,
)
from forecaster.models.assembly import stored
from forecaster.models.outliers import (
    FILLED,
    RUN_CHANCE,
    RUNS_FILLED,
    fill_isolated,
    fill_runs,
    last_expected,
)


def history_options(bundle: Bundle, **options: Any) -> dict[str, Any]:
    """The bundle's reading options (`DataConfig.read_options`) but its workbook's sheet (`read_history`
    adds it for a workbook: rows sent as a CSV or a frame are one table), overridden by those given; a way
    to find the dates that is given replaces the bundle's."""
    given = {key: value for key, value in options.items() if value is not None}
    read = {**bundle.data.read_options(), "sheet": None, **given}
    if options.get("no_date") or options.get("date_col") or options.get("date_from"):
        read = {key: value for key, value in read.items() if key not in ("date_col", "date_from", "no_date")}
        read.update({key: options[key] for key in ("date_col", "date_from", "no_date") if options.get(key)})
    return read


def read_rows(bundle: Bundle, frame: pd.DataFrame) -> TimeSeries:
    """Recent rows in a DataFrame, read the way the bundle's training rows were."""
    from forecaster.data import read_frame

    read = {**history_options(bundle), "periods": None}  # the block of its file: a frame holds one
    try:
        return _others_said(bundle, read_frame(frame, **read, targets=forecast_series(bundle)))
    except MissingColumnsError as error:
        some_of_them = _some_series(bundle, "DataFrame", error)
        return _others_said(bundle, read_frame(frame, **read, targets=some_of_them))


# Reading options a model's rows must keep: what another value would read differs from what it learned.
_AS_TRAINED = {
    "periods": "asks for another block than the {trained} one model {model!r} was trained on, and a model "
    "forecasts the frequency it learned",
    "weeks": "counts weeks otherwise than the {trained} weeks model {model!r} was trained on, and dates of "
    "other weekdays are not on its time grid",
}


def read_history(
    bundle: Bundle, path: str | Path, others: str | None = "forecast", **options: Any
) -> TimeSeries:
    """Read a CSV with the bundle's columns (in the bundle's order), the way its training rows were read
    (date column or date parts, fill method) unless `options` (`ReadOptions` fields) say otherwise;
    DataError names any missing column (a model of independent series reads those present, `_some_series`,
    saying what is done with them, `others`; None where every series is needed)."""
    path, data = Path(path), bundle.data
    for option, other in _AS_TRAINED.items():  # a model forecasts on the time grid it learned
        asked, trained = options.get(option), getattr(data, option)
        if asked and trained and asked != trained:
            raise DataError(f"{path}: --{option} {asked} {other.format(trained=trained, model=bundle.name)}; "
                            f"expected no --{option}, or --{option} {trained}")  # fmt: skip
    read = history_options(bundle, **options)
    remembered = read["sheet"] is None and data.sheet is not None and path.is_file() and is_workbook(path)
    if remembered:  # the workbook's sheet it learned
        read["sheet"] = data.sheet
    try:
        return _targets_read(bundle, path, read, others)
    except MissingSheetError as error:
        if not remembered:
            raise
        raise DataError(f"{path}: no sheet {data.sheet!r}, which model {bundle.name!r} was trained on; "
                        "expected sheet (--sheet) naming this workbook's sheet of its rows: "
                        f"{error.listed}") from None
    except OneBlockError:
        if options.get("periods"):
            raise
        # the rows of the block the model was trained on, as it writes them: read as they are (h75 F6)
        return _targets_read(bundle, path, {**read, "periods": None}, others)


def _targets_read(bundle: Bundle, path: Path, read: dict[str, Any], others: str | None) -> TimeSeries:
    try:
        return _others_said(bundle, read_csv(path, **read, targets=forecast_series(bundle)))
    except MissingColumnsError as error:
        some_of_them = _some_series(bundle, str(path), error, others)
        return _others_said(bundle, read_csv(path, **read, targets=some_of_them))


def _others_said(bundle: Bundle, series: TimeSeries) -> TimeSeries:
    """`series`, with a note naming the series its rows hold beside the model's, which nothing forecasts (a
    wide table's; a long table's the reader names, `keys.left_out_series`): new ones, not the columns its
    training file held beside the targets given, nor those training left out, which `left_out_in_training`
    names with why."""
    training = bundle.training or {}
    known = {*(training.get("left_out") or []), *(training.get("beside_targets") or [])}
    if others := [name for name in series.others if name not in known]:
        say_note(f"{series.source}: note: {left_out_series(others, series.columns)}", stacklevel=3)
    return series


def _some_series(
    bundle: Bundle, source: str, error: MissingColumnsError, others: str | None = "forecast"
) -> list[str]:
    """The series the rows hold, a model of independent series forecasting (`others`: scoring) them alone
    (one published late); where only its companion's lack (`artifacts.COMPANION`), those the rows hold of
    them too, every series needed or not (`others` None: calibrate, which keeps a companion's margins)."""
    present, missing = [name for name in forecast_series(bundle) if name not in error.missing], error.missing
    companions = set(missing) <= set(companion_series(bundle))
    independent = others is not None and bundle.data.channels == INDEPENDENT
    if not present or isinstance(error, MissingDateColumnsError) or not (companions or independent):
        raise _missing(bundle, source, error) from None
    note = (f"no rows of {some(list(map(repr, missing)))} of its companion's series" if companions
            else f"no rows of series {some(list(map(repr, missing)))} that model {bundle.name!r} learned")
    say_note(f"{source}: note: {note}: {others or 'read'} the {len(present)} others", stacklevel=2)
    return present


def companion_series(bundle: Bundle) -> list[str]:
    """The series the bundle's companion forecasts (`artifacts.COMPANION`; none without one)."""
    return list(bundle.companion.data.columns) if bundle.companion is not None else []


def kept_model(bundle: Bundle) -> str:
    """The forecast a bundle keeps, as its training record names it (a baseline kept by `auto`), else its
    model's name."""
    return bundle.training.get("candidate", bundle.model_name)


def companion_model(bundle: Bundle) -> str:
    """The forecast the bundle's companion keeps, as its own record names it (the parent's record of earlier
    bundles repeats it as 'model', unread)."""
    return kept_model(bundle.companion)


def held_by_companion(bundle: Bundle, names: Iterable[str]) -> list[str]:
    """Those of `names` that the bundle's companion forecasts, in their order: compared as a set (a service
    request's names are as many as 8 MB of keys hold, 500,000: by 1,000 series a list held the event loop
    6.6 s, h132), and none looked at without a companion (every JSON forecast asks)."""
    if bundle.companion is None:
        return []
    held = set(companion_series(bundle))
    return [name for name in names if name in held]


def forecast_series(bundle: Bundle) -> list[str]:
    """The series a bundle forecasts, its model's and its companion's (`artifacts.COMPANION`), in the order
    training read them (the companion's `places` among them; after the model's where a record has none)."""
    names = list(bundle.data.columns)
    if bundle.companion is None:
        return names
    held, places = bundle.companion.data.columns, bundle.training[COMPANION].get("places")
    total = len(names) + len(held)
    ordered = isinstance(places, list) and len(places) == len(held) and all(type(at) is int for at in places)
    if not ordered or places != sorted(set(places)) or not 0 <= places[0] <= places[-1] < total:
        places = range(len(names), total)
    for place, name in zip(places, held, strict=True):
        names.insert(place, name)
    return names


def of_series(bundle: Bundle, names: list[str]) -> Bundle:
    """A model of independent series as the model of some of them (`names`), each standardized by its own
    scaler: what forecasting or scoring them alone reads."""
    indices = [bundle.data.columns.index(name) for name in names]
    scaler = Scaler.joined([bundle.scaler.channel(index) for index in indices])
    data = dataclasses.replace(bundle.data, columns=list(names))
    return dataclasses.replace(bundle, data=data, scaler=scaler)


def _missing(bundle: Bundle, source: str, error: MissingColumnsError) -> DataError:
    """What the rows lack of the model's: its date columns, columns of a wide table, series of a long one
    (and those it holds that the model did not learn: 'Z' sent for 'A' was "the rows have 'B', 'C'", h41)."""
    data = bundle.data
    if isinstance(error, MissingDateColumnsError):  # the reader's hints (--no-date) do not apply to a model
        return DataError(
            f"{source}: missing date column(s) {', '.join(map(repr, error.missing))} that model "
            f"{bundle.name!r} reads its dates from, as its training data had them; the rows have "
            f"{', '.join(map(repr, error.present))}"
        )
    what, present = "column(s)", error.present
    if data.id_col:  # the pivoted table's columns are the series, and its time column
        what, present = "series", [name for name in present if name != (data.date_col or DEFAULT_TIME_COL)]
    return DataError(
        f"{source}: missing {what} {', '.join(map(repr, error.missing))} that model {bundle.name!r} was "
        f"trained on; expected {what} {', '.join(map(repr, data.columns))}, the rows have "
        f"{', '.join(map(repr, present))}"
        + (f" and {some(list(map(repr, error.others)))}, which it did not learn" if error.others else "")
    )


def future_covariates(bundle: Bundle) -> list[str]:
    """The model's given future covariates, whose horizon rows a request sends; refused for a model of none
    (a service request's `future` was said as list names or lengths: h92 F3)."""
    if not bundle.data.future_covariates:
        raise ConfigError(f"model {bundle.name!r} has no future covariates; expected no rows of them")
    return list(bundle.data.future_covariates)


def read_future(
    bundle: Bundle, table: str | Path | pd.DataFrame | pd.Series, source: str = "DataFrame"
) -> TimeSeries:
    """The horizon's rows of a model's given future covariates, from a CSV or a DataFrame or Series (which
    messages name `source`: the API's `future_df`, h75 F4; other types refused as `fit(df)` refuses them,
    they were taken for a path, h82 F4) read with the dates of its training file (a few rows: no frequency is
    inferred from them)."""
    from forecaster.data import read_frame

    given = future_covariates(bundle)
    options = history_options(bundle)
    options.update(
        past_covariates=None, future_covariates=None, calendar=False, fill_missing=NO_FILL, periods=None
    )
    try:  # read as the model reads them: no advice on reading options (a repeated date was told of id_col)
        with without_reading_advice():
            if not isinstance(table, str | PathLike):
                return read_frame(table, **options, targets=given, source=source)
            return read_csv(table, **options, targets=given)
    except MissingColumnsError as error:  # a covariate lacking was said an "unknown target column" (h35)
        source = str(table) if isinstance(table, str | PathLike) else source
        if isinstance(error, MissingDateColumnsError):
            raise _missing(bundle, source, error) from None
        raise DataError(f"{source}: missing future covariate(s) {', '.join(map(repr, error.missing))} that "
                        f"model {bundle.name!r} needs over the horizon; the rows have "
                        f"{', '.join(map(repr, error.present))}") from None  # fmt: skip


# Standard deviations of its training rows beyond which a value sent lies on another scale than the model
# learned (a file in units sent to a model of millions): the forecast extrapolates, and the intervals keep
# the training rows' widths, which float32 may not even hold at that level (+-5 vanishes beside 2.5e8).
FAR_FROM_TRAINING = 1000.0
# A column whose rows a forecast reads all lie below 1/FAR_BELOW of its training rows' mean (a logged one's
# geometric mean) and at least BELOW_TRAINING standard deviations of them from it is on another scale too: a
# series of 100 to 145 sent in thousands lay 13 sd below its mean, short of FAR_FROM_TRAINING, and was
# forecast 0.1445 in [0, 4.2], unsaid (h82 F1). Rows that came near 0 in training (a few counts) lie within a
# few sd of their mean.
FAR_BELOW, BELOW_TRAINING = 100.0, 3.0


# Robust standard deviations from the row before it, and from the same period a season earlier, each plus
# the recent changes' median (a trend's step is no departure: a clean yearly series growing by 10 a year was
# said 9 sd apart, h75 F5), beyond which a series' last row is said apart: a month exported mid-month (40% of
# its level, 7 from both) sent Holt-Winters' forecast to 0 within six months, unsaid (h62). Measured without
# the median (which only lowers the figures): on h48's 137 real series 1.0% of rows lay as far from both
# (0.19% beyond 8), and 2 of their 137 last rows; of the last 3,000 rows of ETTh1's, ETTm1's, Weather's and
# Exchange's OT, 0.2%, 0.2%, none and 1.1%.
LAST_ROW_APART = 5.0
_RECENT = 36  # the rows before the last whose changes set the scale (three seasons where that is more)


def last_row_apart(bundle: Bundle, series: TimeSeries) -> list[str]:
    """Notes naming the target columns whose last change departs further than LAST_ROW_APART robust standard
    deviations from their recent changes' median (and, with a season, the change from a season earlier from
    theirs): a partial period, a typo or a new level, which the forecast starts from (but Holt-Winters:
    `_start`)."""
    season = season_length(series.freq) or 1
    notes, start = [], _start(bundle)
    for name in [column for column in bundle.data.columns if column in series.frame.columns]:
        values = series.frame[name].dropna().to_numpy(dtype=np.float64)[-(max(_RECENT, 3 * season) + 1) :]
        distances = []
        for lag in dict.fromkeys((1, season)):
            if len(values) > 2 * lag + 3:
                expected, spread = map(float, last_expected(torch.tensor(values)[None], lag))
                distances.append(abs(values[-1] - expected) / spread if spread > 0 else 0.0)
        if distances and min(distances) > LAST_ROW_APART:
            earlier = " and from a season earlier" if len(distances) > 1 else ""
            notes.append(f"note: the last row of {name!r} ({values[-1]:.4g}) lies {min(distances):.3g} "
                         f"robust standard deviations of its recent changes from the row before it{earlier} "
                         f"(each plus their median change): a partial period, a typo or a new level? "
                         f"{start}")  # fmt: skip
    return notes


def runs_filled(bundle: Bundle, series: TimeSeries) -> list[str]:
    """The steps of each target's last season that the kept forecast read as the seasons before, a shock of a
    few steps (`outliers.fill_runs`), in its input window of `series`; the rows stay as given."""
    season = getattr(getattr(stored(bundle.model), "config", None), "season", None)
    if bundle.model_name not in RUNS_FILLED or not season or bundle.data is None:
        return []
    notes, columns = [], list(bundle.data.columns)
    for name in [column for column in columns if column in series.frame.columns]:
        rows = series.frame[name].dropna().iloc[-bundle.data.input_size :]  # its own end, as `outlier_notes`
        scaler = bundle.scaler.channel(columns.index(name))
        scaled = torch.from_numpy(scaler.transform(rows.to_numpy(dtype=np.float64)[:, None])[:, 0])[None]
        isolated = fill_isolated(scaled, season, FILLED[bundle.model_name])
        read = fill_runs(isolated, season)
        cells = np.flatnonzero((read != isolated)[0].numpy())
        if cells.size:
            given = ", ".join(f"{value:g}" for value in rows.iloc[cells])
            values = scaler.inverse(read[0, cells].numpy()[:, None])[:, 0]
            span = f"{when(rows.index[cells[0]])} to {when(rows.index[cells[-1]])}"
            notes.append(f"{name!r} from {span} ({given}) departs from the same steps of the seasons before, "
                         f"all one way, and the steps after it return: {bundle.model_name} read it as a "
                         f"passing shock, as if it were {', '.join(f'{value:.4g}' for value in values)} (the "
                         "rows are used as given everywhere else)")  # fmt: skip
    return notes


def stopped_runs(bundle: Bundle, series: TimeSeries) -> list[str]:
    """The targets whose input window the mean read as a series stopped at its last value
    (`outliers.ended_run`): it forecasts that value, not the window's mean, and had said nothing of it (h107:
    a price held, a product discontinued, or counts read wrongly so, all alike unsaid)."""
    stopped = getattr(stored(bundle.model), "stopped_runs", None)  # the models that forecast a stop: the mean
    if stopped is None or bundle.data is None:
        return []
    notes = []
    for name in [column for column in bundle.data.columns if column in series.frame.columns]:
        rows = series.frame[name].dropna().to_numpy(dtype=np.float64)[-bundle.data.input_size :]
        run = int(stopped(torch.tensor(rows)[None])[0]) if len(rows) else 0  # a copy: rows may be read-only
        if run:
            copies, value = int((rows == rows[-1]).sum()), rows[-1]
            notes.append(f"{name!r} ends in {run} rows of {value:g} ({copies} of its last {len(rows)}), a "
                         f"run chance would so place less than {RUN_CHANCE:.0%} of the time: the mean reads "
                         f"the series as stopped there and forecasts {value:g}, not the window's average "
                         f"{rows.mean():.4g}")  # fmt: skip
    return notes


def window_notes(bundle: Bundle, series: TimeSeries) -> list[str]:
    """What a forecast from the last rows of `series` should say of them, `predict` and the service alike: a
    last row apart (`last_row_apart`), a last season's shock read as the seasons before (`runs_filled`), a
    window the mean read as stopped (`stopped_runs`)."""
    return [*last_row_apart(bundle, series),
            *(f"note: {note}" for note in [*runs_filled(bundle, series), *stopped_runs(bundle, series)])]


def _start(bundle: Bundle) -> str:
    """What the bundle's forecast does with a last row apart, as its model says (`far_last_read`: Holt-Winters
    clips its one-step error, the mean its last cell; h94 F1's note had said a mean it moved by 3% started
    from it); any other forecast starts from it."""
    read = getattr(stored(bundle.model), "far_last_read", None)
    return (read() if read else None) or "The forecast starts from it"


def left_out_in_training(bundle: Bundle) -> list[str]:
    """The note naming a wide table's series that training left out, too short to split
    (`without_short_series`): a forecast of the training file answered without them, unsaid (h66: a World
    Bank table's South Sudan). A long table's rows of them are named as they are read (`rows_of_targets`)."""
    short = (bundle.training or {}).get("left_out") or []
    if not short or bundle.data.id_col is not None:
        return []
    return [f"note: model {bundle.name!r} forecasts no series {some(list(map(repr, short)))}: left out in "
            "training, too short for its split and input"]


def unusable(rows: np.ndarray, kind: str, names: Sequence[str]) -> tuple[int, int, str] | None:
    """The first of `rows` (a value per column: a `kind`, "column", named as `names` say) that holds a value
    train does not take, its column, and what it holds: not finite, or beyond MAX_TRAINING_MAGNITUDE, which
    float32 forecasts cannot hold. The history's rows and the horizon's rows of future covariates alike (h75
    F4: 1e30 in a future row was forecast as 1.07e30, unsaid). Names are worded only for the refusal."""
    huge = np.abs(rows) > MAX_TRAINING_MAGNITUDE
    bad = np.argwhere(~np.isfinite(rows) | huge)
    if not bad.size:
        return None
    row, column = bad[0]
    where = f"{kind} {names[column]!r}"
    if not huge[row, column]:
        return int(row), int(column), f"non-finite value in {where}; expected numbers"
    return int(row), int(column), (f"value {rows[row, column]:g} in {where}; expected numbers of |value| <= "
                      f"{MAX_TRAINING_MAGNITUDE:.3g}, as train takes")  # fmt: skip


def far_from_training(bundle: Bundle, window: np.ndarray, ahead: pd.Index | None = None) -> str | None:
    """The note to say where the rows a forecast reads (`window`, checked: the bundle's input columns, then
    any horizon rows of future covariates) lie further than FAR_FROM_TRAINING standard deviations from the
    training rows' mean (a constant's scale is no spread), or all far below it (`_far_below`): its history
    rows, or with `ahead` (the steps asked) its horizon rows, whose source the caller names (h75 F4: promo
    100000 sent for a covariate trained on 0 and 1 forecast 107,129, unsaid). Said where a forecast's notes
    are answered, not in every check of rows."""
    scaler, size = bundle.scaler, bundle.data.input_size
    rows = window[:size] if ahead is None else window[size : size + len(ahead)]
    distance = np.where(scaler.steady | np.isnan(rows), 0.0, np.abs(scaler.transform(rows)))
    centers = scaler.inverse(np.zeros(scaler.n_channels))
    row, column = np.unravel_index(np.argmax(distance), distance.shape)
    if distance[row, column] > FAR_FROM_TRAINING:
        apart = (f"holds {rows[row, column]:.4g}, {distance[row, column]:.3g} standard deviations of its "
                 f"training rows from their mean ({centers[column]:.4g})")  # fmt: skip
    elif below := _far_below(rows, distance, centers):
        row, column, nearest = below
        largest = abs(rows[row, column])
        apart = (f"holds values no larger than {largest:.4g}, 1/{abs(centers[column]) / largest:.3g} of its "
                 f"training rows' mean ({centers[column]:.4g}) and {nearest:.3g} of their standard "
                 "deviations from it")  # fmt: skip
    else:
        return None
    name = bundle.data.input_columns[column]
    what = f"column {name!r}" if ahead is None else f"future covariate {name!r} on {when(ahead[row])}"
    return (f"note: {what} {apart}: model {bundle.name!r} forecasts far beyond what it learned, with "
            "intervals of its training rows' widths; expected values in the units it was trained on")


def _far_below(rows: np.ndarray, distance: np.ndarray, centers: np.ndarray) -> tuple[int, int, float] | None:
    """The row of the largest value of the first column of `rows` whose values all lie FAR_BELOW times below
    its training rows' mean (`centers`) and BELOW_TRAINING standard deviations from it (`distance`, 0 where
    constant in training), the column, and their fewest standard deviations from it; none where the values
    are all 0, the same in any units."""
    size = np.where(np.isnan(rows), -np.inf, np.abs(rows))
    largest, nearest = size.max(axis=0), np.where(np.isnan(rows), np.inf, distance).min(axis=0)
    below = (largest > 0) & (FAR_BELOW * largest <= np.abs(centers)) & (nearest >= BELOW_TRAINING)
    if not (columns := np.flatnonzero(below & np.isfinite(nearest))).size:
        return None
    return int(np.argmax(size[:, columns[0]])), int(columns[0]), float(nearest[columns[0]])

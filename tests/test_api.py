"""The Python API: README examples run as written, long format through the API and the CLI, neuralforecast's
cross-validation cutoffs, save/load round trips and one-line refusals."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forecaster import Forecaster
from forecaster.cli import main
from forecaster.data import min_rows
from forecaster.data.series import DataQualityWarning
from forecaster.errors import BundleError, ConfigError, DataError
from forecaster.training.settings import TrainerOptions, from_recipe

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture(scope="module")
def etth1(data_dir: Path) -> pd.DataFrame:
    return pd.read_csv(data_dir / "ETTh1.csv.gz", nrows=4000)


@pytest.fixture(scope="module")
def long(etth1: pd.DataFrame) -> pd.DataFrame:
    return etth1.melt(id_vars="date", var_name="unique_id", value_name="y").rename(columns={"date": "ds"})


def _python_blocks() -> list[str]:
    section = README.read_text().split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_readme_python_api_examples_run(data_dir, tmp_path, monkeypatch):
    blocks = _python_blocks()
    assert len(blocks) == 2
    (tmp_path / "ETTh1.csv.gz").write_bytes((data_dir / "ETTh1.csv.gz").read_bytes())
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for block in blocks:
            exec(compile(block, str(README), "exec"), scope)  # noqa: S102 - the README's own examples
    assert scope["model"].bundle is not None
    assert (tmp_path / "etth1-nlinear" / "config.json").is_file()


def test_long_and_wide_give_the_same_model(etth1, long):
    """Melting a wide table changes the shape of input and output, not the numbers."""
    wide = Forecaster("nlinear", horizon=12, input_size=48, max_epochs=1).fit(etth1)
    melted = Forecaster("nlinear", horizon=12, input_size=48, max_epochs=1).fit(long)
    assert wide.metrics["mse"] == pytest.approx(melted.metrics["mse"], rel=1e-6)
    table, rows = wide.predict(level=[80]), melted.predict(level=[80])
    assert list(rows.columns) == ["unique_id", "ds", "nlinear", "nlinear-lo-80", "nlinear-hi-80"]
    assert len(rows) == 7 * 12
    for name in etth1.columns[1:]:
        one = rows[rows.unique_id == name]
        np.testing.assert_array_equal(one["nlinear"].to_numpy(), table[name].to_numpy())
        np.testing.assert_array_equal(one["nlinear-hi-80"].to_numpy(), table[f"{name}-hi-80"].to_numpy())
        assert (pd.to_datetime(one["ds"]).to_numpy() == table.index.to_numpy()).all()


def test_cross_validation_cutoffs_match_neuralforecast(long):
    from neuralforecast import NeuralForecast
    from neuralforecast.models import NLinear

    frame = long.assign(ds=pd.to_datetime(long["ds"]))
    frame = frame[frame.unique_id.isin(["OT", "HUFL"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = NeuralForecast(
            models=[NLinear(h=12, input_size=24, max_steps=1, enable_progress_bar=False, logger=False)],
            freq="h",
        ).cross_validation(frame, n_windows=4, step_size=5)
        ours = Forecaster("naive", horizon=12, input_size=24).cross_validation(
            frame, n_windows=4, step_size=5
        )
    keys = ["unique_id", "ds", "cutoff"]
    mine = ours[keys].assign(ds=pd.to_datetime(ours.ds)).sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(
        mine, theirs[keys].sort_values(keys).reset_index(drop=True), check_dtype=False
    )
    np.testing.assert_allclose(
        ours.sort_values(keys)["y"].to_numpy(), theirs.sort_values(keys)["y"].to_numpy()
    )
    # The naive forecast of each window is the value at its cutoff (through the float32 model).
    at_cutoff = frame.set_index(["unique_id", "ds"])["y"]
    cutoffs = zip(ours.unique_id, pd.to_datetime(ours.cutoff), strict=True)
    np.testing.assert_allclose(ours["naive"].to_numpy(), [at_cutoff[key] for key in cutoffs], rtol=1e-6)


@pytest.mark.parametrize("model", ["naive", None])
def test_cross_validation_too_long_for_its_rows_says_so_in_its_own_terms(model):
    """Ten windows of 12 monthly rows leave 1 row to fit: the refusal spoke of train's validation and test
    horizons and a shorter --horizon (h52)."""
    rows = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2020-01-01", periods=12, freq="MS"),
                         "y": np.arange(12.0)})  # fmt: skip
    forecaster = Forecaster(model, horizon=2) if model else Forecaster(horizon=2)
    with pytest.raises(DataError) as caught:
        forecaster.cross_validation(rows, n_windows=10)
    said = str(caught.value)
    assert said.startswith("DataFrame: 10 window(s) of 2 steps 1 apart hold out the last 11 rows and leave 1")
    assert said.endswith("expected fewer or closer windows (n_windows, step_size) or more rows")
    assert "--" not in said and "\n" not in said
    with pytest.raises(ConfigError, match=r"^refit must be True, False or a number of windows >= 1, got 0"):
        forecaster.cross_validation(rows, refit=0)


def test_cross_validation_refit_fits_again_at_the_cutoffs_it_names():
    """statsforecast's and neuralforecast's refit (h72 F7): True fits on the rows up to every cutoff, an
    integer every so many windows. The oracle: fit on the rows up to a cutoff, predict from the rows up to
    a window's cutoff."""
    hours, rng = pd.date_range("2021-01-01", periods=400, freq="h"), np.random.default_rng(3)
    frame = pd.DataFrame({"ds": hours, "y": rng.normal(size=400).cumsum() + 5 * np.sin(np.arange(400) / 4)})
    recipe = dict(input_size=24, max_epochs=1, limit_train_batches=2, seeds=1, lr=1e-2)
    model = Forecaster("nlinear", horizon=6, **recipe)
    backtest = model.cross_validation(frame, n_windows=3, step_size=6, refit=2)
    cutoffs = sorted(backtest["cutoff"].unique())
    assert len(cutoffs) == 3 and len(backtest) == 18
    first = Forecaster("nlinear", horizon=6, **recipe).fit(frame[frame.ds <= cutoffs[0]])
    third = Forecaster("nlinear", horizon=6, **recipe).fit(frame[frame.ds <= cutoffs[2]])
    for cutoff, model in zip(cutoffs, (first, first, third), strict=True):
        expected = model.predict(frame[frame.ds <= cutoff])["y"].to_numpy()
        got = backtest.loc[backtest.cutoff == cutoff, "nlinear"].to_numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert not np.allclose(first.predict(frame[frame.ds <= cutoffs[2]])["y"], third.predict()["y"])


def test_cross_validation_of_series_ending_apart_backtests_each_at_its_own_end_as_neuralforecast():
    """Independent series ending 30 hours apart: the one that ended first had its rows forecast from its own
    end under the other's cutoffs, dated before them, with no actual (h35)."""
    from neuralforecast import NeuralForecast
    from neuralforecast.models import NLinear

    hours, rng = pd.date_range("2021-01-01", periods=120, freq="h"), np.random.default_rng(0)
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": hours + pd.Timedelta(hours=late),
                                     "y": rng.normal(size=120).cumsum()})
                       for name, late in (("a", 0), ("b", 30))])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = NLinear(h=4, input_size=12, max_steps=1, enable_progress_bar=False, logger=False)
        theirs = NeuralForecast(models=[peer], freq="h").cross_validation(frame, n_windows=3, step_size=2)
        ours = Forecaster("naive", horizon=4, input_size=12).cross_validation(frame, n_windows=3, step_size=2)
    keys = ["unique_id", "ds", "cutoff", "y"]
    pd.testing.assert_frame_equal(ours[keys].sort_values(keys, ignore_index=True),
                                  theirs[keys].sort_values(keys, ignore_index=True), check_dtype=False)
    assert (ours.ds > ours.cutoff).all()


@pytest.mark.parametrize("start", [0, 57])
def test_a_series_without_a_row_before_the_windows_is_left_out_wherever_it_lies(start):
    """A 3-row series of a 60-day panel has no row before a 4-step window wherever it lies: at the end it was
    left out with a note, at the start (a series that ended early) it refused the whole backtest as "3 rows
    cannot hold 1 window(s)" (h141). Oracle: the long series' backtest is the same either way."""
    days = pd.date_range("2020-01-01", periods=60, freq="D")
    rng = np.random.default_rng(0)
    frame = pd.concat([*(pd.DataFrame({"unique_id": name, "ds": days, "y": rng.normal(size=60).cumsum()})
                         for name in "AB"),
                       pd.DataFrame({"unique_id": "T", "ds": days[start : start + 3], "y": [1.0, 2.0, 3.0]})])
    with pytest.warns(DataQualityWarning, match="series 'T' hold no row before the 1 window"):
        backtest = Forecaster("naive", horizon=4).cross_validation(frame)
    alone = Forecaster("naive", horizon=4).cross_validation(frame[frame.unique_id != "T"])
    pd.testing.assert_frame_equal(backtest, alone)
    with pytest.raises(DataError, match=r"^DataFrame: 3 rows cannot hold 1 window\(s\) of 4 steps 1 apart; "
                       "expected more rows than a horizon$"):  # fmt: skip
        Forecaster("naive", horizon=4).cross_validation(frame[frame.unique_id == "T"])


def test_cross_validation_backtests_the_series_its_copy_kept():
    """A yearly panel whose youngest series (15 rows) is too short for the copy fitted before the windows:
    its forecast raised ValueError: 'C' is not in list (h82 F3); each window backtests what its copy
    forecasts, 'C' by its companion where the model left it out (it had no rows there before h137)."""
    rng = np.random.default_rng(1)
    frame = pd.concat([pd.DataFrame({"unique_id": name, "ds": np.arange(start, 2023),
                                     "y": 1.5 * np.arange(2023 - start) + rng.normal(size=2023 - start)})
                       for name, start in (("A", 1990), ("B", 2000), ("C", 2008))])  # fmt: skip
    model = Forecaster("drift", horizon=3)
    for refit in (False, True):
        with pytest.warns(DataQualityWarning, match="left out 1 of 3 series too short .*: 'C'"):
            backtest = model.cross_validation(frame, n_windows=2, step_size=3, refit=refit)
        assert backtest.groupby("unique_id").cutoff.nunique().to_dict() == {"A": 2, "B": 2, "C": 2}
        assert backtest.y.notna().all() and (backtest.ds > backtest.cutoff).all()


def _cli_train_and_predict(frame: pd.DataFrame, folder: Path, *train_flags: str) -> pd.DataFrame:
    """Train an NLinear bundle on `frame` written as CSV, then predict from the same file with no reading
    flags (the bundle remembers how its file was read); the written forecast."""
    path, bundle, out = folder / "data.csv", folder / "bundle", folder / "forecast.csv"
    frame.to_csv(path, index=False)
    flags = [
        "--model",
        "nlinear",
        "--horizon",
        "12",
        "--input-size",
        "48",
        "--max-epochs",
        "1",
        "--seeds",
        "1",
        "--no-progress",
    ]
    assert main(["train", "--csv", str(path), *train_flags, *flags, "--out", str(bundle)]) == 0
    assert (
        main(["predict", "--model", str(bundle), "--csv", str(path), "--level", "80", "--output", str(out)])
        == 0
    )
    return pd.read_csv(out)


def test_long_file_through_the_cli_matches_the_api(long, tmp_path):
    written = _cli_train_and_predict(long, tmp_path, "--id-col", "unique_id")
    api = Forecaster.load(tmp_path / "bundle").predict(long, level=[80])
    assert list(written.columns) == list(api.columns)
    np.testing.assert_array_equal(written["nlinear"].to_numpy(), api["nlinear"].to_numpy())
    assert written["unique_id"].tolist() == api["unique_id"].tolist()


def test_long_format_refusals_are_one_line(long):
    model = Forecaster("naive", horizon=12, input_size=24)
    with pytest.raises(DataError, match="series 'OT' ends 1 time\\(s\\) before series"):
        model.fit(long.iloc[:-1], channels="multivariate")
    with pytest.raises(DataError, match="has time '2016-07-01 00:00:00' more than once"):
        model.fit(pd.concat([long, long.iloc[:1].assign(y=-1.0)]))  # an exact copy is dropped, with a note
    stores = pd.concat([long.assign(store="A"), long.assign(store="B")], ignore_index=True)
    at = len(long)  # the second store's first row, named by its position as a frame's rows are
    with pytest.raises(DataError, match=f"'HUFL' has time '2016-07-01 00:00:00' more than once \\(at row 0, "
                       f"row {at}\\) \\(they differ in column 'store': a second key"):  # fmt: skip
        model.fit(stores)
    alike = long[long["unique_id"] == "OT"]  # a number and a text that print alike: one series as text
    mixed = pd.concat([alike.assign(unique_id=1), alike.assign(unique_id="1")], ignore_index=True)
    said = f"'1' has time '2016-07-01 00:00:00' more than once (at row 0, row {len(alike)}) (ids 1 and '1'"
    with pytest.raises(DataError, match=re.escape(f"series {said} are one series read as text)")):
        model.fit(mixed)
    with pytest.raises(DataError, match="long format needs columns 'unique_id', 'ds' and 'value'.*; "
                       "target_col / --target-col the values$"):  # fmt: skip
        model.fit(long, target_col="value")
    with pytest.raises(DataError, match="missing 'when'.*; date_col / --date-col names the time column$"):
        model.fit(long, time_col="when")
    with pytest.raises(DataError, match="expected a pandas DataFrame or Series, got list"):
        model.fit([1, 2, 3])


def test_an_id_of_two_columns_is_given_as_a_list_as_pandas_users_give_it(long):
    """`id_col=["unique_id", "store"]` (pandas' groupby, darts' group_cols) raised Python's TypeError, a tuple
    its AttributeError (h72): each is the comma-joined text `--id-col` takes."""
    stores = pd.concat([long.assign(store="A"), long.assign(store="B")], ignore_index=True)
    joined = Forecaster("naive", horizon=4, input_size=24).fit(stores, id_col="unique_id,store").predict()
    for given in (["unique_id", "store"], ("unique_id", "store")):
        answer = Forecaster("naive", horizon=4, input_size=24).fit(stores, id_col=given).predict()
        pd.testing.assert_frame_equal(answer, joined)
    for given in (5, [], ["unique_id", 5]):
        said = f"id_col names a column, or several in a list such as ['country', 'indicator'], got {given!r}"
        with pytest.raises(ConfigError, match=re.escape(said)):
            Forecaster("naive", horizon=4).fit(stores, id_col=given)
    said = "id_col / --id-col names 'store' twice; expected each column once"
    with pytest.raises(ConfigError, match=f"^{re.escape(said)}$"):
        Forecaster("naive", horizon=4).fit(stores, id_col=["store", "unique_id", "store"])  # not 'store,...'


def test_settings_and_state_are_checked(etth1):
    with pytest.raises(ConfigError, match="horizon"):
        Forecaster("naive")
    with pytest.raises(ConfigError, match="no option"):
        Forecaster("naive", horizon=12, input_size=24, n_harmonics=8).fit(etth1)
    with pytest.raises(ConfigError, match="not fitted"):
        Forecaster("naive", horizon=12).predict()
    with pytest.raises(DataError, match="frequency is 'h', not the freq='D'"):
        Forecaster("naive", horizon=12, input_size=24, freq="D").fit(etth1)


@pytest.mark.parametrize(("dates", "asked", "same"), [
    ("W-SUN", "W", True), ("MS", "M", True), ("QS", "Q", True), ("YS", "Y", True), ("h", "60min", True),
    ("W-SUN", "W-MON", False), ("MS", "ME", False), ("MS", "Q", False), ("D", "W", False),
])  # fmt: skip
def test_freq_is_checked_as_the_frequency_it_names_not_as_text(dates, asked, same):
    """freq='W' on Sunday weeks was refused: "the data's frequency is 'W-SUN', not the freq='W' asked for";
    pandas 3 takes 'M', 'Q', 'Y' as periods only, which month, quarter and year starts step through."""
    frame = pd.DataFrame({"date": pd.date_range("2020-01-05", periods=40, freq=dates), "y": np.arange(40.0)})
    model = Forecaster("naive", horizon=2, freq=asked)
    if same:
        assert model.fit(frame).bundle.data.freq == pd.tseries.frequencies.to_offset(dates).rule_code
    else:
        with pytest.raises(DataError, match=f"not the freq={asked!r} asked for.*; expected rows at that"):
            model.fit(frame)


def test_a_freq_refused_says_what_pandas_reads_it_as_and_what_to_give():
    """h72 F7: freq='W' on Monday weeks was refused without saying that pandas' 'W' is Sunday weeks."""
    mondays = pd.date_range("2020-01-06", periods=40, freq="W-MON")
    frame = pd.DataFrame({"date": mondays, "y": np.arange(40.0)})
    expected = ("the data's frequency is 'W-MON', not the freq='W' asked for ('W' is pandas' 'W-SUN'); "
                "expected rows at that frequency, freq='W-MON' for these rows, or no freq")  # fmt: skip
    with pytest.raises(DataError, match=re.escape(expected)):
        Forecaster("naive", horizon=2, freq="W").fit(frame)


def test_arguments_of_the_wrong_type_are_the_projects_errors_not_pythons(etth1):
    """Python's own TypeError used to leak (slicing by 2.5, iterating 80); numpy integers are integers."""
    model = Forecaster("naive", horizon=12, input_size=24, level=80).fit(etth1)
    assert model.level == [80]
    assert len(model.predict(horizon=np.int64(3))) == 3
    with pytest.raises(ConfigError, match=r"^expected 1 <= horizon <= 12 \(the model's horizon\), got 13$"):
        model.predict(horizon=13)  # a setting asked for, not the data: no DataError naming the frame (h72)
    columns = model.predict(level=np.array([95, 80])).columns[-4:].tolist()
    assert columns == ["OT-lo-80", "OT-hi-80", "OT-lo-95", "OT-hi-95"]
    for horizon in (2.5, "12", True):
        with pytest.raises(ConfigError, match=f"horizon must be an integer >= 1, got {horizon!r}"):
            model.predict(horizon=horizon)
    with pytest.raises(ConfigError, match="interval levels must be integers 1-99 in a list such as"):
        model.predict(level="80")
    pd.testing.assert_frame_equal(model.predict(level=[80.0, 95]), model.predict(level=[80, 95]))  # h52
    with pytest.raises(ConfigError, match="interval level must be an integer >= 1 and <= 99, got 80.5"):
        model.predict(level=[80.5])
    with pytest.raises(ConfigError, match="^interval level 80 given twice; expected each level once"):
        model.predict(level=[80, 95, 80.0])  # merged here where the service refused it: one rule (h164)
    with pytest.raises(BundleError, match="expected a bundle folder path, got None"):
        Forecaster.load(None)
    with pytest.raises(BundleError, match="expected a bundle folder path, got None"):
        model.save(None)
    with pytest.raises(ConfigError, match=r"channels says how to read the data: give it to fit\(df"):
        Forecaster("naive", horizon=12, channels="independent")
    with pytest.raises(ConfigError, match="unknown reading option 'bogus'; expected one of calendar"):
        Forecaster("naive", horizon=12).fit(etth1, bogus=1)
    with pytest.raises(DataError, match="column 'OT' holds complex128 values; expected real numbers"):
        Forecaster("naive", horizon=12).fit(etth1.assign(OT=etth1["OT"].astype(complex)), targets=["OT"])
    flags = etth1.assign(OT=etth1["OT"] > 30)  # a flag (CSV cells TRUE / FALSE) is no quantity to forecast
    with pytest.raises(DataError, match="column 'OT' holds true/false values; expected real numbers"):
        Forecaster("naive", horizon=12).fit(flags, targets=["OT"])
    with pytest.raises(DataError, match="column 'OT' holds true/false values; expected real numbers"):
        model.predict(flags)
    # a huge horizon is refused at once, not after 2 * 10**9 steps of counting (naive needs no train window)
    assert min_rows(24, 10**9, "holdout", trained=False) == 24 + 2 * 10**9
    with pytest.raises(DataError, match="needs at least 2000000024 rows so that val and test each hold one"):
        Forecaster("naive", horizon=10**9, input_size=24).fit(etth1)


def test_save_load_round_trip_and_a_loaded_model_needs_rows(etth1, tmp_path):
    model = Forecaster("seasonal_naive", horizon=24, input_size=96).fit(etth1)
    path = model.save(tmp_path / "bundle")
    loaded = Forecaster.load(path)
    pd.testing.assert_frame_equal(loaded.predict(etth1, level=[95]), model.predict(level=[95]))
    # seasonal naive repeats the last day (through the float32 model)
    np.testing.assert_allclose(model.predict()["OT"].to_numpy(), etth1["OT"].to_numpy()[-24:], rtol=1e-6)
    with pytest.raises(ConfigError, match="predict\\(df\\)"):
        loaded.predict()
    # the constructor's levels are the saved model's: a job loading it each morning answered points only (h56)
    banded = Forecaster("seasonal_naive", horizon=24, input_size=96, level=[80, 95]).fit(etth1)
    again = Forecaster.load(banded.save(tmp_path / "banded"))
    assert again.level == [80, 95] and Forecaster.load(tmp_path / "banded", level=[50]).level == [50]
    pd.testing.assert_frame_equal(again.predict(etth1), banded.predict())
    assert "OT-lo-95" in again.predict(etth1) and Forecaster.load(path).level == []


def test_paths_beginning_with_a_tilde_are_in_the_home_folder(tmp_path, monkeypatch, capsys):
    """save('~/models/x') wrote a folder named '~' in the working folder, and a shell leaves `--out=~/x` as
    it is (h82 F22): the API and the command line read `~` as the home folder, as pandas does."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    frame = pd.DataFrame({"ds": pd.date_range("2021", periods=60), "y": np.arange(60.0)})
    frame.to_csv(tmp_path / "home.csv", index=False)
    model = Forecaster("naive", horizon=2).fit(frame, out="~/fitted")
    assert model.save("~/models/x") == home / "models" / "x" and (home / "fitted" / "config.json").is_file()
    assert Forecaster.load("~/models/x").predict(frame)["y"].tolist() == [59.0, 59.0]
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["predict", "--model=~/home/models/x", "--csv=~/home.csv", "--output=~/forecast.csv"]) == 0
    assert main(["train", "--csv=~/home.csv", "--model=naive", "--horizon=2", "--out=~/trained"]) == 0
    assert (tmp_path / "forecast.csv").is_file() and (tmp_path / "trained" / "config.json").is_file()
    assert list(work.iterdir()) == []
    from service.config import ServiceSettings  # FORECASTER_SERVE_MODELS_DIR too

    assert ServiceSettings(models_dir="~/home/models").models_dir == home / "models"


def test_a_loaded_model_refit_on_another_frequency_names_the_models_frequency(tmp_path):
    """Refused for "the freq='h' asked for", which nobody asked for: `load` gives the bundle's (h92 F4)."""
    frame = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=60, freq="h"), "y": np.arange(60.0)})
    path = Forecaster("naive", horizon=2, input_size=4).fit(frame).save(tmp_path / "naive")
    daily = frame.assign(date=pd.date_range("2024-01-01", periods=60, freq="D"))
    said = (f"the data's frequency is 'D', not 'h', the frequency of the model loaded from {path}; expected "
            "rows at that frequency, or a new Forecaster for rows of another")  # fmt: skip
    with pytest.raises(DataError, match=re.escape(said)):
        Forecaster.load(path).fit(daily)
    with pytest.raises(DataError, match=re.escape("not the freq='h' asked for")):
        Forecaster("naive", horizon=2, input_size=4, freq="h").fit(daily)


def test_a_loaded_model_fits_and_backtests_the_recipe_it_was_trained_with(etth1, tmp_path):
    """h72 F8: a loaded model's cross_validation trained the defaults (lr, seed, epochs, transform) and
    backtested another model than the one saved; the bundle records the recipe, not the machine it ran on."""
    frame = etth1[["date", "OT"]].iloc[:1200]
    asked = dict(lr=3e-3, seed=7, max_epochs=2, limit_train_batches=3, seeds=1, transform="log")
    asked["toward_naive"] = False
    model = Forecaster("nlinear", horizon=12, input_size=48, **asked).fit(frame)
    loaded = Forecaster.load(model.save(tmp_path / "bundle"))
    settings = loaded.settings
    assert (settings.lr, settings.seed, settings.seeds, settings.transform) == (3e-3, 7, 1, "log")
    assert (settings.trainer.max_epochs, settings.trainer.limit_train_batches) == (2, 3)
    assert settings.toward_naive is False and settings.input_size == 48
    assert "accelerator" not in model.bundle.training["recipe"]["trainer"]  # a GPU's bundle refits on a CPU
    backtest = model.cross_validation(frame, n_windows=2)
    pd.testing.assert_frame_equal(loaded.cross_validation(frame, n_windows=2), backtest)
    later = {**model.bundle.training["recipe"], "a_later_setting": 1}  # a later version's bundle: left out
    assert from_recipe(later, TrainerOptions()).lr == 3e-3
    with pytest.raises(ConfigError, match="lr"):
        from_recipe({**later, "lr": -1.0}, TrainerOptions())


def test_a_model_that_is_the_naive_forecast_is_said_so_and_shown_in_its_repr():
    """A random walk: its best forecast is the last value, so nothing learned beats the naive forecast on
    validation; fit() warns so as the command line prints it, and the repr names what was kept."""
    walk = np.random.default_rng(0).normal(size=300).cumsum()
    frame = pd.DataFrame({"walk": walk}, index=pd.date_range("2020-01-01", periods=300, freq="D"))
    model = Forecaster("nlinear", horizon=7, max_epochs=1, seed=0)
    assert repr(model) == "Forecaster('nlinear', horizon=7), not fitted"
    with pytest.warns(DataQualityWarning, match="DataFrame: note: the naive forecast .* is at least as good"):
        model.fit(frame)
    mse, naive = model.metrics["mse"], model.metrics["naive"]["mse"]
    assert repr(model) == f"Forecaster('nlinear', horizon=7), fitted: nlinear on walk, test MSE {mse:.4g} " \
        f"(naive {naive:.4g})"  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a baseline has nothing to say of itself
        Forecaster("naive", horizon=7).fit(frame)
    # the window's mean of a wandering walk: above the naive forecast on test, said as the command line says
    # it (fit had said nothing of a model at 2.55x naive's test MSE, h72 F9); its bands only where asked for
    said = r"on the test split the kept forecast scored above the naive forecast \(\S+ against \S+\), on "
    with pytest.warns(DataQualityWarning, match=said) as caught:
        Forecaster("mean", horizon=7, input_size=60).fit(frame)
    assert not any("coverage" in str(warning.message) for warning in caught)


@pytest.fixture(scope="module")
def ragged(long: pd.DataFrame) -> pd.DataFrame:
    """ETTh1 in long format with HUFL starting 500 hours late and OT ending 700 hours early."""
    stamps = pd.to_datetime(long["ds"])
    late = (long.unique_id == "HUFL") & (stamps < stamps.min() + pd.Timedelta(hours=500))
    early = (long.unique_id == "OT") & (stamps > stamps.max() - pd.Timedelta(hours=700))
    return long[~(late | early)].reset_index(drop=True)


def test_independent_series_of_their_own_spans(ragged, long, tmp_path, capsys):
    model = Forecaster("naive", horizon=12, input_size=48).fit(ragged, channels="independent")
    assert "mse_original" not in model.metrics  # series in their own units have no pooled original scale
    said = r"series 'OT' \(2016-11-15 11:00:00\) end\(s\) before the last row \(2016-12-14 15:00:00\)"
    with pytest.warns(DataQualityWarning, match=said):  # its forecast lies before the others' (unsaid)
        table = model.predict(level=[80])
    ends = pd.to_datetime(ragged.groupby("unique_id", sort=False)["ds"].max())
    for name, rows in table.groupby("unique_id"):
        stamps = pd.to_datetime(rows["ds"])
        assert stamps.iloc[0] == ends[name] + pd.Timedelta(hours=1) and len(rows) == 12
        last = ragged[(ragged.unique_id == name)]["y"].iloc[-1]
        np.testing.assert_allclose(
            rows["naive"].to_numpy(), last, rtol=1e-6
        )  # naive: each series' own last value
        assert (rows["naive-lo-80"] <= rows["naive"]).all() and (rows["naive-hi-80"] >= rows["naive"]).all()
    # The shared model scores every series' own test windows: its pooled MSE is the naive forecast's.
    assert model.metrics["mse"] == pytest.approx(model.metrics["naive"]["mse"], rel=1e-6)
    loaded = Forecaster.load(model.save(tmp_path / "bundle"))
    pd.testing.assert_frame_equal(loaded.predict(ragged, level=[80]), table)
    # a release without one series (published late): the others are forecast as before, the missing one named
    late = "no rows of series 'OT' that model 'bundle' learned: forecast the 6 others"
    with pytest.warns(DataQualityWarning, match=late):
        rest = loaded.predict(ragged[ragged.unique_id != "OT"], level=[80])
    pd.testing.assert_frame_equal(rest, table[table.unique_id != "OT"].reset_index(drop=True))
    whole = Forecaster("naive", horizon=12, input_size=48).fit(long)  # one model of all series needs them all
    with pytest.raises(DataError, match=r"DataFrame: missing series 'OT' that model 'naive' was trained on; "
                       r"expected series 'HUFL', .*, the rows have 'HUFL', "):  # fmt: skip
        whole.predict(long[long.unique_id != "OT"])
    renamed = long.replace({"unique_id": {"OT": "Z"}})  # the refusal named no 'Z' (h41), nor a file's
    with pytest.raises(DataError, match=r"the rows have 'HUFL', .*'LULL' and 'Z', which it did not learn$"):
        whole.predict(renamed)
    renamed.to_csv(tmp_path / "renamed.csv", index=False)
    whole.save(tmp_path / "whole")
    assert main(["predict", "--model", str(tmp_path / "whole"), "--csv", str(tmp_path / "renamed.csv")]) != 0
    said = r"renamed.csv: missing series 'OT' .* the rows have 'HUFL', .*'LULL' and 'Z', which it did not"
    assert re.search(said + " learn\n$", capsys.readouterr().err)


def test_predict_after_fit_forecasts_the_series_a_panel_trained(tmp_path):
    """A 12-day series beside 150- and 120-day ones is left out of training (a note names it); predict()
    of the training rows raised "ValueError: 'C' is not in list" and now forecasts the two, as predict(df)."""
    rng = np.random.default_rng(1)
    spans = [("A", "2019-01-01", 150, 100), ("B", "2019-03-15", 120, 5), ("C", "2019-06-01", 12, -20)]
    long = pd.concat([pd.DataFrame({"unique_id": name, "ds": pd.date_range(start, periods=rows, freq="D"),
                                    "y": level + rng.normal(0, 1, rows).cumsum()})
                      for name, start, rows, level in spans])  # fmt: skip
    with pytest.warns(DataQualityWarning, match=r"left out 1 of 3 series too short .*: 'C'"):
        model = Forecaster("naive", horizon=7).fit(long)
    assert model.bundle.data.columns == ["A", "B"]
    pd.testing.assert_frame_equal(model.predict(), model.predict(long[long.unique_id != "C"]))
    lasts = [long[long.unique_id == name]["y"].iloc[-1] for name in ("A", "B")]  # naive: each one's own last
    np.testing.assert_allclose(model.predict().groupby("unique_id")["naive"].first(), lasts, rtol=1e-6)


def test_a_named_naive_on_a_panel_forecasts_the_series_it_holds_from_their_last_value():
    """fit() of naive on 2 series of 100 days beside 8 of 6 at horizon 2: naive needs 5 rows (validation and
    test windows), but read the 2 long ones' default input and left the 8 out (h109 R5); all 10 are forecast,
    each from its own last value, as `forecaster predict` does."""
    rng = np.random.default_rng(3)
    long = pd.concat([pd.DataFrame({"unique_id": f"s{k}", "ds": pd.date_range(end="2020-06-30", periods=rows,
                                                                             freq="D"),
                                    "y": 50 + rng.normal(0, 1, rows).cumsum()})
                      for k, rows in enumerate([100, 100, *[6] * 8])])  # fmt: skip
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        model = Forecaster("naive", horizon=2).fit(long)
    assert not [note for note in said if "left out" in str(note.message)]
    answer = model.predict()
    lasts = long.groupby("unique_id")["y"].last()
    assert sorted(answer["unique_id"].unique()) == sorted(lasts.index)
    np.testing.assert_allclose(answer.groupby("unique_id")["naive"].first(), lasts, rtol=1e-6)


@pytest.mark.parametrize("model", ["naive", "mean"])
def test_a_series_that_never_moved_gets_no_band_in_a_panel_of_independent_series(model):
    """Margins pooled over independent series are in standard units; a series constant in every row its
    scaler saw has scale 1, and a rate held at 0.07 got 80% bands of 0-1.38, one held at 7000 +-1.3 (h52)."""
    rng = np.random.default_rng(8)
    dates = pd.date_range("2019-01-01", periods=48, freq="MS")
    values = {"small": np.full(48, 0.07), "big": np.full(48, 7000.0), "noise": 50 + rng.normal(0, 2, 48)}
    long = pd.concat([pd.DataFrame({"unique_id": name, "ds": dates, "y": series})
                      for name, series in values.items()])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        forecast = Forecaster(model, horizon=2).fit(long, channels="independent").predict(level=[80, 95])
    bounds = [f"{model}-{side}-{level}" for side in ("lo", "hi") for level in (80, 95)]
    for name, value in (("small", 0.07), ("big", 7000.0)):
        rows = forecast[forecast.unique_id == name]
        np.testing.assert_allclose(rows[[model, *bounds]].to_numpy(), value, rtol=1e-6)
    noise = forecast[forecast.unique_id == "noise"]
    width = (noise[f"{model}-hi-80"] - noise[f"{model}-lo-80"]).to_numpy()
    # white noise of std 2: the mean's errors have std 2, the naive's (and the random walk floor's) 2.8;
    # pooled with the constant series' zero scores, the band was 0.4x as wide
    assert (width > 0.6 * 2 * 1.2816 * 2).all() and (width < 1.4 * 2 * 1.2816 * 2 * np.sqrt(2)).all(), width


def test_independent_long_file_through_the_cli(ragged, tmp_path):
    written = _cli_train_and_predict(ragged, tmp_path, "--id-col", "unique_id", "--channels", "independent")
    api = Forecaster.load(tmp_path / "bundle").predict(ragged, level=[80])
    np.testing.assert_array_equal(written["nlinear-hi-80"].to_numpy(), api["nlinear-hi-80"].to_numpy())
    assert written.groupby("unique_id").size().eq(12).all()


def test_multivariate_refusal_points_to_independent(ragged):
    with pytest.raises(DataError, match="--channels independent"):
        Forecaster("naive", horizon=12, input_size=48).fit(ragged, channels="multivariate")
    with pytest.warns(DataQualityWarning, match="read the series as independent"):  # by default, said
        shared = Forecaster("naive", horizon=12, input_size=48).fit(ragged)
    assert shared.bundle.data.channels == "independent"


def test_service_answers_an_independent_model_as_the_api_does(etth1, tmp_path):
    from test_service import serving

    model = Forecaster("nlinear", horizon=12, input_size=48, max_epochs=1).fit(etth1, channels="independent")
    model.save(tmp_path / "models" / "shared")
    recent = etth1.iloc[-48:]
    body = {
        "timestamps": recent["date"].tolist(),
        "values": {c: recent[c].tolist() for c in recent.columns[1:]},
    }
    with serving(tmp_path / "models") as client:
        answer = client.post("/v1/models/shared/forecast", json={**body, "level": [80]})
    assert answer.status_code == 200, answer.text
    expected = model.predict(recent, level=[80])
    for column in expected.columns:
        # float32 forward passes: equal up to the summation order the torch thread count gives (an earlier
        # test of the session may have set another)
        np.testing.assert_allclose(answer.json()["forecast"][column], expected[column].to_numpy(), rtol=1e-6)


def test_service_answers_long_records_as_the_api_does(long, tmp_path):
    from test_service import serving

    model = Forecaster("nlinear", horizon=12, input_size=48, max_epochs=1).fit(long)
    model.save(tmp_path / "models" / "long")
    recent = long.groupby("unique_id").tail(60)
    with serving(tmp_path / "models") as client:
        body = {"data": recent.to_dict(orient="records"), "level": [80]}
        answer = client.post("/v1/models/long/forecast", json=body)
        bad = client.post(
            "/v1/models/long/forecast", json={"data": [{"unique_id": "OT", "ds": "x", "y": 1.0}]}
        )
        # every record with keys of its own: refused before a rows x keys table is built
        keyed = [{**record, f"extra{k}": 1.0} for k, record in enumerate(recent.to_dict(orient="records"))]
        wide = client.post("/v1/models/long/forecast", json={"data": keyed})
        gap = recent[recent["ds"] != recent["ds"].iloc[30]]  # one hour missing mid-series, in every series
        filled = client.post("/v1/models/long/forecast", json={"data": gap.to_dict(orient="records")})
        short = long.groupby("unique_id").tail(48).to_dict(orient="records")
        short[-1]["y"] = None  # OT's last value missing: its row dropped, one row too few
        dropped = client.post("/v1/models/long/forecast", json={"data": short}).json()["message"]
    assert "expected at least 48 rows" in dropped and "(as read: " in dropped
    assert "dropped the last 1 row(s)" in dropped
    assert answer.status_code == 200, answer.text
    expected = model.predict(recent, level=[80])
    got = pd.DataFrame(answer.json()["forecast"])
    assert list(got.columns) == list(expected.columns)
    lower = "nlinear-lo-80"
    np.testing.assert_allclose(got[lower].to_numpy(), expected[lower].to_numpy(), rtol=1e-6)  # thread count
    assert got["ds"].tolist() == [stamp.isoformat() for stamp in expected["ds"]]
    assert bad.status_code == 422 and bad.json()["details"][0]["field"] == "data"
    assert wide.status_code == 422 and "more than 74 distinct keys" in wide.json()["message"]  # 7 + 3 + 64
    assert answer.json()["notes"] == []
    assert filled.status_code == 200, filled.text
    assert any("filled 1" in note for note in filled.json()["notes"]), filled.json()["notes"]


def test_requests_read_at_once_each_get_their_own_notes(long, tmp_path):
    """Records of half the requests leave out a series (a note says so), the others not: read at once in
    worker threads, 32 of 120 full requests got another's note and 86 of 120 others lost theirs, when notes
    were recorded with warnings.catch_warnings (one hook for the process)."""
    from test_service import serving

    model = Forecaster("naive", horizon=12, input_size=48).fit(long, channels="independent")
    model.save(tmp_path / "models" / "long")
    recent = long.groupby("unique_id").tail(60)
    full = {"data": recent.to_dict(orient="records")}
    part = {"data": recent[recent["unique_id"] != "OT"].to_dict(orient="records")}
    with serving(tmp_path / "models") as client:
        answers = client.post_concurrently("/v1/models/long/forecast", [full, part] * 20)
    assert all(answer.status_code == 200 for answer in answers)
    notes = [answer.json()["notes"] for answer in answers]
    assert notes[0::2] == [[]] * 20
    assert all(len(said) == 1 and "no rows of series 'OT'" in said[0] for said in notes[1::2]), notes[1::2]


def test_rows_laid_out_other_than_the_model_read_them_are_refused_in_one_line(long, etth1, tmp_path, capsys):
    """Two internal errors (500s in the service): wide rows (ds, then a column per series) sent to a model of
    long rows, whose series were taken for value columns of a missing id column; and a wide file whose rows
    hold one cell more than the header at the front, whose shifted columns were taken for a panel."""
    Forecaster("naive", horizon=12, input_size=48).fit(long, channels="independent").save(tmp_path / "long")
    long.pivot(index="ds", columns="unique_id", values="y").reset_index().tail(60).to_csv(tmp_path / "w.csv")
    assert main(["predict", "--model", str(tmp_path / "long"), "--csv", str(tmp_path / "w.csv")]) != 0
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "needs columns 'unique_id', 'ds' and 'y'; missing 'unique_id'" in said
    bundle, path = tmp_path / "wide", tmp_path / "shifted.csv"
    Forecaster("naive", horizon=12, input_size=48).fit(etth1).save(bundle)
    lines = etth1.tail(100).to_csv(index=False).splitlines()
    path.write_text("\n".join([lines[0], *("7," + line for line in lines[1:])]) + "\n")
    assert main(["predict", "--model", str(bundle), "--csv", str(path)]) != 0
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "date column 'date' holds numbers that are not years or dates" in said


def test_a_series_of_too_few_rows_among_independent_ones_is_named(long):
    """A panel's one short series was refused as "expected at least 48 rows ..., got 10": of which series?"""
    model = Forecaster("naive", horizon=12, input_size=48).fit(long, channels="independent")
    recent = long.groupby("unique_id").tail(60)
    short = recent[(recent["unique_id"] != "OT") | (recent["ds"] >= recent["ds"].iloc[-10])]
    with pytest.raises(DataError, match=r"series 'OT': expected at least 48 rows \(the model's input_size\)"):
        model.predict(short)


def test_rows_without_the_models_date_parts_name_them():
    """A model dated from year / quarter columns asks for them by name, not for the reader's --no-date."""
    years, quarters = np.repeat(np.arange(1990, 2010), 4), np.tile([1, 2, 3, 4], 20)
    quarters = pd.DataFrame({"year": years, "quarter": quarters, "gdp": np.linspace(100.0, 180.0, 80)})
    model = Forecaster("naive", horizon=4, input_size=8).fit(quarters)
    assert model.predict().index[0] == (2010, 1)  # in the parts given, as the CLI writes them (h82 F21)
    expected = (r"^DataFrame: missing date column\(s\) 'quarter' that model .* reads its dates from, as its "
                r"training data had them; the rows have 'year', 'gdp'$")
    with pytest.raises(DataError, match=expected):
        model.predict(quarters.drop(columns="quarter"))


def test_an_unsaved_model_is_named_as_asked_for_and_a_removed_calibration_is_said_so(tmp_path):
    frame = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=60, freq="D"), "a": np.arange(60.0),
                          "b": np.arange(60.0) % 7})  # fmt: skip
    model = Forecaster(model="naive", horizon=2).fit(frame)
    with pytest.raises(DataError, match="that model 'naive' was trained on"):  # not its scratch folder's name
        model.predict(frame.drop(columns="b"))
    saved = model.save(tmp_path / "saved")
    (saved / "calibration.safetensors").unlink()
    with pytest.raises(ConfigError, match=r"no interval calibration \(no calibration.safetensors in its"):
        Forecaster.load(saved).predict(frame, level=[80])


@pytest.mark.parametrize(("start", "end", "freq", "expected"), [
    # days: local midnights across the change (2021-03-28 and 10-31), at +01:00 or +02:00 as Berlin's are
    ("2021-01-01", "2021-03-26", "D", ["2021-03-27 00:00:00+01:00", "2021-03-28 00:00:00+01:00",
                                      "2021-03-29 00:00:00+02:00", "2021-03-30 00:00:00+02:00"]),
    ("2021-08-01", "2021-10-29", "D", ["2021-10-30 00:00:00+02:00", "2021-10-31 00:00:00+02:00",
                                      "2021-11-01 00:00:00+01:00", "2021-11-02 00:00:00+01:00"]),
    ("2021-01-01", "2021-06-30", "D", ["2021-07-01 00:00:00+02:00", "2021-07-02 00:00:00+02:00",
                                      "2021-07-03 00:00:00+02:00", "2021-07-04 00:00:00+02:00"]),
    # hours: elapsed time, the clock skipping 02:00 on 2021-03-28
    ("2021-03-20 00:00", "2021-03-28 00:00", "h", ["2021-03-28 01:00:00+01:00", "2021-03-28 03:00:00+02:00",
                                                   "2021-03-28 04:00:00+02:00", "2021-03-28 05:00:00+02:00"]),
])  # fmt: skip
def test_a_frame_in_a_time_zone_is_forecast_in_its_zone(start, end, freq, expected):
    """A daily Berlin frame was read back at a fixed offset: its forecast ran 24 hours a step, '2021-10-31
    23:00+01:00' for 1 November (and predict() of the fitted frame answered at that offset, or zone-less)."""
    index = pd.date_range(start, end, freq=freq, tz="Europe/Berlin")
    frame = pd.DataFrame({"a": np.linspace(1, 2, len(index))}, index=index)
    model = Forecaster("naive", horizon=4).fit(frame)
    for answer in (model.predict(), model.predict(frame)):
        assert str(answer.index.tz) == "Europe/Berlin" and answer.index.astype(str).tolist() == expected


@pytest.mark.parametrize(("start", "end", "freq"), [
    ("2024-01-01", "2024-03-29", "D"),  # days: the forecast crosses Paris's change of 2024-03-31
    ("2024-01-01", "2024-04-02", "D"),  # the rows and the backtest's windows cross it
    ("2024-03-25 00:00", "2024-03-31 00:00", "h"),  # hours: the clock skips 02:00 on 2024-03-31
    ("2024-03-25 00:00", "2024-03-31 04:00", "h"),
])  # fmt: skip
def test_independent_series_in_a_time_zone_are_forecast_in_its_zone(start, end, freq):
    """A Paris panel read as independent series was answered at its last row's offset, days after the change
    at 01:00 local, or without a zone where its rows crossed the change: a merge on ds lost rows (h72 F4)."""
    times = pd.date_range(start, periods=len(pd.date_range(start, end, freq=freq)) + 4, freq=freq,
                          tz="Europe/Paris")  # fmt: skip
    index, ahead = times[:-4], times[-4:]  # the frame's times, and the user's own next ones

    def rows(at: pd.DatetimeIndex) -> pd.DataFrame:
        return pd.concat([pd.DataFrame({"unique_id": key, "ds": at}) for key in "ab"], ignore_index=True)

    frame = rows(index).assign(y=np.random.default_rng(0).normal(10, 1, 2 * len(index)))
    model = Forecaster("naive", horizon=4).fit(frame, channels="independent")
    backtest = Forecaster("naive", horizon=4).cross_validation(frame, n_windows=2, step_size=4,
                                                               channels="independent")  # fmt: skip
    future = rows(ahead)
    for answer, given in ((model.predict(), future), (model.predict(frame), future), (backtest, frame)):
        assert str(answer["ds"].dt.tz) == "Europe/Paris"
        assert freq == "h" or (answer["ds"].dt.hour == 0).all()  # days at local midnights
        assert len(given.merge(answer, on=["unique_id", "ds"])) == len(answer)
    assert model.predict()["ds"].astype(str).tolist() == future["ds"].astype(str).tolist()


def test_predict_of_the_fitted_frame_answers_periods_for_periods():
    quarters = pd.period_range("2000Q1", periods=60, freq="Q")
    frame = pd.DataFrame({"gdp": np.linspace(1, 2, 60)}, index=quarters)
    model = Forecaster("naive", horizon=2).fit(frame)
    for answer in (model.predict(), model.predict(frame)):
        assert answer.index.tolist() == [pd.Period("2015Q1", "Q-DEC"), pd.Period("2015Q2", "Q-DEC")]


def test_service_answers_records_of_whole_number_ids_with_the_same_numbers(tmp_path):
    """Ids sent as numbers come back as numbers, as `predict` gives them to a DataFrame: the records route
    answered "1" for 1, which a client matching its series by id does not find."""
    from test_service import serving

    days = pd.date_range("2021-01-01", periods=40, freq="D")
    rows = pd.concat([pd.DataFrame({"unique_id": key, "ds": days, "y": np.arange(40.0) * key})
                      for key in (1, 2)])  # fmt: skip
    model = Forecaster("naive", horizon=3, input_size=7).fit(rows)
    model.save(tmp_path / "models" / "ids")
    body = {"data": rows.astype({"ds": str}).to_dict(orient="records")}
    with serving(tmp_path / "models") as client:
        answer = client.post("/v1/models/ids/forecast", json=body)
    assert answer.status_code == 200, answer.text
    got = pd.DataFrame(answer.json()["forecast"])
    assert got["unique_id"].tolist() == [1, 1, 1, 2, 2, 2] == model.predict(rows)["unique_id"].tolist()
    assert got["naive"].tolist() == [39.0] * 3 + [78.0] * 3

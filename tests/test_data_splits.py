"""Protocol splits (7:1:2, ett), window counts per shared dataset, `forecaster data describe`."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from forecaster.cli import main
from forecaster.data import DATASETS, min_rows, split_borders, window_counts
from forecaster.data.splits import rows_per_hour
from forecaster.errors import DataError

SHARED = ["ETTh1", "ETTh2", "ETTm1", "ETTm2", "Exchange", "Weather", "ILI"]


def _describe_json(capsys, *args: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["data", "describe", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _expected_712(n: int, L: int) -> dict[str, list[int]]:
    """REFERENCE.md section 2, written out independently of the library."""
    n_tr, n_te = int(0.7 * n), int(0.2 * n)
    n_va = n - n_tr - n_te
    return {"train": [0, n_tr], "val": [n_tr - L, n_tr + n_va], "test": [n - n_te - L, n]}


def _count(a: int, b: int, L: int, H: int, stride: int = 1) -> int:
    return (b - a - L - H) // stride + 1


def test_describe_ettm2_712_borders(data_dir, capsys):
    args = ["--split", "7:1:2", "--input-size", "96", "--horizon", "96"]
    info = _describe_json(capsys, "ETTm2", "--data-dir", str(data_dir), *args)
    assert info["rows"] == 69680
    assert info["borders"] == {"train": [0, 48776], "val": [48680, 55744], "test": [55648, 69680]}
    assert info["windows"] == {
        "train": 48776 - 192 + 1, "val": 55744 - 48680 - 192 + 1, "test": 69680 - 55648 - 192 + 1
    }
    assert info["freq"] == "15min"
    assert info["columns"][-1] == "OT" and len(info["columns"]) == 7


def test_describe_ettm2_ett_borders(data_dir, capsys):
    args = ["--split", "ett", "--input-size", "96", "--horizon", "96"]
    info = _describe_json(capsys, "ETTm2", "--data-dir", str(data_dir), *args)
    assert info["borders"] == {"train": [0, 34560], "val": [34464, 46080], "test": [45984, 57600]}


@pytest.mark.parametrize("name", SHARED)
def test_window_counts_of_every_shared_dataset_follow_the_closed_form(data_dir, capsys, name):
    spec = DATASETS[name]
    L, H = spec.input_size, spec.horizons[0]
    info = _describe_json(capsys, name, "--data-dir", str(data_dir))
    assert (info["rows"], info["input_size"], info["horizon"]) == (spec.rows, L, H)
    assert info["borders"] == _expected_712(spec.rows, L)
    assert info["windows"] == {k: _count(a, b, L, H) for k, (a, b) in info["borders"].items()}
    longest = spec.horizons[-1]
    info = _describe_json(capsys, name, "--data-dir", str(data_dir), "--horizon", f"{longest}", "--stride=5")
    borders = info["borders"]
    expected = {k: _count(a, b, L, longest, 5 if k == "train" else 1) for k, (a, b) in borders.items()}
    assert info["windows"] == expected


@pytest.mark.parametrize(("name", "per_hour"), [("ETTh1", 1), ("ETTh2", 1), ("ETTm1", 4), ("ETTm2", 4)])
def test_ett_split_of_every_ett_file(data_dir, capsys, name, per_hour):
    info = _describe_json(capsys, name, "--data-dir", str(data_dir), "--split", "ett", "--horizon", "336")
    b1, b2, b3 = (per_hour * h for h in (8640, 11520, 14400))
    assert info["borders"] == {"train": [0, b1], "val": [b1 - 96, b2], "test": [b2 - 96, b3]}
    assert info["windows"] == {k: _count(a, b, 96, 336) for k, (a, b) in info["borders"].items()}


def test_describe_text_output_lists_borders_and_windows(data_dir, capsys):
    assert main(["data", "describe", "ILI", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "rows       966" in out
    assert "frequency  W-TUE" in out
    assert "range      2002-01-01 00:00:00 -> 2020-06-30 00:00:00" in out
    assert "input_size 36  horizon 24" in out
    n_tr = int(0.7 * 966)
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[-3:]}
    assert rows["train"] == ["[0,", f"{n_tr})", str(n_tr - 60 + 1)]


@pytest.mark.parametrize(
    ("freq", "expected"), [("h", 1), ("30min", 2), ("15min", 4), ("10min", 6), ("1min", 60)]
)
def test_rows_per_hour_derives_from_the_frequency(freq, expected):
    assert rows_per_hour(freq) == expected


@pytest.mark.parametrize("freq", ["D", "2h", "7min", "W-TUE", "MS", None])
def test_ett_split_rejects_frequencies_that_do_not_divide_an_hour(freq):
    with pytest.raises(DataError, match="ett split"):
        split_borders(100_000, 96, "ett", freq)


def test_ett_split_needs_the_full_twenty_months(capsys, data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["data", "describe", "Weather", "--data-dir", str(data_dir), "--split", "ett"]) == 2
    err = capsys.readouterr().err
    assert "52696 rows are too few for split ett with input_size 96 and horizon 96" in err
    assert "needs at least 86400 rows" in err


def test_unknown_split_is_a_data_error():
    with pytest.raises(DataError, match=r"unknown split '6:2:2'; expected one of 7:1:2, ett"):
        split_borders(1000, 96, "6:2:2")


@pytest.mark.parametrize(("L", "H"), [(1, 1), (36, 24), (96, 96), (96, 720), (512, 48)])
def test_min_rows_is_exactly_the_smallest_usable_length(L, H):
    needed = min_rows(L, H)
    borders = split_borders(needed, L, horizon=H)
    assert min(window_counts(borders, L, H).values()) == 1
    with pytest.raises(DataError, match=rf"{needed - 1} rows are too few .* needs at least {needed} rows"):
        split_borders(needed - 1, L, horizon=H, source="x.csv")


def test_window_counts_use_train_and_eval_strides():
    borders = {"train": (0, 100), "val": (50, 130), "test": (80, 200)}
    assert window_counts(borders, 10, 5, stride=4, eval_stride=2) == {
        "train": (100 - 15) // 4 + 1,
        "val": (80 - 15) // 2 + 1,
        "test": (120 - 15) // 2 + 1,
    }


def test_describe_registered_name_with_reader_options(data_dir, capsys):
    info = _describe_json(capsys, "etth1", "--data-dir", str(data_dir), "--targets", "OT")
    assert (info["dataset"], info["rows"], info["columns"]) == ("ETTh1", 17420, ["OT"])
    assert info["borders"] == _expected_712(17420, 96)


def test_the_earlier_validation_period_is_the_last_rows_of_train_before_it():
    from forecaster.data.splits import earlier_period

    borders = split_borders(966, 36, horizon=60)  # ILI: train 676 rows, validation 97, test 193
    assert borders["train"] == (0, 676) and borders["val"] == (640, 773)
    moved = earlier_period(borders, 36, 60)
    assert moved == {"train": (0, 579), "val": (543, 676), "test": borders["test"]}
    assert window_counts(moved, 36, 60)["val"] == window_counts(borders, 36, 60)["val"] == 38
    assert earlier_period(split_borders(100, 60, horizon=10), 60, 10) is None  # 60 train rows: no window
    # a forecast that fits nothing needs no train window, only the rows its validation windows read
    untrained = earlier_period(split_borders(100, 60, horizon=10), 60, 10, trained=False)
    assert untrained == {"train": (0, 60), "val": (0, 70), "test": (20, 100)}
    assert earlier_period(split_borders(100, 60, horizon=10), 61, 10, trained=False) is None


def test_holdout_keeps_the_last_horizon_to_test_and_the_one_before_to_validate():
    borders = split_borders(39, 11, "holdout", horizon=6)
    assert borders == {"train": (0, 27), "val": (16, 33), "test": (22, 39)}
    assert window_counts(borders, 11, 6) == {"train": 11, "val": 1, "test": 1}


@pytest.mark.parametrize(
    ("rows", "horizon", "split", "input_size"),
    [
        (69680, 96, "7:1:2", 96),  # ETTm2: the protocol, untouched
        (966, 24, "7:1:2", 96),  # ILI-sized user file: 676 train rows leave 96 as it was
        (156, 12, "7:1:2", 49),  # 13 monthly years: 109 train rows, 49 windows of 49 steps
        (39, 6, "holdout", 11),  # 39 yearly rows: 4 validation rows under 7:1:2 hold no 6-year window
        (14, 6, "holdout", 1),  # too short for any window: the split's error says how many rows it needs
    ],
)
def test_a_user_files_split_and_input_size_fit_its_length(rows, horizon, split, input_size):
    from forecaster.data.splits import default_split, fitting_input_size

    assert default_split(rows, horizon) == split
    assert fitting_input_size(rows, horizon, split, None) == input_size
    train_rows = int(0.7 * rows) if split == "7:1:2" else rows - 2 * horizon
    if input_size > 1 and input_size < 96:  # the longest input whose train windows are at least as many
        assert _count(0, train_rows, input_size, horizon) >= input_size
        assert _count(0, train_rows, input_size + 1, horizon) < input_size + 1
    if rows == 14:
        with pytest.raises(DataError, match="14 rows are too few for split holdout"):
            split_borders(rows, input_size, split, horizon=horizon)


def _usable(n_rows: int, input_size: int, horizon: int, scheme: str) -> bool:
    try:
        split_borders(n_rows, input_size, scheme, horizon=horizon)
    except DataError:
        return False
    return True


def test_the_auto_split_is_the_default_split_of_the_rows_split():
    """auto resolves by the rows it splits (a panel's series each by their own), and its errors name the
    scheme it resolved to."""
    from forecaster.data.splits import default_split, resolve_split

    for n_rows, horizon in ((46, 5), (40, 5), (1000, 24), (30, 6)):
        assert split_borders(n_rows, 4, "auto", horizon=horizon) == split_borders(
            n_rows, 4, default_split(n_rows, horizon), horizon=horizon
        )
    assert default_split(40, 5) == "holdout" and default_split(46, 5) == "7:1:2"
    with pytest.raises(DataError, match="14 rows are too few for split holdout with input_size 4"):
        split_borders(14, 4, "auto", horizon=5)
    # a trained model's count, and the baselines' beside it (describe asked 37 rows, train 25: h34's shampoo)
    with pytest.raises(DataError, match=r"needs at least 37 rows so that train, val and test each hold one "
                       r"window \(25 for a forecast that fits nothing, --model naive\); a horizon of at most "
                       r"7 fits$"):  # fmt: skip  # a trained model's input and 3 horizons: (24 - 1) // 3
        split_borders(24, 1, "holdout", horizon=12)
    # by rows and horizon only: every model of one choice, whatever its input, is scored on the same windows
    assert resolve_split("auto", 116, 8) == "7:1:2" and resolve_split("ett", 10, 1) == "ett"
    for input_size in (1, 8, 24):
        assert window_counts(split_borders(116, input_size, "auto", horizon=8), input_size, 8)["val"] == 5


def test_min_rows_is_the_count_from_which_every_split_can_use_every_row_count():
    """Against a scan down from twice the largest count that fails upward from input + horizon (the oracle),
    and for a horizon of 10**9 without that scan. Under 7:1:2 the first count that works can be followed by
    one that does not: at input 48 and horizon 13, 114 rows work and 115, 116 and 120 do not."""
    for scheme in ("7:1:2", "holdout", "auto"):
        for input_size in (1, 2, 24, 96, 336):
            for horizon in (1, 2, 3, 7, 13, 24, 720):
                counts = range(input_size + horizon, 12 * (input_size + horizon) + 40)
                failing = [n for n in counts if not _usable(n, input_size, horizon, scheme)]
                assert min_rows(input_size, horizon, scheme) == failing[-1] + 1
    assert [n for n in range(114, 125) if not _usable(n, 48, 13, "7:1:2")] == [115, 116, 120]
    with pytest.raises(DataError, match="116 rows are too few .* needs at least 121 rows"):
        split_borders(116, 48, "7:1:2", horizon=13)
    assert min_rows(96, 10**9, "holdout") == 96 + 3 * 10**9
    needed = min_rows(96, 10**9)
    assert all(_usable(n, 96, 10**9, "7:1:2") for n in range(needed, needed + 30))
    assert not _usable(needed - 1, 96, 10**9, "7:1:2")


def test_a_forecast_that_fits_nothing_needs_no_train_window_only_train_rows():
    """trained=False: validation and test hold a window and train a row to fit the scaler on; holdout's
    closed form is input + 2 horizons (31 yearly rows at horizon 10 take drift's 2-step input, 0 train
    windows; a trained model needs 32); under 7:1:2, validation and test rows each hold a horizon and the
    train rows an input, as the reference code rounds them."""
    for input_size in (1, 2, 24, 96):
        for horizon in (1, 2, 3, 7, 24, 720):
            assert min_rows(input_size, horizon, "holdout", trained=False) == input_size + 2 * horizon
            needed = min_rows(input_size, horizon, trained=False)
            for n_rows, usable in ((needed, True), (needed - 1, False)):
                n_train, n_test = int(n_rows * 0.7), int(n_rows * 0.2)  # the reference code's rounding
                val_rows, test_rows = n_rows - n_test - n_train, n_test
                held = n_train >= input_size and min(val_rows, test_rows) >= horizon and n_train >= 1
                assert held == usable
            assert needed <= min_rows(input_size, horizon)
    borders = split_borders(31, 2, "holdout", horizon=10, trained=False)
    assert window_counts(borders, 2, 10) == {"train": 0, "val": 1, "test": 1}
    with pytest.raises(DataError, match="31 rows are too few .* needs at least 32 rows"):
        split_borders(31, 2, "holdout", horizon=10)


def test_describe_names_date_parts_and_describes_a_file_too_short_for_the_default_horizon(tmp_path, capsys):
    years = np.repeat(np.arange(1990, 2000), 4)
    quarters = pd.DataFrame({"year": years, "quarter": np.tile([1, 2, 3, 4], 10), "gdp": np.arange(40.0)})
    quarters.to_csv(tmp_path / "q.csv", index=False)
    assert main(["data", "describe", str(tmp_path / "q.csv"), "--horizon", "4"]) == 0
    assert "date col   year, quarter (date parts)" in capsys.readouterr().out
    assert main(["data", "describe", "--csv", str(tmp_path / "q.csv")]) == 0  # as train takes it
    printed = capsys.readouterr().out  # a file too short to split at the default horizon: described unsplit
    assert "rows       40" in printed and "frequency  QS-JAN" in printed
    assert printed.strip().endswith("(horizon 96 is the default: give --horizon)")
    assert main(["data", "describe", str(tmp_path / "q.csv"), "--csv", str(tmp_path / "q.csv")]) == 2
    assert "expected one dataset or CSV to describe" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--horizon", "--input-size", "--stride"])
def test_describe_refuses_a_zero_it_took_for_unset(data_dir, capsys, option):
    """`--horizon 0` described 96 steps (0 read as not given), where every other command refuses it."""
    with pytest.raises(SystemExit) as refused:  # argparse's exit, as for every option of the wrong kind
        main(["data", "describe", "etth1", "--data-dir", str(data_dir), option, "0"])
    assert refused.value.code == 2
    assert f"argument {option}: expected a whole number >= 1, got '0'" in capsys.readouterr().err


@pytest.mark.parametrize("flat", [False, True])
def test_describe_splits_a_panel_of_independent_series_as_train_does(tmp_path, capsys, flat):
    """20 yearly series of 14-23 rows starting and ending apart (h38): describe printed one 24-row table's
    7:1:2 split (input 7; 7, 2 and 2 windows) while train split each series by its own rows (input 3; 149,
    20 and 29); it gives train's split, input and window counts now, leaving out as train does a series that
    never moved (`flat`)."""
    rng, rows = np.random.default_rng(38), []
    for k in range(20):
        start, length = 2000 + int(rng.integers(0, 8)), int(rng.integers(14, 24))
        rows += [(f"C{k:02d}", year, 100 + 3 * step + rng.normal()) for step, year in
                 enumerate(range(start, min(start + length, 2024)))]  # fmt: skip
    rows += [("FLAT", year, 7.0) for year in range(2004, 2024)] if flat else []
    path = tmp_path / "panel.csv"
    pd.DataFrame(rows, columns=["id", "year", "value"]).to_csv(path, index=False)
    described = _describe_json(capsys, "--csv", str(path), "--horizon", "3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["train", "--csv", str(path), "--horizon", "3", "--model", "naive", "--out",
                     str(tmp_path / "model")]) == 0  # fmt: skip
    capsys.readouterr()
    trained = json.loads((tmp_path / "model" / "config.json").read_text())
    assert (described["split"], described["input_size"]) == ("auto", trained["data"]["input_size"])
    assert described["windows"] == trained["training"]["windows"] and described["borders"] == {}
    assert main(["data", "describe", "--csv", str(path), "--horizon", "3"]) == 0
    counts = ", ".join(f"{count} {name}" for name, count in described["windows"].items())
    assert f"windows    {counts} (each series split by its own rows" in capsys.readouterr().out


@pytest.mark.parametrize(("rows", "horizon", "longest"), [(24, 12, 11), (25, 13, 12), (100, 60, 49)])
def test_a_horizon_too_long_for_the_rows_is_refused_naming_the_longest_that_fits(rows, horizon, longest):
    """Two years of months at horizon 12 (h37's shampoo sales) were refused needing 25 rows, with no word of
    the horizon the rows hold. Holdout for a forecast that fits nothing needs 1 input row and two horizons,
    and 1 train row for the scaler: (rows - 1) // 2 (closed form), found by bisection."""
    assert longest == (rows - 1) // 2
    with pytest.raises(DataError, match=rf"; a horizon of at most {longest} fits$"):
        split_borders(rows, 1, "holdout", "MS", horizon=horizon, trained=False)
    split_borders(rows, 1, "holdout", "MS", horizon=longest, trained=False)  # it does


def test_a_train_split_of_one_row_standardizes_by_the_rows_before_test():
    """7 yearly rows at horizon 3 leave the holdout split's train one row, without spread: every scale was
    1 and a World Bank panel's "standardized" MSE was 1.4e12, squared vehicles (h42). The scaler is fit on the
    rows before the test split's targets there; on a train split of two rows or more, on the train rows."""
    from forecaster.api import Forecaster

    years = np.arange(2004, 2011)
    values = np.array([[1e6, 5.0], [1.2e6, 5.5], [1.3e6, 6.1], [1.1e6, 6.0], [1.5e6, 6.8], [1.6e6, 7.0],
                       [1.4e6, 7.9]])  # fmt: skip
    frame = pd.DataFrame(values, columns=["vehicles", "rate"], index=years)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = Forecaster("naive", horizon=3).fit(frame).bundle.scaler
    np.testing.assert_allclose(scaler.mean, values[:4].mean(axis=0))
    np.testing.assert_allclose(scaler.scale, values[:4].std(axis=0))
    longer = pd.DataFrame(np.tile(values, (2, 1)), columns=frame.columns, index=np.arange(2000, 2014))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Forecaster("naive", horizon=3).fit(longer)
    train = split_borders(14, model.bundle.data.input_size, "holdout", horizon=3)["train"]
    assert train[1] - train[0] > 1
    np.testing.assert_allclose(model.bundle.scaler.scale, longer.to_numpy()[slice(*train)].std(axis=0))


def test_describe_returns_the_reading_notes_and_prints_them_as_notes(tmp_path, capsys):
    """A file with two missing months: describe returns the reader's note under "warnings" and prints it as
    train does, a note ("forecaster: FILE: note: ..."), not "forecaster: warning: ..." (h43 #6)."""
    months = pd.date_range("2000-01-01", periods=60, freq="MS").delete([20, 21])
    frame = pd.DataFrame({"month": months.strftime("%Y-%m-%d"), "sales": np.arange(58.0)})
    frame.to_csv(tmp_path / "gapped.csv", index=False)
    described = _describe_json(capsys, str(tmp_path / "gapped.csv"), "--horizon", "6")
    assert len(described["warnings"]) == 1 and "filled 2 missing time step(s)" in described["warnings"][0]
    assert main(["data", "describe", str(tmp_path / "gapped.csv"), "--horizon", "6"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"forecaster: {described['warnings'][0]}"]


def test_the_test_split_alone_names_the_rows_it_needs() -> None:
    """A seasonal drift kept over the 24 rows before holdout's test split (`training.growth`) is evaluated on
    a test window of 24 + 12 rows: 35 rows were refused as needing 48, validation's too."""
    assert split_borders(36, 24, "holdout", "MS", horizon=12, trained=False, only="test")["test"] == (0, 36)
    expected = "35 rows are too few for split holdout with input_size 24 and horizon 12: needs at least 36"
    with pytest.raises(DataError, match=f"{expected} rows so that the test split holds a window"):
        split_borders(35, 24, "holdout", "MS", horizon=12, trained=False, only="test")

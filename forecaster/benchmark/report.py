"""The grid's reports, rewritten from every row of results.csv after each cell: summary.md (MSE and MAE
tables, mean ± std, best per row in bold, the paper's S3Attention column, the settings of every model)
and the MSE-by-horizon plot."""

from __future__ import annotations

import json
import math
import platform
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from forecaster.atomic import write_atomically
from forecaster.benchmark.grid import DEFAULT_MODELS, BenchmarkConfig, Source, sources
from forecaster.benchmark.lineup import MADE, NAIVE_MODEL, OWN_MODEL, TUNED, TUNED_TRIALS, product_spec

SUMMARY_FILE = "summary.md"
PLOT_FILE = "mse_by_horizon.png"


# Paper 001 Table 2 (REFERENCE.md section 2): S3Attention MSE / MAE at input 96 (ILI 36), 7:1:2 split.
PAPER_S3ATTENTION: dict[str, dict[int, tuple[float, float]]] = {
    "ETTm2": {96: (0.192, 0.283), 192: (0.255, 0.324), 336: (0.324, 0.364), 720: (0.431, 0.433)},
    "Electricity": {96: (0.218, 0.332), 192: (0.259, 0.361), 336: (0.267, 0.367), 720: (0.293, 0.385)},
    "Exchange": {96: (0.086, 0.204), 192: (0.188, 0.292), 336: (0.356, 0.433), 720: (0.727, 0.669)},
    "Traffic": {96: (0.592, 0.352), 192: (0.583, 0.343), 336: (0.598, 0.346), 720: (0.641, 0.397)},
    "Weather": {96: (0.182, 0.262), 192: (0.228, 0.306), 336: (0.295, 0.355), 720: (0.383, 0.418)},
    "ILI": {24: (2.431, 0.997), 36: (2.287, 0.972), 48: (2.418, 1.002), 60: (2.425, 1.043)},
}


def _aggregate(results: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean, sample std and count of `metric` per (dataset, horizon, model)."""
    return (
        results.groupby(["dataset", "horizon", "model"], sort=False)[metric]
        .agg(["mean", "std", "count"])
        .reset_index()
    )


def _cell_text(mean: float, std: float, count: int, repeats: int, best: bool) -> str:
    text = f"{mean:.3f}" if count < 2 or math.isnan(std) else f"{mean:.3f} ± {std:.3f}"
    if count < repeats:
        text += f" (n={count})"
    return f"**{text}**" if best else text


def _metric_table(results: pd.DataFrame, metric: str, models: list[str], repeats: int) -> list[str]:
    stats = _aggregate(results[results["model"].astype(str).isin(models)], metric)
    paper_index = 0 if metric == "mse" else 1
    lines = [
        "| dataset | horizon | " + " | ".join(models) + " | paper S3Attention |",
        "|---|---|" + "---|" * len(models) + "---|",
    ]
    for (dataset, horizon), group in stats.groupby(["dataset", "horizon"], sort=False):
        by_model = {row.model: row for row in group.itertuples()}
        best = min(by_model.values(), key=lambda row: row.mean).model
        cells = [
            _cell_text(by_model[m].mean, by_model[m].std, int(by_model[m].count), repeats, m == best)
            if m in by_model else "-"
            for m in models
        ]
        paper = PAPER_S3ATTENTION.get(dataset, {}).get(int(horizon))
        cells.append(f"{paper[paper_index]:.3f}" if paper else "-")
        lines.append(f"| {dataset} | {horizon} | " + " | ".join(cells) + " |")
    return lines


def _input_sizes(results: pd.DataFrame, config: BenchmarkConfig) -> str:
    """"96" or "96 (ILI 36)": the input size of each dataset in the results (a preset may differ)."""
    sizes = {name: source.input_size for name, source in _sources(results, config).items()}
    common = max(set(sizes.values()), key=list(sizes.values()).count) if sizes else 96
    others = ", ".join(f"{name} {size}" for name, size in sizes.items() if size != common)
    return f"{common} ({others})" if others else str(common)


def _machine() -> str:
    import torch

    from forecaster.devices import machine_name

    return f"{platform.node() or 'unknown host'}, {machine_name()}, torch {torch.__version__}"


def _device_counts(results: pd.DataFrame) -> str:
    """"CPU (2 cores) 208 rows, NVIDIA H100 80GB HBM3 32 rows": a directory can gather runs from machines."""
    counts = results["device"].astype(str).value_counts(sort=False)
    return ", ".join(f"{device} {count} row{'s' if count != 1 else ''}" for device, count in counts.items())


def _model_order(results: pd.DataFrame) -> list[str]:
    """The models in results in one order (DEFAULT_MODELS first), whichever run writes the reports last."""
    present = list(dict.fromkeys(results["model"].astype(str)))
    return [m for m in DEFAULT_MODELS if m in present] + [m for m in present if m not in DEFAULT_MODELS]


def _sources(results: pd.DataFrame, config: BenchmarkConfig) -> dict[str, Source]:
    """The grid sources of the datasets in `results`: the registered ones, and the config's CSV."""
    from forecaster.data import get_spec

    found = {source.name: source for source in sources(config)} if config.csv is not None else {}
    for name in dict.fromkeys(results["dataset"].astype(str)):
        if name not in found:
            spec = get_spec(name)
            found[name] = Source(spec.name, spec.input_size, spec.horizons, spec.freq)
    return found


def _headline(models: list[str]) -> list[str]:
    """The models of the main tables: all but the MODEL:PRESET candidates, which get their own table."""
    return [model for model in models if product_spec(model) is None or model == OWN_MODEL]


def _step1_table(results: pd.DataFrame, models: list[str]) -> list[str]:
    """Per dataset: each model's test MSE at forecast step 1 (mean over horizons and seeds) and its ratio
    to the naive forecast's; a model that jumps away from the last observation shows here."""
    known = results.dropna(subset=["mse_step1"])
    means = known.groupby(["dataset", "model"], sort=False)["mse_step1"].mean()
    shown = [model for model in models if model in set(known["model"].astype(str))]
    lines = ["| dataset | " + " | ".join(shown) + " |", "|---|" + "---|" * len(shown)]
    for dataset in dict.fromkeys(known["dataset"].astype(str)):
        naive = means.get((dataset, NAIVE_MODEL))
        cells = []
        for model in shown:
            value = means.get((dataset, model))
            ratio = f" ({value / naive:.2f}x)" if value is not None and naive and model != NAIVE_MODEL else ""
            cells.append("-" if value is None else f"{value:.3f}{ratio}")
        lines.append(f"| {dataset} | " + " | ".join(cells) + " |")
    return lines


def _interval_table(results: pd.DataFrame, models: list[str]) -> list[str]:
    """Per dataset, horizon and model with calibrated intervals: mean test coverage of the 80% and 95%
    intervals and their interval (Winkler) scores, standardized, over the seeds that have them (n)."""
    known = results.dropna(subset=["coverage_80"]) if "coverage_80" in results else results.iloc[:0]
    if known.empty:
        return []
    columns = ["coverage_80", "coverage_95", "interval_score_80", "interval_score_95"]
    lines = ["| dataset | horizon | model | n | 80% coverage | 95% coverage | 80% score | 95% score |",
             "|---|---|---|---|---|---|---|---|"]
    order = {model: index for index, model in enumerate(models)}
    groups = known.groupby(["dataset", "horizon", "model"], sort=False)[columns]
    means, counts = groups.mean(), groups.size()
    keys = sorted(means.index, key=lambda key: (str(key[0]), key[1], order.get(key[2], len(order))))
    for dataset, horizon, model in keys:
        row = means.loc[(dataset, horizon, model)]
        cells = [f"{row[column]:.3f}" for column in columns]
        lines.append(f"| {dataset} | {horizon} | {model} | {counts[(dataset, horizon, model)]} | "
                     + " | ".join(cells) + " |")
    return lines


def _kept(members: Any) -> str:
    """A made row's `members` as text: the one candidate kept, or the ensemble with its weights."""
    weights = json.loads(members) if isinstance(members, str) and members else {}
    if len(weights) == 1:
        return next(iter(weights))
    return "ensemble: " + ", ".join(f"{name} {weight:.2f}" for name, weight in weights.items())


def _choice_table(results: pd.DataFrame) -> list[str]:
    """What s3attention-auto and auto kept at seed 0, per dataset and horizon."""
    made = results[results["model"].astype(str).isin(MADE) & (results["repeat"] == 0)]
    picks = made.assign(kept=made["members"].map(_kept)).pivot_table(
        index=["dataset", "horizon"], columns="model", values="kept", aggfunc="first", sort=False
    )
    names = [name for name in MADE if name in picks.columns]
    lines = ["| dataset | horizon | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for (dataset, horizon), row in picks.iterrows():
        cells = [row[name] if isinstance(row[name], str) else "-" for name in names]  # "-": not run yet
        lines.append(f"| {dataset} | {horizon} | " + " | ".join(cells) + " |")
    return lines


def write_summary(results: pd.DataFrame, config: BenchmarkConfig, path: Path) -> Path:
    """summary.md: MSE and MAE tables (mean ± std, best per row in bold, paper column) of the models and of
    the made rows, the candidates' own table, the choices, step-1 errors, and the settings."""
    results = results.sort_values(["dataset", "horizon", "repeat"], kind="stable")
    models = _model_order(results)
    headline = _headline(models)
    candidate_models = [model for model in models if model not in headline]
    lines = [
        "# Benchmark results",
        "",
        f"Written {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {_machine()}.",
    ]
    if config.command:
        lines += ["", f"Latest command: `{config.command}` (the tables hold every row of results.csv, "
                  "whichever run into this directory made it)."]
    lines += [
        "",
        f"Split {config.split}; input {_input_sizes(results, config)}; train-fit standardization; metrics on "
        "the "
        "standardized scale over every test window (stride 1, no drop_last). Cells: mean ± sample std over "
        f"repeats (seeds 0..{config.repeats - 1}); the lowest mean per row is bold; (n=k) marks cells with "
        "fewer repeats than asked. The last column is the paper's S3Attention (paper 001 Table 2).",
    ]
    if results.empty:
        lines += ["", "No finished cells yet."]
    else:
        lines += ["", f"Trained on: {_device_counts(results)} (results.csv's device column; its "
                  "train_seconds are only comparable between rows of one device)."]
        for metric in ("mse", "mae"):
            table = _metric_table(results, metric, headline, config.repeats)
            lines += ["", f"## {metric.upper()}", "", *table]
        if set(MADE) & set(results["model"].astype(str)):
            lines += ["", "## Chosen rows", "", "s3attention-auto and auto are not trained themselves: they "
                      "are what `forecaster train --preset auto` (S3Attention's variants) and `forecaster "
                      "train --model auto` (the baselines and those variants) keep at each seed among the "
                      "candidates' runs of that seed (naive and seasonal naive as one, the better of the two "
                      "on validation): the simplest within two standard errors of the lowest "
                      "validation MSE and not beaten by it on more validation blocks than chance allows (an "
                      "exact sign test at the same level), or their ensemble (greedy ensemble selection on "
                      "validation, kept on the same evidence); shown: seed 0. The test split is never read "
                      "for a choice.",
                      "", *_choice_table(results)]
        if candidate_models:
            lines += ["", "## Candidates (MSE)", "",
                      *_metric_table(results, "mse", candidate_models, config.repeats)]
        lines += ["", "## MSE at forecast step 1", "", "Mean over each dataset's horizons and seeds; in "
                  "parentheses, the ratio to the naive forecast's.", "", *_step1_table(results, headline)]
        intervals = _interval_table(results, models)
        if intervals:
            lines += ["", "## Prediction intervals", "", "Test coverage of the 80% and 95% intervals each "
                      "bundle calibrated on its validation split (conformal around the point forecast; "
                      "conformalized quantiles for a quantile head), and their interval scores (Winkler: "
                      "width plus 2 / (1 - level) times the miss; lower is better; standardized).",
                      "", *intervals]
    not_run = [name for name in PAPER_S3ATTENTION if name not in set(results["dataset"].astype(str))]
    if not_run and config.csv is None:
        lines += ["", f"Not run here: {', '.join(not_run)} (in the paper's table; no row in results.csv)."]
    lines += ["", "## Settings", "", *_settings_lines(config, models)]
    return write_atomically(path, lambda staged: staged.write_text("\n".join(lines) + "\n"))


def _own_model_lines(models: list[str]) -> list[str]:
    """How forecaster-model cells train, read from the presets and the config defaults."""
    from forecaster.checks import default_of
    from forecaster.models import S3AttentionConfig
    from forecaster.presets import PRESETS, TRAINING_DEFAULTS

    config = ", ".join(f"{field.name} {default_of(S3AttentionConfig, field.name)}"
                       for field in fields(S3AttentionConfig) if field.metadata.get("cli"))  # fmt: skip
    lines = [f"- s3attention config defaults (the reference code's): {config}; AdamW lr "
             f"{TRAINING_DEFAULTS['lr']} unless a preset says otherwise; sampled index sets seeded by the "
             "repeat."]
    specs = {product_spec(model) for model in models if product_spec(model) is not None}
    for model, name in sorted(specs):
        chosen = PRESETS.get(model, {}).get(name)
        if chosen is None:
            continue
        column = " (the s3attention column)" if (model, name) == product_spec(OWN_MODEL) else ""
        lines.append(f"- {model}:{name}{column}: {chosen.source}; model {chosen.model or '{}'}, training "
                     f"{chosen.training or '{}'}, per dataset {chosen.datasets or '{}'}.")
    return lines


def _seeds_line(seeds: int | None) -> str:
    """How many models a forecaster run averages (training.members.member_seeds)."""
    from forecaster.training.members import SEED_STRIDE
    from forecaster.training.settings import BAG_SEEDS, LONGER_INPUT, SMALL_TRAIN_WINDOWS

    members = f"trained from seeds repeat + k * {SEED_STRIDE:,}"
    if seeds is not None:
        return f"- Every forecaster run averages {seeds} model(s) {members}."
    return (f"- A forecaster run on fewer than {SMALL_TRAIN_WINDOWS:,} train windows (ILI) averages "
            f"{2 * BAG_SEEDS} models {members}, {BAG_SEEDS} reading its input size and {BAG_SEEDS} reading "
            f"{LONGER_INPUT} times it where the rows allow, as `forecaster train` does, unless its preset "
            "trains one model as published (reference, paper).")


def _settings_lines(config: BenchmarkConfig, models: list[str]) -> list[str]:
    lines = [
        f"- Budget for every model: at most {config.max_epochs} epochs, early stopping after "
        f"{config.patience} epochs without a lower validation MSE, best-validation weights restored, batch "
        f"{config.batch_size} windows; MSE loss; no calendar features.",
        _seeds_line(config.seeds),
    ]
    lines += _own_model_lines(models)
    if NAIVE_MODEL in models:
        lines.append("- naive: the last input step repeated over the horizon (no training; identical for "
                     "every repeat).")
    if TUNED in models:
        lines.append(f"- s3attention-tuned: `forecaster tune --model s3attention --trials {TUNED_TRIALS}` at "
                     "seed 0 (Optuna TPE, ASHA stopping, scored on validation; trials under tuning/), the "
                     "settings it keeps (the best trial's only if clearly better on validation than the "
                     "untuned ones; tuning/*/kept.json) trained at every seed.")
    peers = [model for model in models
             if product_spec(model) is None and model not in (*MADE, NAIVE_MODEL, TUNED)]
    if peers:
        from forecaster.integrations.neuralforecast import describe_peer

        lines.append(
            "- neuralforecast peers: the standardized array in long format (one unique_id per column, "
            "integer ds), scaler_type identity, val_size/test_size of the split with test forecasts at "
            "step 1 (= cross_validation refit=False), one epoch = our train loader's batches as steps, "
            "validation once per epoch, identical test window counts asserted; channel-independent peers "
            "gather only their sampled training windows (forecaster's WindowsOnDemand: the same batches and "
            "weights as neuralforecast's own windowing, which copies every window at every step)."
        )
        lines += [f"- {peer}: {describe_peer(peer)}" for peer in peers]
    return lines


def mse_figure(results: pd.DataFrame) -> Any:
    """Test MSE by horizon, a panel per dataset, a line per model (± std), paper S3Attention dashed.

    A model keeps one colour in every panel and the one legend lists every model drawn.
    """
    from matplotlib.figure import Figure

    datasets = list(dict.fromkeys(results["dataset"].astype(str)))
    colours = {model: f"C{index % 10}" for index, model in enumerate(_model_order(results))}
    figure = Figure(figsize=(4.5 * max(1, len(datasets)) + 1.5, 3.6), layout="constrained")
    axes = figure.subplots(1, max(1, len(datasets)), squeeze=False)[0]
    stats = _aggregate(results, "mse")
    legend: dict[str, Any] = {}
    for axis, dataset in zip(axes, datasets, strict=False):
        subset = stats[stats["dataset"].astype(str) == dataset]
        for model, group in subset.groupby("model", sort=False):
            group, name = group.sort_values("horizon"), str(model)
            legend[name] = axis.errorbar(group["horizon"], group["mean"], yerr=group["std"].fillna(0.0),
                                         marker="o", capsize=3, color=colours[name], label=name)
        paper = PAPER_S3ATTENTION.get(dataset, {})
        horizons = [h for h in sorted(subset["horizon"].unique()) if int(h) in paper]
        if horizons:
            (legend["paper S3Attention"],) = axis.plot(horizons, [paper[int(h)][0] for h in horizons], "k--x",
                                                       label="paper S3Attention")
        axis.set_title(dataset)
        axis.set_xlabel("horizon")
        axis.set_ylabel("test MSE (standardized)")
        axis.set_xticks(sorted(subset["horizon"].unique()))
    if legend:
        order = [*colours, *(label for label in legend if label not in colours)]
        figure.legend([legend[label] for label in order], order, loc="outside right upper", fontsize="small")
    return figure


def plot_results(results: pd.DataFrame, path: Path) -> Path:
    """mse_figure of the main tables' models as a PNG, written atomically."""
    headline = _headline(_model_order(results))
    figure = mse_figure(results[results["model"].astype(str).isin(headline)])
    return write_atomically(path, lambda staged: figure.savefig(staged, dpi=100, format="png"))



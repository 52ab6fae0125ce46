"""The `forecaster` command: one argparse tree, each handler a thin call into the library.

Heavy imports (torch, Lightning, uvicorn, neuralforecast) happen inside the handlers so that
`forecaster --help` and `forecaster data describe` start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from forecaster.errors import ForecasterError


def _add_data_commands(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="inspect and obtain datasets")
    data_sub = data.add_subparsers(dest="data_command", required=True)

    describe = data_sub.add_parser(
        "describe", help="rows, columns, frequency, date range, split borders and window counts"
    )
    describe.add_argument("source", metavar="NAME_OR_CSV", help="registered dataset (e.g. ETTm2) or CSV path")
    describe.add_argument("--data-dir", help="directory searched first for registered datasets")
    describe.add_argument("--split", default="7:1:2", choices=["7:1:2", "ett"], help="split scheme")
    describe.add_argument("--input-size", type=int, help="input length L (default: registry value, else 96)")
    describe.add_argument("--horizon", type=int, help="horizon H (default: first registered one, else 96)")
    describe.add_argument("--stride", type=int, default=1, help="rows between train windows")
    _add_csv_arguments(describe)
    describe.add_argument("--targets", help="comma-separated target columns (default: all numeric columns)")
    describe.add_argument("--json", action="store_true", help="print one JSON object")
    describe.set_defaults(handler=_data_describe)

    download = data_sub.add_parser("download", help="fetch a registered dataset and verify its sha256")
    download.add_argument("name", metavar="NAME", help="a registered dataset, e.g. ETTm2")
    download.add_argument("--data-dir", help="target directory (default: $FORECASTER_DATA_DIR, else ./data)")
    download.add_argument("--url", help="download from this mirror (http(s)://, file:// or a local path)")
    download.add_argument("--force", action="store_true", help="download even if the file is present")
    download.set_defaults(handler=_data_download)

    verify = data_sub.add_parser("verify", help="check the sha256 of registered datasets that are present")
    verify.add_argument("names", nargs="*", metavar="NAME", help="datasets to check (default: all)")
    verify.add_argument("--data-dir", help="directory searched first")
    verify.set_defaults(handler=_data_verify)


def _data_describe(args: argparse.Namespace) -> int:
    import json

    from forecaster.data.describe import describe, format_description

    info = describe(
        args.source,
        data_dir=args.data_dir,
        split=args.split,
        input_size=args.input_size,
        horizon=args.horizon,
        stride=args.stride,
        date_col=args.date_col,
        targets=[t.strip() for t in args.targets.split(",")] if args.targets else None,
        no_date=args.no_date,
        fill_missing=args.fill_missing,
    )
    for message in info["warnings"]:
        print(f"forecaster: warning: {message}", file=sys.stderr)
    print(json.dumps(info) if args.json else format_description(info))
    return 0


def _data_download(args: argparse.Namespace) -> int:
    from forecaster.data.download import download_dataset

    print(download_dataset(args.name, args.data_dir, url=args.url, force=args.force))
    return 0


def _data_verify(args: argparse.Namespace) -> int:
    from forecaster.data import DATASETS
    from forecaster.data.download import verify_dataset

    results = [verify_dataset(name, args.data_dir) for name in (args.names or DATASETS)]
    for result in results:
        print(f"{result['name']:<12} {result['status']:<9} {result['path'] or '-'}")
    return 1 if any(result["status"] == "mismatch" for result in results) else 0


def _add_bench_commands(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="speed and memory benchmarks that print tables")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    _add_bench_serve_command(bench_sub)
    _add_bench_smoother_command(bench_sub)
    _add_bench_attention_command(bench_sub)
    _add_bench_scaling_command(bench_sub)


def _add_source_arguments(parser: argparse.ArgumentParser, *, targets: bool) -> None:
    """--dataset NAME | --csv FILE, plus the CSV reading options (shared by train, evaluate)."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", metavar="NAME", help="registered benchmark dataset, e.g. ETTm2")
    source.add_argument("--csv", metavar="FILE", help="CSV file with a date column and numeric columns")
    _add_csv_arguments(parser)
    if targets:
        parser.add_argument("--targets", help="comma-separated columns to forecast (default: all numeric)")
    parser.add_argument("--data-dir", help="directory searched first for registered datasets")


def _add_csv_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--date-col", help="name of the date column (default: found automatically)")
    parser.add_argument("--no-date", action="store_true", help="the file has no dates: use integer steps")
    parser.add_argument("--fill-missing", choices=["ffill", "interpolate"], help="fill missing values")


def _csv_options(args: argparse.Namespace) -> dict:
    """Reading options for a CSV scored by a bundle (unset ones default to the bundle's)."""
    return {"date_col": args.date_col, "no_date": args.no_date or None, "fill_missing": args.fill_missing}


def _devices(value: str) -> int | str:
    return int(value) if value.isdigit() else value


def _fraction_or_count(value: str) -> int | float:
    """Lightning's convention: an integer is a number of batches, a float a fraction of them."""
    return int(value) if value.isdigit() else float(value)


def _add_train_commands(sub: argparse._SubParsersAction) -> None:
    train = sub.add_parser(
        "train", help="train a forecaster from a dataset or CSV and save a model bundle",
        description="Train with early stopping on validation MSE, restore the best weights, report test "
        "MSE/MAE and save a bundle (config.json, weights.safetensors, metrics.json) at --out.",
    )
    _add_source_arguments(train, targets=True)
    train.add_argument("--horizon", type=int, required=True, help="forecast length H")
    train.add_argument("--input-size", type=int, help="history length L (default: registry value, else 96)")
    train.add_argument("--split", default="7:1:2", choices=["7:1:2", "ett"], help="split scheme")
    train.add_argument("--model", default="s3attention", help="registered model name")
    model = train.add_argument_group("model options (default: the dataset preset, else the model defaults)")
    model.add_argument("--d-model", type=int, help="model width D")
    model.add_argument("--n-heads", type=int, help="attention heads")
    model.add_argument("--e-layers", type=int, help="encoder layers")
    model.add_argument("--left-rank", type=int, help="sampled token positions of skeleton attention")
    model.add_argument("--right-rank", type=int, help="sampled head dimensions of skeleton attention")
    model.add_argument("--fold", type=int, help="channel groups of the smoother")
    model.add_argument("--n-harmonics", type=int, help="Fourier harmonics kept (default: horizon)")
    model.add_argument("--dropout", type=float, help="dropout rate")
    model.add_argument("--ffn", action="store_true", default=None, help="add a feed-forward block per layer")
    fit = train.add_argument_group("training")
    fit.add_argument("--max-epochs", type=int, default=10, help="epoch budget (default 10)")
    fit.add_argument("--patience", type=int, default=3, help="early-stopping patience in epochs (default 3)")
    fit.add_argument("--batch-size", type=int, default=32, help="training batch size (default 32)")
    fit.add_argument("--lr", type=float, default=1e-4, help="AdamW learning rate (default 1e-4)")
    fit.add_argument("--weight-decay", type=float, default=0.01, help="AdamW weight decay (default 0.01)")
    fit.add_argument("--lr-schedule", default="none", choices=["none", "cosine"], help="LR schedule")
    fit.add_argument("--seed", type=int, default=0, help="seed for weights, sampling and shuffling")
    fit.add_argument("--gradient-clip", type=float, help="clip gradient norm to this value")
    fit.add_argument("--deterministic", action="store_true", help="use deterministic algorithms only")
    fit.add_argument(
        "--limit-train-batches", type=_fraction_or_count, help="batches per epoch: a count, or a fraction"
    )
    fit.add_argument("--accelerator", default="auto", help="cpu, gpu, ... (default auto)")
    fit.add_argument("--devices", type=_devices, default="auto", help="number of devices (default auto)")
    fit.add_argument("--strategy", default="auto", help="e.g. ddp for several devices (default auto)")
    fit.add_argument("--resume", action="store_true", help="continue an interrupted run (last checkpoint)")
    fit.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.add_argument("--out", required=True, metavar="DIR", help="bundle directory to create")
    train.add_argument("--overwrite", action="store_true", help="replace an existing bundle at --out")
    train.set_defaults(handler=_train)


def _series_source(args: argparse.Namespace):
    from forecaster.training.workflows import SeriesSource

    targets = getattr(args, "targets", None)
    return SeriesSource(
        dataset=args.dataset,
        csv=args.csv,
        data_dir=args.data_dir,
        date_col=args.date_col,
        targets=[t.strip() for t in targets.split(",")] if targets else None,
        no_date=args.no_date,
        fill_missing=args.fill_missing,
    )


def _print_metrics(metrics: dict) -> None:
    print(f"test MSE {metrics['mse']:.4f}  MAE {metrics['mae']:.4f}  (standardized)")
    print(f"test MSE {metrics['mse_original']:.4g}  MAE {metrics['mae_original']:.4g}  (original units)")
    print(f"test windows {metrics['windows']}")


def _train(args: argparse.Namespace) -> int:
    from forecaster.training.trainer import TrainerOptions
    from forecaster.training.workflows import TrainSettings, check_out_dir, train_forecaster, work_dir_for

    check_out_dir(args.out, args.overwrite)
    option_names = ("d_model", "n_heads", "e_layers", "left_rank", "right_rank", "fold", "n_harmonics")
    model_options = {name: getattr(args, name) for name in (*option_names, "dropout", "ffn")}
    settings = TrainSettings(
        horizon=args.horizon,
        input_size=args.input_size,
        split=args.split,
        model_name=args.model,
        model_options={name: value for name, value in model_options.items() if value is not None},
        batch_size=args.batch_size,
        lr=args.lr,
        weight_decay=args.weight_decay,
        lr_schedule=args.lr_schedule,
        seed=args.seed,
        trainer=TrainerOptions(
            max_epochs=args.max_epochs,
            patience=args.patience,
            accelerator=args.accelerator,
            devices=args.devices,
            strategy=args.strategy,
            gradient_clip_val=args.gradient_clip,
            deterministic=args.deterministic,
            limit_train_batches=args.limit_train_batches,
            progress_bar=not args.no_progress,
        ),
        resume=args.resume,
        overwrite=args.overwrite,
    )
    outcome = train_forecaster(_series_source(args).load(), args.out, settings)
    if outcome is None:
        return 0
    training = outcome.training
    print(
        f"trained {training['epochs']} epoch(s) in {training['train_seconds']:.1f} s; "
        f"best epoch {training['best_epoch']} (val MSE {outcome.metrics['best_val_mse']:.4f})"
    )
    _print_metrics(outcome.metrics)
    print(f"bundle saved to {outcome.bundle_path}")
    print(f"checkpoints and logs in {work_dir_for(outcome.bundle_path)}")
    return 0


def _add_evaluate_commands(sub: argparse._SubParsersAction) -> None:
    evaluate = sub.add_parser(
        "evaluate", help="test-split MSE/MAE of a bundle on a dataset or CSV",
        description="Score a bundle on the test split of the data, using the bundle's split, input size "
        "and train scaler.",
    )
    evaluate.add_argument("--model", required=True, metavar="DIR", help="model bundle directory")
    _add_source_arguments(evaluate, targets=False)
    evaluate.add_argument("--accelerator", default="auto", help="cpu, gpu, ... (default auto)")
    evaluate.add_argument(
        "--json", action="store_true", help="one JSON object: mse, mae, mse_original, mae_original, windows"
    )
    evaluate.set_defaults(handler=_evaluate)


def _evaluate(args: argparse.Namespace) -> int:
    import json

    from forecaster.artifacts import load_bundle
    from forecaster.training.prediction import read_series_for_bundle
    from forecaster.training.workflows import evaluate_bundle

    bundle = load_bundle(args.model)
    if args.csv:
        series = read_series_for_bundle(bundle, args.csv, **_csv_options(args))
    else:
        series = _series_source(args).load()
    metrics = evaluate_bundle(bundle, series, accelerator=args.accelerator, progress_bar=not args.json)
    if args.json:
        print(json.dumps(metrics))
    else:
        print(f"model {bundle.name} ({bundle.model_name}) on {series.source}, split {bundle.data.split}")
        _print_metrics(metrics)
    return 0


def _add_predict_commands(sub: argparse._SubParsersAction) -> None:
    predict = sub.add_parser(
        "predict", help="forecast the horizon after the last row of a CSV file",
        description="Forecast with a bundle from the last input_size rows of FILE; timestamps continue "
        "the file's frequency.",
    )
    predict.add_argument("--model", required=True, metavar="DIR", help="model bundle directory")
    predict.add_argument("--csv", required=True, metavar="FILE", help="history: the bundle's columns")
    _add_csv_arguments(predict)
    predict.add_argument("--output", metavar="CSV", help="write the forecast here (default: print it)")
    predict.add_argument("--plot", metavar="PNG", help="write a plot of history and forecast")
    predict.add_argument(
        "--plot-history", type=int, metavar="ROWS", help="history rows in the plot (default: input size)"
    )
    predict.set_defaults(handler=_predict)


def _predict(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forecaster.artifacts import load_bundle
    from forecaster.training.prediction import forecast_series, plot_forecast, read_series_for_bundle

    bundle = load_bundle(args.model)
    series = read_series_for_bundle(bundle, args.csv, **_csv_options(args))
    forecast = forecast_series(bundle, series)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        forecast.to_csv(args.output)
        print(f"forecast of {len(forecast)} steps x {forecast.shape[1]} columns written to {args.output}")
    else:
        print(forecast.to_string(float_format=lambda value: f"{value:.6g}"))
    if args.plot:
        history_rows = args.plot_history or bundle.data.input_size
        path = plot_forecast(series, forecast, args.plot, history_rows=history_rows)
        print(f"plot written to {path}")
    return 0


def _positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return number


def _add_serve_commands(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser(
        "serve", help="serve every model bundle in a directory over HTTP (FastAPI + uvicorn)",
        description="Each subdirectory of --models is a bundle served as /v1/models/<dir name>; API docs at "
        "/docs. Bundles that fail validation are skipped and listed by /health/ready.",
    )
    serve.add_argument("--models", required=True, metavar="DIR", help="directory of model bundles")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (0.0.0.0 for all)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port")
    serve.add_argument("--workers", type=_positive_int, default=1, help="worker processes")
    serve.add_argument("--max-batch-size", type=_positive_int, default=64, help="histories per forward pass")
    serve.add_argument("--max-wait-ms", type=float, default=2.0, help="longest wait to fill a micro-batch")
    serve.add_argument(
        "--threads", type=_positive_int, help="torch threads per worker (default: CPU cores / workers)"
    )
    serve.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    import uvicorn

    from forecaster.errors import BundleError
    from service.app import CONFIG_ENV, serve_config

    models = Path(args.models)
    if not models.is_dir():
        raise BundleError(f"--models {models}: not a directory; expected a folder of bundle subfolders")
    if args.max_wait_ms < 0:
        raise ForecasterError(f"--max-wait-ms must be >= 0, got {args.max_wait_ms}")
    threads = args.threads or max(1, (os.cpu_count() or 1) // args.workers)
    os.environ[CONFIG_ENV] = serve_config(
        models.resolve(),
        max_batch_size=args.max_batch_size,
        max_wait_ms=args.max_wait_ms,
        torch_threads=threads,
    )
    uvicorn.run(
        "service.app:create_app_from_env", factory=True, host=args.host, port=args.port,
        workers=args.workers, log_level=args.log_level,
    )
    return 0


def _add_bench_serve_command(bench_sub: argparse._SubParsersAction) -> None:
    serve = bench_sub.add_parser(
        "serve", help="load-test the HTTP service and compare with in-process Bundle.predict",
        description="Sends --requests forecast requests with --concurrency connections (to --url, or to a "
        "server it starts on a free loopback port), then computes the same forecasts in-process.",
    )
    serve.add_argument("--models", required=True, metavar="DIR", help="directory of model bundles")
    serve.add_argument("--model", required=True, metavar="NAME", help="bundle (subdirectory) to load-test")
    serve.add_argument("--concurrency", type=_positive_int, default=32, help="requests in flight")
    serve.add_argument("--requests", type=_positive_int, default=2000, help="requests in total")
    serve.add_argument("--url", help="a running service on loopback, e.g. http://127.0.0.1:8000")
    serve.add_argument("--max-batch-size", type=_positive_int, default=64, help="for the server it starts")
    serve.add_argument("--max-wait-ms", type=float, default=2.0, help="for the server it starts")
    serve.set_defaults(handler=_bench_serve)


def _bench_serve(args: argparse.Namespace) -> int:
    from service.bench import render_serve_bench, run_serve_bench

    result = run_serve_bench(
        args.models, args.model, concurrency=args.concurrency, requests=args.requests, url=args.url,
        max_batch_size=args.max_batch_size, max_wait_ms=args.max_wait_ms,
    )
    render_serve_bench(result)
    return 1 if result["rows"][0].errors else 0


def _add_bench_smoother_command(bench_sub: argparse._SubParsersAction) -> None:
    smoother = bench_sub.add_parser(
        "smoother", help="Smoother forward and forward+backward: CuPy kernel path vs PyTorch path, bandwidth"
    )
    smoother.add_argument("--batch", type=_positive_int, default=32, help="batch size")
    smoother.add_argument("--lengths", type=_comma_ints, default=[1024, 4096, 16384], help="e.g. 1024,4096")
    smoother.add_argument("--d-model", type=_comma_ints, default=[64, 256], help="widths, e.g. 64,256")
    smoother.add_argument("--fold", type=_positive_int, default=8, help="channel groups (segment average)")
    smoother.add_argument("--dtype", choices=["float32", "float64"], default="float32", help="precision")
    smoother.add_argument("--device", help="cuda, cuda:1 or cpu (default: cuda when available)")
    smoother.add_argument("--warmup", type=int, default=3, help="untimed calls before timing")
    smoother.add_argument("--repeats", type=_positive_int, default=10, help="timed calls (median shown)")
    smoother.set_defaults(handler=_bench_smoother)


def _comma_ints(value: str) -> list[int]:
    try:
        numbers = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {value!r}") from None
    if not numbers or min(numbers) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers >= 1, got {value!r}")
    return numbers


def _bench_smoother(args: argparse.Namespace) -> int:
    import torch
    from rich.console import Console

    from forecaster.evaluation.smoother_bench import run_smoother_bench, smoother_bench_table

    bench = run_smoother_bench(
        args.batch, args.lengths, args.d_model, fold=args.fold, dtype=getattr(torch, args.dtype),
        device=args.device, warmup=args.warmup, repeats=args.repeats,
        progress=lambda message: print(message, file=sys.stderr),
    )
    console = Console()
    # Logs and pipes get the table at its natural width instead of rich's 80-column default.
    (console if console.is_terminal else Console(width=200)).print(smoother_bench_table(bench))
    return 0


def _add_benchmark_commands(sub: argparse._SubParsersAction) -> None:
    benchmark = sub.add_parser(
        "benchmark",
        help="train S3Attention and neuralforecast peers on identical splits; results.csv, summary.md, plot",
    )
    benchmark.add_argument("--datasets", help="comma-separated datasets (default ETTm2,Exchange,Weather,ILI)")
    benchmark.add_argument(
        "--horizons", default="paper", help="'paper' (96,192,336,720; ILI 24,36,48,60) or e.g. 96,192"
    )
    benchmark.add_argument("--split", default="7:1:2", choices=["7:1:2", "ett"], help="split scheme")
    benchmark.add_argument(
        "--models",
        help="comma-separated, from s3attention, naive (repeat the last value) and the neuralforecast peers "
        "patchtst, itransformer, dlinear, fedformer, autoformer, informer, nhits, timesnet (default: all but "
        "timesnet)",
    )
    benchmark.add_argument("--repeats", type=int, default=5, help="runs per cell, seeds 0..repeats-1")
    benchmark.add_argument("--max-epochs", type=int, default=10, help="epoch budget of every model")
    benchmark.add_argument("--patience", type=int, default=3, help="early-stopping patience in epochs")
    benchmark.add_argument("--batch-size", type=int, default=32, help="windows per training step")
    benchmark.add_argument("--data-dir", help="directory searched first for the dataset files")
    benchmark.add_argument("--out", default="results", help="output directory (resumes its results.csv)")
    benchmark.add_argument(
        "--jobs", type=int, default=1,
        help="cells trained at once in worker processes, each with cores/jobs threads (default 1)",
    )
    benchmark.add_argument("--no-progress", action="store_true", help="no progress bar or per-cell lines")
    benchmark.add_argument(
        "--dry-run", action="store_true",
        help="train nothing: print the cells done and to run per dataset and model, with a time estimate",
    )
    benchmark.set_defaults(handler=_benchmark)


def _benchmark_command(args: argparse.Namespace) -> str:
    """The command line that reproduces this grid (every option spelled out), for summary.md."""
    options = [("datasets", args.datasets), ("horizons", args.horizons), ("split", args.split),
               ("models", args.models), ("repeats", args.repeats), ("max-epochs", args.max_epochs),
               ("patience", args.patience), ("batch-size", args.batch_size), ("data-dir", args.data_dir),
               ("out", args.out), ("jobs", args.jobs if args.jobs != 1 else None)]
    given = " ".join(f"--{name} {value}" for name, value in options if value is not None)
    return f"forecaster benchmark {given}"


def _benchmark(args: argparse.Namespace) -> int:
    from pathlib import Path

    from forecaster.evaluation.benchmark import (
        DEFAULT_DATASETS,
        DEFAULT_MODELS,
        BenchmarkConfig,
        parse_horizons,
        plan_grid,
        plan_table,
        run_benchmark,
    )

    def names(text: str | None, default: tuple[str, ...]) -> list[str]:
        return [name.strip() for name in text.split(",") if name.strip()] if text else list(default)

    config = BenchmarkConfig(
        datasets=names(args.datasets, DEFAULT_DATASETS),
        horizons=parse_horizons(args.horizons),
        split=args.split,
        models=names(args.models, DEFAULT_MODELS),
        repeats=args.repeats,
        max_epochs=args.max_epochs,
        patience=args.patience,
        batch_size=args.batch_size,
        data_dir=Path(args.data_dir) if args.data_dir else None,
        out_dir=Path(args.out),
        progress=not args.no_progress,
        command=_benchmark_command(args),
        jobs=args.jobs,
    )
    if args.dry_run:
        plan = plan_grid(config)
        print(f"{args.out}: {len(plan.done)} of {len(plan.cells)} cells done, {len(plan.todo)} to run")
        print("\n".join(plan_table(plan)))
        return 0
    outcome = run_benchmark(config)
    print(f"{len(outcome.ran)} cells run, {len(outcome.skipped)} already done; {outcome.results}")
    print(f"summary: {outcome.summary}; plot: {outcome.plot}")
    return 0


def _add_lra_commands(sub: argparse._SubParsersAction) -> None:
    lra = sub.add_parser("lra", help="Long Range Arena: train classifiers with any registered mixer")
    lra_sub = lra.add_subparsers(dest="lra_command", required=True)
    train = lra_sub.add_parser(
        "train", help="train an LRA classifier through Lightning and report test accuracy",
        description="ListOps and Pathfinder are generated (and cached) when --data-dir is not given; Text, "
        "Retrieval and Image need the LRA / IMDB / CIFAR-10 files. Writes config.json, weights.safetensors, "
        "metrics.json and a CSV log of loss and accuracy into --out.",
    )
    train.add_argument(
        "--task", required=True, choices=["listops", "pathfinder", "text", "retrieval", "image"], help="task"
    )
    train.add_argument("--model", default="skeleton", help="registered mixer name (default skeleton)")
    train.add_argument("--steps", type=_positive_int, default=1000, help="optimizer steps (default 1000)")
    train.add_argument("--batch-size", type=_positive_int, help="default: the paper's per-task value")
    train.add_argument("--seq-len", type=_positive_int, help="default: the task's (ListOps 2048)")
    train.add_argument("--data-dir", help="folder of the task's files (default: generate ListOps/Pathfinder)")
    train.add_argument("--n-train", type=_positive_int, help="training samples (generated default 5000)")
    train.add_argument("--n-eval", type=_positive_int, help="validation and test samples (generated: 1000)")
    train.add_argument("--seed", type=int, default=0, help="seed for data generation, weights and shuffling")
    train.add_argument("--out", help="output folder (default runs/lra/<task>-<model>-seed<seed>)")
    train.add_argument("--cache-dir", help="cache of generated tasks (default $FORECASTER_CACHE_DIR/lra)")
    fit = train.add_argument_group("optimization (defaults: paper 001 Table 11 per task)")
    fit.add_argument("--lr", type=float, help="AdamW peak learning rate")
    fit.add_argument("--weight-decay", type=float, help="AdamW weight decay")
    fit.add_argument("--warmup-steps", type=int, help="linear warmup steps (default 10%% of --steps)")
    fit.add_argument("--eval-every", type=_positive_int, help="validate every N steps (default --steps / 4)")
    fit.add_argument("--accelerator", default="auto", help="Lightning accelerator (auto, cpu, gpu)")
    model = train.add_argument_group("model (defaults: REFERENCE.md section 3)")
    model.add_argument("--d-model", type=_positive_int, default=64, help="width D")
    model.add_argument("--n-layers", type=_positive_int, default=2, help="blocks")
    model.add_argument("--n-heads", type=_positive_int, default=2, help="heads")
    model.add_argument("--dropout", type=float, default=0.1, help="dropout of embeddings, MLP and residuals")
    model.add_argument("--pooling", choices=["mean", "cls"], default="mean", help="sequence pooling")
    model.add_argument(
        "--mixer-option", action="append", default=[], metavar="KEY=VALUE",
        help="option of the mixer, repeatable (e.g. n_features=128, left_rank=16)",
    )
    train.set_defaults(handler=_lra_train)


def _lra_train(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from forecaster.evaluation.attention_bench import parse_mixer_spec
    from forecaster.lra.training import train_lra
    from forecaster.nn import attention

    if args.model not in attention.names():
        known = ", ".join(attention.names())
        raise ForecasterError(f"unknown mixer {args.model!r}; expected one of {known}")
    try:
        options = parse_mixer_spec(":".join([args.model, *args.mixer_option])).options
    except ValueError as error:
        raise ForecasterError(f"--mixer-option: {error}") from None
    metrics = train_lra(
        args.task, args.model, steps=args.steps, batch_size=args.batch_size, seq_len=args.seq_len,
        data_dir=args.data_dir, n_train=args.n_train, n_eval=args.n_eval, seed=args.seed, out=args.out,
        lr=args.lr, weight_decay=args.weight_decay, warmup_steps=args.warmup_steps,
        eval_every=args.eval_every,
        cache_dir=args.cache_dir, accelerator=args.accelerator, d_model=args.d_model, n_layers=args.n_layers,
        n_heads=args.n_heads, dropout=args.dropout, pooling=args.pooling, mixer_options=options,
    )
    table = Table(title=f"LRA {args.task} · {args.model}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in metrics.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)
    return 0


def _add_bench_attention_command(bench_sub: argparse._SubParsersAction) -> None:
    attention = bench_sub.add_parser(
        "attention", help="LRA training steps/s and peak memory per mixer and length (paper 001 Table 4)",
        description="Times optimizer steps of the LRA text classifier (D 64, 2 layers, 2 heads) with each "
        "mixer and measures the peak memory of one step: torch.cuda.max_memory_allocated on CUDA, torch's "
        "CPU allocator events (torch.profiler) on CPU. Ratios are relative to the first softmax row. "
        "Mixer options follow colons, e.g. softmax:kernel=math (the kernel that stores the n x n matrix).",
    )
    attention.add_argument(
        "--models", default="softmax,softmax:kernel=math,skeleton,linformer,nystromformer,performer,reformer",
        help="comma-separated registered mixers with optional :key=value options",
    )
    attention.add_argument(
        "--lengths", type=_comma_ints, default=[1024, 2048, 3072, 4096], help="lengths, e.g. 1024,2048"
    )
    attention.add_argument("--batch", type=_positive_int, help="batch size (default 32 on CUDA, 4 on CPU)")
    attention.add_argument("--d-model", type=_positive_int, default=64, help="width D")
    attention.add_argument("--n-layers", type=_positive_int, default=2, help="blocks")
    attention.add_argument("--n-heads", type=_positive_int, default=2, help="heads")
    attention.add_argument("--steps", type=_positive_int, default=5, help="timed steps per cell (median)")
    attention.add_argument("--device", help="cuda, cuda:1 or cpu (default: cuda when available)")
    attention.add_argument("--json", metavar="FILE", help="also write the measurements to this JSON file")
    attention.add_argument("--reference", help="row the ratios compare with (default: the first softmax row)")
    attention.set_defaults(handler=_bench_attention)


def _cpu_name(threads: int) -> str:
    """'CPU <model name>, N threads' from /proc/cpuinfo where it exists: the machine named in bench tables."""
    import platform
    from pathlib import Path

    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.is_file() else []
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "")
    return f"CPU {model or platform.processor() or platform.machine()}, {threads} threads"


def _bench_attention(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    import torch
    from rich.console import Console
    from rich.progress import Progress

    from forecaster.evaluation.attention_bench import (
        attention_bench_table,
        parse_mixer_spec,
        run_attention_bench,
    )
    from forecaster.nn import attention

    models = [model for model in args.models.split(",") if model.strip()]
    try:
        unknown = sorted({parse_mixer_spec(model).name for model in models} - set(attention.names()))
    except ValueError as error:
        raise ForecasterError(f"--models: {error}") from None
    if unknown:
        raise ForecasterError(f"unknown mixer(s) {unknown}; expected some of {', '.join(attention.names())}")
    if args.reference is not None and args.reference not in models:
        raise ForecasterError(f"--reference {args.reference!r} is not one of --models {models}")
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    batch = args.batch or (32 if device.type == "cuda" else 4)
    with Progress(transient=True) as progress:
        bar = progress.add_task("bench attention", total=len(models) * len(args.lengths))

        def advance(label: str) -> None:
            progress.update(bar, advance=1, description=label)

        rows = run_attention_bench(
            models, args.lengths, batch=batch, d_model=args.d_model, n_layers=args.n_layers,
            n_heads=args.n_heads, steps=args.steps, device=device, progress=advance,
        )
    threads = torch.get_num_threads()
    machine = torch.cuda.get_device_name(device) if device.type == "cuda" else _cpu_name(threads)
    title = f"LRA text classifier, batch {batch}, D {args.d_model}, {args.n_layers} layers: {machine}"
    table = attention_bench_table(rows, title, reference=args.reference)
    Console(width=max(120, 30 + 32 * len(args.lengths))).print(table)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"machine": machine, "rows": [asdict(row) for row in rows]}, handle, indent=2)
    return 0


class _OneLineErrorParser(argparse.ArgumentParser):
    """Usage errors print one line, like library errors (sub-parsers inherit the class), and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_bench_scaling_command(bench_sub: argparse._SubParsersAction) -> None:
    scaling = bench_sub.add_parser(
        "scaling", help="S3Attention layer vs softmax: forward+backward time and peak memory per length",
        description="One training step (forward + backward) of the S3Attention layer (Smoother + "
        "SkeletonAttention) and of the softmax mixer (scaled_dot_product_attention; kernel 'sdpa' = "
        "torch's choice, 'math' = the kernel that stores the length x length matrix) per sequence length. "
        "Peak memory: torch.cuda.max_memory_allocated on CUDA, torch.profiler allocator events on CPU. "
        "Runs whose estimated memory exceeds --max-memory-gb are marked OOM-skip instead of being attempted.",
    )
    scaling.add_argument(
        "--lengths", type=_comma_ints, default=[1024, 2048, 4096, 8192, 16384], help="e.g. 1024,2048,4096"
    )
    scaling.add_argument("--d-model", type=_positive_int, default=64, help="width D (default 64)")
    scaling.add_argument("--batch", type=_positive_int, default=8, help="batch size (default 8)")
    scaling.add_argument("--heads", type=_positive_int, default=8, help="attention heads (default 8)")
    scaling.add_argument("--rank", type=_positive_int, default=8, help="sampled tokens and head dims (8)")
    scaling.add_argument("--fold", type=_positive_int, default=8, help="smoother channel groups (default 8)")
    scaling.add_argument("--repeats", type=_positive_int, default=3, help="timed steps per cell (median)")
    scaling.add_argument("--warmup", type=int, default=1, help="untimed steps before measuring (default 1)")
    scaling.add_argument(
        "--softmax-kernels", default="sdpa,math", help="softmax kernels to compare: sdpa, math (default both)"
    )
    scaling.add_argument("--device", help="cuda, cuda:1 or cpu (default: cuda when available)")
    scaling.add_argument(
        "--max-memory-gb", type=float, help="skip runs estimated above this many GiB (default: half of free)"
    )
    scaling.set_defaults(handler=_bench_scaling)


def _bench_scaling(args: argparse.Namespace) -> int:
    import torch
    from rich.console import Console

    from forecaster.evaluation.profiling import machine_name, run_scaling, scaling_table

    kernels = [kernel.strip() for kernel in args.softmax_kernels.split(",") if kernel.strip()]
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    budget = None if args.max_memory_gb is None else int(args.max_memory_gb * 2**30)
    console = Console(stderr=True)
    with console.status("bench scaling") as status:
        try:
            results = run_scaling(
                args.lengths, d_model=args.d_model, batch=args.batch, n_heads=args.heads, rank=args.rank,
                fold=args.fold, repeats=args.repeats, warmup=args.warmup, softmax_kernels=kernels,
                device=device, memory_budget=budget, progress=status.update,
            )
        except ValueError as error:
            raise ForecasterError(f"bench scaling: {error}") from None
    title = (
        f"S3Attention layer vs softmax, forward+backward, batch {args.batch}, D {args.d_model}, "
        f"{args.heads} heads, rank {args.rank}, fold {args.fold}"
    )
    memory = "torch.cuda.max_memory_allocated" if device.type == "cuda" else "torch.profiler allocator events"
    caption = f"{machine_name(device)}; median of {args.repeats} steps; peak above the step's start: {memory}"
    Console(width=max(120, Console().width)).print(scaling_table(results, title, caption))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineErrorParser(prog="forecaster", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _add_data_commands(sub)
    _add_bench_commands(sub)
    _add_benchmark_commands(sub)
    _add_train_commands(sub)
    _add_evaluate_commands(sub)
    _add_predict_commands(sub)
    _add_serve_commands(sub)
    _add_lra_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # a reader that left is noticed here, not at interpreter exit
        return code
    except ForecasterError as error:
        print(f"forecaster: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader left (`forecaster ... | head`): no traceback, nor a second error when stdout is flushed.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())

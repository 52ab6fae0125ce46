"""A real `forecaster serve` process on 127.0.0.1, the serve/bench CLI, and the docker/ files."""

from __future__ import annotations

import csv
import io
import json
import shlex
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import numpy as np
import pytest
import torch
import yaml
from test_service import COLUMNS, HORIZON, history, make_bundle

from forecaster.bench.serve import _free_port, wait_until_ready
from forecaster.cli import build_parser, main
from service.config import ServiceSettings

REPO = Path(__file__).resolve().parents[1]


def _csv_numbers(text: str) -> tuple[list[str], np.ndarray]:
    header, *rows = list(csv.reader(io.StringIO(text)))
    return header, np.array([[float(cell) for cell in row[1:]] for row in rows])


@pytest.mark.slow
def test_real_server_answers_like_forecaster_predict(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    models = tmp_path / "models"
    bundle_dir = make_bundle(models)
    frame = history(rows=30, seed=11)
    frame.to_csv(tmp_path / "recent.csv")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the server below: float32 sums split over threads differ in the last bits
    try:
        assert main(["predict", "--model", str(bundle_dir), "--csv", str(tmp_path / "recent.csv"),
                     "--output", str(tmp_path / "predicted.csv")]) == 0  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    header, predicted = _csv_numbers((tmp_path / "predicted.csv").read_text())
    assert header == ["date", *COLUMNS]

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp_path / "server.log").open("w")
    command = [str(Path(sys.executable).parent / "forecaster"), "serve", "--models", str(models),
               "--threads", "1"]  # fmt: skip
    server = subprocess.Popen(
        [*command, "--port", str(port)], stdout=log, stderr=subprocess.STDOUT
    )
    try:
        wait_until_ready(url, timeout_s=120, process=server)
        with httpx.Client(base_url=url, timeout=30) as client:
            assert client.get("/health/live").json() == {"status": "live"}
            assert client.get("/health/ready").json()["models"] == ["hourly"]
            assert client.get("/v1/models").json()["models"][0]["horizon"] == HORIZON
            assert client.get("/v1/models/hourly").json()["columns"] == COLUMNS
            assert "/v1/models/{name}/forecast" in client.get("/openapi.json").json()["paths"]
            assert client.get("/docs").status_code == 200

            body = {
                "timestamps": [str(t) for t in frame.index],
                "values": {c: frame[c].tolist() for c in COLUMNS},
            }
            answer = client.post("/v1/models/hourly/forecast", json=body).json()
            served = np.array([answer["forecast"][column] for column in COLUMNS]).T
            assert np.array_equal(served, predicted)  # bit for bit, as `forecaster predict` wrote it
            upload = {"file": ("recent.csv", (tmp_path / "recent.csv").read_bytes(), "text/csv")}
            served_csv = client.post("/v1/models/hourly/forecast.csv", files=upload)
            assert _csv_numbers(served_csv.text)[1].tolist() == predicted.tolist()

            nan_body = json.dumps({**body, "values": {c: [float("nan")] * 30 for c in COLUMNS}})
            refused = client.post(
                "/v1/models/hourly/forecast", content=nan_body, headers={"content-type": "application/json"}
            )
            assert refused.status_code == 422 and refused.json()["details"][0]["field"] == "values.load[0]"
            assert client.get("/v1/models/..%2F..%2Fetc/forecast").status_code == 404
            huge = client.post("/v1/models/hourly/forecast", content=b" " * (9 * 1024 * 1024),
                               headers={"content-type": "application/json"})  # fmt: skip
            assert huge.status_code == 413 and "limit" in huge.json()["message"]
            plain = client.post(
                "/v1/models/hourly/forecast", content=b"x", headers={"content-type": "text/plain"}
            )
            assert plain.status_code == 415
            metrics = client.get("/metrics").text
            assert (
                'forecaster_requests_total{model="hourly",route="/v1/models/{name}/forecast",status="200"}'
                in metrics
            )

        capsys.readouterr()
        bench = ["bench", "serve", "--models", str(models), "--model", "hourly", "--url", url,
                 "--requests", "40", "--concurrency", "8"]  # fmt: skip
        assert main(bench) == 0
        table = capsys.readouterr().out
        assert "forecasts/s" in table and "in-process predict, one by one" in table
        elsewhere = tmp_path / "elsewhere"  # a bundle the service does not serve: no table of 404s (h45)
        make_bundle(elsewhere, "unserved")
        assert main([*bench[:3], str(elsewhere), "--model", "unserved", *bench[6:]]) == 2
        assert f"the service at {url} does not serve model 'unserved' (GET" in capsys.readouterr().err
        assert main([*bench[:7], f"{url}/v1/models", *bench[8:]]) == 2
        assert "expected the service's root, http://127.0.0.1:PORT, no path" in capsys.readouterr().err
        assert server.poll() is None  # still up after all of that
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal.
    assert server.returncode in (0, -signal.SIGTERM), (tmp_path / "server.log").read_text()
    said = (tmp_path / "server.log").read_text()
    assert "Traceback" not in said
    assert f"INFO:     loaded model hourly (s3attention) from {bundle_dir}, forecasts" in said


@pytest.mark.slow
def test_metrics_of_several_workers_count_every_request(tmp_path: Path) -> None:
    """With --workers 2, /metrics answered for whichever worker took it (each counted its own requests):
    the workers count into one folder, so every scrape sees all 20 forecasts; the folder goes at shutdown."""
    import tempfile

    models = tmp_path / "models"
    make_bundle(models)
    frame = history(rows=30, seed=11)
    body = {"timestamps": [str(t) for t in frame.index], "values": {c: frame[c].tolist() for c in COLUMNS}}
    folders = set(Path(tempfile.gettempdir()).glob("forecaster-metrics-*"))
    port, log_path = _free_port(), tmp_path / "server.log"
    url = f"http://127.0.0.1:{port}"
    command = [str(Path(sys.executable).parent / "forecaster"), "serve", "--models", str(models), "--port",
               str(port), "--workers", "2", "--reload-interval-s", "0"]  # fmt: skip
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_ready(url, timeout_s=120, process=server)
        for _ in range(600):  # both workers loaded: each logs its model
            if log_path.read_text().count("loaded model hourly") == 2:
                break
            time.sleep(0.2)
        for _ in range(20):  # a connection each: the kernel hands them to either worker
            with httpx.Client(base_url=url, timeout=30) as client:
                assert client.post("/v1/models/hourly/forecast", json=body).status_code == 200
        counted = 'forecaster_requests_total{model="hourly",route="/v1/models/{name}/forecast",status="200"}'
        for _ in range(6):
            with httpx.Client(base_url=url, timeout=30) as client:
                scraped = client.get("/metrics").text
            assert f"{counted} 20.0" in scraped, [line for line in scraped.splitlines() if "hourly" in line]
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert "Traceback" not in log_path.read_text()
    assert set(Path(tempfile.gettempdir()).glob("forecaster-metrics-*")) == folders


def test_service_never_imports_lightning_or_training(tmp_path: Path) -> None:
    make_bundle(tmp_path)
    code = (
        "import asyncio, sys\n"
        "from service.app import create_app\n"
        "from service.config import ServiceSettings\n"
        "app = create_app(ServiceSettings(models_dir=sys.argv[1]))\n"
        "async def start_and_stop():\n"
        "    async with app.router.lifespan_context(app):\n"
        "        assert app.state.registry.models\n"
        "asyncio.run(start_and_stop())\n"
        "print(sorted(m for m in sys.modules if m.startswith(('lightning', 'pytorch_lightning', "
        "'forecaster.training'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_serve_and_bench_refuse_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["serve", "--models", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err
    for port in ("70000", "0", "-1"):  # uvicorn would bind another port (70000 -> 4464) or fail cryptically
        assert main(["serve", "--models", str(tmp_path), "--port", port]) == 2
        assert f"--port must be an integer >= 1 and <= 65535, got {int(port)}" in capsys.readouterr().err
    remote = ["bench", "serve", "--models", str(tmp_path), "--model", "x", "--url", "http://10.1.2.3:8000"]
    assert main(remote) == 2
    assert "loopback" in capsys.readouterr().err
    assert main(["bench", "serve", "--models", str(tmp_path), "--model", "absent"]) == 2
    assert "no model bundle" in capsys.readouterr().err
    make_bundle(tmp_path, "hourly")
    nobody = ["bench", "serve", "--models", str(tmp_path), "--model", "hourly", "--url", "http://127.0.0.1:1"]
    assert main(nobody) == 2  # an internal error (ConnectError), h45
    assert "--url http://127.0.0.1:1: no service answers there" in capsys.readouterr().err
    for command in (["serve"], ["bench", "serve", "--model", "x"]):
        assert main([*command, "--models", str(tmp_path), "--device", "tpu9"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "device 'tpu9' is not a torch device name" in err[0], err
        assert "Value error" not in err[0]


def test_a_reload_interval_too_short_to_look_at_the_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--reload-interval-s 1e-9` was served: the idle service looked at its models folder back to back,
    80% of a core for good (h101 F2); 0 (no reloads) and the default stay."""
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: pytest.fail("served"))
    for interval in ("1e-9", "0.001"):
        assert main(["serve", "--models", str(tmp_path), "--reload-interval-s", interval]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "reload_interval_s: expected 0 (no reloads) or at least 0.05 s" in err[0]
    assert ServiceSettings(models_dir=tmp_path, reload_interval_s=0).reload_interval_s == 0


def test_serve_on_a_port_in_use_or_a_host_of_no_address_says_so_in_one_line_first(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A port in use or a --host that does not resolve ended `serve` once every bundle had loaded, in
    uvicorn's ERROR line and exit status 3, forecaster's own faults' (h75 F18): one line, status 1 (what the
    system refused) or 2 (the option), before any bundle loads (uvicorn, which loads them, is never run)."""
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: pytest.fail("served"))
    make_bundle(tmp_path / "models")
    command = ["serve", "--models", str(tmp_path / "models")]
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        capsys.readouterr()
        busy = main([*command, "--port", str(port)])
        out, err = capsys.readouterr()
    assert (busy, out) == (1, ""), err
    assert err == f"forecaster: error: --port {port}: address already in use\n"
    nowhere = main([*command, "--host", "no-such-host.invalid"])
    out, err = capsys.readouterr()
    assert (nowhere, out) == (2, ""), err
    [line] = err.splitlines()
    assert line.startswith("forecaster: error: --host no-such-host.invalid: ")
    assert line.endswith("; expected a name or address of this machine")


# ---- docker/: no engine here, so check what a build would need ------------------------------------------


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))
    joined = text.replace("\\\n", " ")
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line.strip() else "")
        for line in joined.splitlines()
        if line.strip()
    ]


@pytest.mark.parametrize("name", ["Dockerfile", "Dockerfile.gpu"])
def test_dockerfile_copies_existing_files_and_runs_the_console_script(name: str) -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    steps = _instructions(REPO / "docker" / name)
    copies = [shlex.split(arguments) for kind, arguments in steps if kind == "COPY"]
    assert copies
    for *sources, _target in copies:
        for source in sources:
            assert (REPO / source).exists(), f"docker/{name} copies {source}, which is not in the repository"

    [command] = [json.loads(arguments) for kind, arguments in steps if kind == "CMD"]
    assert command[0] in pyproject["project"]["scripts"]
    args = build_parser(command[1:]).parse_args(command[1:])
    assert args.command == "serve" and str(args.models_dir) == "/models" and args.host == "0.0.0.0"

    [healthcheck] = [arguments for kind, arguments in steps if kind == "HEALTHCHECK"]
    assert "/health/ready" in healthcheck and f":{args.port}/" in healthcheck
    users = [arguments for kind, arguments in steps if kind == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert any(kind == "VOLUME" and "/models" in arguments for kind, arguments in steps)
    installs = " ".join(arguments for kind, arguments in steps if kind == "RUN")
    assert "torch==2.13.0" in installs
    if name == "Dockerfile":
        assert "/whl/cpu" in installs
    else:
        assert '".[gpu]"' in installs and "gpu" in pyproject["project"]["optional-dependencies"]


def test_compose_builds_both_images_with_models_mounted() -> None:
    compose = yaml.safe_load((REPO / "docker" / "compose.yaml").read_text())
    for service in compose["services"].values():
        context = (REPO / "docker" / service["build"]["context"]).resolve()
        assert context == REPO
        assert (context / service["build"]["dockerfile"]).is_file()
        assert any(volume.split(":")[-2] == "/models" for volume in service["volumes"])

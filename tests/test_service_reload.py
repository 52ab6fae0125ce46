"""The service follows its models folder: a recalibrated or replaced bundle is served as it is now, a new one
is added, a removed one dropped, and a replacement that cannot load leaves the loaded version serving."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from test_service import HORIZON, body_of, history, make_bundle, serving

from forecaster.api import Forecaster
from forecaster.artifacts import write_calibration
from forecaster.calibration import Calibration


def _eventually(check: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "the service did not follow its models folder in time"
        time.sleep(0.05)


def test_the_service_follows_its_models_folder(tmp_path: Path) -> None:
    root = tmp_path / "models"
    make_bundle(root)
    with serving(root, reload_interval_s=0.05) as client:
        assert client.get("/v1/models/hourly").json()["intervals"] is None
        scores = np.abs(np.random.default_rng(0).normal(size=(40, HORIZON, 2))).astype(np.float32)
        write_calibration(root / "hourly", Calibration.from_scores(scores, [], "recent rows", "conformal"))

        def recalibrated() -> bool:
            intervals = client.get("/v1/models/hourly").json()["intervals"] or {}
            return intervals.get("calibrated_on") == "recent rows"

        _eventually(recalibrated)
        frame = history()
        answer = client.post("/v1/models/hourly/forecast", json=body_of(frame, level=[80])).json()
        expected = Forecaster.load(root / "hourly").predict(frame, level=[80])  # what predict reads now
        np.testing.assert_allclose(answer["forecast"]["OT-lo-80"], expected["OT-lo-80"], rtol=1e-5)

        make_bundle(root, "added")
        _eventually(lambda: client.get("/v1/models/added").status_code == 200)
        shutil.rmtree(root / "added")
        _eventually(lambda: client.get("/v1/models/added").status_code == 404)

        broken = root / "hourly" / "config.new"
        broken.write_text("{not json")
        shutil.copy(root / "hourly" / "config.json", root / "hourly" / "config.json.ok")
        os.replace(broken, root / "hourly" / "config.json")  # a replacement that cannot load
        time.sleep(0.5)  # several looks at the folder
        assert client.post("/v1/models/hourly/forecast", json=body_of(frame, level=[80])).json() == answer
        ready = client.get("/health/ready").json()
        assert ready["models"] == ["hourly"] and ready["skipped"] == {}
        assert ready["stale"]["hourly"].startswith("BundleError: hourly/config.json: cannot read JSON")

        os.replace(root / "hourly" / "config.json.ok", root / "hourly" / "config.json")  # mended
        _eventually(lambda: client.get("/health/ready").json()["stale"] == {})
        copy = shutil.copytree(root / "hourly", tmp_path / "copy")  # its calibration made again elsewhere
        write_calibration(copy, Calibration.from_scores(scores, [], "later rows", "conformal"))
        with open(root / "hourly" / "calibration.safetensors", "wb") as handle:  # in place, as cp does
            handle.write((copy / "calibration.safetensors").read_bytes())
        _eventually(lambda: (client.get("/v1/models/hourly").json()["intervals"] or {}).get("calibrated_on")
                    == "later rows")  # fmt: skip
        # broken in place, then restored as `cp -a` and `rsync -a` do, times and all: was stale till touched
        config = root / "hourly" / "config.json"
        whole, times = config.read_bytes(), config.stat()
        config.write_bytes(b"{not json")
        _eventually(lambda: "hourly" in client.get("/health/ready").json()["stale"])
        config.write_bytes(whole)
        os.utime(config, ns=(times.st_atime_ns, times.st_mtime_ns))
        _eventually(lambda: client.get("/health/ready").json()["stale"] == {})


def test_zero_keeps_the_bundles_of_startup(tmp_path: Path) -> None:
    root = tmp_path / "models"
    make_bundle(root)
    with serving(root, reload_interval_s=0) as client:
        make_bundle(root, "added")
        time.sleep(0.3)
        assert client.get("/v1/models/added").status_code == 404

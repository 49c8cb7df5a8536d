"""What `graphgpu serve` says at start-up: readiness when it is true, a busy port as an error."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from graphgpu.service.redis_server import free_port
from tests.conftest import PLUGIN, REPO, wait_until


def serve_env(data_dir: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GRAPHGPU_REDIS_URL"}
    return {**env, "GRAPHGPU_DATA_DIR": str(data_dir), "GRAPHGPU_PORT": str(port),
            "GRAPHGPU_LOG_FORMAT": "text", "GRAPHGPU_EXTRA_ALGORITHM_MODULES": f'["{PLUGIN}"]',
            "PYTHONPATH": str(REPO)}


def test_busy_port_is_an_error_and_nothing_starts(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "graphgpu.service"], cwd=REPO,
                              env=serve_env(tmp_path, port), capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 1
    assert "ERROR" in done.stderr and "in use" in done.stderr and "API on" not in done.stderr
    assert not (tmp_path / "redis").exists()  # refused before starting Redis


def test_api_on_is_logged_once_ready(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as sink:
        serve = subprocess.Popen([sys.executable, "-m", "graphgpu.service"], cwd=REPO,
                                 env=serve_env(tmp_path / "data", port), stderr=sink)
    try:
        def announced() -> bool:
            assert serve.poll() is None, log.read_text()
            return "API on http://" in log.read_text()

        # Before the line, readiness may or may not hold; once it is logged it must.
        wait_until(announced, timeout=240, every=0.2)
        assert httpx.get(f"http://127.0.0.1:{port}/v1/ready", timeout=10).status_code == 200
        text = log.read_text()
        assert text.count("API on http://") == 1
        assert text.index("starting the API") < text.index("API on http://")
        assert "/v1/ready" not in text  # neither the probes nor request logs by default
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)

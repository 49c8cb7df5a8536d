"""What `graphgpu serve` says at start-up: readiness when it is true, a busy port as an error."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from graphgpu.kernels.core.device import gpu_available
from graphgpu.service.redis_server import free_port
from graphgpu.service.serve import count_gpus, is_ready
from tests.conftest import PLUGIN, REPO, wait_until


def serve_env(data_dir: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "GRAPHGPU_REDIS_URL"}
    return {**env, "GRAPHGPU_DATA_DIR": str(data_dir), "GRAPHGPU_PORT": str(port),
            "GRAPHGPU_LOG_FORMAT": "text", "GRAPHGPU_EXTRA_ALGORITHM_MODULES": f'["{PLUGIN}"]',
            "PYTHONPATH": str(REPO)}


@pytest.mark.parametrize("status", [200, 503])
def test_readiness_is_the_ready_route_answering_200(status: int) -> None:
    class Ready(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the handler's name)
            self.send_response(status if self.path == "/v1/ready" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Ready) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            assert is_ready("0.0.0.0", server.server_address[1]) is (status == 200)
        finally:
            server.shutdown()
    assert not is_ready("127.0.0.1", free_port())  # nothing listening


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


def test_a_gpu_host_starts_its_cpu_workers_once_the_gpu_workers_are_live() -> None:
    """GPU workers take the gpu and auto queues at once; the CPU workers (the cpu queue) wait
    for them to be live; without a GPU, the CPU workers start at once and take auto and cpu;
    with no CPU worker, the GPU workers take every queue."""
    from graphgpu.service.serve import plan_workers

    def queues(child) -> str | None:
        argv = child.argv
        return argv[argv.index("--queues") + 1] if "--queues" in argv else None

    first, later = plan_workers("python", {}, gpus=2, cpu_workers=1)
    assert [child.env["CUDA_VISIBLE_DEVICES"] for child in first] == ["0", "1"]
    assert [queues(child) for child in first] == ["gpu,auto", "gpu,auto"]
    assert [(child.argv[child.argv.index("--backend") + 1], queues(child)) for child in later] \
        == [("cpu", "cpu")]
    assert later[0].env["CUDA_VISIBLE_DEVICES"] == ""  # it sees no GPU
    first, later = plan_workers("python", {}, gpus=0, cpu_workers=2)
    assert len(first) == 2 and not later and {queues(child) for child in first} == {None}
    first, later = plan_workers("python", {}, gpus=1, cpu_workers=0)
    assert len(first) == 1 and not later and queues(first[0]) is None


@pytest.mark.gpu
def test_the_gpu_count_is_what_cupy_sees() -> None:
    from graphgpu.kernels.core.device import cupy

    assert count_gpus() == cupy().cuda.runtime.getDeviceCount() >= 1


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")
def test_cpu_jobs_on_a_gpu_host_run_on_the_cpu_worker_beside(tmp_path: Path) -> None:
    """`serve` on a GPU host: once ready, an auto job runs on the GPU worker and a job asked of
    the CPU backend on the CPU worker started beside it (a worker of its own, backend cpu)."""
    port = free_port()
    log = tmp_path / "serve.log"
    env = serve_env(tmp_path / "data", port)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    with log.open("w") as sink:
        serve = subprocess.Popen([sys.executable, "-m", "graphgpu.service"], cwd=REPO, env=env,
                                 stderr=sink)
    http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
    try:
        def ready() -> bool:
            assert serve.poll() is None, log.read_text()
            return "API on http://" in log.read_text()

        wait_until(ready, timeout=600, every=0.2)
        graph = http.post("/v1/graphs", content=b"0 1\n1 2\n2 3\n").json()["id"]
        ran = {}
        for backend in ("auto", "cpu"):
            job = http.post("/v1/jobs", json={"graph_id": graph, "algorithm": "bfs",
                                              "params": {"source": 0}, "backend": backend})
            assert job.status_code == 202, job.text
            done = http.get(f"/v1/jobs/{job.json()['id']}", params={"wait": 120}).json()
            assert done["status"] == "succeeded", done
            ran[backend] = done
        workers = {w["name"]: w["backend"] for w in http.get("/v1/workers").json()["workers"]}
        assert set(workers.values()) == {"cpu", "gpu"}  # a GPU worker per GPU, one CPU worker
        assert list(workers.values()).count("cpu") == 1
        assert ran["auto"]["backend"] == "gpu" and ran["cpu"]["backend"] == "cpu"
        assert workers[ran["cpu"]["worker"]] == "cpu" and workers[ran["auto"]["worker"]] == "gpu"
    finally:
        http.close()
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)

"""`graphgpu serve`: Redis (embedded unless configured), the API and one worker per GPU.

Every part runs as a child process in its own session, so a Ctrl-C reaches only this supervisor,
which then stops them in order: API, workers (each finishes or abandons its job), Redis last.
A worker that dies is restarted; the API dying ends the service.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from graphgpu.kernels.core.observability import configure_logging
from graphgpu.kernels.core.settings import get_settings
from graphgpu.service.auth import OPEN_MODE_WARNING, KeyRing
from graphgpu.service.redis_server import RedisServer

log = logging.getLogger("graphgpu.serve")
WORKER_STOP_SECONDS = 15.0


def count_gpus() -> int:
    """GPUs visible to CuPy, asked in a child process so this one never initialises CUDA."""
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "" or not shutil.which("nvidia-smi"):
        return 0
    probe = "import cupy; print(cupy.cuda.runtime.getDeviceCount())"
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             timeout=60, check=True)
        return int(out.stdout.strip() or 0)
    except (subprocess.SubprocessError, ValueError):
        return 0


@dataclass
class Child:
    """A supervised process and how to start it again."""

    label: str
    argv: list[str]
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    restarts: list[float] = field(default_factory=list)

    def start(self) -> None:
        self.process = subprocess.Popen(self.argv, env=self.env, start_new_session=True)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop in %.0f s: killing it", self.label, timeout)
            self.process.kill()
            self.process.wait()


def serve() -> int:
    """Run the whole service until Ctrl-C or SIGTERM; returns the exit code."""
    settings = get_settings()
    configure_logging("serve", settings)
    if KeyRing.from_settings(settings).open:  # also checks a key file before starting anything
        log.warning(OPEN_MODE_WARNING)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    redis_server = None
    if not settings.redis_url:
        redis_server = RedisServer(settings.data_dir / "redis")
        env["GRAPHGPU_REDIS_URL"] = redis_server.start()
        log.info("embedded redis-server at %s (AOF in %s)", redis_server.url, redis_server.data_dir)
    python = sys.executable
    gpus = count_gpus()
    workers = [
        Child(f"gpu-worker-{i}", [python, "-m", "graphgpu.workers", "--backend", "gpu"],
              {**env, "CUDA_VISIBLE_DEVICES": str(i)})
        for i in range(gpus)
    ] or [
        Child(f"cpu-worker-{i}", [python, "-m", "graphgpu.workers", "--backend", "cpu"], env)
        for i in range(settings.cpu_workers)
    ]
    api = Child("api", [python, "-m", "uvicorn", "graphgpu.service.app:create_app", "--factory",
                        "--host", settings.host, "--port", str(settings.port),
                        "--log-level", "warning"], env)
    stopping = False

    def request_stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    for child in (*workers, api):
        child.start()
    log.info("API on http://%s:%d (docs at /docs); %d %s worker(s); Ctrl-C stops everything",
             settings.host, settings.port, len(workers), "GPU" if gpus else "CPU")
    code = 0
    while not stopping:
        time.sleep(0.5)
        if not api.alive():
            log.error("the API exited (code %s): stopping", api.process and api.process.returncode)
            code = 1
            break
        for worker in workers:
            if not worker.alive() and not stopping:
                now = time.monotonic()
                worker.restarts = [t for t in worker.restarts if now - t < 60] + [now]
                if len(worker.restarts) > 5:
                    log.error("%s keeps dying: stopping", worker.label)
                    code, stopping = 1, True
                    break
                log.warning("%s exited: restarting it", worker.label)
                worker.start()
    log.info("stopping")
    api.stop(10)
    for worker in workers:
        worker.stop(WORKER_STOP_SECONDS)
    if redis_server:
        redis_server.stop()
    log.info("stopped")
    return code

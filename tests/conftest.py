"""Shared fixtures: a real redis-server, the real API over HTTP, real RQ worker processes.

Each :class:`Stack` has its own Redis key prefix and data folder, so tests that kill workers or
fill queues can have a stack of their own while the rest share one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis

from graphgpu.kernels.core.settings import Settings
from graphgpu.service.redis_server import RedisServer, free_port

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
PLUGIN = "tests.support.slow_algorithm"

# Test processes (and the library code under test) see the plugin algorithm too.
os.environ.setdefault("GRAPHGPU_EXTRA_ALGORITHM_MODULES", f'["{PLUGIN}"]')


def wait_until(predicate: Callable[[], object], timeout: float = 20.0, every: float = 0.05):
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout} s")


class Stack:
    """The API and workers as child processes, against one redis-server."""

    def __init__(self, redis_url: str, data_dir: Path, **overrides: str) -> None:
        self.redis_url = redis_url
        self.data_dir = data_dir
        self.prefix = f"t{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self.env = {
            **os.environ,
            "GRAPHGPU_REDIS_URL": redis_url,
            "GRAPHGPU_REDIS_PREFIX": self.prefix,
            "GRAPHGPU_DATA_DIR": str(data_dir),
            "GRAPHGPU_WORKER_HEARTBEAT_SECONDS": "0.5",
            "GRAPHGPU_WORKER_DEAD_AFTER_SECONDS": "3",
            "GRAPHGPU_EXTRA_ALGORITHM_MODULES": f'["{PLUGIN}"]',
            "PYTHONPATH": str(REPO),
            **{f"GRAPHGPU_{k.upper()}": v for k, v in overrides.items()},
        }
        self.api: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.http = httpx.Client(base_url=self.base_url, timeout=30)
        self.redis = Redis.from_url(redis_url)

    def start_api(self) -> None:
        self.api = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "graphgpu.service.app:create_app", "--factory",
             "--port", str(self.port), "--log-level", "warning"],
            env=self.env, cwd=REPO,
        )
        wait_until(self._api_up, timeout=30)

    def _api_up(self) -> bool:
        try:
            return self.http.get("/v1/health").status_code == 200
        except httpx.TransportError:
            assert self.api is not None and self.api.poll() is None, "the API exited"
            return False

    def start_worker(self, backend: str = "cpu") -> subprocess.Popen[bytes]:
        before = {w["pid"] for w in self.live_workers()}
        worker = subprocess.Popen([sys.executable, "-m", "graphgpu.workers", "--backend", backend],
                                  env=self.env, cwd=REPO)
        self.workers.append(worker)

        def registered() -> bool:
            assert worker.poll() is None, f"the worker exited with {worker.returncode}"
            return worker.pid in {w["pid"] for w in self.live_workers()} - before

        # A worker registers after compiling every kernel: on a fresh clone (no Numba cache
        # yet, as in CI) that is tens of seconds on two cores; later workers load the cache.
        wait_until(registered, timeout=240, every=0.25)
        # With the caches filled, the later workers of the session (every stack's and
        # `serve`'s) skip the warm-up and load each kernel at its first job: a warm-up that
        # only loads still takes ~8 s of the two cores per worker, and the suite starts dozens.
        os.environ.setdefault("GRAPHGPU_WORKER_WARM_UP", "false")
        return worker

    def live_workers(self) -> list[dict]:
        return self.http.get("/v1/workers").json()["workers"]

    def upload(self, text: str | bytes, **params: str) -> dict:
        data = text.encode() if isinstance(text, str) else text
        response = self.http.post("/v1/graphs", content=data, params=params)
        assert response.status_code in (200, 201), response.text
        return response.json()

    def submit(self, graph_id: str, algorithm: str, params: dict | None = None,
               backend: str = "auto", **kwargs) -> httpx.Response:
        return self.http.post("/v1/jobs", json={"graph_id": graph_id, "algorithm": algorithm,
                                                "params": params or {}, "backend": backend},
                              **kwargs)

    def wait_job(self, job_id: str, timeout: float = 60.0, statuses=("succeeded", "failed",
                                                                       "canceled")) -> dict:
        def done():
            job = self.http.get(f"/v1/jobs/{job_id}").json()
            return job if job["status"] in statuses else None
        return wait_until(done, timeout=timeout)

    def stop(self) -> None:
        for process in [*self.workers, self.api]:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in [*self.workers, self.api]:
            if process is not None:
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
        self.http.close()
        self.redis.close()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on a free port, for the whole test session."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server.start()
    server.stop()


@pytest.fixture
def env(redis_url: str, tmp_path: Path) -> Iterator[tuple[Settings, Redis]]:
    """Settings on the session's redis-server under a fresh key prefix, and a client of it (the
    worker-side protocol tests, without an API or workers)."""
    settings = Settings(redis_url=redis_url, data_dir=tmp_path,
                        redis_prefix=f"e{uuid.uuid4().hex[:8]}")
    redis = Redis.from_url(redis_url)
    yield settings, redis
    redis.close()


@pytest.fixture(scope="session")
def stack(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The shared stack: API plus one CPU worker."""
    shared = Stack(redis_url, tmp_path_factory.mktemp("data"))
    try:  # a start-up that fails must not leave its API or worker running
        shared.start_api()
        shared.start_worker()
        yield shared
    finally:
        shared.stop()


@pytest.fixture
def make_stack(redis_url: str, tmp_path: Path) -> Iterator[Callable[..., Stack]]:
    """Factory for private stacks (tests that kill workers or change limits)."""
    stacks: list[Stack] = []

    def factory(workers: int = 1, **overrides: str) -> Stack:
        private = Stack(redis_url, tmp_path / f"data{len(stacks)}", **overrides)
        stacks.append(private)
        private.start_api()
        for _ in range(workers):
            private.start_worker()
        return private

    yield factory
    for private in stacks:
        private.stop()

"""What every reliability test checks after its fault: nothing lost, nothing stuck."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.serve import api_command
from tests.conftest import REPO, Stack, wait_until

PATH_WITH_TAIL = "10 20\n20 30\n30 40\n20 50\n60 70\n"


def job_records(stack: Stack) -> dict[str, dict[str, Any]]:
    """Every job record of the stack, read from Redis (the API may be the thing under test)."""
    out = {}
    for key in stack.redis.scan_iter(match=f"{stack.prefix}:job:*", count=1000):
        raw = stack.redis.hgetall(key)
        if raw:
            out[key.decode().rsplit(":", 1)[1]] = {k.decode(): json.loads(v)
                                                   for k, v in raw.items()}
    return out


def assert_nothing_lost_or_stuck(stack: Stack, accepted: Iterable[str],
                                 timeout: float = 60.0) -> dict[str, dict[str, Any]]:
    """Wait for every job of the stack to end, then check that none was lost or left behind.

    Parameters
    ----------
    accepted : iterable of str
        Ids of the jobs the API accepted (202): each must still have its record.

    Returns
    -------
    dict
        The final record of every job of the stack, by id.
    """
    accepted = set(accepted)

    def settled() -> dict[str, dict[str, Any]] | None:
        records = job_records(stack)
        done = all(r["status"] in protocol.FINISHED for r in records.values())
        return records if done and accepted <= set(records) else None

    try:
        records = wait_until(settled, timeout=timeout, every=0.2)
    except AssertionError:
        records = job_records(stack)
        lost = accepted - set(records)
        stuck = {i: r["status"] for i, r in records.items() if r["status"] not in protocol.FINISHED}
        raise AssertionError(f"lost jobs: {sorted(lost)}; not finished: {stuck}") from None
    assert not stack.redis.scard(f"{stack.prefix}:jobs:running"), "jobs left in the running set"
    for backend in ("auto", "cpu", "gpu"):
        assert not stack.redis.llen(f"rq:queue:{stack.prefix}-{backend}"), f"{backend} queue"
    return records


class GuardedStack(Stack):
    """A stack whose API runs as ``graphgpu serve`` starts it: uvicorn with the connection
    limits of :func:`graphgpu.service.serve.api_command` (the plain fixture's uvicorn has none).
    """

    def start_api(self) -> None:
        given = {name: self.env[f"GRAPHGPU_{name.upper()}"]
                 for name in ("max_connections", "keep_alive_seconds", "api_loop")
                 if f"GRAPHGPU_{name.upper()}" in self.env}
        settings = Settings(port=self.port, **given)  # the rest the API reads from self.env
        self.api = subprocess.Popen(api_command(sys.executable, settings), env=self.env,
                                    cwd=REPO)

        def up() -> bool:
            assert self.api is not None and self.api.poll() is None, "the API exited"
            try:
                return self.http.get("/v1/health").status_code == 200
            except httpx.TransportError:
                return False

        wait_until(up, timeout=30)


@contextmanager
def supervised(stack: Stack) -> Iterator[tuple[subprocess.Popen[bytes], Callable[[], list]]]:
    """The real supervisor (``python -m graphgpu.service``, as deployed: one CPU worker, no GPU)
    on ``stack``'s settings.

    Yields the process and a probe of the live workers: none while the API does not answer, an
    assertion error once the supervisor has exited. On leaving, the supervisor gets SIGTERM and
    the stack is stopped.
    """
    serve = subprocess.Popen([sys.executable, "-m", "graphgpu.service"], cwd=REPO, env={
        **stack.env, "GRAPHGPU_PORT": str(stack.port), "GRAPHGPU_CPU_WORKERS": "1",
        "CUDA_VISIBLE_DEVICES": ""})

    def up() -> list:
        assert serve.poll() is None, "the service exited"
        try:
            return stack.live_workers()
        except httpx.TransportError:
            return []

    try:
        yield serve, up
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(30)
        stack.stop()


def rss(pid: int) -> int:
    """Resident memory of a process now (``VmRSS``), in bytes."""
    return _status_bytes(pid, "VmRSS")


def peak_rss(pid: int) -> int:
    """Peak resident memory of a process so far (``VmHWM``), in bytes."""
    return _status_bytes(pid, "VmHWM")


def _status_bytes(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def reset_peak_rss(pid: int) -> None:
    """Start a process's ``VmHWM`` again from its current resident memory (Linux
    ``clear_refs``), so that the peak of one request can be read."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")

"""Jobs always end: a stopped worker, a kernel deaf to cancel and to the time limit.

Real processes: redis-server, the API over HTTP, RQ workers (and their monitors), `serve`.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.conftest import PLUGIN, Stack, wait_until
from tests.reliability.conftest import (
    PATH_WITH_TAIL,
    assert_nothing_lost_or_stuck,
    job_records,
    supervised,
)

PLUGINS = f'["{PLUGIN}", "tests.reliability.plugins"]'


def _running_on(stack: Stack, job_id: str) -> dict:
    def running() -> dict | None:
        record = job_records(stack).get(job_id, {})
        return record if record.get("status") == "running" else None
    return wait_until(running, timeout=30)


def _pid_of(stack: Stack, worker: str) -> int:
    return next(w["pid"] for w in stack.live_workers() if w["name"] == worker)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_stopped_worker_is_killed_and_its_job_requeued(make_stack) -> None:
    stack = make_stack(workers=2)
    graph = stack.upload(PATH_WITH_TAIL)["id"]
    job = stack.submit(graph, "test_sleep", {"seconds": 2}).json()["id"]
    record = _running_on(stack, job)
    stopped = record["worker"]
    pid = _pid_of(stack, stopped)
    os.kill(pid, signal.SIGSTOP)
    try:
        final = stack.wait_job(job, timeout=40)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert final["status"] == "succeeded", final
    assert final["worker"] != stopped and [e["worker"] for e in final["lost"]] == [stopped]
    wait_until(lambda: _gone(pid), timeout=10)  # killed, not left stopped
    assert stopped not in {w["name"] for w in stack.live_workers()}
    assert_nothing_lost_or_stuck(stack, [job])


def test_cancel_stops_a_kernel_that_never_polls(make_stack) -> None:
    stack = make_stack(workers=1, extra_algorithm_modules=PLUGINS)
    graph = stack.upload(PATH_WITH_TAIL)["id"]
    job = stack.submit(graph, "test_stubborn", {"seconds": 120}).json()["id"]
    record = _running_on(stack, job)
    pid = _pid_of(stack, record["worker"])
    time.sleep(0.5)
    asked = time.monotonic()
    assert stack.http.delete(f"/v1/jobs/{job}").status_code == 200
    final = stack.wait_job(job, timeout=30)
    took = time.monotonic() - asked
    assert final["status"] == "canceled", final
    assert final["error"]["code"] == "canceled" and "did not stop" in final["error"]["message"]
    assert took < 5.0, f"cancel took {took:.1f} s"
    wait_until(lambda: _gone(pid), timeout=10)
    assert_nothing_lost_or_stuck(stack, [job])


def test_time_limit_stops_a_deaf_kernel_and_serve_restarts_the_worker(
        redis_url: str, tmp_path: Path) -> None:
    # warm-up on: the bfs after the restart must not load its kernels inside the 2 s limit
    stack = Stack(redis_url, tmp_path / "data", max_job_seconds="2",
                  extra_algorithm_modules=PLUGINS, worker_warm_up="true")
    with supervised(stack) as (serve, up):
        first = wait_until(up, timeout=240)[0]
        graph = stack.upload(PATH_WITH_TAIL)["id"]
        job = stack.submit(graph, "test_stubborn", {"seconds": 120}).json()["id"]
        started = time.monotonic()
        final = stack.wait_job(job, timeout=30)
        took = time.monotonic() - started
        assert final["status"] == "failed" and final["error"]["code"] == "timeout", final
        assert "did not stop" in final["error"]["message"]
        assert took < 2 + 5, f"the 2 s limit stopped the job after {took:.1f} s"
        # serve brings a worker back, and the service goes on serving
        wait_until(lambda: [w for w in up() if w["pid"] != first["pid"]], timeout=240)
        again = stack.submit(graph, "bfs", {"source": 20}).json()["id"]
        assert stack.wait_job(again)["status"] == "succeeded"
        assert serve.poll() is None
        assert_nothing_lost_or_stuck(stack, [job, again])

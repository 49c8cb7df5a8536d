"""Faults injected into a live stack (real redis-server, API and RQ workers over loopback).

Each test breaks something (a worker, Redis, the API, the upload limit, a storm of cancels) and
then checks that no accepted job was lost and none is left ``running``.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from graphgpu.service.redis_server import RedisServer
from tests.conftest import Stack, wait_until
from tests.reliability.conftest import (
    PATH_WITH_TAIL,
    assert_nothing_lost_or_stuck,
    job_records,
    supervised,
)


def _kill_worker_of(stack: Stack, job_id: str, attempt: int) -> str:
    """SIGKILL the worker running ``attempt`` of the job; returns its name."""
    def running() -> str | None:
        record = job_records(stack).get(job_id, {})
        ok = record.get("status") == "running" and record.get("attempts") == attempt
        return record["worker"] if ok else None

    name = wait_until(running, timeout=30)
    pid = next(w["pid"] for w in stack.live_workers() if w["name"] == name)
    os.kill(pid, signal.SIGKILL)
    return name


def test_killed_worker_job_is_retried_once_then_fails(make_stack) -> None:
    stack = make_stack(workers=3)
    graph = stack.upload(PATH_WITH_TAIL)["id"]

    retried = stack.submit(graph, "test_sleep", {"seconds": 2}).json()["id"]
    first = _kill_worker_of(stack, retried, attempt=1)
    final = stack.wait_job(retried, timeout=40)
    assert final["status"] == "succeeded", final
    assert final["worker"] != first
    assert final["attempts"] == 2 and [e["worker"] for e in final["lost"]] == [first]

    doomed = stack.submit(graph, "test_sleep", {"seconds": 30}).json()["id"]
    lost = [_kill_worker_of(stack, doomed, attempt=1), _kill_worker_of(stack, doomed, attempt=2)]
    final = stack.wait_job(doomed, timeout=40)
    assert final["status"] == "failed" and final["error"]["code"] == "worker_lost"
    assert all(name in final["error"]["message"] for name in lost)

    records = assert_nothing_lost_or_stuck(stack, [retried, doomed])
    assert records[retried]["attempts"] == 2
    assert [e["worker"] for e in records[retried]["lost"]] == [first]
    assert [e["worker"] for e in records[doomed]["lost"]] == lost


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[list[RedisServer]]:
    """A redis-server of this test alone (with AOF), so that restarting it harms no one.

    A list: the test appends the server it restarts, and every one is stopped afterwards.
    """
    servers = [RedisServer(tmp_path / "redis")]
    servers[0].start()
    yield servers
    for server in servers:
        server.stop()


def test_redis_restart_mid_queue(private_redis: list[RedisServer], tmp_path: Path) -> None:
    # The real supervisor (`python -m service`), as deployed: a worker that loses Redis in the
    # middle of a job exits and is restarted, and its monitor queues the job again.
    first = private_redis[0]
    stack = Stack(first.url, tmp_path / "data")
    with supervised(stack) as (serve, up):
        wait_until(up, timeout=60)
        graph = stack.upload(PATH_WITH_TAIL)["id"]
        accepted = [stack.submit(graph, "test_sleep", {"seconds": 0.3}).json()["id"]
                    for _ in range(10)]
        stack.wait_job(accepted[0], statuses=("running", "succeeded"))
        first.stop()  # SIGTERM: Redis writes its AOF out, as in a clean restart
        time.sleep(1.0)
        private_redis.append(RedisServer(first.data_dir, port=first.port))
        private_redis[-1].start()
        records = assert_nothing_lost_or_stuck(stack, accepted, timeout=90)
        assert all(records[i]["status"] == "succeeded" for i in accepted), {
            i: (records[i]["status"], records[i].get("error")) for i in accepted}
        # the service goes on serving
        again = stack.submit(graph, "bfs", {"source": 20}).json()["id"]
        assert stack.wait_job(again)["status"] == "succeeded"
        assert serve.poll() is None


def test_api_restart_while_clients_poll(make_stack) -> None:
    stack = make_stack(workers=1)
    graph = stack.upload(PATH_WITH_TAIL)["id"]
    accepted = [stack.submit(graph, "test_sleep", {"seconds": 0.4}).json()["id"]
                for _ in range(6)]
    outage_errors = []
    finals: dict[str, str] = {}

    def poll(job_id: str) -> None:
        with httpx.Client(base_url=stack.base_url, timeout=5) as client:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    response = client.get(f"/v1/jobs/{job_id}")
                except httpx.TransportError as exc:
                    outage_errors.append(exc)
                    time.sleep(0.1)
                    continue
                assert response.status_code == 200, response.text
                if response.json()["status"] in ("succeeded", "failed", "canceled"):
                    finals[job_id] = response.json()["status"]
                    return
                time.sleep(0.05)

    pollers = [threading.Thread(target=poll, args=(i,)) for i in accepted]
    for thread in pollers:
        thread.start()
    time.sleep(0.3)
    assert stack.api is not None
    stack.api.send_signal(signal.SIGTERM)
    stack.api.wait(15)
    stack.start_api()
    for thread in pollers:
        thread.join(70)
    assert outage_errors, "the pollers never saw the API down"
    assert finals == dict.fromkeys(accepted, "succeeded")
    assert_nothing_lost_or_stuck(stack, accepted)


def test_uploads_over_the_limit_leave_the_service_serving(make_stack) -> None:
    limit = 4096
    stack = make_stack(workers=1, max_upload_bytes=str(limit))
    big = b"".join(b"%d %d\n" % (i, i + 1) for i in range(1000))
    assert len(big) > limit

    def chunks():  # no Content-Length: the limit must hold while streaming
        for start in range(0, len(big), 1000):
            yield big[start:start + 1000]

    def upload(kind: int) -> httpx.Response:
        with httpx.Client(base_url=stack.base_url, timeout=30) as client:
            if kind == 0:
                return client.post("/v1/graphs", content=big)
            if kind == 1:
                return client.post("/v1/graphs", content=chunks())
            return client.post("/v1/graphs", files={"file": ("big.txt", big)})

    with ThreadPoolExecutor(6) as pool:
        responses = list(pool.map(upload, [k % 3 for k in range(24)]))
    assert {r.status_code for r in responses} == {413}
    assert {r.json()["error"]["code"] for r in responses} == {"upload_too_large"}
    assert stack.http.get("/v1/graphs").json()["graphs"] == []

    graph = stack.upload(PATH_WITH_TAIL)["id"]
    job = stack.submit(graph, "bfs", {"source": 20}).json()["id"]
    assert stack.wait_job(job)["status"] == "succeeded"
    assert_nothing_lost_or_stuck(stack, [job])


def test_cancel_storm(make_stack) -> None:
    stack = make_stack(workers=2)
    graph = stack.upload(PATH_WITH_TAIL)["id"]

    def submit_then_cancel(k: int) -> tuple[str, int]:
        with httpx.Client(base_url=stack.base_url, timeout=30) as client:
            response = client.post("/v1/jobs", json={
                "graph_id": graph, "algorithm": "test_sleep", "params": {"seconds": 0.2}})
            assert response.status_code == 202, response.text
            job_id = response.json()["id"]
            time.sleep(0.01 * (k % 7))  # some cancels land while queued, some while running
            return job_id, client.delete(f"/v1/jobs/{job_id}").status_code

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(submit_then_cancel, range(80)))
    assert {code for _, code in outcomes} <= {200, 409}
    records = assert_nothing_lost_or_stuck(stack, [job_id for job_id, _ in outcomes])
    statuses = {job_id: records[job_id]["status"] for job_id, _ in outcomes}
    assert set(statuses.values()) <= {"canceled", "succeeded"}, statuses
    # 409: it had already ended. 200: it ends canceled, unless it was running and ended before
    # its next progress report
    assert all(statuses[job_id] == "succeeded" for job_id, code in outcomes if code == 409)
    assert "canceled" in statuses.values()
    assert not stack.redis.scard(f"{stack.prefix}:graph:{graph}:jobs")

"""The short submit path (issue 23): admission is one script with the job's record (no lock),
counts what is already admitted and the key's active jobs; long-polls share one pub/sub listener
that survives losing its connection. Through the real API, on a real redis-server, without
workers (jobs stay queued).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest

from tests.conftest import PLUGIN, Stack, wait_until

PATH_WITH_TAIL = "10 20\n20 30\n30 40\n20 50\n60 70\n"
MIB = 1024**2


@pytest.fixture(scope="module")
def idle(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """An API without workers, one fake GPU worker with 100 MiB free, 3 active jobs a key."""
    stack = Stack(redis_url, tmp_path_factory.mktemp("submit"), max_active_jobs_per_key="3",
                  extra_algorithm_modules=json.dumps([PLUGIN, "tests.support.memory_algorithm"]))
    stack.start_api()
    record = {"name": "fake-gpu", "backend": "gpu", "device": "Fake GPU", "host": "test",
              "pid": 1, "started_at": time.time(), "gpu_free_bytes": 100 * MIB,
              "gpu_total_bytes": 200 * MIB}
    stack.redis.set(f"{stack.prefix}:worker:fake-gpu", json.dumps(record), px=600_000)
    stack.redis.sadd(f"{stack.prefix}:workers", "fake-gpu")
    yield stack
    stack.stop()


def _gpu_job(stack: Stack, graph_id: str, device_bytes: int):
    return stack.submit(graph_id, "test_memory", {"device_bytes": device_bytes}, backend="gpu")


def test_admission_takes_no_lock_and_records_the_job_in_the_same_step(idle: Stack) -> None:
    graph = idle.upload(PATH_WITH_TAIL)["id"]
    lock = f"{idle.prefix}:admission:lock"  # the lock of earlier versions: not waited for
    assert idle.redis.set(lock, "held by the test", nx=True, px=60_000)
    try:
        job = _gpu_job(idle, graph, MIB + 1)
        assert job.status_code == 202, job.text
    finally:
        idle.redis.delete(lock)
    job_id = job.json()["id"]
    admitted = idle.redis.hget(f"{idle.prefix}:jobs:admitted", job_id)
    assert json.loads(admitted)["device_bytes"] == MIB + 1  # counted against later jobs
    assert idle.redis.sismember(f"{idle.prefix}:graph:{graph}:jobs", job_id)
    assert idle.redis.zscore(f"{idle.prefix}:jobs", job_id) is not None
    assert idle.http.delete(f"/v1/jobs/{job_id}").status_code == 200


def test_a_refused_job_leaves_nothing_behind(idle: Stack) -> None:
    graph = idle.upload(PATH_WITH_TAIL + "100 110\n")["id"]
    before = idle.redis.zcard(f"{idle.prefix}:jobs")
    too_big = _gpu_job(idle, graph, 101 * MIB)  # passes the worker's 100 MiB
    assert too_big.status_code == 413, too_big.text
    assert too_big.json()["error"]["code"] == "insufficient_device_memory"
    kept = [_gpu_job(idle, graph, MIB) for _ in range(3)]  # the key's cap of 3
    assert [k.status_code for k in kept] == [202] * 3, [k.text for k in kept]
    over = idle.http.post("/v1/jobs", json={
        "graph_id": graph, "algorithm": "test_memory", "params": {"device_bytes": MIB},
        "backend": "gpu"}, headers={"Idempotency-Key": "over-the-cap"})
    assert over.status_code == 429, over.text
    assert over.json()["error"]["code"] == "too_many_jobs"
    # neither refusal left a record, an index entry, admitted memory or an idempotency claim
    assert idle.redis.zcard(f"{idle.prefix}:jobs") == before + 3
    assert idle.redis.hlen(f"{idle.prefix}:jobs:admitted") == 3
    assert not idle.redis.keys(f"{idle.prefix}:idempotency:*")
    for k in kept:
        assert idle.http.delete(f"/v1/jobs/{k.json()['id']}").status_code == 200
    again = idle.http.post("/v1/jobs", json={
        "graph_id": graph, "algorithm": "test_memory", "params": {"device_bytes": MIB},
        "backend": "gpu"}, headers={"Idempotency-Key": "over-the-cap"})
    assert again.status_code == 202, again.text  # the slots of canceled jobs are free again
    assert idle.http.delete(f"/v1/jobs/{again.json()['id']}").status_code == 200


def test_admitted_memory_is_counted_until_the_job_ends(idle: Stack) -> None:
    graph = idle.upload(PATH_WITH_TAIL + "80 90\n")["id"]
    first = _gpu_job(idle, graph, 60 * MIB)
    assert first.status_code == 202, first.text
    second = _gpu_job(idle, graph, 60 * MIB)  # the first holds 60 of the 100 MiB
    assert second.status_code == 413, second.text
    assert second.json()["error"]["code"] == "insufficient_device_memory"
    assert idle.http.delete(f"/v1/jobs/{first.json()['id']}").json()["status"] == "canceled"
    again = _gpu_job(idle, graph, 60 * MIB)  # the canceled job's memory is free again
    assert again.status_code == 202, again.text
    idle.http.delete(f"/v1/jobs/{again.json()['id']}")


def test_a_long_poll_answers_after_its_listener_lost_the_connection(idle: Stack) -> None:
    graph = idle.upload(PATH_WITH_TAIL + "90 100\n")["id"]
    job = idle.submit(graph, "bfs", {"source": 10}, backend="cpu").json()
    answer: dict = {}

    def poll() -> None:
        response = idle.http.get(f"/v1/jobs/{job['id']}", params={"wait": 25}, timeout=60)
        answer.update(response.json(), answered=time.monotonic())

    waiter = threading.Thread(target=poll)
    waiter.start()

    def listening() -> bool:
        return any(b"cmd=psubscribe" in line or b"psub=1" in line
                   for line in idle.redis.execute_command("CLIENT LIST TYPE pubsub",
                                                          NEVER_DECODE=True).splitlines())

    wait_until(listening, timeout=10)
    time.sleep(0.3)  # the long-poll has read the record and waits
    idle.redis.execute_command("CLIENT KILL TYPE pubsub")  # the API subscribes again
    wait_until(listening, timeout=10)
    canceled = time.monotonic()
    assert idle.http.delete(f"/v1/jobs/{job['id']}").json()["status"] == "canceled"
    waiter.join(30)
    assert answer["status"] == "canceled"
    assert answer["answered"] - canceled < 10  # woken by the end, not by its 25 s running out


def test_the_listener_subscribes_when_the_api_starts(env) -> None:
    """The long-polls' listener starts with the application, before any long-poll (the first
    one paid its connection and subscribe), and stops with it."""
    import asyncio

    from graphgpu.service.app import create_app

    settings, _ = env
    app = create_app(settings)

    async def lifetime() -> asyncio.Task:
        async with app.router.lifespan_context(app):
            await asyncio.wait_for(app.state.job_ends.listening.wait(), 10)
            task = app.state.job_ends.task
            assert task is not None and not task.done()
        return task

    assert asyncio.run(lifetime()).done()

"""One owner per attempt, long-polls that cannot starve the API, admission that counts what is
already admitted (issue 28, repros 7, 8 and 11).

Real redis-server; the API over HTTP for the long-poll and admission repros.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest
from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import JobCanceled
from graphgpu.kernels.core.graph import build_graph
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.service.limits import DEFAULT_HOST_BYTES_PER_NODE
from graphgpu.workers import records, tasks
from graphgpu.workers.context import WorkerContext
from graphgpu.workers.monitor import recover_lost_jobs
from tests.reliability.conftest import PATH_WITH_TAIL


def _requeued(redis: Redis, settings: Settings) -> str:
    """A job queued again after its first worker was killed (attempt 1 lost)."""
    job_id = uuid.uuid4().hex
    record = {"id": job_id, "status": "queued", "graph_id": "g1", "created_at": time.time(),
              "attempts": 1, "lost": [{"worker": "killed", "attempt": 1, "at": time.time()}],
              "progress": {"fraction": 0.0, "message": "queued again"}}
    redis.hset(protocol.job_key(settings, job_id), mapping=protocol.encode_fields(record))
    Queue(settings.queue_name("cpu"), connection=redis,
          serializer=JSONSerializer).enqueue(protocol.TASK, job_id, job_id=job_id)
    return job_id


def test_a_claimed_attempt_is_not_lost_before_its_monitor_beats(env) -> None:
    """Repro 7: the restarted worker claims the re-queued job; another worker's monitor looks
    before the new worker's monitor has beaten once. The job must stay running, not fail as
    ``worker_lost``."""
    settings, redis = env
    job_id = _requeued(redis, settings)
    assert records.claim(redis, settings, job_id, "restarted") is not None
    assert recover_lost_jobs(redis, settings) == {}
    record = records.read(redis, settings, job_id)
    assert record["status"] == "running" and record["worker"] == "restarted"
    # once its heartbeat has expired it is lost indeed (the monitors still reap)
    redis.delete(protocol.worker_key(settings, "restarted"))
    assert recover_lost_jobs(redis, settings) == {job_id: "failed"}


def test_a_worker_stops_computing_a_job_it_no_longer_owns(env) -> None:
    """Repro 7, the other half: a job failed (or re-queued) under a worker makes that worker's
    kernel stop at its next progress report, and the ended record keeps its final progress."""
    settings, redis = env
    job_id = _requeued(redis, settings)
    records.claim(redis, settings, job_id, "w1")
    report = records.ProgressReporter(redis, settings, job_id, "w1")
    report(0.5, "half")
    assert records.finish(redis, settings, job_id, "failed", fields={
        "error": {"code": "worker_lost", "message": "taken for lost"}})
    final = records.read(redis, settings, job_id)["progress"]
    with pytest.raises(JobCanceled, match="failed"):
        report.confirm()
    later = records.ProgressReporter(redis, settings, job_id, "w1")  # a report past the interval
    with pytest.raises(JobCanceled, match="failed"):
        later(1.0, "done")
    assert records.read(redis, settings, job_id)["progress"] == final

    other = _requeued(redis, settings)
    records.claim(redis, settings, other, "w2")
    stale = records.ProgressReporter(redis, settings, other, "w1")  # an attempt of w1's
    with pytest.raises(JobCanceled, match="w2"):
        stale(1.0, "done")


async def _long_polls(base_url: str, job_id: str, count: int, wait: float
                      ) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=count + 10)
    async with httpx.AsyncClient(base_url=base_url, timeout=wait + 30, limits=limits) as http:
        polls = [asyncio.create_task(http.get(f"/v1/jobs/{job_id}", params={"wait": wait}))
                 for _ in range(count)]
        await asyncio.sleep(1.0)  # the long-polls hold their connections now
        others = await asyncio.gather(http.get(f"/v1/jobs/{job_id}"),
                                      http.get(f"/v1/jobs/{job_id}", params={"wait": 0.5}),
                                      http.get("/v1/graphs"))
        return [*others, *await asyncio.gather(*polls)]


def test_long_polls_cannot_starve_other_requests(make_stack) -> None:
    """Repro 8: 110 concurrent ``?wait=`` on a job that does not end (no worker) used up the
    API's Redis pool (100) and other requests got 503 ``redis_unavailable``."""
    stack = make_stack(workers=0)
    graph = stack.upload(PATH_WITH_TAIL)
    job = stack.submit(graph["id"], "bfs", {"source": 10}).json()
    responses = asyncio.run(_long_polls(stack.base_url, job["id"], 110, wait=4.0))
    assert [r.status_code for r in responses] == [200] * len(responses), \
        {r.status_code: r.text for r in responses if r.status_code != 200}
    # past the cap a poll is answered at once with when to ask again
    assert any(r.headers.get("Retry-After") == "2" for r in responses[3:])


def _fake_worker(stack, host_free_bytes: int) -> None:
    """A live CPU worker as the API sees it (its heartbeat record), reporting free memory."""
    name = f"fake-{uuid.uuid4().hex[:6]}"
    key = f"{stack.prefix}:worker:{name}"
    stack.redis.set(key, json.dumps({"name": name, "backend": "cpu", "device": "cpu",
                                     "host_free_bytes": host_free_bytes}))
    stack.redis.sadd(f"{stack.prefix}:workers", name)


def test_admission_counts_the_memory_of_jobs_already_admitted(make_stack) -> None:
    """Repro 11: two jobs that each fit the free memory alone, but not together, were both
    admitted. Only one is now, the others are refused (413) while it is queued, and one is
    admitted again once it has ended."""
    stack = make_stack(workers=0)
    graph = stack.upload(PATH_WITH_TAIL)
    # bfs makes no estimate of its own: the default is the stored arrays plus work arrays and
    # the result per node (service.limits.default_host_bytes)
    need = graph["bytes"] + (DEFAULT_HOST_BYTES_PER_NODE + 16) * graph["n"]
    _fake_worker(stack, need + need // 2)
    # submitted side by side: admission is one step with the record, so exactly one fits
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda source: stack.submit(graph["id"], "bfs",
                                                             {"source": source}),
                                [10, 20, 30, 40, 50, 10]))
    assert sorted(a.status_code for a in answers) == [202] + [413] * 5, [a.text for a in answers]
    first = next(a for a in answers if a.status_code == 202)
    refused = next(a for a in answers if a.status_code == 413)
    assert refused.json()["error"]["code"] == "insufficient_host_memory"
    assert stack.http.delete(f"/v1/jobs/{first.json()['id']}").status_code == 200
    again = stack.submit(graph["id"], "bfs", {"source": 20})
    assert again.status_code == 202, again.text


def test_an_attempt_taken_for_lost_while_computing_writes_no_result(
        env, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand-off checks that the attempt still owns the job before it writes the result:
    a job failed as ``worker_lost`` while the kernel ran (here: as its result reached the host,
    after the kernel's last progress report) gets no result from this attempt, and its record
    stays as the failure left it."""
    settings, redis = env
    store = GraphStore(settings.graphs_dir, settings.tmp_dir)
    graph, report = build_graph(np.array([0, 1, 2]), np.array([1, 2, 3]))
    meta, _ = store.put(graph, name="path", source={"format": "test"}, report=report)
    job_id = uuid.uuid4().hex
    record = {"id": job_id, "kind": "algorithm", "algorithm": "bfs", "graph_id": meta["id"],
              "params": {"source": 0}, "backend_requested": "cpu", "status": "queued",
              "progress": {"fraction": 0.0, "message": "queued"}, "created_at": time.time()}
    redis.hset(protocol.job_key(settings, job_id), mapping=protocol.encode_fields(record))
    worker = WorkerContext(settings=settings, redis=redis, graphs=store, name="w1",
                           backend="cpu", device="cpu")
    monkeypatch.setattr(tasks, "current_context", lambda: worker)
    computed = tasks.result_arrays

    def taken_for_lost(graph, result):
        records.finish(redis, settings, job_id, "failed", fields={
            "error": {"code": "worker_lost", "message": "taken for lost"}})
        return computed(graph, result)

    monkeypatch.setattr(tasks, "result_arrays", taken_for_lost)
    tasks.execute(job_id)
    assert not protocol.result_folder(settings, job_id).exists()
    after = records.read(redis, settings, job_id)
    assert after["status"] == "failed" and after["error"]["code"] == "worker_lost"

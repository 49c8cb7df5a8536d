"""The worker side of the job protocol against a real Redis: claim, finish, lost-worker recovery."""

from __future__ import annotations

import json
import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from redis import Redis
from rq import Queue
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import JobCanceled
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.job_ends import ended_record
from graphgpu.workers import records
from graphgpu.workers.monitor import recover_lost_jobs
from graphgpu.workers.tasks import sweep_results


def _queued(redis: Redis, settings: Settings, graph_id: str = "g1") -> str:
    """A job as the API queues it: its record, and its RQ job on the ``cpu`` queue."""
    job_id = uuid.uuid4().hex
    record = {"id": job_id, "status": "queued", "graph_id": graph_id, "created_at": time.time(),
              "progress": {"fraction": 0.0, "message": "queued"}}
    redis.hset(protocol.job_key(settings, job_id),
               mapping={k: json.dumps(v) for k, v in record.items()})
    redis.sadd(settings.key("graph", graph_id, "jobs"), job_id)
    _queue(redis, settings).enqueue(protocol.TASK, job_id, job_id=job_id)
    return job_id


def _queue(redis: Redis, settings: Settings) -> Queue:
    return Queue(settings.queue_name("cpu"), connection=redis, serializer=JSONSerializer)


def _take(redis: Redis, settings: Settings, job_id: str, worker: str) -> None:
    """What a worker does with the job: pop it from the queue (RQ), then claim it (ours)."""
    queue = _queue(redis, settings)
    assert queue.get_job_ids() == [job_id]
    queue.remove(job_id)
    # RQ's record of the execution, which the dead worker leaves behind
    redis.zadd(StartedJobRegistry(queue.name, connection=redis).key,
               {f"{job_id}:{uuid.uuid4().hex}": time.time() + 3600})
    assert records.claim(redis, settings, job_id, worker) is not None
    # then it dies: the heartbeat that the claim wrote expires
    redis.delete(protocol.worker_key(settings, worker))


def test_claim_then_finish(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    record = records.claim(redis, settings, job_id, "w1")
    assert record is not None and record["status"] == "running" and record["worker"] == "w1"
    assert records.claim(redis, settings, job_id, "w2") is None  # only once
    assert records.finish(redis, settings, job_id, "succeeded", fields={"backend": "cpu"})
    final = records.read(redis, settings, job_id)
    assert final["status"] == "succeeded" and final["progress"]["fraction"] == 1.0
    assert not redis.sismember(protocol.running_key(settings), job_id)
    assert not redis.scard(settings.key("graph", "g1", "jobs"))
    assert 0 < redis.ttl(protocol.job_key(settings, job_id)) <= settings.result_ttl
    assert not records.finish(redis, settings, job_id, "failed", fields={})  # already final


def test_finish_is_one_step_for_the_owner_only(env) -> None:
    """A final status is written only by the attempt's worker; with it, the admitted memory is
    released and the end published; a failure keeps the progress it reached."""
    settings, redis = env
    job_id = _queued(redis, settings)
    redis.hset(protocol.admitted_key(settings), job_id, json.dumps({"host_bytes": 10}))
    records.claim(redis, settings, job_id, "w1")
    records.ProgressReporter(redis, settings, job_id, "w1")(0.5, "half")
    listener = redis.pubsub(ignore_subscribe_messages=True)
    listener.subscribe(protocol.job_done_channel(settings, job_id))
    assert not records.finish(redis, settings, job_id, "failed", fields={"error": {}},
                              only_if_worker="w2")
    assert records.read(redis, settings, job_id)["status"] == "running"
    assert redis.hexists(protocol.admitted_key(settings), job_id)
    assert records.finish(redis, settings, job_id, "failed", only_if_worker="w1",
                          fields={"error": {"code": "x", "message": "y"}, "timings": {"a": 1}})
    final = records.read(redis, settings, job_id)
    assert final["status"] == "failed" and final["error"] == {"code": "x", "message": "y"}
    assert final["progress"] == {"fraction": 0.5, "message": "half"}
    assert final["timings"] == {"a": 1} and final["finished_at"] >= final["started_at"]
    assert not redis.hexists(protocol.admitted_key(settings), job_id)
    assert not redis.scard(settings.key("graph", "g1", "jobs"))
    message = wait_for_message(listener)  # the final record, as a long-poll takes it
    assert ended_record(message["data"]) == final
    listener.close()


def wait_for_message(listener) -> dict:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        message = listener.get_message(timeout=0.1)
        if message is not None:
            return message
    raise AssertionError("no message published")


def test_canceled_job_is_not_claimed(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    redis.hset(protocol.job_key(settings, job_id), "status", json.dumps("canceled"))
    assert records.claim(redis, settings, job_id, "w1") is None


def test_progress_reporter_raises_once_canceled(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    records.claim(redis, settings, job_id, "w1")
    report = records.ProgressReporter(redis, settings, job_id)
    report(0.5, "half")
    assert records.read(redis, settings, job_id)["progress"] == {"fraction": 0.5,
                                                                 "message": "half"}
    redis.hset(protocol.job_key(settings, job_id), "cancel_requested", json.dumps(True))
    with pytest.raises(JobCanceled):
        report.confirm()


def test_a_report_just_after_the_claim_costs_no_round_trip_but_confirm_checks(env) -> None:
    """The worker's reporter starts from its claim (which read the record): early reports are
    skipped, the last one (fraction 1) too; ``confirm`` (the hand-off's check before it writes a
    result) checks at once that the attempt is this worker's, and writes no progress."""
    settings, redis = env
    job_id = _queued(redis, settings)
    records.claim(redis, settings, job_id, "w1")
    report = records.ProgressReporter(redis, settings, job_id, "w1", since=time.monotonic())
    redis.hset(protocol.job_key(settings, job_id), "cancel_requested", json.dumps(True))
    report(0.0, "starting")  # not sent: the claim has just looked
    report(1.0, "done")
    assert records.read(redis, settings, job_id)["progress"]["message"] == "started"
    with pytest.raises(JobCanceled):
        report.confirm()
    assert records.read(redis, settings, job_id)["progress"]["message"] == "started"


def test_lost_job_is_requeued_once_then_fails(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    _take(redis, settings, job_id, "w1")
    assert records.recover_lost(redis, settings, job_id, "w1") == "requeued"
    again = records.read(redis, settings, job_id)
    assert again["status"] == "queued" and again["attempts"] == 1 and "worker" not in again
    assert "w1" in again["progress"]["message"] and "attempt 2" in again["progress"]["message"]
    assert not redis.sismember(protocol.running_key(settings), job_id)
    assert redis.sismember(settings.key("graph", "g1", "jobs"), job_id)  # still in use
    started = StartedJobRegistry(_queue(redis, settings).name, connection=redis)
    assert redis.zcard(started.key) == 0  # RQ's clean-up cannot fail the new attempt later
    assert records.recover_lost(redis, settings, job_id, "w1") is None  # only once

    _take(redis, settings, job_id, "w2")  # same RQ job id, same queue
    assert records.read(redis, settings, job_id)["attempts"] == 2
    assert records.recover_lost(redis, settings, job_id, "w2") == "failed"
    final = records.read(redis, settings, job_id)
    assert final["status"] == "failed" and final["error"]["code"] == "worker_lost"
    assert "w1" in final["error"]["message"] and "w2" in final["error"]["message"]
    assert [e["attempt"] for e in final["lost"]] == [1, 2]
    assert _queue(redis, settings).get_job_ids() == []
    assert not redis.scard(settings.key("graph", "g1", "jobs"))


def test_worker_taken_for_dead_cannot_overwrite_the_retry(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    _take(redis, settings, job_id, "w1")
    assert records.recover_lost(redis, settings, job_id, "w1") == "requeued"
    _take(redis, settings, job_id, "w2")
    # w1 was only silent, and ends its run: what the task's finish does
    assert not records.finish(redis, settings, job_id, "succeeded", fields={},
                              only_if_worker="w1")
    again = records.read(redis, settings, job_id)
    assert again["status"] == "running" and again["worker"] == "w2"


def test_lost_job_with_a_cancel_request_is_not_resurrected(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    _take(redis, settings, job_id, "w1")
    redis.hset(protocol.job_key(settings, job_id), "cancel_requested", json.dumps(True))
    assert records.recover_lost(redis, settings, job_id, "w1") == "canceled"
    assert records.read(redis, settings, job_id)["status"] == "canceled"
    assert _queue(redis, settings).get_job_ids() == []


def test_requeued_job_canceled_meanwhile_is_not_claimed(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    _take(redis, settings, job_id, "w1")
    assert records.recover_lost(redis, settings, job_id, "w1") == "requeued"
    redis.hset(protocol.job_key(settings, job_id), "status", json.dumps("canceled"))  # the API
    assert records.claim(redis, settings, job_id, "w2") is None


def test_concurrent_monitors_requeue_exactly_once(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    _take(redis, settings, job_id, "w1")

    def monitor(_: int) -> str | None:
        with Redis.from_url(settings.redis_url) as own:  # one connection each, as in real life
            return records.recover_lost(own, settings, job_id, "w1")

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(monitor, range(8)))
    assert outcomes.count("requeued") == 1 and outcomes.count(None) == 7
    assert _queue(redis, settings).get_job_ids() == [job_id]


def test_jobs_of_expired_workers_are_recovered_and_live_ones_stay(env) -> None:
    settings, redis = env
    alive = _queued(redis, settings)
    _take(redis, settings, alive, "alive-worker")
    dead = _queued(redis, settings)
    _take(redis, settings, dead, "dead-worker")
    redis.set(protocol.worker_key(settings, "alive-worker"), "{}", px=5000)
    assert recover_lost_jobs(redis, settings) == {dead: "requeued"}
    assert records.read(redis, settings, dead)["status"] == "queued"
    assert records.read(redis, settings, alive)["status"] == "running"
    # a worker known dead loses its job even while its heartbeat key lingers
    assert recover_lost_jobs(redis, settings, dead_worker="alive-worker") == {alive: "requeued"}
    assert sorted(_queue(redis, settings).get_job_ids()) == sorted([alive, dead])


def test_sweep_removes_only_expired_results(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    os.utime(old, (time.time() - 100, time.time() - 100))
    assert sweep_results(tmp_path, ttl=50) == 1
    assert not old.exists() and new.exists()

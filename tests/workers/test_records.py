"""The worker side of the job protocol against a real Redis: claim, finish, lost-worker reaping."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest
from redis import Redis

from kernels.errors import JobCanceled
from kernels.settings import Settings
from workers import records
from workers.monitor import fail_lost_jobs, worker_key
from workers.tasks import sweep_results


@pytest.fixture
def env(redis_url: str, tmp_path: Path):
    settings = Settings(redis_url=redis_url, data_dir=tmp_path,
                        redis_prefix=f"w{uuid.uuid4().hex[:8]}")
    redis = Redis.from_url(redis_url)
    yield settings, redis
    redis.close()


def _queued(redis: Redis, settings: Settings, graph_id: str = "g1") -> str:
    job_id = uuid.uuid4().hex
    record = {"id": job_id, "status": "queued", "graph_id": graph_id, "created_at": time.time(),
              "progress": {"fraction": 0.0, "message": "queued"}}
    redis.hset(records.job_key(settings, job_id),
               mapping={k: json.dumps(v) for k, v in record.items()})
    redis.sadd(settings.key("graph", graph_id, "jobs"), job_id)
    return job_id


def test_claim_then_finish(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    record = records.claim(redis, settings, job_id, "w1")
    assert record is not None and record["status"] == "running" and record["worker"] == "w1"
    assert records.claim(redis, settings, job_id, "w2") is None  # only once
    assert records.finish(redis, settings, job_id, "succeeded", fields={"backend": "cpu"})
    final = records.read(redis, settings, job_id)
    assert final["status"] == "succeeded" and final["progress"]["fraction"] == 1.0
    assert not redis.sismember(records.running_key(settings), job_id)
    assert not redis.scard(settings.key("graph", "g1", "jobs"))
    assert 0 < redis.ttl(records.job_key(settings, job_id)) <= settings.result_ttl
    assert not records.finish(redis, settings, job_id, "failed", fields={})  # already final


def test_canceled_job_is_not_claimed(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    redis.hset(records.job_key(settings, job_id), "status", json.dumps("canceled"))
    assert records.claim(redis, settings, job_id, "w1") is None


def test_progress_reporter_raises_once_canceled(env) -> None:
    settings, redis = env
    job_id = _queued(redis, settings)
    records.claim(redis, settings, job_id, "w1")
    report = records.ProgressReporter(redis, settings, job_id)
    report(0.5, "half")
    assert records.read(redis, settings, job_id)["progress"] == {"fraction": 0.5,
                                                                 "message": "half"}
    redis.hset(records.job_key(settings, job_id), "cancel_requested", json.dumps(True))
    with pytest.raises(JobCanceled):
        report(1.0, "done")


def test_jobs_of_expired_workers_fail_and_live_ones_stay(env) -> None:
    settings, redis = env
    alive, dead = _queued(redis, settings), _queued(redis, settings)
    records.claim(redis, settings, alive, "alive-worker")
    records.claim(redis, settings, dead, "dead-worker")
    redis.set(worker_key(settings, "alive-worker"), "{}", px=5000)
    assert fail_lost_jobs(redis, settings) == [dead]
    lost = records.read(redis, settings, dead)
    assert lost["status"] == "failed" and lost["error"]["code"] == "worker_lost"
    assert records.read(redis, settings, alive)["status"] == "running"
    # a worker known dead loses its job even while its heartbeat key lingers
    assert fail_lost_jobs(redis, settings, dead_worker="alive-worker") == [alive]


def test_sweep_removes_only_expired_results(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    os.utime(old, (time.time() - 100, time.time() - 100))
    assert sweep_results(tmp_path, ttl=50) == 1
    assert not old.exists() and new.exists()

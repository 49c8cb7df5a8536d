"""The worker's RQ class against a real Redis: which of RQ's own heartbeats reach Redis."""

from __future__ import annotations

import time
import types
import uuid

import pytest
from redis import Redis
from rq import Queue
from rq.serializers import JSONSerializer

from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.workers import __main__ as worker_main
from graphgpu.workers.__main__ import HEARTBEAT_SLACK, GraphWorker
from graphgpu.workers.context import WorkerContext


def _worker(settings: Settings, redis: Redis) -> GraphWorker:
    context = WorkerContext(settings=settings, redis=redis, name=f"w-{uuid.uuid4().hex[:6]}",
                            backend="cpu", device="cpu",
                            graphs=GraphStore(settings.graphs_dir, settings.tmp_dir))
    queue = Queue(settings.queue_name("cpu"), connection=redis, serializer=JSONSerializer)
    return GraphWorker([queue], connection=redis, name=context.name,
                       serializer=JSONSerializer, context=context)


def test_heartbeats_rq_sends_on_its_own_are_skipped_while_the_key_lives_as_long(
        env, monkeypatch: pytest.MonkeyPatch) -> None:
    settings, redis = env
    clock = [time.monotonic()]
    monkeypatch.setattr(worker_main, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    worker = _worker(settings, redis)
    worker.heartbeat()  # the first one goes
    assert redis.ttl(worker.key) > worker.worker_ttl
    redis.persist(worker.key)
    worker.heartbeat()  # as long a lifetime as the last: skipped, Redis untouched
    assert redis.ttl(worker.key) == -1
    # A job's lifetime (RQ's own pipeline) always goes; the shorter one after the job too.
    with redis.pipeline() as pipe:
        worker.heartbeat(3660, pipeline=pipe)
        pipe.execute()
    assert redis.ttl(worker.key) > 3600
    worker.heartbeat()
    assert redis.ttl(worker.key) <= worker.worker_ttl + 60
    # Once the last one's expiry is further off than the slack, the next one goes again.
    redis.persist(worker.key)
    clock[0] += HEARTBEAT_SLACK + 1
    worker.heartbeat()
    assert redis.ttl(worker.key) > worker.worker_ttl

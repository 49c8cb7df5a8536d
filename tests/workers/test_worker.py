"""The worker's RQ class against a real Redis: which of RQ's own heartbeats reach Redis, and
how many round trips a small job costs it."""

from __future__ import annotations

import time
import types
import uuid

import numpy as np
import pytest
from redis import Redis
from redis.connection import Connection
from rq import Queue
from rq.serializers import JSONSerializer

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.graph import build_graph
from graphgpu.kernels.core.observability import durations_key
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.workers import __main__ as worker_main
from graphgpu.workers import context as context_module
from graphgpu.workers import records, tasks
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


def test_a_small_job_costs_the_worker_six_round_trips(env, monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """From a job taken off the queue to the worker's report after it: one transaction that
    starts it (RQ's execution, heartbeats and started state, and the record's claim), the
    check that the attempt still owns the job before its result is written, the script that
    finishes it (its duration counted there), and RQ's three of a job's success (watch, read
    and write its dependents); no heartbeat or state that the next steps write again."""
    settings, redis = env
    store = GraphStore(settings.graphs_dir, settings.tmp_dir)
    graph, report = build_graph(np.arange(10), np.arange(1, 11))
    meta, _ = store.put(graph, name="g", source={"format": "test"}, report=report)
    worker = _worker(settings, redis)
    monkeypatch.setattr(context_module, "_context", worker.context)
    job_id = uuid.uuid4().hex
    record = {"id": job_id, "kind": "algorithm", "algorithm": "bfs", "params": {"source": 0},
              "graph_id": meta["id"], "backend_requested": "cpu", "status": "queued",
              "created_at": time.time(), "progress": {"fraction": 0.0, "message": "queued"}}
    redis.hset(protocol.job_key(settings, job_id), mapping=protocol.encode_fields(record))
    worker.queues[0].enqueue(protocol.TASK, job_id, job_id=job_id)
    sends: list[int] = []
    counting = [False]
    send = Connection.send_packed_command

    def counted(self: Connection, *args: object, **kwargs: object) -> None:
        if counting[0]:
            sends.append(1)
        return send(self, *args, **kwargs)

    def execute_job(job, queue) -> None:
        counting[0] = True
        try:
            GraphWorker.execute_job(worker, job, queue)
            worker.heartbeat()  # RQ's work loop beats next: skipped, its pipeline beats again
        finally:
            counting[0] = False

    # A job that outlasts the progress interval (a first compile on a loaded machine) also
    # writes its progress: a round trip of slow jobs, not of this path.
    monkeypatch.setattr(records, "PROGRESS_INTERVAL", 3600.0)
    monkeypatch.setattr(Connection, "send_packed_command", counted)
    monkeypatch.setattr(worker, "execute_job", execute_job)
    worker.work(burst=True)
    done = protocol.decode_record(redis.hgetall(protocol.job_key(settings, job_id)))
    assert done["status"] == "succeeded" and done["attempts"] == 1
    assert len(sends) == 6
    counts = {k.decode(): v for k, v in redis.hgetall(durations_key(settings)).items()}
    assert counts["bfs|cpu|succeeded|count"] == b"1"
    assert not tasks._claims and not tasks._outcomes  # nothing kept for a later attempt

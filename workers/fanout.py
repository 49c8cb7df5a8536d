"""Fan-out / fan-in of a job over the queue: shard jobs and a reduce job (the MapReduce pattern).

An algorithm that declares ``shards`` and ``merge`` (see
:class:`graphgpu.kernels.core.registry.Algorithm`)
can ask to run as independent pieces. The worker that takes such a job calls :func:`start`:

* each shard becomes a job of its own (a record like any other, with ``parent`` set, and an RQ
  job on the parent's queue), so any worker on any host that shares Redis and the graph store
  may take it, a GPU or a CPU one, and the monitor and the time limits apply to it as usual.
  Shard records are not added to the job index, so listings show only the parent;
* a reduce job waits for all of them (RQ ``Dependency(..., allow_failure=True)``: it runs even
  when a shard's RQ job failed), reads the shards that succeeded, lets the algorithm's
  ``merge`` pick the result, copies the winning shard's arrays and finishes the parent. A
  failed shard loses only its own part; the parent fails when none succeeded.

Meanwhile the parent stays ``running``, out of the running set and without a worker: its
worker is free for other jobs (shards included) and the lost-worker monitor leaves it alone.
Shards of an algorithm that ``migrates`` share their bests while they run through one Redis hash
of the parent (:class:`IslandExchange`), so a shard on any host sees the others' answers.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import numpy as np
from rq import Queue
from rq.job import Dependency, Job
from rq.serializers import JSONSerializer

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.registry import Algorithm, get_algorithm
from graphgpu.workers import records
from graphgpu.workers.context import WorkerContext, current_context

log = logging.getLogger("graphgpu.fanout")


def shard_ids(parent: str, count: int) -> list[str]:
    """The shard job ids of ``parent``: fixed by the parent and the index, so that a parent that
    runs again (its worker lost before it handed the job over) finds the shards it made."""
    return [f"{parent}-shard{index}" for index in range(count)]


def start(ctx: WorkerContext, record: dict[str, Any], shards: list[dict[str, Any]]
          ) -> list[str]:
    """Queue the shard jobs of ``record`` and its reduce job; returns the shard ids.

    Idempotent: run again for the same parent (its worker was lost between the steps below and
    the monitor queued it again), it makes only the shard records that are missing and queues
    only the shards still ``queued`` that RQ does not hold, and the reduce job only if RQ has
    none; a shard that ran or finished is never run again. The steps: shard records and the
    parent's list of them; the RQ jobs; last, the parent leaves the running set (from then on
    the monitor leaves it to the reduce job).

    Parameters
    ----------
    ctx : WorkerContext
        The worker that took the parent job.
    record : dict
        The parent's job record (``running`` on this worker).
    shards : list of dict
        Params of each shard (validated by the algorithm's model when each shard runs).
    """
    settings, redis = ctx.settings, ctx.redis
    parent = record["id"]
    ids = shard_ids(parent, len(shards))
    now = time.time()
    made = [records.read(redis, settings, shard_id) for shard_id in ids]
    pipe = redis.pipeline()
    for index, (shard_id, params) in enumerate(zip(ids, shards, strict=True)):
        if made[index] is not None:
            continue
        shard = {
            "id": shard_id, "kind": "algorithm", "algorithm": record["algorithm"],
            "graph_id": record["graph_id"], "params": params,
            "backend_requested": record["backend_requested"], "status": "queued",
            "progress": {"fraction": 0.0, "message": f"shard {index + 1} of {len(shards)}"},
            "created_at": now, "timings": {}, "parent": parent, "shard": index,
            **({"owner": record["owner"]} if record.get("owner") else {}),
        }
        pipe.hset(protocol.job_key(settings, shard_id),
                  mapping={k: json.dumps(v) for k, v in shard.items()})
        if record.get("graph_id"):
            pipe.sadd(protocol.graph_jobs_key(settings, record["graph_id"]), shard_id)
    pipe.hset(protocol.job_key(settings, parent), mapping={k: json.dumps(v) for k, v in {
        "shards": ids,
        "progress": {"fraction": 0.0, "message": f"waiting for {len(ids)} shards"},
    }.items()})
    pipe.execute()
    queue = Queue(settings.queue_name(record["backend_requested"]), connection=redis,
                  serializer=JSONSerializer)
    queued = 0
    for shard_id, before in zip(ids, made, strict=True):
        if (before is None or before.get("status") == "queued") and not Job.exists(
                shard_id, connection=redis):
            queue.enqueue(protocol.TASK, shard_id, job_id=shard_id,
                          job_timeout=settings.max_job_seconds, result_ttl=600,
                          failure_ttl=settings.result_ttl)
            queued += 1
    reduce_id = protocol.reduce_job_id(parent)
    if not Job.exists(reduce_id, connection=redis):
        queue.enqueue(protocol.REDUCE_TASK, parent, ids, job_id=reduce_id,
                      depends_on=Dependency(jobs=ids, allow_failure=True),
                      job_timeout=settings.max_job_seconds, result_ttl=600,
                      failure_ttl=settings.result_ttl)
    pipe = redis.pipeline()
    pipe.hdel(protocol.job_key(settings, parent), "worker")
    pipe.srem(protocol.running_key(settings), parent)
    pipe.execute()
    log.info("job %s fanned out to %d shards (%d queued now)", parent, len(ids), queued)
    return ids


class IslandExchange:
    """The :class:`~graphgpu.kernels.core.registry.Exchange` of one shard: its best goes to the
    parent's :func:`~graphgpu.kernels.core.protocol.islands_key` hash under its index, and every
    other shard's latest comes back (one round trip)."""

    def __init__(self, ctx: WorkerContext, record: dict[str, Any]) -> None:
        self.redis, self.ttl = ctx.redis, int(ctx.settings.result_ttl)
        self.key = protocol.islands_key(ctx.settings, record["parent"])
        self.field = str(record["shard"]).encode()

    def __call__(self, objective: int, nodes: np.ndarray) -> list[tuple[int, np.ndarray]]:
        payload = np.concatenate([[objective], nodes]).astype(np.int64).tobytes()
        pipe = self.redis.pipeline()
        pipe.hset(self.key, self.field, payload)
        pipe.expire(self.key, self.ttl)
        pipe.hgetall(self.key)
        posted = pipe.execute()[-1]
        arrivals = []
        for field, raw in sorted(posted.items()):
            if field != self.field:
                values = np.frombuffer(raw, np.int64)
                arrivals.append((int(values[0]), values[1:].copy()))
        return arrivals


def _shard_outcomes(ctx: WorkerContext, ids: list[str]
                    ) -> tuple[list[protocol.ResultManifest | None], list[dict[str, Any]]]:
    """Each shard's result manifest (None unless it succeeded) and its public state."""
    manifests: list[protocol.ResultManifest | None] = []
    states = []
    for shard_id in ids:
        shard = records.read(ctx.redis, ctx.settings, shard_id) or {"status": "expired"}
        states.append({"id": shard_id, "status": shard["status"],
                       **{k: shard[k] for k in ("worker", "backend", "device", "error")
                          if shard.get(k)}})
        manifest = None
        if shard["status"] == "succeeded":
            try:
                manifest = protocol.read_manifest(ctx.settings, shard_id)
            except FileNotFoundError:  # expired meanwhile: as good as failed
                states[-1]["status"] = "expired"
        manifests.append(manifest)
    return manifests, states


def _finish(ctx: WorkerContext, algorithm: Algorithm, record: dict[str, Any],
            ids: list[str]) -> tuple[str, dict[str, Any]]:
    manifests, states = _shard_outcomes(ctx, ids)
    fields: dict[str, Any] = {"shards": states}
    if record.get("cancel_requested"):
        fields["error"] = {"code": "canceled", "message": "canceled by request"}
        return "canceled", fields
    params = algorithm.params_model.model_validate(record["params"])
    try:
        index, summary = algorithm.merge(
            params, [m.summary if m else None for m in manifests])
    except KernelError as exc:
        failed = "; ".join(f"{s['id']}: {s.get('error', {}).get('message', s['status'])}"
                           for s in states)
        fields["error"] = {"code": exc.code, "message": f"{exc.message} ({failed})"}
        return "failed", fields
    winner, source = manifests[index], protocol.result_folder(ctx.settings, ids[index])
    assert winner is not None  # merge only picks a shard that succeeded
    summary = algorithm.result_model.model_validate(summary).model_dump(mode="json")
    arrays = {name: np.load(source / f"{name}.npy") for name in winner.files()}
    protocol.write_result(ctx.settings, record["id"],
                          winner.model_copy(update={"summary": summary}), arrays)
    fields.update(backend=states[index].get("backend"), device=states[index].get("device"))
    return "succeeded", fields


def reduce(parent: str, ids: list[str]) -> None:
    """The reduce job (RQ entry point): merge the shards of ``parent`` and finish it."""
    ctx = current_context()
    record = records.read(ctx.redis, ctx.settings, parent)
    if record is None or record["status"] != "running":
        log.info("job %s ended before its shards did (%s)", parent,
                 record and record["status"])
        return
    try:
        if ctx.remote is not None:  # a worker on another host: the shards' results are the API's
            ctx.remote.fetch_results(ids)
        status, fields = _finish(ctx, get_algorithm(record["algorithm"]), record, ids)
        if ctx.remote is not None:
            ctx.remote.reduced(parent, ids, status)
    except Exception as exc:  # a bug: fail the parent rather than leave it running
        log.exception("reduce of job %s crashed", parent)
        status, fields = "failed", {"error": {"code": "internal_error",
                                              "message": f"{type(exc).__name__}: {exc}"}}
    ctx.redis.delete(protocol.islands_key(ctx.settings, parent))
    timings = record.get("timings") or {}
    timings["total_ms"] = (time.time() - record["created_at"]) * 1e3
    records.finish(ctx.redis, ctx.settings, parent, status, fields={**fields,
                                                                     "timings": timings})
    log.info("job %s %s after its %d shards", parent, status, len(ids))

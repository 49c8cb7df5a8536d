"""The API's side of the job protocol: job records in Redis, queueing through RQ, cancellation.

Record layout, keys and the task path are :mod:`graphgpu.kernels.core.protocol`'s. The API
creates a record (``queued``) and may move it to ``canceled``; workers move it on
(``workers/records.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import uuid
from typing import Any

from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import WatchError
from rq import Queue
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import cancel_job
from rq.serializers import JSONSerializer

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.errors import ApiError, Conflict, NotFound, Unprocessable
from graphgpu.service.limits import too_many_jobs

#: Lua: the summed memory (JSON ``host_bytes``, ``device_bytes``) of the admitted jobs KEYS[1]
#: whose records (``prefix`` .. id) are still queued or running; entries of jobs whose status
#: is in ``ended`` (keys JSON-encoded), or whose record expired, are forgotten.
_ADMITTED_MEMORY = """
local function admitted_memory(prefix, ended)
  local host, device = 0, 0
  local admitted = redis.call('HGETALL', KEYS[1])
  for i = 1, #admitted, 2 do
    local status = redis.call('HGET', prefix .. admitted[i], 'status')
    if not status or ended[status] then
      redis.call('HDEL', KEYS[1], admitted[i])
    else
      local memory = cjson.decode(admitted[i + 1])
      host = host + (tonumber(memory.host_bytes) or 0)
      device = device + (tonumber(memory.device_bytes) or 0)
    end
  end
  return host, device
end
"""

#: The read of the workers (:meth:`JobStore.capacity`): the memory (JSON ``host_bytes``,
#: ``device_bytes``) of the admitted jobs KEYS[1] whose records (ARGV[1] .. id) are still queued
#: or running, summed (entries of jobs ended, ARGV[4..], or expired are forgotten), and the
#: heartbeat records (ARGV[2] .. name .. ARGV[3]) of the workers of KEYS[2] that have one, as
#: name, record pairs. Records are read by name, which a single Redis allows.
_CAPACITY = _ADMITTED_MEMORY + """
local ended = {}
for i = 4, #ARGV do ended[cjson.encode(ARGV[i])] = true end
local host, device = admitted_memory(ARGV[1], ended)
local workers = {}
for _, name in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local record = redis.call('GET', ARGV[2] .. name .. ARGV[3])
  if record then
    workers[#workers + 1] = name
    workers[#workers + 1] = record
  end
end
return {string.format('%.0f', host), string.format('%.0f', device), workers}
"""

#: Admit and queue job ARGV[4] in one step (no lock, no other round trip): the memory of the
#: admitted jobs KEYS[1] and the live workers of KEYS[2] are read as :data:`_CAPACITY` reads
#: them; the job is refused, nothing written, when no worker has ARGV[6] host bytes (``""``:
#: none asked) free less that memory (among workers that report it), or no GPU worker ARGV[7]
#: device bytes, or whether a GPU worker is live is not ARGV[12] (``"1"``, ``"0"``; ``""``: not
#: asked): {0, host, device, workers} as :data:`_CAPACITY` returns them. Then, with a cap
#: (ARGV[8] > 0), the slots of the key's active jobs KEYS[3] still queued or running (records'
#: ``slots``, else 1) plus this job's ARGV[9] must fit under it, else {-1}. Then its record
#: KEYS[4], its entries in the indexes KEYS[5] and KEYS[6] (score ARGV[5]), in its graph's set
#: KEYS[7] (if ARGV[11] is "1"), its memory ARGV[10] among the admitted (unless ``""``), its id
#: among the key's active jobs, and RQ's writes of its enqueue: {1, 1 if a GPU worker is live
#: else 0}. After ARGV[13] and the ended statuses it counts come the record's field/value count
#: and pairs, then the number of RQ's commands and each as its length and words.
_ADMIT = _ADMITTED_MEMORY + """
local prefix, job = ARGV[1], ARGV[4]
local nended = tonumber(ARGV[13])
local ended = {}
for i = 14, 13 + nended do ended[cjson.encode(ARGV[i])] = true end
local host, device = admitted_memory(prefix, ended)
local workers = {}
local best_host, best_device
local gpu_live = false
for _, name in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local raw = redis.call('GET', ARGV[2] .. name .. ARGV[3])
  if raw then
    workers[#workers + 1] = name
    workers[#workers + 1] = raw
    local worker = cjson.decode(raw)
    local free = tonumber(worker.host_free_bytes)
    if free then best_host = math.max(best_host or 0, free - host, 0) end
    if worker.backend == 'gpu' then gpu_live = true end
    free = tonumber(worker.gpu_free_bytes)
    if free and worker.backend == 'gpu' then
      best_device = math.max(best_device or 0, free - device, 0)
    end
  end
end
local need_host, need_device = tonumber(ARGV[6]), tonumber(ARGV[7])
if (need_host and best_host and need_host > best_host)
    or (need_device and best_device and need_device > best_device)
    or (ARGV[12] ~= '' and (ARGV[12] == '1') ~= gpu_live) then
  return {0, string.format('%.0f', host), string.format('%.0f', device), workers}
end
local limit = tonumber(ARGV[8])
if limit > 0 then
  local active = tonumber(ARGV[9])
  for _, id in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    local status = redis.call('HGET', prefix .. id, 'status')
    if status == '"queued"' or status == '"running"' then
      active = active + (tonumber(redis.call('HGET', prefix .. id, 'slots') or '1') or 1)
    else
      redis.call('SREM', KEYS[3], id)
    end
  end
  if active > limit then return {-1} end
end
local at = 14 + nended
local fields = tonumber(ARGV[at])
redis.call('HSET', KEYS[4], unpack(ARGV, at + 1, at + fields))
redis.call('ZADD', KEYS[5], ARGV[5], job)
redis.call('ZADD', KEYS[6], ARGV[5], job)
if ARGV[11] == '1' then redis.call('SADD', KEYS[7], job) end
if ARGV[10] ~= '' then redis.call('HSET', KEYS[1], job, ARGV[10]) end
if limit > 0 then redis.call('SADD', KEYS[3], job) end
at = at + fields + 1
for _ = 1, tonumber(ARGV[at]) do
  local words = tonumber(ARGV[at + 1])
  redis.call(unpack(ARGV, at + 2, at + 1 + words))
  at = at + 1 + words
end
return {1, gpu_live and 1 or 0}
"""


class NoRoom(ApiError):
    """A job that :data:`_ADMIT` refused for memory, with the workers as it saw them
    (:meth:`JobStore.capacity`'s form): the caller raises its 413 from them, else this 503."""

    def __init__(self, workers: list[dict[str, Any]]) -> None:
        super().__init__(503, "admission_busy", "the free memory changed while the job was "
                         "admitted; retry shortly", headers={"Retry-After": "1"})
        self.workers = workers


def _owner(exists: bytes | None, owner: bytes | None) -> str | None:
    return None if exists is None else (json.loads(owner) if owner else "")


class JobStore:
    """Creates, reads and cancels job records.

    Parameters
    ----------
    redis : Redis
        Connection (bytes responses).
    settings : Settings
    """

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self._queues: dict[str, Queue] = {}
        # EVALSHA (the text again only after a NOSCRIPT): each script is sent once.
        self._admit = redis.register_script(_ADMIT)
        self._capacity = redis.register_script(_CAPACITY)
        #: Whether a GPU worker was live at the last admission (None before the first): what
        #: the next ``backend=auto`` job assumes, which the script that admits it checks.
        self.gpu_live: bool | None = None

    def _key(self, job_id: str) -> str:
        return protocol.job_key(self.settings, job_id)

    def get(self, job_id: str) -> dict[str, Any]:
        raw = self.redis.hgetall(self._key(job_id))
        if not raw:
            raise NotFound(f"job {job_id!r} does not exist or has expired", field="job_id")
        return protocol.decode_record(raw)

    def owner(self, job_id: str) -> str | None:
        """The tenant that owns a job (``""`` for a record without one); None if it is gone."""
        return _owner(*self.redis.hmget(self._key(job_id), "id", "owner"))

    async def owner_async(self, redis: AsyncRedis, job_id: str) -> str | None:
        """:meth:`owner` on the event loop, through an asynchronous connection."""
        return _owner(*await redis.hmget(self._key(job_id), "id", "owner"))

    async def get_async(self, redis: AsyncRedis, job_id: str) -> dict[str, Any]:
        """:meth:`get` on the event loop, through an asynchronous connection."""
        raw = await redis.hgetall(self._key(job_id))
        if not raw:
            raise NotFound(f"job {job_id!r} does not exist or has expired", field="job_id")
        return protocol.decode_record(raw)

    def _index(self, tenant: str | None) -> str:
        return protocol.job_index_key(self.settings, tenant)

    def list(self, limit: int, status: str | None, tenant: str | None = None
             ) -> list[dict[str, Any]]:
        """Recent jobs, newest first: every tenant's, or only ``tenant``'s."""
        index = self._index(tenant)
        ids = [i.decode() for i in self.redis.zrevrange(index, 0, -1)]
        records = []
        pipe = self.redis.pipeline(transaction=False)
        for job_id in ids:
            pipe.hgetall(self._key(job_id))
        for job_id, raw in zip(ids, pipe.execute(), strict=True):
            if not raw:
                self.redis.zrem(index, job_id)  # expired: forget it
                continue
            record = protocol.decode_record(raw)
            if status is None or record["status"] == status:
                records.append(record)
            if len(records) >= limit:
                break
        return records

    def submit(
        self,
        *,
        kind: str,
        name: str,
        graph_id: str | None,
        params: dict[str, Any],
        backend: str,
        idempotency_key: str | None,
        owner: str,
        key_id: str,
        extra: dict[str, Any] | None = None,
        memory: dict[str, int] | None = None,
        needs: dict[str, int] | None = None,
        gpu_live: bool | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """Record and queue a job owned by tenant ``owner``, counted against API key ``key_id``.

        ``memory`` (``host_bytes``, ``device_bytes``; else those of ``extra["estimate"]``) is
        counted against later admissions until the job finishes (:meth:`capacity`). ``needs``
        (``host_bytes``: on some worker; ``device_bytes``: on some GPU worker) must be free,
        less that of the jobs already admitted, when the job is admitted (:data:`_ADMIT`);
        so must ``gpu_live`` (whether a GPU worker is live; None: not checked), which lets an
        admission that assumed it (:attr:`gpu_live`) skip its own read of the workers.

        Returns
        -------
        record : dict
        created : bool
            False when ``idempotency_key`` matched an earlier identical request.

        Raises
        ------
        NoRoom
            ``needs`` did not fit, or ``gpu_live`` was wrong (nothing is recorded or queued
            then).
        ApiError
            429 when the key has too many jobs queued or running (nothing is queued then).
        """
        job_id = uuid.uuid4().hex
        # Per tenant: another tenant's key must neither clash with nor reveal this one.
        idem_key = (self.settings.key("idempotency", owner, idempotency_key)
                    if idempotency_key else None)
        if idem_key:  # the body's hash only here: a job without a key needs none
            body = json.dumps([kind, name, graph_id, params, backend], sort_keys=True)
            body_hash = hashlib.sha256(body.encode()).hexdigest()
            claim = json.dumps({"job_id": job_id, "hash": body_hash})
            if not self.redis.set(idem_key, claim, nx=True, ex=self.settings.result_ttl):
                earlier = json.loads(self.redis.get(idem_key) or "{}")
                if earlier.get("hash") != body_hash:
                    raise Unprocessable(
                        "idempotency_key_reused",
                        "this Idempotency-Key was used with a different request body",
                        field="Idempotency-Key",
                    )
                return self.get(earlier["job_id"]), False
        now = time.time()
        record: dict[str, Any] = {
            "id": job_id, "kind": kind, "algorithm": name, "graph_id": graph_id,
            "params": params, "backend_requested": backend, "status": "queued",
            "progress": {"fraction": 0.0, "message": "queued"}, "created_at": now,
            "timings": {}, "owner": owner, **(extra or {}),
        }
        estimate = (extra or {}).get("estimate") or {}
        memory = memory if memory is not None else {
            k: int(estimate[k]) for k in ("host_bytes", "device_bytes") if estimate.get(k)}
        needs = needs or {}
        ended = sorted(protocol.FINISHED)
        fields = [item for key, value in record.items() for item in (key, json.dumps(value))]
        # RQ's own enqueue (its job hash is what RQ workers read), its writes collected here
        # and made by the script: a job is queued exactly when it is recorded.
        with self.redis.pipeline() as pipe:
            self._queue(backend).enqueue_call(
                protocol.TASK, args=(job_id,), job_id=job_id,
                timeout=self.settings.max_job_seconds, result_ttl=600,
                failure_ttl=self.settings.result_ttl, pipeline=pipe)
            rq_writes = [args for args, _ in pipe.command_stack]
            pipe.reset()  # never sent
        # The memory check, the active-jobs cap, the record and the queueing in one script
        # (one round trip, atomic: jobs submitted together never share the same free memory).
        answer = self._admit(keys=[
            protocol.admitted_key(self.settings), protocol.workers_key(self.settings),
            self.settings.key("active", key_id), self._key(job_id),
            protocol.job_index_key(self.settings), self._index(owner),
            protocol.graph_jobs_key(self.settings, graph_id or "")], args=[
            self.settings.key("job", ""), *protocol.worker_key(self.settings, "\0").split("\0"),
            job_id, repr(now), needs.get("host_bytes", ""), needs.get("device_bytes", ""),
            self.settings.max_active_jobs_per_key, int(record.get("slots") or 1),
            json.dumps(memory) if memory else "", "1" if graph_id else "",
            "" if gpu_live is None else str(int(gpu_live)), len(ended), *ended,
            len(fields), *fields, len(rq_writes),
            *(word for args in rq_writes for word in (len(args), *args))])
        if int(answer[0]) != 1:
            if idem_key:
                self.redis.delete(idem_key)
            if int(answer[0]) == 0:
                raise NoRoom(self._workers(*answer[1:]))
            raise too_many_jobs(self.settings.max_active_jobs_per_key)
        self.gpu_live = bool(int(answer[1]))
        return record, True

    def _queue(self, backend: str) -> Queue:
        """The RQ queue of ``backend``, made once (it caches the server's version)."""
        name = self.settings.queue_name(backend)
        queue = self._queues.get(name)
        if queue is None:
            queue = self._queues[name] = Queue(name, connection=self.redis,
                                               serializer=JSONSerializer)
        return queue

    def cancel(self, job_id: str) -> dict[str, Any]:
        """Cancel a job: a queued one never runs; a running one is asked to stop, and so are
        the shards it fanned out (``workers/fanout.py``), which then end its reduce job early.

        Raises
        ------
        Conflict
            The job has already finished.
        """
        record = self._request_cancel(job_id)
        if record["status"] == "queued":
            # A worker may take it meanwhile; it then sees the record and skips the job. RQ
            # raises ValueError when the execution it is removing ends under it in that race.
            with contextlib.suppress(NoSuchJobError, InvalidJobOperation, ValueError):
                cancel_job(job_id, connection=self.redis, serializer=JSONSerializer)
        for shard in record.get("shards") or []:
            # Shards' RQ jobs stay queued (a worker skips a canceled record) so that their
            # reduce job, which depends on them, still runs and ends the parent.
            with contextlib.suppress(NotFound, Conflict):
                self._request_cancel(shard if isinstance(shard, str) else shard["id"])
        return self.get(job_id)

    def _request_cancel(self, job_id: str) -> dict[str, Any]:
        """Mark a queued job canceled or ask a running one to stop; its record before."""
        key = self._key(job_id)
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.hgetall(key)
                    if not raw:
                        raise NotFound(f"job {job_id!r} does not exist or has expired",
                                       field="job_id")
                    record = protocol.decode_record(raw)
                    pipe.multi()
                    if record["status"] in protocol.FINISHED:
                        raise Conflict("job_finished",
                                       f"job {job_id} already ended as {record['status']}")
                    if record["status"] == "queued":
                        self._mark_canceled(pipe, record)
                    else:
                        pipe.hset(key, "cancel_requested", json.dumps(True))
                    pipe.execute()
                    break
                except WatchError:
                    continue  # the record changed under us (a worker took it): look again
        return record

    def _mark_canceled(self, pipe: Any, record: dict[str, Any]) -> None:
        key = self._key(record["id"])
        now = time.time()
        pipe.hset(key, mapping={
            "status": json.dumps("canceled"),
            "finished_at": json.dumps(now),
            "progress": json.dumps({"fraction": record["progress"]["fraction"],
                                    "message": "canceled before it ran"}),
            "error": json.dumps({"code": "canceled", "message": "canceled by request"}),
        })
        pipe.expire(key, self.settings.result_ttl)
        pipe.hdel(protocol.admitted_key(self.settings), record["id"])
        if record.get("graph_id"):
            pipe.srem(protocol.graph_jobs_key(self.settings, record["graph_id"]), record["id"])

    def graph_jobs(self, graph_id: str) -> list[str]:
        """Ids of the queued or running jobs that use the graph."""
        key = protocol.graph_jobs_key(self.settings, graph_id)
        return [j.decode() for j in self.redis.smembers(key)]

    def graph_in_use(self, graph_id: str) -> bool:
        """Whether a queued or running job uses the graph."""
        return bool(self.redis.scard(protocol.graph_jobs_key(self.settings, graph_id)))

    def capacity(self) -> list[dict[str, Any]]:
        """The live workers (sorted by name) as admission sees them: the host and GPU memory
        each reports free, less what the jobs admitted and not finished are estimated to take
        (entries of jobs that ended or expired are forgotten; a running job may already hold
        part of it, so this errs on the side of refusing). One round trip (:data:`_CAPACITY`).
        """
        host, device, flat = self._capacity(keys=[
            protocol.admitted_key(self.settings), protocol.workers_key(self.settings)], args=[
            self.settings.key("job", ""), *protocol.worker_key(self.settings, "\0").split("\0"),
            *sorted(protocol.FINISHED)])
        return self._workers(host, device, flat)

    def _workers(self, host: Any, device: Any, flat: list[Any]) -> list[dict[str, Any]]:
        """:meth:`capacity`'s workers from a script's answer: the memory of the admitted jobs
        (``host``, ``device``) and the heartbeat records as name, record pairs; whether a GPU
        worker is live among them is kept (:attr:`gpu_live`)."""
        committed = {"host_bytes": int(host), "device_bytes": int(device)}
        workers = [json.loads(value) for _, value in sorted(zip(flat[::2], flat[1::2],
                                                                strict=True))]
        for worker in workers:
            for free, taken in (("host_free_bytes", "host_bytes"),
                                ("gpu_free_bytes", "device_bytes")):
                if worker.get(free) is not None:
                    worker[free] = max(0, int(worker[free]) - committed[taken])
        self.gpu_live = any(w.get("backend") == "gpu" for w in workers)
        return workers

    def live_workers(self) -> list[dict[str, Any]]:
        """Workers whose heartbeat has not expired."""
        names = sorted(n.decode() for n in self.redis.smembers(protocol.workers_key(self.settings)))
        if not names:
            return []
        values = self.redis.mget([protocol.worker_key(self.settings, name) for name in names])
        return [json.loads(v) for v in values if v]

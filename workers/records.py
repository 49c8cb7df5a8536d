"""The worker's side of the job protocol: claiming a job, reporting progress, finishing it.

Record layout and keys are :mod:`graphgpu.kernels.core.protocol`'s; the ``queued``/``canceled``
transitions are the API's (``service/jobs.py``);
here a job moves ``queued -> running -> succeeded | failed | canceled``, and back from
``running`` to ``queued`` once when its worker is lost (:func:`recover_lost`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from redis import Redis
from redis.exceptions import WatchError
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.errors import JobCanceled
from graphgpu.kernels.core.observability import bucket_label, durations_key
from graphgpu.kernels.core.settings import Settings

#: Seconds between two progress writes; cancel requests are seen at the same pace.
PROGRESS_INTERVAL = 0.2
#: Runs a job gets in all: a job whose worker is lost is queued again until it has had these.
MAX_ATTEMPTS = 2


def read(redis: Redis, settings: Settings, job_id: str) -> dict[str, Any] | None:
    raw = redis.hgetall(protocol.job_key(settings, job_id))
    return protocol.decode_record(raw) if raw else None


#: Claim queued job KEYS[1] for worker ARGV[2] (JSON) at ARGV[3] (JSON): running, started,
#: an attempt more, in the running set KEYS[2] (member ARGV[1]); the worker's heartbeat KEYS[3]
#: written unless there (ARGV[4], expiry ARGV[5] ms) and the worker in KEYS[4]. Returns the
#: record's fields and values, or nothing when the job is no longer queued.
_CLAIM = """
if redis.call('HGET', KEYS[1], 'status') ~= '"queued"' then
  return {}
end
redis.call('HSET', KEYS[1], 'status', '"running"', 'started_at', ARGV[3], 'worker', ARGV[2],
           'progress', '{"fraction": 0.0, "message": "started"}')
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[4], 'NX', 'PX', ARGV[5])
redis.call('SADD', KEYS[4], ARGV[6])
return redis.call('HGETALL', KEYS[1])
"""


def claim_args(settings: Settings, job_id: str, worker: str,
               heartbeat: dict[str, Any] | None = None) -> tuple[Any, ...]:
    """The ``EVAL`` arguments of :func:`claim`, for a pipeline that claims in its own round
    trip (the worker's start of a job, ``GraphWorker.prepare_execution``)."""
    return (_CLAIM, 4, protocol.job_key(settings, job_id), protocol.running_key(settings),
            protocol.worker_key(settings, worker), protocol.workers_key(settings), job_id,
            json.dumps(worker), json.dumps(time.time()),
            json.dumps(heartbeat or {"name": worker}),
            int(settings.worker_dead_after_seconds * 1000), worker)


def claimed(flat: list[Any]) -> dict[str, Any] | None:
    """The record of a claim's answer (:func:`claim_args`); None if the job was no longer
    queued."""
    if not flat:
        return None
    return protocol.decode_record(dict(zip(flat[::2], flat[1::2], strict=True)))


def claim(redis: Redis, settings: Settings, job_id: str, worker: str,
          heartbeat: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Move a queued job to running on ``worker``; None if it was canceled (or expired)
    meanwhile.

    The attempt's owner is live from the claim on: in the same script, the worker's heartbeat
    key is written (unless its monitor already beats; ``heartbeat`` is the record written, by
    default the name alone) with the monitors' expiry. So no monitor can see the job running
    on a worker without a heartbeat and take the attempt for lost, however late the worker's
    own monitor beats first (a restarted worker's race). One round trip (a small job's whole
    run is about a millisecond), the record read back in it.
    """
    return claimed(redis.eval(*claim_args(settings, job_id, worker, heartbeat)))


#: Record a final status (ARGV[2], JSON) on job KEYS[1] if it runs (on worker ARGV[3], JSON;
#: "" for any): 1, or 0 when it does not (then, if it has ended, it leaves the running set
#: KEYS[2]). With it: the expiry, the admitted memory (KEYS[3]) released, the job dropped from
#: its graph's set (key ARGV[6] .. graph id .. ARGV[7]), its run time counted in the duration
#: histogram KEYS[4] (fields ARGV[8] bucket, ARGV[9] sum, ARGV[10] count, ARGV[11] seconds;
#: none when ARGV[8] is "") and the end published on ARGV[5] (the final record, as a JSON array
#: of fields and values: a long-poll woken by it reads nothing). Record pairs from ARGV[12].
_FINISH = """
local current = redis.call('HMGET', KEYS[1], 'status', 'worker', 'graph_id')
if current[1] ~= '"running"' then
  redis.call('SREM', KEYS[2], ARGV[1])
  return 0
end
if ARGV[3] ~= '' and current[2] ~= ARGV[3] then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 12))
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local graph = current[3] and cjson.decode(current[3])
if type(graph) == 'string' and graph ~= '' then
  redis.call('SREM', ARGV[6] .. graph .. ARGV[7], ARGV[1])
end
if ARGV[8] ~= '' then
  redis.call('HINCRBY', KEYS[4], ARGV[8], 1)
  redis.call('HINCRBYFLOAT', KEYS[4], ARGV[9], ARGV[11])
  redis.call('HINCRBY', KEYS[4], ARGV[10], 1)
end
redis.call('PUBLISH', ARGV[5], cjson.encode(redis.call('HGETALL', KEYS[1])))
return 1
"""


def finish(
    redis: Redis,
    settings: Settings,
    job_id: str,
    status: str,
    *,
    fields: dict[str, Any],
    only_if_worker: str | None = None,
    count: tuple[str, float] | None = None,
) -> bool:
    """Record a final status; returns False if the job had already finished.

    ``only_if_worker`` makes the change conditional on the job still running on that worker
    (used when failing the jobs of a lost worker). ``count`` (the algorithm and the job's
    ``started_at``) counts the run, start to finish, in the duration histogram (``/metrics``)
    in the same step: the worker that ran the job passes it, so that counting costs no read
    of the record and no round trip after the job. One script, one round trip: the status,
    expiry, released memory, the count and the end's message (a waiter woken by it reads the
    end) change together or not at all.
    """
    record = {"status": status, "finished_at": time.time(), **fields}
    if status == "succeeded":
        record["progress"] = {"fraction": 1.0, "message": "done"}
    histogram: tuple[Any, ...] = ("", "", "", "")
    if count is not None:
        seconds = max(0.0, record["finished_at"] - count[1])
        series = "|".join((count[0], fields.get("backend") or "none", status))
        histogram = (f"{series}|{bucket_label(seconds)}", f"{series}|sum", f"{series}|count",
                     repr(seconds))
    # The graph's key around its id, spelled by the protocol (the id is read in the script).
    graph_key = protocol.graph_jobs_key(settings, "\0").split("\0")
    done = redis.eval(
        _FINISH, 4, protocol.job_key(settings, job_id), protocol.running_key(settings),
        protocol.admitted_key(settings), durations_key(settings), job_id, json.dumps(status),
        json.dumps(only_if_worker) if only_if_worker else "", settings.result_ttl,
        protocol.job_done_channel(settings, job_id), *graph_key, *histogram,
        *(item for key, value in record.items() for item in (key, json.dumps(value))))
    return bool(done)


def recover_lost(redis: Redis, settings: Settings, job_id: str, worker: str,
                 dead: bool = False) -> str | None:
    """Deal with a job whose worker ``worker`` is gone: queue it again, or end it.

    Only while the worker's heartbeat has expired (or ``dead``: its own monitor saw it exit),
    checked in the transaction that changes the job: an attempt whose owner beats is never
    taken for lost.

    A job gets :data:`MAX_ATTEMPTS` runs: before that it goes back to ``queued`` (the RQ job
    re-enqueued with the same id on its original queue, the loss noted in ``lost`` and in the
    progress message); after it, it fails as ``worker_lost`` with every lost attempt in the
    reason. A job whose cancellation was requested ends ``canceled`` instead of running again.

    Exactly once however many monitors notice the loss together: each change is a WATCH/MULTI
    transaction that applies only while the job is still ``running`` on ``worker``.

    Returns
    -------
    str or None
        ``"requeued"``, ``"failed"`` or ``"canceled"``; None when the job was no longer running
        on ``worker`` (it finished, or another monitor got there first).
    """
    key = protocol.job_key(settings, job_id)
    beat = protocol.worker_key(settings, worker)
    with redis.pipeline() as pipe:
        while True:
            try:
                pipe.watch(key, beat)
                if not dead and pipe.exists(beat):
                    return None  # its owner beats: not lost
                raw = pipe.hgetall(key)
                record = protocol.decode_record(raw)
                if record.get("status") != "running":
                    pipe.multi()
                    pipe.srem(protocol.running_key(settings), job_id)  # a stale entry: forget it
                    pipe.execute()
                    return None
                if record.get("worker") != worker:
                    return None
                attempt = record.get("attempts", 1)
                lost = [*record.get("lost", []),
                        {"worker": worker, "attempt": attempt, "at": time.time()}]
                if record.get("cancel_requested"):
                    return _end_lost(redis, settings, job_id, worker, "canceled", {
                        "code": "canceled",
                        "message": f"canceled by request; worker {worker} stopped (killed or "
                                   "crashed) before it could stop the job",
                    }, lost)
                if attempt >= MAX_ATTEMPTS:
                    return _end_lost(redis, settings, job_id, worker, "failed", {
                        "code": "worker_lost",
                        "message": "its worker stopped (killed or crashed) on every attempt: "
                                   + "; ".join(f"attempt {e['attempt']} on worker {e['worker']}"
                                               for e in lost),
                    }, lost)
                try:
                    rq_job = Job.fetch(job_id, connection=redis, serializer=JSONSerializer)
                except NoSuchJobError:
                    return _end_lost(redis, settings, job_id, worker, "failed", {
                        "code": "worker_lost",
                        "message": f"worker {worker} stopped (killed or crashed) and the job's "
                                   "queue entry is gone, so it cannot run again",
                    }, lost)
                queue = Queue(rq_job.origin, connection=redis, serializer=JSONSerializer)
                # The dead worker's RQ execution: left there, RQ's own clean-up would later
                # mark the job abandoned while its new attempt runs.
                started = StartedJobRegistry(rq_job.origin, connection=redis,
                                             serializer=JSONSerializer)
                stale = list(redis.zscan_iter(started.key, match=f"{job_id}:*"))
                pipe.multi()
                pipe.hset(key, mapping={k: json.dumps(v) for k, v in {
                    "status": "queued",
                    "lost": lost,
                    "progress": {"fraction": 0.0, "message": (
                        f"worker {worker} stopped (killed or crashed) during attempt {attempt}; "
                        f"queued again for attempt {attempt + 1} of {MAX_ATTEMPTS}")},
                }.items()})
                pipe.hdel(key, "worker", "started_at")
                pipe.srem(protocol.running_key(settings), job_id)
                if stale:
                    pipe.zrem(started.key, *(member for member, _ in stale))
                queue.enqueue_job(rq_job, pipeline=pipe)
                pipe.execute()
                return "requeued"
            except WatchError:
                continue


def _end_lost(redis: Redis, settings: Settings, job_id: str, worker: str, status: str,
              error: dict[str, str], lost: list[dict[str, Any]]) -> str | None:
    done = finish(redis, settings, job_id, status, fields={"error": error, "lost": lost},
                  only_if_worker=worker)
    return status if done else None


#: Write a running job's progress (ARGV[1]) if it runs on worker ARGV[2] (JSON; "" for any);
#: returns its status, worker and cancel flag.
_REPORT = """
local status = redis.call('HGET', KEYS[1], 'status')
local worker = redis.call('HGET', KEYS[1], 'worker')
if ARGV[1] ~= '' and status == '"running"' and (ARGV[2] == '' or worker == ARGV[2]) then
  redis.call('HSET', KEYS[1], 'progress', ARGV[1])
end
return {status, worker, redis.call('HGET', KEYS[1], 'cancel_requested')}
"""


@dataclass
class ProgressReporter:
    """The :class:`~graphgpu.kernels.core.registry.ProgressFn` handed to kernels.

    Writes ``progress`` at most every :data:`PROGRESS_INTERVAL` seconds and raises
    :class:`~graphgpu.kernels.core.errors.JobCanceled` once the API has flagged the job, or
    once the attempt is no longer ``worker``'s (the job ended, failed or was queued again
    elsewhere): a worker never computes a job it no longer owns. :meth:`confirm` checks the
    same at once, whatever the interval: the worker's hand-off calls it before it writes a
    result, so that no stale attempt replaces the owner's.
    """

    redis: Redis
    settings: Settings
    job_id: str
    worker: str | None = None
    #: ``time.monotonic()`` of the last check of the record (the worker passes its claim's: a
    #: report sooner after it than :data:`PROGRESS_INTERVAL` is skipped).
    since: float = 0.0
    _last: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self._last = self.since

    def __call__(self, fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if now - self._last < PROGRESS_INTERVAL:
            return
        self._report(now, fraction, message)

    def confirm(self) -> None:
        """Check now that the job is still running as this attempt and not canceled (raises
        :class:`~graphgpu.kernels.core.errors.JobCanceled` otherwise); progress is left as
        it is."""
        self._report(time.monotonic(), None, "")

    def _report(self, now: float, fraction: float | None, message: str) -> None:
        self._last = now
        progress = "" if fraction is None else json.dumps(
            {"fraction": min(max(fraction, 0.0), 1.0), "message": message})
        # One script: the progress is written only while the attempt is this one.
        status, owner, canceled = (json.loads(v) if v else None for v in self.redis.eval(
            _REPORT, 1, protocol.job_key(self.settings, self.job_id), progress,
            json.dumps(self.worker) if self.worker else ""))
        if canceled:
            raise JobCanceled("canceled by request while running")
        if status != "running" or (self.worker is not None and owner != self.worker):
            raise JobCanceled(f"the job is {status or 'gone'}"
                              + (f" on worker {owner}" if owner else "")
                              + "; this attempt stops")

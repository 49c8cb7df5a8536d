"""A worker's companion process: heartbeat, liveness, job limits, lost-job reaper, result sweeper.

It runs as its own process so that a kernel holding the GIL for a long time cannot silence the
heartbeat, but it beats only while the worker shows it is alive by itself: a pulse the worker's
own thread writes to this process's stdin, or CPU time the worker spends (a Numba loop holding
the GIL). A worker that shows neither for ``worker_dead_after_seconds`` (stopped by SIGSTOP,
deadlocked) is killed. So is a worker whose job was canceled, or ran past the job time limit,
and did not stop by itself within ``stop_grace_seconds`` (a kernel that polls no flag): the
job ends ``canceled`` or ``failed``/``timeout`` with the reason, and ``serve`` restarts the
worker.

When its worker dies (even by SIGKILL) it recovers the worker's running job at once: the first
time a job loses its worker it is queued again, the second time it fails as ``worker_lost``. It
does the same for jobs of any other worker whose heartbeat has expired, so a job never stays
``running`` for more than ``worker_dead_after_seconds`` after its worker is gone.

Run as ``python -m workers.monitor WORKER_PID WORKER_NAME`` with the worker's description as one
JSON line on stdin, followed by the worker's pulses.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from redis import Redis
from redis.exceptions import RedisError

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.observability import configure_logging
from graphgpu.kernels.core.settings import Settings, get_settings
from graphgpu.workers import records
from graphgpu.workers.tasks import sweep_results
from graphgpu.workers.telemetry import read_gpu_memory

log = logging.getLogger("graphgpu.monitor")
SWEEP_EVERY_SECONDS = 60.0
#: Longest pause between two looks at the worker (cancel and time limits are enforced at it).
LOOK_EVERY_SECONDS = 0.5


def recover_lost_jobs(redis: Redis, settings: Settings, dead_worker: str | None = None,
                      running: dict[str, dict[str, Any]] | None = None) -> dict[str, str]:
    """Requeue or end the running jobs whose worker is gone (see :func:`records.recover_lost`).

    Parameters
    ----------
    dead_worker : str, optional
        A worker known to be dead (its jobs are recovered even if its heartbeat has not
        expired yet).
    running : dict, optional
        The running jobs' records by id, if already read (:func:`running_jobs`).

    Returns
    -------
    dict
        What happened to each job this call dealt with: ``requeued``, ``failed`` or
        ``canceled``. Jobs another monitor dealt with meanwhile are left out.
    """
    outcomes = {}
    for job_id, record in (running_jobs(redis, settings) if running is None
                           else running).items():
        owner = record.get("worker")
        if owner is None:
            continue
        if owner != dead_worker and redis.exists(protocol.worker_key(settings, owner)):
            continue
        outcome = records.recover_lost(redis, settings, job_id, owner,
                                       dead=owner == dead_worker)
        if outcome:
            outcomes[job_id] = outcome
            log.warning("job %s %s: worker %s lost", job_id, outcome, owner)
    return outcomes


def running_jobs(redis: Redis, settings: Settings) -> dict[str, dict[str, Any]]:
    """Records of the jobs in the running set, by id (ids without a record left out)."""
    out = {}
    for raw_id in redis.smembers(protocol.running_key(settings)):
        record = records.read(redis, settings, raw_id.decode())
        if record is not None:
            out[raw_id.decode()] = record
    return out


def cpu_state(pid: int) -> tuple[str, int] | None:
    """A process's scheduler state (``R``, ``S``, ``T`` for stopped, ...) and CPU ticks so far;
    None where ``/proc`` does not tell (not Linux, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0].decode(), int(fields[11]) + int(fields[12])


@dataclass
class Liveness:
    """Whether the worker shows signs of life by itself: pulses on the pipe or CPU time."""

    pid: int
    pipe: int | None
    last_sign: float = field(default_factory=time.monotonic)
    _ticks: int = -1

    def look(self) -> float:
        """Seconds since the worker last showed it is alive."""
        now = time.monotonic()
        if self.pipe is not None:
            try:
                data: bytes | None = os.read(self.pipe, 4096)  # non-blocking
            except BlockingIOError:
                data = None  # nothing written since the last look
            except OSError:
                data = b""
            if data:
                self.last_sign = now
            elif data == b"":
                self.pipe = None  # the worker closed it (it is exiting): CPU time only
        state = cpu_state(self.pid)
        if state is not None:
            status, ticks = state
            if status in ("T", "t"):  # stopped: its CPU time cannot move, whatever it was
                self._ticks = ticks
            elif ticks != self._ticks:
                self._ticks, self.last_sign = ticks, now
        return now - self.last_sign


@dataclass
class Enforcer:
    """Stops the worker's job when it outlives a cancel request or the time limit."""

    redis: Redis
    settings: Settings
    name: str
    pid: int
    cancel_seen: dict[str, float] = field(default_factory=dict)

    def check(self, job_id: str, record: dict[str, Any]) -> bool:
        """End the job and kill the worker if the job ignores its stop; True if it did."""
        now, grace = time.monotonic(), self.settings.stop_grace_seconds
        if record.get("cancel_requested"):
            seen = self.cancel_seen.setdefault(job_id, now)
            if now - seen >= grace:
                return self._stop(job_id, "canceled", {
                    "code": "canceled",
                    "message": f"canceled by request; the kernel did not stop within {grace:g} s, "
                               f"so worker {self.name} was stopped (it is restarted)"})
        started = record.get("started_at")
        limit = self.settings.max_job_seconds
        if started is not None and time.time() - started > limit + grace:
            return self._stop(job_id, "failed", {
                "code": "timeout",
                "message": f"the job ran past {limit} s (GRAPHGPU_MAX_JOB_SECONDS) and its kernel "
                           f"did not stop, so worker {self.name} was stopped (it is restarted)"})
        return False

    def _stop(self, job_id: str, status: str, error: dict[str, str]) -> bool:
        if not records.finish(self.redis, self.settings, job_id, status,
                              fields={"error": error}, only_if_worker=self.name):
            return False  # it ended by itself meanwhile
        log.warning("job %s %s: %s", job_id, status, error["message"])
        kill(self.pid)
        return True


def host_memory() -> dict[str, int]:
    """``host_free_bytes``: memory the host can give a new job (MemAvailable), where known."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return {"host_free_bytes": int(line.split()[1]) * 1024}
    except OSError:
        pass
    return {}


def kill(pid: int) -> None:
    """SIGKILL the worker (a stopped one too: SIGKILL needs no cooperation)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _open_pulses(stream: BinaryIO) -> int:
    os.set_blocking(stream.fileno(), False)
    return stream.fileno()


def run(worker_pid: int, name: str, description: dict, pulses: int | None = None) -> None:
    """Beat for worker ``worker_pid`` while it lives and shows life, then clean up after it."""
    settings = get_settings()
    redis = Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=5)
    key = protocol.worker_key(settings, name)
    ttl_ms = int(settings.worker_dead_after_seconds * 1000)
    live = Liveness(worker_pid, pulses)
    enforcer = Enforcer(redis, settings, name, worker_pid)
    next_sweep, failures = 0.0, 0
    while os.getppid() == worker_pid:
        silent = live.look()
        if silent > settings.worker_dead_after_seconds:
            log.error("worker %s showed no sign of life for %.1f s (stopped or hung): killing "
                      "it; its job is recovered", name, silent)
            kill(worker_pid)
            break
        try:
            running = running_jobs(redis, settings)
            mine = sorted(i for i, r in running.items() if r.get("worker") == name)
            # The worker's own report (GPU memory) rides along with the heartbeat.
            record = {**description, **read_gpu_memory(redis, settings, name),
                      **host_memory(), "current_job": mine[0] if mine else None}
            redis.set(key, json.dumps(record), px=ttl_ms)
            redis.sadd(protocol.workers_key(settings), name)
            if any(enforcer.check(i, running[i]) for i in mine):
                break
            recover_lost_jobs(redis, settings, running=running)
            if time.monotonic() >= next_sweep:
                sweep_results(settings.results_dir, settings.result_ttl)
                next_sweep = time.monotonic() + SWEEP_EVERY_SECONDS
        except RedisError as exc:  # Redis restarting: keep trying, the TTL covers the gap
            failures += 1
            if failures & (failures - 1) == 0:  # logged at 1, 2, 4, 8, ... failures in a row
                log.warning("heartbeat failed (%d in a row): %s", failures, exc)
        else:
            failures = 0
        time.sleep(min(settings.worker_heartbeat_seconds, LOOK_EVERY_SECONDS))
    _release(redis, settings, name, worker_pid)


def _release(redis: Redis, settings: Settings, name: str, worker_pid: int) -> None:
    """The worker is gone (or being killed): release what it held. If Redis is gone too (the
    whole service is stopping), give up soon: the heartbeat key expires and other monitors reap
    the rest."""
    for _ in range(50):  # a killed worker takes a moment to be gone
        if cpu_state(worker_pid) is None or os.getppid() != worker_pid:
            break
        time.sleep(0.05)
    for _ in range(5):
        try:
            redis.delete(*protocol.worker_record_keys(settings, name))
            redis.srem(protocol.workers_key(settings), name)
            recover_lost_jobs(redis, settings, dead_worker=name)
            return
        except RedisError:
            time.sleep(0.2)


if __name__ == "__main__":
    configure_logging("monitor", get_settings())
    stdin = sys.stdin.buffer
    first = stdin.readline()
    if not first:  # the worker ended before it was ready: it never registered, nothing to do
        sys.exit(0)
    run(int(sys.argv[1]), sys.argv[2], json.loads(first), _open_pulses(stdin))

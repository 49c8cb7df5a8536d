"""A worker's companion process: heartbeat, lost-job reaper and result sweeper.

It runs as its own process so that a kernel holding the GIL for a long time cannot silence the
heartbeat. When its worker dies (even by SIGKILL) it recovers the worker's running job at once:
the first time a job loses its worker it is queued again, the second time it fails as
``worker_lost``. It does the same for jobs of any other worker whose heartbeat has expired, so a
job never stays ``running`` for more than ``worker_dead_after_seconds`` after its worker is
gone.

Run as ``python -m workers.monitor WORKER_PID WORKER_NAME`` with the worker's description as JSON
on stdin.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

from redis import Redis
from redis.exceptions import RedisError

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.observability import configure_logging, gpu_memory_key
from graphgpu.kernels.core.settings import Settings, get_settings
from graphgpu.workers import records
from graphgpu.workers.tasks import sweep_results
from graphgpu.workers.telemetry import read_gpu_memory

log = logging.getLogger("graphgpu.monitor")
SWEEP_EVERY_SECONDS = 60.0


def recover_lost_jobs(redis: Redis, settings: Settings,
                      dead_worker: str | None = None) -> dict[str, str]:
    """Requeue or end the running jobs whose worker is gone (see :func:`records.recover_lost`).

    Parameters
    ----------
    dead_worker : str, optional
        A worker known to be dead (its jobs are recovered even if its heartbeat has not
        expired yet).

    Returns
    -------
    dict
        What happened to each job this call dealt with: ``requeued``, ``failed`` or
        ``canceled``. Jobs another monitor dealt with meanwhile are left out.
    """
    outcomes = {}
    for raw_id in redis.smembers(protocol.running_key(settings)):
        job_id = raw_id.decode()
        record = records.read(redis, settings, job_id)
        owner = (record or {}).get("worker")
        if record is None or owner is None:
            continue
        if owner != dead_worker and redis.exists(protocol.worker_key(settings, owner)):
            continue
        outcome = records.recover_lost(redis, settings, job_id, owner)
        if outcome:
            outcomes[job_id] = outcome
            log.warning("job %s %s: worker %s lost", job_id, outcome, owner)
    return outcomes


def run(worker_pid: int, name: str, description: dict) -> None:
    """Beat for worker ``worker_pid`` until it exits, then clean up after it."""
    settings = get_settings()
    redis = Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=5)
    key = protocol.worker_key(settings, name)
    ttl_ms = int(settings.worker_dead_after_seconds * 1000)
    next_sweep = 0.0
    while os.getppid() == worker_pid:
        try:
            # The worker's own report (GPU memory) rides along with the heartbeat.
            record = {**description, **read_gpu_memory(redis, settings, name)}
            redis.set(key, json.dumps(record), px=ttl_ms)
            redis.sadd(protocol.workers_key(settings), name)
            recover_lost_jobs(redis, settings)
            if time.monotonic() >= next_sweep:
                sweep_results(settings.results_dir, settings.result_ttl)
                next_sweep = time.monotonic() + SWEEP_EVERY_SECONDS
        except RedisError as exc:  # Redis restarting: keep trying, the TTL covers the gap
            log.warning("heartbeat failed: %s", exc)
        time.sleep(settings.worker_heartbeat_seconds)
    # The worker is gone: release what it held. If Redis is gone too (the whole service is
    # stopping), give up soon: the heartbeat key expires and other monitors reap the rest.
    for _ in range(5):
        try:
            redis.delete(key, gpu_memory_key(settings, name))
            redis.srem(protocol.workers_key(settings), name)
            recover_lost_jobs(redis, settings, dead_worker=name)
            return
        except RedisError:
            time.sleep(0.2)


if __name__ == "__main__":
    configure_logging("monitor", get_settings())
    run(int(sys.argv[1]), sys.argv[2], json.load(sys.stdin))

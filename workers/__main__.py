"""Start a worker: ``python -m workers [--backend auto|gpu|cpu] [--name NAME]``.

A GPU worker serves the ``gpu``, ``auto`` and ``cpu`` queues (the last with the CPU backends); a
CPU worker serves ``auto`` and ``cpu``. Jobs run in this process (RQ's SimpleWorker): no fork
after CUDA is initialised, so the context, the compiled kernels and resident graphs stay warm.
Before it says it is live, it compiles every kernel a job may need (:mod:`graphgpu.workers.warmup`,
in parallel on a first start; later starts load them from the disk caches).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import BinaryIO

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import RedisError
from rq import Queue, SimpleWorker
from rq.executions import Execution
from rq.job import Job
from rq.serializers import JSONSerializer
from rq.utils import import_attribute, now, utcformat, utcparse
from rq.worker import WorkerStatus

from graphgpu.kernels.core import device, protocol
from graphgpu.kernels.core.observability import configure_logging, job_context
from graphgpu.kernels.core.registry import Backend
from graphgpu.kernels.core.settings import get_settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.workers import remote, telemetry
from graphgpu.workers.compile_pool import precompile
from graphgpu.workers.context import WorkerContext, install
from graphgpu.workers.warmup import reserve_buffers, use_kernel_cache, warm_up

__all__ = ["GraphWorker", "main", "pulse", "wait_for_redis", "warm_up"]

log = logging.getLogger("graphgpu.worker")

#: A heartbeat that RQ sends on its own is skipped while the worker's key, as the last one sent
#: left it, expires within this many seconds of when the heartbeat asks (RQ asks 480 s).
HEARTBEAT_SLACK = 60.0


class GraphWorker(SimpleWorker):
    """RQ's in-process worker, plus the job id on every log line of a job and, after each job,
    (GPU workers) the GPU memory left; and fewer round trips to Redis on each job's way.

    RQ 3.0 makes three round trips between taking a job and running it and four writes after
    it that the next ones make moot. This worker starts a job in one transaction that claims
    its record too (:meth:`prepare_execution`), and skips RQ's job heartbeat at its end
    (:meth:`handle_execution_ended`), the worker heartbeat that RQ's suspension check sends
    again right after (:meth:`heartbeat`) and the ``idle`` state that its next dequeue sets
    again (:meth:`execute_job`). The overridden steps follow RQ 3.0's code, which offers no
    hook to add to its pipelines (``rq/executions.py``, ``rq/worker/base.py``).
    """

    def __init__(self, *args: object, context: WorkerContext, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.context = context
        self._key_expires = 0.0  # (monotonic) when the last heartbeat sent lets the key expire
        self._prepared: str | None = None  # the job whose start prepare_execution has sent
        self._beaten_next = False  # RQ's next heartbeat is followed by one in a pipeline

    def heartbeat(self, timeout: int | None = None, pipeline: Pipeline | None = None) -> None:
        """RQ's heartbeat (three writes). RQ sends one on its own before each wait for a job,
        after taking one (before starting it: a round trip on every job's way) and twice after
        each job; those are skipped while the last one lets the key expire about when they ask
        (:data:`HEARTBEAT_SLACK`), and otherwise sent in one round trip. The first after a
        job is skipped: RQ's work loop checks for suspension next, in a pipeline that beats
        with the same lifetime. Those in RQ's own pipelines always go."""
        lifetime = timeout or self.worker_ttl + 60
        if pipeline is None:
            if self._beaten_next:
                self._beaten_next = False
                return
            if abs(self._key_expires - (time.monotonic() + lifetime)) <= HEARTBEAT_SLACK:
                return
            with self.connection.pipeline(transaction=False) as own:
                super().heartbeat(lifetime, pipeline=own)
                own.execute()
        else:
            super().heartbeat(lifetime, pipeline=pipeline)
        self._key_expires = time.monotonic() + lifetime

    def prepare_execution(self, job: Job) -> Execution:
        """Start a job in one transaction: RQ's execution record and ``busy`` state
        (``rq.executions.prepare_execution``), its heartbeats and the job's ``started`` state
        (:meth:`prepare_job_execution`, then skipped) and, for a graphgpu job, the claim of
        its record (``tasks.claim_with``): one round trip instead of three."""
        from graphgpu.workers import tasks  # loaded by load_job_path, after the kernel cache

        claims = job.func_name == protocol.TASK
        with self.connection.pipeline() as pipe:
            ttl = self.get_heartbeat_ttl(job)
            execution = Execution.create(job, ttl, pipeline=pipe, worker_name=self.name)
            self.executions[execution.id] = execution
            self.set_state(WorkerStatus.BUSY, pipeline=pipe)
            self.heartbeat(ttl, pipeline=pipe)
            job.heartbeat(now(), ttl, pipeline=pipe)
            job.prepare_for_execution(self.name, pipeline=pipe)
            pipe.persist(job.key)
            if len(self.queues) == 1:  # RQ's perform_job asks this of a one-queue worker
                pipe.lrem(Queue(job.origin, connection=self.connection).intermediate_queue_key,
                          1, job.id)
            if claims:
                tasks.claim_with(pipe, job.args[0])
            answers = pipe.execute()
        if claims:
            tasks.claimed_with(job.args[0], answers[-1])
        self._prepared = job.id
        return execution

    def prepare_job_execution(self, job: Job, remove_from_intermediate_queue: bool = False
                              ) -> None:
        """RQ's, unless :meth:`prepare_execution` has sent its writes already."""
        if self._prepared != job.id:
            super().prepare_job_execution(job, remove_from_intermediate_queue)
        self._prepared = None

    def handle_execution_ended(self, job: Job, queue: Queue, heartbeat_ttl: int) -> None:
        """RQ's, without its write of the job's heartbeat: the job's end, written in the next
        round trip (success or failure), makes it moot."""
        job.ended_at = now()

    def execute_job(self, job: Job, queue: Queue) -> None:
        """SimpleWorker's, less its ``idle`` state: RQ's next dequeue sets it before waiting."""
        with job_context(job.id):
            try:
                self.perform_job(job, queue, self.prepare_execution(job))
            finally:
                self._beaten_next = True
                self.report(job.id)

    def report(self, job_id: str | None = None) -> None:
        """Publish what changed with a job (the GPU memory even if the job was not ours); its
        duration was counted as it finished (``records.finish``)."""
        from graphgpu.workers import tasks  # loaded by load_job_path, after the kernel cache

        ctx = self.context
        try:
            code = tasks.ended(job_id) if job_id else None
            if ctx.backend == "gpu":
                if code == "out_of_memory":
                    telemetry.release_gpu_pool()
                telemetry.publish_gpu_memory(ctx.redis, ctx.settings, ctx.name)
        except Exception:  # metrics must never stop a worker from serving
            log.exception("could not publish worker metrics")


def load_job_path() -> None:
    """Load what RQ would load at the worker's first job, before the worker says it is live:
    the task module, which RQ imports by its name, and Python's ``strptime``, whose first call
    imports ``_strptime`` (RQ parses every job's dates with it). On the VM the first job spent
    14-17 ms more than the next ones between queued and started, 8 and 4 ms of them (under
    cProfile) these two."""
    import_attribute(protocol.TASK)
    utcparse(utcformat(now()))


def pulse(pipe: BinaryIO, every: float) -> None:
    """Tell the monitor, every ``every`` seconds, that this process still runs Python."""
    while True:
        try:
            pipe.write(b".")
            pipe.flush()
        except (OSError, ValueError):  # the monitor is gone: nobody to tell
            return
        time.sleep(every)


def wait_for_redis(redis: Redis, longest: float = 10.0) -> None:
    """Wait, backing off up to ``longest`` seconds between tries, until Redis answers (a worker
    restarted while Redis restarts waits for it instead of crash-looping)."""
    delay = 0.2
    while True:
        try:
            redis.ping()
            return
        except RedisError as exc:
            log.warning("Redis does not answer (%s): retrying in %.1f s", exc, delay)
            time.sleep(delay)
            delay = min(longest, delay * 2)


def plan_queues(backend: Backend, requested: str | None = None,
                ) -> tuple[list[str], tuple[Backend, ...], tuple[Backend, ...]]:
    """The queues a ``backend`` worker takes jobs from (``requested``, comma-separated, or by
    default a GPU worker's gpu, auto and cpu, a CPU worker's auto and cpu), the backends it
    compiles before it is live (its own, and the CPU's if it takes the cpu queue), and those its
    first start's compile pool compiles after them for another worker of the host (the CPU's
    for a GPU worker that leaves the cpu queue to a CPU worker beside it, as `serve` runs
    them: 94-102 s of the pool's 220-232 s of work on the GPU host, 2026-11-27, no longer before
    the GPU worker is live). Raises ValueError for a queue the worker cannot take."""
    offered = ["gpu", "auto", "cpu"] if backend == "gpu" else ["auto", "cpu"]
    queues = requested.split(",") if requested else offered
    if set(queues) - set(offered):
        raise ValueError(f"--queues: a {backend} worker takes jobs from {', '.join(offered)}")
    backends = tuple(each for each in ("gpu", "cpu") if each == backend or each in queues)
    return queues, backends, () if "cpu" in backends else ("cpu",)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers", description=__doc__)
    parser.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto")
    parser.add_argument("--name", default=None)
    parser.add_argument("--burst", action="store_true", help="exit when the queues are empty")
    parser.add_argument("--remote", action="store_true",
                        help="reach the API's graphs and results over HTTP (GRAPHGPU_URL, "
                             "GRAPHGPU_WORKER_KEY) instead of sharing its data folder")
    parser.add_argument("--queues", default=None,
                        help="comma-separated queues to take jobs from (gpu, auto, cpu); "
                             "default: a GPU worker's all three, a CPU worker's auto and cpu. "
                             "`serve` gives its GPU workers gpu,auto and the CPU worker beside "
                             "them cpu")
    args = parser.parse_args(argv)
    settings = get_settings()
    configure_logging("worker", settings)
    if not settings.redis_url:
        parser.error("GRAPHGPU_REDIS_URL is not set")
    if args.remote and not (settings.url and settings.worker_key):
        parser.error("--remote needs GRAPHGPU_URL and GRAPHGPU_WORKER_KEY")

    # Before CuPy is imported (looking for a GPU imports it): CuPy keeps the cache folder it
    # found then, so the worker compiled every kernel into ~/.cupy again after its pool had
    # filled the data folder's (55 s of a cold start on the GPU host, 2026-11-27).
    use_kernel_cache(settings)
    backend = args.backend
    if backend == "auto":
        backend = "gpu" if device.gpu_available() else "cpu"
    elif backend == "gpu":
        device.cupy()  # raises BackendUnavailable with the reason
    try:
        queues, backends, later = plan_queues(backend, args.queues)
    except ValueError as exc:
        parser.error(str(exc))
    name = args.name or f"{socket.gethostname()}-{backend}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    # The monitor starts now and waits for this worker's description (sent once it is ready):
    # its interpreter and imports (~2 s on the GPU host) no longer come after the warm-up.
    monitor = subprocess.Popen(
        [sys.executable, "-m", "graphgpu.workers.monitor", str(os.getpid()), name],
        stdin=subprocess.PIPE, start_new_session=True)
    assert monitor.stdin is not None
    if settings.worker_warm_up:
        # A first start runs every share here as the pool finishes it: for those backends the
        # whole warm-up again took 3.3 s after the pool (H100 host, 2026-11-27) to load nothing.
        ready = precompile(*backends, load=True, later=later)
        for each in backends:
            start = time.perf_counter()
            if each in ready:
                reserve_buffers(each)
                log.info("warm-up (%s): every share ran during the compile pool; buffers in "
                         "%.1f s", each, time.perf_counter() - start)
                continue
            seconds = warm_up(each)
            slowest = sorted(seconds.items(), key=lambda kv: -kv[1])[:3]
            log.info("warm-up (%s) in %.1f s; slowest: %s", each, time.perf_counter() - start,
                     ", ".join(f"{name} {s:.2f} s" for name, s in slowest))
    else:
        log.info("warm-up off: each kernel compiles, or loads from the disk caches, at its "
                 "first job")
    load_job_path()
    redis = Redis.from_url(settings.redis_url)
    wait_for_redis(redis)
    api = remote.connect(settings, name) if args.remote else None
    context = WorkerContext(
        settings=settings, redis=redis, name=name, backend=backend,
        graphs=api.graphs if api else GraphStore(settings.graphs_dir, settings.tmp_dir),
        device=device.device_name(backend), remote=api,
    )
    install(context)
    description = context.description()
    monitor.stdin.write(json.dumps(description).encode() + b"\n")
    monitor.stdin.flush()
    # Liveness comes from this process: the monitor beats for it only while these pulses (or
    # its CPU time) go on, so a stopped or hung worker is noticed and killed.
    threading.Thread(target=pulse, args=(monitor.stdin, settings.worker_heartbeat_seconds / 2),
                     name="pulse", daemon=True).start()

    worker = GraphWorker(
        [Queue(settings.queue_name(q), connection=redis, serializer=JSONSerializer)
         for q in queues],
        connection=redis, name=name, serializer=JSONSerializer, context=context,
    )
    worker.report()  # the GPU memory after warm-up, before the first job
    log.info("worker %s: backend=%s device=%s queues=%s", name, backend, context.device, queues,
             extra={"worker": name})
    # What start-up left alive (modules, compiled code, the registry: ~0.5 M objects) lives as
    # long as the process: out of the collector's reach, a full collection no longer walks it
    # in the middle of a job (235 ms each on the 2-core VM after the CPU warm-up).
    gc.collect()
    gc.freeze()
    # The monitor notices this process's exit by itself and releases what it held.
    worker.work(burst=args.burst, logging_level="WARNING")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Prometheus ``/metrics``, read from Redis at scrape time.

Job records, RQ queues, worker heartbeats and the counters workers keep (job durations, see
:mod:`graphgpu.kernels.core.observability`) are all in Redis, so a collector that reads them when
scraped gives
the same answer from any API process and survives restarts; nothing is counted in this process.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterator

from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from rq import Queue

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.observability import DURATION_BUCKETS, durations_key
from graphgpu.service.auth import require_admin
from graphgpu.service.deps import State, state
from graphgpu.service.schemas import ErrorBody

QUEUES = ("gpu", "auto", "cpu")


class RedisCollector(Collector):
    """Collects the service's metrics from Redis on every scrape.

    Parameters
    ----------
    st : State
        The application's state (Redis connection, settings, job store).
    """

    def __init__(self, st: State) -> None:
        self.st = st

    def collect(self) -> Iterator[Metric]:
        yield self._jobs()
        yield self._queues()
        yield self._durations()
        yield from self._workers()

    def _jobs(self) -> Metric:
        redis, settings = self.st.redis, self.st.settings
        ids = redis.zrange(protocol.job_index_key(settings), 0, -1)
        pipe = redis.pipeline(transaction=False)
        for job_id in ids:
            pipe.hmget(protocol.job_key(settings, job_id.decode()), "status", "algorithm")
        counts = Counter((json.loads(status), json.loads(algorithm))
                         for status, algorithm in pipe.execute() if status and algorithm)
        family = GaugeMetricFamily("graphgpu_jobs", "Jobs kept in Redis, by status and algorithm.",
                                   labels=["status", "algorithm"])
        for (status, algorithm), count in sorted(counts.items()):
            family.add_metric([status, algorithm], count)
        return family

    def _queues(self) -> Metric:
        family = GaugeMetricFamily("graphgpu_queue_depth", "Jobs waiting in each RQ queue.",
                                   labels=["queue"])
        for name in QUEUES:
            queue = Queue(self.st.settings.queue_name(name), connection=self.st.redis)
            family.add_metric([name], queue.count)
        return family

    def _durations(self) -> Metric:
        raw = self.st.redis.hgetall(durations_key(self.st.settings))
        series: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
        for field, value in raw.items():
            *labels, part = field.decode().split("|")
            series[tuple(labels)][part] = float(value)
        family = HistogramMetricFamily(
            "graphgpu_job_duration_seconds", "Run time of finished jobs (start to finish).",
            labels=["algorithm", "backend", "status"])
        bounds = [f"{b:g}" for b in DURATION_BUCKETS]
        for labels, parts in sorted(series.items()):
            cumulative, buckets = 0.0, []
            for bound in bounds:
                cumulative += parts.get(bound, 0.0)
                buckets.append((bound, cumulative))
            buckets.append(("+Inf", parts.get("count", 0.0)))
            family.add_metric(list(labels), buckets, parts.get("sum", 0.0))
        return family

    def _workers(self) -> Iterator[Metric]:
        workers = self.st.jobs.live_workers()
        live = GaugeMetricFamily("graphgpu_workers", "Live workers, by backend.",
                                 labels=["backend"])
        for backend in ("cpu", "gpu"):
            live.add_metric([backend], sum(w["backend"] == backend for w in workers))
        yield live
        for field, text in (("gpu_free_bytes", "Free GPU memory each GPU worker reports."),
                            ("gpu_total_bytes", "Total GPU memory of each GPU worker.")):
            family = GaugeMetricFamily(f"graphgpu_worker_{field}", text,
                                       labels=["worker", "device"])
            for worker in workers:
                if worker.get(field) is not None:
                    family.add_metric([worker["name"], worker["device"]], worker[field])
            yield family


router = APIRouter(tags=["service"])


@router.get("/metrics", operation_id="service-metrics", summary="Prometheus metrics",
            response_class=Response, dependencies=[Depends(require_admin)],
            responses={200: {"content": {CONTENT_TYPE_LATEST: {}}},
                       **{code: {"model": ErrorBody} for code in (401, 403, 429)}})
def metrics(request: Request) -> Response:
    """Jobs by status and algorithm, queue depths, job durations, live workers and their GPU
    memory. Needs an admin key when keys are configured."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RedisCollector(state(request)))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

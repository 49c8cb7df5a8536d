"""Test-only plugin algorithms of the reliability tests.

``test_stubborn`` stands for a long CUDA kernel or Numba loop that cannot be interrupted and
never polls for a stop: the time-limit signal (SIGALRM) is ignored while it runs and it reports
no progress, so neither a cancel nor RQ's own timeout can stop it; only the monitor killing the
worker can. ``test_sharded`` fans out into as many shard jobs as asked (``workers/fanout.py``).
``test_hungry`` claims the host memory it is asked to (its estimate), and does nothing.
"""

from __future__ import annotations

import signal
import time

from pydantic import BaseModel, Field

from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, Estimate, ProgressFn
from tests.support.plugin import PluginParams, register_plugin


class StubbornParams(PluginParams):
    seconds: float = Field(0.0, ge=0, le=600)


class StubbornSummary(BaseModel):
    seconds: float


def stubborn(graph: Graph, params: StubbornParams, progress: ProgressFn) -> AlgorithmResult:
    """Sleep without a progress report, deaf to SIGALRM, as an uninterruptible kernel is."""
    handler = signal.signal(signal.SIGALRM, signal.SIG_IGN)  # RQ's time limit is SIGALRM
    try:
        deadline = time.monotonic() + params.seconds
        while time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        signal.signal(signal.SIGALRM, handler)
    return AlgorithmResult(summary={"seconds": params.seconds})


register_plugin("test_stubborn", "Test plugin: a kernel that ignores cancel and time limits.",
                StubbornParams, StubbornSummary, stubborn)


class ShardedParams(PluginParams):
    shards: int = Field(0, ge=0, le=10_000)
    seconds: float = Field(0.0, ge=0, le=60)


def sharded(graph: Graph, params: ShardedParams, progress: ProgressFn) -> AlgorithmResult:
    """One shard's work: sleep (with progress, so it can be canceled)."""
    deadline = time.monotonic() + params.seconds
    while time.monotonic() < deadline:
        progress(0.5, "sleeping")
        time.sleep(0.05)
    return AlgorithmResult(summary={"seconds": params.seconds})


register_plugin("test_sharded", "Test plugin: fans out into `shards` shard jobs.",
                ShardedParams, StubbornSummary, sharded,
                shards=lambda p: [{"shards": 0, "seconds": p.seconds}] * p.shards,
                merge=lambda p, summaries: (next(i for i, s in enumerate(summaries) if s), {
                    "seconds": p.seconds}))


class HungryParams(PluginParams):
    claimed_host_bytes: int | None = Field(None, ge=0)


def claimed_host(graph: Graph, params: HungryParams, backend: Backend) -> Estimate:
    """The host memory the request claims (None: the service's default estimate)."""
    return Estimate(host_bytes=params.claimed_host_bytes, detail="claimed by the request")


register_plugin("test_hungry", "Test plugin: claims the host memory it is asked to.",
                HungryParams, StubbornSummary,
                lambda graph, params, progress: AlgorithmResult(summary={"seconds": 0.0}),
                estimate=claimed_host)

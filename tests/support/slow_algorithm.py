"""A test-only plugin algorithm that runs for a chosen time, reporting progress as it goes.

Loaded through GRAPHGPU_EXTRA_ALGORITHM_MODULES by the integration tests, which need a job that
is reliably still running when they cancel it or kill its worker.
"""

from __future__ import annotations

import time

import numpy as np
from pydantic import BaseModel, Field

from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, Estimate, ProgressFn
from tests.support.plugin import PluginParams, register_plugin


class SleepParams(PluginParams):
    seconds: float = Field(0.0, ge=0, le=120)
    # What the estimate claims, so tests can reach the API's refusals without a real long job.
    claimed_seconds: float | None = None
    claimed_result_bytes: int | None = None


class SleepSummary(BaseModel):
    slept_seconds: float
    degree_sum: int


def sleep_then_count(graph: Graph, params: SleepParams, progress: ProgressFn) -> AlgorithmResult:
    """Sleep in small slices (reporting progress, so it can be canceled), then sum degrees."""
    start = time.monotonic()
    while (elapsed := time.monotonic() - start) < params.seconds:
        progress(elapsed / params.seconds if params.seconds else 1.0, "sleeping")
        time.sleep(0.02)
    degrees = graph.degrees()
    return AlgorithmResult(summary={"slept_seconds": params.seconds,
                                    "degree_sum": int(degrees.sum())},
                           node_values={"degree": np.asarray(degrees, dtype=np.int64)})


def claimed_cost(graph: Graph, params: SleepParams, backend: Backend) -> Estimate:
    """The estimate the request claims (time limits themselves are tested with ``seconds``)."""
    return Estimate(seconds=params.claimed_seconds, result_bytes=params.claimed_result_bytes,
                    detail=f"claimed by the request, {graph.n} nodes")


register_plugin("test_sleep", "Test plugin: sleep, then report degrees.", SleepParams,
                SleepSummary, sleep_then_count, estimate=claimed_cost)

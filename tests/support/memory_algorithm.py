"""A test-only plugin algorithm about device memory: it claims a device-memory estimate, and can
fail the way CuPy does when the GPU runs out of memory.

Loaded through GRAPHGPU_EXTRA_ALGORITHM_MODULES by the limit tests, which need the API's memory
check and the worker's out-of-memory handling without a GPU.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, Estimate, ProgressFn
from tests.support.plugin import PluginParams, register_plugin


class OutOfMemoryError(MemoryError):
    """Named like ``cupy.cuda.memory.OutOfMemoryError``, which the worker reports by name."""


class MemoryParams(PluginParams):
    device_bytes: int | None = Field(None, ge=0, description="Device memory the estimate claims.")
    oom: bool = Field(False, description="Fail as an allocation on the device would.")


class MemorySummary(BaseModel):
    n: int


def allocate(graph: Graph, params: MemoryParams, progress: ProgressFn) -> AlgorithmResult:
    """Fail with :class:`OutOfMemoryError` when asked to, else return the node count."""
    progress(0.5, "allocating")
    if params.oom:
        raise OutOfMemoryError(f"Out of memory allocating {graph.n * 2**40:,} bytes")
    return AlgorithmResult(summary={"n": graph.n},
                           node_values={"one": np.ones(graph.n, dtype=np.int64)})


def claimed_memory(graph: Graph, params: MemoryParams, backend: Backend) -> Estimate:
    """The device memory the request claims (None: the API's default estimate applies)."""
    return Estimate(device_bytes=params.device_bytes, detail="claimed by the request")


register_plugin("test_memory", "Test plugin: claim device memory, or run out of it.",
                MemoryParams, MemorySummary, allocate, estimate=claimed_memory)

"""GPU access for kernels: CuPy import, device description, and graphs kept resident on the device.

CuPy is imported on first use so that the package works on machines without it. A GPU worker keeps
its CUDA context, compiled kernels and recently used graphs warm across jobs.
"""

from __future__ import annotations

import platform
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from typing import Any

from graphgpu.kernels.core.errors import BackendUnavailable
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.settings import get_settings


def cupy() -> Any:
    """The CuPy module; raises :class:`BackendUnavailable` when CuPy or a GPU is missing."""
    try:
        import cupy as cp
    except ImportError as exc:
        raise BackendUnavailable(
            f"the GPU backend needs CuPy, which is not installed ({exc})") from None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as exc:
        raise BackendUnavailable(f"no usable CUDA device: {exc}") from None
    if count == 0:
        raise BackendUnavailable("no CUDA device is visible")
    return cp


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        cupy()
    except BackendUnavailable:
        return False
    return True


@cache
def device_name(backend: str) -> str:
    """Human-readable name of the device a backend runs on (GPU model or CPU)."""
    if backend == "gpu":
        cp = cupy()
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


@dataclass(frozen=True)
class DeviceGraph:
    """A graph's CSR arrays on the GPU (CuPy arrays, same dtypes as :class:`Graph`)."""

    indptr: Any
    indices: Any
    weights: Any | None
    n: int
    m: int

    @property
    def nbytes(self) -> int:
        arrays = (self.indptr, self.indices, self.weights)
        return sum(int(a.nbytes) for a in arrays if a is not None)


_resident: OrderedDict[str, DeviceGraph] = OrderedDict()


def on_device(graph: Graph) -> DeviceGraph:
    """The graph's arrays on the current GPU, uploaded once and kept (LRU, ``gpu_cache_bytes``).

    Graphs without an id (built in memory) are uploaded every time and not cached.
    """
    if graph.graph_id and graph.graph_id in _resident:
        _resident.move_to_end(graph.graph_id)
        return _resident[graph.graph_id]
    cp = cupy()
    device_graph = DeviceGraph(
        indptr=cp.asarray(graph.indptr),
        indices=cp.asarray(graph.indices),
        weights=None if graph.weights is None else cp.asarray(graph.weights),
        n=graph.n,
        m=graph.m,
    )
    if graph.graph_id:
        _resident[graph.graph_id] = device_graph
        budget = get_settings().gpu_cache_bytes
        while len(_resident) > 1 and sum(g.nbytes for g in _resident.values()) > budget:
            _resident.popitem(last=False)
    return device_graph


def is_resident(graph_id: str) -> bool:
    """Whether a graph is already on the device (reported in job timings)."""
    return graph_id in _resident

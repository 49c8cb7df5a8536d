"""Host- and device-memory estimates of the generators, checked by the API before queueing.

Upper bounds, from the expected size (``params.expected_size()``) and what each generator and
``build_graph`` hold at their peak per edge and per node: ``watts_strogatz n=2e8 k=20`` (2e9
edges) or ``erdos_renyi n=2e8 m=2e9`` pass the size limits but need hundreds of GB, and once
killed their worker twice; the API now refuses them (413 with the estimate) when no live worker
has the memory.
"""

from __future__ import annotations

import math

from graphgpu.kernels.core.io.budget import BYTES_PER_EDGE_ROW, BYTES_PER_NODE
from graphgpu.kernels.core.registry import Backend, Estimate
from graphgpu.kernels.generators.params import GeneratorParams

#: Host bytes per generated edge that each generator holds before ``build_graph`` starts
#: (int64 src/dst plus its own work arrays: random draws, pair indices, rewiring masks).
GENERATOR_BYTES_PER_EDGE = {
    "barabasi_albert": 48, "watts_strogatz": 40, "erdos_renyi": 64, "rmat": 56, "grid": 16,
}
#: Device bytes per edge of the GPU versions at their peak, building the graph on the device
#: (csr.arc_keys, csr.csr_from_keys): the drawn int64 ids (16), one arc's keys and their
#: loop-free copy (16), both arcs' keys (16); then the keys, the sort's output and its scratch.
DEVICE_BYTES_PER_EDGE = 56


def edges_upper(params: GeneratorParams) -> int:
    """Edges a run may produce: the expected count, plus six standard deviations where the
    count is random (``G(n, p)``)."""
    edges = params.expected_size().edges
    if getattr(params, "p", None) is not None and getattr(params, "m", 0) is None:
        edges += 6 * math.isqrt(edges) + 16
    return int(edges)


def estimate(name: str, params: GeneratorParams, backend: Backend) -> Estimate:
    """Peak host (and, on the GPU, device) memory of generating and building the graph."""
    nodes, edges = params.expected_size().nodes, edges_upper(params)
    per_edge = GENERATOR_BYTES_PER_EDGE.get(name, 64) + BYTES_PER_EDGE_ROW
    host = edges * per_edge + nodes * (BYTES_PER_NODE + 8)  # + the ids passed as extra_nodes
    device = edges * DEVICE_BYTES_PER_EDGE if backend == "gpu" else None
    return Estimate(host_bytes=host, device_bytes=device,
                    detail=f"{nodes:,} nodes, up to {edges:,} edges, {per_edge} bytes an edge")


def barabasi_albert(params: GeneratorParams, backend: Backend) -> Estimate:
    """Estimate of ``barabasi_albert`` (see :func:`estimate`)."""
    return estimate("barabasi_albert", params, backend)


def watts_strogatz(params: GeneratorParams, backend: Backend) -> Estimate:
    """Estimate of ``watts_strogatz`` (see :func:`estimate`)."""
    return estimate("watts_strogatz", params, backend)


def erdos_renyi(params: GeneratorParams, backend: Backend) -> Estimate:
    """Estimate of ``erdos_renyi`` (see :func:`estimate`)."""
    return estimate("erdos_renyi", params, backend)


def rmat(params: GeneratorParams, backend: Backend) -> Estimate:
    """Estimate of ``rmat`` (see :func:`estimate`)."""
    return estimate("rmat", params, backend)


def grid(params: GeneratorParams, backend: Backend) -> Estimate:
    """Estimate of ``grid`` (see :func:`estimate`)."""
    return estimate("grid", params, backend)

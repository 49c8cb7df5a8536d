"""GPU versions of the vectorised generators; see :mod:`graphgpu.kernels.generators`.

The same code as the CPU's (:mod:`~graphgpu.kernels.generators.arrays`), run with CuPy, and the
edges stay on the device (:func:`graphgpu.kernels.generators.generate_graph` builds the graph
there). ``rmat`` draws the CPU's edges (a counter-based stream); ``erdos_renyi`` uses CuPy's
generator, so its edges follow the same model but differ from the CPU's for the same seed. CuPy is
imported on first use (:func:`graphgpu.kernels.core.device.cupy`), so this module imports on
machines without it.
"""

from __future__ import annotations

from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.registry import EdgeSet, ProgressFn
from graphgpu.kernels.generators.arrays import check_limits, erdos_renyi_edges, rmat_edges
from graphgpu.kernels.generators.params import ErdosRenyiParams, RmatParams


def erdos_renyi_gpu(params: ErdosRenyiParams, progress: ProgressFn) -> EdgeSet:
    """:func:`graphgpu.kernels.generators.cpu.erdos_renyi` on the GPU (edges left there)."""
    check_limits(params)  # first: nothing touches the device for a graph that would be refused
    cp = cupy()
    return erdos_renyi_edges(cp, cp.random.default_rng(params.seed), params, progress)


def rmat_gpu(params: RmatParams, progress: ProgressFn) -> EdgeSet:
    """:func:`graphgpu.kernels.generators.cpu.rmat` on the GPU: the same edges, left there."""
    check_limits(params)
    return rmat_edges(cupy(), params, progress)

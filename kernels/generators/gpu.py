"""GPU versions of the vectorised generators (CuPy's generator); see
:mod:`graphgpu.kernels.generators`.

The same code as the CPU's (:mod:`~graphgpu.kernels.generators.arrays`), run with CuPy: the edges
follow the same model but differ from the CPU's for the same seed. CuPy is imported on first use
(:func:`graphgpu.kernels.core.device.cupy`), so this module imports on machines without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.registry import EdgeSet, ProgressFn
from graphgpu.kernels.generators.arrays import check_limits, erdos_renyi_edges, rmat_edges
from graphgpu.kernels.generators.params import ErdosRenyiParams, RmatParams


def _seeded(run: Callable[[Any, Any, Any, ProgressFn], EdgeSet], params: Any,
            progress: ProgressFn) -> EdgeSet:
    # Limits first: nothing touches the device for a graph that would be refused.
    check_limits(params)
    cp = cupy()
    return run(cp, cp.random.default_rng(params.seed), params, progress)


def erdos_renyi_gpu(params: ErdosRenyiParams, progress: ProgressFn) -> EdgeSet:
    """:func:`graphgpu.kernels.generators.cpu.erdos_renyi` on the GPU."""
    return _seeded(erdos_renyi_edges, params, progress)


def rmat_gpu(params: RmatParams, progress: ProgressFn) -> EdgeSet:
    """:func:`graphgpu.kernels.generators.cpu.rmat` on the GPU."""
    return _seeded(rmat_edges, params, progress)

"""What ``core_number`` and ``k_core`` do with a backend's core numbers: the two results.

:mod:`.cpu` and :mod:`.gpu` pass their core-number function, so both summarise the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: ``(graph, progress) -> core numbers`` (host int32 per node).
Cores = Callable[[Graph, ProgressFn], np.ndarray]


def _cores(graph: Graph, progress: ProgressFn, cores: Cores) -> np.ndarray:
    progress(0.0, "core numbers: peeling")
    core = cores(graph, progress)
    progress(1.0, "core numbers: done")
    return core


def core_number(graph: Graph, progress: ProgressFn, cores: Cores) -> AlgorithmResult:
    """A ``core_number`` job with a backend's ``cores``."""
    core = _cores(graph, progress, cores)
    top = int(core.max()) if graph.n else 0
    return AlgorithmResult(summary={"max_core": top, "max_core_size": int((core == top).sum())},
                           node_values={"core_number": core})


def k_core(graph: Graph, params: Any, progress: ProgressFn, cores: Cores) -> AlgorithmResult:
    """A ``k_core`` job (``params``: ``KCoreParams``) with a backend's ``cores``."""
    core = _cores(graph, progress, cores)
    k = params.k if params.k is not None else (int(core.max()) if graph.n else 0)
    member = core >= k
    src_member = np.repeat(member, graph.degrees())
    edges = int((src_member & member[graph.indices]).sum()) // 2
    return AlgorithmResult(summary={"k": k, "nodes": int(member.sum()), "edges": edges},
                           node_values={"in_core": member})

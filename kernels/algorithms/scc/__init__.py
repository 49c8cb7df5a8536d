"""Strongly connected components, CPU and GPU with the same labels.

A strongly connected component is a maximal set of nodes that reach each other along arcs. On an
undirected graph every edge is an arc each way, so the components are the connected components.

* CPU: Tarjan's algorithm, iterative (no recursion limit), O(n + m), Numba.
* GPU: trimming and colouring (after Orzan; Hong et al., SC 2013, for the trimming): nodes with no
  unassigned in- or out-neighbour are components of their own and are peeled off in parallel;
  then every unassigned node takes the smallest id that reaches it (a pull fixpoint over in-arcs),
  and each colour's root ``r`` (``color[r] == r``, the smallest id of its component) collects,
  backwards within its colour, the nodes that reach it: exactly ``r``'s component (they reach
  ``r``, and ``r`` reaches them since ``r`` gave them its colour). Repeat on what is left.

Both backends name each component by its smallest node id, then number the components
``0..count-1`` in that order, so the labels are equal node for node.

Directed graphs run natively.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from graphgpu.kernels.algorithms.common.declare import NoParams, declare, linear_estimate
from graphgpu.kernels.algorithms.scc import cpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: Seconds per arc (estimates): Tarjan on the CPU; a few colouring passes on the GPU.
SECONDS_PER_ARC = {"cpu": 3e-8, "gpu": 5e-10}


class SccParams(NoParams):
    """Parameters of ``strongly_connected_components`` (none)."""


class SccSummary(BaseModel):
    """Summary of a ``strongly_connected_components`` result."""

    count: int = Field(description="Number of strongly connected components.")
    largest: int = Field(description="Nodes in the largest component.")
    singletons: int = Field(description="Components of a single node.")


def number_components(xp: Any, smallest: Any) -> tuple[Any, Any]:
    """Component numbers ``0..count-1`` in order of smallest member, and the sizes.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``.
    smallest : array of int
        Per node, the smallest node id of its component.
    """
    n = smallest.shape[0]
    is_root = smallest == xp.arange(n, dtype=smallest.dtype)
    number = (xp.cumsum(is_root, dtype=xp.int64) - 1)[smallest]
    count = int(is_root.sum())
    sizes = xp.bincount(number, minlength=count) if n else xp.zeros(0, xp.int64)
    return number, sizes


def _result(number: np.ndarray, sizes: np.ndarray) -> AlgorithmResult:
    summary = {"count": int(sizes.shape[0]), "largest": int(sizes.max()) if sizes.size else 0,
               "singletons": int((sizes == 1).sum())}
    return AlgorithmResult(summary=summary, node_values={"component": number},
                           arrays={"sizes": sizes.astype(np.int64)})


def scc_cpu(graph: Graph, params: SccParams, progress: ProgressFn) -> AlgorithmResult:
    """Strongly connected components on the CPU (iterative Tarjan, Numba).

    Parameters
    ----------
    graph : Graph
        Directed (arcs followed as given) or undirected (each edge both ways).
    params : SccParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``component`` (int64, numbered by smallest member) per node, ``sizes`` per component;
        summary per :class:`SccSummary`.
    """
    progress(0.0, "strongly connected components: Tarjan")
    number, sizes = number_components(np, cpu.tarjan(graph.indptr, graph.indices))
    progress(1.0, "strongly connected components: done")
    return _result(number, sizes)


def scc_gpu(graph: Graph, params: SccParams, progress: ProgressFn) -> AlgorithmResult:
    """Strongly connected components on the GPU (trimming and colouring); same labels as
    :func:`scc_cpu`."""
    from graphgpu.kernels.algorithms.scc import gpu
    from graphgpu.kernels.core.device import cupy

    number, sizes = number_components(cupy(), gpu.labels(graph, progress))
    progress(1.0, "strongly connected components: done")
    return _result(number.get(), sizes.get())


#: Cost of ``strongly_connected_components``: linear in arcs (GPU: a few passes).
estimate = linear_estimate(SECONDS_PER_ARC, bytes_per_node=16)

SCC = declare(
    "strongly_connected_components", "Strongly connected components (Tarjan on the CPU, "
    "trimming and colouring on the GPU), numbered by smallest member; directed graphs natively.",
    (SccParams, SccSummary), (scc_cpu, scc_gpu), estimate=estimate, directed="native")

"""k-core decomposition: ``core_number`` per node and ``k_core`` membership, CPU and GPU.

The k-core is the largest subgraph whose nodes all have degree >= k inside it; a node's core
number is the largest k whose k-core holds it. Weights are ignored.

* CPU: Batagelj-Zaversnik bucket peeling, O(n + m), Numba.
* GPU: parallel peeling by levels: ``k`` = the smallest degree left; every node of degree <= k
  gets core number k and leaves, neighbours' degrees drop by atomics, and a neighbour dropping to
  k joins the next frontier (exactly one decrement takes it from k + 1 to k), until no node of
  degree <= k is left; then the next level. Core numbers are unique, so the backends agree node
  for node.

``k_core`` marks the nodes of core number >= k (``k`` omitted: the largest core, as NetworkX's
``k_core`` does) and counts the edges between them.

Directed graphs run on the symmetrised view (a node's degree counts its distinct neighbours
either way), unlike NetworkX, which counts in- plus out-degree.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.common.declare import NoParams, declare, linear_estimate
from graphgpu.kernels.algorithms.kcore import cpu
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Backend, ProgressFn

#: Seconds per arc (estimates): bucket peeling on the CPU, a few passes on the GPU.
SECONDS_PER_ARC = {"cpu": 2e-8, "gpu": 1e-9}


class CoreParams(NoParams):
    """Parameters of ``core_number`` (none)."""


class KCoreParams(BaseModel):
    """Parameters of ``k_core``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{}, {"k": 2}]})

    k: int | None = Field(None, ge=0, description="Core order; omitted: the largest core.")


class CoreSummary(BaseModel):
    """Summary of a ``core_number`` result."""

    max_core: int = Field(description="Largest core number (the degeneracy).")
    max_core_size: int = Field(description="Nodes whose core number is the largest.")


class KCoreSummary(BaseModel):
    """Summary of a ``k_core`` result."""

    k: int = Field(description="Core order used.")
    nodes: int = Field(description="Nodes of the k-core.")
    edges: int = Field(description="Edges between them.")


def _cores(graph: Graph, progress: ProgressFn, backend: Backend) -> np.ndarray:
    progress(0.0, "core numbers: peeling")
    if backend == "cpu":
        core = cpu.core_numbers(graph.indptr, graph.indices)
    else:
        from graphgpu.kernels.algorithms.kcore import gpu
        core = gpu.core_numbers(graph, progress).get()
    progress(1.0, "core numbers: done")
    return core


def _core_number(graph: Graph, backend: Backend, progress: ProgressFn) -> AlgorithmResult:
    core = _cores(graph, progress, backend)
    top = int(core.max()) if graph.n else 0
    return AlgorithmResult(summary={"max_core": top, "max_core_size": int((core == top).sum())},
                           node_values={"core_number": core})


def core_number_cpu(graph: Graph, params: CoreParams, progress: ProgressFn
                    ) -> AlgorithmResult:
    """Core numbers on the CPU (bucket peeling, Numba).

    Parameters
    ----------
    graph : Graph
        Undirected (directed graphs are symmetrised by the worker).
    params : CoreParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``core_number`` (int32) per node; summary per :class:`CoreSummary`.
    """
    return _core_number(graph, "cpu", progress)


def core_number_gpu(graph: Graph, params: CoreParams, progress: ProgressFn
                    ) -> AlgorithmResult:
    """Core numbers on the GPU (parallel peeling); same answer as :func:`core_number_cpu`."""
    return _core_number(graph, "gpu", progress)


def _k_core(graph: Graph, params: KCoreParams, backend: Backend, progress: ProgressFn
            ) -> AlgorithmResult:
    core = _cores(graph, progress, backend)
    k = params.k if params.k is not None else (int(core.max()) if graph.n else 0)
    member = core >= k
    src_member = np.repeat(member, graph.degrees())
    edges = int((src_member & member[graph.indices]).sum()) // 2
    return AlgorithmResult(summary={"k": k, "nodes": int(member.sum()), "edges": edges},
                           node_values={"in_core": member})


def k_core_cpu(graph: Graph, params: KCoreParams, progress: ProgressFn) -> AlgorithmResult:
    """Membership of the k-core on the CPU (from the core numbers).

    Parameters
    ----------
    graph : Graph
        Undirected (directed graphs are symmetrised by the worker).
    params : KCoreParams
    progress : ProgressFn

    Returns
    -------
    AlgorithmResult
        ``in_core`` (bool) per node; summary per :class:`KCoreSummary`.
    """
    return _k_core(graph, params, "cpu", progress)


def k_core_gpu(graph: Graph, params: KCoreParams, progress: ProgressFn) -> AlgorithmResult:
    """Membership of the k-core on the GPU; same answer as :func:`k_core_cpu`."""
    return _k_core(graph, params, "gpu", progress)


#: Cost of ``core_number`` and ``k_core``: linear in arcs; one core number (or flag) per node.
estimate = linear_estimate(SECONDS_PER_ARC, bytes_per_node=8)

CORE_NUMBER = declare(
    "core_number", "Core number of every node (k-core decomposition: bucket peeling on the CPU, "
    "parallel peeling on the GPU); directed graphs symmetrised.", (CoreParams, CoreSummary),
    (core_number_cpu, core_number_gpu), estimate=estimate, directed="symmetrise")
K_CORE = declare(
    "k_core", "Nodes of the k-core (default: the largest core) and its edge count; directed "
    "graphs symmetrised.", (KCoreParams, KCoreSummary), (k_core_cpu, k_core_gpu),
    estimate=estimate, directed="symmetrise")

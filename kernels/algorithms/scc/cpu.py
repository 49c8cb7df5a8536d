"""CPU side of ``strongly_connected_components``: iterative Tarjan (Numba), O(n + m)."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.scc import driver
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn


@numba.njit(cache=True, nogil=True)
def tarjan(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Strongly connected components of the graph of out-lists ``(indptr, indices)``.

    Parameters
    ----------
    indptr, indices : ndarray
        The out-CSR.

    Returns
    -------
    ndarray of int32
        For each node, the smallest node id of its component.
    """
    n = indptr.shape[0] - 1
    index = np.full(n, -1, np.int64)
    low = np.zeros(n, np.int64)
    on_stack = np.zeros(n, np.bool_)
    stack = np.empty(n, np.int32)
    call = np.empty(n, np.int32)  # the DFS path
    edge = np.empty(n, np.int64)  # next arc to look at, per node on the path
    label = np.full(n, -1, np.int32)
    counter = 0
    top = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        depth = 0
        call[0] = root
        edge[root] = indptr[root]
        index[root] = low[root] = counter
        counter += 1
        stack[top] = root
        top += 1
        on_stack[root] = True
        while depth >= 0:
            v = call[depth]
            if edge[v] < indptr[v + 1]:
                u = indices[edge[v]]
                edge[v] += 1
                if index[u] < 0:
                    index[u] = low[u] = counter
                    counter += 1
                    stack[top] = u
                    top += 1
                    on_stack[u] = True
                    edge[u] = indptr[u]
                    depth += 1
                    call[depth] = u
                elif on_stack[u] and index[u] < low[v]:
                    low[v] = index[u]
                continue
            if low[v] == index[v]:  # v roots a component: pop it, find its smallest id
                smallest = v
                k = top - 1
                while stack[k] != v:
                    smallest = min(smallest, stack[k])
                    k -= 1
                for j in range(k, top):
                    label[stack[j]] = smallest
                    on_stack[stack[j]] = False
                top = k
            depth -= 1
            if depth >= 0:
                parent = call[depth]
                if low[v] < low[parent]:
                    low[parent] = low[v]
    return label


def scc(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
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
        summary per ``SccSummary``.
    """
    progress(0.0, "strongly connected components: Tarjan")
    number, sizes = driver.number_components(np, tarjan(graph.indptr, graph.indices))
    progress(1.0, "strongly connected components: done")
    return driver.result(number, sizes)

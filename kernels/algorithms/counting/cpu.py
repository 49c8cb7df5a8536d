"""CPU backend of the counting family (Numba): the entry points the registry holds, and the
host-only pieces behind small independent sets (see :mod:`graphgpu.kernels.algorithms.counting`).

Cliques run on the degeneracy-ordered DAG (:func:`graphgpu.kernels.algorithms.common.dag.oriented`:
the smallest out-degrees, an O(m) sequential peeling), searched by
:mod:`graphgpu.kernels.algorithms.counting.cliques`; connected sets by ESU
(:mod:`graphgpu.kernels.algorithms.counting.esu`). Roots go in :data:`CPU_CHUNKS` chunks, with a
progress report (and a chance to cancel) between chunks.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.common import dag
from graphgpu.kernels.algorithms.counting import driver
from graphgpu.kernels.algorithms.counting.cliques import clique_roots
from graphgpu.kernels.algorithms.counting.esu import connected_roots
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: Progress reports per run.
CPU_CHUNKS = 64


@numba.njit(cache=True, nogil=True)
def edge_triangles(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Triangles through each arc (``|N(u) ∩ N(v)|`` for arc ``u -> v``), by sorted merges."""
    n = indptr.shape[0] - 1
    out = np.zeros(indices.shape[0], np.int64)
    for u in range(n):
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if v < u:
                continue
            a, b, c = indptr[u], indptr[v], 0
            while a < indptr[u + 1] and b < indptr[v + 1]:
                if indices[a] < indices[b]:
                    a += 1
                elif indices[a] > indices[b]:
                    b += 1
                else:
                    c += 1
                    a += 1
                    b += 1
            out[j] = c
            # The reverse arc v -> u carries the same count.
            lo, hi_ = indptr[v], indptr[v + 1]
            out[lo + np.searchsorted(indices[lo:hi_], u)] = c
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _wedges(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray, u: int, cnt: np.ndarray,
            count: bool) -> int:
    """Over the wedges ``u - v - w`` with ``v, w`` below ``u``: pairs of middles sharing an end
    ``w``, counted with ``cnt[w]`` (``count``), or ``cnt`` reset to zero (not ``count``)."""
    total = 0
    for a in range(ptr[u], split[u]):
        v = adj[a]
        for b in range(ptr[v], ptr[v + 1]):
            w = adj[b]
            if w >= u:
                break
            if count:
                total += cnt[w]
                cnt[w] += 1
            else:
                cnt[w] = 0
    return total


@numba.njit(cache=True, nogil=True)
def four_cycles(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray) -> int:
    """4-cycles (as subgraphs), each counted once from its highest-ranked vertex ``u``: for the
    wedges ``u - v - w`` with ``v, w`` below ``u``, a pair of middles ``v`` sharing ``w`` closes
    one cycle. O(m * degeneracy) on rank ids
    (:func:`graphgpu.kernels.algorithms.common.dag.relabel`)."""
    n = ptr.shape[0] - 1
    cnt = np.zeros(n, np.int64)
    total = 0
    for u in range(n):
        total += _wedges(ptr, adj, split, u, cnt, True)
        _wedges(ptr, adj, split, u, cnt, False)
    return total


def _chunks(total: int) -> list[np.ndarray]:
    return np.array_split(np.arange(total, dtype=np.int64), min(CPU_CHUNKS, max(total, 1)))


def clique_dag(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """The DAG the CPU's clique search runs on: degeneracy-ordered out-lists ``(dptr, dadj)``."""
    return dag.oriented(graph)[3:]


def dag_counts(dptr: np.ndarray, dadj: np.ndarray, kmax: int, lo_size: int,
               progress: ProgressFn, what: str) -> dict[int, int]:
    """Cliques of sizes 3..kmax of the DAG ``(dptr, dadj)``, root chunk by root chunk (the
    contract of :attr:`graphgpu.kernels.algorithms.counting.driver.Ops.dag_counts`)."""
    lo = np.zeros(kmax + 2, np.int64)
    hi = np.zeros(kmax + 2, np.int64)
    n = dptr.shape[0] - 1
    done = 0
    for chunk in _chunks(n):
        progress(done / max(n, 1), f"{what}: {done:,} of {n:,} roots done")
        clique_roots(dptr, dadj, chunk, kmax, lo_size, lo, hi)
        done += chunk.shape[0]
    totals = driver.wide_totals(lo, hi)
    return {s: totals[s] for s in range(3, kmax + 1)}


def connected_counts(graph: Graph, kmax: int, progress: ProgressFn) -> dict[int, int]:
    """Connected induced sets of sizes 3..kmax, root chunk by root chunk."""
    lo = np.zeros(kmax + 2, np.int64)
    hi = np.zeros(kmax + 2, np.int64)
    done = 0
    for chunk in _chunks(graph.n):
        progress(done / max(graph.n, 1),
                 f"connected subgraphs: {done:,} of {graph.n:,} roots done")
        connected_roots(graph.indptr, graph.indices, chunk, kmax, lo, hi)
        done += chunk.shape[0]
    totals = driver.wide_totals(lo, hi)
    return {s: totals[s] for s in range(3, kmax + 1)}


def _arc_triangles(graph: Graph) -> Any:
    return edge_triangles(graph.indptr, graph.indices)


def _four_cycles(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray) -> int:
    return int(four_cycles(ptr, adj, split))


#: The CPU's pieces of the shared runs.
OPS = driver.Ops(array_module=lambda: np, clique_dag=clique_dag, dag_counts=dag_counts,
               connected_counts=connected_counts, arc_triangles=_arc_triangles,
               four_cycles=_four_cycles)


def cliques_cpu(graph: Graph, params: driver.SizeParams, progress: ProgressFn) -> AlgorithmResult:
    """``count_cliques`` on the CPU: degeneracy-ordered DAG, per-root bitmaps (family notes).

    ``params`` is a ``CountParams``; ``progress`` hears of every root chunk and may raise to
    cancel. The summary follows ``CountSummary`` (exact integers).
    """
    return driver.run_cliques(graph, params, progress, OPS)


def connected_cpu(graph: Graph, params: driver.SizeParams, progress: ProgressFn) -> AlgorithmResult:
    """``count_connected_subgraphs`` on the CPU: ESU from each smallest vertex."""
    return driver.run_connected(graph, params, progress, OPS)


def independent_cpu(graph: Graph, params: driver.RegimeParams, progress: ProgressFn
                    ) -> AlgorithmResult:
    """``count_independent_sets`` on the CPU, by local counts (k <= 4) or by cliques of the
    complement; raises ``InvalidInput`` when neither regime applies (``driver.regime``)."""
    return driver.run_independent(graph, params, progress, OPS)

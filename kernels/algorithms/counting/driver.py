"""The runs of the counting family, written once for both backends (see
:mod:`graphgpu.kernels.algorithms.counting` for the algorithms).

A backend hands its pieces to the runs as an :class:`Ops`: where its arrays live, the DAG its
clique search runs on, and its searches. Everything else (the independent-set regimes, the
closed forms of the local counts, the summary) is the same on both, so it is here.

Counts are Python integers. The host searches keep them per size as two int64 words,
``hi * 2**62 + lo`` (:func:`add_wide`): each root's contribution (far below ``2**62``: it is at
most the root's search nodes times its out-degree) is added to ``lo`` and the carry moved to
``hi``, so totals stay exact past 64 bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numba
import numpy as np

from graphgpu.kernels.algorithms.common import dag
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: Largest graph the ``enumerate`` independent-set regime takes (one 32-lane warp of words).
ENUMERATE_MAX_NODES = 1024
#: Largest k of the ``local`` independent-set regime.
LOCAL_MAX_K = 4
#: Base of the two-word host accumulators.
LIMB_BITS = 62
_LIMB = np.int64(1) << np.int64(LIMB_BITS)


@numba.njit(cache=True, nogil=True, inline="always")
def add_wide(lo: np.ndarray, hi: np.ndarray, size: int, x: int) -> None:
    """``(hi, lo)[size] += x`` for ``0 <= x < 2**62`` without overflow."""
    total = lo[size] + x
    if total >= _LIMB:
        total -= _LIMB
        hi[size] += 1
    lo[size] = total


def wide_totals(lo: np.ndarray, hi: np.ndarray) -> list[int]:
    """Python integers of two-word accumulators."""
    return [(int(h) << LIMB_BITS) + int(low) for low, h in zip(lo, hi, strict=True)]


class SizeParams(Protocol):
    """The parameters every counting run reads (``CountParams`` and its subclasses)."""

    k: int
    k_max: bool


class RegimeParams(SizeParams, Protocol):
    """The independent-set parameters (``IndependentParams``)."""

    method: str


@dataclass(frozen=True)
class Ops:
    """A backend's pieces of the runs.

    Attributes
    ----------
    array_module : callable
        ``array_module()`` gives ``numpy`` or ``cupy``: where the local counts' closing sums are
        done (a call, so that CuPy is only imported when the run needs it).
    clique_dag : callable
        ``clique_dag(graph) -> (dptr, dadj)``: the DAG its clique search runs on
        (:mod:`graphgpu.kernels.algorithms.common.dag`).
    dag_counts : callable
        ``dag_counts(dptr, dadj, kmax, lo_size, progress, what) -> {size: count}``: cliques of
        sizes 3..kmax of a DAG (sizes below ``lo_size`` may be pruned).
    connected_counts : callable
        ``connected_counts(graph, kmax, progress) -> {size: count}``: connected sets of sizes
        3..kmax.
    arc_triangles : callable
        ``arc_triangles(graph)``: int64 array (of ``xp``) of the triangles through each arc.
    four_cycles : callable
        ``four_cycles(ptr, adj, split) -> int``: 4-cycles of the degeneracy-relabelled graph.
    """

    array_module: Callable[[], Any]
    clique_dag: Callable[[Graph], tuple[Any, Any]]
    dag_counts: Callable[[Any, Any, int, int, ProgressFn, str], dict[int, int]]
    connected_counts: Callable[[Graph, int, ProgressFn], dict[int, int]]
    arc_triangles: Callable[[Graph], Any]
    four_cycles: Callable[[np.ndarray, np.ndarray, np.ndarray], int]


def summary(params: SizeParams, counts: dict[int, int], method: str, roots: int
            ) -> AlgorithmResult:
    """The result of a run (fields of ``CountSummary``) from its counts per size."""
    sizes = range(1, params.k + 1)
    return AlgorithmResult(summary={
        "k": params.k, "count": counts[params.k],
        "counts": [counts[s] for s in sizes] if params.k_max else None,
        "method": method, "roots": roots})


def run_cliques(graph: Graph, params: SizeParams, progress: ProgressFn, ops: Ops
                ) -> AlgorithmResult:
    """``count_cliques`` on a backend: order, then search the DAG."""
    progress(0.0, "cliques: ordering")
    dptr, dadj = ops.clique_dag(graph)
    lo_size = 3 if params.k_max else params.k
    counts = {1: graph.n, 2: graph.m}
    counts.update(ops.dag_counts(dptr, dadj, params.k, lo_size, progress, "cliques"))
    progress(1.0, "cliques: done")
    return summary(params, counts, "kclist", graph.n)


def run_connected(graph: Graph, params: SizeParams, progress: ProgressFn, ops: Ops
                  ) -> AlgorithmResult:
    """``count_connected_subgraphs`` on a backend."""
    counts = {1: graph.n, 2: graph.m}
    counts.update(ops.connected_counts(graph, params.k, progress))
    progress(1.0, "connected subgraphs: done")
    return summary(params, counts, "esu", graph.n)


def regime(graph: Graph, params: RegimeParams) -> str:
    """The independent-set regime a run uses; raises InvalidInput when none applies."""
    method = params.method
    if method == "auto":
        method = "local" if params.k <= LOCAL_MAX_K else "enumerate"
    if method == "local" and params.k > LOCAL_MAX_K:
        raise InvalidInput(f"method=local counts independent sets of size <= {LOCAL_MAX_K}",
                           field="k")
    if method == "enumerate" and graph.n > ENUMERATE_MAX_NODES:
        raise InvalidInput(
            f"independent sets of size > {LOCAL_MAX_K} are counted by enumeration, on graphs of "
            f"at most {ENUMERATE_MAX_NODES:,} nodes (this one has {graph.n:,})",
            field="k" if params.method == "auto" else "method")
    return method


def independent_from_local(n: int, m: int, local: dict[str, int], k: int) -> dict[int, int]:
    """Independent sets of sizes 1..k (k <= 4) from the local counts (family notes)."""
    out = {1: n, 2: math.comb(n, 2) - m}
    if k >= 3:
        out[3] = math.comb(n, 3) - m * (n - 2) + local["p2"] - local["triangles"]
    if k >= 4:
        # With n < 4 every term below but C(n, 4) = 0 has a zero factor; max() keeps comb legal.
        out[4] = (math.comb(n, 4) - m * math.comb(max(n - 2, 0), 2) + local["p2"] * (n - 3)
                  + (math.comb(m, 2) - local["p2"]) - local["triangles"] * (n - 3)
                  - local["s3"] - local["p4"] + local["c4"] + local["paw"] - local["diamond"]
                  + local["k4"])
    return {s: out[s] for s in range(1, k + 1)}


def local_counts(graph: Graph, k: int, ops: Ops, progress: ProgressFn) -> dict[str, int]:
    """The subgraph counts that :func:`independent_from_local` needs for size ``k``.

    Degree sums always; triangles (clique search) for k >= 3; for k = 4 also K4, 4-cycles,
    3-paths, paws and diamonds (per-arc triangle counts). Every count is computed where the
    backend's arrays live; the closing sums are exact int64 reductions.
    """
    xp = ops.array_module()
    indptr = xp.asarray(graph.indptr)
    deg = xp.diff(indptr)
    out = {"p2": int((deg * (deg - 1) // 2).sum()), "s3": int((deg * (deg - 1) * (deg - 2)
                                                               // 6).sum())}
    if k < 3:
        return out
    progress(0.1, "independent sets: triangles")
    ptr, adj, split, dptr, dadj = dag.oriented(graph)
    cliques = ops.dag_counts(dptr, dadj, min(k, 4), 3, progress, "independent sets")
    out["triangles"] = cliques[3]
    if k < 4:
        return out
    out["k4"] = cliques[4]
    progress(0.6, "independent sets: 4-cycles and triangles per edge")
    te = ops.arc_triangles(graph)
    out["c4"] = ops.four_cycles(ptr, adj, split)

    def row_sums(values: Any) -> Any:  # per vertex, the sum over its arcs (rows are contiguous)
        cum = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(values)])
        return cum[indptr[1:]] - cum[indptr[:-1]]

    # Sums over arcs count each edge twice.
    next_deg = row_sums(deg[xp.asarray(graph.indices)] - 1)
    out["p4"] = int(((deg - 1) * next_deg).sum()) // 2 - 3 * out["triangles"]
    out["diamond"] = int((te * (te - 1) // 2).sum()) // 2
    out["paw"] = int((row_sums(te) // 2 * (deg - 2)).sum())
    return out


def run_independent(graph: Graph, params: RegimeParams, progress: ProgressFn, ops: Ops
                    ) -> AlgorithmResult:
    """``count_independent_sets`` on a backend: local counts, or cliques of the complement."""
    method = regime(graph, params)
    if method == "local":
        counts = independent_from_local(graph.n, graph.m,
                                        local_counts(graph, params.k, ops, progress), params.k)
    else:
        progress(0.0, "independent sets: complement")
        dptr, dadj = dag.complement_lists(graph.indptr, graph.indices)
        counts = {1: graph.n, 2: int(dadj.shape[0])}
        lo_size = 3 if params.k_max else params.k
        counts.update(ops.dag_counts(dptr, dadj, params.k, lo_size, progress,
                                     "independent sets"))
    progress(1.0, "independent sets: done")
    return summary(params, counts, method, graph.n)

"""Acyclic orientations of an undirected graph (DAGs), for clique-like searches on either backend.

Orienting every edge from the lower to the higher vertex of a total order turns an undirected
graph into a DAG in which each clique is found exactly once, from its lowest vertex. Two orders:

* **degeneracy** (smallest-last, Batagelj-Zaversnik, O(m) but sequential): each vertex keeps at
  most degeneracy-many out-neighbours, the tightest bound. Host only (Numba):
  :func:`degeneracy_rank`, :func:`relabel`, :func:`out_lists`, bundled by :func:`oriented`.
* **degree** ``(degree, id)`` (a sort and scans, no sequential peeling): every out-degree stays
  below ``sqrt(2 m)``. Array passes written against an array module ``xp``, so the same code runs
  with NumPy on the host and with CuPy on the device: :func:`degree_dag`,
  :func:`device_degree_dag`, and :func:`bounded_degree_dag` (degree order unless an out-degree
  passes a limit, then the degeneracy order). On the device, :func:`device_degree_out_lists`
  gives the same out-lists without sorting them: in node ids and CSR order, for consumers that
  hash the lists (``dag.cu``).

A DAG is returned as CSR **out-lists** ``(dptr, dadj)``: int64 offsets of length ``n + 1`` and
int32 targets, vertices in *rank ids* (vertex ``r`` is the ``r``-th of the order), every row
sorted ascending and holding only ranks above its own. Every edge of the graph appears in exactly
one row (``dptr[-1] == m``). :func:`complement_lists` gives the same shape for the complement graph
oriented by id (vertex ids, not ranks).

CuPy is never imported at module load: :func:`device_degree_dag` asks
:func:`graphgpu.kernels.core.device.cupy` at call time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numba
import numpy as np

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.cuda import kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph

CUDA_SOURCE = Path(__file__).with_name("dag.cu")
#: The kernels of ``dag.cu``.
NAMES = ("out_lists_rows", "out_lists_long")
#: Rows longer than this are filtered by a warp per piece of this many entries (one warp would
#: hold rmat22's 163k-entry hub row for milliseconds).
LONG_ROW = 2048


@numba.njit(cache=True, nogil=True)
def bucket_peel(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Batagelj-Zaversnik bucket peeling, O(n + m): a smallest-last order and the core numbers.

    Nodes are kept in an array sorted by current degree with the start of every degree's bucket;
    taking nodes in order and moving each higher-degree neighbour one bucket down peels the graph
    (Batagelj & Zaversnik 2003).

    Parameters
    ----------
    indptr, indices : ndarray
        The graph's CSR (symmetric, no self-loops).

    Returns
    -------
    order : ndarray of int64
        The vertices in peeling (smallest-last) order.
    core : ndarray of int64
        The core number of each vertex (its degree when it was peeled).
    """
    n = indptr.shape[0] - 1
    deg = np.empty(n, np.int64)
    maxdeg = 0
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        maxdeg = max(maxdeg, deg[v])
    start = np.zeros(maxdeg + 2, np.int64)
    for v in range(n):
        start[deg[v] + 1] += 1
    for d in range(1, maxdeg + 2):
        start[d] += start[d - 1]
    order = np.empty(n, np.int64)
    pos = np.empty(n, np.int64)
    fill = start.copy()
    for v in range(n):
        pos[v] = fill[deg[v]]
        order[pos[v]] = v
        fill[deg[v]] += 1
    for i in range(n):
        v = order[i]
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            if deg[u] > deg[v]:
                # Move u to the front of its bucket, then shrink the bucket by one.
                du = deg[u]
                pu, pw = pos[u], start[du]
                w = order[pw]
                if u != w:
                    order[pu], order[pw] = w, u
                    pos[u], pos[w] = pw, pu
                start[du] += 1
                deg[u] -= 1
    return order, deg


@numba.njit(cache=True, nogil=True)
def degeneracy_rank(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Position of each vertex in a smallest-last (degeneracy) order (:func:`bucket_peel`).

    Orienting every edge from the lower to the higher rank leaves each vertex at most
    degeneracy-many out-neighbours, which bounds every clique search's local problem.

    Returns
    -------
    ndarray
        int32 rank of each vertex (a permutation of ``0..n-1``); ``indptr``, ``indices`` as for
        :func:`bucket_peel`.
    """
    order = bucket_peel(indptr, indices)[0]
    n = order.shape[0]
    rank = np.empty(n, np.int32)
    for i in range(n):
        rank[order[i]] = i
    return rank


@numba.njit(cache=True, nogil=True)
def relabel(indptr: np.ndarray, indices: np.ndarray, rank: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph in rank ids, rows sorted, and ``split[v]``: the start of ``v``'s higher ranks.

    Parameters
    ----------
    indptr, indices : ndarray
        The CSR of an undirected graph (each edge in both rows, no loops, no repeats).
    rank : ndarray
        Rank of each vertex (e.g. :func:`degeneracy_rank`).

    Returns
    -------
    ptr, adj, split : ndarray
        The relabelled CSR (int64 offsets, int32 sorted rows) and per rank the offset of its first
        higher neighbour: ``adj[split[v]:ptr[v + 1]]`` is the out-list of ``v`` in the DAG,
        ``adj[ptr[v]:split[v]]`` its in-list.
    """
    # Rows come out sorted without a sort: rank r is appended to its neighbours' rows in
    # ascending r, so when r's turn comes its own row holds exactly its lower ranks. (Sorting
    # each row compiled Numba's quicksort, 2.1 of this function's 2.3 s on a fresh cache.)
    n = indptr.shape[0] - 1
    ptr = np.zeros(n + 1, np.int64)
    vertex = np.empty(n, np.int64)
    for v in range(n):
        ptr[rank[v] + 1] = indptr[v + 1] - indptr[v]
        vertex[rank[v]] = v
    for v in range(n):
        ptr[v + 1] += ptr[v]
    adj = np.empty(indices.shape[0], np.int32)
    split = np.empty(n, np.int64)
    fill = ptr[:n].copy()
    for r in range(n):
        split[r] = fill[r]
        v = vertex[r]
        for j in range(indptr[v], indptr[v + 1]):
            w = rank[indices[j]]
            adj[fill[w]] = r
            fill[w] += 1
    return ptr, adj, split


@numba.njit(cache=True, nogil=True)
def out_lists(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """The DAG's out-lists (higher ranks) of a :func:`relabel` result as their own CSR.

    Returns
    -------
    dptr, dadj : ndarray
        Out-lists (int64 offsets, int32 sorted targets), see the module notes.
    """
    n = ptr.shape[0] - 1
    dptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        dptr[v + 1] = dptr[v] + ptr[v + 1] - split[v]
    dadj = np.empty(dptr[n], np.int32)
    for v in range(n):  # a loop, not slices: no compiled shape-mismatch message
        for i in range(ptr[v + 1] - split[v]):
            dadj[dptr[v] + i] = adj[split[v] + i]
    return dptr, dadj


def oriented(graph: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The degeneracy-ordered DAG of ``graph`` on the host, with its relabelled CSR.

    Parameters
    ----------
    graph : Graph

    Returns
    -------
    ptr, adj, split : ndarray
        The graph in degeneracy-rank ids (:func:`relabel`).
    dptr, dadj : ndarray
        The DAG's out-lists (:func:`out_lists`); ``oriented(graph)[3:]`` is the DAG alone.
    """
    rank = degeneracy_rank(graph.indptr, graph.indices)
    ptr, adj, split = relabel(graph.indptr, graph.indices, rank)
    dptr, dadj = out_lists(ptr, adj, split)
    return ptr, adj, split, dptr, dadj


def degree_rank(xp: Any, indptr: Any) -> Any:
    """Rank (int64 array of ``xp``) of every vertex in the ``(degree, id)`` order of
    :func:`degree_dag`."""
    n = indptr.shape[0] - 1
    deg = xp.diff(indptr)
    order = xp.argsort(deg * n + xp.arange(n, dtype=deg.dtype))
    rank = xp.empty(n, dtype=xp.int64)
    rank[order] = xp.arange(n, dtype=xp.int64)
    return rank


def degree_dag(xp: Any, indptr: Any, indices: Any) -> tuple[Any, Any]:
    """Out-lists of the graph in rank ids, ranked by ``(degree, id)``, edges oriented upwards.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``: where the arrays live and the work is done (array passes and one
        sort of the kept arcs).
    indptr, indices : array
        The graph's CSR, arrays of ``xp``.

    Returns
    -------
    dptr, dadj : array
        Out-lists (int64 offsets, int32 targets) sorted by rank, as the searches need (an entry's
        out-neighbours sit after it in its root's list); every out-degree is below
        ``sqrt(2 m)``: an out-neighbour has at least the degree of its tail.
    """
    n = indptr.shape[0] - 1
    rank = degree_rank(xp, indptr)
    src = xp.searchsorted(indptr, xp.arange(indices.shape[0]), side="right") - 1
    tail, head = rank[src], rank[indices]
    up = head > tail
    key = xp.sort((tail[up] << 32) | head[up])
    counts = reductions.bincount(key >> 32, n)
    dptr = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(counts, dtype=xp.int64)])
    return dptr, (key & 0xFFFFFFFF).astype(xp.int32)


def device_degree_dag(graph: Graph) -> tuple[Any, Any]:
    """:func:`degree_dag` of ``graph`` on the current GPU (its resident CSR, CuPy passes only).

    Returns
    -------
    dptr, dadj : cupy.ndarray
        Sorted out-lists (int64 offsets, int32 targets) of the acyclic orientation.
    """
    dg = on_device(graph)
    return degree_dag(cupy(), dg.indptr, dg.indices)


def device_degree_out_lists(graph: Graph) -> tuple[Any, Any]:
    """The out-lists of :func:`degree_dag` on the current GPU, unsorted and in node ids.

    Each row of the resident CSR keeps its neighbours above it in the ``(degree, id)`` order, in
    place: the out-list of ``v`` is ``out[indptr[v]:indptr[v] + outdeg[v]]`` (CSR order, or any
    order for rows over :data:`LONG_ROW`). No sort and no relabelling (:func:`degree_dag` sorts
    the arcs by rank): for consumers that only test membership (hash tables), and whose counts
    are then per node id already.

    Returns
    -------
    out : cupy.ndarray
        int32, as long as the CSR's indices (the entries past each out-list are unset).
    outdeg : cupy.ndarray
        int32 out-degree of every node.
    """
    cp = cupy()
    dg = on_device(graph)
    n, arcs = graph.n, int(dg.indices.shape[0])
    out = cp.empty(arcs, dtype=cp.int32)
    outdeg = cp.zeros(n, dtype=cp.int32)
    if arcs == 0:
        return out, outdeg
    deg = cp.diff(dg.indptr).astype(cp.int32)
    k = kernels(CUDA_SOURCE, NAMES)
    grid = (sm_count() * 16,)
    k["out_lists_rows"](grid, (256,), (dg.indptr, dg.indices, deg, cp.int32(n),
                                       cp.int64(LONG_ROW), out, outdeg))
    long_rows = cp.flatnonzero(deg > LONG_ROW)
    if long_rows.size:
        per_row = (deg[long_rows].astype(cp.int64) + LONG_ROW - 1) // LONG_ROW
        first = cp.cumsum(per_row) - per_row
        items = int(per_row.sum())
        row = cp.searchsorted(first, cp.arange(items), side="right") - 1
        k["out_lists_long"](grid, (256,), (dg.indptr, dg.indices, deg, long_rows[row],
                                           cp.arange(items) - first[row], cp.int32(items),
                                           cp.int64(LONG_ROW), out, outdeg))
    return out, outdeg


def bounded_degree_dag(graph: Graph, max_out_degree: int, xp: Any = None) -> tuple[Any, Any]:
    """The degree-ordered DAG, unless an out-degree would pass ``max_out_degree``.

    Then (and for an empty graph) the degeneracy-ordered DAG, which bounds out-degrees better.

    Parameters
    ----------
    graph : Graph
    max_out_degree : int
        Largest out-list the consumer takes (e.g. a kernel's bitmap width).
    xp : module, optional
        ``None``: build the degree order on the GPU (:func:`device_degree_dag`); ``numpy``: on
        the host (for estimates of what the GPU would do).

    Returns
    -------
    dptr, dadj : array
        Out-lists as in the module notes: device arrays for a degree DAG built on the GPU, host
        arrays otherwise (the degeneracy DAG is always built on the host).
    """
    if graph.n:
        if xp is None:
            dptr, dadj = device_degree_dag(graph)
        else:
            dptr, dadj = degree_dag(xp, graph.indptr, graph.indices)
        if int((dptr[1:] - dptr[:-1]).max()) <= max_out_degree:
            return dptr, dadj
    return oriented(graph)[3:]


@numba.njit(cache=True, nogil=True)
def complement_lists(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Out-lists of the complement oriented by id: the non-neighbours ``u > v`` of each ``v``.

    Parameters
    ----------
    indptr, indices : ndarray
        The graph's CSR, rows sorted.

    Returns
    -------
    dptr, dadj : ndarray
        Out-lists (int64 offsets, int32 sorted targets) in vertex ids.
    """
    n = indptr.shape[0] - 1
    dptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        higher = 0
        for j in range(indptr[v], indptr[v + 1]):
            higher += indices[j] > v
        dptr[v + 1] = dptr[v] + (n - 1 - v) - higher
    dadj = np.empty(dptr[n], np.int32)
    for v in range(n):
        at, j = dptr[v], indptr[v]
        for u in range(v + 1, n):
            while j < indptr[v + 1] and indices[j] < u:
                j += 1
            if j < indptr[v + 1] and indices[j] == u:
                continue
            dadj[at] = u
            at += 1
    return dptr, dadj

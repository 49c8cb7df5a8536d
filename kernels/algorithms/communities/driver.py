"""What a ``louvain`` or ``leiden`` job does on either backend: levels of synchronous local
moving (and refinement), aggregation, refinement on the way back down, the result (the family's
notes in ``__init__``).

:mod:`.cpu` and :mod:`.gpu` pass :func:`run` their :class:`Ops`, which give the same integers
(moves, labels) on either backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: Sweeps of local moving per level at most, and the stop rule (moves * divisor < nodes): the
#: divisor starts at FIRST_DIVISOR on the first level and grows tenfold a level to STOP_DIVISOR
#: (threshold scaling: the first level's last sweeps on R-MAT moved a few nodes each, at full
#: cost), which the refinement on the way down uses too.
MAX_SWEEPS = 20
STOP_DIVISOR = 1000
FIRST_DIVISOR = 100
#: Aggregation stops when a level keeps more than this share of its nodes (R-MAT graphs went on
#: for a dozen levels that merged a few hundred nodes each).
AGGREGATE_TOLERANCE = 0.95
#: Aggregation levels at most.
MAX_LEVELS = 64
#: Fixed-point weights: the total arc weight is scaled to at most 2**FIXED_BITS.
FIXED_BITS = 52


@dataclass(frozen=True)
class Ops:
    """A backend's operations on its arrays (``xp``): the graph's CSR there ``csr(graph)``, the
    row of each arc ``rows(indptr)`` (int32), the synchronous local moving ``local_move(...)``
    (in place), the graph of groups ``aggregate(indptr, indices, w, group, count)`` (the same
    arcs and weights on either backend, in any order within a row), the arcs inside and the arcs
    out of each community ``community_arcs(indptr, indices, comm, count)`` (int64), each
    community's modularity term from those ``modularity_terms(internal, degree, arcs,
    resolution)`` (float64, the same IEEE operations on either backend), the
    component labels inside communities ``components(indptr, indices, comm)`` and
    ``to_host(array)``."""

    xp: Any
    csr: Callable[[Graph], tuple[Any, Any]]
    rows: Callable[[Any], Any]
    aggregate: Callable[..., tuple[Any, Any, Any]]
    community_arcs: Callable[..., tuple[Any, Any]]
    modularity_terms: Callable[..., Any]
    local_move: Callable[..., int]
    components: Callable[..., Any]
    to_host: Callable[[Any], np.ndarray]


def modularity(graph: Graph, community: np.ndarray, resolution: float = 1.0) -> float:
    """Modularity of a partition as ``networkx.community.modularity`` (original float weights).

    Parameters
    ----------
    graph : Graph
    community : ndarray of int
        Community of each internal node, 0..k-1.
    resolution : float

    Returns
    -------
    float
        0 for a graph without edges.
    """
    w = np.ones(graph.indices.shape[0]) if graph.weights is None else graph.weights
    total = float(w.sum())
    if total == 0:
        return 0.0
    rows = np.repeat(np.arange(graph.n), graph.degrees())
    count = int(community.max()) + 1 if community.size else 0
    inside = community[rows] == community[graph.indices]
    internal = np.bincount(community[rows][inside], weights=w[inside], minlength=count)
    degree = np.bincount(community[rows], weights=w, minlength=count)
    return float(np.sum(internal / total - resolution * (degree / total) ** 2))


def _arc_counts(ops: Ops, indptr: Any, indices: Any, comm: Any, resolution: float) -> float:
    """:func:`modularity` of an unweighted graph, counted in exact integers on the backend (the
    same numbers as its float sums of ones, so both backends report the same value)."""
    arcs = int(indices.shape[0])
    internal, degree = ops.community_arcs(indptr, indices, comm, int(comm.max()) + 1)
    # The terms on the backend, summed on the host (one array copied, the same sum as before).
    return float(np.sum(ops.to_host(ops.modularity_terms(internal, degree, arcs, resolution))))


def _fixed_point(xp: Any, graph: Graph) -> Any:
    """Arc weights as int64 fixed-point numbers whose total is at most 2**FIXED_BITS."""
    if graph.weights is None:
        return xp.ones(graph.indices.shape[0], dtype=xp.int64)
    if graph.weights.size and graph.weights.min() < 0:
        raise InvalidInput("community detection needs non-negative weights", field="weights")
    total = float(graph.weights.sum())
    scale = 2.0 ** np.floor(np.log2(2.0 ** FIXED_BITS / total)) if total > 0 else 1.0
    return xp.asarray(np.rint(graph.weights * scale).astype(np.int64))


def _segment_sums(xp: Any, keys: Any, values: Any) -> tuple[Any, Any]:
    """Distinct ``keys`` (ascending) and the exact integer sum of ``values`` for each."""
    order = xp.argsort(keys)
    keys, values = keys[order], values[order]
    first = xp.ones(keys.shape[0], dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    starts = xp.flatnonzero(first)
    ends = xp.concatenate([starts[1:], xp.asarray([keys.shape[0]], dtype=starts.dtype)]) - 1
    running = xp.cumsum(values)
    before = xp.concatenate([xp.zeros(1, dtype=running.dtype), running[ends[:-1]]])
    return keys[starts], running[ends] - before


def _dense(xp: Any, labels: Any) -> tuple[Any, int]:
    """Labels (node ids of their level: 0 <= label < len(labels)) renumbered 0..k-1 in
    ascending order of label, and k: what ``unique(return_inverse=True)`` gives, by marking the
    labels present and a prefix sum instead of a sort (7 ms of a Leiden run on rmat20)."""
    n = int(labels.shape[0])
    present = xp.zeros(n, dtype=xp.int32)
    present[labels] = 1
    rank = xp.cumsum(present, dtype=xp.int32)
    return rank[labels] - 1, int(rank[-1]) if n else 0


def aggregate_sorted(xp: Any, rows: Any, indices: Any, w: Any, group: Any, count: int
                     ) -> tuple[Any, Any, Any]:
    """The graph of the groups by a sort of the arcs' group pairs: one arc per pair of groups
    (loops included, each row in ascending order), weights summed; ``rows`` the arcs' rows."""
    key = group[rows].astype(xp.int64) * count + group[indices]
    pairs, weight = _segment_sums(xp, key, w)
    new_rows = pairs // count
    new_indptr = xp.zeros(count + 1, dtype=xp.int64)
    new_indptr[1:] = xp.cumsum(reductions.bincount(new_rows, count))
    return new_indptr, (pairs % count).astype(xp.int32), weight


def _row_sums(xp: Any, indptr: Any, w: Any) -> Any:
    running = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(w)])
    return running[indptr[1:]] - running[indptr[:-1]]


def detect(ops: Ops, graph: Graph, params: Any, leiden: bool, progress: ProgressFn
           ) -> tuple[np.ndarray, int, float]:
    """The driver shared by both backends: levels of moving (and refinement), aggregation.

    Parameters
    ----------
    ops : Ops
        The backend's operations (same results on either).
    graph : Graph
    params : CommunityParams
    leiden : bool
    progress : ProgressFn

    Returns
    -------
    community : ndarray of int64
        Community of each internal node, numbered by smallest member.
    levels : int
    modularity : float
        Of the partition, as :func:`modularity` computes it.
    """
    xp = ops.xp
    w = _fixed_point(xp, graph)
    indptr, indices = top = ops.csr(graph)
    n = graph.n
    k = _row_sums(xp, indptr, w)
    m2 = float(int(k.sum()))
    comm = xp.arange(n, dtype=xp.int32)
    levels = 0
    if m2 == 0:
        return ops.to_host(comm).astype(np.int64), 0, 0.0
    salt = (params.seed * 0x9E3779B9) & 0xFFFFFFFF
    finer: list[tuple[Any, ...]] = []  # each aggregated level's graph, classes and grouping
    for level in range(MAX_LEVELS):
        progress(min(0.8, 0.15 * level), f"{'leiden' if leiden else 'louvain'}: level {level}, "
                                          f"{n:,} nodes")
        divisor = min(STOP_DIVISOR, FIRST_DIVISOR * 10 ** level)
        _move(xp, ops, (indptr, indices, w, k), comm, params, m2, salt, divisor)
        if leiden:
            refined = xp.arange(n, dtype=xp.int32)
            ops.local_move(indptr, indices, w, refined, k, k.copy(), xp.ones(n, dtype=xp.int32),
                           comm, params.resolution, m2, salt, MAX_SWEEPS, divisor)
            group, count = _dense(xp, refined)
        else:
            group, count = _dense(xp, comm)
        if count >= AGGREGATE_TOLERANCE * n:
            break
        finer.append((indptr, indices, w, k, group))
        parent, _ = _dense(xp, comm)
        indptr, indices, w = ops.aggregate(indptr, indices, w, group, count)
        k = _row_sums(xp, indptr, w)
        if leiden:  # aggregate nodes start in their community
            comm = xp.empty(count, dtype=xp.int32)
            comm[group] = parent
        else:
            comm = xp.arange(count, dtype=xp.int32)
        n = count
        levels += 1
    for level in reversed(finer):  # refine the partition on the way back down
        progress(0.9, f"communities: refining, {int(level[0].shape[0]) - 1:,} nodes")
        comm = comm[level[-1]]
        _move(xp, ops, level[:-1], comm, params, m2, salt, STOP_DIVISOR)
    if leiden:
        comm = ops.components(*top, comm)
    comm = _number(xp, comm)
    if graph.weights is None:
        quality = _arc_counts(ops, *top, comm, params.resolution)
        return ops.to_host(comm), levels, quality
    community = ops.to_host(comm)
    return community, levels, modularity(graph, community, params.resolution)


def _move(xp: Any, ops: Ops, level: tuple[Any, ...], comm: Any, params: Any, m2: float,
          salt: int, divisor: int) -> None:
    """Local moving of one level's nodes from the partition ``comm`` (in place)."""
    indptr, indices, w, k = level
    n = int(indptr.shape[0]) - 1
    sigma = _community_totals(xp, comm, k, n)
    size = reductions.bincount(comm, n).astype(xp.int32)
    ops.local_move(indptr, indices, w, comm, k, sigma, size, None, params.resolution, m2, salt,
                   MAX_SWEEPS, divisor)


def _community_totals(xp: Any, comm: Any, k: Any, n: int) -> Any:
    """Each community's total of ``k`` (int64, ``n`` communities). Every partial sum is an
    integer of at most 2**FIXED_BITS (the total weight), so bincount's float64 sums are exact in
    any order: no sort of the labels (9 ms of a Leiden run on rmat20)."""
    return reductions.bincount(comm, n, k).astype(xp.int64)


def _number(xp: Any, labels: Any) -> Any:
    """Communities renumbered 0..k-1 in order of their smallest member (int64)."""
    n = int(labels.shape[0])
    order = xp.argsort(labels.astype(xp.int64) * n + xp.arange(n))  # by (label, node)
    ranked = labels[order]
    first = xp.ones(n, dtype=bool)
    first[1:] = ranked[1:] != ranked[:-1]
    smallest = order[first]  # each label's smallest member, in label order
    rank = xp.zeros(int(labels.max()) + 1, dtype=xp.int64)
    rank[ranked[first]] = xp.argsort(xp.argsort(smallest))
    return rank[labels]


def run(ops: Ops, graph: Graph, params: Any, leiden: bool, progress: ProgressFn
        ) -> AlgorithmResult:
    """A ``louvain`` (or, with ``leiden``, ``leiden``) job (``params``: ``CommunityParams``) with
    a backend's operations: ``community`` per node, summary per ``CommunitySummary``.

    Raises
    ------
    InvalidInput
        A negative weight.
    """
    community, levels, quality = detect(ops, graph, params, leiden, progress)
    summary = {"modularity": quality,
               "communities": int(community.max()) + 1 if community.size else 0,
               "levels": levels, "resolution": params.resolution}
    progress(1.0, "communities: done")
    return AlgorithmResult(summary=summary, node_values={"community": community})

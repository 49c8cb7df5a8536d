"""Pendant pruning (Phase I) and extension of results to the pruned vertices (Phase III).

After the paper's scheme (graph pruning for BFS, CC and APSP): vertices of degree 1 are removed
round by round; removing one may leave its neighbour with degree 1, which then goes in the next
round, so whole pendant trees and chains disappear. The algorithm runs on the remaining *core*
(Phase II), and every pruned vertex then takes its value from the one neighbour it had when it was
removed, latest round first (Phase III): a pruned vertex's only way out of its pendant tree is
that neighbour.

Rules, identical on the CPU (Numba) and the GPU (CuPy ``RawKernel``), so both give the same
:class:`PruneRecord`:

* A round removes, at once, every vertex that has exactly one remaining neighbour, is not pinned
  and is not the smaller end of an edge whose two ends both qualify: of an isolated edge ``u - v``
  only the larger end goes, so every component keeps at least one vertex.
* Degree-0 vertices are never removed. Isolated input nodes are already trivial for Phase II, and
  a vertex left isolated by pruning is the representative of its (tree) component; removing it
  would leave its pruned vertices no neighbour to take a value from.
* Pinned vertices (BFS sources) are never removed, so a source always lies in the core and no
  pruned vertex's subtree holds a source: then ``level[v] = level[w] + 1`` holds exactly.
* At most :data:`MAX_ROUNDS` rounds: a long path would otherwise cost one round (and on the GPU
  one host sync) per two vertices. Stopping early is always correct, it only prunes less.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numba
import numpy as np
from pydantic import Field

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.cuda import grid_for, kernels
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.graph import Graph

PruneMode = Literal["auto", "on", "off"]
#: Result-summary fields of the families that prune (``pruned: PrunedCount = None``), filled by
#: :func:`summary_fields`.
PrunedCount = Annotated[int | None,
                        Field(description="Vertices pruned (absent when prune is off).")]
PruneRounds = Annotated[int | None, Field(description="Pruning rounds (absent when off).")]

#: ``auto`` prunes when at least this share of the nodes has degree 1. Pruning costs Phase I plus
#: a copy of the core's CSR and Phase III; on an H100 (bench/results/traversal.md, 2026-11-22)
#: that cost 3-10x the unpruned BFS/CC at every share measured (10-27% pruned), so ``auto``
#: waits for graphs that are mostly pendant trees (stars, forests), where the core is tiny.
AUTO_MIN_PENDANT_SHARE = 0.5
#: Rounds of Phase I at most (see the module notes).
MAX_ROUNDS = 64
THREADS = 256
CUDA_SOURCE = Path(__file__).with_name("pruning.cu")


@dataclass(frozen=True)
class PruneRecord:
    """What Phase I removed, ordered by (round, vertex).

    Attributes
    ----------
    n : int
        Nodes of the whole graph.
    vertex : ndarray of int32
        Pruned vertices.
    round : ndarray of int32
        Round (1-based) in which each was removed.
    neighbour : ndarray of int32
        Its one remaining neighbour at removal (removed in a later round, or in the core).
    rounds : int
        Rounds that removed something.
    """

    n: int
    vertex: np.ndarray
    round: np.ndarray
    neighbour: np.ndarray
    rounds: int

    @property
    def pruned(self) -> int:
        return int(self.vertex.shape[0])

    def round_bounds(self) -> np.ndarray:
        """Offsets of each round's slice: round r is ``[bounds[r - 1], bounds[r])``."""
        return np.searchsorted(self.round, np.arange(1, self.rounds + 2), side="left")

    def summary(self) -> dict[str, int]:
        return {"pruned": self.pruned, "prune_rounds": self.rounds}


def pendant_share(graph: Graph) -> float:
    """Share of the nodes that have degree 1 (what ``auto`` looks at)."""
    return float(np.count_nonzero(graph.degrees() == 1)) / max(graph.n, 1)


def decide(graph: Graph, mode: PruneMode) -> bool:
    """Whether to prune: ``on``/``off`` as given; ``auto`` when the pendant share is at least
    :data:`AUTO_MIN_PENDANT_SHARE` (measured on the input degrees, one pass over ``indptr``)."""
    if mode == "auto":
        return pendant_share(graph) >= AUTO_MIN_PENDANT_SHARE
    return mode == "on"


# ------------------------------------------------------------------------------------------------
# Phase I on the CPU
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _prune_numba(indptr: np.ndarray, indices: np.ndarray, pinned: np.ndarray, max_rounds: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    n = indptr.shape[0] - 1
    degree = indptr[1:] - indptr[:-1]
    alive = np.ones(n, np.bool_)
    # The record (vertex, round, neighbour), filled in removal order.
    vertex, rnd, neighbour = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int32)
    # This round's candidates in ascending order, then room for the next round's.
    first = np.flatnonzero((degree == 1) & ~pinned).astype(np.int32)
    count = first.shape[0]
    cand = np.concatenate((first, np.empty(n - count, np.int32)))
    nbr = np.empty(n, np.int32)
    take = np.empty(n, np.bool_)
    total = 0
    rounds = 0
    while count > 0 and rounds < max_rounds:
        cand[:count].sort()
        # Decide the whole round on the degrees at its start, then apply.
        for k in range(count):
            v = cand[k]
            if degree[v] != 1:  # stale: a second neighbour went in the round that queued it
                take[k] = False
                continue
            w = -1
            for j in range(indptr[v], indptr[v + 1]):
                if alive[indices[j]]:
                    w = indices[j]
                    break
            nbr[k] = w
            both = degree[w] == 1 and not pinned[w]
            take[k] = not both or w < v
        rounds += 1
        added = 0
        for k in range(count):
            if not take[k]:
                continue
            v, w = cand[k], nbr[k]
            alive[v] = False
            vertex[total] = v
            rnd[total] = rounds
            neighbour[total] = w
            total += 1
            degree[w] -= 1
            if degree[w] == 1 and not pinned[w]:
                cand[count + added] = w  # past this round's entries: read next round
                added += 1
        for k in range(added):  # downwards, never past what it reads
            cand[k] = cand[count + k]
        count = added
    return vertex[:total].copy(), rnd[:total].copy(), neighbour[:total].copy(), rounds


def _pinned_mask(n: int, pinned: np.ndarray | None) -> np.ndarray:
    mask = np.zeros(n, np.bool_)
    if pinned is not None:
        mask[np.asarray(pinned, dtype=np.int64)] = True
    return mask


def prune_pendants(graph: Graph, pinned: np.ndarray | None = None,
                   max_rounds: int = MAX_ROUNDS) -> PruneRecord:
    """Phase I on the CPU: remove pendant vertices round by round.

    Parameters
    ----------
    graph : Graph
    pinned : ndarray of int, optional
        Internal ids that must stay (BFS sources).
    max_rounds : int
        Stop after this many rounds.

    Returns
    -------
    PruneRecord
        Ordered by (round, vertex); equal to :func:`prune_pendants_gpu`'s.
    """
    vertex, rnd, neighbour, rounds = _prune_numba(
        graph.indptr, graph.indices, _pinned_mask(graph.n, pinned), max_rounds)
    return PruneRecord(graph.n, vertex, rnd, neighbour, int(rounds))


# ------------------------------------------------------------------------------------------------
# Phase I on the GPU
# ------------------------------------------------------------------------------------------------


def prune_pendants_device(dg: DeviceGraph, pinned: Any | None = None,
                          max_rounds: int = MAX_ROUNDS) -> tuple[Any, Any, Any, int]:
    """Phase I on the GPU; returns device ``(vertex, round, neighbour)`` arrays and the rounds.

    One decide and one apply launch per round, and one host read of the next round's size.
    """
    cp = cupy()
    n = dg.n
    i32 = np.int32
    degree = cp.diff(dg.indptr).astype(cp.int32)
    pin = cp.zeros(n, dtype=cp.int8)
    if pinned is not None:
        pin[cp.asarray(pinned, dtype=cp.int64)] = 1
    alive = cp.ones(n, dtype=cp.int8)
    cand = cp.flatnonzero((degree == 1) & (pin == 0)).astype(cp.int32)
    nxt = cp.empty(n, dtype=cp.int32)
    nbr = cp.empty(n, dtype=cp.int32)
    take = cp.empty(n, dtype=cp.int8)
    vertex = cp.empty(n, dtype=cp.int32)
    rnd = cp.empty(n, dtype=cp.int32)
    neighbour = cp.empty(n, dtype=cp.int32)
    counters = cp.zeros(2, dtype=cp.int32)  # [0] next round's candidates, [1] removed so far
    decide_k, apply_k = kernels(CUDA_SOURCE, ("prune_decide", "prune_apply")).values()
    count, rounds = int(cand.shape[0]), 0
    cand = cp.concatenate([cand, cp.empty(n - count, dtype=cp.int32)])
    while count > 0 and rounds < max_rounds:
        rounds += 1
        grid = grid_for(count, THREADS)
        decide_k(grid, (THREADS,), (dg.indptr, dg.indices, cand, i32(count), alive, degree, pin,
                                    nbr, take))
        counters[0] = 0
        apply_k(grid, (THREADS,), (cand, i32(count), nbr, take, alive, degree, pin, nxt, counters,
                                   vertex, rnd, neighbour, i32(rounds)))
        count = int(counters[0].get())
        cand, nxt = nxt, cand
    total = int(counters[1].get())
    vertex, rnd, neighbour = vertex[:total], rnd[:total], neighbour[:total]
    order = cp.lexsort(cp.stack([vertex, rnd]))  # canonical (round, vertex) order, as the CPU's
    return vertex[order], rnd[order], neighbour[order], rounds


def prune_pendants_gpu(graph: Graph, pinned: np.ndarray | None = None,
                       max_rounds: int = MAX_ROUNDS) -> PruneRecord:
    """Phase I on the GPU, copied back; same record as :func:`prune_pendants`."""
    vertex, rnd, neighbour, rounds = prune_pendants_device(on_device(graph), pinned, max_rounds)
    return PruneRecord(graph.n, vertex.get(), rnd.get(), neighbour.get(), rounds)


# ------------------------------------------------------------------------------------------------
# Phase II: the core graph; Phase III: extension (NumPy or CuPy, same code)
# ------------------------------------------------------------------------------------------------


def core_csr(xp: Any, indptr: Any, indices: Any, removed: Any) -> tuple[Any, Any, Any]:
    """CSR of the subgraph induced by the vertices not in ``removed``.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``; the arrays live there.
    indptr, indices : array
        The whole graph's CSR.
    removed : array of int
        Pruned vertex ids.

    Returns
    -------
    core_ids : array of int32
        Whole-graph id of each core vertex, ascending: ranks keep id order, so "smallest
        neighbour" and "smallest member" rules mean the same on the core.
    core_indptr : array of int64
    core_indices : array of int32
        Rows stay sorted.
    """
    n = indptr.shape[0] - 1
    alive = xp.ones(n, dtype=xp.bool_)
    alive[removed] = False
    core_ids = xp.flatnonzero(alive).astype(xp.int32)
    rank = xp.cumsum(alive, dtype=xp.int32) - 1
    arcs = int(indices.shape[0])
    row = xp.searchsorted(indptr, xp.arange(arcs, dtype=indptr.dtype), side="right") - 1
    keep = alive[row] & alive[indices]
    counts = reductions.bincount(row[keep], n)[alive]
    core_indptr = xp.zeros(core_ids.shape[0] + 1, dtype=xp.int64)
    xp.cumsum(counts, out=core_indptr[1:])
    return core_ids, core_indptr, rank[indices[keep]].astype(xp.int32)


def extend_levels(record: PruneRecord | tuple[Any, Any, Any], bounds: np.ndarray,
                  level: Any, parent: Any, xp: Any = np) -> None:
    """Phase III for BFS, in place: a pruned vertex is one level below its removal neighbour,
    which is its parent (its other neighbours are its own pruned children, a level further down);
    unreachable if the neighbour is. Rounds are done latest first, each as one vector step.
    """
    vertex, _, neighbour = _arrays(record)
    for r in range(len(bounds) - 2, -1, -1):
        v, w = vertex[bounds[r]:bounds[r + 1]], neighbour[bounds[r]:bounds[r + 1]]
        up = level[w]
        reached = up >= 0
        level[v] = xp.where(reached, up + 1, -1)
        parent[v] = xp.where(reached, w, -1)


def extend_labels(record: PruneRecord | tuple[Any, Any, Any], bounds: np.ndarray, label: Any
                  ) -> None:
    """Phase III for components, in place: a pruned vertex joins its removal neighbour's."""
    vertex, _, neighbour = _arrays(record)
    for r in range(len(bounds) - 2, -1, -1):
        sl = slice(int(bounds[r]), int(bounds[r + 1]))
        label[vertex[sl]] = label[neighbour[sl]]


def _arrays(record: PruneRecord | tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
    if isinstance(record, PruneRecord):
        return record.vertex, record.round, record.neighbour
    return record


@dataclass(frozen=True)
class Pruned:
    """Phase I's outcome in one array module (NumPy or CuPy): the record and the core's CSR.

    ``bounds`` (host) delimits each round's slice of the record, as
    :meth:`PruneRecord.round_bounds`.
    """

    vertex: Any
    neighbour: Any
    rounds: int
    bounds: np.ndarray
    core_ids: Any
    core_indptr: Any
    core_indices: Any

    @property
    def pruned(self) -> int:
        return int(self.vertex.shape[0])

    def summary(self) -> dict[str, int]:
        return {"pruned": self.pruned, "prune_rounds": self.rounds}


def summary_fields(mode: PruneMode, pruned: Pruned | None) -> dict[str, int]:
    """A pruning family's ``pruned`` and ``prune_rounds`` summary fields: none when ``mode`` is
    off, zeros when ``auto`` decided not to prune."""
    if mode == "off":
        return {}
    return pruned.summary() if pruned else {"pruned": 0, "prune_rounds": 0}


def prune(graph: Graph, xp: Any, pinned: np.ndarray | None = None) -> Pruned:
    """Phase I and the core's CSR, on the CPU (``xp`` is ``numpy``) or the GPU (``cupy``)."""
    if xp is np:
        record = prune_pendants(graph, pinned)
        vertex, rnd, neighbour, rounds = (record.vertex, record.round, record.neighbour,
                                          record.rounds)
        indptr, indices = graph.indptr, graph.indices
    else:
        dg = on_device(graph)
        vertex, rnd, neighbour, rounds = prune_pendants_device(dg, pinned)
        indptr, indices = dg.indptr, dg.indices
    bounds = xp.searchsorted(rnd, xp.arange(1, rounds + 2, dtype=rnd.dtype), side="left")
    core_ids, core_indptr, core_indices = core_csr(xp, indptr, indices, vertex)
    return Pruned(vertex, neighbour, rounds, np.asarray(bounds.tolist(), dtype=np.int64),
                  core_ids, core_indptr, core_indices)


def bfs_pruned(xp: Any, pruned: Pruned, n: int, sources: Any, solve: Any) -> tuple[Any, Any]:
    """Phase II on the core, then Phase III: whole-graph ``(level, parent)``.

    ``solve(indptr, indices, n, sources)`` is the backend's BFS on a CSR (core ids); the
    sources must be pinned (in the core).
    """
    core_ids = pruned.core_ids
    core_level, core_parent = solve(pruned.core_indptr, pruned.core_indices,
                                    int(core_ids.shape[0]), xp.searchsorted(core_ids, sources))
    level = xp.full(n, -1, dtype=xp.int32)
    level[core_ids] = core_level
    parent = xp.full(n, -1, dtype=xp.int64)
    parent[core_ids] = xp.where(core_parent >= 0, core_ids[xp.maximum(core_parent, 0)], -1)
    extend_levels((pruned.vertex, None, pruned.neighbour), pruned.bounds, level, parent, xp)
    return level, parent


def components_pruned(xp: Any, pruned: Pruned, n: int, solve: Any) -> tuple[Any, Any]:
    """Phase II on the core, then Phase III: whole-graph ``(label, sizes)``.

    ``solve(indptr, indices, n)`` labels the core's components. A pruned vertex can be smaller
    than every core member of its component, so the labels are renumbered by smallest member
    of the whole graph afterwards.
    """
    core_ids = pruned.core_ids
    core_label, _ = solve(pruned.core_indptr, pruned.core_indices, int(core_ids.shape[0]))
    label = xp.empty(n, dtype=xp.int32)
    label[core_ids] = core_label
    extend_labels((pruned.vertex, None, pruned.neighbour), pruned.bounds, label)
    _, first, inverse, counts = xp.unique(label, return_index=True, return_inverse=True,
                                          return_counts=True)
    order = xp.argsort(first)
    rank = xp.empty(order.shape[0], dtype=xp.int32)
    rank[order] = xp.arange(order.shape[0], dtype=xp.int32)
    return rank[inverse.ravel()], counts[order].astype(xp.int64)

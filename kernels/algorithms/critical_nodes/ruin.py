"""Ruin and regrow (Numba): the first descent from a greedy start whose giant component is large.

A round deletes d extra nodes of the large components (those of at least 1 / ``RUIN_POOL``
of the largest's size; each node drawn with probability in proportion to its degree, d
random in ``[lo, hi]``), then returns the cheapest nodes until k are deleted again
(:func:`~graphgpu.kernels.algorithms.critical_nodes.greedy.regrow`, CND*'s near-linear greedy
growth); the round's set is kept when it leaves fewer pairs. The deletion needs no
articulation walk (the two-phase exchange of the fast CNP heuristics, d nodes at a time),
so a round costs two labellings of the graph and a regrowth of d nodes: on ca-CondMat
(k = 2,313) about 2 ms, where one swap-search block move costs about 1.3 ms for ~10
exchanges. From a CND* set of 39.5M pairs the rounds alone reach 2.3M / 2.5M (seeds 0 / 1)
in 4 s on the VM, where the swap chain from the same start had reached 8-10M in 5 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.common.bfs import bfs_queue
from graphgpu.kernels.algorithms.critical_nodes.greedy import GOLDEN, mix, pairs, regrow
from graphgpu.kernels.algorithms.critical_nodes.tuning import (
    RUIN_DIVISOR,
    RUIN_NODES,
    RUIN_POOL,
    RUIN_STALL,
)
from graphgpu.kernels.core.graph import Graph

#: ctl slots: best objective, random state, rounds since the last better set.
_BEST, _RNG, _STALL = range(3)


@numba.njit(cache=True, nogil=True)
def label_kept(indptr, indices, comp, sizes, queue) -> np.int64:
    """Components of the kept nodes (``comp[v] != 0`` on entry): ``comp[v] = u + 1`` for the
    first member u of v's component, ``sizes`` by that id; returns the pairs left."""
    n = indptr.shape[0] - 1
    for v in range(n):
        if comp[v] != 0:
            comp[v] = -1
    sizes[:] = 0
    total = np.int64(0)
    for s in range(n):
        if comp[s] != -1:
            continue
        c = s + 1
        comp[s] = c
        queue[0] = s
        tail = bfs_queue(indptr, indices, comp, queue, 0, 1, 0)  # deleted nodes (0) block it
        sizes[c] = tail
        total += pairs(np.int64(tail))
    return total


@numba.njit(cache=True, nogil=True)
def large_pool(indptr, comp, sizes, pool, cum) -> int:
    """The members of the large components (those of at least 1 / ``RUIN_POOL`` of the
    largest's size; ``comp`` and ``sizes`` as :func:`label_kept` leaves them) in ``pool`` and
    their cumulative degrees in ``cum``, from which a round draws its ruin; returns how many."""
    n = indptr.shape[0] - 1
    biggest = np.int64(0)
    for c in range(n + 1):
        biggest = max(biggest, sizes[c])
    m, weight = 0, np.int64(0)
    for v in range(n):
        c = comp[v]
        if c > 0 and RUIN_POOL * sizes[c] >= biggest:
            weight += indptr[v + 1] - indptr[v]
            pool[m] = v
            cum[m] = weight
            m += 1
    return m


def label_set(graph: Graph, nodes: np.ndarray, comp: np.ndarray, sizes: np.ndarray,
              queue: np.ndarray) -> int:
    """Components of the kept nodes (``comp``, ``sizes`` as :func:`label_kept` leaves them)
    when ``nodes`` are deleted; returns the pairs left."""
    comp[:] = 1
    comp[nodes] = 0
    return int(label_kept(graph.indptr, graph.indices, comp, sizes, queue))


@numba.njit(cache=True, nogil=True)
def _rand_below(ctl, bound) -> np.int64:
    ctl[_RNG] = np.int64(np.uint64(ctl[_RNG]) + GOLDEN)
    return np.int64(mix(np.uint64(ctl[_RNG])) % np.uint64(bound))


@numba.njit(inline="always")
def _copy(dst, src) -> None:
    # A loop, not ``dst[:] = src``: Numba compiles a slice copy's shape-mismatch error (string
    # formatting, 3.4 s of a process on a fresh cache, the GPU host 2026-11-27) into its caller.
    for i in range(src.shape[0]):
        dst[i] = src[i]


@numba.njit(cache=True, nogil=True)
def ruin_rounds(indptr, indices, k, rounds, stall, lo, hi, ctl, best_comp, best_sizes, comp,
                sizes, queue, pool, cum) -> int:
    """Up to ``rounds`` rounds from the set in ``best_comp`` (0: deleted; ids and sizes as
    :func:`label_kept` leaves them), each kept when better; stops early once ``stall`` rounds
    in a row bring nothing better. Returns the rounds run."""
    done = 0
    while done < rounds and ctl[_STALL] < stall:
        done += 1
        _copy(comp, best_comp)
        _copy(sizes, best_sizes)
        m = large_pool(indptr, comp, sizes, pool, cum)
        weight = cum[m - 1] if m > 0 else 0
        if weight == 0:
            return done
        want = lo + _rand_below(ctl, hi - lo + 1)
        taken = 0
        for _ in range(4 * want):
            if taken == want:
                break
            v = pool[np.searchsorted(cum[:m], _rand_below(ctl, weight), side="right")]
            if comp[v] != 0:
                comp[v] = 0
                taken += 1
        label_kept(indptr, indices, comp, sizes, queue)
        objective = regrow(indptr, indices, k, comp, sizes)
        if objective < ctl[_BEST]:
            ctl[_BEST] = objective
            ctl[_STALL] = 0
            _copy(best_comp, comp)
            _copy(best_sizes, sizes)
        else:
            ctl[_STALL] += 1
    return done


def ruin_span(k: int) -> tuple[int, int]:
    """Fewest and most extra nodes a round deletes: k / ``RUIN_DIVISOR`` at most (2 at least),
    a quarter of that at least."""
    hi = max(2, k // RUIN_DIVISOR)
    return max(1, hi // 4), hi


class RuinRegrow:
    """Ruin-and-regrow rounds on one graph (arrays kept between calls).

    Parameters
    ----------
    graph : Graph
    k : int
        Nodes to delete.
    seed : int
        Seed of the random draws.
    """

    def __init__(self, graph: Graph, k: int, seed: int) -> None:
        n = graph.n
        self.graph, self.k = graph, k
        self.lo, self.hi = ruin_span(k)
        self.ctl = np.zeros(3, np.int64)
        self.ctl[_RNG] = np.int64(np.uint64(mix(np.uint64(seed) ^ GOLDEN)) >> np.uint64(1))
        self.arrays = [np.zeros(n, np.int64), np.zeros(n + 1, np.int64), np.zeros(n, np.int64),
                       np.zeros(n + 1, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
                       np.zeros(n, np.int64)]
        self.rounds = 0
        self.tick: Callable[[], Any] = lambda: None  # called between batches (cancel checks)
        #: Called with each better set between batches (the memetic driver's offer).
        self.report: Callable[[int, np.ndarray], Any] | None = None

    def largest(self, nodes: np.ndarray) -> int:
        """Size of the largest component left when ``nodes`` are deleted."""
        comp, sizes, queue = self.arrays[0], self.arrays[1], self.arrays[4]
        label_set(self.graph, nodes, comp, sizes, queue)
        return int(sizes.max())

    def __call__(self, nodes: np.ndarray, stall: int, deadline: float) -> tuple[int, np.ndarray]:
        """Rounds from the k nodes ``nodes`` until ``stall`` in a row bring nothing better or
        the ``deadline`` passes; returns (objective, k nodes), the start when nothing better."""
        g = self.graph
        best_comp, best_sizes, comp, sizes, queue, pool, cum = self.arrays
        self.ctl[_BEST] = label_set(g, nodes, best_comp, best_sizes, queue)
        self.ctl[_STALL] = 0
        batch = 1
        while self.ctl[_STALL] < stall and time.perf_counter() < deadline:
            self.tick()
            tick = time.perf_counter()
            before = self.ctl[_BEST]
            self.rounds += ruin_rounds(g.indptr, g.indices, self.k, batch, stall, self.lo,
                                       self.hi, self.ctl, best_comp, best_sizes, comp, sizes,
                                       queue, pool, cum)
            if self.report is not None and self.ctl[_BEST] < before:
                self.report(int(self.ctl[_BEST]), np.flatnonzero(best_comp == 0))
            # Batches of ~10 ms: the deadline and cancel checks stay prompt.
            spent = max(time.perf_counter() - tick, 1e-6)
            batch = max(1, min(batch * 2, int(batch * 0.01 / spent)))
        return int(self.ctl[_BEST]), np.flatnonzero(best_comp == 0)


class FirstDescent:
    """The memetic improvers' first descent on the host (each call its own random stream; the
    GPU's runs chains of rounds, :class:`.gpu_ruin.GpuDescent`, where they fit in a block):
    ruin-and-regrow rounds on the host until ``RUIN_STALL`` bring nothing better or the
    deadline passes, where the largest component a set leaves has ``RUIN_NODES`` nodes or more.
    On a giant a swap move walks thousands of nodes to exchange a few (on the GPU, one warp's
    dependent loads: ~100 ms a move on ca-CondMat), and on a mid-sized one (ca-HepTh) the
    rounds' larger steps find sets the chain alone does not. ``ran_on`` is ``"cpu"`` once
    rounds ran (the summary's ``descent_on``)."""

    def __init__(self, graph: Graph, k: int, seed: int) -> None:
        self.graph, self.k, self.seed = graph, k, seed
        self.calls = 0
        self.ran_on: str | None = None

    def __call__(self, nodes: np.ndarray, deadline: float, tick: Callable[[], Any],
                 report: Callable[[int, np.ndarray], Any] | None) -> np.ndarray:
        """``nodes`` after the rounds, or as they are where no component is large."""
        ruin = RuinRegrow(self.graph, self.k, self.seed + 7919 * self.calls)
        self.calls += 1
        if ruin.largest(nodes) < RUIN_NODES:
            return nodes
        ruin.tick, ruin.report = tick, report
        self.ran_on = "cpu"
        return ruin(nodes, RUIN_STALL, deadline)[1]

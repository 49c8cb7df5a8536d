"""CPU backend of the ``mis`` family: a Numba engine, twin of the CUDA kernels in ``mis.cu``.

Each function here makes the same decisions as its CUDA twin: a round decides from the state at
its start (so the order in which vertices are visited never matters), priorities come from the same
32-bit hash, ties are broken the same way. The two backends therefore return the same set for the
same parameters (``iterated`` aside: how many iterations fit in the time limit differs).

State is one tag per vertex (see :mod:`graphgpu.kernels.algorithms.mis` for the encoding) and one
degree per vertex:
the residual degree the ``degree`` priority and the domination test read. The live vertices of a
round are kept in an exact list, compacted after every round. The reductions are in
:mod:`graphgpu.kernels.algorithms.mis.reductions`; the (1,2)-swap local search (:func:`_improve`)
is CPU-only. :func:`mis_cpu` is the entry point the registry holds.
"""

from __future__ import annotations

import numba
import numpy as np

from graphgpu.kernels.algorithms.mis import driver
from graphgpu.kernels.algorithms.mis.driver import FIXED_IN, FIXED_OUT, FROZEN_IN, FROZEN_OUT
from graphgpu.kernels.algorithms.mis.reductions import reduce_round
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

_M32 = 0xFFFFFFFF


@numba.njit(cache=True, inline="always")
def _mul32(a: int, b: int) -> int:
    # a * b mod 2**32 without leaving int64: split b into 16-bit halves.
    return (a * (b & 0xFFFF) + (((a * (b >> 16)) & 0xFFFF) << 16)) & _M32


@numba.njit(cache=True, inline="always")
def mix32(h: int) -> int:
    """MurmurHash3's 32-bit finaliser: a bijection of ``0..2**32-1`` (same as the CUDA one)."""
    h ^= h >> 16
    h = _mul32(h, 0x85EBCA6B)
    h ^= h >> 13
    h = _mul32(h, 0xC2B2AE35)
    return h ^ (h >> 16)


@numba.njit(cache=True, inline="always")
def _key(v: int, deg: np.ndarray, salt: int, use_degree: bool) -> int:
    # Lower wins. A bijective hash of v below the degree: keys of distinct vertices never tie.
    rank = mix32((_mul32(v, 0x9E3779B1) + salt) & _M32)
    return (deg[v] << 32) + rank if use_degree else rank


@numba.njit(cache=True)
def _live(tag: np.ndarray) -> np.ndarray:
    """The live (tag 0) vertices, in id order."""
    return np.flatnonzero(tag == 0).astype(np.int32)


@numba.njit(cache=True)
def _init(indptr: np.ndarray, tag: np.ndarray, deg: np.ndarray, r: int) -> np.ndarray:
    """Everything live with its full degree; isolated vertices join at once (round ``r``)."""
    for v in range(indptr.shape[0] - 1):
        deg[v] = indptr[v + 1] - indptr[v]
        tag[v] = 2 * r + 1 if deg[v] == 0 else 0
    return _live(tag)


@numba.njit(cache=True, inline="always")  # one caller: no own compile
def _recount(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray, deg: np.ndarray,
             live: np.ndarray) -> None:
    for v in live:
        count = 0
        for j in range(indptr[v], indptr[v + 1]):
            count += tag[indices[j]] == 0
        deg[v] = count


@numba.njit(cache=True)
def _compact(tag: np.ndarray, live: np.ndarray) -> np.ndarray:
    out = np.empty_like(live)
    count = 0
    for v in live:
        if tag[v] == 0:
            out[count] = v
            count += 1
    return out[:count].copy()


@numba.njit(cache=True, inline="always")  # one caller: no own compile
def _select(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray, deg: np.ndarray,
            live: np.ndarray, r: int, salt: int, use_degree: bool,
            winners: np.ndarray) -> tuple[np.ndarray, int]:
    """One round: every live vertex whose key beats all live neighbours joins; its neighbours go."""
    count = 0
    for v in live:
        kv = _key(v, deg, salt, use_degree)
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            if tag[u] == 0 and _key(u, deg, salt, use_degree) < kv:
                break
        else:
            winners[count] = v
            count += 1
    for i in range(count):  # after the scan, so that this round's decisions read its start
        tag[winners[i]] = 2 * r + 1
    for i in range(count):
        w = winners[i]
        for j in range(indptr[w], indptr[w + 1]):
            if tag[indices[j]] == 0:
                tag[indices[j]] = 2 * r + 2
    return _compact(tag, live), count


@numba.njit(cache=True)
def _rounds(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray, deg: np.ndarray,
            live: np.ndarray, r: int, r0: int, f: int, salt: int, use_degree: bool,
            recount_first: bool, max_rounds: int) -> tuple[np.ndarray, int, np.ndarray, int, bool]:
    """Up to ``max_rounds`` rounds from round ``r`` of a phase that began at ``r0``."""
    counts = np.zeros(max_rounds, np.int64)
    winners = np.empty(live.shape[0], np.int32)
    wins = done = 0
    executed = 0
    while executed < max_rounds:
        if live.shape[0] == 0:
            done = 1
            break
        counts[executed] = live.shape[0]
        k = r - r0
        if use_degree and ((k == 0 and recount_first) or (k > 0 and f > 0 and k % f == 0)):
            _recount(indptr, indices, tag, deg, live)
        live, won = _select(indptr, indices, tag, deg, live, r, salt, use_degree, winners)
        wins += won
        r += 1
        executed += 1
    return live, r, counts[:executed].copy(), wins, done == 1


@numba.njit(cache=True)
def _settle(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray,
            freeze: bool) -> np.ndarray:
    """Freeze the reductions' decisions, or release the non-members with no member beside them
    (returns the live vertices).

    Only parities are read across vertices, and neither mode changes one, so the visiting order
    does not matter (as on the GPU).
    """
    for v in range(tag.shape[0]):
        t = tag[v]
        if t & 1:
            if freeze:
                tag[v] = FROZEN_IN
            continue
        if t == FROZEN_OUT or (freeze and t == 0):
            continue
        covered = False
        for j in range(indptr[v], indptr[v + 1]):
            if tag[indices[j]] & 1:
                covered = True
                break
        if freeze:
            if covered:
                tag[v] = FROZEN_OUT
        elif covered:
            tag[v] = FIXED_OUT
        else:
            tag[v] = 0
    return _live(tag)


@numba.njit(cache=True)
def _mark(tag: np.ndarray, salt: int, drop: bool) -> int:
    """Members become FIXED_IN, or (``drop``) leave with probability 1/2; returns those kept."""
    kept = 0
    for v in range(tag.shape[0]):
        t = tag[v]
        if not t & 1:
            continue
        if t != FROZEN_IN:
            if drop and mix32(v ^ salt) >> 31:
                tag[v] = 0
                continue
            tag[v] = FIXED_IN
        kept += 1
    return kept


@numba.njit(cache=True)
def _verify(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray) -> tuple[int, int, int]:
    """Set size, arcs inside the set (independence), vertices with no member beside them."""
    size = conflicts = undominated = 0
    for v in range(tag.shape[0]):
        hit = False
        for j in range(indptr[v], indptr[v + 1]):
            if tag[indices[j]] & 1:
                hit = True
                break
        if tag[v] & 1:
            size += 1
            conflicts += hit
        else:
            undominated += not hit
    return size, conflicts, undominated


@numba.njit(cache=True)
def _flip(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray, tight: np.ndarray, v: int,
          into: bool) -> None:
    tag[v] = FIXED_IN if into else FIXED_OUT
    step = 1 if into else -1
    for j in range(indptr[v], indptr[v + 1]):
        tight[indices[j]] += step


@numba.njit(cache=True)
def _improve(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray) -> int:
    """(1,2)-swaps (Andrade, Resende & Werneck 2012) to a local optimum; returns the size gained.

    A member ``x`` whose 1-tight neighbours (non-members whose only member neighbour is ``x``)
    include two non-adjacent vertices is swapped for them, plus any of its 1-tight neighbours left
    free. Frozen vertices (forced by reductions) never move.
    """
    n = tag.shape[0]
    tight = np.zeros(n, np.int32)
    stack = np.empty(n, np.int32)
    queued = np.zeros(n, np.bool_)
    stamp = np.zeros(n, np.int64)
    top = 0
    for v in range(n):
        if tag[v] & 1:
            for j in range(indptr[v], indptr[v + 1]):
                tight[indices[j]] += 1
            if tag[v] != FROZEN_IN:
                stack[top] = v
                top += 1
                queued[v] = True
    candidates = np.empty(n, np.int32)
    gain = 0
    version = 0
    while top > 0:
        top -= 1
        x = stack[top]
        queued[x] = False
        if not tag[x] & 1:
            continue
        count = 0
        version += 1
        for j in range(indptr[x], indptr[x + 1]):
            u = indices[j]
            if tight[u] == 1 and tag[u] != FROZEN_OUT:
                candidates[count] = u
                count += 1
                stamp[u] = version
        if count < 2:
            continue
        # a is non-adjacent to some other candidate iff fewer than count-1 candidates are its
        # neighbours; then the first candidate outside its row is a partner.
        a = b = -1
        for i in range(count):
            c = candidates[i]
            adjacent = 0
            for j in range(indptr[c], indptr[c + 1]):
                adjacent += stamp[indices[j]] == version
            if adjacent < count - 1:
                a = c
                break
        if a < 0:
            continue
        version += 1
        for j in range(indptr[a], indptr[a + 1]):
            stamp[indices[j]] = version
        for i in range(count):
            if candidates[i] != a and stamp[candidates[i]] != version:
                b = candidates[i]
                break
        _flip(indptr, indices, tag, tight, np.int64(x), False)  # int64 nodes: fewer compiles
        gain -= 1
        for c in (a, b):  # a and b first, then every candidate left free
            _flip(indptr, indices, tag, tight, c, True)
            gain += 1
        for i in range(count):
            c = candidates[i]
            if not tag[c] & 1 and tight[c] == 0:
                _flip(indptr, indices, tag, tight, np.int64(c), True)
                gain += 1
        # New members, and the members of x's neighbours that just became 1-tight, may have
        # swaps now.
        for i in range(count):
            c = candidates[i]
            if tag[c] & 1 and not queued[c]:
                stack[top] = c
                top += 1
                queued[c] = True
        for j in range(indptr[x], indptr[x + 1]):
            y = indices[j]
            if tight[y] == 1 and not tag[y] & 1:
                for k in range(indptr[y], indptr[y + 1]):
                    z = indices[k]
                    if tag[z] & 1:
                        if not queued[z] and tag[z] != FROZEN_IN:
                            stack[top] = z
                            top += 1
                            queued[z] = True
                        break
    return gain


class CpuEngine:
    """The CPU side of :class:`graphgpu.kernels.algorithms.mis.driver.Engine`."""

    #: Rounds per call of :meth:`run_rounds` (between deadline and progress checks).
    batch = 8

    def __init__(self, graph: Graph) -> None:
        self.indptr, self.indices = graph.indptr, graph.indices
        self.tag = np.zeros(graph.n, np.int64)
        self.deg = np.zeros(graph.n, np.int64)
        self.live = np.zeros(0, np.int32)
        self.best = self.tag
        self.dirty = self.expanded = np.zeros(0, np.int64)

    def start(self, r: int) -> None:
        self.live = _init(self.indptr, self.tag, self.deg, r)

    def reduce_round(self, r: int) -> int:
        if self.dirty.shape[0] != self.tag.shape[0]:  # first round: examine everything
            self.dirty = np.full(self.tag.shape[0], r, np.int64)
            self.expanded = np.zeros(self.tag.shape[0], np.int64)
        changes = reduce_round(self.indptr, self.indices, self.tag, self.deg, self.live, r,
                               self.dirty, self.expanded)
        self.live = _compact(self.tag, self.live)
        return changes

    def freeze(self) -> None:
        _settle(self.indptr, self.indices, self.tag, True)

    def mark(self, salt: int, drop: bool) -> int:
        return _mark(self.tag, salt, drop)

    def release(self, r: int) -> None:
        self.live = _settle(self.indptr, self.indices, self.tag, False)

    def run_rounds(self, r: int, r0: int, f: int, salt: int, use_degree: bool,
                   recount_first: bool) -> tuple[int, list[int], int, bool]:
        self.live, r, counts, wins, done = _rounds(
            self.indptr, self.indices, self.tag, self.deg, self.live, r, r0, f, salt,
            use_degree, recount_first, self.batch)
        return r, counts.tolist(), wins, done

    def improve(self) -> int:
        return _improve(self.indptr, self.indices, self.tag)

    def save_best(self) -> None:
        self.best = self.tag.copy()

    def restore_best(self) -> None:
        self.tag[:] = self.best

    def verify(self) -> tuple[int, int, int]:
        return _verify(self.indptr, self.indices, self.tag)

    def in_set(self) -> np.ndarray:
        return (self.tag & 1).astype(np.int8)


def mis_cpu(graph: Graph, params: driver.RunParams, progress: ProgressFn) -> AlgorithmResult:
    """Maximal independent set on the CPU (Numba).

    Parameters
    ----------
    graph : Graph
    params : MisParams
    progress : ProgressFn
        Called between batches of rounds and after every iteration; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``in_set`` (int8 0/1) per node, ``members`` (internal ids of the set, translated to
        original ids by the worker); summary per ``MisSummary``.

    Raises
    ------
    KernelError
        If the set fails verification (a bug: never returned silently).
    """
    return driver.solve(CpuEngine(graph), graph.n, params, progress)

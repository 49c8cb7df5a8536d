"""Centrality on the CPU: bounded ball searches for DACCER, bit-parallel BFS for closeness.

Numba: per-node bounded BFS with a per-thread stamp array for ``daccer`` (threads limited so that
their arrays fit ``max_batch_bytes``) and the bit-parallel BFS, one batch of 512 sources per
thread, for closeness.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from graphgpu.kernels.algorithms.centrality import driver
from graphgpu.kernels.algorithms.common.bitset_bfs import WORD_BYTES_PER_NODE, batch_words
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn
from graphgpu.kernels.core.threads import in_threads

#: Stamp and queue arrays (int32) per CPU thread of the ``daccer`` search, per node.
CPU_BYTES_PER_NODE = 2 * 4
#: Words per CPU closeness batch (512 sources: one cache line per neighbour read).
CPU_WORDS = 8


def cpu_workers(n: int, max_batch_bytes: int) -> int:
    """CPU threads of the ``daccer`` search whose arrays fit ``max_batch_bytes`` (at least 1)."""
    fit = max_batch_bytes // (CPU_BYTES_PER_NODE * max(n, 1))
    return max(1, min(numba.get_num_threads(), fit))


@numba.njit(cache=True, nogil=True)
def _neighbour_sum(indptr: np.ndarray, indices: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.zeros(indptr.shape[0] - 1, np.int64)
    for v in range(out.shape[0]):
        for j in range(indptr[v], indptr[v + 1]):
            out[v] += x[indices[j]]
    return out


@numba.njit(cache=True, nogil=True)
def _ball_volumes(indptr: np.ndarray, indices: np.ndarray, deg: np.ndarray, radius: int,
                  lo: int, hi: int, stamp: np.ndarray, queue: np.ndarray, volume: np.ndarray,
                  t: int, workers: int) -> None:
    # One thread's share: every ``workers``-th node from ``lo + t``, with its own stamp and
    # queue. Stamp v + 1 marks v's ball: unique per source, so the arrays are never cleared.
    for v in range(lo + t, hi, workers):
        mark = v + 1
        stamp[v] = mark
        queue[0] = v
        total = deg[v]
        head, tail = 0, 1
        for level in range(1, radius + 1):
            end = tail
            while head < end:
                u = queue[head]
                head += 1
                for j in range(indptr[u], indptr[u + 1]):
                    w = indices[j]
                    if stamp[w] != mark:
                        stamp[w] = mark
                        total += deg[w]
                        if level < radius:  # the last level is counted, never expanded
                            queue[tail] = w
                            tail += 1
        volume[v] = total


def volumes(graph: Graph, radius: int, max_batch_bytes: int, progress: ProgressFn) -> np.ndarray:
    """Volumes (int64) of every node on the CPU; see the family's notes."""
    deg = graph.degrees().astype(np.int64)
    if radius == 0:
        return deg
    if radius == 1:
        return deg + _neighbour_sum(graph.indptr, graph.indices, deg)
    n = graph.n
    workers = cpu_workers(n, max_batch_bytes)
    stamps = np.zeros((workers, n), np.int32)
    queues = np.empty((workers, n), np.int32)
    volume = np.empty(n, np.int64)
    step = max(1 << 16, -(-n // 16))  # ~16 progress reports (each a chance to cancel)
    for lo in range(0, n, step):
        progress(lo / n, f"daccer: {lo} of {n} balls")
        hi = min(n, lo + step)
        in_threads(lambda t, lo=lo, hi=hi: _ball_volumes(
            graph.indptr, graph.indices, deg, radius, lo, hi, stamps[t], queues[t], volume, t,
            workers), workers)
    return volume


@numba.njit(cache=True, nogil=True, inline="always")
def _popcount(x: np.uint64) -> int:
    m2 = np.uint64(0x3333333333333333)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & m2) + ((x >> np.uint64(2)) & m2)
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True)
def _closeness_batch(indptr: np.ndarray, indices: np.ndarray, start: int, count: int,
                     total: np.ndarray, reached: np.ndarray, harmonic: np.ndarray,
                     compensation: np.ndarray) -> None:
    # Bit-parallel pull BFS from sources start..start+count-1; each node sums its own distances.
    n = indptr.shape[0] - 1
    words = (count + 63) // 64
    visited = np.zeros((n, words), np.uint64)
    frontier = np.zeros((n, words), np.uint64)
    following = np.zeros((n, words), np.uint64)
    valid = np.full(words, ~np.uint64(0))
    if count % 64:
        valid[-1] = (np.uint64(1) << np.uint64(count % 64)) - np.uint64(1)
    for i in range(count):
        bit = np.uint64(1) << np.uint64(i & 63)
        visited[start + i, i >> 6] |= bit
        frontier[start + i, i >> 6] |= bit
    acc = np.empty(words, np.uint64)
    level, found = 0, 1
    while found:
        level += 1
        found = 0
        for v in range(n):
            done = True
            for w in range(words):
                acc[w] = 0
                done = done and visited[v, w] == valid[w]
            if not done:  # some source of the batch has not reached v yet
                for j in range(indptr[v], indptr[v + 1]):
                    for w in range(words):
                        acc[w] |= frontier[indices[j], w]
            new = 0
            for w in range(words):
                fresh = acc[w] & ~visited[v, w]
                following[v, w] = fresh
                visited[v, w] |= fresh
                new += _popcount(fresh)
            if new > 0:
                found += 1
                total[v] += new * level
                reached[v] += new
                x, s = new / level, harmonic[v]
                t = s + x
                compensation[v] += (s - t) + x if abs(s) >= abs(x) else (x - t) + s
                harmonic[v] = t
        frontier, following = following, frontier


def _closeness_round(indptr: np.ndarray, indices: np.ndarray, starts: np.ndarray, per: int,
                     total: np.ndarray, reached: np.ndarray, harmonic: np.ndarray,
                     compensation: np.ndarray) -> None:
    # One batch per thread, each into its own row of sums: one parallel region per round, no
    # barrier per BFS level.
    n = indptr.shape[0] - 1
    in_threads(lambda t: _closeness_batch(indptr, indices, int(starts[t]),
                                           int(min(per, n - starts[t])), total[t], reached[t],
                                           harmonic[t], compensation[t]), starts.shape[0])


def closeness_sums(graph: Graph, max_batch_bytes: int, progress: ProgressFn
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: sum of distances, nodes reached (itself excluded) and harmonic sum, on the CPU.

    Threads run one batch of up to 512 sources each; their bit sets and sums (``32 + 24 words``
    bytes per node) fit ``max_batch_bytes`` together, down to one thread with one word.
    """
    n = graph.n
    words = min(CPU_WORDS, batch_words(n, max_batch_bytes))
    per = 64 * words
    fit = max_batch_bytes // ((32 + WORD_BYTES_PER_NODE * words) * n)
    workers = max(1, min(numba.get_num_threads(), fit, -(-n // per)))
    total, reached = np.zeros((workers, n), np.int64), np.zeros((workers, n), np.int64)
    harmonic, compensation = np.zeros((workers, n)), np.zeros((workers, n))
    starts = np.arange(0, n, per)
    for first in range(0, starts.shape[0], workers):
        progress(first / starts.shape[0], f"closeness: sources {starts[first]} of {n}")
        _closeness_round(graph.indptr, graph.indices, starts[first:first + workers], per, total,
                         reached, harmonic, compensation)
    return total.sum(axis=0), reached.sum(axis=0), (harmonic + compensation).sum(axis=0)


def daccer(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """DACCER volumes and ranking on the CPU.

    ``params`` is a ``DaccerParams``; ``progress`` is called between batches of nodes and may
    raise to cancel. The result holds ``volume`` (int64) per node, ``ranking`` (internal ids by
    volume, largest first, ties by id) and ``top`` (its first ``top`` entries), and a
    ``DaccerSummary``.
    """
    return driver.daccer(graph, params, progress, volumes, closeness_sums, np.asarray)


def closeness(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Exact closeness (or harmonic) centrality of every node on the CPU.

    ``params`` is a ``ClosenessParams``; weights, if any, are ignored (hop distances).
    ``progress`` is called between source batches and may raise to cancel. The result holds
    ``closeness`` (float64) per node, NetworkX's ``closeness_centrality`` (Wasserman-Faust) or
    ``harmonic_centrality``, and a ``ClosenessSummary``.
    """
    return driver.closeness(graph, params, progress, closeness_sums, np.asarray)

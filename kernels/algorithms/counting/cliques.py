"""The clique search of the counting family on the host (Numba): per root, a bitmap of its
out-neighbourhood, then depth-first over common candidates (kClist-style, see
:mod:`graphgpu.kernels.algorithms.counting`).

It runs on any DAG of out-lists ``(dptr, dadj)`` (:mod:`graphgpu.kernels.algorithms.common.dag`):
the CPU backend counts with it, and the estimates of both backends size their searches with
:func:`clique_walks`.
"""

from __future__ import annotations

import numba
import numpy as np

from graphgpu.kernels.algorithms.counting.driver import add_wide


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def clique_root(dptr: np.ndarray, dadj: np.ndarray, v: int, kmax: int, lo_size: int,
                pos: np.ndarray, rows: np.ndarray, cand: np.ndarray, out: np.ndarray) -> None:
    """Cliques of sizes 3..kmax whose lowest-ranked vertex is ``v``, added to ``out[size]``.

    ``pos`` (n, all -1), ``rows`` (dmax x words) and ``cand`` (kmax x words) are scratch; sizes
    below ``lo_size`` are not needed, which prunes branches that cannot reach it.
    """
    s = dptr[v + 1] - dptr[v]
    if kmax < 3 or s == 0:
        return
    words = _local_bitmap(dptr, dadj, v, pos, rows)
    _full(cand, s, words)
    # t = local vertices chosen (clique size t + 1); entering level t with cand[t] fresh.
    t, fresh = 0, True
    while t >= 0:
        if fresh:
            fresh = False
            c = 0
            for w in range(words):
                c += _popcount(cand[t, w])
            out[t + 2] += c
            if t + 3 > kmax or t + 1 + c < lo_size:
                t -= 1
                continue
        i = -1
        for w in range(words):
            if cand[t, w]:
                bit = _lowest_bit(cand[t, w])
                cand[t, w] &= cand[t, w] - np.uint64(1)
                i = (w << 6) + bit
                break
        if i < 0:
            t -= 1
            continue
        for w in range(words):
            cand[t + 1, w] = cand[t, w] & rows[i, w]
        t += 1
        fresh = True


@numba.njit(cache=True, nogil=True)
def _local_bitmap(dptr: np.ndarray, dadj: np.ndarray, v: int, pos: np.ndarray,
                  rows: np.ndarray) -> int:
    """Rows of ``v``'s out-neighbourhood bitmap (bit b of row a: entry b is an out-neighbour of
    entry a); returns the words per row. ``pos`` is all -1 before and after."""
    p, s = dptr[v], dptr[v + 1] - dptr[v]
    words = (s + 63) >> 6
    for a in range(s):
        pos[dadj[p + a]] = a
    for a in range(s):
        u = dadj[p + a]
        for w in range(words):
            rows[a, w] = 0
        for j in range(dptr[u], dptr[u + 1]):
            b = pos[dadj[j]]
            if b >= 0:
                rows[a, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    for a in range(s):
        pos[dadj[p + a]] = -1
    return words


@numba.njit(cache=True, nogil=True)
def _full(cand: np.ndarray, s: int, words: int) -> None:
    """``cand[0]`` = all of ``s`` entries."""
    for w in range(words):
        cand[0, w] = ~np.uint64(0)
    if s & 63:
        cand[0, words - 1] = (np.uint64(1) << np.uint64(s & 63)) - np.uint64(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _popcount(x: np.uint64) -> int:
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True, inline="always")
def _lowest_bit(x: np.uint64) -> int:
    return _popcount((x & (~x + np.uint64(1))) - np.uint64(1))


@numba.njit(cache=True, nogil=True)
def clique_scratch(dptr: np.ndarray, kmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``pos``, ``rows`` and ``cand`` scratch for :func:`clique_root` on out-lists ``dptr``."""
    n = dptr.shape[0] - 1
    dmax = 0
    for v in range(n):
        dmax = max(dmax, dptr[v + 1] - dptr[v])
    words = max(1, (dmax + 63) >> 6)
    return (np.full(n, -1, np.int32), np.empty((max(dmax, 1), words), np.uint64),
            np.empty((max(kmax, 1), words), np.uint64))


@numba.njit(cache=True, nogil=True)
def clique_roots(dptr: np.ndarray, dadj: np.ndarray, roots: np.ndarray, kmax: int,
                 lo_size: int, lo: np.ndarray, hi: np.ndarray) -> None:
    """Add the cliques rooted at each of ``roots`` to the two-word totals ``(hi, lo)``."""
    pos, rows, cand = clique_scratch(dptr, kmax)
    out = np.zeros(kmax + 2, np.int64)
    for v in roots:
        out[:] = 0
        clique_root(dptr, dadj, v, kmax, lo_size, pos, rows, cand, out)
        for size in range(3, kmax + 1):
            add_wide(lo, hi, size, out[size])


@numba.njit(cache=True, nogil=True)
def greedy_clique(dptr: np.ndarray, dadj: np.ndarray, roots: np.ndarray, budget: int,
                  pos: np.ndarray, rows: np.ndarray, cand: np.ndarray) -> int:
    """Size of the largest clique found greedily from ``roots`` (heaviest first), a lower bound
    on the clique number that a planted clique pushes up (the estimates' floor).

    From each root, the clique grows by the candidate with the most candidates among its own
    out-neighbours, until none is left; roots whose out-degree cannot beat the best clique found
    end the search, and so does passing ``budget`` adjacency and bitmap words read (after the
    first root). ``pos``, ``rows`` and ``cand`` are :func:`clique_scratch`'s.
    """
    best = 1 if dptr.shape[0] > 1 else 0
    work = 0
    for v in roots:
        s = dptr[v + 1] - dptr[v]
        if s + 1 <= best or work > budget:
            break
        words = _local_bitmap(dptr, dadj, v, pos, rows)
        for a in range(dptr[v], dptr[v + 1]):  # the bitmap's adjacency reads
            work += dptr[dadj[a] + 1] - dptr[dadj[a]]
        _full(cand, s, words)
        size = 1
        while True:
            pick, most = -1, -1
            for w in range(words):
                x = cand[0, w]
                while x:
                    i = (w << 6) + _lowest_bit(x)
                    x &= x - np.uint64(1)
                    c = 0
                    for u in range(words):
                        c += _popcount(cand[0, u] & rows[i, u])
                    work += words
                    if c > most:
                        pick, most = i, c
            if pick < 0:
                break
            size += 1
            for u in range(words):
                cand[0, u] &= rows[pick, u]
        best = max(best, size)
    return best


# ------------------------------------------------------------------------------------------------
# Estimates: Knuth's (1975) random-path estimator of a search tree's size
# ------------------------------------------------------------------------------------------------
# A walk from the root picks a uniformly random child at every node; the product of the branching
# factors met so far is an unbiased estimate of the number of nodes at that depth. Averaged over
# a few walks it sizes searches far too large to run, at the cost of one path each.


@numba.njit(cache=True, nogil=True)
def clique_walks(dptr: np.ndarray, dadj: np.ndarray, v: int, kmax: int, lo_size: int,
                 walks: int, seed: int, pos: np.ndarray, rows: np.ndarray,
                 cand: np.ndarray) -> float:
    """Estimated search nodes of :func:`clique_root` for root ``v`` (mean of ``walks`` paths)."""
    np.random.seed(seed)
    s = dptr[v + 1] - dptr[v]
    if kmax < 3 or s == 0:
        return 1.0
    words = _local_bitmap(dptr, dadj, v, pos, rows)
    total = 0.0
    for _ in range(walks):
        _full(cand, s, words)
        t, weight = 0, 1.0
        total += 1.0
        while True:
            c = 0
            for w in range(words):
                c += _popcount(cand[t, w])
            if c == 0 or t + 3 > kmax or t + 1 + c < lo_size:
                break
            weight *= c
            total += weight
            pick = np.random.randint(c)
            i = -1
            for w in range(words):
                here = _popcount(cand[t, w])
                if pick < here:
                    x = cand[t, w]
                    for _skip in range(pick):
                        x &= x - np.uint64(1)
                    i = (w << 6) + _lowest_bit(x)
                    break
                pick -= here
            for w in range(words):
                cand[t + 1, w] = cand[t, w] & rows[i, w]
            t += 1
    return total / walks


"""CPU (Numba) side of the counting family: orderings, the clique and connected-set searches, and
the local counts behind small independent sets. See :mod:`graphgpu.kernels.algorithms.counting` for
the algorithms.

Counts are kept per size as two int64 words, ``hi * 2**62 + lo``: each root's contribution (far
below ``2**62``: it is at most the root's search nodes times its out-degree) is added to ``lo``
and the carry moved to ``hi``, so totals stay exact past 64 bits.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

#: Base of the two-word CPU accumulators.
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


# ------------------------------------------------------------------------------------------------
# Orderings and oriented graphs (shared by both backends: O(m) host preprocessing)
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def degeneracy_rank(indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Position of each vertex in a smallest-last (degeneracy) order (Batagelj-Zaversnik, O(m)).

    Orienting every edge from the lower to the higher rank leaves each vertex at most
    degeneracy-many out-neighbours, which bounds every clique search's local problem.
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
    rank = np.empty(n, np.int32)
    for i in range(n):
        rank[order[i]] = i
    return rank


@numba.njit(cache=True, nogil=True)
def relabel(indptr: np.ndarray, indices: np.ndarray, rank: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The graph in rank ids, rows sorted, and ``split[v]``: the start of ``v``'s higher ranks.

    ``adj[split[v]:ptr[v + 1]]`` is the out-list of ``v`` in the oriented graph (a DAG).
    """
    n = indptr.shape[0] - 1
    ptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        ptr[rank[v] + 1] = indptr[v + 1] - indptr[v]
    for v in range(n):
        ptr[v + 1] += ptr[v]
    adj = np.empty(indices.shape[0], np.int32)
    split = np.empty(n, np.int64)
    for v in range(n):
        r = rank[v]
        row = adj[ptr[r]:ptr[r + 1]]
        for j in range(indptr[v], indptr[v + 1]):
            row[j - indptr[v]] = rank[indices[j]]
        row.sort()
        split[r] = ptr[r] + np.searchsorted(row, r)
    return ptr, adj, split


@numba.njit(cache=True, nogil=True)
def out_lists(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """The DAG's out-lists (higher ranks) as their own CSR."""
    n = ptr.shape[0] - 1
    dptr = np.zeros(n + 1, np.int64)
    for v in range(n):
        dptr[v + 1] = dptr[v] + ptr[v + 1] - split[v]
    dadj = np.empty(dptr[n], np.int32)
    for v in range(n):
        dadj[dptr[v]:dptr[v + 1]] = adj[split[v]:ptr[v + 1]]
    return dptr, dadj


def degree_dag(xp: Any, indptr: Any, indices: Any) -> tuple[Any, Any]:
    """Out-lists of the graph in rank ids, ranked by ``(degree, id)``, edges oriented upwards.

    Parameters
    ----------
    xp : module
        ``numpy`` or ``cupy``: where the arrays live and the work is done (array passes and one
        sort of the kept arcs).
    indptr, indices : array
        The graph's CSR.

    Returns
    -------
    dptr, dadj : array
        Out-lists (int64 offsets, int32 targets) sorted by rank, as the searches need (an entry's
        out-neighbours sit after it in its root's list); every out-degree is below
        ``sqrt(2 m)``: an out-neighbour has at least the degree of its tail.
    """
    n = indptr.shape[0] - 1
    deg = xp.diff(indptr)
    order = xp.argsort(deg * n + xp.arange(n, dtype=deg.dtype))
    rank = xp.empty(n, dtype=xp.int64)
    rank[order] = xp.arange(n, dtype=xp.int64)
    src = xp.searchsorted(indptr, xp.arange(indices.shape[0]), side="right") - 1
    tail, head = rank[src], rank[indices]
    up = head > tail
    key = xp.sort((tail[up] << 32) | head[up])
    counts = xp.bincount(key >> 32, minlength=n)
    dptr = xp.concatenate([xp.zeros(1, dtype=xp.int64), xp.cumsum(counts, dtype=xp.int64)])
    return dptr, (key & 0xFFFFFFFF).astype(xp.int32)


@numba.njit(cache=True, nogil=True)
def complement_lists(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Out-lists of the complement oriented by id: the non-neighbours ``u > v`` of each ``v``."""
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


# ------------------------------------------------------------------------------------------------
# Cliques: per root, a bitmap of its out-neighbourhood, then depth-first over common candidates
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
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


# ------------------------------------------------------------------------------------------------
# Connected induced subgraphs: ESU from the smallest vertex, one item per edge (r, first pick)
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True, inline="always")
def _extend(indptr: np.ndarray, indices: np.ndarray, picked: int, r: int, mark: np.ndarray,
            ext: np.ndarray, tail: int) -> int:
    """ESU's extension step: append ``picked``'s unmarked neighbours above the root ``r`` to
    ``ext`` from ``tail`` on (marking them); the new tail."""
    for j in range(indptr[picked], indptr[picked + 1]):
        u = indices[j]
        if u > r and mark[u] == 0:
            mark[u] = 1
            ext[tail] = u
            tail += 1
    return tail


@numba.njit(cache=True, nogil=True)
def connected_root(indptr: np.ndarray, indices: np.ndarray, r: int, first: int, last: int,
                   kmax: int, mark: np.ndarray, ext: np.ndarray, out: np.ndarray) -> None:
    """Connected sets of sizes 3..kmax whose smallest vertex is ``r`` and whose first pick is
    the ``first``..``last - 1``-th neighbour of ``r`` above ``r``, added to ``out[size]``.

    ESU (Wernicke 2006) with one growing list: a node is (set S, list L, next index i); L holds
    every neighbour of S above ``r`` outside S, in discovery order, and the node's children pick
    ``L[j]`` for ``j >= i``, appending the picked vertex's undiscovered neighbours. Each connected
    set is produced once. ``mark`` (n, zero) and ``ext`` (capacity kmax * max degree) are
    scratch.
    """
    base = indptr[r]
    while base < indptr[r + 1] and indices[base] <= r:
        base += 1
    size0 = indptr[r + 1] - base
    mark[r] = 1
    for a in range(size0):
        ext[a] = indices[base + a]
        mark[ext[a]] = 1
    nxt = np.empty(kmax + 1, np.int64)  # per set size: next index of L to pick
    length = np.empty(kmax + 1, np.int64)  # per set size: length of L at that node
    for f in range(first, last):
        # The item's node: S = {r, L[f]}, size 2.
        s, fresh, picked = 2, True, ext[f]
        nxt[1], length[1] = f + 1, size0
        while s >= 2:
            if fresh:
                fresh = False
                tail = _extend(indptr, indices, picked, r, mark, ext, length[s - 1])
                length[s] = tail
                nxt[s] = nxt[s - 1]
                if s + 1 <= kmax:
                    out[s + 1] += tail - nxt[s]
                if s + 2 > kmax:
                    nxt[s] = tail  # no children needed
            if nxt[s] < length[s]:
                picked = ext[nxt[s]]
                nxt[s] += 1
                s += 1
                fresh = True
                continue
            for a in range(length[s - 1], length[s]):  # undo this node's discoveries
                mark[ext[a]] = 0
            s -= 1
    mark[r] = 0
    for a in range(size0):
        mark[ext[a]] = 0


@numba.njit(cache=True, nogil=True)
def connected_roots(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray, kmax: int,
                    lo: np.ndarray, hi: np.ndarray) -> None:
    """Add the connected sets (sizes 3..kmax) rooted at each of ``roots`` to ``(hi, lo)``."""
    n = indptr.shape[0] - 1
    dmax = 0
    for v in range(n):
        dmax = max(dmax, indptr[v + 1] - indptr[v])
    mark = np.zeros(n, np.uint8)
    ext = np.empty(max(1, kmax * dmax), np.int32)
    out = np.zeros(kmax + 2, np.int64)
    for r in roots:
        above = 0
        for j in range(indptr[r], indptr[r + 1]):
            above += indices[j] > r
        out[:] = 0
        connected_root(indptr, indices, r, 0, above, kmax, mark, ext, out)
        for size in range(3, kmax + 1):
            add_wide(lo, hi, size, out[size])


# ------------------------------------------------------------------------------------------------
# Local counts for independent sets of size <= 4 (module notes of
# graphgpu.kernels.algorithms.counting)
# ------------------------------------------------------------------------------------------------


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


@numba.njit(cache=True, nogil=True)
def four_cycles(ptr: np.ndarray, adj: np.ndarray, split: np.ndarray) -> int:
    """4-cycles (as subgraphs), each counted once from its highest-ranked vertex ``u``: for the
    wedges ``u - v - w`` with ``v, w`` below ``u``, a pair of middles ``v`` sharing ``w`` closes
    one cycle. O(m * degeneracy) on rank ids (:func:`relabel`)."""
    n = ptr.shape[0] - 1
    cnt = np.zeros(n, np.int64)
    total = 0
    for u in range(n):
        for a in range(ptr[u], split[u]):
            v = adj[a]
            for b in range(ptr[v], ptr[v + 1]):
                w = adj[b]
                if w >= u:
                    break
                total += cnt[w]
                cnt[w] += 1
        for a in range(ptr[u], split[u]):
            v = adj[a]
            for b in range(ptr[v], ptr[v + 1]):
                w = adj[b]
                if w >= u:
                    break
                cnt[w] = 0
    return total


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


@numba.njit(cache=True, nogil=True)
def connected_walks(indptr: np.ndarray, indices: np.ndarray, r: int, first: int, kmax: int,
                    walks: int, seed: int, mark: np.ndarray, ext: np.ndarray) -> float:
    """Estimated search nodes of :func:`connected_root` for the item ``(r, first)``."""
    np.random.seed(seed)
    base = indptr[r]
    while base < indptr[r + 1] and indices[base] <= r:
        base += 1
    size0 = indptr[r + 1] - base
    total = 0.0
    for _ in range(walks):
        mark[r] = 1
        for a in range(size0):
            ext[a] = indices[base + a]
            mark[ext[a]] = 1
        s, start, length, picked, weight = 2, first + 1, size0, ext[first], 1.0
        total += 1.0
        while True:
            length = _extend(indptr, indices, picked, r, mark, ext, length)
            children = length - start
            if children == 0 or s + 2 > kmax:
                break
            weight *= children
            total += weight
            j = start + np.random.randint(children)
            picked = ext[j]
            start = j + 1
            s += 1
        mark[r] = 0
        for a in range(length):
            mark[ext[a]] = 0
    return total / walks


# ------------------------------------------------------------------------------------------------
# Work items for the GPU's connected-set search: the levels above the cut searched on the host
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def connected_items(indptr: np.ndarray, indices: np.ndarray, kmax: int, depth: int,
                    lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """GPU work items for the connected-set search: every search node of size ``depth + 1``
    (``1 <= depth <= kmax - 2``), as rows ``(r, p_1, ..., p_depth)``: its smallest vertex and the
    list positions of its picks (the GPU replays them). The nodes of sizes 2..depth are searched
    here and their counts added to ``(hi, lo)``, exactly as :func:`connected_root` would."""
    n = indptr.shape[0] - 1
    dmax = 0
    for v in range(n):
        dmax = max(dmax, indptr[v + 1] - indptr[v])
    mark = np.zeros(n, np.uint8)
    ext = np.empty(max(1, kmax * dmax), np.int32)
    nxt = np.empty(kmax + 1, np.int64)
    length = np.empty(kmax + 1, np.int64)
    path = np.empty(kmax + 1, np.int32)
    items = np.empty((1024, depth + 1), np.int32)
    count = 0
    for r in range(n):
        base = indptr[r]
        while base < indptr[r + 1] and indices[base] <= r:
            base += 1
        size0 = indptr[r + 1] - base
        mark[r] = 1
        for a in range(size0):
            ext[a] = indices[base + a]
            mark[ext[a]] = 1
        # The root (size 1) node: its children are the edge items.
        s, nxt[1], length[1] = 1, 0, size0
        while s >= 1:
            if nxt[s] < length[s]:
                path[s] = nxt[s]
                picked = ext[nxt[s]]
                nxt[s] += 1
                if s == depth:  # a node of size depth + 1: an item
                    if count == items.shape[0]:
                        grown = np.empty((2 * items.shape[0], depth + 1), np.int32)
                        grown[:count] = items[:count]
                        items = grown
                    items[count, 0] = r
                    for q in range(1, depth + 1):
                        items[count, q] = path[q]
                    count += 1
                    continue
                s += 1
                tail = _extend(indptr, indices, picked, r, mark, ext, length[s - 1])
                length[s] = tail
                nxt[s] = nxt[s - 1]
                add_wide(lo, hi, s + 1, tail - nxt[s])
                continue
            if s >= 2:
                for a in range(length[s - 1], length[s]):
                    mark[ext[a]] = 0
            s -= 1
        mark[r] = 0
        for a in range(size0):
            mark[ext[a]] = 0
    return items[:count]

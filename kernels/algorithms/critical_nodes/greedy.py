"""CND* on the CPU (Numba): the seeded greedy MIS and the paper's greedy growth back to n - k nodes
(lower bounds of the costs in heaps, small-to-large merges).

Node states and ids are the ones described in :mod:`graphgpu.kernels.algorithms.critical_nodes`.
Everything here is deterministic for a given seed: priorities come from :func:`mix` (the
splitmix64 finaliser), which the CUDA code computes bit for bit the same.
"""

from __future__ import annotations

import numba
import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@numba.njit(cache=True, inline="always")
def mix(x: np.uint64) -> np.uint64:
    """splitmix64 finaliser: a bijection of 64-bit words with good avalanche."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def pairs(s: np.int64) -> np.int64:
    """Connected pairs inside a component of ``s`` nodes."""
    return s * (s - 1) // 2


@numba.njit(cache=True, nogil=True)
def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``: a bottom-up merge sort of the positions.

    Numba's own sorts compile for seconds in every process that needs them (its merge sort
    3.0 s, its quicksort 1.2-2.1 s on the GPU host's first start, 2026-11-27); this one, a
    function of its own, compiles in a fraction of that, once a machine (its disk cache).
    """
    n = keys.shape[0]
    order = np.arange(n)
    spare = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for out in range(lo, hi):  # the left run wins ties: stable
                if j >= hi or (i < mid and keys[order[i]] <= keys[order[j]]):
                    spare[out] = order[i]
                    i += 1
                else:
                    spare[out] = order[j]
                    j += 1
        order, spare = spare, order
        width *= 2
    return order


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def greedy_mis(indptr: np.ndarray, indices: np.ndarray, seed: np.uint64) -> np.ndarray:
    """The maximal independent set taken greedily in order of hashed priority (smallest first).

    The parallel rounds of the GPU (a node joins once every lower-priority neighbour is out)
    reach the same set, so both backends start CND* from the same MIS.
    """
    n = indptr.shape[0] - 1
    base = mix(seed ^ GOLDEN)
    prio = np.empty(n, np.uint64)
    for v in range(n):
        prio[v] = mix(base + np.uint64(v))
    order = stable_argsort(prio)
    state = np.zeros(n, np.uint8)  # 0 undecided, 1 in, 2 out
    for i in range(n):
        v = order[i]
        if state[v] == 0:
            state[v] = 1
            for j in range(indptr[v], indptr[v + 1]):
                state[indices[j]] = 2
    return state == 1


@numba.njit(cache=True, inline="always")
def _before(score_a, node_a, score_b, node_b) -> bool:
    """(score, node) order: the smaller score first, the smaller node on ties."""
    return score_a < score_b or (score_a == score_b and node_a < node_b)


#: Candidates next to the big component whose bound grows by 1 to SLOPES times its growth
#: wait in a heap per slope (:func:`regrow`), keyed by a part that the growth leaves exact;
#: the others in heap 0, by their bound when queued.
SLOPES = 8
#: A forbidden node of more arcs than this, next to a merge, gets a bound instead of its cost
#: (:func:`regrow`): hubs next to nearly every merge made CND* quadratic on R-MAT graphs.
LAZY_DEGREE = 64


@numba.njit(cache=True)
def _push(queues: tuple, counts: np.ndarray, q: np.int64, key: np.int64, node: np.int64,
          version: np.int64) -> None:
    """Push (key, node, version) onto heap ``q`` of ``queues`` (:func:`_queues`; room checked
    by the caller): a binary heap by (key, node) in its first ``counts[q]`` slots."""
    keys, nodes, vers = queues
    at = q * (keys.shape[0] // (SLOPES + 1))
    i = counts[q]
    counts[q] += 1
    while i > 0:
        up = (i - 1) >> 1
        if not _before(key, node, keys[at + up], nodes[at + up]):
            break
        keys[at + i], nodes[at + i], vers[at + i] = keys[at + up], nodes[at + up], vers[at + up]
        i = up
    keys[at + i], nodes[at + i], vers[at + i] = key, node, version


@numba.njit(cache=True)
def _pop(queues: tuple, counts: np.ndarray, q: np.int64) -> None:
    """Drop the top of heap ``q`` (the caller read it first)."""
    keys, nodes, vers = queues
    at = q * (keys.shape[0] // (SLOPES + 1))
    counts[q] -= 1
    last = counts[q]
    key, node, version = keys[at + last], nodes[at + last], vers[at + last]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= last:
            break
        if child + 1 < last and _before(keys[at + child + 1], nodes[at + child + 1],
                                        keys[at + child], nodes[at + child]):
            child += 1
        if not _before(keys[at + child], nodes[at + child], key, node):
            break
        keys[at + i], nodes[at + i], vers[at + i] = (keys[at + child], nodes[at + child],
                                                     vers[at + child])
        i = child
    keys[at + i], nodes[at + i], vers[at + i] = key, node, version


@numba.njit(cache=True)
def _queues(cap: int) -> tuple:
    """Keys, nodes and versions of heaps 0 to SLOPES, heap q at ``q * cap`` of each array."""
    size = (SLOPES + 1) * cap
    return np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64)


@numba.njit(cache=True)
def _room(queues: tuple, counts: np.ndarray, extra: np.int64) -> tuple:
    """``queues`` with room for ``extra`` more entries in each heap (doubled when short)."""
    cap = queues[0].shape[0] // (SLOPES + 1)
    need = extra
    for q in range(SLOPES + 1):
        need = max(need, counts[q] + extra)
    if need <= cap:
        return queues
    grown = _queues(max(2 * cap, need))
    wide = grown[0].shape[0] // (SLOPES + 1)
    for q in range(SLOPES + 1):
        for i in range(counts[q]):  # a loop, not slices: no compiled shape-mismatch message
            for a in range(3):
                grown[a][q * wide + i] = queues[a][q * cap + i]
    return grown


@numba.njit(cache=True)
def _least(queues: tuple, counts: np.ndarray, ver: np.ndarray, comp: np.ndarray,
           size: np.int64) -> tuple:
    """The least top once voided tops (older versions, restored nodes) are dropped: (heap,
    bound, node), its bound for heap q > 0 ``key + q * size`` (exact), for heap 0 its key (the
    bound when queued); heap -1 when all are empty."""
    cap = queues[0].shape[0] // (SLOPES + 1)
    best, value, node = -1, np.int64(0), np.int64(-1)
    for q in range(SLOPES + 1):
        at = q * cap
        while counts[q] > 0 and (queues[2][at] != ver[queues[1][at]]
                                 or comp[queues[1][at]] != 0):
            _pop(queues, counts, q)
        if counts[q] > 0:
            v = queues[0][at] + q * size
            if best < 0 or _before(v, queues[1][at], value, node):
                best, value, node = q, v, queues[1][at]
    return best, value, node


@numba.njit(cache=True)
def _place(queues: tuple, counts: np.ndarray, base: np.ndarray, x: np.int64, bound: np.int64,
           slope: np.int64, size: np.int64, version: np.int64) -> None:
    """Queue ``x`` by its bound now, ``bound = base[x] + slope * size`` (``base[x]`` set here):
    slopes 1 to SLOPES in their heap by ``base[x]``, others in heap 0 by the bound (room
    checked by the caller)."""
    base[x] = bound - slope * size
    if 1 <= slope <= SLOPES:
        _push(queues, counts, slope, base[x], x, version)
    else:
        _push(queues, counts, np.int64(0), bound, x, version)


@numba.njit(cache=True)
def _join(indptr, indices, comp, sizes, mark, stamp, x, big) -> tuple:
    """Pairs that restoring the forbidden node ``x`` adds (its neighbour components joined,
    each marked with ``stamp``), and the slope of that cost in the size of component ``big``
    (1 + the other components' nodes where ``x`` is next to ``big``, else 0)."""
    joined, lost = np.int64(0), np.int64(0)
    for j in range(indptr[x], indptr[x + 1]):
        c = comp[indices[j]]
        if c != 0 and mark[c] != stamp:
            mark[c] = stamp
            joined += sizes[c]
            lost += pairs(sizes[c])
    next_to_big = big != 0 and mark[big] == stamp
    return pairs(joined + 1) - lost, 1 + joined - sizes[big] if next_to_big else np.int64(0)


@numba.njit(cache=True, nogil=True)
def cnd_star(indptr: np.ndarray, indices: np.ndarray, k: int, seed: np.uint64,
             comp: np.ndarray, sizes: np.ndarray) -> np.int64:
    """CND* (the paper's Fig. 2-5) from the seeded MIS; returns the objective.

    On return ``comp[v] == 0`` marks the k removed (forbidden) nodes and ``comp[v] = c > 0`` the
    component of a kept one, with ``sizes[c]`` its size (the paper's invariants). The growth
    back to k forbidden nodes is :func:`regrow`.
    """
    n = indptr.shape[0] - 1
    in_mis = greedy_mis(indptr, indices, seed)
    comp[:] = 0
    sizes[:] = 0
    forbidden = 0
    for v in range(n):
        if in_mis[v]:
            comp[v] = v + 1
            sizes[v + 1] = 1
        else:
            forbidden += 1
    # Trivial case: the MIS leaves fewer than k nodes; its highest ids go too (objective 0).
    v = n - 1
    while forbidden < k:
        if comp[v] != 0:
            sizes[comp[v]] = 0
            comp[v] = 0
            forbidden += 1
        v -= 1
    if forbidden <= k:
        return np.int64(0)
    return regrow(indptr, indices, k, comp, sizes)


@numba.njit(cache=True, nogil=True)
def regrow(indptr: np.ndarray, indices: np.ndarray, k: int, comp: np.ndarray,
           sizes: np.ndarray) -> np.int64:
    """Restore forbidden nodes until k are left, each step the one whose return joins the
    fewest pairs (the smallest node on ties); returns the objective.

    On entry ``comp[v] == 0`` marks more than k forbidden nodes and ``comp[v] = c > 0`` the
    component of a kept one, its id ``c = u + 1`` for one of its members u, ``sizes[c]`` its
    size (CND*'s MIS: every kept node alone). The return is found without a rescan of every
    candidate:

    * Each candidate has a lower bound of its cost, ``base + slope * |big|`` for the component
      ``big``: a candidate next to ``big`` whose other neighbouring components hold j nodes has
      cost ``(1 + j) * |big| + r``, r not depending on ``|big|`` (slope 1 + j, base r); any
      other, slope 0. A cost only grows when a neighbouring component grows, so the bound
      stays one. The candidates sit in a heap by (their bound when pushed, node): the top's
      bound is brought up to date in O(1) and the top pushed back while it is no longer the
      least; the least is then recomputed (O(its degree)) and taken only when exact, or still
      ahead of every other bound. (With ``big``'s growth unaccounted, the late steps rescanned
      hundreds of hubs each, whose costs grow with ``big`` many times faster than the top's.)
    * A cost can fall only when two of a candidate's neighbouring components merge; then it is
      next to a member of the smaller ones. A merge keeps the largest piece's id and relabels
      the others (small to large: O(V log V) relabels, O(E log V) neighbour scans in all), and
      every forbidden neighbour of a relabelled node is queued again (older entries are voided
      by a version count): with its exact cost, or, past :data:`LAZY_DEGREE` arcs, with its
      bound less the pairs between the pieces it touches and the largest (the most its cost
      can fall by). Computed exactly, hubs next to nearly every merge took 4.6 of CND*'s 4.6 s
      on an R-MAT of 65k nodes (1.8M arcs) on the VM: n^1.7 in all.
    """
    n = indptr.shape[0] - 1
    forbidden = 0
    # Members of each component as a linked list (head by component id, next by node).
    head = np.full(n + 1, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    total = np.int64(0)
    for v in range(n):
        if comp[v] == 0:
            forbidden += 1
        else:
            nxt[v] = head[comp[v]]
            head[comp[v]] = v
    for c in range(1, n + 1):
        total += pairs(sizes[c])
    mark = np.zeros(n + 1, np.int64)
    dirty = np.zeros(n, np.int64)
    ver = np.zeros(n, np.int64)
    # Each candidate's bound, base + slope * sizes[big], and (next to a merge) the relabelled
    # pieces it touches: the last one counted, their nodes and their squared sizes.
    base = np.zeros(n, np.int64)
    slope = np.zeros(n, np.int64)
    seen = np.zeros(n, np.int64)
    touched = np.zeros(n, np.int64)
    touched_sq = np.zeros(n, np.int64)
    queues = _queues(forbidden + 16)
    counts = np.zeros(SLOPES + 1, np.int64)
    stamp, big = 0, 0
    for x in range(n):
        if comp[x] == 0:
            stamp += 1
            base[x] = _join(indptr, indices, comp, sizes, mark, stamp, x, big)[0]
            _push(queues, counts, np.int64(0), base[x], x, np.int64(0))
    pieces = np.empty(n, np.int64)
    while forbidden > k:
        best, score, x = _least(queues, counts, ver, comp, sizes[big])
        _pop(queues, counts, best)
        now = base[x] + slope[x] * sizes[big]
        if best == 0 and now != score:
            score = now  # its bound grew since it was queued
            rival, value, node = _least(queues, counts, ver, comp, sizes[big])
            if rival >= 0 and not _before(score, x, value, node):
                _push(queues, counts, np.int64(0), score, x, ver[x])  # its bound grew: again
                continue
        stamp += 1
        exact, rate = _join(indptr, indices, comp, sizes, mark, stamp, x, big)
        if exact != score:  # its cost grew beyond the bound
            rival, value, node = _least(queues, counts, ver, comp, sizes[big])
            if rival >= 0 and not _before(exact, x, value, node):
                ver[x] += 1
                slope[x] = rate
                queues = _room(queues, counts, np.int64(1))
                _place(queues, counts, base, x, exact, slope[x], sizes[big], ver[x])
                continue
            score = exact  # still ahead of every other bound: no round trip through the heap
        # Restore x: its neighbour components (marked by the stamp above) and x become one.
        npieces, largest, grown = np.int64(0), 0, np.int64(1)
        stamp += 1
        for j in range(indptr[x], indptr[x + 1]):
            c = comp[indices[j]]
            if c != 0 and mark[c] != stamp:
                mark[c] = stamp
                pieces[npieces] = c
                npieces += 1
                grown += sizes[c]
                if largest == 0 or sizes[c] > sizes[largest]:
                    largest = c
        keep = largest if largest != 0 else x + 1  # x + 1 was never an id: x was forbidden
        kept = sizes[keep] if largest != 0 else np.int64(0)
        # The bounds of the candidates queued again below are taken before the merge, as
        # their slopes read them, and their slopes kept where big stays big.
        then_big, then_size = big, sizes[big]
        ver[x] += 1
        comp[x] = keep
        nxt[x] = head[keep]
        head[keep] = x
        for i in range(npieces):
            c = pieces[i]
            if c == keep:
                continue
            size = sizes[c]
            u = head[c]
            last = u
            while u >= 0:
                comp[u] = keep
                for j in range(indptr[u], indptr[u + 1]):
                    w = indices[j]
                    if comp[w] != 0:
                        continue
                    if dirty[w] != stamp:
                        dirty[w] = stamp
                        pieces[npieces] = -w - 1  # stashed after the pieces, queued below
                        npieces += 1
                        touched[w], touched_sq[w] = 0, 0
                    if seen[w] != c:
                        seen[w] = c
                        touched[w] += size
                        touched_sq[w] += size * size
                last = u
                u = nxt[u]
            nxt[last] = head[keep]
            head[keep] = head[c]
            head[c] = -1
            if c == big:  # every neighbour of big was next to a relabelled node: all queued
                big = keep  # again below
            sizes[c] = 0
        if keep != big and grown > 2 * sizes[big]:  # a new big one: the slopes read the old
            moved = np.int64(0)
            for q in range(1, SLOPES + 1):
                moved += counts[q]
            queues = _room(queues, counts, moved)
            cap = queues[0].shape[0] // (SLOPES + 1)
            for q in range(SLOPES + 1):
                for i in range(counts[q]):
                    w = queues[1][q * cap + i]
                    if queues[2][q * cap + i] == ver[w] and slope[w] != 0:
                        base[w] += slope[w] * sizes[big]
                        slope[w] = 0
                        if q > 0:
                            _push(queues, counts, np.int64(0), base[w], w, ver[w])
                if q > 0:
                    counts[q] = 0
            big = keep
        sizes[keep] = grown
        total += score
        forbidden -= 1
        queues = _room(queues, counts, npieces)
        for i in range(npieces):
            if pieces[i] >= 0:
                continue
            w = -pieces[i] - 1
            ver[w] += 1
            if indptr[w + 1] - indptr[w] > LAZY_DEGREE:
                # Its cost fell at most by the pairs between the pieces it touches and keep
                # (taken as touched too), and rose at least by the pairs of the nodes that
                # joined them (x, untouched pieces) with it and its other components; it is
                # next to keep now: its cost is grown at least.
                a = touched[w]
                fall = kept * a + (a * a - touched_sq[w]) // 2
                before = base[w] + slope[w] * then_size
                others = np.int64(0)  # its other components' nodes, at least
                if big != then_big:  # the slope read another component
                    slope[w] = 1 if keep == big else 0
                elif keep == big:  # its other components lost at most what it touched
                    others = max(slope[w] - 1 - a, 0) if slope[w] >= 1 else 0
                    slope[w] = 1 + others
                elif slope[w] >= 1:  # next to big, which the merge left alone
                    others = sizes[big]
                bound = max(before - fall + (grown - kept - a) * (1 + others), grown)
                _place(queues, counts, base, w, bound, slope[w], sizes[big], ver[w])
                continue
            stamp += 1
            cost, slope[w] = _join(indptr, indices, comp, sizes, mark, stamp, w, big)
            _place(queues, counts, base, w, cost, slope[w], sizes[big], ver[w])
    return total

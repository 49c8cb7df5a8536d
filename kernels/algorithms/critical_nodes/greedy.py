"""CND* on the CPU (Numba): the seeded greedy MIS and the paper's greedy growth back to n - k nodes
(near-linear: a heap of lower-bounded costs and small-to-large merges).

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


@numba.njit(cache=True)
def _heap_push(hscore, hnode, hver, count, score, node, ver) -> None:
    """Push onto the binary heap held in the first ``count`` slots (room checked by the caller)."""
    i = count
    while i > 0:
        up = (i - 1) >> 1
        if not _before(score, node, hscore[up], hnode[up]):
            break
        hscore[i], hnode[i], hver[i] = hscore[up], hnode[up], hver[up]
        i = up
    hscore[i], hnode[i], hver[i] = score, node, ver


@numba.njit(cache=True)
def _heap_pop(hscore, hnode, hver, count) -> None:
    """Drop the top of the heap of ``count`` entries (the caller read it first)."""
    last = count - 1
    score, node, ver = hscore[last], hnode[last], hver[last]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= last:
            break
        if child + 1 < last and _before(hscore[child + 1], hnode[child + 1], hscore[child],
                                        hnode[child]):
            child += 1
        if not _before(hscore[child], hnode[child], score, node):
            break
        hscore[i], hnode[i], hver[i] = hscore[child], hnode[child], hver[child]
        i = child
    hscore[i], hnode[i], hver[i] = score, node, ver


@numba.njit(cache=True)
def _heap_arrays(cap: int) -> tuple:
    """Key, node and version arrays of a heap of ``cap`` entries."""
    return np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)


@numba.njit(cache=True)
def _grown(score, node, ver, count, cap) -> tuple:
    """The heap's first ``count`` entries in arrays of ``cap``."""
    out = _heap_arrays(cap)
    for i in range(count):  # a loop, not slices: no compiled shape-mismatch message
        out[0][i], out[1][i], out[2][i] = score[i], node[i], ver[i]
    return out


@numba.njit(cache=True)
def _join_cost(indptr, indices, comp, sizes, mark, stamp, x) -> np.int64:
    """Pairs that restoring the forbidden node ``x`` adds (its neighbour components joined)."""
    joined, lost = np.int64(0), np.int64(0)
    for j in range(indptr[x], indptr[x + 1]):
        c = comp[indices[j]]
        if c != 0 and mark[c] != stamp:
            mark[c] = stamp
            joined += sizes[c]
            lost += pairs(sizes[c])
    return pairs(joined + 1) - lost


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
    size (CND*'s MIS: every kept node alone). The return is found in near-linear time instead
    of a rescan of every candidate:

    * The candidates sit in a heap by (cost, node) whose keys are lower bounds of their costs:
      the top is recomputed when popped (O(its degree)) and taken only when its key is exact.
      A cost only grows when a neighbouring component grows, so most keys stay valid bounds.
    * A cost can fall only when two of a candidate's neighbouring components merge; then it is
      next to a member of the smaller ones. A merge keeps the largest piece's id and relabels
      the others (small to large: O(V log V) relabels, O(E log V) neighbour scans in all), and
      every forbidden neighbour of a relabelled node gets its exact cost pushed again (older
      entries are voided by a version count).
    * Candidates next to one large component sit in a second heap, keyed by cost minus that
      component's size, which its growth does not lower: otherwise every candidate that joins
      the giant alone would go stale at each step (2-2.5x faster on ca-CondMat and dblp-2010).
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
    # Two heaps: ``h*`` keyed by a lower bound of the cost, ``g*`` (candidates next to the
    # component ``big``) by a lower bound of the cost minus the size of ``big``: that difference
    # does not fall as ``big`` grows, so the many candidates that join ``big`` alone (cost: its
    # size) keep exact keys while it grows instead of going stale every step.
    cap = 2 * forbidden + n + 16
    hscore, hnode, hver = _heap_arrays(cap)
    gscore, gnode, gver = _heap_arrays(cap)
    # int64 counts and versions, not the literal 0: each literal typing compiled the heap
    # functions once more
    count, gcount, stamp, big = np.int64(0), np.int64(0), 0, 0
    for x in range(n):
        if comp[x] == 0:
            stamp += 1
            _heap_push(hscore, hnode, hver, count,
                       _join_cost(indptr, indices, comp, sizes, mark, stamp, x), x, np.int64(0))
            count += 1
    pieces = np.empty(n, np.int64)
    while forbidden > k:
        while count > 0 and (hver[0] != ver[hnode[0]] or comp[hnode[0]] != 0):
            _heap_pop(hscore, hnode, hver, count)  # voided by a newer entry
            count -= 1
        while gcount > 0 and (gver[0] != ver[gnode[0]] or comp[gnode[0]] != 0):
            _heap_pop(gscore, gnode, gver, gcount)
            gcount -= 1
        if gcount > 0 and (count == 0 or _before(gscore[0] + sizes[big], gnode[0], hscore[0],
                                                   hnode[0])):
            score, x = gscore[0] + sizes[big], gnode[0]
            _heap_pop(gscore, gnode, gver, gcount)
            gcount -= 1
        else:
            score, x = hscore[0], hnode[0]
            _heap_pop(hscore, hnode, hver, count)
            count -= 1
        if count + gcount + n + 1 > cap:  # room for this step's pushes and a move of g to h
            cap = 2 * cap + n + 1
            hscore, hnode, hver = _grown(hscore, hnode, hver, count, cap)
            gscore, gnode, gver = _grown(gscore, gnode, gver, gcount, cap)
        stamp += 1
        exact = _join_cost(indptr, indices, comp, sizes, mark, stamp, x)
        if exact != score:  # its cost grew since the key was pushed
            ahead = count == 0 or _before(exact, x, hscore[0], hnode[0])
            if gcount > 0:
                ahead = ahead and _before(exact, x, gscore[0] + sizes[big], gnode[0])
            if not ahead:
                ver[x] += 1
                if big != 0 and mark[big] == stamp:
                    _heap_push(gscore, gnode, gver, gcount, exact - sizes[big], x, ver[x])
                    gcount += 1
                else:
                    _heap_push(hscore, hnode, hver, count, exact, x, ver[x])
                    count += 1
                continue
            score = exact  # still ahead of every other key: no round trip through a heap
        # Restore x: its neighbour components (marked by the stamp above) and x become one.
        npieces, largest, grown = 0, 0, np.int64(1)
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
        ver[x] += 1
        comp[x] = keep
        nxt[x] = head[keep]
        head[keep] = x
        for i in range(npieces):
            c = pieces[i]
            if c == keep:
                continue
            u = head[c]
            last = u
            while u >= 0:
                comp[u] = keep
                for j in range(indptr[u], indptr[u + 1]):
                    w = indices[j]
                    if comp[w] == 0 and dirty[w] != stamp:
                        dirty[w] = stamp
                        pieces[npieces] = -w - 1  # stashed after the pieces, costed below
                        npieces += 1
                last = u
                u = nxt[u]
            nxt[last] = head[keep]
            head[keep] = head[c]
            head[c] = -1
            if c == big:  # every neighbour of big was next to a relabelled node: all pushed
                big = keep  # again below, so g's keys are voided
            sizes[c] = 0
        if keep != big and grown > 2 * sizes[big]:  # a new big one: g's keys back to h
            for i in range(gcount):
                _heap_push(hscore, hnode, hver, count, gscore[i] + sizes[big], gnode[i], gver[i])
                count += 1
            gcount, big = 0, keep
        sizes[keep] = grown
        total += score
        forbidden -= 1
        for i in range(npieces):
            if pieces[i] >= 0:
                continue
            w = -pieces[i] - 1
            stamp += 1
            ver[w] += 1
            cost = _join_cost(indptr, indices, comp, sizes, mark, stamp, w)
            if mark[big] == stamp:
                _heap_push(gscore, gnode, gver, gcount, cost - sizes[big], w, ver[w])
                gcount += 1
            else:
                _heap_push(hscore, hnode, hver, count, cost, w, ver[w])
                count += 1
    return total

"""CPU engine of ``critical_nodes``: Numba versions of CND*, its multistart, and the swap search.

Node states and ids are the ones described in :mod:`graphgpu.kernels.algorithms.critical_nodes`.
Everything here is
deterministic for a given seed: priorities and random choices come from :func:`mix` (the
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
    order = np.argsort(prio)
    state = np.zeros(n, np.uint8)  # 0 undecided, 1 in, 2 out
    for i in range(n):
        v = order[i]
        if state[v] == 0:
            state[v] = 1
            for j in range(indptr[v], indptr[v + 1]):
                state[indices[j]] = 2
    return state == 1


@numba.njit(cache=True, nogil=True)
def cnd_star(indptr: np.ndarray, indices: np.ndarray, k: int, seed: np.uint64,
             comp: np.ndarray, sizes: np.ndarray) -> np.int64:
    """CND* (the paper's Fig. 2-5) from the seeded MIS; returns the objective.

    On return ``comp[v] == 0`` marks the k removed (forbidden) nodes and ``comp[v] = c > 0`` the
    component of a kept one, with ``sizes[c]`` its size (the paper's invariants). Components are
    numbered ``v + 1`` after the node that founded them. Each step rescores every forbidden node
    (O(V + E)) and takes the smallest score, the smallest node on ties; the union relabels in
    O(V): O(V (V + E)) in all.
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
    mark = np.zeros(n + 1, np.int64)
    stamp = 0
    total = np.int64(0)
    while forbidden > k:
        best, cand = np.int64(-1), -1
        for x in range(n):
            if comp[x] != 0:
                continue
            stamp += 1
            joined, lost = np.int64(0), np.int64(0)
            for j in range(indptr[x], indptr[x + 1]):
                c = comp[indices[j]]
                if c != 0 and mark[c] != stamp:
                    mark[c] = stamp
                    joined += sizes[c]
                    lost += pairs(sizes[c])
            score = total - lost + pairs(joined + 1)
            if cand < 0 or score < best:
                best, cand = score, x
        stamp += 1
        for j in range(indptr[cand], indptr[cand + 1]):
            c = comp[indices[j]]
            if c != 0:
                mark[c] = stamp
        united = cand + 1
        grown = np.int64(1)
        for v in range(n):
            c = comp[v]
            if c != 0 and mark[c] == stamp:
                comp[v] = united
                sizes[c] -= 1
                grown += 1
        comp[cand] = united
        sizes[united] = grown
        total = best
        forbidden -= 1
    return total


# ------------------------------------------------------------------------------------------------
# Swap search
# ------------------------------------------------------------------------------------------------
#
# State (one int64 array ``ctl`` holds the scalars): deleted[v]; label[v] (-1 when deleted) and
# size[label] of the residual components; a stack of free labels; the deleted nodes in ``dlist``
# (``dpos[v]`` their slots); ``tabu[v]``: the iteration before which v may not move again.

CTL_OBJ, CTL_FREE, CTL_ITER, CTL_RNG, CTL_BEST, CTL_BEST_ITER, CTL_STALL, CTL_STAMP = range(8)
CTL_SIZE = 8


@numba.njit(cache=True, inline="always")
def _rand(ctl: np.ndarray) -> np.uint64:
    ctl[CTL_RNG] = np.int64(np.uint64(ctl[CTL_RNG]) + GOLDEN)
    return mix(np.uint64(ctl[CTL_RNG]))


@numba.njit(cache=True, inline="always")
def _below(ctl: np.ndarray, bound: int) -> int:
    return int(_rand(ctl) % np.uint64(bound))


@numba.njit(cache=True, nogil=True)
def components(indptr: np.ndarray, indices: np.ndarray, deleted: np.ndarray, label: np.ndarray,
               size: np.ndarray, free: np.ndarray, queue: np.ndarray) -> tuple:
    """Label the residual graph's components; returns (objective, number of free labels)."""
    n = indptr.shape[0] - 1
    label[:] = -1
    size[:] = 0
    count = 0
    total = np.int64(0)
    for r in range(n):
        if deleted[r] or label[r] >= 0:
            continue
        label[r] = count
        queue[0] = r
        head, tail = 0, 1
        while head < tail:
            v = queue[head]
            head += 1
            for j in range(indptr[v], indptr[v + 1]):
                w = indices[j]
                if not deleted[w] and label[w] < 0:
                    label[w] = count
                    queue[tail] = w
                    tail += 1
        size[count] = tail
        total += pairs(np.int64(tail))
        count += 1
    nfree = 0
    for c in range(n - 1, count - 1, -1):
        free[nfree] = c
        nfree += 1
    return total, nfree


@numba.njit(cache=True, nogil=True)
def _relabel(indptr, indices, deleted, label, size, free, ctl, seen, queue, root) -> int:
    """Give ``root``'s component a fresh label (BFS); returns its size."""
    ctl[CTL_STAMP] += 1
    stamp = ctl[CTL_STAMP]
    ctl[CTL_FREE] -= 1
    fresh = free[ctl[CTL_FREE]]
    seen[root] = stamp
    queue[0] = root
    head, tail = 0, 1
    while head < tail:
        v = queue[head]
        head += 1
        label[v] = fresh
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if not deleted[w] and seen[w] != stamp:
                seen[w] = stamp
                queue[tail] = w
                tail += 1
    size[fresh] = tail
    return tail


@numba.njit(cache=True, nogil=True)
def _release(size, free, ctl, c) -> None:
    size[c] = 0
    free[ctl[CTL_FREE]] = c
    ctl[CTL_FREE] += 1


@numba.njit(cache=True, nogil=True)
def _pick_component(label, size, n, ctl, queue) -> int:
    """A random one of the large components (size at least midway between min and max)."""
    big, small = np.int64(0), np.int64(n + 1)
    for c in range(n):
        if size[c] > 0:
            big = max(big, size[c])
            small = min(small, size[c])
    if big < 2:
        return -1
    limit = max((big + small + 1) // 2, 2)
    count = 0
    for c in range(n):
        if size[c] >= limit:
            queue[count] = c
            count += 1
    return queue[_below(ctl, count)]


@numba.njit(cache=True, nogil=True)
def _best_cut(indptr, indices, deleted, label, size, tabu, ctl, root, queue, disc, low, sub,
              parent, edge, cut_pairs, cut_nodes) -> tuple:
    """Tarjan's DFS over ``root``'s component: the non-tabu node whose removal helps most.

    Removing v leaves the subtrees of its DFS children w with ``low[w] >= disc[v]`` as pieces,
    and the rest of the component as one more. Returns (node, pairs left in the component).
    """
    total = size[label[root]]
    disc[root] = 0
    low[root] = 0
    sub[root] = 1
    parent[root] = -1
    edge[root] = indptr[root]
    cut_pairs[root] = 0
    cut_nodes[root] = 0
    members = queue  # free again once the component is picked
    members[0] = root
    count, clock, v = 1, 1, root
    while True:  # iterative DFS: parent[] is the stack
        j = edge[v]
        if j < indptr[v + 1]:
            edge[v] = j + 1
            w = indices[j]
            if deleted[w]:
                continue
            if disc[w] < 0:
                disc[w] = clock
                low[w] = clock
                clock += 1
                sub[w] = 1
                parent[w] = v
                edge[w] = indptr[w]
                cut_pairs[w] = 0
                cut_nodes[w] = 0
                members[count] = w
                count += 1
                v = w
            elif w != parent[v]:
                low[v] = min(low[v], disc[w])
        else:
            p = parent[v]
            if p < 0:
                break
            sub[p] += sub[v]
            low[p] = min(low[p], low[v])
            if low[v] >= disc[p]:
                cut_pairs[p] += pairs(np.int64(sub[v]))
                cut_nodes[p] += sub[v]
            v = p
    best_v, best_left, ties = -1, np.int64(0), 0
    it = ctl[CTL_ITER]
    for i in range(count):
        v = members[i]
        left = cut_pairs[v] + pairs(total - 1 - cut_nodes[v])
        disc[v] = -1
        if tabu[v] > it:
            continue
        if best_v < 0 or left < best_left:
            best_v, best_left, ties = v, left, 1
        elif left == best_left:
            ties += 1
            if _below(ctl, ties) == 0:
                best_v = v
    return best_v, best_left


@numba.njit(cache=True, nogil=True)
def _delete(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue, v,
            nd) -> int:
    """Remove node v from the residual graph; returns the new number of deleted nodes."""
    old = label[v]
    before = pairs(size[old])
    deleted[v] = 1
    label[v] = -1
    dlist[nd] = v
    dpos[v] = nd
    after = np.int64(0)
    for j in range(indptr[v], indptr[v + 1]):
        w = indices[j]
        if not deleted[w] and label[w] == old:
            after += pairs(np.int64(_relabel(indptr, indices, deleted, label, size, free, ctl,
                                             seen, queue, w)))
    _release(size, free, ctl, old)  # only now: a fresh piece must not reuse the old label
    ctl[CTL_OBJ] += after - before
    return nd + 1


@numba.njit(cache=True, nogil=True)
def _restore(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue, u,
             nd) -> int:
    """Put node u back; returns the new number of deleted nodes."""
    last = dlist[nd - 1]
    dlist[dpos[u]] = last
    dpos[last] = dpos[u]
    dpos[u] = -1
    deleted[u] = 0
    ctl[CTL_STAMP] += 1
    stamp = ctl[CTL_STAMP]
    for j in range(indptr[u], indptr[u + 1]):
        w = indices[j]
        if not deleted[w]:
            c = label[w]
            if seen[c] != stamp:  # ``seen`` doubles as a per-label mark here
                seen[c] = stamp
                ctl[CTL_OBJ] -= pairs(size[c])
                _release(size, free, ctl, c)
    grown = _relabel(indptr, indices, deleted, label, size, free, ctl, seen, queue, u)
    ctl[CTL_OBJ] += pairs(np.int64(grown))
    return nd - 1


@numba.njit(cache=True, nogil=True)
def _cheapest_restore(indptr, indices, deleted, label, size, dlist, nd, tabu, ctl,
                      mark) -> int:
    """The non-tabu deleted node whose return adds the fewest pairs (random among ties)."""
    it = ctl[CTL_ITER]
    best_u, best_cost, ties = -1, np.int64(0), 0
    for i in range(nd):
        u = dlist[i]
        if tabu[u] > it:
            continue
        ctl[CTL_STAMP] += 1
        stamp = ctl[CTL_STAMP]
        joined, lost = np.int64(0), np.int64(0)
        for j in range(indptr[u], indptr[u + 1]):
            w = indices[j]
            if not deleted[w]:
                c = label[w]
                if mark[c] != stamp:
                    mark[c] = stamp
                    joined += size[c]
                    lost += pairs(size[c])
        cost = pairs(joined + 1) - lost
        if best_u < 0 or cost < best_cost:
            best_u, best_cost, ties = u, cost, 1
        elif cost == best_cost:
            ties += 1
            if _below(ctl, ties) == 0:
                best_u = u
    if best_u < 0:  # everything tabu: the oldest choice is as good as any
        best_u = dlist[_below(ctl, nd)]
    return best_u


@numba.njit(cache=True, nogil=True)
def _load(indptr, indices, nodes, deleted, label, size, free, dlist, dpos, ctl, queue) -> None:
    deleted[:] = 0
    dpos[:] = -1
    for i in range(nodes.shape[0]):
        deleted[nodes[i]] = 1
        dlist[i] = nodes[i]
        dpos[nodes[i]] = i
    obj, nfree = components(indptr, indices, deleted, label, size, free, queue)
    ctl[CTL_OBJ] = obj
    ctl[CTL_FREE] = nfree


@numba.njit(cache=True, nogil=True)
def swap_search(indptr, indices, k, iterations, patience, ctl, deleted, label, size, free, dlist,
                dpos, tabu, best, seen, mark, queue, disc, low, sub, parent, edge, cut_pairs,
                cut_nodes) -> None:
    """Run ``iterations`` swap moves from the state in the arrays (resumable).

    A move removes the best non-tabu node of a random large component (exact gain by Tarjan)
    and puts back the non-tabu deleted node that adds the fewest pairs: the component-based
    neighbourhood of Zhou, Hao & Glover's memetic CNP search, with a short random tabu tenure
    on both nodes. After ``patience`` moves without a new best, the search restarts from the
    best set with a few random swaps (iterated local search).
    """
    n = indptr.shape[0] - 1
    for _ in range(iterations):
        if ctl[CTL_BEST] == 0:
            return
        it = ctl[CTL_ITER]
        c = _pick_component(label, size, n, ctl, queue)
        if c < 0:
            return
        root = -1
        for v in range(n):  # any member; components are small next to the scans below
            if label[v] == c:
                root = v
                break
        v, _left = _best_cut(indptr, indices, deleted, label, size, tabu, ctl, root, queue, disc,
                             low, sub, parent, edge, cut_pairs, cut_nodes)
        if v < 0:
            v = root
        nd = _delete(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue,
                     v, k)
        tabu[v] = it + 1 + _below(ctl, 3)  # stays out: may not be restored right away
        u = _cheapest_restore(indptr, indices, deleted, label, size, dlist, nd, tabu, ctl, mark)
        _restore(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue, u,
                 nd)
        tabu[u] = it + 1 + _below(ctl, 3 + k // 10)
        ctl[CTL_ITER] = it + 1
        if ctl[CTL_OBJ] < ctl[CTL_BEST]:
            ctl[CTL_BEST] = ctl[CTL_OBJ]
            ctl[CTL_BEST_ITER] = it + 1
            ctl[CTL_STALL] = 0
            best[:k] = dlist[:k]
        else:
            ctl[CTL_STALL] += 1
        if ctl[CTL_STALL] >= patience:
            ctl[CTL_STALL] = 0
            _load(indptr, indices, best, deleted, label, size, free, dlist, dpos, ctl, queue)
            for _s in range(1 + _below(ctl, 1 + k // 20)):
                x = _below(ctl, n)
                if deleted[x]:
                    continue
                nd = _delete(indptr, indices, deleted, label, size, free, dlist, dpos, ctl,
                             seen, queue, x, k)
                y = dlist[_below(ctl, k)]  # never x itself: x sits in slot k
                _restore(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                         queue, y, nd)
                tabu[y] = ctl[CTL_ITER] + 2


@numba.njit(cache=True, nogil=True)
def greedy_removal(indptr, indices, k, ctl, deleted, label, size, free, dlist, dpos, tabu, seen,
                   queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes) -> None:
    """k times, delete the node whose removal leaves the fewest pairs (exact, by Tarjan on each
    component); the deleted nodes end in ``dlist``. A start that suits the swap search better
    than CND* where no single node splits much (cycles, small worlds)."""
    n = indptr.shape[0] - 1
    _load(indptr, indices, dlist[:0], deleted, label, size, free, dlist, dpos, ctl, queue)
    first = np.full(n, -1, np.int64)
    for nd in range(k):
        first[:] = -1
        for v in range(n):
            if not deleted[v] and first[label[v]] < 0:
                first[label[v]] = v
        best_v, best_gain = -1, np.int64(-1)
        for c in range(n):
            if first[c] < 0 or size[c] < 2:
                continue
            v, left = _best_cut(indptr, indices, deleted, label, size, tabu, ctl, first[c],
                                queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes)
            gain = pairs(size[c]) - left
            if gain > best_gain:
                best_v, best_gain = v, gain
        if best_v < 0:  # only isolated nodes left: any of them
            for v in range(n):
                if not deleted[v]:
                    best_v = v
                    break
        _delete(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue,
                best_v, nd)


class SearchState:
    """The arrays of one swap-search chain, started from the k nodes ``start``.

    Parameters
    ----------
    indptr, indices : ndarray
        The graph's CSR.
    start : ndarray of int or None
        k distinct internal node ids; None: start from :func:`greedy_removal`.
    seed : int
        Seed of the chain's random choices.
    k : int, optional
        Nodes to delete when ``start`` is None.
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, start: np.ndarray | None,
                 seed: int, k: int | None = None) -> None:
        n = indptr.shape[0] - 1
        self.indptr, self.indices = indptr, indices
        self.k = int(start.shape[0]) if start is not None else int(k)
        i32 = np.int32
        self.ctl = np.zeros(CTL_SIZE, np.int64)
        self.deleted = np.zeros(n, np.uint8)
        self.label = np.empty(n, i32)
        self.size = np.zeros(n, np.int64)
        self.free = np.empty(n, i32)
        self.dlist = np.empty(self.k + 1, i32)
        self.dpos = np.empty(n, i32)
        self.tabu = np.zeros(n, np.int64)
        self.best = np.asarray(start if start is not None else np.zeros(self.k), dtype=i32)
        self.seen = np.zeros(n, np.int64)
        self.mark = np.zeros(n, np.int64)
        self.queue = np.empty(n, i32)
        self.scratch = [np.full(n, -1, i32) for _ in range(5)]  # disc, low, sub, parent, edge
        self.cut = (np.zeros(n, np.int64), np.zeros(n, np.int64))
        self.ctl[CTL_RNG] = np.int64(np.uint64(mix(np.uint64(seed))) >> np.uint64(1))
        if start is None:
            greedy_removal(indptr, indices, self.k, self.ctl, self.deleted, self.label,
                           self.size, self.free, self.dlist, self.dpos, self.tabu, self.seen,
                           self.queue, *self.scratch, *self.cut)
            self.best = self.dlist[:self.k].copy()
        _load(indptr, indices, self.best, self.deleted, self.label, self.size, self.free,
              self.dlist, self.dpos, self.ctl, self.queue)
        self.ctl[CTL_BEST] = self.ctl[CTL_OBJ]

    @property
    def best_objective(self) -> int:
        return int(self.ctl[CTL_BEST])

    @property
    def iterations(self) -> int:
        return int(self.ctl[CTL_ITER])

    def run(self, iterations: int, patience: int) -> None:
        """Run up to ``iterations`` more moves (fewer when the objective reaches 0)."""
        if self.k == 0:
            return
        swap_search(self.indptr, self.indices, self.k, iterations, patience, self.ctl,
                    self.deleted, self.label, self.size, self.free, self.dlist, self.dpos,
                    self.tabu, self.best, self.seen, self.mark, self.queue, *self.scratch,
                    *self.cut)

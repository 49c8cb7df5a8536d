"""Swap search on the CPU (Numba): residual components kept incrementally under node moves.

The component-based neighbourhood of Zhou, Hao & Glover's memetic CNP search: remove the best
node of a large component (exact gain from Tarjan's articulation points), put back the deleted
node whose return joins the fewest pairs; on a giant component several nodes per walk. The
moves themselves (and the component state they keep) are in
:mod:`graphgpu.kernels.algorithms.critical_nodes.moves`.
"""

from __future__ import annotations

import numba
import numpy as np

from graphgpu.kernels.algorithms.critical_nodes.greedy import mix, pairs
from graphgpu.kernels.algorithms.critical_nodes.moves import (
    CTL_BEST,
    CTL_BEST_ITER,
    CTL_EPOCH,
    CTL_ITER,
    CTL_OBJ,
    CTL_RNG,
    CTL_SIZE,
    CTL_STALL,
    CTL_STAMP,
    best_cut,
    delete_node,
    delete_split,
    delete_whole,
    load_set,
    rand_below,
    relabel,
    release,
    restore_cost,
    restore_node,
)
from graphgpu.kernels.algorithms.critical_nodes.tuning import BLOCK_MAX, BLOCK_NODES, RANDOM_MOVE


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
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
    return queue[rand_below(ctl, count)]


@numba.njit(cache=True, inline="always")
def void_label(ctl, changed, c) -> None:
    """Mark label ``c`` changed now: the cached return costs next to it are read again."""
    ctl[CTL_STAMP] += 1
    changed[c] = ctl[CTL_STAMP]


@numba.njit(cache=True, inline="always")
def void_all(ctl) -> None:
    """Every cached return cost void (the state was reloaded or changed wholesale)."""
    ctl[CTL_STAMP] += 1
    ctl[CTL_EPOCH] = ctl[CTL_STAMP]


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def block_delete(indptr, indices, k, block, ctl, deleted, label, size, free, dlist, dpos, tabu,
                 seen, queue, cut_pairs, c, it, shake, top, scored, changed) -> int:
    """Delete the ``block`` non-tabu members of component ``c`` whose single removals leave the
    fewest pairs (by the :func:`best_cut` walk just made, which left its members in ``queue``
    and their pairs left in ``cut_pairs``; ties: the higher degree, whose removal most
    often opens later cuts in a component without articulation points, then the walk's
    order), then relabel the component's pieces once.

    One walk and one relabelling for ``block`` removals instead of one each: on a giant
    component (thousands of nodes, about 1.5 ms a walk on ca-CondMat) the search exchanges
    several nodes per walk. The later picks' gains are estimates (they are far apart in a
    large component, so mostly exact). ``shake``: one pick in ``RANDOM_MOVE`` is a random
    member instead (the memetic improvement's diversification). The ``block`` best members
    are ranked in one pass into ``top`` (a pick skips those a random pick took): at most
    ``block`` deletions never need more. Returns the new number of deleted nodes (k when
    every member is tabu: nothing changes). The picks' and ``c``'s cached return costs are
    voided (``scored``, ``changed``: see :func:`block_restore`).
    """
    total = size[c]
    ranked = 0
    for i in range(total):  # insertion into the sorted ``top``: few members enter it
        v = queue[i]
        if deleted[v] or tabu[v] > it:
            continue
        left, deg = cut_pairs[v], indptr[v + 1] - indptr[v]
        at = ranked
        while at > 0:  # after the equal keys already in: the walk's order among ties
            u = top[at - 1]
            if cut_pairs[u] < left or (cut_pairs[u] == left
                                       and indptr[u + 1] - indptr[u] >= deg):
                break
            at -= 1
        if at >= block:
            continue
        for j in range(min(ranked, block - 1), at, -1):
            top[j] = top[j - 1]
        top[at] = v
        ranked = min(ranked + 1, block)
    nd, head = k, 0
    for _b in range(block):
        while head < ranked and deleted[top[head]]:  # taken by a random pick
            head += 1
        if head == ranked:
            break
        pick = top[head]
        if shake and RANDOM_MOVE > 0 and rand_below(ctl, RANDOM_MOVE) == 0:
            w = queue[rand_below(ctl, total)]
            if not deleted[w] and tabu[w] <= it:
                pick = w
        deleted[pick] = 1
        dlist[nd] = pick
        dpos[pick] = nd
        scored[pick] = -1
        nd += 1
        tabu[pick] = it + 1 + rand_below(ctl, 3)
    if nd == k:
        return k
    void_label(ctl, changed, c)
    after = np.int64(0)
    for i in range(k, nd):  # the pieces, each walked once (a walk gives its nodes new labels)
        v = dlist[i]
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if not deleted[w] and label[w] == c:
                after += pairs(np.int64(relabel(indptr, indices, deleted, label, size, free,
                                                 ctl, seen, queue, w)))
        label[v] = -1
    release(size, free, ctl, np.int32(c))  # a label, as the moves' calls: one compile
    ctl[CTL_OBJ] += after - pairs(np.int64(total))
    return nd


@numba.njit(cache=True, nogil=True)
def block_restore(indptr, indices, k, nd, it, ctl, deleted, label, size, free, dlist, dpos,
                  tabu, seen, mark, queue, cost, scored, off, cnt, nl, changed, grown) -> int:
    """Return deleted nodes until k are left, each time the one :func:`cheapest_restore`
    would pick (the same costs, scan order and random draws among ties, so the same moves),
    but each candidate's neighbours are read once per block: on ca-CondMat a scan of the
    ~2,300 deleted hubs' neighbours took 70% of a block move's time, once per returned node.

    ``scored[u]``: the stamp at which u's ``cost`` was taken (-1: a neighbour came back, or
    u was deleted since; at most ``ctl[CTL_EPOCH]``: the state was reloaded since), its
    distinct neighbouring labels at ``nl[off[u]:off[u] + cnt[u]]``. A return merges the
    labels next to it into the largest: ``changed[c]`` (merged away, or reused from the free
    list) and ``grown[c]`` (the largest, its size changed) are the stamps at which that last
    happened; a deletion marks its node's old label changed (:func:`void_label`). A
    candidate next to a changed label is read again, one next to a grown label only
    recounted from its labels. The costs stay cached from one call to the next: a move
    reads again only the candidates next to what it changed (on ca-CondMat, ~2,300 deleted
    hubs, the first scan of each call had taken most of a move's time). Returns k.
    """
    while nd > k:
        best_u, best_cost, ties = -1, np.int64(0), 0
        for i in range(nd):
            u = dlist[i]
            if tabu[u] > it:
                continue
            when = scored[u]
            state = 0 if when > ctl[CTL_EPOCH] else 2  # 1: recount, 2: read again
            off[u] = indptr[u]  # room for every label it may see
            for j in range(off[u], off[u] + cnt[u]):
                if state == 2:
                    break
                if changed[nl[j]] > when:
                    state = 2
                elif grown[nl[j]] > when:
                    state = 1
            if state == 2:
                cost[u], cnt[u] = restore_cost(indptr, indices, deleted, label, size, ctl, mark,
                                               u, nl, off[u])
                scored[u] = ctl[CTL_STAMP]
            elif state == 1:  # the same distinct labels, one of them larger
                joined, lost = np.int64(0), np.int64(0)
                for j in range(off[u], off[u] + cnt[u]):
                    joined += size[nl[j]]
                    lost += pairs(size[nl[j]])
                cost[u] = pairs(joined + 1) - lost
                ctl[CTL_STAMP] += 1
                scored[u] = ctl[CTL_STAMP]
            if best_u < 0 or cost[u] < best_cost:
                best_u, best_cost, ties = u, cost[u], 1
            elif cost[u] == best_cost:
                ties += 1
                if rand_below(ctl, ties) == 0:
                    best_u = u
        if best_u < 0:  # everything tabu: the oldest choice is as good as any
            best_u = dlist[rand_below(ctl, nd)]
        ctl[CTL_STAMP] += 1
        step = ctl[CTL_STAMP]
        big = -1  # the label :func:`restore_node` keeps: the first largest
        for j in range(indptr[best_u], indptr[best_u + 1]):
            w = indices[j]
            if not deleted[w] and (big < 0 or size[label[w]] > size[big]):
                big = label[w]
        for j in range(indptr[best_u], indptr[best_u + 1]):
            w = indices[j]
            if deleted[w]:
                scored[w] = -1  # sees best_u's component from now on
            elif label[w] != big:
                changed[label[w]] = step  # merged into ``big``
        nd = restore_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                          queue, best_u, nd)
        if big < 0:
            changed[label[best_u]] = step  # a label taken from the free list: reused
        else:
            grown[big] = step
        tabu[best_u] = it + 1 + rand_below(ctl, 3 + k // 10)
    return nd


@numba.njit(cache=True, nogil=True)
def swap_search(indptr, indices, k, iterations, patience, ctl, deleted, label, size, free, dlist,
                dpos, tabu, best, seen, mark, queue, disc, low, sub, parent, edge, cut_pairs,
                cut_nodes, top, cost, scored, off, cnt, nl, changed, grown) -> None:
    """Run ``iterations`` swap moves from the state in the arrays (resumable).

    A move removes the best non-tabu node of a random large component (exact gain by Tarjan)
    and puts back the non-tabu deleted node that adds the fewest pairs: the component-based
    neighbourhood of Zhou, Hao & Glover's memetic CNP search, with a short random tabu tenure
    on both nodes. After ``patience`` exchanges without a new best, the search restarts from
    the best set with a few random swaps (iterated local search); a negative ``patience`` ends
    the run instead once ``-patience`` exchanges pass without a new best (the memetic
    improvement).
    On a component of ``BLOCK_NODES * b`` nodes or more a move exchanges b nodes (at most
    ``BLOCK_MAX``) per walk (:func:`block_delete`, then b cheapest returns,
    :func:`block_restore`): on ca-CondMat (k = 2,313, a giant of ~9,500 nodes) a walk and a
    scan of the deleted nodes each cost about a millisecond.
    """
    n = indptr.shape[0] - 1
    for _ in range(iterations):
        if ctl[CTL_BEST] == 0 or (patience < 0 and ctl[CTL_STALL] >= -patience):
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
        v, left = best_cut(indptr, indices, deleted, label, size, tabu, ctl, root, queue, disc,
                           low, sub, parent, edge, cut_pairs, cut_nodes)
        block = min(size[c] // BLOCK_NODES, BLOCK_MAX)
        swaps = 1
        if block > 1:  # a giant component: several exchanges per walk
            nd = block_delete(indptr, indices, k, block, ctl, deleted, label, size, free, dlist,
                              dpos, tabu, seen, queue, cut_pairs, c, it, patience < 0, top,
                              scored, changed)
            block_restore(indptr, indices, k, nd, it, ctl, deleted, label, size, free, dlist,
                          dpos, tabu, seen, mark, queue, cost, scored, off, cnt, nl, changed,
                          grown)
            swaps = max(nd - k, 1)
        else:
            if patience < 0 and RANDOM_MOVE > 0 and rand_below(ctl, RANDOM_MOVE) == 0:
                w = queue[rand_below(ctl, size[c])]  # best_cut leaves the members in ``queue``
                if tabu[w] <= it:
                    v, left = w, np.int64(-1)
            if v >= 0 and left == pairs(size[c] - 1):  # no split: the labels stay as they are
                nd = delete_whole(deleted, label, size, free, dlist, dpos, ctl, v, k)
            elif v >= 0 and left >= 0:  # the walk's pieces: only the smaller ones relabelled
                nd = delete_split(indptr, indices, deleted, label, size, free, dlist, dpos, ctl,
                                  seen, queue, low, sub, parent, edge, v, k)
            else:
                if v < 0:
                    v = root
                nd = delete_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl,
                                 seen, queue, v, k)
            tabu[v] = it + 1 + rand_below(ctl, 3)  # stays out: may not be restored right away
            scored[v] = -1
            void_label(ctl, changed, c)
            # The cheapest return (:func:`cheapest_restore`'s pick), from the cached costs.
            block_restore(indptr, indices, k, nd, it, ctl, deleted, label, size, free, dlist,
                          dpos, tabu, seen, mark, queue, cost, scored, off, cnt, nl, changed,
                          grown)
        ctl[CTL_ITER] = it + 1
        if ctl[CTL_OBJ] < ctl[CTL_BEST]:
            ctl[CTL_BEST] = ctl[CTL_OBJ]
            ctl[CTL_BEST_ITER] = it + 1
            ctl[CTL_STALL] = 0
            for i in range(k):  # a loop, not slices: no compiled shape-mismatch message
                best[i] = dlist[i]
        else:  # patience counts exchanges: a block move uses it up b times as fast
            ctl[CTL_STALL] += swaps
        if 0 < patience <= ctl[CTL_STALL]:
            ctl[CTL_STALL] = 0
            load_set(indptr, indices, best, deleted, label, size, free, dlist, dpos, ctl, queue)
            for _s in range(1 + rand_below(ctl, 1 + k // 20)):
                x = rand_below(ctl, n)
                if deleted[x]:
                    continue
                nd = delete_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl,
                             seen, queue, np.int64(x), k)  # int64 as the other calls
                y = dlist[rand_below(ctl, k)]  # never x itself: x sits in slot k
                restore_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                         queue, np.int64(y), nd)
                tabu[y] = ctl[CTL_ITER] + 2
            void_all(ctl)


class SearchState:
    """The arrays of one swap-search chain, started from the k nodes ``start``.

    Parameters
    ----------
    indptr, indices : ndarray
        The graph's CSR.
    start : ndarray of int
        k distinct internal node ids.
    seed : int
        Seed of the chain's random choices.
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, start: np.ndarray,
                 seed: int) -> None:
        n = indptr.shape[0] - 1
        self.indptr, self.indices = indptr, indices
        self.k = int(start.shape[0])
        i32 = np.int32
        self.ctl = np.zeros(CTL_SIZE, np.int64)
        self.deleted = np.zeros(n, np.uint8)
        self.label = np.empty(n, i32)
        self.size = np.zeros(n, np.int64)
        self.free = np.empty(n, i32)
        self.dlist = np.empty(self.k + BLOCK_MAX, i32)  # room for a block
        self.dpos = np.empty(n, i32)
        self.tabu = np.zeros(n, np.int64)
        self.best = np.array(start, dtype=i32)
        self.seen = np.zeros(n, np.int64)
        self.mark = np.zeros(n, np.int64)
        self.queue = np.empty(n, i32)
        self.scratch = [np.full(n, -1, i32) for _ in range(5)]  # disc, low, sub, parent, edge
        self.cut = (np.zeros(n, np.int64), np.zeros(n, np.int64))
        # The block moves' ranking and return costs (:func:`block_restore`).
        self.block = (np.empty(BLOCK_MAX, i32), np.zeros(n, np.int64), np.zeros(n, np.int64),
                      np.zeros(n, np.int64), np.zeros(n, i32), np.empty(indices.shape[0], i32),
                      np.zeros(n, np.int64), np.zeros(n, np.int64))
        self.ctl[CTL_RNG] = np.int64(np.uint64(mix(np.uint64(seed))) >> np.uint64(1))
        self.reset(self.best)

    def reset(self, start: np.ndarray) -> None:
        """Start the chain over from the k nodes ``start`` (arrays and random stream kept)."""
        self.best[:] = start
        self.tabu[:] = 0
        self.ctl[CTL_STALL] = 0
        void_all(self.ctl)
        load_set(self.indptr, self.indices, self.best, self.deleted, self.label, self.size,
                 self.free, self.dlist, self.dpos, self.ctl, self.queue)
        self.ctl[CTL_BEST] = self.ctl[CTL_OBJ]

    @property
    def best_objective(self) -> int:
        return int(self.ctl[CTL_BEST])

    @property
    def stalled(self) -> int:
        """Exchanges since the last new best (a block move counts its b)."""
        return int(self.ctl[CTL_STALL])

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
                    *self.cut, *self.block)

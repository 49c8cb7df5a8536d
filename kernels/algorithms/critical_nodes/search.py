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
    CTL_ITER,
    CTL_OBJ,
    CTL_RNG,
    CTL_SIZE,
    CTL_STALL,
    best_cut,
    cheapest_restore,
    delete_node,
    delete_split,
    delete_whole,
    load_set,
    rand_below,
    relabel,
    release,
    restore_node,
)
from graphgpu.kernels.algorithms.critical_nodes.tuning import BLOCK_MAX, BLOCK_NODES, RANDOM_MOVE


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
    return queue[rand_below(ctl, count)]


@numba.njit(cache=True, nogil=True)
def block_delete(indptr, indices, k, block, ctl, deleted, label, size, free, dlist, dpos, tabu,
                 seen, queue, cut_pairs, c, it, shake) -> int:
    """Delete the ``block`` non-tabu members of component ``c`` whose single removals leave the
    fewest pairs (by the :func:`best_cut` walk just made, which left its members in ``queue``
    and their pairs left in ``cut_pairs``; ties: the higher degree, whose removal most
    often opens later cuts in a component without articulation points), then relabel the
    component's pieces once.

    One walk and one relabelling for ``block`` removals instead of one each: on a giant
    component (thousands of nodes, about 1.5 ms a walk on ca-CondMat) the search exchanges
    several nodes per walk. The later picks' gains are estimates (they are far apart in a
    large component, so mostly exact). ``shake``: one pick in ``RANDOM_MOVE`` is a random
    member instead (the memetic improvement's diversification). Returns the new number of
    deleted nodes (k when every member is tabu: nothing changes).
    """
    total = size[c]
    nd = k
    for _b in range(block):
        pick, pick_left, pick_deg = -1, np.int64(0), 0
        for i in range(total):
            v = queue[i]
            if deleted[v] or tabu[v] > it:
                continue
            deg = indptr[v + 1] - indptr[v]
            if (pick < 0 or cut_pairs[v] < pick_left
                    or (cut_pairs[v] == pick_left and deg > pick_deg)):
                pick, pick_left, pick_deg = v, cut_pairs[v], deg
        if pick < 0:
            break
        if shake and RANDOM_MOVE > 0 and rand_below(ctl, RANDOM_MOVE) == 0:
            w = queue[rand_below(ctl, total)]
            if not deleted[w] and tabu[w] <= it:
                pick = w
        deleted[pick] = 1
        dlist[nd] = pick
        dpos[pick] = nd
        nd += 1
        tabu[pick] = it + 1 + rand_below(ctl, 3)
    if nd == k:
        return k
    after = np.int64(0)
    for i in range(k, nd):  # the pieces, each walked once (a walk gives its nodes new labels)
        v = dlist[i]
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if not deleted[w] and label[w] == c:
                after += pairs(np.int64(relabel(indptr, indices, deleted, label, size, free,
                                                 ctl, seen, queue, w)))
        label[v] = -1
    release(size, free, ctl, c)
    ctl[CTL_OBJ] += after - pairs(np.int64(total))
    return nd


@numba.njit(cache=True, nogil=True)
def swap_search(indptr, indices, k, iterations, patience, ctl, deleted, label, size, free, dlist,
                dpos, tabu, best, seen, mark, queue, disc, low, sub, parent, edge, cut_pairs,
                cut_nodes) -> None:
    """Run ``iterations`` swap moves from the state in the arrays (resumable).

    A move removes the best non-tabu node of a random large component (exact gain by Tarjan)
    and puts back the non-tabu deleted node that adds the fewest pairs: the component-based
    neighbourhood of Zhou, Hao & Glover's memetic CNP search, with a short random tabu tenure
    on both nodes. After ``patience`` moves without a new best, the search restarts from the
    best set with a few random swaps (iterated local search); a negative ``patience`` ends the
    run instead once ``-patience`` moves pass without a new best (the memetic improvement).
    On a component of ``BLOCK_NODES * b`` nodes or more a move exchanges b nodes (at most
    ``BLOCK_MAX``) per walk (:func:`block_delete`, then b cheapest returns): on ca-CondMat
    (k = 2,313, a giant of ~9,500 nodes) the walk is most of a move's ~2 ms.
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
        if block > 1:  # a giant component: several exchanges per walk
            nd = block_delete(indptr, indices, k, block, ctl, deleted, label, size, free, dlist,
                              dpos, tabu, seen, queue, cut_pairs, c, it, patience < 0)
            while nd > k:
                u = cheapest_restore(indptr, indices, deleted, label, size, dlist, nd, tabu, ctl,
                                     mark)
                nd = restore_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl,
                                  seen, queue, u, nd)
                tabu[u] = it + 1 + rand_below(ctl, 3 + k // 10)
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
            u = cheapest_restore(indptr, indices, deleted, label, size, dlist, nd, tabu, ctl, mark)
            restore_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue,
                         u, nd)
            tabu[u] = it + 1 + rand_below(ctl, 3 + k // 10)
        ctl[CTL_ITER] = it + 1
        if ctl[CTL_OBJ] < ctl[CTL_BEST]:
            ctl[CTL_BEST] = ctl[CTL_OBJ]
            ctl[CTL_BEST_ITER] = it + 1
            ctl[CTL_STALL] = 0
            best[:k] = dlist[:k]
        else:
            ctl[CTL_STALL] += 1
        if 0 < patience <= ctl[CTL_STALL]:
            ctl[CTL_STALL] = 0
            load_set(indptr, indices, best, deleted, label, size, free, dlist, dpos, ctl, queue)
            for _s in range(1 + rand_below(ctl, 1 + k // 20)):
                x = rand_below(ctl, n)
                if deleted[x]:
                    continue
                nd = delete_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl,
                             seen, queue, x, k)
                y = dlist[rand_below(ctl, k)]  # never x itself: x sits in slot k
                restore_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                         queue, y, nd)
                tabu[y] = ctl[CTL_ITER] + 2


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
        self.ctl[CTL_RNG] = np.int64(np.uint64(mix(np.uint64(seed))) >> np.uint64(1))
        self.reset(self.best)

    def reset(self, start: np.ndarray) -> None:
        """Start the chain over from the k nodes ``start`` (arrays and random stream kept)."""
        self.best[:] = start
        self.tabu[:] = 0
        self.ctl[CTL_STALL] = 0
        load_set(self.indptr, self.indices, self.best, self.deleted, self.label, self.size,
                 self.free, self.dlist, self.dpos, self.ctl, self.queue)
        self.ctl[CTL_BEST] = self.ctl[CTL_OBJ]

    @property
    def best_objective(self) -> int:
        return int(self.ctl[CTL_BEST])

    @property
    def stalled(self) -> int:
        """Moves since the last new best."""
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
                    *self.cut)

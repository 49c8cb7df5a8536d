"""Residual components under node moves (Numba): the incremental state the swap search, the
greedy completion and the memetic search share.

State (one int64 array ``ctl`` holds the scalars): deleted[v]; label[v] (-1 when deleted) and
size[label] of the residual components; a stack of free labels; the deleted nodes in ``dlist``
(``dpos[v]`` their slots); ``tabu[v]``: the iteration before which v may not move again. Random
choices come from :func:`graphgpu.kernels.algorithms.critical_nodes.greedy.mix`, so a seed fixes
them.
"""

from __future__ import annotations

import numba
import numpy as np

from graphgpu.kernels.algorithms.common.bfs import label_components
from graphgpu.kernels.algorithms.critical_nodes.greedy import GOLDEN, mix, pairs

CTL_OBJ, CTL_FREE, CTL_ITER, CTL_RNG, CTL_BEST, CTL_BEST_ITER, CTL_STALL, CTL_STAMP = range(8)
#: The stamp before which every cached return cost of the swap search is void (a reload).
CTL_EPOCH = 8
CTL_SIZE = 9


@numba.njit(cache=True, inline="always")
def rand_next(ctl: np.ndarray) -> np.uint64:
    ctl[CTL_RNG] = np.int64(np.uint64(ctl[CTL_RNG]) + GOLDEN)
    return mix(np.uint64(ctl[CTL_RNG]))


@numba.njit(cache=True, inline="always")
def rand_below(ctl: np.ndarray, bound: int) -> int:
    return int(rand_next(ctl) % np.uint64(bound))


@numba.njit(cache=True, nogil=True)
def components(indptr: np.ndarray, indices: np.ndarray, deleted: np.ndarray, label: np.ndarray,
               size: np.ndarray, free: np.ndarray, queue: np.ndarray) -> tuple:
    """Label the residual graph's components; returns (objective, number of free labels)."""
    n = indptr.shape[0] - 1
    size[:] = 0
    for v in range(n):
        # A label no component gets: the shared search neither starts at nor enters these.
        label[v] = n if deleted[v] else -1
    count = label_components(indptr, indices, label, size, queue)
    total = np.int64(0)
    for v in range(n):
        if deleted[v]:
            label[v] = -1
    for c in range(count):
        total += pairs(np.int64(size[c]))
    nfree = 0
    for c in range(n - 1, count - 1, -1):
        free[nfree] = c
        nfree += 1
    return total, nfree


@numba.njit(cache=True, nogil=True)
def relabel(indptr, indices, deleted, label, size, free, ctl, seen, queue, root) -> int:
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
def release(size, free, ctl, c) -> None:
    size[c] = 0
    free[ctl[CTL_FREE]] = c
    ctl[CTL_FREE] += 1


@numba.njit(cache=True, nogil=True)
def best_cut(indptr, indices, deleted, label, size, tabu, ctl, root, queue, disc, low, sub,
             parent, edge, cut_pairs, cut_nodes) -> tuple:
    """Tarjan's DFS over ``root``'s component: the non-tabu node whose removal helps most.

    Removing v leaves the subtrees of its DFS children w with ``low[w] >= disc[v]`` as pieces,
    and the rest of the component as one more. Returns (node, pairs left in the component).
    The walk's ``low``, ``sub``, ``parent`` and (in ``edge``) discovery times stay valid for
    the component's members until it changes (see :func:`delete_split`).
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
        edge[v] = disc[v]  # kept for :func:`delete_split` until the next walk of this component
        cut_pairs[v] = left  # and each member's pairs left (the batched completion ranks them)
        disc[v] = -1
        if tabu[v] > it:
            continue
        if best_v < 0 or left < best_left:
            best_v, best_left, ties = v, left, 1
        elif left == best_left:
            ties += 1
            if rand_below(ctl, ties) == 0:
                best_v = v
    return best_v, best_left


@numba.njit(cache=True, nogil=True)
def _mark_deleted(deleted, label, dlist, dpos, v, nd) -> None:
    """Flag v deleted, unlabelled, and append it to the deleted list at position nd."""
    deleted[v] = 1
    label[v] = -1
    dlist[nd] = v
    dpos[v] = nd


@numba.njit(cache=True, nogil=True)
def delete_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue, v,
                nd) -> int:
    """Remove node v from the residual graph; returns the new number of deleted nodes."""
    old = label[v]
    before = pairs(size[old])
    _mark_deleted(deleted, label, dlist, dpos, v, nd)
    after = np.int64(0)
    for j in range(indptr[v], indptr[v + 1]):
        w = indices[j]
        if not deleted[w] and label[w] == old:
            after += pairs(np.int64(relabel(indptr, indices, deleted, label, size, free, ctl,
                                             seen, queue, w)))
    release(size, free, ctl, old)  # only now: a fresh piece must not reuse the old label
    ctl[CTL_OBJ] += after - before
    return nd + 1


@numba.njit(cache=True, nogil=True)
def delete_whole(deleted, label, size, free, dlist, dpos, ctl, v, nd) -> int:
    """Remove node v known not to split its component (O(1)); returns the new count."""
    c = label[v]
    ctl[CTL_OBJ] += pairs(size[c] - 1) - pairs(size[c])
    size[c] -= 1
    if size[c] == 0:
        release(size, free, ctl, c)
    _mark_deleted(deleted, label, dlist, dpos, v, nd)
    return nd + 1


@numba.njit(cache=True, nogil=True)
def delete_split(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue, low,
                 sub, parent, edge, v, nd) -> int:
    """Remove node v using the last :func:`best_cut` walk of its component (still unchanged):
    its pieces are known, so the largest keeps the label and only the others are relabelled.
    Returns the new number of deleted nodes."""
    old = label[v]
    total = size[old]
    dv = edge[v]
    big_w, big_s, cut = -1, np.int64(0), np.int64(0)
    for j in range(indptr[v], indptr[v + 1]):
        w = indices[j]
        if not deleted[w] and parent[w] == v and low[w] >= dv:  # a separated DFS subtree
            cut += sub[w]
            if sub[w] > big_s:
                big_w, big_s = w, np.int64(sub[w])
    rest = total - 1 - cut
    keep_rest = rest >= big_s
    _mark_deleted(deleted, label, dlist, dpos, v, nd)
    after = np.int64(0)
    for j in range(indptr[v], indptr[v + 1]):
        w = indices[j]
        if not deleted[w] and parent[w] == v and low[w] >= dv and (keep_rest or w != big_w):
            after += pairs(np.int64(relabel(indptr, indices, deleted, label, size, free, ctl,
                                             seen, queue, w)))
    if keep_rest:
        size[old] = rest
        after += pairs(rest)
        if rest == 0:
            release(size, free, ctl, old)
    else:
        if rest > 0:  # v is not the walk's root: its DFS parent lies in the rest
            after += pairs(np.int64(relabel(indptr, indices, deleted, label, size, free, ctl,
                                             seen, queue, parent[v])))
        size[old] = big_s
        after += pairs(big_s)
    ctl[CTL_OBJ] += after - pairs(total)
    return nd + 1


@numba.njit(cache=True, nogil=True)
def restore_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen, queue, u,
                 nd) -> int:
    """Put node u back; returns the new number of deleted nodes.

    The largest neighbouring component keeps its label and the others are relabelled into it
    (small to large), so a return next to a giant component does not walk the giant.
    """
    last = dlist[nd - 1]
    dlist[dpos[u]] = last
    dpos[last] = dpos[u]
    dpos[u] = -1
    deleted[u] = 0
    big = -1
    for j in range(indptr[u], indptr[u + 1]):
        w = indices[j]
        if not deleted[w] and (big < 0 or size[label[w]] > size[big]):
            big = label[w]
    if big < 0:  # no neighbour left: a component of its own
        ctl[CTL_FREE] -= 1
        big = free[ctl[CTL_FREE]]
        label[u] = big
        size[big] = 1
        return nd - 1
    ctl[CTL_STAMP] += 1
    stamp = ctl[CTL_STAMP]
    seen[big] = stamp  # ``seen`` doubles as a per-label mark here
    ctl[CTL_OBJ] -= pairs(size[big])
    grown = size[big] + 1
    label[u] = big
    for j in range(indptr[u], indptr[u + 1]):
        w = indices[j]
        if deleted[w]:
            continue
        c = label[w]
        if seen[c] == stamp:
            continue
        seen[c] = stamp
        ctl[CTL_OBJ] -= pairs(size[c])
        label[w] = big
        queue[0] = w
        head, tail = 0, 1
        while head < tail:
            x = queue[head]
            head += 1
            for i in range(indptr[x], indptr[x + 1]):
                y = indices[i]
                if not deleted[y] and label[y] == c:
                    label[y] = big
                    queue[tail] = y
                    tail += 1
        grown += tail
        release(size, free, ctl, c)
    size[big] = grown
    ctl[CTL_OBJ] += pairs(grown)
    return nd - 1


@numba.njit(cache=True, nogil=True)
def restore_cost(indptr, indices, deleted, label, size, ctl, mark, u, labels, at) -> tuple:
    """Pairs that returning deleted node u adds: its distinct neighbouring components join it.
    Those labels go to ``labels[at:]`` unless ``labels`` is empty. Returns (cost, number of
    labels)."""
    ctl[CTL_STAMP] += 1
    stamp = ctl[CTL_STAMP]
    joined, lost, count = np.int64(0), np.int64(0), 0
    for j in range(indptr[u], indptr[u + 1]):
        w = indices[j]
        if not deleted[w]:
            c = label[w]
            if mark[c] != stamp:
                mark[c] = stamp
                joined += size[c]
                lost += pairs(size[c])
                if labels.shape[0]:
                    labels[at + count] = c
                count += 1
    return pairs(joined + 1) - lost, count


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def cheapest_restore(indptr, indices, deleted, label, size, dlist, nd, tabu, ctl,
                      mark) -> int:
    """The non-tabu deleted node whose return adds the fewest pairs (random among ties)."""
    it = ctl[CTL_ITER]
    best_u, best_cost, ties = -1, np.int64(0), 0
    no_labels = np.empty(0, np.int32)
    for i in range(nd):
        u = dlist[i]
        if tabu[u] > it:
            continue
        cost = restore_cost(indptr, indices, deleted, label, size, ctl, mark, u, no_labels,
                           np.int64(0))[0]  # not the literal 0: one compile, as block_restore's
        if best_u < 0 or cost < best_cost:
            best_u, best_cost, ties = u, cost, 1
        elif cost == best_cost:
            ties += 1
            if rand_below(ctl, ties) == 0:
                best_u = u
    if best_u < 0:  # everything tabu: the oldest choice is as good as any
        best_u = dlist[rand_below(ctl, nd)]
    return best_u


@numba.njit(cache=True, nogil=True)
def load_set(indptr, indices, nodes, deleted, label, size, free, dlist, dpos, ctl, queue) -> None:
    deleted[:] = 0
    dpos[:] = -1
    for i in range(nodes.shape[0]):
        deleted[nodes[i]] = 1
        dlist[i] = nodes[i]
        dpos[nodes[i]] = i
    obj, nfree = components(indptr, indices, deleted, label, size, free, queue)
    ctl[CTL_OBJ] = obj
    ctl[CTL_FREE] = nfree

"""The greedy completion's kernels (Numba): delete, node by node, the node whose removal leaves
the fewest pairs (exact, a cached best cut per component), or several per walk (batched, for
large k on large graphs). :class:`~graphgpu.kernels.algorithms.critical_nodes.memetic.Filler`
runs them in time-checked batches.
"""

from __future__ import annotations

import numba
import numpy as np

from graphgpu.kernels.algorithms.critical_nodes.greedy import pairs, stable_argsort
from graphgpu.kernels.algorithms.critical_nodes.moves import (
    CTL_FREE,
    CTL_OBJ,
    best_cut,
    components,
    delete_node,
    delete_split,
    delete_whole,
)


@numba.njit(cache=True, nogil=True)
def greedy_fill(indptr, indices, k, nd, steps, ctl, deleted, label, size, free, dlist, dpos,
                notabu, seen, queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes, gain,
                node, root) -> int:
    """Up to ``steps`` times, delete the node whose removal leaves the fewest pairs.

    ``gain[c]`` (pairs a cut of component c saves, -1 when unknown) and ``node[c]`` cache each
    component's best cut; a deletion invalidates only the pieces of the component it split
    (they are next to the deleted node, and ``root[c]`` remembers one member of each). Returns
    the new number of deleted nodes (at most ``k``).
    """
    n = indptr.shape[0] - 1
    done = 0
    while nd < k and done < steps:
        best_c, best_gain = -1, np.int64(-1)
        for c in range(n):
            if size[c] < 2:
                continue
            if gain[c] < 0:
                v, left = best_cut(indptr, indices, deleted, label, size, notabu, ctl,
                                   np.int64(root[c]),  # int64 as fill_round's: one compile
                                   queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes)
                node[c] = v
                gain[c] = pairs(size[c]) - left
            if gain[c] > best_gain:
                best_c, best_gain = c, gain[c]
        if best_c >= 0:
            v = node[best_c]
        else:  # only isolated nodes left: any of them
            v = 0
            while deleted[v]:
                v += 1
        if best_c >= 0 and best_gain == size[best_c] - 1:  # no split: labels stay
            nd = delete_whole(deleted, label, size, free, dlist, dpos, ctl, v, nd)
        elif best_c >= 0:  # the cached walk of the component is still valid: it is unchanged
            nd = delete_split(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                              queue, low, sub, parent, edge, v, nd)
        else:
            nd = delete_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                             queue, v, nd)
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if not deleted[w]:
                gain[label[w]] = -1
                root[label[w]] = w
        done += 1
    return nd


@numba.njit(cache=True, nogil=True)
def fill_round(indptr, indices, k, nd, batch, ctl, deleted, label, size, free, dlist, dpos,
               notabu, queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes) -> int:
    """One round of the batched completion: one walk of every component, then the ``batch``
    nodes whose single removal saves the most pairs are deleted together and the components
    are relabelled once: O(V + E) per ``batch`` nodes instead of per node, for large k on
    large graphs (the gains of a round's later nodes are estimates). Returns the new count."""
    n = indptr.shape[0] - 1
    walked = np.zeros(n, np.uint8)
    cand = np.empty(n, np.int64)
    gains = np.empty(n, np.int64)
    m = 0
    for v in range(n):
        if deleted[v]:
            continue
        c = label[v]
        if size[c] < 2 or walked[c]:
            continue
        walked[c] = 1
        best_cut(indptr, indices, deleted, label, size, notabu, ctl, v, queue, disc, low, sub,
                 parent, edge, cut_pairs, cut_nodes)
        for i in range(size[c]):  # the walk leaves the members in ``queue``
            x = queue[i]
            cand[m] = x
            gains[m] = pairs(size[c]) - cut_pairs[x]
            m += 1
    take = min(batch, k - nd)
    if m > 0:
        order = stable_argsort(-gains[:m])  # ties by node id
        take = min(take, m)
        for i in range(take):
            x = cand[order[i]]
            deleted[x] = 1
            dlist[nd] = x
            dpos[x] = nd
            nd += 1
    else:  # only isolated nodes left
        v = 0
        while take > 0:
            if not deleted[v]:
                deleted[v] = 1
                dlist[nd] = v
                dpos[v] = nd
                nd += 1
                take -= 1
            v += 1
    obj, nfree = components(indptr, indices, deleted, label, size, free, queue)
    ctl[CTL_OBJ] = obj
    ctl[CTL_FREE] = nfree
    return nd

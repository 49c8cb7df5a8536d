"""The connected-set search of the counting family on the host (Numba): ESU (Wernicke 2006) from
each set's smallest vertex, one item per edge (root, first pick); see
:mod:`graphgpu.kernels.algorithms.counting`.

The CPU backend counts with :func:`connected_roots`; the GPU backend has the levels above its cut
searched here (:func:`connected_items`) and replays the rest on the device; the estimates size the
search with :func:`connected_walks`.

A search node is (set S, list L, next index i): L holds every neighbour of S above the root ``r``
outside S, in discovery order, and the node's children pick ``L[j]`` for ``j >= i``, appending
the picked vertex's undiscovered neighbours (:func:`extend`). ``mark`` (one byte per vertex, all
zero between roots) flags S and L; ``ext`` holds L (capacity ``kmax`` times the largest degree):
:func:`esu_scratch` allocates both.
"""

from __future__ import annotations

import numba
import numpy as np

from graphgpu.kernels.algorithms.counting.driver import add_wide


@numba.njit(cache=True, nogil=True)
def esu_scratch(indptr: np.ndarray, kmax: int) -> tuple[np.ndarray, np.ndarray]:
    """``mark`` (zero) and ``ext`` scratch for searches of sets up to size ``kmax``."""
    n = indptr.shape[0] - 1
    dmax = 0
    for v in range(n):
        dmax = max(dmax, indptr[v + 1] - indptr[v])
    return np.zeros(n, np.uint8), np.empty(max(1, kmax * dmax), np.int32)


@numba.njit(cache=True, nogil=True, inline="always")
def open_root(indptr: np.ndarray, indices: np.ndarray, r: int, mark: np.ndarray,
              ext: np.ndarray) -> int:
    """The root's node: mark ``r`` and list its neighbours above it in ``ext`` (marked); returns
    their number, the length of the root's L."""
    base = indptr[r]
    while base < indptr[r + 1] and indices[base] <= r:
        base += 1
    size0 = indptr[r + 1] - base
    mark[r] = 1
    for a in range(size0):
        ext[a] = indices[base + a]
        mark[ext[a]] = 1
    return size0


@numba.njit(cache=True, nogil=True, inline="always")
def close_root(r: int, mark: np.ndarray, ext: np.ndarray, length: int) -> None:
    """Undo :func:`open_root` and the discoveries in ``ext[:length]``: ``mark`` all zero again."""
    mark[r] = 0
    for a in range(length):
        mark[ext[a]] = 0


@numba.njit(cache=True, nogil=True, inline="always")
def extend(indptr: np.ndarray, indices: np.ndarray, picked: int, r: int, mark: np.ndarray,
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


@numba.njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def connected_root(indptr: np.ndarray, indices: np.ndarray, r: int, first: int, last: int,
                   kmax: int, mark: np.ndarray, ext: np.ndarray, out: np.ndarray) -> None:
    """Connected sets of sizes 3..kmax whose smallest vertex is ``r`` and whose first pick is
    the ``first``..``last - 1``-th neighbour of ``r`` above ``r``, added to ``out[size]``.

    Each connected set is produced once (module notes). ``mark`` and ``ext`` are scratch
    (:func:`esu_scratch`).
    """
    size0 = open_root(indptr, indices, r, mark, ext)
    nxt = np.empty(kmax + 1, np.int64)  # per set size: next index of L to pick
    length = np.empty(kmax + 1, np.int64)  # per set size: length of L at that node
    for f in range(first, last):
        # The item's node: S = {r, L[f]}, size 2.
        s, fresh, picked = 2, True, ext[f]
        nxt[1], length[1] = f + 1, size0
        while s >= 2:
            if fresh:
                fresh = False
                tail = extend(indptr, indices, picked, r, mark, ext, length[s - 1])
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
    close_root(r, mark, ext, size0)


@numba.njit(cache=True, nogil=True)
def connected_roots(indptr: np.ndarray, indices: np.ndarray, roots: np.ndarray, kmax: int,
                    lo: np.ndarray, hi: np.ndarray) -> None:
    """Add the connected sets (sizes 3..kmax) rooted at each of ``roots`` to ``(hi, lo)``."""
    mark, ext = esu_scratch(indptr, kmax)
    out = np.zeros(kmax + 2, np.int64)
    for r in roots:
        above = 0
        for j in range(indptr[r], indptr[r + 1]):
            above += indices[j] > r
        out[:] = 0
        connected_root(indptr, indices, r, 0, above, kmax, mark, ext, out)
        for size in range(3, kmax + 1):
            add_wide(lo, hi, size, out[size])


@numba.njit(cache=True, nogil=True)
def connected_walks(indptr: np.ndarray, indices: np.ndarray, r: int, first: int, kmax: int,
                    walks: int, seed: int, mark: np.ndarray, ext: np.ndarray) -> float:
    """Estimated search nodes of :func:`connected_root` for the item ``(r, first)``: the mean of
    ``walks`` random paths (Knuth's estimator, as
    :func:`graphgpu.kernels.algorithms.counting.cliques.clique_walks`)."""
    np.random.seed(seed)
    total = 0.0
    for _ in range(walks):
        size0 = open_root(indptr, indices, r, mark, ext)
        s, start, length, picked, weight = 2, first + 1, size0, ext[first], 1.0
        total += 1.0
        while True:
            length = extend(indptr, indices, picked, r, mark, ext, length)
            children = length - start
            if children == 0 or s + 2 > kmax:
                break
            weight *= children
            total += weight
            j = start + np.random.randint(children)
            picked = ext[j]
            start = j + 1
            s += 1
        close_root(r, mark, ext, length)
    return total / walks


@numba.njit(cache=True, nogil=True)
def connected_items(indptr: np.ndarray, indices: np.ndarray, kmax: int, depth: int,
                    lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """GPU work items for the connected-set search: every search node of size ``depth + 1``
    (``1 <= depth <= kmax - 2``), as rows ``(r, p_1, ..., p_depth)``: its smallest vertex and the
    list positions of its picks (the GPU replays them). The nodes of sizes 2..depth are searched
    here and their counts added to ``(hi, lo)``, exactly as :func:`connected_root` would."""
    n = indptr.shape[0] - 1
    mark, ext = esu_scratch(indptr, kmax)
    nxt = np.empty(kmax + 1, np.int64)
    length = np.empty(kmax + 1, np.int64)
    path = np.empty(kmax + 1, np.int32)
    items = np.empty((1024, depth + 1), np.int32)
    count = 0
    for r in range(n):
        size0 = open_root(indptr, indices, r, mark, ext)
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
                        # A loop, not a slice copy: Numba compiles a slice copy's
                        # shape-mismatch error (string formatting: 3.4 s a process).
                        for i in range(count):
                            for q in range(depth + 1):
                                grown[i, q] = items[i, q]
                        items = grown
                    items[count, 0] = r
                    for q in range(1, depth + 1):
                        items[count, q] = path[q]
                    count += 1
                    continue
                s += 1
                tail = extend(indptr, indices, picked, r, mark, ext, length[s - 1])
                length[s] = tail
                nxt[s] = nxt[s - 1]
                add_wide(lo, hi, s + 1, tail - nxt[s])
                continue
            if s >= 2:
                for a in range(length[s - 1], length[s]):
                    mark[ext[a]] = 0
            s -= 1
        close_root(r, mark, ext, size0)
    return items[:count]

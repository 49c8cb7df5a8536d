"""Exact reductions of the ``mis`` family on the CPU (Numba); the GPU twin is ``mis_reduce`` in
``mis.cu`` and decides the same.

A round reads the state at its start and decides, for every live vertex ``v`` at once:

* ``v`` has no live neighbour: it joins (it is in some maximum independent set).
* ``v`` has a live neighbour ``u`` with ``N[u] ⊆ N[v]`` (closed neighbourhoods, live vertices only)
  and ``(deg u, u) < (deg v, v)``: ``v`` leaves (domination). This covers the degree-one rule (a
  pendant dominates its neighbour) and the isolated-clique rule (a simplicial vertex dominates its
  neighbours): those join as isolated vertices one round later.

Why a whole round of removals is safe at once (the thesis removes them one by one): the relation
"u dominates v" is transitive, and the order ``(deg, id)`` strictly decreases along it, so every
removed ``v`` is dominated by some vertex ``z`` that stays (follow dominators to a minimal one).
Take a maximum independent set ``I`` and swap every removed ``v`` in it for its ``z``: ``z`` is
adjacent to ``v`` and ``N[z] ⊆ N[v]``, so ``z`` conflicts with nothing else in ``I``; two
swapped-in ``z1, z2`` are never adjacent (``z2`` would be a neighbour of ``v1``, putting ``v1`` in
``N[z2] ⊆ N[v2]``), and by the same argument no two ``v`` share a ``z``. The result is a maximum
independent set that avoids every removed vertex. Twins (equal closed neighbourhoods) are ordered
by id, so one of them always stays. ``tests/kernels/algorithms/mis/test_mis.py`` checks this by
brute force on hundreds of small graphs.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")  # one caller: no own compile
def _dominates(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray, u: int, v: int,
               start: int, stop: int) -> bool:
    """Whether every live neighbour of ``u`` other than ``v`` is in ``v``'s (sorted) row."""
    low = start
    for k in range(indptr[u], indptr[u + 1]):
        w = indices[k]
        if w == v or tag[w] != 0:
            continue
        high = stop
        while low < high:  # lower bound of w; rows are sorted, so the search only moves right
            mid = (low + high) >> 1
            if indices[mid] < w:
                low = mid + 1
            else:
                high = mid
        if low == stop or indices[low] != w:
            return False
        low += 1
    return True


@numba.njit(cache=True)
def reduce_round(indptr: np.ndarray, indices: np.ndarray, tag: np.ndarray, deg: np.ndarray,
                 live: np.ndarray, r: int, dirty: np.ndarray, expanded: np.ndarray) -> int:
    """One reduction round over the live vertices ``live``; returns how many were decided.

    Tags become ``2r+1`` (joined: isolated) or ``2r+2`` (left: dominated); ``deg`` holds residual
    degrees. Only vertices with ``dirty[v] == r`` are examined (all of them in the first round):
    a vertex's status can change only when a vertex within distance two of it changed in the
    previous round, so the others would decide "stay" again. The decisions then mark their
    distance-two neighbourhoods for round ``r+1`` (``expanded`` stamps the live vertices whose
    rows were marked, so that each row is walked once per round).
    """
    decision = np.zeros(live.shape[0], np.int8)
    for v in live:
        if dirty[v] == r:
            count = 0
            for j in range(indptr[v], indptr[v + 1]):
                count += tag[indices[j]] == 0
            deg[v] = count
    for i in range(live.shape[0]):
        v = live[i]
        if dirty[v] != r:
            continue
        dv = deg[v]
        if dv == 0:
            decision[i] = 1
            continue
        start, stop = indptr[v], indptr[v + 1]
        for j in range(start, stop):
            u = indices[j]
            if tag[u] == 0 and (deg[u] < dv or (deg[u] == dv and u < v)) and \
                    _dominates(indptr, indices, tag, u, v, start, stop):
                decision[i] = 2
                break
    changes = 0
    for i in range(live.shape[0]):
        if decision[i]:
            tag[live[i]] = 2 * r + decision[i]
            changes += 1
    for i in range(live.shape[0]):  # mark what is within distance two of a change
        if not decision[i]:
            continue
        for j in range(indptr[live[i]], indptr[live[i] + 1]):
            u = indices[j]
            dirty[u] = r + 1
            if tag[u] == 0 and expanded[u] != r:  # a live u's neighbours see its row change
                expanded[u] = r
                for k in range(indptr[u], indptr[u + 1]):
                    dirty[indices[k]] = r + 1
    return changes

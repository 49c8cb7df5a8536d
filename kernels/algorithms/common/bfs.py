"""Breadth-first search in Numba: the queue sweep and component labelling, for CPU backends.

One queue loop serves every family that searches level by level on the CPU: traversal (levels
and components), sssp (fewest hops over tight arcs), apsp (one row per source) and
critical_nodes (components of the residual graph). Callers own the arrays, so a sweep allocates
nothing and can run inside ``prange`` loops.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def bfs_queue(indptr: np.ndarray, indices: np.ndarray, value: np.ndarray, queue: np.ndarray,
              head: int, tail: int, step: int, arc_ok: np.ndarray | None = None) -> int:
    """Run a breadth-first search from the nodes already queued, in place.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR of the graph (rows sorted or not: the visiting order follows the rows).
    value : ndarray of int
        Per node; ``< 0`` means not reached. Queued nodes must already hold their value. Nodes
        with a value ``>= 0`` are never entered, so callers exclude nodes by giving them one.
    queue : ndarray of int32
        Length at least n; ``queue[head:tail]`` are the nodes to expand, in order.
    head, tail : int
        The queued slice.
    step : int
        A node reached from ``u`` gets ``value[u] + step``: 1 counts levels, 0 copies a label.
    arc_ok : ndarray of bool, optional
        Per arc; when given, only arcs ``j`` with ``arc_ok[j]`` are followed.

    Returns
    -------
    int
        The final tail: the number of nodes that were ever in ``queue`` from position 0.
    """
    while head < tail:
        u = queue[head]
        head += 1
        next_value = value[u] + step
        for j in range(indptr[u], indptr[u + 1]):
            w = indices[j]
            if value[w] < 0:
                # Two ifs: Numba prunes a branch on `arg is None` only when it stands alone, so
                # the search without a mask compiles without the test.
                if arc_ok is not None:  # noqa: SIM102
                    if not arc_ok[j]:
                        continue
                value[w] = next_value
                queue[tail] = w
                tail += 1
    return tail


@numba.njit(cache=True, nogil=True)
def label_components(indptr: np.ndarray, indices: np.ndarray, label: np.ndarray,
                     sizes: np.ndarray, queue: np.ndarray) -> int:
    """Number the connected components of the unlabelled nodes by their smallest member.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR of an undirected graph.
    label : ndarray of int
        In: ``-1`` for the nodes to label; nodes labelled ``>= 0`` are left alone and block the
        search (how callers leave nodes out). Out: components ``0..count-1`` in order of their
        smallest member, found by sweeping start nodes in id order.
    sizes : ndarray of int
        Out: ``sizes[c]`` nodes in component ``c`` (length at least the number of components).
    queue : ndarray of int32
        Scratch of length n.

    Returns
    -------
    int
        The number of components.
    """
    count = 0
    for start in range(indptr.shape[0] - 1):
        if label[start] >= 0:
            continue
        label[start] = count
        queue[0] = start
        sizes[count] = bfs_queue(indptr, indices, label, queue, 0, 1, 0)
        count += 1
    return count

"""CND* on the CPU (Numba): the seeded greedy MIS and the paper's greedy growth back to n - k nodes.

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


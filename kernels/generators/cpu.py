"""CPU versions of the graph generators (NumPy and Numba); see :mod:`graphgpu.kernels.generators`.

Barabasi-Albert and Watts-Strogatz are sequential processes, compiled with Numba; Erdos-Renyi is
the vectorised code of :mod:`~graphgpu.kernels.generators.arrays` run with NumPy; R-MAT a Numba
loop over the same counter-based draws as that vectorised code (one pass, no temporaries), so
both backends give the same edges.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from graphgpu.kernels.core.registry import EdgeSet, ProgressFn
from graphgpu.kernels.generators.arrays import (
    CHUNK_EDGES,
    EDGE_STREAM,
    GOLDEN,
    RmatThresholds,
    check_limits,
    erdos_renyi_edges,
    mix64,
    pair_from_index,
    pairs,
    rmat_permutation,
    stream_base,
)
from graphgpu.kernels.generators.params import (
    BarabasiAlbertParams,
    ErdosRenyiParams,
    GridParams,
    RmatParams,
    WattsStrogatzParams,
)


@numba.njit(cache=True)
def _ba_attach(rng, m, start, stop, repeated, length, src, dst, mark):
    """Attach nodes ``start..stop-1``; ``repeated[:length]`` lists each node once per degree."""
    e = m * (start - m)  # the star's m edges, then m for each node in m+1..start-1
    for source in range(start, stop):
        chosen = 0
        while chosen < m:  # uniform picks from `repeated` = picks proportional to degree
            t = repeated[rng.integers(0, length)]
            if mark[t] != source:  # targets must be distinct
                mark[t] = source
                src[e + chosen] = source
                dst[e + chosen] = t
                chosen += 1
        for i in range(m):
            repeated[length + 2 * i] = dst[e + i]
            repeated[length + 2 * i + 1] = source
        length += 2 * m
        e += m
    return length


def barabasi_albert(params: BarabasiAlbertParams, progress: ProgressFn) -> EdgeSet:
    """Preferential attachment, as :func:`networkx.barabasi_albert_graph` defines it.

    Starts from a star on ``m + 1`` nodes; each later node joins ``m`` distinct existing nodes
    chosen with probability proportional to their degree: ``m * (n - m)`` edges in all.
    """
    check_limits(params)
    n, m = params.n, params.m
    rng = np.random.default_rng(params.seed)
    total = m * (n - m)
    src, dst = np.empty(total, np.int64), np.empty(total, np.int64)
    src[:m], dst[:m] = 0, np.arange(1, m + 1)
    repeated = np.empty(2 * total, np.int32)
    repeated[:m], repeated[m:2 * m] = 0, np.arange(1, m + 1)
    mark = np.full(n, -1, np.int32)
    bounds = np.linspace(m + 1, n, 11).astype(np.int64)  # ten steps for progress reports
    length = 2 * m
    for step, (start, stop) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        length = _ba_attach(rng, m, start, stop, repeated, length, src, dst, mark)
        progress((step + 1) / 10, "attaching nodes")
    return EdgeSet(src, dst, n)


_EMPTY, _TOMBSTONE = -1, -2


@numba.njit(cache=True)
def _bucket(key, shift):
    # Fibonacci hashing: ring keys are consecutive, so they must be spread over the table
    return np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(shift))


@numba.njit(cache=True)
def _find(table, key, shift):
    i, mask = _bucket(key, shift), table.size - 1
    while table[i] != key:
        if table[i] == _EMPTY:
            return -1
        i = (i + 1) & mask
    return i


@numba.njit(cache=True)
def _insert(table, key, shift):
    i, mask = _bucket(key, shift), table.size - 1
    while table[i] != _EMPTY and table[i] != _TOMBSTONE:
        i = (i + 1) & mask
    table[i] = key


@numba.njit(cache=True)
def _ws_fill(table, src, dst, n, shift):
    for e in range(src.size):
        _insert(table, min(src[e], dst[e]) * n + max(src[e], dst[e]), shift)


@numba.njit(cache=True)
def _ws_rewire(rng, n, p, dst, base, deg, table, shift):
    """Rewire the ring edges ``(u, dst[base + u])`` of one distance, in node order."""
    for u in range(n):
        if rng.random() >= p or deg[u] >= n - 1:  # not drawn, or u already joins every node
            continue
        w = rng.integers(0, n)
        while w == u or _find(table, min(u, w) * n + max(u, w), shift) >= 0:
            w = rng.integers(0, n)
        v = dst[base + u]
        table[_find(table, min(u, v) * n + max(u, v), shift)] = _TOMBSTONE
        _insert(table, min(u, w) * n + max(u, w), shift)
        deg[v] -= 1
        deg[w] += 1
        dst[base + u] = w


def watts_strogatz(params: WattsStrogatzParams, progress: ProgressFn) -> EdgeSet:
    """Small-world graph, as :func:`networkx.watts_strogatz_graph` defines it.

    A ring where each node joins its ``k // 2`` nearest neighbours on each side; then, distance by
    distance and node by node, each edge ``(u, v)`` is replaced with probability ``p`` by
    ``(u, w)`` for a uniform ``w`` that creates no self-loop or duplicate. ``k == n`` gives the
    complete graph. The edge count, ``n * (k // 2)``, does not depend on ``p``.
    """
    check_limits(params)
    n, half = params.n, params.k // 2
    if params.k == n:
        src, dst = pair_from_index(np, np.arange(pairs(n), dtype=np.int64))
        progress(1.0, "complete graph")
        return EdgeSet(src, dst, n)
    src = np.tile(np.arange(n, dtype=np.int64), half)
    dst = (src + np.repeat(np.arange(1, half + 1, dtype=np.int64), n)) % n
    if params.p > 0 and src.size:
        rng = np.random.default_rng(params.seed)
        bits = max(int(2 * src.size - 1).bit_length(), 1)  # load factor <= 1/2
        table = np.full(1 << bits, _EMPTY, np.int64)
        _ws_fill(table, src, dst, n, 64 - bits)
        deg = np.full(n, 2 * half, np.int64)
        for j in range(half):
            _ws_rewire(rng, n, params.p, dst, j * n, deg, table, 64 - bits)
            progress((j + 1) / half, f"rewiring distance {j + 1}")
    progress(1.0, "done")
    return EdgeSet(src, dst, n)


def _seeded(run: Callable[[Any, Any, Any, ProgressFn], EdgeSet], params: Any,
            progress: ProgressFn) -> EdgeSet:
    # The vectorised generators on the host, seeded with NumPy's generator.
    check_limits(params)
    return run(np, np.random.default_rng(params.seed), params, progress)


def erdos_renyi(params: ErdosRenyiParams, progress: ProgressFn) -> EdgeSet:
    """Uniform random graph: G(n, p) (each pair independently) or G(n, m) (exactly m edges)."""
    return _seeded(erdos_renyi_edges, params, progress)


_mix64 = numba.njit(cache=True, nogil=True, inline="always")(mix64)


@numba.njit(cache=True, nogil=True)
def _rmat_block(start, scale, base, a, ab, abc, perm, src, dst):
    """Edges ``start..start+src.size-1``: :func:`~graphgpu.kernels.generators.arrays.rmat_edges`
    edge by edge (same draws, same bits)."""
    per_edge = np.uint64((scale + 1) // 2)
    for t in range(src.size):
        first = np.uint64(start + t) * per_edge
        i, j, z = 0, 0, np.uint64(0)
        for level in range(scale):
            if level % 2 == 0:
                z = _mix64(base + (first + np.uint64(level // 2)) * GOLDEN)
                u = z >> np.uint64(32)
            else:
                u = z & np.uint64(0xFFFFFFFF)
            i_bit = u >= ab
            j_bit = (u >= a and not i_bit) or u >= abc
            i = (i << 1) | i_bit
            j = (j << 1) | j_bit
        src[t] = perm[i]
        dst[t] = perm[j]


def rmat(params: RmatParams, progress: ProgressFn) -> EdgeSet:
    """Graph500 R-MAT (Kronecker) graph on ``2**scale`` nodes, without noise.

    Draws ``edge_factor * 2**scale`` edges, self-loops and duplicates included (normalisation
    removes them); the vertices are relabelled by a random permutation, as Graph500 does.
    """
    check_limits(params)
    n = 1 << params.scale
    total = params.edge_factor * n
    bounds = RmatThresholds.of(params)
    base = stream_base(params.seed, EDGE_STREAM)
    perm = rmat_permutation(np, params.seed, n)
    src, dst = np.empty(total, np.int64), np.empty(total, np.int64)
    for start in range(0, total, CHUNK_EDGES):
        stop = min(start + CHUNK_EDGES, total)
        _rmat_block(start, params.scale, base, *bounds, perm, src[start:stop], dst[start:stop])
        progress(stop / total, f"{stop} of {total} edges")
    return EdgeSet(src, dst, n)


def grid(params: GridParams, progress: ProgressFn) -> EdgeSet:
    """2-D grid lattice; node ``(r, c)`` has id ``r * cols + c`` (``seed`` is ignored)."""
    check_limits(params)
    ids = np.arange(params.rows * params.cols, dtype=np.int64).reshape(params.rows, params.cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    progress(1.0, "done")
    return EdgeSet(src, dst, int(ids.size))

"""Generator code written once for NumPy (CPU) and CuPy (GPU), and the size check every generator
runs first (see :mod:`graphgpu.kernels.generators`).

Erdos-Renyi and R-MAT are vectorised: the functions here take the array module ``xp`` (and, for
Erdos-Renyi, a random generator of it: ``numpy.random.default_rng`` or
``cupy.random.default_rng``), so the CPU and GPU versions
(:mod:`~graphgpu.kernels.generators.cpu`, :mod:`~graphgpu.kernels.generators.gpu`) differ only in
what they pass. Edges come back as arrays of ``xp``. R-MAT draws from a counter-based stream, so
its edges are the same on both backends (the CPU runs a compiled loop over the same formula).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.errors import LimitExceeded
from graphgpu.kernels.core.registry import EdgeSet, ProgressFn
from graphgpu.kernels.core.settings import get_settings
from graphgpu.kernels.generators.params import (
    ErdosRenyiParams,
    GeneratorParams,
    RmatParams,
    pairs,
)

#: Edges generated per step: bounds the working memory and sets how often progress is reported.
CHUNK_EDGES = 1 << 24
#: Range of the random sort keys used for permutations on the GPU.
KEY_BOUND = 1 << 62


def check_limits(params: GeneratorParams) -> None:
    """Refuse graphs over the configured limits before any array is allocated."""
    size, settings = params.expected_size(), get_settings()
    if size.nodes > settings.max_nodes:
        raise LimitExceeded(f"{size.nodes} nodes exceed the limit {settings.max_nodes}",
                            field=size.nodes_field, code="too_many_nodes")
    if size.edges > settings.max_edges:
        raise LimitExceeded(f"{size.edges} expected edges exceed the limit {settings.max_edges}",
                            field=size.edges_field, code="too_many_edges")


def on_device(array: Any) -> bool:
    """Whether ``array`` lives on a GPU (a CuPy array)."""
    return hasattr(array, "__cuda_array_interface__")


def to_host(array: Any) -> np.ndarray:
    """A NumPy copy of a CuPy array (NumPy arrays pass through)."""
    return array.get() if on_device(array) else array


def pair_from_index(xp: Any, t: Any) -> tuple[Any, Any]:
    """Node pair ``(i, j)``, ``j < i``, of each index ``t = i (i - 1) / 2 + j`` of the triangle."""
    i = xp.floor((1.0 + xp.sqrt(1.0 + 8.0 * t.astype(xp.float64))) / 2.0).astype(xp.int64)
    # float64 cannot hold t exactly beyond 2**53: the root may be one off; fix it in integers
    i -= (i * (i - 1) // 2 > t).astype(xp.int64)
    i += ((i + 1) * i // 2 <= t).astype(xp.int64)
    return i, t - i * (i - 1) // 2


def sorted_unique(xp: Any, a: Any) -> Any:
    """Sorted distinct values (NumPy 2's hash-based ``unique`` is several times slower here)."""
    a = xp.sort(a)
    return a[xp.concatenate([xp.ones(min(a.size, 1), dtype=bool), a[1:] != a[:-1]])]


def permutation(xp: Any, rng: Any, n: int) -> Any:
    """A uniformly random permutation of ``0..n-1``; on CuPy, by sorting random 62-bit keys."""
    if xp is np:
        return rng.permutation(n)
    return xp.argsort(rng.integers(0, KEY_BOUND, size=n, dtype=xp.int64))


def sample_indices(xp: Any, rng: Any, total: int, k: int, progress: ProgressFn) -> Any:
    """``k`` distinct integers of ``0..total-1``, uniformly at random (a uniform k-subset)."""
    if 2 * k > total:  # dense: draw the total - k left out instead, far fewer draws
        keep = xp.ones(total, dtype=bool)
        keep[sample_indices(xp, rng, total, total - k, progress)] = False
        return xp.flatnonzero(keep)
    chosen = xp.zeros(0, dtype=xp.int64)
    while chosen.size < k:
        have = int(chosen.size)
        # draws expected to reach k distinct values (coupon collector), plus 2% to finish in one go
        draws = math.ceil(1.02 * total * math.log1p((k - have) / (total - k))) + 1
        new = rng.integers(0, total, size=draws, dtype=xp.int64)
        chosen = sorted_unique(xp, xp.concatenate([chosen, new]))
        progress(min(chosen.size / k, 1.0) * 0.9, "sampling edges")
    if chosen.size > k:
        # a uniform k-subset of a uniformly random set is a uniform k-subset
        chosen = chosen[permutation(xp, rng, int(chosen.size))[:k]]
    return chosen


def gnp_indices(xp: Any, rng: Any, total: int, p: float, progress: ProgressFn) -> list[Any]:
    """Triangle indices of G(n, p) by geometric skipping: gaps between edges are Geometric(p)."""
    if p == 0.0 or total == 0:
        return []
    if p == 1.0:
        return [xp.arange(total, dtype=xp.int64)]
    expected = p * total
    chunk = int(min(CHUNK_EDGES, expected + 6 * math.sqrt(expected) + 64))
    log_q = math.log1p(-p)
    pieces, last = [], -1
    while True:
        u = rng.random(chunk)
        # inversion of Geometric(p) on {1, 2, ...}; clipped so that huge gaps cannot overflow
        gaps = xp.minimum(xp.floor(xp.log1p(-u) / log_q), float(total)).astype(xp.int64) + 1
        idx = last + xp.cumsum(gaps)
        inside = reductions.count_true(idx < total)  # idx increases: these are a prefix
        pieces.append(idx[:inside])
        if inside < chunk:
            return pieces
        last = int(idx[-1])
        progress(0.9 * last / total, "drawing edges")


def erdos_renyi_edges(xp: Any, rng: Any, params: ErdosRenyiParams, progress: ProgressFn
                      ) -> EdgeSet:
    """G(n, p) or G(n, m) edges drawn with ``rng``, as arrays of ``xp`` (on the GPU they stay
    there: :mod:`~graphgpu.kernels.generators.csr` builds the graph on the device)."""
    n, total = params.n, pairs(params.n)
    if params.m is not None:
        pieces = [sample_indices(xp, rng, total, params.m, progress)] if params.m else []
    else:
        pieces = gnp_indices(xp, rng, total, float(params.p or 0.0), progress)
    src, dst = [xp.zeros(0, xp.int64)], [xp.zeros(0, xp.int64)]
    for piece in pieces:
        i, j = pair_from_index(xp, piece)
        src.append(i)
        dst.append(j)
    progress(1.0, "done")
    return EdgeSet(xp.concatenate(src), xp.concatenate(dst), n)


# R-MAT draws come from a counter-based generator (SplitMix64's mixer applied to the seed's
# stream plus a counter): draw k of edge e is a pure function of (seed, e, k), so the NumPy,
# Numba and CuPy versions give bit-identical edges, chunks and threads in any order.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_S30, _S27, _S31, _S32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)
#: Stream tags: the edge draws and the relabelling keys of one seed are independent streams.
EDGE_STREAM, PERMUTATION_STREAM = 1, 2


def mix64(z: Any) -> Any:
    """SplitMix64's finaliser (a bijection of uint64) on a uint64 array or scalar."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


def stream_base(seed: int, tag: int) -> np.uint64:
    """Start of the counter stream ``tag`` of ``seed``."""
    with np.errstate(over="ignore"):
        return mix64(np.uint64(seed) * GOLDEN + np.uint64(tag))


class RmatThresholds(NamedTuple):
    """R-MAT's quadrant bounds as 32-bit integers: a draw ``u`` (uniform on ``0..2**32-1``)
    picks top-left below ``a``, top-right below ``ab``, bottom-left below ``abc``, else
    bottom-right. Integers, so every backend compares alike."""

    a: np.uint64
    ab: np.uint64
    abc: np.uint64

    @classmethod
    def of(cls, params: RmatParams) -> RmatThresholds:
        def bound(p: float) -> np.uint64:
            return np.uint64(min(round(p * 2**32), 2**32))

        return cls(bound(params.a), bound(params.a + params.b),
                   bound(params.a + params.b + params.c))


def rmat_permutation(xp: Any, seed: int, n: int) -> Any:
    """Graph500's random relabelling of the ``n`` vertices (so that an id carries no degree
    information): the order of distinct 64-bit keys, the same on every backend."""
    base = stream_base(seed, PERMUTATION_STREAM)
    return xp.argsort(mix64(base + xp.arange(n, dtype=xp.uint64) * GOLDEN)).astype(xp.int64)


def rmat_edges(xp: Any, params: RmatParams, progress: ProgressFn) -> EdgeSet:
    """R-MAT edges as arrays of ``xp``, vectorised over chunks of :data:`CHUNK_EDGES` edges
    (the GPU version; the CPU's compiled loop, :func:`graphgpu.kernels.generators.cpu.rmat`,
    draws the same edges).

    Level ``l`` of edge ``e`` (most significant bit first) takes half of the 64-bit draw
    ``mix64(base + (e * ceil(scale / 2) + l // 2) * GOLDEN)``: the high 32 bits for even ``l``,
    the low ones for odd ``l``.
    """
    scale, n = params.scale, 1 << params.scale
    total, per_edge = params.edge_factor * n, np.uint64((params.scale + 1) // 2)
    bounds, base = RmatThresholds.of(params), stream_base(params.seed, EDGE_STREAM)
    perm = rmat_permutation(xp, params.seed, n)
    src, dst = xp.empty(total, xp.int64), xp.empty(total, xp.int64)
    for start in range(0, total, CHUNK_EDGES):
        size = min(CHUNK_EDGES, total - start)
        first = xp.arange(start, start + size, dtype=xp.uint64) * per_edge
        i, j = xp.zeros(size, xp.int64), xp.zeros(size, xp.int64)
        for level in range(scale):  # one bit of both endpoints per level, every edge at once
            if level % 2 == 0:
                z = mix64(base + (first + np.uint64(level // 2)) * GOLDEN)
                u = z >> _S32
            else:
                u = z & _LOW32
            i_bit = u >= bounds.ab
            i <<= 1
            i |= i_bit
            j <<= 1
            j |= (u >= bounds.a) & ~i_bit | (u >= bounds.abc)
        src[start:start + size] = perm[i]
        dst[start:start + size] = perm[j]
        progress((start + size) / total, f"{start + size} of {total} edges")
    return EdgeSet(src, dst, n)

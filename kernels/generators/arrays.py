"""Generator code written once for NumPy (CPU) and CuPy (GPU), and the size check every generator
runs first (see :mod:`graphgpu.kernels.generators`).

Erdos-Renyi and R-MAT are vectorised: the functions here take the array module ``xp`` and a
random generator of it (``numpy.random.default_rng`` or ``cupy.random.default_rng``), so the CPU
and GPU versions (:mod:`~graphgpu.kernels.generators.cpu`, :mod:`~graphgpu.kernels.generators.gpu`)
differ only in what they pass. Edges come back as host (NumPy) arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

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


def to_host(array: Any) -> np.ndarray:
    """A NumPy copy of a CuPy array (NumPy arrays pass through)."""
    return array.get() if hasattr(array, "get") else array


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
        inside = int((idx < total).sum())  # idx increases, so these are a prefix
        pieces.append(idx[:inside])
        if inside < chunk:
            return pieces
        last = int(idx[-1])
        progress(0.9 * last / total, "drawing edges")


def erdos_renyi_edges(xp: Any, rng: Any, params: ErdosRenyiParams, progress: ProgressFn
                      ) -> EdgeSet:
    """G(n, p) or G(n, m) edges drawn with ``rng`` (arrays of ``xp``), copied to the host."""
    n, total = params.n, pairs(params.n)
    if params.m is not None:
        pieces = [sample_indices(xp, rng, total, params.m, progress)] if params.m else []
    else:
        pieces = gnp_indices(xp, rng, total, float(params.p or 0.0), progress)
    src, dst = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for piece in pieces:  # pairs per piece, copied off the device one at a time
        i, j = pair_from_index(xp, piece)
        src.append(to_host(i))
        dst.append(to_host(j))
    progress(1.0, "done")
    return EdgeSet(np.concatenate(src), np.concatenate(dst), n)



def rmat_edges(xp: Any, rng: Any, params: RmatParams, progress: ProgressFn) -> EdgeSet:
    """R-MAT edges drawn with ``rng`` (arrays of ``xp``) in chunks of :data:`CHUNK_EDGES`."""
    scale, n = params.scale, 1 << params.scale
    total = params.edge_factor * n
    # quadrant of each level from one uniform u: [0, a) top-left, [a, a+b) top-right,
    # [a+b, a+b+c) bottom-left, the rest bottom-right (half the draws of Graph500's two uniforms)
    a, ab = np.float32(params.a), np.float32(params.a + params.b)
    abc = np.float32(params.a + params.b + params.c)
    # Graph500 relabels vertices by a random permutation so that id carries no degree information
    perm = permutation(xp, rng, n)
    src, dst = np.empty(total, np.int64), np.empty(total, np.int64)
    for start in range(0, total, CHUNK_EDGES):
        size = min(CHUNK_EDGES, total - start)
        i, j = xp.zeros(size, xp.int64), xp.zeros(size, xp.int64)
        for _ in range(scale):  # one bit of both endpoints per level, for every edge at once
            u = rng.random(size, dtype=np.float32)
            i_bit = u >= ab
            i <<= 1
            i |= i_bit
            j <<= 1
            j |= (u >= a) & ~i_bit | (u >= abc)
        src[start:start + size] = to_host(perm[i])
        dst[start:start + size] = to_host(perm[j])
        progress((start + size) / total, f"{start + size} of {total} edges")
    return EdgeSet(src, dst, n)


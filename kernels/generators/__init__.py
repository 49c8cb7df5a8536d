"""Random and regular graph generators, registered at import.

Each generator returns an :class:`~graphgpu.kernels.core.registry.EdgeSet` of int64 ids
``0..num_nodes-1`` that
the caller normalises with :func:`graphgpu.kernels.core.graph.build_graph` (passing
``extra_nodes=arange(n)`` so
isolated nodes survive). The same parameters and seed give the same edges on a given backend; the
GPU versions (``rmat``, ``erdos_renyi``) use CuPy's generator, so their edges differ from the CPU
ones for the same seed but follow the same model. Sizes are checked against the configured limits
before anything is allocated.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numba
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from graphgpu.kernels.core.device import cupy
from graphgpu.kernels.core.errors import LimitExceeded
from graphgpu.kernels.core.registry import (
    Backend,
    EdgeSet,
    Generator,
    ProgressFn,
    get_generator,
    no_progress,
    register_generator,
)
from graphgpu.kernels.core.settings import get_settings

#: Edges generated per step: bounds the working memory and sets how often progress is reported.
CHUNK_EDGES = 1 << 24
#: Expected edge count from which a GPU worker uses the GPU version (below it, launch and
#: transfer overheads outweigh the speed-up).
GPU_THRESHOLD_EDGES = 1 << 22
_MAX_N = 2**31 - 1  # internal ids are int32 (graphgpu.kernels.core.graph.INDEX_DTYPE)
_KEY_BOUND = 1 << 62  # range of the random sort keys used for permutations on the GPU


class Size(NamedTuple):
    """Expected size of a generated graph, and the parameters to name when it is too large."""

    nodes: int
    edges: int
    nodes_field: str
    edges_field: str


class GeneratorParams(BaseModel):
    """Base of the parameter models: unknown fields are rejected, every generator takes a seed."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(0, ge=0, le=2**63 - 1, description="Random seed; same seed, same graph.")

    def expected_size(self) -> Size:
        raise NotImplementedError


def _at_most_n(value: int, info: ValidationInfo, strict: bool) -> int:
    n = info.data.get("n")  # absent when n failed its own validation
    if n is not None and (value >= n if strict else value > n):
        raise ValueError(f"{info.field_name} must be {'below' if strict else 'at most'} n ({n})")
    return value


class BarabasiAlbertParams(GeneratorParams):
    n: int = Field(..., ge=2, le=_MAX_N, description="Number of nodes.")
    m: int = Field(..., ge=1, le=_MAX_N, description="Edges from each new node (1 <= m < n).")

    _m_below_n = field_validator("m")(lambda m, info: _at_most_n(m, info, strict=True))

    def expected_size(self) -> Size:
        return Size(self.n, self.m * (self.n - self.m), "n", "m")


class WattsStrogatzParams(GeneratorParams):
    n: int = Field(..., ge=1, le=_MAX_N, description="Number of nodes.")
    k: int = Field(..., ge=0, le=_MAX_N, description="Ring neighbours per node (k // 2 a side).")
    p: float = Field(..., ge=0.0, le=1.0, description="Probability of rewiring each edge.")

    _k_at_most_n = field_validator("k")(lambda k, info: _at_most_n(k, info, strict=False))

    def expected_size(self) -> Size:
        edges = self.n * (self.n - 1) // 2 if self.k == self.n else self.n * (self.k // 2)
        return Size(self.n, edges, "n", "k")


class ErdosRenyiParams(GeneratorParams):
    n: int = Field(..., ge=1, le=_MAX_N, description="Number of nodes.")
    p: float | None = Field(None, ge=0.0, le=1.0, description="Edge probability: G(n, p).")
    m: int | None = Field(
        None, ge=0, validate_default=True, description="Exact edge count: G(n, m). Give p or m."
    )

    @field_validator("m")
    @classmethod
    def _exactly_one(cls, m: int | None, info: ValidationInfo) -> int | None:
        if "p" not in info.data:  # p failed its own validation, which is reported already
            return m
        if (info.data["p"] is None) == (m is None):
            raise ValueError("give exactly one of p (edge probability) or m (edge count)")
        n = info.data.get("n")
        if m is not None and n is not None and m > n * (n - 1) // 2:
            raise ValueError(f"m exceeds the {n * (n - 1) // 2} possible edges among {n} nodes")
        return m

    def expected_size(self) -> Size:
        if self.m is not None:
            return Size(self.n, self.m, "n", "m")
        return Size(self.n, math.ceil((self.p or 0.0) * _pairs(self.n)), "n", "p")


class RmatParams(GeneratorParams):
    scale: int = Field(..., ge=1, le=31, description="log2 of the number of nodes.")
    edge_factor: int = Field(16, ge=1, le=1 << 16, description="Edges drawn per node (pre-dedup).")
    a: float = Field(0.57, ge=0.0, le=1.0, description="Probability of the top-left quadrant.")
    b: float = Field(0.19, ge=0.0, le=1.0, description="Probability of the top-right quadrant.")
    c: float = Field(
        0.19, ge=0.0, le=1.0, validate_default=True,
        description="Probability of the bottom-left quadrant; d = 1 - a - b - c.",
    )

    @field_validator("c")
    @classmethod
    def _d_not_negative(cls, c: float, info: ValidationInfo) -> float:
        a, b = info.data.get("a"), info.data.get("b")
        if a is not None and b is not None and a + b + c > 1.0 + 1e-9:
            raise ValueError(f"a + b + c = {a + b + c:g} exceeds 1 (d = 1 - a - b - c < 0)")
        return c

    def expected_size(self) -> Size:
        n = 1 << self.scale
        return Size(n, self.edge_factor * n, "scale", "edge_factor")


class GridParams(GeneratorParams):
    rows: int = Field(..., ge=1, le=_MAX_N, description="Number of rows.")
    cols: int = Field(..., ge=1, le=_MAX_N, description="Number of columns.")

    def expected_size(self) -> Size:
        r, c = self.rows, self.cols
        return Size(r * c, r * (c - 1) + c * (r - 1), "rows", "rows")


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _check_limits(params: GeneratorParams) -> None:
    """Refuse graphs over the configured limits before any array is allocated."""
    size, settings = params.expected_size(), get_settings()
    if size.nodes > settings.max_nodes:
        raise LimitExceeded(f"{size.nodes} nodes exceed the limit {settings.max_nodes}",
                            field=size.nodes_field, code="too_many_nodes")
    if size.edges > settings.max_edges:
        raise LimitExceeded(f"{size.edges} expected edges exceed the limit {settings.max_edges}",
                            field=size.edges_field, code="too_many_edges")


def _host(array: Any) -> np.ndarray:
    """A NumPy copy of a CuPy array (NumPy arrays pass through)."""
    return array.get() if hasattr(array, "get") else array


# --- Barabasi-Albert and Watts-Strogatz: sequential processes, compiled with Numba ------------


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
    _check_limits(params)
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
    _check_limits(params)
    n, half = params.n, params.k // 2
    if params.k == n:
        src, dst = _pair_from_index(np, np.arange(_pairs(n), dtype=np.int64))
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


# --- Erdos-Renyi and R-MAT: vectorised, written once for NumPy (CPU) and CuPy (GPU) ------------


def _pair_from_index(xp: Any, t: Any) -> tuple[Any, Any]:
    """Node pair ``(i, j)``, ``j < i``, of each index ``t = i (i - 1) / 2 + j`` of the triangle."""
    i = xp.floor((1.0 + xp.sqrt(1.0 + 8.0 * t.astype(xp.float64))) / 2.0).astype(xp.int64)
    # float64 cannot hold t exactly beyond 2**53: the root may be one off; fix it in integers
    i -= (i * (i - 1) // 2 > t).astype(xp.int64)
    i += ((i + 1) * i // 2 <= t).astype(xp.int64)
    return i, t - i * (i - 1) // 2


def _unique(xp: Any, a: Any) -> Any:
    """Sorted distinct values (NumPy 2's hash-based ``unique`` is several times slower here)."""
    a = xp.sort(a)
    return a[xp.concatenate([xp.ones(min(a.size, 1), dtype=bool), a[1:] != a[:-1]])]


def _permutation(xp: Any, rng: Any, n: int) -> Any:
    """A uniformly random permutation of ``0..n-1``; on CuPy, by sorting random 62-bit keys."""
    if xp is np:
        return rng.permutation(n)
    return xp.argsort(rng.integers(0, _KEY_BOUND, size=n, dtype=xp.int64))


def _sample_indices(xp: Any, rng: Any, total: int, k: int, progress: ProgressFn) -> Any:
    """``k`` distinct integers of ``0..total-1``, uniformly at random (a uniform k-subset)."""
    if 2 * k > total:  # dense: draw the total - k left out instead, far fewer draws
        keep = xp.ones(total, dtype=bool)
        keep[_sample_indices(xp, rng, total, total - k, progress)] = False
        return xp.flatnonzero(keep)
    chosen = xp.zeros(0, dtype=xp.int64)
    while chosen.size < k:
        have = int(chosen.size)
        # draws expected to reach k distinct values (coupon collector), plus 2% to finish in one go
        draws = math.ceil(1.02 * total * math.log1p((k - have) / (total - k))) + 1
        new = rng.integers(0, total, size=draws, dtype=xp.int64)
        chosen = _unique(xp, xp.concatenate([chosen, new]))
        progress(min(chosen.size / k, 1.0) * 0.9, "sampling edges")
    if chosen.size > k:
        # a uniform k-subset of a uniformly random set is a uniform k-subset
        chosen = chosen[_permutation(xp, rng, int(chosen.size))[:k]]
    return chosen


def _gnp_indices(xp: Any, rng: Any, total: int, p: float, progress: ProgressFn) -> list[Any]:
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


def _erdos_renyi(xp: Any, rng: Any, params: ErdosRenyiParams, progress: ProgressFn) -> EdgeSet:
    n, total = params.n, _pairs(params.n)
    if params.m is not None:
        pieces = [_sample_indices(xp, rng, total, params.m, progress)] if params.m else []
    else:
        pieces = _gnp_indices(xp, rng, total, float(params.p or 0.0), progress)
    src, dst = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for piece in pieces:  # pairs per piece, copied off the device one at a time
        i, j = _pair_from_index(xp, piece)
        src.append(_host(i))
        dst.append(_host(j))
    progress(1.0, "done")
    return EdgeSet(np.concatenate(src), np.concatenate(dst), n)


def erdos_renyi(params: ErdosRenyiParams, progress: ProgressFn) -> EdgeSet:
    """Uniform random graph: G(n, p) (each pair independently) or G(n, m) (exactly m edges)."""
    _check_limits(params)
    return _erdos_renyi(np, np.random.default_rng(params.seed), params, progress)


def erdos_renyi_gpu(params: ErdosRenyiParams, progress: ProgressFn) -> EdgeSet:
    """:func:`erdos_renyi` on the GPU, seeded with CuPy's generator."""
    _check_limits(params)
    cp = cupy()
    return _erdos_renyi(cp, cp.random.default_rng(params.seed), params, progress)


def _rmat(xp: Any, rng: Any, params: RmatParams, progress: ProgressFn) -> EdgeSet:
    scale, n = params.scale, 1 << params.scale
    total = params.edge_factor * n
    # quadrant of each level from one uniform u: [0, a) top-left, [a, a+b) top-right,
    # [a+b, a+b+c) bottom-left, the rest bottom-right (half the draws of Graph500's two uniforms)
    a, ab = np.float32(params.a), np.float32(params.a + params.b)
    abc = np.float32(params.a + params.b + params.c)
    # Graph500 relabels vertices by a random permutation so that id carries no degree information
    perm = _permutation(xp, rng, n)
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
        src[start:start + size] = _host(perm[i])
        dst[start:start + size] = _host(perm[j])
        progress((start + size) / total, f"{start + size} of {total} edges")
    return EdgeSet(src, dst, n)


def rmat(params: RmatParams, progress: ProgressFn) -> EdgeSet:
    """Graph500 R-MAT (Kronecker) graph on ``2**scale`` nodes, without noise.

    Draws ``edge_factor * 2**scale`` edges, self-loops and duplicates included (normalisation
    removes them).
    """
    _check_limits(params)
    return _rmat(np, np.random.default_rng(params.seed), params, progress)


def rmat_gpu(params: RmatParams, progress: ProgressFn) -> EdgeSet:
    """:func:`rmat` on the GPU, seeded with CuPy's generator."""
    _check_limits(params)
    cp = cupy()
    return _rmat(cp, cp.random.default_rng(params.seed), params, progress)


def grid(params: GridParams, progress: ProgressFn) -> EdgeSet:
    """2-D grid lattice; node ``(r, c)`` has id ``r * cols + c`` (``seed`` is ignored)."""
    _check_limits(params)
    ids = np.arange(params.rows * params.cols, dtype=np.int64).reshape(params.rows, params.cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    progress(1.0, "done")
    return EdgeSet(src, dst, int(ids.size))


register_generator(Generator("barabasi_albert", "Preferential attachment (Barabasi-Albert).",
                             BarabasiAlbertParams, barabasi_albert))
register_generator(Generator("watts_strogatz", "Small-world ring with rewiring (Watts-Strogatz).",
                             WattsStrogatzParams, watts_strogatz))
register_generator(Generator("erdos_renyi", "Uniform random graph, G(n, p) or G(n, m).",
                             ErdosRenyiParams, erdos_renyi, erdos_renyi_gpu, GPU_THRESHOLD_EDGES))
register_generator(Generator("rmat", "Graph500 R-MAT power-law graph.",
                             RmatParams, rmat, rmat_gpu, GPU_THRESHOLD_EDGES))
register_generator(Generator("grid", "2-D grid lattice.", GridParams, grid))


def validate_params(name: str, params: dict[str, Any] | BaseModel) -> GeneratorParams:
    """Validate a generator's parameters with its model and check the size limits.

    Parameters
    ----------
    name : str
    params : dict or BaseModel
        Raw parameters, or a model (re-validated unless it is already the generator's model).

    Returns
    -------
    GeneratorParams
        Instance of the generator's parameter model.

    Raises
    ------
    pydantic.ValidationError
        Bad parameters; each error's ``loc`` names the field (for the 422).
    UnknownName, LimitExceeded
        No such generator; more nodes or expected edges than allowed (``field`` = parameter).
    """
    model = get_generator(name).params_model
    if not isinstance(params, model):
        raw = params.model_dump() if isinstance(params, BaseModel) else params
        params = model.model_validate(raw)
    _check_limits(params)
    return params


def expected_edges(name: str, params: dict[str, Any] | BaseModel) -> int:
    """Expected number of generated edges (before normalisation); validates ``params``."""
    return validate_params(name, params).expected_size().edges


def preferred_backend(name: str, params: dict[str, Any] | BaseModel, gpu: bool) -> Backend:
    """The backend a worker should use for a generator job.

    ``"gpu"`` on a GPU worker (``gpu=True``) when the generator has a GPU version and expects at
    least its ``gpu_threshold_edges`` edges; else ``"cpu"``.
    """
    generator = get_generator(name)
    big = expected_edges(name, params) >= (generator.gpu_threshold_edges or 0)
    return "gpu" if gpu and generator.gpu is not None and big else "cpu"


def generate(name: str, params: dict[str, Any] | BaseModel, backend: Backend = "cpu",
             progress: ProgressFn = no_progress) -> EdgeSet:
    """Validate parameters and run a generator.

    Parameters
    ----------
    name : str
    params : dict or BaseModel
        Validated as by :func:`validate_params`.
    backend : {"cpu", "gpu"}
        ``"gpu"`` runs the GPU version when the generator has one (else the CPU version).
    progress : ProgressFn
        Called with the fraction done; may raise to cancel.

    Raises
    ------
    pydantic.ValidationError, UnknownName, LimitExceeded
        As :func:`validate_params`; ``BackendUnavailable`` for ``"gpu"`` without CuPy or a GPU.
    """
    model = validate_params(name, params)
    return get_generator(name).function(backend)(model, progress)

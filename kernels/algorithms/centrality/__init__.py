"""Centrality family: DACCER volumes and ranking, and exact closeness; CPU and GPU, same answers.

``daccer`` (Distributed Assessment of the Closeness CEntrality Ranking) ranks nodes by their
*volume*: the sum of the degrees of the distinct nodes within ``radius`` hops (the node itself
included; radius 0 gives the degree). ``closeness`` is exact closeness centrality with the
Wasserman-Faust normalisation for disconnected graphs (NetworkX's default), or harmonic
centrality. Edge weights are ignored: distances are hop counts.

How we beat the CUDA DACCER paper (IJCSIT 6(3), 2014; 100x over 32 CPU cores at radius 0-1 but
3-7x *slower* at radius 2, 98 % of it spent materialising cumulative k-adjacency lists):

* Nothing proportional to the sum of the ball sizes is ever stored. Each ball is built on the
  fly and reduced straight into the volume, so radius 2, 3 or 10 cost one bounded search per
  node, not a k-hop CSR per level.
* A proven bound on each ball's size (``b_1 = 1 + deg``, ``b_k(v) = min(n, 1 + sum over
  neighbours u of (b_{k-1}(u) - 1))``: the ball of ``v`` is ``v`` plus its neighbours' balls of
  radius k-1, each of which holds ``v``) sorts the nodes into tiers. A warp, or a whole block for
  larger balls, builds one ball in a shared-memory hash table of exactly the size it needs, with
  the frontier kept in insertion order and expanded arc-parallel (warp prefix sums, each chunk's
  arcs dealt out to all warps of the team), so hub rows do not serialise a thread as the paper's
  one-thread-per-node merges do.
* Balls too large for shared memory (hubs) go to a bit-parallel multi-source BFS (64 sources per
  machine word) whose batches are bounded by ``max_batch_bytes``.
* Closeness uses the same bit-parallel BFS over all sources, pull-based with fully-reached words
  skipped; distances are symmetric, so every node sums its own distances and no atomics on
  per-source totals are needed.

The CPU backend is Numba: per-node bounded BFS with a per-thread stamp array for ``daccer``
(threads limited so that their arrays fit ``max_batch_bytes``) and the bit-parallel BFS, one
batch of 512 sources per thread, for closeness. Volumes are exact integers on both backends;
closeness comes from integer distance sums through the same float operations, and harmonic
sums are Neumaier-compensated, so the two backends agree to rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numba
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmResult,
    ProgressFn,
    register_algorithm,
)

CUDA_SOURCE = Path(__file__).with_name("centrality.cu")
THREADS = 256
#: Bytes per node of one 64-source word in the bit-parallel BFS: visited, frontier, next.
WORD_BYTES_PER_NODE = 3 * 8
#: Stamp and queue arrays (int32) per CPU thread of the ``daccer`` search, per node.
CPU_BYTES_PER_NODE = 2 * 4
#: Words per CPU closeness batch (512 sources: one cache line per neighbour read).
CPU_WORDS = 8
#: Largest grid y dimension (``ms_volume`` runs one grid row per word).
MAX_GRID_Y = 65535
#: GPU ball tiers, smallest first: (kernel, largest bound it takes, threads per block). A warp
#: team needs 12 bytes of shared memory per unit of bound (table of 2 slots + ball entry).
TIERS = (("ball_warp", 128, 256), ("ball_warp", 512, 256), ("ball_block", 4096, 256),
         ("ball_block", 16384, 1024))
BATCH_DESCRIPTION = (
    "Memory bound, in bytes, of one batch of the bit-parallel multi-source BFS (24 bytes per "
    "node per 64 sources; at least one 64-source word is always used) and of the CPU threads' "
    "visited arrays (8 bytes per node per thread).")


class DaccerParams(BaseModel):
    """Parameters of ``daccer``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"radius": 2, "top": 10, "compare_closeness": True}]})

    radius: int = Field(2, ge=0, le=10, description="Hops around each node (0: degree).")
    top: int = Field(100, ge=0, description="Length of the `top` list (the ranking's head).")
    compare_closeness: bool = Field(
        False, description="Also compute exact closeness and report rank agreement with it.")
    max_batch_bytes: int = Field(1 << 30, ge=1 << 20, description=BATCH_DESCRIPTION)


class DaccerSummary(BaseModel):
    """Summary of a ``daccer`` result; the agreement fields are present with compare_closeness."""

    radius: int = Field(description="The radius used.")
    top_volume: int = Field(description="Largest volume (of the first node of the ranking).")
    spearman: float | None = Field(
        None, description="Spearman rank correlation of volume and closeness (null: undefined, "
        "one of them is constant).")
    kendall: float | None = Field(None, description="Kendall tau-b of volume and closeness.")
    top1pct_overlap: float | None = Field(
        None, description="Share of the top ceil(1 % n) nodes by volume that are also the top "
        "ceil(1 % n) by closeness (ties by node id).")
    top10pct_overlap: float | None = Field(None, description="Same for the top 10 %.")


class ClosenessParams(BaseModel):
    """Parameters of ``closeness``."""

    model_config = ConfigDict(extra="forbid")

    harmonic: bool = Field(False, description="Harmonic centrality (sum of 1/distance) instead.")
    max_batch_bytes: int = Field(1 << 30, ge=1 << 20, description=BATCH_DESCRIPTION)


class ClosenessSummary(BaseModel):
    """Summary of a ``closeness`` result."""

    harmonic: bool = Field(description="Whether the values are harmonic centrality.")
    max: float = Field(description="Largest value.")
    mean: float = Field(description="Mean value.")


# ------------------------------------------------------------------------------------------------
# Shared by both backends
# ------------------------------------------------------------------------------------------------


def batch_words(n: int, max_batch_bytes: int) -> int:
    """64-source words per bit-parallel BFS batch that fit ``max_batch_bytes`` (at least 1)."""
    return max(1, max_batch_bytes // (WORD_BYTES_PER_NODE * max(n, 1)))


def cpu_workers(n: int, max_batch_bytes: int) -> int:
    """CPU threads of the ``daccer`` search whose arrays fit ``max_batch_bytes`` (at least 1)."""
    fit = max_batch_bytes // (CPU_BYTES_PER_NODE * max(n, 1))
    return max(1, min(numba.get_num_threads(), fit))


def ranking(values: np.ndarray) -> np.ndarray:
    """Internal ids by value, largest first; ties by id, smallest first."""
    return np.argsort(-values, kind="stable").astype(np.int64)


def closeness_values(total: np.ndarray, reached: np.ndarray, n: int) -> np.ndarray:
    """Wasserman-Faust closeness from distance sums and reached counts (NetworkX's operations)."""
    out = np.zeros(n, dtype=np.float64)
    ok = total > 0
    if n > 1:
        r = reached[ok].astype(np.float64)
        out[ok] = (r / total[ok]) * (r / (n - 1))
    return out


def rank_agreement(volume: np.ndarray, closeness: np.ndarray) -> dict[str, float | None]:
    """Spearman, Kendall tau-b and top-1 % / top-10 % overlap of two per-node scores."""
    from scipy import stats

    n = volume.shape[0]
    defined = n > 1 and np.ptp(volume) > 0 and np.ptp(closeness) > 0
    out: dict[str, float | None] = {
        "spearman": float(stats.spearmanr(volume, closeness).statistic) if defined else None,
        "kendall": float(stats.kendalltau(volume, closeness).statistic) if defined else None}
    by_volume, by_closeness = ranking(volume), ranking(closeness)
    for name, share in (("top1pct_overlap", 0.01), ("top10pct_overlap", 0.10)):
        k = max(1, math.ceil(share * n))
        out[name] = np.intersect1d(by_volume[:k], by_closeness[:k]).size / k
    return out


def _part(progress: ProgressFn, lo: float, hi: float) -> ProgressFn:
    """Progress of a step mapped into ``[lo, hi]`` of the job's."""
    return lambda fraction, message="": progress(lo + (hi - lo) * fraction, message)


# ------------------------------------------------------------------------------------------------
# CPU
# ------------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _neighbour_sum(indptr: np.ndarray, indices: np.ndarray, x: np.ndarray) -> np.ndarray:
    out = np.zeros(indptr.shape[0] - 1, np.int64)
    for v in range(out.shape[0]):
        for j in range(indptr[v], indptr[v + 1]):
            out[v] += x[indices[j]]
    return out


@numba.njit(cache=True, nogil=True, parallel=True)
def _ball_volumes(indptr: np.ndarray, indices: np.ndarray, deg: np.ndarray, radius: int,
                  lo: int, hi: int, stamps: np.ndarray, queues: np.ndarray,
                  volume: np.ndarray) -> None:
    # Stamp v + 1 marks v's ball: unique per source, so the arrays are never cleared.
    workers = stamps.shape[0]
    for t in numba.prange(workers):
        stamp, queue = stamps[t], queues[t]
        for v in range(lo + t, hi, workers):
            mark = v + 1
            stamp[v] = mark
            queue[0] = v
            total = deg[v]
            head, tail = 0, 1
            for level in range(1, radius + 1):
                end = tail
                while head < end:
                    u = queue[head]
                    head += 1
                    for j in range(indptr[u], indptr[u + 1]):
                        w = indices[j]
                        if stamp[w] != mark:
                            stamp[w] = mark
                            total += deg[w]
                            if level < radius:  # the last level is counted, never expanded
                                queue[tail] = w
                                tail += 1
            volume[v] = total


def volumes_cpu(graph: Graph, radius: int, max_batch_bytes: int,
                progress: ProgressFn) -> np.ndarray:
    """Volumes (int64) of every node on the CPU; see the module docstring."""
    deg = graph.degrees().astype(np.int64)
    if radius == 0:
        return deg
    if radius == 1:
        return deg + _neighbour_sum(graph.indptr, graph.indices, deg)
    n = graph.n
    workers = cpu_workers(n, max_batch_bytes)
    stamps = np.zeros((workers, n), np.int32)
    queues = np.empty((workers, n), np.int32)
    volume = np.empty(n, np.int64)
    step = max(1 << 16, -(-n // 16))  # ~16 progress reports (each a chance to cancel)
    for lo in range(0, n, step):
        progress(lo / n, f"daccer: {lo} of {n} balls")
        _ball_volumes(graph.indptr, graph.indices, deg, radius, lo, min(n, lo + step), stamps,
                      queues, volume)
    return volume


@numba.njit(cache=True, nogil=True, inline="always")
def _popcount(x: np.uint64) -> int:
    m2 = np.uint64(0x3333333333333333)
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & m2) + ((x >> np.uint64(2)) & m2)
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True)
def _closeness_batch(indptr: np.ndarray, indices: np.ndarray, start: int, count: int,
                     total: np.ndarray, reached: np.ndarray, harmonic: np.ndarray,
                     compensation: np.ndarray) -> None:
    # Bit-parallel pull BFS from sources start..start+count-1; each node sums its own distances.
    n = indptr.shape[0] - 1
    words = (count + 63) // 64
    visited = np.zeros((n, words), np.uint64)
    frontier = np.zeros((n, words), np.uint64)
    following = np.zeros((n, words), np.uint64)
    valid = np.full(words, ~np.uint64(0))
    if count % 64:
        valid[-1] = (np.uint64(1) << np.uint64(count % 64)) - np.uint64(1)
    for i in range(count):
        bit = np.uint64(1) << np.uint64(i & 63)
        visited[start + i, i >> 6] |= bit
        frontier[start + i, i >> 6] |= bit
    acc = np.empty(words, np.uint64)
    level, found = 0, 1
    while found:
        level += 1
        found = 0
        for v in range(n):
            done = True
            for w in range(words):
                acc[w] = 0
                done = done and visited[v, w] == valid[w]
            if not done:  # some source of the batch has not reached v yet
                for j in range(indptr[v], indptr[v + 1]):
                    for w in range(words):
                        acc[w] |= frontier[indices[j], w]
            new = 0
            for w in range(words):
                fresh = acc[w] & ~visited[v, w]
                following[v, w] = fresh
                visited[v, w] |= fresh
                new += _popcount(fresh)
            if new > 0:
                found += 1
                total[v] += new * level
                reached[v] += new
                x, s = new / level, harmonic[v]
                t = s + x
                compensation[v] += (s - t) + x if abs(s) >= abs(x) else (x - t) + s
                harmonic[v] = t
        frontier, following = following, frontier


@numba.njit(cache=True, nogil=True, parallel=True)
def _closeness_round(indptr: np.ndarray, indices: np.ndarray, starts: np.ndarray, per: int,
                     total: np.ndarray, reached: np.ndarray, harmonic: np.ndarray,
                     compensation: np.ndarray) -> None:
    # One batch per thread, each into its own row of sums: one parallel region per round, no
    # barrier per BFS level.
    n = indptr.shape[0] - 1
    for t in numba.prange(starts.shape[0]):
        _closeness_batch(indptr, indices, starts[t], min(per, n - starts[t]), total[t],
                         reached[t], harmonic[t], compensation[t])


def closeness_sums_cpu(graph: Graph, max_batch_bytes: int, progress: ProgressFn
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: sum of distances, nodes reached (itself excluded) and harmonic sum, on the CPU.

    Threads run one batch of up to 512 sources each; their bit sets and sums (``32 + 24 words``
    bytes per node) fit ``max_batch_bytes`` together, down to one thread with one word.
    """
    n = graph.n
    words = min(CPU_WORDS, batch_words(n, max_batch_bytes))
    per = 64 * words
    fit = max_batch_bytes // ((32 + WORD_BYTES_PER_NODE * words) * n)
    workers = max(1, min(numba.get_num_threads(), fit, -(-n // per)))
    total, reached = np.zeros((workers, n), np.int64), np.zeros((workers, n), np.int64)
    harmonic, compensation = np.zeros((workers, n)), np.zeros((workers, n))
    starts = np.arange(0, n, per)
    for first in range(0, starts.shape[0], workers):
        progress(first / starts.shape[0], f"closeness: sources {starts[first]} of {n}")
        _closeness_round(graph.indptr, graph.indices, starts[first:first + workers], per, total,
                         reached, harmonic, compensation)
    return total.sum(axis=0), reached.sum(axis=0), (harmonic + compensation).sum(axis=0)


# ------------------------------------------------------------------------------------------------
# GPU
# ------------------------------------------------------------------------------------------------


@cache
def _module() -> Any:
    """The compiled CUDA module (NVRTC, current device's arch), built once per process."""
    return cupy().RawModule(code=CUDA_SOURCE.read_text(), options=("-std=c++17",))


@cache
def _device_limits(device_id: int) -> tuple[int, int, int]:
    """Multiprocessors, opt-in shared memory per block and shared memory per multiprocessor."""
    attributes = cupy().cuda.Device(device_id).attributes
    return (int(attributes["MultiProcessorCount"]),
            int(attributes["MaxSharedMemoryPerBlockOptin"]),
            int(attributes["MaxSharedMemoryPerMultiprocessor"]))


@cache
def _ball_kernel(name: str, device_id: int) -> Any:
    """A ball kernel allowed the most dynamic shared memory its tiers use on this device."""
    kernel = _module().get_function(name)
    kernel.max_dynamic_shared_size_bytes = max(
        _tier_smem(tier) for tier in _tiers(device_id) if tier[0] == name)
    return kernel


def _tier_smem(tier: tuple[str, int, int]) -> int:
    name, cap, threads = tier
    return 12 * cap * (threads // 32 if name == "ball_warp" else 1)


@cache
def _tiers(device_id: int) -> tuple[tuple[str, int, int], ...]:
    """The tiers whose shared memory fits this device (static variables and reserve: 1 KiB)."""
    optin = _device_limits(device_id)[1]
    return tuple(tier for tier in TIERS if _tier_smem(tier) + 1024 <= optin)


def _grid(items: int, threads: int = THREADS) -> tuple[int]:
    return (max(1, -(-items // threads)),)


def _neighbour_sum_device(dg: DeviceGraph, x: Any, c0: int, c1: int, sub: int, cap: int) -> Any:
    """``min(cap, c0 + c1 x[v] + sum over neighbours u of (x[u] - sub))`` for every node."""
    cp = cupy()
    group = 1
    while group < 32 and group * dg.n < 2 * dg.m:  # about one lane per arc of an average row
        group *= 2
    out = cp.empty(dg.n, cp.int64)
    _module().get_function("neighbour_sum")(
        _grid(dg.n * group), (THREADS,), (dg.indptr, dg.indices, x, np.int32(dg.n),
                                          np.int32(group), np.int64(c0), np.int64(c1),
                                          np.int64(sub), np.int64(cap), out))
    return out


def volumes_device(graph: Graph, radius: int, max_batch_bytes: int,
                   progress: ProgressFn) -> Any:
    """Volumes of every node on the GPU (a device int64 array); see the module docstring."""
    cp = cupy()
    dg = on_device(graph)
    deg = cp.diff(dg.indptr).astype(cp.int32)
    deg64 = deg.astype(cp.int64)
    if radius == 0:
        return deg64
    if radius == 1:
        return _neighbour_sum_device(dg, deg64, 0, 1, 0, np.iinfo(np.int64).max)
    bound = deg64 + 1
    for _ in range(2, radius + 1):
        bound = _neighbour_sum_device(dg, bound, 1, 0, 1, dg.n)
    device_id = cp.cuda.Device().id
    sms, _, smem_per_sm = _device_limits(device_id)
    volume = cp.zeros(dg.n, cp.int64)
    lower = 0
    for tier in _tiers(device_id):
        name, cap, threads = tier
        sources = cp.flatnonzero((bound > lower) & (bound <= cap)).astype(cp.int32)
        lower, count = cap, int(sources.shape[0])
        if count == 0:
            continue
        progress(0.0, f"daccer: {count} balls of at most {cap} nodes")
        smem = _tier_smem(tier)
        per_sm = max(1, min(2048 // threads, smem_per_sm // (smem + 1024)))
        teams = threads // 32 if name == "ball_warp" else 1
        blocks = max(1, min(-(-count // teams), sms * per_sm))
        _ball_kernel(name, device_id)(
            (blocks,), (threads,), (dg.indptr, dg.indices, deg, sources, bound, np.int32(count),
                                    np.int32(radius), np.int32(cap), cp.zeros(1, cp.int32),
                                    volume), shared_mem=smem)
    hubs = cp.flatnonzero(bound > lower).astype(cp.int32)
    if hubs.shape[0]:
        _hub_volumes(dg, deg, hubs, radius, max_batch_bytes, volume, progress)
    return volume


def _last_mask(count: int) -> np.uint64:
    return np.uint64((1 << (count % 64)) - 1 if count % 64 else (1 << 64) - 1)


def _hub_volumes(dg: DeviceGraph, deg: Any, hubs: Any, radius: int, max_batch_bytes: int,
                 volume: Any, progress: ProgressFn) -> None:
    """Volumes of ``hubs`` (balls over the largest tier) by bit-parallel BFS of depth radius."""
    cp = cupy()
    mod = _module()
    n, total = dg.n, int(hubs.shape[0])
    sms = _device_limits(cp.cuda.Device().id)[0]
    per = 64 * min(batch_words(n, max_batch_bytes), MAX_GRID_Y)  # a word per grid row
    unused = cp.zeros(1, cp.uint32)
    for start in range(0, total, per):
        progress(start / total, f"daccer: {total} hub balls, batch at {start}")
        batch = hubs[start:start + per]
        count = int(batch.shape[0])
        words = -(-count // 64)
        visited, following = cp.zeros(n * words, cp.uint64), cp.zeros(n * words, cp.uint64)
        frontier = cp.empty(n * words, cp.uint64)
        mod.get_function("ms_seed")(_grid(32 * count), (THREADS,),
                                    (dg.indptr, dg.indices, batch, np.int32(count),
                                     np.int32(words), visited, following, unused, np.int32(0)))
        for _ in range(2, radius + 1):
            frontier, following = following, frontier
            mod.get_function("ms_pull")(_grid(n * words), (THREADS,),
                                        (dg.indptr, dg.indices, np.int32(n), np.int32(words),
                                         _last_mask(count), frontier, visited, following, unused,
                                         np.int32(0)))
        blocks = max(1, min(-(-n // THREADS), 8 * sms // words))
        mod.get_function("ms_volume")((blocks, words), (THREADS,),
                                      (np.int32(n), np.int32(words), visited, deg, batch,
                                       np.int32(count), volume))


def closeness_sums_device(graph: Graph, max_batch_bytes: int, progress: ProgressFn
                          ) -> tuple[Any, Any, Any]:
    """Device arrays as :func:`closeness_sums_cpu` returns, by bit-parallel BFS on the GPU."""
    cp = cupy()
    mod = _module()
    dg = on_device(graph)
    n = dg.n
    per = 64 * batch_words(n, max_batch_bytes)
    size = n * -(-min(per, n) // 64)
    visited, frontier, following = (cp.empty(size, cp.uint64) for _ in range(3))
    cnt, found = cp.zeros(n, cp.uint32), cp.zeros(1, cp.int32)
    total, reached = cp.zeros(n, cp.int64), cp.zeros(n, cp.int64)
    harmonic, compensation = cp.zeros(n, cp.float64), cp.zeros(n, cp.float64)
    nodes = cp.arange(n, dtype=cp.int32)
    for start in range(0, n, per):
        progress(start / n, f"closeness: sources {start} of {n}")
        count = min(per, n - start)
        words = -(-count // 64)
        vis, fro, fol = visited[:n * words], frontier[:n * words], following[:n * words]
        vis.fill(0)
        fol.fill(0)
        mod.get_function("ms_seed")(_grid(32 * count), (THREADS,),
                                    (dg.indptr, dg.indices, nodes[start:], np.int32(count),
                                     np.int32(words), vis, fol, cnt, np.int32(1)))
        level = 1
        while True:
            found.fill(0)
            mod.get_function("ms_accumulate")(_grid(n), (THREADS,),
                                              (np.int32(n), np.int32(level), cnt, total, reached,
                                               harmonic, compensation, found))
            if not int(found.get()[0]):  # the one sync per level
                break
            fro, fol = fol, fro
            level += 1
            mod.get_function("ms_pull")(_grid(n * words), (THREADS,),
                                        (dg.indptr, dg.indices, np.int32(n), np.int32(words),
                                         _last_mask(count), fro, vis, fol, cnt, np.int32(1)))
    return total, reached, harmonic + compensation


# ------------------------------------------------------------------------------------------------
# Registered functions
# ------------------------------------------------------------------------------------------------


def _backend(backend: str) -> tuple[Callable[..., Any], Callable[..., Any], Callable[[Any], Any]]:
    """Volumes function, closeness-sums function and device-to-host copy of a backend."""
    if backend == "cpu":
        return volumes_cpu, closeness_sums_cpu, lambda a: a
    return volumes_device, closeness_sums_device, lambda a: cupy().asnumpy(a)


def _daccer(graph: Graph, params: DaccerParams, progress: ProgressFn,
            backend: str) -> AlgorithmResult:
    volumes, closeness_sums, host = _backend(backend)
    split = 0.5 if params.compare_closeness else 1.0
    volume = host(volumes(graph, params.radius, params.max_batch_bytes,
                          _part(progress, 0.0, split)))
    order = ranking(volume)
    summary: dict[str, Any] = {"radius": params.radius, "top_volume": int(volume[order[0]])}
    if params.compare_closeness:
        total, reached, _ = closeness_sums(graph, params.max_batch_bytes,
                                           _part(progress, split, 1.0))
        summary.update(rank_agreement(volume, closeness_values(host(total), host(reached),
                                                               graph.n)))
    progress(1.0, "daccer: done")
    return AlgorithmResult(summary=summary, node_values={"volume": volume},
                           arrays={"ranking": order, "top": order[:params.top]},
                           node_id_fields=("ranking", "top"))


def daccer_cpu(graph: Graph, params: DaccerParams, progress: ProgressFn) -> AlgorithmResult:
    """DACCER volumes and ranking on the CPU.

    Parameters
    ----------
    graph : Graph
    params : DaccerParams
    progress : ProgressFn
        Called between batches of nodes; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``volume`` (int64) per node; ``ranking`` (internal ids by volume, largest first, ties by
        id) and ``top`` (its first ``top`` entries); summary per :class:`DaccerSummary`.
    """
    return _daccer(graph, params, progress, "cpu")


def daccer_gpu(graph: Graph, params: DaccerParams, progress: ProgressFn) -> AlgorithmResult:
    """DACCER volumes and ranking on the GPU; same contract and answer as :func:`daccer_cpu`."""
    return _daccer(graph, params, progress, "gpu")


def _closeness(graph: Graph, params: ClosenessParams, progress: ProgressFn,
               backend: str) -> AlgorithmResult:
    _, closeness_sums, host = _backend(backend)
    total, reached, harmonic = (host(a) for a in closeness_sums(graph, params.max_batch_bytes,
                                                                progress))
    values = harmonic if params.harmonic else closeness_values(total, reached, graph.n)
    progress(1.0, "closeness: done")
    return AlgorithmResult(
        summary={"harmonic": params.harmonic, "max": float(values.max()),
                 "mean": float(values.mean())},
        node_values={"closeness": values})


def closeness_cpu(graph: Graph, params: ClosenessParams, progress: ProgressFn
                  ) -> AlgorithmResult:
    """Exact closeness (or harmonic) centrality of every node on the CPU.

    Parameters
    ----------
    graph : Graph
        Weights, if any, are ignored (hop distances).
    params : ClosenessParams
    progress : ProgressFn
        Called between source batches; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``closeness`` (float64) per node: NetworkX's ``closeness_centrality`` (Wasserman-Faust)
        or ``harmonic_centrality``; summary per :class:`ClosenessSummary`.
    """
    return _closeness(graph, params, progress, "cpu")


def closeness_gpu(graph: Graph, params: ClosenessParams, progress: ProgressFn
                  ) -> AlgorithmResult:
    """Closeness on the GPU; same contract as :func:`closeness_cpu`, equal to rounding."""
    return _closeness(graph, params, progress, "gpu")


DACCER = register_algorithm(Algorithm(
    name="daccer",
    summary="DACCER closeness-ranking estimate: volume (degree sum of the r-hop ball) of every "
            "node, its ranking, and optionally its agreement with exact closeness.",
    params_model=DaccerParams,
    result_model=DaccerSummary,
    cpu=daccer_cpu,
    gpu=daccer_gpu,
))

CLOSENESS = register_algorithm(Algorithm(
    name="closeness",
    summary="Exact closeness centrality (Wasserman-Faust, as NetworkX) or harmonic centrality.",
    params_model=ClosenessParams,
    result_model=ClosenessSummary,
    cpu=closeness_cpu,
    gpu=closeness_gpu,
))

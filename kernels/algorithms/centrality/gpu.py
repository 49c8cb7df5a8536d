"""Centrality on the GPU: ball teams in shared memory for DACCER, bit-parallel BFS for the rest.

Kernels: ``centrality.cu`` (balls, neighbour sums, the reductions of the bit-parallel BFS) and the
shared sweep of :mod:`graphgpu.kernels.algorithms.common.bitset_bfs`; compiled once per process
and device by :mod:`graphgpu.kernels.core.cuda`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.centrality import driver
from graphgpu.kernels.algorithms.common import bitset_bfs
from graphgpu.kernels.core.cuda import (
    device_attribute,
    grid_for,
    kernels,
    lanes_per_row,
    sm_count,
)
from graphgpu.kernels.core.device import DeviceGraph, cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("centrality.cu")
THREADS = 256
#: Largest grid y dimension (``ms_volume`` runs one grid row per word).
MAX_GRID_Y = 65535
#: GPU ball tiers, smallest first: (kernel, largest bound it takes, threads per block). A warp
#: team needs 12 bytes of shared memory per unit of bound (table of 2 slots + ball entry).
TIERS = (("ball_warp", 128, 256), ("ball_warp", 512, 256), ("ball_block", 4096, 256),
         ("ball_block", 16384, 1024))
#: The kernels of ``centrality.cu``.
NAMES = ("ball_warp", "ball_block", "neighbour_sum", "ms_volume", "ms_accumulate")


def _tier_smem(tier: tuple[str, int, int]) -> int:
    name, cap, threads = tier
    return 12 * cap * (threads // 32 if name == "ball_warp" else 1)


def _tiers() -> tuple[tuple[str, int, int], ...]:
    """The tiers whose shared memory fits the current device (static variables and reserve:
    1 KiB)."""
    optin = device_attribute("MaxSharedMemoryPerBlockOptin")
    return tuple(tier for tier in TIERS if _tier_smem(tier) + 1024 <= optin)


def neighbour_sum_device(dg: DeviceGraph, x: Any, c0: int, c1: int, sub: int, cap: int) -> Any:
    """``min(cap, c0 + c1 x[v] + sum over neighbours u of (x[u] - sub))`` for every node."""
    cp = cupy()
    group = lanes_per_row(2 * dg.m / max(dg.n, 1))  # about one lane per arc of an average row
    out = cp.empty(dg.n, cp.int64)
    kernels(CUDA_SOURCE, NAMES)["neighbour_sum"](
        grid_for(dg.n * group, THREADS), (THREADS,),
        (dg.indptr, dg.indices, x, np.int32(dg.n), np.int32(group), np.int64(c0), np.int64(c1),
         np.int64(sub), np.int64(cap), out))
    return out


def volumes_device(graph: Graph, radius: int, max_batch_bytes: int,
                   progress: ProgressFn) -> Any:
    """Volumes of every node on the GPU (a device int64 array); see the family's notes."""
    cp = cupy()
    dg = on_device(graph)
    deg = cp.diff(dg.indptr).astype(cp.int32)
    deg64 = deg.astype(cp.int64)
    if radius == 0:
        return deg64
    if radius == 1:
        return neighbour_sum_device(dg, deg64, 0, 1, 0, np.iinfo(np.int64).max)
    bound = deg64 + 1
    for _ in range(2, radius + 1):
        bound = neighbour_sum_device(dg, bound, 1, 0, 1, dg.n)
    k = kernels(CUDA_SOURCE, NAMES)
    tiers = _tiers()
    for name in {tier[0] for tier in tiers}:  # the most dynamic shared memory its tiers use
        k[name].max_dynamic_shared_size_bytes = max(
            _tier_smem(tier) for tier in tiers if tier[0] == name)
    sms, smem_per_sm = sm_count(), device_attribute("MaxSharedMemoryPerMultiprocessor")
    volume = cp.zeros(dg.n, cp.int64)
    lower = 0
    for tier in tiers:
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
        k[name](
            (blocks,), (threads,), (dg.indptr, dg.indices, deg, sources, bound, np.int32(count),
                                    np.int32(radius), np.int32(cap), cp.zeros(1, cp.int32),
                                    volume), shared_mem=smem)
    hubs = cp.flatnonzero(bound > lower).astype(cp.int32)
    if hubs.shape[0]:
        hub_volumes(dg, deg, hubs, radius, max_batch_bytes, volume, progress)
    return volume


def hub_volumes(dg: DeviceGraph, deg: Any, hubs: Any, radius: int, max_batch_bytes: int,
                volume: Any, progress: ProgressFn) -> None:
    """Volumes of ``hubs`` (balls over the largest tier) by bit-parallel BFS of depth radius."""
    cp = cupy()
    n, total = dg.n, int(hubs.shape[0])
    sms = sm_count()
    per = 64 * min(bitset_bfs.batch_words(n, max_batch_bytes), MAX_GRID_Y)  # a word per grid row
    unused = cp.zeros(1, cp.uint32)
    for start in range(0, total, per):
        progress(start / total, f"daccer: {total} hub balls, batch at {start}")
        batch = hubs[start:start + per]
        count = int(batch.shape[0])
        words = -(-count // 64)
        visited, following = cp.zeros(n * words, cp.uint64), cp.zeros(n * words, cp.uint64)
        frontier = cp.empty(n * words, cp.uint64)
        bitset_bfs.seed(dg, batch, count, words, visited, following, unused, False)
        for _ in range(2, radius + 1):
            frontier, following = following, frontier
            bitset_bfs.pull(dg, count, words, frontier, visited, following, unused, False)
        blocks = max(1, min(-(-n // THREADS), 8 * sms // words))
        kernels(CUDA_SOURCE, NAMES)["ms_volume"](
            (blocks, words), (THREADS,),
            (np.int32(n), np.int32(words), visited, deg, batch, np.int32(count), volume))


def closeness_sums_device(graph: Graph, max_batch_bytes: int, progress: ProgressFn
                          ) -> tuple[Any, Any, Any]:
    """Device arrays as the CPU's ``closeness_sums`` returns, by bit-parallel BFS on the GPU."""
    cp = cupy()
    accumulate = kernels(CUDA_SOURCE, NAMES)["ms_accumulate"]
    dg = on_device(graph)
    n = dg.n
    cnt, found = cp.zeros(n, cp.uint32), cp.zeros(1, cp.int32)
    total, reached = cp.zeros(n, cp.int64), cp.zeros(n, cp.int64)
    harmonic, compensation = cp.zeros(n, cp.float64), cp.zeros(n, cp.float64)

    def level_done(start: int, count: int, words: int, following: Any, level: int) -> bool:
        found.fill(0)
        accumulate(grid_for(n, THREADS), (THREADS,), (np.int32(n), np.int32(level), cnt, total,
                                                      reached, harmonic, compensation, found))
        return bool(int(found.get()[0]))  # the one sync per level

    bitset_bfs.sweep_all_sources(dg, bitset_bfs.batch_words(n, max_batch_bytes), level_done,
                                 progress, "closeness:", cnt)
    return total, reached, harmonic + compensation


def daccer(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """DACCER volumes and ranking on the GPU; same contract and answer as the CPU backend's."""
    return driver.daccer(graph, params, progress, volumes_device, closeness_sums_device,
                         cupy().asnumpy)


def closeness(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Closeness on the GPU; same contract as the CPU backend's, equal to rounding."""
    return driver.closeness(graph, params, progress, closeness_sums_device, cupy().asnumpy)

"""Ruin and regrow on the GPU: the GPU memetic's first descent, a chain of rounds per block
(``ruin.cu``).

The host's descent (:mod:`.ruin`) runs one round at a time, each kept when better: about 2 ms
a round on ca-CondMat, one core. Here every block of the GPU runs such a chain of rounds (its
own random stream) from the best set so far, and between launches the best block's set becomes
every block's start: hundreds of chains where the host runs one. (Waves of single rounds, the
best of each kept, were tried first: a wave moves one step, and on ca-CondMat, where most early
rounds succeed, 5 s ended at 16.3M pairs against the host's 2.4M.) The launch's pool (the
members of the large components, weighted by degree) is made on the host from the best set, as
the host's rounds make it.

A chain's state (parents, sizes, candidates) lives in its block's shared memory where two chains
or more fit a multiprocessor (graphs up to ~12k nodes at k = n / 10 on an H100), else in the
block's slice of a global scratch, a chain of 1,024 threads a multiprocessor: the same chains
(one a multiprocessor) made the same rounds 1.5x faster on ca-CondMat than 256 threads in shared
memory, and on dblp-2010 (k = 3,006), past shared memory, a round takes ~25 ms, about a CPU
core's pace, so 132 chains descend from a CND* set's 19.08G pairs to 16.24G in 20 s where the
host's rounds reach 16.95G (``bench/results/cnd.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.critical_nodes.ruin import label_set, large_pool, ruin_span
from graphgpu.kernels.algorithms.critical_nodes.tuning import DESCENT_STALL_LAUNCHES, RUIN_NODES
from graphgpu.kernels.core import cuda
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph

RUIN_SOURCE = Path(__file__).with_name("ruin.cu")
RUIN_KERNELS = ("cnd_ruin_rounds", "cnd_ruin_rounds_global")
THREADS = 256
#: Components a warp remembers per candidate (WARP_SEEN of ruin.cu).
WARP_SEEN = 128
#: Shared memory a block may take on an H100 (227 KB) less the kernel's own (under 1 KB), where
#: no device can be asked (estimates): two chains' parents, sizes and candidates fit a
#: multiprocessor's on graphs of up to ~12k nodes at k = n / 10.
SHARED_BYTES = 226 << 10
#: The kernel's own shared memory, at most (block argmin, counts, sums: 672 bytes).
STATIC_SHARED = 1 << 10
#: A launch's rounds double up to this many arcs and nodes visited per chain (a round visits
#: each once or more): launches of ~50-100 ms on ca-HepTh and ca-CondMat, so the deadline and
#: cancel checks stay prompt and the chains share their best often. Not the clock: the same
#: seed gives the same launches.
LAUNCH_WORK = 1 << 22
#: Where a chain's state does not fit in shared memory it lives in global memory (a block's
#: slice of a scratch of at most GLOBAL_SCRATCH_BYTES), a chain of GLOBAL_THREADS a
#: multiprocessor. dblp-2010, k = 3,006, 20 s from the same start, H100: 256 threads 16.58G
#: pairs (2 chains an SM of 512: 16.37G; 8 of 256: 17.01G), 512 threads 16.38G, 1,024 16.24G.
GLOBAL_CHAINS_PER_SM = 1
GLOBAL_THREADS = 1024
GLOBAL_SCRATCH_BYTES = 2 << 30
#: Nodes and arcs a chain's round visits per second at least (dblp-2010: 1.9M in ~25 ms in
#: global memory, faster in shared), for the first launch's time; where a round would take more
#: than ROUND_SECONDS_MAX, the host's rounds descend instead (cancel checks a launch apart).
ROUND_RATE = 50e6
ROUND_SECONDS_MAX = 0.5
#: Seeds of successive descents and launches apart (each its own random streams).
_SEED_STEP = 1_000_003


def shared_bytes(n: int, k: int) -> int:
    """A chain's shared memory: parents (per node), sizes (per root + 1), deleted candidates
    and their keys, each warp's list of components seen."""
    return 4 * n + 4 * (n + 1) + 12 * (k + ruin_span(k)[1]) + 4 * WARP_SEEN * (THREADS // 32)


def shared_limit(on_gpu: bool = True) -> int:
    """Shared memory a chain may take: the current device's per-block limit less the kernel's
    own, or :data:`SHARED_BYTES` (an H100's) when estimating."""
    if not on_gpu:
        return SHARED_BYTES
    return cuda.device_attribute("MaxSharedMemoryPerBlockOptin") - STATIC_SHARED


def in_shared(n: int, k: int, on_gpu: bool = True) -> bool:
    """Whether the chains keep their state in shared memory: where two or more fit a
    multiprocessor (where one does, a chain of :data:`GLOBAL_THREADS` in global memory makes
    the same rounds faster)."""
    return 2 * shared_bytes(n, k) <= shared_limit(on_gpu)


def state_bytes(n: int, k: int) -> int:
    """A chain's state in global memory (its parents, sizes, deleted candidates and keys), in
    whole 256-byte pieces."""
    return -(-(shared_bytes(n, k) - 4 * WARP_SEEN * (THREADS // 32)) // 256) * 256


def round_seconds(graph: Graph) -> float:
    """A chain's round's time at most, about (:data:`ROUND_RATE`)."""
    return (int(graph.indices.shape[0]) + graph.n) / ROUND_RATE


def on_gpu_chains(graph: Graph, k: int, on_gpu: bool = True) -> bool:
    """Whether the GPU descends (:class:`GpuDescent`): where chains fit in shared memory or a
    round is short enough in global memory."""
    return in_shared(graph.n, k, on_gpu) or round_seconds(graph) <= ROUND_SECONDS_MAX


def descent_bytes(n: int, k: int, on_gpu: bool = True) -> int:
    """A chain's device memory: its best set and objective, and its state where that is not in
    shared memory."""
    return 4 * k + 8 + (0 if in_shared(n, k, on_gpu) else state_bytes(n, k))


def descent_chains(n: int, k: int, sms: int, on_gpu: bool = True) -> int:
    """Chains (blocks) of a launch: as many as the multiprocessors hold at once, by shared
    memory (blocks of :data:`THREADS`), or :data:`GLOBAL_CHAINS_PER_SM` a multiprocessor in
    global memory (blocks of :data:`GLOBAL_THREADS`, within :data:`GLOBAL_SCRATCH_BYTES`)."""
    if in_shared(n, k, on_gpu):
        return sms * min(4, shared_limit(on_gpu) // shared_bytes(n, k))
    return max(1, min(sms * GLOBAL_CHAINS_PER_SM, GLOBAL_SCRATCH_BYTES // state_bytes(n, k)))


class GpuDescent:
    """The GPU memetic's first descent (each call its own random streams): chains of
    ruin-and-regrow rounds, a block each (state in shared or global memory), until
    ``DESCENT_STALL_LAUNCHES`` launches in a row bring nothing better or the deadline passes,
    where the largest component a set leaves has ``least`` nodes or more (``RUIN_NODES``; the
    worker's warm-up takes any). A better set is reported and becomes every chain's start.
    ``ran_on`` is ``"gpu"`` once a launch ran (the summary's ``descent_on``); ``rounds`` counts
    the rounds run."""

    def __init__(self, graph: Graph, k: int, seed: int, least: int = RUIN_NODES) -> None:
        self.graph, self.k, self.seed, self.least = graph, k, seed, least
        self.calls = 0
        self.rounds = 0
        self.ran_on: str | None = None
        self.lo, self.hi = ruin_span(k)
        n = graph.n
        self.comp, self.sizes = np.zeros(n, np.int64), np.zeros(n + 1, np.int64)
        self.queue, self.pool, self.cum = (np.zeros(n, np.int64) for _ in range(3))

    def _label(self, nodes: np.ndarray) -> int:
        """Components (``comp``, ``sizes``) of the kept nodes when ``nodes`` are deleted;
        returns the pairs left."""
        return label_set(self.graph, nodes, self.comp, self.sizes, self.queue)

    def _pool(self) -> tuple[Any, Any]:
        """On the device: the members of the large components of the last set labelled and
        their cumulative degrees (:func:`.ruin.large_pool`, as the host's rounds draw them)."""
        m = large_pool(self.graph.indptr, self.comp, self.sizes, self.pool, self.cum)
        cp = cupy()
        return cp.asarray(self.pool[:m].astype(np.int32)), cp.asarray(self.cum[:m])

    def __call__(self, nodes: np.ndarray, deadline: float, tick: Callable[[], Any],
                 report: Callable[[int, np.ndarray], Any] | None) -> np.ndarray:
        """``nodes`` after the chains, or as they are where no component is large."""
        cp = cupy()
        graph, k = self.graph, self.k
        n = graph.n
        best_objective = self._label(nodes)
        self.calls += 1
        if self.sizes.max() < max(self.least, 2):  # (2: a pool with arcs to draw by)
            return nodes
        dg = on_device(graph)
        chains = descent_chains(n, k, cuda.sm_count())
        if in_shared(n, k):
            kernel = cuda.kernels(RUIN_SOURCE, RUIN_KERNELS)["cnd_ruin_rounds"]
            kernel.max_dynamic_shared_size_bytes = shared = shared_bytes(n, k)
            state: tuple[Any, ...] = ()
            threads = THREADS
        else:
            kernel = cuda.kernels(RUIN_SOURCE, RUIN_KERNELS)["cnd_ruin_rounds_global"]
            shared, stride, threads = 0, state_bytes(n, k), GLOBAL_THREADS
            state = (cp.empty(chains * stride, dtype=cp.uint8), np.int64(stride))
        objectives = cp.empty(chains, dtype=cp.int64)
        sets = cp.empty(chains * k, dtype=cp.int32)
        best = np.asarray(nodes, np.int32)
        start = cp.asarray(best)
        pool, cum = self._pool()
        most = max(1, LAUNCH_WORK // (int(graph.indices.shape[0]) + n))
        stall, launch, rounds, restart = 0, 0, 1, True
        spent = round_seconds(graph)  # the first launch's time, about
        while stall < DESCENT_STALL_LAUNCHES and time.perf_counter() + spent < deadline:
            tick()
            began = time.perf_counter()
            launch += 1
            kernel((chains,), (threads,), (
                dg.indptr, dg.indices, np.int32(n), np.int32(k), start, np.int64(best_objective),
                np.int32(restart), pool, cum, np.int32(pool.shape[0]), np.int32(self.lo),
                np.int32(self.hi),
                np.uint64((self.seed * _SEED_STEP + self.calls) * _SEED_STEP + launch),
                np.int32(rounds), objectives, sets, *state), shared_mem=shared)
            found = objectives.get()
            self.ran_on = "gpu"
            self.rounds += rounds * chains
            winner = int(np.argmin(found))  # the first of equals: the seed fixes the choice
            restart = found[winner] < best_objective
            if restart:  # every chain goes on from the best
                best_objective, stall = int(found[winner]), 0
                best = sets[winner * k:(winner + 1) * k].get()
                start = cp.asarray(best)
                self._label(best)
                pool, cum = self._pool()
                if report is not None:
                    report(best_objective, best.copy())
            else:
                stall += 1
            grown = min(2 * rounds, most)
            # the next launch's time: one that would end past the deadline is not made
            spent = (time.perf_counter() - began) * grown / rounds
            rounds = grown
        return best

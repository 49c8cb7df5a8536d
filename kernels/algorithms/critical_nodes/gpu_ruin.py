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
RUIN_KERNELS = ("cnd_ruin_rounds",)
THREADS = 256
#: Components a warp remembers per candidate (WARP_SEEN of ruin.cu).
WARP_SEEN = 128
#: Shared memory a block may take on an H100 (227 KB) less the kernel's own (under 1 KB), where
#: no device can be asked (estimates): a chain's parents, sizes and candidates live there, so
#: an H100 descends graphs of up to ~24k nodes at k = n / 10, ~28k at k = n / 100 (a round is a
#: chain of dependent loads: from global memory 40x slower than a CPU core's round on
#: ca-CondMat).
SHARED_BYTES = 226 << 10
#: The kernel's own shared memory, at most (block argmin, counts, sums: 672 bytes).
STATIC_SHARED = 1 << 10
#: A launch's rounds double up to this many arcs and nodes visited per chain (a round visits
#: each once or more): launches of ~50-100 ms on ca-HepTh and ca-CondMat, so the deadline and
#: cancel checks stay prompt and the chains share their best often. Not the clock: the same
#: seed gives the same launches.
LAUNCH_WORK = 1 << 22
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


def fits(n: int, k: int, on_gpu: bool = True) -> bool:
    """Whether a chain's state fits in a block's shared memory."""
    return shared_bytes(n, k) <= shared_limit(on_gpu)


def descent_bytes(k: int) -> int:
    """A chain's device memory: its best set and objective."""
    return 4 * k + 8


def descent_chains(n: int, k: int, sms: int, on_gpu: bool = True) -> int:
    """Chains (blocks of :data:`THREADS`) of a launch: as many as the multiprocessors hold at
    once, by shared memory."""
    return sms * max(1, min(4, shared_limit(on_gpu) // shared_bytes(n, k)))


class GpuDescent:
    """The GPU memetic's first descent (each call its own random streams): chains of
    ruin-and-regrow rounds, a block each, until ``DESCENT_STALL_LAUNCHES`` launches in a row
    bring nothing better or the deadline passes, where the largest component a set leaves has
    ``least`` nodes or more (``RUIN_NODES``; the worker's warm-up takes any). A better set is
    reported and becomes every chain's start. ``ran_on`` is ``"gpu"`` once a launch ran (the
    summary's ``descent_on``); ``rounds`` counts the rounds run."""

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
        self.ran_on = "gpu"
        kernel = cuda.kernels(RUIN_SOURCE, RUIN_KERNELS)["cnd_ruin_rounds"]
        dg = on_device(graph)
        chains = descent_chains(n, k, cuda.sm_count())
        kernel.max_dynamic_shared_size_bytes = shared_bytes(n, k)
        objectives = cp.empty(chains, dtype=cp.int64)
        sets = cp.empty(chains * k, dtype=cp.int32)
        best = np.asarray(nodes, np.int32)
        start = cp.asarray(best)
        pool, cum = self._pool()
        most = max(1, LAUNCH_WORK // (int(graph.indices.shape[0]) + n))
        stall, launch, rounds, spent, restart = 0, 0, 1, 0.0, True
        while stall < DESCENT_STALL_LAUNCHES and time.perf_counter() + spent < deadline:
            tick()
            began = time.perf_counter()
            launch += 1
            kernel((chains,), (THREADS,), (
                dg.indptr, dg.indices, np.int32(n), np.int32(k), start, np.int64(best_objective),
                np.int32(restart), pool, cum, np.int32(pool.shape[0]), np.int32(self.lo),
                np.int32(self.hi),
                np.uint64((self.seed * _SEED_STEP + self.calls) * _SEED_STEP + launch),
                np.int32(rounds), objectives, sets), shared_mem=shared_bytes(n, k))
            found = objectives.get()
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

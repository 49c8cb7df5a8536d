"""CPU engine of ``critical_nodes`` (Numba): greedy starts, swap search and memetic search.

The Numba kernels live in :mod:`~graphgpu.kernels.algorithms.critical_nodes.greedy` (CND*),
:mod:`~graphgpu.kernels.algorithms.critical_nodes.search` (swap search) and
:mod:`~graphgpu.kernels.algorithms.critical_nodes.memetic` (greedy completion and the memetic
driver); this module runs them for :func:`critical_nodes_cpu`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.critical_nodes.driver import solve
from graphgpu.kernels.algorithms.critical_nodes.greedy import cnd_star, greedy_mis
from graphgpu.kernels.algorithms.critical_nodes.memetic import Filler, population_starts
from graphgpu.kernels.algorithms.critical_nodes.params import CndParams
from graphgpu.kernels.algorithms.critical_nodes.ruin import FirstDescent
from graphgpu.kernels.algorithms.critical_nodes.search import SearchState
from graphgpu.kernels.algorithms.critical_nodes.tuning import MAX_LISTED, START_SHARE, patience_for
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, Exchange, ProgressFn

__all__ = ["cnd_star", "critical_nodes_cpu", "greedy_cpu", "greedy_mis", "search_cpu",
           "CpuImprover"]


def greedy_cpu(graph: Graph, k: int, seeds: range, progress: ProgressFn,
               share: float = 1.0, until: float | None = None) -> tuple[int, int, np.ndarray, int]:
    """CND* from each seed (none begins after ``until``, but the first); returns (objective,
    index of the best start, removed mask, starts run)."""
    comp = np.zeros(graph.n, np.int64)
    sizes = np.zeros(graph.n + 1, np.int64)
    best = (-1, -1, np.zeros(0, bool))
    run = 0
    for i, seed in enumerate(seeds):
        if i > 0 and until is not None and time.perf_counter() >= until:
            break
        progress(share * i / len(seeds), f"critical_nodes: greedy start {i + 1}/{len(seeds)}")
        objective = int(cnd_star(graph.indptr, graph.indices, k, np.uint64(seed), comp, sizes))
        run += 1
        if best[0] < 0 or objective < best[0]:
            best = (objective, i, comp == 0)
    return (*best, run)


def search_cpu(graph: Graph, start: np.ndarray, objective: int, seed: int, patience: int,
               started: float, deadline: float, progress: ProgressFn
               ) -> tuple[np.ndarray, int, float, int, list[list[float]]]:
    """One swap-search chain until ``deadline``, from ``start`` (the best greedy CND* set) or
    from a greedy removal by exact articulation gains
    (:class:`~graphgpu.kernels.algorithms.critical_nodes.memetic.Filler`, given ``START_SHARE``
    of the time limit) when that is better.

    Returns
    -------
    removed, objective, time_to_best, iterations, timeline
    """
    span = deadline - started
    filler = Filler(graph, start.shape[0], seed, span)
    filler.tick = lambda: progress(0.1, "critical_nodes: greedy removal start")
    removal = filler.complete(np.zeros(0, np.int32), time.perf_counter() + START_SHARE * span)
    first = removal if filler.evaluate(removal) < objective else start  # else CND*'s
    chain = SearchState(graph.indptr, graph.indices, first.astype(np.int32), seed)
    objective = chain.best_objective
    timeline = [[round(time.perf_counter() - started, 6), float(objective)]]
    found = timeline[0][0]
    batch = 1  # grows to ~20 ms: one move may take milliseconds on a large graph
    while time.perf_counter() < deadline and chain.best_objective > 0:
        tick = time.perf_counter()
        before = chain.best_objective
        chain.run(batch, patience)
        now = time.perf_counter()
        if chain.best_objective < before:
            found = now - started
            if len(timeline) < MAX_LISTED:
                timeline.append([round(found, 6), float(chain.best_objective)])
        # Batches of ~20 ms: progress and cancel checks stay prompt without costing much.
        batch = max(1, min(batch * 2, int(batch * 0.02 / max(now - tick, 1e-6))))
        span = max(deadline - started, 1e-9)
        progress(0.1 + 0.9 * min((now - started) / span, 1.0),
                 f"critical_nodes: search best {chain.best_objective} after "
                 f"{chain.iterations} moves")
    return chain.best.astype(np.int64), chain.best_objective, found, chain.iterations, timeline


class CpuImprover:
    """The memetic search's improvement step on the CPU: one swap-search chain, reset per set,
    run until ``patience_for(k)`` moves bring no new best (or ``moves`` moves); before it, on
    the first population's best set, ruin-and-regrow rounds (:meth:`descend`)."""

    def __init__(self, graph: Graph, k: int, seed: int) -> None:
        self.graph, self.k, self.seed = graph, k, seed
        self.chain = SearchState(graph.indptr, graph.indices, np.arange(k), seed)
        self.patience = patience_for(k)
        self.moves = 0  # made so far (the summary's iterations)
        self.descent = FirstDescent(graph, k, seed)
        #: Called with each chain's improvements as they come (the memetic driver's offer).
        self.report: Callable[[int, np.ndarray], Any] | None = None
        self.tick: Callable[[], Any] = lambda: None  # called between batches (cancel checks)

    def __call__(self, sets: list[np.ndarray], moves: int, deadline: float
                 ) -> list[tuple[int, np.ndarray]]:
        out = []
        chain = self.chain
        for nodes in sets:
            chain.reset(nodes)
            done, batch = 0, 1
            while (done < moves and chain.best_objective > 0 and chain.stalled < self.patience
                   and time.perf_counter() < deadline):
                self.tick()
                tick = time.perf_counter()
                step = min(batch, moves - done)
                before = chain.best_objective
                chain.run(step, -self.patience)
                done += step
                if self.report is not None and chain.best_objective < before:
                    self.report(chain.best_objective, chain.best.astype(np.int64))
                # Batches of ~10 ms: the deadline is checked often enough on any graph.
                spent = max(time.perf_counter() - tick, 1e-6)
                batch = max(1, min(batch * 2, int(batch * 0.01 / spent)))
            self.moves += done
            out.append((chain.best_objective, chain.best.astype(np.int64)))
        return out

    def descend(self, nodes: np.ndarray, deadline: float) -> np.ndarray:
        """``nodes`` after the first descent (:class:`.ruin.FirstDescent`)."""
        return self.descent(nodes, deadline, self.tick, self.report)


def critical_nodes_cpu(graph: Graph, params: CndParams, progress: ProgressFn,
                       exchange: Exchange | None = None) -> AlgorithmResult:
    """Critical nodes on the CPU (Numba).

    Parameters
    ----------
    graph : Graph
    params : CndParams
    progress : ProgressFn
        Called between starts, batches of swap moves and new memetic bests; may raise to cancel.
    exchange : Exchange or None
        A memetic island's link to the other islands of its distributed job (the worker
        passes it to shards); None: the run stands alone.

    Returns
    -------
    AlgorithmResult
        ``removed`` (uint8 per node), ``critical`` (the k deleted nodes), summary per
        :class:`~graphgpu.kernels.algorithms.critical_nodes.CndSummary`.

    Raises
    ------
    InvalidInput
        ``k`` not below the number of nodes (``field="k"``).
    """
    def starts(seeds: range, share: float, until: float | None
               ) -> tuple[int, int, np.ndarray, None, int, str]:
        objective, start, mask, run = greedy_cpu(graph, params.k, seeds, progress, share, until)
        return objective, start, np.flatnonzero(mask), None, run, "cpu"

    return solve(graph, params, progress, "cpu", exchange=exchange,
                 improver=lambda: CpuImprover(graph, params.k, params.seed),
                 batch_of=lambda improve: 1,
                 memetic_starts=lambda batch: population_starts(graph, params.k, params.seed,
                                                               params.time_limit_s),
                 starts=starts,
                 search=lambda state, removed, objective, started, deadline, patience, told:
                 search_cpu(graph, removed, objective, params.seed, patience, started, deadline,
                            told))


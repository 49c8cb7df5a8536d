"""Memetic search for critical nodes: a population of k-sets, backbone crossover, swap search.

After the memetic CNP searches of Zhou, Hao & Glover (component-based neighbourhood, backbone
crossover) with reduce-solve-combine restarts:

* The driver (:func:`memetic`) is the same on both backends; only the improvement of a batch of
  k-sets (the swap search of
  :func:`graphgpu.kernels.algorithms.critical_nodes.search.swap_search`) differs: the CPU runs
  the sets one after another, the GPU all of a batch at once, one warp each.
* Anytime: the k highest-degree nodes are the first answer (milliseconds), then the backend's
  CND* starts (as many as a share of the time limit allows), then the greedy removal, then
  each improved population member; every new best is reported through
  ``progress`` and kept in the timeline. An improver with a ``descend`` method (the CPU's
  ruin and regrow, :mod:`~graphgpu.kernels.algorithms.critical_nodes.ruin`) takes the best
  start down first, and there the greedy removal runs only where it is cheap.
* Crossover keeps the nodes both parents delete (the backbone) and fills the rest greedily by
  exact articulation gains (:func:`greedy_fill` in
  :mod:`~graphgpu.kernels.algorithms.critical_nodes.fill`, the gain of a component is cached
  until the component changes); where that would take more than ``FILL_SHARE`` of the time
  limit (large k on large graphs), several nodes per walk (:func:`fill_round`).
* The improvement runs swap moves until ``patience_for(k)`` moves bring no new best; on both
  backends one removal in ``RANDOM_MOVE`` (see
  :mod:`~graphgpu.kernels.algorithms.critical_nodes.tuning`) takes a random node of the
  component instead of its best cut.
* After ``STALL_GENERATIONS`` generations without a new best, a restart keeps the best member,
  fixes the nodes most of the population agrees on (reduce), completes them with random and
  greedy choices and improves the new members (solve), and breeds them with the best (combine).
* The driver may end a run bounded by time with the swap search from the best set
  (:mod:`~graphgpu.kernels.algorithms.critical_nodes.driver`, small instances): the memetic
  search then gets the time before it.
* Islands (``exchange``, the shards of a distributed run): every ``MIGRATION_SHARE`` of the
  time limit, between generations, the best set goes out and the other islands' bests come in;
  each arrival's objective is recomputed here, and it joins the population as a child would.

Deterministic per seed when the run ends by ``generations`` rather than by the time limit (and
stands alone: arrivals from other islands depend on their timing).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from graphgpu.kernels.algorithms.critical_nodes.cost import cnd_seconds, walk_seconds
from graphgpu.kernels.algorithms.critical_nodes.fill import fill_round, greedy_fill
from graphgpu.kernels.algorithms.critical_nodes.greedy import cnd_star
from graphgpu.kernels.algorithms.critical_nodes.moves import CTL_OBJ, load_set
from graphgpu.kernels.algorithms.critical_nodes.search import SearchState
from graphgpu.kernels.algorithms.critical_nodes.tuning import (
    BEAT_S,
    FILL_SHARE,
    FIRST_START_SHARE,
    FIX_SHARE,
    MIGRATION_MIN_S,
    MIGRATION_SHARE,
    POPULATION_SHARE,
    QUALITY_WEIGHT,
    RANDOM_SHARE,
    REMOVAL_SHARE,
    RUIN_SHARE,
    STALL_GENERATIONS,
    START_SHARE,
    STARTS_MIN,
)
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import Exchange, ProgressFn

#: improve(sets, moves, deadline) -> [(objective, set)] for a batch of k-sets.
Improver = Callable[[list[np.ndarray], int, float], list[tuple[int, np.ndarray]]]
#: starts() -> (k-sets from the backend's greedy (CND*) starts, for the first population; the
#: device that ran them, None where none ran).
Starts = Callable[[], tuple[list[np.ndarray], str | None]]


def ranks(values: np.ndarray) -> np.ndarray:
    """0 for the smallest value, 1 for the next, ... (ties in order)."""
    return np.argsort(np.argsort(values, kind="stable"), kind="stable").astype(float)


class Filler:
    """Completes partial k-sets greedily (:func:`greedy_fill`) in time-checked batches."""

    def __init__(self, graph: Graph, k: int, seed: int, limit: float = 0.0) -> None:
        self.graph, self.k, self.limit = graph, k, limit
        self.walk_s = walk_seconds(graph)  # to size the batches
        self.tick: Callable[[], Any] = lambda: None  # called between batches (cancel checks)
        self.state = SearchState(graph.indptr, graph.indices, np.arange(k), seed)
        n = graph.n
        self.notabu = np.zeros(n, np.int64)
        self.gain = np.full(n, -1, np.int64)
        self.node = np.zeros(n, np.int32)
        self.root = np.zeros(n, np.int32)
        # Highest degree first: the completion when the time runs out mid-fill.
        self.by_degree = np.argsort(-np.diff(graph.indptr), kind="stable")

    def complete(self, partial: np.ndarray, deadline: float) -> np.ndarray:
        """``partial`` (fewer than k distinct nodes) grown to k nodes."""
        s, g = self.state, self.graph
        load_set(g.indptr, g.indices, partial.astype(np.int32), s.deleted, s.label, s.size,
                 s.free, s.dlist, s.dpos, s.ctl, s.queue)
        self.invalidate()
        nd, steps = partial.shape[0], 8
        while nd < self.k:
            if time.perf_counter() >= deadline:  # out of time: the best hubs left
                rest = self.by_degree[s.deleted[self.by_degree] == 0][:self.k - nd]
                return np.concatenate([s.dlist[:nd], rest.astype(np.int32)])
            self.tick()
            batch = self.batch(self.k - nd)
            if batch > 1:
                nd = fill_round(g.indptr, g.indices, self.k, nd, batch, s.ctl, s.deleted,
                                s.label, s.size, s.free, s.dlist, s.dpos, self.notabu, s.queue,
                                *s.scratch, *s.cut)
                self.invalidate()
                continue
            tick = time.perf_counter()
            nd = greedy_fill(g.indptr, g.indices, self.k, nd, steps, s.ctl, s.deleted, s.label,
                             s.size, s.free, s.dlist, s.dpos, self.notabu, s.seen, s.queue,
                             *s.scratch, *s.cut, self.gain, self.node, self.root)
            # Batches of ~10 ms keep the deadline within reach on large graphs.
            spent = max(time.perf_counter() - tick, 1e-6)
            steps = max(1, min(steps * 2, int(steps * 0.01 / spent)))
        return s.dlist[:self.k].copy()

    def batch(self, left: int) -> int:
        """Nodes per walk so that ``left`` more deletions take about ``FILL_SHARE`` of the time
        limit (1 on small graphs: the exact greedy; an estimate, so the seed fixes the sets)."""
        if self.limit <= 0:
            return 1
        return max(1, math.ceil(2 * left * self.walk_s / (FILL_SHARE * self.limit)))

    def invalidate(self) -> None:
        """Every component's cached cut unknown, a member of each as its root."""
        s = self.state
        self.gain[:] = -1
        alive = np.flatnonzero(s.label >= 0)
        self.root[s.label[alive]] = alive

    def evaluate(self, nodes: np.ndarray) -> int:
        """Pairs left when the k nodes ``nodes`` are deleted."""
        s, g = self.state, self.graph
        load_set(g.indptr, g.indices, nodes.astype(np.int32), s.deleted, s.label, s.size,
                 s.free, s.dlist, s.dpos, s.ctl, s.queue)
        return int(s.ctl[CTL_OBJ])


def sizes_for(n: int, k: int) -> tuple[int, int]:
    """Population size and the most swap moves per improvement: fewer members as n * k grows,
    so a large graph spends its budget on search rather than on building the population."""
    work = n * k
    population = 16 if work <= 1_000_000 else 8 if work <= 20_000_000 else 4
    return population, 20 * (100 + 4 * k)


def population_starts(graph: Graph, k: int, seed: int, limit: float
                      ) -> tuple[list[np.ndarray], str | None]:
    """CND* sets from seeds ``seed, seed + 1, ...`` on the host, for a memetic population, and
    ``"cpu"`` (None where none fit): as many as the population takes (``STARTS_MIN`` at least:
    CND* is bimodal on some graphs, and the best start goes on), fewer where their estimated
    cost passes ``START_SHARE`` of the time ``limit`` (the first: ``FIRST_START_SHARE``; by the
    estimate, not the clock, so the count depends on the parameters only)."""
    cost = max(cnd_seconds(graph, k), 1e-9)
    count = min(max(sizes_for(graph.n, k)[0] - 1, STARTS_MIN),
                max(int(START_SHARE * limit / cost), int(cost <= FIRST_START_SHARE * limit)))
    comp = np.zeros(graph.n, np.int64)
    sizes = np.zeros(graph.n + 1, np.int64)
    sets = []
    for i in range(count):
        cnd_star(graph.indptr, graph.indices, k, np.uint64(seed + i), comp, sizes)
        sets.append(np.flatnonzero(comp == 0).astype(np.int32))
    return sets, "cpu" if sets else None


@dataclass
class Outcome:
    """What a memetic run returns (the best set, with its history)."""

    removed: np.ndarray
    objective: int
    found: float
    iterations: int = 0
    generations: int = 0
    restarts: int = 0
    migrants: int = 0
    starts_run: int = 0
    starts_on: str | None = None
    timeline: list[list[float]] = field(default_factory=list)

    def summary_fields(self, seed: int) -> dict:
        """The run's fields of the result summary (``seed``: the run's)."""
        return {"best_seed": seed, "best_start": 0, "starts_run": self.starts_run,
                "starts_on": self.starts_on, "time_to_best_s": self.found,
                "iterations": self.iterations, "generations": self.generations, "restarts":
                self.restarts, "migrants": self.migrants, "timeline": self.timeline}


class Memetic:
    """One memetic run: the population, the best so far and its timeline."""

    def __init__(self, graph: Graph, k: int, seed: int, improve: Improver, batch: int,
                 started: float, deadline: float, progress: ProgressFn,
                 starts: Starts | None = None, exchange: Exchange | None = None) -> None:
        self.graph, self.k, self.improve, self.batch = graph, k, improve, batch
        self.starts, self.exchange = starts, exchange
        self.migration_s = max(MIGRATION_MIN_S, MIGRATION_SHARE * (deadline - started))
        self.next_migration = started + self.migration_s
        self.started, self.deadline, self.progress = started, deadline, progress
        self.until = deadline  # end of the current phase (building the population: earlier)
        self.rng = np.random.default_rng(seed)
        self.filler = Filler(graph, k, seed, deadline - started)
        self.size, self.moves = sizes_for(graph.n, k)
        self.members: list[tuple[int, np.ndarray]] = []
        self.best: tuple[int, np.ndarray] | None = None
        self.out = Outcome(np.zeros(0, np.int64), -1, 0.0)
        self.beat = time.perf_counter()
        if hasattr(improve, "report"):  # long improvements report their bests as they come
            improve.report = self.offer
        if hasattr(improve, "tick"):
            improve.tick = self.heartbeat
        self.filler.tick = self.heartbeat

    def fraction(self) -> float:
        span = max(self.deadline - self.started, 1e-9)
        return min((time.perf_counter() - self.started) / span, 1.0) * 0.99

    def heartbeat(self) -> None:
        """A progress report every ``BEAT_S`` at least, new best or not: the caller's chance to
        cancel (its progress function raises) while an improvement or a completion runs."""
        now = time.perf_counter()
        if now - self.beat >= BEAT_S and self.best is not None:
            self.beat = now
            self.progress(self.fraction(), f"critical_nodes: memetic generation "
                                           f"{self.out.generations}, best {self.best[0]}")

    def offer(self, objective: int, nodes: np.ndarray) -> bool:
        """Record a candidate; True when it is a new best."""
        if self.best is not None and objective >= self.best[0]:
            return False
        self.best = (objective, np.sort(nodes))
        now = time.perf_counter() - self.started
        self.out.found = now
        if len(self.out.timeline) < 1000:
            self.out.timeline.append([round(now, 6), float(objective)])
        self.beat = time.perf_counter()
        self.progress(self.fraction(), f"critical_nodes: memetic best {objective} after "
                                       f"{self.out.generations} generations")
        return True

    def out_of_time(self) -> bool:
        return time.perf_counter() >= self.until

    def random_partial(self, keep: np.ndarray) -> np.ndarray:
        """``keep`` plus random nodes, RANDOM_SHARE of k in all, fewer than k nodes."""
        n, k = self.graph.n, self.k
        extra = int(RANDOM_SHARE * k)
        picked = np.unique(np.concatenate([keep, self.rng.choice(n, min(extra, n), False)]))
        if picked.shape[0] >= k:
            picked = self.rng.choice(picked, k - 1, False)
        return picked.astype(np.int32)

    def improved(self, sets: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
        """``sets`` improved and offered; none once the time is out (an improvement's set-up
        alone, the GPU chains' on dblp-2010, took 0.9 s past a 5 s run's deadline)."""
        if self.out_of_time():
            return []
        results = self.improve(sets, self.moves, self.until)
        for objective, nodes in results:
            self.offer(objective, nodes)
        return results

    def seed_population(self, fixed: np.ndarray) -> None:
        """Members built from ``fixed`` plus random nodes, completed greedily, then improved."""
        sets = []
        while len(self.members) + len(sets) < self.size and not self.out_of_time():
            sets.append(self.filler.complete(self.random_partial(fixed), self.until))
        for i in range(0, len(sets), self.batch):
            if self.out_of_time():
                break
            self.members += self.improved(sets[i:i + self.batch])

    def crossover(self) -> np.ndarray:
        """The nodes two random members share, completed greedily."""
        a, b = self.rng.choice(len(self.members), 2, replace=False)
        backbone = np.intersect1d(self.members[a][1], self.members[b][1])
        if backbone.shape[0] >= self.k:  # twins: a random node goes back
            backbone = np.delete(backbone, self.rng.integers(backbone.shape[0]))
        return self.filler.complete(backbone, self.deadline)

    def admit(self, objective: int, nodes: np.ndarray) -> bool:
        """Pool update by quality and distance (the rank-based update of the CNP memetic
        searches): with the child in, the member that ranks worst by ``QUALITY_WEIGHT`` times
        its objective's rank plus the rest times its likeness to its nearest other member
        leaves, never the best. True: the child stayed."""
        nodes = np.sort(nodes)
        if any(o == objective and np.array_equal(m, nodes) for o, m in self.members):
            return False
        pool = [*self.members, (objective, nodes)]
        # Nodes each pair shares: one sparse product, not an intersection per pair (17 sets of
        # 265: 0.5 ms, not 2.4; the GPU admits up to 128 children a generation).
        cols = np.concatenate([m for _, m in pool])
        incidence = sparse.csr_matrix((np.ones(cols.shape[0], np.int32), (np.repeat(
            np.arange(len(pool)), [m.shape[0] for _, m in pool]), cols)), (len(pool), self.graph.n))
        shared = (incidence @ incidence.T).toarray()
        np.fill_diagonal(shared, -1)
        quality = np.array([o for o, _ in pool])
        score = (QUALITY_WEIGHT * ranks(quality)
                 + (1.0 - QUALITY_WEIGHT) * ranks(shared.max(axis=1)))
        score[int(np.argmin(quality))] = -1.0  # the best stays
        leaves = int(np.argmax(score))
        if leaves == len(self.members):
            return False
        self.members[leaves] = (objective, nodes)
        return True

    def migrate(self) -> None:
        """Send the best set to the other islands and let theirs in (objectives recomputed:
        what arrives is checked, not trusted)."""
        now = time.perf_counter()
        if self.exchange is None or now < self.next_migration:
            return
        self.next_migration = now + self.migration_s
        n, k = self.graph.n, self.k
        for _, nodes in self.exchange(self.best[0], self.best[1]):
            nodes = np.asarray(nodes, np.int64)
            if (nodes.shape[0] != k or nodes.min(initial=0) < 0 or nodes.max(initial=0) >= n
                    or np.unique(nodes).shape[0] != k):
                continue
            objective = self.filler.evaluate(nodes)
            self.offer(objective, nodes)
            self.out.migrants += self.admit(objective, nodes)

    def restart(self) -> None:
        """Reduce-solve-combine: keep the best, fix what most members share, rebuild the rest."""
        counts = np.bincount(np.concatenate([m for _, m in self.members]),
                             minlength=self.graph.n)
        fixed = np.flatnonzero(counts >= FIX_SHARE * len(self.members))
        self.members = [min(self.members, key=lambda m: m[0])]
        self.seed_population(fixed)
        self.out.restarts += 1

    def run(self, generations: int | None) -> Outcome:
        # Milliseconds in: the k best hubs are a valid answer.
        hubs = self.filler.by_degree[:self.k].astype(np.int32)
        self.offer(self.filler.evaluate(hubs), hubs)
        # CND* starts offered as they are (never worse than greedy from here), then the greedy
        # removal by articulation gains (trees, hubs) in START_SHARE of the time; all improved.
        # An improver with a first descent (the CPU's ruin and regrow) takes the best set down
        # first where its largest component is large; there the removal only runs when its k
        # walks of the graph fit in REMOVAL_SHARE of the time (on ca-CondMat, 5 s: 1 s for
        # 59.5M pairs, cut and padded, against CND*'s ~40M).
        initial, self.out.starts_on = self.starts() if self.starts is not None else ([], None)
        self.out.starts_run = len(initial)
        for nodes in initial:
            self.offer(self.filler.evaluate(nodes), nodes)
        span, none = self.deadline - self.started, np.zeros(0, np.int32)
        descend = getattr(self.improve, "descend", None)
        if (not initial or descend is None
                or self.k * walk_seconds(self.graph) <= REMOVAL_SHARE * span):
            initial.append(self.filler.complete(none, self.started + START_SHARE * span))
        initial.sort(key=self.filler.evaluate)  # the best improved first
        if descend is not None:
            initial[0] = descend(initial[0], self.started + RUIN_SHARE * span)
            self.offer(self.filler.evaluate(initial[0]), initial[0])
        self.until = self.started + POPULATION_SHARE * span  # then the generations
        for i in range(0, len(initial), self.batch):
            if self.out_of_time():
                break
            self.members += self.improved(initial[i:i + self.batch])
        distinct: dict[bytes, tuple[int, np.ndarray]] = {}  # one member per set
        for objective, nodes in sorted(self.members, key=lambda m: m[0]):
            distinct.setdefault(np.sort(nodes).tobytes(), (objective, np.sort(nodes)))
        self.members = list(distinct.values())[:self.size]
        self.seed_population(np.zeros(0, np.int32))
        self.until = self.deadline
        # No full population in its time (large n * k): improve the best again and again.
        while generations is None and len(self.members) < self.size and not self.out_of_time():
            if descend is not None:  # the descent again from the chain's best (it stalls fast)
                descend(self.best[1], self.deadline)
            self.improved([self.best[1]])
            self.migrate()
        stall = 0
        while (not self.out_of_time() and self.best[0] > 0 and len(self.members) >= 2
               and (generations is None or self.out.generations < generations)):
            children = []
            for _ in range(self.batch):
                children.append(self.crossover())
                if self.out_of_time():
                    break
            before = self.best[0]
            self.heartbeat()
            for objective, nodes in self.improved(children):
                self.admit(objective, nodes)
            self.migrate()
            self.out.generations += 1
            stall = 0 if self.best[0] < before else stall + 1
            if stall >= STALL_GENERATIONS:
                stall = 0
                self.restart()
        self.out.objective, self.out.removed = self.best[0], self.best[1].astype(np.int64)
        self.out.iterations = int(getattr(self.improve, "moves", 0))
        if not self.out.timeline:
            self.out.timeline.append([0.0, float(self.best[0])])
        return self.out


def memetic(graph: Graph, k: int, seed: int, improve: Improver, batch: int, started: float,
            deadline: float, progress: ProgressFn, generations: int | None = None,
            starts: Starts | None = None, exchange: Exchange | None = None) -> Outcome:
    """Run the memetic search until ``deadline`` (or ``generations`` generations).

    Parameters
    ----------
    graph : Graph
    k, seed : int
        Nodes to delete; seed of every random choice (with the improver's own seed).
    improve : Improver
        Each set after ``moves`` swap moves (it counts them in its ``moves`` attribute).
    batch : int
        Children bred per generation (the improver's natural batch: 1 on the CPU).
    started, deadline : float
        ``time.perf_counter()`` values of the run's start and end.
    progress : ProgressFn
        Receives every new best; may raise to cancel.
    generations : int or None
        Stop after this many generations (None: at the deadline).
    starts : Starts or None
        The backend's CND* starts (first members).
    exchange : Exchange or None
        The island's link to the other islands of a distributed run.

    Returns
    -------
    Outcome
    """
    return Memetic(graph, k, seed, improve, batch, started, deadline, progress,
                   starts, exchange).run(generations)

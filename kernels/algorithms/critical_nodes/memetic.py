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
  ``progress`` and kept in the timeline.
* Crossover keeps the nodes both parents delete (the backbone) and fills the rest greedily by
  exact articulation gains (:func:`greedy_fill`, the gain of a component is cached until the
  component changes); where that would take more than ``FILL_SHARE`` of the time limit (large
  k on large graphs), several nodes per walk (:func:`fill_round`).
* The improvement runs swap moves until ``patience_for(k)`` moves bring no new best; on both
  backends one removal in ``RANDOM_MOVE`` (see
  :mod:`~graphgpu.kernels.algorithms.critical_nodes.tuning`) takes a random node of the
  component instead of its best cut.
* After ``STALL_GENERATIONS`` generations without a new best, a restart keeps the best member,
  fixes the nodes most of the population agrees on (reduce), completes them with random and
  greedy choices and improves the new members (solve), and breeds them with the best (combine).
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

import numba
import numpy as np
from scipy import sparse

from graphgpu.kernels.algorithms.critical_nodes.cost import walk_seconds
from graphgpu.kernels.algorithms.critical_nodes.greedy import pairs
from graphgpu.kernels.algorithms.critical_nodes.moves import (
    CTL_FREE,
    CTL_OBJ,
    best_cut,
    components,
    delete_node,
    delete_split,
    delete_whole,
    load_set,
)
from graphgpu.kernels.algorithms.critical_nodes.search import SearchState
from graphgpu.kernels.algorithms.critical_nodes.tuning import (
    BEAT_S,
    FILL_SHARE,
    FIX_SHARE,
    MIGRATION_MIN_S,
    MIGRATION_SHARE,
    POPULATION_SHARE,
    QUALITY_WEIGHT,
    RANDOM_SHARE,
    STALL_GENERATIONS,
    START_SHARE,
)
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import Exchange, ProgressFn

#: improve(sets, moves, deadline) -> [(objective, set)] for a batch of k-sets.
Improver = Callable[[list[np.ndarray], int, float], list[tuple[int, np.ndarray]]]
#: starts() -> k-sets from the backend's greedy (CND*) starts, for the first population.
Starts = Callable[[], list[np.ndarray]]


@numba.njit(cache=True, nogil=True)
def greedy_fill(indptr, indices, k, nd, steps, ctl, deleted, label, size, free, dlist, dpos,
                notabu, seen, queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes, gain,
                node, root) -> int:
    """Up to ``steps`` times, delete the node whose removal leaves the fewest pairs.

    ``gain[c]`` (pairs a cut of component c saves, -1 when unknown) and ``node[c]`` cache each
    component's best cut; a deletion invalidates only the pieces of the component it split
    (they are next to the deleted node, and ``root[c]`` remembers one member of each). Returns
    the new number of deleted nodes (at most ``k``).
    """
    n = indptr.shape[0] - 1
    done = 0
    while nd < k and done < steps:
        best_c, best_gain = -1, np.int64(-1)
        for c in range(n):
            if size[c] < 2:
                continue
            if gain[c] < 0:
                v, left = best_cut(indptr, indices, deleted, label, size, notabu, ctl,
                                   np.int64(root[c]),  # int64 as fill_round's: one compile
                                   queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes)
                node[c] = v
                gain[c] = pairs(size[c]) - left
            if gain[c] > best_gain:
                best_c, best_gain = c, gain[c]
        if best_c >= 0:
            v = node[best_c]
        else:  # only isolated nodes left: any of them
            v = 0
            while deleted[v]:
                v += 1
        if best_c >= 0 and best_gain == size[best_c] - 1:  # no split: labels stay
            nd = delete_whole(deleted, label, size, free, dlist, dpos, ctl, v, nd)
        elif best_c >= 0:  # the cached walk of the component is still valid: it is unchanged
            nd = delete_split(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                              queue, low, sub, parent, edge, v, nd)
        else:
            nd = delete_node(indptr, indices, deleted, label, size, free, dlist, dpos, ctl, seen,
                             queue, v, nd)
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if not deleted[w]:
                gain[label[w]] = -1
                root[label[w]] = w
        done += 1
    return nd


@numba.njit(cache=True, nogil=True)
def fill_round(indptr, indices, k, nd, batch, ctl, deleted, label, size, free, dlist, dpos,
               notabu, queue, disc, low, sub, parent, edge, cut_pairs, cut_nodes) -> int:
    """One round of the batched completion: one walk of every component, then the ``batch``
    nodes whose single removal saves the most pairs are deleted together and the components
    are relabelled once: O(V + E) per ``batch`` nodes instead of per node, for large k on
    large graphs (the gains of a round's later nodes are estimates). Returns the new count."""
    n = indptr.shape[0] - 1
    walked = np.zeros(n, np.uint8)
    cand = np.empty(n, np.int64)
    gains = np.empty(n, np.int64)
    m = 0
    for v in range(n):
        if deleted[v]:
            continue
        c = label[v]
        if size[c] < 2 or walked[c]:
            continue
        walked[c] = 1
        best_cut(indptr, indices, deleted, label, size, notabu, ctl, v, queue, disc, low, sub,
                 parent, edge, cut_pairs, cut_nodes)
        for i in range(size[c]):  # the walk leaves the members in ``queue``
            x = queue[i]
            cand[m] = x
            gains[m] = pairs(size[c]) - cut_pairs[x]
            m += 1
    take = min(batch, k - nd)
    if m > 0:
        order = np.argsort(-gains[:m], kind="mergesort")  # stable: ties by node id
        take = min(take, m)
        for i in range(take):
            x = cand[order[i]]
            deleted[x] = 1
            dlist[nd] = x
            dpos[x] = nd
            nd += 1
    else:  # only isolated nodes left
        v = 0
        while take > 0:
            if not deleted[v]:
                deleted[v] = 1
                dlist[nd] = v
                dpos[v] = nd
                nd += 1
                take -= 1
            v += 1
    obj, nfree = components(indptr, indices, deleted, label, size, free, queue)
    ctl[CTL_OBJ] = obj
    ctl[CTL_FREE] = nfree
    return nd


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
    timeline: list[list[float]] = field(default_factory=list)

    def summary_fields(self, seed: int) -> dict:
        """The run's fields of the result summary (``seed``: the run's)."""
        return {"best_seed": seed, "best_start": 0, "starts_run": 0, "time_to_best_s": self.found,
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
        initial = self.starts() if self.starts is not None else []
        for nodes in initial:
            self.offer(self.filler.evaluate(nodes), nodes)
        span, none = self.deadline - self.started, np.zeros(0, np.int32)
        initial.append(self.filler.complete(none, self.started + START_SHARE * span))
        initial.sort(key=self.filler.evaluate)  # the best improved first
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

"""Maximal independent set family: LUMIS, DUMIS and IDUMIS with parallel reductions, CPU and GPU.

After Waldherr, *Maximum Independent Set Algorithms on the GPU* (Heidelberg, 2025):

* ``luby`` (LUMIS): every live vertex draws a random priority; a vertex joins the set when it
  beats all its live neighbours, and its neighbours leave. Repeat until nothing is live.
* ``degree`` (DUMIS): the same rounds, but a lower residual degree wins and the random priority
  only breaks ties; degrees are recounted every ``update_frequency`` rounds (0: never).
* ``iterated`` (IDUMIS): from a DUMIS(f=1) solution, drop each member with probability 1/2,
  complete the result with DUMIS(f=1) on what was freed, keep the best, until ``time_limit_s``.
* ``reduce``: before any method, rounds of exact reductions, once or to a fixed point. Isolated
  vertices join; a vertex ``v`` with a live neighbour ``u`` such that ``N[u] ⊆ N[v]`` leaves
  (domination). Domination covers the paper's degree-one and isolated-clique (simplicial) rules:
  the pendant's or simplicial vertex's neighbours are dominated by it, so they leave and it joins
  as isolated in the next round. The decisions are mapped back as they are made (a reduction only
  ever fixes original vertices in or out).

How we go past the paper:

* Deterministic everywhere. A round decides from the state at its start (a decided vertex carries
  the round that decided it, so one kernel launch per round reads a consistent snapshot), and
  priorities are a bijective hash of (seed, vertex): no atomics race changes the outcome, and CPU
  and GPU return the *same* set for ``luby`` and ``degree``.
* Safe simultaneous domination: ``v`` leaves only for a ``u`` with ``(deg u, u) < (deg v, v)``,
  so a whole round of removals is safe at once (the paper's rule, made order-proof), followed by a
  maximality repair: reduced-away vertices left with no member beside them are completed.
* IDUMIS with reductions never perturbs what the reductions proved (frozen vertices), starts each
  iteration from the best set so far (iterated local search acceptance), and on the CPU runs
  (1,2)-swap local search (Andrade, Resende & Werneck 2012) after every completion, the "local
  search" the thesis' future work asks for.
* GPU: a light/heavy split (one thread per short row, one warp per long row), compacted work lists
  and a round counter on the device: one launch per round (two when degrees are recounted), one
  small read-back per batch of rounds.

Tags (one per vertex, shared by both backends): 0 live; round ``r >= 2`` writes ``2r+1`` (joined)
and ``2r+2`` (left); 1/2 frozen in/out (reductions); 3/4 fixed in/out before a completion phase.
Odd tags are members. A vertex is live at the start of round ``r`` when its tag is 0 or >= 2r+1.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.mis.cpu import FIRST_ROUND, CpuEngine
from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    Algorithm,
    AlgorithmResult,
    ProgressFn,
    register_algorithm,
)

#: Longest per-round list kept in the summary.
MAX_ROUNDS_LISTED = 1000
#: Longest best-over-time list kept in the summary.
MAX_TIMELINE = 1000


class MisParams(BaseModel):
    """Parameters of ``mis``."""

    # The first example is what a worker warms up with: it reaches every kernel in 50 ms.
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"method": "iterated", "reduce": "exhaustive", "time_limit_s": 0.05},
                     {"method": "degree", "update_frequency": 2}]})

    method: Literal["luby", "degree", "iterated"] = Field(
        "degree", description="luby (LUMIS), degree (DUMIS) or iterated (IDUMIS).")
    update_frequency: int = Field(
        2, ge=0, le=1 << 20,
        description="degree: recount residual degrees every this many rounds (0: never).")
    reduce: Literal["none", "once", "exhaustive"] = Field(
        "none", description="Exact reductions first: none, one round, or to a fixed point.")
    time_limit_s: float = Field(
        1.0, gt=0.0, le=3600.0, description="iterated: stop improving after this many seconds.")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="Random seed; same seed, same set.")


class MisSummary(BaseModel):
    """Summary of a ``mis`` result."""

    method: str = Field(description="The method that ran.")
    size: int = Field(description="Vertices in the set.")
    rounds: int = Field(description="Rounds of the method (of the first solution for iterated).")
    vertices_left: list[int] = Field(
        description=f"Live vertices after each round (first {MAX_ROUNDS_LISTED} rounds).")
    reduced_vertices: int = Field(description="Vertices fixed in or out by reductions.")
    reduction_rounds: int = Field(description="Rounds of reductions applied.")
    iterations: int = Field(description="iterated: perturbation rounds completed.")
    best_over_time: list[list[float]] = Field(
        description="iterated: [seconds, size] each time the best set grew.")
    verified: bool = Field(description="The set was checked independent (and maximal if so).")
    maximal: bool = Field(description="No vertex can be added; false only if time cut it short.")
    time_limited: bool = Field(
        description="The time limit ended the run (iterated: always; the set is still maximal "
                    "unless the first solution itself was cut short).")


class Engine(Protocol):
    """What a backend provides; :func:`solve` drives both the same way (see ``mis_cpu``)."""

    batch: int

    def start(self, r: int) -> None: ...
    def reduce_round(self, r: int) -> int: ...
    def freeze(self) -> None: ...
    def mark(self, salt: int, drop: bool) -> int: ...
    def release(self, r: int) -> None: ...
    def run_rounds(self, r: int, r0: int, f: int, salt: int, use_degree: bool,
                   recount_first: bool) -> tuple[int, list[int], int, bool]: ...
    def improve(self) -> int: ...
    def save_best(self) -> None: ...
    def restore_best(self) -> None: ...
    def verify(self) -> tuple[int, int, int]: ...
    def in_set(self) -> np.ndarray: ...


def salt(seed: int, iteration: int, stream: int) -> int:
    """32-bit salt of the priorities (stream 0) or drops (stream 1) of one iteration."""
    digest = hashlib.blake2b(f"{seed}:{iteration}:{stream}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little")


@dataclass
class Phase:
    """Rounds of one completion phase."""

    live: list[int] = field(default_factory=list)  # live vertices at the start of each round
    wins: int = 0
    done: bool = False

    @property
    def vertices_left(self) -> list[int]:
        """Live vertices after each round (unknown after the last one if time cut the phase)."""
        after = self.live[1:] + [0] if self.done and self.live else self.live[1:]
        return after[:MAX_ROUNDS_LISTED]


def complete(engine: Engine, r0: int, f: int, seed_salt: int, use_degree: bool,
             recount_first: bool, deadline: float = math.inf,
             progress: ProgressFn | None = None, n: int = 1) -> Phase:
    """Run rounds from ``r0`` until nothing is live (or ``deadline`` passes between batches)."""
    phase = Phase()
    r = r0
    while True:
        r, live, wins, phase.done = engine.run_rounds(r, r0, f, seed_salt, use_degree,
                                                      recount_first)
        phase.live += live
        phase.wins += wins
        if phase.done or time.perf_counter() > deadline:
            return phase
        if progress is not None and live:
            progress(0.9 * (1.0 - live[-1] / max(n, 1)), f"mis: round {r - r0}, {live[-1]} live")


def compute(engine: Engine, n: int, params: MisParams, progress: ProgressFn) -> dict:
    """Run ``params.method`` on a backend's engine; returns the summary fields but the size.

    The set is left in the engine (:meth:`Engine.verify`, :meth:`Engine.in_set`). Benchmarks
    time this part alone.
    """
    started = time.perf_counter()
    iterated = params.method == "iterated"
    deadline = started + params.time_limit_s if iterated else math.inf
    use_degree = params.method != "luby"
    f = 1 if iterated else params.update_frequency
    progress(0.0, f"mis: {params.method}")

    r = FIRST_ROUND
    engine.start(r)
    reduction_rounds = 0
    if params.reduce != "none":
        while True:
            changes = engine.reduce_round(r)
            r += 1
            reduction_rounds += 1
            if changes == 0 or params.reduce == "once":
                break
        engine.freeze()
    phase = complete(engine, r, f, salt(params.seed, 0, 0), use_degree, reduction_rounds > 0,
                     deadline, progress, n)
    # Isolated vertices join before the first round, and reductions fix all but the live ones.
    reduced = n - (phase.live[0] if phase.live else 0) if reduction_rounds else 0
    if reduction_rounds and phase.done:
        # Reduced-away vertices may have no member beside them: complete the set on those.
        engine.mark(0, drop=False)
        engine.release(FIRST_ROUND)
        complete(engine, FIRST_ROUND, f, salt(params.seed, 0, 0), use_degree, True)

    iterations, timeline = 0, []
    if iterated and phase.done:
        engine.improve()
        best = engine.verify()[0]
        engine.save_best()
        timeline.append([round(time.perf_counter() - started, 6), best])
        while time.perf_counter() < deadline:
            iterations += 1
            kept = engine.mark(salt(params.seed, iterations, 1), drop=True)
            engine.release(FIRST_ROUND)
            size = kept + complete(engine, FIRST_ROUND, 1, salt(params.seed, iterations, 0),
                                   True, True).wins
            size += engine.improve()
            if size > best:
                best = size
                engine.save_best()
                if len(timeline) < MAX_TIMELINE:
                    timeline.append([round(time.perf_counter() - started, 6), best])
            elif size < best:
                engine.restore_best()  # perturb the best set next (plateau moves are kept)
            progress(min(0.99, (time.perf_counter() - started) / params.time_limit_s),
                     f"mis: best {best} after {iterations} iterations")
        engine.restore_best()
    return {
        "method": params.method, "rounds": len(phase.live), "vertices_left": phase.vertices_left,
        "reduced_vertices": reduced, "reduction_rounds": reduction_rounds,
        "iterations": iterations, "best_over_time": timeline,
        "time_limited": iterated or not phase.done, "complete": phase.done,
    }


def solve(engine: Engine, n: int, params: MisParams, progress: ProgressFn) -> AlgorithmResult:
    """:func:`compute`, then verify the set (raise if it is wrong) and build the result."""
    summary = compute(engine, n, params, progress)
    size, conflicts, undominated = engine.verify()
    maximal = undominated == 0
    if conflicts or not (maximal or not summary.pop("complete")):
        raise KernelError(f"mis: internal error, the set is not "
                          f"{'independent' if conflicts else 'maximal'} ({conflicts} arcs "
                          f"inside, {undominated} vertices uncovered)", code="invalid_result")
    in_set = engine.in_set()
    summary.update(size=size, verified=True, maximal=maximal)
    progress(1.0, f"mis: {size} vertices")
    return AlgorithmResult(summary=summary, node_values={"in_set": in_set},
                           arrays={"members": np.flatnonzero(in_set).astype(np.int64)},
                           node_id_fields=("members",))


def mis_cpu(graph: Graph, params: MisParams, progress: ProgressFn) -> AlgorithmResult:
    """Maximal independent set on the CPU (Numba).

    Parameters
    ----------
    graph : Graph
    params : MisParams
    progress : ProgressFn
        Called between batches of rounds and after every iteration; may raise to cancel.

    Returns
    -------
    AlgorithmResult
        ``in_set`` (int8 0/1) per node, ``members`` (internal ids of the set, translated to
        original ids by the worker); summary per :class:`MisSummary`.

    Raises
    ------
    KernelError
        If the set fails verification (a bug: never returned silently).
    """
    return solve(CpuEngine(graph), graph.n, params, progress)


def mis_gpu(graph: Graph, params: MisParams, progress: ProgressFn) -> AlgorithmResult:
    """Maximal independent set on the GPU; same contract as :func:`mis_cpu`, same set for
    ``luby`` and ``degree``."""
    from graphgpu.kernels.algorithms.mis.gpu import engine_for

    return solve(engine_for(graph), graph.n, params, progress)


MIS = register_algorithm(Algorithm(
    name="mis",
    summary="Maximal independent set: Luby, degree-priority (DUMIS) or iterated (IDUMIS), "
            "with optional exact reductions; verified before it is returned.",
    params_model=MisParams,
    result_model=MisSummary,
    cpu=mis_cpu,
    gpu=mis_gpu,
))

"""The ``mis`` run, written once for both backends: :func:`compute` drives a backend's
:class:`Engine` through reductions, completion phases and (``iterated``) perturbations, and
:func:`solve` verifies the set and builds the result (see :mod:`graphgpu.kernels.algorithms.mis`
for the methods and the tag encoding).
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from graphgpu.kernels.core.errors import KernelError
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: Longest per-round list kept in the summary.
MAX_ROUNDS_LISTED = 1000
#: Longest best-over-time list kept in the summary.
MAX_TIMELINE = 1000
#: Tags of decided vertices outside the rounds (a round r >= FIRST_ROUND writes 2r+1 / 2r+2):
#: decided by reductions (frozen: never revisited), and decided before a completion phase.
FROZEN_IN, FROZEN_OUT, FIXED_IN, FIXED_OUT = 1, 2, 3, 4
FIRST_ROUND = 2


class RunParams(Protocol):
    """The parameters a run reads (``MisParams``)."""

    method: str
    update_frequency: int
    reduce: str
    time_limit_s: float
    seed: int


class Engine(Protocol):
    """What a backend provides; :func:`solve` drives both the same way (``cpu.CpuEngine``,
    ``gpu.GpuEngine``)."""

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
    def in_set(self) -> Any: ...  # int8 per vertex, in the backend's arrays


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


def compute(engine: Engine, n: int, params: RunParams, progress: ProgressFn,
            iterations_cap: int | None = None) -> dict:
    """Run ``params.method`` on a backend's engine; returns the summary fields but the size.

    The set is left in the engine (:meth:`Engine.verify`, :meth:`Engine.in_set`). Benchmarks
    time this part alone. ``iterations_cap`` also ends ``iterated`` after that many iterations
    (worker warm-up: every step runs, however slow the machine; jobs have none).
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
        while time.perf_counter() < deadline and (iterations_cap is None
                                                   or iterations < iterations_cap):
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


def solve(engine: Engine, n: int, params: RunParams, progress: ProgressFn) -> AlgorithmResult:
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
                           arrays={"members": in_set.nonzero()[0].astype(np.int64)},
                           node_id_fields=("members",))

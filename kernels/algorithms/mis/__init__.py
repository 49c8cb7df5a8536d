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

Modules: :mod:`~graphgpu.kernels.algorithms.mis.driver` (the run, written once against a backend
engine), :mod:`~graphgpu.kernels.algorithms.mis.cpu` (Numba engine, with
:mod:`~graphgpu.kernels.algorithms.mis.reductions`), :mod:`~graphgpu.kernels.algorithms.mis.gpu`
(CuPy engine over ``mis.cu``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.mis.cpu import mis_cpu
from graphgpu.kernels.algorithms.mis.driver import MAX_ROUNDS_LISTED
from graphgpu.kernels.algorithms.mis.gpu import mis_gpu
from graphgpu.kernels.algorithms.mis.warmup import warm_up
from graphgpu.kernels.core.registry import Algorithm, register_algorithm

__all__ = ["MIS", "MisParams", "MisSummary", "mis_cpu", "mis_gpu"]


class MisParams(BaseModel):
    """Parameters of ``mis``."""

    # Workers warm up with these examples and, past their time limits, `warmup.warm_up`.
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


MIS = register_algorithm(Algorithm(
    name="mis",
    summary="Maximal independent set: Luby, degree-priority (DUMIS) or iterated (IDUMIS), "
            "with optional exact reductions; verified before it is returned.",
    params_model=MisParams,
    result_model=MisSummary,
    cpu=mis_cpu,
    gpu=mis_gpu,
    directed="symmetrise",
    warm_up=warm_up,
))

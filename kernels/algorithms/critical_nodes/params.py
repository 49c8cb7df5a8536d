"""Parameter and summary models of ``critical_nodes``, and the seeds a run's parameters give."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from graphgpu.kernels.algorithms.critical_nodes.tuning import POLISH_MAX_WORK
from graphgpu.kernels.core.registry import VOLATILE


class CndParams(BaseModel):
    """Parameters of ``critical_nodes``."""

    # Workers warm up with every example (together they reach every GPU kernel); the first is
    # deterministic, so the registry's contract test can compare the backends on it.
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"k": 10, "method": "multistart", "starts": 128, "seed": 7},
                     {"k": 3, "method": "search", "starts": 4, "time_limit_s": 0.05}]})

    k: int = Field(ge=1, description="Nodes to delete (1 <= k < number of nodes).")
    method: Literal["greedy", "multistart", "distributed", "search", "memetic"] = Field(
        "greedy", description="greedy (CND*), multistart (pCND*), distributed (pCND* over "
                              "queue jobs), search (swap local search from the best greedy) or "
                              "memetic (population search: the choice for quality).")
    seed: int = Field(0, ge=0, le=2**62, description="Seed of the first start; same seed, same "
                                                     "answer (search: for the same moves).")
    starts: int = Field(64, ge=1, le=1 << 16, description="multistart, distributed, search: "
                                                           "greedy starts (seeds seed, seed+1, "
                                                           "...).")
    shards: int = Field(2, ge=1, le=256, description="distributed: queue jobs the starts are "
                                                      "split into.")
    time_limit_s: float = Field(1.0, gt=0.0, le=3600.0, description="search: seconds of swap "
                                                                     "moves after the starts; "
                                                                     "memetic: seconds in all.")
    generations: int | None = Field(None, ge=0, le=1 << 30,
                                    description="memetic: stop after this many generations "
                                                "(same seed, same answer); none: at the time "
                                                "limit.")
    shard_method: Literal["multistart", "memetic"] = Field(
        "multistart", description="distributed: what each shard runs: multistart (its range of "
                                  "the seeds) or memetic (an island: a memetic search of "
                                  "time_limit_s from its own seed).")


class CndSummary(BaseModel):
    """Summary of a ``critical_nodes`` result."""

    method: str = Field(description="The method that ran.")
    k: int = Field(description="Nodes deleted (the `critical` array, original ids).")
    objective: int = Field(description="Connected pairs left: sum of s(s-1)/2 over components.")
    objective_before: int = Field(description="The same for the whole graph.")
    components: int = Field(description="Components left.")
    component_sizes: list[list[int]] = Field(
        description="[size, count] pairs, largest size first (at most 1000).")
    best_seed: int = Field(description="Seed of the greedy start that won (search: it started "
                                       "from).")
    best_start: int = Field(description="Index of that start among the starts.")
    shard: int | None = Field(None, description="distributed: the shard that found it.")
    shards_ok: int | None = Field(None, description="distributed: shards that succeeded.")
    starts_run: int = Field(description="Greedy starts run.")
    starts_on: str | None = Field(
        None, description="The device that ran the greedy starts (memetic: those of its first "
                          "population). The GPU backend runs a lone start, or a few, on a large "
                          "graph on the host's near-linear CND* ('cpu') where that is estimated "
                          "to end before the GPU's waves (an exact start is a chain of dependent "
                          "steps).",
        json_schema_extra=VOLATILE)
    descent_on: str | None = Field(
        None, description="memetic: the device that ran the first descent (ruin and regrow) on "
                          "a start with a large component: 'cpu' (one round at a time) or 'gpu' "
                          "(chains of rounds, a block each).",
        json_schema_extra=VOLATILE)
    time_to_best_s: float = Field(description="Seconds from the start of the run to the best.",
                                  json_schema_extra=VOLATILE)
    iterations: int = Field(0, description="search, memetic: swap moves made (all chains).",
                            json_schema_extra=VOLATILE)
    generations: int = Field(0, description="memetic: generations bred.",
                             json_schema_extra=VOLATILE)
    restarts: int = Field(0, description="memetic: reduce-solve-combine restarts.",
                          json_schema_extra=VOLATILE)
    polish_gain: int = Field(
        0, description=f"memetic on a small instance (n * k up to {POLISH_MAX_WORK:,}), bounded "
                       "by time: the pairs that its last phase, the swap search (method search) "
                       "from the best set, took off.", json_schema_extra=VOLATILE)
    migrants: int = Field(0, description="memetic islands: sets received from other islands "
                                         "that entered this island's population.",
                          json_schema_extra=VOLATILE)
    timeline: list[list[float]] = Field(
        default_factory=list, description="search, memetic: [seconds, objective] at each new "
                                          "best.", json_schema_extra=VOLATILE)
    backend: str = Field(description="The backend that ran it (cpu or gpu).",
                         json_schema_extra=VOLATILE)


#: Seeds of neighbouring memetic islands lie this far apart.
ISLAND_SEEDS = 1 << 20


def island_seed(params: CndParams, island: int) -> int:
    """Seed of memetic island ``island`` of a ``distributed`` run."""
    return params.seed + island * ISLAND_SEEDS


def is_memetic(params: CndParams) -> bool:
    """True when the run is a memetic search (``memetic``, or a memetic island run in-process)."""
    return params.method == "memetic" or (params.method == "distributed"
                                          and params.shard_method == "memetic")


def seeds_for(params: CndParams) -> range:
    """The greedy starts' seeds: one for ``greedy``, ``starts`` from ``seed`` for the others."""
    count = 1 if params.method == "greedy" else params.starts
    return range(params.seed, params.seed + count)

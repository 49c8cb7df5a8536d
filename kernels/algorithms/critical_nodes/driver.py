"""The one run of ``critical_nodes`` both backends share: memetic, or starts then a search.

Each backend hands in its pieces (the memetic improver and first population, the greedy starts,
the swap search); the order of the steps, the time budget and the summary fields are here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.critical_nodes.cost import cnd_seconds
from graphgpu.kernels.algorithms.critical_nodes.memetic import Outcome, memetic
from graphgpu.kernels.algorithms.critical_nodes.params import CndParams, is_memetic, seeds_for
from graphgpu.kernels.algorithms.critical_nodes.result import check_k, make_result, objective_of
from graphgpu.kernels.algorithms.critical_nodes.tuning import (
    FIRST_START_SHARE,
    MAX_LISTED,
    POLISH_MAX_WORK,
    POLISH_SHARE,
    START_SHARE,
    patience_for,
)
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import (
    AlgorithmResult,
    Backend,
    Exchange,
    ProgressFn,
    progress_part,
)

#: ``starts(seeds, share, until)`` -> (objective, index of the best start, removed node ids, the
#: state the search continues from, starts run, the device that ran them: "cpu" or "gpu");
#: ``until``: a ``time.perf_counter()`` value
#: after which no further start begins (the first always runs), None: every seed.
StartsFn = Callable[[range, float, float | None], tuple[int, int, np.ndarray, Any, int, str]]
#: ``search(state, removed, objective, started, deadline, patience, progress)`` -> (removed,
#: objective, time to best, iterations, timeline).
SearchFn = Callable[[Any, np.ndarray, int, float, float, int, ProgressFn],
                    tuple[np.ndarray, int, float, int, list[list[float]]]]


def solve(graph: Graph, params: CndParams, progress: ProgressFn, backend: Backend,
          improver: Callable[[], Any], batch_of: Callable[[Any], int],
          memetic_starts: Callable[[int], tuple[list[np.ndarray], str | None]], starts: StartsFn,
          search: SearchFn, exchange: Exchange | None = None) -> AlgorithmResult:
    """Run ``critical_nodes`` with one backend's pieces.

    Parameters
    ----------
    graph, params, progress
        As the backend's registered function was given them.
    backend : {"cpu", "gpu"}
        Recorded in the result.
    improver : callable
        ``improver()``: the memetic improver (memetic methods only).
    batch_of : callable
        ``batch_of(improver)``: children improved at once.
    memetic_starts : callable
        ``memetic_starts(batch)``: the first population's sets, from greedy starts, and the
        device that ran them.
    starts : StartsFn
        The greedy starts (share: the part of the progress bar they fill). ``search`` gives
        them ``START_SHARE`` of its time limit.
    search : SearchFn
        The swap search (method ``search``, and the last phase of a memetic run bounded by time
        on a small instance); its state is None where no greedy start fit in
        ``FIRST_START_SHARE`` of the time limit (it starts from the k highest-degree nodes) and
        in that last phase (it starts from the memetic's best set).
    exchange : Exchange or None
        A memetic island's link to its sibling islands (memetic methods only).

    Returns
    -------
    AlgorithmResult

    Raises
    ------
    InvalidInput
        ``k`` not below the number of nodes (``field="k"``).
    """
    check_k(graph, params)
    started = time.perf_counter()
    deadline = started + params.time_limit_s
    if is_memetic(params):
        improve = improver()
        batch = batch_of(improve)
        # A run bounded by time on a small instance ends with the swap search from its best
        # set (a run of ``generations`` stays the memetic search alone: deterministic per seed).
        polish = POLISH_SHARE * params.time_limit_s if (
            params.generations is None and graph.n * params.k <= POLISH_MAX_WORK) else 0.0
        share = 1.0 - polish / params.time_limit_s
        out = memetic(graph, params.k, params.seed, improve, batch, started, deadline - polish,
                      progress_part(progress, 0.0, share), params.generations,
                      lambda: memetic_starts(batch), exchange)
        fields = {**out.summary_fields(params.seed), "polish_gain": 0}
        if polish > 0 and out.objective > 0:
            _polish(search, out, fields, started, deadline, patience_for(params.k),
                    progress_part(progress, share, 1.0))
        progress(1.0, f"critical_nodes: objective {out.objective}")
        return make_result(graph, params, out.removed, out.objective, backend=backend,
                           descent_on=getattr(getattr(improve, "descent", None), "ran_on", None),
                           **fields)
    seeds = seeds_for(params)
    search_on = params.method == "search"
    until = started + START_SHARE * params.time_limit_s if search_on else None
    if search_on and cnd_seconds(graph, params.k) > FIRST_START_SHARE * params.time_limit_s:
        # Not even one CND* start fits: the search starts from the k highest-degree nodes.
        removed = np.argsort(-np.diff(graph.indptr), kind="stable")[:params.k]
        objective, start, state, run = objective_of(graph, removed)[0], 0, None, 0
        starts_on = None
    else:
        objective, start, removed, state, run, starts_on = starts(
            seeds, 0.1 if search_on else 1.0, until)
    fields: dict[str, Any] = {"best_seed": seeds[start], "best_start": start,
                              "starts_run": run, "starts_on": starts_on,
                              "time_to_best_s": time.perf_counter() - started}
    if search_on:
        outcome = search(state, removed, objective, started, deadline, patience_for(params.k),
                         progress)
        removed, objective, fields["time_to_best_s"], fields["iterations"], \
            fields["timeline"] = outcome
    progress(1.0, f"critical_nodes: objective {objective}")
    return make_result(graph, params, removed, objective, backend=backend, **fields)


def _polish(search: SearchFn, out: Outcome, fields: dict[str, Any], started: float,
            deadline: float, patience: int, progress: ProgressFn) -> None:
    """The memetic run's last phase: the backend's swap search (``method=search``'s chains)
    from the best set until ``deadline``; a better set replaces ``out``'s, its moves and new
    bests join ``fields``."""
    begun = time.perf_counter()
    removed, objective, found, iterations, timeline = search(
        None, out.removed, out.objective, begun, deadline, patience, progress)
    fields["iterations"] += iterations
    fields["polish_gain"] = max(out.objective - objective, 0)
    if objective < out.objective:
        out.removed, out.objective = removed, objective
        offset = begun - started  # the search's times count from its own start
        fields["time_to_best_s"] = offset + found
        last = fields["timeline"][-1][1]
        fields["timeline"] = (fields["timeline"] + [
            [round(offset + t, 6), value] for t, value in timeline if value < last])[:MAX_LISTED]

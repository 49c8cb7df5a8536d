"""What a traversal job does on either backend: sources, pruning or not, the answer, the result.

The backends differ only in how they solve a CSR graph; :mod:`.cpu` and :mod:`.gpu` pass their
solvers and array module (``numpy`` or ``cupy``) to :func:`bfs` and :func:`components`, so the
pruning flow and the summaries are written once. The result's arrays stay in ``xp`` (on the
GPU, the worker copies them once, see ``AlgorithmResult``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphgpu.kernels.algorithms.common import direction, pruning
from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

#: ``(indptr, indices, n, sources) -> (level, parent)`` on a CSR in the backend's arrays.
BfsSolve = Callable[[Any, Any, int, Any], tuple[Any, Any]]
#: ``(indptr, indices, n) -> (label, sizes)`` on a CSR in the backend's arrays.
ComponentsSolve = Callable[[Any, Any, int], tuple[Any, Any]]


def bfs_sources(graph: Graph, params: Any) -> np.ndarray:
    """Distinct internal ids of ``params.source`` or ``params.sources``, ascending."""
    if params.source is not None:
        return graph.internal_ids(params.source).astype(np.int64)
    try:
        return np.unique(graph.internal_ids(params.sources)).astype(np.int64)
    except InvalidInput as exc:
        raise InvalidInput(str(exc), field="sources") from None


def bfs(graph: Graph, params: Any, progress: ProgressFn, xp: Any, core: BfsSolve,
        whole: Callable[[Graph, Any], tuple[Any, Any]]) -> AlgorithmResult:
    """A ``bfs`` job: ``core`` solves the pruned core (when pruning), ``whole(graph, sources)``
    the whole graph, oriented by ``params.direction`` (:mod:`..common.direction`: its out-rows
    are the arcs to follow); both return ``(level, parent)`` in ``xp`` (``numpy`` or ``cupy``)."""
    sources = bfs_sources(graph, params)
    graph = direction.oriented(graph, params.direction)
    if graph.directed and params.prune == "on":
        raise InvalidInput("prune='on' needs an undirected search; on a directed graph pass "
                           "direction='both' or prune='off'", field="prune")
    progress(0.0, "bfs: searching")
    on_backend = xp.asarray(sources)
    pruned = None
    if not graph.directed and pruning.decide(graph, params.prune):
        pruned = pruning.prune(graph, xp, sources)
        level, parent = pruning.bfs_pruned(xp, pruned, graph.n, on_backend, core)
    else:
        level, parent = whole(graph, on_backend)
    # The arrays stay on the backend (the worker copies a GPU's once, to pinned memory).
    summary: dict[str, Any] = {"source": params.source}
    if params.sources is not None:
        summary["sources"] = int(sources.shape[0])
    summary.update(reached=reductions.count_true(level >= 0), max_level=int(level.max()),
                   **pruning.summary_fields(params.prune, pruned))
    progress(1.0, "bfs: done")
    return AlgorithmResult(summary=summary, node_values={"level": level, "parent": parent},
                           node_id_fields=("parent",))


def directed_parents(xp: Any, in_indptr: Any, in_indices: Any, level: Any,
                     sources: Any) -> Any:
    """Parents by the family's rule on a directed graph: ``parent[v]`` is the smallest
    in-neighbour of ``v`` one level up (rows are sorted: the first hit), in ``xp``.

    For a search whose expansion does not look at in-rows (the GPU's top-down steps read a
    frontier vertex's out-row), a pass over the arcs, vectorised.
    """
    n = int(level.shape[0])
    # The row of each arc (CuPy's repeat takes no array of counts).
    row = xp.searchsorted(in_indptr, xp.arange(int(in_indices.shape[0])), side="right") - 1
    hits = xp.flatnonzero((level[row] > 0) & (level[in_indices] == level[row] - 1))
    rows = row[hits]
    first = xp.ones(rows.shape[0], dtype=bool)
    first[1:] = rows[1:] != rows[:-1]
    parent = xp.full(n, -1, dtype=xp.int64)
    parent[rows[first]] = in_indices[hits[first]]
    parent[sources] = sources
    return parent


def components(graph: Graph, params: Any, progress: ProgressFn, xp: Any, core: ComponentsSolve,
               whole: Callable[[], tuple[Any, Any]]) -> AlgorithmResult:
    """A ``connected_components`` job; ``core`` and ``whole()`` return ``(label, sizes)`` in
    ``xp``, as :func:`bfs`'s solvers."""
    progress(0.0, "connected_components: labelling")
    pruned = None
    if pruning.decide(graph, params.prune):
        pruned = pruning.prune(graph, xp, None)
        label, sizes = pruning.components_pruned(xp, pruned, graph.n, core)
    else:
        label, sizes = whole()
    progress(1.0, "connected_components: done")
    summary = {"count": int(sizes.shape[0]), "largest": int(sizes.max()),
               "isolated": reductions.count_true(sizes == 1),
               **pruning.summary_fields(params.prune, pruned)}
    return AlgorithmResult(summary=summary, node_values={"label": label}, arrays={"sizes": sizes})

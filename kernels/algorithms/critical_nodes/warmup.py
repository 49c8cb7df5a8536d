"""Worker warm-up of ``critical_nodes``: every engine step once, with no clock in the way.

The documented examples reach the greedy starts, but ``search`` and ``memetic`` runs stop at
their time limit: on a busy machine (the parallel compile of a first start) the first call's
own compile time spends the limit, and the swap search, the greedy fill and the memetic
improver were compiled by a job after the worker said it was ready (9.4 s on the GPU host).
Here each step runs with an infinite deadline on a small graph whose k-sets leave several
components (so the moves split and join them), on the backend's engine and on the host code
it uses (Numba: the GPU's memetic search fills sets on the host).
"""

from __future__ import annotations

import math

import numpy as np

from graphgpu.kernels.algorithms.critical_nodes import gpu
from graphgpu.kernels.algorithms.critical_nodes.cpu import CpuImprover, greedy_cpu
from graphgpu.kernels.algorithms.critical_nodes.gpu_ruin import GpuDescent
from graphgpu.kernels.algorithms.critical_nodes.memetic import Filler
from graphgpu.kernels.algorithms.critical_nodes.ruin import RuinRegrow
from graphgpu.kernels.algorithms.critical_nodes.search import SearchState
from graphgpu.kernels.algorithms.critical_nodes.tuning import patience_for
from graphgpu.kernels.core.graph import Graph, simple_graph
from graphgpu.kernels.core.registry import Backend, no_progress

#: Nodes deleted in the warm-up runs (a few, so that blocks and restores have choices).
K = 4
#: Moves of each chain: enough for deletes, restores and a restart from the best.
MOVES = 64


def warm_up_graph() -> Graph:
    """Three 8-node rings joined in a path by single edges, plus pendant trees: deleting a
    few nodes splits it in several ways (articulation points, whole components)."""
    src, dst = [], []
    for ring in range(3):
        nodes = np.arange(8) + 8 * ring
        src += list(nodes)
        dst += list(np.roll(nodes, 1))
    src += [7, 15, 0, 0, 30, 30]
    dst += [8, 16, 24, 25, 24, 26]
    return simple_graph(np.array(src), np.array(dst))


#: The hook's parts, each runnable alone (a first start with many cores compiles them in
#: separate processes: the whole hook took 25-33 s of one process on the GPU host): the greedy
#: fill (exact and batched), the greedy starts (on the GPU with the search chains that start
#: from them), the first descent (ruin and regrow) and the improvers' chains.
PARTS = ("fill", "starts", "descent", "chains")


def warm_up(backend: Backend, part: str | None = None) -> None:
    """Compile (or load from the disk caches) every step of ``critical_nodes`` on ``backend``
    (``part``: one of :data:`PARTS` only): the greedy fill (host code both backends run: the
    GPU's memetic fills sets on the host), the greedy starts, ruin and regrow (on the GPU its
    chains, even on this graph's small components), the swap search (plain and with restarts)
    and the memetic improver; on the GPU also the host start, the multistart, the search
    chains and the batch improver."""
    graph = warm_up_graph()
    patience = patience_for(K)
    # A set that splits the graph (the rings' ends that bridge them, a ring node, a hub): the
    # chains and the descent start from it without waiting for the fill.
    split = np.array([7, 15, 0, 24], np.int32)
    if part in (None, "fill"):  # exact (limit 0), then batched (every step several nodes)
        Filler(graph, K, 1).complete(np.zeros(0, np.int32), math.inf)
        Filler(graph, K, 1, 1e-12).complete(np.array([0], np.int32), math.inf)
    if part in (None, "starts"):
        greedy_cpu(graph, K, range(1, 3), no_progress)
        if backend == "gpu":
            starts = gpu.multistart(graph, K, range(1, 3), no_progress)
            gpu.host_start(graph, K, 1)
            # A deadline already passed: the chains are set up and read back, no move loop
            # runs (the loop launches the same kernels and reads the same values).
            gpu.search(graph, K, starts, np.flatnonzero(starts.removed), starts.objective, 1,
                       patience, 0.0, 0.0, no_progress)
    if part in (None, "descent"):
        if backend == "cpu":
            RuinRegrow(graph, K, 1)(split, MOVES, math.inf)
        else:
            GpuDescent(graph, K, 1, least=0)(split, math.inf, lambda: None, None)
    if part in (None, "chains"):
        if backend == "cpu":
            SearchState(graph.indptr, graph.indices, split, 1).run(MOVES, patience)
            CpuImprover(graph, K, 1)([split], MOVES, math.inf)
        else:
            gpu.GpuImprover(graph, K, 1)([split, split], MOVES, math.inf)

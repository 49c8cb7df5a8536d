"""GPU side of ``strongly_connected_components``: trimming and min-colouring (``scc.cu``).

Rounds of: trim nodes without an unassigned in- or out-neighbour (singletons) until a pass
trims under 1 % of the nodes left; colour every unassigned node with the smallest id that
reaches it (pull fixpoint over in-arcs); mark the roots (``color[v] == v``) and, backwards over
out-arcs within a colour, every node that reaches its root; those are the root's component.
Each round assigns at least the component of the smallest unassigned id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphgpu.kernels.algorithms.common.in_csr import device_in_csr
from graphgpu.kernels.algorithms.scc import driver
from graphgpu.kernels.core import reductions
from graphgpu.kernels.core.cuda import grid_for, kernels, sm_count
from graphgpu.kernels.core.device import cupy, on_device
from graphgpu.kernels.core.graph import Graph
from graphgpu.kernels.core.registry import AlgorithmResult, ProgressFn

CUDA_SOURCE = Path(__file__).with_name("scc.cu")
NAMES = ("scc_trim", "scc_color_init", "scc_color_pull", "scc_roots", "scc_backward",
         "scc_assign")
THREADS = 256
#: Trimming goes on while a pass trims at least this share of the unassigned nodes.
TRIM_SHARE = 0.01


def _fixpoint(launch: Any, flag: Any) -> int:
    """Launch until a pass sets no flag; the number of passes."""
    passes = 0
    while True:
        flag.fill(0)
        launch()
        passes += 1
        if not int(flag.get()[0]):
            return passes


def labels(graph: Graph, progress: ProgressFn) -> Any:
    """Per node (device int32), the smallest node id of its strongly connected component."""
    cp = cupy()
    n = graph.n
    dg = on_device(graph)
    in_indptr, in_indices, _ = device_in_csr(graph)
    k = kernels(CUDA_SOURCE, NAMES)
    grid = (min(grid_for(n, THREADS)[0], sm_count() * 16),)
    label = cp.full(n, -1, dtype=cp.int32)
    color = cp.empty(n, dtype=cp.int32)
    mark = cp.empty(n, dtype=cp.uint8)
    flag = cp.zeros(1, dtype=cp.int32)
    remaining = cp.zeros(1, dtype=cp.uint64)
    n32 = cp.int32(n)
    left = n
    rounds = 0
    while left:
        rounds += 1
        progress(1.0 - left / n, f"strongly connected components: round {rounds}, "
                                 f"{left:,} nodes left")
        while True:  # trim while it pays
            flag.fill(0)
            k["scc_trim"](grid, (THREADS,), (dg.indptr, dg.indices, in_indptr, in_indices, n32,
                                             label, flag))
            if not int(flag.get()[0]):
                break
            now = reductions.count_true(label < 0)
            trimmed, left = left - now, now
            if trimmed < TRIM_SHARE * max(left, 1) or not left:
                break
        if not left:
            break
        k["scc_color_init"](grid, (THREADS,), (n32, label, color, mark))
        _fixpoint(lambda: k["scc_color_pull"](grid, (THREADS,), (
            in_indptr, in_indices, n32, label, color, flag)), flag)
        k["scc_roots"](grid, (THREADS,), (n32, label, color, mark))
        _fixpoint(lambda: k["scc_backward"](grid, (THREADS,), (
            dg.indptr, dg.indices, n32, label, color, mark, flag)), flag)
        remaining.fill(0)
        k["scc_assign"](grid, (THREADS,), (n32, label, color, mark, remaining))
        left = int(remaining.get()[0])
    return label


def scc(graph: Graph, params: Any, progress: ProgressFn) -> AlgorithmResult:
    """Strongly connected components on the GPU (trimming and colouring); same labels as the
    CPU backend's."""
    number, sizes = driver.number_components(cupy(), labels(graph, progress))
    progress(1.0, "strongly connected components: done")
    return driver.result(number.get(), sizes.get())

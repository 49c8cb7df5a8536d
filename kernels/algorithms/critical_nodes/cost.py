"""Cost model of ``critical_nodes``: seconds of the steps, for the estimate and the time budget.

Fitted on one core of the H100 host and on an H100 (bench/results/cnd.md); the estimate must
stay within 3x of the measured time.
"""

from __future__ import annotations

from graphgpu.kernels.core.graph import Graph

#: CPU nanoseconds per node or arc of one CND* start (the heap greedy). One core of the H100
#: host, k = 10 (2026-11-28): ca-CondMat 350 ns, dblp-2010 590, R-MAT scale 18 254, scale 20
#: 372 (before its hubs were bounded, R-MAT took n^1.7: 40 s at scale 18). An estimate 1.2-2.8x
#: over; an under-estimate would let a start overrun its share of a time limit.
CND_NS_PER_ITEM = 700.0
#: CPU nanoseconds per node or arc of one walk of the graph (labels, articulation cuts).
WALK_NS_PER_ITEM = 6.0
#: CPU nanoseconds per node or arc of checking a result (SciPy's components, twice).
CHECK_NS_PER_ITEM = 60.0
#: GPU CND* (one block per start): each of the about V - k steps costs a floor (block
#: synchronisations, the argmin) plus two passes over the node arrays (the argmin, the
#: relabelling): latency bound for a lone start (one block of 16 warps), sharing the memory for
#: a wave; rescoring the candidates whose costs changed is near-linear in all (the big
#: component's growth changes none). Fitted on an H100 (bench/results/cnd.md): one start 27 ms
#: on ca-GrQc, 0.58 s on ca-CondMat, 82 s on dblp-2010; a wave of 264 starts 45 ms and 1.9 s.
GPU_STEP_S = 4e-6
GPU_NS_PER_NODE = 0.9
GPU_WAVE_NS_PER_NODE = 3.3


def cnd_share(n: int, k: int) -> float:
    """Share of a full CND* start's cost that a run to k nodes takes: the late steps (when a
    giant component has formed) cost the most, and a large k stops before them."""
    return min(1.0, max(0.25, 1.0 - k / (0.12 * max(n, 1))))


def cnd_seconds(graph: Graph, k: int) -> float:
    """Estimated CPU seconds of one CND* start."""
    return (graph.n + 2 * graph.m) * CND_NS_PER_ITEM * 1e-9 * cnd_share(graph.n, k)


def gpu_wave_seconds(graph: Graph, k: int, share: float = 1.0) -> float:
    """Estimated seconds of one wave of concurrent CND* starts on the GPU; ``share``: the
    wave's blocks as a share of a full wave (0: one start alone)."""
    ns = GPU_NS_PER_NODE + (GPU_WAVE_NS_PER_NODE - GPU_NS_PER_NODE) * min(max(share, 0.0), 1.0)
    return max(graph.n - k, 0) * (GPU_STEP_S + graph.n * ns * 1e-9)


def walk_seconds(graph: Graph) -> float:
    """Estimated CPU seconds of one walk of the graph."""
    return (graph.n + 2 * graph.m) * WALK_NS_PER_ITEM * 1e-9


def check_seconds(graph: Graph) -> float:
    """Estimated CPU seconds of building and checking the result."""
    return (graph.n + 2 * graph.m) * CHECK_NS_PER_ITEM * 1e-9

"""Cost model of ``critical_nodes``: seconds of the steps, for the estimate and the time budget.

Fitted on one core of the H100 host and on an H100 (bench/results/cnd.md); the estimate must
stay within 3x of the measured time.
"""

from __future__ import annotations

from graphgpu.kernels.core.graph import Graph

#: CPU nanoseconds per node or arc of one CND* start (near-linear heap greedy; dblp-2010, k = 10:
#: 1.9M nodes + arcs in 2.4 s on the H100 host before the second heap, about 2x less after it,
#: measured on the development machine).
CND_NS_PER_ITEM = 700.0
#: CPU nanoseconds per node or arc of one walk of the graph (labels, articulation cuts).
WALK_NS_PER_ITEM = 6.0
#: CPU nanoseconds per node or arc of checking a result (SciPy's components, twice).
CHECK_NS_PER_ITEM = 60.0
#: GPU CND* (one block per start) rescans the grown component each step: about this many ns per
#: node or arc scanned over V - k steps, and a wave of concurrent starts costs about 2.5 starts.
GPU_NS_PER_SCAN = 0.6
GPU_WAVE_FACTOR = 2.5


def cnd_share(n: int, k: int) -> float:
    """Share of a full CND* start's cost that a run to k nodes takes: the late steps (when a
    giant component has formed) cost the most, and a large k stops before them."""
    return min(1.0, max(0.25, 1.0 - k / (0.12 * max(n, 1))))


def cnd_seconds(graph: Graph, k: int) -> float:
    """Estimated CPU seconds of one CND* start."""
    return (graph.n + 2 * graph.m) * CND_NS_PER_ITEM * 1e-9 * cnd_share(graph.n, k)


def gpu_wave_seconds(graph: Graph, k: int) -> float:
    """Estimated seconds of one wave of concurrent CND* starts on the GPU."""
    return (max(graph.n - k, 0) * (graph.n + 2 * graph.m) * GPU_NS_PER_SCAN * 1e-9
            * GPU_WAVE_FACTOR)


def walk_seconds(graph: Graph) -> float:
    """Estimated CPU seconds of one walk of the graph."""
    return (graph.n + 2 * graph.m) * WALK_NS_PER_ITEM * 1e-9


def check_seconds(graph: Graph) -> float:
    """Estimated CPU seconds of building and checking the result."""
    return (graph.n + 2 * graph.m) * CHECK_NS_PER_ITEM * 1e-9

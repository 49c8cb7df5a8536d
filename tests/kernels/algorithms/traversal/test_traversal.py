"""BFS and connected components: CPU against NetworkX; GPU against CPU (``-m gpu``, device only)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError

from graphgpu.kernels.algorithms.traversal import BfsParams, ComponentsParams
from graphgpu.kernels.algorithms.traversal.cpu import bfs as bfs_cpu
from graphgpu.kernels.algorithms.traversal.cpu import connected_components as components_cpu
from graphgpu.kernels.algorithms.traversal.gpu import DeviceComponents
from graphgpu.kernels.algorithms.traversal.gpu import bfs as bfs_gpu
from graphgpu.kernels.algorithms.traversal.gpu import connected_components as components_gpu
from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import InvalidInput, JobCanceled
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import get_algorithm, no_progress
from tests.support.graphs import from_nx, original
from tests.support.results import assert_same


def several_components(seed: int) -> nx.Graph:
    """Three sparse random pieces and isolated nodes, on shuffled node ids."""
    rng = np.random.default_rng(seed)
    parts = [nx.gnp_random_graph(k, p, seed=seed + i)
             for i, (k, p) in enumerate([(40, 0.08), (25, 0.15), (10, 0.3)])]
    g = nx.disjoint_union_all([*parts, nx.empty_graph(5)])
    perm = rng.permutation(g.number_of_nodes())
    return nx.relabel_nodes(g, dict(enumerate(perm.tolist())))



def cancel(fraction: float, message: str = "") -> None:
    raise JobCanceled("canceled")


def assert_cancels(bfs, components, graph: Graph) -> None:
    """Both functions stop with :class:`JobCanceled` when a progress report raises it."""
    with pytest.raises(JobCanceled):
        bfs(graph, BfsParams(source=original(0)), cancel)
    with pytest.raises(JobCanceled):
        components(graph, ComponentsParams(), cancel)

CASES = {
    "gnp_components": several_components(1),
    "gnp_components_2": several_components(2),
    "gnp_dense": nx.gnp_random_graph(60, 0.2, seed=3),
    "path": nx.path_graph(30),
    "star": nx.star_graph(20),
    "tree": nx.random_labeled_tree(50, seed=4),
    "single_node": nx.empty_graph(1),
    "isolated_only": nx.empty_graph(6),
    "disconnected_cliques": nx.disjoint_union(nx.complete_graph(6), nx.cycle_graph(9)),
}


def check_bfs(g: nx.Graph, graph: Graph, source: int, result) -> None:
    level = result.node_values["level"]
    parent = result.node_values["parent"]
    assert level.dtype == np.int32 and parent.dtype == np.int64
    dist = nx.single_source_shortest_path_length(g, source)
    expected = np.full(g.number_of_nodes(), -1, dtype=np.int32)
    expected[list(dist)] = list(dist.values())
    np.testing.assert_array_equal(level, expected)
    for v in range(g.number_of_nodes()):
        if v == source:
            assert parent[v] == source
        elif level[v] < 0:
            assert parent[v] == -1
        else:
            ups = [u for u in g.neighbors(v) if expected[u] == expected[v] - 1]
            assert parent[v] == min(ups), f"node {v}"
    assert result.summary == {"source": original(source), "reached": len(dist),
                              "max_level": max(dist.values())}
    assert result.node_id_fields == ("parent",)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bfs_cpu_matches_networkx(name: str) -> None:
    g = CASES[name]
    graph = from_nx(g)
    rng = np.random.default_rng(0)
    for source in {0, g.number_of_nodes() - 1, int(rng.integers(g.number_of_nodes()))}:
        result = bfs_cpu(graph, BfsParams(source=original(source)), no_progress)
        check_bfs(g, graph, source, result)


@pytest.mark.parametrize("name", sorted(CASES))
def test_components_cpu_match_networkx(name: str) -> None:
    g = CASES[name]
    result = components_cpu(from_nx(g), ComponentsParams(), no_progress)
    label, sizes = result.node_values["label"], result.arrays["sizes"]
    assert label.dtype == np.int32 and sizes.dtype == np.int64
    expected = sorted(nx.connected_components(g), key=min)
    # Numbered in order of smallest member, so component i is the i-th by minimum.
    for i, members in enumerate(expected):
        assert set(np.flatnonzero(label == i).tolist()) == members
    np.testing.assert_array_equal(sizes, [len(c) for c in expected])
    assert result.summary == {"count": len(expected), "largest": max(map(len, expected)),
                              "isolated": sum(len(c) == 1 for c in expected)}


def test_bfs_params_and_registration() -> None:
    algorithm = get_algorithm("bfs")
    assert algorithm.node_params == ("source", "sources")
    with pytest.raises(ValidationError):
        BfsParams.model_validate({"source": 1, "depth": 2})
    with pytest.raises(ValidationError):
        BfsParams.model_validate({})
    with pytest.raises(ValidationError):
        ComponentsParams.model_validate({"x": 1})
    graph = from_nx(nx.path_graph(3))
    with pytest.raises(InvalidInput):
        bfs_cpu(graph, BfsParams(source=1), no_progress)  # 1 is not an original id here


def test_progress_reported_and_can_cancel() -> None:
    graph = from_nx(nx.path_graph(10))
    seen: list[float] = []
    bfs_cpu(graph, BfsParams(source=original(0)), lambda f, m="": seen.append(f))
    components_cpu(graph, ComponentsParams(), lambda f, m="": seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and len(seen) >= 4

    assert_cancels(bfs_cpu, components_cpu, graph)


# ------------------------------------------------------------------------------------------------
# GPU (device machine only: python3 -m pytest -m gpu)
# ------------------------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


def rmat_graph(scale: int, edge_factor: int, seed: int) -> Graph:
    """A skewed R-MAT graph (Graph500 a=.57, b=c=.19), from graphgpu.kernels.generators when
    present."""
    try:
        from graphgpu.kernels.generators import generate
    except ImportError:
        rng = np.random.default_rng(seed)
        total = edge_factor << scale
        src, dst = np.zeros(total, np.int64), np.zeros(total, np.int64)
        for _ in range(scale):
            r = rng.random(total)
            src = (src << 1) | (r >= 0.76)
            dst = (dst << 1) | (((r >= 0.57) & (r < 0.76)) | (r >= 0.95))
        extra = np.arange(1 << scale)
    else:
        edges = generate("rmat", {"scale": scale, "edge_factor": edge_factor, "seed": seed})
        src, dst, extra = edges.src, edges.dst, np.arange(edges.num_nodes)
    graph, _ = build_graph(src, dst, extra_nodes=extra)
    return graph


def random_graph(seed: int, n: int, m: int) -> Graph:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    graph, _ = build_graph(original(src), original(dst), extra_nodes=original(np.arange(n)))
    return graph


def hubs_graph(seed: int) -> Graph:
    """Sparse random graph plus hubs of 70k, 3k and 600 neighbours: every top-down path runs."""
    rng = np.random.default_rng(seed)
    n = 150_000
    src, dst = [rng.integers(0, n, 100_000)], [rng.integers(0, n, 100_000)]
    for hub, degree in enumerate([70_000, 70_000, 3_000, 600, 600, 100]):
        src.append(np.full(degree, hub))
        dst.append(rng.choice(n, degree, replace=False))
    graph, _ = build_graph(original(np.concatenate(src)), original(np.concatenate(dst)),
                           extra_nodes=original(np.arange(n)))
    return graph


def late_hubs() -> nx.Graph:
    """Hub B (0, leaves 1..3000) hangs off the last leaves of hub A (3001, leaves 3002..8001).

    From leaf 3002 the search goes bottom-up while B is unvisited, and B's only frontier
    neighbours sit at the end of its long row: the heavy (block-per-vertex) bottom-up and
    parent kernels must find them. From leaf 8001, A's parent is the last entry of its row.
    """
    g = nx.star_graph(3000)
    g.add_edges_from((3001, leaf) for leaf in range(3002, 8002))
    g.add_edges_from([(0, 8000), (0, 8001)])
    return g


def gpu_cases() -> dict[str, Graph]:
    return {
        **{name: from_nx(g) for name, g in CASES.items()},
        "sparse_random": random_graph(5, 20_000, 12_000),  # many components
        "random": random_graph(6, 50_000, 400_000),
        "rmat16": rmat_graph(16, 16, 1),  # ~1M drawn edges, heavy-tailed degrees
        "hubs": hubs_graph(8),
        "late_hubs": from_nx(late_hubs()),
    }


@pytest.fixture(scope="module")
def gpu_graphs() -> dict[str, Graph]:
    return gpu_cases()


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("name", [*sorted(CASES), "sparse_random", "random", "rmat16", "hubs",
                                  "late_hubs"])
def test_gpu_matches_cpu(name: str, gpu_graphs: dict[str, Graph]) -> None:
    graph = gpu_graphs[name]
    rng = np.random.default_rng(7)
    # First, last and random nodes, and the largest hub and a neighbour of it (so that hubs are
    # expanded top-down, by a block or by the whole grid, and found bottom-up).
    hub = int(np.argmax(graph.degrees()))
    sources = {0, graph.n - 1, *rng.integers(graph.n, size=3).tolist(), hub}
    if name == "late_hubs":
        sources.add(3002)
    if graph.degrees()[hub]:
        sources.add(int(graph.indices[graph.indptr[hub]]))
    for source in sorted(sources):
        params = BfsParams(source=int(graph.node_ids[source]))
        assert_same(bfs_cpu(graph, params, no_progress), bfs_gpu(graph, params, no_progress))
    params = ComponentsParams()
    assert_same(components_cpu(graph, params, no_progress),
                components_gpu(graph, params, no_progress))


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("limit", [0, 64, 4096, None])
def test_gpu_persistent_handoff(limit: int | None, gpu_graphs: dict[str, Graph],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Small frontiers run in one persistent launch, larger ones a launch per level; whatever
    the frontier-arc limit between the two (0: the persistent launch only starts the search; 64
    and 4096: the search changes hands many times; None: the default), the answer is the CPU's."""
    from graphgpu.kernels.algorithms.traversal import gpu as traversal_gpu

    if limit is not None:
        monkeypatch.setattr(traversal_gpu, "persist_limit", lambda: limit)
    for name in ("path", "random", "rmat16", "hubs", "late_hubs"):
        graph = gpu_graphs[name]
        hub = int(np.argmax(graph.degrees()))
        for source in sorted({0, hub, graph.n // 2, graph.n - 1}):
            params = BfsParams(source=int(graph.node_ids[source]))
            assert_same(bfs_cpu(graph, params, no_progress), bfs_gpu(graph, params, no_progress))
    graph = gpu_graphs["random"]
    params = BfsParams(sources=[int(x) for x in graph.node_ids[:5000:7]])
    assert_same(bfs_cpu(graph, params, no_progress), bfs_gpu(graph, params, no_progress))


def tiers_graph(seed: int) -> Graph:
    """600k nodes (over 1024 numbering tiles of 512), mostly small components and isolated
    nodes, plus vertices for every hooking tier: hubs whose rows are all smaller ids (the last
    node), mixed (node 1000: the block stops early) and medium degrees (warp per vertex)."""
    rng = np.random.default_rng(seed)
    n = 600_000
    src, dst = [rng.integers(0, n, 250_000)], [rng.integers(0, n, 250_000)]
    for hub, degree in [(n - 1, 5_000), (1_000, 3_000), *((int(v), 100) for v in
                                                          rng.integers(0, n, 50))]:
        src.append(np.full(degree, hub))
        dst.append(rng.choice(n, degree, replace=False))
    graph, _ = build_graph(original(np.concatenate(src)), original(np.concatenate(dst)),
                           extra_nodes=original(np.arange(n)))
    return graph


@pytest.mark.gpu
@needs_gpu
def test_gpu_components_replayed_runs_agree() -> None:
    """Runs on a graph with an id reuse its buffers and, from the second on, replay the launch
    recorded as a CUDA graph: every run gives the first run's labels and sizes."""
    import dataclasses

    import cupy as cp

    from graphgpu.kernels.algorithms.traversal.gpu_components import _runs, components_device

    graph = dataclasses.replace(tiers_graph(9), graph_id="test-cc-replays")
    expected = components_cpu(graph, ComponentsParams(), no_progress)
    for _ in range(4):
        label, sizes = components_device(graph)
        np.testing.assert_array_equal(cp.asnumpy(label), expected.node_values["label"])
        np.testing.assert_array_equal(cp.asnumpy(sizes), expected.arrays["sizes"])
    assert len(_runs[graph.graph_id].replays.graphs) == 1  # recorded, not fallen back


@pytest.mark.gpu
@needs_gpu
def test_gpu_components_phase_by_phase() -> None:
    """Each phase leaves the state it documents: after flatten every node points at the
    smallest member of its component; then labels and sizes are the CPU's."""
    import cupy as cp

    from graphgpu.kernels.core.device import on_device

    graph = tiers_graph(9)
    expected = components_cpu(graph, ComponentsParams(), no_progress)
    label = expected.node_values["label"]
    smallest = np.full(expected.arrays["sizes"].shape[0], graph.n)
    np.minimum.at(smallest, label, np.arange(graph.n))
    run = DeviceComponents(on_device(graph))
    flatten = DeviceComponents.PHASES.index("flatten")
    for phase in DeviceComponents.PHASES[:flatten + 1]:
        run.phase(phase)
    np.testing.assert_array_equal(cp.asnumpy(run.nstat), smallest[label])
    for phase in DeviceComponents.PHASES[flatten + 1:]:
        run.phase(phase)
    got_label, got_sizes = run.result()
    np.testing.assert_array_equal(cp.asnumpy(got_label), label)
    np.testing.assert_array_equal(cp.asnumpy(got_sizes), expected.arrays["sizes"])
    assert_same(expected, components_gpu(graph, ComponentsParams(), no_progress))


#: components.cu settings (-D options) beside the defaults: each link rule and hooking order must
#: give the CPU's labels (bench/cc_variants.py times them).
CC_SETTINGS = [
    ("-DCC_LINK_DEDUP=0",),
    ("-DCC_SMALL_FIRST=1",),
    ("-DCC_AFFOREST=0",),
    ("-DGIANT_SHARE=1000000", "-DCC_SMALL_FIRST=1"),
]


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("options", CC_SETTINGS, ids=" ".join)
def test_gpu_components_settings(options: tuple[str, ...], gpu_graphs: dict[str, Graph]) -> None:
    """Every setting gives the CPU's labels and sizes, twice in a row on the same buffers."""
    import cupy as cp

    from graphgpu.kernels.core.device import on_device

    for graph in (gpu_graphs["sparse_random"], gpu_graphs["rmat16"], gpu_graphs["hubs"],
                  gpu_graphs["late_hubs"]):
        expected = components_cpu(graph, ComponentsParams(), no_progress)
        run = DeviceComponents(on_device(graph), options=options)
        for _ in range(2):
            label, sizes = run.run()
            np.testing.assert_array_equal(cp.asnumpy(label), expected.node_values["label"])
            np.testing.assert_array_equal(cp.asnumpy(sizes), expected.arrays["sizes"])


@pytest.mark.gpu
@needs_gpu
def test_gpu_progress_and_cancel(gpu_graphs: dict[str, Graph],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.algorithms.traversal import gpu as traversal_gpu

    graph = gpu_graphs["path"]
    seen: list[float] = []
    bfs_gpu(graph, BfsParams(source=original(0)), lambda f, m="": seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0  # small levels: one persistent launch, no reports
    monkeypatch.setattr(traversal_gpu, "persist_limit", lambda: 0)  # a launch per level
    seen.clear()
    bfs_gpu(graph, BfsParams(source=original(0)), lambda f, m="": seen.append(f))
    assert len(seen) >= 30 and seen[-1] == 1.0  # once per level, then done

    assert_cancels(bfs_gpu, components_gpu, graph)

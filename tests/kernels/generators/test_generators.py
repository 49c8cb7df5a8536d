"""Graph generators: determinism, model properties against NetworkX, validation and limits.

GPU versions (``rmat``, ``erdos_renyi``) are checked with ``-m gpu`` on the device machine; their
shared vectorised code also runs here with NumPy standing in for CuPy.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError

from graphgpu.kernels.core.device import gpu_available
from graphgpu.kernels.core.errors import JobCanceled, LimitExceeded
from graphgpu.kernels.core.graph import Graph, build_graph
from graphgpu.kernels.core.registry import EdgeSet, generators
from graphgpu.kernels.generators import (
    GPU_THRESHOLD_EDGES,
    expected_edges,
    generate,
    generate_graph,
    preferred_backend,
    validate_params,
)
from graphgpu.kernels.generators.csr import csr_by_sort

RANDOM = {
    "barabasi_albert": {"n": 300, "m": 3},
    "watts_strogatz": {"n": 300, "k": 6, "p": 0.3},
    "erdos_renyi": {"n": 300, "p": 0.05},
    "rmat": {"scale": 9, "edge_factor": 8},
}


def as_graph(edges: EdgeSet) -> Graph:
    graph, _ = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    return graph


def edge_set(graph: Graph) -> set[tuple[int, int]]:
    rows = np.repeat(np.arange(graph.n), graph.degrees())
    return {(int(u), int(v)) for u, v in zip(rows, graph.indices, strict=True) if u < v}


def nx_edge_set(g: nx.Graph) -> set[tuple[int, int]]:
    return {(min(u, v), max(u, v)) for u, v in g.edges()}


def test_all_registered() -> None:
    assert set(generators()) >= {"barabasi_albert", "watts_strogatz", "erdos_renyi", "rmat", "grid"}
    for generator in generators().values():
        generator.params_model.model_json_schema()  # the API publishes it
        assert "seed" in generator.params_model.model_fields


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_same_seed_same_edges_other_seed_other_edges(name: str) -> None:
    first = generate(name, {**RANDOM[name], "seed": 7})
    again = generate(name, {**RANDOM[name], "seed": 7})
    other = generate(name, {**RANDOM[name], "seed": 8})
    for edges in (first, again, other):
        assert edges.src.dtype == edges.dst.dtype == np.int64
        assert edges.src.min() >= 0 and max(edges.src.max(), edges.dst.max()) < edges.num_nodes
    np.testing.assert_array_equal(first.src, again.src)
    np.testing.assert_array_equal(first.dst, again.dst)
    assert edge_set(as_graph(first)) != edge_set(as_graph(other))


@pytest.mark.parametrize(("n", "m"), [(2, 1), (5, 4), (400, 1), (400, 5)])
def test_barabasi_albert_counts(n: int, m: int) -> None:
    graph = as_graph(generate("barabasi_albert", {"n": n, "m": m, "seed": 3}))
    reference = nx.barabasi_albert_graph(n, m, seed=3)
    assert graph.n == n
    assert graph.m == m * (n - m) == reference.number_of_edges()  # targets are distinct
    assert (graph.degrees()[m + 1:] >= m).all()  # every added node has its m edges
    if n > 100:
        assert graph.degrees().max() > 4 * m  # preferential attachment makes hubs


def test_barabasi_albert_degree_distribution_matches_networkx() -> None:
    ours = np.sort(as_graph(generate("barabasi_albert", {"n": 3000, "m": 2})).degrees())
    theirs = np.sort([d for _, d in nx.barabasi_albert_graph(3000, 2, seed=1).degree()])
    assert abs(np.median(ours) - np.median(theirs)) <= 1
    assert 0.5 < ours[-30:].mean() / theirs[-30:].mean() < 2  # similar hubs


@pytest.mark.parametrize(("n", "k"), [(20, 4), (21, 5), (30, 2), (10, 9), (6, 6), (5, 1)])
def test_watts_strogatz_ring(n: int, k: int) -> None:
    graph = as_graph(generate("watts_strogatz", {"n": n, "k": k, "p": 0.0}))
    reference = nx.watts_strogatz_graph(n, k, 0.0)
    assert graph.n == n
    assert edge_set(graph) == nx_edge_set(reference)


@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
def test_watts_strogatz_rewiring_keeps_edge_count(p: float) -> None:
    n, k = 500, 8
    graph = as_graph(generate("watts_strogatz", {"n": n, "k": k, "p": p, "seed": 5}))
    assert graph.n == n and graph.m == n * k // 2
    ring = nx_edge_set(nx.watts_strogatz_graph(n, k, 0.0))
    rewired = len(ring - edge_set(graph)) / len(ring)
    assert abs(rewired - p) < 0.15  # about a fraction p of ring edges moved


def test_watts_strogatz_dense_rewiring() -> None:
    # k = n - 1: rewiring must give up on nodes that already join everyone, not loop forever
    graph = as_graph(generate("watts_strogatz", {"n": 9, "k": 8, "p": 1.0}))
    assert graph.m == 36


@pytest.mark.parametrize(("n", "m"), [(1000, 0), (1000, 5000), (60, 1700), (60, 1770), (2, 1)])
def test_erdos_renyi_gnm_exact(n: int, m: int) -> None:
    edges = generate("erdos_renyi", {"n": n, "m": m, "seed": 2})
    graph = as_graph(edges)
    assert edges.src.size == m  # distinct pairs by construction: nothing for build_graph to merge
    assert graph.n == n and graph.m == m


def test_erdos_renyi_gnm_is_uniform() -> None:
    # every pair of K_6 equally likely: chi-square over 15 pairs, 3000 draws of 3 edges
    counts = np.zeros((6, 6))
    for seed in range(3000):
        edges = generate("erdos_renyi", {"n": 6, "m": 3, "seed": seed})
        np.add.at(counts, (edges.src, edges.dst), 1)
    observed = (counts + counts.T)[np.triu_indices(6, 1)]
    expected = 3000 * 3 / 15
    assert ((observed - expected) ** 2 / expected).sum() < 40  # df 14: p ~ 3e-4


@pytest.mark.parametrize(("n", "p"), [(2000, 0.01), (500, 0.3), (3000, 1e-5), (50, 1.0), (50, 0.0)])
def test_erdos_renyi_gnp_count(n: int, p: float) -> None:
    graph = as_graph(generate("erdos_renyi", {"n": n, "p": p, "seed": 4}))
    pairs = n * (n - 1) / 2
    assert graph.n == n
    assert abs(graph.m - p * pairs) <= 5 * math.sqrt(pairs * p * (1 - p)) + 1e-9


def test_erdos_renyi_gnp_pairs_cover_the_triangle() -> None:
    graph = as_graph(generate("erdos_renyi", {"n": 40, "p": 0.5, "seed": 9}))
    degrees = graph.degrees()
    assert degrees.min() > 5 and degrees.max() < 35  # no node favoured or skipped


@pytest.mark.parametrize(("scale", "edge_factor"), [(10, 16), (12, 8)])
def test_rmat_shape(scale: int, edge_factor: int) -> None:
    edges = generate("rmat", {"scale": scale, "edge_factor": edge_factor, "seed": 1})
    n = 2**scale
    assert edges.num_nodes == n and edges.src.size == edge_factor * n
    graph = as_graph(edges)
    assert graph.n == n and 0 < graph.m <= edge_factor * n
    degrees = graph.degrees()
    assert degrees.max() > 10 * degrees.mean()  # power-law skew


def test_rmat_uniform_quadrants_look_like_erdos_renyi() -> None:
    graph = as_graph(generate("rmat", {"scale": 10, "a": 0.25, "b": 0.25, "c": 0.25}))
    degrees = graph.degrees()
    assert degrees.max() < 3 * degrees.mean()


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (1, 7), (4, 5), (13, 3)])
def test_grid_matches_networkx(rows: int, cols: int) -> None:
    graph = as_graph(generate("grid", {"rows": rows, "cols": cols}))
    reference = nx.grid_2d_graph(rows, cols)
    relabelled = nx.relabel_nodes(reference, {(r, c): r * cols + c for r, c in reference})
    assert graph.n == rows * cols
    assert edge_set(graph) == nx_edge_set(relabelled)


def test_progress_is_reported_and_can_cancel() -> None:
    reports: list[float] = []
    generate("rmat", {"scale": 8}, progress=lambda f, message="": reports.append(f))
    assert reports and reports[-1] == 1.0 and all(0 <= f <= 1 for f in reports)

    def cancel(fraction: float, message: str = "") -> None:
        raise JobCanceled("canceled")

    for name, params in RANDOM.items():
        with pytest.raises(JobCanceled):
            generate(name, params, progress=cancel)


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("erdos_renyi", {"n": 10, "p": 0.1, "m": 3}, "m"),
        ("erdos_renyi", {"n": 10}, "m"),
        ("erdos_renyi", {"n": 10, "m": 46}, "m"),
        ("erdos_renyi", {"n": 10, "p": 1.5}, "p"),
        ("erdos_renyi", {"n": -5, "p": 0.1}, "n"),
        ("rmat", {"scale": 8, "a": 0.6, "b": 0.3}, "c"),
        ("rmat", {"scale": 8, "a": 0.5, "b": 0.3, "c": 0.3}, "c"),
        ("rmat", {"scale": 0}, "scale"),
        ("barabasi_albert", {"n": -1, "m": 1}, "n"),
        ("barabasi_albert", {"n": 5, "m": 5}, "m"),
        ("watts_strogatz", {"n": 5, "k": 6, "p": 0.1}, "k"),
        ("watts_strogatz", {"n": 5, "k": 2, "p": -0.1}, "p"),
        ("grid", {"rows": 0, "cols": 3}, "rows"),
        ("grid", {"rows": 2, "cols": 3, "colour": 1}, "colour"),
        ("grid", {"rows": 2, "cols": 3, "seed": -1}, "seed"),
    ],
)
def test_bad_params_name_the_field(name: str, params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        generate(name, params)
    assert [error["loc"] for error in info.value.errors()] == [(field,)]


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("erdos_renyi", {"n": 300_000_000, "m": 1}, "n"),
        ("erdos_renyi", {"n": 1_000_000, "p": 0.5}, "p"),
        ("rmat", {"scale": 28}, "scale"),
        ("rmat", {"scale": 27, "edge_factor": 64}, "edge_factor"),
        ("barabasi_albert", {"n": 100_000_000, "m": 50}, "m"),
        ("watts_strogatz", {"n": 100_000_000, "k": 60, "p": 0.1}, "k"),
        ("grid", {"rows": 100_000, "cols": 100_000}, "rows"),
    ],
)
def test_over_limit_is_refused_before_allocating(name: str, params: dict, field: str) -> None:
    with pytest.raises(LimitExceeded) as info:
        generate(name, params)
    assert info.value.field == field


def test_expected_edges_and_backend_choice() -> None:
    assert expected_edges("barabasi_albert", {"n": 100, "m": 3}) == 291
    assert expected_edges("rmat", {"scale": 10}) == 16 * 1024
    big = {"scale": 20}  # 16 Mi edges, above the GPU threshold
    assert expected_edges("rmat", big) >= GPU_THRESHOLD_EDGES
    assert preferred_backend("rmat", big, gpu=True) == "gpu"
    assert preferred_backend("rmat", big, gpu=False) == "cpu"
    assert preferred_backend("rmat", {"scale": 10}, gpu=True) == "cpu"
    assert preferred_backend("grid", {"rows": 5000, "cols": 5000}, gpu=True) == "cpu"
    model = validate_params("grid", {"rows": 2, "cols": 2})
    assert validate_params("grid", model) is model


def test_gpu_backend_falls_back_to_cpu_without_gpu_version() -> None:
    a = generate("grid", {"rows": 3, "cols": 3}, backend="gpu")
    b = generate("grid", {"rows": 3, "cols": 3})
    np.testing.assert_array_equal(a.src, b.src)


# GPU (device machine only: python3 -m pytest -m gpu tests/kernels/generators)

needs_gpu = pytest.mark.skipif(not gpu_available(), reason="needs CuPy and a CUDA device")


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize(
    ("name", "params"),
    [("rmat", {"scale": 12}), ("erdos_renyi", {"n": 5000, "p": 0.01}),
     ("erdos_renyi", {"n": 5000, "m": 40000}), ("erdos_renyi", {"n": 100, "m": 4000})],
)
def test_gpu_deterministic_per_seed(name: str, params: dict) -> None:
    first = generate(name, {**params, "seed": 3}, backend="gpu")
    again = generate(name, {**params, "seed": 3}, backend="gpu")
    other = generate(name, {**params, "seed": 4}, backend="gpu")
    assert isinstance(first.src, np.ndarray) and first.src.dtype == np.int64
    np.testing.assert_array_equal(first.src, again.src)
    np.testing.assert_array_equal(first.dst, again.dst)
    assert edge_set(as_graph(first)) != edge_set(as_graph(other))


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize(("n", "m"), [(1000, 0), (5000, 40000), (100, 4000), (60, 1770)])
def test_gpu_erdos_renyi_gnm_exact(n: int, m: int) -> None:
    edges = generate("erdos_renyi", {"n": n, "m": m}, backend="gpu")
    assert edges.src.size == m
    graph = as_graph(edges)
    assert graph.n == n and graph.m == m


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize(("n", "p"), [(5000, 0.01), (200_000, 2e-4), (300, 1.0), (300, 0.0)])
def test_gpu_erdos_renyi_gnp_count(n: int, p: float) -> None:
    edges = generate("erdos_renyi", {"n": n, "p": p}, backend="gpu")
    assert edges.src.size == 0 or max(edges.src.max(), edges.dst.max()) < n
    graph = as_graph(edges)
    pairs = n * (n - 1) / 2
    assert graph.n == n and graph.m == edges.src.size  # distinct pairs, no self-loops
    assert abs(graph.m - p * pairs) <= 5 * math.sqrt(pairs * p * (1 - p)) + 1e-9


@pytest.mark.gpu
@needs_gpu
def test_gpu_rmat_shape_and_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("graphgpu.kernels.generators.arrays.CHUNK_EDGES", 1 << 14)  # several chunks
    edges = generate("rmat", {"scale": 12, "edge_factor": 16}, backend="gpu")
    n = 4096
    assert edges.num_nodes == n and edges.src.size == 16 * n
    assert edges.src.min() >= 0 and max(edges.src.max(), edges.dst.max()) < n
    graph = as_graph(edges)
    assert graph.n == n and graph.m <= 16 * n
    assert graph.degrees().max() > 10 * graph.degrees().mean()
    cpu = generate("rmat", {"scale": 12, "edge_factor": 16})
    np.testing.assert_array_equal(edges.src, cpu.src)  # one counter-based stream: same edges
    np.testing.assert_array_equal(edges.dst, cpu.dst)


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize(("name", "params"), [
    ("rmat", {"scale": 12, "seed": 2}), ("rmat", {"scale": 4, "edge_factor": 30}),
    ("erdos_renyi", {"n": 5000, "p": 0.01}), ("erdos_renyi", {"n": 10, "m": 0}),
])
def test_gpu_generate_graph_is_build_graph_of_the_edges(name: str, params: dict) -> None:
    edges = generate(name, params, backend="gpu")
    expected, report = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    graph, ours = generate_graph(name, params, backend="gpu")
    assert ours == report
    assert isinstance(graph.indices, np.ndarray) and graph.indices.dtype == expected.indices.dtype
    np.testing.assert_array_equal(graph.indptr, expected.indptr)
    np.testing.assert_array_equal(graph.indices, expected.indices)


class NumpyAsCupy:
    """NumPy under another name, so that the CuPy branches of the shared code run on the CPU."""

    def __getattr__(self, name: str):
        return getattr(np, name)


class CupyLikeRng:
    """Only the methods that CuPy's ``Generator`` has and the generators use."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def random(self, size: int, dtype=np.float64) -> np.ndarray:
        return self._rng.random(size, dtype=dtype)

    def integers(self, low: int, high: int, size: int, dtype=np.int64) -> np.ndarray:
        return self._rng.integers(low, high, size=size, dtype=dtype)


@pytest.mark.parametrize(
    ("name", "params"),
    [("rmat", {"scale": 10}), ("erdos_renyi", {"n": 300, "p": 0.05}),
     ("erdos_renyi", {"n": 300, "m": 4000}), ("erdos_renyi", {"n": 100, "m": 4000})],
)
def test_gpu_code_path_with_numpy_standing_in(name: str, params: dict) -> None:
    from graphgpu.kernels.generators import arrays as module

    model = validate_params(name, params)
    xp, quiet = NumpyAsCupy(), lambda f, message="": None
    edges = (module.rmat_edges(xp, model, quiet) if name == "rmat"
             else module.erdos_renyi_edges(xp, CupyLikeRng(1), model, quiet))
    graph = as_graph(edges)
    assert graph.n == model.expected_size().nodes
    if name == "erdos_renyi" and model.m is not None:
        assert edges.src.size == graph.m == model.m
    if name == "rmat":
        assert graph.degrees().max() > 10 * graph.degrees().mean()
        # the vectorised (GPU) code draws exactly the compiled CPU loop's edges
        cpu = generate(name, params)
        np.testing.assert_array_equal(edges.src, cpu.src)
        np.testing.assert_array_equal(edges.dst, cpu.dst)


@pytest.mark.parametrize("params", [{"scale": 11, "seed": 5}, {"scale": 9, "edge_factor": 3,
                                    "seed": 2**63 - 1, "a": 0.4, "b": 0.3, "c": 0.2}])
def test_rmat_vectorised_and_compiled_agree_across_chunks(monkeypatch: pytest.MonkeyPatch,
                                                          params: dict) -> None:
    from graphgpu.kernels.generators import arrays as module

    whole = generate("rmat", params)
    monkeypatch.setattr("graphgpu.kernels.generators.arrays.CHUNK_EDGES", 1000)
    monkeypatch.setattr("graphgpu.kernels.generators.cpu.CHUNK_EDGES", 777)
    chunked = generate("rmat", params)
    vectorised = module.rmat_edges(np, validate_params("rmat", params), lambda f, m="": None)
    for edges in (chunked, vectorised):
        np.testing.assert_array_equal(edges.src, whole.src)
        np.testing.assert_array_equal(edges.dst, whole.dst)


def test_rmat_quadrant_frequencies() -> None:
    # one level: the first bit of (src, dst) before relabelling falls in each quadrant with
    # probability a, b, c, d; with scale 1 the relabelling is a permutation of {0, 1}
    params = {"scale": 1, "edge_factor": 40_000, "a": 0.5, "b": 0.2, "c": 0.2, "seed": 3}
    edges = generate("rmat", params)
    from graphgpu.kernels.generators.arrays import rmat_permutation

    perm = rmat_permutation(np, 3, 2)
    inverse = np.argsort(perm)
    i, j = inverse[edges.src], inverse[edges.dst]
    counts = np.bincount(2 * i + j, minlength=4) / i.size
    np.testing.assert_allclose(counts, [0.5, 0.2, 0.2, 0.1], atol=0.01)


@pytest.mark.parametrize(("name", "params"), [
    ("rmat", {"scale": 10, "seed": 4}), ("rmat", {"scale": 3, "edge_factor": 40}),
    ("erdos_renyi", {"n": 400, "p": 0.05}), ("erdos_renyi", {"n": 9, "m": 0}),
    ("barabasi_albert", {"n": 300, "m": 3}), ("watts_strogatz", {"n": 200, "k": 6, "p": 0.3}),
    ("grid", {"rows": 1, "cols": 1}), ("grid", {"rows": 7, "cols": 5}),
])
def test_generate_graph_is_build_graph_of_the_edges(name: str, params: dict) -> None:
    edges = generate(name, params)
    expected, report = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    graph, ours = generate_graph(name, params)
    assert ours == report
    for got in (graph, Graph(*csr_by_sort(np, edges.src, edges.dst, edges.num_nodes)[:2],
                             node_ids=expected.node_ids)):
        for field in ("indptr", "indices", "node_ids"):
            ours_array, theirs = getattr(got, field), getattr(expected, field)
            assert ours_array.dtype == theirs.dtype, field
            np.testing.assert_array_equal(ours_array, theirs)


def test_generate_graph_checks_the_edge_limit() -> None:
    from graphgpu.kernels.core.settings import Settings

    with pytest.raises(LimitExceeded):
        generate_graph("grid", {"rows": 3, "cols": 3}, settings=Settings(max_edges=5))


def test_device_build_branch_with_numpy_standing_in(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.generators import csr

    params = {"scale": 9, "edge_factor": 6, "seed": 8}
    edges = generate("rmat", params)
    expected, report = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    monkeypatch.setattr(csr, "on_device", lambda array: True)
    monkeypatch.setattr(csr, "cupy", lambda: np)
    graph, ours = generate_graph("rmat", params)
    assert ours == report
    np.testing.assert_array_equal(graph.indptr, expected.indptr)
    np.testing.assert_array_equal(graph.indices, expected.indices)
    assert graph.indices.dtype == expected.indices.dtype

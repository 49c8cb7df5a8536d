"""Directed graphs: build_graph(directed=True) against NetworkX DiGraphs, the symmetrised view,
content ids, and the store round trip with its degree figures."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.graph import NormalizationReport, build_graph, content_id
from graphgpu.kernels.core.registry import get_algorithm, graph_view
from graphgpu.kernels.core.store import GraphStore


def random_arcs(seed: int, n: int = 40, m: int = 200) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    return 7 * src + 3, 7 * dst + 3, rng.integers(1, 9, m).astype(np.float64)


@pytest.mark.parametrize("weighted", [False, True])
def test_directed_build_matches_networkx(weighted: bool) -> None:
    src, dst, w = random_arcs(1)
    graph, report = build_graph(src, dst, w if weighted else None, directed=True)
    expected = nx.DiGraph()
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist(), strict=True):
        if u == v:
            continue
        if not expected.has_edge(u, v) or x < expected[u][v]["weight"]:
            expected.add_edge(u, v, weight=x)  # duplicates keep the smallest weight
    assert graph.directed and graph.m == expected.number_of_edges()
    assert report == NormalizationReport(src.size, int((src == dst).sum()),
                                         src.size - int((src == dst).sum()) - graph.m)
    ids = graph.node_ids
    for v in range(graph.n):
        out_row = graph.indices[graph.indptr[v]:graph.indptr[v + 1]]
        in_row = graph.in_indices[graph.in_indptr[v]:graph.in_indptr[v + 1]]
        assert (np.diff(out_row) > 0).all() and (np.diff(in_row) > 0).all()
        assert sorted(ids[out_row].tolist()) == sorted(expected.successors(int(ids[v])))
        assert sorted(ids[in_row].tolist()) == sorted(expected.predecessors(int(ids[v])))
        if weighted:
            out_w = graph.weights[graph.indptr[v]:graph.indptr[v + 1]]
            in_w = graph.in_weights[graph.in_indptr[v]:graph.in_indptr[v + 1]]
            assert out_w.tolist() == [expected[int(ids[v])][int(ids[u])]["weight"]
                                      for u in out_row]
            assert in_w.tolist() == [expected[int(ids[u])][int(ids[v])]["weight"]
                                     for u in in_row]


def test_symmetrised_view_is_the_undirected_build() -> None:
    src, dst, w = random_arcs(2)
    directed, _ = build_graph(src, dst, w, directed=True, extra_nodes=[1000])
    undirected, _ = build_graph(src, dst, w, extra_nodes=[1000])
    view = directed.undirected()
    assert view is directed.undirected() and not view.directed
    for name in ("indptr", "indices", "node_ids", "weights"):
        np.testing.assert_array_equal(getattr(view, name), getattr(undirected, name))
    assert undirected.undirected() is undirected


def test_content_id_differs_by_direction() -> None:
    ring = np.arange(5)
    directed, _ = build_graph(ring, np.roll(ring, 1), directed=True)
    undirected, _ = build_graph(ring, np.roll(ring, 1))
    reversed_, _ = build_graph(np.roll(ring, 1), ring, directed=True)
    ids = {content_id(g) for g in (directed, undirected, reversed_)}
    assert len(ids) == 3
    again, _ = build_graph(ring, np.roll(ring, 1), directed=True)
    assert content_id(again) == content_id(directed)


def test_edgeless_directed_graph() -> None:
    graph, _ = build_graph([], [], extra_nodes=[4, 9], directed=True)
    assert graph.directed and graph.n == 2 and graph.m == 0
    assert graph.in_indptr.tolist() == [0, 0, 0]
    with pytest.raises(InvalidInput):
        build_graph([], [], directed=True)


def test_store_round_trip_and_metadata(tmp_path: Path) -> None:
    store = GraphStore(tmp_path / "graphs", tmp_path / "tmp")
    # 0 -> 1 -> 2 -> 0, 2 -> 3; node 4 isolated.
    graph, report = build_graph([0, 1, 2, 2], [1, 2, 0, 3], [1.0, 2.0, 3.0, 4.0],
                                extra_nodes=[4], directed=True)
    meta, created = store.put(graph, name="d", source={}, report=report)
    assert created and meta["directed"] and meta["m"] == 4
    assert (meta["out_degree_max"], meta["in_degree_max"], meta["sources"], meta["sinks"]) == \
        (2, 1, 1, 2)
    assert (meta["degree_max"], meta["isolated_nodes"]) == (3, 1)
    loaded = store.load(meta["id"])
    assert loaded.directed and loaded.graph_id == meta["id"]
    for name, array in graph.arrays().items():
        np.testing.assert_array_equal(getattr(loaded, name), array)
    undirected, _ = build_graph([0, 1, 2, 2], [1, 2, 0, 3], [1.0, 2.0, 3.0, 4.0], extra_nodes=[4])
    plain, _ = store.put(undirected, name="u", source={}, report=report)
    assert plain["id"] != meta["id"] and not plain["directed"] and "sources" not in plain
    assert not store.load(plain["id"]).directed


def test_graph_view_follows_the_algorithm_rule() -> None:
    graph, _ = build_graph([0, 1], [1, 2], directed=True)
    assert graph_view(get_algorithm("pagerank"), graph) == (graph, "directed")
    view, name = graph_view(get_algorithm("connected_components"), graph)
    assert name == "symmetrised" and not view.directed and view.m == 2
    with pytest.raises(InvalidInput) as refused:
        graph_view(get_algorithm("apsp"), graph)
    assert refused.value.field == "directed"
    undirected = graph.undirected()
    assert graph_view(get_algorithm("apsp"), undirected) == (undirected, "undirected")
    assert graph_view(get_algorithm("sssp"), graph) == (graph, "directed")

"""The NetworkX backend against the live stack (API over HTTP, Redis, a CPU worker): each served
function returns what NetworkX returns, graphs are uploaded once, the unsupported falls back."""

from __future__ import annotations

import os
import random

import networkx as nx
import pytest

from graphgpu.client import nx_backend

BACKEND = "graphgpu"


@pytest.fixture(scope="module", autouse=True)
def service(stack):
    saved = os.environ.get("GRAPHGPU_URL")
    os.environ["GRAPHGPU_URL"] = stack.base_url
    nx_backend.reset()
    yield stack
    if saved is None:
        os.environ.pop("GRAPHGPU_URL", None)
    else:
        os.environ["GRAPHGPU_URL"] = saved
    nx_backend.reset()


def int_graph() -> nx.Graph:
    """Sparse pieces with cycles, a triangle-rich core and isolated nodes, shuffled node order."""
    g = nx.disjoint_union_all([nx.karate_club_graph(), nx.cycle_graph(5), nx.path_graph(4),
                               nx.empty_graph(2)])
    order = list(g.nodes)
    random.Random(3).shuffle(order)
    h = nx.Graph()
    h.add_nodes_from(3 * v + 1 for v in order)  # non-contiguous ids
    h.add_edges_from((3 * u + 1, 3 * v + 1) for u, v in g.edges)
    return h


def label_graph() -> nx.Graph:
    return nx.relabel_nodes(nx.les_miserables_graph(), {v: f"<{v}>" for v in
                                                        nx.les_miserables_graph()})


def approx(a: dict, b: dict, rel: float = 1e-9) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == pytest.approx(b[key], rel=rel, abs=1e-12), key


@pytest.mark.parametrize("make", [int_graph, label_graph])
def test_exact_functions_equal_networkx(make) -> None:
    g = make()
    source = next(iter(g))
    assert (sorted(map(sorted, nx.connected_components(g, backend=BACKEND)))
            == sorted(map(sorted, nx.connected_components(g))))
    assert nx.number_connected_components(g, backend=BACKEND) == \
        nx.number_connected_components(g)
    assert nx.single_source_shortest_path_length(g, source, backend=BACKEND) == \
        nx.single_source_shortest_path_length(g, source)
    assert nx.single_source_shortest_path_length(g, source, cutoff=2, backend=BACKEND) == \
        nx.single_source_shortest_path_length(g, source, cutoff=2)
    approx(nx.closeness_centrality(g, backend=BACKEND), nx.closeness_centrality(g))
    approx(nx.betweenness_centrality(g, backend=BACKEND), nx.betweenness_centrality(g))
    approx(nx.betweenness_centrality(g, k=7, seed=5, endpoints=True, backend=BACKEND),
           nx.betweenness_centrality(g, k=7, seed=5, endpoints=True))
    pairs = [(u, v) for u in list(g)[:6] for v in list(g)[-6:]]
    assert list(nx.jaccard_coefficient(g, pairs, backend=BACKEND)) == \
        list(nx.jaccard_coefficient(g, pairs))
    assert nx.core_number(g, backend=BACKEND) == nx.core_number(g)
    assert nx.triangles(g, backend=BACKEND) == nx.triangles(g)
    assert nx.triangles(g, source, backend=BACKEND) == nx.triangles(g, source)
    approx(nx.clustering(g, backend=BACKEND), nx.clustering(g))


def test_jaccard_of_every_non_edge_and_unknown_nodes() -> None:
    g = nx.gnp_random_graph(25, 0.2, seed=4)
    assert list(nx.jaccard_coefficient(g, backend=BACKEND)) == list(nx.jaccard_coefficient(g))
    with pytest.raises(nx.NodeNotFound):
        list(nx.jaccard_coefficient(g, [(0, 999)], backend=BACKEND))
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(g, 999, backend=BACKEND)


def test_pagerank_matches_to_tolerance() -> None:
    g = int_graph()
    approx(nx.pagerank(g, tol=1e-12, backend=BACKEND), nx.pagerank(g, tol=1e-12), rel=1e-8)
    weighted = nx.les_miserables_graph()
    person = {"Valjean": 1.0, "Javert": 2.0}
    approx(nx.pagerank(weighted, personalization=person, tol=1e-12, backend=BACKEND),
           nx.pagerank(weighted, personalization=person, tol=1e-12), rel=1e-8)


def test_louvain_and_mis_are_valid() -> None:
    g = nx.planted_partition_graph(4, 20, 0.6, 0.02, seed=2)
    communities = nx.community.louvain_communities(g, seed=1, backend=BACKEND)
    assert sorted(map(sorted, communities)) == [list(range(20 * b, 20 * (b + 1)))
                                                 for b in range(4)]
    theirs = nx.community.louvain_communities(g, seed=1)
    assert nx.community.modularity(g, communities) >= nx.community.modularity(g, theirs) - 1e-12
    mis = nx.maximal_independent_set(g, seed=3, backend=BACKEND)
    chosen = set(mis)
    assert not any(u in chosen and v in chosen for u, v in g.edges)
    assert all(v in chosen or any(u in chosen for u in g[v]) for v in g)


def test_graph_is_uploaded_once_and_again_after_a_change() -> None:
    g = int_graph()
    assert nx_backend.uploaded(g) is None
    nx.core_number(g, backend=BACKEND)
    first = nx_backend.uploaded(g)
    nx.triangles(g, backend=BACKEND)
    nx.closeness_centrality(g, backend=BACKEND)
    assert nx_backend.uploaded(g) is first
    g.add_edge(1, 10_000)  # a new node and edge
    assert nx.core_number(g, backend=BACKEND) == nx.core_number(g)
    assert nx_backend.uploaded(g).id != first.id


def test_what_is_not_served_falls_back_or_says_so() -> None:
    directed = nx.gn_graph(20, seed=1)
    with pytest.raises(NotImplementedError):
        nx_backend.core_number(directed)
    g = int_graph()
    with pytest.raises(NotImplementedError):
        nx_backend.closeness_centrality(g, distance="weight")
    with pytest.raises(NotImplementedError):
        nx_backend.betweenness_centrality(g, weight="weight")
    saved = list(nx.config.backend_priority.algos)
    nx.config.backend_priority.algos = [BACKEND]  # graphgpu first, NetworkX after it
    try:
        assert nx.closeness_centrality(g, distance="weight") == \
            nx.closeness_centrality(g, distance="weight", backend="networkx")
        nx.core_number(g)  # served: the graph went to the service
        assert nx_backend.uploaded(g) is not None
    finally:
        nx.config.backend_priority.algos = saved
    assert nx_backend.backend_interface.can_run("pagerank", (), {}) is True
    assert nx_backend.backend_interface.can_run("diameter", (), {}) is not True
    assert nx_backend.backend_info()["backend_name"] == BACKEND


def test_errors_are_networkx_errors() -> None:
    g = nx.cycle_graph(4)
    with pytest.raises(ZeroDivisionError):
        nx.betweenness_centrality(g, k=0, backend=BACKEND)
    with pytest.raises(ValueError):
        nx.betweenness_centrality(g, k=5, backend=BACKEND)
    with pytest.raises(ZeroDivisionError):
        nx.pagerank(g, personalization={0: 0, 1: 0}, backend=BACKEND)


def test_directed_pagerank_and_strong_components() -> None:
    g = nx.DiGraph([(1, 2), (1, 3), (3, 1), (3, 2), (3, 5), (4, 5), (4, 6), (5, 4), (5, 6),
                    (6, 4), (7, 8), (8, 9), (9, 7), (9, 1)])
    approx(nx.pagerank(g, tol=1e-12, backend=BACKEND), nx.pagerank(g, tol=1e-12), rel=1e-8)
    assert nx_backend.uploaded(g).directed
    assert (sorted(map(sorted, nx.strongly_connected_components(g, backend=BACKEND)))
            == sorted(map(sorted, nx.strongly_connected_components(g))))
    assert nx.number_strongly_connected_components(g, backend=BACKEND) == \
        nx.number_strongly_connected_components(g)
    with pytest.raises(NotImplementedError):
        nx_backend.core_number(g)  # undirected-only functions refuse directed graphs
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(g, max_iter=0, backend=BACKEND)

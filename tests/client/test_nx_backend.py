"""The NetworkX backend against the live stack (API over HTTP, Redis, a CPU worker): each served
function returns what NetworkX returns, graphs are uploaded once, the unsupported falls back."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import warnings

import networkx as nx
import pytest

from graphgpu.client import nx_backend, nx_session

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
    zero = nx.path_graph(4)
    zero[1][2]["weight"] = 0
    with pytest.raises(NotImplementedError):
        nx_backend.betweenness_centrality(zero, weight="weight")
    with pytest.raises(NotImplementedError):
        nx_backend.betweenness_centrality(g, weight=lambda u, v, d: 1)
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


def weighted_digraph() -> nx.DiGraph:
    g = nx.gnp_random_graph(40, 0.08, seed=6, directed=True)
    for i, (u, v) in enumerate(g.edges):
        g[u][v]["weight"] = 1 + (7 * i) % 5  # integer weights: NetworkX's lengths are ints
    g.add_node(99)  # an isolated node
    return g


def test_no_cache_warning_on_repeated_calls() -> None:
    g = int_graph()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            nx.pagerank(g, backend=BACKEND)
            nx.core_number(g, backend=BACKEND)


def test_no_connection_is_left_open_at_a_reset_or_at_exit(service) -> None:
    script = ("import networkx as nx\nfrom graphgpu.client import nx_backend\n"
              "g = nx.karate_club_graph()\nnx.pagerank(g, backend='graphgpu')\n"
              "nx_backend.reset()\nnx.core_number(g, backend='graphgpu')\n")
    run = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", script],
                         env={**os.environ, "GRAPHGPU_URL": service.base_url},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "ResourceWarning" not in run.stderr, run.stderr


def test_served_calls_dispatch_no_networkx_function(monkeypatch) -> None:
    dispatched: list[str] = []
    original = nx.utils.backends._dispatchable.__call__

    def record(self, /, *args, backend=None, **kwargs):
        dispatched.append(self.name)
        return original(self, *args, backend=backend, **kwargs)

    g, path = int_graph(), nx.path_graph(5)
    monkeypatch.setattr(nx.utils.backends._dispatchable, "__call__", record)
    list(nx_backend.backend_interface.connected_components(g))
    nx_backend.backend_interface.pagerank(g)
    nx_backend.backend_interface.is_forest(path)
    assert dispatched == []


@pytest.mark.parametrize("make", [int_graph, label_graph])
def test_structure_functions_equal_networkx(make) -> None:
    g = make()
    node = next(iter(g))
    for name in ("is_connected", "number_of_isolates", "is_tree", "is_forest", "transitivity"):
        assert getattr(nx, name)(g, backend=BACKEND) == getattr(nx, name)(g), name
    assert list(nx.isolates(g, backend=BACKEND)) == list(nx.isolates(g))
    assert nx.is_isolate(g, node, backend=BACKEND) == nx.is_isolate(g, node)
    assert nx.node_connected_component(g, node, backend=BACKEND) == \
        nx.node_connected_component(g, node)
    assert nx.average_clustering(g, backend=BACKEND) == pytest.approx(nx.average_clustering(g))
    assert nx.average_clustering(g, count_zeros=False, backend=BACKEND) == \
        pytest.approx(nx.average_clustering(g, count_zeros=False))
    tree = nx.random_labeled_tree(30, seed=1)
    assert nx.is_tree(tree, backend=BACKEND) and nx.is_forest(tree, backend=BACKEND)


def test_directed_components_and_reachability_equal_networkx() -> None:
    g = weighted_digraph()
    for name in ("number_weakly_connected_components", "is_weakly_connected",
                 "is_strongly_connected", "number_of_isolates", "is_forest"):
        assert getattr(nx, name)(g, backend=BACKEND) == getattr(nx, name)(g), name
    assert (sorted(map(sorted, nx.weakly_connected_components(g, backend=BACKEND)))
            == sorted(map(sorted, nx.weakly_connected_components(g))))
    for source in (0, 5, 99):
        assert nx.descendants(g, source, backend=BACKEND) == nx.descendants(g, source)
        assert nx.ancestors(g, source, backend=BACKEND) == nx.ancestors(g, source)
        assert nx.descendants_at_distance(g, source, 2, backend=BACKEND) == \
            nx.descendants_at_distance(g, source, 2)
        assert nx.has_path(g, source, 7, backend=BACKEND) == nx.has_path(g, source, 7)


@pytest.mark.parametrize("directed", [False, True])
def test_shortest_path_lengths_equal_networkx(directed: bool) -> None:
    g = weighted_digraph() if directed else weighted_digraph().to_undirected()
    for source in (0, 3):
        for call, kwargs in (("single_source_shortest_path_length", {}),
                             ("single_source_shortest_path_length", {"cutoff": 2}),
                             ("single_target_shortest_path_length", {}),
                             ("single_source_dijkstra_path_length", {}),
                             ("single_source_dijkstra_path_length", {"cutoff": 4}),
                             ("single_source_bellman_ford_path_length", {}),
                             ("shortest_path_length", {"weight": "weight"}),
                             ("shortest_path_length", {})):
            assert getattr(nx, call)(g, source, backend=BACKEND, **kwargs) == \
                getattr(nx, call)(g, source, **kwargs), (call, kwargs)
        assert nx.shortest_path_length(g, target=source, weight="weight", backend=BACKEND) == \
            nx.shortest_path_length(g, target=source, weight="weight")
        reached = nx.single_source_shortest_path_length(g, source)
        target = max(reached, key=reached.get)
        for call in ("dijkstra_path_length", "bellman_ford_path_length"):
            assert getattr(nx, call)(g, source, target, backend=BACKEND) == \
                getattr(nx, call)(g, source, target)
        assert nx.shortest_path_length(g, source, target, backend=BACKEND) == reached[target]
    with pytest.raises(nx.NetworkXNoPath):
        nx.dijkstra_path_length(g, 0, 99, backend=BACKEND)
    with pytest.raises(nx.NodeNotFound):
        nx.shortest_path_length(g, 0, 1234, backend=BACKEND)


def test_leiden_communities_partition_the_graph() -> None:
    g = nx.planted_partition_graph(3, 15, 0.7, 0.02, seed=4)
    communities = nx.community.leiden_communities(g, seed=1, backend=BACKEND)
    assert sorted(map(sorted, communities)) == [list(range(15 * b, 15 * (b + 1)))
                                                 for b in range(3)]


def test_changes_are_seen_through_networkx_cache_or_verify(monkeypatch) -> None:
    g = nx.path_graph(4)
    nx.set_edge_attributes(g, 1, "weight")
    assert nx.dijkstra_path_length(g, 0, 3, backend=BACKEND) == 3
    g.add_edge(2, 3, weight=5)  # a method: NetworkX empties the graph's cache
    assert nx.dijkstra_path_length(g, 0, 3, backend=BACKEND) == 7
    g[1][2]["weight"] = 10  # by hand: the graph's cache says nothing ...
    assert nx.dijkstra_path_length(g, 0, 3, backend=BACKEND) == 7
    monkeypatch.setattr(nx.config.backends.graphgpu, "verify_cache", True)
    assert nx.dijkstra_path_length(g, 0, 3, backend=BACKEND) == 16  # ... the fingerprint does
    monkeypatch.undo()
    g[1][2]["weight"] = 1
    g.__networkx_cache__.clear()  # NetworkX's advice for changes by hand
    assert nx.dijkstra_path_length(g, 0, 3, backend=BACKEND) == 7


def test_multigraphs_where_parallel_edges_do_not_change_the_answer() -> None:
    g = nx.MultiGraph([(1, 2), (2, 3), (5, 6)])
    g.add_edge(0, 1, weight=7)
    g.add_edge(0, 1, weight=2)  # the lighter of the parallel edges counts, as in NetworkX
    g.add_edge(1, 2, weight=3)
    assert nx.single_source_dijkstra_path_length(g, 0, backend=BACKEND) == \
        nx.single_source_dijkstra_path_length(g, 0) == {0: 0, 1: 2, 2: 3, 3: 4}
    assert nx.number_connected_components(g, backend=BACKEND) == 2
    assert nx.is_forest(g, backend=BACKEND) is False  # parallel edges make cycles
    with pytest.raises(NotImplementedError):
        nx_backend.backend_interface.triangles(g)


def test_maximal_independent_set_containing_given_nodes() -> None:
    g = nx.florentine_families_graph()
    mis = nx.maximal_independent_set(g, ["Medici", "Bischeri"], backend=BACKEND)
    chosen = set(mis)
    assert {"Medici", "Bischeri"} <= chosen and len(chosen) == len(mis)
    assert not any(u in chosen and v in chosen for u, v in g.edges)
    assert all(v in chosen or any(u in chosen for u in g[v]) for v in g)
    with pytest.raises(nx.NetworkXUnfeasible):
        nx.maximal_independent_set(g, ["Salviati", "Pazzi"], backend=BACKEND)
    assert nx.maximal_independent_set(nx.complete_graph(5), [3], backend=BACKEND) == [3]


@pytest.mark.parametrize("directed", [False, True])
def test_weighted_and_directed_betweenness_equal_networkx(directed: bool) -> None:
    """Integer weights with ties, some edges without the attribute (they count 1), labels."""
    g = nx.gnp_random_graph(30, 0.12, seed=7, directed=directed)
    rng = random.Random(2)
    for u, v in list(g.edges)[::4]:
        g[u][v]["weight"] = rng.randint(1, 3)
    g = nx.relabel_nodes(g, {v: f"n{v}" for v in g})
    for kwargs in ({}, {"weight": "weight"}, {"weight": "weight", "endpoints": True},
                   {"weight": "weight", "k": 9, "seed": 4, "normalized": False}):
        approx(nx.betweenness_centrality(g, backend=BACKEND, **kwargs),
               nx.betweenness_centrality(g, **kwargs))
    assert nx_backend.uploaded(g, "weight").directed is directed


def test_betweenness_of_multigraphs_counts_the_lightest_parallel_edge() -> None:
    for make in (nx.MultiGraph, nx.MultiDiGraph):
        g = make([(0, 1, {"weight": 3}), (0, 1, {"weight": 1}), (1, 2, {"weight": 1}),
                  (0, 3, {"weight": 1}), (3, 2, {"weight": 1}), (2, 4, {}), (0, 2),
                  (0, 2, {"weight": 2})])
        for weight in (None, "weight"):
            approx(nx.betweenness_centrality(g, weight=weight, normalized=False, backend=BACKEND),
                   nx.betweenness_centrality(g, weight=weight, normalized=False))
        assert nx_backend.uploaded(g, "weight") is not None


@pytest.mark.parametrize("directed", [False, True])
def test_directed_and_weighted_clustering_equal_networkx(directed: bool) -> None:
    """Directed (Fagiolo) clustering bit for bit, weighted (geometric mean, signed weights
    too) to rounding; each runs a job, none falls back."""
    g = nx.gnp_random_graph(50, 0.15, seed=7, directed=directed)
    g = nx.relabel_nodes(g, {v: f"n{v}" for v in g})  # labels: results keyed by the nodes
    session = nx_session.current()
    jobs, fallbacks = session.jobs, session.fallbacks
    nodes = list(g)[:5]
    assert nx.clustering(g, backend=BACKEND) == nx.clustering(g)
    assert nx.clustering(g, nodes, backend=BACKEND) == nx.clustering(g, nodes)
    assert nx.average_clustering(g, count_zeros=False, backend=BACKEND) == \
        nx.average_clustering(g, count_zeros=False)
    for i, (u, v) in enumerate(g.edges):
        g[u][v]["weight"] = (-1.5 if i % 7 == 0 else 0.5) + (i % 5)
    g.__networkx_cache__.clear()
    approx(nx.clustering(g, weight="weight", backend=BACKEND), nx.clustering(g, weight="weight"),
           rel=1e-12)
    assert nx.clustering(g, nodes[0], weight="weight", backend=BACKEND) == \
        pytest.approx(nx.clustering(g, nodes[0], weight="weight"), rel=1e-12)
    assert nx.average_clustering(g, weight="weight", backend=BACKEND) == \
        pytest.approx(nx.average_clustering(g, weight="weight"), rel=1e-12)
    assert session.jobs - jobs >= 5 and session.fallbacks == fallbacks
    for u, v in g.edges:
        g[u][v]["weight"] = -1.0 if (u, v) != next(iter(g.edges)) else 0.0
    g.__networkx_cache__.clear()
    with pytest.raises(NotImplementedError, match="largest weight"):
        nx_backend.backend_interface.clustering(g, weight="weight")

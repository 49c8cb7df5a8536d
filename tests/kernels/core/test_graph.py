"""The graph container and store: normalisation against NetworkX, content addressing, atomicity."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded, UnknownName
from graphgpu.kernels.core.graph import build_graph, content_id, simple_graph
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore


def _reference(src, dst, weights, extra) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from([*extra.tolist(), *src.tolist(), *dst.tolist()])
    for i, (a, b) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
        if a == b:
            continue
        w = 1.0 if weights is None else float(weights[i])
        if graph.has_edge(a, b):
            w = min(w, graph[a][b]["weight"])
        graph.add_edge(a, b, weight=w)
    return graph


@pytest.mark.parametrize("ids", ["dense", "outliers", "sparse"])
@pytest.mark.parametrize("weighted", [False, True])
def test_build_graph_matches_networkx(ids: str, weighted: bool) -> None:
    """Dense ids (a lookup table), a few huge ones among them (the table, and those ranked
    after it), and sparse ids (all sorted) give NetworkX's graph."""
    rng = np.random.default_rng(["dense", "outliers", "sparse"].index(ids) * 2 + int(weighted))
    for _ in range(60):
        m = int(rng.integers(0, 80))
        top = 10**15 if ids == "sparse" else 50
        src, dst = rng.integers(0, top, m), rng.integers(0, top, m)
        if ids == "outliers":
            src[rng.random(m) < 0.05] = 10**12 + rng.integers(0, 3)
        dst[: m // 4] = src[: m // 4]  # self-loops
        src = np.concatenate([src, dst[: m // 3]])  # reversed duplicates
        dst = np.concatenate([dst, src[: m // 3]])
        weights = rng.integers(1, 9, src.size).astype(float) if weighted else None
        extra = rng.integers(0, top, 3)
        if ids == "outliers":
            extra[0] = 10**13
        graph, report = build_graph(src, dst, weights, extra_nodes=extra)
        ref = _reference(src, dst, weights, extra)
        ids = sorted(ref.nodes)
        assert graph.node_ids.tolist() == ids
        assert (graph.n, graph.m) == (ref.number_of_nodes(), ref.number_of_edges())
        for i, node in enumerate(ids):
            row = graph.indices[graph.indptr[i]:graph.indptr[i + 1]]
            assert row.tolist() == sorted(ids.index(x) for x in ref.neighbors(node))
            if weighted:
                expected = [ref[node][ids[j]]["weight"] for j in row]
                assert graph.weights[graph.indptr[i]:graph.indptr[i + 1]].tolist() == expected
        assert report.self_loops_dropped == int((src == dst).sum())
        assert report.duplicates_merged == src.size - report.self_loops_dropped - graph.m


def test_build_graph_rejects_bad_input() -> None:
    with pytest.raises(InvalidInput, match="empty"):
        build_graph(np.array([], int), np.array([], int))
    with pytest.raises(InvalidInput, match="non-negative"):
        build_graph(np.array([-1]), np.array([2]))
    with pytest.raises(InvalidInput, match="finite"):
        build_graph(np.array([1]), np.array([2]), np.array([np.nan]))
    with pytest.raises(LimitExceeded):
        build_graph(np.array([1]), np.array([2]), settings=Settings(max_node_id=1))
    with pytest.raises(LimitExceeded):
        build_graph(np.arange(10), np.arange(1, 11), settings=Settings(max_nodes=5))


def test_id_translation() -> None:
    graph, _ = build_graph(np.array([70, 10]), np.array([30, 30]))
    assert graph.internal_ids([10, 70]).tolist() == [0, 2]
    assert graph.to_original(np.array([2, -1, 0])).tolist() == [70, -1, 10]
    with pytest.raises(InvalidInput, match="not in the graph"):
        graph.internal_ids(11)


def test_store_is_content_addressed_and_atomic(tmp_path: Path) -> None:
    store = GraphStore(tmp_path / "graphs", tmp_path / "tmp")
    graph, report = build_graph(np.array([1, 2]), np.array([2, 3]), np.array([0.5, 2.0]))
    same, _ = build_graph(np.array([3, 2, 2]), np.array([2, 1, 1]), np.array([2.0, 0.5, 0.7]))
    meta, created = store.put(graph, name="a", source={"format": "test"}, report=report)
    again, created_again = store.put(same, name="b", source={"format": "test"}, report=report)
    assert created and not created_again and again["id"] == meta["id"] == content_id(graph)
    assert (meta["n"], meta["m"], meta["weighted"]) == (3, 2, True)
    loaded = store.load(meta["id"])
    assert np.array_equal(loaded.indices, graph.indices) and loaded.graph_id == meta["id"]
    # Copy-on-write: a kernel writing into a loaded array never reaches the stored graph.
    loaded.indices[:] = -7
    assert np.array_equal(store.load(meta["id"]).indices, graph.indices)
    assert [g["id"] for g in store.list()] == [meta["id"]]
    assert not list((tmp_path / "tmp").iterdir())
    store.delete(meta["id"])
    with pytest.raises(UnknownName):
        store.meta(meta["id"])
    with pytest.raises(UnknownName):
        store.load("../etc")


def test_content_id_is_the_same_in_pieces_on_any_number_of_threads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from graphgpu.kernels.core import csr
    from graphgpu.kernels.core import graph as graph_module

    rng = np.random.default_rng(3)
    graph, _ = build_graph(rng.integers(0, 500, 4000), rng.integers(0, 500, 4000),
                           rng.random(4000))
    monkeypatch.setattr(graph_module, "HASH_PIECE", 256)  # dozens of pieces per array
    ids = set()
    for threads in (1, 3, 8):
        monkeypatch.setattr(csr, "THREADS", threads)
        ids.add(content_id(graph))
    assert len(ids) == 1
    # the same bytes split differently between two arrays: another graph, another id
    a, _ = build_graph(np.array([0, 1]), np.array([1, 2]))
    b, _ = build_graph(np.array([0, 1, 2]), np.array([1, 2, 3]))
    assert content_id(a) != content_id(b)


def test_simple_graph_is_what_build_graph_gives() -> None:
    """Warm-up graphs skip the compiled CSR builder: the same graph all the same (sparse ids,
    loops, duplicates, both directions of an edge, extra nodes; a generator's graph)."""
    from graphgpu.kernels.generators import generate, generate_graph

    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 40, 300) * 7, rng.integers(0, 40, 300) * 7
    src[:5] = dst[:5] = 1000  # a node with a loop only
    extra = np.array([3, 500, 14])
    params = {"scale": 8, "edge_factor": 8, "seed": 2}
    edges = generate("rmat", params, "cpu")
    cases = ((simple_graph(src, dst, extra), build_graph(src, dst, extra_nodes=extra)[0]),
             (simple_graph(src, dst), build_graph(src, dst)[0]),
             (simple_graph(edges.src, edges.dst, np.arange(edges.num_nodes)),
              generate_graph("rmat", params, "cpu")[0]))
    for built, want in cases:
        for name in ("indptr", "indices", "node_ids"):
            a, b = getattr(built, name), getattr(want, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), name
        assert built.weights is None and not built.directed
    built, want = simple_graph(src, dst, extra, directed=True), build_graph(
        src, dst, extra_nodes=extra, directed=True)[0]
    for name in ("indptr", "indices", "node_ids", "in_indptr", "in_indices"):
        a, b = getattr(built, name), getattr(want, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert built.directed and built.weights is None and built.in_weights is None

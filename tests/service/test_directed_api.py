"""Directed graphs through the real API and SDK: uploads in the formats that carry direction,
the stored in/out figures, and what algorithms do with them (native, symmetrised or 422)."""

from __future__ import annotations

import gzip
import json

import networkx as nx
import pytest

from graphgpu.client import Client
from tests.conftest import Stack

# 0 -> 1 -> 2 -> 0 is a cycle; 2 -> 3 -> 4 a tail; 1 -> 0 makes 0 <-> 1 reciprocal.
ARCS = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (1, 0)]
EDGELIST = "".join(f"{u} {v}\n" for u, v in ARCS)


def result(stack: Stack, graph_id: str, algorithm: str, params: dict | None = None) -> dict:
    response = stack.submit(graph_id, algorithm, params, backend="cpu")
    assert response.status_code in (200, 202), response.text
    done = stack.wait_job(response.json()["id"])
    assert done["status"] == "succeeded", done
    return stack.http.get(done["result_url"]).json()


def test_edgelist_upload_keeps_directions(stack: Stack) -> None:
    meta = stack.upload(EDGELIST, directed="true", name="directed")
    assert meta["directed"] and (meta["n"], meta["m"]) == (5, 6)
    assert (meta["out_degree_max"], meta["in_degree_max"]) == (2, 2)
    assert (meta["sources"], meta["sinks"]) == (0, 1)  # 4 has no arc out
    assert meta["degree_max"] == 3 and meta["degree_mean"] == pytest.approx(12 / 5)
    undirected = stack.upload(EDGELIST)
    assert not undirected["directed"] and undirected["m"] == 5
    assert undirected["id"] != meta["id"] and undirected.get("sources") is None
    again = stack.http.post("/v1/graphs", params={"directed": "true"},
                            content=gzip.compress(EDGELIST.encode()))
    assert again.status_code == 200 and again.json()["id"] == meta["id"]
    assert stack.http.get(f"/v1/graphs/{meta['id']}").json()["directed"]


@pytest.mark.parametrize(("fmt", "body", "directed", "m"), [
    ("json", json.dumps({"edges": ARCS}), True, 6),
    ("mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 6\n"
     + "".join(f"{u + 1} {v + 1}\n" for u, v in ARCS), True, 6),
    ("mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 2\n2 1\n3 2\n", False, 2),
    ("metis", "3 2\n2\n1 3\n2\n", False, 2),
])
def test_formats_that_carry_direction(stack: Stack, fmt: str, body: str, directed: bool,
                                      m: int) -> None:
    for data in (body.encode(), gzip.compress(body.encode())):
        response = stack.http.post("/v1/graphs", params={"format": fmt, "directed": "true"},
                                   content=data)
        assert response.status_code in (200, 201), response.text
        assert (response.json()["directed"], response.json()["m"]) == (directed, m)


def test_native_symmetrised_and_refused_algorithms(stack: Stack) -> None:
    graph_id = stack.upload(EDGELIST, directed="true")["id"]
    scc = result(stack, graph_id, "strongly_connected_components")
    assert scc["graph_view"] == "directed"
    assert scc["summary"] == {"count": 3, "largest": 3, "singletons": 2}
    assert scc["node_values"]["component"] == {"0": 0, "1": 0, "2": 0, "3": 1, "4": 2}
    ranks = result(stack, graph_id, "pagerank", {"tol": 1e-12, "max_iter": 1000})
    expected = nx.pagerank(nx.DiGraph(ARCS), tol=1e-12, max_iter=1000)
    assert ranks["graph_view"] == "directed"
    for node, value in ranks["node_values"]["pagerank"].items():
        assert value == pytest.approx(expected[int(node)], rel=1e-9)
    weak = result(stack, graph_id, "connected_components")
    assert weak["graph_view"] == "symmetrised" and weak["summary"]["count"] == 1
    tri = result(stack, graph_id, "triangles")
    assert tri["graph_view"] == "symmetrised" and tri["summary"]["triangles"] == 1
    refused = stack.submit(graph_id, "apsp", {}, backend="cpu")
    assert refused.status_code == 422
    assert refused.json()["error"]["field"] == "directed"
    undirected_id = stack.upload(EDGELIST)["id"]
    assert result(stack, undirected_id, "sssp", {"source": 0})["graph_view"] == "undirected"
    out = result(stack, graph_id, "bfs", {"source": 0})  # out-edges, as NetworkX
    assert out["graph_view"] == "directed"
    assert {int(v): d for v, d in out["node_values"]["level"].items() if d >= 0} == dict(
        nx.single_source_shortest_path_length(nx.DiGraph(ARCS), 0))


def test_sdk_uploads_directed(stack: Stack) -> None:
    with Client(stack.base_url, timeout=30) as gg:
        edges = gg.upload_edges([5, 6, 7], [6, 7, 5], directed=True)
        assert edges.directed and edges.m == 3
        g = nx.DiGraph([(5, 6), (6, 7)])
        from_nx = gg.upload_networkx(g, directed=True)
        assert from_nx.directed and from_nx.m == 2
        plain = gg.upload(b"5 6\n6 7\n")
        assert not plain.directed and plain.id != from_nx.id

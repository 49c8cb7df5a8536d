"""The SDK's array uploads (NumPy, pandas, NetworkX) go up as binary columns, and store exactly
the graph the text and JSON uploads of the same edges store."""

from __future__ import annotations

import json
import uuid

import networkx as nx
import numpy as np
import pytest

from graphgpu.client import Client


@pytest.fixture(scope="module")
def client(stack):
    with Client(stack.base_url, timeout=30) as gg:
        yield gg


def fresh_edges(m: int = 500) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges no other test uploads (ids at a random offset), duplicates and a loop included."""
    rng = np.random.default_rng(uuid.uuid4().int % 2**32)
    base = int(rng.integers(0, 10**9))
    src = base + rng.integers(0, 200, m)
    dst = base + rng.integers(0, 200, m)
    # Weights of few digits: the text parser rounds 17-digit mantissas 1 ulp off (see upload.md)
    return src, dst, rng.integers(1, 4000, m) / 8


def text_of(src: np.ndarray, dst: np.ndarray, weights: np.ndarray | None = None) -> bytes:
    rows = zip(src.tolist(), dst.tolist(), *([weights.tolist()] if weights is not None else []),
               strict=True)
    return "".join(" ".join(map(repr, row)) + "\n" for row in rows).encode()


def source_format(client: Client, graph_id: str) -> str:
    return client.request("GET", f"/v1/graphs/{graph_id}").json()["source"]["format"]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_upload_edges_is_binary_and_matches_the_text_upload(client: Client, weighted: bool,
                                                            directed: bool) -> None:
    src, dst, w = fresh_edges()
    weights = w if weighted else None
    graph = client.upload_edges(src.astype(np.uint32), dst, weights, directed=directed)
    assert graph.created and source_format(client, graph.id) == "npz"
    oracle = client.upload(text_of(src, dst, weights), format="edgelist", directed=directed)
    assert oracle.id == graph.id and not oracle.created  # same content, same address
    down = client.download(graph)
    again = client.upload_edges(down["src"], down["dst"], down.get("weight"),
                                directed=directed, nodes=down["nodes"])
    assert again.id == graph.id and not again.created


def test_upload_pandas_integer_and_labelled_columns(client: Client) -> None:
    pd = pytest.importorskip("pandas")
    src, dst, w = fresh_edges()
    frame = pd.DataFrame({"a": src, "b": dst, "cost": w})
    graph = client.upload_pandas(frame, source="a", target="b", weight="cost")
    assert source_format(client, graph.id) == "npz" and graph.weighted
    assert client.upload(text_of(src, dst, w), format="edgelist").id == graph.id
    unweighted = client.upload_pandas(frame.rename(columns={"a": "source", "b": "target"}))
    assert client.upload(text_of(src, dst), format="edgelist").id == unweighted.id

    names = pd.DataFrame({"source": ["alice", "bob"], "target": ["bob", "carol"],
                          "w": [1.5, 2.0]})
    labelled = client.upload_pandas(names, weight="w")
    assert labelled.labelled and (labelled.n, labelled.m) == (3, 2)
    assert source_format(client, labelled.id) == "json"
    bfs = client.run(labelled, "bfs", source="alice").wait(timeout=60)
    assert bfs.node_values("level") == {"alice": 0, "bob": 1, "carol": 2}
    with pytest.raises(ValueError, match="negative"):
        client.upload_pandas(pd.DataFrame({"source": [-1], "target": [2]}))


def _json_body(G: nx.Graph, weighted: bool) -> bytes:  # noqa: N803
    """The JSON the SDK sent for integer graphs before: the oracle of the binary upload."""
    rows = [[u, v, w] if weighted else [u, v] for u, v, w in G.edges(data="weight")]
    return json.dumps({"edges": rows, "nodes": list(G.nodes)}).encode()


@pytest.mark.parametrize("kind", ["graph", "weighted", "digraph", "multigraph"])
def test_upload_networkx_integer_graph_is_binary(client: Client, kind: str) -> None:
    src, dst, w = fresh_edges(300)
    G = {"digraph": nx.DiGraph, "multigraph": nx.MultiGraph}.get(kind, nx.Graph)()  # noqa: N806
    if kind == "weighted":
        G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), w.tolist(), strict=True))
    else:
        G.add_edges_from(zip(src.tolist(), dst.tolist(), strict=True))
    G.add_nodes_from([int(src.max()) + 5, int(src.max()) + 9])  # isolated
    directed = kind == "digraph"
    graph = client.upload_networkx(G, directed=directed)
    assert graph.created and source_format(client, graph.id) == "npz"
    assert graph.isolated_nodes >= 2 and graph.labels is None and not graph.labelled
    oracle = client.upload(_json_body(G, kind == "weighted"), format="json", directed=directed)
    assert oracle.id == graph.id and not oracle.created


def test_upload_networkx_refuses_a_weight_that_is_not_a_number(client: Client) -> None:
    G = nx.Graph()  # noqa: N806
    G.add_edge(1, 2, weight="heavy")
    with pytest.raises(ValueError, match="heavy"):
        client.upload_networkx(G)
    G = nx.Graph()  # noqa: N806
    G.add_edge(1, 2, weight=True)
    with pytest.raises(ValueError, match="True"):
        client.upload_networkx(G)

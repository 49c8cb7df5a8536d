"""Labels end to end through the real API, worker and SDK: a graph named by labels keeps them
on the service, takes them as node parameters and names nodes by them in every result format,
for any client; integer graphs are unchanged."""

from __future__ import annotations

import csv
import io
import json
import uuid

import networkx as nx
import pyarrow.parquet as pq
import pytest

from graphgpu.client import Client
from graphgpu.client.cli import main
from graphgpu.kernels.core.registry import algorithms, node_id_summary_fields
from tests.conftest import Stack


def finished(stack: Stack, graph_id: str, algorithm: str, params: dict) -> dict:
    response = stack.submit(graph_id, algorithm, params, backend="cpu")
    assert response.status_code == 202, response.text
    job = stack.wait_job(response.json()["id"])
    assert job["status"] == "succeeded", job
    return job


@pytest.fixture(scope="module")
def les_mis(stack: Stack) -> tuple[nx.Graph, str, str]:
    """Les Miserables uploaded by one client, bfs from Valjean submitted by another (ids only:
    nothing of the first client's state)."""
    G = nx.les_miserables_graph()  # noqa: N806
    with Client(stack.base_url, timeout=60) as first:
        graph = first.upload_networkx(G, name="les-mis")
    assert graph.labelled and graph.labels is None and graph.n == G.number_of_nodes()
    with Client(stack.base_url, timeout=60) as second:
        job = second.run(graph.id, "bfs", backend="cpu", source="Valjean").wait(
            timeout=60, progress=False)
    return G, graph.id, job.id


def check_parents(G: nx.Graph, parent: dict, level: dict | None = None) -> None:  # noqa: N803
    """A bfs tree from Valjean (its own parent): each other parent a neighbour one level
    closer (NetworkX's levels)."""
    hops = nx.single_source_shortest_path_length(G, "Valjean")
    assert set(parent) == set(G) and parent["Valjean"] == "Valjean"
    for node, up in parent.items():
        if node != "Valjean":
            assert up in G[node] and hops[up] == hops[node] - 1, (node, up)
    if level is not None:
        assert level == hops


def test_a_fresh_client_speaks_labels(stack: Stack, les_mis) -> None:
    G, _, job_id = les_mis  # noqa: N806
    with Client(stack.base_url, timeout=60) as gg:
        job = gg.job(job_id)
        parent = job.node_values("parent")
        assert isinstance(parent["Javert"], str)
        check_parents(G, parent, job.node_values("level"))
        frame = job.to_pandas().set_index("node_id")
        assert frame.loc["Javert", "parent"] == parent["Javert"]
        assert frame.loc["Valjean", "level"] == 0
        copy = job.to_networkx(G.copy())
        assert copy.nodes["Javert"]["parent"] == parent["Javert"]
        result = job.result()
        assert result.node_values["parent"] == parent
        assert result.node_values["level"]["Valjean"] == 0


def test_every_format_names_nodes_by_label(stack: Stack, les_mis) -> None:
    G, graph_id, job_id = les_mis  # noqa: N806
    url = f"/v1/jobs/{job_id}/result"
    raw = stack.http.get(url).json()
    assert raw["labelled"] and raw["node_values"]["parent"]["Javert"] in G["Javert"]
    check_parents(G, raw["node_values"]["parent"], raw["node_values"]["level"])

    rows = list(csv.DictReader(io.StringIO(stack.http.get(url, params={"format": "csv"}).text)))
    check_parents(G, {r["node_id"]: r["parent"] or None for r in rows})

    table = pq.read_table(io.BytesIO(stack.http.get(url, params={"format": "parquet"}).content))
    columns = table.to_pydict()
    check_parents(G, dict(zip(columns["node_id"], columns["parent"], strict=True)))

    # npy stays numeric: ids index the graph's labels.
    labels = stack.http.get(f"/v1/graphs/{graph_id}/labels").json()
    with Client(stack.base_url) as gg:
        ids = gg.job(job_id).array("node_id")
    assert sorted(labels[i] for i in ids) == sorted(G)


def test_text_edge_list_of_names(stack: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    text = f"# who knows whom\nalice-{tag} bob\nbob carol\ncarol, 12\ndave erin\n"
    meta = stack.upload(text)  # as `graphgpu upload` or curl sends it
    assert meta["labelled"] and (meta["n"], meta["m"]) == (6, 4)
    job = finished(stack, meta["id"], "bfs", {"source": f"alice-{tag}"})
    assert job["params"]["source"] == f"alice-{tag}"  # as given, though the worker got an id
    values = stack.http.get(job["result_url"]).json()["node_values"]
    assert values["level"] == {f"alice-{tag}": 0, "bob": 1, "carol": 2, "12": 3, "dave": -1,
                               "erin": -1}
    assert values["parent"] == {f"alice-{tag}": f"alice-{tag}", "bob": f"alice-{tag}",
                                "carol": "bob",
                                "12": "carol", "dave": None, "erin": None}
    members = stack.http.get(finished(stack, meta["id"], "mis", {})["result_url"]).json()
    chosen = members["arrays"]["members"]
    assert chosen and set(chosen) <= {f"alice-{tag}", "bob", "carol", "12", "dave", "erin"}

    bad = stack.submit(meta["id"], "bfs", {"source": 12})  # the label is the string "12"
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "unknown_node"
    assert bad.json()["error"]["field"] == "params.source"
    again = stack.upload(text.replace("bob", "bobby"))
    assert again["id"] != meta["id"]  # same edges, other names: another graph


def test_node_parameters_and_rows_take_labels(stack: Stack) -> None:
    meta = stack.upload('{"edges": [["x", "y"], ["y", 3], [3, "w"]]}', format="json")
    apsp = finished(stack, meta["id"], "apsp", {})
    rows = stack.http.get(apsp["result_url"], params={"rows": "x,w"}).json()
    assert rows["x"] == {"x": 0, "y": 1, "3": 2, "w": 3} and rows["w"]["x"] == 3
    job = finished(stack, meta["id"], "jaccard", {"pairs": [["x", 3], ["y", "w"]]})
    arrays = stack.http.get(job["result_url"]).json()["arrays"]
    assert list(zip(arrays["u"], arrays["v"], strict=True)) == [("x", 3), ("y", "w")]
    rank = finished(stack, meta["id"], "pagerank", {"personalization": {"x": 1.0}})
    assert max(stack.http.get(rank["result_url"]).json()["node_values"]["pagerank"].items(),
               key=lambda kv: kv[1])[0] in ("x", "y")
    bad = stack.submit(meta["id"], "pagerank", {"personalization": {"nobody": 1.0}})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "params.personalization"
    with Client(stack.base_url) as gg:
        parent = gg.run(meta["id"], "bfs", source=3).wait(timeout=60, progress=False
                                                          ).node_values("parent")
    assert parent == {3: 3, "y": 3, "w": 3, "x": "y"}


def test_integer_graphs_are_unchanged(stack: Stack) -> None:
    base = uuid.uuid4().int % 10**6
    meta = stack.upload(f"{base} {base + 1}\n{base + 1} {base + 2}\n")
    assert not meta["labelled"]
    job = finished(stack, meta["id"], "bfs", {"source": base})
    values = stack.http.get(job["result_url"]).json()
    assert not values["labelled"]
    assert values["node_values"]["parent"] == {str(base): base, str(base + 1): base,
                                               str(base + 2): base + 1}
    text = stack.http.get(job["result_url"], params={"format": "csv"}).text
    assert text.splitlines()[1] == f"{base},0,{base}"
    missing = stack.http.get(f"/v1/graphs/{meta['id']}/labels")
    assert missing.status_code == 409 and missing.json()["error"]["code"] == "no_labels"
    with Client(stack.base_url) as gg:
        assert gg.job(job["id"]).node_values("parent")[base + 2] == base + 1


def test_cli_uploads_and_runs_on_names(stack: Stack, tmp_path, capsys) -> None:
    tag = uuid.uuid4().hex[:6]
    path = tmp_path / "people.txt"
    path.write_text(f"alice-{tag} bob\nbob carol\n")
    assert main(["--url", stack.base_url, "upload", str(path)]) == 0
    graph = json.loads(capsys.readouterr().out)
    assert graph["labelled"] and graph["n"] == 3
    assert main(["--url", stack.base_url, "run", "bfs", "--graph", graph["id"], "-p",
                 "source=bob", "--wait", "--no-progress"]) == 0
    job_id = json.loads(capsys.readouterr().out)["job_id"]
    assert main(["--url", stack.base_url, "result", job_id, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["node_id"]: (int(r["level"]), r["parent"]) for r in rows} == {
        f"alice-{tag}": (1, "bob"), "bob": (0, "bob"), "carol": (1, "bob")}


def test_result_of_a_deleted_labelled_graph_says_so(stack: Stack) -> None:
    meta = stack.upload(f"solo-{uuid.uuid4().hex[:6]} other\n")
    job = finished(stack, meta["id"], "bfs", {"source": "other"})
    assert stack.http.delete(f"/v1/graphs/{meta['id']}").status_code == 204
    gone = stack.http.get(job["result_url"], params={"format": "csv"})
    assert gone.status_code == 409 and gone.json()["error"]["code"] == "labels_deleted"
    assert stack.http.get(job["result_url"], params={"format": "npy"}).status_code == 200


# A star around "hub" plus a tail: bfs and sssp from "tail", betweenness peaks at "hub".
STAR = "hub a\nhub b\nhub c\nhub tail\n"
SUMMARY_NODES = [("bfs", {"source": "tail"}, "source", "tail"),
                 ("sssp", {"source": "tail"}, "source", "tail"),
                 ("betweenness_centrality", {}, "top_node", "hub")]


def test_every_summary_node_field_is_marked() -> None:
    """Each result-model field that holds an original node id is marked NODE_ID_VALUE (what
    the API renders as a label), and these are all of them."""
    marked = {(a.name, key) for a in algorithms().values()
              for key in node_id_summary_fields(a.result_model)}
    described = {(a.name, key) for a in algorithms().values()
                 for key, info in a.result_model.model_fields.items()
                 if (info.description or "").lower().startswith("original id")}
    assert marked == described == {(a, f) for a, _, f, _ in SUMMARY_NODES}


@pytest.mark.parametrize(("algorithm", "params", "field", "label"), SUMMARY_NODES)
def test_summary_node_fields_speak_labels(stack: Stack, algorithm, params, field,
                                          label) -> None:
    meta = stack.upload(STAR + f"tail end-{uuid.uuid4().hex[:6]}\n")
    job = finished(stack, meta["id"], algorithm, params)
    for query in ({}, {"fields": "summary"}):
        body = stack.http.get(job["result_url"], params=query).json()
        assert body["labelled"] and body["summary"][field] == label, body["summary"]
    with Client(stack.base_url) as gg:  # a fresh client: nothing but the job id
        assert gg.job(job["id"]).result(fields="summary").summary[field] == label


@pytest.mark.parametrize(("algorithm", "params", "field", "label"), SUMMARY_NODES)
def test_summary_node_fields_of_integer_graphs_are_ids(stack: Stack, algorithm, params, field,
                                                       label) -> None:
    base = uuid.uuid4().int % 10**6
    names = {"hub": base, "a": base + 1, "b": base + 2, "c": base + 3, "tail": base + 4}
    text = "".join(f"{names[u]} {names[v]}\n" for u, v in
                   (line.split() for line in STAR.splitlines()))
    meta = stack.upload(text)
    job = finished(stack, meta["id"], algorithm,
                    {k: names[v] for k, v in params.items()})
    summary = stack.http.get(job["result_url"]).json()["summary"]
    assert summary[field] == names[label] and isinstance(summary[field], int)


def test_cli_prints_summary_labels(stack: Stack, capsys) -> None:
    meta = stack.upload(STAR + f"tail cli-{uuid.uuid4().hex[:6]}\n")
    assert main(["--url", stack.base_url, "run", "bfs", "--graph", meta["id"], "-p",
                 "source=tail", "--wait", "--no-progress"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["summary"]["source"] == "tail"
    assert main(["--url", stack.base_url, "result", printed["job_id"]]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["source"] == "tail"

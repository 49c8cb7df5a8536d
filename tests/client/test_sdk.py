"""The Python SDK against the live stack (API over HTTP, Redis, a CPU worker)."""

from __future__ import annotations

import json
import uuid

import httpx
import networkx as nx
import numpy as np
import pytest

from graphgpu.client import (
    Client,
    ConflictError,
    GraphGPUError,
    JobCanceled,
    JobFailed,
    NotFoundError,
    ServiceUnavailable,
    ValidationError,
)
from graphgpu.service.redis_server import free_port
from tests.conftest import wait_until


@pytest.fixture(scope="module")
def client(stack):
    with Client(stack.base_url, timeout=30) as gg:
        yield gg


def unique_path_text(length: int = 5) -> tuple[str, int]:
    """An edge list no other test uploads (a path at a random offset), and its first node."""
    base = uuid.uuid4().int % 10**9
    return "".join(f"{base + i} {base + i + 1}\n" for i in range(length)), base


def running(client: Client, job_id: str) -> bool:
    return client.job(job_id).status == "running"


def test_upload_path_then_bytes_is_deduplicated(client, tmp_path):
    text, _ = unique_path_text()
    path = tmp_path / "path.txt"
    path.write_text("# a comment\n" + text + text.splitlines()[0] + "\n")  # one duplicate edge
    first = client.upload(path)
    assert first.created is True
    assert (first.n, first.m, first.weighted) == (6, 5, False)
    assert first.name == "path.txt"  # the file name is the default name
    assert first.normalization == {"edges_read": 6, "self_loops_dropped": 0,
                                   "duplicates_merged": 1}
    again = client.upload(text.encode(), format="edgelist")
    assert again.created is False and again.id == first.id
    assert client.graph(first.id).n == 6
    assert first.id in {g.id for g in client.graphs()}


def test_upload_networkx_keeps_isolated_nodes_and_weights(client):
    nxg = nx.Graph()
    offset = uuid.uuid4().int % 10**9
    nxg.add_weighted_edges_from([(offset, offset + 1, 0.5), (offset + 1, offset + 2, 2.0)])
    nxg.add_node(offset + 10)  # isolated
    graph = client.upload_networkx(nxg, name="nx")
    assert (graph.n, graph.m, graph.weighted, graph.isolated_nodes) == (4, 2, True, 1)
    assert graph.created and graph.name == "nx"
    assert client.upload_networkx(nxg).created is False

    # Strings and numbers are labels the service keeps; other labels are numbered in node
    # order and kept on the returned graph.
    for G in (nx.Graph([("a", "b")]), nx.Graph([(-1, 2)])):  # noqa: N806
        labelled = client.upload_networkx(G)
        assert labelled.labelled and labelled.labels is None
    assert client.upload_networkx(nx.Graph([((0, 1), (1, 0))])).labels == ((0, 1), (1, 0))
    assert graph.labels is None and not graph.labelled


def test_summary_nodes_by_labels_the_client_keeps(client):
    """Labels the service cannot keep (frozensets) name the summary's node fields too."""
    a, b, c = (frozenset({uuid.uuid4().hex, i}) for i in range(3))
    graph = client.upload_networkx(nx.Graph([(a, b), (b, c)]))
    assert graph.labels is not None
    job = client.run(graph, "bfs", source=c).wait(timeout=60)
    assert job.result().summary["source"] == c
    assert job.result(fields="summary").summary["reached"] == 3
    top = client.run(graph, "betweenness_centrality").wait(timeout=60).result()
    assert top.summary["top_node"] == b


def test_upload_edges_from_numpy(client):
    rng = np.random.default_rng(uuid.uuid4().int % 2**32)
    src = rng.integers(0, 10**12, 1000)
    dst = src + rng.integers(1, 1000, 1000)  # no self-loops
    graph = client.upload_edges(src, dst, name="np")
    pairs = zip(src.tolist(), dst.tolist(), strict=True)
    expected_m = len({(min(a, b), max(a, b)) for a, b in pairs})
    assert graph.created and graph.m == expected_m
    assert graph.n == len(set(src.tolist()) | set(dst.tolist()))
    assert client.upload_edges(src, dst).created is False

    weighted = client.upload_edges(np.array([0, 1]), np.array([1, 2]), weights=[0.25, 3.0])
    assert weighted.weighted and weighted.m == 2
    with pytest.raises(ValueError, match="differ in length"):
        client.upload_edges([0, 1], [1])
    with pytest.raises(ValueError, match="negative"):
        client.upload_edges([0, -1], [1, 2])
    with pytest.raises(ValueError, match="integer"):
        client.upload_edges([0.5], [1.0])


def test_generate_then_bfs_agrees_with_networkx(client):
    rows, cols = 7, 13
    graph = client.generate("grid", rows=rows, cols=cols, name="grid")
    assert (graph.n, graph.m) == (rows * cols, rows * (cols - 1) + cols * (rows - 1))

    job = client.run(graph.id, "bfs", source=5).wait(timeout=60)
    assert job.status == "succeeded" and job.backend == "cpu"
    assert job.timings["total_ms"] is not None

    nxg = nx.relabel_nodes(nx.grid_2d_graph(rows, cols), lambda rc: rc[0] * cols + rc[1])
    expected = nx.single_source_shortest_path_length(nxg, 5)

    result = job.result()
    assert result.summary.items() >= {"source": 5, "reached": rows * cols,
                                      "max_level": max(expected.values())}.items()
    assert result.node_values["level"] == expected
    assert job.node_values("level") == expected
    ids, levels = job.array("node_id"), job.array("level")
    assert dict(zip(ids.tolist(), levels.tolist(), strict=True)) == expected
    lines = job.csv().splitlines()
    assert lines[0] == "node_id,level,parent"
    assert {int(r.split(",")[0]): int(r.split(",")[1]) for r in lines[1:]} == expected


def test_bfs_on_uploaded_networkx_graph(client):
    nxg = nx.gnp_random_graph(300, 0.01, seed=uuid.uuid4().int % 2**32)
    graph = client.upload_networkx(nxg)
    job = client.run(graph, "bfs", source=0).wait(timeout=60)
    levels = job.node_values("level")
    expected = nx.single_source_shortest_path_length(nxg, 0)
    assert {v: lvl for v, lvl in levels.items() if lvl >= 0} == expected
    assert sum(lvl < 0 for lvl in levels.values()) == 300 - len(expected)
    labels = client.run(graph, "connected_components").wait(timeout=60).result()
    assert labels.summary["count"] == nx.number_connected_components(nxg)


def test_typed_errors_carry_the_service_message(client):
    with pytest.raises(NotFoundError) as missing:
        client.graph("no-such-graph")
    assert missing.value.status == 404 and "no-such-graph" in missing.value.message

    with pytest.raises(ValidationError) as bad:
        client.upload(b"0 1\n1 2\n2 x3\n", format="edgelist")
    assert bad.value.status == 400 and bad.value.line == 3
    assert "line 3" in str(bad.value)

    text, base = unique_path_text()
    graph = client.upload(text.encode())
    with pytest.raises(ValidationError) as unknown:
        client.run(graph.id, "bfs", source=base + 100)
    assert unknown.value.field == "params.source" and unknown.value.code == "unknown_node"

    job = client.run(graph.id, "connected_components").wait(timeout=60)
    with pytest.raises(ConflictError) as finished:
        client.cancel(job.id)
    assert finished.value.code == "job_finished" and finished.value.status == 409


def test_cancel_running_job_raises_job_canceled(client):
    text, _ = unique_path_text()
    graph = client.upload(text.encode())
    job = client.run(graph.id, "test_sleep", seconds=30)
    wait_until(lambda: running(client, job.id), timeout=30)
    with pytest.raises(TimeoutError):
        job.wait(timeout=0.3)
    client.cancel(job.id)
    with pytest.raises(JobCanceled) as canceled:
        job.wait(timeout=20)
    assert canceled.value.job.status == "canceled" and job.finished
    with pytest.raises(ConflictError, match="job_not_succeeded|canceled"):
        job.result()


def test_idempotency_key_returns_the_same_job(client):
    text, base = unique_path_text()
    graph = client.upload(text.encode())
    key = uuid.uuid4().hex
    first = client.run(graph.id, "bfs", idempotency_key=key, source=base)
    second = client.run(graph.id, "bfs", idempotency_key=key, source=base)
    assert second.id == first.id
    other = client.run(graph.id, "bfs", source=base)
    assert other.id != first.id
    with pytest.raises(ValidationError):
        client.run(graph.id, "bfs", idempotency_key=key, source=base + 1)
    first.wait(timeout=60)
    other.wait(timeout=60)


def test_listings(client):
    names = {a["name"] for a in client.algorithms()}
    assert {"bfs", "connected_components", "test_sleep"} <= names
    assert {"barabasi_albert", "watts_strogatz", "erdos_renyi", "rmat", "grid"} <= {
        g["name"] for g in client.generators()}
    assert client.workers() and client.workers()[0]["backend"] == "cpu"
    assert all(job.finished for job in client.jobs(status="succeeded"))


def test_unreachable_service_names_the_url():
    url = f"http://127.0.0.1:{free_port()}"
    with Client(url) as gg, pytest.raises(ServiceUnavailable) as down:
        gg.graphs()
    assert url in str(down.value) and "is the service running" in str(down.value)


def test_failed_job_and_progress_bar_offline(capsys):
    """A MockTransport plays a job that runs once, then fails; the forced bar draws."""
    states = iter(["running", "failed"])

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/graphs/g1":
            return httpx.Response(404, json={"error": {"code": "not_found", "message": "gone"}})
        status = next(states)
        body = {"id": "j1", "kind": "algorithm", "algorithm": "bfs", "graph_id": "g1",
                "params": {}, "backend_requested": "auto", "status": status,
                "progress": {"fraction": 0.5, "message": "half way"}, "created_at": 0.0,
                "timings": {}, "error": {"code": "oom", "message": "out of memory"}
                if status == "failed" else None}
        headers = {"Retry-After": "0.01"} if status == "running" else {}
        return httpx.Response(200, json=body, headers=headers)

    with Client("http://svc", transport=httpx.MockTransport(handler)) as gg:
        job = gg.job("j1")
        with pytest.raises(JobFailed) as failed:
            job.wait(poll=0.01, progress="always")
        assert (failed.value.code, failed.value.message) == ("oom", "out of memory")
        with pytest.raises(GraphGPUError) as gone:
            gg.graph("g1")
    assert isinstance(gone.value, NotFoundError)
    assert "half way" in capsys.readouterr().err
    assert json.loads(json.dumps(job.to_dict()))["status"] == "failed"

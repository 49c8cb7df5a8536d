"""What a newcomer meets: summaries of results too large for JSON, long-polls, offline docs,
labelled NetworkX graphs, results as DataFrames, CSV and Parquet, ``--version``."""

from __future__ import annotations

import io
import json
import re
import threading
import time
import uuid

import httpx
import networkx as nx
import pytest

from graphgpu.client import Client, NotFoundError
from graphgpu.client.cli import main
from tests.conftest import Stack, wait_until


@pytest.fixture(scope="module")
def client(stack):
    with Client(stack.base_url, timeout=30) as gg:
        yield gg


@pytest.fixture(scope="module")
def small_json(stack):
    """A second API on the shared stack's Redis keys and data (so its worker serves it) that
    serves JSON results of at most 20 values: a 7 x 7 matrix is then too large."""
    api = Stack(stack.redis_url, stack.data_dir, max_json_result_nodes="20")
    api.prefix = api.env["GRAPHGPU_REDIS_PREFIX"] = stack.prefix
    api.start_api()
    yield api
    api.stop()


def unique_graph() -> tuple[str, int]:
    """Two components: a 5-node path and an edge, offset so no other test uploads them."""
    base = uuid.uuid4().int % 10**9
    edges = [(base + i, base + i + 1) for i in range(4)] + [(base + 10, base + 11)]
    return "".join(f"{u} {v}\n" for u, v in edges), base


def test_summary_of_a_result_too_large_for_json(small_json, capsys):
    text, base = unique_graph()
    with Client(small_json.base_url, timeout=30) as gg:
        graph = gg.upload(text.encode())
        job = gg.run(graph.id, "apsp").wait(timeout=60)
        whole = small_json.http.get(f"/v1/jobs/{job.id}/result")
        assert whole.status_code == 413 and whole.json()["error"]["code"] == "result_too_large"

        result = job.result()  # a succeeded job does not raise for its size
        assert result.complete is False and result.arrays == {} and result.node_values == {}
        assert result.summary["reachable_pairs"] == 5 * 4 + 2
        assert result.available == {"node_values": [], "arrays": ["distance"]}
        assert job.array("distance").shape == (7, 7)

        summary = small_json.http.get(f"/v1/jobs/{job.id}/result", params={"fields": "summary"})
        assert summary.status_code == 200 and summary.json()["summary"] == result.summary

        csv_rows = job.csv().splitlines()  # the matrix, row by row, unreachable left empty
        ids = [base + i for i in (0, 1, 2, 3, 4, 10, 11)]
        assert csv_rows[0] == ",".join(["node_id", *map(str, ids)])
        assert csv_rows[1].split(",") == [str(base), "0", "1", "2", "3", "4", "", ""]

    capsys.readouterr()
    code = main(["--url", small_json.base_url, "run", "apsp", "--graph", graph.id, "--wait",
                 "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "succeeded" and out["job_id"]
    assert out["summary"]["reachable_pairs"] == 22
    assert out["fetch"] == [f"graphgpu result {out['job_id']} --format npy --field distance "
                            "-o distance.npy"]


def test_csv_of_a_count_job_gives_the_counts(client):
    text, _ = unique_graph()
    graph = client.upload(text.encode())
    job = client.run(graph.id, "count_connected_subgraphs", k=3, k_max=True).wait(timeout=120)
    rows = dict(line.split(",", 1) for line in job.csv().splitlines())
    summary = job.result().summary
    assert rows["name"] == "value" and rows["count"] == str(summary["count"]) == "3"
    # Sizes 1..3: 7 nodes, 5 edges, 3 connected triples (all on the 5-node path).
    assert [rows[f"counts.{i}"] for i in range(3)] == ["7", "5", "3"]


def test_long_poll_answers_when_the_job_ends_and_at_the_timeout(client, stack):
    text, _ = unique_graph()
    graph = client.upload(text.encode())
    running = client.run(graph.id, "test_sleep", seconds=60)
    wait_until(lambda: client.job(running.id).status == "running", timeout=30)

    started = time.monotonic()
    answer = stack.http.get(f"/v1/jobs/{running.id}", params={"wait": 1.5})
    held = time.monotonic() - started
    assert answer.json()["status"] == "running" and 1.0 <= held < 10  # held until the timeout

    # A long-poll in flight answers once the job ends, long before its 30 s: a queued job
    # canceled by the API, then a running one canceled through its worker.
    queued = client.run(graph.id, "test_sleep", seconds=1)  # the one worker is busy
    assert client.job(queued.id).status == "queued"
    for job_id in (queued.id, running.id):
        seen: dict[str, object] = {}

        def poll(job_id: str = job_id, seen: dict[str, object] = seen) -> None:
            t0 = time.monotonic()
            # Above the 30 s maximum: waits the maximum (issue 27), ends with the job.
            seen["status"] = stack.http.get(f"/v1/jobs/{job_id}", params={"wait": 300},
                                            timeout=60).json()["status"]
            seen["seconds"] = time.monotonic() - t0

        waiter = threading.Thread(target=poll)
        waiter.start()
        time.sleep(0.5)
        client.cancel(job_id)
        waiter.join(60)
        assert seen["status"] == "canceled" and seen["seconds"] < 20

    short = client.run(graph.id, "test_sleep", seconds=1)
    started = time.monotonic()
    done = stack.http.get(f"/v1/jobs/{short.id}", params={"wait": 30}, timeout=60).json()
    assert done["status"] == "succeeded" and time.monotonic() - started < 20
    # Already finished: answers at once, whatever the wait.
    again = stack.http.get(f"/v1/jobs/{short.id}", params={"wait": 30})
    assert again.json()["status"] == "succeeded"


class CountingTransport(httpx.HTTPTransport):
    """Records the URL of every request sent through it."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        return super().handle_request(request)


def test_sdk_wait_long_polls_instead_of_polling(stack):
    """A job of 2 s is waited for with a handful of requests, not one per 0.1 s."""
    text, _ = unique_graph()
    transport = CountingTransport()
    with Client(stack.base_url, timeout=30, transport=transport) as gg:
        job = gg.run(gg.upload(text.encode()), "test_sleep", seconds=2)
        sent = len(transport.urls)
        job.wait(timeout=60, progress=False)
    polls = transport.urls[sent:]
    assert job.status == "succeeded"
    assert 1 <= len(polls) <= 3 and all("wait=" in url for url in polls), polls


def test_docs_and_redoc_load_nothing_from_other_hosts(stack):
    for page in ("/docs", "/redoc"):
        html = stack.http.get(page)
        assert html.status_code == 200
        links = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html.text)
        links += re.findall(r"""(?:url|openapi_url)\s*:\s*["']([^"']+)["']""", html.text)
        assert links, html.text
        assert not re.search(r"https?://", html.text), page
        for link in links:
            assert link.startswith("/"), link
            assert stack.http.get(link).status_code == 200, link


def test_networkx_labels_round_trip(client):
    tag = uuid.uuid4().hex[:8]
    G = nx.Graph([(f"alice-{tag}", "bob"), ("bob", "carol"), ("dave", "erin")])  # noqa: N806
    G.add_node(("a", "tuple"))  # any hashable label, isolated
    graph = client.upload_networkx(G, name="labels")
    assert (graph.n, graph.m) == (6, 3) and graph.labels == tuple(G.nodes)

    job = client.run(graph, "bfs", source=f"alice-{tag}").wait(timeout=60)
    level = job.node_values("level")
    assert level[f"alice-{tag}"] == 0 and level["bob"] == 1 and level["carol"] == 2
    assert set(level) == set(G.nodes)
    assert job.result().node_values["level"] == level
    parent = job.result().node_values["parent"]  # node ids come back as labels too
    assert parent["bob"] == f"alice-{tag}" and parent["carol"] == "bob"

    components = client.run(graph, "connected_components").wait(timeout=60)
    frame = components.to_pandas()
    assert list(frame.columns[:1]) == ["node_id"] and set(frame["node_id"]) == set(G.nodes)
    assert frame.set_index("node_id").loc["carol", "label"] == frame.set_index(
        "node_id").loc["bob", "label"]
    components.to_networkx(G)
    assert G.nodes["bob"]["label"] == G.nodes["carol"]["label"] != G.nodes["dave"]["label"]

    with pytest.raises(ValueError, match="not in the graph"):
        client.run(graph, "bfs", source="nobody")

    rows = client.run(graph, "apsp").wait(timeout=60).rows(["bob"])
    assert rows == {"bob": {f"alice-{tag}": 1, "bob": 0, "carol": 1, "dave": None,
                            "erin": None, ("a", "tuple"): None}}


def test_to_pandas_parquet_and_networkx_by_original_id(client):
    import pandas as pd

    text, base = unique_graph()
    graph = client.upload(text.encode())
    job = client.run(graph.id, "bfs", source=base).wait(timeout=60)
    frame = job.to_pandas()
    assert list(frame.columns) == ["node_id", *job.available()["node_values"]]
    assert dict(zip(frame["node_id"], frame["level"], strict=True)) == job.node_values("level")

    parquet = client.request("GET", f"/v1/jobs/{job.id}/result", params={"format": "parquet"})
    assert pd.read_parquet(io.BytesIO(parquet.content)).equals(frame)

    G = nx.path_graph(range(base, base + 5))  # noqa: N806
    job.to_networkx(G, fields=["level"])
    assert [G.nodes[base + i]["level"] for i in range(5)] == [0, 1, 2, 3, 4]


def test_download_edges_as_numpy_and_networkx(client):
    tag = uuid.uuid4().hex[:8]
    G = nx.Graph()  # noqa: N806
    G.add_weighted_edges_from([(f"x-{tag}", "y", 0.5), ("y", "z", 2.0)])
    G.add_node("lonely")
    graph = client.upload_networkx(G)
    back = client.download(graph, as_="networkx")
    assert set(back.nodes) == set(G.nodes)
    assert {frozenset(e): w for *e, w in back.edges(data="weight")} == {
        frozenset(e): w for *e, w in G.edges(data="weight")}

    text, base = unique_graph()
    plain = client.upload(text.encode())
    arrays = client.download(plain.id)
    assert sorted(zip(arrays["src"].tolist(), arrays["dst"].tolist(), strict=True)) == [
        tuple(map(int, line.split())) for line in text.splitlines()]
    assert "weight" not in arrays and arrays["nodes"].size == 7


def test_run_wait_names_the_job_when_it_does_not_succeed(client, stack, capsys):
    text, _ = unique_graph()
    graph = client.upload(text.encode())
    capsys.readouterr()
    code = main(["--url", stack.base_url, "run", "test_sleep", "--graph", graph.id,
                 "-p", "seconds=60", "--wait", "--timeout", "1", "--no-progress"])
    err = capsys.readouterr().err
    job_id = re.search(r"job ([0-9a-f]{32}) goes on", err).group(1)
    assert code == 1 and "timeout" in err
    client.cancel(job_id)


def test_version_flag(capsys):
    assert main(["--version"]) == 0
    assert re.fullmatch(r"graphgpu \S+\n", capsys.readouterr().out)


def test_client_request_is_public_and_typed(client):
    assert client.request("GET", "/v1/health").json()["status"] == "ok"
    with pytest.raises(NotFoundError):
        client.request("GET", f"/v1/jobs/{uuid.uuid4().hex}")

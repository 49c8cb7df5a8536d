"""apsp through the real API, Redis and a CPU worker: matrix downloads, row slices, size limits."""

from __future__ import annotations

import io

import networkx as nx
import numpy as np

from graphgpu.client import Client
from tests.conftest import Stack

# Two components (10-20-30-40 with 50 on 20; 60-70) and weights on every edge.
WEIGHTED = "10 20 1.5\n20 30 2\n30 40 0.5\n20 50 4\n60 70 3\n"
IDS = [10, 20, 30, 40, 50, 60, 70]


def expected(weighted: bool) -> dict[int, dict[int, float | None]]:
    g = nx.parse_edgelist(WEIGHTED.splitlines(), nodetype=int, data=[("weight", float)])
    lengths = dict(nx.all_pairs_dijkstra_path_length(g) if weighted
                   else nx.all_pairs_shortest_path_length(g))
    return {s: {t: lengths[s].get(t) for t in IDS} for s in IDS}


def as_ints(rows: dict[str, dict[str, float | None]]) -> dict[int, dict[int, float | None]]:
    return {int(s): {int(t): v for t, v in row.items()} for s, row in rows.items()}


def finished(stack: Stack, graph_id: str, params: dict) -> str:
    response = stack.submit(graph_id, "apsp", params)
    assert response.status_code == 202, response.text
    job = stack.wait_job(response.json()["id"])
    assert job["status"] == "succeeded", job
    return job["result_url"]


def test_apsp_matrix_json_npy_and_rows(stack: Stack) -> None:
    graph = stack.upload(WEIGHTED, name="apsp")
    for weighted, dtype in ((False, "int32"), (True, "float32")):
        url = finished(stack, graph["id"], {"weighted": weighted, "dtype": "float32"})
        truth = expected(weighted)
        whole = stack.http.get(url).json()
        assert whole["summary"]["dtype"] == dtype and whole["summary"]["reachable_pairs"] == 22
        matrix = whole["arrays"]["distance"]  # rows and columns in ascending original id
        assert {s: dict(zip(IDS, row, strict=True)) for s, row in zip(IDS, matrix,
                                                                      strict=True)} == truth
        npy = stack.http.get(url, params={"format": "npy", "field": "distance"})
        assert npy.status_code == 200
        array = np.load(io.BytesIO(npy.content))
        assert array.dtype == np.dtype(dtype) and array.shape == (7, 7)
        rows = stack.http.get(url, params={"rows": "60,20"})
        assert rows.status_code == 200
        assert as_ints(rows.json()) == {60: truth[60], 20: truth[20]}
        assert stack.http.get(url, params={"sources": "60,20"}).json() == rows.json()

    unknown = stack.http.get(url, params={"rows": "20,99"})
    assert unknown.status_code == 422 and unknown.json()["error"]["field"] == "rows"
    malformed = stack.http.get(url, params={"sources": "20,x"})
    assert malformed.status_code == 422 and malformed.json()["error"]["field"] == "sources"
    not_matrix = stack.http.get(url, params={"rows": "20", "field": "node_id"})
    assert not_matrix.status_code == 422 and not_matrix.json()["error"]["field"] == "field"


def test_apsp_size_limits(make_stack) -> None:
    # A 7 x 7 float64 matrix is 392 bytes (+ 56 of node ids): refused before it is queued.
    private = make_stack(workers=1, max_result_bytes="400", max_json_result_nodes="20")
    graph = private.upload(WEIGHTED)
    refused = private.submit(graph["id"], "apsp", {"weighted": True})
    assert refused.status_code == 413
    error = refused.json()["error"]
    assert error["code"] == "result_too_large" and error["field"] == "params"
    assert error["estimate"]["result_bytes"] == 7 * 7 * 8 + 7 * 8
    assert "GRAPHGPU_MAX_RESULT_BYTES" in error["message"]
    assert private.http.get("/v1/jobs").json()["jobs"] == []  # nothing was queued

    # Hop counts fit (196 + 56 bytes), but 49 values are over 20 for JSON: rows= still works.
    url = finished(private, graph["id"], {"weighted": False})
    whole = private.http.get(url)
    assert whole.status_code == 413 and "rows=" in whole.json()["error"]["message"]
    assert private.http.get(url, params={"rows": "10,20"}).status_code == 200
    too_many = private.http.get(url, params={"rows": "10,20,30"})
    assert too_many.status_code == 413 and too_many.json()["error"]["field"] == "rows"
    with Client(private.base_url) as sdk:  # the SDK's slice
        assert sdk.job(url.split("/")[-2]).rows([70]) == {70: expected(False)[70]}

"""Counting jobs through the real API, Redis and a CPU worker: exact big integers in the JSON
result, and too-large jobs refused before queueing with their estimate."""

from __future__ import annotations

import math

import networkx as nx

from tests.conftest import Stack


def edgelist(g: nx.Graph) -> str:
    return "".join(f"{u} {v}\n" for u, v in g.edges())


def test_counts_are_exact_json_integers(stack: Stack) -> None:
    n = 150_000  # independent 4-sets of a path: C(n - 3, 4) > 2**64
    graph = stack.upload(edgelist(nx.path_graph(n)), name="long-path")
    job = stack.submit(graph["id"], "count_independent_sets", {"k": 4, "k_max": True}).json()
    assert job["estimate"]["backend"] == "cpu" and job["estimate"]["seconds"] > 0
    done = stack.wait_job(job["id"])
    assert done["status"] == "succeeded", done
    summary = stack.http.get(done["result_url"]).json()["summary"]
    expected = [math.comb(n - k + 1, k) for k in range(1, 5)]
    assert summary["counts"] == expected and summary["count"] == expected[-1] > 2**64
    assert summary["method"] == "local"


def test_cliques_and_connected_sets_job(stack: Stack) -> None:
    g = nx.complete_graph(7)
    graph = stack.upload(edgelist(g), name="k7")
    for algorithm in ("count_cliques", "count_connected_subgraphs"):
        job = stack.submit(graph["id"], algorithm, {"k": 7, "k_max": True}).json()
        done = stack.wait_job(job["id"])
        assert done["status"] == "succeeded", done
        summary = stack.http.get(done["result_url"]).json()["summary"]
        assert summary["counts"] == [math.comb(7, k) for k in range(1, 8)]


def test_too_large_jobs_are_refused_with_the_estimate(stack: Stack) -> None:
    g = nx.powerlaw_cluster_graph(3000, 8, 0.3, seed=1)
    graph = stack.upload(edgelist(g), name="plc")
    before = {j["id"] for j in stack.http.get("/v1/jobs").json()["jobs"]}
    # GRAPHGPU_MAX_JOB_SECONDS is the default hour; connected 16-sets of this graph take ages.
    response = stack.submit(graph["id"], "count_connected_subgraphs", {"k": 16})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "job_too_long" and error["field"] == "params"
    assert error["estimate"]["seconds"] > 3600 and "search nodes" in error["estimate"]["detail"]
    assert {j["id"] for j in stack.http.get("/v1/jobs").json()["jobs"]} == before  # none queued
    # Independent sets of size 5 on 3,000 nodes: no regime applies, refused naming k.
    refused = stack.submit(graph["id"], "count_independent_sets", {"k": 5})
    assert refused.status_code == 422 and refused.json()["error"]["field"] == "params.k"
    # A small k on the same graph fits and runs.
    fits = stack.submit(graph["id"], "count_connected_subgraphs", {"k": 3}).json()
    assert fits["estimate"]["seconds"] < 1
    done = stack.wait_job(fits["id"])
    assert done["status"] == "succeeded", done
    summary = stack.http.get(done["result_url"]).json()["summary"]
    wedges = sum(math.comb(d, 2) for _, d in g.degree())
    triangles = sum(nx.triangles(g).values()) // 3
    assert summary["count"] == wedges - 2 * triangles  # connected 3-sets: paths and triangles

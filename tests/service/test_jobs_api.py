"""Job lifecycle through the real API, Redis and RQ workers."""

from __future__ import annotations

import io
import os
import signal

import networkx as nx
import numpy as np

from tests.conftest import Stack, wait_until

PATH_WITH_TAIL = "10 20\n20 30\n30 40\n20 50\n60 70\n"


def _graph(stack: Stack) -> dict:
    return stack.upload(PATH_WITH_TAIL, name="path")


def test_bfs_job_lifecycle_and_result_formats(stack: Stack) -> None:
    graph = _graph(stack)
    response = stack.submit(graph["id"], "bfs", {"source": 20})
    assert response.status_code == 202
    job_id = response.json()["id"]
    assert response.headers["location"] == f"/v1/jobs/{job_id}"
    job = stack.wait_job(job_id)
    assert job["status"] == "succeeded", job
    assert job["backend"] == "cpu" and job["device"] and job["worker"]
    assert set(job["timings"]) == {"queued_ms", "load_ms", "compute_ms", "total_ms"}
    assert all(v is not None and v >= 0 for v in job["timings"].values())
    assert job["progress"]["fraction"] == 1.0
    assert "retry-after" not in stack.http.get(f"/v1/jobs/{job_id}").headers

    result = stack.http.get(job["result_url"]).json()
    assert result["summary"].items() >= {"source": 20, "reached": 5, "max_level": 2}.items()
    expected = nx.single_source_shortest_path_length(
        nx.parse_edgelist(PATH_WITH_TAIL.splitlines(), nodetype=int), 20)
    levels = {int(k): v for k, v in result["node_values"]["level"].items()}
    assert levels == {**dict.fromkeys((60, 70), -1), **expected}
    parents = result["node_values"]["parent"]
    assert parents["40"] == 30 and parents["20"] == 20
    # readable many times, in every format
    assert stack.http.get(job["result_url"]).json() == result
    csv = stack.http.get(job["result_url"], params={"format": "csv"}).text.splitlines()
    assert csv[0] == "node_id,level,parent" and "40,2,30" in csv
    npy = stack.http.get(job["result_url"], params={"format": "npy", "field": "level"})
    levels_array = np.load(io.BytesIO(npy.content), allow_pickle=False)
    ids = np.load(io.BytesIO(stack.http.get(job["result_url"], params={
        "format": "npy", "field": "node_id"}).content))
    assert dict(zip(ids.tolist(), levels_array.tolist(), strict=True)) == levels
    bad = stack.http.get(job["result_url"], params={"format": "npy", "field": "nope"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "field"


def test_connected_components_job(stack: Stack) -> None:
    job = stack.wait_job(stack.submit(_graph(stack)["id"], "connected_components").json()["id"])
    result = stack.http.get(job["result_url"]).json()
    assert result["summary"]["count"] == 2
    assert sorted(result["arrays"]["sizes"]) == [2, 5]


def test_submit_validation(stack: Stack) -> None:
    graph = _graph(stack)
    cases = [
        ({"graph_id": graph["id"], "algorithm": "bfs", "params": {}}, 422, "params"),
        ({"graph_id": graph["id"], "algorithm": "bfs", "params": {"source": "x"}}, 422,
         "params.source"),
        ({"graph_id": graph["id"], "algorithm": "bfs", "params": {"source": 999}}, 422,
         "params.source"),
        ({"graph_id": graph["id"], "algorithm": "bfs", "params": {"sources": [10, 999]}}, 422,
         "params.sources"),
        ({"graph_id": graph["id"], "algorithm": "nope"}, 422, "algorithm"),
        ({"graph_id": "0" * 32, "algorithm": "bfs", "params": {"source": 1}}, 404, None),
        ({"graph_id": graph["id"], "algorithm": "bfs", "backend": "tpu"}, 422, "backend"),
    ]
    for body, status, field in cases:
        response = stack.http.post("/v1/jobs", json=body)
        assert response.status_code == status, (body, response.text)
        if field:
            assert response.json()["error"]["field"] == field, response.json()


def test_gpu_backend_without_gpu_worker_is_refused_at_submit(stack: Stack) -> None:
    response = stack.submit(_graph(stack)["id"], "connected_components", backend="gpu")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "no_gpu_worker"


def test_idempotency_key(stack: Stack) -> None:
    graph = _graph(stack)
    headers = {"Idempotency-Key": f"key-{graph['id']}"}
    first = stack.submit(graph["id"], "bfs", {"source": 10}, headers=headers)
    again = stack.submit(graph["id"], "bfs", {"source": 10}, headers=headers)
    other = stack.submit(graph["id"], "bfs", {"source": 20}, headers=headers)
    assert first.status_code == 202 and again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"


def test_cancel_queued_job_never_runs(make_stack) -> None:
    idle = make_stack(workers=0)
    graph = idle.upload(PATH_WITH_TAIL)
    job = idle.submit(graph["id"], "bfs", {"source": 10}).json()
    assert idle.http.get(f"/v1/jobs/{job['id']}").headers["retry-after"] == "1"
    canceled = idle.http.delete(f"/v1/jobs/{job['id']}").json()
    assert canceled["status"] == "canceled"
    follower = idle.submit(graph["id"], "connected_components").json()
    idle.start_worker()
    idle.wait_job(follower["id"])  # the worker drained the queue past the canceled job
    after = idle.http.get(f"/v1/jobs/{job['id']}").json()
    assert after["status"] == "canceled" and after["started_at"] is None
    again = idle.http.delete(f"/v1/jobs/{job['id']}")
    assert again.status_code == 409 and again.json()["error"]["code"] == "job_finished"


def test_cancel_running_job(stack: Stack) -> None:
    job = stack.submit(_graph(stack)["id"], "test_sleep", {"seconds": 60}).json()
    stack.wait_job(job["id"], statuses=("running",))
    assert stack.http.delete(f"/v1/jobs/{job['id']}").status_code == 200
    final = stack.wait_job(job["id"], timeout=10)
    assert final["status"] == "canceled" and final["error"]["code"] == "canceled"
    assert stack.http.get(f"/v1/jobs/{job['id']}/result").status_code == 409


def test_progress_is_reported_while_running(stack: Stack) -> None:
    job = stack.submit(_graph(stack)["id"], "test_sleep", {"seconds": 2}).json()
    running = stack.wait_job(job["id"], statuses=("running",))
    assert running["started_at"] is not None
    seen = wait_until(lambda: stack.http.get(f"/v1/jobs/{job['id']}").json()["progress"]
                      ["fraction"] > 0)
    assert seen
    assert stack.wait_job(job["id"])["status"] == "succeeded"


def test_killed_worker_requeues_its_job(make_stack) -> None:
    private = make_stack(workers=1)
    job = private.submit(private.upload(PATH_WITH_TAIL)["id"], "test_sleep",
                         {"seconds": 60}).json()
    running = private.wait_job(job["id"], statuses=("running",))
    pid = next(w["pid"] for w in private.live_workers() if w["name"] == running["worker"])
    os.kill(pid, signal.SIGKILL)
    # retried once (the second loss fails it: tests/reliability/test_chaos.py)
    again = private.wait_job(job["id"], timeout=30, statuses=("queued",))
    assert running["worker"] in again["progress"]["message"] and again["worker"] is None
    assert private.live_workers() == []


def test_job_time_limit(make_stack) -> None:
    private = make_stack(workers=1, max_job_seconds="1")
    job = private.submit(private.upload(PATH_WITH_TAIL)["id"], "test_sleep",
                         {"seconds": 20}).json()
    final = private.wait_job(job["id"], timeout=30)
    assert final["status"] == "failed" and final["error"]["code"] == "timeout"


def test_estimates_refuse_before_queueing(stack: Stack) -> None:
    graph = _graph(stack)
    before = {j["id"] for j in stack.http.get("/v1/jobs").json()["jobs"]}
    too_long = stack.submit(graph["id"], "test_sleep", {"claimed_seconds": 1e7})
    assert too_long.status_code == 422
    error = too_long.json()["error"]
    assert error["code"] == "job_too_long" and error["field"] == "params"
    assert error["estimate"]["seconds"] == 1e7 and "GRAPHGPU_MAX_JOB_SECONDS" in error["message"]
    too_big = stack.submit(graph["id"], "test_sleep", {"claimed_result_bytes": 2**50})
    assert too_big.status_code == 413
    assert too_big.json()["error"]["code"] == "result_too_large"
    assert too_big.json()["error"]["estimate"]["result_bytes"] == 2**50
    assert {j["id"] for j in stack.http.get("/v1/jobs").json()["jobs"]} == before  # none queued
    fits = stack.submit(graph["id"], "test_sleep", {"claimed_seconds": 2.5}).json()
    assert fits["estimate"]["seconds"] == 2.5 and fits["estimate"]["backend"] == "cpu"
    assert stack.wait_job(fits["id"])["status"] == "succeeded"


def test_listing_and_registry(stack: Stack) -> None:
    algorithms = {a["name"]: a for a in stack.http.get("/v1/algorithms").json()["algorithms"]}
    assert {"bfs", "connected_components"} <= set(algorithms)
    assert algorithms["bfs"]["node_params"] == ["source", "sources"]
    assert "source" in algorithms["bfs"]["params_schema"]["properties"]
    assert algorithms["bfs"]["backends"] == ["cpu", "gpu"]
    generators = {g["name"] for g in stack.http.get("/v1/generators").json()["generators"]}
    assert {"rmat", "grid", "barabasi_albert", "watts_strogatz", "erdos_renyi"} <= generators
    job = stack.submit(_graph(stack)["id"], "connected_components").json()
    stack.wait_job(job["id"])
    listed = stack.http.get("/v1/jobs", params={"status": "succeeded"}).json()["jobs"]
    assert job["id"] in {j["id"] for j in listed}


def test_openapi_operation_ids(stack: Stack) -> None:
    spec = stack.http.get("/openapi.json").json()
    ids = {op["operationId"] for path in spec["paths"].values() for op in path.values()}
    assert {"graphs-upload", "graphs-generate", "jobs-submit", "jobs-get", "jobs-result",
            "jobs-cancel", "algorithms-list"} <= ids
    assert stack.http.get("/docs").status_code == 200


def test_unknown_names_get_a_suggestion(stack: Stack) -> None:
    graph = _graph(stack)
    response = stack.http.post("/v1/jobs", json={"graph_id": graph["id"], "algorithm": "bsf",
                                                 "params": {"source": 10}})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["field"] == "algorithm" and "did you mean 'bfs'" in error["message"]
    response = stack.http.post("/v1/graphs/generate",
                               json={"generator": "erdos_renyl", "params": {}})
    assert response.status_code == 422
    assert "did you mean 'erdos_renyi'" in response.json()["error"]["message"]


def test_a_wait_past_the_maximum_waits_the_maximum(stack: Stack) -> None:
    job = stack.submit(_graph(stack)["id"], "bfs", {"source": 10}).json()
    stack.wait_job(job["id"])
    response = stack.http.get(f"/v1/jobs/{job['id']}", params={"wait": 60})
    assert response.status_code == 200 and response.json()["status"] == "succeeded"
    assert stack.http.get(f"/v1/jobs/{job['id']}", params={"wait": -1}).status_code == 422


def test_a_generator_job_names_its_graph_at_the_top(stack: Stack) -> None:
    response = stack.http.post("/v1/graphs/generate", json={
        "generator": "grid", "params": {"rows": 3, "cols": 4}, "name": "small-grid"})
    assert response.status_code == 202 and response.json()["graph_id"] is None
    job = stack.wait_job(response.json()["id"])
    assert job["status"] == "succeeded" and job["graph_id"]
    summary = stack.http.get(f"/v1/jobs/{job['id']}/result").json()["summary"]
    assert job["graph_id"] == summary["graph_id"]
    assert stack.http.get(f"/v1/graphs/{job['graph_id']}").json()["n"] == 12
    listed = {j["id"]: j for j in stack.http.get("/v1/jobs").json()["jobs"]}
    assert listed[job["id"]]["graph_id"] == job["graph_id"]

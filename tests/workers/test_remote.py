"""Workers on other hosts: only Redis, the API's URL and the worker key, no shared data folder.

The API and Redis run as usual; two workers start as ``graphgpu worker`` with data folders of
their own, each in a mount namespace (``unshare -m``) where a tmpfs hides the API's data folder,
so everything they read or write of the API's goes through its worker routes over HTTP.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import networkx as nx
import numpy as np
import pytest

from graphgpu.client import cli
from graphgpu.kernels.algorithms.critical_nodes import CndParams, critical_nodes_cpu
from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.graph import Graph, NormalizationReport, build_graph
from graphgpu.kernels.core.registry import algorithms, comparable_summary, no_progress
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore
from graphgpu.kernels.core.transfer import FolderStream
from graphgpu.workers.remote import GraphCache
from tests.conftest import REPO, Stack, wait_until
from tests.kernels.core.test_contract import example_params, small_graph

KEY = "worker-secret-0123456789"
#: GRAPHGPU_MAX_RESULT_BYTES of the stack: above every example's result.
RESULT_LIMIT = 1_000_000
#: The families' algorithms (test plugins, registered by the tests, are not ours).
FAMILY_ALGORITHMS = sorted(name for name, algorithm in algorithms().items()
                           if algorithm.cpu.__module__.startswith("graphgpu.kernels.algorithms."))


def unshare_permitted() -> bool:
    try:
        return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False




class RemoteStack(Stack):
    """A :class:`Stack` whose workers reach the API only over HTTP."""

    def start_remote_workers(self, homes: list[Path]) -> None:
        """A worker per data folder in ``homes``, started together (their warm-ups overlap),
        each in a mount namespace where a tmpfs hides the API's data folder."""
        hide = 'mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec "$@"'
        started = []
        for home in homes:
            env = {**self.env, "GRAPHGPU_DATA_DIR": str(home), "GRAPHGPU_URL": self.base_url,
                   "GRAPHGPU_WORKER_KEY": KEY}
            # unshare and sh exec into the worker: the pid we hold is the worker's
            started.append(subprocess.Popen(
                ["unshare", "-m", "sh", "-c", hide, "sh", str(self.data_dir), sys.executable,
                 "-m", "graphgpu.client.cli", "worker", "--backend", "cpu"], env=env, cwd=REPO))
        self.workers += started

        def registered() -> bool:
            for worker in started:
                assert worker.poll() is None, f"a worker exited with {worker.returncode}"
            return {w.pid for w in started} <= {w["pid"] for w in self.live_workers()}

        wait_until(registered, timeout=240, every=0.25)


@pytest.fixture(scope="module")
def remote(redis_url: str, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[RemoteStack, list[Path]]]:
    if not unshare_permitted():
        pytest.skip("`unshare -m` is not permitted here (needs root or user namespaces): the "
                    "workers could not be kept from the API's data folder")
    root = tmp_path_factory.mktemp("remote")
    stack = RemoteStack(redis_url, root / "api", worker_key=KEY,
                        max_result_bytes=str(RESULT_LIMIT))
    homes = [root / "worker0", root / "worker1"]
    try:
        stack.start_api()
        stack.start_remote_workers(homes)
        yield stack, homes
    finally:
        stack.stop()


def edgelist(graph: Graph) -> str:
    ids = np.asarray(graph.node_ids)
    rows = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    keep = rows < graph.indices
    return "".join(f"{u} {v}\n" for u, v in zip(ids[rows[keep]], ids[graph.indices[keep]],
                                                 strict=True))


def npy(stack: Stack, job_id: str, field: str) -> np.ndarray:
    response = stack.http.get(f"/v1/jobs/{job_id}/result", params={"format": "npy",
                                                                   "field": field})
    assert response.status_code == 200, response.text
    return np.load(io.BytesIO(response.content))


def test_every_family_example_gives_the_local_answer(remote) -> None:
    stack, homes = remote
    graph_id = stack.upload(edgelist(small_graph(False)), name="contract")["id"]
    # The graph exactly as stored, and so as any worker runs it (local or remote).
    graph = GraphStore(stack.data_dir / "graphs", stack.data_dir / "tmp").load(graph_id)
    params = {name: example_params(algorithms()[name], graph) for name in FAMILY_ALGORITHMS}
    jobs = {}
    for name in FAMILY_ALGORITHMS:
        response = stack.submit(graph_id, name, params[name].model_dump(mode="json"),
                                backend="cpu")
        assert response.status_code == 202, (name, response.text)
        jobs[name] = response.json()["id"]
    workers = set()
    for name, job_id in jobs.items():
        algorithm = algorithms()[name]
        job = stack.wait_job(job_id, timeout=120)
        assert job["status"] == "succeeded", (name, job)
        workers.add(job["worker"])
        result = stack.http.get(f"/v1/jobs/{job_id}/result", params={"fields": "summary"}).json()
        # What a local worker computes: the registered CPU function on the stored graph.
        local = algorithm.cpu(graph, params[name], no_progress)
        assert (comparable_summary(algorithm.result_model, result["summary"])
                == comparable_summary(algorithm.result_model, algorithm.result_model
                                      .model_validate(local.summary).model_dump(mode="json"))
                ), name
        assert np.array_equal(npy(stack, job_id, "node_id"), graph.node_ids), name
        for field, values in (*local.node_values.items(), *local.arrays.items()):
            expected = (graph.to_original(values) if field in local.node_id_fields
                        else np.asarray(values))
            np.testing.assert_array_equal(npy(stack, job_id, field), expected,
                                          err_msg=f"{name}.{field}")
    assert len(workers) == 2  # both remote workers took jobs
    for home in homes:  # each fetched the graph into its own cache, and kept no result
        assert (home / "graphs" / graph_id / "meta.json").is_file()
        assert not any((home / "results").glob("*"))


BA = nx.barabasi_albert_graph(300, 2, seed=4)


def ba_graph(stack: Stack) -> str:
    return stack.upload("".join(f"{u} {v}\n" for u, v in BA.edges()), name="ba300")["id"]


def shard_workers(stack: Stack, job_id: str) -> set[str]:
    raw = stack.redis.hget(f"{stack.prefix}:job:{job_id}", "shards")
    return {shard["worker"] for shard in json.loads(raw)}


def test_distributed_critical_nodes_use_both_remote_workers(remote) -> None:
    stack, _ = remote
    graph_id = ba_graph(stack)
    params = {"method": "distributed", "k": 15, "starts": 4, "shards": 4, "seed": 5}
    job_id = stack.submit(graph_id, "critical_nodes", params).json()["id"]
    job = stack.wait_job(job_id, timeout=120)
    assert job["status"] == "succeeded", job
    result = stack.http.get(job["result_url"]).json()
    assert result["summary"]["shards_ok"] == 4
    # The best of the same starts run in this process (the reduce, on a remote worker, read
    # the shards' results from the API).
    graph, _ = build_graph(*np.array(BA.edges()).T)
    runs = [critical_nodes_cpu(graph, CndParams(k=15, seed=s), no_progress) for s in range(5, 9)]
    best = min(runs, key=lambda r: r.summary["objective"])
    assert result["summary"]["objective"] == best.summary["objective"]
    assert sorted(result["arrays"]["critical"]) == sorted(
        graph.to_original(best.arrays["critical"]).tolist())
    assert shard_workers(stack, job_id) <= {w["name"] for w in stack.live_workers()}

    # Islands of a second each: while one worker runs an island, the other takes the next.
    memetic = {"method": "distributed", "shard_method": "memetic", "shards": 2, "k": 15,
               "seed": 3, "time_limit_s": 1}
    job = stack.wait_job(stack.submit(graph_id, "critical_nodes", memetic).json()["id"],
                         timeout=120)
    assert job["status"] == "succeeded", job
    assert stack.http.get(job["result_url"]).json()["summary"]["shards_ok"] == 2
    assert len(shard_workers(stack, job["id"])) == 2


def test_generated_graphs_reach_the_api(remote) -> None:
    stack, _ = remote
    response = stack.http.post("/v1/graphs/generate", json={
        "generator": "erdos_renyi", "params": {"n": 200, "m": 600, "seed": 2},
        "backend": "cpu"})
    assert response.status_code == 202, response.text
    job = stack.wait_job(response.json()["id"])
    assert job["status"] == "succeeded", job
    graph_id = stack.http.get(job["result_url"]).json()["summary"]["graph_id"]
    meta = stack.http.get(f"/v1/graphs/{graph_id}").json()
    assert meta["n"] == 200 and meta["m"] == 600
    bfs = stack.wait_job(stack.submit(graph_id, "bfs", {"source": 0}).json()["id"])
    assert bfs["status"] == "succeeded", bfs


def test_worker_routes_take_the_worker_key_only(remote) -> None:
    stack, _ = remote
    graph_id = ba_graph(stack)
    worker = {"Authorization": f"Bearer {KEY}"}
    # The worker key is no API key, and no other key opens the worker routes.
    assert stack.http.get("/v1/graphs", headers=worker).status_code == 401
    assert stack.http.get("/internal/v1/ping").status_code == 401
    assert stack.http.get("/internal/v1/ping",
                          headers={"Authorization": "Bearer x" + KEY}).status_code == 401
    assert stack.http.get("/internal/v1/ping", headers=worker).status_code == 200
    # A result for a job that does not run on the sender is refused (403 while another
    # worker runs it, 409 once it ended), and nothing lands.
    job_id = stack.submit(graph_id, "test_sleep", {"seconds": 1}).json()["id"]
    stack.wait_job(job_id, statuses=("running",))
    folder = stack.data_dir / "results" / job_id

    def intrude() -> int:
        return stack.http.put(f"/internal/v1/jobs/{job_id}/result",
                              headers={**worker, "X-Graphgpu-Worker": "intruder"},
                              content=iter(FolderStream(stack.data_dir / "graphs" / graph_id))
                              ).status_code

    assert intrude() == 403 and not folder.exists()
    assert stack.wait_job(job_id)["status"] == "succeeded"
    before = (folder / protocol.RESULT_MANIFEST).read_text()
    assert intrude() == 409
    assert (folder / protocol.RESULT_MANIFEST).read_text() == before


def test_a_killed_remote_worker_loses_nothing(remote) -> None:
    stack, _ = remote
    graph_id = ba_graph(stack)
    job_id = stack.submit(graph_id, "test_sleep", {"seconds": 2}).json()["id"]
    running = stack.wait_job(job_id, statuses=("running",))
    pids = {w["name"]: w["pid"] for w in stack.live_workers()}
    os.kill(pids[running["worker"]], signal.SIGKILL)
    job = stack.wait_job(job_id, timeout=60)
    assert job["status"] == "succeeded", job
    assert job["worker"] != running["worker"] and job["lost"][0]["worker"] == running["worker"]
    summary = stack.http.get(job["result_url"]).json()["summary"]
    assert summary["degree_sum"] == 2 * BA.number_of_edges()


def test_the_graph_cache_keeps_the_recently_used_within_its_cap(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    store = GraphStore(settings.graphs_dir, settings.tmp_dir)
    ring = np.arange(500)
    ids = [store.put(build_graph(ring + 1000 * i, np.roll(ring, 1) + 1000 * i)[0], name=None,
                     source={}, report=NormalizationReport(500, 0, 0))[0]["id"]
           for i in range(3)]
    size = sum(f.stat().st_size for f in store.path(ids[0]).iterdir())
    for age, graph_id in enumerate(ids):  # ids[0] the least recently used
        os.utime(store.path(graph_id), (1000.0 + age, 1000.0 + age))
    # No API needed: every graph asked for is cached already.
    cache = GraphCache(settings.model_copy(update={"graph_cache_bytes": int(2.5 * size)}),
                       api=None)  # type: ignore[arg-type]
    assert cache.load(ids[0]).n == 500  # now the most recently used: ids[1] goes
    assert [cache.exists(graph_id) for graph_id in ids] == [True, False, True]
    cache.load(ids[2])  # within the cap: nothing more goes
    assert [cache.exists(graph_id) for graph_id in ids] == [True, False, True]


def test_graphgpu_worker_is_remote_with_the_url_and_the_key(monkeypatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(os, "execv", lambda exe, argv: calls.append(argv))
    monkeypatch.delenv("GRAPHGPU_WORKER_KEY", raising=False)
    monkeypatch.setenv("GRAPHGPU_URL", "http://api-host:8000")
    # The URL alone is the client's setting: a worker beside the API stays local.
    assert cli.main(["worker", "--backend", "cpu"]) == 0 and "--remote" not in calls[-1]
    monkeypatch.setenv("GRAPHGPU_WORKER_KEY", KEY)
    assert cli.main(["worker", "--backend", "cpu"]) == 0
    assert calls[-1][1:] == ["-m", "graphgpu.workers", "--backend", "cpu", "--remote"]


def test_a_result_is_checked_before_it_lands(remote, tmp_path: Path) -> None:
    stack, _ = remote
    job_id = uuid.uuid4().hex  # a job that worker "w-test" runs, as its record says
    stack.redis.hset(f"{stack.prefix}:job:{job_id}", mapping={
        "id": json.dumps(job_id), "status": json.dumps("running"), "worker": json.dumps("w-test")})
    headers = {"Authorization": f"Bearer {KEY}", "X-Graphgpu-Worker": "w-test"}

    def put(content: bytes) -> httpx.Response:
        return stack.http.put(f"/internal/v1/jobs/{job_id}/result", headers=headers,
                              content=iter([content]))  # streamed: no length to refuse early

    big = tmp_path / "big"
    big.mkdir()
    (big / protocol.RESULT_MANIFEST).write_text("{}")
    (big / "values.npy").write_bytes(b"x" * (RESULT_LIMIT + 1))
    assert put(b"".join(FolderStream(big))).status_code == 413
    assert put(b"not a tar archive" * 100).json()["error"]["code"] == "invalid_input"
    (big / "values.npy").unlink()
    (big / protocol.RESULT_MANIFEST).unlink()
    (big / "values.npy").write_bytes(b"x")
    assert put(b"".join(FolderStream(big))).json()["error"]["code"] == "invalid_result"
    assert not (stack.data_dir / "results" / job_id).exists()
    (big / protocol.RESULT_MANIFEST).write_text('{"summary": {}}')
    assert put(b"".join(FolderStream(big))).status_code == 204
    assert (stack.data_dir / "results" / job_id / "values.npy").read_bytes() == b"x"
    assert not any((stack.data_dir / "tmp").glob("result-upload.*"))  # no staging left behind

"""Fan-out / fan-in over the real queue: critical_nodes ``distributed`` with two real workers."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from redis import Redis
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer

from graphgpu.kernels.algorithms.critical_nodes import CndParams, critical_nodes_cpu, shard_params
from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.graph import build_graph
from graphgpu.kernels.core.registry import no_progress
from graphgpu.kernels.core.settings import Settings
from graphgpu.workers import fanout, records
from graphgpu.workers.context import WorkerContext
from tests.conftest import Stack, wait_until

GRAPH = nx.barabasi_albert_graph(1500, 2, seed=8)
PARAMS = {"method": "distributed", "k": 60, "starts": 8, "shards": 4, "seed": 11}


def edgelist() -> str:
    return "".join(f"{2 * u + 1} {2 * v + 1}\n" for u, v in GRAPH.edges())


def best_of(seeds: list[int]) -> tuple[int, list[int]]:
    """What in-process multistarts over ``seeds`` find: (objective, critical original ids)."""
    edges = np.array(GRAPH.edges())
    graph, _ = build_graph(2 * edges[:, 0] + 1, 2 * edges[:, 1] + 1)
    results = [critical_nodes_cpu(graph, CndParams(k=PARAMS["k"], seed=s), no_progress)
               for s in seeds]
    best = min(results, key=lambda r: r.summary["objective"])  # first of equals: smallest seed
    return best.summary["objective"], sorted(graph.to_original(best.arrays["critical"]).tolist())


def record(stack: Stack, job_id: str) -> dict:
    raw = stack.redis.hgetall(f"{stack.prefix}:job:{job_id}")
    return {k.decode(): json.loads(v) for k, v in raw.items()}


def submit_and_wait_for_shards(stack: Stack, graph_id: str,
                               params: dict = PARAMS) -> tuple[str, list[str]]:
    response = stack.submit(graph_id, "critical_nodes", params)
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    shards = wait_until(lambda: record(stack, job_id).get("shards"), every=0.005)
    return job_id, shards


def critical(stack: Stack, job: dict) -> list[int]:
    result = stack.http.get(job["result_url"]).json()
    return sorted(result["arrays"]["critical"])


@pytest.fixture(scope="module")
def two_workers(redis_url: str, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[tuple[Stack, str]]:
    """A private stack with two CPU workers, shared by this module's fan-out tests."""
    stack = Stack(redis_url, tmp_path_factory.mktemp("fanout"))
    try:
        stack.start_api()
        for _ in range(2):
            stack.start_worker()
        names = [w["name"] for w in stack.live_workers()]
        # A worker is listed once its monitor registers it, a moment before its first wait on
        # the queue: a job submitted in between could see every shard taken by the other one.
        wait_until(lambda: all(stack.redis.hget(f"rq:worker:{name}", "state") == b"idle"
                               for name in names))
        yield stack, stack.upload(edgelist(), name="ba1500")["id"]
    finally:
        stack.stop()


def test_shards_run_on_both_workers_and_the_best_wins(two_workers) -> None:
    stack, graph_id = two_workers
    job_id, shards = submit_and_wait_for_shards(stack, graph_id)
    assert len(shards) == 4
    job = stack.wait_job(job_id, timeout=120)
    assert job["status"] == "succeeded", job
    summary = stack.http.get(job["result_url"]).json()["summary"]
    objective, nodes = best_of(list(range(11, 19)))
    assert summary["objective"] == objective and critical(stack, job) == nodes
    assert summary["method"] == "distributed" and summary["shards_ok"] == 4
    assert summary["starts_run"] == 8
    winner = shard_params(CndParams(**PARAMS))[summary["shard"]]
    assert winner["seed"] <= summary["best_seed"] < winner["seed"] + winner["starts"]
    assert summary["best_start"] == summary["best_seed"] - 11
    states = record(stack, job_id)["shards"]
    assert [s["status"] for s in states] == ["succeeded"] * 4
    assert len({s["worker"] for s in states}) == 2  # both workers took shards
    listed = {j["id"] for j in stack.http.get("/v1/jobs").json()["jobs"]}
    assert job_id in listed and not listed & set(shards)  # shards stay out of listings
    assert stack.http.get(f"/v1/jobs/{shards[0]}").json()["status"] == "succeeded"


def test_a_failed_shard_loses_only_its_seeds(two_workers) -> None:
    stack, graph_id = two_workers
    job_id, shards = submit_and_wait_for_shards(stack, graph_id)
    # The last shard fails (as a crash would leave it): it is still queued behind the others.
    stack.redis.hset(f"{stack.prefix}:job:{shards[-1]}", mapping={
        "status": json.dumps("failed"),
        "error": json.dumps({"code": "internal_error", "message": "injected failure"})})
    job = stack.wait_job(job_id, timeout=120)
    assert job["status"] == "succeeded", job
    summary = stack.http.get(job["result_url"]).json()["summary"]
    assert summary["shards_ok"] == 3
    objective, nodes = best_of(list(range(11, 17)))  # shards of seeds 11-12, 13-14, 15-16
    assert summary["objective"] == objective and critical(stack, job) == nodes
    assert [s["status"] for s in record(stack, job_id)["shards"]][-1] == "failed"


def test_every_shard_failing_fails_the_job(two_workers) -> None:
    stack, graph_id = two_workers
    job_id, shards = submit_and_wait_for_shards(stack, graph_id)
    for shard in shards:
        stack.redis.hset(f"{stack.prefix}:job:{shard}", "status", json.dumps("failed"))
    job = stack.wait_job(job_id, timeout=120)
    assert job["status"] == "failed"
    assert "every shard" in job["error"]["message"]


def test_canceling_the_job_cancels_its_shards(two_workers) -> None:
    stack, graph_id = two_workers
    # Shards that run until canceled (memetic islands of 30 s): multistart shards of this graph
    # end in milliseconds, and could all end before the cancel came.
    job_id, shards = submit_and_wait_for_shards(stack, graph_id, {
        "method": "distributed", "shard_method": "memetic", "shards": 4, "k": 60,
        "time_limit_s": 30, "seed": 11})
    assert stack.http.delete(f"/v1/jobs/{job_id}").status_code == 200
    job = stack.wait_job(job_id, timeout=120)
    assert job["status"] == "canceled", job
    states = wait_until(lambda: [s for s in (record(stack, i)["status"] for i in shards)
                                 if s in ("succeeded", "failed", "canceled")]
                        if all(record(stack, i)["status"] in ("succeeded", "failed", "canceled")
                               for i in shards) else None, timeout=60)
    # Two workers can only have started two of the four shards: the others never ran.
    assert states.count("canceled") >= 2 and "failed" not in states
    in_use = {m.decode() for m in stack.redis.smembers(f"{stack.prefix}:graph:{graph_id}:jobs")}
    assert not in_use & {job_id, *shards}  # none of them holds the graph any more


def test_memetic_islands_trade_their_bests_through_redis(two_workers) -> None:
    stack, graph_id = two_workers
    params = {"method": "distributed", "shard_method": "memetic", "shards": 2, "k": 60,
              "seed": 3, "time_limit_s": 3}
    response = stack.submit(graph_id, "critical_nodes", params)
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    islands = f"{stack.prefix}:job:{job_id}:islands"
    # Both islands, each on its own worker, post their bests to the parent's hash while they run.
    posted = wait_until(lambda: (lambda h: h if len(h) == 2 else None)(
        stack.redis.hgetall(islands)), timeout=30, every=0.02)
    assert sorted(posted) == [b"0", b"1"]
    for raw in posted.values():
        values = np.frombuffer(raw, np.int64)
        assert values.shape[0] == 1 + 60 and np.unique(values[1:]).shape[0] == 60
    job = stack.wait_job(job_id, timeout=120)
    assert job["status"] == "succeeded", job
    summary = stack.http.get(job["result_url"]).json()["summary"]
    assert summary["shards_ok"] == 2 and summary["migrants"] >= 0
    assert len({s["worker"] for s in record(stack, job_id)["shards"]}) == 2
    assert not stack.redis.exists(islands)  # the reduce job cleared it


def test_a_parent_run_again_reuses_its_shards(redis_url: str, tmp_path: Path) -> None:
    """The parent's worker is lost after it made the shards but before it handed the job over:
    the monitor queues the parent again, and its second run redoes nothing that exists."""
    settings = Settings(redis_url=redis_url, data_dir=tmp_path,
                        redis_prefix=f"f{uuid.uuid4().hex[:8]}")
    redis = Redis.from_url(redis_url)
    ctx = WorkerContext(settings=settings, redis=redis, graphs=None, name="w1",  # type: ignore[arg-type]
                        backend="cpu", device="cpu")
    parent = uuid.uuid4().hex
    record_ = {"id": parent, "kind": "algorithm", "algorithm": "critical_nodes",
               "graph_id": "g1", "params": PARAMS, "backend_requested": "cpu",
               "status": "running", "worker": "w1", "created_at": 0.0}
    key = protocol.job_key(settings, parent)
    redis.hset(key, mapping={k: json.dumps(v) for k, v in record_.items()})
    redis.sadd(protocol.running_key(settings), parent)
    shards = shard_params(CndParams(**PARAMS))
    assert shards is not None
    ids = fanout.start(ctx, record_, shards)
    queue = Queue(settings.queue_name("cpu"), connection=redis, serializer=JSONSerializer)
    assert queue.get_job_ids() == ids
    # Shard 0 ran and succeeded, shard 1 is running, shard 2's RQ job is gone (as if the crash
    # came between the records and the queue), shard 3 is still queued.
    for index, status in ((0, "succeeded"), (1, "running"), (2, "queued")):
        queue.remove(ids[index])
        redis.hset(protocol.job_key(settings, ids[index]), "status", json.dumps(status))
    Job.fetch(ids[2], connection=redis, serializer=JSONSerializer).delete()
    assert fanout.start(ctx, record_, shards) == ids
    assert queue.get_job_ids() == [ids[3], ids[2]]  # only the lost one is queued again
    assert [records.read(redis, settings, i)["status"] for i in ids] == [
        "succeeded", "running", "queued", "queued"]
    assert queue.deferred_job_registry.get_job_ids() == [f"{parent}-reduce"]  # one reduce job
    assert not redis.sismember(protocol.running_key(settings), parent)
    assert json.loads(redis.hget(key, "shards")) == ids and not redis.hexists(key, "worker")
    redis.close()


def test_k_must_leave_a_node_at_submit(stack: Stack) -> None:
    graph_id = stack.upload("1 2\n2 3\n", name="p3")["id"]
    response = stack.submit(graph_id, "critical_nodes", {"k": 3})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "params.k"

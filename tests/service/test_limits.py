"""Per-key limits (429), GPU-memory refusals (413) and out-of-memory jobs, through the real API."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from graphgpu.client import Client, RateLimitedError
from graphgpu.service.limits import DEFAULT_DEVICE_BYTES_PER_NODE
from tests.conftest import PLUGIN, Stack

PATH_WITH_TAIL = "10 20\n20 30\n30 40\n20 50\n60 70\n"
PLUGINS = json.dumps([PLUGIN, "tests.support.memory_algorithm"])
#: Each test of the shared idle stack has its own key, hence its own active-job count.
IDLE_KEYS = {"jobs-key": "jobs", "memory-key": "memory"}


@pytest.fixture(scope="module")
def idle(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """An API without workers (jobs stay queued), a limit of 2 active jobs per key."""
    stack = Stack(redis_url, tmp_path_factory.mktemp("idle"), api_keys=json.dumps(IDLE_KEYS),
                  max_active_jobs_per_key="2", extra_algorithm_modules=PLUGINS)
    stack.start_api()
    yield stack
    stack.stop()


def _speak_as(stack: Stack, key: str) -> Stack:
    stack.http.headers["Authorization"] = f"Bearer {key}"
    return stack


def _hammer(http: httpx.Client, times: int) -> list[httpx.Response]:
    return [http.get("/v1/algorithms") for _ in range(times)]


def test_request_rate_per_key(make_stack) -> None:
    keys = json.dumps({"a-key": "a", "b-key": "b"})
    stack = make_stack(workers=0, api_keys=keys, rate_limit_per_second="0.5",
                       rate_limit_burst="3")
    with httpx.Client(base_url=stack.base_url, headers={"Authorization": "Bearer a-key"}) as a, \
            httpx.Client(base_url=stack.base_url, headers={"Authorization": "Bearer b-key"}) as b:
        statuses = [r.status_code for r in _hammer(a, 3)]
        refused = a.get("/v1/algorithms")
        assert statuses == [200, 200, 200] and refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limited"
        assert 1 <= int(refused.headers["retry-after"]) <= 2
        assert b.get("/v1/algorithms").status_code == 200  # another key has its own bucket
        assert a.get("/v1/health").status_code == 200  # probes are never limited
        time.sleep(2.1)  # one token back at 0.5 per second
        assert a.get("/v1/algorithms").status_code == 200
    with httpx.Client(base_url=stack.base_url,
                      headers={"Authorization": "Bearer guess"}) as guesser:
        statuses = [r.status_code for r in _hammer(guesser, 4)]
        assert statuses == [401, 401, 401, 429]  # guessing keys is limited per address
        assert "address 127.0.0.1" in guesser.get("/v1/algorithms").json()["error"]["message"]


def test_active_jobs_per_key(idle: Stack) -> None:
    stack = _speak_as(idle, "jobs-key")
    graph = stack.upload(PATH_WITH_TAIL)["id"]
    first, second = (stack.submit(graph, "bfs", {"source": 10}, backend="cpu").json()
                     for _ in range(2))
    refused = stack.submit(graph, "bfs", {"source": 10}, backend="cpu")
    assert refused.status_code == 429 and refused.headers["retry-after"]
    assert refused.json()["error"]["code"] == "too_many_jobs"
    listed = {j["id"] for j in stack.http.get("/v1/jobs").json()["jobs"]}
    assert listed == {first["id"], second["id"]}  # the refused job left nothing behind
    assert stack.http.delete(f"/v1/jobs/{first['id']}").json()["status"] == "canceled"
    again = stack.submit(graph, "bfs", {"source": 10}, backend="cpu")
    assert again.status_code == 202  # a slot is free again


def _fake_gpu_worker(stack: Stack, free: int) -> None:
    """A live GPU worker as its monitor would publish it (no job will reach it)."""
    record = {"name": "fake-gpu", "backend": "gpu", "device": "Fake GPU", "host": "test",
              "pid": 1, "started_at": time.time(), "gpu_free_bytes": free,
              "gpu_total_bytes": 2 * free}
    stack.redis.set(f"{stack.prefix}:worker:fake-gpu", json.dumps(record), px=120_000)
    stack.redis.sadd(f"{stack.prefix}:workers", "fake-gpu")


def test_gpu_memory_is_checked_before_queueing(idle: Stack) -> None:
    stack = _speak_as(idle, "memory-key")
    graph = stack.upload(PATH_WITH_TAIL)
    default = graph["bytes"] + DEFAULT_DEVICE_BYTES_PER_NODE * graph["n"]
    _fake_gpu_worker(stack, free=default - 1)
    assert stack.live_workers()[0]["gpu_free_bytes"] == default - 1

    refused = stack.submit(graph["id"], "bfs", {"source": 10}, backend="gpu")
    assert refused.status_code == 413, refused.text
    error = refused.json()["error"]
    assert error["code"] == "insufficient_device_memory"
    assert error["estimate"] == {"backend": "gpu", "device_bytes": default}
    # auto may land on the GPU worker: refused as well; cpu never touches the GPU.
    assert stack.submit(graph["id"], "bfs", {"source": 10}).status_code == 413
    assert stack.submit(graph["id"], "bfs", {"source": 10}, backend="cpu").status_code == 202

    # An algorithm's own estimate is what is compared.
    too_big = stack.submit(graph["id"], "test_memory", {"device_bytes": 2**40}, backend="gpu")
    assert too_big.status_code == 413
    assert too_big.json()["error"]["estimate"]["device_bytes"] == 2**40
    claims = {"device_bytes": default - 2}
    fits = stack.submit(graph["id"], "test_memory", claims, backend="gpu")
    assert fits.status_code == 202 and fits.json()["estimate"]["device_bytes"] == default - 2


def test_out_of_memory_job_fails_and_the_worker_keeps_serving(make_stack) -> None:
    stack = make_stack(workers=1, extra_algorithm_modules=PLUGINS)
    graph = stack.upload(PATH_WITH_TAIL)["id"]
    oom = stack.wait_job(stack.submit(graph, "test_memory", {"oom": True}).json()["id"])
    assert oom["status"] == "failed" and oom["error"]["code"] == "out_of_memory", oom
    assert "OutOfMemoryError" in oom["error"]["message"]
    after = stack.wait_job(stack.submit(graph, "bfs", {"source": 10}).json()["id"])
    assert after["status"] == "succeeded" and after["worker"] == oom["worker"]
    workers = stack.live_workers()
    assert [w["name"] for w in workers] == [oom["worker"]]
    assert workers[0]["gpu_free_bytes"] is None  # a CPU worker reports no GPU memory


def test_sdk_waits_out_rate_limited_gets_only() -> None:
    calls: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if len(calls) % 2:  # every other request is over the rate
            return httpx.Response(429, headers={"Retry-After": "0"}, json={
                "error": {"code": "rate_limited", "message": "too many requests"}})
        return httpx.Response(200, json={"algorithms": []})

    with Client("http://graphgpu.test", transport=httpx.MockTransport(answer)) as gg:
        assert gg.algorithms() == [] and calls == ["GET", "GET"]
        with pytest.raises(RateLimitedError) as refused:
            gg.cancel("0" * 32)  # not a GET: never sent twice
    assert calls == ["GET", "GET", "DELETE"]
    assert refused.value.status == 429 and refused.value.retry_after == 0

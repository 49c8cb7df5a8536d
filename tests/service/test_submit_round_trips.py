"""What a ``POST /v1/jobs`` costs the API in round trips to Redis (issue 23): one script that
checks the workers and records the job, the workers not read before it once an earlier
admission tells what to assume of them; and refusals that still come from workers read by the
request itself when that assumption is wrong. The app in process (Starlette's TestClient), on
the session's redis-server, with fake worker records and no workers (jobs stay queued).
"""

from __future__ import annotations

import json
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from redis import Redis
from redis.connection import Connection

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.app import create_app

PATH_WITH_TAIL = "10 20\n20 30\n30 40\n20 50\n60 70\n"
MIB = 1024**2


@pytest.fixture
def api(redis_url: str, tmp_path) -> Iterator[tuple[Any, Settings, Redis]]:
    """The app on a TestClient (open mode), its settings and a client of its Redis."""
    with warnings.catch_warnings():  # starlette's TestClient warns about httpx at import
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    settings = Settings(redis_url=redis_url, data_dir=tmp_path,
                        redis_prefix=f"rt{uuid.uuid4().hex[:8]}")
    redis = Redis.from_url(redis_url)
    with TestClient(create_app(settings)) as http:
        yield http, settings, redis
    redis.close()


def _worker(settings: Settings, redis: Redis, name: str, backend: str) -> None:
    """A live worker's heartbeat record, as its monitor writes it."""
    record = {"name": name, "backend": backend, "host": "test", "pid": 1,
              "started_at": time.time(), "host_free_bytes": 1024 * MIB}
    if backend == "gpu":
        record.update(device="Fake GPU", gpu_free_bytes=100 * MIB, gpu_total_bytes=200 * MIB)
    redis.set(protocol.worker_key(settings, name), json.dumps(record), px=600_000)
    redis.sadd(protocol.workers_key(settings), name)


def _gone(settings: Settings, redis: Redis, name: str) -> None:
    redis.delete(protocol.worker_key(settings, name))
    redis.srem(protocol.workers_key(settings), name)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The commands the API sends to Redis from now on (its synchronous connections: the
    long-polls' listener has its own, asynchronous), one entry a round trip."""
    sent: list[bytes] = []
    send = Connection.send_packed_command

    def counted(self: Connection, command: Any, *args: Any, **kwargs: Any) -> None:
        first = command if isinstance(command, bytes | str) else command[0]
        first = first.encode() if isinstance(first, str) else bytes(first)
        sent.append(first.split(b"\r\n")[2].upper())  # the command's name in RESP
        return send(self, command, *args, **kwargs)

    monkeypatch.setattr(Connection, "send_packed_command", counted)
    return sent


def _bfs(http: Any, graph: str, backend: str = "auto") -> Any:
    return http.post("/v1/jobs", json={"graph_id": graph, "algorithm": "bfs",
                                       "params": {"source": 10}, "backend": backend})


def test_a_job_costs_the_api_one_round_trip(api, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first admission (which reads the workers), a job is checked and recorded in
    one script, sent by its hash; and it is recorded and queued whole."""
    http, settings, redis = api
    _worker(settings, redis, "cpu-1", "cpu")
    graph = http.post("/v1/graphs", content=PATH_WITH_TAIL).json()["id"]
    assert _bfs(http, graph).status_code == 202  # reads the workers: nothing assumed yet
    sent = _counted(monkeypatch)
    job = _bfs(http, graph)
    assert job.status_code == 202, job.text
    assert sent == [b"EVALSHA"]
    job_id = job.json()["id"]
    record = protocol.decode_record(redis.hgetall(protocol.job_key(settings, job_id)))
    assert record["status"] == "queued" and "estimate" not in record  # a CPU bfs shows none
    assert redis.zscore(protocol.job_index_key(settings), job_id) is not None
    assert redis.sismember(protocol.graph_jobs_key(settings, graph), job_id)
    queue = f"rq:queue:{settings.queue_name('auto')}"
    assert job_id.encode() in redis.lrange(queue, 0, -1)


def test_workers_not_as_assumed_are_read_and_decide(api, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    """The GPU worker the last admission saw is gone: ``backend=gpu`` is refused (409) from
    the workers the script answered, and ``auto`` then assumes the CPU; a GPU worker back:
    ``auto`` chooses it after one more script. Nothing is recorded by a script that found
    the workers otherwise."""
    http, settings, redis = api
    _worker(settings, redis, "cpu-1", "cpu")
    _worker(settings, redis, "gpu-1", "gpu")
    graph = http.post("/v1/graphs", content=PATH_WITH_TAIL).json()["id"]
    first = _bfs(http, graph)
    assert first.json()["estimate"]["backend"] == "gpu"
    _gone(settings, redis, "gpu-1")
    sent = _counted(monkeypatch)
    refused = _bfs(http, graph, backend="gpu")
    assert refused.status_code == 409, refused.text
    assert refused.json()["error"]["code"] == "no_gpu_worker"
    assert sent == [b"EVALSHA"]  # its answer carried the workers: none read apart
    del sent[:]
    on_cpu = _bfs(http, graph)  # the refusal's workers told it: no GPU worker is assumed
    assert on_cpu.status_code == 202 and on_cpu.json()["estimate"] is None
    assert sent == [b"EVALSHA"]
    _worker(settings, redis, "gpu-2", "gpu")
    del sent[:]  # (the test's own writes)
    on_gpu = _bfs(http, graph)
    assert on_gpu.status_code == 202 and on_gpu.json()["estimate"]["backend"] == "gpu"
    assert sent == [b"EVALSHA", b"EVALSHA"]  # refused for the assumption, then recorded
    assert redis.zcard(protocol.job_index_key(settings)) == 3  # first, on_cpu, on_gpu


def test_memory_refused_by_the_script_is_a_413(api) -> None:
    """No worker has the memory: the 413 with its estimate, as when the workers were read
    first, and nothing recorded."""
    http, settings, redis = api
    _worker(settings, redis, "gpu-1", "gpu")
    graph = http.post("/v1/graphs", content=PATH_WITH_TAIL).json()["id"]
    assert _bfs(http, graph).status_code == 202
    redis.hset(protocol.admitted_key(settings), "taken", json.dumps({"device_bytes": 100 * MIB}))
    redis.hset(protocol.job_key(settings, "taken"), "status", json.dumps("running"))
    too_big = _bfs(http, graph, backend="gpu")
    assert too_big.status_code == 413, too_big.text
    error = too_big.json()["error"]
    assert error["code"] == "insufficient_device_memory" and error["estimate"]["device_bytes"]
    assert redis.zcard(protocol.job_index_key(settings)) == 1

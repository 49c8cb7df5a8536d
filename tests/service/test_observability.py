"""/metrics, /v1/ready, worker GPU-memory reports and JSON logs, through the real stack."""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from graphgpu.kernels.core.observability import (
    JsonFormatter,
    bucket_label,
    gpu_memory_key,
    job_context,
)
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.app import create_app
from tests.conftest import REPO, Stack, wait_until

PATH_WITH_TAIL = "10 20\n20 30\n30 40\n20 50\n60 70\n"


def _samples(stack: Stack) -> dict[str, list]:
    response = stack.http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    out: dict[str, list] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(sample)
    return out


def _value(samples: dict[str, list], name: str, **labels: str) -> float:
    return sum(s.value for s in samples.get(name, []) if labels.items() <= s.labels.items())


def test_metrics(make_stack) -> None:
    stack = make_stack(workers=1)
    graph = stack.upload(PATH_WITH_TAIL)["id"]
    done = [stack.wait_job(stack.submit(graph, "connected_components").json()["id"])
            for _ in range(2)]
    canceled = stack.wait_job(stack.submit(graph, "test_sleep", {"seconds": 30}).json()["id"],
                              statuses=("running",))
    stack.http.delete(f"/v1/jobs/{canceled['id']}")
    stack.wait_job(canceled["id"])
    # The worker counts a job's duration just after finishing it.
    wait_until(lambda: _value(_samples(stack), "graphgpu_job_duration_seconds_count",
                              algorithm="test_sleep", status="canceled") == 1)
    samples = _samples(stack)
    assert _value(samples, "graphgpu_jobs", status="succeeded",
                  algorithm="connected_components") == 2
    assert _value(samples, "graphgpu_jobs", status="canceled", algorithm="test_sleep") == 1
    assert _value(samples, "graphgpu_workers", backend="cpu") == 1
    series = {"algorithm": "connected_components", "backend": "cpu", "status": "succeeded"}
    assert _value(samples, "graphgpu_job_duration_seconds_count", **series) == 2
    total = sum((j["finished_at"] - j["started_at"]) for j in done)
    assert abs(_value(samples, "graphgpu_job_duration_seconds_sum", **series) - total) < 1e-3
    buckets = [s for s in samples["graphgpu_job_duration_seconds_bucket"]
               if series.items() <= s.labels.items()]
    assert [b.value for b in buckets] == sorted(b.value for b in buckets)  # cumulative
    assert buckets[-1].labels["le"] == "+Inf" and buckets[-1].value == 2

    # Queue depth: jobs wait while no worker is live.
    for worker in stack.workers:
        worker.terminate()
        worker.wait(15)
    wait_until(lambda: not stack.live_workers(), timeout=30)
    for _ in range(3):
        stack.submit(graph, "connected_components", backend="cpu")
    samples = _samples(stack)
    assert _value(samples, "graphgpu_queue_depth", queue="cpu") == 3
    assert _value(samples, "graphgpu_workers", backend="cpu") == 0


def test_ready_worker_logs_and_memory_report(make_stack, tmp_path) -> None:
    stack = make_stack(workers=0)
    not_ready = stack.http.get("/v1/ready")
    assert not_ready.status_code == 503
    assert not_ready.json()["error"]["code"] == "not_ready"
    assert "no worker" in not_ready.json()["error"]["message"]
    assert stack.http.get("/v1/health").status_code == 200  # liveness is not readiness

    log_file = tmp_path / "worker.log"
    with log_file.open("wb") as sink:
        worker = subprocess.Popen([sys.executable, "-m", "graphgpu.workers", "--backend", "cpu"],
                                  env=stack.env, cwd=REPO, stderr=sink)
    stack.workers.append(worker)
    name = wait_until(stack.live_workers, timeout=30)[0]["name"]
    # ready once the API has also loaded its upload path (at its start-up)
    ready = wait_until(lambda: (r := stack.http.get("/v1/ready")).status_code == 200 and r,
                       timeout=30)
    assert ready.status_code == 200 and ready.json() == {"status": "ready", "redis": True,
                                                         "workers": 1}

    # Worker logs are JSON lines, and those made while serving a job carry its id.
    job = stack.submit(stack.upload(PATH_WITH_TAIL)["id"], "connected_components").json()
    stack.wait_job(job["id"])

    def logged() -> list[dict]:
        lines = [json.loads(line) for line in log_file.read_text().splitlines()
                 if line.startswith("{")]
        return [entry for entry in lines if entry.get("job_id") == job["id"]]

    entries = wait_until(logged, timeout=10)
    assert all(e["process"] == "worker" and e["level"] == "info" for e in entries)
    assert any("succeeded" in e["message"] for e in entries)

    # What a worker reports about its GPU rides on its monitor's next heartbeat.
    report = {"gpu_free_bytes": 123, "gpu_total_bytes": 456}
    stack.redis.set(gpu_memory_key(Settings(redis_prefix=stack.prefix), name), json.dumps(report))
    published = wait_until(lambda: next((w for w in stack.live_workers()
                                         if w.get("gpu_free_bytes") == 123), None), timeout=10)
    assert published["gpu_total_bytes"] == 456


@contextmanager
def _in_process_api(settings: Settings, **client: Any) -> Iterator[tuple[Any, io.StringIO]]:
    """The app on a TestClient, with what it logs (start-up included) going to a buffer."""
    with warnings.catch_warnings():  # starlette's TestClient warns about httpx at import
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    app = create_app(settings)
    lines = io.StringIO()
    logging.getLogger().handlers[0].setStream(lines)  # the handler create_app installed
    with TestClient(app, **client) as http:
        yield http, lines


def _entries(lines: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in lines.getvalue().splitlines()]


def _access(lines: io.StringIO) -> list[dict]:
    """The API's access-log entries (its start-up's own lines, e.g. the upload path's, left
    out: they name no request time)."""
    return [e for e in _entries(lines) if e["logger"] == "graphgpu.api" and "ms" in e]


def test_api_access_log_is_quiet_unless_asked(redis_url: str, tmp_path) -> None:
    settings = Settings(redis_url=redis_url, data_dir=tmp_path, redis_prefix="quietlog",
                        api_keys={"k": "alice"})
    with _in_process_api(settings, headers={"Authorization": "Bearer k"}) as (http, lines):
        for _ in range(3):
            assert http.get("/v1/health").status_code == 200
        assert http.get("/v1/graphs").status_code == 200
    assert _access(lines) == []


def test_api_access_log_names_tenant_and_job(redis_url: str, tmp_path) -> None:
    settings = Settings(redis_url=redis_url, data_dir=tmp_path, redis_prefix="accesslog",
                        api_keys={"k": "alice"}, log_requests=True)
    with _in_process_api(settings, headers={"Authorization": "Bearer k"}) as (http, lines):
        graph = http.post("/v1/graphs", content=PATH_WITH_TAIL).json()
        job = http.post("/v1/jobs", json={"graph_id": graph["id"], "algorithm": "bfs",
                                          "params": {"source": 10}}).json()
        http.get(f"/v1/jobs/{job['id']}")
    access = _access(lines)
    assert [(e["message"], e.get("job_id")) for e in access] == [
        ("POST /v1/graphs 201", None), ("POST /v1/jobs 202", job["id"]),
        (f"GET /v1/jobs/{job['id']} 200", job["id"])]
    assert all(e["tenant"] == "alice" and e["ms"] >= 0 for e in access)


def test_open_mode_says_so_at_start_up(redis_url: str, tmp_path) -> None:
    warned = []
    for prefix, keys in (("open", {}), ("keyed", {"k": "alice"})):
        settings = Settings(redis_url=redis_url, data_dir=tmp_path, redis_prefix=prefix,
                            api_keys=keys)
        with _in_process_api(settings) as (_, lines):
            pass
        warned.append([e["message"] for e in _entries(lines) if e["level"] == "warning"])
    assert len(warned[0]) == 1 and "OPEN" in warned[0][0] and warned[1] == []


def test_json_formatter() -> None:
    record = logging.LogRecord("graphgpu.test", logging.WARNING, __file__, 1, "%d jobs", (3,),
                               None)
    record.tenant = "alice"
    with job_context("j1"):
        entry = json.loads(JsonFormatter("api").format(record))
    assert entry.items() >= {"level": "warning", "process": "api", "logger": "graphgpu.test",
                             "message": "3 jobs", "job_id": "j1", "tenant": "alice"}.items()
    assert "job_id" not in json.loads(JsonFormatter("api").format(record))
    assert [bucket_label(s) for s in (0.0, 0.01, 0.011, 1e9)] == ["0.01", "0.01", "0.05", "+Inf"]

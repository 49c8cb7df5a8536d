"""Requests that once answered 5xx (or were silently coerced) must answer a documented 4xx.

Each test sends what an attacker or a careless client would, to the live API (real Redis, real
HTTP, a real worker), and checks the status and the ``{"error": {...}}`` body.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from graphgpu.service.redis_server import RedisServer
from tests.conftest import Stack, wait_until
from tests.reliability.conftest import PATH_WITH_TAIL

TOO_BIG = 2**63  # one past int64


@pytest.fixture(scope="module")
def api(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = Stack(redis_url, tmp_path_factory.mktemp("boundaries"))
    stack.start_api()
    stack.start_worker()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def graph(api: Stack) -> str:
    return api.upload(PATH_WITH_TAIL)["id"]


def error_of(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, (response.status_code, response.text[:500])
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    return body["error"]


def test_ids_of_any_length_are_not_found(api: Stack, graph: str) -> None:
    long_id = "a" * 300
    for method in ("GET", "DELETE"):
        error = error_of(api.http.request(method, f"/v1/graphs/{long_id}"), 404)
        assert error["field"] == "graph_id" and len(error["message"]) < 200
        error_of(api.http.request(method, f"/v1/jobs/{long_id}"), 404)
    error_of(api.http.get(f"/v1/jobs/{long_id}/result"), 404)
    error = error_of(api.submit(long_id, "bfs", {"source": 10}), 404)
    assert error["field"] == "graph_id"
    error_of(api.http.get("/v1/graphs/..%2F..%2Fetc"), 404)


@pytest.mark.parametrize(("algorithm", "params", "field"), [
    ("bfs", {"source": TOO_BIG}, "params.source"),
    ("bfs", {"source": -TOO_BIG - 1}, "params.source"),
    ("bfs", {"sources": [10, TOO_BIG]}, "params.sources"),
    ("sssp", {"source": TOO_BIG}, "params.source"),
    ("sssp", {"source": -1}, "params.source"),
])
def test_node_ids_outside_int64_are_422(api: Stack, graph: str, algorithm: str, params: dict,
                                        field: str) -> None:
    error = error_of(api.submit(graph, algorithm, params), 422)
    assert error["field"] == field


def test_result_rows_outside_int64_are_422(api: Stack, graph: str) -> None:
    job = api.submit(graph, "apsp", {}).json()["id"]
    assert api.wait_job(job)["status"] == "succeeded"
    for param in ("rows", "sources"):
        for value in (str(TOO_BIG), f"10,-{TOO_BIG + 1}"):
            response = api.http.get(f"/v1/jobs/{job}/result", params={param: value})
            assert error_of(response, 422)["field"] == param
    ok = api.http.get(f"/v1/jobs/{job}/result", params={"rows": "10"})
    assert ok.status_code == 200 and ok.json()["10"]["20"] == 1


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_json_nested_deep_is_4xx(api: Stack) -> None:
    bomb = '{"edges": ' + _nested(1000) + "}"
    for body in (bomb.encode(), gzip.compress(bomb.encode())):
        error = error_of(api.http.post("/v1/graphs", content=body,
                                       params={"format": "json"}), 400)
        assert error["code"] == "bad_json"
    deep_params = json.loads('{"x": ' + _nested(900) + "}")
    response = api.http.post("/v1/jobs", content=json.dumps(
        {"graph_id": "0" * 32, "algorithm": "bfs", "params": deep_params}),
        headers={"Content-Type": "application/json"})
    assert 400 <= response.status_code < 500, response.text[:300]
    raw = '{"graph_id": "x", "algorithm": "bfs", "params": ' + _nested(100_000) + "}"
    response = api.http.post("/v1/jobs", content=raw,
                             headers={"Content-Type": "application/json"})
    error_of(response, 400)
    assert api.http.get("/v1/health").status_code == 200  # still serving


def test_unknown_routes_and_methods_answer_the_error_body(api: Stack) -> None:
    assert error_of(api.http.get("/v1/nothing-here"), 404)["code"] == "not_found"
    assert error_of(api.http.get("/nope"), 404)["code"] == "not_found"
    assert error_of(api.http.put("/v1/graphs"), 405)["code"] == "method_not_allowed"
    assert error_of(api.http.patch("/v1/jobs"), 405)["code"] == "method_not_allowed"


def test_bad_multipart_format_is_422_naming_the_field(api: Stack) -> None:
    response = api.http.post("/v1/graphs", files={"file": ("g.txt", PATH_WITH_TAIL)},
                             data={"format": "xml"})
    error = error_of(response, 422)
    assert error["field"] == "format" and error["code"] == "unknown_format"


@pytest.mark.parametrize("value", ["10", True, 1e1, 10.0, [10]])
def test_params_are_not_coerced(api: Stack, graph: str, value: object) -> None:
    error = error_of(api.submit(graph, "bfs", {"source": value}), 422)
    assert error["field"] == "params.source"


def test_generator_params_are_not_coerced(api: Stack) -> None:
    for bad in ({"n": "100", "p": 0.1, "seed": 1}, {"n": 1e2, "p": 0.1, "seed": 1},
                {"n": 100, "p": 0.1, "seed": True}):
        response = api.http.post("/v1/graphs/generate",
                                 json={"generator": "erdos_renyi", "params": bad})
        assert error_of(response, 422)["field"].startswith("params."), bad
    ok = api.http.post("/v1/graphs/generate", json={"generator": "erdos_renyi",
                                                    "params": {"n": 100, "p": 0.1, "seed": 1}})
    assert ok.status_code == 202, ok.text


def test_names_are_limited_and_printable(api: Stack) -> None:
    long_name, escape = "x" * 100_000, "red\x1b[31m\nname"
    for name in (long_name, escape):
        multipart = api.http.post("/v1/graphs", files={"file": ("g.txt", PATH_WITH_TAIL)},
                                  data={"name": name})
        assert error_of(multipart, 422)["field"] == "name"
        generated = api.http.post("/v1/graphs/generate", json={
            "generator": "erdos_renyi", "params": {"n": 10, "p": 0.1, "seed": 1}, "name": name})
        assert error_of(generated, 422)["field"] == "name"
    query = api.http.post("/v1/graphs", content=PATH_WITH_TAIL, params={"name": escape})
    assert error_of(query, 422)["field"] == "name"
    named = api.http.post("/v1/graphs", content="1 2\n2 3\n", params={"name": "Zürich 東京"})
    assert named.status_code == 201 and named.json()["name"] == "Zürich 東京"
    # a file's own name is not refused but cleaned and cut
    from_file = api.http.post("/v1/graphs", files={"file": ("a\x1b[2J" + "b" * 300, "3 4\n")})
    assert from_file.status_code == 201, from_file.text
    assert from_file.json()["name"] == "a[2J" + "b" * 196


def test_redis_down_is_503_with_retry_after(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis")
    stack = Stack(server.start(), tmp_path / "data")
    try:
        stack.start_api()
        graph = stack.upload(PATH_WITH_TAIL)["id"]
        server.stop()
        for method, path, body in (("GET", "/v1/jobs", None), ("GET", "/v1/graphs", None),
                                   ("GET", f"/v1/graphs/{graph}", None),
                                   ("POST", "/v1/jobs", {"graph_id": graph, "algorithm": "bfs",
                                                         "params": {"source": 10}}),
                                   ("GET", "/v1/workers", None)):
            response = stack.http.request(method, path, json=body)
            error = error_of(response, 503)
            assert error["code"] == "redis_unavailable"
            assert int(response.headers["Retry-After"]) >= 1
        upload = stack.http.post("/v1/graphs", content=PATH_WITH_TAIL)
        assert error_of(upload, 503)["code"] == "redis_unavailable"
        server = RedisServer(server.data_dir, port=server.port)
        server.start()
        # the API reconnects by itself
        wait_until(lambda: stack.http.get("/v1/jobs").status_code == 200, timeout=10)
        assert stack.http.get(f"/v1/graphs/{graph}").status_code == 200
    finally:
        stack.stop()
        server.stop()

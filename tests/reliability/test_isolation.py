"""Tenant isolation through the real API: every endpoint with no key, a foreign key and the admin's.

The endpoints are read from the service's own OpenAPI document, so an endpoint added later is
covered without touching this file. Alice owns a graph and a finished job; Bob must not learn
that they exist, by any route, and the admin sees everything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from graphgpu.client import AuthenticationError, Client, NotFoundError
from graphgpu.client.cli import main as cli
from tests.conftest import Stack
from tests.reliability.conftest import PATH_WITH_TAIL

KEYS = {"alice-key": "alice", "bob-key": "bob", "root-key": {"tenant": "ops", "admin": True}}
PROBES = {"/v1/health", "/v1/ready"}
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def keyed(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """API (with keys) and one CPU worker; ``keyed.http`` speaks as the admin."""
    stack = Stack(redis_url, tmp_path_factory.mktemp("keyed"), api_keys=json.dumps(KEYS))
    stack.http.headers["Authorization"] = "Bearer root-key"
    stack.start_api()
    stack.start_worker()
    yield stack
    stack.stop()


def _as(stack: Stack, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=stack.base_url, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def alice(keyed: Stack) -> Iterator[httpx.Client]:
    with _as(keyed, "alice-key") as http:
        yield http


@pytest.fixture(scope="module")
def bob(keyed: Stack) -> Iterator[httpx.Client]:
    with _as(keyed, "bob-key") as http:
        yield http


@pytest.fixture(scope="module")
def owned(keyed: Stack, alice: httpx.Client) -> dict[str, str]:
    """Alice's graph and her finished job on it."""
    graph = alice.post("/v1/graphs", content=PATH_WITH_TAIL, params={"name": "alice-graph"})
    assert graph.status_code == 201, graph.text
    job = alice.post("/v1/jobs", json={"graph_id": graph.json()["id"], "algorithm": "bfs",
                                       "params": {"source": 10}})
    assert job.status_code == 202, job.text
    assert keyed.wait_job(job.json()["id"])["status"] == "succeeded"
    return {"graph_id": graph.json()["id"], "job_id": job.json()["id"]}


def _operations(stack: Stack) -> list[tuple[str, str]]:
    spec = stack.http.get("/openapi.json").json()
    return [(method, path) for path, item in spec["paths"].items()
            for method in item if method in METHODS]


def _fill(path: str, ids: dict[str, str]) -> str:
    """The path with Alice's ids for her resources, and 0 for any other parameter."""
    return re.sub(r"\{(\w+)\}", lambda m: ids.get(m.group(1), "0"), path)


def _still_there(alice: httpx.Client, owned: dict[str, str]) -> None:
    assert alice.get(f"/v1/graphs/{owned['graph_id']}").status_code == 200
    job = alice.get(f"/v1/jobs/{owned['job_id']}").json()
    assert job["status"] == "succeeded"
    assert alice.get(f"/v1/jobs/{owned['job_id']}/result").status_code == 200


def test_every_endpoint_needs_a_key(keyed: Stack, alice: httpx.Client,
                                    owned: dict[str, str]) -> None:
    operations = _operations(keyed)
    assert len(operations) >= 12  # the document really lists the API
    with _as(keyed, None) as anonymous, _as(keyed, "not-a-key") as forged:
        for method, path in operations:
            url = _fill(path, owned)
            for http, code in ((anonymous, "missing_api_key"), (forged, "invalid_api_key")):
                response = http.request(method.upper(), url)
                if path in PROBES:
                    assert response.status_code == 200, (method, path, response.text)
                    continue
                assert response.status_code == 401, (method, path, response.text)
                assert response.headers["www-authenticate"] == "Bearer"
                assert response.json()["error"]["code"] == code
        assert anonymous.get("/docs").status_code == 200
        assert anonymous.get("/openapi.json").status_code == 200
    _still_there(alice, owned)


def test_a_foreign_key_sees_nothing(keyed: Stack, alice: httpx.Client, bob: httpx.Client,
                                    owned: dict[str, str]) -> None:
    for method, path in _operations(keyed):
        response = bob.request(method.upper(), _fill(path, owned))
        if "{job_id}" in path or "{graph_id}" in path:
            assert response.status_code == 404, (method, path, response.text)
            assert response.json()["error"]["code"] == "not_found"
        elif method == "get":
            # Listings, workers, metrics...: nothing of Alice's shows anywhere.
            assert owned["graph_id"] not in response.text, path
            assert owned["job_id"] not in response.text, path
    submit = bob.post("/v1/jobs", json={"graph_id": owned["graph_id"], "algorithm": "bfs",
                                        "params": {"source": 10}})
    assert submit.status_code == 404 and submit.json()["error"]["field"] == "graph_id"
    assert bob.get("/metrics").status_code == 403  # aggregate numbers are the admin's
    _still_there(alice, owned)


def test_the_admin_sees_everything(keyed: Stack, owned: dict[str, str]) -> None:
    for method, path in _operations(keyed):
        if method != "get":
            continue
        response = keyed.http.get(_fill(path, owned))
        assert response.status_code != 404 and response.status_code < 500, (path, response.text)
    graphs = keyed.http.get("/v1/graphs").json()["graphs"]
    assert owned["graph_id"] in {g["id"] for g in graphs}
    assert owned["job_id"] in {j["id"] for j in keyed.http.get("/v1/jobs").json()["jobs"]}
    assert "graphgpu_jobs" in keyed.http.get("/metrics").text


def test_same_graph_two_tenants(keyed: Stack, alice: httpx.Client, bob: httpx.Client,
                                owned: dict[str, str]) -> None:
    graph_id = owned["graph_id"]
    mine = bob.post("/v1/graphs", content=PATH_WITH_TAIL, params={"name": "bob-graph"})
    assert mine.status_code == 201  # new to Bob: he does not learn that Alice has it
    assert mine.json()["id"] == graph_id and mine.json()["name"] == "bob-graph"
    assert alice.get(f"/v1/graphs/{graph_id}").json()["name"] == "alice-graph"
    assert [g["name"] for g in bob.get("/v1/graphs").json()["graphs"]] == ["bob-graph"]

    # The same Idempotency-Key names different jobs for different tenants.
    body = {"graph_id": graph_id, "algorithm": "connected_components"}
    headers = {"Idempotency-Key": "same-key"}
    first = alice.post("/v1/jobs", json=body, headers=headers)
    other = bob.post("/v1/jobs", json=body, headers=headers)
    assert first.status_code == other.status_code == 202
    assert first.json()["id"] != other.json()["id"]
    for job in (first.json(), other.json()):
        keyed.wait_job(job["id"])
    bobs_jobs = {j["id"] for j in bob.get("/v1/jobs").json()["jobs"]}
    assert bobs_jobs == {other.json()["id"]}

    # Bob's delete drops his claim only; Alice keeps the graph, its files and her results.
    assert bob.delete(f"/v1/graphs/{graph_id}").status_code == 204
    assert bob.get(f"/v1/graphs/{graph_id}").status_code == 404
    assert bob.get("/v1/graphs").json()["graphs"] == []
    _still_there(alice, owned)
    again = alice.post("/v1/jobs", json=body)
    assert keyed.wait_job(again.json()["id"])["status"] == "succeeded"


def test_sdk_and_cli_send_the_key(keyed: Stack, owned: dict[str, str], capsys,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with Client(keyed.base_url, api_key="alice-key") as gg:
        grid = gg.generate("grid", rows=3, cols=4, name="alice-grid")
        assert (grid.n, grid.name) == (12, "alice-grid")
        assert grid.id in {g.id for g in gg.graphs()}
    with Client(keyed.base_url, api_key="bob-key") as gg, pytest.raises(NotFoundError):
        gg.graph(grid.id)
    monkeypatch.delenv("GRAPHGPU_API_KEY", raising=False)
    with Client(keyed.base_url) as gg, pytest.raises(AuthenticationError) as refused:
        gg.graphs()
    assert refused.value.status == 401 and refused.value.code == "missing_api_key"

    assert cli(["--url", keyed.base_url, "--api-key", "alice-key", "graphs", "--json"]) == 0
    assert owned["graph_id"] in capsys.readouterr().out
    monkeypatch.setenv("GRAPHGPU_API_KEY", "bob-key")
    assert cli(["graphs", "--json", "--url", keyed.base_url]) == 0
    assert owned["graph_id"] not in capsys.readouterr().out
    monkeypatch.delenv("GRAPHGPU_API_KEY")
    assert cli(["graphs", "--url", keyed.base_url]) == 1
    assert "missing_api_key" in capsys.readouterr().err


def test_openapi_declares_the_bearer_scheme(keyed: Stack) -> None:
    spec = keyed.http.get("/openapi.json").json()
    scheme = spec["components"]["securitySchemes"]["apiKey"]
    assert scheme["type"] == "http" and scheme["scheme"] == "bearer"
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            secured = {"apiKey": []} in operation.get("security", [])
            assert secured == (path not in PROBES), (method, path)

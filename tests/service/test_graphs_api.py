"""Graph upload, storage and generation through the real API."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.conftest import Stack

EDGES = "# a comment\n1 2\n2 3\n3 3\n2 1\n10 11\n"


def test_upload_normalises_and_reports_counts(stack: Stack) -> None:
    meta = stack.upload(EDGES, name="counts")
    assert (meta["n"], meta["m"]) == (5, 3)
    assert meta["normalization"] == {"edges_read": 5, "self_loops_dropped": 1,
                                     "duplicates_merged": 1}
    assert meta["degree_min"] == 1 and meta["degree_max"] == 2
    assert meta["node_id_min"] == 1 and meta["node_id_max"] == 11
    assert meta["name"] == "counts" and meta["source"]["format"] == "edgelist"


def test_same_graph_twice_has_same_id_and_200(stack: Stack) -> None:
    first = stack.http.post("/v1/graphs", content=b"5 6\n6 7\n")
    again = stack.http.post("/v1/graphs", content=gzip.compress(b"7 6\n5 6\n6 5\n"))
    assert first.status_code in (200, 201)
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert again.headers["location"] == f"/v1/graphs/{first.json()['id']}"


def test_multipart_upload_with_fields(stack: Stack) -> None:
    files = {"file": ("g.json", json.dumps({"edges": [[0, 1], [1, 2]], "nodes": [9]}))}
    response = stack.http.post("/v1/graphs", files=files, data={"format": "json"})
    assert response.status_code in (200, 201), response.text
    meta = response.json()
    assert (meta["n"], meta["m"], meta["isolated_nodes"]) == (4, 2, 1)
    assert meta["name"] == "g.json"


@pytest.mark.parametrize(("fmt", "text", "n", "m"), [
    ("metis", "% c\n3 2\n2\n1 3\n2\n", 3, 2),
    ("mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n", 3, 2),
    ("cnp", "3\r\n0: 1 \r\n1: 0 2\r\n2: 1\r\n", 3, 2),
    ("edgelist", "0,1,2.5\n1,2,0.5\n", 3, 2),
])
def test_formats_through_the_api(stack: Stack, fmt: str, text: str, n: int, m: int) -> None:
    for body in (text.encode(), gzip.compress(text.encode())):
        response = stack.http.post("/v1/graphs", params={"format": fmt}, content=body)
        assert response.status_code in (200, 201), response.text
        assert (response.json()["n"], response.json()["m"]) == (n, m)


@pytest.mark.parametrize(("body", "status", "code", "line"), [
    (b"1 2\n3 x4\n", 400, None, 2),
    (b"1 2\n2 3 nan\n", 400, "bad_weight", 2),
    (b"# nothing\n", 400, "empty_graph", None),
    (b"1 2\n3 99999999999999999999\n", 413, "node_id_too_large", 2),
    (b"\x1f\x8b\x08\x00garbage", 400, "bad_gzip", None),
])
def test_bad_uploads_name_the_problem(stack: Stack, body: bytes, status: int, code: str | None,
                                      line: int | None) -> None:
    before = {g["id"] for g in stack.http.get("/v1/graphs").json()["graphs"]}
    response = stack.http.post("/v1/graphs", content=body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["message"]
    if code:
        assert error["code"] == code
    if line:
        assert error["line"] == line
    assert {g["id"] for g in stack.http.get("/v1/graphs").json()["graphs"]} == before
    assert not list((stack.data_dir / "tmp").iterdir())  # nothing half-written left behind


def test_unsupported_media_type_and_format(stack: Stack) -> None:
    response = stack.http.post("/v1/graphs", content=b"1 2", headers={"content-type": "image/png"})
    assert response.status_code == 415
    assert response.json()["error"]["field"] == "Content-Type"
    response = stack.http.post("/v1/graphs", content=b"1 2", params={"format": "xml"})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "format"


def test_upload_over_the_limit_is_413_before_reading(make_stack) -> None:
    small = make_stack(workers=0, max_upload_bytes="64")
    response = small.http.post("/v1/graphs", content=b"1 2\n" * 100)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "upload_too_large"

    def chunks():  # no Content-Length: the limit applies while streaming
        for _ in range(100):
            yield b"1 2\n"
    response = small.http.post("/v1/graphs", content=chunks())
    assert response.status_code == 413


def test_list_get_delete(stack: Stack) -> None:
    meta = stack.upload("100 101\n101 102\n")
    listed = {g["id"] for g in stack.http.get("/v1/graphs").json()["graphs"]}
    assert meta["id"] in listed
    assert stack.http.get(f"/v1/graphs/{meta['id']}").json() == meta
    assert stack.http.delete(f"/v1/graphs/{meta['id']}").status_code == 204
    missing = stack.http.get(f"/v1/graphs/{meta['id']}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert stack.http.delete(f"/v1/graphs/{meta['id']}").status_code == 404


def test_delete_is_409_while_a_job_uses_the_graph(stack: Stack) -> None:
    meta = stack.upload("200 201\n")
    job = stack.submit(meta["id"], "test_sleep", {"seconds": 30}).json()
    response = stack.http.delete(f"/v1/graphs/{meta['id']}")
    assert response.status_code == 409 and response.json()["error"]["code"] == "graph_in_use"
    stack.http.delete(f"/v1/jobs/{job['id']}")
    stack.wait_job(job["id"])
    assert stack.http.delete(f"/v1/graphs/{meta['id']}").status_code == 204


def _generate(stack: Stack, generator: str, **params) -> dict:
    response = stack.http.post("/v1/graphs/generate",
                               json={"generator": generator, "params": params})
    assert response.status_code == 202, response.text
    job = stack.wait_job(response.json()["id"])
    assert job["status"] == "succeeded", job
    return stack.http.get(f"/v1/jobs/{job['id']}/result").json()["summary"]


@pytest.mark.parametrize(("generator", "params"), [
    ("barabasi_albert", {"n": 300, "m": 3}),
    ("watts_strogatz", {"n": 300, "k": 4, "p": 0.1}),
    ("erdos_renyi", {"n": 300, "m": 900}),
    ("rmat", {"scale": 10, "edge_factor": 8}),
    ("grid", {"rows": 7, "cols": 9}),
])
def test_generators_are_deterministic_per_seed(stack: Stack, generator: str, params: dict) -> None:
    first = _generate(stack, generator, seed=7, **params)
    again = _generate(stack, generator, seed=7, **params)
    assert again["graph_id"] == first["graph_id"] and again["created"] is False
    if generator != "grid":
        other = _generate(stack, generator, seed=8, **params)
        assert other["graph_id"] != first["graph_id"]
    meta = stack.http.get(f"/v1/graphs/{first['graph_id']}").json()
    assert meta["source"]["generator"] == generator


def test_generator_params_are_validated(stack: Stack) -> None:
    response = stack.http.post("/v1/graphs/generate",
                               json={"generator": "erdos_renyi", "params": {"n": 10}})
    assert response.status_code == 422
    assert response.json()["error"]["field"].startswith("params")
    response = stack.http.post("/v1/graphs/generate", json={"generator": "nope", "params": {}})
    assert response.status_code == 422 and response.json()["error"]["field"] == "generator"

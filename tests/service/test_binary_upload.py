"""Binary edge uploads (.npz and Parquet columns) through the real API, against text uploads."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, Stack

SRC = np.array([1, 2, 3, 2, 10, 4], np.int64)
DST = np.array([2, 3, 3, 1, 11, 1], np.int64)
WEIGHT = np.array([0.5, 2.0, 1.0, 0.25, 3.0, 1.5])
TEXT = "".join(f"{u} {v} {w!r}\n" for u, v, w in zip(SRC.tolist(), DST.tolist(), WEIGHT.tolist(),
                                                     strict=True))


def npz(compressed: bool = False, **arrays: object) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **arrays)
    return buffer.getvalue()


def parquet(**columns: object) -> bytes:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    return buffer.getvalue()


def edges(stack: Stack, graph_id: str) -> dict[str, np.ndarray]:
    response = stack.http.get(f"/v1/graphs/{graph_id}/edges")
    assert response.status_code == 200, response.text
    with np.load(io.BytesIO(response.content)) as archive:
        return {name: archive[name] for name in archive.files}


def graph_ids(stack: Stack) -> set[str]:
    return {g["id"] for g in stack.http.get("/v1/graphs").json()["graphs"]}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("kind", ["npz", "npz-compressed", "npz-auto", "parquet",
                                  "parquet-auto", "npz-multipart"])
def test_binary_upload_stores_the_graph_the_text_gives(stack: Stack, kind: str, weighted: bool,
                                                       directed: bool) -> None:
    text = TEXT if weighted else "".join(f"{u} {v}\n" for u, v in zip(SRC, DST, strict=True))
    params = {"format": "edgelist", **({"directed": "true"} if directed else {})}
    oracle = stack.http.post("/v1/graphs", content=text.encode(), params=params).json()
    columns = {"src": SRC.astype(np.uint32), "dst": DST.astype(np.int16),
               **({"weight": WEIGHT} if weighted else {})}
    fmt = kind.split("-")[0]
    body = parquet(**columns) if fmt == "parquet" else npz(kind == "npz-compressed", **columns)
    params["format"] = "auto" if kind.endswith("auto") else fmt
    if kind == "npz-multipart":
        response = stack.http.post("/v1/graphs", files={"file": ("g.npz", body)},
                                   data={"format": "npz"},
                                   params={k: v for k, v in params.items() if k != "format"})
    else:
        response = stack.http.post("/v1/graphs", content=body, params=params)
    assert response.status_code == 200, response.text  # the text upload stored it already
    meta = response.json()
    assert meta["id"] == oracle["id"]  # same content, same content address
    assert (meta["n"], meta["m"], meta["directed"]) == (oracle["n"], oracle["m"], directed)
    assert meta["normalization"] == oracle["normalization"]


def test_npz_nodes_and_round_trip_of_downloaded_edges(stack: Stack) -> None:
    meta = stack.upload(npz(src=SRC, dst=DST, weight=WEIGHT, nodes=np.array([40, 41])),
                        format="npz")
    assert (meta["n"], meta["isolated_nodes"], meta["source"]["format"]) == (8, 2, "npz")
    down = edges(stack, meta["id"])
    assert set(down["nodes"].tolist()) == {1, 2, 3, 4, 10, 11, 40, 41}
    again = stack.http.post("/v1/graphs", content=npz(**down))  # the download, uploaded
    assert again.status_code == 200 and again.json()["id"] == meta["id"]


@pytest.mark.parametrize(("body", "code", "field"), [
    (npz(src=SRC), "bad_columns", "dst"),
    (npz(dst=DST), "bad_columns", "src"),
    (npz(src=SRC, dst=DST, extra=SRC), "bad_columns", "extra"),
    (npz(src=SRC.astype(float), dst=DST), "bad_dtype", "src"),
    (npz(src=SRC, dst=np.array(["a"] * 6)), "bad_dtype", "dst"),
    (npz(src=SRC, dst=DST, weight=np.array(["x"] * 6)), "bad_dtype", "weight"),
    (npz(src=SRC, dst=DST, nodes=np.array([0.5])), "bad_dtype", "nodes"),
    (npz(src=SRC, dst=DST[:5]), "bad_length", "dst"),
    (npz(src=SRC, dst=DST, weight=WEIGHT[:2]), "bad_length", "weight"),
    (npz(src=SRC.reshape(2, 3), dst=DST.reshape(2, 3)), "bad_length", "src"),
    (npz(src=-SRC, dst=DST), "bad_node_id", "src"),
    (npz(src=SRC, dst=DST, weight=np.where(WEIGHT > 2, np.inf, WEIGHT)), "bad_weight",
     "weight"),
    (npz(src=np.array([], np.int64), dst=np.array([], np.int64)), "empty_graph", None),
    (b"PK\x03\x04 not really a zip", "bad_npz", None),
])
def test_bad_npz_is_a_400_naming_the_column(stack: Stack, body: bytes, code: str,
                                            field: str | None) -> None:
    before = graph_ids(stack)
    response = stack.http.post("/v1/graphs", content=body, params={"format": "npz"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error.get("field")) == (code, field)
    assert error["message"]
    assert graph_ids(stack) == before  # nothing stored
    assert not list((stack.data_dir / "tmp").iterdir())  # nothing half-written


def test_npz_member_shorter_than_its_header_is_refused(stack: Stack) -> None:
    ids = np.arange(10_000)
    body = npz(src=ids, dst=ids + 1)
    # Both .npy headers declare 100,000 entries (a pad blank less keeps their length).
    forged = body.replace(b"'shape': (10000,), } ", b"'shape': (100000,), }")
    assert forged != body
    response = stack.http.post("/v1/graphs", content=forged, params={"format": "npz"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("bad_length", "src")
    # A small member's header read takes the whole member: its CRC no longer matches.
    small = npz(src=SRC, dst=DST).replace(b"'shape': (6,), } ", b"'shape': (60,), }")
    response = stack.http.post("/v1/graphs", content=small, params={"format": "npz"})
    assert response.status_code == 400, response.text
    assert (response.json()["error"]["code"], response.json()["error"]["field"]) == (
        "bad_npz", "src")


@pytest.mark.parametrize(("columns", "code", "field"), [
    ({"src": SRC}, "bad_columns", "dst"),
    ({"src": SRC.astype(float), "dst": DST}, "bad_dtype", "src"),
    ({"src": SRC, "dst": DST, "weight": ["w"] * 6}, "bad_dtype", "weight"),
    ({"src": [1, None, 3, 2, 10, 4], "dst": DST}, "bad_node_id", "src"),
    ({"src": SRC, "dst": DST, "weight": [1.0, None, 1.0, 1.0, 1.0, 1.0]}, "bad_weight",
     "weight"),
    ({"src": SRC, "dst": -DST}, "bad_node_id", "dst"),
])
def test_bad_parquet_is_a_400_naming_the_column(stack: Stack, columns: dict, code: str,
                                                field: str) -> None:
    before = graph_ids(stack)
    response = stack.http.post("/v1/graphs", content=parquet(**columns),
                               params={"format": "parquet"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["field"]) == (code, field)
    assert graph_ids(stack) == before


def test_npz_over_the_parse_budget_is_refused_before_reading(make_stack) -> None:
    private = make_stack(workers=0, parse_memory_bytes=str(10_000))
    big = np.arange(1000, dtype=np.int64)
    response = private.http.post("/v1/graphs", content=npz(src=big, dst=big + 1),
                                 params={"format": "npz"})
    assert response.status_code == 413, response.text
    error = response.json()["error"]
    assert error["code"] == "insufficient_host_memory"
    assert error["estimate"]["rows"] == 1000


def test_parquet_without_pyarrow_is_a_415(redis_url: str, tmp_path: Path) -> None:
    blocker = tmp_path / "no_pyarrow" / "pyarrow"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('pyarrow hidden by the test')\n")
    private = Stack(redis_url, tmp_path / "data")
    private.env["PYTHONPATH"] = f"{blocker.parent}:{REPO}"
    try:
        private.start_api()
        body = parquet(src=SRC, dst=DST)
        for fmt in ("parquet", "auto"):
            response = private.http.post("/v1/graphs", content=body, params={"format": fmt})
            assert response.status_code == 415, response.text
            error = response.json()["error"]
            assert (error["code"], error["field"]) == ("parquet_unavailable", "format")
            assert "pyarrow" in error["message"]
        ok = private.http.post("/v1/graphs", content=npz(src=SRC, dst=DST))
        assert ok.status_code == 201, ok.text  # npz needs no pyarrow
    finally:
        private.stop()


def test_openapi_declares_the_binary_bodies(stack: Stack) -> None:
    spec = stack.http.get("/openapi.json").json()
    upload = spec["paths"]["/v1/graphs"]["post"]
    assert {"application/x-npz", "application/vnd.apache.parquet"} <= set(
        upload["requestBody"]["content"])
    formats = next(p for p in upload["parameters"] if p["name"] == "format")
    assert "npz" in formats["description"] and "parquet" in formats["description"]

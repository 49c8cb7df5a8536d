"""Large upload bodies read in place (:mod:`graphgpu.service.bodies`), against the API as
``graphgpu serve`` runs it: the same graph as the h11 path stores, the connection closed after
the answer (and the client's next request served), and the body limits kept: a stalled body is
a 408, a client gone mid-body leaves nothing behind, ``Expect: 100-continue`` is answered.

Each test runs on both event loops the API can have: asyncio's writes the socket's bytes into
the body's buffer (``get_buffer``), uvloop hands them over as ``bytes`` (``data_received``;
uploads through it stalled until the protocol copied them into the buffer itself).
"""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from graphgpu.client import Client
from graphgpu.service.bodies import DIRECT_BODY_BYTES
from tests.conftest import Stack
from tests.reliability.conftest import GuardedStack

MIB = 1024**2
LIMITS = {"max_upload_bytes": str(16 * MIB), "body_idle_timeout_seconds": "2",
          "body_min_bytes_per_second": "1024", "stored_bytes_per_upload_byte": "0"}


@pytest.fixture(scope="module", params=["asyncio", "uvloop"])
def api(request: pytest.FixtureRequest, redis_url: str,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = GuardedStack(redis_url, tmp_path_factory.mktemp("bodies"), api_loop=request.param,
                         **LIMITS)
    try:
        stack.start_api()
        yield stack
    finally:
        stack.stop()


def edge_text(m: int, seed: int) -> bytes:
    """``m`` random ``u v`` lines over 50,000 nodes."""
    ends = np.random.default_rng(seed).integers(0, 50_000, size=(m, 2))
    return "".join(f"{u} {v}\n" for u, v in ends.tolist()).encode()


def head(port: int, length: int, *extra: str) -> bytes:
    lines = ["POST /v1/graphs HTTP/1.1", f"Host: 127.0.0.1:{port}",
             "Content-Type: text/plain", f"Content-Length: {length}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer_of(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    answer = b""
    while part := sock.recv(65536):
        answer += part
    return answer


def graph_ids(api: Stack) -> set[str]:
    return {graph["id"] for graph in api.http.get("/v1/graphs").json()["graphs"]}


def test_large_body_is_stored_as_the_h11_path_stores_it(api: Stack) -> None:
    text = edge_text(400_000, seed=1)
    assert len(text) > 2 * DIRECT_BODY_BYTES
    with httpx.Client(base_url=api.base_url, timeout=60) as http:
        direct = http.post("/v1/graphs", content=text)
        assert direct.status_code == 201, direct.text[:300]
        assert direct.headers["connection"] == "close"  # h11 never saw the body
        # The same bytes chunked (no length declared: the h11 path) and as a multipart file
        # (read in place, then parsed as a form) are the same graph.
        chunked = http.post("/v1/graphs", content=iter([text[:12345], text[12345:]]))
        assert chunked.status_code == 200 and "connection" not in chunked.headers
        form = http.post("/v1/graphs", files={"file": ("g.txt", text)}, data={"name": "g"})
        assert form.status_code == 200, form.text[:300]
        assert direct.json()["id"] == chunked.json()["id"] == form.json()["id"]
        assert http.get("/v1/graphs").status_code == 200  # a new connection after the close


def test_sdk_uploads_in_a_row_on_one_client(api: Stack) -> None:
    rng = np.random.default_rng(2)
    src, dst = rng.integers(0, 10**6, 200_000), rng.integers(0, 10**6, 200_000)
    with Client(api.base_url) as client:
        first = client.upload_edges(src, dst)
        again = client.upload_edges(src, dst)
        text = client.upload(io.BytesIO(edge_text(300_000, seed=3)))  # a file: sent chunked
        assert first.created and not again.created and first.id == again.id
        ends = np.sort(np.column_stack([src, dst])[src != dst], axis=1)
        assert first.m == len(np.unique(ends, axis=0))
        assert text.created and client.graph(text.id).m == text.m


def test_stalled_large_body_is_a_408_and_a_gone_client_stores_nothing(api: Stack) -> None:
    before = graph_ids(api)
    length = 4 * MIB
    with socket.create_connection(("127.0.0.1", api.port), timeout=20) as sock:
        sock.sendall(head(api.port, length) + b"0 1\n" * (MIB // 4))  # a quarter, then nothing
        answer = answer_of(sock)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    error = json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["code"] == "body_timeout"
    with socket.create_connection(("127.0.0.1", api.port), timeout=20) as sock:
        sock.sendall(head(api.port, length) + b"0 1\n" * (MIB // 2))  # half, then gone
    assert graph_ids(api) == before
    assert api.upload("1 2\n2 3\n")["n"] == 3  # still serving


def test_expect_100_continue_is_answered(api: Stack) -> None:
    text = edge_text(300_000, seed=4)
    with socket.create_connection(("127.0.0.1", api.port), timeout=20) as sock:
        sock.sendall(head(api.port, len(text), "Expect: 100-continue"))
        interim = sock.recv(65536)
        assert interim.startswith(b"HTTP/1.1 100"), interim
        sock.sendall(text)
        answer = answer_of(sock)
    assert answer.startswith(b"HTTP/1.1 201"), answer[:300]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["m"] > 0

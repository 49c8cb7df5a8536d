"""Limits before work (issue 28, items 1-6, 9, 10): each red-team repro, scaled down, against the
API as ``graphgpu serve`` runs it (connection limits included), real Redis and a real worker.

Every test here failed on the code before these limits: the 4,301-digit integer was a 500 that
reset the connection; bodies without a key were read whole before their 401; slow bodies and
slow headers held their connections forever; a gzip bomb inflated up to the parse budget; a
15-byte CNP file stored a graph of gigabytes; edge downloads had no concurrency limit; worker
names showed hosts and pids; params had no size limit.
"""

from __future__ import annotations

import gzip
import io
import json
import socket
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from tests.conftest import Stack, wait_until
from tests.reliability.conftest import GuardedStack, peak_rss, reset_peak_rss, rss

MIB = 1024**2
KEYS = {"alice-key": "alice", "bob-key": "bob", "carol-key": "carol",
        "root-key": {"tenant": "ops", "admin": True}}
LIMITS = {
    "api_keys": json.dumps(KEYS),
    "max_upload_bytes": str(4 * MIB),
    "max_json_body_bytes": str(64 * 1024),
    "max_params_bytes": str(8 * 1024),
    "body_idle_timeout_seconds": "2",
    "body_min_bytes_per_second": "1024",
    "header_timeout_seconds": "2",
    "max_connections_per_client": "8",
    "max_connections": "64",
    "max_concurrent_downloads": "1",
    "max_tenant_stored_bytes": str(2 * MIB),
    # A budget far above the bombs below: the inflation-ratio cap is what must stop them.
    "parse_memory_bytes": str(4 * 1024**3),
}
#: Where the slow clients come from (all of 127/8 is loopback): the probes stay on 127.0.0.1.
SLOW_CLIENT = "127.0.0.2"


@pytest.fixture(scope="module")
def api(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    stack = GuardedStack(redis_url, tmp_path_factory.mktemp("before-work"), **LIMITS)
    stack.http.headers["Authorization"] = "Bearer root-key"  # start_worker reads worker pids
    try:
        stack.start_api()
        stack.start_worker()
        # ready once the API has loaded its upload path too (it starts when a worker is live)
        wait_until(lambda: stack.http.get("/v1/ready").status_code == 200, timeout=30)
        stack.http.headers["Authorization"] = "Bearer alice-key"
        yield stack
    finally:
        stack.stop()


def error_of(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, (response.status_code, response.text[:300])
    body = response.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    return body["error"]


def raw_request(port: int, head: str, body: bytes = b"", source: str = "127.0.0.1",
                timeout: float = 10.0) -> bytes:
    """Send a request's head and the start of its body on a new socket; the answer, read until
    the server closes the connection (b"" when it closes without one)."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as sock:
        sock.sendall(head.encode() + b"\r\n\r\n" + body)
        try:
            while len(answer) < 65536 and (part := sock.recv(4096)):
                answer += part
        except ConnectionResetError:
            pass
    return answer


def test_integer_of_4301_digits_is_a_400_and_the_connection_lives_on(api: Stack) -> None:
    big = "1" * 4301
    with httpx.Client(base_url=api.base_url, headers=api.http.headers) as client:
        for _ in range(3):  # the same keep-alive connection each time
            response = client.post("/v1/graphs", params={"format": "json"},
                                   content=f'{{"edges": [[0, 1], [1, {big}]]}}')
            error = error_of(response, 400)
            assert error["code"] == "bad_json" and "4300" in error["message"]
            assert client.get("/v1/algorithms").status_code == 200
        response = client.post("/v1/jobs", content=f'{{"graph_id": "x", "algorithm": "bfs", '
                               f'"params": {{"source": {big}}}}}',
                               headers={"Content-Type": "application/json"})
        assert 400 <= response.status_code < 500, response.text[:300]
        assert client.get("/v1/algorithms").status_code == 200


def test_bodies_are_refused_before_they_are_read(api: Stack) -> None:
    assert api.api is not None
    before = rss(api.api.pid)
    gib_head = ("POST /v1/jobs HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                f"Content-Length: {1024**3}")
    # No key, a 1 GiB body announced, 64 KiB sent: the 401 comes without the rest.
    for head in (gib_head, gib_head + "\r\nAuthorization: Bearer wrong"):
        answer = raw_request(api.port, head, b"x" * 65536)
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    # A valid key: 413 from the declared length (JSON route) ...
    answer = raw_request(api.port, gib_head + "\r\nAuthorization: Bearer alice-key", b"x" * 100)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"GRAPHGPU_MAX_JSON_BODY_BYTES" in answer
    # ... and the upload route's own, larger limit.
    answer = raw_request(api.port, gib_head.replace("/v1/jobs", "/v1/graphs")
                         + "\r\nAuthorization: Bearer alice-key", b"0 1\n")
    assert answer.startswith(b"HTTP/1.1 413") and b"GRAPHGPU_MAX_UPLOAD_BYTES" in answer
    # A chunked body (no length declared) is counted as it comes: 413 past the limit.

    def chunks() -> Iterator[bytes]:  # 80 KiB: all in the socket buffers before the 413
        for _ in range(20):
            yield b" " * 4096

    error = error_of(api.http.post("/v1/jobs", content=chunks(),
                                   headers={"Content-Type": "application/json"}), 413)
    assert error["code"] == "body_too_large"
    assert rss(api.api.pid) - before < 64 * MIB
    assert api.http.get("/v1/algorithms").status_code == 200


def test_slow_clients_are_cut_off_and_cannot_starve_ready(api: Stack) -> None:
    """A bounded slowloris from one address, against ``max_connections_per_client=8`` and
    2-second header and body timeouts: 8 connections get in (6 sending a body a byte a second,
    2 their headers), 32 more are closed at once, and ``/v1/ready`` answers throughout."""
    def connect() -> socket.socket:
        return socket.create_connection(("127.0.0.1", api.port), timeout=1,
                                        source_address=(SLOW_CLIENT, 0))

    admitted = [connect() for _ in range(8)]
    extra = [connect() for _ in range(32)]
    head = (b"POST /v1/jobs HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer alice-key\r\n"
            b"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n")
    for sock in admitted[:6]:
        sock.sendall(head)
    for sock in admitted[6:]:  # headers begun, one more space of a header value a second
        sock.sendall(b"GET /v1/ready HTTP/1.1\r\nHost: t\r\nX-Slow: a")

    def drip(sock: socket.socket) -> bytes:
        """A byte a second until the server answers or closes (30 s at most)."""
        with sock:
            for _ in range(30):
                try:
                    sock.sendall(b" ")
                    answer = sock.recv(4096)
                    while answer and (part := sock.recv(4096)):
                        answer += part  # the rest of the answer, up to the close
                    return answer
                except TimeoutError:
                    continue
                except OSError:
                    return b""
        return b"still open"

    def closed(sock: socket.socket) -> bool:
        with sock:
            try:
                return sock.recv(1) == b""
            except ConnectionResetError:
                return True
            except TimeoutError:
                return False

    with ThreadPoolExecutor(8) as pool:
        answers = pool.map(drip, admitted)
        ready = []
        for _ in range(10):
            with httpx.Client(base_url=api.base_url, timeout=5) as probe:
                ready.append(probe.get("/v1/ready").status_code)
            time.sleep(0.3)
        answers = list(answers)
    assert set(ready) == {200}, ready
    assert all(closed(sock) for sock in extra)
    for answer in answers[:6]:  # slow bodies: 408 (too slow)
        assert answer.startswith(b"HTTP/1.1 408") and b"body_too_slow" in answer, answer[:200]
    assert answers[6:] == [b"", b""]  # slow headers: closed without an answer


def multi_member_bomb(gib: float) -> bytes:
    """``gib`` GiB of zero bytes, gzip'd as repeated 64 MiB members (about 1 MB a GiB): no line
    breaks, so no row estimate stops it before the text itself does."""
    member = zlib.compressobj(9, zlib.DEFLATED, 31)
    one = member.compress(b"\0" * (64 * MIB)) + member.flush()
    return one * int(gib * 16)


def test_gzip_bomb_is_stopped_by_its_ratio_and_memory_comes_back(api: Stack) -> None:
    assert api.api is not None
    body = multi_member_bomb(3)  # 3 GiB from about 3 MB
    before = rss(api.api.pid)
    reset_peak_rss(api.api.pid)
    error = error_of(api.http.post("/v1/graphs", content=body), 413)
    assert error["code"] == "decompressed_too_large"
    assert "GRAPHGPU_MAX_INFLATION_RATIO" in error["message"]
    # Refused after 64 MiB + 100 x 3 MB of text (not the 3 GiB), and given back afterwards.
    peak = peak_rss(api.api.pid) - before
    print(f"3 GiB gzip bomb ({len(body) / MIB:.1f} MiB): API peak +{peak / MIB:.0f} MiB")
    assert peak < 600 * MIB, f"the API grew by {peak / MIB:.0f} MiB"
    wait_until(lambda: rss(api.api.pid) < before + 100 * MIB, timeout=10, every=0.5)
    assert api.upload(PATH_BYTES)["n"] == 7


PATH_BYTES = b"10 20\n20 30\n30 40\n20 50\n60 70\n"


@pytest.mark.parametrize(("fmt", "body"), [
    ("cnp", b"20000000\n0: 1\n"),
    ("mtx", b"%%MatrixMarket matrix coordinate pattern general\n20000000 20000000 1\n1 2\n"),
])
def test_declared_nodes_are_bounded_by_the_upload(api: Stack, fmt: str, body: bytes) -> None:
    for upload in (body, gzip.compress(body)):
        error = error_of(api.http.post("/v1/graphs", content=upload, params={"format": fmt}),
                         413)
        assert error["code"] == "graph_too_sparse" and error["line"] >= 1
        assert "GRAPHGPU_STORED_BYTES_PER_UPLOAD_BYTE" in error["message"]
    small = body.replace(b"20000000", b"1000", 2)
    assert api.http.post("/v1/graphs", content=small, params={"format": fmt}).status_code in (
        200, 201)


def test_tenant_quota(api: Stack) -> None:
    bob = httpx.Client(base_url=api.base_url, headers={"Authorization": "Bearer bob-key"},
                       timeout=30)
    with bob:
        # About 1.2 MB stored each (100k nodes on a path): one fits under 2 MiB, two do not.
        first = "".join(f"{i} {i + 1}\n" for i in range(60_000)).encode()
        second = "".join(f"{i} {i + 2}\n" for i in range(60_000)).encode()
        assert bob.post("/v1/graphs", content=first).status_code == 201
        error = error_of(bob.post("/v1/graphs", content=second), 507)
        assert error["code"] == "storage_quota_exceeded"
        assert bob.post("/v1/graphs", content=first).status_code == 200  # held: no more bytes
        alice = api.http.post("/v1/graphs", content=second)  # another tenant's quota
        assert alice.status_code in (200, 201), alice.text[:300]


def test_edges_are_streamed_with_a_download_limit(api: Stack) -> None:
    carol = {"Authorization": "Bearer carol-key"}
    job = api.http.post("/v1/graphs/generate", headers=carol, json={
        "generator": "erdos_renyi", "params": {"n": 200_000, "m": 2_000_000, "seed": 1}})
    assert job.status_code == 202, job.text[:300]
    done = wait_until(lambda: (r := api.http.get(f"/v1/jobs/{job.json()['id']}", headers=carol)
                               .json())["status"] in ("succeeded", "failed") and r, timeout=120)
    assert done["status"] == "succeeded", done
    result = api.http.get(f"/v1/jobs/{done['id']}/result", headers=carol).json()
    graph_id = result["summary"]["graph_id"]
    meta = api.http.get(f"/v1/graphs/{graph_id}", headers=carol).json()
    edges_url = f"/v1/graphs/{graph_id}/edges"
    with httpx.Client(base_url=api.base_url, headers=carol, timeout=30) as client:
        # A reader of 64 KiB of receive buffer (no autotuning up to rmem_max, 32 MB here: the
        # ~33 MB .npz would fit), started and left unread: its download holds the one slot.
        with socket.socket() as held:
            held.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            held.settimeout(10)
            held.connect(("127.0.0.1", api.port))
            held.sendall(f"GET {edges_url} HTTP/1.1\r\nHost: t\r\n"
                         "Authorization: Bearer carol-key\r\n\r\n".encode())
            assert held.recv(65536).startswith(b"HTTP/1.1 200")
            busy = api.http.get(edges_url, headers=carol)
            error = error_of(busy, 429)
            assert error["code"] == "too_many_downloads" and int(busy.headers["retry-after"]) > 0
        assert api.api is not None
        before = rss(api.api.pid)
        reset_peak_rss(api.api.pid)
        response = wait_until(lambda: (r := client.get(edges_url)).status_code == 200 and r,
                              timeout=10, every=0.2)
        peak = peak_rss(api.api.pid) - before
    print(f"edges of {meta['m']:,} edges: API peak +{peak / MIB:.0f} MiB")
    assert peak < 64 * MIB, f"the API grew by {peak / MIB:.0f} MiB for one download"
    edges = np.load(io.BytesIO(response.content))
    assert edges["src"].size == edges["dst"].size == meta["m"]
    assert (edges["src"] < edges["dst"]).all() and edges["nodes"].size == meta["n"]


def test_worker_names_tell_no_host_or_pid(api: Stack) -> None:
    shown = api.http.get("/v1/workers").json()["workers"]
    full = api.http.get("/v1/workers", headers={"Authorization": "Bearer root-key"}).json()
    (worker,) = full["workers"]
    assert str(worker["pid"]) in worker["name"]  # what an admin sees (RQ's name)
    (opaque,) = shown
    assert opaque["host"] is None and opaque["pid"] is None
    assert str(worker["pid"]) not in opaque["name"] and worker["host"] not in opaque["name"]
    assert api.http.get("/v1/workers").json()["workers"][0]["name"] == opaque["name"]


def test_params_are_bounded(api: Stack) -> None:
    graph = api.upload(PATH_BYTES)["id"]
    huge = {str(i): 1.0 for i in range(2_000_000)}  # the red team's 29.5 MB personalization
    body = json.dumps({"graph_id": graph, "algorithm": "pagerank",
                       "params": {"personalization": huge}}).encode()
    answer = raw_request(api.port, "POST /v1/jobs HTTP/1.1\r\nHost: t\r\n"
                         "Authorization: Bearer alice-key\r\nContent-Type: application/json"
                         f"\r\nContent-Length: {len(body)}", body[:65536])
    assert answer.startswith(b"HTTP/1.1 413") and b"body_too_large" in answer, answer[:200]
    large = {str(i): 1.0 for i in range(1000)}  # 14 KB: under the body limit, over the params'
    error = error_of(api.submit(graph, "pagerank", {"personalization": large}), 413)
    assert error["code"] == "params_too_large" and error["field"] == "params"
    fits = {str(i): 1.0 for i in (10, 20, 30)}
    accepted = api.submit(graph, "pagerank", {"personalization": fits})
    assert accepted.status_code == 202, accepted.text[:300]
    page = api.http.get("/v1/jobs", params={"limit": 1000})
    assert len(page.content) <= 1000 * (8 * 1024 + 4096)

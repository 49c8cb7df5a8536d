"""No upload may exhaust the host: bombs and huge declared sizes are refused (413 with the
estimate) before the memory is taken, and the API's peak memory stays small.

Real processes: redis-server and the API over HTTP; the API's peak resident memory (``VmHWM``)
is read from /proc. The parse budget is set explicitly so that the test does not depend on the
machine's RAM (the default is a quarter of it).
"""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.conftest import PLUGIN, Stack
from tests.reliability.conftest import PATH_WITH_TAIL, peak_rss

BUDGET = 256 * 1024**2
MIB = 1024**2
PLUGINS = f'["{PLUGIN}", "tests.reliability.plugins"]'


def bomb(gib: int) -> bytes:
    """``gib`` GiB of ``0 1\\n`` lines, gzip'd (about 1 MB a GiB)."""
    block = b"0 1\n" * (1 << 18)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join([*(packer.compress(block) for _ in range(1024 * gib)), packer.flush()])


@pytest.fixture(scope="module")
def api(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # Neither the inflation-ratio cap nor the stored-bytes bound: the bombs and declared sizes
    # here test the parse budget (test_limits_before_work tests those two).
    stack = Stack(redis_url, tmp_path_factory.mktemp("memory"), parse_memory_bytes=str(BUDGET),
                  max_inflation_ratio="0", stored_bytes_per_upload_byte="0")
    stack.start_api()
    yield stack
    stack.stop()


def refused(api: Stack, body: bytes, **params: str) -> dict:
    response = api.http.post("/v1/graphs", content=body, params=params)
    assert response.status_code == 413, response.text[:300]
    error = response.json()["error"]
    assert error["code"] == "insufficient_host_memory", error
    assert error["estimate"]["host_bytes"] > error["estimate"]["budget_bytes"] == BUDGET
    return error


def test_gzip_bomb_is_refused_in_bounded_memory(api: Stack) -> None:
    assert api.api is not None
    body = bomb(1)
    assert len(body) < 2 * MIB
    error = refused(api, body)
    assert "gzip" in error["message"]
    # several at once: only a few parses may hold a budget's worth together
    with ThreadPoolExecutor(6) as pool:
        errors = list(pool.map(lambda _: refused(api, body), range(6)))
    assert all("gzip" in e["message"] for e in errors)
    peak = peak_rss(api.api.pid)
    print(f"API peak RSS after 7 gzip bombs of 1 GiB (6 at once): {peak / MIB:.0f} MiB")
    # The refusal came after at most a budget's worth of text (never the whole GiB).
    assert peak < 4 * BUDGET, f"the API peaked at {peak / MIB:.0f} MiB"
    assert api.upload(PATH_WITH_TAIL)["n"] == 7  # still serving


@pytest.mark.parametrize(("fmt", "body"), [
    ("cnp", b"200000000\n0: 1\n"),
    ("mtx", b"%%MatrixMarket matrix coordinate pattern general\n100000000 100000000 1\n1 2\n"),
    ("metis", b"100000000 1000000000\n2\n1\n"),
])
def test_declared_sizes_past_the_budget_are_refused_at_once(api: Stack, fmt: str,
                                                            body: bytes) -> None:
    assert api.api is not None
    start = time.monotonic()
    for upload in (body, gzip.compress(body)):
        refused(api, upload, format=fmt)
    assert time.monotonic() - start < 10  # once: 73 s and 8 GB for the CNP one
    assert peak_rss(api.api.pid) < 4 * BUDGET


def test_large_plain_upload_past_the_budget_is_refused(api: Stack) -> None:
    body = b"0 1\n" * (BUDGET // 64)  # 16 MiB of text, 4 M edge rows: ~530 MB to parse
    error = refused(api, body)
    assert error["estimate"]["rows"] >= BUDGET // 64
    assert api.http.post("/v1/graphs", content=b"0 1\n" * 1000).status_code in (200, 201)


def test_jobs_past_the_workers_memory_are_refused(make_stack) -> None:
    stack = make_stack(workers=1, extra_algorithm_modules=PLUGINS)
    (worker,) = stack.live_workers()
    assert worker["host_free_bytes"] > 0
    graph = stack.upload(PATH_WITH_TAIL)["id"]
    refused = stack.submit(graph, "test_hungry", {"claimed_host_bytes": 10**15})
    assert refused.status_code == 413, refused.text
    error = refused.json()["error"]
    assert error["code"] == "insufficient_host_memory"
    assert error["estimate"]["host_bytes"] == 10**15
    default = stack.submit(graph, "test_hungry", {})  # the service's default estimate: fits
    assert default.status_code == 202, default.text
    assert stack.wait_job(default.json()["id"])["status"] == "succeeded"
    for generator, params in (("watts_strogatz", {"n": 200_000_000, "k": 20, "p": 0.1}),
                              ("erdos_renyi", {"n": 200_000_000, "m": 2_000_000_000})):
        response = stack.http.post("/v1/graphs/generate", json={
            "generator": generator, "params": {**params, "seed": 1}})
        assert response.status_code == 413, response.text[:300]
        error = response.json()["error"]
        assert error["code"] == "insufficient_host_memory"
        assert error["estimate"]["host_bytes"] > worker["host_free_bytes"]
    small = stack.http.post("/v1/graphs/generate", json={
        "generator": "erdos_renyi", "params": {"n": 1000, "m": 5000, "seed": 1}})
    assert small.status_code == 202, small.text
    assert 0 < small.json()["estimate"]["host_bytes"] < 10 * MIB
    assert stack.wait_job(small.json()["id"])["status"] == "succeeded"

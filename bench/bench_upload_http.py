"""Uploads through the service (issue 23): MB/s of ``POST /v1/graphs`` sent by the SDK, beside
the same upload in process and the peers on the same bytes.

Starts a redis-server and the API alone (``uvicorn`` with the protocol class and limits that
``graphgpu serve`` gives it; uploads need no worker) on a free port and a data folder of its
own, then times, per body kind, ``--repeat`` uploads after one warm-up, each a graph not stored
before (ids shifted), so that no upload is answered by an earlier one's content id:

* text: an R-MAT edge list (``bench_parse``'s, Graph500 a=0.57, b=c=0.19, scale 22) sent by
  ``Client.upload(bytes)``; peer ``pyarrow.csv.read_csv`` of the same bytes (issue 23: the
  upload <= 2.5x it on the 2-core VM, >= 200 MB/s on the GPU host);
* npz: ``Client.upload_edges(src, dst)`` (what the SDK sends for NumPy, pandas and NetworkX
  graphs: an uncompressed ``.npz`` built on the client), MB/s of the int64 ids; peer
  ``numpy.load`` of such an npz (goal: >= 1 GB/s on the GPU host);
* parquet: ``Client.upload(body, format="parquet")``; peer ``pyarrow.parquet.read_table``.

Beside each, the in-process row: ``parse_graph`` + ``build_graph`` + ``GraphStore.put`` of the
same body in this process (what the route does once the body is read), so the gap between the
two rows is what HTTP costs.

Run: ``python bench/bench_upload_http.py [--mb 100] [--repeat 3] [--kinds text,npz,parquet]
[--out FILE]``.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.bench_parse import (  # noqa: E402
    format_edges,
    peer_npz,
    peer_parquet,
    rmat_edges,
    upload_seconds,
)
from bench.common import write_out  # noqa: E402
from bench.table import print_table  # noqa: E402
from graphgpu.client import Client  # noqa: E402
from graphgpu.client.bodies import npz_pieces  # noqa: E402
from graphgpu.client.edgetable import edge_columns  # noqa: E402
from graphgpu.kernels.core.settings import Settings  # noqa: E402
from graphgpu.kernels.core.store import GraphStore  # noqa: E402
from graphgpu.service.redis_server import RedisServer, free_port  # noqa: E402
from graphgpu.service.serve import api_command  # noqa: E402

SCALE = 22
KINDS = ("text", "npz", "parquet")


@contextmanager
def api_service(folder: Path) -> Iterator[str]:
    """A redis-server and the API (as ``graphgpu serve`` starts it, no workers) on ``folder``;
    yields the API's URL and stops both however the block ends."""
    redis = RedisServer(folder / "redis")
    api = None
    try:
        env = {**os.environ, "GRAPHGPU_REDIS_URL": redis.start(),
               "GRAPHGPU_DATA_DIR": str(folder / "data"), "GRAPHGPU_PORT": str(free_port()),
               "GRAPHGPU_MAX_UPLOAD_BYTES": str(4 << 30), "GRAPHGPU_LOG_FORMAT": "text"}
        settings = Settings(port=int(env["GRAPHGPU_PORT"]))
        with (folder / "api.log").open("ab") as log:
            api = subprocess.Popen(api_command(sys.executable, settings), env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{settings.port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if api.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the API did not start: {(folder / 'api.log').read_text()}")
            time.sleep(0.1)
        yield url
    finally:
        if api is not None:
            api.terminate()
            api.wait(30)
        redis.stop()


@dataclass
class Kind:
    """One body kind: its label and size, and per round ``k`` what the SDK is given
    (``made(k)``, made before the clock starts), its HTTP upload (``send``), the in-process
    body (with its format) and the peer."""

    label: str
    m: int
    mb: float
    made: Callable[[int], Any]
    send: Callable[[Any], object]
    local: Callable[[int], bytes]
    fmt: str
    peer: Callable[[], object] | None  # None: pyarrow missing (the device image has none)
    peer_name: str
    against_arrow: bool = False


def measure(kind: Kind, repeat: int, store: GraphStore, settings: Settings) -> list[dict]:
    """The HTTP and in-process rows of ``kind``: rounds of HTTP upload, in-process upload and
    peer in turn (the VM's load moves 2-3x within a minute: each round sees the same), medians
    of rounds 1..repeat after round 0 (warm-up: first parse, first-touch page faults)."""
    http, local, peer, graph = [], [], [], None
    for k in range(repeat + 1):
        given = kind.made(k)
        start = time.perf_counter()
        kind.send(given)
        del given
        http.append(time.perf_counter() - start)
        seconds, graph = upload_seconds([kind.local(k)], kind.fmt, settings, store)
        local.append(seconds)
        if kind.peer is not None:
            start = time.perf_counter()
            kind.peer()
            peer.append(time.perf_counter() - start)
    peer_s = statistics.median(peer[1:]) if peer else None
    rows = []
    for what, times in (("HTTP", http), ("in process", local)):
        seconds = statistics.median(times[1:])
        ratio = None if peer_s is None else (
            f"ours/pyarrow {seconds / peer_s:.2f}x" if kind.against_arrow
            else f"{seconds / peer_s:.2f}x")
        rows.append({"graph": kind.label, "n": graph.n, "m": kind.m,
                     "backend": f"cpu ({what}: {kind.fmt})", "time_ms": seconds * 1e3,
                     "throughput": f"{kind.mb / seconds:,.0f} MB/s",
                     "peer": kind.peer_name if peer_s is not None else "pyarrow not installed",
                     "peer_ms": None if peer_s is None else peer_s * 1e3, "ratio": ratio})
    return rows


def text_kind(client: Client, src: np.ndarray, dst: np.ndarray) -> Kind:
    text = format_edges(src, dst)
    top = int(max(src.max(), dst.max())) + 1

    def body(k: int) -> bytes:  # one more edge of new nodes: a graph not stored before
        return text + f"{top + 2 * k} {top + 2 * k + 1}\n".encode()

    return Kind(f"rmat-s{SCALE} text {len(text) / 1e6:.0f} MB", len(src), len(text) / 1e6,
                lambda k: body(1000 + k), lambda data: client.upload(data, format="edgelist"),
                lambda k: body(2000 + k), "edgelist", arrow_reader(text),
                "pyarrow.csv.read_csv (multi-threaded)", against_arrow=True)


def npz(src: np.ndarray, dst: np.ndarray) -> bytes:
    """The SDK's npz body of the edges, joined (the in-process upload and the peer read it)."""
    return b"".join(npz_pieces(edge_columns(src, dst)))


def npz_kind(client: Client, src: np.ndarray, dst: np.ndarray) -> Kind:
    raw = (src.nbytes + dst.nbytes) / 1e6
    return Kind(f"rmat-s{SCALE} int64 ids {raw:.0f} MB (SDK upload_edges)", len(src), raw,
                lambda k: (src + 1000 + k, dst + 1000 + k),
                lambda ends: client.upload_edges(*ends),
                lambda k: npz(src + 2000 + k, dst + 2000 + k), "npz",
                peer_npz(npz(src, dst)), "numpy.load (npz arrays only)")


def parquet_kind(client: Client, src: np.ndarray, dst: np.ndarray) -> Kind | None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None

    def body(shift: int) -> bytes:
        buffer = io.BytesIO()
        pq.write_table(pa.table({"src": src + shift, "dst": dst + shift}), buffer)
        return buffer.getvalue()

    first = body(0)
    return Kind(f"rmat-s{SCALE} parquet {len(first) / 1e6:.0f} MB", len(src), len(first) / 1e6,
                lambda k: body(1000 + k), lambda data: client.upload(data, format="parquet"),
                lambda k: body(2000 + k), "parquet", peer_parquet(first),
                "pyarrow.parquet.read_table")


def arrow_reader(text: bytes) -> Callable[[], object] | None:
    """``pyarrow.csv.read_csv`` of the tab-separated edge list ``text`` (its comment line
    skipped: pyarrow has no comment option), as ``bench_parse`` times it; None without
    pyarrow."""
    try:
        from pyarrow import csv
    except ImportError:
        return None

    body = memoryview(text)[text.index(b"\n") + 1:] if text.startswith(b"#") else text
    options = {"read_options": csv.ReadOptions(column_names=["u", "v"]),
               "parse_options": csv.ParseOptions(delimiter="\t"),
               "convert_options": csv.ConvertOptions(column_types={"u": "int64", "v": "int64"})}
    return lambda: csv.read_csv(io.BytesIO(body), **options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0, help="edge-list text size, MB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kinds", default=",".join(KINDS), help="of text, npz, parquet")
    parser.add_argument("--out", type=Path, help="also write the table here (markdown)")
    args = parser.parse_args(argv)
    src, dst = rmat_edges(SCALE, int(args.mb * 1e6 / 15.4))  # ~15.4 bytes a line
    settings = Settings()
    makers = {"text": text_kind, "npz": npz_kind, "parquet": parquet_kind}
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as folder, api_service(Path(folder)) as url, \
            Client(url, timeout=None) as client:
        store = GraphStore(Path(folder) / "local" / "graphs", Path(folder) / "local" / "tmp")
        for name in args.kinds.split(","):
            kind = makers[name](client, src, dst)
            if kind is not None:  # parquet needs pyarrow
                rows += measure(kind, args.repeat, store, settings)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = print_table(rows, f"uploads through HTTP ({platform.processor() or platform.machine()}, "
                       f"{len(os.sched_getaffinity(0))} cores, load {load}; median of "
                       f"{args.repeat} after a warm-up)")
    write_out(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Upload throughput: ``parse_graph`` and the whole upload on a synthetic SNAP edge list, text
and binary (~150 MB of text).

Run as ``.venv/bin/python bench/bench_parse.py [--mb 150] [--repeat 3]``. The text is an R-MAT
edge list (Graph500 a=0.57, b=c=0.19, fixed seed) formatted with vectorised NumPy, so building it
takes seconds. Rows:

* parse: ``parse_graph`` of the text; peers ``numpy.loadtxt`` timed on a 1/10 slice and scaled
  up linearly, which the table says, and ``pyarrow.csv.read_csv`` of the whole text (when
  pyarrow is installed);
* upload (text, npz, parquet): what ``POST /v1/graphs`` does once the body is read,
  ``parse_graph`` + ``build_graph`` + ``GraphStore.put`` into a fresh store (content id and
  ``.npy`` files), each run a new graph (the ids shifted); throughput is MB of the body a
  second. The text upload's peer is ``pyarrow.csv.read_csv`` (issue 23's goal: ours/pyarrow
  <= 2.5x on the 2-core VM), the npz upload's ``numpy.load`` of its arrays, the Parquet
  upload's ``pyarrow.parquet.read_table``.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench.table import print_table  # noqa: E402
from graphgpu.kernels.core.graph import build_graph  # noqa: E402
from graphgpu.kernels.core.io.formats import parse_graph  # noqa: E402
from graphgpu.kernels.core.settings import Settings  # noqa: E402
from graphgpu.kernels.core.store import GraphStore  # noqa: E402


def rmat_edges(scale: int, m: int, seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    """R-MAT endpoints in ``0..2**scale-1``, one quadrant choice per bit level."""
    rng = np.random.default_rng(seed)
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for _ in range(scale):
        r = rng.random(m)
        src = 2 * src + (r >= 0.76)  # quadrants c, d: a=0.57, b=0.19, c=0.19, d=0.05
        dst = 2 * dst + (((r >= 0.57) & (r < 0.76)) | (r >= 0.95))
    return src, dst


def format_edges(src: np.ndarray, dst: np.ndarray) -> bytes:
    """``"u\\tv\\n"`` lines without a Python loop: digits into a byte matrix, then compress."""
    width = len(str(int(max(src.max(), dst.max()))))
    pow10 = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)

    def digits(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = (x[:, None] // pow10) % 10
        keep = (x[:, None] >= pow10) | (pow10 == 1)  # drop leading zeros, keep a lone 0
        return (d + 48).astype(np.uint8), keep

    du, ku = digits(src)
    dv, kv = digits(dst)
    m = src.shape[0]
    sep = np.full((m, 1), ord("\t"), np.uint8)
    eol = np.full((m, 1), ord("\n"), np.uint8)
    ones = np.ones((m, 1), bool)
    chars = np.hstack([du, sep, dv, eol])
    keep = np.hstack([ku, ones, kv, ones])
    return b"# synthetic R-MAT edge list\n" + chars[keep].tobytes()


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def arrow_seconds(text: bytes, repeat: int) -> float | None:
    """Median seconds of ``pyarrow.csv.read_csv`` on the same tab-separated text (None without
    pyarrow): the reference reader that issue 16's upload goal is stated against."""
    try:
        from pyarrow import csv
    except ImportError:
        return None
    options = (csv.ReadOptions(column_names=["u", "v"]), csv.ParseOptions(delimiter="\t"),
               csv.ConvertOptions(column_types={"u": "int64", "v": "int64"}))

    body = memoryview(text)[text.index(b"\n") + 1:] if text.startswith(b"#") else text

    def read() -> object:  # the comment line skipped: pyarrow has no comment option
        return csv.read_csv(io.BytesIO(body), read_options=options[0],
                            parse_options=options[1], convert_options=options[2])

    read()  # warm-up: thread pool, allocator
    return timed(read, repeat)[0]


def upload_seconds(bodies: list[bytes], fmt: str, settings: Settings, store: GraphStore
                   ) -> tuple[float, object]:
    """Median seconds of the upload path (parse, build, store) over ``bodies`` (one graph
    each, so that no upload is answered by an earlier one's content id), and the last graph."""
    times, graph = [], None
    for body in bodies:
        t0 = time.perf_counter()
        parsed = parse_graph(body, fmt, settings=settings)
        graph, report = build_graph(parsed.src, parsed.dst, parsed.weights,
                                    extra_nodes=parsed.extra_nodes, settings=settings)
        store.put(graph, name=None, source={"format": fmt}, report=report)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), graph


def binary_bodies(src: np.ndarray, dst: np.ndarray, repeat: int
                  ) -> tuple[list[bytes], list[bytes] | None]:
    """``repeat + 1`` npz bodies (and Parquet ones, with pyarrow) of the edges, each shifted
    by other ids (no body's graph is stored before it is uploaded)."""
    npz, parquet = [], []
    for k in range(repeat + 1):
        buffer = io.BytesIO()
        np.savez(buffer, src=src + 10 + k, dst=dst + 10 + k)  # graphs the text rows did not store
        npz.append(buffer.getvalue())
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            parquet = None
            continue
        buffer = io.BytesIO()
        pq.write_table(pa.table({"src": src + 20 + k, "dst": dst + 20 + k}), buffer)
        parquet.append(buffer.getvalue())
    return npz, parquet


def peer_npz(body: bytes) -> Callable[[], object]:
    def read() -> object:
        with np.load(io.BytesIO(body)) as archive:
            return [archive[name] for name in archive.files]
    return read


def peer_parquet(body: bytes) -> Callable[[], object]:
    import pyarrow.parquet as pq
    return lambda: pq.read_table(io.BytesIO(body))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=150.0, help="approximate text size in MB")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    scale = 22
    m = int(args.mb * 1e6 / 15.4)  # ~15.4 bytes per line at scale 22
    src, dst = rmat_edges(scale, m)
    text = format_edges(src, dst)
    mb = len(text) / 1e6
    settings = Settings()

    # Warm-up on the full text: loads the cached Numba code and lets the VM back the output
    # memory (first-touch page faults otherwise dominate the first run).
    parse_graph(text, "edgelist", settings=settings)
    t_parse, parsed = timed(lambda: parse_graph(text, "edgelist", settings=settings),
                            args.repeat)
    assert np.array_equal(parsed.src, src) and np.array_equal(parsed.dst, dst)
    del parsed

    # Peer: numpy.loadtxt on the first tenth of the lines, extrapolated to the whole file.
    cut = text.index(b"\n", len(text) // 10) + 1
    t0 = time.perf_counter()
    np.loadtxt(memoryview(text[:cut]).tobytes().decode().splitlines(), dtype=np.int64,
               comments="#")
    t_peer = (time.perf_counter() - t0) * len(text) / cut
    t_arrow = arrow_seconds(text, args.repeat)

    name = f"rmat-s{scale} {mb:.0f} MB"
    arrow_ms = None if t_arrow is None else t_arrow * 1e3

    def vs_arrow(seconds: float) -> str:
        return "no pyarrow" if t_arrow is None else f"ours/pyarrow {seconds / t_arrow:.2f}x"

    with tempfile.TemporaryDirectory() as folder:
        store = GraphStore(Path(folder) / "graphs", Path(folder) / "tmp")
        texts = [text] + [format_edges(src + k, dst + k) for k in range(1, args.repeat)]
        upload_seconds(texts[:1], "edgelist", settings, store)  # warm-up (and first touch)
        t_text, graph = upload_seconds(texts[1:], "edgelist", settings, store)
        del texts
        npz, parquet = binary_bodies(src, dst, args.repeat)
        upload_seconds(npz[:1], "npz", settings, store)
        t_npz, _ = upload_seconds(npz[1:], "npz", settings, store)
        t_npz_peer = timed(peer_npz(npz[1]), args.repeat)[0]
        if parquet is not None:
            upload_seconds(parquet[:1], "parquet", settings, store)
            t_pq, _ = upload_seconds(parquet[1:], "parquet", settings, store)
            t_pq_peer = timed(peer_parquet(parquet[1]), args.repeat)[0]

    rows = [
        {"graph": name, "n": graph.n, "m": m, "backend": "cpu (parse)",
         "time_ms": t_parse * 1e3, "throughput": f"{mb / t_parse:,.0f} MB/s",
         "peer": "numpy.loadtxt (1/10 slice, scaled x10)", "peer_ms": t_peer * 1e3,
         "ratio": f"{t_peer / t_parse:.1f}x"},
        {"graph": name, "n": graph.n, "m": m, "backend": "cpu (parse)",
         "time_ms": t_parse * 1e3, "throughput": f"{mb / t_parse:,.0f} MB/s",
         "peer": "pyarrow.csv.read_csv (multi-threaded)", "peer_ms": arrow_ms,
         "ratio": vs_arrow(t_parse)},
        {"graph": name, "n": graph.n, "m": m, "backend": "cpu (upload: text)",
         "time_ms": t_text * 1e3, "throughput": f"{mb / t_text:,.0f} MB/s",
         "peer": "pyarrow.csv.read_csv (multi-threaded)", "peer_ms": arrow_ms,
         "ratio": vs_arrow(t_text)},
        {"graph": f"rmat-s{scale} npz {len(npz[1]) / 1e6:.0f} MB", "n": graph.n, "m": m,
         "backend": "cpu (upload: npz)", "time_ms": t_npz * 1e3,
         "throughput": f"{len(npz[1]) / 1e6 / t_npz:,.0f} MB/s",
         "peer": "numpy.load (arrays only)", "peer_ms": t_npz_peer * 1e3,
         "ratio": f"{t_npz / t_npz_peer:.2f}x"},
    ]
    if parquet is not None:
        rows.append({"graph": f"rmat-s{scale} parquet {len(parquet[1]) / 1e6:.0f} MB",
                     "n": graph.n, "m": m, "backend": "cpu (upload: parquet)",
                     "time_ms": t_pq * 1e3,
                     "throughput": f"{len(parquet[1]) / 1e6 / t_pq:,.0f} MB/s",
                     "peer": "pyarrow.parquet.read_table (columns only)",
                     "peer_ms": t_pq_peer * 1e3, "ratio": f"{t_pq / t_pq_peer:.2f}x"})
    print_table(rows, f"upload throughput ({platform.processor() or platform.machine()}, "
                f"{len(os.sched_getaffinity(0))} cores; median of {args.repeat})")


if __name__ == "__main__":
    main()

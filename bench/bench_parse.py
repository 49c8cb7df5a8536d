"""Upload-parse throughput: ``parse_graph`` on a synthetic SNAP edge list (~150 MB).

Run as ``.venv/bin/python bench/bench_parse.py [--mb 150] [--repeat 3]``. The text is an R-MAT
edge list (Graph500 a=0.57, b=c=0.19, fixed seed) formatted with vectorised NumPy, so building it
takes seconds. The peers are ``numpy.loadtxt`` timed on a 1/10 slice and scaled up linearly,
which the table says, and ``pyarrow.csv.read_csv`` of the whole text (when pyarrow is
installed; the ratio ours/pyarrow has the goal <= 2.5x).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench.table import print_table  # noqa: E402
from graphgpu.kernels.core.graph import build_graph  # noqa: E402
from graphgpu.kernels.core.io.formats import parse_graph  # noqa: E402
from graphgpu.kernels.core.settings import Settings  # noqa: E402


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
    t_build, (graph, _) = timed(lambda: build_graph(parsed.src, parsed.dst, parsed.weights,
                                                    settings=settings), 1)

    # Peer: numpy.loadtxt on the first tenth of the lines, extrapolated to the whole file.
    cut = text.index(b"\n", len(text) // 10) + 1
    t0 = time.perf_counter()
    np.loadtxt(memoryview(text[:cut]).tobytes().decode().splitlines(), dtype=np.int64,
               comments="#")
    t_peer = (time.perf_counter() - t0) * len(text) / cut
    t_arrow = arrow_seconds(text, args.repeat)

    name = f"rmat-s{scale} {mb:.0f} MB"
    rows = [
        {"graph": name, "n": graph.n, "m": m, "backend": "cpu", "time_ms": t_parse * 1e3,
         "throughput": f"{mb / t_parse:,.0f} MB/s",
         "peer": "numpy.loadtxt (1/10 slice, scaled x10)", "peer_ms": t_peer * 1e3,
         "ratio": f"{t_peer / t_parse:.1f}x"},
        {"graph": name + " (vs pyarrow)", "n": graph.n, "m": m, "backend": "cpu",
         "time_ms": t_parse * 1e3, "throughput": f"{mb / t_parse:,.0f} MB/s",
         "peer": "pyarrow.csv.read_csv (multi-threaded)",
         "peer_ms": None if t_arrow is None else t_arrow * 1e3,
         "ratio": "no pyarrow" if t_arrow is None else f"ours/pyarrow {t_parse / t_arrow:.2f}x"},
        {"graph": name + " (build_graph)", "n": graph.n, "m": graph.m, "backend": "cpu",
         "time_ms": t_build * 1e3, "throughput": f"{m / t_build / 1e6:,.1f} M edges/s"},
    ]
    print_table(rows, f"parse_graph edge-list throughput (median of {args.repeat})")


if __name__ == "__main__":
    main()

"""Upload of a graph named by labels against the same graph with integer ids (issue 27: within
2x), and what serving its labels costs the API.

Run as ``.venv/bin/python bench/bench_labels.py [--n 10000000] [--repeat 3] [--out FILE]``. The
graph has ``n`` nodes and ``n`` edges (a random permutation against random heads, so every node
is named); the labelled text names node ``i`` ``v<i>``. "Upload" is what ``POST /v1/graphs``
does after reading the body: ``parse_graph``, ``build_graph`` and ``GraphStore.put`` into a
fresh store. Each variant runs in its own process, so its peak RSS is its own (the text is
built in the parent and read from a file). The labelled row's peer is pyarrow reading the same
text and dictionary-encoding both columns (the interning alone, no graph built). Beside the
wall time, each upload's CPU time (all its threads) is reported: on a VM whose cores other
work shares, it says what the upload costs whatever the load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere

from bench.bench_parse import format_edges  # noqa: E402
from bench.table import print_table  # noqa: E402
from graphgpu.kernels.core.graph import build_graph  # noqa: E402
from graphgpu.kernels.core.io.formats import parse_graph  # noqa: E402
from graphgpu.kernels.core.store import GraphStore  # noqa: E402


def edge_text(n: int, seed: int = 1) -> bytes:
    rng = np.random.default_rng(seed)
    return format_edges(rng.permutation(n), rng.integers(0, n, n))


def as_labels(text: bytes) -> bytes:
    """The same lines with every node ``i`` named ``v<i>`` (C-speed byte replaces)."""
    head, body = text.split(b"\n", 1)
    return head + b"\nv" + body.replace(b"\t", b"\tv").replace(b"\n", b"\nv")[:-1]


def upload(text: bytes, root: Path) -> dict:
    store = GraphStore(root / "graphs", root / "tmp")
    parsed = parse_graph(text)
    graph, report = build_graph(parsed.src, parsed.dst, parsed.weights,
                                extra_nodes=parsed.extra_nodes)
    meta, _ = store.put(graph, name=None, source={}, report=report, labels=parsed.labels)
    return meta


def child(path: Path, repeat: int) -> dict:
    """Time the upload of one text (own process: its peak RSS is the upload's)."""
    text = path.read_bytes()
    upload(b"a b\n" if text[:1] != b"#" else b"0 1\n", Path(tempfile.mkdtemp()))  # compile
    times, cpu, meta = [], [], {}
    for _ in range(repeat):
        root = Path(tempfile.mkdtemp())
        t0, c0 = time.perf_counter(), time.process_time()
        meta = upload(text, root)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if meta["labelled"]:  # what the API does per request on this graph
            store = GraphStore(root / "graphs", root / "tmp")
            labels = store.labels(meta["id"])
            t0 = time.perf_counter()
            found = labels.find(["v12345", "v7"])  # builds the index
            first_ms = 1e3 * (time.perf_counter() - t0)
            t0 = time.perf_counter()
            found = labels.find(["v54321", "v8"])
            find_ms = 1e3 * (time.perf_counter() - t0)
            t0 = time.perf_counter()
            labels.decode(np.arange(min(65536, len(labels))))
            decode_ms = 1e3 * (time.perf_counter() - t0)
            assert (found >= 0).all()
            meta.update(first_ms=first_ms, find_ms=find_ms, decode_ms=decode_ms,
                        index_mb=labels.index().nbytes / 2**20,
                        table_mb=sum(a.nbytes for a in labels.arrays().values()) / 2**20)
        shutil.rmtree(root)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {**meta, "seconds": statistics.median(times), "cpu": statistics.median(cpu),
            "peak_mb": peak,
            "text_bytes": len(text)}


def arrow_intern_seconds(text: bytes, repeat: int) -> float | None:
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyarrow import csv
    except ImportError:
        return None
    options = (csv.ReadOptions(column_names=["u", "v"], skip_rows=1),
               csv.ParseOptions(delimiter="\t"),
               csv.ConvertOptions(column_types={"u": pa.string(), "v": pa.string()}))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        table = csv.read_csv(pa.py_buffer(text), *options)
        pc.dictionary_encode(pa.chunked_array(table["u"].chunks + table["v"].chunks))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return
    ints = edge_text(args.n)
    texts = {"integer ids": ints, "labels v<i>": as_labels(ints)}
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, text in texts.items():
            path = Path(folder) / "edges.txt"
            path.write_bytes(text)
            out = subprocess.run([sys.executable, __file__, "--child", str(path), "--repeat",
                                  str(args.repeat)], check=True, capture_output=True, text=True)
            results[name] = json.loads(out.stdout.splitlines()[-1])
    base = results["integer ids"]["seconds"]
    arrow = arrow_intern_seconds(texts["labels v<i>"], args.repeat)
    rows = []
    for name, r in results.items():
        labelled = r["labelled"]
        rows.append({
            "graph": f"{name} ({r['text_bytes'] / 2**20:.0f} MB text, peak RSS "
                     f"{r['peak_mb']:.0f} MB, CPU {r['cpu']:.2f} s)",
            "n": r["n"], "m": r["m"], "backend": "cpu (upload)", "time_ms": 1e3 * r["seconds"],
            "throughput": f"{r['text_bytes'] / 2**20 / r['seconds']:.0f} MB/s",
            "peer": "pyarrow read_csv + dictionary_encode" if labelled else "integer ids",
            "peer_ms": (1e3 * arrow if arrow else None) if labelled else 1e3 * base,
            "ratio": (r["seconds"] / arrow if arrow else None) if labelled else 1.0,
        })
    lab = results["labels v<i>"]
    cpu = lab["cpu"] / results["integer ids"]["cpu"]
    text = print_table(rows, f"Upload: {args.n:,} labels vs integer ids (median of "
                             f"{args.repeat}); labelled / integer = {lab['seconds'] / base:.2f}x "
                             f"(CPU time: {cpu:.2f}x); load average {os.getloadavg()[0]:.1f}")
    text += (f"\nLabel table {lab['table_mb']:.0f} MB on disk (memory-mapped); lookup index "
             f"{lab['index_mb']:.0f} MB in the API once built. Admission lookup of 2 labels: "
             f"{lab['first_ms']:.0f} ms the first time (builds the index), {lab['find_ms']:.2f}"
             f" ms after; decoding 65,536 labels {lab['decode_ms']:.1f} ms.\n")
    print(text[text.rindex("\nLabel"):])
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()

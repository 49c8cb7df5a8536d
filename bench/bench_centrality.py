"""DACCER volumes and exact closeness: GPU vs our CPU backend vs NetworkX; rank agreement.

Run as ``python bench/bench_centrality.py [--sizes 10000,...] [--ms 1,2,3,4] [--radii 0,1,2,3]
[--out FILE]``. Without CuPy or a GPU the GPU columns are empty, so it also runs on a CPU box.

Graphs: the paper's Barabási-Albert set (``graphgpu.kernels.generators``, CPU, seed 1: every machine
benchmarks the same graphs) and, for the agreement table, ca-GrQc, ca-CondMat and dblp-2010 read
from ``--data-dir`` (``.benchdata/`` when the device call carried it, else
``../shared/data/real``).

What is timed:

* ``gpu ms``: CUDA-event median over ``--repeat`` runs after one warm-up of the device part
  (:func:`volumes_device`, :func:`closeness_sums_device`), graph resident (a warm worker).
* ``cpu ms``: wall time of one run of our CPU backend (:func:`volumes_cpu`,
  :func:`closeness_sums_cpu`; Numba, all cores) after a warm-up on a small graph.
* ``nx ms``: NetworkX, one run: ``single_source_shortest_path_length(cutoff=r)`` and a degree sum
  per node (sizes up to ``--nx-max``).

Every GPU answer is checked equal to the CPU answer where the CPU ran; a mismatch is printed
(with the ball-size tiers of the differing nodes) and the row is marked.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import add_data_args, use_gpu  # noqa: E402
from bench.table import event_ms, format_cell, markdown_table  # noqa: E402
from graphgpu.kernels.algorithms.centrality.cpu import (  # noqa: E402
    closeness_sums as closeness_sums_cpu,
)
from graphgpu.kernels.algorithms.centrality.cpu import volumes as volumes_cpu  # noqa: E402
from graphgpu.kernels.algorithms.centrality.driver import (  # noqa: E402
    closeness_values,
    rank_agreement,
)
from graphgpu.kernels.algorithms.centrality.gpu import (  # noqa: E402
    TIERS,
    closeness_sums_device,
    volumes_device,
)
from graphgpu.kernels.core.device import device_name  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph, content_id  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402
from graphgpu.kernels.generators import generate  # noqa: E402

BUDGET = 1 << 30  # max_batch_bytes default
REAL = ("ca-GrQc", "ca-CondMat", "dblp-2010")


def ba(n: int, m: int) -> Graph:
    edges = generate("barabasi_albert", {"n": n, "m": m, "seed": 1}, "cpu")
    graph, _ = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    return dataclasses.replace(graph, graph_id=content_id(graph))


def real(name: str, data_dir: Path) -> Graph:
    from graphgpu.kernels.core.io.formats import parse_graph

    parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
    graph, _ = build_graph(parsed.src, parsed.dst, extra_nodes=parsed.extra_nodes)
    return dataclasses.replace(graph, graph_id=content_id(graph))


def wall_ms(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1e3, out



def tiers(graph: Graph, radius: int) -> np.ndarray:
    """The GPU tier of each node's ball (0.. len(TIERS); the last: bit-parallel hub batches)."""
    deg = graph.degrees().astype(np.int64)
    rows = np.repeat(np.arange(graph.n), graph.degrees())
    bound = deg + 1
    for _ in range(2, radius + 1):
        bound = np.minimum(graph.n, 1 + np.bincount(rows, bound[graph.indices] - 1,
                                                     minlength=graph.n).astype(np.int64))
    return np.searchsorted([cap for _, cap, _ in TIERS], bound)


def to_nx(graph: Graph) -> object:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    rows = np.repeat(np.arange(graph.n), graph.degrees())
    g.add_edges_from(zip(rows.tolist(), graph.indices.tolist(), strict=True))
    return g


def nx_volumes(g: object, radius: int) -> np.ndarray:
    import networkx as nx

    return np.array([sum(g.degree(u) for u in nx.single_source_shortest_path_length(g, v, radius))
                     for v in g], dtype=np.int64)


def check(name: str, gpu: np.ndarray, cpu: np.ndarray, graph: Graph, radius: int) -> str:
    """'yes', or 'NO' after printing where the GPU differs."""
    bad = np.flatnonzero(gpu != cpu)
    if bad.size == 0:
        return "yes"
    tier_of = tiers(graph, radius)[bad]
    print(f"  MISMATCH {name}: {bad.size} nodes, tiers {np.bincount(tier_of).tolist()}, "
          f"first {bad[:5].tolist()} gpu {gpu[bad[:5]].tolist()} cpu {cpu[bad[:5]].tolist()}")
    return "NO"


def table(rows: list[dict], columns: list[str], title: str) -> str:
    return markdown_table(rows, columns, title,
                          lambda value: format_cell(value, ".3f", ".0f", 100))


def bench_volumes(args: argparse.Namespace, gpu: bool) -> list[dict]:
    rows = []
    for n in args.sizes:
        for m in args.ms:
            start = time.perf_counter()
            graph = ba(n, m)
            print(f"BA n={n:,} m={m}: {graph.m:,} edges, built in "
                  f"{time.perf_counter() - start:.1f} s", flush=True)
            g = to_nx(graph) if n <= args.nx_max else None  # built outside the timings
            for radius in args.radii:
                hubs = (tiers(graph, radius) == len(TIERS)).sum() if radius >= 2 else 0
                row: dict = {"n": n, "m": m, "r": radius, "hub balls": int(hubs)}
                cpu = None
                if radius < 3 or n <= args.cpu_r3_max:
                    row["cpu ms"], cpu = wall_ms(
                        lambda g=graph, r=radius: volumes_cpu(g, r, BUDGET, no_progress))
                if gpu:
                    row["gpu ms"] = event_ms(
                        lambda g=graph, r=radius: volumes_device(g, r, BUDGET, no_progress),
                        args.repeat)
                    result = volumes_device(graph, radius, BUDGET, no_progress).get()
                    if cpu is not None:
                        row["equal"] = check(f"n={n} m={m} r={radius}", result, cpu, graph,
                                             radius)
                if g is not None and radius <= 2:
                    row["nx ms"], reference = wall_ms(lambda r=radius, g=g: nx_volumes(g, r))
                    if cpu is not None and not np.array_equal(reference, cpu):
                        row["equal"] = "NO (cpu vs nx)"
                if "gpu ms" in row:
                    for peer in ("cpu", "nx"):
                        if f"{peer} ms" in row:
                            row[f"{peer}/gpu"] = row[f"{peer} ms"] / row["gpu ms"]
                print(row, flush=True)
                rows.append(row)
            if gpu and n == max(args.sizes) and m == max(args.ms):
                for radius in (r for r in args.radii if r >= 2):
                    print("breakdown", breakdown(graph, radius), flush=True)
    return rows


def breakdown(graph: Graph, radius: int) -> str:
    """GPU time between the progress reports of one run (one per tier and hub batch)."""
    import cupy as cp

    volumes_device(graph, radius, BUDGET, no_progress)
    marks: list[tuple[str, object]] = []

    def mark(fraction: float, message: str = "") -> None:
        event = cp.cuda.Event()
        event.record()
        marks.append((message, event))

    mark(0.0, "start")
    volumes_device(graph, radius, BUDGET, mark)
    mark(1.0, "end")
    marks[-1][1].synchronize()
    steps = [f"{label} -> {cp.cuda.get_elapsed_time(a, b):.3f} ms"
             for (label, a), (_, b) in zip(marks, marks[1:], strict=False)]
    return f"r={radius}: " + "; ".join(steps)


def bench_closeness(args: argparse.Namespace, gpu: bool) -> list[dict]:
    rows = []
    for n in args.closeness_sizes:
        graph = ba(n, 4)
        row: dict = {"graph": "BA m=4", "n": n, "m": graph.m}
        cpu = None
        if n <= args.cpu_closeness_max:
            row["cpu ms"], cpu = wall_ms(lambda g=graph: closeness_sums_cpu(g, BUDGET, no_progress))
        if gpu:
            row["gpu ms"] = event_ms(
                lambda g=graph: closeness_sums_device(g, BUDGET, no_progress), 3)
            total, reached, harmonic = (a.get() for a in closeness_sums_device(graph, BUDGET,
                                                                               no_progress))
            if cpu is not None:
                same = np.array_equal(total, cpu[0]) and np.array_equal(reached, cpu[1])
                close = np.allclose(harmonic, cpu[2], rtol=1e-12, atol=0)
                row["equal"] = "yes" if same and close else "NO"
            if "cpu ms" in row:
                row["cpu/gpu"] = row["cpu ms"] / row["gpu ms"]
        print(row, flush=True)
        rows.append(row)
    return rows


def bench_agreement(args: argparse.Namespace, gpu: bool) -> list[dict]:
    rows = []
    for name in args.real:
        graph = real(name, args.data_dir)
        start = time.perf_counter()
        if gpu:
            total, reached, _ = (a.get() for a in closeness_sums_device(graph, BUDGET,
                                                                        no_progress))
        else:
            total, reached, _ = closeness_sums_cpu(graph, BUDGET, no_progress)
        seconds = time.perf_counter() - start
        closeness = closeness_values(total, reached, graph.n)
        print(f"{name}: n={graph.n:,} m={graph.m:,}, closeness in {seconds:.2f} s", flush=True)
        for radius in args.radii:
            volume = (volumes_device(graph, radius, BUDGET, no_progress).get() if gpu
                      else volumes_cpu(graph, radius, BUDGET, no_progress))
            row = {"graph": name, "n": graph.n, "m": graph.m, "r": radius,
                   "closeness s": seconds, **rank_agreement(volume, closeness)}
            rows.append(row)
    return rows


def ints(text: str) -> list[int]:
    return [int(float(x)) for x in text.split(",") if x]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=ints, default=ints("1e4,1e5,2e5,4e5,6e5,1e6"))
    parser.add_argument("--ms", type=ints, default=ints("1,2,3,4"))
    parser.add_argument("--radii", type=ints, default=ints("0,1,2,3"))
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--nx-max", type=int, default=10_000)
    parser.add_argument("--cpu-r3-max", type=int, default=1_000_000)
    parser.add_argument("--closeness-sizes", type=ints, default=ints("1e4,1e5"))
    parser.add_argument("--cpu-closeness-max", type=int, default=100_000)
    parser.add_argument("--real", type=lambda s: [x for x in s.split(",") if x],
                        default=list(REAL))
    add_data_args(parser, no_gpu_help="skip the GPU columns")
    args = parser.parse_args(argv)

    gpu = use_gpu(args)
    warm = ba(2000, 3)  # compile the Numba code and start its threads outside the timings
    for radius in range(4):
        volumes_cpu(warm, radius, BUDGET, no_progress)
    closeness_sums_cpu(warm, BUDGET, no_progress)
    header = (f"Device: {device_name('gpu') if gpu else 'no GPU'}; CPU: {device_name('cpu')}; "
              f"{date.today().isoformat()}; max_batch_bytes {BUDGET:,}.")
    print(header, flush=True)
    texts = [header]
    if args.sizes and args.ms and args.radii:
        texts.append(table(bench_volumes(args, gpu),
                           ["n", "m", "r", "hub balls", "gpu ms", "cpu ms", "nx ms", "cpu/gpu",
                            "nx/gpu", "equal"], "DACCER volumes, Barabási-Albert"))
    if args.closeness_sizes:
        texts.append(table(bench_closeness(args, gpu),
                           ["graph", "n", "m", "gpu ms", "cpu ms", "cpu/gpu", "equal"],
                           "Exact closeness (all-sources BFS)"))
    if args.real:
        texts.append(table(bench_agreement(args, gpu),
                           ["graph", "n", "m", "r", "spearman", "kendall", "top1pct_overlap",
                            "top10pct_overlap", "closeness s"],
                           "DACCER vs exact closeness: rank agreement"))
    if args.out:
        args.out.write_text("\n\n".join(texts) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

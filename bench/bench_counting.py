"""Exact counting (k-cliques, connected induced k-subgraphs, k-independent sets) on GPU and CPU.

Run as ``python bench/bench_counting.py [--repeat 3] [--max-seconds 15] [--out FILE]``. Without
CuPy or a GPU the GPU rows are skipped.

Rows: k-cliques k=3..8 on ca-CondMat, dblp-2010, cnr-2000 and rmat20 (Graph500 R-MAT, edge factor
16, seed 1); connected induced subgraphs k=3..6 on ca-GrQc and a 64 x 64 grid; independent sets
of every size on the 6 x 6 and 7 x 7 grids and the 5-cube (enumeration), and k=4 on the ca-*
graphs (local counts); the paper's sizes (CNP instances of 235-250 nodes, k=3, 4), all three
counts. Graphs come from ``--data-dir`` (``.benchdata/`` when carried, else
``../shared/data/real``; CNP instances from its ``cnp/`` or ``../shared/data/cnp``).

``time_ms``: the registered function (``count_*`` GPU or CPU: ordering, orientation and the
search; graph already in memory), GPU by CUDA events, median of ``--repeat`` runs after a
warm-up; CPU (Numba, one thread) median wall time. ``throughput``: sets counted per second.
Peer: NetworkX ``enumerate_all_cliques`` for cliques (where it finishes within
``--max-seconds``), else our CPU backend. A row whose estimate (the same one the API refuses
jobs with) passes ``--max-seconds`` is not run; the estimate is printed for every row.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import default_data_dir, use_gpu, write_out  # noqa: E402
from bench.table import print_table  # noqa: E402
from graphgpu.kernels.core.device import device_name, gpu_available  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph  # noqa: E402
from graphgpu.kernels.core.io.formats import parse_graph  # noqa: E402
from graphgpu.kernels.core.registry import get_algorithm, no_progress  # noqa: E402

#: Published node counts (the edge lists drop isolated nodes).
NODES = {"ca-GrQc": 5242, "ca-HepTh": 9877, "ca-CondMat": 23133, "dblp-2010": 326186}
PAPER_GRAPHS = ("ErdosRenyi_n235", "ForestFire_n250", "WattsStrogatz_n250")
#: (algorithm, graphs, k values, extra params) per table.
PLAN: tuple[tuple[str, tuple[str, ...], tuple[int, ...], dict[str, Any]], ...] = (
    ("count_cliques", ("ca-CondMat", "dblp-2010", "cnr-2000"), (3, 4, 5, 6, 7, 8), {}),
    ("count_connected_subgraphs", ("ca-GrQc", "grid64"), (3, 4, 5, 6), {}),
    ("count_independent_sets", ("grid6", "grid7", "cube5"), (0,), {"k_max": True,
                                                                    "method": "enumerate"}),
    ("count_independent_sets", ("ca-GrQc", "ca-HepTh", "ca-CondMat"), (4,), {}),
    ("count_connected_subgraphs", PAPER_GRAPHS, (3, 4), {}),
    ("count_cliques", PAPER_GRAPHS, (3, 4), {}),
    ("count_independent_sets", PAPER_GRAPHS, (3, 4), {}),
    ("count_cliques", ("rmat20",), (3, 4, 5, 6, 7, 8), {}),  # last: the largest preprocessing
)


def load(name: str, data_dir: Path) -> Graph:
    """One benchmark graph, with an id so that it stays resident on the GPU across runs."""
    if name.startswith(("grid", "cube")):
        size = int(name[4:])
        g = nx.grid_2d_graph(size, size) if name.startswith("grid") else nx.hypercube_graph(size)
        g = nx.convert_node_labels_to_integers(g)
        edges = np.array(g.edges(), dtype=np.int64).reshape(-1, 2)
        graph, _ = build_graph(edges[:, 0], edges[:, 1], extra_nodes=np.arange(g.number_of_nodes()))
    elif name.startswith("rmat"):
        from bench.bench_mis import gpu_csr
        from graphgpu.kernels.generators import generate

        gpu = gpu_available()
        edges = generate("rmat", {"scale": int(name[4:]), "edge_factor": 16, "seed": 1},
                         "gpu" if gpu else "cpu")
        if gpu:  # the same CSR as build_graph, with CuPy sorts
            graph = gpu_csr(edges.src, edges.dst, edges.num_nodes)
        else:
            graph, _ = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    else:
        cnp = data_dir / "cnp" if (data_dir / "cnp").is_dir() else data_dir.parent / "cnp"
        path = cnp / f"{name}.txt" if name in PAPER_GRAPHS else data_dir / f"{name}.txt.gz"
        parsed = parse_graph(path.read_bytes())
        extra = np.arange(NODES[name]) if name in NODES else parsed.extra_nodes
        graph, _ = build_graph(parsed.src, parsed.dst, extra_nodes=extra)
    return dataclasses.replace(graph, graph_id=f"bench-{name}")


def timed(fn: Callable[[], Any], repeat: int, gpu: bool) -> tuple[float, Any]:
    """Median time in ms of ``fn`` after one warm-up call (CUDA events on the GPU)."""
    result = fn()
    times = []
    for _ in range(repeat):
        if gpu:
            import cupy as cp

            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            result = fn()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        else:
            begin = time.perf_counter()
            result = fn()
            times.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(times), result


def networkx_cliques(graph: Graph, k: int) -> tuple[float, int]:
    """NetworkX's clique census up to size k (it lists cliques by increasing size)."""
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    src = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    g.add_edges_from(zip(src.tolist(), graph.indices.tolist(), strict=True))
    begin = time.perf_counter()
    found = 0
    for clique in nx.enumerate_all_cliques(g):
        if len(clique) > k:
            break
        found += len(clique) == k
    return (time.perf_counter() - begin) * 1e3, found


def bench_row(name: str, graph: Graph, algorithm: str, params: Any, repeat: int, gpu: bool,
              max_seconds: dict[str, float], counts: list[dict]) -> list[dict]:
    """GPU and CPU rows for one (graph, algorithm, k): time, throughput, agreement."""
    alg = get_algorithm(algorithm)
    label = f"{name} k={params.k}{' all' if params.k_max else ''}"
    base = {"graph": label, "n": graph.n, "m": graph.m}
    rows, results = [], {}
    for backend in (("gpu", "cpu") if gpu else ("cpu",)):
        estimate = alg.estimate(graph, params, backend)
        print(f"{label} {backend}: estimate {estimate.seconds:.3g} s ({estimate.detail})",
              flush=True)
        if estimate.seconds > max_seconds[backend]:
            rows.append({**base, "backend": f"{backend} (skipped: estimate "
                                            f"{estimate.seconds:,.0f} s)"})
            continue
        ms, result = timed(lambda b=backend: alg.function(b)(graph, params, no_progress),
                           repeat if backend == "gpu" else 1, backend == "gpu")
        results[backend] = result.summary
        found = sum(result.summary["counts"]) if params.k_max else result.summary["count"]
        rows.append({**base, "backend": backend, "time_ms": ms,
                     "throughput": f"{found / (ms / 1e3):.3g}/s",
                     "estimate_s": estimate.seconds})
        print(rows[-1], flush=True)
    summary = results.get("gpu") or results.get("cpu")
    if summary is not None:
        agree = "—" if len(results) < 2 else str(results["gpu"] == results["cpu"])
        counts.append({"graph": label, "algorithm": algorithm, "count": summary["count"],
                       "method": summary["method"], "cpu_equals_gpu": agree,
                       "all": summary["counts"]})
    peer_ms = None
    if algorithm == "count_cliques" and graph.m <= 200_000 and params.k <= 4:
        peer_ms, found = networkx_cliques(graph, params.k)
        assert summary is None or found == summary["count"], (found, summary)
        peer = "networkx enumerate_all_cliques"
    elif gpu and "cpu" in results:
        peer_ms, peer = next(r["time_ms"] for r in rows if r["backend"] == "cpu"), "our cpu"
    if rows and rows[0]["backend"] == "gpu" and peer_ms is not None:
        rows[0].update(peer=peer, peer_ms=peer_ms, ratio=f"{peer_ms / rows[0]['time_ms']:.1f}x")
    return rows


#: Per graph, ms of the host degeneracy ordering and orientation (profile rows).
HOST_ORDERING_MS: dict[str, float] = {}


def profile_row(name: str, graph: Graph, k: int) -> dict:
    """Where a GPU clique run's time goes: each phase alone, after a warm-up (ms).

    ``host degeneracy DAG``: the ordering the GPU used before (Numba, still the CPU's);
    ``degree DAG``: its device replacement; ``cut items``: the cutting pass at the default
    threshold; ``whole count``: the registered function (ordering, cutting, search).
    """
    from graphgpu.kernels.algorithms.common import dag as orientations
    from graphgpu.kernels.algorithms.counting import gpu as counting_gpu
    from graphgpu.kernels.core.device import cupy

    cp = cupy()
    depth = min(counting_gpu.CLIQUE_DEPTH, k - 3)
    dag: list[Any] = []

    def cut() -> None:
        acc = cp.zeros(2 * (k + 2), dtype=cp.uint64)
        counting_gpu.clique_items(*dag, k, k, counting_gpu.CLIQUE_SPLIT, depth, acc)

    if name not in HOST_ORDERING_MS:  # the same for every k
        begin = time.perf_counter()
        orientations.oriented(graph)
        HOST_ORDERING_MS[name] = (time.perf_counter() - begin) * 1e3
    row = {"graph": f"{name} k={k}", "host degeneracy DAG": HOST_ORDERING_MS[name]}
    row["degree DAG"], found = timed(lambda: orientations.device_degree_dag(graph), 1, True)
    dag.extend(found)
    row["max out-degree"] = int(cp.diff(dag[0]).max())
    row["cut items"], _ = timed(cut, 1, True)
    alg = get_algorithm("count_cliques")
    row["whole count"], _ = timed(lambda: alg.function("gpu")(
        graph, alg.params_model(k=k), no_progress), 1, True)
    print(row, flush=True)
    return row


def phase_table(rows: list[dict], title: str) -> str:
    """Markdown table of :func:`profile_row` rows (printed too)."""
    names = list(rows[0])
    lines = [f"### {title}", "", "| " + " | ".join(names) + " |",
             "|" + "|".join("---" for _ in names) + "|"]
    lines += ["| " + " | ".join(f"{r[c]:,.2f}" if isinstance(r[c], float) else f"{r[c]}"
                                for c in names) + " |" for r in rows]
    text = "\n".join(lines)
    print(text)
    return text


def counts_table(counts: list[dict]) -> str:
    lines = ["### Counts (exact)", "", "| graph | algorithm | method | count | CPU = GPU |",
             "|---|---|---|---|---|"]
    for c in counts:
        lines.append(f"| {c['graph']} | {c['algorithm']} | {c['method']} | {c['count']:,} | "
                     f"{c['cpu_equals_gpu']} |")
        if c["all"]:
            lines.append(f"| | all sizes 1..k (+1 for the empty set) | | "
                         f"{sum(c['all']) + 1:,} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=10.0,
                        help="skip GPU rows whose estimate is longer")
    parser.add_argument("--cpu-max-seconds", type=float, default=3.0,
                        help="skip CPU rows whose estimate is longer")
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--only", default="", help="comma-separated graph names to keep")
    parser.add_argument("--out", type=Path, help="also write the tables here (markdown)")
    parser.add_argument("--no-gpu", action="store_true", help="skip the GPU rows")
    parser.add_argument("--profile", action="store_true",
                        help="also time the GPU clique phases (table 'GPU clique phases')")
    args = parser.parse_args(argv)

    gpu = use_gpu(args)
    device = device_name("gpu") if gpu else device_name("cpu")
    keep = set(filter(None, args.only.split(",")))
    graphs: dict[str, Graph] = {}
    texts, counts, phases = [], [], []
    for algorithm, names, ks, extra in PLAN:
        rows: list[dict] = []
        for name in names:
            if keep and name not in keep:
                continue
            if name not in graphs:
                start = time.perf_counter()
                graphs[name] = load(name, args.data_dir)
                print(f"{name}: n={graphs[name].n:,} m={graphs[name].m:,} built in "
                      f"{time.perf_counter() - start:.1f} s", flush=True)
            graph = graphs[name]
            for k in ks:
                model = get_algorithm(algorithm).params_model
                params = model(k=k or graph.n, **extra)
                new = bench_row(name, graph, algorithm, params, args.repeat, gpu,
                                {"gpu": args.max_seconds, "cpu": args.cpu_max_seconds}, counts)
                rows += new
                if args.profile and algorithm == "count_cliques" and new[0]["backend"] == "gpu":
                    phases.append(profile_row(name, graph, params.k))
        if rows:
            what = f"{algorithm} {extra or ''}".strip()
            texts.append(print_table(rows, f"{what} — {device}, CPU {device_name('cpu')}, "
                                           f"{date.today()}"))
            if phases:
                texts.append(phase_table(phases, f"GPU clique phases (ms) — {device}"))
                phases = []
            # after every table, so that a cut-off run keeps what it measured
            write_out(args.out, "\n\n".join([*texts, counts_table(counts)]))
    print(counts_table(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

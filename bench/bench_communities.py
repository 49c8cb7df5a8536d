"""Louvain/Leiden and exact betweenness: GPU vs our CPU backend vs NetworkX.

Run as ``python bench/bench_communities.py [--graphs ca-GrQc,ca-CondMat,dblp-2010,rmat20,rmat22]
[--betweenness ca-CondMat] [--sampled dblp-2010:1000] [--repeat 3] [--backends cpu,gpu]
[--out FILE]``. Real graphs
are read from ``--data-dir`` (``.benchdata/`` when the device call carried it, else
``../shared/data/real``); ``rmat<scale>`` graphs are bench_analytics' (Graph500 R-MAT, edge
factor 16, seed 1, undirected). Without CuPy or a GPU the GPU rows are left out, so it also runs
on a CPU box.

What is timed (wall clock after a warm-up on a small graph that compiles the kernels; GPU rows
the median of ``--repeat`` runs, CPU rows one run, only up to ``--cpu-max-edges``): our backends'
whole algorithm function (host-resident graph in, host result out) and NetworkX's
``louvain_communities(seed=1)`` (same resolution; up to ``--nx-max-edges``) or
``betweenness_centrality``. ``modularity`` is the one our result reports (checked against
``networkx.community.modularity`` once per graph); ``peer`` is NetworkX louvain's modularity;
``edges_per_s`` = m / time. For betweenness the GPU is compared with our CPU backend (NetworkX
takes minutes on ca-CondMat), the largest difference printed.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import default_data_dir, write_out  # noqa: E402
from bench.table import format_cell  # noqa: E402
from graphgpu.kernels.algorithms import communities  # noqa: E402
from graphgpu.kernels.algorithms.betweenness import BetweennessParams  # noqa: E402
from graphgpu.kernels.algorithms.betweenness.cpu import betweenness as betweenness_cpu  # noqa: E402
from graphgpu.kernels.algorithms.betweenness.gpu import betweenness as betweenness_gpu  # noqa: E402
from graphgpu.kernels.algorithms.communities import CommunityParams  # noqa: E402
from graphgpu.kernels.core.device import device_name, gpu_available  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402

COLUMNS = ("graph", "n", "m", "algorithm", "backend", "time_ms", "edges_per_s", "modularity",
           "peer", "peer_ms", "ratio")


def load(data_dir: Path, name: str) -> tuple[Graph, np.ndarray | None]:
    if name.startswith("rmat"):
        from bench.bench_analytics import load as load_rmat

        return load_rmat(name, data_dir, gpu_available())["undirected"], None
    with gzip.open(data_dir / f"{name}.txt.gz", "rt") as handle:
        edges = np.loadtxt(handle, dtype=np.int64, comments="#").reshape(-1, 2)
    graph, _ = build_graph(edges[:, 0], edges[:, 1])
    return graph, edges


def timed(fn, *args, repeat: int = 1):
    """The last result and the median wall time (ms) of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args)
        times.append(1000 * (time.perf_counter() - start))
    return out, float(np.median(times))


def cell(value: object) -> str:
    return format_cell(value, ".4f", ".1f", 10)


def to_nx(graph: Graph):
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    rows = np.repeat(np.arange(graph.n), graph.degrees())
    g.add_edges_from(zip(rows.tolist(), graph.indices.tolist(), strict=True))
    return g


def main() -> None:
    import networkx as nx

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--graphs", default="ca-GrQc,ca-CondMat,dblp-2010")
    parser.add_argument("--betweenness", default="ca-CondMat")
    parser.add_argument("--sampled", default="dblp-2010:1000",
                        help="graph:k pairs for sampled betweenness (k sources, seed 0)")
    parser.add_argument("--nx-max-edges", type=int, default=2_000_000)
    parser.add_argument("--cpu-max-edges", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="GPU runs per row (median)")
    parser.add_argument("--backends", default="cpu,gpu",
                        help="ours to run (gpu alone skips the CPU backend's compile)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    on_gpu = gpu_available()
    wanted = set(args.backends.split(","))
    warm, _ = build_graph(np.arange(64), np.roll(np.arange(64), 1))
    backends: dict[str, dict] = {"louvain": {}, "leiden": {}}
    if "cpu" in wanted:
        backends["louvain"]["cpu"] = communities.cpu.louvain
        backends["leiden"]["cpu"] = communities.cpu.leiden
    if on_gpu and "gpu" in wanted:
        backends["louvain"]["gpu"] = communities.gpu.louvain
        backends["leiden"]["gpu"] = communities.gpu.leiden
    for algo in backends.values():
        for fn in algo.values():
            fn(warm, CommunityParams(), no_progress)
    rows = []
    for name in args.graphs.split(","):
        graph, _ = load(args.data_dir, name)
        small = graph.m <= args.nx_max_edges
        g = to_nx(graph) if small else None
        peer_q, peer_ms = None, None
        if small:
            parts, peer_ms = timed(nx.community.louvain_communities, g, "weight", 1.0, 1e-7,
                                   None, 1)
            peer_q = nx.community.modularity(g, parts)
        partitions = {}
        for algorithm, fns in backends.items():
            for backend, fn in fns.items():
                if backend == "cpu" and graph.m > args.cpu_max_edges:
                    continue
                result, ms = timed(fn, graph, CommunityParams(), no_progress,
                                   repeat=args.repeat if backend == "gpu" else 1)
                q = result.summary["modularity"]
                partitions[(algorithm, backend)] = result.node_values["community"]
                rows.append({"graph": name, "n": graph.n, "m": graph.m, "algorithm": algorithm,
                             "backend": backend, "time_ms": ms,
                             "edges_per_s": int(graph.m / (ms / 1000)), "modularity": q,
                             "peer": peer_q, "peer_ms": peer_ms,
                             "ratio": None if peer_ms is None else ms / peer_ms})
                print(rows[-1], flush=True)
            if (algorithm, "cpu") in partitions and (algorithm, "gpu") in partitions:
                same = np.array_equal(partitions[(algorithm, "cpu")],
                                      partitions[(algorithm, "gpu")])
                print(f"{name} {algorithm}: GPU partition == CPU partition: {same}", flush=True)
        if small:
            c = next(iter(partitions.values()))
            check = nx.community.modularity(g, [set(np.flatnonzero(c == i).tolist())
                                                for i in range(int(c.max()) + 1)])
            print(f"{name}: networkx.community.modularity of our louvain partition {check:.6f}")
    runs = [(name, None) for name in filter(None, args.betweenness.split(","))]
    runs += [(item.split(":")[0], int(item.split(":")[1]))
             for item in filter(None, args.sampled.split(","))]
    for name, k in runs:
        graph, _ = load(args.data_dir, name)
        params = BetweennessParams(k=k)
        label = "betweenness exact" if k is None else f"betweenness k={k}"
        small, _ = build_graph(np.arange(64), np.roll(np.arange(64), 1))
        betweenness_cpu(small, BetweennessParams(), no_progress)  # compiles; k may exceed 64
        cpu, cpu_ms = timed(betweenness_cpu, graph, params, no_progress)
        rows.append({"graph": name, "n": graph.n, "m": graph.m,
                     "algorithm": label, "backend": "cpu", "time_ms": cpu_ms})
        print(rows[-1], flush=True)
        if on_gpu:
            betweenness_gpu(small, BetweennessParams(), no_progress)
            res, ms = timed(betweenness_gpu, graph, params, no_progress)
            diff = np.max(np.abs(res.node_values["betweenness"] - cpu.node_values["betweenness"]))
            print(f"{name} {label}: max |GPU - CPU| = {diff:.3e}", flush=True)
            rows.append({"graph": name, "n": graph.n, "m": graph.m,
                         "algorithm": label, "backend": "gpu", "time_ms": ms,
                         "peer": "our cpu", "peer_ms": cpu_ms, "ratio": ms / cpu_ms})
    device = device_name("gpu") if on_gpu else "no GPU"
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# Communities and betweenness", "",
             f"Device: {device}; CPU: {device_name('cpu')}; {stamp}. "
             "peer = NetworkX louvain_communities(seed=1) modularity (peer_ms its time) for "
             "louvain/leiden rows; ratio = time_ms / peer_ms.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in COLUMNS) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    write_out(args.out, text)


if __name__ == "__main__":
    main()

"""Maximal independent sets: LUMIS, DUMIS and IDUMIS on CPU and GPU, against CPU quality peers.

Run as ``python bench/bench_mis.py [--graphs ca-GrQc,...,rmat24] [--repeat 10] [--out FILE]``.
Without CuPy or a GPU the GPU rows are skipped.

Graphs: ``ca-GrQc``, ``ca-HepTh``, ``ca-CondMat``, ``dblp-2010``, ``cnr-2000`` (read from
``--data-dir``: ``.benchdata/`` when the device call carried it, else ``../shared/data/real``; the
ca-* and dblp edge lists omit isolated nodes, which are added back so that node counts and exact
optima are the published ones) and ``rmat20/22/24`` (Graph500 R-MAT, edge factor 16, a=.57
b=c=.19, seed 1, generated with CuPy when a GPU is present, else on the CPU; the CSR is then
built on the GPU for speed, exactly as ``build_graph`` would).

Columns: ``kernel_ms`` is the computation alone, graph resident: GPU = median CUDA-event time of
:func:`graphgpu.kernels.algorithms.mis.driver.compute` over ``--repeat`` runs after a warm-up (every
kernel and the per-batch
read-backs), CPU = its median wall time; for ``iterated`` it is the time at which the final best
set was found (the run itself lasts ``time_limit_s``). ``e2e_ms`` = wall time of the registered
function (``mis_gpu`` / ``mis_cpu``: plus verification; the GPU's set stays on the device), median.
``opt_%`` = size / exact maximum independent set size where known; ``rounds`` of the (first)
solution; ``iterations`` of ``iterated`` in its time limit. Peers (CPU): NetworkX
``maximal_independent_set`` (random greedy, ca-* only) and a min-degree greedy (Numba, bucket
queue: repeatedly take a vertex of least residual degree), the classic quality reference.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from datetime import date
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import TABLE_HELP, add_data_args, load_timed, use_gpu, write_out  # noqa: E402
from bench.table import event_ms, format_cell, markdown_table, timed_ms  # noqa: E402
from graphgpu.kernels.algorithms.mis import MisParams, mis_cpu, mis_gpu  # noqa: E402
from graphgpu.kernels.algorithms.mis.cpu import CpuEngine  # noqa: E402
from graphgpu.kernels.algorithms.mis.driver import compute  # noqa: E402
from graphgpu.kernels.core.device import device_name  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402

GRAPHS = ("ca-GrQc", "ca-HepTh", "ca-CondMat", "dblp-2010", "cnr-2000", "rmat20", "rmat22",
          "rmat24")
#: Published node counts (the edge lists drop isolated nodes) and exact optima.
NODES = {"ca-GrQc": 5242, "ca-HepTh": 9877, "ca-CondMat": 23133, "dblp-2010": 326186}
OPTIMUM = {"ca-GrQc": 2459, "ca-HepTh": 4896, "ca-CondMat": 9612}
#: (method, reduce, update_frequency) rows; reductions only where they finish quickly.
CONFIGS = (("luby", "none", 2), ("degree", "none", 2), ("degree", "none", 1),
           ("degree", "exhaustive", 2), ("iterated", "none", 1), ("iterated", "exhaustive", 1))
#: CPU rows and peers are skipped above this many edges (minutes of single-threaded work).
CPU_MAX_EDGES = 30_000_000
COLUMNS = ("graph", "n", "m", "method", "reduce", "backend", "kernel_ms", "e2e_ms", "size",
           "opt_%", "rounds", "iterations")


def gpu_csr(src: np.ndarray, dst: np.ndarray, n: int) -> Graph:
    """``build_graph(src, dst, extra_nodes=arange(n))`` for ids 0..n-1, with CuPy sorts."""
    import cupy as cp

    s, d = cp.asarray(src), cp.asarray(dst)
    keep = s != d
    lo, hi = cp.minimum(s[keep], d[keep]), cp.maximum(s[keep], d[keep])
    del s, d, keep
    edges = cp.unique(lo * n + hi)
    del lo, hi
    u, v = edges // n, edges % n
    arcs = cp.sort(cp.concatenate([u * n + v, v * n + u]))
    del edges, u, v
    indptr = cp.zeros(n + 1, dtype=cp.int64)
    indptr[1:] = cp.cumsum(cp.bincount(arcs // n, minlength=n))
    indices = (arcs % n).astype(cp.int32)
    return Graph(indptr=indptr.get(), indices=indices.get(),
                 node_ids=np.arange(n, dtype=np.int64))


def load(name: str, data_dir: Path, gpu: bool) -> Graph:
    """One benchmark graph, with an id so that it stays resident on the GPU across runs."""
    if name.startswith("rmat"):
        from graphgpu.kernels.generators import generate

        params = {"scale": int(name[4:]), "edge_factor": 16, "seed": 1}
        edges = generate("rmat", params, "gpu" if gpu else "cpu")
        if gpu:
            graph = gpu_csr(edges.src, edges.dst, edges.num_nodes)
        else:
            graph, _ = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    else:
        from graphgpu.kernels.core.io.formats import parse_graph

        parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
        extra = np.arange(NODES[name]) if name in NODES else parsed.extra_nodes
        graph, _ = build_graph(parsed.src, parsed.dst, extra_nodes=extra)
    return dataclasses.replace(graph, graph_id=f"bench-{name}")



@numba.njit(cache=True)
def _unlink(v: int, head: np.ndarray, nxt: np.ndarray, prv: np.ndarray, d: int) -> None:
    if prv[v] >= 0:
        nxt[prv[v]] = nxt[v]
    else:
        head[d] = nxt[v]
    if nxt[v] >= 0:
        prv[nxt[v]] = prv[v]


@numba.njit(cache=True)
def _link(v: int, head: np.ndarray, nxt: np.ndarray, prv: np.ndarray, d: int) -> None:
    prv[v] = -1
    nxt[v] = head[d]
    if head[d] >= 0:
        prv[head[d]] = v
    head[d] = v


@numba.njit(cache=True)
def min_degree_greedy(indptr: np.ndarray, indices: np.ndarray) -> int:
    """Size of the set that repeatedly takes a vertex of least residual degree (bucket queue)."""
    n = indptr.shape[0] - 1
    deg = indptr[1:] - indptr[:-1]
    head = np.full(deg.max() + 1, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    for v in range(n):
        _link(v, head, nxt, prv, deg[v])
    alive = np.ones(n, np.bool_)
    lowest = size = 0
    remaining = n
    while remaining > 0:
        while head[lowest] < 0:
            lowest += 1
        v = head[lowest]
        _unlink(v, head, nxt, prv, deg[v])
        alive[v] = False
        remaining -= 1
        size += 1
        for j in range(indptr[v], indptr[v + 1]):
            u = indices[j]
            if not alive[u]:
                continue
            _unlink(u, head, nxt, prv, deg[u])
            alive[u] = False
            remaining -= 1
            for k in range(indptr[u], indptr[u + 1]):
                w = indices[k]
                if alive[w]:
                    _unlink(w, head, nxt, prv, deg[w])
                    deg[w] -= 1
                    _link(w, head, nxt, prv, deg[w])
                    lowest = min(lowest, deg[w])
    return size


def bench_graph(name: str, graph: Graph, repeat: int, gpu: bool) -> list[dict]:
    base = {"graph": name, "n": graph.n, "m": graph.m}
    optimum = OPTIMUM.get(name)
    rows = []

    def row(method: str, reduce: str, backend: str, kernel: float, e2e: float,
            summary: dict) -> dict:
        pct = f"{100.0 * summary['size'] / optimum:.2f}" if optimum else None
        rows.append({**base, "method": method, "reduce": reduce, "backend": backend,
                     "kernel_ms": kernel, "e2e_ms": e2e, "size": summary["size"], "opt_%": pct,
                     "rounds": summary.get("rounds"), "iterations": summary.get("iterations")})
        print(rows[-1], flush=True)

    small = graph.m <= CPU_MAX_EDGES
    for method, reduce, f in CONFIGS:
        if reduce != "none" and name.startswith("rmat"):
            continue
        label = f"{method}(f={f})" if method == "degree" else method
        params = MisParams(method=method, reduce=reduce, update_frequency=f, time_limit_s=1.0)
        iterated = method == "iterated"
        runs = 1 if iterated else repeat
        if gpu:
            from graphgpu.kernels.algorithms.mis.gpu import engine_for

            e2e, result = timed_ms(lambda p=params: mis_gpu(graph, p, no_progress), runs)
            kernel = (result.summary["best_over_time"][-1][0] * 1e3 if iterated else
                      event_ms(lambda p=params: compute(engine_for(graph), graph.n, p,
                                                        no_progress), repeat))
            row(label, reduce, "gpu", kernel, e2e, result.summary)
        if small:
            cpu_runs = 1 if iterated or graph.m > 1_000_000 else max(1, repeat // 3)
            e2e, result = timed_ms(lambda p=params: mis_cpu(graph, p, no_progress), cpu_runs)
            kernel = (result.summary["best_over_time"][-1][0] * 1e3 if iterated else
                      timed_ms(lambda p=params: compute(CpuEngine(graph), graph.n, p,
                                                       no_progress), cpu_runs)[0])
            row(label, reduce, "cpu", kernel, e2e, result.summary)
    if small:
        ms, size = timed_ms(lambda: min_degree_greedy(graph.indptr, graph.indices), 1)
        row("min-degree greedy", "none", "cpu peer", float("nan"), ms, {"size": size})
    if graph.m <= 200_000:
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(graph.n))
        rows_of = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
        g.add_edges_from(zip(rows_of.tolist(), graph.indices.tolist(), strict=True))
        ms, chosen = timed_ms(lambda: nx.maximal_independent_set(g, seed=0), 1)
        row("networkx maximal_independent_set", "none", "cpu peer", float("nan"), ms,
            {"size": len(chosen)})
    return rows


def table(rows: list[dict], title: str) -> str:
    return markdown_table(rows, COLUMNS, title,
                          lambda value: format_cell(value, ".3f", ".1f", 10))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=",".join(GRAPHS))
    parser.add_argument("--repeat", type=int, default=10)
    add_data_args(parser, TABLE_HELP)
    args = parser.parse_args(argv)

    gpu = use_gpu(args)
    device = device_name("gpu") if gpu else device_name("cpu")
    rows: list[dict] = []
    for name in args.graphs.split(","):
        graph = load_timed(name, load, name, args.data_dir, gpu)
        rows += bench_graph(name, graph, args.repeat, gpu)
    title = f"Maximal independent set — {device}, CPU {device_name('cpu')}, {date.today()}"
    text = table(rows, title)
    write_out(args.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

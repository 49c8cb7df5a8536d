"""All-pairs shortest paths: our GPU (and CPU) against SciPy's csgraph and NetworkX.

Run as ``python bench/bench_apsp.py [--sizes 4096,8192,16384] [--repeat 3] [--out FILE]``.
Without CuPy or a GPU only the CPU rows run (and only at the smallest size).

Graphs:

* weighted ``dense-<n>``: G(n, m) with average degree n / 16 (Floyd-Warshall under ``auto``) and
  ``sparse-<n>``: average degree 8 (Bellman-Ford / Dijkstra from every source under ``auto``);
  uniform weights in [1, 100), seed 1; float32 and float64. A ``dense-1024`` row compares the GPU
  Floyd-Warshall with SciPy's (SciPy's O(n^3) loop is too slow at 4096 and above).
* unweighted ``ca-CondMat`` (n x n hop counts, 2.1 GB) and ``dblp-2010`` (read from
  ``--data-dir``: ``.benchdata/`` when the device call carried it, else ``../shared/data/real``).
  dblp-2010's matrix would be 400 GB: its row times the same all-pairs BFS sweep with each level
  reduced to per-node distance sums and eccentricities instead of stored (checked against CPU
  BFS from sampled sources), and says so.
* pruning: ``ca-CondMat`` and ``ca-HepTh`` with uniform weights in [1, 100) (seed 1), float32,
  Bellman-Ford and Floyd-Warshall, ``prune`` off and on (answers checked equal to rounding): what
  ``auto`` is tuned on.

What is timed (median of ``--repeat`` after a warm-up): ``gpu``: CUDA-event time of the device
solve, graph resident, matrix left on the device; ``gpu+copy``: wall time of the registered GPU
function (matrix copied to the host, summary); ``cpu``: wall time of one run of the CPU function
(Numba, all cores; at n <= 1024 and on the smallest sparse graph). Peers: SciPy
``shortest_path`` (Dijkstra or BFS) on a sample of sources, extrapolated to all n sources
(marked "x n/k"), SciPy ``floyd_warshall`` on dense-1024, NetworkX on a few sources,
extrapolated. Throughput: min-plus steps (n^3) per second for Floyd-Warshall, source x edge
pairs (n m) per second otherwise. Every GPU matrix is checked (against the CPU's, bit for bit,
where the CPU run is affordable, and against SciPy rows otherwise) before timing.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.bench_traversal import rate  # noqa: E402
from bench.common import add_data_args  # noqa: E402
from bench.table import event_ms, print_table, wall_ms  # noqa: E402
from graphgpu.kernels.algorithms import apsp  # noqa: E402
from graphgpu.kernels.algorithms.apsp import ApspParams  # noqa: E402
from graphgpu.kernels.algorithms.apsp import gpu as apsp_gpu_module  # noqa: E402
from graphgpu.kernels.algorithms.apsp.cpu import apsp as apsp_cpu  # noqa: E402
from graphgpu.kernels.algorithms.apsp.gpu import apsp as apsp_gpu  # noqa: E402
from graphgpu.kernels.core.device import device_name, gpu_available, on_device  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph, content_id  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402

SAMPLE = 64  # SciPy peer sources
DENSE_SAMPLE = 8  # on the dense graphs (Dijkstra over up to 17M arcs each)
NX_SAMPLE = 4  # NetworkX peer sources


def random_graph(n: int, degree: float, seed: int = 1) -> Graph:
    """G(n, m) with average degree ``degree`` and uniform weights in [1, 100)."""
    rng = np.random.default_rng(seed)
    m = int(n * degree / 2)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    graph, _ = build_graph(src, dst, rng.uniform(1.0, 100.0, m), extra_nodes=np.arange(n))
    return dataclasses.replace(graph, graph_id=content_id(graph))


def real_graph(name: str, data_dir: Path) -> Graph:
    from graphgpu.kernels.core.io.formats import parse_graph

    parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
    graph, _ = build_graph(parsed.src, parsed.dst, None, extra_nodes=parsed.extra_nodes)
    return dataclasses.replace(graph, graph_id=content_id(graph))


def scipy_matrix(graph: Graph, weighted: bool) -> sp.csr_matrix:
    data = graph.weights if weighted else np.ones(graph.indices.shape[0])
    return sp.csr_matrix((data, graph.indices, graph.indptr.astype(np.int32)),
                         shape=(graph.n, graph.n))


def sampled_peer(graph: Graph, weighted: bool, k: int) -> tuple[float, np.ndarray, np.ndarray]:
    """SciPy shortest_path from k sources: (ms extrapolated to n sources, sources, rows)."""
    matrix = scipy_matrix(graph, weighted)
    sources = np.random.default_rng(2).choice(graph.n, size=min(k, graph.n), replace=False)
    start = time.perf_counter()
    rows = csgraph.shortest_path(matrix, method="D", directed=False, unweighted=not weighted,
                                 indices=sources)
    ms = (time.perf_counter() - start) * 1e3 * graph.n / sources.size
    return ms, sources, rows


def networkx_ms(graph: Graph, weighted: bool) -> float:
    """NetworkX single-source shortest paths from NX_SAMPLE sources, extrapolated to n."""
    import networkx as nx

    g = nx.Graph()
    rows = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    if weighted:
        g.add_weighted_edges_from(zip(rows.tolist(), graph.indices.tolist(),
                                      graph.weights.tolist(), strict=True))
    else:
        g.add_edges_from(zip(rows.tolist(), graph.indices.tolist(), strict=True))
    start = time.perf_counter()
    for s in range(NX_SAMPLE):
        if weighted:
            nx.single_source_dijkstra_path_length(g, s)
        else:
            nx.single_source_shortest_path_length(g, s)
    return (time.perf_counter() - start) * 1e3 * graph.n / NX_SAMPLE


def check_rows(dist: np.ndarray, sources: np.ndarray, rows: np.ndarray, what: str) -> None:
    got = dist[sources].astype(np.float64)
    if dist.dtype == np.int32:
        got[got < 0] = np.inf
    rtol = 1e-5 if dist.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, rows, rtol=rtol, err_msg=what)


def device_solve(graph: Graph, params: ApspParams) -> Callable[[], object]:
    """The GPU solve without pruning, copy or summary (what the ``gpu`` rows time)."""
    p = apsp.plan(graph, params)
    dg = on_device(graph)
    weight = dg.weights.astype(p.dtype) if p.weighted else None
    return lambda: apsp_gpu_module.solve(dg.indptr, dg.indices, weight, graph.n, p, no_progress)


def emit(rows: list[dict], row: dict) -> None:
    """Keep a table row and log it at once (a run cut short still shows what it measured)."""
    rows.append(row)
    print(" | ".join(f"{k}={v}" for k, v in row.items()), flush=True)


def warm_up_cpu() -> None:
    """Load (or compile) the Numba functions before the one-run CPU timings."""
    graph = random_graph(100, 50.0)
    for params in (ApspParams(weighted=False), ApspParams(method="sssp"),
                   ApspParams(method="floyd_warshall"), ApspParams(dtype="float32")):
        apsp_cpu(graph, params, no_progress)


def bench_weighted(sizes: list[int], repeat: int, gpu: bool) -> list[dict]:
    warm_up_cpu()
    rows: list[dict] = []
    cases = [("dense", 1024, 1024 / 16)] if gpu else []
    cases += [(kind, n, n / 16 if kind == "dense" else 8.0) for n in sizes
              for kind in ("dense", "sparse")]
    for kind, n, degree in cases:
        graph = random_graph(n, degree)
        method = apsp.plan(graph, ApspParams()).method
        print(f"{kind}-{n}: m={graph.m:,} method={method}", flush=True)
        work = float(n) ** 3 if method == "floyd_warshall" else float(n) * graph.m
        unit = "minplus/s" if method == "floyd_warshall" else "pairs/s"
        if kind == "dense" and n == 1024:
            matrix = scipy_matrix(graph, True)
            start = time.perf_counter()
            expected = csgraph.floyd_warshall(matrix, directed=False)
            peer, peer_ms = "scipy floyd_warshall", (time.perf_counter() - start) * 1e3
            sources = np.arange(n)
        else:
            peer_ms, sources, expected = sampled_peer(graph, True, SAMPLE if kind == "sparse"
                                                      else DENSE_SAMPLE)
            peer = f"scipy dijkstra (x n/{sources.size})"
        base = {"graph": f"{kind}-{n} ({method})", "n": n, "m": graph.m, "peer": peer,
                "peer_ms": peer_ms}
        for dtype in ("float32", "float64"):
            params = ApspParams(dtype=dtype, prune="off")
            cpu = None
            if n <= 1024 or (kind == "sparse" and n == min(sizes)):
                start = time.perf_counter()
                cpu = apsp_cpu(graph, params, no_progress).arrays["distance"]
                ms = (time.perf_counter() - start) * 1e3  # one run: seconds each
                emit(rows, {**base, "backend": f"cpu {dtype}", "time_ms": ms,
                             "throughput": rate(work / (ms / 1e3), unit), "ratio": peer_ms / ms})
                check_rows(cpu, sources, expected, f"cpu {kind}-{n}")
            if not gpu:
                continue
            result = apsp_gpu(graph, params, no_progress).arrays["distance"]
            check_rows(result, sources, expected, f"gpu {kind}-{n} {dtype}")
            if cpu is not None:
                assert np.array_equal(cpu, result), f"{kind}-{n} {dtype}: CPU and GPU differ"
            del result, cpu
            registered = functools.partial(apsp_gpu, graph, params, no_progress)
            for backend, ms in ((f"gpu {dtype}", event_ms(device_solve(graph, params), repeat)),
                                (f"gpu+copy {dtype}", wall_ms(registered, 1))):
                emit(rows, {**base, "backend": backend, "time_ms": ms,
                             "throughput": rate(work / (ms / 1e3), unit), "ratio": peer_ms / ms})
        if kind == "sparse" and n == min(sizes):
            nx_ms = networkx_ms(graph, True)
            emit(rows, {**base, "backend": "—", "peer": f"networkx dijkstra (x n/{NX_SAMPLE})",
                         "peer_ms": nx_ms})
    return rows


def bench_unweighted(names: list[str], data_dir: Path, repeat: int, gpu: bool) -> list[dict]:
    import cupy as cp

    rows: list[dict] = []
    for name in names:
        graph = real_graph(name, data_dir)
        print(f"{name}: n={graph.n:,} m={graph.m:,}", flush=True)
        peer_ms, sources, expected = sampled_peer(graph, False, SAMPLE)
        work = float(graph.n) * graph.m
        base = {"n": graph.n, "m": graph.m, "peer": f"scipy bfs (x n/{sources.size})",
                "peer_ms": peer_ms}
        store = graph.n ** 2 * 4 <= 8 << 30
        timed: list[tuple[str, str, float]] = []
        if store and gpu:
            for prune in ("off", "on"):
                result = apsp_gpu(graph, ApspParams(prune=prune), no_progress)
                check_rows(result.arrays["distance"], sources, expected, f"gpu {name} {prune}")
                del result
                timed.append((f"{name} prune={prune}", "gpu+copy", wall_ms(
                    lambda p=prune, g=graph: apsp_gpu(g, ApspParams(prune=p), no_progress), 1)))
            timed.append((name, "gpu", event_ms(device_solve(graph, ApspParams()), repeat)))
            start = time.perf_counter()
            dist = apsp_cpu(graph, ApspParams(prune="off"), no_progress).arrays["distance"]
            timed.append((name, "cpu", (time.perf_counter() - start) * 1e3))
            check_rows(dist, sources, expected, f"cpu {name}")
            del dist
        elif gpu:
            dg = on_device(graph)
            total, ecc = apsp_gpu_module.bfs_sweep_device(dg, None, no_progress)
            for k, s in enumerate(sources[:8]):
                finite = np.isfinite(expected[k])
                assert int(total[int(s)]) == int(expected[k][finite].sum()), name
                assert int(ecc[int(s)]) == int(expected[k][finite].max()), name
            print(f"{name}: Wiener index {int(cp.sum(total)) // 2:,}, diameter "
                  f"{int(ecc.max())}", flush=True)
            timed.append((f"{name} (sweep, reduced: not stored)", "gpu", event_ms(
                lambda d=dg: apsp_gpu_module.bfs_sweep_device(d, None, no_progress), repeat)))
        for label, backend, ms in timed:
            emit(rows, {**base, "graph": label, "backend": backend, "time_ms": ms,
                         "throughput": rate(work / (ms / 1e3), "pairs/s"),
                         "ratio": peer_ms / ms})
        if store:
            emit(rows, {**base, "graph": name, "backend": "—",
                         "peer": f"networkx bfs (x n/{NX_SAMPLE})",
                         "peer_ms": networkx_ms(graph, False)})
    return rows


def bench_pruning(names: list[str], data_dir: Path) -> list[dict]:
    """Weighted (uniform weights, float32) APSP with pruning off and on: wall time on the GPU."""
    rows: list[dict] = []
    for name in names:
        plain = real_graph(name, data_dir)
        weights = np.random.default_rng(1).uniform(1.0, 100.0, plain.m)
        src = np.repeat(np.arange(plain.n), np.diff(plain.indptr))
        upper = src < plain.indices  # each edge once
        graph, _ = build_graph(plain.node_ids[src[upper]], plain.node_ids[plain.indices[upper]],
                               weights, extra_nodes=plain.node_ids)
        graph = dataclasses.replace(graph, graph_id=content_id(graph))
        for method in ("sssp", "floyd_warshall"):
            results = {}
            for prune in ("off", "on"):
                params = ApspParams(dtype="float32", method=method, prune=prune)
                result = apsp_gpu(graph, params, no_progress)
                results[prune] = result.arrays["distance"]
                ms = wall_ms(functools.partial(apsp_gpu, graph, params, no_progress), 1)
                pruned = result.summary.get("pruned", 0)
                emit(rows, {"graph": f"{name} weighted ({method}) prune={prune}"
                            + (f", {pruned:,} pruned" if prune == "on" else ""),
                            "n": graph.n, "m": graph.m, "backend": "gpu+copy float32",
                            "time_ms": ms,
                            "throughput": rate(float(graph.n) * graph.m / (ms / 1e3), "pairs/s")})
                del result
            np.testing.assert_allclose(results["on"], results["off"], rtol=1e-5)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4096,8192,16384")
    parser.add_argument("--graphs", default="ca-CondMat,dblp-2010")
    parser.add_argument("--prune-graphs", default="ca-CondMat,ca-HepTh")
    parser.add_argument("--sections", default="weighted,unweighted,pruning")
    parser.add_argument("--repeat", type=int, default=3)
    add_data_args(parser, no_gpu=False)
    args = parser.parse_args(argv)

    gpu = gpu_available()
    sizes = [int(s) for s in args.sizes.split(",")]
    sections = args.sections.split(",")
    tables = []
    if "weighted" in sections:
        tables.append(print_table(bench_weighted(sizes if gpu else sizes[:1], args.repeat, gpu),
                                  "APSP weighted (Floyd-Warshall dense, Bellman-Ford / Dijkstra "
                                  "sparse)"))
    if gpu and "unweighted" in sections:
        tables.append(print_table(bench_unweighted(args.graphs.split(","), args.data_dir,
                                                   args.repeat, gpu),
                                  "APSP unweighted (all-pairs BFS, int32 hop counts)"))
    if gpu and "pruning" in sections:
        tables.append(print_table(bench_pruning(args.prune_graphs.split(","), args.data_dir),
                                  "APSP weighted with and without pendant pruning (wall, "
                                  "matrix copied to the host)"))
    device = device_name("gpu") if gpu else "none (GPU rows skipped)"
    header = (f"Device: {device}; CPU: {device_name('cpu')}; {date.today().isoformat()}; "
              f"median of {args.repeat} runs after warm-up (gpu rows; others: one run).\n")
    print(header)
    if args.out:
        args.out.write_text(header + "\n" + "\n\n".join(tables) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""PageRank, SCC, core numbers, triangles, betweenness and Jaccard: GPU vs CPU vs peers.

Run as ``python bench/bench_analytics.py [--graphs ca-GrQc,dblp-2010,rmat20,rmat22]
[--repeat 5] [--out FILE] [--no-gpu] [--no-networkx] [--algorithms a,b]``.

Graphs: ``ca-GrQc``, ``cnr-2000`` and ``dblp-2010`` (undirected, from ``--data-dir``:
``.benchdata/`` when the device call carried it, else ``../shared/data/real``) and
``rmat<scale>`` (Graph500 R-MAT, edge factor 16, a=.57 b=c=.19, seed 1, drawn by the GPU
generator when a GPU is there, else the CPU one). R-MAT graphs are benchmarked **directed** for
pagerank and SCC (each drawn pair an arc, loops and duplicate arcs dropped) and undirected for
the others.

What is timed (median of ``--repeat`` runs after a warm-up run; CPU and peers once on graphs of
over 10 M arcs):

* ``gpu``: wall time of the registered GPU function with the graph resident on the device (as in
  a warm worker), per-node results copied back to the host included where the function does
  (families that leave them on the device, as triangles: the function's own work, summary
  included).
* ``gpu+copy``: for results left on the device, the same plus the worker's copy of the arrays
  into its pinned staging buffer (``device.to_host(..., staging=True)``).
* ``gpu device part``: the same work with the results left on the device (CUDA events), where
  the result copy is a large part: the difference is the copy to pageable host memory.
* ``cpu``: wall time of the registered CPU function (Numba; pagerank, betweenness and Jaccard use
  every core, the others one); not run where it would take minutes (``CPU_MAX_ARCS``).
* peers: NetworkX (``pagerank`` with the same alpha and tol / n, its rule being n * tol,
  ``core_number``, ``triangles``, ``betweenness_centrality`` with the same k and seed, hence
  the same sources, ``jaccard_coefficient`` on our pairs) on
  the real graphs only (building a NetworkX graph of the R-MAT ones takes minutes; triangles
  only where the squared degrees sum below 1e9), NetworkX
  graph construction not timed; SciPy ``csgraph.connected_components(connection="strong")`` on a
  prepared CSR for SCC. ``ratio`` = time_ms / peer_ms (ours / peer: below 1, ours is faster).
* ``bound``: for betweenness and Jaccard, the time of the passes the issue names at the
  device-to-device copy bandwidth measured in the same run: betweenness one read of the CSR
  (4 B per arc, 8 B per node) per source; Jaccard one read of both rows of every edge
  (4 B per entry: the sum of squared degrees).

``throughput``: arcs per second (pagerank: arcs x iterations; betweenness: arcs x sources).

Every GPU answer is checked against the CPU answer before timing (integers equal, ranks to 1e-6
relative), and the CPU answer against the peer's where one runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import TABLE_HELP, add_data_args, use_gpu  # noqa: E402, I001
from bench.table import format_cell, once_ms, table_lines, timed_ms  # noqa: E402
from graphgpu.kernels.algorithms import betweenness, kcore, pagerank, similarity  # noqa: E402
from graphgpu.kernels.algorithms import triangles  # noqa: E402
from graphgpu.kernels.algorithms.betweenness import BetweennessParams  # noqa: E402
from graphgpu.kernels.algorithms.kcore import CoreParams  # noqa: E402
from graphgpu.kernels.algorithms.pagerank import PagerankParams  # noqa: E402
from graphgpu.kernels.algorithms.scc import SccParams  # noqa: E402
from graphgpu.kernels.algorithms.scc.cpu import scc as scc_cpu  # noqa: E402
from graphgpu.kernels.algorithms.scc.gpu import scc as scc_gpu  # noqa: E402
from graphgpu.kernels.algorithms.similarity import JaccardParams  # noqa: E402
from graphgpu.kernels.algorithms.triangles import TrianglesParams  # noqa: E402
from graphgpu.kernels.core.device import device_name  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph, content_id  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402

GRAPHS = ("ca-GrQc", "dblp-2010", "rmat20", "rmat22")
COLUMNS = ("graph", "n", "m", "algorithm", "backend", "time_ms", "throughput", "peer",
           "peer_ms", "ratio")
BIG_ARCS = 10_000_000
#: NetworkX triangles run only where the sum of squared degrees is below this.
NX_TRIANGLE_WORK = 1e9
#: The defaults (the L1 change below 1e-6) and a tight tol. NetworkX stops when the change is
#: below n * its tol, so it runs with tol / n: the same rule, the same iterations.
PAGERANK = PagerankParams()
PAGERANK_TIGHT = PagerankParams(tol=1e-10, max_iter=1000)
#: CPU rows only below this many arcs (more would take long: 30 s for rmat20's triangles, and
#: minutes for rmat22's, rmat20 betweenness k=256 and Jaccard by merges).
CPU_MAX_ARCS = {"triangles": 20_000_000, "betweenness_centrality": 5_000_000,
                "jaccard": 5_000_000}
#: Sampled sources of the betweenness rows; NetworkX's run only up to this many nodes.
BETWEENNESS = BetweennessParams(k=256, seed=0)
NX_BETWEENNESS_NODES = 20_000
_NX: dict[str, object] = {}


def rmat_edges(scale: int, gpu: bool) -> tuple[np.ndarray, np.ndarray, int]:
    from graphgpu.kernels.generators import generate

    edges = generate("rmat", {"scale": scale, "edge_factor": 16, "seed": 1},
                     "gpu" if gpu else "cpu")
    src, dst = edges.src, edges.dst
    if not isinstance(src, np.ndarray):
        src, dst = src.get(), dst.get()
    return np.asarray(src), np.asarray(dst), edges.num_nodes


def csr_on_gpu(src: np.ndarray, dst: np.ndarray, n: int, directed: bool) -> Graph:
    """The graph ``build_graph`` would make of these R-MAT edges (all ``n`` nodes kept, so ids
    need no relabelling), normalised on the GPU: CPU sorts of 10^8 keys take minutes."""
    import cupy as cp

    s, d = cp.asarray(src), cp.asarray(dst)
    keep = s != d
    s, d = s[keep], d[keep]
    if not directed:
        s, d = cp.minimum(s, d), cp.maximum(s, d)
    key = cp.unique(s * n + d)
    del s, d, keep
    if not directed:
        key = cp.sort(cp.concatenate([key, (key % n) * n + key // n]))

    def csr(sorted_key):
        indptr = cp.searchsorted(sorted_key // n, cp.arange(n + 1, dtype=cp.int64))
        return indptr.get(), (sorted_key % n).astype(cp.int32).get()

    indptr, indices = csr(key)
    extra = {}
    if directed:
        in_indptr, in_indices = csr(cp.sort((key % n) * n + key // n))
        extra = {"directed": True, "in_indptr": in_indptr, "in_indices": in_indices}
    return Graph(indptr, indices, np.arange(n, dtype=np.int64), **extra)


def load(name: str, data_dir: Path, gpu: bool) -> dict[str, Graph]:
    """The benchmark graph(s) of a name: ``directed`` and ``undirected`` views (each with an id,
    so that it stays resident on the GPU)."""
    if name.startswith("rmat"):
        src, dst, n = rmat_edges(int(name[4:]), gpu)
        if gpu:
            graphs = {"directed": csr_on_gpu(src, dst, n, True),
                      "undirected": csr_on_gpu(src, dst, n, False)}
        else:
            graphs = {kind: build_graph(src, dst, extra_nodes=np.arange(n),
                                        directed=kind == "directed")[0]
                      for kind in ("directed", "undirected")}
    else:
        from graphgpu.kernels.core.io.formats import parse_graph

        parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
        graph, _ = build_graph(parsed.src, parsed.dst, parsed.weights,
                               extra_nodes=parsed.extra_nodes)
        graphs = {"directed": graph, "undirected": graph}
    return {kind: dataclasses.replace(g, graph_id=content_id(g)) for kind, g in graphs.items()}


def to_networkx(graph: Graph):
    import networkx as nx

    g = nx.DiGraph() if graph.directed else nx.Graph()
    g.add_nodes_from(range(graph.n))
    src = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    g.add_edges_from(zip(src.tolist(), graph.indices.tolist(), strict=True))
    return g


def peer_row(name: str, graph: Graph, algorithm: str, params, use_nx: bool
             ) -> tuple[str, float, object]:
    """The peer's time and answer (per node, internal ids), or ("", nan, None)."""
    if algorithm == "strongly_connected_components":
        matrix = sp.csr_matrix((np.ones(graph.indices.shape[0], np.float32), graph.indices,
                                graph.indptr), shape=(graph.n, graph.n))
        ms, (count, _) = once_ms(lambda: csgraph.connected_components(
            matrix, directed=True, connection="strong"))
        return "scipy", ms, count
    if not use_nx or name.startswith("rmat"):
        return "", float("nan"), None
    deg = np.diff(graph.indptr).astype(np.float64)
    if algorithm == "triangles" and float((deg * deg).sum()) > NX_TRIANGLE_WORK:
        return "", float("nan"), None  # NetworkX's set intersections would take many minutes
    if algorithm == "betweenness_centrality" and graph.n > NX_BETWEENNESS_NODES:
        return "", float("nan"), None  # a Python BFS per source: many minutes
    import networkx as nx

    key = f"{name}-{graph.directed}"
    if key not in _NX:
        _NX.clear()
        _NX[key] = to_networkx(graph)
    g = _NX[key]
    if algorithm == "jaccard":
        us, vs = similarity.driver.pairs_of(graph, params)
        pairs = list(zip(us.tolist(), vs.tolist(), strict=True))
        ms, out = once_ms(lambda: [p for _, _, p in nx.jaccard_coefficient(g, pairs)])
        return "networkx", ms, np.array(out)
    fn = {"pagerank": lambda: nx.pagerank(g, alpha=params.alpha, tol=params.tol / graph.n,
                                          max_iter=params.max_iter),
          "core_number": lambda: nx.core_number(g),
          "triangles": lambda: nx.triangles(g),
          "betweenness_centrality": lambda: nx.betweenness_centrality(g, k=params.k,
                                                                      seed=params.seed)
          }[algorithm]
    ms, out = once_ms(fn)
    return "networkx", ms, np.array([out[v] for v in range(graph.n)])


def check(algorithm: str, ours, theirs, what: str) -> None:
    if theirs is None:
        return
    ours = ours.host()  # a GPU backend may leave its arrays on the device
    if algorithm == "pagerank":
        ok = np.allclose(ours.node_values["pagerank"], theirs, rtol=1e-5, atol=1e-12)
    elif algorithm == "strongly_connected_components":
        ok = ours.summary["count"] == theirs
    elif algorithm == "core_number":
        ok = np.array_equal(ours.node_values["core_number"], theirs)
    elif algorithm == "betweenness_centrality":
        ok = np.allclose(ours.node_values["betweenness"], theirs, rtol=1e-9, atol=1e-15)
    elif algorithm == "jaccard":
        ok = np.array_equal(ours.arrays["jaccard"], theirs)
    else:
        ok = np.array_equal(ours.node_values["triangles"], theirs)
    if not ok:
        raise AssertionError(f"{algorithm}: {what} disagree")


ALGORITHMS = {
    "pagerank": ("directed", PAGERANK, pagerank.cpu.pagerank, pagerank.gpu.pagerank),
    "pagerank tol=1e-10": ("directed", PAGERANK_TIGHT, pagerank.cpu.pagerank,
                           pagerank.gpu.pagerank),
    "strongly_connected_components": ("directed", SccParams(), scc_cpu, scc_gpu),
    "core_number": ("undirected", CoreParams(), kcore.cpu.core_number, kcore.gpu.core_number),
    "triangles": ("undirected", TrianglesParams(), triangles.cpu.triangles,
                  triangles.gpu.triangles),
    "betweenness_centrality k=256": ("undirected", BETWEENNESS, betweenness.cpu.betweenness,
                                     betweenness.gpu.betweenness),
    "jaccard": ("undirected", JaccardParams(), similarity.cpu.jaccard, similarity.gpu.jaccard),
}


def same(algorithm: str, a, b) -> bool:
    a, b = a.host(), b.host()  # a GPU backend may leave its arrays on the device
    if algorithm == "pagerank":
        return bool(np.allclose(a.node_values["pagerank"], b.node_values["pagerank"], rtol=1e-6))
    if algorithm == "betweenness_centrality":  # sums of the sources in another order
        return bool(np.allclose(a.node_values["betweenness"], b.node_values["betweenness"],
                                rtol=1e-9, atol=1e-15))
    return a.summary == b.summary and all(
        np.array_equal(x.get(k), y.get(k)) for x, y in ((a.node_values, b.node_values),
                                                        (a.arrays, b.arrays)) for k in x)


def bandwidth_gbs() -> float:
    """Device-to-device copy bandwidth (GB/s, bytes read plus written) of a 1 GiB buffer."""
    import cupy as cp

    from bench.table import event_ms

    src = cp.random.random(1 << 27)  # 1 GiB of float64, not zeros
    dst = cp.empty_like(src)
    ms = event_ms(lambda: dst.__setitem__(slice(None), src), 5)
    return 2 * src.nbytes / ms / 1e6


def bound_row(algorithm: str, graph: Graph, params, gbs: float) -> tuple[str, float] | None:
    """The issue's bound for betweenness and Jaccard (see the module notes): label and ms."""
    arcs = int(graph.indices.shape[0])
    if algorithm == "betweenness_centrality":
        sources = min(params.k, graph.n)
        return (f"bound: CSR read once per source ({sources}) at {gbs:,.0f} GB/s",
                sources * (4 * arcs + 8 * graph.n) / gbs / 1e6)
    if algorithm == "jaccard":
        deg = np.diff(graph.indptr).astype(np.float64)
        return (f"bound: both rows of every edge read once at {gbs:,.0f} GB/s",
                4 * float((deg * deg).sum()) / gbs / 1e6)
    return None


def device_part(algorithm: str, graph: Graph, params, repeat: int) -> float | None:
    """CUDA-event time of the GPU work with the results left on the device, for the rows whose
    result copy is large; None for the others."""
    import cupy as cp

    from bench.table import event_ms

    if algorithm == "pagerank":
        def run():
            state = pagerank.driver.prepare(graph, params, pagerank.gpu.device_arrays(graph), cp)
            return pagerank.gpu.device_power_iteration(state, params, lambda *_: None)
    elif algorithm == "triangles":
        def run():
            return triangles.gpu.device_triangles(graph)
    elif algorithm == "jaccard":
        def run():
            return similarity.gpu.edges_device(graph)
    else:
        return None
    return event_ms(run, repeat)


def throughput(algorithm: str, graph: Graph, params, out, ms: float) -> str:
    """Arcs per second of a row (pagerank: times iterations; betweenness: times sources)."""
    if out is None or ms != ms:
        return ""
    arcs = float(graph.indices.shape[0])
    if algorithm == "pagerank":
        arcs *= out.summary["iterations"]
    elif algorithm == "betweenness_centrality":
        arcs *= out.summary["sources"]
    return f"{arcs / ms / 1e6:,.2f} G arcs/s"


def bench_one(name: str, kind: str, graph: Graph, algorithm: str, params, cpu_fn, gpu_fn,
              repeat: int, gpu: bool, use_nx: bool, emit, cpu_max_arcs: int,
              gbs: float) -> None:
    arcs = int(graph.indices.shape[0])
    run_cpu = lambda: cpu_fn(graph, params, no_progress)  # noqa: E731
    shown = algorithm
    algorithm = algorithm.split()[0]
    if arcs > min(cpu_max_arcs, CPU_MAX_ARCS.get(algorithm, cpu_max_arcs)):
        cpu_ms, cpu_out = float("nan"), None
    else:
        cpu_ms, cpu_out = once_ms(run_cpu) if arcs > BIG_ARCS else timed_ms(run_cpu, repeat)
    peer, peer_ms, peer_out = peer_row(name, graph, algorithm, params, use_nx)
    if cpu_out is not None:
        check(algorithm, cpu_out, peer_out, f"cpu and {peer} on {name}")
    label = f"{name} ({kind})" if name.startswith("rmat") else name
    if algorithm == "pagerank":
        shown = f"pagerank tol={params.tol:g}"
    base = {"graph": label, "n": graph.n, "m": graph.m, "algorithm": shown,
            "peer": peer, "peer_ms": peer_ms}
    emit({**base, "backend": "cpu", "time_ms": cpu_ms, "ratio": cpu_ms / peer_ms,
          "throughput": throughput(algorithm, graph, params, cpu_out, cpu_ms)})
    if not gpu:
        return
    gpu_ms, gpu_out = timed_ms(lambda: gpu_fn(graph, params, no_progress), repeat)
    if cpu_out is None:
        check(algorithm, gpu_out, peer_out, f"gpu and {peer} on {name}")
    elif not same(algorithm, gpu_out, cpu_out):
        raise AssertionError(f"{algorithm}: gpu and cpu disagree on {name}")
    extra = f" ({gpu_out.summary['iterations']} it)" if algorithm == "pagerank" else ""
    rate = throughput(algorithm, graph, params, gpu_out, gpu_ms)
    emit({**base, "backend": "gpu" + extra, "time_ms": gpu_ms, "ratio": gpu_ms / peer_ms,
          "throughput": rate})
    emit({**base, "backend": "gpu vs cpu", "time_ms": gpu_ms, "peer": "cpu",
          "peer_ms": cpu_ms, "ratio": gpu_ms / cpu_ms, "throughput": rate})
    if any(not isinstance(a, np.ndarray) for a in (*gpu_out.node_values.values(),
                                                   *gpu_out.arrays.values())):
        from graphgpu.kernels.core import device

        def with_copy():
            out = gpu_fn(graph, params, no_progress)
            return device.to_host({**out.node_values, **out.arrays}, staging=True)

        copy_ms = timed_ms(with_copy, repeat)[0]
        emit({**base, "backend": "gpu+copy", "time_ms": copy_ms, "peer": "gpu",
              "peer_ms": gpu_ms, "ratio": copy_ms / gpu_ms})
    part_ms = device_part(algorithm, graph, params, repeat)
    if part_ms is not None:
        emit({**base, "backend": "gpu device part", "time_ms": part_ms,
              "peer": "gpu", "peer_ms": gpu_ms, "ratio": part_ms / gpu_ms})
    bound = bound_row(algorithm, graph, params, gbs)
    if bound is not None:
        emit({**base, "backend": "gpu vs " + bound[0], "time_ms": gpu_ms, "peer": "bound",
              "peer_ms": bound[1], "ratio": gpu_ms / bound[1]})


def bench_graph(name: str, graphs: dict[str, Graph], args: argparse.Namespace, gpu: bool,
                emit, gbs: float) -> None:
    for algorithm, (kind, params, cpu_fn, gpu_fn) in ALGORITHMS.items():
        if args.algorithms and algorithm.split()[0] not in args.algorithms.split(","):
            continue
        bench_one(name, kind, graphs[kind], algorithm, params, cpu_fn, gpu_fn, args.repeat, gpu,
                  not args.no_networkx, emit, args.cpu_max_arcs, gbs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=",".join(GRAPHS))
    parser.add_argument("--repeat", type=int, default=5)
    add_data_args(parser, TABLE_HELP, no_gpu_help=None)
    parser.add_argument("--no-networkx", action="store_true")
    parser.add_argument("--algorithms", default="",
                        help="comma list (pagerank, strongly_connected_components, core_number, "
                             "triangles, betweenness_centrality, jaccard); default all")
    parser.add_argument("--cpu-max-arcs", type=int, default=200_000_000,
                        help="no CPU rows on graphs with more arcs")
    args = parser.parse_args(argv)
    gpu = use_gpu(args)
    device = device_name("gpu") if gpu else "no GPU"
    header = [f"### Analytics: {device}; CPU {device_name('cpu')}; {date.today()} "
              f"(python {platform.python_version()})", "",
              *table_lines([], COLUMNS)]
    lines = list(header)
    print("\n".join(header), flush=True)

    def emit(row: dict) -> None:
        line = "| " + " | ".join(format_cell(row.get(c)) for c in COLUMNS) + " |"
        lines.append(line)
        print(line, flush=True)
        if args.out:
            args.out.write_text("\n".join(lines) + "\n")

    gbs = bandwidth_gbs() if gpu else float("nan")
    print(f"<!-- device-to-device copy: {gbs:,.0f} GB/s -->", flush=True)
    for name in args.graphs.split(","):
        start = time.perf_counter()
        graphs = load(name, args.data_dir, gpu)
        print(f"<!-- {name}: built in {time.perf_counter() - start:.1f} s -->", flush=True)
        bench_graph(name, graphs, args, gpu, emit, gbs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Pendant pruning's effect on BFS and connected components, and SSSP against SciPy's Dijkstra.

Run as ``python bench/bench_pruning.py [--graphs dblp-2010,cnr-2000,...] [--repeat 5] [--out F]``.
Without CuPy or a GPU the GPU rows are skipped.

Pruning table (as the paper's Table I): nodes of degree 1, nodes pruned and rounds, and the time
of Phase I alone. Timing table: the registered functions' wall time (results copied to the host)
with ``prune="off"`` and ``prune="on"`` (``on`` includes Phase I, the core's CSR and Phase III),
median of ``--repeat`` runs after a warm-up, BFS from 4 seeded random non-isolated sources. Every
pruned answer is checked equal to the unpruned one (and the GPU's to the CPU's) first.

``dblp-2010`` is built with ``extra_nodes=arange(326186)`` (the paper's node count includes
isolated nodes our edge-list parse would drop). SSSP: R-MAT scale ``--sssp-scale`` (edge factor
16, seed 1) with uniform [0, 1) weights from seed 1; GPU = CUDA-event time of
:func:`sssp_device` (graph resident), CPU = :func:`sssp_cpu`, peer = SciPy ``dijkstra`` with
predecessors from one source.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_traversal import assert_same, load  # noqa: E402
from bench.common import add_data_args, load_timed, use_gpu  # noqa: E402
from bench.table import event_ms, format_cell, markdown_table, wall_ms  # noqa: E402
from graphgpu.kernels.algorithms.common import pruning  # noqa: E402
from graphgpu.kernels.algorithms.sssp import SsspParams  # noqa: E402
from graphgpu.kernels.algorithms.sssp.cpu import sssp as sssp_cpu  # noqa: E402
from graphgpu.kernels.algorithms.sssp.gpu import sssp as sssp_gpu  # noqa: E402
from graphgpu.kernels.algorithms.sssp.gpu import sssp_device  # noqa: E402
from graphgpu.kernels.algorithms.traversal import BfsParams, ComponentsParams  # noqa: E402
from graphgpu.kernels.algorithms.traversal.cpu import bfs as bfs_cpu  # noqa: E402
from graphgpu.kernels.algorithms.traversal.cpu import (  # noqa: E402
    connected_components as components_cpu,
)
from graphgpu.kernels.algorithms.traversal.gpu import bfs as bfs_gpu  # noqa: E402
from graphgpu.kernels.algorithms.traversal.gpu import (  # noqa: E402
    connected_components as components_gpu,
)
from graphgpu.kernels.core.device import device_name  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph, content_id  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402

GRAPHS = ("dblp-2010", "cnr-2000", "ca-CondMat", "ca-HepTh", "ca-GrQc")
DBLP_NODES = 326186


def table(rows: list[dict], title: str) -> str:
    """A markdown table of ``rows`` (columns in the first row's key order), printed and returned."""
    return markdown_table(rows, list(rows[0]) if rows else [], title,
                          lambda v: format_cell(v, ".3f", ".0f", 100))


def load_graph(name: str, data_dir: Path) -> Graph:
    if name != "dblp-2010":
        return load(name, data_dir)
    from graphgpu.kernels.core.io.formats import parse_graph

    parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
    extra = np.arange(DBLP_NODES) if parsed.extra_nodes is None else np.union1d(
        parsed.extra_nodes, np.arange(DBLP_NODES))
    graph, _ = build_graph(parsed.src, parsed.dst, parsed.weights, extra_nodes=extra)
    return dataclasses.replace(graph, graph_id=content_id(graph))


def bench_graph(name: str, graph: Graph, repeat: int, gpu: bool) -> tuple[dict, list[dict]]:
    record = pruning.prune_pendants(graph)
    info = {"graph": name, "n": graph.n, "m": graph.m,
            "degree-1 %": 100 * pruning.pendant_share(graph),
            "pruned": record.pruned, "pruned %": 100 * record.pruned / graph.n,
            "rounds": record.rounds,
            "phase I cpu ms": wall_ms(lambda: pruning.prune_pendants(graph), repeat)}
    if gpu:
        info["phase I gpu ms"] = wall_ms(lambda: pruning.prune_pendants_gpu(graph), repeat)
    rng = np.random.default_rng(1)
    sources = rng.choice(np.flatnonzero(graph.degrees() > 0), size=4, replace=False)
    backends = {"cpu": (bfs_cpu, components_cpu)}
    if gpu:
        backends["gpu"] = (bfs_gpu, components_gpu)
    rows = []
    reference = {}
    for backend, (bfs, components) in backends.items():
        for algo in ("bfs", "cc"):
            times = {}
            for mode in ("off", "on"):
                if algo == "bfs":
                    calls = [(bfs, BfsParams(source=int(graph.node_ids[s]), prune=mode))
                             for s in sources]
                else:
                    calls = [(components, ComponentsParams(prune=mode))]
                for k, (fn, params) in enumerate(calls):  # same answer as the CPU, unpruned
                    result = fn(graph, params, no_progress)
                    for key in ("pruned", "prune_rounds"):
                        result.summary.pop(key, None)
                    if (algo, k) in reference:
                        assert_same(reference[(algo, k)], result, f"{algo} {name} {backend}")
                    else:
                        reference[(algo, k)] = result
                times[mode] = statistics.median(
                    wall_ms(lambda f=fn, p=params: f(graph, p, no_progress), repeat)
                    for fn, params in calls)
            rows.append({"graph": name, "algorithm": algo, "backend": backend,
                         "off ms": times["off"], "on ms": times["on"],
                         "gain %": 100 * (times["off"] - times["on"]) / times["off"]})
    return info, rows


def bench_sssp(scale: int, repeat: int, gpu: bool) -> list[dict]:
    from graphgpu.kernels.generators import generate

    edges = generate("rmat", {"scale": scale, "edge_factor": 16, "seed": 1}, "cpu")
    weights = np.random.default_rng(1).uniform(0.0, 1.0, edges.src.shape[0])
    graph, _ = build_graph(edges.src, edges.dst, weights, extra_nodes=np.arange(edges.num_nodes))
    graph = dataclasses.replace(graph, graph_id=content_id(graph))
    source = int(np.argmax(graph.degrees()))
    params = SsspParams(source=int(graph.node_ids[source]))
    csr = sp.csr_matrix((graph.weights, graph.indices, graph.indptr.astype(np.int32)),
                        shape=(graph.n, graph.n))
    peer_ms = wall_ms(lambda: csgraph.dijkstra(csr, directed=True, indices=source,
                                               return_predecessors=True), max(1, repeat // 2))
    cpu = sssp_cpu(graph, params, no_progress)
    expected = csgraph.dijkstra(csr, directed=True, indices=source)
    np.testing.assert_allclose(cpu.node_values["distance"], expected, rtol=1e-12)
    base = {"graph": f"rmat{scale} weighted", "n": graph.n, "m": graph.m,
            "reached": cpu.summary["reached"], "scipy dijkstra ms": peer_ms}
    rows = [{**base, "backend": "cpu (numba dijkstra)",
             "ms": wall_ms(lambda: sssp_cpu(graph, params, no_progress), max(1, repeat // 2))}]
    if gpu:
        for dtype in ("float64", "float32"):
            p = SsspParams(source=params.source, dtype=dtype)
            assert_same(sssp_cpu(graph, p, no_progress), sssp_gpu(graph, p, no_progress),
                        f"sssp {dtype}")
            rows.append({**base, "backend": f"gpu {dtype} (device)",
                         "ms": event_ms(lambda d=dtype: sssp_device(graph, source, d,
                                                                    no_progress), repeat)})
            rows.append({**base, "backend": f"gpu {dtype} (+copy)",
                         "ms": wall_ms(lambda q=p: sssp_gpu(graph, q, no_progress), repeat)})
    for row in rows:
        row["vs scipy"] = peer_ms / row["ms"]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=",".join(GRAPHS))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sssp-scale", type=int, default=20)
    add_data_args(parser, None, no_gpu_help=None)
    args = parser.parse_args(argv)

    gpu = use_gpu(args)
    infos, rows = [], []
    for name in args.graphs.split(","):
        if not (args.data_dir / f"{name}.txt.gz").exists():
            print(f"{name}: not in {args.data_dir}, skipped", flush=True)
            continue
        graph = load_timed(name, load_graph, name, args.data_dir)
        info, timed = bench_graph(name, graph, args.repeat, gpu)
        infos.append(info)
        rows += timed
    sssp_rows = bench_sssp(args.sssp_scale, args.repeat, gpu) if args.sssp_scale else []

    device = device_name("gpu") if gpu else "none (GPU rows skipped)"
    header = (f"Device: {device}; CPU: {device_name('cpu')}; {date.today().isoformat()}; "
              f"median of {args.repeat} runs after warm-up.\n")
    print(header)
    tables = [table(infos, "Pendant pruning (phase I)"),
              table(rows, "BFS / connected components with and without pruning (wall ms, "
                          "results on the host)")]
    if sssp_rows:
        tables.append(table(sssp_rows, "SSSP vs SciPy dijkstra"))
    if args.out:
        args.out.write_text(header + "\n" + "\n\n".join(tables) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

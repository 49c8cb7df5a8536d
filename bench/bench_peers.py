"""Ours against the peers of issue 14 (ECL-MIS, ECL-CC, ECL-APSP, kClist), side by side in one run.

Run on the device as ``python bench/bench_peers.py [--graphs ca-GrQc,...] [--skip apsp,rmat24]
[--sizes 4096,8192,16384] [--repeat 10] [--label baseline] [--out FILE]`` with the peers'
folder carried as ``.peers/`` (a copy of ``../shared/peers``, git-ignored) and the real graphs as
``.benchdata/`` (else ``../shared/data/real`` is read). Without ``.peers/`` the peer columns stay
empty; without a GPU nothing runs.

Graphs: ``ca-GrQc``, ``ca-CondMat``, ``dblp-2010`` (isolated nodes added back, so node counts
are the published ones), ``cnr-2000`` and ``rmat20/22/24`` (Graph500 R-MAT, edge factor 16,
a=.57 b=c=.19, seed 1, generated and normalised on the GPU). APSP: G(n, m) with average degree
n / 16 and integer weights 1..99 (seed 1) at ``--sizes``. Cliques: k = 3..8 on ``--clique-graphs``.
``--skip`` takes section names (mis, cc, bfs, apsp, cliques) and graph names, to keep a device call
short; ``--peers-bin DIR`` takes peer binaries built beforehand (``peers.build()`` elsewhere, same
architecture: the device's compile of all of them is skipped).

What is timed:

* ``ours_ms``: our registered GPU function (``get_algorithm(name).gpu``: the job's code path, the
  result copied back to the host and verified), CUDA events around the call, graph resident,
  median of ``--repeat`` runs after one warm-up run (which compiles kernels and uploads the graph).
* ``kernel_ms``: the device part alone (no copy to the host, no summary), where the family
  exposes a public device entry point (BFS, CC, MIS, APSP); timed the same way.
  ``kernel_ratio`` = kernel_ms / peer_ms.
* ``peer_ms``: the peer's own compute timer (ECL: GPU time of the computation, the graph already
  on the device; median of 3 runs, APSP 1), kClist: wall time of its process on 16 threads.
* ``ratio`` = ours_ms / peer_ms (<= 1: ours is faster).

BFS: from 4 seeded random non-isolated sources (median); GTEPS = undirected edges of the reached
component / time. MIS: DUMIS, update frequency 2, no reductions; sizes of both sets are listed.
APSP: ours Floyd-Warshall with a float32 result (exact: integer weights, sums below 2**24), pruning
off; integer weights run on an integer matrix (the kind, int32 or uint16 pairs, in the algorithm
column), phase 3 on DPX; the size columns give min-plus updates (n^3) per second (ours: of
kernel_ms where measured). Cliques: "first call" is each k's first call in this process, after
the worker warm-up of ``count_cliques`` (``workers.__main__.warm_up``) with the graph resident.
Every answer of ours is checked against the peer where the peer reports one (clique counts) or
against SciPy (components count, BFS reach on small graphs).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import TABLE_HELP, default_data_dir, load_timed, rmat_csr_on_gpu, write_out  # noqa: E402
from bench.table import event_ms, format_cell, table_lines  # noqa: E402
from graphgpu.kernels.core.device import device_name, gpu_available, on_device  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph, content_id  # noqa: E402
from graphgpu.kernels.core.registry import get_algorithm, no_progress  # noqa: E402

GRAPHS = ("ca-GrQc", "ca-CondMat", "dblp-2010", "cnr-2000", "rmat20", "rmat22", "rmat24")
SECTIONS = ("mis", "cc", "bfs", "apsp", "cliques")
#: Published node counts (the edge lists omit isolated nodes).
NODES = {"ca-GrQc": 5242, "ca-HepTh": 9877, "ca-CondMat": 23133, "dblp-2010": 326186}
#: ECL-CC's verification overflows its stack from here on (peers/README.md).
ECL_CC_MAX_NODES = 2_000_000
BFS_SOURCES = 4
CLIQUE_KS = range(3, 9)
COLUMNS = ("graph", "algorithm", "ours_ms", "kernel_ms", "peer", "peer_ms", "ratio",
           "kernel_ratio", "ours_size", "peer_size")


# -- graphs --------------------------------------------------------------------------------------

def rmat_on_gpu(scale: int) -> Graph:
    """Graph500 R-MAT of ``scale``, normalised on the GPU (:func:`bench.common.rmat_csr_on_gpu`)."""
    import cupy as cp

    indptr, indices = rmat_csr_on_gpu(scale)
    graph = Graph(indptr, indices, np.arange(indptr.shape[0] - 1, dtype=np.int64))
    cp.get_default_memory_pool().free_all_blocks()
    return dataclasses.replace(graph, graph_id=f"bench-peers-rmat{scale}")


def load(name: str, data_dir: Path) -> Graph:
    """One benchmark graph, with an id so that it stays resident on the GPU across runs."""
    if name.startswith("rmat"):
        return rmat_on_gpu(int(name[4:]))
    from graphgpu.kernels.core.io.formats import parse_graph

    parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
    extra = np.arange(NODES[name]) if name in NODES else parsed.extra_nodes
    graph, _ = build_graph(parsed.src, parsed.dst, extra_nodes=extra)
    return dataclasses.replace(graph, graph_id=content_id(graph))


def apsp_graph(n: int, seed: int = 1) -> Graph:
    """G(n, m), average degree n / 16, integer weights 1..99 (ECL-APSP reads int32 weights)."""
    rng = np.random.default_rng(seed)
    m = n * n // 32
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    weights = rng.integers(1, 100, m).astype(np.float64)
    graph, _ = build_graph(src, dst, weights, extra_nodes=np.arange(n))
    return dataclasses.replace(graph, graph_id=content_id(graph))


# -- helpers -------------------------------------------------------------------------------------

def device_entry(family: str, name: str) -> Callable[..., Any] | None:
    """A family's public device-side function (results left on the GPU), wherever the family
    keeps it (its ``gpu`` or ``driver`` module, or its package); None when it has none."""
    for module in (f"graphgpu.kernels.algorithms.{family}.{part}"
                   for part in ("gpu", "driver", "__init__")):
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if callable(found):
            return found
    return None


def ratio(ours: float | None, peer: float | None) -> float | None:
    return ours / peer if ours and peer else None


def emit(rows: list[dict], row: dict) -> None:
    """Keep a row and log it at once (a run cut short still shows what it measured)."""
    row["ratio"] = ratio(row.get("ours_ms"), row.get("peer_ms"))
    row["kernel_ratio"] = ratio(row.get("kernel_ms"), row.get("peer_ms"))
    rows.append(row)
    print(" | ".join(f"{k}={v}" for k, v in row.items()), flush=True)


def cell(value: object) -> str:
    return format_cell(value, ".3f", ".1f", 100)


def table(rows: list[dict], title: str, header: str, notes: list[str]) -> str:
    lines = [f"## {title}", "", header, "", *table_lines(rows, COLUMNS, cell), "", *notes]
    return "\n".join(lines)


class Peers:
    """The peers' module (``.peers/peers.py``), built once (or its binaries taken from
    ``prebuilt``); absent: every peer is None."""

    def __init__(self, folder: Path, prebuilt: Path | None = None) -> None:
        self.mod = None
        if (folder / "peers.py").is_file():
            sys.path.insert(0, str(folder))
            import peers

            if prebuilt is not None:
                peers.BIN = str(prebuilt)
            else:
                start = time.perf_counter()
                peers.build()
                print(f"peers built in {time.perf_counter() - start:.1f} s", flush=True)
            self.mod = peers
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-peers-"))
        self._egr: dict[str, str] = {}

    def egr(self, name: str, graph: Graph, weights: bool = False) -> str:
        if name not in self._egr:
            w = graph.weights.astype(np.int32) if weights else None
            self._egr[name] = self.mod.write_egr(graph.indptr, graph.indices, w,
                                                 str(self.tmp / f"{name}.egr"))
        return self._egr[name]

    def edge_file(self, name: str, graph: Graph) -> str:
        """kClist's input: each undirected edge once, ``u v`` with u < v."""
        path = self.tmp / f"{name}.edges"
        if not path.exists():
            src = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(graph.indptr))
            upper = src < graph.indices
            pairs = np.stack([src[upper], graph.indices[upper]], axis=1)
            path.write_text("\n".join(f"{u} {v}" for u, v in pairs.tolist()) + "\n")
        return str(path)


# -- sections ------------------------------------------------------------------------------------

def bench_mis(name: str, graph: Graph, repeat: int, peers: Peers, rows: list[dict]) -> None:
    alg = get_algorithm("mis")
    params = alg.params_model(method="degree", update_frequency=2, reduce="none")
    result = alg.gpu(graph, params, no_progress)
    ours_ms = event_ms(lambda: alg.gpu(graph, params, no_progress), repeat)
    kernel_ms = None
    compute, engine_for = device_entry("mis", "compute"), device_entry("mis", "engine_for")
    if compute is not None and engine_for is not None:
        kernel_ms = event_ms(lambda: compute(engine_for(graph), graph.n, params, no_progress),
                             repeat)
    peer_ms = peer_size = None
    if peers.mod:
        peer_ms, peer_size = peers.mod.ecl_mis(peers.egr(name, graph))
    emit(rows, {"graph": name, "algorithm": "MIS (DUMIS f=2)", "ours_ms": ours_ms,
                "kernel_ms": kernel_ms, "peer": "ECL-MIS", "peer_ms": peer_ms,
                "ours_size": int(result.summary["size"]), "peer_size": peer_size})


def bench_cc(name: str, graph: Graph, repeat: int, peers: Peers, rows: list[dict]) -> None:
    alg = get_algorithm("connected_components")
    params = alg.params_model()
    result = alg.gpu(graph, params, no_progress)
    if graph.m <= 10_000_000:
        from scipy.sparse import csgraph, csr_matrix

        csr = csr_matrix((np.ones(graph.indices.size, np.int8), graph.indices,
                          graph.indptr), shape=(graph.n, graph.n))
        count = csgraph.connected_components(csr, directed=False)[0]
        assert result.summary["count"] == count, (name, result.summary, count)
    ours_ms = event_ms(lambda: alg.gpu(graph, params, no_progress), repeat)
    kernel_ms = None
    components_device = device_entry("traversal", "components_device")
    if components_device is not None:
        kernel_ms = event_ms(lambda: components_device(graph), repeat)
    peer, peer_ms = "ECL-CC", None
    if peers.mod:
        if graph.n > ECL_CC_MAX_NODES:
            peer = "ECL-CC (crashes on rmat22+: not run)"
        else:
            peer_ms = peers.mod.ecl_cc(peers.egr(name, graph))
    emit(rows, {"graph": name, "algorithm": "CC (full run)", "ours_ms": ours_ms,
                "kernel_ms": kernel_ms, "peer": peer, "peer_ms": peer_ms,
                "ours_size": int(result.summary["count"])})


def bench_bfs(name: str, graph: Graph, repeat: int, rows: list[dict]) -> dict:
    """BFS has no peer in ../shared/peers: ours alone, with GTEPS (returned for the line)."""
    alg = get_algorithm("bfs")
    degrees = graph.degrees()
    rng = np.random.default_rng(1)
    sources = rng.choice(np.flatnonzero(degrees > 0), size=BFS_SOURCES, replace=False)
    bfs_device = device_entry("traversal", "bfs_device")
    ours, kernel, edges = [], [], []
    for s in sources:
        params = alg.params_model(source=int(graph.node_ids[s]))
        result = alg.gpu(graph, params, no_progress).host()
        edges.append(int(degrees[result.node_values["level"] >= 0].sum()) // 2)
        ours.append(event_ms(lambda p=params: alg.gpu(graph, p, no_progress), repeat))
        if bfs_device is not None:
            kernel.append(event_ms(lambda v=int(s): bfs_device(graph, v, no_progress), repeat))
    reached = statistics.median(edges)
    ours_ms = statistics.median(ours)
    kernel_ms = statistics.median(kernel) if kernel else None
    emit(rows, {"graph": name, "algorithm": "BFS (levels + parents)", "ours_ms": ours_ms,
                "kernel_ms": kernel_ms, "peer": "none (ECL has no BFS here)"})
    return {"graph": name, "edges": reached, "ours_gteps": reached / ours_ms / 1e6,
            "kernel_gteps": reached / kernel_ms / 1e6 if kernel_ms else None}


def updates(n: int, ms: float | None) -> str | None:
    """Floyd-Warshall's n^3 min-plus updates per second, for the size columns."""
    return f"{float(n) ** 3 / (ms / 1e3) / 1e12:.2f} T minplus/s" if ms else None


def bench_apsp(n: int, repeat: int, peers: Peers, rows: list[dict]) -> None:
    graph = apsp_graph(n)
    alg = get_algorithm("apsp")
    params = alg.params_model(dtype="float32", method="floyd_warshall", prune="off")
    result = alg.gpu(graph, params, no_progress)
    from scipy.sparse import csgraph, csr_matrix

    probe = np.random.default_rng(2).choice(n, size=4, replace=False)
    csr = csr_matrix((graph.weights, graph.indices, graph.indptr), shape=(n, n))
    expected = csgraph.dijkstra(csr, directed=False, indices=probe)
    assert np.array_equal(result.arrays["distance"][probe].astype(np.float64), expected), n
    del result
    ours_ms = event_ms(lambda: alg.gpu(graph, params, no_progress), repeat)
    kernel_ms, label = None, "APSP (ours float32 FW)"
    solve, plan = device_entry("apsp", "solve"), device_entry("apsp", "plan")
    if solve is not None and plan is not None:
        p = plan(graph, params)
        dg = on_device(graph)
        weight = dg.weights.astype(p.dtype)
        kernel_ms = event_ms(lambda: solve(dg.indptr, dg.indices, weight, n, p, no_progress),
                             repeat)
        kind = device_entry("apsp", "integer_kind")
        if kind is not None:
            label = f"APSP (ours FW, {kind(dg.indptr, dg.indices, weight, n, p) or 'float'})"
    peer_ms = peers.mod.ecl_apsp(peers.egr(f"apsp-{n}", graph, weights=True)) \
        if peers.mod else None
    emit(rows, {"graph": f"G(n={n:,}, deg n/16, w 1-99)", "algorithm": label,
                "ours_ms": ours_ms, "kernel_ms": kernel_ms, "peer": "ECL-APSP (int32)",
                "peer_ms": peer_ms,
                "ours_size": updates(n, kernel_ms or ours_ms), "peer_size": updates(n, peer_ms)})


def bench_cliques(name: str, graph: Graph, repeat: int, peers: Peers, rows: list[dict]) -> None:
    alg = get_algorithm("count_cliques")
    on_device(graph)  # resident, as in the timed calls: the first call pays no upload
    for k in CLIQUE_KS:
        params = alg.params_model(k=k)
        start = time.perf_counter()
        count = int(alg.gpu(graph, params, no_progress).summary["count"])
        first_ms = (time.perf_counter() - start) * 1e3
        ours_ms = event_ms(lambda p=params: alg.gpu(graph, p, no_progress), repeat)
        peer_ms = peer_count = None
        if peers.mod:
            peer_ms, peer_count = peers.mod.kclist(k, peers.edge_file(name, graph), threads=16)
            assert peer_count == count, (name, k, count, peer_count)
        emit(rows, {"graph": name, "algorithm": f"{k}-cliques (first call {first_ms:.0f} ms)",
                    "ours_ms": ours_ms, "peer": "kClist (16 threads, process wall)",
                    "peer_ms": peer_ms, "ours_size": count, "peer_size": peer_count})


# -- main ----------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=",".join(GRAPHS))
    parser.add_argument("--skip", default="", help="sections and/or graphs to leave out")
    parser.add_argument("--sizes", default="4096,8192,16384", help="APSP sizes")
    parser.add_argument("--clique-graphs", default="ca-CondMat,dblp-2010")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--label", default="", help="names this run in the title")
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--peers-dir", type=Path, default=ROOT / ".peers")
    parser.add_argument("--peers-bin", type=Path, help="peer binaries built beforehand")
    parser.add_argument("--out", type=Path, help=TABLE_HELP)
    args = parser.parse_args(argv)
    if not gpu_available():
        print("no GPU: nothing to compare")
        return 0

    skip = set(filter(None, args.skip.split(",")))
    sections = [s for s in SECTIONS if s not in skip]
    names = [g for g in args.graphs.split(",") if g and g not in skip]
    clique_graphs = [g for g in args.clique_graphs.split(",") if g and g not in skip]
    peers = Peers(args.peers_dir, args.peers_bin)
    if "cliques" in sections and clique_graphs:
        from graphgpu.workers.__main__ import warm_up

        start = time.perf_counter()
        warm_up("gpu", names=("count_cliques",))
        print(f"worker warm-up of count_cliques: {time.perf_counter() - start:.1f} s", flush=True)
    started = time.perf_counter()
    rows: list[dict] = []
    bfs_lines: list[dict] = []

    def write() -> str:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = (f"Device: {device_name('gpu')}; CPU: {device_name('cpu')}; {stamp}; ours: "
                  f"CUDA events, graph resident, median of {args.repeat} after a warm-up; "
                  "peers: their own compute timers (kClist: process wall time). "
                  "ratio = ours_ms / peer_ms, kernel_ratio = kernel_ms / peer_ms.")
        notes = [f"BFS on {b['graph']}: {b['edges']:,.0f} edges reached, "
                 f"{b['ours_gteps']:.1f} GTEPS (registered function, levels and parents copied "
                 "to the host)" + (f", {b['kernel_gteps']:.1f} GTEPS (device part)"
                                   if b["kernel_gteps"] else "")
                 for b in bfs_lines if b["graph"] == "rmat24"]
        title = "Ours against the peers" + (f" — {args.label}" if args.label else "")
        text = table(rows, title, header, notes)
        write_out(args.out, text)
        return text

    graph_sections = [s for s in sections if s in ("mis", "cc", "bfs")]
    for name in dict.fromkeys(names + (clique_graphs if "cliques" in sections else [])):
        wanted = graph_sections if name in names else []
        wants_cliques = "cliques" in sections and name in clique_graphs
        if not wanted and not wants_cliques:
            continue
        graph = load_timed(name, load, name, args.data_dir)
        repeat = max(3, args.repeat // 2) if graph.m > 100_000_000 else args.repeat
        if "mis" in wanted:
            bench_mis(name, graph, repeat, peers, rows)
        if "cc" in wanted:
            bench_cc(name, graph, repeat, peers, rows)
        if "bfs" in wanted:
            bfs_lines.append(bench_bfs(name, graph, repeat, rows))
        if wants_cliques:
            bench_cliques(name, graph, 3, peers, rows)
        write()
        print(f"[{time.perf_counter() - started:.0f} s]", flush=True)
    if "apsp" in sections:
        for n in (int(s) for s in args.sizes.split(",") if s):
            bench_apsp(n, 3, peers, rows)
            write()
    print(write())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""BFS and connected components: our CPU and GPU backends against SciPy's csgraph.

Run as ``python bench/bench_traversal.py [--graphs cnr-2000,rmat20] [--algorithms bfs,cc]
[--repeat 10] [--out FILE]``.
Without CuPy or a GPU the GPU rows are skipped, so it also runs on a CPU-only machine.

Graphs: ``cnr-2000`` and ``dblp-2010`` (read from ``--data-dir``: ``.benchdata/`` when the
device call carried it, else ``../shared/data/real``) and ``rmat<scale>`` (Graph500 R-MAT, edge
factor 16, a=.57 b=c=.19, seed 1). ``rmat20`` is made by ``graphgpu.kernels.generators`` on the CPU
so
every machine benchmarks the same graph; larger scales, too slow to build on the CPU within a
device run, by the GPU generator (CuPy's random stream: a different draw of the same model) and
normalised on the GPU. Graphs named in ``--gpu-only`` get GPU rows only (no CPU or SciPy timing;
the GPU answer is still checked against the CPU's, from the first source).

What is timed, as a median over ``--repeat`` runs after one warm-up run:

* ``cpu``: wall time of our CPU function (:func:`bfs_cpu`, :func:`components_cpu`), results in
  host memory; single-threaded (Numba / SciPy).
* ``gpu``: CUDA-event time of the device part (:func:`bfs_device`, :func:`components_device`)
  with the graph already resident (as in a warm worker); BFS includes its one host sync per level.
  Components get three GPU rows: ``gpu kernels`` is init + hooking + flatten alone, what ECL-CC
  publishes (its H100 figures from issue 4 are the peer there); ``gpu (+number, sizes, count
  read)`` the whole :func:`components_device` (the CPU's numbering by smallest member, the sizes,
  the one host read); ``gpu+copy`` as below. A second table splits the run into its phases
  (:attr:`DeviceComponents.PHASES`, an event after each).
* ``gpu+copy``: wall time of the registered GPU function and of the worker's result preparation
  after it (``workers.tasks.result_arrays``: node ids narrowed or translated on the device, one
  copy per array into pinned host memory), i.e. the worker's ``compute_ms``.
* peer: SciPy ``breadth_first_order`` (with predecessors) / ``connected_components`` on a
  prepared ``csr_matrix``. ``ratio`` = peer_ms / time_ms (> 1: faster than SciPy).

BFS runs from 4 seeded random non-isolated sources; throughput is Graph500-style TEPS (edges of
the traversed component per second). Components throughput is undirected edges per second. Every
GPU answer is checked equal to the CPU answer before timing.
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
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import add_data_args, load_timed, rmat_csr_on_gpu, use_gpu  # noqa: E402
from bench.table import event_ms, print_table, wall_ms  # noqa: E402
from graphgpu.kernels.algorithms.traversal import BfsParams, ComponentsParams  # noqa: E402
from graphgpu.kernels.algorithms.traversal.cpu import bfs as bfs_cpu  # noqa: E402
from graphgpu.kernels.algorithms.traversal.cpu import (  # noqa: E402
    connected_components as components_cpu,
)
from graphgpu.kernels.algorithms.traversal.gpu import (  # noqa: E402
    DeviceComponents,
    bfs_device,
    components_device,
)
from graphgpu.kernels.algorithms.traversal.gpu import bfs as bfs_gpu  # noqa: E402
from graphgpu.kernels.algorithms.traversal.gpu import (  # noqa: E402
    connected_components as components_gpu,
)
from graphgpu.kernels.core.device import device_name, on_device  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph, content_id  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402
from graphgpu.workers.tasks import result_arrays  # noqa: E402

GRAPHS = ("cnr-2000", "rmat20")
#: ECL-CC's kernel times on an H100 (init, compute, flatten), the goal set in issue 4.
ECL_CC_MS = {"cnr-2000": 0.285, "dblp-2010": 0.144, "rmat20": 0.88}
SOURCES = 4


def rmat_on_gpu(scale: int) -> Graph:
    """R-MAT of ``scale`` generated and normalised on the GPU
    (:func:`bench.common.rmat_csr_on_gpu`)."""
    indptr, indices = rmat_csr_on_gpu(scale)
    return Graph(indptr, indices, np.arange(indptr.shape[0] - 1, dtype=np.int64),
                 graph_id=f"bench-rmat{scale}-gpu")


def load(name: str, data_dir: Path, gpu: bool = False) -> Graph:
    """Build one benchmark graph (with an id, so that it stays resident on the GPU)."""
    if name.startswith("rmat"):
        from graphgpu.kernels.generators import generate

        scale = int(name[4:])
        if scale > 20 and gpu:
            return rmat_on_gpu(scale)
        edges = generate("rmat", {"scale": scale, "edge_factor": 16, "seed": 1}, "cpu")
        graph, _ = build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))
    else:
        from graphgpu.kernels.core.io.formats import parse_graph

        parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
        graph, _ = build_graph(parsed.src, parsed.dst, parsed.weights,
                               extra_nodes=parsed.extra_nodes)
    return dataclasses.replace(graph, graph_id=content_id(graph))



def scipy_csr(graph: Graph) -> sp.csr_matrix:
    """The CSR in the dtypes SciPy's csgraph works in, so that the peer pays no conversion."""
    data = np.ones(graph.indices.shape[0], dtype=np.float64)
    return sp.csr_matrix((data, graph.indices, graph.indptr.astype(np.int32)),
                         shape=(graph.n, graph.n))


def rate(value: float, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.0f} {unit}"


def assert_same(a, b, what: str) -> None:
    a, b = a.host(), b.host()  # a GPU backend's arrays stay on the device
    assert a.summary == b.summary, (what, a.summary, b.summary)
    for key, values in {**a.node_values, **a.arrays}.items():
        other = {**b.node_values, **b.arrays}[key]
        assert np.array_equal(values, other), f"{what}: {key} differs between CPU and GPU"


def bench_bfs(name: str, graph: Graph, repeat: int, gpu: bool, cpu: bool = True) -> list[dict]:
    rng = np.random.default_rng(1)
    candidates = np.flatnonzero(graph.degrees() > 0)
    sources = rng.choice(candidates, size=min(SOURCES, candidates.size), replace=False)
    csr = scipy_csr(graph) if cpu else None
    base = {"graph": name, "n": graph.n, "m": graph.m,
            "peer": "scipy breadth_first_order" if cpu else None}
    times: dict[str, list[float]] = {"cpu": [], "gpu": [], "gpu+copy": [], "peer": []}
    traversed = []
    for k, source in enumerate(sources):
        params = BfsParams(source=int(graph.node_ids[source]))
        reference = bfs_cpu(graph, params, no_progress) if cpu or k == 0 else None
        answer = bfs_gpu(graph, params, no_progress).host() if gpu else reference
        if reference is not None and gpu:
            assert_same(reference, answer, f"bfs {name}")
        traversed.append(int(graph.degrees()[answer.node_values["level"] >= 0].sum()) // 2)
        if cpu:
            times["cpu"].append(wall_ms(lambda p=params: bfs_cpu(graph, p, no_progress), repeat))
            times["peer"].append(wall_ms(
                lambda s=source: csgraph.breadth_first_order(csr, int(s), directed=False,
                                                             return_predecessors=True), repeat))
        if gpu:
            times["gpu"].append(event_ms(
                lambda s=source: bfs_device(graph, int(s), no_progress), repeat))
            times["gpu+copy"].append(wall_ms(
                lambda p=params: result_arrays(graph, bfs_gpu(graph, p, no_progress)), repeat))
    peer_ms = statistics.median(times["peer"]) if times["peer"] else None
    edges = statistics.median(traversed)
    rows = []
    for backend in ("cpu", "gpu", "gpu+copy"):
        if not times[backend]:
            continue
        ms = statistics.median(times[backend])
        rows.append({**base, "backend": backend, "time_ms": ms, "peer_ms": peer_ms,
                     "throughput": rate(edges / (ms / 1e3), "TEPS"),
                     "ratio": peer_ms / ms if peer_ms else None})
    return rows


def components_phase_ms(graph: Graph, repeat: int) -> dict[str, float]:
    """Median CUDA-event times of the GPU components run, after one warm-up run.

    ``kernels``: the phases up to flatten as one launch, what ECL-CC's published times cover.
    One entry per :attr:`DeviceComponents.PHASES`, from a second loop launching them one by one
    with an event after each. ``full``: a whole run phase by phase and the count read, without
    the allocation that :func:`components_device` adds (its one launch is the gpu row).
    """
    import cupy as cp

    dg = on_device(graph)
    DeviceComponents(dg).run()
    cp.cuda.Device().synchronize()
    phases = DeviceComponents.PHASES
    flatten = phases.index("flatten")
    events = [cp.cuda.Event() for _ in range(len(phases) + 2)]
    samples: dict[str, list[float]] = {name: [] for name in ("kernels", *phases, "full")}
    for _ in range(repeat):
        run = DeviceComponents(dg)
        events[0].record()
        run.launch(0, flatten)
        events[1].record()
        events[1].synchronize()
        samples["kernels"].append(cp.cuda.get_elapsed_time(events[0], events[1]))
    for _ in range(repeat):
        run = DeviceComponents(dg)
        events[0].record()
        for phase, event in zip(phases, events[1:], strict=False):
            run.phase(phase)
            event.record()
        run.result()
        events[-1].record()
        events[-1].synchronize()
        for k, phase in enumerate(phases):
            samples[phase].append(cp.cuda.get_elapsed_time(events[k], events[k + 1]))
        samples["full"].append(cp.cuda.get_elapsed_time(events[0], events[-1]))
    return {name: statistics.median(values) for name, values in samples.items()}


def bench_components(name: str, graph: Graph, repeat: int, gpu: bool,
                     cpu: bool = True) -> tuple[list[dict], list[dict]]:
    """Rows of the components table and of the GPU phase table."""
    base = {"graph": name, "n": graph.n, "m": graph.m}
    params = ComponentsParams()
    scipy_peer: dict = {}
    rows: list[dict] = []
    phase_rows: list[dict] = []

    def row(backend: str, ms: float, peer: dict) -> None:
        rows.append({**base, "backend": backend, "time_ms": ms, **peer,
                     "throughput": rate(graph.m / (ms / 1e3), "edges/s"),
                     "ratio": peer["peer_ms"] / ms if peer else None})

    if cpu:
        csr = scipy_csr(graph)
        scipy_peer = {"peer": "scipy connected_components",
                      "peer_ms": wall_ms(lambda: csgraph.connected_components(csr, directed=False),
                                         repeat)}
        row("cpu", wall_ms(lambda: components_cpu(graph, params, no_progress), repeat),
            scipy_peer)
    if gpu:
        assert_same(components_cpu(graph, params, no_progress),
                    components_gpu(graph, params, no_progress), f"components {name}")
        phase_ms = components_phase_ms(graph, repeat)
        ecl = ({"peer": "ECL-CC (published, H100)", "peer_ms": ECL_CC_MS[name]}
               if name in ECL_CC_MS else {})
        row("gpu kernels (init..flatten)", phase_ms["kernels"], ecl)
        row("gpu (+number, sizes, count read)",
            event_ms(lambda: components_device(graph), repeat), scipy_peer)
        row("gpu+copy", wall_ms(lambda: result_arrays(graph, components_gpu(graph, params,
                                                                            no_progress)),
                                repeat), scipy_peer)
        phase_rows = [{**base, "backend": f"gpu phase: {phase}", "time_ms": phase_ms[phase],
                       "throughput": f"{phase_ms[phase] / phase_ms['full']:.0%} of run"}
                      for phase in (*DeviceComponents.PHASES, "full")]
    return rows, phase_rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=",".join(GRAPHS))
    parser.add_argument("--repeat", type=int, default=10)
    add_data_args(parser)
    parser.add_argument("--gpu-only", default="", help="graphs without CPU and SciPy rows")
    parser.add_argument("--algorithms", default="bfs,cc", help="which of bfs, cc to run")
    args = parser.parse_args(argv)

    gpu = use_gpu(args)
    bfs_rows: list[dict] = []
    cc_rows: list[dict] = []
    phase_rows: list[dict] = []
    for name in args.graphs.split(","):
        graph = load_timed(name, load, name, args.data_dir, gpu)
        cpu = not gpu or name not in args.gpu_only.split(",")
        if "bfs" in args.algorithms.split(","):
            bfs_rows += bench_bfs(name, graph, args.repeat, gpu, cpu)
        if "cc" in args.algorithms.split(","):
            rows, phases = bench_components(name, graph, args.repeat, gpu, cpu)
            cc_rows += rows
            phase_rows += phases

    device = device_name("gpu") if gpu else "none (GPU rows skipped)"
    header = (f"Device: {device}; CPU: {device_name('cpu')}; {date.today().isoformat()}; "
              f"median of {args.repeat} runs after warm-up.\n")
    print(header)
    tables = []
    if bfs_rows:
        tables.append(print_table(bfs_rows, "BFS (levels + deterministic parents)"))
    if cc_rows:
        tables.append(print_table(cc_rows, "Connected components (labels + sizes)"))
    if phase_rows:
        tables.append(print_table(phase_rows, "Connected components on the GPU, by phase "
                                              "(CUDA events; throughput: share of the run)"))
    if args.out:
        args.out.write_text(header + "\n" + "\n\n".join(tables) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

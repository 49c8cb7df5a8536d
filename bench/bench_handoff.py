"""The worker's side of a job around the kernel: the result from the algorithm to its folder.

For each graph, algorithm and backend, in one process and without Redis (what
``workers/tasks.py`` does between loading the graph and finishing the record):
- ``function_ms``: the registered function (a GPU backend leaves its arrays on the device);
- ``prepare_ms``: node ids translated (or only narrowed, identity ids) where the arrays are,
  and a GPU's arrays copied once each into pinned memory (``tasks.result_arrays``); the
  worker's ``compute_ms`` is ``function_ms + prepare_ms``;
- ``write_ms``: ``protocol.write_result`` (staging folder, parallel chunked writes, rename);
- the peer: the hand-off as it was before issue 23 on the same answer (arrays to the host
  with ``cupy.asnumpy``, ``Graph.to_original`` on node-id fields, ``node_id.npy`` always,
  ``np.save`` per array), timed from the function's return to the folder.

Goals (issue 23, H100): ``prepare_ms`` <= result bytes / 20 GB/s beyond the device part, and
``write_ms`` (the hand-off less the Redis finish) <= result bytes / 4 GB/s + 5 ms.

Run: ``python bench/bench_handoff.py [--scales 18,20] [--algorithms bfs,connected_components,
pagerank] [--repeat 5] [--no-gpu] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import add_data_args, use_gpu, write_out  # noqa: E402
from bench.table import markdown_table  # noqa: E402
from graphgpu.kernels.core import device, protocol  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph  # noqa: E402
from graphgpu.kernels.core.registry import AlgorithmResult, get_algorithm, no_progress  # noqa: E402
from graphgpu.kernels.core.settings import Settings  # noqa: E402
from graphgpu.kernels.core.store import GraphStore  # noqa: E402
from graphgpu.kernels.generators import generate, preferred_backend  # noqa: E402
from graphgpu.workers.tasks import result_arrays  # noqa: E402

COLUMNS = ("graph", "n", "m", "algorithm", "backend", "function_ms", "prepare_ms", "write_ms",
           "time_ms", "result_mb", "throughput", "peer", "peer_ms", "peer_mb", "ratio")


def stored_rmat(store: GraphStore, scale: int, shuffled: bool, gpu: bool) -> Graph:
    """R-MAT of ``scale`` (edge factor 16, seed 1), stored and loaded back as a worker loads
    it; ``shuffled``: ids spread over ``0..4n`` (not identity), so node ids are translated."""
    params = {"scale": scale, "edge_factor": 16, "seed": 1}
    edges = generate("rmat", params, preferred_backend("rmat", params, gpu), no_progress)
    ids = np.arange(edges.num_nodes)
    if shuffled:
        ids = np.sort(np.random.default_rng(1).choice(4 * edges.num_nodes, edges.num_nodes,
                                                      replace=False))
    graph, report = build_graph(ids[edges.src], ids[edges.dst], extra_nodes=ids)
    meta, _ = store.put(graph, name=f"rmat{scale}", source={"format": "generated"},
                        report=report)
    return store.load(meta["id"])


def synced(fn: Any, backend: str) -> Any:
    """``fn()``, then the device's queue drained (so its time is the work's)."""
    out = fn()
    if backend == "gpu":
        device.cupy().cuda.get_current_stream().synchronize()
    return out


def old_handoff(settings: Settings, graph: Graph, result: AlgorithmResult, job_id: str
                ) -> int:
    """The hand-off before issue 23 (the peer): host copies, masked translation, every array
    with ``np.save``, ``node_id.npy`` always; returns the bytes written."""
    def host(values: Any) -> np.ndarray:
        return values if isinstance(values, np.ndarray) else device.cupy().asnumpy(values)

    arrays = {"node_id": np.asarray(graph.node_ids)}
    for name, values in (*result.node_values.items(), *result.arrays.items()):
        values = host(values)
        arrays[name] = graph.to_original(values) if name in result.node_id_fields else values
    folder = settings.results_dir / job_id
    folder.mkdir(parents=True)
    for name, array in arrays.items():
        np.save(folder / f"{name}.npy", array)
    return sum(int(a.nbytes) for a in arrays.values())


def measure(settings: Settings, graph: Graph, name: str, params: dict, backend: str,
            repeat: int) -> dict:
    algorithm = get_algorithm(name)
    run = algorithm.function(backend)
    model = algorithm.params_model.model_validate(params)
    times: dict[str, list[float]] = {"function": [], "prepare": [], "write": [], "peer": []}
    nbytes = peer_bytes = 0
    for i in range(repeat + 1):  # the first round warms up (pinned pool, page cache)
        start = time.perf_counter()
        result = synced(lambda: run(graph, model, no_progress), backend)
        mid = time.perf_counter()
        arrays, identity = result_arrays(graph, result)
        prepared = time.perf_counter()
        manifest = protocol.ResultManifest(
            summary=result.summary, n=graph.n, node_values=list(result.node_values),
            arrays=list(result.arrays), identity_ids=identity,
            node_id_fields=list(result.node_id_fields))
        protocol.write_result(settings, f"new{i}", manifest, arrays)
        written = time.perf_counter()
        nbytes = sum(int(a.nbytes) for a in arrays.values())
        del arrays
        peer_start = time.perf_counter()
        peer_bytes = old_handoff(settings, graph, result, f"old{i}")
        peer_end = time.perf_counter()
        shutil.rmtree(settings.results_dir)
        if i:
            for key, value in (("function", mid - start), ("prepare", prepared - mid),
                               ("write", written - prepared), ("peer", peer_end - peer_start)):
                times[key].append(value * 1e3)
    ms = {key: statistics.median(values) for key, values in times.items()}
    ours = ms["prepare"] + ms["write"]
    return {"n": graph.n, "m": graph.m, "algorithm": name,
            "backend": backend, "function_ms": ms["function"], "prepare_ms": ms["prepare"],
            "write_ms": ms["write"], "time_ms": ours, "result_mb": nbytes / 1e6,
            "throughput": f"{nbytes / ours / 1e6:.2f} GB/s",
            "peer": "before (to_original, np.save, node_id.npy)",
            "peer_ms": ms["peer"], "peer_mb": peer_bytes / 1e6, "ratio": ours / ms["peer"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="18,20")
    parser.add_argument("--algorithms", default="bfs,connected_components,pagerank")
    parser.add_argument("--repeat", type=int, default=5)
    add_data_args(parser)
    args = parser.parse_args()
    backends = ["cpu", "gpu"] if use_gpu(args) else ["cpu"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp))
        store = GraphStore(settings.graphs_dir, settings.tmp_dir)
        for scale in (int(s) for s in args.scales.split(",")):
            for shuffled in (False, True):
                graph = stored_rmat(store, scale, shuffled, "gpu" in backends)
                label = f"rmat{scale}" + (" (ids spread)" if shuffled else "")
                print(f"{label}: n={graph.n:,} m={graph.m:,}", flush=True)
                for name in args.algorithms.split(","):
                    hub = int(graph.node_ids[np.argmax(graph.degrees())])
                    params = {"source": hub} if name == "bfs" else {}
                    for backend in backends:
                        row = measure(settings, graph, name, params, backend, args.repeat)
                        rows.append({**row, "graph": label})
                        print(rows[-1], flush=True)
    device_name = device.device_name(backends[-1])
    text = markdown_table(rows, COLUMNS, f"Result hand-off, {device_name}, {date.today()}")
    write_out(args.out, text)


if __name__ == "__main__":
    main()

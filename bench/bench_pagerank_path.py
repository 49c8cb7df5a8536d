"""Where a GPU ``pagerank`` job's time goes on R-MAT (issues 23 and 24), step by step.

Run on the device as ``python bench/bench_pagerank_path.py [--scale 24] [--repeat 5]
[--no-relabel]``. Builds ``rmat<scale>`` on the GPU as the service's generator does (undirected:
the graph an end-to-end job runs on) and as ``bench_analytics`` does (directed), each with a
graph id so that it stays resident, then times (medians over ``--repeat`` after a warm-up):

* ``device part``: ``prepare`` + ``device_power_iteration`` (CUDA events, ranks on the device);
* its pieces: ``prepare`` alone, the hub segments, one iteration's kernels;
* ``registered``: the registered GPU function, wall time (whatever copy it makes included);
* ``worker compute``: what a worker's ``compute_ms`` covers (``workers.tasks``: the function and
  ``result_arrays``, the ranks into the pinned staging buffer reserved at warm-up);
* the 134 MB copy of rmat24's ranks alone, pinned and pageable;
* with ``--relabel`` left on, the device part on the same graph relabelled by out-degree
  (descending: the ranks gathered most sit together), an experiment for the kernel's next step:
  its ranks mapped back are checked against the plain run's.

Prints one line per figure; works with the code of any revision that has
``pagerank.gpu.device_power_iteration`` (imported as ``graphgpu.*`` from the tree that
``bench/device_env.sh`` mapped).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.bench_analytics import csr_on_gpu, rmat_edges  # noqa: E402
from bench.table import event_ms  # noqa: E402
from graphgpu.kernels.algorithms.pagerank import PagerankParams, driver, gpu  # noqa: E402
from graphgpu.kernels.core import device  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402


def wall_ms(fn, repeat: int) -> tuple[float, Any]:
    """Median synchronised wall time of ``fn`` (after a warm-up) and its last answer."""
    import cupy as cp

    out = fn()
    times = []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        start = time.perf_counter()
        out = fn()
        cp.cuda.Device().synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), out


def graphs(scale: int) -> dict[str, Any]:
    """``undirected``: the generator's graph (as the service stores it); ``directed``: the
    analytics bench's directed view of the same R-MAT edges."""
    from graphgpu.kernels.generators import generate_graph

    undirected, _ = generate_graph("rmat", {"scale": scale, "edge_factor": 16, "seed": 1}, "gpu")
    src, dst, n = rmat_edges(scale, True)
    directed = csr_on_gpu(src, dst, n, True)
    return {"undirected": dataclasses.replace(undirected, graph_id=f"rmat{scale}-u"),
            "directed": dataclasses.replace(directed, graph_id=f"rmat{scale}-d")}


def device_state(graph, params) -> dict[str, Any]:
    import cupy as cp

    return driver.prepare(graph, params, gpu.device_arrays(graph), cp)


def relabelled_state(graph, params) -> tuple[dict[str, Any], Any, float]:
    """The device state of ``graph`` relabelled by out-degree, descending (new id r is old id
    ``order[r]``; rows keep their arcs, sorted), the order, and the build's wall ms."""
    import cupy as cp

    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    state = device_state(graph, params)
    n = graph.n
    out_degree = cp.diff(gpu.device_arrays(graph)["indptr"])
    order = cp.argsort(-out_degree).astype(cp.int32)
    new_id = cp.empty(n, dtype=cp.int32)
    new_id[order] = cp.arange(n, dtype=cp.int32)
    in_indptr, in_indices = state["in_indptr"], state["in_indices"]
    lengths = cp.diff(in_indptr)[order]
    indptr = cp.zeros(n + 1, dtype=cp.int64)
    cp.cumsum(lengths, out=indptr[1:])
    arcs = int(indptr[-1])
    row = cp.searchsorted(indptr, cp.arange(arcs, dtype=cp.int64), side="right") - 1
    source = cp.arange(arcs, dtype=cp.int64) - indptr[row] + in_indptr[order[row]]
    key = row * n + new_id[in_indices[source]]
    del source
    key.sort()
    indices = (key - row * n).astype(cp.int32)
    del key, row
    relabelled = {**state, "in_indptr": indptr, "in_indices": indices, "in_weights": None,
                  "inv_out": state["inv_out"][order], "dangling": state["dangling"][order],
                  "p": state["p"][order], "d": state["d"][order]}
    cp.cuda.Device().synchronize()
    return relabelled, order, (time.perf_counter() - start) * 1e3


def profile(name: str, graph, params, repeat: int, relabel: bool) -> None:
    import cupy as cp
    import numpy as np

    from graphgpu.workers import tasks

    device.on_device(graph)

    def say(what: str, value: object) -> None:
        print(f"{name}: {what}: {value}", flush=True)

    def events(fn) -> str:
        return f"{event_ms(fn, repeat):.2f}"

    def wall(fn) -> str:
        return f"{wall_ms(fn, repeat)[0]:.2f}"

    iterate = gpu.device_power_iteration
    state = device_state(graph, params)
    say("n, arcs", f"{graph.n:,}, {int(state['in_indices'].shape[0]):,}")
    x, iterations, converged, residual = iterate(state, params, no_progress)
    say("iterations, converged, residual", f"{iterations}, {converged}, {residual:.3e}")
    say("device part ms", events(lambda: iterate(device_state(graph, params), params,
                                                 no_progress)))
    say("prepare ms (events)", events(lambda: device_state(graph, params)))
    say("prepare ms (wall)", wall(lambda: device_state(graph, params)))
    say("loop only ms", events(lambda: iterate(state, params, no_progress)))
    one = PagerankParams(max_iter=1)
    say("one iteration ms (loop, max_iter 1)", events(lambda: iterate(state, one, no_progress)))
    if hasattr(gpu, "_segments"):
        say("hub segments ms", wall(lambda: gpu._segments(state["in_indptr"])))
    ms, result = wall_ms(lambda: gpu.pagerank(graph, params, no_progress), repeat)
    say("registered ms (wall)", f"{ms:.2f}")
    say("registered ranks left on the device",
        str(not isinstance(result.node_values["pagerank"], np.ndarray)))
    device.reserve_staging(16 * graph.n)

    def worker_compute():
        return tasks.result_arrays(graph, gpu.pagerank(graph, params, no_progress))

    ms, (arrays, _) = wall_ms(worker_compute, repeat)
    say("worker compute ms (function + result_arrays)", f"{ms:.2f}")
    ranks = cp.asarray(arrays["pagerank"])
    say("max rel diff to device part's ranks", f"{float(cp.max(cp.abs(ranks - x) / x)):.2e}")
    say("copy to pinned staging ms", wall(lambda: device.to_host({"r": ranks}, staging=True)))
    say("copy to pageable (asnumpy) ms", wall(lambda: cp.asnumpy(ranks)))
    if not relabel:
        return
    relabelled, order, build_ms = relabelled_state(graph, params)
    say("relabel build ms (wall, once per graph if cached)", f"{build_ms:.1f}")
    xr, it_r, _, res_r = iterate(relabelled, params, no_progress)
    back = cp.empty_like(xr)
    back[order] = xr
    diff = float(cp.max(cp.abs(back - ranks) / ranks))
    say("relabelled iterations, residual, max rel diff", f"{it_r}, {res_r:.3e}, {diff:.2e}")
    say("relabelled loop only ms", events(lambda: iterate(relabelled, params, no_progress)))
    say("relabelled one iteration ms", events(lambda: iterate(relabelled, one, no_progress)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-relabel", action="store_true")
    parser.add_argument("--only", default="", help="undirected or directed (default both)")
    args = parser.parse_args(argv)
    print("code:", inspect.getsourcefile(gpu), "| device:", device.device_name("gpu"), flush=True)
    start = time.perf_counter()
    built = graphs(args.scale)
    print(f"built in {time.perf_counter() - start:.1f} s", flush=True)
    params = PagerankParams()
    for name, graph in built.items():
        if not args.only or args.only == name:
            profile(f"rmat{args.scale} {name}", graph, params, args.repeat, not args.no_relabel)
    return 0


if __name__ == "__main__":
    sys.exit(main())

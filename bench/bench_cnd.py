"""Critical node detection: CND* speed (CPU vs GPU) and quality on the CNP instances vs PyCNP.

Run as ``python bench/bench_cnd.py [--parts speed,quality] [--limits 1,10] [--out FILE]``.
Without CuPy or a GPU the GPU rows are skipped; without ``pycnp`` its columns are.
``--parts distributed`` (not in the default: it starts Redis and ``--workers`` CPU worker
processes) times ``distributed`` jobs of ``--starts`` seeds through the service's own queue.

Speed (the paper's test set): Barabási-Albert (m = 2) and Watts-Strogatz (k = 4, p = 0.1)
graphs of 100 to 20,000 nodes, seed 1, k = 5 and n / 4. ``cpu greedy`` is CND* on one core
(Numba ``cnd_star``, median wall time of ``--repeat`` runs after a warm-up); ``gpu greedy`` the
same single start on the GPU and ``gpu multistart`` one wave of starts (two blocks per
multiprocessor), both median CUDA-event times after a warm-up. ``ratio`` = CPU greedy time /
this row's time; ``throughput`` = greedy starts per second.

Quality: the 16 instances of ``--data-dir``/cnp (``instances.tsv`` gives k and the best-known
objective). Objective (and gap to best-known) of CND* greedy (seed 0), GPU multistart (one
wave), and ``search`` on CPU and GPU with each time limit, next to PyCNP's memetic search
(``Model.solve(problem_type="CNP", budget=k, stopping_criterion=MaxRuntime(s), seed=0)``) at the
same limits. CPU searches and PyCNP run in parallel processes (one core each) while the GPU
searches run one after another in the main process.

Scale (``--parts scale``, issue 25): on the real networks of ``--data-dir`` (``--graphs``;
``rmat<scale>``: Graph500's R-MAT, edge factor 16), CND* on one CPU core (wall time, after a
warm-up) for k = 10 and k = n / 100, one GPU start (and its set checked against the CPU's) and
one GPU wave where their estimates are under ``GPU_START_MAX_S``; then (not with
``--no-methods``) every method with ``time_limit_s = --limit`` on each backend: wall time
against the budget (``time_limit_s x 1.1 + 1``), the estimate, and the objective against the
greedy's.

The memetic search against PyCNP at equal time is ``bench/bench_cnd_memetic.py``.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from anywhere

from bench.common import add_data_args, pycnp_solve, use_gpu, write_out  # noqa: E402
from bench.table import event_ms, markdown_table, once_ms, print_table, wall_ms  # noqa: E402
from graphgpu.kernels.algorithms.critical_nodes import (  # noqa: E402
    CndParams,
    critical_nodes_cpu,
    critical_nodes_gpu,
    estimate,
)
from graphgpu.kernels.algorithms.critical_nodes import gpu as cnd_gpu  # noqa: E402
from graphgpu.kernels.algorithms.critical_nodes import greedy as cnd_greedy  # noqa: E402
from graphgpu.kernels.algorithms.critical_nodes.cost import gpu_wave_seconds  # noqa: E402
from graphgpu.kernels.core.device import device_name  # noqa: E402
from graphgpu.kernels.core.graph import Graph, build_graph  # noqa: E402
from graphgpu.kernels.core.io.formats import parse_graph  # noqa: E402
from graphgpu.kernels.core.registry import no_progress  # noqa: E402
from graphgpu.kernels.generators import generate, generate_graph  # noqa: E402

SIZES = (100, 500, 2000, 10000, 20000)
#: scale: GPU CND* runs (one start; a wave) whose estimate is below this many seconds.
GPU_START_MAX_S = 15.0
MODELS = {"BA": ("barabasi_albert", {"m": 2}), "WS": ("watts_strogatz", {"k": 4, "p": 0.1})}


def generated(model: str, n: int) -> tuple[Graph, Any]:
    """The model's graph of n nodes (seed 1) and its normalisation report."""
    name, extra = MODELS[model]
    edges = generate(name, {"n": n, "seed": 1, **extra})
    return build_graph(edges.src, edges.dst, extra_nodes=np.arange(edges.num_nodes))




def speed(repeat: int, gpu: bool, sizes: tuple[int, ...]) -> list[dict]:
    rows: list[dict] = []
    for model in MODELS:
        for n in sizes:
            graph, _ = generated(model, n)
            for k in sorted({5, n // 4}):
                label = f"{model}-{n} k={k}"
                runs = repeat if n <= 2000 else 1  # Numba compiled by then: no warm-up needed
                comp = np.zeros(graph.n, np.int64)
                counts = np.zeros(graph.n + 1, np.int64)
                cpu_ms = wall_ms(lambda g=graph, k=k, c=comp, s=counts: cnd_greedy.cnd_star(
                    g.indptr, g.indices, k, np.uint64(0), c, s), runs, warm=n <= 2000)
                base = {"graph": label, "n": graph.n, "m": graph.m, "peer": "cpu greedy",
                        "peer_ms": cpu_ms}
                rows.append({**base, "backend": "cpu greedy", "time_ms": cpu_ms,
                             "throughput": f"{1e3 / cpu_ms:,.1f} starts/s", "ratio": 1.0})
                print(rows[-1], flush=True)
                if not gpu:
                    continue
                wave = cnd_gpu.concurrent_starts()
                for what, starts in (("gpu greedy", 1), (f"gpu multistart ({wave})", wave)):
                    seeds = range(0, starts)
                    ms = event_ms(lambda g=graph, k=k, s=seeds: cnd_gpu.multistart(
                        g, k, s, no_progress), repeat)
                    rows.append({**base, "backend": what, "time_ms": ms,
                                 "throughput": f"{starts * 1e3 / ms:,.1f} starts/s",
                                 "ratio": cpu_ms / ms})
                    print(rows[-1], flush=True)
    return rows


# ------------------------------------------------------------------------------------------------
# Quality
# ------------------------------------------------------------------------------------------------


def instances(data_dir: Path) -> list[dict[str, Any]]:
    with (data_dir / "cnp" / "instances.tsv").open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def load_cnp(data_dir: Path, file: str) -> Graph:
    parsed = parse_graph((data_dir / "cnp" / file).read_bytes(), "cnp")
    graph, _ = build_graph(parsed.src, parsed.dst, extra_nodes=parsed.extra_nodes)
    return graph


def _warm() -> None:
    """Compile the Numba code before any timed run of this process."""
    graph, _ = generated("BA", 100)
    critical_nodes_cpu(graph, CndParams(k=5, method="search", starts=2, time_limit_s=0.05),
                       no_progress)


def cpu_job(data_dir: Path, row: dict[str, Any], limit: float, who: str) -> tuple:
    """One CPU quality run in a worker process: our search, or PyCNP."""
    graph = load_cnp(data_dir, row["file"])
    k = int(row["k"])
    if who == "search":
        result = critical_nodes_cpu(graph, CndParams(k=k, method=who, starts=8,
                                                     time_limit_s=limit), no_progress)
        return row["name"], who, limit, result.summary["objective"]
    return row["name"], who, limit, pycnp_solve(graph, k, limit)[0]


def have_pycnp() -> bool:
    try:
        import pycnp  # noqa: F401
    except ImportError:
        return False
    return True


def quality(data_dir: Path, limits: list[float], gpu: bool, processes: int) -> str:
    rows = instances(data_dir)
    peers = ["search"] + (["pycnp"] if have_pycnp() else [])
    context = multiprocessing.get_context("spawn")  # never fork a CUDA context
    results: dict[tuple[str, str, float], int] = {}
    with ProcessPoolExecutor(processes, mp_context=context, initializer=_warm) as pool:
        futures = [pool.submit(cpu_job, data_dir, row, limit, who)
                   for limit in limits for row in rows for who in peers]
        for row in rows:
            graph = load_cnp(data_dir, row["file"])
            k = int(row["k"])
            results[row["name"], "greedy", 0] = critical_nodes_cpu(
                graph, CndParams(k=k), no_progress).summary["objective"]
            if not gpu:
                continue
            wave = cnd_gpu.concurrent_starts()
            results[row["name"], "multistart", 0] = critical_nodes_gpu(
                graph, CndParams(k=k, method="multistart", starts=wave),
                no_progress).summary["objective"]
            for limit in limits:
                summary = critical_nodes_gpu(graph, CndParams(
                    k=k, method="search", starts=wave, time_limit_s=limit), no_progress).summary
                results[row["name"], "gpu", limit] = summary["objective"]
                print(row["name"], "gpu", limit, summary["objective"], summary["iterations"],
                      f"best at {summary['time_to_best_s']:.2f} s", flush=True)
        for future in futures:
            name, who, limit, objective = future.result()
            results[name, who, limit] = objective
            print(name, who, limit, objective, flush=True)
    columns = [("greedy", 0, "greedy (CPU)")]
    if gpu:
        columns.append(("multistart", 0, "multistart (GPU)"))
    for limit in limits:
        columns += [("search", limit, f"search CPU {limit:g} s")]
        if gpu:
            columns.append(("gpu", limit, f"search GPU {limit:g} s"))
        if "pycnp" in peers:
            columns.append(("pycnp", limit, f"PyCNP {limit:g} s"))
    lines = ["| instance | n | k | best known | " + " | ".join(c[2] for c in columns) + " |",
             "|" + "---|" * (4 + len(columns))]
    within = {c: 0 for c in columns}
    for row in rows:
        best = int(row["best_known_objective"])
        cells = []
        for column in columns:
            value = results.get((row["name"], column[0], column[1]))
            if value is None:
                cells.append("—")
                continue
            gap = 100.0 * (value - best) / best
            within[column] += gap <= 1.0
            cells.append(f"{value:,} ({gap:+.1f}%)")
        lines.append(f"| {row['name']} | {row['n']} | {row['k']} | {best:,} | "
                     + " | ".join(cells) + " |")
    lines.append("| within 1% of best known | | | | "
                 + " | ".join(f"{within[c]}/{len(rows)}" for c in columns) + " |")
    text = "\n".join(["### Quality on the CNP instances (objective, gap to best known)", "",
                      *lines])
    print(text)
    return text


# ------------------------------------------------------------------------------------------------
# Distributed: the service's own queue, with real workers
# ------------------------------------------------------------------------------------------------


def submit_and_wait(jobs: Any, graph_id: str, params: dict[str, Any]) -> tuple[float, str]:
    """Queue a job the way the API does; (ms from submit to finish, final status)."""
    start = time.perf_counter()
    record, _ = jobs.submit(kind="algorithm", name="critical_nodes", graph_id=graph_id,
                            params=params, backend="auto", idempotency_key=None, owner="",
                            key_id="bench")
    while (status := jobs.get(record["id"])["status"]) in ("queued", "running"):
        time.sleep(0.005)
    return (time.perf_counter() - start) * 1e3, status


def distributed(sizes: tuple[int, ...], workers: int, starts: int) -> list[dict]:
    """``distributed`` jobs (``starts`` seeds in ``workers`` shards) through a real Redis and
    ``workers`` CPU worker processes, timed from submit to the reduce job's finish; the peer is
    CND* on one core (one start)."""
    import os
    import subprocess
    import tempfile

    from redis import Redis

    from graphgpu.kernels.core.settings import get_settings
    from graphgpu.kernels.core.store import GraphStore
    from graphgpu.service.jobs import JobStore
    from graphgpu.service.redis_server import RedisServer

    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "redis")
        url = server.start()
        env = {**os.environ, "GRAPHGPU_REDIS_URL": url, "GRAPHGPU_DATA_DIR": f"{tmp}/data",
               "PYTHONPATH": str(ROOT), "GRAPHGPU_EXTRA_ALGORITHM_MODULES": "[]"}
        os.environ.update({k: env[k] for k in ("GRAPHGPU_REDIS_URL", "GRAPHGPU_DATA_DIR")})
        get_settings.cache_clear()
        settings = get_settings()
        redis = Redis.from_url(url)
        command = [sys.executable, "-m", "graphgpu.workers", "--backend", "cpu"]
        procs = [subprocess.Popen(command, env=env, cwd=ROOT) for _ in range(workers)]
        try:
            while redis.scard(settings.key("workers")) < workers:
                time.sleep(0.2)
            store = GraphStore(settings.graphs_dir, settings.tmp_dir)
            jobs = JobStore(redis, settings)
            for model in MODELS:
                for n in sizes:
                    graph, report = generated(model, n)
                    meta, _ = store.put(graph, name=f"{model}-{n}", source={"format": "bench"},
                                        report=report)
                    for k in sorted({5, n // 4}):
                        comp = np.zeros(graph.n, np.int64)
                        counts = np.zeros(graph.n + 1, np.int64)
                        cpu_ms = wall_ms(lambda g=graph, k=k, c=comp, s=counts: cnd_greedy.cnd_star(
                            g.indptr, g.indices, k, np.uint64(0), c, s), 1)
                        params = {"k": k, "method": "distributed", "starts": starts,
                                  "shards": workers}
                        ms, status = submit_and_wait(jobs, meta["id"], params)
                        what = f"distributed ({workers} CPU workers, {starts} starts)"
                        rows.append({"graph": f"{model}-{n} k={k}", "n": graph.n, "m": graph.m,
                                     "backend": what if status == "succeeded" else status,
                                     "time_ms": ms, "peer": "cpu greedy", "peer_ms": cpu_ms,
                                     "throughput": f"{starts * 1e3 / ms:,.1f} starts/s",
                                     "ratio": cpu_ms / ms})
                        print(rows[-1], flush=True)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(30)
            server.stop()
    return rows


def load_real(data_dir: Path, name: str) -> Graph:
    """A network of ``data_dir``, or ``rmat<scale>``: Graph500's R-MAT (edge factor 16, seed 1)
    drawn on the CPU, every node kept."""
    if name.startswith("rmat"):
        return generate_graph("rmat", {"scale": int(name[4:]), "edge_factor": 16, "seed": 1})[0]
    parsed = parse_graph((data_dir / f"{name}.txt.gz").read_bytes())
    return build_graph(parsed.src, parsed.dst, extra_nodes=parsed.extra_nodes)[0]


def scale(data_dir: Path, names: list[str], limit: float, gpu: bool, methods: bool = True
          ) -> str:
    """CND* time on large graphs, and every method on time (see the module docstring)."""
    _warm()
    if gpu:  # the GPU kernel compiled before any timed start
        cnd_gpu.multistart(generated("BA", 100)[0], 5, range(1), no_progress)
    greedy_rows, time_rows = [], []
    for name in names:
        graph = load_real(data_dir, name)
        comp, sizes = np.zeros(graph.n, np.int64), np.zeros(graph.n + 1, np.int64)
        for k in (10, graph.n // 100):
            base = {"graph": f"{name} k={k}", "n": graph.n, "m": graph.m}
            cpu_ms = wall_ms(lambda g=graph, k=k, c=comp, s=sizes: cnd_greedy.cnd_star(
                g.indptr, g.indices, k, np.uint64(0), c, s), 1, warm=False)
            greedy_rows.append({**base, "backend": "cpu greedy (1 core)", "time_ms": cpu_ms,
                                "estimate_ms": 1e3 * estimate(graph, CndParams(k=k), "cpu")
                                .seconds})
            print(greedy_rows[-1], flush=True)
            alone, wave = gpu_wave_seconds(graph, k, 0.0), gpu_wave_seconds(graph, k)
            if gpu and alone < GPU_START_MAX_S:
                ms, found = once_ms(lambda g=graph, k=k: cnd_gpu.multistart(g, k, range(1),
                                                                            no_progress))
                greedy_rows.append({**base, "backend": "gpu greedy", "time_ms": ms,
                                    "estimate_ms": 1e3 * alone,
                                    "same_set": bool(np.array_equal(found.removed, comp == 0))})
            elif gpu:
                greedy_rows.append({**base, "backend": "gpu greedy", "time_ms": "not run",
                                    "estimate_ms": 1e3 * alone})
            if gpu and wave < GPU_START_MAX_S:
                starts = cnd_gpu.concurrent_starts()
                ms, _ = once_ms(lambda g=graph, k=k, s=starts: cnd_gpu.multistart(
                    g, k, range(s), no_progress))
                greedy_rows.append({**base, "backend": f"gpu multistart ({starts})",
                                    "time_ms": ms, "estimate_ms": 1e3 * wave})
            print(greedy_rows[-1], flush=True)
        if not methods:
            continue
        k = graph.n // 10 if name != "dblp-2010" else graph.n // 100
        greedy = critical_nodes_cpu(graph, CndParams(k=k), no_progress).summary["objective"]
        for backend in ("cpu", "gpu") if gpu else ("cpu",):
            run = critical_nodes_gpu if backend == "gpu" else critical_nodes_cpu
            for method in ("search", "memetic"):
                params = CndParams(k=k, method=method, time_limit_s=limit)
                start = time.perf_counter()
                summary = run(graph, params, no_progress).summary
                wall = time.perf_counter() - start
                time_rows.append({
                    "graph": f"{name} k={k}", "backend": backend, "method": method,
                    "wall_s": wall, "budget_s": limit * 1.1 + 1,
                    "estimate_s": estimate(graph, params, backend).seconds,
                    "objective": summary["objective"], "greedy": greedy,
                    "vs_greedy": f"{100.0 * (summary['objective'] - greedy) / greedy:+.1f}%"})
                print(time_rows[-1], flush=True)
    tables = [markdown_table(greedy_rows, ["graph", "n", "m", "backend", "time_ms",
                                           "estimate_ms", "same_set"],
                             "CND* greedy on large graphs (one start; a GPU wave where it fits)")]
    if methods:
        tables.append(markdown_table(
            time_rows, ["graph", "backend", "method", "wall_s", "budget_s", "estimate_s",
                        "objective", "greedy", "vs_greedy"],
            f"On time: search and memetic with time_limit_s = {limit:g}"))
    return "\n\n".join(tables)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="speed,quality")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--limits", default="1,10", help="search time limits, seconds")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--processes", type=int, default=12, help="CPU quality runs at once")
    parser.add_argument("--workers", type=int, default=2, help="distributed: CPU workers")
    parser.add_argument("--starts", type=int, default=8, help="distributed: greedy starts")
    parser.add_argument("--graphs", default="ca-GrQc,ca-CondMat,dblp-2010", help="scale: graphs")
    parser.add_argument("--limit", type=float, default=5.0, help="scale: time limit, seconds")
    parser.add_argument("--no-methods", action="store_true",
                        help="scale: CND* only, not every method on time")
    add_data_args(parser)
    args = parser.parse_args(argv)

    gpu = use_gpu(args)
    device = device_name("gpu") if gpu else "no GPU"
    parts = args.parts.split(",")
    texts = [f"## Critical node detection — {device}, CPU {device_name('cpu')}, {date.today()}"]
    if "speed" in parts:
        sizes = tuple(int(s) for s in args.sizes.split(","))
        texts.append(print_table(speed(args.repeat, gpu, sizes),
                                 "CND* greedy: CPU vs GPU (time of the run)"))
    if "distributed" in parts:
        sizes = tuple(int(s) for s in args.sizes.split(","))
        texts.append(print_table(distributed(sizes, args.workers, args.starts),
                                 f"CND* distributed over the queue, {args.workers} CPU workers on "
                                 f"{device_name('cpu')} (submit to finish)"))
    if "scale" in parts:
        texts.append(scale(args.data_dir, args.graphs.split(","), args.limit, gpu,
                           not args.no_methods))
    if "quality" in parts:
        data_dir = args.data_dir
        if not (data_dir / "cnp").is_dir():
            data_dir = ROOT.parent / "shared" / "data"
        limits = [float(x) for x in args.limits.split(",")]
        texts.append(quality(data_dir, limits, gpu, args.processes))
    write_out(args.out, "\n\n".join(texts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

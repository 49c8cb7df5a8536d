"""Command-line and data plumbing shared by the benchmark scripts."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TABLES_HELP = "also write the tables here (markdown)"
TABLE_HELP = "also write the table here (markdown)"
ROWS_HELP = "skip the GPU rows"


def default_data_dir() -> Path:
    """Where the real graphs are: ``.benchdata`` in the checkout when it exists, else the shared
    data folder beside it."""
    local = ROOT / ".benchdata"
    return local if local.is_dir() else ROOT.parent / "shared" / "data" / "real"


def add_data_args(parser: argparse.ArgumentParser, out_help: str | None = TABLES_HELP,
                  no_gpu: bool = True, no_gpu_help: str | None = ROWS_HELP) -> None:
    """Add ``--data-dir`` (default :func:`default_data_dir`), ``--out`` and, when ``no_gpu``,
    ``--no-gpu``, in that order."""
    parser.add_argument("--data-dir", type=Path, default=default_data_dir())
    parser.add_argument("--out", type=Path, help=out_help)
    if no_gpu:
        parser.add_argument("--no-gpu", action="store_true", help=no_gpu_help)


def write_out(path: Path | None, text: str) -> None:
    """Write a benchmark's tables to ``--out`` (when given), its folder made as needed, ending
    with one newline."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.rstrip("\n") + "\n")


def use_gpu(args: argparse.Namespace) -> bool:
    """Whether the GPU rows run: a device is there and ``--no-gpu`` was not given."""
    from graphgpu.kernels.core.device import gpu_available

    return gpu_available() and not args.no_gpu


def load_timed(name: str, load: Callable[..., Any], *args: Any) -> Any:
    """``load(*args)``, logging the graph's size and how long building it took."""
    start = time.perf_counter()
    graph = load(*args)
    print(f"{name}: n={graph.n:,} m={graph.m:,} built in {time.perf_counter() - start:.1f} s",
          flush=True)
    return graph


def rmat_csr_on_gpu(scale: int) -> tuple[Any, Any]:
    """Graph500 R-MAT of ``scale`` (edge factor 16, seed 1) normalised on the GPU exactly as
    ``build_graph`` would (symmetrised, no loops, no duplicates, all ``2**scale`` nodes kept so
    ids need no relabelling; :func:`graphgpu.kernels.generators.generate_graph`): host
    ``indptr`` (int64) and ``indices`` (int32)."""
    from graphgpu.kernels.generators import generate_graph

    graph, _ = generate_graph("rmat", {"scale": scale, "edge_factor": 16, "seed": 1}, "gpu")
    return graph.indptr, graph.indices


def pycnp_solve(graph: Any, k: int, seconds: float, seed: int = 0) -> tuple[int, float]:
    """PyCNP's memetic search (the CNP peer, ``pip install pycnp``) on a :class:`Graph`: its
    objective and wall seconds (the model is built before the clock starts; PyCNP does not
    always stop at its budget)."""
    import numpy as np
    from pycnp import Model
    from pycnp.stop import MaxRuntime

    model = Model()
    for v in range(graph.n):
        model.add_node(v)
    src = np.repeat(np.arange(graph.n), np.diff(graph.indptr))
    for u, v in zip(src.tolist(), graph.indices.tolist(), strict=True):
        if u < v:
            model.add_edge(u, v)
    start = time.perf_counter()
    result = model.solve(problem_type="CNP", budget=k, stopping_criterion=MaxRuntime(seconds),
                         seed=seed, display=False, collect_stats=False)
    return int(result.best_obj_value), time.perf_counter() - start


def start_service(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``python -m graphgpu.service`` (API, workers and, without GRAPHGPU_REDIS_URL, Redis) with
    ``env``, in a process group of its own, its output appended to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "graphgpu.service"], env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop_service(process: subprocess.Popen[bytes] | None) -> None:
    """Ctrl-C to a :func:`start_service` supervisor (it stops what it started), then kill the
    group if it lingers."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

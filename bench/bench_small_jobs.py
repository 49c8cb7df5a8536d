"""Small-job latency of two or more code trees, interleaved on one machine (issue 23).

Fresh-service runs on a shared machine vary by milliseconds with the load of others, more than
the changes they compare. Here every tree runs at once, as ``graphgpu serve`` runs it (the API
and one CPU or GPU worker, supervised), on one redis-server that this script starts, each under
its own key prefix, data folder and port; blocks of ``--block`` sequential 1k-edge BFS jobs (BA
n=500, m=2, 996 edges) go to each tree in turn through the SDK (submit, then long-poll), so
every tree sees the same load. Per tree: submit -> succeeded p50/p90/p95/p99/max and where the
time goes (the record's wall-clock stamps; client and service share a clock): the POST (to the
record's ``created_at``), created -> started (the worker's claim), started -> finished, finished
-> the long-poll's answer.

A tree is ``label=path``: ``path`` holds ``service/``, ``workers/`` and ``client/`` (e.g. an
older commit's, ``git archive <commit> service workers client | tar -x -C DIR``); ``kernels/``
is this checkout's unless the tree has its own. Each tree's processes import ``graphgpu.*``
from it (symbolic links in a folder put first on ``PYTHONPATH``). ``label=path:VAR=value,...``
sets environment variables for that tree only.

Run: ``python bench/bench_small_jobs.py --tree before=/tmp/base --tree after=. [--jobs 200]
[--block 10] [--warm 5] [--no-gpu] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.common import start_service, stop_service, write_out  # noqa: E402
from graphgpu.client import Client  # noqa: E402
from graphgpu.service.redis_server import RedisServer, free_port  # noqa: E402

FOLDERS = ("service", "workers", "kernels", "client")
STAGES = ("post_ms", "created_ms", "to_start_ms", "running_ms", "answer_ms")
READY_SECONDS = 900.0


class Tree:
    """One code tree served under its own prefix, data folder and port."""

    def __init__(self, spec: str, redis_url: str, base: Path, gpu: bool) -> None:
        label, _, rest = spec.partition("=")
        path, _, env = rest.partition(":")
        self.label, self.path = label, Path(path).resolve()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        namespace = base / f"ns-{label}" / "graphgpu"
        namespace.mkdir(parents=True)
        for folder in FOLDERS:
            own = self.path / folder
            (namespace / folder).symlink_to(own if own.is_dir() else ROOT / folder)
        self.env = {**os.environ, "GRAPHGPU_REDIS_URL": redis_url,
                    "GRAPHGPU_REDIS_PREFIX": f"bench-{label}",
                    "GRAPHGPU_DATA_DIR": str(base / f"data-{label}"),
                    "GRAPHGPU_PORT": str(self.port), "GRAPHGPU_LOG_FORMAT": "text",
                    "PYTHONPATH": os.pathsep.join(filter(None, (
                        str(namespace.parent), os.environ.get("PYTHONPATH"))))}
        self.env.update(dict(item.split("=", 1) for item in env.split(",") if item))
        if not gpu:
            self.env["CUDA_VISIBLE_DEVICES"] = ""
        self.log = base / f"{label}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.runs: list[dict[str, float]] = []

    def start(self) -> None:
        self.process = start_service(self.env, self.log)

    def ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.label} exited ({self.process.returncode}); see {self.log}")
        try:
            return httpx.get(f"{self.url}/v1/ready", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        stop_service(self.process)


def one_job(client: Client, graph_id: str) -> dict[str, float]:
    """Submit one BFS and long-poll it; its times in ms."""
    asked, start = time.time(), time.perf_counter()
    job = client.run(graph_id, "bfs", source=0)
    posted = (time.perf_counter() - start) * 1e3
    job.wait(timeout=60, progress=False)
    answered = time.time()
    return {"submit_to_done_ms": (time.perf_counter() - start) * 1e3, "post_ms": posted,
            "created_ms": (job.created_at - asked) * 1e3,
            "to_start_ms": (job.started_at - job.created_at) * 1e3,
            "running_ms": (job.finished_at - job.started_at) * 1e3,
            "answer_ms": (answered - job.finished_at) * 1e3}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(trees: list[Tree], args: argparse.Namespace, loads: list[str]) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"Interleaved small jobs ({stamp}; {args.jobs} jobs a tree in blocks of "
             f"{args.block}; load averages {loads[0]} at the start, {loads[-1]} at the end)", "",
             "| tree | p50 | p90 | p95 | p99 | max | POST (to created) | created -> started | "
             "started -> finished | finished -> answer |", "|---" * 10 + "|"]
    for tree in trees:
        total = [r["submit_to_done_ms"] for r in tree.runs]
        med = {k: float(np.median([r[k] for r in tree.runs])) for k in STAGES}
        p50, p90, p95, p99 = np.percentile(total, [50, 90, 95, 99])
        lines.append(f"| {tree.label} | {p50:.2f} ms | {p90:.2f} ms | {p95:.2f} ms | "
                     f"{p99:.2f} ms | {max(total):.2f} ms | {med['post_ms']:.2f} "
                     f"({med['created_ms']:.2f}) | {med['to_start_ms']:.2f} | "
                     f"{med['running_ms']:.2f} | {med['answer_ms']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True,
                        help="label=path[:VAR=value,...]; give two or more")
    parser.add_argument("--jobs", type=int, default=200, help="jobs a tree")
    parser.add_argument("--block", type=int, default=10, help="jobs a turn")
    parser.add_argument("--warm", type=int, default=5, help="jobs a tree before timing")
    parser.add_argument("--no-gpu", action="store_true", help="CPU workers")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="bench-small-"))
    redis = RedisServer(base / "redis")
    trees: list[Tree] = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # runs the finally below
    try:
        url = redis.start()
        trees = [Tree(spec, url, base, not args.no_gpu) for spec in args.tree]
        for tree in trees:
            tree.start()
        started = time.perf_counter()
        while not all(tree.ready() for tree in trees):
            if time.perf_counter() - started > READY_SECONDS:
                raise RuntimeError(f"not ready after {READY_SECONDS:.0f} s; see {base}")
            time.sleep(0.5)
        clients = [Client(tree.url, timeout=60) for tree in trees]
        graphs = []
        for client in clients:
            graph = client.generate("barabasi_albert", name="ba500", n=500, m=2, seed=1)
            for _ in range(args.warm):
                one_job(client, graph.id)
            graphs.append(graph.id)
        loads = [load()]
        done = 0
        while done < args.jobs:
            count = min(args.block, args.jobs - done)
            for tree, client, graph_id in zip(trees, clients, graphs, strict=True):
                tree.runs += [one_job(client, graph_id) for _ in range(count)]
            done += count
        loads.append(load())
        text = report(trees, args, loads)
        print(text)
        write_out(args.out, text)
    finally:
        for tree in trees:
            tree.stop()
        redis.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

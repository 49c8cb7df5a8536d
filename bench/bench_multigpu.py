"""Every GPU of a host busy: job throughput with 1, 2, 4 GPU workers, one per GPU (issue 26).

Starts Redis (embedded) and the API once, generates R-MAT (``--scale``, default 20) through the
API, then for each worker count N (those of ``--workers`` that the GPUs allow) starts N GPU
workers pinned one per GPU (``CUDA_VISIBLE_DEVICES=i``, as ``graphgpu serve`` does) and measures

- ``--jobs`` bfs jobs (distinct sources) submitted at once by ``--clients`` threads: the wall
  time from the first submit to the last result read, and jobs per second; the peer is the same
  run with one worker (ratio = ours / one worker's time: 1/N at best);
- one ``distributed`` critical-node job on R-MAT ``--cnd-scale`` with ``--cnd-islands`` memetic
  islands of ``--cnd-seconds`` each: wall time (islands side by side on N workers: about
  islands / N rounds) and how many workers ran its islands (N when every GPU took some).

``--remote`` starts the workers as on other hosts: each with a data folder of its own, reaching
the API's graphs and results over HTTP with the worker key (``graphgpu worker``); without it they
share the API's data folder. Medians of ``--repeat`` rounds, after one untimed warm-up round per
N (kernels compiled, graph resident or fetched).

Run: ``python bench/bench_multigpu.py [--remote] [--workers 1,2,4] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
from redis import Redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ROOT, write_out  # noqa: E402
from bench.table import print_table  # noqa: E402
from graphgpu.kernels.core import protocol  # noqa: E402
from graphgpu.kernels.core.settings import get_settings  # noqa: E402
from graphgpu.service.redis_server import RedisServer, free_port  # noqa: E402
from graphgpu.service.serve import count_gpus  # noqa: E402

WORKER_KEY = "bench-multigpu-worker-key"


def until(predicate: Callable[[], object], timeout: float, what: str) -> object:
    """Poll ``predicate`` until it is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not within {timeout:.0f} s")


def finished(client: httpx.Client, job_id: str) -> dict:
    """Long-poll a job to its end; raise unless it succeeded."""
    while True:
        job = client.get(f"/v1/jobs/{job_id}", params={"wait": 30}).json()
        if job["status"] in ("succeeded", "failed", "canceled"):
            break
    if job["status"] != "succeeded":
        raise RuntimeError(f"job {job_id} {job['status']}: {job.get('error')}")
    return job


def run_job(client: httpx.Client, body: dict) -> dict:
    response = client.post("/v1/jobs", json=body)
    response.raise_for_status()
    job = finished(client, response.json()["id"])
    client.get(job["result_url"], params={"fields": "summary"}).raise_for_status()
    return job


def generate(client: httpx.Client, scale: int, backend: str) -> dict:
    response = client.post("/v1/graphs/generate", json={
        "generator": "rmat", "params": {"scale": scale, "seed": 1}, "backend": backend})
    response.raise_for_status()
    job = finished(client, response.json()["id"])
    graph_id = client.get(job["result_url"]).json()["summary"]["graph_id"]
    return client.get(f"/v1/graphs/{graph_id}").json()


class Workers:
    """N GPU workers, one per GPU, local (the API's data folder) or remote (their own)."""

    def __init__(self, count: int, env: dict[str, str], remote: bool, root: Path,
                 backend: str) -> None:
        self.processes = []
        for gpu in range(count):
            worker_env = {**env, "CUDA_VISIBLE_DEVICES": str(gpu) if backend == "gpu" else ""}
            argv = [sys.executable, "-m", "graphgpu.workers", "--backend", backend]
            if remote:
                worker_env["GRAPHGPU_DATA_DIR"] = str(root / f"worker{gpu}")
                argv.append("--remote")
            self.processes.append(subprocess.Popen(argv, env=worker_env, cwd=ROOT,
                                                   start_new_session=True))

    def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def live(client: httpx.Client) -> int:
    return len(client.get("/v1/workers").json()["workers"])


def sources(meta: dict, count: int, seed: int) -> list[int]:
    """``count`` node ids of the graph (R-MAT keeps every id below ``2**scale``)."""
    rng = np.random.default_rng(seed)
    return rng.integers(meta["node_id_min"], meta["node_id_max"] + 1, count).tolist()


def bfs_round(client: httpx.Client, graph_id: str, ids: list[int], clients: int,
              backend: str) -> float:
    """Seconds from the first submit to the last result of one bfs job per source."""
    bodies = [{"graph_id": graph_id, "algorithm": "bfs", "params": {"source": s},
               "backend": backend} for s in ids]
    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(lambda body: run_job(client, body), bodies))
    return time.perf_counter() - start


def cnd_round(client: httpx.Client, redis: Redis, graph_id: str, islands: int, seconds: float,
              backend: str) -> tuple[float, int]:
    """Wall seconds of a distributed memetic critical-node job and the workers it used."""
    start = time.perf_counter()
    job = run_job(client, {"graph_id": graph_id, "algorithm": "critical_nodes", "backend": backend,
                           "params": {"method": "distributed", "shard_method": "memetic",
                                      "shards": islands, "k": 200, "seed": 1,
                                      "time_limit_s": seconds}})
    elapsed = time.perf_counter() - start
    # The shards' states (with their workers) are in the parent's record, not in the API's view
    shards = json.loads(redis.hget(protocol.job_key(get_settings(), job["id"]), "shards"))
    return elapsed, len({s.get("worker") for s in shards if s.get("worker")})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", default="1,2,4", help="worker counts, one GPU each")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--cnd-scale", type=int, default=14)
    parser.add_argument("--cnd-seconds", type=float, default=5.0)
    parser.add_argument("--cnd-islands", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--remote", action="store_true",
                        help="workers with their own data folders, the API over HTTP")
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu",
                        help="cpu: CPU workers, a smoke run of the script without a GPU")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    gpus = count_gpus()
    counts = [n for n in map(int, args.workers.split(","))
              if n <= gpus or args.backend == "cpu"]
    if not counts:
        raise SystemExit(f"{gpus} GPU(s) visible: nothing to run")
    how = ("one GPU worker per GPU" if args.backend == "gpu" else "CPU workers") + (
        ", remote (their own folders, the API over HTTP)" if args.remote
        else ", local (the API's folder)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        redis = RedisServer(root / "redis")
        port = free_port()
        env = {**os.environ, "GRAPHGPU_REDIS_URL": redis.start(), "PYTHONPATH": os.pathsep.join(
                   filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               "GRAPHGPU_DATA_DIR": str(root / "api"), "GRAPHGPU_WORKER_KEY": WORKER_KEY,
               "GRAPHGPU_URL": f"http://127.0.0.1:{port}", "GRAPHGPU_LOG_FORMAT": "text",
               "GRAPHGPU_MAX_ACTIVE_JOBS_PER_KEY": "0"}
        api = subprocess.Popen([sys.executable, "-m", "uvicorn", "graphgpu.service.app:create_app",
                                "--factory", "--port", str(port), "--log-level", "warning"],
                               env=env, cwd=ROOT, start_new_session=True)
        client = httpx.Client(base_url=env["GRAPHGPU_URL"], timeout=600)
        queue = Redis.from_url(env["GRAPHGPU_REDIS_URL"])
        rows, cnd_rows, base, cnd_base = [], [], None, None
        try:
            until(lambda: _up(client, api), 60, "the API")
            workers = Workers(1, env, args.remote, root, args.backend)
            until(lambda: live(client) == 1, 600, "the first worker")
            meta = generate(client, args.scale, args.backend)
            cnd_meta = generate(client, args.cnd_scale, args.backend)
            workers.stop()
            until(lambda: live(client) == 0, 60, "the workers' stop")
            for count in counts:
                workers = Workers(count, env, args.remote, root, args.backend)
                try:
                    until(lambda c=count: live(client) == c, 600, f"{count} workers")
                    bfs_round(client, meta["id"], sources(meta, 4 * count, 0), args.clients,
                              args.backend)
                    times = [bfs_round(client, meta["id"], sources(meta, args.jobs, r + 1),
                                       args.clients, args.backend) for r in range(args.repeat)]
                    cnd = [cnd_round(client, queue, cnd_meta["id"], args.cnd_islands,
                                     args.cnd_seconds, args.backend)
                           for _ in range(max(1, args.repeat // 2))]
                finally:
                    workers.stop()
                    until(lambda: live(client) == 0, 60, "the workers' stop")
                median = float(np.median(times))
                base = base or median
                rows.append({"graph": f"rmat{args.scale}: {args.jobs} bfs jobs, {count} worker(s)",
                             "n": meta["n"], "m": meta["m"], "backend": args.backend,
                             "time_ms": median * 1e3,
                             "throughput": f"{args.jobs / median:.1f} jobs/s",
                             "peer": "1 worker", "peer_ms": base * 1e3,
                             "ratio": f"{median / base:.2f}x"})
                wall = float(np.median([t for t, _ in cnd]))
                cnd_base = cnd_base or wall
                cnd_rows.append({
                    "graph": f"rmat{args.cnd_scale}: critical_nodes distributed, "
                             f"{args.cnd_islands} memetic islands of {args.cnd_seconds:g} s, "
                             f"{count} worker(s)", "n": cnd_meta["n"], "m": cnd_meta["m"],
                    "backend": args.backend, "time_ms": wall * 1e3,
                    "throughput": f"islands on {min(w for _, w in cnd)} worker(s)",
                    "peer": "1 worker", "peer_ms": cnd_base * 1e3,
                    "ratio": f"{wall / cnd_base:.2f}x"})
        finally:
            client.close()
            queue.close()
            api.send_signal(signal.SIGTERM)
            api.wait(30)
            redis.stop()
    text = print_table(rows, f"Job throughput, {how}")
    text += "\n" + print_table(cnd_rows, f"A distributed critical-node job, {how}")
    write_out(args.out, text)


def _up(client: httpx.Client, api: subprocess.Popen[bytes]) -> bool:
    if api.poll() is not None:
        raise RuntimeError("the API exited")
    try:
        return client.get("/v1/health").status_code == 200
    except httpx.TransportError:
        return False


if __name__ == "__main__":
    main()

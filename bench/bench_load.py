"""Load benchmark: many concurrent clients, thousands of small jobs, over loopback.

Starts its own stack in a temporary folder (a real redis-server with AOF, the API, ``--workers``
CPU workers), uploads one small graph, then runs ``--pollers`` concurrent clients (one
``httpx.AsyncClient``) that between them submit ``--jobs`` BFS jobs: each client submits a
job, polls it until it ends (first after ``--poll-interval`` seconds, then backing off to the
server's ``Retry-After`` as the SDK does), then submits the next. Reports
throughput, p50/p95/p99 latency of submit, poll and submit -> done, every error by kind, and
lost jobs (accepted but without a final record in Redis afterwards). Bounded by ``--timeout``.

Run: ``python bench/bench_load.py [--jobs 10000] [--pollers 1000] [--workers 2] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from redis import Redis

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.table import print_table  # noqa: E402
from graphgpu.service.redis_server import RedisServer, free_port  # noqa: E402

FINISHED = ("succeeded", "failed", "canceled")


def small_graph(n: int = 1000, m: int = 4000, seed: int = 1) -> bytes:
    """A random edge list (the job is small on purpose: this measures the service)."""
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, n, size=(m, 2))
    pairs[:n - 1] = np.column_stack([np.arange(n - 1), np.arange(1, n)])  # connected: a path
    return ("\n".join(f"{u} {v}" for u, v in pairs.tolist()) + "\n").encode()


class Service:
    """redis-server, the API and CPU workers as child processes, logs into ``folder``."""

    def __init__(self, folder: Path, workers: int, log: Path | None = None,
                 remote: bool = False) -> None:
        self.folder = folder
        self.remote = remote
        self.log = log or folder / "service.log"
        self.redis = RedisServer(folder / "redis")
        self.port = free_port()
        self.prefix = f"load{uuid.uuid4().hex[:6]}"
        self.workers = workers
        self.children: list[subprocess.Popen[bytes]] = []
        self.base_url = f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        url = self.redis.start()
        env = {**os.environ, "GRAPHGPU_REDIS_URL": url, "GRAPHGPU_REDIS_PREFIX": self.prefix,
               "GRAPHGPU_DATA_DIR": str(self.folder / "data"), "PYTHONPATH": str(REPO),
               # measure the service, not the per-key limiter: 1,000 clients share one key
               "GRAPHGPU_MAX_ACTIVE_JOBS_PER_KEY": "0", "GRAPHGPU_RATE_LIMIT_PER_SECOND": "0",
               "CUDA_VISIBLE_DEVICES": "", "GRAPHGPU_WORKER_KEY": uuid.uuid4().hex}
        log = self.log.open("wb")
        self.children.append(subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "graphgpu.service.app:create_app", "--factory",
             "--port", str(self.port), "--log-level", "warning", "--backlog", "4096",
             # idle keep-alive connections outlive the clients' pauses, as behind a proxy
             "--timeout-keep-alive", "120"],
            env=env, cwd=REPO, stdout=log, stderr=log))
        for index in range(self.workers):
            # --remote: as on another host, its own data folder and the API over HTTP
            remote = {"GRAPHGPU_DATA_DIR": str(self.folder / f"worker{index}"),
                      "GRAPHGPU_URL": self.base_url} if self.remote else {}
            self.children.append(subprocess.Popen(
                [sys.executable, "-m", "graphgpu.workers", "--backend", "cpu",
                 *(["--remote"] if self.remote else [])],
                env={**env, **remote}, cwd=REPO, stdout=log, stderr=log))
        deadline = time.monotonic() + 120
        with httpx.Client(base_url=self.base_url) as client:
            while time.monotonic() < deadline:
                try:
                    if client.get("/v1/health").json().get("workers") == self.workers:
                        return
                except (httpx.TransportError, ValueError):
                    pass
                time.sleep(0.2)
        raise RuntimeError(f"the service did not come up; see {self.log}")

    def stop(self) -> None:
        for child in self.children:
            child.terminate()
        for child in self.children:
            try:
                child.wait(15)
            except subprocess.TimeoutExpired:
                child.kill()
        self.redis.stop()

    def unsettled(self, accepted: list[str]) -> tuple[list[str], Counter[str]]:
        """Accepted jobs without a record (lost), and the final status count in Redis."""
        with Redis.from_url(self.redis.url) as redis:
            pipe = redis.pipeline(transaction=False)
            for job_id in accepted:
                pipe.hget(f"{self.prefix}:job:{job_id}", "status")
            statuses = [json.loads(s) if s else None for s in pipe.execute()]
        lost = [j for j, s in zip(accepted, statuses, strict=True) if s is None]
        return lost, Counter(s for s in statuses if s is not None)


@dataclass
class Tally:
    """What the clients saw."""

    submit_ms: list[float] = field(default_factory=list)
    poll_ms: list[float] = field(default_factory=list)
    done_ms: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    accepted: list[str] = field(default_factory=list)
    unfinished: int = 0
    next_job: int = 0


async def client_loop(base_url: str, tls: ssl.SSLContext, body: dict, tally: Tally, jobs: int,
                      interval: float, deadline: float) -> None:
    """One client with its own connection: submit a job, poll it until it ends, repeat."""
    # A client each: one pool shared by 1,000 connections costs httpcore more CPU per request
    # than the API spends answering it. The TLS context is shared (unused over http, but each
    # client would otherwise build its own, 20 ms and 0.5 MB apiece).
    async with httpx.AsyncClient(base_url=base_url, timeout=120, verify=tls,
                                 limits=httpx.Limits(max_connections=1)) as client:
        await asyncio.sleep(random.uniform(0, interval))  # not all in the same instant
        await submit_and_poll(client, body, tally, jobs, interval, deadline)


async def request(tally: Tally, what: str, sending: Awaitable[httpx.Response], expected: int,
                  times: list[float]) -> httpx.Response | None:
    """Await ``sending``, keeping its time in ms in ``times``; None, with an error counted under
    ``what``, when it fails to connect or answers other than ``expected``."""
    sent = time.perf_counter()
    try:
        response = await sending
    except httpx.TransportError as exc:
        tally.errors[f"{what}: {type(exc).__name__}"] += 1
        return None
    times.append((time.perf_counter() - sent) * 1e3)
    if response.status_code != expected:
        tally.errors[f"{what}: HTTP {response.status_code}"] += 1
        return None
    return response


async def submit_and_poll(client: httpx.AsyncClient, body: dict, tally: Tally, jobs: int,
                          interval: float, deadline: float) -> None:
    while tally.next_job < jobs and time.monotonic() < deadline:
        tally.next_job += 1
        start = time.perf_counter()
        response = await request(tally, "submit", client.post("/v1/jobs", json=body), 202,
                                 tally.submit_ms)
        if response is None:
            continue
        job_id = response.json()["id"]
        tally.accepted.append(job_id)
        delay = interval
        while True:
            await asyncio.sleep(delay)
            if time.monotonic() >= deadline:
                tally.unfinished += 1
                return
            polled = await request(tally, "poll", client.get(f"/v1/jobs/{job_id}"), 200,
                                   tally.poll_ms)
            if polled is None:
                continue
            if polled.json()["status"] in FINISHED:
                tally.done_ms.append((time.perf_counter() - start) * 1e3)
                break
            # as the SDK does: back off from the first interval to the server's Retry-After
            delay = max(interval, min(2 * delay, float(polled.headers.get("retry-after", 0))))


async def drive(base_url: str, body: dict, args: argparse.Namespace) -> tuple[Tally, float]:
    tally = Tally()
    start = time.perf_counter()
    deadline = time.monotonic() + args.timeout
    tls = ssl.create_default_context()
    await asyncio.gather(*(client_loop(base_url, tls, body, tally, args.jobs,
                                       args.poll_interval, deadline)
                           for _ in range(args.pollers)))
    return tally, time.perf_counter() - start


def percentiles(values: list[float]) -> list[str]:
    if not values:
        return ["—"] * 4
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return [f"{p50:,.1f}", f"{p95:,.1f}", f"{p99:,.1f}", f"{max(values):,.1f}"]


def report(tally: Tally, wall: float, lost: list[str], statuses: Counter[str], n: int, m: int,
           args: argparse.Namespace) -> str:
    succeeded = statuses.get("succeeded", 0)
    requests = len(tally.submit_ms) + len(tally.poll_ms)
    workers = f"cpu x{args.workers}" + (" remote" if args.remote else "")
    head = print_table([{
        "graph": f"random {n}-node", "n": n, "m": m, "backend": workers,
        "time_ms": float(np.median(tally.done_ms)) if tally.done_ms else None,
        "throughput": f"{succeeded / wall:,.1f} jobs/s",
    }], f"Load: {args.jobs:,} bfs jobs, {args.pollers:,} concurrent clients "
        f"(time = submit -> seen done, median)")
    lines = [
        "", "| latency (ms) | count | p50 | p95 | p99 | max |", "|---|---|---|---|---|---|",
        *(f"| {name} | {len(values):,} | " + " | ".join(percentiles(values)) + " |"
          for name, values in (("submit", tally.submit_ms), ("poll", tally.poll_ms),
                               ("submit -> seen done", tally.done_ms))),
        "", "| outcome | value |", "|---|---|",
        f"| wall time | {wall:,.1f} s |",
        f"| jobs accepted | {len(tally.accepted):,} |",
        f"| jobs succeeded | {succeeded:,} |",
        f"| jobs failed / canceled | {statuses.get('failed', 0):,} / "
        f"{statuses.get('canceled', 0):,} |",
        f"| jobs not finished by the deadline | {tally.unfinished:,} |",
        f"| jobs lost (accepted, no record) | {len(lost):,} |",
        f"| statuses in Redis afterwards | "
        f"{', '.join(f'{k}: {v:,}' for k, v in sorted(statuses.items()))} |",
        f"| job throughput | {succeeded / wall:,.1f} jobs/s |",
        f"| HTTP requests | {requests:,} ({requests / wall:,.0f}/s) |",
        f"| errors | {sum(tally.errors.values()):,} "
        + (f"({', '.join(f'{k}: {v}' for k, v in tally.errors.items())})" if tally.errors
           else "") + " |",
    ]
    text = head + "\n" + "\n".join(lines)
    print("\n".join(lines))
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--pollers", type=int, default=1_000)
    parser.add_argument("--workers", type=int, default=2, help="CPU workers")
    parser.add_argument("--remote", action="store_true", help="workers with data folders of "
                        "their own, fetching graphs and handing results over HTTP")
    parser.add_argument("--poll-interval", type=float, default=0.1,
                        help="seconds to the first poll of a job (the SDK's default)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for the whole run")
    parser.add_argument("--out", type=Path, help="also write the markdown here")
    parser.add_argument("--log", type=Path, help="keep the service's logs here")
    args = parser.parse_args()
    # a socket per client here and one per client in the API: lift the usual 1,024 cap
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    edges = small_graph()
    with tempfile.TemporaryDirectory() as folder:
        service = Service(Path(folder), args.workers, args.log, args.remote)
        service.start()
        try:
            with httpx.Client(base_url=service.base_url, timeout=60) as client:
                graph = client.post("/v1/graphs", content=edges,
                                    params={"format": "edgelist", "name": "load"}).json()
            body = {"graph_id": graph["id"], "algorithm": "bfs", "params": {"source": 0},
                    "backend": "cpu"}
            tally, wall = asyncio.run(drive(service.base_url, body, args))
            time.sleep(1.0)  # jobs seen done are final; give the last records a moment anyway
            lost, statuses = service.unsettled(tally.accepted)
        finally:
            service.stop()
    text = report(tally, wall, lost, statuses, graph["n"], graph["m"], args)
    if args.out:
        args.out.write_text(f"{text}\n\nMachine: {machine()}; date {time.strftime('%Y-%m-%d')}.\n")


def machine() -> str:
    """CPU model and cores this process may use, and the Python version."""
    model = next((line.split(":", 1)[1].strip()
                  for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor() or "unknown CPU")
    return (f"{len(os.sched_getaffinity(0))} cores of {model}, {platform.system()}, "
            f"Python {platform.python_version()}")


if __name__ == "__main__":
    main()

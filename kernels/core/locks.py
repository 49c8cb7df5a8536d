"""Locks between the processes of one machine (``flock``): one process does what several would
otherwise do at once, the others wait and then find it done (compiled code in the disk caches).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: each process does the work itself
    fcntl = None  # type: ignore[assignment]


@contextmanager
def exclusive(path: Path, waiting: Callable[[], None] | None = None,
              wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive lock on the file ``path`` (created, with its folder, if missing) for
    the block, waiting for another process's (``waiting`` is called first when it must wait;
    without ``wait``, the block runs at once, unlocked). Yields whether the lock is held: not
    where there is no ``flock`` or the file cannot be written (a read-only cache), and the
    block then runs unlocked. Not reentrant: a process that takes one path twice waits for
    itself."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path, "ab")  # noqa: SIM115 (closed below, which releases the lock)
    except OSError:
        yield False
        return
    with lock:
        if fcntl is None:
            yield False
            return
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            if waiting is not None:
                waiting()
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield True

"""Numba's on-disk cache, safe for processes that compile the same functions at once.

Numba keeps, per cached function, an index (key -> data file) that :meth:`save` reads, extends
and writes back whole, and numbers a new data file after the entries it read. Two processes
saving overloads of one function at once (the warm-up pool's helpers share building blocks:
``common/``, ``core/csr``) both read the same index: one's entry is lost, and both may write
the same data file, leaving an entry that points at the other's code. A lost entry is compiled
again by the next process that needs it (the worker, after its pool); a crossed one loads the
wrong overload (tests/kernels/core/test_jit_cache.py makes both happen without the lock).

:func:`install` makes each save one critical section under an exclusive ``flock`` on a lock
file beside the index. Numba offers no hook for this; the method replaced is
``numba.core.caching.IndexDataCacheFile.save`` (read index, add key, write index, write data).
"""

from __future__ import annotations

import functools
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: no shared caches between processes to protect
    fcntl = None  # type: ignore[assignment]


def install() -> None:
    """Serialise Numba's cache saves between processes (idempotent; a no-op without flock)."""
    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if fcntl is None or getattr(save, "locked", False):
        return

    @functools.wraps(save)
    def locked_save(self: Any, key: Any, data: Any) -> None:
        with open(f"{self._index_path}.lock", "ab") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            save(self, key, data)

    locked_save.locked = True  # type: ignore[attr-defined]
    caching.IndexDataCacheFile.save = locked_save

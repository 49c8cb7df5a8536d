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

It also makes processes that need one cached function at once compile it in one of them: the
others wait, then load it from the cache (``Dispatcher.compile`` looks there first). A first
start's compile pool compiled the same functions in two to four processes (34 s of its 121 s of
Numba work on the GPU host, 2026-11-27: the CSR builder, the critical-nodes helpers).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from graphgpu.kernels.core.locks import exclusive


def install() -> None:
    """Serialise Numba's cache saves, and compiles of one cached function, between processes
    (idempotent; unlocked where there is no flock)."""
    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if getattr(save, "locked", False):
        return

    @functools.wraps(save)
    def locked_save(self: Any, key: Any, data: Any) -> None:
        with exclusive(Path(f"{self._index_path}.lock")):
            save(self, key, data)

    locked_save.locked = True  # type: ignore[attr-defined]
    caching.IndexDataCacheFile.save = locked_save
    _lock_compiles()


def _lock_compiles() -> None:
    # Dispatcher.compile of a cached function under an flock beside its index (not the save's
    # lock file, which the compile takes when it saves). Taken inside Numba's process-wide
    # compiler lock, so threads of one process queue there first, and one process never waits
    # on a file while holding what another of its threads needs; a function compiled while its
    # own compile is under way (recursion) does not wait for itself.
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.dispatcher import Dispatcher

    compile_ = Dispatcher.compile  # replaced once: install() returns early when called again
    held: set[str] = set()

    @functools.wraps(compile_)
    def locked_compile(self: Any, sig: Any) -> Any:
        index = getattr(getattr(self._cache, "_cache_file", None), "_index_path", None)
        if index is None:  # not cached on disk: nothing another process could share
            return compile_(self, sig)
        with global_compiler_lock:
            if index in held:
                return compile_(self, sig)
            with exclusive(Path(f"{index}.compile.lock")):
                held.add(index)
                try:
                    return compile_(self, sig)
                finally:
                    held.discard(index)

    Dispatcher.compile = locked_compile

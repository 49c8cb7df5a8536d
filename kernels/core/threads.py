"""Shares of a compiled loop run at once in a pool of threads: the CPU backends' parallelism.

A share is a Numba function compiled with ``nogil=True`` (it releases the GIL), called with its
index ``t``; threads rather than a Numba ``prange``, whose parallel lowering cost seconds of a
family's cold compile on the 2-core VM (betweenness, closeness, the CSR build).

The threads are the process's one pool (:func:`map_shared`), started at its first use and kept:
an upload runs a dozen passes (parse, relabel, CSR, content id), and a pool started for each
cost 0.7 ms a pass on 16 threads, more than some passes take on a graph of a million edges.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Threads of the shared pool: the cores this process may use, at most 32.
THREADS = max(1, min(len(os.sched_getaffinity(0)), 32))

_pool: list[ThreadPoolExecutor] = []
_pool_lock = threading.Lock()
_in_pool = threading.local()


def _mark_pool_thread() -> None:
    _in_pool.yes = True


def _shared_pool() -> ThreadPoolExecutor:
    with _pool_lock:
        if not _pool:
            _pool.append(ThreadPoolExecutor(THREADS, thread_name_prefix="share",
                                            initializer=_mark_pool_thread))
        return _pool[0]


def map_shared(function: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``function`` of every item, in the shared pool; raises what a call raised.

    Items beyond :data:`THREADS` wait for a free thread, so the calls must not wait for each
    other. A call from one of the pool's own threads (a share that maps again) runs its items
    in that thread: waiting there for the pool could wait for itself.
    """
    items = list(items)
    if len(items) <= 1 or getattr(_in_pool, "yes", False):
        return [function(item) for item in items]
    return list(_shared_pool().map(function, items))


def in_threads(share: Callable[[int], object], workers: int) -> None:
    """``share(t)`` for every ``t`` below ``workers`` in the shared pool (in this thread when
    there is one); raises what a share raised."""
    map_shared(share, range(workers))

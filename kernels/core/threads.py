"""Shares of a compiled loop run at once in a pool of threads: the CPU backends' parallelism.

A share is a Numba function compiled with ``nogil=True`` (it releases the GIL), called with its
index ``t``; threads rather than a Numba ``prange``, whose parallel lowering cost seconds of a
family's cold compile on the 2-core VM (betweenness, closeness, the CSR build).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


def in_threads(share: Callable[[int], object], workers: int) -> None:
    """``share(t)`` for every ``t`` below ``workers``, at once in a pool of threads (in this
    thread when there is one); raises what a share raised."""
    if workers == 1:
        share(0)
        return
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(share, range(workers)))

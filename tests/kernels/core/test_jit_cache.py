"""Numba's cache under processes that compile one function at once (kernels/core/jit_cache.py):
every process's overload stays in the index (the warm-up pool's helpers share functions)."""

from __future__ import annotations

import multiprocessing
import sys
import time
from pathlib import Path

SOURCE = """
from numba import njit


@njit(cache=True)
def twice(x):
    return x * 2
"""
#: One argument per process, each a signature of its own.
ARGUMENTS = ("3", "2.5", "1 + 1j", "__import__('numpy').float32(1.5)")


def _compile_one(folder: str, argument: str, barrier: object) -> None:
    """In a process: compile ``twice`` for one signature, saving it as the others do theirs.
    The index write is slowed so that every save's read-modify-write overlaps the others'."""
    sys.path.insert(0, folder)
    from numba.core import caching

    import graphgpu.kernels  # noqa: F401 - installs the lock, as in every worker process

    write = caching.IndexDataCacheFile._save_index

    def slow_write(self: object, overloads: object) -> None:
        time.sleep(0.3)
        write(self, overloads)

    caching.IndexDataCacheFile._save_index = slow_write
    import twice_module

    barrier.wait()  # type: ignore[attr-defined]
    twice_module.twice(eval(argument))


def _cache_misses(folder: str, queue: object) -> None:
    sys.path.insert(0, folder)
    import twice_module

    for argument in ARGUMENTS:
        twice_module.twice(eval(argument))
    queue.put(sum(twice_module.twice.stats.cache_misses.values()))  # type: ignore[attr-defined]


def test_concurrent_saves_keep_every_overload(tmp_path: Path) -> None:
    (tmp_path / "twice_module.py").write_text(SOURCE)
    spawn = multiprocessing.get_context("spawn")
    barrier = spawn.Barrier(len(ARGUMENTS))
    processes = [spawn.Process(target=_compile_one, args=(str(tmp_path), argument, barrier))
                 for argument in ARGUMENTS]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0
    queue = spawn.Queue()
    reader = spawn.Process(target=_cache_misses, args=(str(tmp_path), queue))
    reader.start()
    misses = queue.get(timeout=120)
    reader.join(30)
    assert misses == 0  # every signature loaded from the cache


def _compile_slowly(folder: str, barrier: object, queue: object) -> None:
    """In a process: compile ``twice`` for one signature at the same time as another process,
    each compile slowed so that they overlap; report this process's cache misses and hits."""
    sys.path.insert(0, folder)
    from numba.core import compiler

    import graphgpu.kernels  # noqa: F401 - installs the locks, as in every worker process

    compile_extra = compiler.compile_extra

    def slow_compile(*args: object, **kwargs: object) -> object:
        time.sleep(1.0)
        return compile_extra(*args, **kwargs)

    compiler.compile_extra = slow_compile
    import twice_module

    barrier.wait()  # type: ignore[attr-defined]
    twice_module.twice(3)
    stats = twice_module.twice.stats  # type: ignore[attr-defined]
    queue.put((sum(stats.cache_misses.values()), sum(stats.cache_hits.values())))


def test_processes_compiling_one_function_at_once_compile_it_once(tmp_path: Path) -> None:
    """Two processes that call a cached function's new signature at once: one compiles it,
    the other waits and loads it from the cache (without the lock both compiled)."""
    (tmp_path / "twice_module.py").write_text(SOURCE)
    spawn = multiprocessing.get_context("spawn")
    barrier, queue = spawn.Barrier(2), spawn.Queue()
    processes = [spawn.Process(target=_compile_slowly, args=(str(tmp_path), barrier, queue))
                 for _ in range(2)]
    for process in processes:
        process.start()
    counts = sorted(queue.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(30)
        assert process.exitcode == 0
    assert counts == [(0, 1), (1, 0)]  # one miss (compiled), one hit (loaded)

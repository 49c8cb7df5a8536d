"""What a worker reports about itself besides its heartbeat: GPU memory (job durations are
counted as each job is finished, ``records.finish``).

The layout of both is in :mod:`graphgpu.kernels.core.observability`; the monitor merges the GPU
memory into the worker's heartbeat record (what ``/v1/workers`` shows), and ``/metrics`` reads
both.
"""

from __future__ import annotations

import json

from redis import Redis

from graphgpu.kernels.core import device
from graphgpu.kernels.core.observability import gpu_memory_key
from graphgpu.kernels.core.settings import Settings


def gpu_memory() -> dict[str, int]:
    """Free and total memory of this process's GPU.

    Free counts the blocks CuPy's pool holds but no array uses: a new job gets them first.
    """
    cp = device.cupy()
    free, total = cp.cuda.runtime.memGetInfo()
    pooled = cp.get_default_memory_pool().free_bytes()
    return {"gpu_free_bytes": int(free + pooled), "gpu_total_bytes": int(total)}


def publish_gpu_memory(redis: Redis, settings: Settings, worker: str) -> None:
    """Store this GPU worker's memory for its monitor to publish with the next heartbeat."""
    redis.set(gpu_memory_key(settings, worker), json.dumps(gpu_memory()))


def read_gpu_memory(redis: Redis, settings: Settings, worker: str) -> dict[str, int]:
    """What :func:`publish_gpu_memory` stored last (empty for a CPU worker)."""
    raw = redis.get(gpu_memory_key(settings, worker))
    return json.loads(raw) if raw else {}


def release_gpu_pool() -> None:
    """Hand the blocks CuPy's pool caches back to the driver (after running out of memory, so
    that fragments of the failed job do not stand in the way of the next one)."""
    device.cupy().get_default_memory_pool().free_all_blocks()

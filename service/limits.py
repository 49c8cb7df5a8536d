"""Per-key limits (request rate, active jobs) and the device-memory check before queueing.

Both counters live in Redis and are updated by Lua scripts, so they hold across API processes and
concurrent requests without a lock: a script runs atomically.
"""

from __future__ import annotations

import math
from typing import Any

from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from graphgpu.kernels.core.registry import Algorithm
from graphgpu.kernels.core.settings import Settings
from graphgpu.service.errors import ApiError

#: Token bucket: refill at ``rate`` tokens a second up to ``burst``; a request takes one token.
#: Returns {1, 0} when allowed, else {0, seconds until a token is back} (as a string: Lua
#: numbers become integers in Redis replies).
_TOKEN_BUCKET = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1e6
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 1)
if wait > 0 then return {0, tostring(wait)} end
return {1, '0'}
"""

#: Device bytes per node assumed for algorithms without an estimate of their own: a handful of
#: per-node int32/int64/float64 work arrays (levels, labels, frontiers, distances), which is what
#: the built-in kernels allocate on top of the CSR arrays.
DEFAULT_DEVICE_BYTES_PER_NODE = 48
#: Host bytes per node of the same work arrays on the CPU, with room for NumPy temporaries.
DEFAULT_HOST_BYTES_PER_NODE = 64


def check_rate(redis: Redis, settings: Settings, key_id: str, who: str = "this API key"
               ) -> None:
    """Take one request from the token bucket of ``key_id`` (an API key's hash, or a client
    address for requests without a valid key); 429 with ``Retry-After`` when empty."""
    if settings.rate_limit_per_second <= 0:
        return
    allowed, wait = redis.eval(_TOKEN_BUCKET, 1, settings.key("rate", key_id),
                               settings.rate_limit_per_second, settings.rate_limit_burst)
    _check_bucket(settings, allowed, wait, who)


async def check_rate_async(redis: AsyncRedis, settings: Settings, key_id: str,
                           who: str = "this API key") -> None:
    """:func:`check_rate` on the event loop, through an asynchronous connection."""
    if settings.rate_limit_per_second <= 0:
        return
    allowed, wait = await redis.eval(_TOKEN_BUCKET, 1, settings.key("rate", key_id),
                                     settings.rate_limit_per_second, settings.rate_limit_burst)
    _check_bucket(settings, allowed, wait, who)


def _check_bucket(settings: Settings, allowed: Any, wait: Any, who: str) -> None:
    if not int(allowed):
        seconds = max(1, math.ceil(float(wait)))
        raise ApiError(429, "rate_limited",
                       f"too many requests for {who} (GRAPHGPU_RATE_LIMIT_PER_SECOND="
                       f"{settings.rate_limit_per_second:g}, burst "
                       f"{settings.rate_limit_burst}); retry in {seconds} s",
                       headers={"Retry-After": str(seconds)})


def too_many_jobs(limit: int) -> ApiError:
    """429 for a job past ``max_active_jobs_per_key`` (``limit``) slots queued or running (the
    count is :data:`graphgpu.service.jobs._ADMIT`'s, in the step that records the job)."""
    return ApiError(429, "too_many_jobs",
                    f"this API key's jobs queued or running (shards counted) would pass "
                    f"{limit} (GRAPHGPU_MAX_ACTIVE_JOBS_PER_KEY); wait for some to finish",
                    headers={"Retry-After": "5"})


def check_tenant_quota(settings: Settings, tenant: str, used: int, adding: int) -> None:
    """507 ``storage_quota_exceeded`` when ``used + adding`` bytes of graphs pass the tenant's
    quota (``max_tenant_stored_bytes``, 0 = none)."""
    quota = settings.max_tenant_stored_bytes
    if quota and used + adding > quota:
        raise ApiError(507, "storage_quota_exceeded",
                       f"tenant {tenant!r} holds {used:,} bytes of graphs; this one "
                       f"({adding:,} bytes) would pass its quota of {quota:,} "
                       "(GRAPHGPU_MAX_TENANT_STORED_BYTES): delete graphs first")


def job_slots(algorithm: Algorithm, params: Any, settings: Settings) -> dict[str, int]:
    """The ``slots`` a job takes under the active-jobs cap, for its record (empty for one).

    A job that fans out takes one slot per shard plus its own, so that shards cannot flood the
    queue past the cap (``critical_nodes method=distributed``: 256 shards a job).

    Raises
    ------
    ApiError
        413 ``too_many_shards`` when the job alone needs more slots than the cap.
    """
    shards = algorithm.shards(params) if algorithm.shards is not None else None
    if not shards:
        return {}
    slots = 1 + len(shards)
    limit = settings.max_active_jobs_per_key
    if 0 < limit < slots:
        raise ApiError(413, "too_many_shards",
                       f"the job fans out into {len(shards)} shards, more than the "
                       f"{limit} jobs an API key may have queued or running "
                       "(GRAPHGPU_MAX_ACTIVE_JOBS_PER_KEY)", field="params")
    return {"slots": slots}


def default_host_bytes(meta: dict[str, Any], result_bytes: int | None = None) -> int:
    """Host memory of a run for an algorithm without a host estimate of its own.

    The stored CSR arrays (``meta["bytes"]``, memory-mapped and paged in as read),
    :data:`DEFAULT_HOST_BYTES_PER_NODE` of work arrays per node, and the result
    (``result_bytes``, else one 8-byte value and id per node).
    """
    n = int(meta["n"])
    result = 16 * n if result_bytes is None else int(result_bytes)
    return int(meta["bytes"]) + DEFAULT_HOST_BYTES_PER_NODE * n + result


def default_device_bytes(meta: dict[str, Any]) -> int:
    """Device memory of a GPU run for an algorithm without an estimate of its own.

    The stored CSR arrays (``meta["bytes"]``) plus :data:`DEFAULT_DEVICE_BYTES_PER_NODE` per node.
    """
    return int(meta["bytes"]) + DEFAULT_DEVICE_BYTES_PER_NODE * int(meta["n"])


def check_device_memory(workers: list[dict[str, Any]], estimate: dict[str, Any]) -> None:
    """Refuse a GPU job that needs more device memory than any live GPU worker has free.

    Parameters
    ----------
    workers : list of dict
        Live worker records; GPU workers carry ``gpu_free_bytes`` (workers that have not
        reported it yet are not compared).
    estimate : dict
        The job's estimate record (``device_bytes``, ``backend``, ...), returned in the error.

    Raises
    ------
    ApiError
        413 ``insufficient_device_memory``.
    """
    gpu_workers = [w for w in workers if w.get("backend") == "gpu"]
    _check_memory(gpu_workers, estimate, "device_bytes", "gpu_free_bytes",
                  "insufficient_device_memory", "GPU memory", "the largest free on a live GPU",
                  "use backend=cpu or a smaller graph", "backend")


def check_host_memory(workers: list[dict[str, Any]], estimate: dict[str, Any]) -> None:
    """Refuse a job that needs more host memory than any live worker has available.

    Parameters
    ----------
    workers : list of dict
        Live worker records; their monitors report ``host_free_bytes`` (MemAvailable).
    estimate : dict
        The job's estimate record (``host_bytes``, ``backend``, ...), returned in the error.

    Raises
    ------
    ApiError
        413 ``insufficient_host_memory``.
    """
    _check_memory(workers, estimate, "host_bytes", "host_free_bytes",
                  "insufficient_host_memory", "host memory", "the most available on a live",
                  "ask for a smaller graph", "params")


def _check_memory(workers: list[dict[str, Any]], estimate: dict[str, Any], needed_key: str,
                  free_key: str, code: str, what: str, best: str, hint: str, field: str) -> None:
    """413 ``code`` when ``estimate[needed_key]`` passes the largest ``free_key`` reported."""
    needed = estimate.get(needed_key)
    free = [w[free_key] for w in workers if w.get(free_key) is not None]
    if needed is None or not free or needed <= max(free):
        return
    raise ApiError(413, code, f"the job needs about {needed:,} bytes of {what} but {best} "
                   f"worker is {max(free):,}; {hint}", field=field, extra={"estimate": estimate})

"""What every reliability test checks after its fault: nothing lost, nothing stuck."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from graphgpu.kernels.core import protocol
from tests.conftest import Stack, wait_until

PATH_WITH_TAIL = "10 20\n20 30\n30 40\n20 50\n60 70\n"


def job_records(stack: Stack) -> dict[str, dict[str, Any]]:
    """Every job record of the stack, read from Redis (the API may be the thing under test)."""
    out = {}
    for key in stack.redis.scan_iter(match=f"{stack.prefix}:job:*", count=1000):
        raw = stack.redis.hgetall(key)
        if raw:
            out[key.decode().rsplit(":", 1)[1]] = {k.decode(): json.loads(v)
                                                   for k, v in raw.items()}
    return out


def assert_nothing_lost_or_stuck(stack: Stack, accepted: Iterable[str],
                                 timeout: float = 60.0) -> dict[str, dict[str, Any]]:
    """Wait for every job of the stack to end, then check that none was lost or left behind.

    Parameters
    ----------
    accepted : iterable of str
        Ids of the jobs the API accepted (202): each must still have its record.

    Returns
    -------
    dict
        The final record of every job of the stack, by id.
    """
    accepted = set(accepted)

    def settled() -> dict[str, dict[str, Any]] | None:
        records = job_records(stack)
        done = all(r["status"] in protocol.FINISHED for r in records.values())
        return records if done and accepted <= set(records) else None

    try:
        records = wait_until(settled, timeout=timeout, every=0.2)
    except AssertionError:
        records = job_records(stack)
        lost = accepted - set(records)
        stuck = {i: r["status"] for i, r in records.items() if r["status"] not in protocol.FINISHED}
        raise AssertionError(f"lost jobs: {sorted(lost)}; not finished: {stuck}") from None
    assert not stack.redis.scard(f"{stack.prefix}:jobs:running"), "jobs left in the running set"
    for backend in ("auto", "cpu", "gpu"):
        assert not stack.redis.llen(f"rq:queue:{stack.prefix}-{backend}"), f"{backend} queue"
    return records

"""Which tenants own which graphs.

Graphs are content-addressed, so two tenants uploading the same file share one stored copy. Each
keeps its own claim on it: a Redis hash ``<prefix>:graph:<id>:owners`` (tenant -> its name for
the graph and when it claimed it) and a set ``<prefix>:tenant:<tenant>:graphs``. A tenant sees a
graph only through its claim, with its own name, and deleting it drops only that claim; the
files go with the last one.
"""

from __future__ import annotations

import json
import time
from typing import Any

from redis import Redis
from redis.lock import Lock

from graphgpu.kernels.core.settings import Settings

#: Longest a claim-and-files change may hold a graph's lock (a store of a large graph included).
LOCK_SECONDS = 300


class Ownership:
    """Graph claims of tenants.

    Parameters
    ----------
    redis : Redis
    settings : Settings
    """

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings

    def _owners_key(self, graph_id: str) -> str:
        return self.settings.key("graph", graph_id, "owners")

    def _tenant_key(self, tenant: str) -> str:
        return self.settings.key("tenant", tenant, "graphs")

    def lock(self, graph_id: str) -> Lock:
        """The graph's lock, held while its claims and its files change together."""
        return self.redis.lock(self.settings.key("graph", graph_id, "lock"), timeout=LOCK_SECONDS,
                               blocking_timeout=LOCK_SECONDS)

    def grant(self, graph_id: str, tenant: str, name: str | None) -> bool:
        """Give ``tenant`` a claim on a stored graph; False if it already had one."""
        claim = json.dumps({"name": name, "created_at": time.time()})
        pipe = self.redis.pipeline()
        pipe.hsetnx(self._owners_key(graph_id), tenant, claim)
        pipe.sadd(self._tenant_key(tenant), graph_id)
        created, _ = pipe.execute()
        return bool(created)

    def owns(self, graph_id: str, tenant: str) -> bool:
        return bool(self.redis.hexists(self._owners_key(graph_id), tenant))

    def claim(self, graph_id: str, tenant: str) -> dict[str, Any] | None:
        """The tenant's name and claim time for the graph; None without a claim."""
        raw = self.redis.hget(self._owners_key(graph_id), tenant)
        return json.loads(raw) if raw else None

    def graphs_of(self, tenant: str) -> list[str]:
        return sorted(g.decode() for g in self.redis.smembers(self._tenant_key(tenant)))

    def owners(self, graph_id: str) -> list[str]:
        return sorted(t.decode() for t in self.redis.hkeys(self._owners_key(graph_id)))

    def release(self, graph_id: str, tenants: list[str]) -> int:
        """Drop the claims of ``tenants``; returns how many claims are left."""
        pipe = self.redis.pipeline()
        if tenants:
            pipe.hdel(self._owners_key(graph_id), *tenants)
        for tenant in tenants:
            pipe.srem(self._tenant_key(tenant), graph_id)
        pipe.hlen(self._owners_key(graph_id))
        return int(pipe.execute()[-1])

    def view(self, meta: dict[str, Any], tenant: str) -> dict[str, Any]:
        """A graph's metadata as ``tenant`` sees it: its own name and time of upload (the stored
        metadata as is when it has no claim, which only an admin may look at)."""
        claim = self.claim(meta["id"], tenant)
        if claim is None:
            return meta
        return {**meta, "name": claim["name"], "created_at": claim["created_at"]}

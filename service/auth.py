"""Who is calling: API keys (``Authorization: Bearer <key>``), tenants and the admin flag.

Keys come from ``GRAPHGPU_API_KEYS`` and/or ``GRAPHGPU_API_KEY_FILE``. Only their SHA-256 hashes
are kept in memory, and only hashes or tenant names ever reach Redis or job records. With no key
configured the service runs open: every caller is the admin of tenant ``public``.

:func:`authenticate` is the one FastAPI dependency of every ``/v1`` route except the probes. It
identifies the caller, applies the per-key rate limit and hides other tenants' jobs and graphs
named in the path (``{job_id}``, ``{graph_id}``) behind a 404, so a new route under ``/v1`` is
isolated without code of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from graphgpu.kernels.core.settings import ApiKey, Settings
from graphgpu.service.deps import state
from graphgpu.service.errors import ApiError, NotFound
from graphgpu.service.limits import check_rate

#: The tenant of every caller in open mode.
OPEN_TENANT = "public"
_HASH_PREFIX = "sha256:"
OPEN_MODE_WARNING = (
    "NO API KEYS ARE CONFIGURED: the service is OPEN, anyone who can reach it can read and "
    "delete every graph and job. Set GRAPHGPU_API_KEYS or GRAPHGPU_API_KEY_FILE unless this "
    "is a single-user machine.")


@dataclass(frozen=True)
class Caller:
    """The identity behind a request.

    Attributes
    ----------
    tenant : str
        Owner of the graphs and jobs it creates.
    admin : bool
        Sees and manages every tenant's graphs and jobs.
    key_id : str
        SHA-256 of the key (``"open"`` in open mode): names the caller in rate and job limits.
    """

    tenant: str
    admin: bool
    key_id: str

    def sees(self, owner: str | None) -> bool:
        """Whether a job or graph owned by ``owner`` is visible to this caller."""
        return self.admin or owner == self.tenant


def hash_key(key: str) -> str:
    """Hex SHA-256 of an API key (what is stored instead of the key)."""
    return hashlib.sha256(key.encode()).hexdigest()


def _hashed(key: str) -> str:
    return key[len(_HASH_PREFIX):].lower() if key.startswith(_HASH_PREFIX) else hash_key(key)


def read_key_file(path: Path) -> dict[str, ApiKey]:
    """Keys of a key file: one ``<key> <tenant> [admin]`` a line, ``#`` comments.

    A key may be given as ``sha256:<hex>`` so that the file need not hold the secret itself.

    Returns
    -------
    dict
        Key hash -> :class:`~graphgpu.kernels.core.settings.ApiKey`.
    """
    keys: dict[str, ApiKey] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) not in (2, 3) or (len(words) == 3 and words[2] != "admin"):
            raise ValueError(f"{path}:{number}: expected '<key> <tenant> [admin]'")
        keys[_hashed(words[0])] = ApiKey(tenant=words[1], admin=len(words) == 3)
    return keys


class KeyRing:
    """The configured keys, by hash.

    Parameters
    ----------
    by_hash : dict
        Key hash -> :class:`~graphgpu.kernels.core.settings.ApiKey`; empty = open mode.
    """

    def __init__(self, by_hash: dict[str, ApiKey]) -> None:
        self._by_hash = dict(by_hash)

    @classmethod
    def from_settings(cls, settings: Settings) -> KeyRing:
        """Keys of ``settings.api_keys`` and ``settings.api_key_file`` together.

        Raises
        ------
        RuntimeError
            No key at all while ``settings.require_api_keys`` is set.
        ValueError
            A malformed key file.
        """
        keys = {_hashed(key): value for key, value in settings.api_keys.items()}
        if settings.api_key_file is not None:
            keys.update(read_key_file(settings.api_key_file))
        if not keys and settings.require_api_keys:
            raise RuntimeError("GRAPHGPU_REQUIRE_API_KEYS is set but no API key is configured "
                               "(GRAPHGPU_API_KEYS, GRAPHGPU_API_KEY_FILE)")
        return cls(keys)

    @property
    def open(self) -> bool:
        """True when no key is configured: every request is served, as the admin."""
        return not self._by_hash

    def identify(self, key: str) -> Caller | None:
        """The caller a key stands for; None for an unknown key."""
        digest = hash_key(key)
        entry = self._by_hash.get(digest)
        return None if entry is None else Caller(entry.tenant, entry.admin, digest)


OPEN_CALLER = Caller(OPEN_TENANT, admin=True, key_id="open")

_bearer = HTTPBearer(auto_error=False, scheme_name="apiKey",
                     description="An API key of the service (none needed in open mode).")


def _unauthorized(code: str, message: str) -> ApiError:
    return ApiError(401, code, message, field="Authorization",
                    headers={"WWW-Authenticate": "Bearer"})


def authenticate(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """The caller of a ``/v1`` request, after its rate limit and path-level isolation.

    Raises
    ------
    ApiError
        401 without a known key (keys configured), 429 over the key's rate, 404 for another
        tenant's job or graph named in the path.
    """
    st = state(request)
    known = None if st.keys.open or credentials is None else st.keys.identify(
        credentials.credentials)
    if not st.keys.open and known is None:
        # Requests without a valid key share their address's bucket, so keys cannot be
        # guessed faster than a client may call.
        address = request.client.host if request.client else "unknown"
        check_rate(st.redis, st.settings, f"address:{address}", f"address {address}")
        if credentials is None:
            raise _unauthorized("missing_api_key", "this service needs an API key: send "
                                "'Authorization: Bearer <key>'")
        raise _unauthorized("invalid_api_key", "the API key is not valid")
    who = OPEN_CALLER if known is None else known
    check_rate(st.redis, st.settings, who.key_id)
    params = request.path_params
    if "job_id" in params:
        owner = st.jobs.owner(params["job_id"])
        if owner is not None and not who.sees(owner):
            raise NotFound(f"job {params['job_id']!r} does not exist or has expired",
                           field="job_id")
    if "graph_id" in params and not who.admin and not st.owners.owns(params["graph_id"],
                                                                     who.tenant):
        raise NotFound(f"graph {params['graph_id']!r} does not exist", field="graph_id")
    request.state.caller = who
    return who


def caller(request: Request) -> Caller:
    """The caller that :func:`authenticate` identified for this request."""
    return request.state.caller


def require_admin(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """Dependency of admin-only routes (``/metrics``): as :func:`authenticate`, then 403 for
    a key that is not an admin's (every caller is the admin in open mode)."""
    who = authenticate(request, credentials)
    if not who.admin:
        raise ApiError(403, "forbidden", "this route needs an admin API key")
    return who

"""API keys: reading them (settings, key file), keeping their hashes, and who a key stands for.

Apart from :mod:`graphgpu.service.auth` (the request dependency) so that the per-application
state (:mod:`graphgpu.service.deps`) can hold a :class:`KeyRing` without an import circle.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from graphgpu.kernels.core.settings import ApiKey, Settings

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

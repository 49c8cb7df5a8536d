"""API keys from settings and key files (the HTTP side: tests/reliability/test_isolation.py)."""

from __future__ import annotations

import json

import pytest

from graphgpu.kernels.core.settings import Settings
from graphgpu.service.auth import KeyRing, hash_key, read_key_file


def test_keys_from_settings_and_file(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = tmp_path / "keys.txt"
    key_file.write_text(f"# key tenant [admin]\n\nfile-key  carol\nsha256:{hash_key('hidden')} "
                        "dave admin  # only the hash is written down\n")
    monkeypatch.setenv("GRAPHGPU_API_KEYS", json.dumps({"env-key": "alice",
                                                        "root": {"tenant": "ops", "admin": True}}))
    monkeypatch.setenv("GRAPHGPU_API_KEY_FILE", str(key_file))
    ring = KeyRing.from_settings(Settings())
    assert not ring.open
    who = {key: ring.identify(key) for key in ("env-key", "root", "file-key", "hidden")}
    assert {k: (c.tenant, c.admin) for k, c in who.items()} == {
        "env-key": ("alice", False), "root": ("ops", True), "file-key": ("carol", False),
        "hidden": ("dave", True)}
    assert who["env-key"].key_id == hash_key("env-key") != "env-key"  # never the key itself
    assert ring.identify("sha256:" + hash_key("hidden")) is None  # a hash is not a key
    assert ring.identify("nope") is None


def test_no_keys_is_open_mode() -> None:
    assert KeyRing.from_settings(Settings(api_keys={}, api_key_file=None)).open


@pytest.mark.parametrize("line", ["lonely", "k t superuser", "k t admin extra"])
def test_bad_key_file_lines(tmp_path, line: str) -> None:
    path = tmp_path / "keys.txt"
    path.write_text(f"good tenant\n{line}\n")
    with pytest.raises(ValueError, match=":2:"):
        read_key_file(path)


def test_required_keys_refuse_open_mode() -> None:
    with pytest.raises(RuntimeError, match="GRAPHGPU_REQUIRE_API_KEYS"):
        KeyRing.from_settings(Settings(api_keys={}, api_key_file=None, require_api_keys=True))

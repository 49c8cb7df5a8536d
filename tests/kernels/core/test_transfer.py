"""Folders as tar streams (kernels/core/transfer.py): what travels between workers and the API."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np
import pytest

from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded
from graphgpu.kernels.core.transfer import ChunkReader, FolderStream, replace_folder, unpack


def folder(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    np.save(source / "indptr.npy", np.arange(5000, dtype=np.int64))
    (source / "meta.json").write_text('{"id": "x"}')
    (source / "empty.npy").write_bytes(b"")
    (source / "nested").mkdir()  # not a plain file: left out
    return source


def test_a_folder_travels_whole_in_small_chunks(tmp_path: Path) -> None:
    source = folder(tmp_path)
    chunks = [piece[i:i + 1000] for piece in FolderStream(source)
              for i in range(0, len(piece), 1000)]
    size = unpack(ChunkReader(chunks), tmp_path / "copy", limit=1 << 20)
    copy = tmp_path / "copy"
    assert sorted(p.name for p in copy.iterdir()) == ["empty.npy", "indptr.npy", "meta.json"]
    assert size == sum(p.stat().st_size for p in copy.iterdir())
    np.testing.assert_array_equal(np.load(copy / "indptr.npy"), np.arange(5000))
    assert (copy / "meta.json").read_text() == '{"id": "x"}'


def test_the_limit_counts_content(tmp_path: Path) -> None:
    stream = b"".join(FolderStream(folder(tmp_path)))
    with pytest.raises(LimitExceeded):
        unpack(io.BytesIO(stream), tmp_path / "copy", limit=1000)


def archive(*members: tarfile.TarInfo) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for member in members:
            tar.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("name,kind", [("../escape.npy", tarfile.REGTYPE),
                                        ("sub/a.npy", tarfile.REGTYPE),
                                        ("link.npy", tarfile.SYMTYPE),
                                        ("dir", tarfile.DIRTYPE)])
def test_anything_but_plain_files_is_refused(tmp_path: Path, name: str, kind: bytes) -> None:
    member = tarfile.TarInfo(name)
    member.type = kind
    member.size = 3 if kind == tarfile.REGTYPE else 0
    if kind == tarfile.SYMTYPE:
        member.linkname = "/etc/passwd"
    with pytest.raises(InvalidInput):
        unpack(archive(member), tmp_path / "copy", limit=1 << 20)
    assert not (tmp_path / "escape.npy").exists()


def test_not_a_tar_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        unpack(io.BytesIO(b"this is not a tar archive" * 40), tmp_path / "copy", limit=1 << 20)


def test_replace_folder_swaps_by_rename(tmp_path: Path) -> None:
    for name, text in (("old", "1"), ("new", "2")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_text(text)
    replace_folder(tmp_path / "new", tmp_path / "old", tmp_path / "trash")
    assert (tmp_path / "old" / "f").read_text() == "2"
    assert not (tmp_path / "new").exists() and not (tmp_path / "trash").exists()

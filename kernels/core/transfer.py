"""Folders (a stored graph, a job's result) as uncompressed tar streams, both ways.

Workers on other hosts (``graphgpu worker`` with ``GRAPHGPU_URL``) fetch graphs and hand results
back to the API this way: the store's own ``.npy`` files and JSON, no re-encoding, streamed in
chunks so neither side holds a whole graph in memory. Only flat folders of plain files with
plain names travel; an archive with anything else (links, sub-folders, ``..``) is refused.
The API's worker routes live under :data:`INTERNAL_PREFIX` and learn the sending worker's name
from :data:`WORKER_HEADER`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded

#: Path prefix of the API's worker-only routes.
INTERNAL_PREFIX = "/internal/v1"
#: Request header naming the worker that sends a result (checked against the job record).
WORKER_HEADER = "X-Graphgpu-Worker"
#: Bytes read or sent at a time.
CHUNK = 1 << 20
#: Folders up to this size travel as one buffer with its length, not streamed: the chunks of a
#: streamed body leave in small writes, which Nagle's algorithm holds for the peer's delayed ACK
#: (tens of ms for a small result).
SMALL_BYTES = 4 * CHUNK
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_BLOCK = tarfile.BLOCKSIZE


class FolderStream:
    """The plain files directly inside ``folder`` as one tar stream (iterate for the chunks;
    :meth:`body` for what to send).

    The files are opened here, before the first chunk: a folder deleted or replaced while it
    streams (a graph deleted, a result written again) still streams whole, and a missing folder
    raises ``FileNotFoundError`` at once, before a response has started.
    """

    def __init__(self, folder: Path) -> None:
        self.files = [(path.name, open(path, "rb"))  # noqa: SIM115 (closed by __iter__)
                      for path in sorted(Path(folder).iterdir())
                      if path.is_file() and _NAME.fullmatch(path.name)]
        #: Bytes of file content in all.
        self.size = sum(os.fstat(handle.fileno()).st_size for _, handle in self.files)

    def __iter__(self) -> Iterator[bytes]:
        try:
            for name, handle in self.files:
                info = tarfile.TarInfo(name)
                info.size, info.mode = os.fstat(handle.fileno()).st_size, 0o644
                # PAX headers: sizes past USTAR's 8 GiB travel too
                yield info.tobuf(format=tarfile.PAX_FORMAT)
                while chunk := handle.read(CHUNK):
                    yield chunk
                if info.size % _BLOCK:
                    yield b"\0" * (_BLOCK - info.size % _BLOCK)
            yield b"\0" * (2 * _BLOCK)  # end of archive
        finally:
            self.close()

    def body(self) -> bytes | FolderStream:
        """The archive whole when small (:data:`SMALL_BYTES`), else this stream."""
        return b"".join(self) if self.size <= SMALL_BYTES else self

    def close(self) -> None:
        for _, handle in self.files:
            handle.close()


class ChunkReader(io.RawIOBase):
    """A readable file over an iterable of byte chunks (an HTTP body), for :func:`unpack`."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks, self.pending = iter(chunks), b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self.pending:
            chunk = next(self.chunks, None)
            if chunk is None:
                return 0
            self.pending = chunk
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size


def unpack(stream: BinaryIO, target: Path, limit: int) -> int:
    """Unpack a tar stream of plain files into the new folder ``target``.

    Parameters
    ----------
    stream : file
        The archive, read once from start to end (a socket's body will do).
    target : Path
        Made here; must not exist.
    limit : int
        Most bytes of file content accepted in all.

    Returns
    -------
    int
        Bytes of file content written.

    Raises
    ------
    InvalidInput
        Not a tar archive, or an entry other than a plainly named regular file.
    LimitExceeded
        More than ``limit`` bytes of content.
    """
    target.mkdir(parents=True)
    total = 0
    try:
        with tarfile.open(fileobj=stream, mode="r|") as archive:
            for member in archive:
                if not member.isfile() or not _NAME.fullmatch(member.name):
                    raise InvalidInput(f"unexpected archive entry {member.name!r}: only plain "
                                       "files of one folder are accepted")
                total += member.size
                if total > limit:
                    raise LimitExceeded(f"the archive holds more than {limit} bytes")
                source = archive.extractfile(member)
                assert source is not None  # a regular file always has content
                with open(target / member.name, "xb") as out:
                    shutil.copyfileobj(source, out, CHUNK)
    except tarfile.TarError as exc:
        raise InvalidInput(f"not a readable tar archive: {exc}") from None
    return total


def replace_folder(staging: Path, target: Path, trash: Path) -> None:
    """Put ``staging`` at ``target`` by renames (same file system), replacing what was there:
    a reader sees the old folder or the new one, never a mix. ``trash`` is a free path."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.rename(target, trash)
    os.rename(staging, target)
    shutil.rmtree(trash, ignore_errors=True)

"""Node labels of a graph: the names its upload gave its nodes, when they were not integers.

A labelled graph is stored like any other, on integer ids ``0..L-1`` (the order in which the
upload first named each label), plus its :class:`Labels` table: label ``i`` is the node of
original id ``i``. Workers never see labels; the API turns labels given as node parameters into
ids (:meth:`Labels.find`) and ids in results back into labels (:meth:`Labels.decode`).

The table is two flat arrays, memory-mapped from the store like the graph's own: ``data``, the
UTF-8 JSON text of every label each followed by a comma (``"alice","bob",42,``), and
``offsets`` (``L + 1`` byte offsets). Any JSON scalar is a label (strings and finite numbers);
JSON text keeps ``42`` and ``"42"`` apart, a slice of ``data`` is a JSON array once bracketed
(one ``json.loads`` per chunk of labels), and ``GET /v1/graphs/{id}/labels`` sends the table
as it is stored. Text (``json.dumps(label, ensure_ascii=False)``) is canonical, so equal labels
have equal bytes, which is what :meth:`Labels.find` compares.

Text edge lists whose first data line names a node by something other than a non-negative
integer are read as labels by :mod:`graphgpu.kernels.core.io.labelscan`.

Lookups (:meth:`Labels.find`) go through a sorted index of 8 bytes a label, built on first use
(the store keeps a few tables with theirs), so admitting a job costs a binary search.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, prange

from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded

#: File stems of a labelled graph's table in its store folder.
DATA_FILE, OFFSETS_FILE = "labels", "label_offsets"
#: Labels decoded per ``json.loads`` call when a whole table is rendered.
DECODE_CHUNK = 1 << 16

#: FNV-1a (64 bits), the hash of labels' bytes here and in the labelled edge-list scanner.
FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)


@dataclass(frozen=True)
class Labels:
    """The labels of a graph's nodes by original id (see the module docstring).

    Attributes
    ----------
    data : ndarray of uint8
        Each label's JSON text followed by ``,``.
    offsets : ndarray of int64, shape (L + 1,)
        Where each label's text starts in ``data``; ``offsets[-1] == data.size``.
    """

    data: np.ndarray
    offsets: np.ndarray
    _index: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def arrays(self) -> dict[str, np.ndarray]:
        """The table as stored, by file stem."""
        return {DATA_FILE: self.data, OFFSETS_FILE: self.offsets}

    def identity(self) -> dict[str, np.ndarray]:
        """What the graph's content address hashes of the table: ``data`` alone. Canonical
        JSON texts each followed by a comma split one way only, so ``offsets`` follow from
        ``data`` (hashing them too would only cost time: 8 bytes a label)."""
        return {DATA_FILE: self.data}

    def decode(self, ids: np.ndarray | list[int]) -> list[Any]:
        """The labels of original ids ``ids``; a negative id (``-1``: no node) gives None."""
        ids = np.asarray(ids, dtype=np.int64).ravel()
        valid = ids >= 0
        picked = ids if valid.all() else ids[valid]
        if picked.size == 0:
            return [None] * ids.size
        if picked[-1] - picked[0] == picked.size - 1 and (np.diff(picked) == 1).all():
            text = self.data[self.offsets[picked[0]]:self.offsets[picked[-1] + 1]]
        else:  # gather the texts: one index per byte, built without a Python loop
            starts, ends = self.offsets[picked], self.offsets[picked + 1]
            lengths = ends - starts
            shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
            text = self.data[np.arange(int(lengths.sum())) + shift]
        values = json.loads(b"[" + np.asarray(text)[:-1].tobytes() + b"]")
        if picked is ids:
            return values
        out: list[Any] = [None] * ids.size
        for position, value in zip(np.flatnonzero(valid).tolist(), values, strict=True):
            out[position] = value
        return out

    def find(self, values: list[Any]) -> np.ndarray:
        """Original ids of labels ``values`` (``-1`` for a value that is no label here): a
        binary search of :meth:`index`, then a comparison of the bytes."""
        keys = self.index()
        found = np.full(len(values), -1, dtype=np.int64)
        for k, value in enumerate(values):
            text = _text(value)
            if text is None:
                continue
            wanted = np.frombuffer(text, np.uint8)
            high = int(_hashes(wanted, np.array([0, wanted.size]))[0]) >> 32 << 32
            lo = np.searchsorted(keys, np.uint64(high))
            hi = np.searchsorted(keys, np.uint64(high | 0xFFFFFFFF), side="right")
            for i in (keys[lo:hi] & np.uint64(0xFFFFFFFF)).tolist():
                if bytes(self.data[self.offsets[i]:self.offsets[i + 1] - 1]) == text:
                    found[k] = i
                    break
        return found

    def index(self) -> np.ndarray:
        """The labels' lookup index, built on first use and kept with the table: for each
        label, the high 32 bits of the FNV-1a hash of its text over its id, sorted (8 bytes a
        label; one vectorised sort)."""
        if self._index is None:
            if len(self) >= 1 << 32:
                raise LimitExceeded("over 2**32 labels", code="too_many_nodes")
            hashes = _hashes(np.asarray(self.data), np.asarray(self.offsets), 1)
            keys = hashes >> np.uint64(32) << np.uint64(32) | np.arange(len(self),
                                                                        dtype=np.uint64)
            keys.sort()
            object.__setattr__(self, "_index", keys)
        return self._index

    def json_chunks(self, size: int = 1 << 22) -> Iterator[bytes]:
        """The table as one JSON array (label ``i`` at index ``i``), in chunks of bytes."""
        yield b"["
        end = max(int(self.data.shape[0]) - 1, 0)  # the last label's comma is left out
        for start in range(0, end, size):
            yield np.asarray(self.data[start:min(start + size, end)]).tobytes()
        yield b"]"


def _text(value: Any) -> bytes | None:
    """The canonical JSON text of a label, or None for a value that cannot be one."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        return json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON)
        return None


def encode(values: list[Any], field: str) -> tuple[np.ndarray, Labels]:
    """Intern labels given as JSON values: their ids (in order of first appearance) and the
    table.

    Raises
    ------
    InvalidInput
        A value that is not a string or a finite number (``bad_node_id``).
    """
    index: dict[Any, int] = {}
    try:
        ids = np.fromiter((index.setdefault(v, len(index)) for v in values), np.int64,
                          len(values))
        texts = [_text(v) for v in index]
    except TypeError:  # unhashable: a list or an object
        texts = [None]
    if None in texts:
        bad = json.dumps(next(v for v in values if _text(v) is None))[:40]
        raise InvalidInput(f"'{field}' node labels must be strings or finite numbers, not "
                           f"{bad}", field=field, code="bad_node_id")
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) + 1 for t in texts], out=offsets[1:])
    data = np.frombuffer(b"".join(t + b"," for t in texts), dtype=np.uint8)  # type: ignore
    return ids, Labels(data, offsets)


@njit(cache=True, nogil=True)
def _fnv(buf, lo, hi):
    h = FNV_OFFSET
    for j in range(lo, hi):
        h = (h ^ np.uint64(buf[j])) * FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def _hashes(buf, bounds, trim=0):
    """FNV-1a of each ``buf[bounds[k]:bounds[k + 1] - trim]``."""
    out = np.empty(bounds.shape[0] - 1, np.uint64)
    for k in range(out.shape[0]):
        out[k] = _fnv(buf, bounds[k], bounds[k + 1] - trim)
    return out


def string_labels(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[Labels, bool]:
    """The table of the string labels ``buf[starts[i]:ends[i]]`` (bytes of a text upload),
    and whether a byte of them is over 127 (their UTF-8 is then to be checked). One pass
    over their bytes as quoted copies; where one of them needs an escape, two (sizes, then
    texts)."""
    data, offsets, plain, wide = _quoted_texts(buf, starts, ends)
    if not plain:
        data, offsets, wide = _json_texts(buf, starts, ends)
    return Labels(data, offsets), bool(wide)


@njit(cache=True, nogil=True, parallel=True)
def _quoted_texts(buf, starts, ends):
    """:func:`_json_texts` for labels without a byte to escape (each text the label in
    quotes), and whether that held (else the table is void) and whether a byte is over 127:
    the labels' bytes are read once, as they are copied."""
    n = starts.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    for k in range(n):  # the sizes' prefix sum, from the spans alone
        offsets[k + 1] = offsets[k] + ends[k] - starts[k] + 3
    out = np.empty(offsets[n], np.uint8)
    escapes, wide = 0, 0
    for k in prange(n):
        p, top, special = offsets[k] + 1 - starts[k], 0, False
        for j in range(starts[k], ends[k]):
            c = buf[j]
            out[p + j] = c
            top |= c
            special |= c <= 34 and _escape(c) > 0 or c == 92
        out[offsets[k]], out[offsets[k + 1] - 2], out[offsets[k + 1] - 1] = 34, 34, 44
        escapes += special
        wide += top >> 7
    return out, offsets, escapes == 0, wide > 0


@njit(cache=True, nogil=True, inline="always")
def _escape(c):
    """Bytes of the JSON escape of byte ``c`` (0: none), as ``json.dumps`` writes them."""
    if c == 34 or c == 92:
        return 2
    if c == 8 or c == 12:
        return 2
    return 6 if c < 32 else 0


@njit(cache=True, nogil=True, parallel=True)
def _json_texts(buf, starts, ends):
    """The table of string labels ``buf[starts[i]:ends[i]]``: JSON strings (escaped as
    ``json.dumps(..., ensure_ascii=False)`` does), each followed by a comma, and whether a
    byte is over 127. Labels in parallel: their sizes, then (after a prefix sum) their texts."""
    n = starts.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    wide = 0
    for k in prange(n):
        size, top = 3 + ends[k] - starts[k], 0
        for j in range(starts[k], ends[k]):
            c = buf[j]
            top |= c
            if c <= 34 or c == 92:  # the rare bytes that may need an escape
                size += max(_escape(c) - 1, 0)
        offsets[k + 1] = size
        wide += top >> 7
    for k in range(n):  # the prefix sum, in place
        offsets[k + 1] += offsets[k]
    hexdigits = np.frombuffer(b"0123456789abcdef", np.uint8)
    out = np.empty(offsets[n], np.uint8)
    for k in prange(n):
        p = offsets[k]
        out[p] = 34
        p += 1
        if offsets[k + 1] - p == ends[k] - starts[k] + 2:  # nothing escaped: a plain copy
            out[p:p + ends[k] - starts[k]] = buf[starts[k]:ends[k]]
            out[offsets[k + 1] - 2] = 34
            out[offsets[k + 1] - 1] = 44
            continue
        for j in range(starts[k], ends[k]):
            c = buf[j]
            e = _escape(c)
            if e == 0:
                out[p] = c
                p += 1
            elif e == 2:
                out[p] = 92
                out[p + 1] = c if c >= 32 else (98 if c == 8 else 102)  # \b, \f
                p += 2
            else:
                out[p] = 92
                out[p + 1] = 117  # \u00
                out[p + 2] = 48
                out[p + 3] = 48
                out[p + 4] = hexdigits[c >> 4]
                out[p + 5] = hexdigits[c & 15]
                p += 6
        out[p] = 34
        out[p + 1] = 44
    return out, offsets, wide > 0

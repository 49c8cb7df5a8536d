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
integer are read as labels (:func:`parse_edgelist`), with no per-token Python object: a Numba
pass scans the lines and hashes each token (FNV-1a, 64 bits), a second numbers the hashes in an
open-addressing table, and a third, parallel, checks every token's bytes against its label's
(two labels sharing a hash send the file through an exact, slower path instead).

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
from graphgpu.kernels.core.io import textscan as ts
from graphgpu.kernels.core.settings import Settings

#: File stems of a labelled graph's table in its store folder.
DATA_FILE, OFFSETS_FILE = "labels", "label_offsets"
#: Labels decoded per ``json.loads`` call when a whole table is rendered.
DECODE_CHUNK = 1 << 16

_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


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


# --- text edge lists --------------------------------------------------------------------------

def parse_edgelist(text: bytes, settings: Settings
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, None, Labels]:
    """Parse an edge list whose node columns are labels (``alice bob [weight]`` lines; the
    same separators, comments and blank lines as an integer edge list).

    Returns
    -------
    src, dst : ndarray of int64
        Ids of the endpoints (labels numbered in order of first appearance).
    weights : ndarray of float64 or None
    extra_nodes : None
    labels : Labels
        Every label is a string (``12`` in such a file is the label ``"12"``).

    Raises
    ------
    InvalidInput
        Column counts, an empty field, a bad weight, labels that are not UTF-8.
    LimitExceeded
        More labels than ``max_nodes``.
    """
    arr = ts.as_array(text)
    rows = ts.count_newlines(arr, 0, arr.size) + 1
    src, dst, w = np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows, np.float64)
    hashes = np.empty(2 * rows, np.uint64)
    err, got, ncols, line, pos = _scan_labelled(arr, src, dst, w, hashes)
    if err:
        raise _error(text, err, line, pos, ncols)
    reps = _intern(src, dst, hashes, got)
    if not _verify(arr, src, dst, hashes[:2 * got].view(np.int64), reps):
        reps = _intern_exactly(text, src, dst, got)
    del hashes
    starts = reps >> _LEN_BITS
    ends = starts + (reps & MAX_LABEL_BYTES)
    if starts.size > settings.max_nodes:
        raise LimitExceeded(f"{starts.size} nodes exceed the limit {settings.max_nodes}",
                            code="too_many_nodes")
    data, offsets = _json_texts(arr, starts, ends)
    if not (data < 128).all():
        try:
            str(data, "utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"node labels must be UTF-8 text ({exc.reason} in a label)",
                               field="edges", code="bad_node_id") from None
    return src[:got], dst[:got], (w[:got] if ncols == 3 else None), None, Labels(data, offsets)


def _intern_exactly(text: bytes, src: np.ndarray, dst: np.ndarray, rows: int) -> np.ndarray:
    """:func:`_intern` and :func:`_verify` by a dict of the labels' bytes, for the text whose
    labels share a 64-bit hash (never met by chance below billions of labels, but a file can
    be made so)."""
    index: dict[bytes, int] = {}
    reps: list[int] = []
    for r in range(rows):  # ids in order of first appearance, as _intern numbers them
        for column in (src, dst):
            packed = int(column[r])
            lo = packed >> _LEN_BITS
            k = index.setdefault(bytes(text[lo:lo + (packed & MAX_LABEL_BYTES)]), len(index))
            if k == len(reps):
                reps.append(packed)
            column[r] = k
    return np.array(reps, dtype=np.int64)


def _error(text: bytes, err: int, line: int, pos: int, ncols: int) -> InvalidInput:
    tok = ts.token_at(text, pos)
    if err == E_LONG:
        return InvalidInput(f"line {line}: a node label longer than {MAX_LABEL_BYTES} bytes",
                            line=line, field="edges", code="bad_node_id")
    if err == ts.E_TOKEN:
        return InvalidInput(f"line {line}: empty field (stray comma?)", line=line,
                            field="edges", code="bad_node_id")
    if err in (ts.E_WEIGHT, ts.E_NONFINITE):
        return InvalidInput(f"line {line}: weight '{tok}' is not a finite number", line=line,
                            field="weights", code="bad_weight")
    k = len(ts.line_fields(text, pos))
    expected = f"the first data line has {ncols}" if err == ts.E_NCOLS else (
        "expected 'u v' or 'u v weight'")
    return InvalidInput(f"line {line} has {k} column(s); {expected}", line=line, field="edges",
                        code="bad_columns")


@njit(cache=True, nogil=True, inline="always")
def _blank(c):
    return c == 32 or c == 9 or c == 13


@njit(cache=True, nogil=True, inline="always")
def _at(buf, i):
    return np.int64(buf[i]) if i < buf.shape[0] else 10  # EOF reads as the end of a line


@njit(cache=True, nogil=True)
def _sep(buf, i):
    """Skip blanks and at most one comma: ``(i, ok)``; not ok for a comma before an empty
    field."""
    while _blank(_at(buf, i)):
        i += 1
    if _at(buf, i) != 44:
        return i, True
    i += 1
    while _blank(_at(buf, i)):
        i += 1
    c = _at(buf, i)
    return i, c != 10 and c != 44


#: A label's byte span is packed as ``start << _LEN_BITS | length`` while scanning.
_LEN_BITS = 20
MAX_LABEL_BYTES = (1 << _LEN_BITS) - 1
E_LONG = 100  # a label over MAX_LABEL_BYTES (beside textscan's error codes)


@njit(cache=True, nogil=True)
def _scan_labelled(buf, src, dst, w, hs):
    """Phase one: scan ``label label [weight]`` lines; each label's packed span goes into
    ``src``/``dst`` and its FNV-1a hash into ``hs`` (two a row), the weight into ``w``.

    Returns ``(err, rows, ncols, line, pos)``: on an error, its line and the offending byte.
    """
    row, ncols, line, i, end = 0, 0, 1, 0, buf.shape[0]
    while i < end:
        while i < end and _blank(buf[i]):
            i += 1
        c = _at(buf, i)
        if c == 10 or c == 35 or c == 37:  # blank line, '#' or '%' comment
            while i < end and buf[i] != 10:
                i += 1
            line += 1
            i += 1
            continue
        start, tok = i, 0
        x = 0.0
        while True:
            c = _at(buf, i)
            if c == 10:
                break
            t0 = i
            if tok == 2:  # the weight
                i, st, _, x = ts.parse_number(buf, i, end)
                c = _at(buf, i)
                if st == ts.ST_INVALID or st == ts.ST_NONFINITE or not (
                        _blank(c) or c == 44 or c == 10):
                    return ts.E_WEIGHT, row, ncols, line, t0
            elif tok < 2:
                h = _FNV_OFFSET
                while not (_blank(c) or c == 44 or c == 10):
                    h = (h ^ np.uint64(c)) * _FNV_PRIME
                    i += 1
                    c = _at(buf, i)
                if i == t0:
                    return ts.E_TOKEN, row, ncols, line, t0
                if i - t0 > MAX_LABEL_BYTES:
                    return E_LONG, row, ncols, line, t0
                packed = (np.int64(t0) << _LEN_BITS) | (i - t0)
                if tok == 0:
                    src[row] = packed
                else:
                    dst[row] = packed
                hs[2 * row + tok] = h
            else:
                return ts.E_COLS, row, ncols, line, start
            tok += 1
            i, ok = _sep(buf, i)
            if not ok:
                return ts.E_TOKEN, row, ncols, line, i
        if tok < 2:
            return ts.E_COLS, row, ncols, line, start
        if ncols == 0:
            ncols = tok
        elif tok != ncols:
            return ts.E_NCOLS, row, ncols, line, start
        w[row] = x
        row += 1
        line += 1
        i += 1
    return 0, row, ncols, line, i


@njit(cache=True, nogil=True, inline="always")
def _slot(h, mask):
    return np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))


@njit(cache=True, nogil=True)
def _intern(src, dst, hs, rows):
    """Phase two: number the hashes ``hs`` in order of first appearance, writing each token's
    label id over its hash (``hs`` viewed as int64); returns each label's packed span (from
    ``src``/``dst``). Equal hashes are taken as equal labels here, and :func:`_verify` checks
    that afterwards: a probe then touches the table alone, and the probes of consecutive
    tokens overlap their cache misses."""
    cap = 1024
    while cap < rows // 2:  # (fewer rehashes: a graph has about as many nodes as edges)
        cap *= 2
    reps = np.empty(cap, np.int64)  # packed span of each label's first appearance
    rep_hash = np.empty(cap, np.uint64)
    mask = 2 * cap - 1
    table = np.full(2 * (mask + 1), -1, np.int64)  # (hash, id) pairs, side by side
    ids = hs.view(np.int64)
    n = 0
    for t in range(2 * rows):
        h = hs[t]
        hv = np.int64(h)
        slot = _slot(h, mask)
        k = -1
        while table[2 * slot + 1] >= 0:
            if table[2 * slot] == hv:
                k = table[2 * slot + 1]
                break
            slot = (slot + 1) & mask
        if k < 0:  # a new label
            if n == cap:
                cap *= 2
                reps = _grown(reps, cap)
                rep_hash = _grown(rep_hash, cap)
                mask = 2 * cap - 1
                table = np.full(2 * (mask + 1), -1, np.int64)
                for q in range(n):
                    s = _slot(rep_hash[q], mask)
                    while table[2 * s + 1] >= 0:
                        s = (s + 1) & mask
                    table[2 * s], table[2 * s + 1] = np.int64(rep_hash[q]), q
                slot = _slot(h, mask)
                while table[2 * slot + 1] >= 0:
                    slot = (slot + 1) & mask
            k = n
            reps[k], rep_hash[k] = src[t // 2] if t % 2 == 0 else dst[t // 2], h
            table[2 * slot], table[2 * slot + 1] = hv, k
            n += 1
        ids[t] = k
    return reps[:n]


@njit(cache=True, nogil=True, parallel=True)
def _verify(buf, src, dst, ids, reps):
    """Whether every token's bytes equal those of the label its hash gave it (False: two
    labels share a 64-bit hash); then ``src``/``dst`` receive the ids. Tokens in parallel."""
    bad = 0
    for t in prange(ids.shape[0]):
        packed = src[t // 2] if t % 2 == 0 else dst[t // 2]
        other = reps[ids[t]]
        size = packed & MAX_LABEL_BYTES
        lo, o = packed >> _LEN_BITS, other >> _LEN_BITS
        if other & MAX_LABEL_BYTES != size:
            bad += 1
        elif lo != o:
            for j in range(size):
                if buf[o + j] != buf[lo + j]:
                    bad += 1
                    break
    if bad:
        return False
    for r in prange(ids.shape[0] // 2):
        src[r], dst[r] = ids[2 * r], ids[2 * r + 1]
    return True


@njit(cache=True, nogil=True)
def _grown(a, cap):
    out = np.empty(cap, a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True, nogil=True, inline="always")
def _escape(c):
    """Bytes of the JSON escape of byte ``c`` (0: none), as ``json.dumps`` writes them."""
    if c == 34 or c == 92:
        return 2
    if c == 8 or c == 12:
        return 2
    return 6 if c < 32 else 0


@njit(cache=True, nogil=True)
def _json_texts(buf, starts, ends):
    """The table of string labels ``buf[starts[i]:ends[i]]``: JSON strings (escaped as
    ``json.dumps(..., ensure_ascii=False)`` does), each followed by a comma."""
    n = starts.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    for k in range(n):
        size = 3
        for j in range(starts[k], ends[k]):
            e = _escape(buf[j])
            size += e if e else 1
        offsets[k + 1] = offsets[k] + size
    hexdigits = np.frombuffer(b"0123456789abcdef", np.uint8)
    out = np.empty(offsets[n], np.uint8)
    p = 0
    for k in range(n):
        out[p] = 34
        p += 1
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
                out[p:p + 4] = np.frombuffer(b"\\u00", np.uint8)
                out[p + 4] = hexdigits[c >> 4]
                out[p + 5] = hexdigits[c & 15]
                p += 6
        out[p] = 34
        out[p + 1] = 44
        p += 2
    return out, offsets


@njit(cache=True, nogil=True)
def _fnv(buf, lo, hi):
    h = _FNV_OFFSET
    for j in range(lo, hi):
        h = (h ^ np.uint64(buf[j])) * _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def _hashes(buf, bounds, trim=0):
    """FNV-1a of each ``buf[bounds[k]:bounds[k + 1] - trim]``."""
    out = np.empty(bounds.shape[0] - 1, np.uint64)
    for k in range(out.shape[0]):
        out[k] = _fnv(buf, bounds[k], bounds[k + 1] - trim)
    return out

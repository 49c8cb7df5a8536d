"""The labelled edge-list scanner: ``alice bob [weight]`` lines into label ids and the
:class:`~graphgpu.kernels.core.labels.Labels` table, with no per-token Python object.

Phase one (:func:`_scan_labelled`, threads over whole-line chunks as the integer scanner runs)
finds each token and hashes its bytes (FNV-1a, 64 bits); phase two (:func:`_intern`, in
parallel) groups the tokens of one hash prefix by one sort of (hash prefix, token index) keys
(:func:`_sort`), tells the labels of a prefix apart by their bytes (so identity is exact) and
numbers them in order of first appearance (a hash table cost a random probe a token, 2x the
time).
More than a few labels under one prefix (never met by chance, but a file can be made so) send
the file through an exact, slower path instead (:func:`_intern_exactly`).
"""

from __future__ import annotations

import os

import numpy as np
from numba import njit, prange

from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded
from graphgpu.kernels.core.io import textscan as ts
from graphgpu.kernels.core.labels import FNV_OFFSET, FNV_PRIME, Labels, string_labels
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.threads import map_shared

_MIN_CHUNK = 1 << 20  # text a thread scans at least (as the integer scanner)
_PARTS = 64  # pieces of the sorted keys numbered in parallel (a few a thread, for balance)
_MAX_RUN_LABELS = 16  # labels of one hash prefix before the exact way (a made file's)
_BLOCK = 32  # tokens whose spans and bytes are fetched together
_RUN_SHIFT = 31  # a run: the tokens whose hashes share the top 64 - 31 bits

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
        Column counts, an empty field, a bad weight, labels that are not UTF-8, a control byte
        (binary data, not a name), or a first line of column names (a header row).
    LimitExceeded
        More labels than ``max_nodes``.
    """
    arr = ts.as_array(text)
    _refuse_header(text, arr)
    rows = ts.count_newlines(arr, 0, arr.size) + 1
    src, dst, w = np.empty(rows, np.int64), np.empty(rows, np.int64), np.empty(rows, np.float64)
    hashes = np.empty(2 * rows, np.uint64)
    got, ncols = _scan_chunks(text, arr, src, dst, w, hashes)
    reps = _intern(arr, src, dst, hashes, got)
    if reps is None:
        reps = _intern_exactly(text, src, dst, got)
    del hashes
    starts = reps >> _LEN_BITS
    ends = starts + (reps & MAX_LABEL_BYTES)
    if starts.size > settings.max_nodes:
        raise LimitExceeded(f"{starts.size} nodes exceed the limit {settings.max_nodes}",
                            code="too_many_nodes")
    table, wide = string_labels(arr, starts, ends)
    if wide:  # a byte over 127: UTF-8 is checked
        try:
            str(table.data, "utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"node labels must be UTF-8 text ({exc.reason} in a label)",
                               field="edges", code="bad_node_id") from None
    return src[:got], dst[:got], (w[:got] if ncols == 3 else None), None, table


def _scan_chunks(text: bytes, arr: np.ndarray, src: np.ndarray, dst: np.ndarray, w: np.ndarray,
                 hashes: np.ndarray) -> tuple[int, int]:
    """Phase one in threads over whole-line chunks (as the integer scanner splits them): chunk
    ``k`` writes from row ``offs[k]``, its line breaks before it, and the rows move down over
    the gaps that comment and blank lines leave. Returns the rows and the column count."""
    threads = max(1, min(len(os.sched_getaffinity(0)), 8, arr.size // _MIN_CHUNK))
    bounds = [0]
    for k in range(1, threads):
        nl = text.find(b"\n", arr.size * k // threads)
        if nl < 0 or nl + 1 >= arr.size:
            break
        bounds.append(max(bounds[-1], nl + 1))
    bounds.append(arr.size)
    spans = list(zip(bounds[:-1], bounds[1:], strict=True))
    offs = np.cumsum([0] + [ts.count_newlines(arr, lo, hi) for lo, hi in spans]).tolist()

    def work(k: int, ncols: int = 0) -> tuple[int, int, int, int, int]:
        a, b = offs[k], offs[k + 1] + (k == len(spans) - 1)
        return _scan_labelled(arr, *spans[k], 1 + offs[k], ncols, src[a:b], dst[a:b], w[a:b],
                              hashes[2 * a:2 * b])

    results = map_shared(work, range(len(spans)))
    ncols = next((r[2] for r in results if r[2]), 0)
    rows = 0
    for k, result in enumerate(results):
        if result[2] not in (0, ncols):  # its first data line has other columns than the file's
            result = work(k, ncols)
        err, got, _, line, pos = result
        if err:  # a control byte anywhere is named first, wherever the scan stopped
            _refuse_control(arr)
            raise _error(text, err, line, pos, ncols)
        if offs[k] != rows:  # overlapping move down; NumPy buffers overlapping copies
            for column in (src, dst, w):
                column[rows:rows + got] = column[offs[k]:offs[k] + got]
            hashes[2 * rows:2 * (rows + got)] = hashes[2 * offs[k]:2 * (offs[k] + got)]
        rows += got
    return rows, ncols


def _intern_exactly(text: bytes, src: np.ndarray, dst: np.ndarray, rows: int) -> np.ndarray:
    """:func:`_intern` by a dict of the labels' bytes (a made file's many labels a run)."""
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
    """Skip blanks and at most one comma: ``(i, ok)``, not ok before an empty field."""
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
E_CONTROL = 101  # a control byte in a label or a comment (_refuse_control names it)


@njit(cache=True, nogil=True)
def _scan_labelled(buf, i, end, line, ncols, src, dst, w, hs):
    """Phase one: scan the ``label label [weight]`` lines of ``buf[i:end]`` (from file line
    ``line``; ``ncols`` columns, 0: as the first data line has); each label's packed span goes
    into ``src``/``dst`` and its FNV-1a hash into ``hs`` (two a row), the weight into ``w``.

    Returns ``(err, rows, ncols, line, pos)``: on an error, its line and the offending byte.
    """
    row = 0
    while i < end:
        while i < end and _blank(buf[i]):
            i += 1
        c = _at(buf, i)
        if c == 10 or c == 35 or c == 37:  # blank line, '#' or '%' comment
            while i < end and buf[i] != 10:
                if buf[i] < 32 and not _blank(buf[i]):
                    return E_CONTROL, row, ncols, line, i
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
                h = FNV_OFFSET
                while not (_blank(c) or c == 44 or c == 10):
                    if c < 32:
                        return E_CONTROL, row, ncols, line, i
                    h = (h ^ np.uint64(c)) * FNV_PRIME
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


def _intern(buf: np.ndarray, src: np.ndarray, dst: np.ndarray, hs: np.ndarray, rows: int
            ) -> np.ndarray | None:
    """Phase two: number the labels (packed spans in ``src``/``dst``, hashes ``hs``) by first
    appearance, ids over ``src``/``dst``; returns each label's packed span, or None (nothing
    written) where more than :data:`_MAX_RUN_LABELS` labels share one hash prefix.

    One sort of keys (hash prefix, token index) groups the tokens (no random probe of a hash
    table a token); the labels of one prefix are told apart by their bytes (identity is
    exact). The sorted keys are numbered in parallel pieces, cut at run boundaries, into
    slots that are then ranked by first token (each step its own function: Numba would fuse
    parallel loops over one range, which race here)."""
    tokens = 2 * rows
    tbits = max(1, (tokens - 1).bit_length())
    if tbits > _RUN_SHIFT:  # the token index would reach the run's bits
        return None
    keys = _sort(_keys(hs[:tokens], tbits), np.empty(tokens, np.uint64))
    cuts = _cuts(keys, min(_PARTS, tokens))
    head, span = (np.empty(tokens, np.int64) for _ in range(2))
    used = _slots(buf, keys, tbits, src, dst, cuts, head, span, _MAX_RUN_LABELS)
    del span
    if (used < 0).any():
        return None
    mark = hs[:tokens].view(np.int64)  # the unsorted keys' memory: no other use of it now
    mark.fill(0)
    _heads(cuts, used, head, mark)
    first = _first_ranks(mark, cuts.shape[0] - 1)
    reps = _rank(mark, first, head, src, dst)
    _relabel(keys, tbits, head, src, dst)
    return reps


@njit(cache=True, nogil=True, parallel=True)
def _keys(hs, tbits):
    """The sort keys (hash prefix, token index), written over the hashes ``hs``."""
    shift = np.uint64(tbits)
    for t in prange(hs.shape[0]):
        hs[t] = hs[t] >> shift << shift | np.uint64(t)
    return hs


@njit(cache=True, nogil=True, parallel=True)
def _radix_pass(keys, out, low):
    """One stable pass of :func:`_sort`: ``keys`` into ``out`` by their 11 bits from bit
    ``low`` (counted, then scattered, in parallel chunks kept in order)."""
    n, s, m, chunks = keys.shape[0], np.uint64(low), np.uint64(2047), 4
    at = np.zeros((chunks, 2048), np.int64)
    for c in prange(chunks):
        for i in range(n * c // chunks, n * (c + 1) // chunks):
            at[c, (keys[i] >> s) & m] += 1
    total = 0
    for b in range(2048):  # where each chunk's keys of each bucket go
        for c in range(chunks):
            at[c, b], total = total, total + at[c, b]
    for c in prange(chunks):
        for i in range(n * c // chunks, n * (c + 1) // chunks):
            b = (keys[i] >> s) & m
            out[at[c, b]] = keys[i]
            at[c, b] += 1
    return out


def _sort(keys: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``keys`` sorted stably by their top 33 bits (the run a token joins), into ``out``;
    ``keys`` is overwritten. Three radix passes of 11 bits (2,048 buckets, in cache): 20M
    keys in 0.23 s of CPU, against 1.4 s for ``keys.sort()`` on this VM."""
    return _radix_pass(_radix_pass(_radix_pass(keys, out, 31), keys, 42), out, 53)


@njit(cache=True, nogil=True)
def _cuts(keys, parts):
    """``parts + 1`` bounds of near-equal pieces of the sorted keys, each at a run's start."""
    tokens = keys.shape[0]
    shift = np.uint64(_RUN_SHIFT)
    cuts = np.empty(parts + 1, np.int64)
    cuts[0], cuts[parts] = 0, tokens
    for p in range(1, parts):
        i = max(tokens * p // parts, cuts[p - 1])
        while 0 < i < tokens and keys[i] >> shift == keys[i - 1] >> shift:
            i += 1
        cuts[p] = i
    return cuts


@njit(cache=True, nogil=True, inline="always")
def _same_label(buf, a, b, b0):
    """Whether packed spans ``a`` and ``b`` (first byte ``b0``) hold the same bytes."""
    size = a & MAX_LABEL_BYTES
    if b & MAX_LABEL_BYTES != size:
        return False
    lo, o = a >> _LEN_BITS, b >> _LEN_BITS
    if lo != o:
        if buf[lo] != b0:
            return False
        for j in range(1, size):
            if buf[lo + j] != buf[o + j]:
                return False
    return True


@njit(cache=True, nogil=True, parallel=True)
def _slots(buf, keys, tbits, src, dst, cuts, head, span, cap):
    """Each piece's runs numbered into slots ``cuts[p]...`` (a token joins the run's label
    whose bytes it has, else starts one): each key becomes (slot, token index), written in
    place (in order, not at the token's index), ``head`` and ``span`` each slot's first token
    and its packed span; returns the end of each piece's
    used slots, -1 for a piece with a run of more than ``cap`` labels. The tokens' spans and
    first bytes are fetched a block at a time before they are compared: independent loads,
    which the memory serves together instead of one miss at a time."""
    tmask = np.uint64((1 << tbits) - 1)
    shift, run = np.uint64(tbits), np.uint64(_RUN_SHIFT)
    parts = cuts.shape[0] - 1
    used = np.empty(parts, np.int64)
    for p in prange(parts):
        block_t = np.empty(_BLOCK, np.int64)
        block_span = np.empty(_BLOCK, np.int64)
        block_b0 = np.empty(_BLOCK, np.uint8)
        n = base = cuts[p]
        prefix = np.uint64(0)
        for lo in range(cuts[p], cuts[p + 1], _BLOCK):
            hi = min(lo + _BLOCK, cuts[p + 1])
            last = prefix  # a token alone in its run is never compared: nothing to fetch
            for q in range(lo, hi):
                t, r = np.int64(keys[q] & tmask), keys[q] >> run
                alone = (q == cuts[p] or r != last) and (
                    q + 1 == cuts[p + 1] or keys[q + 1] >> run != r)
                block_t[q - lo], last = t, r
                block_span[q - lo] = -1 if alone else src[t // 2] if t % 2 == 0 else dst[t // 2]
            for q in range(lo, hi):
                if block_span[q - lo] >= 0:
                    block_b0[q - lo] = buf[block_span[q - lo] >> _LEN_BITS]
            for q in range(lo, hi):
                if q == cuts[p] or keys[q] >> run != prefix:  # a new run
                    prefix = keys[q] >> run
                    base = n
                t, packed = block_t[q - lo], block_span[q - lo]
                k = -1
                for c in range(base, n):
                    if _same_label(buf, span[c], packed, block_b0[q - lo]):
                        k = c
                        break
                if k < 0:
                    if n - base == cap:
                        n = -1
                        break
                    head[n], span[n] = t, packed
                    k = n
                    n += 1
                keys[q] = np.uint64(k) << shift | np.uint64(t)
            if n < 0:
                break
        used[p] = n
    return used


@njit(cache=True, nogil=True, parallel=True)
def _heads(cuts, used, head, mark):
    """Marks the first token of each label with its slot + 1 (``mark`` is zeros)."""
    for p in prange(used.shape[0]):
        for c in range(cuts[p], used[p]):
            mark[head[c]] = c + 1


@njit(cache=True, nogil=True, parallel=True)
def _first_ranks(is_head, parts):
    """The rank of the first label met in each of ``parts`` token ranges (``is_head``
    nonzero at first tokens), the count last."""
    tokens = is_head.shape[0]
    first = np.zeros(parts + 1, np.int64)
    for p in prange(parts):
        first[p + 1] = np.count_nonzero(is_head[tokens * p // parts:tokens * (p + 1) // parts])
    for p in range(parts):
        first[p + 1] += first[p]
    return first


@njit(cache=True, nogil=True, parallel=True)
def _rank(mark, first, rank, src, dst):
    """Slots ranked by first token (into ``rank``); returns each label's packed span."""
    tokens = mark.shape[0]
    parts = first.shape[0] - 1
    reps = np.empty(first[parts], np.int64)
    for p in prange(parts):
        r = first[p]
        for t in range(tokens * p // parts, tokens * (p + 1) // parts):
            if mark[t]:
                rank[mark[t] - 1] = r
                reps[r] = src[t // 2] if t % 2 == 0 else dst[t // 2]
                r += 1
    return reps


@njit(cache=True, nogil=True, parallel=True)
def _relabel(keys, tbits, rank, src, dst):
    """Each token's label id (its slot's rank) over its packed span in ``src``/``dst``,
    in the order of the (slot, token) keys: the ranks read in order, the ids written
    scattered."""
    tmask, shift = np.uint64((1 << tbits) - 1), np.uint64(tbits)
    for q in prange(keys.shape[0]):
        t, r = np.int64(keys[q] & tmask), rank[np.int64(keys[q] >> shift)]
        if t % 2 == 0:
            src[t // 2] = r
        else:
            dst[t // 2] = r


#: Column names that make a first line a header row rather than an edge between two labels.
HEADER_WORDS = frozenset({b"source", b"target", b"src", b"dst", b"from", b"to", b"u", b"v",
                          b"weight", b"w", b"node1", b"node2", b"head", b"tail"})


@njit(cache=True, nogil=True)
def _first_control_byte(arr: np.ndarray) -> int:
    for i in range(arr.size):
        c = arr[i]
        if c < 0x20 and c != 0x09 and c != 0x0A and c != 0x0D:
            return i
    return -1


def _refuse_control(arr: np.ndarray) -> None:
    """Refuse control bytes (NUL and the like, but tab, carriage return and newline): binary
    data, not names. The scan stops at one (``E_CONTROL``), so this runs on errors only."""
    bad = _first_control_byte(arr)
    if bad >= 0:
        line = int(np.count_nonzero(arr[:bad] == 0x0A)) + 1
        raise InvalidInput(f"line {line} holds a control byte (0x{int(arr[bad]):02x}): node "
                           "labels are text", line=line, field="edges", code="bad_token")


def _refuse_header(text: bytes, arr: np.ndarray) -> None:
    """Refuse a header row as the first data line (an edge named ``source target`` would be
    silently wrong: ``graphgpu upload`` reads headers); a control byte is named first."""
    start = 0
    for number in range(1, 65):  # the first 64 lines, one by one (no copy of the rest)
        end = text.find(b"\n", start) % (len(text) + 1)  # no break left: the text's end
        line, start = text[start:end].strip(), end + 1
        if not line or line[:1] in (b"#", b"%"):
            continue
        fields = [bytes(f).lower() for f in line.replace(b",", b" ").split()]
        if fields and all(f in HEADER_WORDS for f in fields):
            _refuse_control(arr)
            raise InvalidInput(f"line {number} is a header row ({line.decode(errors='replace')})"
                               ": upload without it, or with `graphgpu upload`, which reads "
                               "headers", line=number, field="edges", code="header_row")
        return

"""Numba byte scanners behind :mod:`graphgpu.kernels.core.io.formats`.

The scanners walk the raw bytes once and never raise: they return an error code, the 1-based
line and the byte offset of the offending token, and the Python side turns that into a precise
:class:`~graphgpu.kernels.core.errors.InvalidInput`. Raising inside ``nopython`` code would lose
the token text
and cost an object-mode round trip.

Two scanners share one number parser:

* :func:`scan_edges` is the edge-list fast path: ids go straight into ``src``/``dst`` (and weights
  into ``w``), so there is no per-token intermediate array.
* :func:`scan_tokens` is the generic tokenizer for METIS, Matrix Market and CNP: it records every
  numeric token with a status, plus the first token and the file line of every emitted line; the
  format-specific checks then run vectorised in NumPy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.io.exactfloat import correctly_rounded

# Error codes shared with graphgpu.kernels.core.io.formats.
OK = 0
E_TOKEN = 1  # a token that is not a valid number / node id
E_ID_RANGE = 2  # node id over max_id, or too long for int64
E_WEIGHT = 3  # a weight token that is not a number
E_NONFINITE = 4  # nan / inf weight (or a literal that overflows to inf)
E_NCOLS = 5  # a line whose column count differs from the first data line
E_COLS = 6  # fewer than 2 or more than 3 columns
E_COLON = 7  # CNP colon missing or misplaced

# Token statuses written by scan_tokens (and returned by _parse_number).
ST_INT = 0  # non-negative integer that fits int64
ST_FLOAT = 1  # any other finite number (sign, '.', exponent)
ST_NONFINITE = 2  # nan / inf
ST_INVALID = 3  # not a number
ST_BIGINT = 4  # digits only but larger than int64

_MANT_CAP = 10**17  # mantissa digits past 18 are dropped (exponent adjusted): no overflow
# Clinger's fast path: mant < 2**53 and 10**k (|k| <= 22) are exact doubles, so mant * 10**k and
# mant / 10**k round once, correctly. Every other token goes to exactfloat.correctly_rounded.
_EXACT_MANT = 2**53
_POW10 = np.array([10.0**k for k in range(23)])


@njit(cache=True, nogil=True, inline="always")
def _is_blank(c):
    # CR counts as a blank so that CRLF files and stray CRs need no special case.
    return c == 32 or c == 9 or c == 13


@njit(cache=True, nogil=True, inline="always")
def _digits(buf, i, end, mant, exp10, frac):
    """Accumulate decimal digits; past 18 significant digits only the exponent moves."""
    t0 = i
    while i < end and 48 <= buf[i] <= 57:
        if mant < _MANT_CAP:
            mant = mant * 10 + (np.int64(buf[i]) - 48)
            exp10 -= frac
        else:
            exp10 += 1 - frac
        i += 1
    return i, mant, exp10, i > t0


@njit(cache=True, nogil=True)
def _parse_number(buf, i, end):
    """Parse one number at ``buf[i]``; return ``(end_pos, status, int_value, float_value)``.

    The token ends at the first byte that cannot continue a number; the caller checks that this
    byte is a separator. ``int_value`` is exact for ``ST_INT`` tokens; ``float_value`` is
    correctly rounded, bit for bit Python's ``float(token)``.
    """
    t0 = i
    neg = i < end and buf[i] == 45
    if i < end and (buf[i] == 43 or buf[i] == 45):
        i += 1
    pure = i == t0  # no sign; '.' or an exponent clear it too: then not a node id
    if i < end and ((buf[i] | 32) == 105 or (buf[i] | 32) == 110):  # 'i' / 'n': inf, nan
        j = i
        while j < end and 97 <= (buf[j] | 32) <= 122:
            j += 1
        word = 0
        for k in range(i, min(j, i + 8)):
            word = word * 256 + (buf[k] | 32)
        if j - i <= 8 and (word == 0x6E616E or word == 0x696E66 or word == 0x696E66696E697479):
            return j, ST_NONFINITE, 0, np.nan
        return j, ST_INVALID, 0, 0.0
    i, mant, exp10, int_digits = _digits(buf, i, end, 0, 0, 0)
    ival = mant  # exact when pure and at most 18 digits; longer ones are re-checked below
    if i < end and buf[i] == 46:  # '.'
        pure = False
        i, mant, exp10, frac_digits = _digits(buf, i + 1, end, mant, exp10, 1)
        int_digits = int_digits or frac_digits
    if not int_digits:
        return i, ST_INVALID, 0, 0.0
    if i < end and (buf[i] | 32) == 101:  # 'e'
        pure = False
        eneg = i + 1 < end and buf[i + 1] == 45
        i += 1 + (i + 1 < end and (buf[i + 1] == 43 or buf[i + 1] == 45))
        e0 = i
        e = 0
        while i < end and 48 <= buf[i] <= 57:
            e = min(e * 10 + (np.int64(buf[i]) - 48), 100000)
            i += 1
        if i == e0:
            return i, ST_INVALID, 0, 0.0
        exp10 += -e if eneg else e
    value = float(mant)
    if mant >= _EXACT_MANT or not -22 <= exp10 <= 22:  # one rounding of floats cannot do it
        value = correctly_rounded(buf, t0, i) if mant != 0 else 0.0
    elif exp10 > 0:
        value *= _POW10[exp10]
    elif exp10 < 0:
        value /= _POW10[-exp10]
    if neg:
        value = -value
    if not np.isfinite(value):
        return i, ST_NONFINITE, 0, value
    if not pure:
        return i, ST_FLOAT, 0, value
    if i - t0 > 18:
        if _too_big(buf, t0, i):
            return i, ST_BIGINT, 0, value
        ival = 0  # 19 digits or leading zeros: mant dropped digits, so recompute exactly
        for k in range(t0, i):
            ival = ival * 10 + (np.int64(buf[k]) - 48)
    return i, ST_INT, ival, value


#: The number parser, for the labelled edge-list scanner (graphgpu.kernels.core.labels).
parse_number = _parse_number


# Bytes that may end a token in an edge list: blank, CR, LF, comma (and 256: never read).
_DELIM = np.zeros(256, np.bool_)
_DELIM[[32, 9, 13, 10, 44]] = True
_INT64_MAX_DIGITS = np.array([ord(ch) for ch in str(2**63 - 1)], np.uint8)


@njit(cache=True, nogil=True)
def _too_big(buf, t0, i):
    """Whether the digits ``buf[t0:i]`` exceed int64 (checked only for tokens over 18 digits)."""
    while t0 < i - 1 and buf[t0] == 48:
        t0 += 1
    if i - t0 != 19:
        return i - t0 > 19
    for k in range(19):
        if buf[t0 + k] != _INT64_MAX_DIGITS[k]:
            return buf[t0 + k] > _INT64_MAX_DIGITS[k]
    return False


@njit(cache=True, nogil=True, inline="always")
def _at(buf, i, end):
    # The current byte, with end of input read as '\n' so that EOF ends the last line.
    return np.int64(buf[i]) if i < end else 10


@njit(cache=True, nogil=True, inline="always")
def _skip_sep(buf, i, end, c):
    """Skip blanks and at most one comma; returns ``(i, c, ok)`` (not ok: a trailing comma)."""
    while c == 32 or c == 9 or c == 13:
        i += 1
        c = _at(buf, i, end)
    if c == 44:
        i += 1
        c = _at(buf, i, end)
        while c == 32 or c == 9 or c == 13:
            i += 1
            c = _at(buf, i, end)
        return i, c, c != 10
    return i, c, True


@njit(cache=True, nogil=True, inline="always")
def _read_id(buf, i, end, c, max_id):
    """Parse a node id at ``i`` (current byte ``c``); returns ``(i, c, value, err)``."""
    t0 = i
    v = 0
    while 48 <= c <= 57:
        v = v * 10 + (c - 48)
        i += 1
        c = _at(buf, i, end)
    if i == t0 or not _DELIM[c]:
        return i, c, v, E_TOKEN
    if (i - t0 > 18 and _too_big(buf, t0, i)) or v > max_id:
        return i, c, v, E_ID_RANGE
    return i, c, v, OK


@njit(cache=True, nogil=True)
def scan_edges(buf, pos, end, line, ncols, max_id, src, dst, w):
    """Parse edge-list lines in ``buf[pos:end]`` into ``src``, ``dst`` and (3 columns) ``w``.

    ``ncols == 0`` is detection mode: stop at the end of the first data line and return its
    column count instead of a row count, with the line number and byte offset where it starts.

    Returns ``(err, rows_or_ncols, line, token_pos, pos)``: ``line`` is the line of the error
    (counted from the ``line`` argument), ``token_pos`` the byte offset of the offending token.
    """
    i = pos
    row = 0
    while i < end:
        c = np.int64(buf[i])
        if not 48 <= c <= 57:  # not the usual digit at line start: blanks, comment, bad token
            while c == 32 or c == 9 or c == 13:
                i += 1
                c = _at(buf, i, end)
            if c == 10:
                line += 1
                i += 1
                continue
            if c == 35 or c == 37:  # '#' / '%' comment line; its '\n' is counted next turn
                while i < end and buf[i] != 10:
                    i += 1
                continue
        start = i
        i, c, u, err = _read_id(buf, i, end, c, max_id)
        if err:
            return err, row, line, start, i
        if c == 32 or c == 9:  # fast path: one blank then the next id
            i += 1
            c = _at(buf, i, end)
        if not 48 <= c <= 57:
            i, c, ok = _skip_sep(buf, i, end, c)
            if not ok:
                return E_TOKEN, row, line, i, i
            if c == 10:
                return (E_COLS if ncols == 0 else E_NCOLS), row, line, start, i
        t0 = i
        i, c, v, err = _read_id(buf, i, end, c, max_id)
        if err:
            return err, row, line, t0, i
        tok = 2
        x = 0.0
        if c != 10:
            i, c, ok = _skip_sep(buf, i, end, c)
            if not ok:
                return E_TOKEN, row, line, i, i
            if c != 10:
                t0 = i
                i, st, _, x = _parse_number(buf, i, end)
                c = _at(buf, i, end)
                if st == ST_INVALID or not _DELIM[c]:
                    return E_WEIGHT, row, line, t0, i
                if st == ST_NONFINITE:
                    return E_NONFINITE, row, line, t0, i
                i, c, ok = _skip_sep(buf, i, end, c)
                if not ok:
                    return E_TOKEN, row, line, i, i
                if c != 10:
                    return E_COLS, row, line, i, i
                tok = 3
        if tok != ncols:
            if ncols == 0:
                return OK, tok, line, start, start
            return E_NCOLS, row, line, start, i
        src[row] = u
        dst[row] = v
        if tok == 3:
            w[row] = x
        row += 1
        line += 1
        i += 1
    return OK, row, line, i, i


@njit(cache=True, nogil=True)
def scan_tokens(buf, pos, line, keep_blank, colon, count_only, ival, fval, stat, line_tok,
                line_no):
    """Tokenize numeric lines of ``buf[pos:]`` (comments ``#``/``%`` skipped).

    Every data line (and, with ``keep_blank``, every blank line) is an emitted line: its first
    token index goes to ``line_tok`` and its file line to ``line_no``. With ``colon``, every
    emitted line after the first must have a ``:`` right after its first token (CNP). With
    ``count_only`` nothing is written: the call sizes the output arrays.

    Returns ``(err, ntokens, nlines, err_line, err_pos)``.
    """
    i = pos
    end = buf.shape[0]
    t = 0
    nl = 0
    while i < end:
        begin = i
        while i < end and _is_blank(buf[i]):
            i += 1
        if i == end or buf[i] == 10:
            if keep_blank and (i < end or i > begin):
                if not count_only:
                    line_tok[nl] = t
                    line_no[nl] = line
                nl += 1
            line += 1
            i += 1
            continue
        if buf[i] == 35 or buf[i] == 37:
            while i < end and buf[i] != 10:
                i += 1
            line += 1
            i += 1
            continue
        if not count_only:
            line_tok[nl] = t
            line_no[nl] = line
        nl += 1
        first = t
        start = i
        colon_seen = False
        while True:
            t0 = i
            iv = 0  # fast path: a short plain integer, the usual token in these formats
            while i < end and 48 <= buf[i] <= 57 and i - t0 < 18:
                iv = iv * 10 + (np.int64(buf[i]) - 48)
                i += 1
            c = _at(buf, i, end)
            if i > t0 and (_is_blank(c) or c == 10 or (colon and c == 58)):
                st, fv = ST_INT, float(iv)
            else:
                i, st, iv, fv = _parse_number(buf, t0, end)
            if st == ST_INVALID or (i < end and not (_is_blank(buf[i]) or buf[i] == 10
                                                     or (colon and buf[i] == 58))):
                return E_TOKEN, t, nl, line, t0
            if not count_only:
                ival[t] = iv
                stat[t] = st
                if fval.shape[0]:
                    fval[t] = fv
            t += 1
            while i < end and _is_blank(buf[i]):
                i += 1
            if colon and i < end and buf[i] == 58:
                if t - first != 1 or colon_seen or nl == 1:
                    return E_COLON, t, nl, line, i
                colon_seen = True
                i += 1
                while i < end and _is_blank(buf[i]):
                    i += 1
            if i == end or buf[i] == 10:
                break
        if colon and nl > 1 and not colon_seen:
            return E_COLON, t, nl, line, start
        line += 1
        i += 1
    return OK, t, nl, line, i


@njit(cache=True, nogil=True)
def count_newlines(buf, lo, hi):
    """Number of ``\n`` bytes in ``buf[lo:hi]``, without NumPy's temporary boolean array."""
    view = buf[lo:hi]  # a 0-based loop over a view is what LLVM vectorises (~4 GB/s)
    n = 0
    for i in range(view.size):
        n += np.int64(view[i] == 10)
    return n


# --- Python side: error-path helpers and the tokenizer front end ------------------------------

_TOKEN_RE = re.compile(rb"[^\s,:]*")
_FIELD_SEP_RE = re.compile(rb"[\s,:]+")
_EMPTY_I = np.empty(0, np.int64)
_EMPTY_F = np.empty(0, np.float64)
_EMPTY_U8 = np.empty(0, np.uint8)


def as_array(text: bytes | bytearray) -> np.ndarray:
    """Read-only ``uint8`` view of the text (one Numba signature for bytes and bytearray)."""
    arr = np.frombuffer(text, np.uint8)
    arr.flags.writeable = False
    return arr


def token_at(text: bytes, pos: int) -> str:
    """The token starting at byte ``pos``, for an error message (empty: an empty field)."""
    tok = _TOKEN_RE.match(bytes(text[pos:pos + 64])).group(0)
    return tok[:40].decode("utf-8", "replace") + ("..." if len(tok) > 40 else "")


def line_fields(text: bytes, start: int) -> list[bytes]:
    """The fields of the line that starts at byte ``start``."""
    end = bytes(text[start:start + 4096]).split(b"\n", 1)[0]
    return [f for f in _FIELD_SEP_RE.split(end.strip()) if f]


@dataclass
class Tokens:
    """Output of :func:`tokenize`: every numeric token, and the lines they came from."""

    text: bytes
    ival: np.ndarray  # int64 value (valid where stat == ST_INT)
    fval: np.ndarray  # float64 value (empty unless asked for)
    stat: np.ndarray  # ST_* per token
    line_tok: np.ndarray  # first token of each emitted line
    line_no: np.ndarray  # file line of each emitted line
    ntok: np.ndarray  # tokens on each emitted line

    def fail(self, k: int, msg: str, code: str, field: str = "edges") -> InvalidInput:
        """An error at token ``k``; ``{tok}`` in ``msg`` becomes the token's text."""
        # side="right": a blank line shares its token index with the next data line.
        li = max(int(np.searchsorted(self.line_tok, k, side="right")) - 1, 0)
        line, j = int(self.line_no[li]), k - int(self.line_tok[li])
        arr = as_array(self.text)  # error path only: one pass to find the line
        start = 0 if line <= 1 else int(np.flatnonzero(arr == 10)[line - 2]) + 1
        fields = line_fields(self.text, start)
        tok = fields[j].decode("utf-8", "replace")[:40] if j < len(fields) else ""
        return InvalidInput(f"line {line}: {msg.format(tok=tok)}", line=line, field=field,
                            code=code)

    def check_ids(self, idx: np.ndarray, lo: int, hi: int, what: str) -> np.ndarray:
        """Integer values of tokens ``idx``, which must lie in ``lo..hi``."""
        vals = self.ival[idx]
        bad = (self.stat[idx] != ST_INT) | (vals < lo) | (vals > hi)
        if bad.any():
            raise self.fail(int(idx[np.argmax(bad)]),
                            f"{what} '{{tok}}' is not an integer in {lo}..{hi}", "bad_node_id")
        return vals

    def check_weights(self, idx: np.ndarray) -> np.ndarray:
        """Float values of tokens ``idx``, which must be finite."""
        bad = self.stat[idx] == ST_NONFINITE
        if bad.any():
            raise self.fail(int(idx[np.argmax(bad)]), "weight '{tok}' is not a finite number",
                            "bad_weight", "weights")
        return self.fval[idx]

    def header_ints(self, li: int, what: str) -> list[int]:
        """The values of emitted line ``li``, which must all be non-negative integers."""
        idx = np.arange(self.line_tok[li], self.line_tok[li] + self.ntok[li])
        if (self.stat[idx] != ST_INT).any():
            line = int(self.line_no[li])
            raise InvalidInput(f"line {line}: the {what} must be non-negative integers",
                               line=line, code="bad_header")
        return [int(v) for v in self.ival[idx]]


def tokenize(text: bytes, pos: int, line: int, keep_blank: bool = False, colon: bool = False,
             want_float: bool = False) -> Tokens:
    """Run :func:`scan_tokens` twice (count, then fill exactly sized arrays) from byte ``pos``.

    Raises :class:`InvalidInput` for a non-numeric token or a misplaced CNP colon.
    """
    arr = as_array(text)
    out = [_EMPTY_I, _EMPTY_F, _EMPTY_U8, _EMPTY_I, _EMPTY_I]
    err, nt, nl, eline, epos = scan_tokens(arr, pos, line, keep_blank, colon, True, *out)
    if err == E_TOKEN:
        raise InvalidInput(f"line {eline}: '{token_at(text, epos)}' is not a number",
                           line=eline, code="bad_number")
    if err == E_COLON:
        raise InvalidInput(f"line {eline}: expected 'i: j k ...' with one colon after the "
                           "node id", line=eline, code="bad_columns")
    out = [np.empty(nt, np.int64), np.empty(nt if want_float else 0, np.float64),
           np.empty(nt, np.uint8), np.empty(nl, np.int64), np.empty(nl, np.int64)]
    scan_tokens(arr, pos, line, keep_blank, colon, False, *out)
    return Tokens(text, *out, np.diff(np.append(out[3], nt)))

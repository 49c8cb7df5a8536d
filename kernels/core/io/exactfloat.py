"""Correctly rounded decimal-to-double conversion for the Numba scanners' rare tokens.

:func:`graphgpu.kernels.core.io.textscan.parse_number` computes ``mant * 10**k`` in floating
point only where that is exact (Clinger's fast path: ``mant < 2**53``, ``|k| <= 22``), which is
every integer and every short decimal. Any other token (16+ significant digits, as in Python's
``repr`` of a random float, or a large exponent) comes here and is converted by the C library's
``strtod``, which glibc, musl and macOS round correctly, so the value is bit for bit what
Python's ``float(token)`` gives, and a weight sent as text equals the same weight sent as npz.

The token is rewritten as ``<digits>e<exponent>`` (no decimal point: ``strtod`` reads the point
from ``LC_NUMERIC``, which an embedding application may have changed) into a NUL-terminated copy,
since the upload buffer is neither terminated nor ours to write.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

# double strtod(const char *, char **): a symbol of the C library already in the process,
# resolved by name, so the functions calling it stay cacheable.
_strtod = types.ExternalFunction("strtod", types.float64(types.voidptr, types.voidptr))

# Exponent digits past this cap cannot matter (the value is 0 or inf) and int64 cannot
# overflow; unlike parse_number's smaller cap it stays exact beside a token's own length.
_EXP_CAP = 10**17


@njit(cache=True, nogil=True, inline="always")  # one caller: no own compile
def correctly_rounded(buf, lo, hi):
    """The magnitude of the number ``buf[lo:hi]``, correctly rounded (round half to even).

    Parameters
    ----------
    buf : numpy.ndarray
        ``uint8`` text.
    lo, hi : int
        A token that ``parse_number`` accepted: optional sign, digits with at most one ``.``,
        optional ``e``/``E`` exponent with optional sign. The sign of the mantissa is ignored.

    Returns
    -------
    float
        Non-negative; ``inf`` where the value overflows, ``0.0`` where it underflows.
    """
    tmp = np.empty(hi - lo + 32, np.uint8)
    n = 0
    shift = 0  # minus the number of digits after the point
    frac = False
    i = lo
    while i < hi and (buf[i] | 32) != 101:  # up to 'e'
        c = buf[i]
        if c == 46:
            frac = True
        elif 48 <= c <= 57:
            if n > 0 or c != 48:  # leading zeros dropped: they only lengthen the copy
                tmp[n] = c
                n += 1
            shift -= np.int64(frac)
        i += 1
    if n == 0:
        return 0.0
    e = 0
    if i < hi:  # the exponent
        eneg = buf[i + 1] == 45
        for k in range(i + 1, hi):
            if 48 <= buf[k] <= 57:
                e = min(e * 10 + (np.int64(buf[k]) - 48), _EXP_CAP)
        if eneg:
            e = -e
    e += shift
    tmp[n] = 101  # 'e'
    n += 1
    if e < 0:
        tmp[n] = 45
        n += 1
        e = -e
    d = 1
    while d * 10 <= e:
        d *= 10
    while d > 0:
        tmp[n] = 48 + (e // d) % 10
        n += 1
        d //= 10
    tmp[n] = 0
    return _strtod(tmp.ctypes.data, 0)

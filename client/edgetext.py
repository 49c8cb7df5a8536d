"""Edge arrays as text for upload: ``u v [w]`` lines built with NumPy, no Python loop over rows.

Used by :meth:`graphgpu.client.sdk.Client.upload_edges`, which gzips the text as it goes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

#: Rows formatted per pass, bounding the scratch memory to a few tens of MB.
ROWS_PER_CHUNK = 1 << 20


def id_column(values: Any, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be a 1-D array of integer node ids, not "
                         f"{array.ndim}-D {array.dtype}")
    if array.size and array.min() < 0:
        raise ValueError(f"{name} holds negative node ids; ids must be non-negative")
    return array


def edge_text(columns: list[np.ndarray]) -> Iterator[bytes]:
    """``"u v [w]\\n"`` rows, a chunk at a time, with no Python loop over rows.

    Each chunk is laid out as a byte matrix, a row per edge and every value in a fixed-width
    slot, with a mask of the bytes in use; compressing the matrix by the mask gives the text.
    Integers (ids, and weights that are whole numbers) are turned into digits arithmetically;
    other weights need Python's ``repr`` (shortest round-trip text), the one slow path.
    """
    for start in range(0, columns[0].size, ROWS_PER_CHUNK):
        block = [c[start:start + ROWS_PER_CHUNK] for c in columns]
        block = [as_ints(c) for c in block]
        texts = [None if c.dtype.kind in "iu"
                 else np.array(list(map(repr, c.tolist())), dtype="S") for c in block]
        widths = [len(str(int(c.max()))) if t is None else t.itemsize
                  for c, t in zip(block, texts, strict=True)]
        n = block[0].size
        chars = np.empty((n, sum(widths) + len(block)), np.uint8)
        valid = np.ones(chars.shape, bool)
        off = 0
        for i, (col, text, width) in enumerate(zip(block, texts, widths, strict=True)):
            slot = slice(off, off + width)
            if text is None:
                put_digits(chars[:, slot], valid[:, slot], col)
            else:
                chars[:, slot] = text.view(np.uint8).reshape(n, width)
                np.not_equal(chars[:, slot], 0, out=valid[:, slot])  # NUL padding unused
            chars[:, off + width] = ord("\n") if i == len(block) - 1 else ord(" ")
            off += width + 1
        yield np.compress(valid.ravel(), chars.ravel()).tobytes()


def as_ints(column: np.ndarray) -> np.ndarray:
    """Whole non-negative float weights as int64, so they take the fast digit path."""
    if column.dtype.kind != "f" or not column.size:
        return column
    if column.min() >= 0 and column.max() < 2**53 and (column == np.floor(column)).all():
        return column.astype(np.int64)
    return column


_TENS = (np.arange(100) // 10 + 48).astype(np.uint8)
_ONES = (np.arange(100) % 10 + 48).astype(np.uint8)


def put_digits(chars: np.ndarray, valid: np.ndarray, values: np.ndarray) -> None:
    """Right-align the decimal digits of non-negative ``values`` in ``chars`` (n, width);
    mark the used bytes in ``valid``."""
    width = chars.shape[1]
    q = values.copy()
    for j in range(width, 0, -2):
        # Two digits per division (by a scalar, which NumPy turns into a multiply): integer
        # division is the slow step, and divmod does not get that fast path.
        high = q // 100
        pair = (q - high * 100).astype(np.intp)
        chars[:, j - 1] = np.take(_ONES, pair)
        if j >= 2:
            chars[:, j - 2] = np.take(_TENS, pair)
        q = high
    ndigits = np.ones(values.size, np.intp)
    for k in range(1, width):
        ndigits += values >= 10**k
    np.greater_equal(np.arange(width), width - ndigits[:, None], out=valid)

"""A corpus of malformed graph uploads, built in code (no data files).

Every case is something a client could send by mistake or on purpose: line-level faults in
each text format at several places of the file, wrong METIS/Matrix Market header counts, broken
gzip streams, binary junk, ids that are huge or negative, non-finite weights, and formats mixed
in one file. None of them is a graph the service should store.
"""

from __future__ import annotations

import gzip
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Malformed:
    """One bad upload.

    Attributes
    ----------
    name : str
        Test id.
    body : bytes
        The request body.
    format : str
        The ``format`` query parameter.
    line : int or None
        The 1-based line the error must name (for line-level faults), else None.
    """

    name: str
    body: bytes
    format: str = "auto"
    line: int | None = None


VALID = [b"0 1", b"1 2", b"2 0"]

# A bad edge-list line, and whether the parser must blame that line.
BAD_EDGE_LINES: dict[str, bytes] = {
    "letters": b"a b",
    "letter-dst": b"1 x",
    "negative-src": b"-1 2",
    "negative-dst": b"1 -2",
    "float-id": b"1.5 2",
    "exponent-id": b"1e3 2",
    "hex-id": b"0x10 2",
    "four-columns": b"1 2 3 4",
    "one-column": b"7",
    "trailing-comma": b"1,",
    "leading-comma": b",1 2",
    "double-comma": b"1,,2",
    "nan-weight": b"1 2 nan",
    "NaN-weight": b"1 2 NaN",
    "inf-weight": b"1 2 inf",
    "minus-inf-weight": b"1 2 -inf",
    "infinity-weight": b"1 2 Infinity",
    "overflow-weight": b"1 2 1e999",
    "word-weight": b"1 2 heavy",
    "huge-id": b"99999999999999999999999 1",
    "int64-overflow-id": b"9223372036854775808 1",
    "over-max-node-id": b"9007199254740992 1",
    "fullwidth-digits": "\uff11 2".encode(),
    "nul-byte": b"1 2\x00",
    "control-byte": b"1\x01 2",
    "latin1-junk": b"1 2 \xe9",
    "semicolon": b"1;2",
    "colon": b"1: 2",
}


# On the first data line these name nodes: the file is a labelled edge list (issue 27), valid.
LABELS_WHEN_FIRST = frozenset({"letters", "letter-dst", "negative-src", "negative-dst",
                               "float-id", "exponent-id", "hex-id", "fullwidth-digits", "colon"})


def _edge_cases() -> list[Malformed]:
    cases = []
    for tag, bad in BAD_EDGE_LINES.items():
        for where in ("first", "middle", "after-comments"):
            if where == "first" and tag in LABELS_WHEN_FIRST:
                continue
            if where == "first":
                lines = [bad, *VALID]
            elif where == "middle":
                lines = [*VALID[:2], bad, VALID[2]]
            else:
                lines = [b"# a SNAP header", b"% another comment", b"", VALID[0], bad]
            body = b"\n".join(lines) + b"\n"
            line = lines.index(bad) + 1
            for fmt in ("edgelist", "auto"):
                cases.append(Malformed(f"edgelist-{tag}-{where}-{fmt}", body, fmt, line))
    # a weighted first line fixes three columns; an unweighted one later breaks it (and back)
    cases.append(Malformed("edgelist-2-then-3-columns", b"0 1\n1 2\n2 3 1.5\n", "edgelist", 3))
    cases.append(Malformed("edgelist-3-then-2-columns", b"0 1 1.0\n1 2\n", "edgelist", 2))
    return cases


def _metis_cases() -> list[Malformed]:
    bad = {
        "more-vertices-than-lines": (b"4 3\n2 3\n1 3\n1 2\n", None),
        "fewer-vertices-than-lines": (b"2 1\n2\n1\n1\n", None),
        "edge-count-mismatch": (b"3 5\n2 3\n1 3\n1 2\n", None),
        "neighbour-zero": (b"3 3\n0 3\n1 3\n1 2\n", 2),
        "neighbour-past-n": (b"3 3\n2 4\n1 3\n1 2\n", 2),
        "negative-neighbour": (b"3 3\n2 -3\n1 3\n1 2\n", 2),
        "word-in-header": (b"three 3\n2 3\n1 3\n1 2\n", 1),
        "float-header": (b"3.5 3\n2 3\n1 3\n1 2\n", 1),
        "one-field-header": (b"3\n2 3\n1 3\n1 2\n", 1),
        "five-field-header": (b"3 3 0 1 9\n2 3\n1 3\n1 2\n", 1),
        "unknown-fmt": (b"3 3 2\n2 3\n1 3\n1 2\n", 1),
        "weights-missing": (b"3 3 1\n2 1 3\n1 1 3 1\n1 1 2 1\n", 2),
        "nan-edge-weight": (b"3 3 1\n2 nan 3 1\n1 1 3 1\n1 1 2 1\n", 2),
        "word-neighbour": (b"3 3\n2 x\n1 3\n1 2\n", 2),
        "huge-n": (b"999999999999 1\n2\n1\n", 1),
        "empty": (b"", None),
        "comments-only": (b"% nothing\n% here\n", None),
    }
    return [Malformed(f"metis-{tag}", body, "metis", line) for tag, (body, line) in bad.items()]


def _mtx_cases() -> list[Malformed]:
    banner = b"%%MatrixMarket matrix coordinate pattern symmetric\n"
    real = b"%%MatrixMarket matrix coordinate real general\n"
    bad = {
        "array-layout": (b"%%MatrixMarket matrix array real general\n3 3\n1\n2\n", 1),
        "complex-field": (b"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 0\n",
                          1),
        "hermitian": (b"%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n1 2 1\n", 1),
        "short-banner": (b"%%MatrixMarket matrix coordinate\n2 2 1\n1 2\n", 1),
        "not-square": (banner + b"3 4 1\n1 2\n", 2),
        "nnz-too-small": (banner + b"3 3 1\n1 2\n2 3\n", 4),
        "nnz-too-large": (banner + b"3 3 5\n1 2\n2 3\n", 2),
        "index-zero": (banner + b"3 3 1\n0 2\n", 3),
        "index-past-n": (banner + b"3 3 1\n1 4\n", 3),
        "negative-index": (banner + b"3 3 1\n-1 2\n", 3),
        "pattern-with-values": (banner + b"3 3 1\n1 2 7\n", 3),
        "real-without-values": (real + b"3 3 1\n1 2\n", 3),
        "nan-value": (real + b"3 3 1\n1 2 nan\n", 3),
        "inf-value": (real + b"3 3 2\n1 2 1\n2 3 -inf\n", 4),
        "missing-size-line": (banner, None),
        "size-line-words": (banner + b"three 3 1\n1 2\n", 2),
        "huge-size": (banner + b"99999999999 99999999999 1\n1 2\n", 2),
    }
    return [Malformed(f"mtx-{tag}-{fmt}", body, fmt, line)
            for tag, (body, line) in bad.items() for fmt in ("mtx", "auto")]


def _cnp_cases() -> list[Malformed]:
    bad = {
        "id-past-n": (b"3\n0: 1 2\n1: 5\n", 3),
        "negative-id": (b"3\n0: 1 -2\n", 2),
        "missing-colon": (b"3\n0: 1\n1 2\n", 3),
        "two-colons": (b"3\n0: 1: 2\n", 2),
        "word": (b"3\n0: one\n", 2),
        "float-n": (b"2.5\n0: 1\n", 1),
        "n-with-colon": (b"3:\n0: 1\n", 1),
    }
    return [Malformed(f"cnp-{tag}", body, "cnp", line) for tag, (body, line) in bad.items()]


def _json_cases() -> list[Malformed]:
    # Strings, floats and negative numbers as node ids are labels (issue 27): valid.
    bad = {
        "truncated": (b'{"edges": [[0, 1], [1, 2]', 1),
        "trailing-comma": (b'{"edges": [[0, 1],]}', 1),
        "second-line-broken": (b'{"edges": [[0, 1],\n [1, }', 2),
        "edges-not-list": (b'{"edges": "0 1"}', None),
        "row-not-list": (b'{"edges": [[0, 1], 5]}', None),
        "mixed-widths": (b'{"edges": [[0, 1], [1, 2, 0.5]]}', None),
        "one-id-rows": (b'{"edges": [[0], [1]]}', None),
        "bool-ids": (b'{"edges": [[true, false]]}', None),
        "null-ids": (b'{"edges": [[null, 1]]}', None),
        "huge-ids": (b'{"edges": [[100000000000000000000000, 1]]}', None),
        "over-max-node-id": (b'{"edges": [[9007199254740992, 1]]}', None),
        "nan-weight": (b'{"edges": [[0, 1, NaN]]}', None),
        "infinity-weight": (b'{"edges": [[0, 1, Infinity]]}', None),
        "string-weight": (b'{"edges": [[0, 1, "2"]]}', None),
        "nodes-not-list": (b'{"edges": [[0, 1]], "nodes": 3}', None),
        "no-edges-no-nodes": (b'{"edges": [], "nodes": []}', None),
        "empty-object": (b"{}", None),
        "scalar": (b"[1, 2, 3]", None),
        "not-utf8": (b'{"edges": [[0, 1]], "name": "\xff"}', None),
    }
    return [Malformed(f"json-{tag}", body, "json", line) for tag, (body, line) in bad.items()]


def _gzip_cases() -> list[Malformed]:
    text = b"".join(b"%d %d\n" % (i, i + 1) for i in range(200))
    packed = gzip.compress(text, mtime=0)
    cases = [Malformed(f"gzip-truncated-at-{cut}", packed[:cut])
             for cut in (3, 10, 20, len(packed) // 2, len(packed) - 4, len(packed) - 1)]
    flipped = bytearray(packed)
    flipped[-6] ^= 0xFF  # the CRC-32
    cases.append(Malformed("gzip-bad-crc", bytes(flipped)))
    body = bytearray(packed)
    body[len(body) // 2] ^= 0xFF
    cases.append(Malformed("gzip-corrupt-deflate", bytes(body)))
    cases.append(Malformed("gzip-trailing-junk", packed + b"trailing junk"))
    cases.append(Malformed("gzip-of-bad-line", gzip.compress(b"0 1\n1 x\n", mtime=0),
                           "edgelist", 2))
    cases.append(Malformed("gzip-of-empty", gzip.compress(b"", mtime=0)))
    cases.append(Malformed("gzip-bomb", gzip.compress(b"0 1\n" * (2 << 20), mtime=0)))
    cases.append(Malformed("gzip-in-gzip-of-junk", gzip.compress(gzip.compress(b"\x00\xff" * 50))))
    cases.append(Malformed("gzip-magic-only", b"\x1f\x8b"))
    return cases


def _junk_cases() -> list[Malformed]:
    rng = random.Random(8)
    cases = [Malformed(f"random-bytes-{size}", rng.randbytes(size))
             for size in (1, 7, 64, 1000, 20000)]
    cases += [
        Malformed("nul-bytes", b"\x00" * 256),
        Malformed("ff-bytes", b"\xff" * 256),
        Malformed("utf16-edgelist", "0 1\n1 2\n".encode("utf-16")),
        Malformed("png-header", b"\x89PNG\r\n\x1a\n" + rng.randbytes(64)),
        Malformed("zip-header", b"PK\x03\x04" + rng.randbytes(64)),
        Malformed("empty", b""),
        Malformed("whitespace-only", b" \n\t\r\n  \n"),
        Malformed("comments-only", b"# nothing\n% here either\n"),
        Malformed("bom-only", b"\xef\xbb\xbf"),
    ]
    return cases


def _mixed_cases() -> list[Malformed]:
    return [
        Malformed("mtx-banner-then-edgelist", b"%%MatrixMarket matrix coordinate pattern general"
                  b"\n0 1\n1 2\n"),
        Malformed("edgelist-then-mtx-banner", b"0 1\n%%MatrixMarket matrix coordinate pattern "
                  b"general\n3 3 1\n1 2\n2 3 4\n", "edgelist", 3),  # '%' starts a comment
        Malformed("json-then-edgelist", b'{"edges": [[0, 1]]}\n1 2\n', "auto", 2),
        Malformed("edgelist-then-json", b'0 1\n{"edges": [[0, 1]]}\n', "auto", 2),
        Malformed("cnp-then-edgelist", b"3\n0: 1 2\n1 2\n", "auto", 3),
        Malformed("metis-as-mtx", b"3 3\n2 3\n1 3\n1 2\n", "mtx", 1),
        Malformed("mtx-as-cnp", b"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n",
                  "cnp"),
        Malformed("json-as-edgelist", b'{"edges": [[0, 1]]}', "edgelist", 1),
        Malformed("edgelist-as-json", b"0 1\n1 2\n", "json", 1),
        Malformed("cnp-as-metis", b"3\n0: 1 2\n1: 2\n", "metis", 2),
        Malformed("csv-header-row", b"source,target\n0,1\n1,2\n", "auto", 1),
        Malformed("html-error-page", b"<html><body>404 Not Found</body></html>\n", "auto", 1),
    ]


def malformed_uploads() -> list[Malformed]:
    """Every case of the corpus (more than 200)."""
    return [*_edge_cases(), *_metis_cases(), *_mtx_cases(), *_cnp_cases(), *_json_cases(),
            *_gzip_cases(), *_junk_cases(), *_mixed_cases()]

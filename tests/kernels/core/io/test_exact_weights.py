"""Decimal weights parse bit for bit as Python's ``float(token)``, in every text path.

Python and C ``strtod`` round decimal text correctly; before the fix the Numba parser rounded
twice outside Clinger's fast path (~11% of random floats' ``repr`` came out 1 ulp off), so the
same weights uploaded as text and as npz gave two graphs with different content ids.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from graphgpu.kernels.core.errors import InvalidInput
from graphgpu.kernels.core.io import formats, labelscan
from graphgpu.kernels.core.io.formats import parse_graph
from graphgpu.kernels.core.settings import Settings
from tests.conftest import Stack

HARD = [
    # halfway and near-halfway around 2**53 (ties to even), in fractional and exponent forms
    "9007199254740993", "9007199254740993.0", "9007199254740993.000000000000000000001",
    "9007199254740992.9999999999999999999", "900719925474099.3e1", "0.9007199254740993e16",
    "9007199254740995", "9007199254740994.5", "18014398509481986", "18014398509481987",
    "1.00000000000000011102230246251565404236316680908203125",  # exactly 1 + 2**-53: to 1.0
    "1.00000000000000011102230246251565404236316680908203124",
    "1.00000000000000011102230246251565404236316680908203126",
    "1e23", "8.98846567431158e307", "7.2057594037927933e16", "5e-324", "4.9e-324",
    "2.4703282292062327e-324", "2.4703282292062328e-324", "2.2250738585072011e-308",
    "2.2250738585072012e-308", "2.2250738585072014e-308", "1.7976931348623157e308",
    "1.7976931348623158e308", "1e308", "1e-400", "-1e-400", "0e999", "-0", "-0.0", "-0e-5",
    "0.000000000000000000000000000000000000000001", "000123.456000", "1E+22", "1e22", "1e-22",
    "123456789012345678901234567890", "0.1", "0.2", "0.3", "2.675", "1." + "0" * 400 + "1",
    "3." + "14159265358979323846" * 20, "1" * 310 + "e-2", "0." + "0" * 330 + "24703282292062328",
]


def random_tokens(n: int, seed: int = 7) -> list[str]:
    """Tokens of ``n`` random doubles of every magnitude (random bit patterns: subnormals too)
    as ``repr``, ``%.17g``, ``%.19g``, ``%.25e`` and 30-digit mantissas, each sign."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**63 - 1, n, dtype=np.int64, endpoint=True)
    xs = bits.view(np.float64)
    xs = xs[np.isfinite(xs)].tolist()
    unit = rng.random(n).tolist()  # the common case: a uniform [0, 1) weight
    digits = ["".join(map(str, rng.integers(0, 10, 30))) for _ in range(n // 4)]
    long = [f"{d[:k]}.{d[k:]}e{e}" for d, k, e in zip(digits, rng.integers(0, 30, n // 4).tolist(),
                                                       rng.integers(-330, 290, n // 4).tolist(),
                                                       strict=True)]
    return ([repr(x) for x in xs + unit] + [f"{x:.17g}" for x in xs] + [f"{x:.19g}" for x in unit]
            + [f"{x:.25e}" for x in xs[: n // 4]] + long)


def bits(values) -> np.ndarray:
    return np.asarray(values, np.float64).view(np.uint64)


def assert_same_bits(got: np.ndarray, tokens: list[str]) -> None:
    want = bits([float(t) for t in tokens])
    bad = np.flatnonzero(bits(got) != want)
    assert bad.size == 0, (f"{bad.size} of {len(tokens)} differ, e.g. "
                           f"{[(tokens[k], got[k], float(tokens[k])) for k in bad[:5]]}")


def parse(text: str):
    return parse_graph(text.encode(), "auto", settings=Settings())


TOKENS = HARD + random_tokens(20000)


@pytest.mark.parametrize("form", ["edgelist", "labelled", "mtx"])
def test_weights_are_python_floats_bit_for_bit(form, monkeypatch):
    """The integer edge list (scan_edges), the labelled one (labelscan) and the tokenizer
    (scan_tokens, here Matrix Market) all give ``float(token)`` exactly; the edge lists in
    concurrent chunks (the slow path runs in several threads without the GIL)."""
    monkeypatch.setattr(formats.os, "sched_getaffinity", lambda pid: range(4))
    for module in (formats, labelscan):  # 4 chunks of the ~3 MB text, not 1
        monkeypatch.setattr(module, "_MIN_CHUNK", 1 << 18)
    tokens = [t for t in TOKENS if np.isfinite(float(t))]
    tokens += ["-" + t for t in tokens[::3] if not t.startswith("-")]
    if form == "mtx":
        head = f"%%MatrixMarket matrix coordinate real general\n2 2 {len(tokens)}\n"
        text = head + "".join(f"1 2 {t}\n" for t in tokens)
    else:
        ends = ("a{} b{}" if form == "labelled" else "{} {}").format
        text = "".join(f"{ends(k, k + 1)} {t}\n" for k, t in enumerate(tokens))
    got = parse(text)
    assert (got.labels is not None) == (form == "labelled")
    assert_same_bits(got.weights, tokens)


@pytest.mark.parametrize("token", ["1e309", "1.8e308", "1" * 400,
                                   "-1797693134862315807937289714053034150799e270"])
@pytest.mark.parametrize("ends", ["0 1", "a b"])
def test_overflow_is_refused_as_non_finite(token, ends):
    with pytest.raises(InvalidInput, match="finite"):
        parse(f"{ends} {token}\n")


def test_text_and_npz_uploads_of_the_same_weights_share_the_content_id(stack: Stack):
    rng = np.random.default_rng(11)
    m = 2000
    src = rng.integers(0, 300, m)
    dst = rng.integers(0, 300, m)
    weight = np.concatenate([rng.random(m - len(HARD)),
                             [abs(float(t)) or 0.5 for t in HARD]])  # positive, nonzero weights
    weight[~np.isfinite(weight) | (weight == 0)] = 0.5
    text = "".join(f"{u} {v} {w!r}\n" for u, v, w in zip(src.tolist(), dst.tolist(),
                                                          weight.tolist(), strict=True))
    buffer = io.BytesIO()
    np.savez(buffer, src=src, dst=dst, weight=weight)
    by_text = stack.http.post("/v1/graphs", content=text.encode(), params={"format": "edgelist"})
    by_npz = stack.http.post("/v1/graphs", content=buffer.getvalue(), params={"format": "npz"})
    assert by_text.status_code in (200, 201), by_text.text
    assert by_npz.status_code == 200, by_npz.text  # 200, not 201: that content is stored already
    assert by_npz.json()["id"] == by_text.json()["id"]

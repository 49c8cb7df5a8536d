"""Node labels: the labelled edge-list scanner, the JSON-text table (decode, find, stream) and
labels in the content address and the store, against Python dict oracles."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from graphgpu.kernels.core import labels as node_labels
from graphgpu.kernels.core.errors import InvalidInput, LimitExceeded
from graphgpu.kernels.core.graph import build_graph, content_id
from graphgpu.kernels.core.io import labelscan
from graphgpu.kernels.core.io.formats import parse_graph
from graphgpu.kernels.core.settings import Settings
from graphgpu.kernels.core.store import GraphStore


def oracle(lines: list[tuple[str, str]]) -> tuple[list[int], list[int], list[str]]:
    """Ids in order of first appearance, by a dict."""
    index: dict[str, int] = {}
    src = [index.setdefault(u, len(index)) for u, v in lines for u in (u, v)][0::2]
    dst = [index[v] for _, v in lines]
    return src, dst, list(index)


def test_labelled_edge_list_matches_a_dict():
    rng = random.Random(7)
    # (control bytes are refused in a text upload: test_labelled_edge_list_refuses_binary)
    names = [f"n{rng.randrange(10**6)}" for _ in range(3000)] + ["12", "é", 'q"\\x']
    lines = [(rng.choice(names), rng.choice(names)) for _ in range(20000)]
    lines[0] = ("alice", "12")  # a label first: the file is read as labels, "12" a string
    text = "".join(f"{u} {v}\n" for u, v in lines).encode()
    parsed = parse_graph(text)
    src, dst, labels = oracle(lines)
    assert parsed.src.tolist() == src and parsed.dst.tolist() == dst
    assert parsed.weights is None and parsed.labels is not None
    assert parsed.labels.decode(np.arange(len(labels))) == labels
    assert json.loads(b"".join(parsed.labels.json_chunks(size=7))) == labels
    found = parsed.labels.find(["12", 12, "é", 'q"\\x', "nobody", None, [1]])
    assert found.tolist() == [labels.index("12"), -1, labels.index("é"), labels.index('q"\\x'),
                              -1, -1, -1]
    ids = np.array([5, -1, 2, 2, 0])
    assert parsed.labels.decode(ids) == [labels[5], None, labels[2], labels[2], labels[0]]


def test_labelled_edge_list_refuses_binary_and_header_rows():
    with pytest.raises(InvalidInput) as caught:
        parse_graph(b"alice bob\nbob carol\x08\n")
    assert caught.value.line == 2 and caught.value.code == "bad_token"
    with pytest.raises(InvalidInput) as caught:
        parse_graph(b"# people\nsource,target,weight\nalice,bob,1\n")
    assert caught.value.line == 2 and caught.value.code == "header_row"


@pytest.mark.parametrize(("text", "line"), [
    (b"alice bob\n# a note \x01\nbob carol\n", 2),  # in a comment
    (b"alice bob 1\nbob carol 2\x00\n", 2),  # in a weight
    (b"alice bob\nbob carol \x7f\x02\n", 2),  # a third column where two are
    (b"alice b\x1bob\nsource target\n", 1),  # before a column error on another line
    (b"source target\nal\x01ice bob\n", 2),  # a header row too: the control byte first
    (b"alice bob\n" * 900_000 + b"carol \x03dave\n", 900_001),  # in a later thread's chunk
])
def test_labelled_edge_list_names_the_control_byte(text, line):
    """The scan stops at a control byte wherever it is (label, comment, weight, extra
    column) and the error names its line, before any other error of the file."""
    with pytest.raises(InvalidInput) as caught:
        parse_graph(text)
    assert (caught.value.line, caught.value.code) == (line, "bad_token")


def test_labelled_edge_list_syntax():
    text = b"# comment\n% other\n\n alice,bob  2.5\r\nbob\tcarol 1e3 \nalice carol ,3\n"
    parsed = parse_graph(text)
    assert parsed.format == "edgelist"
    assert parsed.labels.decode([0, 1, 2]) == ["alice", "bob", "carol"]
    assert parsed.src.tolist() == [0, 1, 0] and parsed.dst.tolist() == [1, 2, 2]
    assert parsed.weights.tolist() == [2.5, 1000.0, 3.0]
    assert parse_graph(b"x y").labels.decode([0, 1]) == ["x", "y"]  # no final newline


@pytest.mark.parametrize(("text", "line", "code"), [
    (b"a b\nc d e\n", 2, "bad_weight"),
    (b"a b 1\nc d\n", 2, "bad_columns"),
    (b"a b\nc\n", 2, "bad_columns"),
    (b"a b 1 2\n", 1, "bad_columns"),
    (b"a b\nc,,d\n", 2, "bad_node_id"),
    (b"a b nan\n", 1, "bad_weight"),
])
def test_labelled_edge_list_errors_name_the_line(text, line, code):
    with pytest.raises(InvalidInput) as info:
        parse_graph(text)
    assert (info.value.line, info.value.code) == (line, code)


def test_labels_must_be_utf8_and_within_limits():
    with pytest.raises(InvalidInput, match="UTF-8"):
        parse_graph(b"\xff\xfe b\n")
    with pytest.raises(LimitExceeded):
        parse_graph(b"a b\nc d\n", settings=Settings(max_nodes=3))


def test_integer_files_stay_integer():
    parsed = parse_graph(b"0 1\n1 2\n")
    assert parsed.labels is None and parsed.src.tolist() == [0, 1]
    with pytest.raises(InvalidInput) as info:  # a label after integer lines: a typo, not labels
        parse_graph(b"0 1\nx 2\n")
    assert (info.value.line, info.value.code) == (2, "bad_node_id")
    assert parse_graph(b'{"edges": [[0, 1]], "nodes": [5]}').labels is None


def test_json_labels_keep_their_types():
    parsed = parse_graph(b'{"edges": [["a", 1], [1, 2.5, ], ["a", -3]], "nodes": ["z", 1]}'
                         .replace(b", ]", b"]"))
    assert parsed.labels.decode(np.arange(5)) == ["a", 1, 2.5, -3, "z"]
    assert parsed.src.tolist() == [0, 1, 0] and parsed.dst.tolist() == [1, 2, 3]
    assert parsed.extra_nodes.tolist() == [4, 1]
    assert parsed.labels.find([1, "1", 2.5, "z"]).tolist() == [1, -1, 2, 4]
    for bad in (b'[["a", true]]', b'[["a", null]]', b'[["a", [1]]]', b'[["a", {"b": 1}]]'):
        with pytest.raises(InvalidInput) as info:
            parse_graph(bad)
        assert info.value.code == "bad_node_id", bad


def test_labels_are_part_of_the_content_address(tmp_path):
    store = GraphStore(tmp_path / "graphs", tmp_path / "tmp")
    ids = {}
    for text in (b"a b\n", b"c d\n", b"0 1\n"):
        parsed = parse_graph(text)
        graph, report = build_graph(parsed.src, parsed.dst)
        tables = parsed.labels.identity() if parsed.labels is not None else None
        meta, created = store.put(graph, name=None, source={}, report=report,
                                  labels=parsed.labels)
        assert created and meta["id"] == content_id(graph, tables)
        assert meta["labelled"] == (parsed.labels is not None)
        ids[text] = meta["id"]
    assert len(set(ids.values())) == 3  # the same edge, three graphs
    assert store.labels(ids[b"c d\n"]).decode([0, 1]) == ["c", "d"]
    assert store.labels(ids[b"0 1\n"]) is None


def test_labels_of_one_hash_are_told_apart_by_their_bytes():
    """Every token given the same hash (as a made file could): one sort run, and the labels
    in it are still told apart by their bytes, numbered in order of first appearance."""
    lines = [("a", "b"), ("c", "a"), ("b", "dd"), ("dd", "a"), ("d", "c")]
    text = "".join(f"{u} {v}\n" for u, v in lines).encode()
    starts = np.cumsum([0] + [len(u) + len(v) + 2 for u, v in lines])[:-1].tolist()
    bits = labelscan._LEN_BITS
    src = np.array([lo << bits | len(u)
                    for lo, (u, _) in zip(starts, lines, strict=True)], np.int64)
    dst = np.array([(lo + len(u) + 1) << bits | len(v)
                    for lo, (u, v) in zip(starts, lines, strict=True)], np.int64)
    hashes = np.full(2 * len(lines), 12345, np.uint64)
    reps = labelscan._intern(np.frombuffer(text, np.uint8), src, dst, hashes, len(lines))
    want_src, want_dst, labels = oracle(lines)
    assert src.tolist() == want_src and dst.tolist() == want_dst
    assert [text[r >> labelscan._LEN_BITS:(r >> labelscan._LEN_BITS)
                 + (r & labelscan.MAX_LABEL_BYTES)].decode() for r in reps] == labels


def test_many_labels_under_one_hash_prefix_fall_back_to_exact_interning(monkeypatch):
    lines = [("a", "b"), ("c", "a"), ("b", "dd"), ("dd", "a")]
    text = "".join(f"{u} {v}\n" for u, v in lines).encode()
    monkeypatch.setattr(labelscan, "_MAX_RUN_LABELS", 0)  # as if a file crowded one prefix
    assert labelscan._intern(np.frombuffer(text, np.uint8), np.zeros(4, np.int64),
                             np.zeros(4, np.int64), np.arange(8, dtype=np.uint64), 4) is None
    parsed = parse_graph(text)
    src, dst, labels = oracle(lines)
    assert parsed.src.tolist() == src and parsed.dst.tolist() == dst
    assert parsed.labels.decode(np.arange(len(labels))) == labels


def test_find_many_labels_through_the_index():
    values = [f"node-{i}" for i in range(5000)] + list(range(300)) + [0.5, "é"]
    ids, labels = node_labels.encode(values, "nodes")
    assert ids.tolist() == list(range(len(values)))
    order = random.Random(3).sample(range(len(values)), 400)
    assert labels.find([values[i] for i in order]).tolist() == order
    assert labels.find(["node-5000", 300, "0.5", True]).tolist() == [-1, -1, -1, -1]


def test_large_files_are_scanned_in_chunks_as_one():
    rng = random.Random(11)
    names = [f"person-{rng.randrange(10**7)}" for _ in range(50000)]
    lines = [(rng.choice(names), rng.choice(names)) for _ in range(600000)]
    body = "".join(f"{u} {v}\n" if i % 1000 else f"# c {i}\n\n{u} {v}\n"
                   for i, (u, v) in enumerate(lines))
    assert len(body) > 8 << 20  # two threads (4 MiB each at least), comments in both
    parsed = parse_graph(body.encode())
    src, dst, labels = oracle(lines)
    assert parsed.src.tolist() == src and parsed.dst.tolist() == dst
    assert parsed.labels.decode(np.arange(len(labels))) == labels
    tail = body.encode() + b"x y 2.5\n"  # three columns past the first chunk
    with pytest.raises(InvalidInput) as info:
        parse_graph(tail)
    assert (info.value.code, info.value.line) == ("bad_columns", tail.count(b"\n"))


@pytest.mark.parametrize("size", [1, 1000, 300_000])
def test_radix_sort_sorts_by_the_run_bits(size):
    """The interning's sort: stable by the top 33 bits (NumPy's stable argsort as the
    oracle), top bits spread, all alike and few."""
    rng = np.random.default_rng(size)
    for keys in (rng.integers(0, 2**64 - 1, size, dtype=np.uint64),
                 rng.integers(0, 2**31, size).astype(np.uint64),
                 rng.integers(0, 4, size).astype(np.uint64) << np.uint64(62)
                 | rng.integers(0, 2**40, size).astype(np.uint64)):
        expected = keys[np.argsort(keys >> np.uint64(labelscan._RUN_SHIFT), kind="stable")]
        out = labelscan._sort(keys.copy(), np.empty(size, np.uint64))
        assert (out == expected).all()

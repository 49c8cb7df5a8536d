"""The host-memory budget of parsing an upload: estimates, and the check that refuses (413).

An upload is refused before the memory is taken: a raw one from its size and line count, a
gzip'd one while it inflates (a bomb is stopped after at most a budget's worth of text), a
METIS, MTX or CNP file from the sizes its header declares. The estimate goes back in the error.
"""

from __future__ import annotations

import numpy as np

from graphgpu.kernels.core.errors import LimitExceeded
from graphgpu.kernels.core.settings import Settings

#: Host bytes that parsing and building take per edge row (int64 src/dst of the parse, then the
#: symmetrised, sorted and merged copies of build_graph) and per node (ids, CSR offsets,
#: degrees): what the parse budget (``parse_memory_bytes``) is checked against.
BYTES_PER_EDGE_ROW = 128
BYTES_PER_NODE = 48
#: Host bytes per byte of JSON text: Python lists and ints before the arrays exist.
BYTES_PER_JSON_BYTE = 40
#: Deepest JSON accepted: a graph needs 3 levels ({"edges": [[u, v]]}); a document nested
#: thousands deep would exhaust the parser's stack.
MAX_JSON_DEPTH = 32


class MemoryBudgetExceeded(LimitExceeded):
    """The upload would need more host memory to parse than ``parse_memory_bytes`` allows.

    Attributes
    ----------
    estimate : dict
        ``host_bytes`` (the estimate), ``budget_bytes`` and what the estimate was made from.
    """

    code = "insufficient_host_memory"

    def __init__(self, what: str, needed: int, budget: int, line: int | None = None,
                 **basis: int) -> None:
        super().__init__(f"{what} would need about {needed:,} bytes of host memory to parse, "
                         f"over the budget of {budget:,} (GRAPHGPU_PARSE_MEMORY_BYTES)",
                         line=line)
        self.estimate = {"host_bytes": int(needed), "budget_bytes": int(budget), **basis}


def parse_bytes_estimate(text_bytes: int, rows: int = 0, nodes: int = 0) -> int:
    """Host memory to parse ``text_bytes`` of text into ``rows`` edge rows over ``nodes`` nodes
    and build the graph (an upper bound of what :func:`parse_graph` and ``build_graph`` hold).
    """
    return int(text_bytes) + BYTES_PER_EDGE_ROW * int(rows) + BYTES_PER_NODE * int(nodes)


def check_budget(settings: Settings, what: str, text_bytes: int, rows: int = 0,
                 nodes: int = 0, line: int | None = None) -> None:
    """Raise :class:`MemoryBudgetExceeded` when the estimate passes ``parse_memory_bytes``
    (``line``: the header line that declared the size, if one did)."""
    needed = parse_bytes_estimate(text_bytes, rows, nodes)
    if needed > settings.parse_memory_bytes:
        raise MemoryBudgetExceeded(what, needed, settings.parse_memory_bytes, line=line,
                                   text_bytes=int(text_bytes), rows=int(rows), nodes=int(nodes))


#: Bytes on disk per node of any stored graph (int64 CSR offsets and original ids), the least a
#: declared node count costs.
STORED_BYTES_PER_NODE = 16


def check_stored_bytes(settings: Settings, what: str, stored_bytes: int, upload_bytes: int,
                       line: int | None = None) -> None:
    """Refuse (413 ``graph_too_sparse``) a graph that would take more bytes on disk than
    ``stored_bytes_per_upload_byte`` times its upload plus ``stored_bytes_allowance``: a few
    bytes declaring a huge node count with few edges must not store gigabytes."""
    ratio = settings.stored_bytes_per_upload_byte
    allowed = int(ratio * upload_bytes) + settings.stored_bytes_allowance
    if ratio and stored_bytes > allowed:
        raise LimitExceeded(
            f"{what} would take {stored_bytes:,} bytes on disk, over the {allowed:,} allowed "
            f"for an upload of {upload_bytes:,} bytes (GRAPHGPU_STORED_BYTES_PER_UPLOAD_BYTE="
            f"{ratio:g} per byte plus GRAPHGPU_STORED_BYTES_ALLOWANCE); isolated nodes need "
            "no declaring", line=line, code="graph_too_sparse")


def json_depth(text: bytes, chunk: int = 1 << 22) -> int:
    """Deepest nesting of ``[`` and ``{`` in ``text`` (brackets inside strings counted too:
    a graph's JSON has no strings but its keys), in chunks so that memory stays small."""
    arr = np.frombuffer(text, np.uint8)
    depth = deepest = 0
    for lo in range(0, arr.size, chunk):
        part = arr[lo:lo + chunk]
        step = ((part == ord("[")) | (part == ord("{"))).astype(np.int8) - (
            (part == ord("]")) | (part == ord("}"))).astype(np.int8)
        if not step.any():
            continue
        running = np.cumsum(step, dtype=np.int32) + depth
        deepest, depth = max(deepest, int(running.max())), int(running[-1])
    return deepest

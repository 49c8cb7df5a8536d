"""Binary edge uploads: columns of numbers, no text to parse.

``npz``
    A NumPy ``.npz`` (``numpy.savez``; ``savez_compressed`` too) of 1-D arrays: ``src`` and
    ``dst`` (integer node ids, one entry per edge), optional ``weight`` (numbers, one per edge)
    and optional ``nodes`` (integer ids of nodes that exist without edges). The edges that
    ``GET /v1/graphs/{id}/edges`` serves are such a file: uploading it again gives the same
    graph. Stored (uncompressed) members are read in place from the upload, without a copy
    when they are aligned.
``parquet``
    An Apache Parquet table with integer columns ``src`` and ``dst`` and an optional numeric
    ``weight`` column (other columns are not read), no nulls. Needs pyarrow on the service
    (:class:`FormatUnavailable` without it).

Everything is checked before an array is built from the data: the members or columns and their
types, shapes and lengths against each other, then the rows against the parse budget
(``parse_memory_bytes``, from the sizes the headers declare), then the ids (non-negative, at
most ``max_node_id``) and the weights (finite). Errors are :class:`InvalidInput` with ``field``
naming the member or column (``src``, ``dst``, ``weight``, ``nodes``), codes ``bad_npz``,
``bad_parquet``, ``bad_columns``, ``bad_dtype``, ``bad_length``, ``bad_node_id``,
``bad_weight``; limits :class:`LimitExceeded`.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np

from graphgpu.kernels.core.errors import InvalidInput, KernelError, LimitExceeded
from graphgpu.kernels.core.io.budget import check_budget
from graphgpu.kernels.core.settings import Settings

#: Columns of a binary edge upload: required, then optional.
REQUIRED = ("src", "dst")
OPTIONAL = ("weight", "nodes")
ZIP_MAGIC = b"PK\x03\x04"
PARQUET_MAGIC = b"PAR1"
_BLOCK = 1 << 24  # bytes inflated per read of a compressed member

_Edges = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]


class FormatUnavailable(KernelError):
    """The format needs a library the service does not have (Parquet without pyarrow)."""

    code = "parquet_unavailable"


def is_npz(head: bytes) -> bool:
    """Whether an upload starts as a zip archive (an ``.npz``): no text does (a control byte)."""
    return head[:4] == ZIP_MAGIC


def is_parquet(data: bytes) -> bool:
    """Whether an upload is a Parquet file: ``PAR1`` at both ends."""
    return len(data) >= 8 and data[:4] == PARQUET_MAGIC and data[-4:] == PARQUET_MAGIC


class _View(io.RawIOBase):
    """A read-only seekable file over a buffer, so that ``zipfile`` reads the upload in place
    (``io.BytesIO`` would copy a ``bytearray`` body first)."""

    def __init__(self, data: bytes | bytearray) -> None:
        self.view = memoryview(data).cast("B")
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset + (0, self.pos, len(self.view))[whence]
        return self.pos

    def readinto(self, buffer: memoryview) -> int:
        chunk = self.view[self.pos:self.pos + len(buffer)]
        buffer[:len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


def _check_dtype(name: str, dtype: np.dtype, what: str) -> None:
    kinds = "iuf" if name == "weight" else "iu"
    if dtype.kind not in kinds:
        wanted = "numbers (integer or float)" if name == "weight" else "integer node ids"
        raise InvalidInput(f"{what} '{name}' holds {dtype}; expected {wanted}", field=name,
                           code="bad_dtype")


def _check_shapes(shapes: dict[str, tuple[int, ...]], what: str) -> int:
    """The edge count, once every column is 1-D and ``src``, ``dst`` and ``weight`` agree."""
    for name, shape in shapes.items():
        if len(shape) != 1:
            raise InvalidInput(f"{what} '{name}' has shape {shape}; expected a 1-D array",
                               field=name, code="bad_length")
    m = shapes["src"][0]
    for name in ("dst", "weight"):
        if name in shapes and shapes[name][0] != m:
            raise InvalidInput(f"{what} '{name}' has {shapes[name][0]:,} entries but 'src' has "
                               f"{m:,}; one per edge", field=name, code="bad_length")
    return m


def _columns(arrays: dict[str, np.ndarray], settings: Settings) -> _Edges:
    """The checked arrays as ``build_graph`` takes them (int64 ids, float64 weights)."""
    out: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        if name == "weight":
            weight = np.require(array, np.float64, ["A", "W"])
            if not np.isfinite(weight).all():
                raise InvalidInput("'weight' holds NaN or infinite values; weights must be "
                                   "finite numbers", field=name, code="bad_weight")
            out[name] = weight
            continue
        if array.size and array.dtype.kind == "i" and int(array.min()) < 0:
            raise InvalidInput(f"'{name}' holds negative node ids; ids must be non-negative",
                               field=name, code="bad_node_id")
        if array.size and int(array.max()) > settings.max_node_id:
            raise LimitExceeded(f"'{name}' holds node id {int(array.max())}, over the limit "
                                f"{settings.max_node_id}", field=name, code="node_id_too_large")
        # Writeable (a view of a bytes body is not): the compiled graph build takes the
        # writeable array types that the worker warm-up compiled, nothing new at run time.
        out[name] = np.require(array, np.int64, ["A", "W"])
    return out["src"], out["dst"], out.get("weight"), out.get("nodes")


# --- npz --------------------------------------------------------------------------------------

def _npy_header(member: io.BufferedIOBase, name: str) -> tuple[np.dtype, tuple[int, ...]]:
    try:
        version = np.lib.format.read_magic(member)
        read = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read is None:
            raise ValueError(f"format version {version} (1.0 and 2.0 are read)")
        shape, _, dtype = read(member)
    except (ValueError, OSError, SyntaxError, EOFError, zipfile.BadZipFile) as exc:
        raise InvalidInput(f"npz member '{name}' is not a .npy array: {exc}", field=name,
                           code="bad_npz") from None
    if dtype.hasobject:
        raise InvalidInput(f"npz member '{name}' holds Python objects; expected numbers",
                           field=name, code="bad_dtype")
    return dtype, shape


def parse_npz(data: bytes | bytearray, settings: Settings) -> _Edges:
    """The edges of an ``.npz`` upload (see the module docstring)."""
    try:
        archive = zipfile.ZipFile(_View(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise InvalidInput(f"not a readable .npz (zip) file: {exc}", code="bad_npz") from None
    with archive:
        members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
        unknown = sorted(set(members) - set(REQUIRED) - set(OPTIONAL))
        missing = [name for name in REQUIRED if name not in members]
        if unknown or missing:
            name = (missing or unknown)[0]
            raise InvalidInput(
                "the .npz must hold arrays src and dst (and optionally weight, nodes); "
                + (f"missing {', '.join(missing)}" if missing else
                   f"unexpected {', '.join(unknown)}"), field=name, code="bad_columns")
        headers = {}
        for name, info in members.items():
            if info.file_size > settings.max_decompressed_bytes:
                raise LimitExceeded(f"npz member '{name}' inflates to {info.file_size:,} bytes, "
                                    f"over the limit {settings.max_decompressed_bytes:,}",
                                    field=name, code="decompressed_too_large")
            with archive.open(info) as member:
                headers[name] = _npy_header(member, name)
        for name, (dtype, _) in headers.items():
            _check_dtype(name, dtype, "npz member")
        m = _check_shapes({name: shape for name, (_, shape) in headers.items()}, "npz member")
        nodes = headers["nodes"][1][0] if "nodes" in headers else 0
        check_budget(settings, f"the .npz upload ({m:,} edges)", len(data), rows=m, nodes=nodes)
        arrays = {name: _read_member(archive, members[name], data, *headers[name])
                  for name in headers}
    return _columns(arrays, settings)


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, data: bytes | bytearray,
                 dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A member's array: a view of the upload for a stored member whose data is aligned, else
    read (inflated) into a new array of the declared size, a block at a time (never more)."""
    count, name = int(np.prod(shape)), info.filename.removesuffix(".npy")
    short = InvalidInput(f"npz member '{name}' is shorter than its shape {shape} declares",
                         field=name, code="bad_length")
    with archive.open(info) as member:
        _npy_header(member, name)
        start, nbytes = member.tell(), count * dtype.itemsize
        if start + nbytes > info.file_size:
            raise short
        if info.compress_type == zipfile.ZIP_STORED:
            # Data of a stored member sits in the upload after its local header.
            local = bytes(memoryview(data)[info.header_offset + 26:info.header_offset + 30])
            offset = (info.header_offset + 30 + int.from_bytes(local[:2], "little")
                      + int.from_bytes(local[2:], "little") + start)
            if len(local) < 4 or offset + nbytes > len(data):
                raise short
            array = np.frombuffer(data, dtype, count, offset)
            return array if array.flags.aligned else array.copy()
        array = np.empty(count, dtype)
        raw, got = array.view(np.uint8), 0
        try:
            while got < nbytes:
                step = member.readinto(raw[got:got + _BLOCK])
                if not step:
                    raise short
                got += step
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise InvalidInput(f"npz member '{name}' is corrupt: {exc}", field=name,
                               code="bad_npz") from None
        return array


# --- Parquet ----------------------------------------------------------------------------------

def parse_parquet(data: bytes | bytearray, settings: Settings) -> _Edges:
    """The edges of a Parquet upload (see the module docstring)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise FormatUnavailable("Parquet uploads need pyarrow on the service (pip install "
                                "graphgpu[dataframes]); send an .npz (format=npz) instead",
                                field="format") from None
    try:
        file = pq.ParquetFile(pa.py_buffer(data))
    except (pa.ArrowException, OSError) as exc:
        raise InvalidInput(f"not a readable Parquet file: {exc}", code="bad_parquet") from None
    schema = file.schema_arrow
    names = [name for name in (*REQUIRED, "weight") if name in schema.names]
    missing = [name for name in REQUIRED if name not in names]
    if missing:
        raise InvalidInput(f"the Parquet table must have columns src and dst (and optionally "
                           f"weight); missing {', '.join(missing)} (it has "
                           f"{', '.join(schema.names)})", field=missing[0], code="bad_columns")
    for name in names:
        kind = schema.field(name).type
        numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind)
        dtype = np.dtype(kind.to_pandas_dtype()) if numeric else np.dtype(object)
        _check_dtype(name, dtype, "column")
    m = file.metadata.num_rows
    check_budget(settings, f"the Parquet upload ({m:,} edges)", len(data), rows=m)
    try:
        table = file.read(columns=names, use_threads=True)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidInput(f"unreadable Parquet data: {exc}", code="bad_parquet") from None
    arrays: dict[str, np.ndarray] = {}
    for name in names:
        column = table.column(name)
        if column.null_count:
            raise InvalidInput(f"column '{name}' holds {column.null_count:,} nulls; every edge "
                               "needs its value", field=name,
                               code="bad_weight" if name == "weight" else "bad_node_id")
        arrays[name] = column.to_numpy()
    return _columns(arrays, settings)

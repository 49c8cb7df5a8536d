"""Checks at the HTTP boundary that the schemas alone do not make: strict params, names, node ids.

Strict: a job's or generator's ``params`` are validated as the JSON they came as, in pydantic's
strict mode, so ``"0"``, ``true`` or ``1e2`` are refused for an integer instead of being read as
0, 1 or 100 (a typo must not run a different job than the one asked for).
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, TypeVar

from pydantic import BaseModel

from graphgpu.kernels.core.settings import Settings
from graphgpu.service.errors import ApiError

ModelT = TypeVar("ModelT", bound=BaseModel)
#: Range of a node id (int64) that the stores and kernels can hold.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def strict_params(model: type[ModelT], params: dict[str, Any], settings: Settings) -> ModelT:
    """``params`` validated by ``model`` in strict JSON mode.

    Raises
    ------
    pydantic.ValidationError
        A missing, unknown or wrongly typed parameter (no coercion from strings, booleans or
        floats to integers).
    ApiError
        422 for NaN or Infinity; 413 ``params_too_large`` past ``max_params_bytes`` (the job
        record keeps them, in Redis, for ``result_ttl``).
    """
    try:
        text = json.dumps(params, allow_nan=False)
    except ValueError:
        raise ApiError(422, "invalid_params", "params: NaN and Infinity are not JSON numbers",
                       field="params") from None
    if len(text) > settings.max_params_bytes:
        raise ApiError(413, "params_too_large", f"params take {len(text):,} bytes as JSON; the "
                       f"limit is {settings.max_params_bytes:,} (GRAPHGPU_MAX_PARAMS_BYTES)",
                       field="params")
    return model.model_validate_json(text, strict=True)


def check_name(name: str | None, settings: Settings, field: str = "name") -> str | None:
    """A graph name as given, refused (422) past ``max_name_length`` or with control characters.

    Control characters (newlines, escapes) would be stored and printed raw by the CLI, where an
    escape sequence could rewrite the terminal.
    """
    if name is None:
        return None
    if len(name) > settings.max_name_length:
        raise ApiError(422, "invalid_name", f"{field} is {len(name):,} characters long; the limit "
                       f"is {settings.max_name_length} (GRAPHGPU_MAX_NAME_LENGTH)", field=field)
    bad = next((c for c in name if _control(c)), None)
    if bad is not None:
        raise ApiError(422, "invalid_name", f"{field} holds the control character {bad!r}",
                       field=field)
    return name


def file_name(filename: str | None, settings: Settings) -> str | None:
    """A graph name from an uploaded file's name: control characters dropped, cut to
    ``max_name_length`` (the client did not choose it as a name, so it is not refused)."""
    if not filename:
        return None
    kept = "".join(c for c in filename if not _control(c))
    return kept[:settings.max_name_length] or None


def _control(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")


def check_node_values(values: list[Any], field: str) -> None:
    """422 when a node id given by the client does not fit in int64 (it cannot be a node)."""
    for value in values:
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            raise ApiError(422, "unknown_node", f"{field}: node {value} is not in the graph "
                           "(node ids are 64-bit integers)", field=field)

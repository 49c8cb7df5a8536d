"""Parameter models of the generators, with each one's expected size (checked before a run)."""

from __future__ import annotations

import math
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator


def pairs(n: int) -> int:
    """Unordered pairs of ``n`` nodes."""
    return n * (n - 1) // 2


_MAX_N = 2**31 - 1  # internal ids are int32 (graphgpu.kernels.core.graph.INDEX_DTYPE)


class Size(NamedTuple):
    """Expected size of a generated graph, and the parameters to name when it is too large."""

    nodes: int
    edges: int
    nodes_field: str
    edges_field: str


class GeneratorParams(BaseModel):
    """Base of the parameter models: unknown fields are rejected, every generator takes a seed."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(0, ge=0, le=2**63 - 1, description="Random seed; same seed, same graph.")

    def expected_size(self) -> Size:
        raise NotImplementedError


def _at_most_n(value: int, info: ValidationInfo, strict: bool) -> int:
    n = info.data.get("n")  # absent when n failed its own validation
    if n is not None and (value >= n if strict else value > n):
        raise ValueError(f"{info.field_name} must be {'below' if strict else 'at most'} n ({n})")
    return value


class BarabasiAlbertParams(GeneratorParams):
    n: int = Field(..., ge=2, le=_MAX_N, description="Number of nodes.")
    m: int = Field(..., ge=1, le=_MAX_N, description="Edges from each new node (1 <= m < n).")

    _m_below_n = field_validator("m")(lambda m, info: _at_most_n(m, info, strict=True))

    def expected_size(self) -> Size:
        return Size(self.n, self.m * (self.n - self.m), "n", "m")


class WattsStrogatzParams(GeneratorParams):
    n: int = Field(..., ge=1, le=_MAX_N, description="Number of nodes.")
    k: int = Field(..., ge=0, le=_MAX_N, description="Ring neighbours per node (k // 2 a side).")
    p: float = Field(..., ge=0.0, le=1.0, description="Probability of rewiring each edge.")

    _k_at_most_n = field_validator("k")(lambda k, info: _at_most_n(k, info, strict=False))

    def expected_size(self) -> Size:
        edges = self.n * (self.n - 1) // 2 if self.k == self.n else self.n * (self.k // 2)
        return Size(self.n, edges, "n", "k")


class ErdosRenyiParams(GeneratorParams):
    n: int = Field(..., ge=1, le=_MAX_N, description="Number of nodes.")
    p: float | None = Field(None, ge=0.0, le=1.0, description="Edge probability: G(n, p).")
    m: int | None = Field(
        None, ge=0, validate_default=True, description="Exact edge count: G(n, m). Give p or m."
    )

    @field_validator("m")
    @classmethod
    def _exactly_one(cls, m: int | None, info: ValidationInfo) -> int | None:
        if "p" not in info.data:  # p failed its own validation, which is reported already
            return m
        if (info.data["p"] is None) == (m is None):
            raise ValueError("give exactly one of p (edge probability) or m (edge count)")
        n = info.data.get("n")
        if m is not None and n is not None and m > n * (n - 1) // 2:
            raise ValueError(f"m exceeds the {n * (n - 1) // 2} possible edges among {n} nodes")
        return m

    def expected_size(self) -> Size:
        if self.m is not None:
            return Size(self.n, self.m, "n", "m")
        return Size(self.n, math.ceil((self.p or 0.0) * pairs(self.n)), "n", "p")


class RmatParams(GeneratorParams):
    scale: int = Field(..., ge=1, le=31, description="log2 of the number of nodes.")
    edge_factor: int = Field(16, ge=1, le=1 << 16, description="Edges drawn per node (pre-dedup).")
    a: float = Field(0.57, ge=0.0, le=1.0, description="Probability of the top-left quadrant.")
    b: float = Field(0.19, ge=0.0, le=1.0, description="Probability of the top-right quadrant.")
    c: float = Field(
        0.19, ge=0.0, le=1.0, validate_default=True,
        description="Probability of the bottom-left quadrant; d = 1 - a - b - c.",
    )

    @field_validator("c")
    @classmethod
    def _d_not_negative(cls, c: float, info: ValidationInfo) -> float:
        a, b = info.data.get("a"), info.data.get("b")
        if a is not None and b is not None and a + b + c > 1.0 + 1e-9:
            raise ValueError(f"a + b + c = {a + b + c:g} exceeds 1 (d = 1 - a - b - c < 0)")
        return c

    def expected_size(self) -> Size:
        n = 1 << self.scale
        return Size(n, self.edge_factor * n, "scale", "edge_factor")


class GridParams(GeneratorParams):
    rows: int = Field(..., ge=1, le=_MAX_N, description="Number of rows.")
    cols: int = Field(..., ge=1, le=_MAX_N, description="Number of columns.")

    def expected_size(self) -> Size:
        r, c = self.rows, self.cols
        return Size(r * c, r * (c - 1) + c * (r - 1), "rows", "rows")

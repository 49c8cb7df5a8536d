"""Parameter and result models of the counting family (shared by its three algorithms, the
estimates and the warm-up)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: Largest k (the depth of the GPU kernels' per-thread stacks).
MAX_K = 64

class CountParams(BaseModel):
    """Parameters of ``count_connected_subgraphs`` and ``count_cliques``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"k": 4},
                                                                              {"k": 5,
                                                                               "k_max": True}]})

    k: int = Field(3, ge=1, le=MAX_K, description="Size of the vertex sets counted.")
    k_max: bool = Field(False, description="Also return the count of every size 1..k.")


class IndependentParams(CountParams):
    """Parameters of ``count_independent_sets``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"k": 4}, {"k": 6, "k_max": True, "method": "enumerate"}]})

    method: Literal["auto", "local", "enumerate"] = Field(
        "auto", description="local: closed forms over local counts (k <= 4, any graph); "
                            "enumerate: search the complement (any k, at most 1,024 nodes); "
                            "auto: local when k <= 4, else enumerate.")


class CountSummary(BaseModel):
    """Summary of a counting result (exact integers of any size)."""

    k: int = Field(description="Size counted.")
    count: int = Field(description="Number of vertex sets of size k with the property.")
    counts: list[int] | None = Field(
        None, description="With k_max: counts[i] is the number of sets of size i + 1.")
    method: str = Field(description="How it was counted: esu, kclist, local or enumerate.")
    roots: int = Field(description="Roots the search started from (or local-count passes).")

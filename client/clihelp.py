"""Help texts of the ``graphgpu`` command line generated from the algorithm registry.

The algorithms come from the service (``GET /v1/algorithms``: what it actually runs, plugins
included) or, when it cannot be reached, from the local registry of this installation.
"""

from __future__ import annotations

import json
from typing import Any

#: Parameter choices longer than this are cut in tables.
MAX_CHOICES = 6


def plain(doc: str) -> str:
    """A docstring as terminal text: reST literals (````x````) shown as ``x``."""
    return doc.replace("``", "")


def local_algorithms() -> list[dict[str, Any]]:
    """The local registry's algorithms in the shape of ``GET /v1/algorithms``."""
    from graphgpu.kernels.core.registry import BACKENDS, algorithms

    return [{"name": a.name, "summary": a.summary,
             "params_schema": a.params_model.model_json_schema(), "backends": list(BACKENDS)}
            for a in algorithms().values()]


def fetch_algorithms(url: str, api_key: str | None) -> list[dict[str, Any]]:
    """The service's algorithms, or the local registry's when the service does not answer."""
    from graphgpu.client.errors import GraphGPUError
    from graphgpu.client.sdk import Client

    try:
        with Client(url, api_key=api_key, timeout=3.0) as client:
            return client.algorithms()
    except (GraphGPUError, OSError):
        return local_algorithms()


def _choices(prop: dict[str, Any]) -> list[Any]:
    """The allowed values of a schema property (a Literal / enum, possibly nullable)."""
    if "enum" in prop:
        return list(prop["enum"])
    if "const" in prop:
        return [prop["const"]]
    return [c for option in prop.get("anyOf", []) for c in _choices(option)]


def param_text(name: str, prop: dict[str, Any], required: bool) -> str:
    """One parameter as in a usage line: ``name``, ``name=default``, ``name={a|b}=a``."""
    choices = _choices(prop)
    text = name
    if choices:
        shown = [json.dumps(c) if not isinstance(c, str) else c for c in choices]
        more = "|..." if len(shown) > MAX_CHOICES else ""
        text += "={" + "|".join(shown[:MAX_CHOICES]) + more + "}"
    if not required and "default" in prop:
        default = prop["default"]
        text += ("=" if not choices else ":") + (default if isinstance(default, str)
                                                   else json.dumps(default))
    elif not required:
        text += "?"
    return text


def params_text(schema: dict[str, Any]) -> str:
    """Every parameter of a params schema, required ones first (declaration order within)."""
    required = set(schema.get("required", []))
    props = schema.get("properties", {})
    ordered = [p for p in props if p in required] + [p for p in props if p not in required]
    return ", ".join(param_text(p, props[p], p in required) for p in ordered) or "-"


def algorithms_table(algorithms: list[dict[str, Any]]) -> Any:
    """A rich table of the algorithms, sorted by name: parameters with defaults and choices."""
    from rich.table import Table

    table = Table(title="algorithms", caption="name=default; {a|b}: choices; name?: optional, "
                  "no default")
    for column in ("name", "parameters", "backends", "summary"):
        table.add_column(column, no_wrap=column == "name")
    for a in sorted(algorithms, key=lambda a: a["name"]):
        table.add_row(a["name"], params_text(a.get("params_schema") or {}),
                      ", ".join(a.get("backends", [])), a.get("summary", ""))
    return table


def run_epilog(algorithms: list[dict[str, Any]]) -> str:
    """``run --help``'s list of algorithms (sorted) with their parameters, and the backends."""
    backends = sorted({b for a in algorithms for b in a.get("backends", [])})
    lines = ["algorithms (-p NAME=VALUE; name=default, {a|b} choices, name? optional):"]
    for a in sorted(algorithms, key=lambda a: a["name"]):
        lines.append(f"  {a['name']}: {params_text(a.get('params_schema') or {})}")
    lines.append(f"backends: auto (a GPU worker when one is up, else CPU), {', '.join(backends)}")
    lines.append("'graphgpu algorithms' describes each algorithm.")
    return "\n".join(lines)


#: Summary lists longer than this (a memetic run's timeline) are shown only with --verbose.
BRIEF_LIST = 10


def brief(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with long lists (timelines) replaced by a note of their length."""
    return {k: f"[{len(v)} entries; --verbose shows them]"
            if isinstance(v, list) and len(v) > BRIEF_LIST else v for k, v in summary.items()}


def fetch_commands(job_id: str, available: dict[str, list[str]]) -> list[str]:
    """The ``graphgpu result`` commands that fetch a job's node values and arrays.

    Parameters
    ----------
    job_id : str
        The job.
    available : dict
        The result's ``available`` names: ``node_values`` and ``arrays``.

    Returns
    -------
    list of str
        A CSV command when there are node values, and an ``.npy`` command per array.
    """
    commands = [f"graphgpu result {job_id} --format csv -o {job_id}.csv"
                ] if available.get("node_values") else []
    commands += [f"graphgpu result {job_id} --format npy --field {name} -o {name}.npy"
                 for name in available.get("arrays", [])]
    return commands

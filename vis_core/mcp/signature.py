"""A Python signature and docstring for an MCP tool, from its input schema and description."""

from __future__ import annotations

import functools
import inspect
import json
import keyword
import operator
from typing import Any

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


def _annotation(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return inspect.Parameter.empty
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        return _TYPES[kind]
    if isinstance(kind, list):
        types = [_TYPES[k] for k in kind if isinstance(k, str) and k in _TYPES]
        if types:
            return functools.reduce(operator.or_, types)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            types = [_annotation(o) for o in options]
            if types and all(t is not inspect.Parameter.empty for t in types):
                return functools.reduce(operator.or_, types)
    return inspect.Parameter.empty


def schema_signature(schema: dict[str, Any]) -> inspect.Signature:
    """Keyword-only parameters from ``properties`` (required first); a schema whose names are
    not Python identifiers gives ``(**arguments)``."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return inspect.Signature([inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD)])
    required = set(schema.get("required") or ())
    names = list(properties)
    if not all(isinstance(n, str) and n.isidentifier() and not keyword.iskeyword(n) for n in names):
        return inspect.Signature([inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD)])
    params = []
    for name in sorted(names, key=lambda n: n not in required):
        prop = properties[name]
        default: Any = inspect.Parameter.empty
        if name not in required:
            default = prop.get("default") if isinstance(prop, dict) else None
            if not isinstance(default, str | int | float | bool | type(None)):
                default = None
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=_annotation(prop),
            )
        )
    return inspect.Signature(params)


def tool_doc(description: str, schema: dict[str, Any], server: str, tool: str) -> str:
    """The docstring: the description, then each parameter's description and the schema."""
    lines = [description.strip() or f"The {tool!r} tool of MCP server {server!r}."]
    properties = schema.get("properties") if isinstance(schema, dict) else None
    described = [
        (name, " ".join(str(prop["description"]).split()))
        for name, prop in (properties.items() if isinstance(properties, dict) else ())
        if isinstance(prop, dict) and prop.get("description")
    ]
    if described:
        lines.append("")
        lines.append("Parameters:")
        lines.extend(f"- {name}: {text}" for name, text in described)
    lines.append("")
    lines.append(
        f"MCP tool {tool!r} of server {server!r}; returns an McpResult record "
        "(content, structured_content, is_error; str() is its text, else its JSON)."
    )
    lines.append("Input schema: " + json.dumps(schema, ensure_ascii=False)[:2000])
    return "\n".join(lines)

"""``doc()`` text for a contract, with a compact, budgeted **Model schemas** section."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from vis_core.contracts.specs import (
    NamespaceSpec,
    ParameterKind,
    ParameterSpec,
    ToolSpec,
    TypeKind,
    TypeSpec,
)

SCHEMA_BUDGET = 2048
"""Characters of the Model schemas section, heading and abbreviation notice included."""

SCHEMA_HEADING = "Model schemas:"

_KIND_WORDS = {
    ParameterKind.POSITIONAL_ONLY: "positional-only",
    ParameterKind.POSITIONAL_OR_KEYWORD: "positional or keyword",
    ParameterKind.VAR_POSITIONAL: "variadic positional",
    ParameterKind.KEYWORD_ONLY: "keyword-only",
    ParameterKind.VAR_KEYWORD: "variadic keyword",
}


def abbreviation_notice(name: str) -> str:
    """The line that ends an abbreviated Model schemas section."""
    return (
        f"(Abbreviated. Select the leaf fields you need from {name}.contract['parameters'] "
        f"or {name}.contract['returns'].)"
    )


def render_tool(spec: ToolSpec) -> str:
    """The complete ``doc()`` text of one callable."""
    labels = _Labels.build(spec)
    lines = [f"{spec.name}{spec.signature}", f"Tag: {spec.tag}"]
    if spec.description:
        lines += ["", spec.description]
    lines.append("")
    if spec.parameters:
        lines.append("Parameters:")
        for param in spec.parameters:
            lines.append(f"- {_parameter_line(param, labels)}")
            if param.type.description:
                lines.append(f"  {param.type.description}")
    else:
        lines.append("Parameters: none")
    returns = f"Returns: {labels.display(spec.returns, {})}"
    if spec.returns.description:
        returns += f" — {spec.returns.description}"
    lines.append(returns)
    section = model_schemas(spec, labels)
    if section:
        lines += ["", section]
    return "\n".join(lines)


def render_namespace(spec: NamespaceSpec) -> str:
    """Reference text for every public member of a namespace."""
    count = len(spec.members)
    head = f"{spec.name}: {count} tool{'s' if count != 1 else ''}"
    index = [f"- {m.name}{m.signature}" for m in spec.members]
    bodies = [render_tool(m) for m in spec.members]
    return "\n\n".join(["\n".join([head, *index]), *bodies])


def _parameter_line(param: ParameterSpec, labels: _Labels) -> str:
    prefix = {ParameterKind.VAR_POSITIONAL: "*", ParameterKind.VAR_KEYWORD: "**"}.get(
        param.kind, ""
    )
    words = [_KIND_WORDS[param.kind]]
    if param.required:
        words.append("required")
    elif param.has_default:
        if param.default_source is None:
            words.append("default ... (omit it to use the default)")
        else:
            words.append(f"default {param.default_source}")
    else:
        words.append("optional")
    return f"{prefix}{param.name}: {labels.display(param.type, {})} — {', '.join(words)}"


def model_schemas(spec: ToolSpec, labels: _Labels | None = None) -> str:
    """The Model schemas section (``""`` without records), within :data:`SCHEMA_BUDGET`."""
    labels = labels or _Labels.build(spec)
    body = list(_schema_lines(spec, labels))
    if not body:
        return ""
    full = "\n".join([SCHEMA_HEADING, *body])
    if len(full) <= SCHEMA_BUDGET:
        return full
    notice = abbreviation_notice(spec.name)
    kept = [SCHEMA_HEADING]
    size = len(SCHEMA_HEADING)
    for line in body:
        if size + 1 + len(line) + 1 + len(notice) > SCHEMA_BUDGET:
            break
        kept.append(line)
        size += 1 + len(line)
    kept.append(notice)
    return "\n".join(kept)


@dataclass
class _Labels:
    """Display labels for record shapes: one per distinct shape, numbered within a name."""

    by_shape: dict[str, str] = field(default_factory=dict)
    order: list[TypeSpec] = field(default_factory=list)

    @classmethod
    def build(cls, spec: ToolSpec) -> _Labels:
        shapes: dict[str, list[str]] = {}
        first: dict[str, TypeSpec] = {}
        for record, _scope in _breadth_first(spec, None):
            key = _shape(record)
            names = shapes.setdefault(record.name, [])
            if key not in names:
                names.append(key)
                first[key] = record
        labels = cls()
        for name, keys in shapes.items():
            for number, key in enumerate(keys, start=1):
                labels.by_shape[key] = name if len(keys) == 1 else f"{name}#{number}"
                labels.order.append(first[key])
        return labels

    def label(self, record: TypeSpec) -> str:
        return self.by_shape.get(_shape(record), record.name)

    def display(self, spec: TypeSpec, scope: dict[str, str]) -> str:
        kind = spec.kind
        if kind is TypeKind.RECORD:
            return self.label(spec)
        if kind is TypeKind.REFERENCE:
            return scope.get(spec.name, spec.name)
        if kind is TypeKind.OPAQUE:
            return f"{spec.name} (opaque)"
        if kind is TypeKind.UNRESOLVED:
            return f"{spec.name} (unresolved)"
        if kind is TypeKind.LITERAL and not spec.name.startswith("Literal["):  # an Enum
            return f"{spec.name} ({' | '.join(repr(v) for v in spec.values)})"
        if kind is TypeKind.UNION:
            return " | ".join(self.display(a, scope) for a in spec.arguments)
        if kind is TypeKind.GENERIC and spec.arguments:
            base = spec.name.split("[", 1)[0]
            inner = ", ".join(self.display(a, scope) for a in spec.arguments)
            return f"{base}[{inner}, ...]" if spec.variadic else f"{base}[{inner}]"
        return spec.name


def _shape(record: TypeSpec) -> str:
    """A record's shape: its name, sequence field and each field's name, type name and flags.

    Nested records count by name, so one class reached with different ancestors (and
    therefore different recursion references) keeps one definition.
    """
    fields = [
        (
            f.name,
            "record" if f.type.kind is TypeKind.REFERENCE else f.type.kind.value,
            f.type.name,
            f.type.description,
            f.required,
            f.has_default,
            f.default_is_none,
        )
        for f in record.fields
    ]
    return json.dumps([record.name, record.sequence_field, fields])


def _records_in(spec: TypeSpec) -> Iterator[TypeSpec]:
    """Records directly inside a type (not inside other records' fields), in order."""
    if spec.kind is TypeKind.RECORD:
        yield spec
        return
    for argument in spec.arguments:
        yield from _records_in(argument)


def _breadth_first(
    spec: ToolSpec, labels: _Labels | None
) -> Iterator[tuple[TypeSpec, dict[str, str]]]:
    """Every record reachable from the parameters and return, breadth-first, with its scope."""
    queue: deque[tuple[TypeSpec, dict[str, str]]] = deque()  # records waiting, with scopes
    for param in spec.parameters:
        queue.extend((r, {}) for r in _records_in(param.type))
    queue.extend((r, {}) for r in _records_in(spec.returns))
    seen: set[str] = set()
    while queue:
        record, scope = queue.popleft()
        key = _shape(record)
        if key in seen:
            continue
        seen.add(key)
        yield record, scope
        label = labels.label(record) if labels else record.name
        inner_scope = {**scope, record.name: label}
        for item in record.fields:
            queue.extend((r, inner_scope) for r in _records_in(item.type))


def _schema_lines(spec: ToolSpec, labels: _Labels) -> Iterator[str]:
    for record, scope in _breadth_first(spec, labels):
        label = labels.label(record)
        local = {**scope, record.name: label}
        yield label
        if record.sequence_field is not None:
            yield (
                f"  sequence over {record.sequence_field}: for item in value, len(value), "
                "bool(value), value[0], value[-1], value[1:] (slices are lists)"
            )
        for item in record.fields:
            text = f"  {item.name}: {labels.display(item.type, local)}"
            if item.has_default:
                text += " (default None)" if item.default_is_none else " (has default)"
            elif not item.required:
                text += " (optional)"
            if item.type.description:
                text += f" — {item.type.description}"
            yield text

"""Frozen, slotted records describing tools: ``ToolSpec``, ``ParameterSpec``, ``TypeSpec``…"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

CONTRACT_VERSION = 1


class TypeKind(StrEnum):
    """The kinds of type description in a contract."""

    ANY = "any"
    NULL = "null"
    SCALAR = "scalar"
    OPAQUE = "opaque"
    UNRESOLVED = "unresolved"
    UNION = "union"
    LITERAL = "literal"
    GENERIC = "generic"
    RECORD = "record"
    REFERENCE = "reference"


class ParameterKind(StrEnum):
    """Python parameter kinds, as the contract spells them; a member's name is its
    ``inspect.Parameter`` kind's (``ParameterKind[kind.name]`` maps one to the other)."""

    POSITIONAL_ONLY = "positional_only"
    POSITIONAL_OR_KEYWORD = "positional_or_keyword"
    VAR_POSITIONAL = "var_positional"
    KEYWORD_ONLY = "keyword_only"
    VAR_KEYWORD = "var_keyword"


def _contract(spec: Any) -> dict[str, Any]:
    """The contract data of a spec that carries every field it declares, in that order: a
    nested spec as its own data, a tuple as a list, a kind as its value."""
    return {item.name: _data(getattr(spec, item.name)) for item in fields(spec)}


def _data(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_data(item) for item in value]
    if isinstance(value, StrEnum):
        return value.value
    return value.to_contract() if isinstance(value, TypeSpec | ParameterSpec) else value


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One public field of a record (dataclass field or property; a property, like a
    TypedDict key, is neither required nor has a default)."""

    name: str
    type: TypeSpec
    required: bool = False
    has_default: bool = False
    default_is_none: bool = False

    def to_contract(self) -> dict[str, Any]:
        return _contract(self)

    @classmethod
    def from_contract(cls, data: dict[str, Any]) -> FieldSpec:
        return cls(
            name=data["name"],
            type=TypeSpec.from_contract(data["type"]),
            required=bool(data["required"]),
            has_default=bool(data["has_default"]),
            default_is_none=bool(data["default_is_none"]),
        )


@dataclass(frozen=True, slots=True)
class TypeSpec:
    """A type description; ``name`` is its display text (``tuple[Result, ...]``)."""

    kind: TypeKind
    name: str
    description: str | None = None
    arguments: tuple[TypeSpec, ...] = ()
    fields: tuple[FieldSpec, ...] = ()
    values: tuple[Any, ...] = ()
    variadic: bool = False
    sequence_field: str | None = None

    def to_contract(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind.value, "name": self.name}
        if self.description:
            data["description"] = self.description
        if self.kind in (TypeKind.UNION, TypeKind.GENERIC):
            data["arguments"] = [a.to_contract() for a in self.arguments]
        if self.kind is TypeKind.RECORD:
            data["fields"] = [f.to_contract() for f in self.fields]
        if self.kind is TypeKind.LITERAL:
            data["values"] = list(self.values)
        if self.variadic:
            data["variadic"] = True
        if self.sequence_field is not None:
            data["sequence_field"] = self.sequence_field
        return data

    @classmethod
    def from_contract(cls, data: dict[str, Any]) -> TypeSpec:
        return cls(
            kind=TypeKind(data["kind"]),
            name=data["name"],
            description=data.get("description"),
            arguments=tuple(cls.from_contract(a) for a in data.get("arguments", ())),
            fields=tuple(FieldSpec.from_contract(f) for f in data.get("fields", ())),
            values=tuple(data.get("values", ())),
            variadic=bool(data.get("variadic", False)),
            sequence_field=data.get("sequence_field"),
        )


@dataclass(frozen=True, slots=True)
class ParameterSpec:
    """One parameter: kind, type, and whether and how it defaults."""

    name: str
    kind: ParameterKind
    type: TypeSpec
    required: bool
    has_default: bool
    default_is_none: bool
    default_source: str | None = None

    def to_contract(self) -> dict[str, Any]:
        return _contract(self)

    @classmethod
    def from_contract(cls, data: dict[str, Any]) -> ParameterSpec:
        return cls(
            name=data["name"],
            kind=ParameterKind(data["kind"]),
            type=TypeSpec.from_contract(data["type"]),
            required=bool(data["required"]),
            has_default=bool(data["has_default"]),
            default_is_none=bool(data["default_is_none"]),
            default_source=data.get("default_source"),
        )


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One callable's contract: the same data as its portable ``.contract`` dict."""

    version: int
    name: str
    tag: str
    description: str
    signature: str
    parameters: tuple[ParameterSpec, ...]
    returns: TypeSpec

    def to_contract(self) -> dict[str, Any]:
        return _contract(self)

    @classmethod
    def from_contract(cls, data: dict[str, Any]) -> ToolSpec:
        return cls(
            version=int(data["version"]),
            name=data["name"],
            tag=data["tag"],
            description=data["description"],
            signature=data["signature"],
            parameters=tuple(ParameterSpec.from_contract(p) for p in data["parameters"]),
            returns=TypeSpec.from_contract(data["returns"]),
        )


@dataclass(frozen=True, slots=True)
class NamespaceSpec:
    """An object namespace: the fully named ``ToolSpec`` of every public descendant."""

    name: str
    members: tuple[ToolSpec, ...]

    def to_contract(self) -> dict[str, Any]:
        return {
            "version": CONTRACT_VERSION,
            "name": self.name,
            "members": [m.to_contract() for m in self.members],
        }


@dataclass(frozen=True, slots=True)
class HelpDocument:
    """Generated reference text for one callable or a namespace."""

    tool: ToolSpec | NamespaceSpec
    text: str

    def __str__(self) -> str:
        return self.text

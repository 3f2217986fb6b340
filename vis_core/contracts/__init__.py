"""Tool contracts: signatures and annotations described as portable data and ``doc()`` text."""

from __future__ import annotations

from vis_core.contracts.build import annotation_text, callable_spec, format_signature, tool_contract
from vis_core.contracts.defaults import DEPTH_BUDGET, SOURCE_BUDGET, default_source
from vis_core.contracts.introspect import (
    annotation_from_text,
    annotations_from_signature,
    contract_function,
    signature_from_contract,
)
from vis_core.contracts.render import SCHEMA_BUDGET, model_schemas, render_namespace, render_tool
from vis_core.contracts.source import compile_entry_source
from vis_core.contracts.specs import (
    CONTRACT_VERSION,
    FieldSpec,
    HelpDocument,
    NamespaceSpec,
    ParameterKind,
    ParameterSpec,
    ToolSpec,
    TypeKind,
    TypeSpec,
)

__all__ = [
    "CONTRACT_VERSION",
    "DEPTH_BUDGET",
    "SCHEMA_BUDGET",
    "SOURCE_BUDGET",
    "FieldSpec",
    "HelpDocument",
    "NamespaceSpec",
    "ParameterKind",
    "ParameterSpec",
    "ToolSpec",
    "TypeKind",
    "TypeSpec",
    "annotation_from_text",
    "annotation_text",
    "annotations_from_signature",
    "callable_spec",
    "compile_entry_source",
    "contract_function",
    "default_source",
    "format_signature",
    "model_schemas",
    "render_namespace",
    "render_tool",
    "signature_from_contract",
    "tool_contract",
]

"""Build a callable's ``ToolSpec`` and portable ``.contract`` from its signature and annotations."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from vis_core.contracts.defaults import default_source
from vis_core.contracts.resolve import describe_target
from vis_core.contracts.specs import (
    CONTRACT_VERSION,
    ParameterKind,
    ParameterSpec,
    ToolSpec,
    TypeKind,
    TypeSpec,
)
from vis_core.contracts.types import ANY, describe

TAGS = ("observation", "mutation", "verification", "external")


def callable_spec(
    fn: Callable[..., Any], *, name: str | None = None, tag: str = "observation"
) -> ToolSpec:
    """Describe ``fn`` (following ``functools.wraps`` chains) without calling it.

    Annotations resolve statically in the wrapped function's module; a cyclic
    ``__wrapped__`` chain raises ``ValueError``.
    """
    tag_value = str(getattr(tag, "value", tag))
    if tag_value not in TAGS:
        raise ValueError(f"tag must be one of {', '.join(TAGS)}; got {tag!r}")
    target = describe_target(fn)
    parameters: list[ParameterSpec] = []
    pieces: list[tuple[inspect.Parameter, str | None, str | None]] = []
    for param in target.signature.parameters.values():
        annotated = param.annotation is not inspect.Parameter.empty
        type_spec = describe(param.annotation, target.globalns) if annotated else ANY
        variadic = param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        has_default = param.default is not inspect.Parameter.empty
        source = default_source(param.default) if has_default else None
        parameters.append(
            ParameterSpec(
                name=param.name,
                kind=ParameterKind[param.kind.name],
                type=type_spec,
                required=not has_default and not variadic,
                has_default=has_default,
                default_is_none=has_default and param.default is None,
                default_source=source,
            )
        )
        default_text = (source if source is not None else "...") if has_default else None
        pieces.append((param, annotation_text(type_spec) if annotated else None, default_text))
    return_annotation = target.signature.return_annotation
    has_return = return_annotation is not inspect.Signature.empty
    returns = describe(return_annotation, target.globalns) if has_return else ANY
    signature = format_signature(pieces, annotation_text(returns) if has_return else None)
    fn_name = name or getattr(fn, "__name__", None) or getattr(target.function, "__name__", "")
    return ToolSpec(
        version=CONTRACT_VERSION,
        name=fn_name,
        tag=tag_value,
        description=target.description,
        signature=signature,
        parameters=tuple(parameters),
        returns=returns,
    )


def annotation_text(spec: TypeSpec, *, quoted: bool = True) -> str:
    """Annotation source for a signature: builtins and typing plain, records (and other
    classes) quoted, and a union holding one quoted whole (``'Filter' | None`` would fail
    where it is evaluated: ``'Filter | None'``). ``quoted=False``: no quotes at all."""
    kind = spec.kind
    if kind is TypeKind.NULL:
        return "None"
    if kind in (TypeKind.ANY, TypeKind.SCALAR) or (
        kind is TypeKind.LITERAL and spec.name.startswith("Literal[")
    ):
        return spec.name
    if kind is TypeKind.UNION:
        bare = " | ".join(annotation_text(a, quoted=False) for a in spec.arguments)
        plain = " | ".join(annotation_text(a) for a in spec.arguments)
        return repr(bare) if quoted and plain != bare else bare
    if kind is TypeKind.GENERIC:
        base = spec.name.split("[", 1)[0]
        if spec.variadic:
            return f"{base}[{annotation_text(spec.arguments[0], quoted=quoted)}, ...]"
        if spec.name == "tuple[()]":
            return spec.name
        if not spec.arguments:
            return base
        items = ", ".join(annotation_text(a, quoted=quoted) for a in spec.arguments)
        return f"{base}[{items}]"
    return repr(spec.name) if quoted else spec.name


def format_signature(
    pieces: list[tuple[inspect.Parameter, str | None, str | None]], returns: str | None
) -> str:
    """Render parameters the way ``inspect.Signature`` prints them, ``/`` and ``*`` included."""
    rendered: list[str] = []
    render_pos_only_separator = False
    render_kw_only_separator = True
    for param, annotation, default in pieces:
        kind = param.kind
        text = param.name
        if kind is inspect.Parameter.VAR_POSITIONAL:
            text = "*" + text
        elif kind is inspect.Parameter.VAR_KEYWORD:
            text = "**" + text
        if annotation is not None:
            text = f"{text}: {annotation}"
        if default is not None:
            text = f"{text} = {default}" if annotation is not None else f"{text}={default}"
        if kind is inspect.Parameter.POSITIONAL_ONLY:
            render_pos_only_separator = True
        elif render_pos_only_separator:
            rendered.append("/")
            render_pos_only_separator = False
        if kind is inspect.Parameter.VAR_POSITIONAL:
            render_kw_only_separator = False
        elif kind is inspect.Parameter.KEYWORD_ONLY and render_kw_only_separator:
            rendered.append("*")
            render_kw_only_separator = False
        rendered.append(text)
    if render_pos_only_separator:
        rendered.append("/")
    text = f"({', '.join(rendered)})"
    if returns is not None:
        text += f" -> {returns}"
    return text

"""``vis.testing``: check a typed catalog against the names and effects you expect."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from vis_core.contracts.introspect import signature_from_contract
from vis_core.contracts.specs import NamespaceSpec, ToolSpec, TypeKind, TypeSpec
from vis_core.extension.catalog import Catalog


def assert_catalog(catalog: Catalog, names: Iterable[str], mutations: Iterable[str] = ()) -> None:
    """Assert the public callable names and mutation names, help/signature parity and that no
    nested type is unresolved. It calls no tool and validates no argument values."""
    if not isinstance(catalog, Catalog):
        raise TypeError(f"assert_catalog needs a vis.Catalog, got {type(catalog).__name__}")
    expected = _names(names, "names")
    expected_mutations = _names(mutations, "mutations")
    tools = list(_tools(catalog))
    actual = {t.name for t in tools}
    problems: list[str] = []
    if missing := sorted(expected - actual):
        problems.append(f"missing public callables: {', '.join(missing)}")
    if extra := sorted(actual - expected):
        problems.append(f"unexpected public callables: {', '.join(extra)}")
    actual_mutations = {t.name for t in tools if t.tag == "mutation"}
    if missing := sorted(expected_mutations - actual_mutations):
        problems.append(f"expected mutations not tagged 'mutation': {', '.join(missing)}")
    if extra := sorted(actual_mutations - expected_mutations):
        problems.append(f"tagged 'mutation' but not expected: {', '.join(extra)}")
    for tool in tools:
        problems.extend(_parity(catalog, tool))
        problems.extend(
            f"{tool.name}: {where} is {spec.name} (unresolved)" for where, spec in _unresolved(tool)
        )
    if problems:
        raise AssertionError("catalog check failed:\n- " + "\n- ".join(problems))


def _names(values: Iterable[str], what: str) -> set[str]:
    if isinstance(values, str):
        raise TypeError(f"assert_catalog({what}=...) takes a collection of names, not one string")
    return set(values)


def _tools(catalog: Catalog) -> Iterator[ToolSpec]:
    roots = catalog.spec()
    assert isinstance(roots, tuple)
    for root in roots:
        if isinstance(root, NamespaceSpec):
            yield from root.members
        else:
            yield root


def _parity(catalog: Catalog, tool: ToolSpec) -> list[str]:
    problems = []
    text = catalog.help(tool.name).text
    if not text.startswith(f"{tool.name}{tool.signature}"):
        problems.append(f"{tool.name}: help does not start with its signature {tool.signature}")
    signature = signature_from_contract(tool.to_contract())
    shape = [(p.name, p.kind.name) for p in signature.parameters.values()]
    declared = [(p.name, p.kind.name) for p in tool.parameters]
    if shape != declared:
        problems.append(f"{tool.name}: signature {tool.signature} disagrees with its parameters")
    for param in tool.parameters:
        if f"{param.name}: " not in text:
            problems.append(f"{tool.name}: help does not describe parameter {param.name!r}")
    return problems


def _unresolved(tool: ToolSpec) -> Iterator[tuple[str, TypeSpec]]:
    for param in tool.parameters:
        yield from _walk(param.type, f"parameter {param.name}")
    yield from _walk(tool.returns, "the return type")


def _walk(spec: TypeSpec, where: str) -> Iterator[tuple[str, TypeSpec]]:
    if spec.kind is TypeKind.UNRESOLVED:
        yield where, spec
    for argument in spec.arguments:
        yield from _walk(argument, where)
    for item in spec.fields:
        yield from _walk(item.type, f"{where} field {spec.name}.{item.name}")


from vis_core.extension.live import LiveRecorder  # noqa: E402, F401 - vis.testing.LiveRecorder

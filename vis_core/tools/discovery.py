"""``apropos`` and ``doc``: find public tools, guides and skills, and read their contracts."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from vis_core.contracts.sequence import sequence
from vis_core.contracts.specs import NamespaceSpec, ToolSpec
from vis_core.extension.unavailable import unavailable_note
from vis_core.model.activity import (
    Activity,
    ActivityPresentation,
    ActivityTable,
    ActivityText,
    RenderPhase,
    SymbolTag,
)
from vis_core.model.extensions import GuideKind
from vis_core.tools.registry import HostTool, ToolRegistry

_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Guide:
    """A guide or skill that ``apropos`` matches and ``doc`` reads in full."""

    name: str
    title: str
    text: str
    kind: GuideKind = GuideKind.GUIDE

    @property
    def headings(self) -> tuple[str, ...]:
        return tuple(m.group(1) for line in self.text.splitlines() if (m := _HEADING.match(line)))

    @property
    def opening(self) -> str:
        """The first paragraph that is not a heading."""
        for block in re.split(r"\n\s*\n", self.text):
            block = block.strip()
            if block and not block.startswith("#"):
                return " ".join(block.split())
        return ""

    @property
    def problems(self) -> tuple[str, ...]:
        """The bullet items of a ``When to use`` section."""
        items: list[str] = []
        inside = False
        for line in self.text.splitlines():
            heading = _HEADING.match(line)
            if heading:
                inside = heading.group(1).strip().lower() == "when to use"
                continue
            if inside and line.lstrip().startswith(("- ", "* ")):
                items.append(line.lstrip()[2:].strip())
        return tuple(items)

    @property
    def texts(self) -> tuple[str, ...]:
        """What ``apropos`` searches: the name, title, opening, headings and problems."""
        return (self.name, self.title, self.opening, *self.headings, *self.problems)


@dataclass(frozen=True)
class AproposHit:
    """One match: a tool, guide or skill name and its one-line summary."""

    name: str
    kind: str
    summary: str

    def __str__(self) -> str:
        return f"{self.name} — {self.summary}" if self.summary else self.name


@sequence(field="hits")
@dataclass(frozen=True)
class AproposResult:
    """The matches of one pattern, in manifest order; iterate it or pass a hit to ``doc``."""

    pattern: str
    hits: tuple[AproposHit, ...]

    def __iter__(self) -> Iterator[AproposHit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __str__(self) -> str:
        if not self.hits:
            return f"No tools, guides or skills match {self.pattern!r}"
        return "\n".join(str(hit) for hit in self.hits)


SUMMARY_CHARS = 160  # an apropos hit's summary, at most
SEARCH_SECONDS = 5.0  # an apropos pattern's search, at most (a plain one takes milliseconds)


def _summary(text: str) -> str:
    """A docstring's summary for an apropos hit: its first sentence, whole where its first
    line wraps it (never cut mid-sentence at the line's end), else cut at a word."""
    paragraph = " ".join(line.strip() for line in text.strip().split("\n\n", 1)[0].splitlines())
    if len(paragraph) <= SUMMARY_CHARS:
        return paragraph
    end = paragraph.find(". ", 0, SUMMARY_CHARS)
    if end != -1:
        return paragraph[: end + 1]
    return paragraph[: SUMMARY_CHARS - 1].rsplit(" ", 1)[0] + "…"


def tool_spec(tool: HostTool) -> ToolSpec:
    """The ``ToolSpec`` of a registered tool, under its registered (dotted) name and tag."""
    if tool.spec is not None:  # an extension's tool: described by the worker that loaded it
        return dataclasses.replace(tool.spec, name=tool.name, tag=tool.tag.value)
    from vis_core.contracts.build import callable_spec  # when a contract is first read

    return callable_spec(tool.fn, name=tool.name, tag=tool.tag)


def apropos(
    registry: ToolRegistry,
    pattern: str,
    guides: Iterable[Guide] = (),
    described: Callable[[Callable[[str], bool]], list[str]] | None = None,
    seconds: float = SEARCH_SECONDS,
) -> AproposResult:
    """Public tool names matching ``pattern`` (a regex, ignoring case) in manifest order, with
    the tools ``described`` names (MCP tools whose server's description matches) added and
    ranked before the other MCP tools, then guides and skills by title, opening, headings and
    ``When to use`` problems. The pattern is the model's: it runs in a process of its own, for
    at most ``seconds`` (:func:`~vis_core.tools.search.found_in_time`)."""
    from vis_core.tools.search import found_in_time  # a process: only when apropos is called

    if not isinstance(pattern, str):
        raise TypeError(
            f"apropos(pattern) takes a regular expression string, got {type(pattern).__name__}"
        )
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(
            f"apropos: {pattern!r} is not a valid regular expression ({exc}); "
            "escape special characters, e.g. with re.escape()"
        ) from None
    tools = [tool for tool in registry if not tool.is_hidden and not tool.name.startswith("_")]
    guides = list(guides)
    with found_in_time(compiled, seconds, "apropos") as found:
        texts = [tool.name for tool in tools] + [text for guide in guides for text in guide.texts]
        matched = iter(found(texts))
        hits = [
            AproposHit(tool.name, "tool", _summary(tool.description))
            for tool in tools
            if next(matched)
        ]
        shown = [guide for guide in guides if any([next(matched) for _ in guide.texts])]
        ranked = described(lambda text: found([text])[0]) if described is not None else []
    if described is not None:
        named = {hit.name for hit in hits}
        for name in ranked:
            tool = registry.get(name)
            if tool is not None and not tool.is_hidden and name not in named:
                named.add(name)
                hits.append(AproposHit(name, "tool", _summary(tool.description)))
        # MCP tools of a server whose description matches rank before the other MCP tools
        first = set(ranked)
        mcp = {tool.name for tool in registry if tool.owner == "mcp"}
        hits.sort(key=lambda hit: hit.name in mcp and hit.name not in first)
    hits += [AproposHit(guide.name, str(guide.kind), guide.title) for guide in shown]
    return AproposResult(pattern, tuple(hits))


def _target_name(name: object) -> str:
    if isinstance(name, str):
        return name
    if isinstance(name, Mapping) and isinstance(name.get("name"), str):
        return name["name"]
    value = getattr(name, "name", None)
    if isinstance(value, str):
        return value
    raise TypeError(f"doc(name) takes a tool name or an apropos hit, got {type(name).__name__}")


def doc(
    registry: ToolRegistry,
    name: object,
    guides: Iterable[Guide] = (),
    namespace_doc: Callable[[str], str | None] | None = None,
) -> str:
    """The complete document for a public tool (its rendered contract), namespace, guide or
    skill; ``namespace_doc`` documents other namespaces (an MCP server's ``mcp__<server>``).
    Unknown and hidden names raise ``ValueError`` with similar names."""
    from vis_core.contracts.render import render_namespace, render_tool

    target = _target_name(name).strip()
    tool = registry.get(target)
    if tool is not None and not tool.is_hidden:
        return render_tool(tool_spec(tool))
    guide_list = list(guides)
    for guide in guide_list:
        if target in (guide.name, guide.title):
            return guide.text
    members = tuple(
        tool_spec(t) for t in registry if not t.is_hidden and t.name.startswith(target + ".")
    )
    if target and members:
        return render_namespace(NamespaceSpec(target, members))
    text = namespace_doc(target) if namespace_doc is not None and target else None
    if text is not None:
        return text
    note = unavailable_note(target)
    if note is not None:
        return note
    public = [t.name for t in registry if not t.is_hidden] + [g.name for g in guide_list]
    similar = difflib.get_close_matches(target, public, n=5, cutoff=0.5)
    hint = f" Similar names: {', '.join(similar)}." if similar else ""
    raise ValueError(
        f"doc: no public tool, guide or skill is named {target!r}.{hint} "
        "Find names with apropos(pattern)."
    )


def _render_apropos(
    *, phase: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any, error: Any
) -> ActivityPresentation | None:
    pattern = str(args[0] if args else kwargs.get("pattern", ""))
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation("Find tools", f"{pattern}: {error}")
    if not isinstance(result, AproposResult):
        return None
    if not result.hits:
        return ActivityPresentation("Find tools", f"No matches for {pattern}")
    count = len(result.hits)
    table = ActivityTable(
        ("Name", "Kind", "Summary"),
        tuple((hit.name, hit.kind, hit.summary) for hit in result.hits),
    )
    return ActivityPresentation(
        "Find tools", f"{count} match{'es' if count != 1 else ''} for {pattern}", (table,)
    )


def _render_doc(
    *, phase: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any, error: Any
) -> ActivityPresentation | None:
    raw = args[0] if args else kwargs.get("name", "")
    try:
        name = _target_name(raw)
    except TypeError:
        name = repr(raw)
    if phase == RenderPhase.FAILURE:
        return ActivityPresentation("Read tool documentation", f"{name}: {error}")
    content = (ActivityText(result),) if isinstance(result, str) else ()
    return ActivityPresentation("Read tool documentation", name, content)


APROPOS_ACTIVITY = Activity(label="Find tools", show_start=False, render=_render_apropos)
DOC_ACTIVITY = Activity(label="Read tool documentation", show_start=False, render=_render_doc)


def discovery_tools(
    registry: Callable[[], ToolRegistry],
    guides: Callable[[], Iterable[Guide]] | None = None,
    found: Callable[[list[str]], None] | None = None,
    described: Callable[[Callable[[str], bool]], list[str]] | None = None,
    namespace_doc: Callable[[str], str | None] | None = None,
) -> list[HostTool]:
    """The ``apropos`` and ``doc`` host tools over the registry (and guides) of a session;
    ``found`` hears the names a search turned up (deferred MCP tools load that way),
    ``described`` adds tools by their server's description, ``namespace_doc`` documents MCP
    servers."""

    def _guides() -> list[Guide]:
        return list(guides()) if guides is not None else []

    def apropos_tool(pattern: str) -> AproposResult:
        """List public tools, guides and skills whose names match a regular expression.

        Matching ignores case; tools come in manifest order, then MCP tools whose server's
        description matches, then guides and skills, which also match by title, opening,
        headings and "When to use" problems.
        """
        result = apropos(registry(), pattern, _guides(), described)
        if found is not None:
            found([hit.name for hit in result.hits])
        return result

    def doc_tool(name: str | AproposHit) -> str:
        """Return the complete documentation of a tool, namespace, guide or skill.

        For a tool: its signature, parameter kinds and defaults, return type and model
        schemas, effect tag and description. For `mcp__<server>`: the server's description,
        its whole instructions and its tool names.
        """
        text = doc(registry(), name, _guides(), namespace_doc)
        if found is not None:
            found([_target_name(name).strip()])
        return text

    apropos_tool.__name__ = apropos_tool.__qualname__ = "apropos"
    doc_tool.__name__ = doc_tool.__qualname__ = "doc"
    return [
        HostTool("apropos", apropos_tool, SymbolTag.OBSERVATION, APROPOS_ACTIVITY),
        HostTool("doc", doc_tool, SymbolTag.OBSERVATION, DOC_ACTIVITY),
    ]

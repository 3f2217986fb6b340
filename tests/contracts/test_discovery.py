"""apropos and doc over a tool registry: built-in, extension, hidden tools and guides."""

from __future__ import annotations

from typing import Any

import pytest

from vis_core.contracts.build import callable_spec
from vis_core.contracts.render import render_tool
from vis_core.contracts.sequence import sequence_field_of
from vis_core.extension.symbols import Symbol
from vis_core.extension.unavailable import unavailable_note
from vis_core.extension_host.symbol_tools import symbol_host_tools
from vis_core.model.activity import ActivityTable, SymbolTag
from vis_core.tools.discovery import (
    AproposHit,
    AproposResult,
    Guide,
    apropos,
    discovery_tools,
    doc,
    tool_spec,
)
from vis_core.tools.registry import HostTool, ToolRegistry

from .examples import Greeter

_UNSET: Any = object()


def cat(path: str, *, offset: int = 0, limit: int = _UNSET) -> str:
    """Read a file with numbered lines and a path @version header."""
    return path


def secret_tool() -> None:
    """Internal maintenance."""


GUIDE = Guide(
    name="release-guide",
    title="Release checklist",
    text="# Release checklist\n\nShip a tagged build.\n\n## When to use\n\n- Publishing wheels\n\n"
    "## Signing artifacts\n\nDetails.",
    kind="skill",
)


@pytest.fixture
def registry() -> ToolRegistry:
    box: list[ToolRegistry] = []
    tools = [
        HostTool("cat", cat),
        *discovery_tools(lambda: box[0], lambda: [GUIDE]),
        *symbol_host_tools(Symbol(Greeter(), name="greet"), owner="greeter"),
        HostTool("maintain", secret_tool, is_hidden=True),
    ]
    box.append(ToolRegistry(tools))
    return box[0]


def _call(registry: ToolRegistry, name: str, *args: Any) -> Any:
    tool = registry.get(name)
    assert tool is not None
    return tool.fn(*args)


def test_apropos_matches_names_ignoring_case_in_manifest_order(registry: ToolRegistry) -> None:
    result = _call(registry, "apropos", "A")
    assert isinstance(result, AproposResult)
    assert [hit.name for hit in result.hits] == ["cat", "apropos", "release-guide"]
    assert [h.name for h in _call(registry, "apropos", r"^greet\.").hits] == ["greet.hello"]
    assert str(_call(registry, "apropos", r"^greet\.")) == (
        "greet.hello — Generate greeting text; it never sends messages."
    )


def test_apropos_skips_hidden_tools(registry: ToolRegistry) -> None:
    assert _call(registry, "apropos", "maintain").hits == ()
    assert str(_call(registry, "apropos", "maintain")) == (
        "No tools, guides or skills match 'maintain'"
    )


def test_apropos_result_is_a_sequence_over_hits() -> None:
    assert sequence_field_of(AproposResult) == "hits"


def test_apropos_rejects_invalid_patterns(registry: ToolRegistry) -> None:
    with pytest.raises(ValueError, match=r"'\(' is not a valid regular expression"):
        apropos(registry, "(")


def test_apropos_stops_a_pattern_that_backtracks(registry: ToolRegistry) -> None:
    """``apropos(r"(.|.)*!")`` backtracked over every name and guide text in Vis's own
    process, holding the GIL: `vis run` spun for minutes and did not end on SIGTERM. The
    pattern now runs in a process of its own, killed at the time limit (here 4**17 ways
    through "Publishing wheels")."""
    with pytest.raises(TimeoutError, match=r"apropos: matching '\(\.\|\.\|\.\|\.\)\*!' took"):
        apropos(registry, r"(.|.|.|.)*!", [GUIDE], seconds=0.3)
    assert [hit.name for hit in apropos(registry, "^cat$", [GUIDE], seconds=0.3).hits] == ["cat"]


def test_apropos_matches_guides_by_title_headings_and_problems(registry: ToolRegistry) -> None:
    for pattern in ("checklist", "signing", "publishing wheels", "tagged build"):
        hits = apropos(registry, pattern, [GUIDE]).hits
        assert hits == (AproposHit("release-guide", "skill", "Release checklist"),)
    assert apropos(registry, "nothing-like-this", [GUIDE]).hits == ()


def test_doc_renders_the_contract(registry: ToolRegistry) -> None:
    text = _call(registry, "doc", "greet.hello")
    assert text == render_tool(callable_spec(Greeter().hello, name="greet.hello"))
    assert text.startswith("greet.hello(name: str, /, *, loud: bool = False) -> 'Results'")


def test_doc_of_builtin_with_keyword_options(registry: ToolRegistry) -> None:
    text = _call(registry, "doc", "cat")
    assert text.splitlines()[:2] == [
        "cat(path: str, *, offset: int = 0, limit: int = ...) -> str",
        "Tag: observation",
    ]
    assert "- offset: int — keyword-only, default 0" in text


def test_doc_accepts_a_hit_or_its_dict(registry: ToolRegistry) -> None:
    hit = _call(registry, "apropos", "^cat$").hits[0]
    assert _call(registry, "doc", hit) == _call(registry, "doc", "cat")
    assert _call(registry, "doc", {"name": "cat", "kind": "tool", "summary": ""}) == (
        _call(registry, "doc", "cat")
    )


def test_doc_of_namespace_and_guide(registry: ToolRegistry) -> None:
    assert _call(registry, "doc", "greet").startswith("greet: 1 tool\n- greet.hello(")
    assert _call(registry, "doc", "release-guide") == GUIDE.text


def test_doc_of_unknown_or_hidden_name(registry: ToolRegistry) -> None:
    with pytest.raises(
        ValueError, match="no public tool, guide or skill is named 'cta'. Similar names: cat"
    ):
        doc(registry, "cta")
    with pytest.raises(ValueError, match="named 'maintain'"):
        doc(registry, "maintain")


def test_discovery_tools_metadata(registry: ToolRegistry) -> None:
    for name, label in (("apropos", "Find tools"), ("doc", "Read tool documentation")):
        tool = registry.get(name)
        assert tool is not None and tool.activity is not None
        assert (tool.tag, tool.activity.label, tool.activity.show_start) == (
            SymbolTag.OBSERVATION,
            label,
            False,
        )
        assert tool_spec(tool).to_contract()["name"] == name
    assert tool_spec(registry.get("apropos")).to_contract()["signature"] == (  # type: ignore[arg-type]
        "(pattern: str) -> 'AproposResult'"
    )


def test_discovery_activity_presentations(registry: ToolRegistry) -> None:
    apropos_tool = registry.get("apropos")
    assert apropos_tool is not None and apropos_tool.activity is not None
    render = apropos_tool.activity.render
    result = _call(registry, "apropos", "^CAT$")
    shown = render(phase="success", args=("^CAT$",), kwargs={}, result=result, error=None)
    assert [hit.name for hit in result] == ["cat"]
    assert (shown.headline, shown.summary) == ("Find tools", "1 match for ^CAT$")
    assert isinstance(shown.content[0], ActivityTable)
    empty = render(
        phase="success",
        args=("zzz",),
        kwargs={},
        result=_call(registry, "apropos", "zzz"),
        error=None,
    )
    assert empty.summary == "No matches for zzz"
    doc_tool = registry.get("doc")
    assert doc_tool is not None and doc_tool.activity is not None
    failed = doc_tool.activity.render(
        phase="failure", args=("cta",), kwargs={}, result=None, error=ValueError("unknown")
    )
    assert (failed.headline, failed.summary) == ("Read tool documentation", "cta: unknown")


@pytest.mark.parametrize("name", ["speech", "vis.speech"])
def test_doc_says_which_documented_features_are_not_available(
    registry: ToolRegistry, name: str
) -> None:
    text = doc(registry, name)
    assert text.startswith(f"{name} is not available in this version of Vis")
    assert "drafts" not in text and "network filters" not in text


@pytest.mark.parametrize("name", ["draft", "drafts", "draft_create", "vis.draft_approve"])
def test_doc_no_longer_calls_drafts_unavailable(registry: ToolRegistry, name: str) -> None:
    """Drafts exist (vis_core/drafts): their names are not among the unimplemented ones."""
    assert unavailable_note(name) is None


def test_doc_of_an_unknown_name_still_raises(registry: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="no public tool, guide or skill is named 'counsel'"):
        doc(registry, "counsel")


def test_an_apropos_summary_is_the_first_sentence_never_cut_at_a_line_end() -> None:
    from vis_core.tools.discovery import _summary

    wrapped = "Work in a new draft: an isolated copy of the workspace (git: branch\nvis/draft/x).\n"
    assert (
        _summary(wrapped)
        == "Work in a new draft: an isolated copy of the workspace (git: branch vis/draft/x)."
    )
    long = "One sentence. " + "word " * 60
    assert _summary(long) == "One sentence."
    endless = "word " * 60
    assert _summary(endless).endswith("word…") and len(_summary(endless)) <= 160
    assert _summary("Summary.\n\nDetails that stay out.") == "Summary."

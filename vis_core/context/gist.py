"""The gist Vis writes for a fold it makes itself: a short model call, else a mechanical one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vis_core.events import Usage
from vis_core.model.conversation import Message, TextDelta, UsageUpdate
from vis_core.providers.base import ModelRequest, Provider, ProviderError

GIST_SYSTEM = (
    "You write the gist of settled work in a coding session: it replaces that work in the "
    "model's context. Keep conclusions, decisions, open questions, relevant files (paths) and "
    "the state of tests. Plain text, at most 200 words, no preamble."
)
SOURCE_CHARS = 24_000  # the folded transcript sent to the gist call, at most
PART_CHARS = 1_500  # a request, block or answer is cut to this in that transcript
MECHANICAL_CHARS = 160  # a request or answer in a mechanical gist
GIST_MAX_TOKENS = 1024


@dataclass(frozen=True)
class WrittenGist:
    """A gist and how it was written (``model`` or ``mechanical``, with the failure)."""

    text: str
    by_model: bool
    failure: str | None = None
    usage: Usage = Usage()


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def folded_text(turns: Sequence[dict[str, Any]]) -> str:
    """The folded turns as plain text for the gist call, cut to :data:`SOURCE_CHARS`."""
    parts: list[str] = []
    for turn in turns:
        parts.append(f"## Turn t{turn['position']}\nRequest: {_cut(turn['request'], PART_CHARS)}")
        for step in turn["steps"]:
            parts.append(f"Step i{step['index']} code:\n{_cut(step['code'], PART_CHARS)}")
            if step["output"]:
                parts.append(f"Output:\n{_cut(step['output'], PART_CHARS)}")
        if turn["answer"]:
            parts.append(f"Answer: {_cut(turn['answer'], PART_CHARS)}")
    text = "\n\n".join(parts)
    if len(text) > SOURCE_CHARS:
        half = SOURCE_CHARS // 2
        text = text[:half] + "\n\n[… middle left out …]\n\n" + text[-half:]
    return text


def _quoted(text: str) -> str:
    """``text`` on one line, cut, for quoting in a mechanical gist (no ``\\n`` escapes)."""
    return _cut(" ".join(text.split()), MECHANICAL_CHARS)


def mechanical_gist(turns: Sequence[dict[str, Any]]) -> str:
    """One line per folded turn: its request, how many steps, and the start of its answer."""
    lines = []
    for turn in turns:
        steps = len(turn["steps"])
        line = f"t{turn['position']}: asked “{_quoted(turn['request'])}”"
        if steps:
            line += f"; {steps} step{'s' if steps != 1 else ''}"
        if turn["answer"]:
            line += f"; answered “{_quoted(turn['answer'])}”"
        lines.append(line)
    return "Summary of folded turns (written by Vis):\n" + "\n".join(lines)


async def write_gist(
    provider: Provider | None,
    model: str,
    turns: Sequence[dict[str, Any]],
    instructions: str = "",
) -> WrittenGist:
    """Ask the model for a gist of ``turns``; a mechanical gist when that call fails."""
    if provider is None:
        return WrittenGist(mechanical_gist(turns), False, "no model is configured")
    ask = "Write the gist of this settled work."
    if instructions:
        ask += f" Also follow these instructions: {instructions}"
    request = ModelRequest(
        model=model,
        system=GIST_SYSTEM,
        messages=(Message("user", f"{ask}\n\n{folded_text(turns)}"),),
        max_tokens=GIST_MAX_TOKENS,
    )
    chunks: list[str] = []
    usage = Usage()
    try:
        async for item in provider.stream(request):
            if isinstance(item, TextDelta):
                chunks.append(item.text)
            elif isinstance(item, UsageUpdate):
                usage = usage + item.usage
    except ProviderError as exc:
        return WrittenGist(mechanical_gist(turns), False, str(exc), usage)
    text = "".join(chunks).strip()
    if not text:
        return WrittenGist(mechanical_gist(turns), False, "the model wrote no text", usage)
    return WrittenGist(text, True, None, usage)

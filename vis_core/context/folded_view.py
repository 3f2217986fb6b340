"""What a fold took out of the model's context, read back from the stored history for people."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vis_core.context.keys import describe_spans
from vis_core.tools.display import plural

SHOWN_LINES = 6  # of each request, code, output and answer (the transcript has them whole)
SHOWN_CHARS = 400
SHOWN_TURNS = 30  # of a fold over many turns: the first ones, then how many more


def _cut(text: str, indent: str) -> list[str]:
    text = text.strip("\n")
    if len(text) > SHOWN_CHARS:
        text = text[: SHOWN_CHARS - 1] + "…"
    lines = text.splitlines() or [""]
    if len(lines) > SHOWN_LINES:
        lines = [*lines[:SHOWN_LINES], f"… {plural(len(lines) - SHOWN_LINES, 'more line')}"]
    return [indent + line for line in lines]


def folded_story(store: Any, session_id: str, spans: Sequence[Sequence[int]]) -> str:
    """The folded turns and steps of ``spans`` as plain text: a whole turn's request, each
    step's code and output, and the answer; a range only its steps. Stored history never
    changes, so this is what left the model's context when the fold was made."""
    wanted: dict[int, tuple[int, int] | None] = {}
    for position, first, last in spans:
        wanted[int(position)] = None if first == 0 else (int(first), int(last))
    lines = [f"Left the model's context ({describe_spans(spans)}); the history keeps it:"]
    folded = [turn for turn in store.turns(session_id) if turn.position in wanted]
    for turn in folded[:SHOWN_TURNS]:
        steps = wanted[turn.position]
        whole = steps is None
        title = f"t{turn.position}" if whole else describe_spans([(turn.position, *steps)])
        lines.append("")
        lines.append(f"{title} › {turn.request.splitlines()[0] if turn.request else ''}".rstrip())
        if whole and "\n" in turn.request.strip():
            lines += _cut(turn.request.split("\n", 1)[1], "    ")
        for iteration in store.iterations(turn.id):
            if steps is not None and not steps[0] <= iteration.index <= steps[1]:
                continue
            code = iteration.code or str(iteration.arguments or "")
            lines.append(f"  i{iteration.index} {iteration.tool}")
            lines += _cut(code, "    ")
            for block in iteration.blocks:
                output = "\n".join(t for t in (block.stdout, block.error or "") if t.strip())
                shown = _cut(output or "(no output)", "      ")
                lines += ["    → " + shown[0].lstrip(), *shown[1:]]
        answer = turn.content if whole else ""
        if answer.strip():
            lines.append("  answer")
            lines += _cut(answer, "    ")
    if len(folded) > SHOWN_TURNS:
        more = len(folded) - SHOWN_TURNS
        lines += [
            "",
            f"… and {plural(more, 'more turn')} up to t{folded[-1].position}: "
            "the transcript has them.",
        ]
    return "\n".join(lines)

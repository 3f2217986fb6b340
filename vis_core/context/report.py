"""``/context``: what the next request will carry, with token estimates and the measurements."""

from __future__ import annotations

import json
from typing import Any

from vis_core.context.folding import message_chars
from vis_core.context.keys import describe_spans
from vis_core.providers.common import estimate_tokens
from vis_core.store.folds import MeasurementStatus
from vis_core.text_limits import one_line
from vis_core.tools.display import plural


def _tokens(chars: int) -> str:
    return f"~{estimate_tokens(chars):,}"


def context_report(session: Any, folds: list[Any], prompt: str) -> str:
    """Markdown: system prompt, tools, turns and folds of the next request, then the budget.

    ``folds`` are the session's stored fold rows (with their measurements), oldest first;
    ``prompt`` is the next request's system prompt.
    """
    request = session.build_request(prompt)
    conversation = session.conversation
    system = len(request.system)
    tools = sum(
        len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in request.tools
    )
    carried = message_chars(request.messages)
    full = message_chars(conversation.messages)
    turns = len(conversation.turns)
    gists = [m for m in request.messages if m.role == "user" and m.text.startswith("[folded ")]
    lines = [
        "| part | tokens (estimate) |",
        "| --- | ---: |",
        f"| system prompt | {_tokens(system)} |",
        f"| tools ({len(request.tools)}) | {_tokens(tools)} |",
        f"| turns ({turns}, {plural(len(request.messages), 'message')}) | {_tokens(carried)} |",
        f"| of which gists ({len(gists)}) | {_tokens(message_chars(gists))} |",
        f"| **next request** | **{_tokens(system + tools + carried)}** |",
        "",
    ]
    instructions = getattr(session, "instructions", None)
    if instructions is not None and instructions.files:
        named = ", ".join(
            f"`{item.label(instructions.workspace)}` (~{item.tokens:,} tokens)"
            for item in instructions.files
        )
        lines += [f"Instructions in the system prompt: {named}.", ""]
    if full > carried:
        lines.append(
            f"Folds keep {_tokens(full - carried)} tokens of stored history out of the request."
        )
    utilization = session.utilization()
    limit, budget = utilization["model_input_limit"], utilization["auto_compress_above"]
    lines.append(
        f"Latest measured input: {utilization['latest_measured_input_tokens']:,} tokens; soft "
        "budget (auto_compress_above): "
        # the budget is the model's: a session resumed without one has none
        f"{f'{budget:,}' if budget else 'none (no model)'}; model input "
        f"limit: {f'{limit:,}' if limit else 'unknown'}."
    )
    if "hint" in utilization:
        lines.append(f"Hint: {utilization['hint']}")
    if folds:
        lines += [
            "",
            "| fold | by | covers | gist | measurement |",
            "| --- | --- | --- | --- | --- |",
        ]
        for row in folds:
            lines.append(
                f"| `{row.key}` | {row.origin} | {describe_spans(row.spans)} | "
                f"{_cell(row.gist) or '(none)'} | {_measurement(row.measurement())} |"
            )
    else:
        lines += ["", "No folds yet: every settled step is in the request."]
    return "\n".join(lines)


def _cell(text: str, limit: int = 60) -> str:
    return one_line(text.replace("|", "\\|"), limit)


def _measurement(data: dict[str, Any]) -> str:
    if data["status"] == MeasurementStatus.MEASURED:
        return (
            f"measured: {data['before_input_tokens']:,} → {data['after_input_tokens']:,} "
            f"(net {data['net_reduction_tokens']:,}, {plural(data['fold_count'], 'fold')})"
        )
    if data["status"] == MeasurementStatus.UNAVAILABLE:
        return f"unavailable: {data['reason']}"
    return "pending"

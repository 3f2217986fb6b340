"""Vis events as ACP session updates: answer and thinking chunks, tool calls, the plan, usage."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import Cost, ToolCallLocation, UsageUpdate

from vis_core.acp.diffs import old_and_new
from vis_core.acp.markdown import fenced, literal, literal_line
from vis_core.acp.terminals import EditorTerminals
from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    ActivityUpdated,
    AssistantDelta,
    AssistantThinking,
    BlockFinished,
    Event,
    IterationStarted,
    Notification,
    TurnEnded,
    UsageReported,
)
from vis_core.model.activity import (
    ActivityCode,
    ActivityDiff,
    ActivityMarkdown,
    ActivityRecord,
    ActivityState,
    ActivityTable,
    ActivityTerminal,
    ActivityText,
    SymbolTag,
)
from vis_core.model.block import PYTHON_EXECUTION, first_code_line
from vis_core.model.turn import TurnStatus

TODO_OWNER = "todo"  # the bundled todo extension: its list is the session's plan
_KINDS = {
    "cat": "read",
    "ls": "read",
    "grep": "search",
    "patch": "edit",
    "shell": "execute",
    "run_tests": "execute",
    "fold_session": "think",
}
_TAG_KINDS = {
    SymbolTag.OBSERVATION: "read",
    SymbolTag.MUTATION: "edit",
    SymbolTag.VERIFICATION: "execute",
    SymbolTag.EXTERNAL: "fetch",
}
_STATUS = {
    ActivityState.RUNNING: "in_progress",
    ActivityState.SUCCEEDED: "completed",
    ActivityState.FAILED: "failed",
    ActivityState.CANCELLED: "failed",
}


def tool_kind(record: ActivityRecord) -> str:
    """The ACP kind of an Activity: by Vis's own tool name, else by its tag."""
    if record.owner == "vis" and record.tool in _KINDS:
        return _KINDS[record.tool]
    return _TAG_KINDS.get(record.tag, "other")


class UpdateMaker:
    """Turns one session's events into ACP updates. ``root``: the workspace (locations are
    absolute); ``todos``: the todo list as ``(text, done)`` pairs, read when it changed."""

    def __init__(
        self,
        root: Path,
        todos: Callable[[], list[tuple[str, bool]]],
        terminals: EditorTerminals | None = None,
    ) -> None:
        self.root = root
        self.todos = todos
        self.terminals = terminals  # the editor's terminals show commands (else text)
        self.live_thinking = False  # thinking streamed as it came: its stored block is not sent
        self._started: set[str] = set()
        self._code: dict[str, str] = {}
        self.cost = 0.0  # the session's cost so far (side calls and child sessions too)

    def __call__(self, event: Event) -> list[Any]:
        if isinstance(event, AssistantDelta) and event.text:
            return [update_agent_message_text(event.text)]
        if isinstance(event, AssistantThinking) and event.text and not self.live_thinking:
            return [update_agent_thought_text(event.text)]
        if isinstance(event, IterationStarted):
            return [self._block_started(event)]
        if isinstance(event, BlockFinished) and event.iteration_id in self._code:
            return [self._block_finished(event)]
        if isinstance(event, ActivityStarted | ActivityUpdated | ActivityEnded):
            return self._activity(event.activity)
        if isinstance(event, UsageReported):
            return self._usage(event)
        if isinstance(event, Notification) and not event.transient:
            return [update_agent_thought_text(f"\n{literal(f'[{event.kind}] {event.text}')}\n")]
        if (
            isinstance(event, TurnEnded)
            and event.error
            and event.status is not TurnStatus.CANCELLED
        ):
            said = literal(f"Vis: {event.status.value}: {event.error}")
            return [update_agent_message_text(f"\n\n{said}\n")]
        return []

    def _usage(self, event: UsageReported) -> list[Any]:
        """The context in use against the model's limit, with the session's cost so far
        (nothing while the limit is unknown)."""
        self.cost += event.cost
        if not event.purpose.measures_context or event.context_limit <= 0:
            return []
        return [
            UsageUpdate(
                session_update="usage_update",
                used=max(event.context_tokens, 0),
                size=event.context_limit,
                cost=Cost(amount=round(self.cost, 6), currency="USD"),
            )
        ]

    # -- blocks -----------------------------------------------------------------------------
    def _block_started(self, event: IterationStarted) -> Any:
        if event.tool != PYTHON_EXECUTION:
            self._code[event.iteration_id] = ""
            return start_tool_call(
                event.iteration_id,
                literal_line(event.tool),
                kind="other",
                status="in_progress",
                raw_input=event.arguments,
            )
        self._code[event.iteration_id] = event.code
        return start_tool_call(
            event.iteration_id,
            literal_line(f"python: {first_code_line(event.code)}"),
            kind="execute",
            status="in_progress",
            content=[tool_content(text_block(fenced(event.code, "python")))],
            raw_input={"code": event.code},
        )

    def _block_finished(self, event: BlockFinished) -> Any:
        code = self._code.pop(event.iteration_id)
        content: list[Any] = []
        if code:
            content.append(tool_content(text_block(fenced(code, "python"))))
        if event.stdout:
            content.append(tool_content(text_block(fenced(event.stdout))))
        if event.error:
            content.append(tool_content(text_block(fenced(event.error))))
        locations = []
        for change in event.files:
            path = self._absolute(change.path)
            if self._inside(path):  # a link the block made to a file outside is not opened
                locations.append(ToolCallLocation(path=path))
            if change.diff:
                old, new = old_and_new(change.diff)
                content.append(tool_diff_content(path, new, old))
            else:
                said = f"{change.kind.value}: {change.path}" + (
                    f" ({change.note})" if change.note else ""
                )
                content.append(tool_content(text_block(literal(said))))
        return update_tool_call(
            event.iteration_id,
            status="failed" if event.error else "completed",
            content=content,
            locations=locations or None,
            raw_output={"stdout": event.stdout, "error": event.error},
        )

    # -- Activities -------------------------------------------------------------------------
    def _activity(self, record: ActivityRecord | None) -> list[Any]:
        if record is None:
            return []
        p = record.presentation
        title = p.headline if p is not None and p.headline else record.tool
        if p is not None and p.summary:
            title = f"{title}: {p.summary}"
        title = literal_line(title)
        content, locations = self._content(record)
        shown = self._terminal_items(record)
        if shown:
            return [self._in_terminals(record, title, content, locations, shown)]
        return self._tool_call(record, title, content, locations)

    def _terminal_items(self, record: ActivityRecord) -> list[ActivityTerminal]:
        p = record.presentation
        if self.terminals is None or p is None:
            return []
        return [item for item in p.content if isinstance(item, ActivityTerminal)]

    def _in_terminals(
        self,
        record: ActivityRecord,
        title: str,
        content: list[Any],
        locations: list[ToolCallLocation],
        items: list[ActivityTerminal],
    ) -> Callable[[], Awaitable[list[Any]]]:
        """The tool call with each command in an editor terminal in place of its text; made
        when it is sent (the terminal is created then)."""
        terminals = self.terminals
        assert terminals is not None
        texts = {id(item): self._terminal_text(item) for item in items}

        async def made() -> list[Any]:
            shown = []
            for index, item in enumerate(items):
                final = record.state is not ActivityState.RUNNING
                ref = await terminals.show(f"{record.id}/{index}", item, final=final)
                shown.append(ref)
            kept = [c for c in content if not _is_text_of(c, texts.values())]
            refs = [r for r in shown if r is not None]
            fallback = [c for c in content if _is_text_of(c, texts.values())] if not refs else []
            return self._tool_call(record, title, [*refs, *fallback, *kept], locations)

        return made

    def _tool_call(
        self,
        record: ActivityRecord,
        title: str,
        content: list[Any],
        locations: list[ToolCallLocation],
    ) -> list[Any]:
        status = _STATUS[record.state]
        updates: list[Any] = []
        if record.id not in self._started:
            self._started.add(record.id)
            updates.append(
                start_tool_call(
                    record.id,
                    title,
                    kind=tool_kind(record),  # type: ignore[arg-type]
                    status=status,  # type: ignore[arg-type]
                    content=content or None,
                    locations=locations or None,
                )
            )
        else:
            updates.append(
                update_tool_call(
                    record.id,
                    title=title,
                    status=status,  # type: ignore[arg-type]
                    content=content or None,
                    locations=locations or None,
                )
            )
        if record.state is not ActivityState.RUNNING and record.owner == TODO_OWNER:
            updates.append(self.plan())
        return updates

    def plan(self) -> Any:
        """The todo list as the session's plan (done items completed, the first open one in
        progress)."""
        entries = []
        current = True
        for text, done in self.todos():
            status = "completed" if done else "in_progress" if current else "pending"
            current = current and done
            entries.append(plan_entry(literal_line(text), status=status))  # type: ignore[arg-type]
        return update_plan(entries)

    def _content(self, record: ActivityRecord) -> tuple[list[Any], list[ToolCallLocation]]:
        p = record.presentation
        content: list[Any] = []
        paths: list[str] = []
        items = list(p.content) if p is not None else []
        for section in p.sections if p is not None else ():
            items.append(ActivityText(f"{section.headline}: {section.summary}"))
            items.extend(section.content)
        for item in items:
            if isinstance(item, ActivityDiff):
                if item.path:
                    path = self._absolute(item.path)
                    paths.append(path)
                    old, new = old_and_new(item.diff)
                    content.append(tool_diff_content(path, new, old))
                else:
                    content.append(tool_content(text_block(fenced(item.diff, "diff"))))
            elif isinstance(item, ActivityTerminal):
                content.append(tool_content(text_block(self._terminal_text(item))))
            elif isinstance(item, ActivityCode):
                if item.path:
                    paths.append(self._absolute(item.path))
                content.append(tool_content(text_block(fenced(item.code, item.language))))
            elif isinstance(item, ActivityText):
                content.append(tool_content(text_block(literal(item.text))))
            elif isinstance(item, ActivityMarkdown):
                content.append(tool_content(text_block(item.markdown)))
            elif isinstance(item, ActivityTable):
                rows = [" | ".join(item.headers), *(" | ".join(row) for row in item.rows)]
                content.append(tool_content(text_block(literal("\n".join(rows)))))
                paths.extend(self._absolute(path) for path in item.paths or ())
        failed = record.state is ActivityState.FAILED
        if p is not None and record.owner == "vis" and record.tool in ("cat", "ls") and not failed:
            named = self._named_path(p.summary)
            if named is not None:
                paths.insert(0, named)
        if record.error and failed:
            content.append(tool_content(text_block(literal(record.error))))
        # an editor that follows the agent opens each location: only the workspace's files
        shown = [path for path in dict.fromkeys(paths) if self._inside(path)]
        return content, [ToolCallLocation(path=path) for path in shown]

    def _inside(self, path: str) -> bool:
        """Whether ``path`` is in the workspace, its links followed."""
        root = os.path.realpath(self.root)
        return os.path.commonpath([root, os.path.realpath(path)]) == root

    @staticmethod
    def _terminal_text(item: ActivityTerminal) -> str:
        lines = "".join(line.text + "\n" for line in item.lines)
        exit_line = f"\n(exit {item.exit})" if item.exit is not None else ""
        return fenced(f"$ {item.command_as_run()}\n{lines}".rstrip() + exit_line)

    def _named_path(self, summary: str) -> str | None:
        """The file a ``cat``/``ls`` summary starts with (``README.md @2 · 3 lines``), when
        it names one that exists (a long name is shortened with an ellipsis)."""
        name = summary.split(" @", 1)[0].split(": ", 1)[0].strip()
        if not name or "…" in name:
            return None
        path = self._absolute(name)
        return path if os.path.lexists(path) else None

    def _absolute(self, path: str) -> str:
        return os.path.normpath(self.root / path)


def _is_text_of(content: Any, texts: Iterable[str]) -> bool:
    """Whether tool call ``content`` is the text of one of the commands."""
    text = getattr(getattr(content, "content", None), "text", None)
    return text is not None and text in set(texts)

"""The status bar: workspace, session title, model, context use, tokens, cost and turn state."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from vis_core.extension_host.activity_paths import shorten_path
from vis_core.model.usage import Usage


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    if count >= 1000:
        return f"{count / 1000:.1f}k"
    return str(count)


class StatusBar(Static):
    """One line at the bottom of the main screen."""

    DEFAULT_CSS = "StatusBar { height: 1; padding: 0 1; background: $panel; color: $text; }"

    workspace: reactive[str] = reactive("")
    title: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    running: reactive[bool] = reactive(False)
    queued: reactive[int] = reactive(0)
    tokens: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    context_tokens: reactive[int] = reactive(0)
    context_limit: reactive[int] = reactive(0)

    def set_workspace(self, path: Path) -> None:
        self.workspace = shorten_path(str(path), "/nonexistent-workspace")

    def add_usage(self, usage: Usage, cost: float, context_tokens: int, context_limit: int) -> None:
        self.tokens += usage.total
        self.cost += cost
        if context_limit:
            self.context_tokens, self.context_limit = context_tokens, context_limit

    def set_totals(self, tokens: int, cost: float, context_tokens: int, context_limit: int) -> None:
        self.tokens, self.cost = tokens, cost
        self.context_tokens, self.context_limit = context_tokens, context_limit

    def render(self) -> Content:
        full = self._line(compact=False)
        width = self.size.width - 2
        return full if width <= 0 or full.cell_length <= width else self._line(compact=True)

    def _line(self, *, compact: bool) -> Content:
        sep = (" │ " if not compact else "│", "$text-muted")
        # the share as session["utilization"]'s hint words it (whole percent, rounded down)
        context = (
            f"{self.context_tokens * 100 // self.context_limit}% context"
            if self.context_limit
            else "–% context"
        )
        state: tuple[str, str]
        if self.running:
            state = ("● running", "$text-accent")
        else:
            state = ("○ ready", "$text-muted")
        workspace = self.workspace.rstrip("/").rsplit("/", 1)[-1] if compact else self.workspace
        parts: list[Content | tuple[str, str] | str] = [(workspace or "/", "bold"), sep]
        if not compact:
            parts.extend([self.title or "new session", sep])
        parts.extend(
            [
                (self.model, "$text-warning" if self.model == "no model" else ""),
                sep,
                context.replace(" context", "") if compact else context,
                sep,
                f"{_tokens(self.tokens)}{' tok' if compact else ' tokens'}",
                sep,
                f"${self.cost:.2f}",
                sep,
                state,
            ]
        )
        if self.queued:
            parts.extend([sep, (f"{self.queued} queued", "$text-warning")])
        return Content.assemble(*parts)

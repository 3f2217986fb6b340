"""The status bar: workspace, session title, model, context use, tokens, cost and turn state."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from vis_core.frontend import plural, shorten_path
from vis_core.model.usage import Usage

_LEFT_OUT_FIRST = ("cost", "tokens", "context", "model")  # where the status line is narrow

# What the bar's signs say, for the help screen (F1).
SIGNS: tuple[tuple[str, str], ...] = (
    (
        "✎ draft LABEL · N files",
        "the session works in a draft, an isolated copy of the workspace, and N files differ "
        "from it; /draft shows, approves or discards it (the label is left out where narrow)",
    ),
    ("◇ plan mode", "the model plans and changes nothing until you approve (/plan)"),
    ("N% context", "how much of the model's context budget the next request fills"),
    ("● running, ○ ready", "a turn runs (Esc cancels it); Vis waits for your request"),
    ("◌ N background commands", "commands the model left running (◌ N bg where narrow)"),
    ("N queued", "your messages waiting for the running turn to end"),
)


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 10_000:
        return f"{count / 1000:.0f}k"
    if count >= 1000:
        return f"{count / 1000:.1f}k"
    return str(count)


MIN_TITLE_CELLS = 12  # a title cut shorter than this says too little to keep


def _cut_title(title: str, cells: int) -> Content:
    """``title`` in ``cells``, cut with an ellipsis before a last "(fork)" it keeps: a fork
    shows it is one."""
    head, paren, tail = title.rpartition(" (")
    suffix = Content(f"{paren}{tail}")
    if head and tail.endswith(")") and cells - suffix.cell_length >= MIN_TITLE_CELLS // 2:
        return Content(head).truncate(cells - suffix.cell_length, ellipsis=True) + suffix
    return Content(title).truncate(cells, ellipsis=True)


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
    draft: reactive[str] = reactive("")  # the label of the draft the session works in
    draft_files: reactive[int] = reactive(0)  # its files that differ from the target
    planning: reactive[bool] = reactive(False)  # plan mode: the model changes nothing
    background: reactive[int] = reactive(0)  # commands an ended block left running
    starting: reactive[str] = reactive("")  # what the start waits for; "" once ready

    class Starting(Message):
        """The start is at ``step`` (``loading extensions…``); "" once the session is shown."""

        def __init__(self, step: str) -> None:
            super().__init__()
            self.step = step

    def on_status_bar_starting(self, message: Starting) -> None:
        self.starting = message.step

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
        width = self.size.width - 2
        full = self._line(compact=False)
        if width <= 0 or full.cell_length <= width:
            return full
        # Before the line turns compact (and drops the title), the workspace shows only its
        # folder's name and a long title is cut with an ellipsis.
        for short_workspace in (False, True):
            line = self._line(compact=False, short_workspace=short_workspace)
            room = Content(self.title).cell_length - (line.cell_length - width)
            if line.cell_length <= width:
                return line
            if self.title and room >= MIN_TITLE_CELLS:
                return self._line(compact=False, short_workspace=short_workspace, title_cells=room)
        # Compact, then without the cost, the tokens, the context share and the model, in
        # that order: what the session is doing (running, queued) stays in view.
        for left_out in range(len(_LEFT_OUT_FIRST) + 1):
            line = self._line(compact=True, left_out=_LEFT_OUT_FIRST[:left_out])
            if line.cell_length <= width:
                break
        return line

    def _line(
        self,
        *,
        compact: bool,
        short_workspace: bool = False,
        title_cells: int | None = None,
        left_out: tuple[str, ...] = (),
    ) -> Content:
        sep = (" │ " if not compact else "│", "$text-muted")
        # the share as session["utilization"]'s hint words it (a whole percent, rounded down
        # but never to 100 % above the budget)
        context = "–% context"
        if self.context_limit:  # once a model is known: the first frame imports none of it
            from vis_core.frontend import percent

            context = f"{percent(self.context_tokens, self.context_limit)}% context"
        state: tuple[str, str]
        if self.running:
            state = ("● running", "$text-accent")
        elif self.starting:
            state = (f"◌ {self.starting}", "$text-warning")
        else:
            state = ("○ ready", "$text-muted")
        workspace = self.workspace
        if compact or short_workspace:
            workspace = workspace.rstrip("/").rsplit("/", 1)[-1]
        parts: list[Content | tuple[str, str] | str] = [(workspace or "/", "bold"), sep]
        if self.planning:
            parts.extend([("◇ plan" if compact else "◇ plan mode", "$text-warning"), sep])
        if self.draft:
            # the word stays where narrow: "✎1" said nothing to a newcomer
            label = "✎ draft" if compact else f"✎ draft {self.draft}"
            files = plural(self.draft_files, "file")
            parts.extend([(f"{label} · {files}", "$text-warning"), sep])
        if not compact:
            title = Content(self.title or "new session")
            if title_cells is not None:
                title = _cut_title(self.title, title_cells)
            parts.extend([title, sep])
        figures: dict[str, Content | tuple[str, str] | str] = {}
        if self.model:  # not known until the core is open
            figures["model"] = (self.model, "$text-warning" if self.model == "no model" else "")
        figures["context"] = context.replace(" context", "") if compact else context
        figures["tokens"] = f"{_tokens(self.tokens)}{' tok' if compact else ' tokens'}"
        figures["cost"] = f"${self.cost:.2f}"
        for name, figure in figures.items():
            if name not in left_out:
                parts.extend([figure, sep])
        parts.append(state)
        if self.background:
            count = (
                f"{self.background} bg"
                if compact
                else plural(self.background, "background command")
            )
            parts.extend([sep, (f"◌ {count}", "$text-accent")])
        if self.queued:
            parts.extend([sep, (f"{self.queued} queued", "$text-warning")])
        return Content.assemble(*parts)

"""Sample turns (every block type, a failed verification) for TUI tests, snapshots, benches;
the conversation a list of events makes."""

from __future__ import annotations

from collections.abc import Iterable

from vis_core.agent.conversation import ConversationBuilder, ImageLoader
from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    AssistantDelta,
    AssistantMessage,
    BlockFinished,
    Event,
    IterationStarted,
    TurnEnded,
    TurnStarted,
)
from vis_core.model.activity import (
    ActivityAudio,
    ActivityCode,
    ActivityDiff,
    ActivityFile,
    ActivityHeading,
    ActivityImage,
    ActivityMarkdown,
    ActivityPresentation,
    ActivityProgress,
    ActivityRecord,
    ActivitySection,
    ActivityState,
    ActivityTable,
    ActivityTerminal,
    ActivityTerminalLine,
    ActivityText,
    ActivityVideo,
    SymbolTag,
)
from vis_core.model.conversation import Message
from vis_core.model.turn import TurnStatus

CLOCK = 1_700_000_000.0


def record(
    activity_id: str,
    presentation: ActivityPresentation | None,
    *,
    session_id: str = "demo",
    turn_id: str = "t1",
    tag: SymbolTag = SymbolTag.OBSERVATION,
    state: ActivityState = ActivityState.SUCCEEDED,
    tool: str = "tool",
    handle_id: str | None = None,
    error: str | None = None,
) -> ActivityRecord:
    """An Activity row with fixed clock values (snapshots stay stable)."""
    return ActivityRecord(
        id=activity_id,
        session_id=session_id,
        turn_id=turn_id,
        iteration_id="i1",
        tool=tool,
        tag=tag,
        state=state,
        presentation=presentation,
        started_at=CLOCK,
        ended_at=None if state is ActivityState.RUNNING else CLOCK + 1.5,
        handle_id=handle_id,
        error=error,
    )


DIFF = """--- a/src/app.py
+++ b/src/app.py
@@ -10,4 +10,4 @@ def main():
     config = load()
-    run(config)
+    run(config, verbose=True)
     return 0
"""


def every_block_records(
    workspace: str = "/work/project", turn_id: str = "t1"
) -> list[ActivityRecord]:
    """One Activity per block family, plus sections, a handle and a running terminal."""
    p = ActivityPresentation
    return [
        record(
            "a1",
            p(
                "Read",
                "src/app.py · 42 lines",
                content=(
                    ActivityCode(
                        "def main():\n    return run(load())\n", "python", f"{workspace}/src/app.py"
                    ),
                ),
            ),
            turn_id=turn_id,
            tool="cat",
        ),
        record(
            "a2",
            p(
                "Patched",
                "src/app.py · +1 −1",
                content=(ActivityDiff(DIFF, f"{workspace}/src/app.py"),),
                aside="1.2 s",
            ),
            turn_id=turn_id,
            tag=SymbolTag.MUTATION,
            tool="patch",
        ),
        record(
            "a3",
            p(
                "Searched",
                "3 matches for `load(` in [src](src/app.py)",
                summary_format="markdown",
                content=(
                    ActivityTable(
                        ("file", "line", "text"),
                        (
                            ("src/app.py", "10", "config = load()"),
                            ("src/cli.py", "4", "from app import load"),
                            ("docs/usage.md", "12", "call load() first"),
                        ),
                        paths=(f"{workspace}/src/app.py", f"{workspace}/src/cli.py", ""),
                    ),
                ),
            ),
            turn_id=turn_id,
            tool="grep",
        ),
        record(
            "a4",
            p(
                "Notes",
                "",
                outcome="heading, text and Markdown",
                content=(
                    ActivityHeading("What changed"),
                    ActivityText(f"The config in {workspace}/src/app.py is now verbose."),
                    ActivityMarkdown("- **verbose** logging\n- see `run()`"),
                ),
            ),
            turn_id=turn_id,
            tool="notes",
        ),
        record(
            "a5",
            p("Indexing", "7 of 10 files", content=(ActivityProgress(7, 10, "files"),)),
            turn_id=turn_id,
            tool="index",
        ),
        record(
            "a6",
            p(
                "Ran pytest",
                "2 passed",
                verdict="passed",
                content=(
                    ActivityTerminal(
                        ("pytest -q", "| tail -n 3"),
                        (
                            ActivityTerminalLine("..", "stdout"),
                            ActivityTerminalLine("DeprecationWarning: old API", "stderr"),
                            ActivityTerminalLine("2 passed in 0.12s", "stdout"),
                        ),
                        exit=0,
                        omitted_lines=12,
                    ),
                ),
            ),
            turn_id=turn_id,
            tag=SymbolTag.VERIFICATION,
            tool="shell",
        ),
        record(
            "a7",
            p(
                "Attachments",
                "4 files",
                content=(
                    ActivityImage("chart.png", "Build times"),
                    ActivityVideo("demo.mp4"),
                    ActivityAudio("note.ogg", "voice note"),
                    ActivityFile("report.pdf"),
                ),
            ),
            turn_id=turn_id,
            tool="attach",
        ),
        record(
            "a8",
            p(
                "Reviewed",
                "2 sections",
                sections=(
                    ActivitySection(
                        "Style", "no problems", (ActivityText("All files follow the style."),)
                    ),
                    ActivitySection("Types", "1 warning", (ActivityText("app.py:10 returns Any"),)),
                ),
            ),
            turn_id=turn_id,
            tool="review",
        ),
        record(
            "a9",
            p("Server", "started on :8000", handle_id="srv"),
            turn_id=turn_id,
            tool="shell",
            handle_id="srv",
            tag=SymbolTag.EXTERNAL,
        ),
        record(
            "a10",
            p("Server", "", outcome="answered 3 requests", handle_id="srv"),
            turn_id=turn_id,
            tool="shell",
            handle_id="srv",
            tag=SymbolTag.EXTERNAL,
        ),
        record(
            "a11",
            p(
                "Building",
                "make all",
                content=(
                    ActivityTerminal(
                        ("make all",),
                        tuple(ActivityTerminalLine(f"compiling part {n}") for n in range(1, 6)),
                    ),
                ),
            ),
            turn_id=turn_id,
            state=ActivityState.RUNNING,
            tool="shell",
        ),
    ]


def failed_verification_record(turn_id: str = "t2") -> ActivityRecord:
    return record(
        "f1",
        ActivityPresentation(
            "Ran pytest",
            "1 failed, 4 passed",
            verdict="failed",
            content=(
                ActivityTerminal(
                    ("pytest -q",),
                    (
                        ActivityTerminalLine(
                            "FAILED tests/test_app.py::test_run - AssertionError", "stderr"
                        ),
                        ActivityTerminalLine("1 failed, 4 passed in 0.30s"),
                    ),
                    exit=1,
                ),
                ActivityTable(
                    ("test", "error"),
                    (("tests/test_app.py::test_run", "AssertionError"),),
                    paths=("tests/test_app.py",),
                ),
            ),
        ),
        turn_id=turn_id,
        tag=SymbolTag.VERIFICATION,
        state=ActivityState.FAILED,
        tool="shell",
        error="pytest exited with status 1",
    )


def turn_events(
    session_id: str,
    turn_id: str,
    request: str,
    answer: str,
    records: list[ActivityRecord],
    *,
    position: int = 1,
    status: TurnStatus = TurnStatus.COMPLETED,
) -> list[Event]:
    """A whole turn: start, streamed answer, one iteration with ``records``, the end."""
    events: list[Event] = [
        TurnStarted(session_id, turn_id=turn_id, position=position, request=request),
        AssistantDelta(session_id, turn_id=turn_id, text=answer),
        AssistantMessage(session_id, turn_id=turn_id, iteration=0, text=answer),
        IterationStarted(session_id, turn_id=turn_id, iteration_id="i1", index=0, code="..."),
    ]
    for rec in records:
        events.append(ActivityStarted(session_id, activity=rec))
        if rec.state is not ActivityState.RUNNING:
            events.append(ActivityEnded(session_id, activity=rec))
    if status is not TurnStatus.RUNNING:
        events.append(BlockFinished(session_id, turn_id=turn_id, iteration_id="i1", duration=0.4))
        events.append(TurnEnded(session_id, turn_id=turn_id, status=status, content=answer))
    return events


def conversation_of(
    events: Iterable[Event], load_image: ImageLoader | None = None
) -> list[Message]:
    """The conversation ``events`` make, as a session's builder makes it from its events."""
    builder = ConversationBuilder(load_image)
    for event in events:
        builder.add(event)
    return builder.messages

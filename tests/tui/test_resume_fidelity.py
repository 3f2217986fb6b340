"""A session resumed shows what was shown live: the same lines, in the same order."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.app import VisApp
from vis_tui.widgets.answer import AnswerView
from vis_tui.widgets.stored_turn import StoredTurnView
from vis_tui.widgets.turn import TurnView

from .support import seen_after_resume, settled, started, until, vis_app, write_script


def _lines(app: VisApp, first: str = "› first") -> list[str]:
    """The transcript's text from the first request on (what the session shows)."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    lines = ["".join(seg.text for seg in strip).rstrip() for strip in strips]
    start = next(n for n, line in enumerate(lines) if first in line)
    end = next(
        n for n, line in enumerate(lines) if n > start and ("▔" in line or "No model is" in line)
    )
    shown = lines[start:end]
    while shown and not shown[-1].strip():
        shown.pop()
    return shown


async def test_a_turn_looks_the_same_live_and_after_resume(workspace: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        [
            {"text": "I'll look **first**.", "code": "await ls('.')\nawait shell('true')"},
            {
                "text": "Now the failing part.",
                "code": "await shell('false')\nraise ValueError('bad input" + " long" * 30 + "')",
            },
            {"text": "All **done**: one command failed."},
            {"text": "partial " * 300, "chunk": 5, "delay_ms": 20},
        ],
    )
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 60)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(
            pilot, lambda: not app.main.turn_running and len(app.main.transcript.turns) == 1
        )
        await type_keys(pilot, *"second", "enter")
        await until(pilot, lambda: "writing" in str(app.main.progress.render()))
        await until(pilot, lambda: any("partial partial" in a.text for a in _answers(app)))
        await pilot.press("escape")
        await until(pilot, lambda: not app.main.turn_running)
        await settled(pilot, lambda: app.main.transcript.virtual_size)
        app.main.transcript.scroll_home(animate=False)
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    resumed = await seen_after_resume(workspace, session_id, _lines, from_top=True)
    # on its block row, a line each (wider than the screen: cut, as the code lines are)
    assert any(line.strip().startswith("ValueError: bad input long") for line in live)
    assert [line[-1] for line in live if "ValueError" in line] == ["…"] * 2
    assert any("partial partial" in line for line in resumed)
    assert resumed == live


RICH_ANSWER = """## What changed

1. The parser keeps **state** between calls.
2. Errors name the file:
   - `src/app.py` for the app
   - `src/cli.py` for the command line

| file | lines | note |
| ---- | ----: | ---- |
| src/app.py | 120 | *parser* |
| src/cli.py | 48 | `main()` |

```python
def parse(text: str) -> list[str]:

    return text.split()  # a blank line above, inside the fence
```

> Run the tests again before you commit.

---

Done.
"""


async def test_an_answer_with_lists_a_table_and_a_fence_looks_the_same_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        [
            {"text": "Reading it.", "code": "await ls('.')"},
            {"text": RICH_ANSWER, "chunk": 7},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 80)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(
            pilot, lambda: not app.main.turn_running and len(app.main.transcript.turns) == 1
        )
        await until(pilot, lambda: all(a.source == a.text for a in app.main.query(AnswerView)))
        app.main.transcript.scroll_home(animate=False)
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    resumed_app = vis_app(workspace, resume=session_id)
    async with resumed_app.run_test(size=(100, 80)) as pilot:
        await started(resumed_app, pilot)
        await settled(pilot, lambda: resumed_app.main.transcript.virtual_size)
        resumed_app.main.transcript.scroll_home(animate=False)
        resumed = await settled(pilot, lambda: _lines(resumed_app))
        turn = next(iter(resumed_app.main.transcript.turns.values()))
        assert isinstance(turn, StoredTurnView)
        turn.post_message(StoredTurnView.Open(turn, None))  # as a click: the full turn
        turns = resumed_app.main.transcript.turns
        await until(pilot, lambda: isinstance(turns[turn.turn_id], TurnView))
        opened = await settled(pilot, lambda: _lines(resumed_app))
    shown = "\n".join(live)
    for piece in ("What changed", "src/cli.py", "120", "return text.split()", "Run the tests"):
        assert piece in shown
    assert resumed == live
    assert opened == live


def _answers(app: VisApp) -> list[AnswerView]:
    return list(app.main.query(AnswerView))


def _footers(app: VisApp) -> list[str]:
    """Each turn's step line (or "" when it has none), live or stored, in order."""
    lines = _lines(app)
    footers: list[str] = []
    for n, line in enumerate(lines):
        if line.lstrip().startswith("›"):
            below = lines[n + 1 :]
            nxt = next((i for i, text in enumerate(below) if "›" in text), len(below))
            tail = [text.strip() for text in below[:nxt] if text.strip()]
            steps = [text for text in tail if "mutation" in text or "observation" in text]
            footers.append(steps[-1] if steps else "")
    return footers


async def test_steps_count_rows_and_a_bang_command_has_none_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """A command started and waited on is one step (one row), not two; the person's own
    ``!command`` is not a step of the agent: no step line, live or resumed."""
    script = write_script(
        tmp_path,
        [
            {
                "text": "Checking.",
                "code": "await cat('notes.txt')\nsh = await shell('true')\nawait sh.wait()",
            },
            {"text": "Done."},
        ],
    )
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 60)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(
            pilot, lambda: not app.main.turn_running and len(app.main.transcript.turns) == 1
        )
        await type_keys(pilot, *"!echo hi", "enter")
        await until(
            pilot, lambda: not app.main.turn_running and len(app.main.transcript.turns) == 2
        )
        await settled(pilot, lambda: app.main.transcript.virtual_size)
        app.main.transcript.scroll_home(animate=False)
        live = await settled(pilot, lambda: _footers(app))
        session_id = app.session.id
    resumed = await seen_after_resume(workspace, session_id, _footers, from_top=True)
    assert live == ["1 mutation · 1 observation", ""]
    assert resumed == live


async def test_a_bang_command_shows_its_output_live_and_after_resume(workspace: Path) -> None:
    """The person ran ``!command`` to see what it prints: its row is open, the output on
    screen without a key press, and a resumed session shows the same lines. Its launch and
    the wait for it are one Activity: the row lists no "earlier" call (the launch is itself)."""
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"!echo first-line; echo err-line >&2; exit 3", "enter")
        await until(
            pilot, lambda: not app.main.turn_running and len(app.main.transcript.turns) == 1
        )
        live = await settled(pilot, lambda: _lines(app, "› !echo"))
        session_id = app.session.id
    resumed = await seen_after_resume(
        workspace, session_id, lambda resumed: _lines(resumed, "› !echo"), size=(100, 40)
    )
    output = [line.strip() for line in live]
    assert "first-line" in output, "the output is on screen, not only in the closed row"
    assert output[output.index("first-line") :][:3] == ["first-line", "err-line", "exit 3"]
    assert not any("Earlier on this handle" in line for line in live), live
    assert len([line for line in output if "Run command" in line]) == 1, live
    assert resumed == live


async def test_turns_that_end_in_an_answer_are_one_blank_line_apart(
    workspace: Path, tmp_path: Path
) -> None:
    """An answer's bottom margin and the turn's made two blank lines before the next request
    when a turn had no step line (most plain questions); now one, live and after resume."""
    script = write_script(tmp_path, [{"text": "First answer."}, {"text": "Second answer."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        for request, count in (("first", 1), ("second", 2)):
            await type_keys(pilot, *request, "enter")
            await until(
                pilot,
                lambda n=count: not app.main.turn_running and len(app.main.transcript.turns) == n,
            )
        await until(pilot, lambda: all(a.source == a.text for a in app.main.query(AnswerView)))
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    resumed = await seen_after_resume(workspace, session_id, _lines, size=(100, 40))
    answer = next(n for n, line in enumerate(live) if "First answer." in line)
    assert live[answer + 1] == "" and "› second" in live[answer + 2]
    assert resumed == live


async def test_a_cancelled_block_is_said_once_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """Esc while a block runs: the footer says the turn was cancelled; no second note
    "The code block stopped: the turn was cancelled" above it."""
    script = write_script(
        tmp_path, [{"text": "Waiting.", "code": "import asyncio\nawait asyncio.sleep(30)"}]
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: "running a block" in str(app.main.progress.render()))
        await pilot.press("escape")
        await until(pilot, lambda: not app.main.turn_running)
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    resumed = await seen_after_resume(workspace, session_id, _lines, size=(100, 40))
    assert [line.strip() for line in live if line.strip()][-1] == "Cancelled by the user."
    assert not any("code block stopped" in line for line in live)
    assert resumed == live


SLOW_WRITER = '''
import asyncio
import vis_core.extension as vis

async def slow_write() -> str:
    """Write slowly."""
    await asyncio.sleep(30)
    return "written"

vis.register_extension(vis.Extension(
    name="slowext", alias="slowext", description="Writes slowly.",
    symbols=[vis.Symbol(slow_write, tag="mutation")],
))
'''


async def test_a_cancelled_call_is_not_a_step_live_and_after_resume(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """Esc while a mutation runs: its row ends cancelled and the step line counts only the
    mutation that ran ("1 mutation", not "2 mutations"), live and after resume. A failed call
    still counts (see the first test: ``shell('false')`` is a step)."""
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "slowext.py").write_text(SLOW_WRITER, encoding="utf-8")
    code = "await shell('true')\nawait slowext.slow_write()"
    app = vis_app(workspace, write_script(tmp_path, [{"text": "Writing.", "code": code}]))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        turn = await until_turn(app, pilot)
        await until(
            pilot,
            lambda: any(
                r.tool.endswith("slow_write") and r.state.value == "running"
                for r in turn.records.values()
            ),
        )
        await pilot.press("escape")
        await until(pilot, lambda: not app.main.turn_running)
        live = await settled(pilot, lambda: _footers(app))
        states = sorted(r.state.value for r in turn.records.values())
        session_id = app.session.id
    assert states == ["cancelled", "succeeded"]
    assert live == ["1 mutation  Cancelled by the user."]
    resumed = await seen_after_resume(workspace, session_id, _footers, size=(100, 40))
    assert resumed == live


async def until_turn(app: VisApp, pilot: object) -> TurnView:
    await until(pilot, lambda: len(app.main.transcript.turns) == 1)  # type: ignore[arg-type]
    turn = next(iter(app.main.transcript.turns.values()))
    assert isinstance(turn, TurnView)
    return turn


async def test_a_row_that_changes_while_the_answer_streams_leaves_it_whole(
    workspace: Path, tmp_path: Path
) -> None:
    """A command of an earlier block ends while the next answer streams: its row shows the
    exit, and the answer goes on in the same place (it was cut in two: the text before the
    update, then the whole text again below), live as after resume."""
    command = "await shell('while [ ! -e go ]; do sleep 0.01; done; false')"
    script = write_script(
        tmp_path,
        [
            {"text": "Starting.", "code": command},
            {"text": "All **done**: one command failed. " * 300, "chunk": 5, "delay_ms": 20},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 60)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: "failed. All" in _streamed(app))
        (workspace / "go").touch()
        await until(pilot, lambda: any("exit 1" in line for line in _lines(app)))
        so_far = len(_streamed(app))
        await until(pilot, lambda: len(_streamed(app)) > so_far)  # text after the update
        await pilot.press("escape")
        await until(pilot, lambda: not app.main.turn_running)
        answers = [a.text for a in _answers(app)]
        await settled(pilot, lambda: app.main.transcript.virtual_size)
        app.main.transcript.scroll_home(animate=False)
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    resumed = await seen_after_resume(workspace, session_id, _lines, from_top=True)
    assert len(answers) == 2 and answers[1].startswith("All **done**"), answers
    assert resumed == live


def _streamed(app: VisApp) -> str:
    """The text of the answers shown so far."""
    return "".join(a.text for a in _answers(app))


def _opened_command(app: VisApp) -> list[str]:
    """The lines of the opened "Run command" row, from its header on."""
    lines = _lines(app)
    start = next(n for n, line in enumerate(lines) if "▾" in line and "Run command" in line)
    return [line.strip() for line in lines[start:]]


async def test_a_command_is_one_entry_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """``sh = await shell(…)`` then calls on ``sh``: the row shows the newest call and lists
    the calls in between under "Earlier on this handle", but not the launch, which the row
    is: it read "✓ Run command … · running (pid N)" under a command that had failed."""
    code = (
        "sh = await shell('read line; echo got $line; exit 1')\n"
        "await sh.type('go\\n')\n"
        "print(await sh.wait(30))"
    )
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "It failed."}]))
    async with app.run_test(size=(100, 60)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: "It failed." in "".join(a.text for a in _answers(app)))
        await until(pilot, lambda: not app.main.turn_running)
        turn = next(iter(app.main.transcript.turns.values()))
        assert isinstance(turn, TurnView)
        row = next(iter(turn.rows.values()))
        assert set(turn.rows.values()) == {row}, "the three calls share one row"
        row.focus()
        await pilot.press("enter")
        live = await settled(pilot, lambda: _opened_command(app))
        session_id = app.session.id

    def opened(resumed: VisApp) -> list[str]:
        view = next(iter(resumed.main.transcript.turns.values()))
        if isinstance(view, StoredTurnView):
            view.post_message(StoredTurnView.Open(view, view.rows[0].record.id))
            raise LookupError("not opened yet")
        return _opened_command(resumed)

    resumed = await seen_after_resume(workspace, session_id, opened)
    assert "✗ Run command" in live[0] and "waited · exit 1" in live[0], live
    earlier = live[live.index("Earlier on this handle") + 1 :]
    calls = [line for line in earlier if "Run command" in line]
    assert len(calls) == 1 and "typed 'go\\n'" in calls[0], earlier
    assert resumed == live

"""What the app's first frame waits for: the modules it imports, and the collector it hands back."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest
from processes import WATCH_IMPORTS, fresh_python

from vis_tui.widgets.system_message import SystemMessage

from .support import started, store_session, until, vis_app

# Loaded with the first answer, code block or Markdown message, or the session's first event
# (or once the session is shown).
LATER = (
    "markdown_it",
    "pygments",
    "rich.syntax",
    "rich.markdown",
    "textual.widgets._markdown",
    "vis_core.events",
)


def test_the_first_frame_imports_no_markdown_parser_highlighter_or_core_events() -> None:
    code = f"import sys, vis_tui.app; print(*(m for m in {LATER!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == []


@pytest.mark.usefixtures("python_collector")
async def test_the_collector_comes_back_once_the_host_is_open(workspace: Path) -> None:
    gc.disable()  # as `vis` starts the app (vis_core/cli.py)
    try:
        app = vis_app(workspace)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(app, pilot)
            assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()  # what the app set aside, for the tests after this one


@pytest.mark.usefixtures("python_collector")
async def test_the_collector_comes_back_when_the_host_cannot_open(workspace: Path) -> None:
    async def fail() -> None:
        raise OSError("the disk is full")

    gc.disable()
    try:
        app = vis_app(workspace, open_core=fail)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(
                pilot,
                lambda: any(
                    "could not start" in message.source
                    for message in app.main.transcript.query(SystemMessage)
                ),
            )
            assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()  # what the app set aside, for the tests after this one


PREPARED = """
import asyncio, sys
from pathlib import Path
from vis_core.host import HostOptions
from vis_tui.app import VisApp

async def main() -> None:
    app = VisApp(HostOptions(workspace=Path(sys.argv[1]), model="openai/gpt-5"), frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        before = "openai" in sys.modules
        await asyncio.wait_for(app.ready.wait(), 60)
        for _ in range(1000):
            if "openai" in sys.modules and "openai.types" in sys.modules:
                break
            await pilot.pause(0.02)
        print("at start:", before, "prepared:", "openai.types" in sys.modules)

asyncio.run(main())
"""


def test_the_models_sdk_is_imported_before_the_first_request(
    workspace: Path, vis_home: Path
) -> None:
    """``openai`` or ``anthropic`` takes 1–3 s to import: the app imports it in a thread once
    the session is shown, while the person types, not when the first request is sent (in a
    process of its own, where nothing else imported it)."""
    done = fresh_python(
        PREPARED, str(workspace), vis_home=vis_home, env={"OPENAI_API_KEY": "sk-test"}
    )
    assert done.stdout.strip() == "at start: False prepared: True", done.stderr[-2000:]


RESUMED = (
    WATCH_IMPORTS
    + """
import asyncio, re, sqlite3, sys, threading
from pathlib import Path

DRAWN_WITH = (
    "markdown_it", "pygments", "vis_tui.widgets.answer_markdown", "vis_tui.widgets.stored_turn"
)
# a session's turns and what they hold (not the count of its turns a session's row carries)
HISTORY = re.compile(
    r"(FROM|JOIN) (events|event_runs|iterations|activities|replies|thinking)\\b|FROM turns WHERE"
)

def on_loop():
    return threading.current_thread() is threading.main_thread()

watch_imports(DRAWN_WITH.__contains__)
_connect = sqlite3.connect

def connect(*args, **kwargs):
    conn = _connect(*args, **kwargs)
    def trace(sql):
        if on_loop() and HISTORY.search(sql):
            print("history read on the loop:", " ".join(sql.split())[:120], flush=True)
    conn.set_trace_callback(trace)
    return conn

sqlite3.connect = connect
from vis_core.host import HostOptions
from vis_tui.app import VisApp

async def main():
    app = VisApp(HostOptions(workspace=Path(sys.argv[1])), frozen=True, resume=sys.argv[2])
    async with app.run_test(size=(100, 30)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 60)
        await pilot.pause()
        print("turns shown:", len(app.main.transcript.turns), flush=True)

asyncio.run(main())
"""
)


def test_a_resumed_session_is_read_and_drawn_with_modules_imported_off_the_loop(
    workspace: Path, vis_home: Path
) -> None:
    """``--resume`` of a long session froze keys and drawing for seconds: its first stored
    answer's layout imported markdown-it and Pygments on the loop, and the history's first
    page read every turn's notes from SQLite there (a process of its own: which thread
    imported them, and which SQL ran on the loop)."""
    session_id = store_session(workspace, [f"request {n}" for n in range(1, 31)], title="long")
    done = fresh_python(RESUMED, str(workspace), session_id, vis_home=vis_home)
    lines = done.stdout.splitlines()
    assert "turns shown: 20" in lines, done.stderr[-2000:]
    assert "markdown_it imported off the loop" in lines, done.stdout
    assert "vis_tui.widgets.stored_turn imported off the loop" in lines, done.stdout
    assert not [line for line in lines if "on the loop" in line], done.stdout


FORMS = (
    WATCH_IMPORTS
    + """
import asyncio, sys
from pathlib import Path

from vis_core.host import HostOptions
from vis_tui.app import VisApp

async def main():
    app = VisApp(HostOptions(workspace=Path(sys.argv[1])), frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        watch_imports(lambda name: name.startswith("vis_tui."))
        await asyncio.wait_for(app.ready.wait(), 60)
        await pilot.pause()

asyncio.run(main())
"""
)


def test_the_forms_screen_is_imported_off_the_loop_as_the_app_starts(
    workspace: Path, vis_home: Path
) -> None:
    """The forms' screen and widgets (Textual's Select, SelectionList, TextArea) take
    ~0.15 s to import: on the loop, every start froze keys and drawing once the core was
    open (a process of its own)."""
    done = fresh_python(FORMS, str(workspace), vis_home=vis_home)
    lines = done.stdout.splitlines()
    assert "vis_tui.screens.form imported off the loop" in lines, done.stderr[-2000:]
    assert "vis_tui.widgets.form imported off the loop" in lines, done.stdout


LEXER = """
import asyncio, sys, threading
from pathlib import Path

import pygments.lexer

build = pygments.lexer.RegexLexerMeta.process_tokendef
built = []

def watched(cls, name, tokendefs=None):
    if cls.__name__ == "PythonLexer" and not built:
        built.append(threading.current_thread() is threading.main_thread())
    return build(cls, name, tokendefs)

pygments.lexer.RegexLexerMeta.process_tokendef = watched
from vis_core.host import HostOptions
from vis_tui.app import VisApp

async def main():
    app = VisApp(HostOptions(workspace=Path(sys.argv[1])), frozen=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 60)
        for _ in range(3000):
            if built:
                break
            await pilot.pause(0.02)
        print("not built" if not built else "on the loop" if built[0] else "off the loop")

asyncio.run(main())
"""


def test_pygments_python_lexer_is_built_off_the_loop_as_the_app_starts(
    workspace: Path, vis_home: Path
) -> None:
    """Pygments builds its Python lexer's patterns at its first use (~0.1-0.2 s of CPU):
    the first block's row did, on the loop. The app builds it in a thread once the session
    is shown (a process of its own)."""
    done = fresh_python(LEXER, str(workspace), vis_home=vis_home)
    assert done.stdout.strip() == "off the loop", done.stderr[-2000:]

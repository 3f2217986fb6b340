"""`vis run`'s lines on stderr during a streamed answer: they add nothing to stdout, unless
stdout and stderr are one terminal, where the answer's line is ended before them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# what vis run's renderer gets when a server fails mid-answer (a warning between two deltas)
RENDER = """
from vis_core.events import AssistantDelta, Notification, TurnEnded
from vis_core.model.notify import NotifyKind
from vis_core.model.turn import TurnStatus
from vis_core.printmode import PrintRenderer

show = PrintRenderer(as_json=False)
show(AssistantDelta("s", text="streaming slowl"))
show(Notification("s", text="MCP server 'x' failed", kind=NotifyKind.WARN))
show(AssistantDelta("s", text="y streaming"))
show(TurnEnded("s", status=TurnStatus.COMPLETED))
"""


def test_a_warning_mid_answer_adds_no_newline_to_stdout_in_a_file(tmp_path: Path) -> None:
    """stdout held `streaming slowl` and `y streaming` on two lines: the warning on stderr
    ended stdout's line."""
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        subprocess.run([sys.executable, "-c", RENDER], stdout=stdout, stderr=stderr, check=True)
    assert out.read_text() == "streaming slowly streaming\n"
    assert err.read_text() == "warn: MCP server 'x' failed\n"


def test_on_one_terminal_the_answers_line_ends_before_the_warning() -> None:
    leader, follower = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", RENDER],
            stdout=follower,
            stderr=follower,
            stdin=follower,
            env={**os.environ, "NO_COLOR": "1"},
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's last writer has gone
                break
            if not chunk:
                break
            shown += chunk
        assert proc.wait() == 0
    finally:
        os.close(leader)
    lines = shown.decode().replace("\r\n", "\n")
    assert lines == "streaming slowl\nwarn: MCP server 'x' failed\ny streaming\n"


def test_an_extension_that_did_not_load_is_said_as_vis_says_things_and_logged(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """`vis run` said a failed extension only through Python's last-resort log handler:
    an unprefixed 'extension did not load: …' line on stderr, never in vis.log (what is
    logged before the log file is attached went to stderr raw). It is one `vis:` notice now,
    and the warning is in the day's log."""
    from cli_support import script, vis

    (vis_home / "extensions").mkdir(parents=True, exist_ok=True)
    (vis_home / "extensions" / "bad.py").write_text('raise RuntimeError("broken on purpose")\n')
    path = script(tmp_path, [{"text": "hi"}])
    done = vis("run", "--provider", "scripted", "--script", str(path), "go",
               cwd=workspace, env_home=vis_home)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "broken on purpose" in line]
    assert len(said) == 1 and said[0].startswith("vis: Extension bad failed to load"), said
    assert said[0].endswith("fix the file, then run `vis run` again.")  # no Settings screen
    logged = "".join(p.read_text() for p in vis_home.glob("logs/*/vis.log"))
    assert "extension did not load" in logged and "broken on purpose" in logged

"""A new session opens with a welcome header; quitting leaves the way back in the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot_keys import type_keys

from vis_core.paths import TrustStore, VisPaths
from vis_core.system.jail_check import jail_works
from vis_tui.widgets.welcome import WelcomeHeader

from .support import started, store_session, until, vis_app, write_script


async def test_a_new_session_opens_with_the_welcome_header(workspace: Path, tmp_path: Path) -> None:
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        header = app.main.transcript.query_one(WelcomeHeader)
        text = str(header.render())
        assert "Vis 0.1.0" in text and "scripted" in text and "not trusted" in text
        assert "F1" in text and "Esc" in text
        # the mode the session runs in: jailed where bubblewrap works, else why not
        mode = "jailed: blocks" if jail_works() else "not jailed: blocks"
        assert mode in text and "not " + mode not in text
        await type_keys(pilot, *"hello", "enter")  # the conversation takes the header's place
        await until(pilot, lambda: not app.main.transcript.query(WelcomeHeader))
        session_id = app.session.id
    assert app.resume_line == f"Resume this session: vis --resume {session_id}"


async def test_a_resumed_session_has_no_welcome_header(workspace: Path) -> None:
    session_id = store_session(workspace, ["earlier"])
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert not app.main.transcript.query(WelcomeHeader)


async def test_the_welcome_header_says_when_the_jail_is_off(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text("jail = false\n")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        text = str(app.main.transcript.query_one(WelcomeHeader).render())
        assert "not jailed:" in text and "jail setting is false" in text


@pytest.mark.parametrize("trusted_once", [True, False])
async def test_the_welcome_header_says_when_the_trust_lapsed(
    workspace: Path, tmp_path: Path, trusted_once: bool
) -> None:
    """The header said "not trusted" also when the person had trusted the project and a
    file changed since, where the start note says "changed since you trusted it"."""
    (workspace / "vis.yml").write_text("toggles:\n  max_iterations: 9\n", encoding="utf-8")
    if trusted_once:
        TrustStore(VisPaths.from_env()).trust(workspace)
        (workspace / "vis.yml").write_text("toggles:\n  max_iterations: 99\n", encoding="utf-8")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        text = str(app.main.transcript.query_one(WelcomeHeader).render())
    lapsed = "not trusted: changed since you trusted it"
    assert "not trusted" in text and (lapsed in text) is trusted_once, text

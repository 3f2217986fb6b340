"""The welcome header names the instruction files; /init has the model write AGENTS.md."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.widgets.welcome import WelcomeHeader

from .support import started, until, vis_app, write_script

WRITE_AGENTS = "await patch('AGENTS.md', 0, '# Project\\nRun `make test`.\\n')\nprint('written')"


async def test_welcome_names_the_instruction_files_and_init_writes_agents_md(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "CLAUDE.md").write_text("Use pytest.\n" * 20)
    script = write_script(tmp_path, [{"code": WRITE_AGENTS}, {"text": "Wrote AGENTS.md."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 30)) as pilot:
        await started(app, pilot)
        text = str(app.main.transcript.query_one(WelcomeHeader).render())
        assert "instructions: CLAUDE.md ~60 tokens" in text
        await type_keys(pilot, *"/init", "enter")
        await until(
            pilot, lambda: (workspace / "AGENTS.md").is_file() and not app.main.turn_running
        )
        requests = app.session.model.provider.requests  # type: ignore[union-attr]
    assert (workspace / "AGENTS.md").read_text() == "# Project\nRun `make test`.\n"
    first = requests[0].messages[0]
    assert first.role == "user" and "Write a first `AGENTS.md`" in first.text

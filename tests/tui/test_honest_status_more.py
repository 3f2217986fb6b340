"""Honest status, more of it: a failed extension is announced on the main screen."""

from __future__ import annotations

from pathlib import Path

from vis_core.paths import VisPaths
from vis_tui.widgets.transcript import PlainMessage

from .support import started, vis_app, write_script

BROKEN = '"""Fails on line 3."""\n\nraise RuntimeError("broken on purpose")\n'


async def test_an_extension_that_fails_to_load_is_announced_on_the_main_screen(
    workspace: Path, tmp_path: Path
) -> None:
    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "brokenext.py").write_text(BROKEN, encoding="utf-8")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        warnings = [
            m.source for m in app.main.transcript.query(PlainMessage) if m.has_class("warning")
        ]
        assert len(warnings) == 1, warnings
        assert "brokenext" in warnings[0] and "vis doctor" in warnings[0]
        assert "broken on purpose" in warnings[0]

"""``vis.notify`` kinds reach the TUI as the matching toast severity."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from .support import started, until, vis_app, write_script

NOTIFIER = '''
import vis_core.extension as vis

def tell(kind: str) -> str:
    """Notify ``kind``."""
    vis.notify(f"a {kind} note", kind)
    return "told"

vis.register_extension(vis.Extension(
    name="notifier", alias="notifier", description="Notifies.", symbols=[vis.Symbol(tell)],
))
'''


async def test_each_notify_kind_shows_its_toast_severity(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    folder = vis_home / "extensions"
    folder.mkdir()
    (folder / "notifier.py").write_text(NOTIFIER, encoding="utf-8")
    code = "".join(f"await notifier.tell({kind!r})\n" for kind in ("warn", "error", "success"))
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "done"}]))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"notify", "enter")
        await until(pilot, lambda: len(app._notifications) >= 3)
        shown = {n.message: n.severity for n in app._notifications}
        assert shown == {
            "a warn note": "warning",
            "a error note": "error",
            "a success note": "information",
        }
        # a toast is gone in seconds: a warning or an error stays in the transcript too
        kept = [str(m.render()) for m in app.main.transcript.query(".system-message")]
        assert any("⚠ a warn note" in m for m in kept) and any("⚠ a error note" in m for m in kept)
        assert not any("a success note" in m for m in kept)


async def test_reload_says_which_extension_failed_to_load(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    folder = vis_home / "extensions"
    folder.mkdir()
    app = vis_app(workspace, write_script(tmp_path, [{"text": "done"}]))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        (folder / "broken.py").write_text("def broken(:\n", encoding="utf-8")
        await type_keys(pilot, *"/reload", "enter")
        await until(pilot, lambda: len(app._notifications) >= 1)
        (note,) = list(app._notifications)
        assert note.title == "Reloaded extensions"
        assert "1 failed" in note.message and "broken" in note.message, note.message
        assert "SyntaxError" in note.message, note.message

"""The ``/`` list follows what a reload loaded: a failed extension's commands go from it, a
new one's come."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from .support import started, until, vis_app, write_script

GREETER = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="{name}", alias="{name}", description="Greets.",
    slash_commands=[vis.SlashCommand("{name}", lambda ctx: "hi", doc="Greet.")],
))
"""


async def test_the_command_list_follows_each_reload(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """The list was built once at the start: after a reload failed an extension, ``/he``
    still offered ``/hello`` (then "Unknown command"), and a command a reload added ran but
    was never offered."""
    folder = vis_home / "extensions"
    folder.mkdir()
    (folder / "hello.py").write_text(GREETER.format(name="hello"), encoding="utf-8")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "done"}]))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        names = lambda: [c.name for c in app.main.choices]  # noqa: E731
        assert "hello" in names()
        (folder / "hello.py").write_text("def broken(:\n", encoding="utf-8")
        (folder / "howdy.py").write_text(GREETER.format(name="howdy"), encoding="utf-8")
        await type_keys(pilot, *"/reload", "enter")
        await until(pilot, lambda: len(app._notifications) >= 1)
        assert "hello" not in names() and "howdy" in names()
        await type_keys(pilot, *"/h")
        offered = [c.text for c in app.main.completion.choices]
        assert "/howdy " in offered and "/hello " not in offered

"""Trusting the project again after a ``/reload`` skipped its changed control files: the next
turn says so and how to load them, not that the trust lapsed."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_core.paths import TrustStore, VisPaths

from .support import started, until, vis_app, write_script

GREETER = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="greeter", alias="greeter", description="Greets.",
    slash_commands=[vis.SlashCommand("hello", lambda ctx: "hi", doc="Greet.")],
))
"""


async def test_no_lapse_is_told_once_the_person_trusted_the_project_again(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """The turn after ``vis trust`` (run in another shell) said the project's control files
    changed since the person trusted it, and to run ``vis trust``, which they just did."""
    entry = workspace / ".vis" / "extensions" / "greeter.py"
    entry.parent.mkdir(parents=True)
    entry.write_text(GREETER, encoding="utf-8")
    trust = TrustStore(VisPaths.from_env())
    trust.trust(workspace)
    app = vis_app(workspace, write_script(tmp_path, [{"text": "done"}]))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        assert "hello" in [c.name for c in app.main.choices]
        with entry.open("a", encoding="utf-8") as file:
            file.write("# tweak\n")
        await type_keys(pilot, *"/reload", "enter")
        await until(pilot, lambda: len(app._notifications) >= 1)
        (reloaded,) = [n.message for n in app._notifications]
        assert "changed since you trusted it" in reloaded, reloaded
        assert "hello" not in [c.name for c in app.main.choices]  # skipped: not offered
        app.clear_notifications()
        trust.trust(workspace)  # `vis trust`, in another shell
        await type_keys(pilot, *"hi", "enter")
        await until(pilot, lambda: len(app._notifications) >= 1, seen=lambda: app._notifications)
        notes = [n.message for n in app._notifications]
        assert not [note for note in notes if "changed since you trusted it" in note], notes
        assert any("trusted again" in note and "/reload" in note for note in notes), notes

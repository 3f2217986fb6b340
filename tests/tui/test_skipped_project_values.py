"""The app says which values of an untrusted project's files it skipped, as `vis run` does."""

from __future__ import annotations

from pathlib import Path

from .support import started, vis_app, write_script


async def test_the_app_names_the_settings_an_untrusted_project_file_sets(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "vis.yml").write_text(
        'toggles:\n  memory_limit: "0"\n  max_iterations: "200"\n', encoding="utf-8"
    )
    app = vis_app(workspace, write_script(tmp_path, [{"text": "done"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        notes = "\n".join(n.source for n in app.main.query(".note"))  # type: ignore[attr-defined]
        assert f"project {workspace} is not trusted, so Vis skipped its " in notes
        assert "vis.yml (sets max_iterations, memory_limit)" in notes
        assert f"vis trust {workspace}" in notes


async def test_a_checkouts_file_names_in_a_start_note_are_shown_as_written(
    workspace: Path, tmp_path: Path
) -> None:
    """The start notes were drawn as Markdown: an extension file named
    `[click here](https:__evil.example)**bold**.py` in an untrusted checkout became a link
    and bold text in Vis's own notice. They are plain text, as `vis run` prints them."""
    from vis_tui.widgets.transcript import PlainMessage

    name = "[click here](https:__evil.example)**bold**.py"
    (workspace / ".vis" / "extensions").mkdir(parents=True)
    (workspace / ".vis" / "extensions" / name).write_text("")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "done"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        (note,) = [n for n in app.main.query(".note") if "Vis skipped" in str(n.render())]
        assert isinstance(note, PlainMessage) and name in str(note.render())

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
        assert f"the settings {workspace / 'vis.yml'} sets are ignored" in notes
        assert "max_iterations, memory_limit" in notes
        assert f"vis trust {workspace}" in notes

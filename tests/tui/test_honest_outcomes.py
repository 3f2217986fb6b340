"""Rows tell the truth: a refused edit, a cancelled form and a result that cannot come back
are ✗ or ⚠, never ✓; each error shows once, without Vis's internal class names."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.screens.form import FormScreen
from vis_tui.widgets.activity import ActivityRow

from .support import on_top, started, until, vis_app, write_script

ASKER = '''
import vis_core.extension as vis

def ask_name() -> str:
    """Ask the person for a name."""
    answer = vis.ask("Name", [vis.forms.plaintext("name")])
    return answer.values.get("name", "") if answer else "no name"

def opaque() -> object:
    """Return something that cannot cross back to Python."""
    return object()

vis.register_extension(vis.Extension(
    name="asker", alias="asker", description="Asks.",
    symbols=[vis.Symbol(ask_name), vis.Symbol(opaque)],
))
'''


def _header(row: ActivityRow) -> str:
    return str(row.query_one(".activity-header").render())


async def test_refused_edit_cancelled_form_and_unreturnable_result_are_not_ticks(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "asker.py").write_text(ASKER, encoding="utf-8")
    (workspace / "app.py").write_text("x = 1\n", encoding="utf-8")
    code = (
        "try:\n"
        "    await patch('app.py', 1, [{'start': 1, 'end': 1, 'text': 'x = (\\n'}])\n"
        "except Exception as exc:\n"
        "    print('refused')\n"
        "print(await asker.ask_name())\n"
        "try:\n"
        "    await asker.opaque()\n"
        "except Exception as exc:\n"
        "    print('not returned')\n"
    )
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "done"}]))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await on_top(pilot, FormScreen)
        await pilot.press("escape")
        await until(pilot, lambda: app.main.transcript.last_answer == "done")
        rows = {row.record.tool: row for row in app.main.query(ActivityRow)}
        for tool in ("patch", "ask_name", "opaque"):
            header = _header(rows[tool])
            assert "✓" not in header and ("✗" in header or "⚠" in header), (tool, header)
        patch = rows["patch"]
        patch.expanded = True
        await pilot.pause()
        assert "unknown version @1" in _header(patch) and not patch.query(".activity-error")
        assert "form 'Name' cancelled" in _header(rows["ask_name"])
        text = app.main.transcript.as_text()
        for internal in ("VisToolError", "PatchError", "TypeError", "Traceback"):
            assert internal not in text
        assert (workspace / "app.py").read_text() == "x = 1\n"

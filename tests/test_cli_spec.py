"""Spec conformance on the command line: ``-C`` before ``run``, extension print(), doctor."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import script as _script
from cli_support import vis

NOISY = '''
import vis_core.extension as vis

print("loading noisy")


def shout(text: str) -> str:
    """Return ``text`` in capitals (and print it while at it)."""
    print("shouting", text)
    return text.upper()


vis.register_extension(vis.Extension(
    name="noisy", alias="noisy", description="Prints a lot.",
    symbols=[vis.Symbol(shout, activity=vis.Activity(label="Shout"))],
))
'''


def test_extension_print_goes_to_its_log_not_the_json_stream(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "extensions").mkdir(parents=True, exist_ok=True)
    (vis_home / "extensions" / "noisy.py").write_text(NOISY, encoding="utf-8")
    s = _script(tmp_path, [{"code": 'print(await shout("hi"))'}, {"text": "Done."}])
    result = vis(
        "run", "--json", "--provider", "scripted", "--script", str(s), "go",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]  # every line is JSON
    assert any("HI" in json.dumps(event) for event in events)  # the block's own print stays
    assert "shouting" not in result.stdout and "loading noisy" not in result.stdout
    logs = "".join(p.read_text() for p in (vis_home / "logs").rglob("*.log"))
    assert "[noisy] print: loading noisy" in logs and "[noisy] print: shouting hi" in logs


def test_workspace_option_before_run_is_honoured(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (workspace / "marker.txt").write_text("found me\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    s = _script(tmp_path, [{"code": 'print(await cat("marker.txt"))'}, {"text": "Done."}])
    result = vis(
        "-C", str(workspace), "run", "--provider", "scripted", "--script", str(s), "go",
        cwd=elsewhere, env_home=vis_home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "✓ Read file · marker.txt @1 · 1 line" in result.stdout  # read in -C, not the cwd


TYPO = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="typo", description="Guards patches.",
    op_hooks=[vis.OpHook("pach", lambda call: None)],
))
"""


def test_doctor_shows_an_op_hook_with_an_unknown_op(workspace: Path, vis_home: Path) -> None:
    (vis_home / "extensions").mkdir(parents=True, exist_ok=True)
    (vis_home / "extensions" / "typo.py").write_text(TYPO, encoding="utf-8")
    result = vis("doctor", cwd=workspace, env_home=vis_home)
    assert result.returncode == 1
    assert "OpHook op 'pach' is not an operation Vis knows" in result.stdout
    assert "'patch'" in result.stdout and "'fs_access'" in result.stdout


ROOT = Path(__file__).resolve().parents[1]


def test_readme_uses_the_default_model_and_points_at_files_that_exist() -> None:
    import re

    from vis_core.providers.factory import DEFAULT_ANTHROPIC_MODEL

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    anthropic = set(re.findall(r"anthropic/(claude-[\w.-]+)", readme))
    assert anthropic == {DEFAULT_ANTHROPIC_MODEL}
    links = re.findall(r"\]\(([^)#:]+)\)", readme)
    assert links and all((ROOT / link).is_file() for link in links), links
    assert "../shared" not in readme


def test_readme_scripted_example_runs(workspace: Path, vis_home: Path) -> None:
    (workspace / "hello.txt").write_text("hi\n")
    (workspace / "script.yaml").write_text("- code: print(await ls())\n- text: Listed.\n")
    result = vis(
        "run", "--provider", "scripted", "--script", "script.yaml", "list the files",
        cwd=workspace, env_home=vis_home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Listed." in result.stdout


def test_the_model_setting_and_every_example_name_the_models_vis_defaults_to() -> None:
    import re

    from vis_core.providers.factory import DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL
    from vis_core.settings.core import MODEL

    defaults = {f"anthropic/{DEFAULT_ANTHROPIC_MODEL}", f"openai/{DEFAULT_OPENAI_MODEL}"}
    assert f"anthropic/{DEFAULT_ANTHROPIC_MODEL} when ANTHROPIC_API_KEY" in MODEL.description
    assert f"openai/{DEFAULT_OPENAI_MODEL} when OPENAI_API_KEY" in MODEL.description
    named = re.compile(r"(?:anthropic/claude|openai/gpt)-[\w.-]*\w")
    for path in [*(ROOT / "vis_core").rglob("*.py"), *(ROOT / "vis_tui").rglob("*.py")]:
        if path.name == "models.py":  # the table of known models names them all
            continue
        found = set(named.findall(path.read_text(encoding="utf-8")))
        assert found <= defaults, (path, found - defaults)
    assert set(named.findall((ROOT / "README.md").read_text(encoding="utf-8"))) <= defaults

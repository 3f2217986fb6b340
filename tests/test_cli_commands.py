"""`vis run "/command"`: slash commands run without a screen, or are refused by name (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import script, vis

from vis_core.paths import TrustStore, VisPaths

GREETER = """
import vis_core.extension as vis

def greet(ctx):
    if not ctx["args"]:
        return vis.err("Nobody to greet", "Usage: /greet NAME")
    return vis.ok(f"Hello {ctx['args'][0]}", "from the greeter")

vis.register_extension(vis.Extension(
    name="greeter",
    description="Greets people.",
    slash_commands=[vis.SlashCommand("greet", greet, doc="Greet someone.", usage="/greet NAME")],
))
"""


def _run(workspace: Path, vis_home: Path, s: Path | None, *args: str):
    model = ("--provider", "scripted", "--script", str(s)) if s is not None else ()
    return vis("run", *model, *args, cwd=workspace, env_home=vis_home)


def _requests(stdout: str) -> list[str]:
    events = [json.loads(line) for line in stdout.splitlines()]
    return [e["request"] for e in events if e["type"] == "TurnStarted"]


def test_init_and_command_files_send_their_request_to_the_model(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (workspace / ".vis" / "commands").mkdir(parents=True)
    (workspace / ".vis" / "commands" / "hello.md").write_text("Say hello to $1.\n")
    TrustStore(VisPaths.from_env({"VIS_HOME": str(vis_home)})).trust(workspace)
    s = script(tmp_path, [{"text": "Done."}])
    hello = _run(workspace, vis_home, s, "--json", "/hello Ada")
    init = _run(workspace, vis_home, s, "--json", "/init")
    assert hello.returncode == 0, hello.stderr
    assert _requests(hello.stdout) == ["Say hello to Ada."]
    assert init.returncode == 0, init.stderr
    (request,) = _requests(init.stdout)
    assert "AGENTS.md" in request and not request.startswith("/init")


def test_compact_and_extension_commands_print_what_they_say(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "greeter.py").write_text(GREETER)
    first = _run(workspace, vis_home, script(tmp_path, [{"text": "Four."}]), "what is 2+2")
    gist = script(tmp_path, [{"text": "The person asked 2+2; the answer was four."}])
    compact = _run(workspace, vis_home, gist, "--continue", "/compact")
    greet = _run(workspace, vis_home, None, "/greet Ada")
    nobody = _run(workspace, vis_home, None, "/greet")
    assert first.returncode == 0, first.stderr
    assert compact.returncode == 0, compact.stderr
    assert "Compacted turn 1" in compact.stdout and "the answer was four" in compact.stdout
    # no model is configured: a command that needs none runs all the same
    assert greet.returncode == 0, greet.stderr
    assert greet.stdout.strip() == "Hello Ada\n\nfrom the greeter"  # no Markdown stars
    assert nobody.returncode == 1 and "Nobody to greet" in nobody.stderr


ODD = """
import vis_core.extension as vis

class MyThing:  # callable: it stays in the worker, lent by reference
    def __call__(self):
        return 1

def odd(ctx):
    return {"thing": MyThing, "none": lambda: None, "number": lambda: 7}[ctx["args"][0]]()

vis.register_extension(vis.Extension(
    name="odd", description="Returns what no command may.",
    slash_commands=[vis.SlashCommand("odd", odd, doc="Return something odd.")],
))
"""


def test_a_command_that_returns_what_vis_cannot_show_is_told_in_its_own_terms(
    workspace: Path, vis_home: Path
) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "odd.py").write_text(ODD)
    for arg, returned in [("thing", "a MyThing"), ("none", "None"), ("number", "an int")]:
        ran = _run(workspace, vis_home, None, f"/odd {arg}")
        assert ran.returncode == 1, ran.stderr
        assert f"vis run: /odd returned {returned}, which Vis cannot show" in ran.stderr
        assert "may return vis.ok(title, body=None, data=None), vis.err(" in ran.stderr
        assert "RemoteObject" not in ran.stderr and "NoneType" not in ran.stderr


def test_screen_commands_and_unknown_names_are_refused_and_paths_are_requests(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    s = script(tmp_path, [{"text": "It lists hosts."}])
    settings = _run(workspace, vis_home, s, "/settings")
    unknown = _run(workspace, vis_home, s, "/nope now")
    path = _run(workspace, vis_home, s, "--json", "/etc/hosts: what is it?")
    assert settings.returncode == 2
    assert "/settings needs the app's screen; `vis settings`" in settings.stderr
    assert unknown.returncode == 2 and "/nope is not a command" in unknown.stderr
    assert "/compact" in unknown.stderr and "/settings" not in unknown.stderr
    assert path.returncode == 0, path.stderr
    assert _requests(path.stdout) == ["/etc/hosts: what is it?"]
    listed = vis("sessions", cwd=workspace, env_home=vis_home)
    assert len(listed.stdout.splitlines()) == 1, listed.stdout  # a refused one opens none
    assert "/etc/hosts: what is it?" in listed.stdout  # titled by it, not "Untitled"


def test_run_plan_plans_then_approval_runs_the_plan(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """`vis run --plan` refuses changes and says how to go on; the session is still planning
    when resumed; `/plan approve` sends the plan as the next request, which may change files."""
    (vis_home / "config.toml").write_text("jail = false\n")
    planned = script(
        tmp_path,
        [
            {"code": "await patch('a.txt', 0, 'x\\n')"},
            {"text": "Plan: create a.txt holding x."},
            {"code": "await patch('a.txt', 0, 'x\\n')"},
            {"text": "Created."},
        ],
    )
    first = _run(workspace, vis_home, planned, "--plan", "make a.txt")
    assert first.returncode == 0, first.stderr
    assert "refused in plan mode" in first.stdout and not (workspace / "a.txt").exists()
    assert "the session is in plan mode" in first.stderr
    assert '/plan approve [NOTES]" (runs the plan)' in first.stderr
    again = _run(workspace, vis_home, None, "--continue", "/plan")  # resumed: still planning
    assert again.returncode == 0 and again.stdout.startswith("Already in plan mode\n")
    assert "tools refuse changes, but a block's plain Python can still write" in again.stdout
    rest = script(tmp_path, [{"code": "await patch('a.txt', 0, 'x\\n')"}, {"text": "Created."}])
    approved = _run(workspace, vis_home, rest, "--json", "--continue", "/plan approve")
    assert approved.returncode == 0, approved.stderr
    (request,) = _requests(approved.stdout)
    assert "approved the plan" in request and "Plan: create a.txt holding x." in request
    assert (workspace / "a.txt").read_text() == "x\n"
    assert "plan mode" not in approved.stderr


def test_sessions_says_so_on_stderr_when_it_lists_none(workspace: Path, vis_home: Path) -> None:
    listed = vis("sessions", cwd=workspace, env_home=vis_home)
    found = vis("sessions", "deploy", cwd=workspace, env_home=vis_home)
    assert (listed.returncode, listed.stdout, found.returncode, found.stdout) == (0, "", 0, "")
    assert listed.stderr.strip() == f"no sessions in {workspace} yet: `vis` starts one"
    assert found.stderr.strip() == "no session mentions 'deploy'"


SHADOW = """
import vis_core.extension as vis

vis.register_extension(vis.Extension(
    name="shadow", description="Shadows a built-in command.",
    slash_commands=[vis.SlashCommand("goal", lambda ctx: "shadow goal")],
))
"""


def test_an_extension_command_named_like_a_built_in_is_said_not_dropped(
    workspace: Path, vis_home: Path
) -> None:
    """The extension's /goal was dropped without a word (doctor: loaded; the built-in ran).
    The extension now fails to load, and vis run and vis doctor say why."""
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "shadow.py").write_text(SHADOW)
    goal = _run(workspace, vis_home, None, "/goal hello")
    doctor = vis("doctor", cwd=workspace, env_home=vis_home)
    why = "slash command /goal is a built-in command of Vis; give the command another name"
    assert goal.returncode == 0, goal.stderr
    assert goal.stdout.strip() == "Goal set\n\nhello"
    assert why in goal.stderr
    assert "shadow" in doctor.stdout and why in doctor.stdout

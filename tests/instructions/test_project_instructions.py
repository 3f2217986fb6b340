"""AGENTS.md (or CLAUDE.md / GEMINI.md) reach the model: in the system prompt, nested ones
noted in a block's result, the request prefix unchanged through a turn."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from vis_core.commands import CommandAction, PromptToSend
from vis_core.host import Host, HostOptions
from vis_core.providers.base import ModelRequest
from vis_core.providers.common import estimate_tokens

ROOT_TEXT = "Run the tests with `make check`."
APP_TEXT = "The app folder uses tabs."
LIB_TEXT = "Every lib function has a docstring."
PERSONAL_TEXT = "Answer in British English."


def _script(path: Path, responses: list[dict]) -> Path:
    path.write_text(yaml.safe_dump(responses, sort_keys=False), encoding="utf-8")
    return path


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with AGENTS.md at its root, one in the workspace (``app/``) and a nested
    one below the workspace (``app/lib/``)."""
    root = tmp_path / "repo"
    (root / ".vis").mkdir(parents=True)
    (root / "AGENTS.md").write_text(f"# Repo\n{ROOT_TEXT}\n")
    workspace = root / "app"
    (workspace / "lib" / "deep").mkdir(parents=True)
    (workspace / "AGENTS.md").write_text(APP_TEXT + "\n")
    (workspace / "lib" / "AGENTS.md").write_text(LIB_TEXT + "\n")
    (workspace / "lib" / "a.py").write_text("A = 1\n")
    (workspace / "lib" / "deep" / "b.py").write_text("B = 2\n")
    (workspace / "main.py").write_text("print('hi')\n")
    return root, workspace


def _wire(request: ModelRequest) -> str:
    """The request as a provider would lay it out: system, tools, then each message."""
    head = json.dumps(
        {"system": request.system, "tools": [t.name for t in request.tools]}, sort_keys=True
    )
    lines = [head]
    for m in request.messages:
        calls = [(c.id, c.name, c.arguments) for c in m.tool_calls]
        lines.append(json.dumps([m.role, m.text, calls, m.tool_call_id], sort_keys=True))
    return "\n".join(lines) + "\n"


async def test_instruction_files_reach_the_model_and_keep_the_request_prefix(
    tmp_path: Path, vis_home: Path
) -> None:
    _, workspace = _project(tmp_path)
    (vis_home / "AGENTS.md").write_text(PERSONAL_TEXT + "\n")
    script = _script(
        tmp_path / "s.yaml",
        [
            {"code": "print(await cat('main.py'))"},
            {"code": "print(await cat('lib/a.py'))"},
            {"code": "print(await ls('lib/deep'))\nprint(await cat('lib/deep/b.py'))"},
            {"text": "done"},
            {"text": "second turn"},
        ],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("look around")
        await session.submit("again")
        requests: list[ModelRequest] = session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()

    system = requests[0].system
    # personal first, then the project root's, then the workspace's; the nested one is not
    at = [system.index(text) for text in (PERSONAL_TEXT, ROOT_TEXT, APP_TEXT)]
    assert at == sorted(at) and LIB_TEXT not in system
    assert system.index("## Environment") < at[0]
    # every request of the turn (and the next turn) begins with the whole previous one
    wires = [_wire(r) for r in requests]
    assert len(wires) == 5
    for before, after in zip(wires, wires[1:], strict=False):
        assert after.startswith(before)
    # the nested file joins the result of the block that read beneath it, once
    results = [m for m in requests[-1].messages if m.role == "tool"]
    assert LIB_TEXT not in results[0].text
    assert "lib/AGENTS.md holds instructions for the files under lib/" in results[1].text
    assert LIB_TEXT in results[1].text and "A = 1" in results[1].text
    assert LIB_TEXT not in results[2].text  # lib/deep has none, lib was noted already


async def test_a_claude_md_only_project_gets_it_and_agents_md_wins_over_it(
    tmp_path: Path,
) -> None:
    only = tmp_path / "only"
    only.mkdir()
    (only / "CLAUDE.md").write_text("Claude rules apply.\n")
    both = tmp_path / "both"
    both.mkdir()
    (both / "CLAUDE.md").write_text("Claude rules apply.\n")
    (both / "GEMINI.md").write_text("Gemini rules apply.\n")
    (both / "AGENTS.md").write_text("Agents rules apply.\n")
    gemini = tmp_path / "gemini"
    gemini.mkdir()
    (gemini / "GEMINI.md").write_text("Gemini rules apply.\n")
    systems = {}
    for folder in (only, both, gemini):
        host = await Host.open(HostOptions(workspace=folder, provider="scripted"))
        try:
            session = await host.new_session()
            systems[folder.name] = (await session.next_request()).system
        finally:
            await host.close()
    assert "Claude rules apply." in systems["only"] and "### CLAUDE.md" in systems["only"]
    assert "Agents rules apply." in systems["both"]
    assert "Claude rules" not in systems["both"] and "Gemini rules" not in systems["both"]
    assert "Gemini rules apply." in systems["gemini"]


async def test_a_file_changed_during_a_turn_counts_from_the_next_turn(tmp_path: Path) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Old rule.\n")
    script = _script(
        tmp_path / "s.yaml",
        [
            {"code": "from pathlib import Path\nPath('AGENTS.md').write_text('New rule.\\n')"},
            {"text": "changed"},
            {"text": "next"},
        ],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("change the rules")
        await session.submit("go on")
        requests: list[ModelRequest] = session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()
    assert [("Old rule." in r.system, "New rule." in r.system) for r in requests] == [
        (True, False),
        (True, False),
        (False, True),
    ]


async def test_context_names_the_files_and_init_asks_the_model_for_agents_md(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "w"
    workspace.mkdir()
    text = "Use pytest.\n" * 20
    (workspace / "CLAUDE.md").write_text(text)
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted"))
    try:
        session = await host.new_session()
        context = await host.commands.run(session, "/context")
        init = await host.commands.run(session, "/init")
    finally:
        await host.close()
    tokens = estimate_tokens(len(text.strip()))
    assert f"Instructions in the system prompt: `CLAUDE.md` (~{tokens:,} tokens)" in context.body
    assert init.ok and init.action is CommandAction.SEND_PROMPT
    assert isinstance(init.data, PromptToSend)
    assert "AGENTS.md" in init.data.text and "`CLAUDE.md`" in init.data.text
    assert 'patch("AGENTS.md", 0, text)' in init.data.text


async def test_a_reopened_session_does_not_note_a_nested_file_again(tmp_path: Path) -> None:
    _, workspace = _project(tmp_path)
    first = _script(
        tmp_path / "first.yaml", [{"code": "print(await cat('lib/a.py'))"}, {"text": "read"}]
    )
    second = _script(
        tmp_path / "second.yaml",
        [{"code": "print(await cat('lib/deep/b.py'))"}, {"text": "read again"}],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=first))
    try:
        session = await host.new_session()
        await session.submit("read a")
        session_id = session.id
    finally:
        await host.close()
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=second))
    try:
        reopened = await host.open_session(session_id)
        await reopened.submit("read b")
        request = reopened.model.provider.requests[-1]  # type: ignore[union-attr]
    finally:
        await host.close()
    results = [m.text for m in request.messages if m.role == "tool"]
    assert LIB_TEXT in results[0] and "B = 2" in results[1] and LIB_TEXT not in results[1]


async def test_an_instruction_file_that_links_out_of_the_project_is_not_sent(
    tmp_path: Path, vis_home: Path
) -> None:
    """A never-trusted checkout's ``AGENTS.md -> ~/.ssh/id_rsa`` (or a nested
    ``lib/AGENTS.md`` a jailed block links to ``VIS_HOME/secrets``): Vis read the target
    into the system prompt (or a block's result) and sent it to the model server, before
    any trust and past the jail. An instruction file is read only when it lies in the
    project (a ``CLAUDE.md -> AGENTS.md`` link inside it still works)."""
    secret = tmp_path / "dot-ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE-KEY-1f2e\n")
    workspace = tmp_path / "checkout"
    (workspace / "lib").mkdir(parents=True)
    (workspace / "AGENTS.md").symlink_to(secret)
    (workspace / "lib" / "AGENTS.md").symlink_to(secret)
    (workspace / "lib" / "a.py").write_text("A = 1\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "AGENTS.md").write_text(APP_TEXT + "\n")
    (workspace / "docs" / "CLAUDE.md").symlink_to("AGENTS.md")  # a link inside: kept
    (workspace / "docs" / "x.md").write_text("x\n")
    script = _script(
        tmp_path / "s.yaml",
        [
            {"code": "print(await cat('lib/a.py'))\nprint(await cat('docs/x.md'))"},
            {"text": "done"},
        ],
    )
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        await session.submit("look around")
        requests: list[ModelRequest] = session.model.provider.requests  # type: ignore[union-attr]
    finally:
        await host.close()
    wire = "".join(_wire(r) for r in requests)
    assert "PRIVATE-KEY-1f2e" not in wire
    assert APP_TEXT in wire  # docs/AGENTS.md, noted when the block read beneath docs/

"""Slash commands from files: /NAME from .vis/commands/NAME.md (trusted project) and
commands/NAME.md in the config folder; arguments replaced; never over a built-in silently."""

from __future__ import annotations

from pathlib import Path

from vis_core.commands import CommandAction, PromptToSend
from vis_core.host import Host, HostOptions
from vis_core.paths import TrustStore, VisPaths

REVIEW = """---
description: Review a file for one concern
argument-hint: FILE CONCERN
model: scripted/reviewer
---
Review $1 for $2 only.
Everything asked: $ARGUMENTS
"""


def _files(project: Path, vis_home: Path) -> None:
    (project / ".vis" / "commands").mkdir(parents=True)
    (project / ".vis" / "commands" / "review.md").write_text(REVIEW)
    (project / ".vis" / "commands" / "help.md").write_text("Help me with $ARGUMENTS\n")
    (vis_home / "commands").mkdir()
    (vis_home / "commands" / "standup.md").write_text("Summarise what changed since yesterday.\n")
    (vis_home / "commands" / "review.md").write_text("The personal review.\n")


async def test_command_files_define_slash_commands(tmp_path: Path, vis_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _files(project, vis_home)
    TrustStore(VisPaths.from_env()).trust(project)
    host = await Host.open(HostOptions(workspace=project, provider="scripted"))
    try:
        session = await host.new_session()
        infos = {info.name: info for info in host.commands.all()}
        review = await host.commands.run(session, '/review "src/app.py" "error handling"')
        standup = await host.commands.run(session, "/standup")
        helped = await host.commands.run(session, "/help")
        notes = host.startup_notes()
    finally:
        await host.close()
    assert infos["review"].usage == "/review FILE CONCERN"
    assert infos["review"].doc == "Review a file for one concern"
    assert infos["review"].saveable and infos["review"].owner == "project file"
    assert infos["standup"].owner == "personal file"  # the project's review wins the name
    assert review.action is CommandAction.SEND_PROMPT and isinstance(review.data, PromptToSend)
    assert review.data.text == (
        "Review src/app.py for error handling only.\n"
        'Everything asked: "src/app.py" "error handling"'
    )
    assert review.data.model == "scripted/reviewer"
    assert isinstance(standup.data, PromptToSend) and standup.data.model is None
    assert standup.data.text == "Summarise what changed since yesterday."
    # /help stays the built-in one, and the person is told why help.md was not loaded
    assert helped.action is CommandAction.OPEN_HELP and "`/review FILE CONCERN`" in helped.body
    assert any(
        "help.md was not loaded: /help is a built-in command; rename the file" in note
        for note in notes
    )


async def test_an_untrusted_project_offers_only_personal_command_files(
    tmp_path: Path, vis_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _files(project, vis_home)
    host = await Host.open(HostOptions(workspace=project, provider="scripted"))
    try:
        session = await host.new_session()
        review = await host.commands.run(session, "/review")
        names = {info.name for info in host.commands.all()}
    finally:
        await host.close()
    assert "standup" in names and "review" in names
    assert isinstance(review.data, PromptToSend) and review.data.text == "The personal review."


async def test_claude_code_command_files_work_unchanged(tmp_path: Path, vis_home: Path) -> None:
    """``.claude/commands/`` (subfolders too) of a trusted project define commands as
    ``.vis/commands/`` does; ``.vis/commands`` wins a shared name, with a note; a built-in
    name is refused; a bare Claude model runs on anthropic; and a command file added to
    ``.claude/commands`` later makes the project untrusted until trusted again."""
    project = tmp_path / "project"
    claude = project / ".claude" / "commands"
    (claude / "frontend").mkdir(parents=True)
    (project / ".vis" / "commands").mkdir(parents=True)
    (claude / "fix-issue.md").write_text(
        "---\ndescription: Fix a GitHub issue\nallowed-tools: Bash(git:*)\n"
        "model: claude-3-5-haiku-20241022\n---\nFix issue #$ARGUMENTS following our standards.\n"
    )
    (claude / "frontend" / "component.md").write_text("Make a component named $1.\n")
    (claude / "review.md").write_text("The Claude review.\n")
    (claude / "compact.md").write_text("Not the built-in.\n")
    (project / ".vis" / "commands" / "review.md").write_text("The Vis review.\n")
    trust = TrustStore(VisPaths.from_env())
    trust.trust(project)
    host = await Host.open(HostOptions(workspace=project, provider="scripted"))
    try:
        session = await host.new_session()
        infos = {info.name: info for info in host.commands.all()}
        fix = await host.commands.run(session, "/fix-issue 123")
        component = await host.commands.run(session, "/component Button")
        review = await host.commands.run(session, "/review")
        notes = host.startup_notes()
    finally:
        await host.close()
    assert infos["fix-issue"].doc == "Fix a GitHub issue"
    assert infos["fix-issue"].owner == "project file" and infos["component"].saveable
    assert isinstance(fix.data, PromptToSend)
    assert fix.data.text == "Fix issue #123 following our standards."
    assert fix.data.model == "anthropic/claude-3-5-haiku-20241022"
    assert isinstance(component.data, PromptToSend)
    assert component.data.text == "Make a component named Button."
    assert isinstance(review.data, PromptToSend) and review.data.text == "The Vis review."
    shadowed = f"{claude / 'review.md'} was not loaded: {project / '.vis/commands/review.md'}"
    assert any(shadowed in note and "wins" in note for note in notes), notes
    assert any(
        "compact.md was not loaded: /compact is a built-in command" in note for note in notes
    )
    assert trust.is_trusted(project)
    (claude / "deploy.md").write_text("Push to production.\n")
    assert not trust.is_trusted(project)


async def test_claude_command_files_wait_for_trust(tmp_path: Path, vis_home: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude" / "commands").mkdir(parents=True)
    (project / ".claude" / "commands" / "deploy.md").write_text("Push to production.\n")
    host = await Host.open(HostOptions(workspace=project, provider="scripted"))
    try:
        names = {info.name for info in host.commands.all()}
    finally:
        await host.close()
    assert "deploy" not in names


async def test_a_command_file_whose_front_matter_nests_too_deeply_is_named_not_fatal(
    tmp_path: Path, vis_home: Path
) -> None:
    project = tmp_path / "project"
    (project / ".vis" / "commands").mkdir(parents=True)
    deep = "[" * 5000 + "]" * 5000  # a checkout's header: the YAML parser recurses per level
    (project / ".vis" / "commands" / "deep.md").write_text(f"---\ndescription: {deep}\n---\nGo.\n")
    (project / ".vis" / "commands" / "fine.md").write_text("Fine.\n")
    TrustStore(VisPaths.from_env()).trust(project)
    host = await Host.open(HostOptions(workspace=project, provider="scripted"))
    try:
        names = {info.name for info in host.commands.all()}
        notes = host.startup_notes()
    finally:
        await host.close()
    assert "fine" in names and "deep" not in names
    assert any("deep.md: its front matter nests too deeply to read" in note for note in notes)


def test_a_file_name_ending_in_a_line_break_is_not_a_command(tmp_path: Path) -> None:
    """'review\\n.md' in a checkout is no /review: the name rule's '$' let a final line break
    through re.match."""
    from vis_core.commands.files import CommandSource, read_command_file

    for stem, loaded in (("review", True), ("review\n", False)):
        path = tmp_path / f"{stem}.md"
        path.write_text("Review $ARGUMENTS.\n", encoding="utf-8")
        command, problem = read_command_file(path, CommandSource.PROJECT)
        assert (command is not None) is loaded, problem
    assert problem is not None and "is not a command name" in problem

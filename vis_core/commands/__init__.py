"""Slash commands: the built-in ones and extension ones, in one registry every front end uses."""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vis_core.extension.declarations import CommandResult, SlashCommand, err, ok
from vis_core.model.command import CommandAction, CommandInfo, PromptToSend
from vis_core.model.undo import CHANGED_SINCE, NOT_KEPT

if TYPE_CHECKING:
    from vis_core.agent.session import AgentSession
    from vis_core.command_host import CommandDeps
    from vis_core.commands.files import CommandFile
    from vis_core.model.undo import UndoReport


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def literal_markdown(text: str) -> str:
    """``text`` as Markdown that shows it as it is: ``__pycache__`` stays, not bold, and
    every line stays a line."""
    lines = [_MARKDOWN_SPECIAL.sub(r"\\\1", line.rstrip()) for line in text.strip().split("\n")]
    return "  \n".join(lines).replace("  \n  \n", "\n\n")


CommandRun = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class _Command:
    info: CommandInfo
    run: CommandRun
    in_host: bool = False  # runs in Vis, not in its owner's extension worker (command files)

    @classmethod
    def of(cls, declaration: SlashCommand, owner: str) -> _Command:
        info = CommandInfo(
            name=declaration.name,
            usage=declaration.usage or f"/{declaration.name}",
            doc=declaration.doc or "",
            saveable=bool(declaration.saveable),
            owner=owner,
        )
        return cls(info, declaration.run)


def parse_command(text: str) -> tuple[str, str]:
    """``/name args…`` → (name, raw args)."""
    body = text.strip()[1:] if text.strip().startswith("/") else text.strip()
    name, _, raw = body.partition(" ")
    return name.strip(), raw.strip()


class CommandRegistry:
    """Built-in commands plus those of the loaded extensions."""

    def __init__(self, deps: CommandDeps) -> None:
        self._deps = deps

    @functools.cached_property
    def _builtin(self) -> dict[str, _Command]:
        """Built when first asked for: ``vis run`` with a request (no command) never is."""
        return {d.name: _Command.of(d, "vis") for d in _builtin_commands(self._deps, self)}

    def _extension_commands(self) -> dict[str, _Command]:
        commands: dict[str, _Command] = {}
        for owner, declaration in self._deps.catalog.commands():
            commands.setdefault(declaration.name, _Command.of(declaration, owner))
        return commands

    def _command_files(self) -> tuple[list[CommandFile], list[str]]:
        from vis_core.commands.files import find_command_files

        deps = self._deps
        return find_command_files(
            deps.paths.config_dir, deps.space.project_root, deps.space.trusted
        )

    def _file_commands(
        self,
        taken: dict[str, _Command],
        found: tuple[list[CommandFile], list[str]] | None = None,
    ) -> tuple[dict[str, _Command], list[str]]:
        """The commands of command files (``.vis/commands/``, ``commands/`` in the config
        folder); one named like a built-in or extension command is refused, with a problem."""
        files, problems = found or self._command_files()
        commands: dict[str, _Command] = {}
        for item in files:
            clash = taken.get(item.name)
            if clash is not None:
                whose = (
                    "a built-in command"
                    if clash.info.owner == "vis"
                    else (f"a command of extension {clash.info.owner!r}")
                )
                problems.append(
                    f"command file {item.path} was not loaded: /{item.name} is {whose}; "
                    "rename the file to offer it"
                )
                continue
            commands[item.name] = _file_command(item)
        return commands, problems

    def file_problems(self) -> list[str]:
        """Why command files were not offered (a name taken, a broken header…)."""
        found = self._command_files()
        if not found[0]:  # no file to clash: the built-in commands are not needed
            return found[1]
        return self._file_commands({**self._extension_commands(), **self._builtin}, found)[1]

    def _all(self) -> dict[str, _Command]:
        taken = {**self._extension_commands(), **self._builtin}
        return {**self._file_commands(taken)[0], **taken}

    def all(self) -> list[CommandInfo]:
        return sorted((c.info for c in self._all().values()), key=lambda info: info.name)

    def find(self, name: str) -> CommandInfo | None:
        command = self._all().get(name.lstrip("/"))
        return command.info if command else None

    def skipped(self, name: str) -> str | None:
        """Which project command files or extensions Vis skipped may offer ``/name``, and
        why (None: none)."""
        from vis_core.commands.skipped import skipped_offer

        return skipped_offer(self._deps.settings, name.lstrip("/"))

    async def run(self, session: AgentSession | None, text: str) -> CommandResult:
        """Run the command ``text``; what it shows is kept with ``session`` (a
        :class:`CommandNoted`), so a resumed session shows it again. The session is not
        closed meanwhile (:meth:`AgentSession.settled` waits for it)."""
        if session is None:
            return await self._run(session, text)
        with session.command():
            return await self._noted(session, text)

    async def _noted(self, session: AgentSession, text: str) -> CommandResult:
        result = await self._run(session, text)
        shown = result.action is None or result.action is CommandAction.OPEN_DRAFT
        if shown and result.noted:
            from vis_core.events import CommandNoted

            await session.emit(
                CommandNoted(session.id, command=text, markdown=result.markdown, ok=result.ok)
            )
        return result

    async def _run(self, session: AgentSession | None, text: str) -> CommandResult:
        name, raw = parse_command(text)
        command = self._all().get(name)
        if command is None:
            known = ", ".join(f"/{info.name}" for info in self.all())
            return err(f"Unknown command /{name}", f"Known commands: {known}. /help explains them.")
        try:
            args = shlex.split(raw)
        except ValueError:
            args = raw.split()
        ctx = {
            "channel": self._deps.options.channel.value,
            "args": args,
            "raw": raw,
            "session_id": session.id if session else None,
            "workspace_root": str(self._deps.space.root),
            "project_root": str(self._deps.space.project_root),
        }
        if session is not None and session.drafts is not None:  # the draft it works in
            roots = session.drafts.roots()
            ctx.update(workspace_root=str(roots.workspace), project_root=str(roots.project_root))
        try:
            if command.info.owner == "vis" or command.in_host:
                value = command.run({**ctx, "session": session})
            else:
                # run in the session that sent the command, as a tool call of its owner
                value = await self._deps.call_extension(
                    command.info.owner, command.info.name, ctx, session_id=ctx["session_id"]
                )
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # an extension's command says where in its code it raised (a note, see
            # session_worker); the traceback is in vis.log
            where = "".join(f" {note}" for note in getattr(exc, "__notes__", ()))
            return err(f"/{name} failed", f"{type(exc).__name__}: {exc}{where}")
        if (
            command.info.owner != "vis"
            and not command.in_host
            and not isinstance(value, CommandResult | str)
        ):
            return _not_shown(name, command.info.owner, value)
        return _as_result(value)


def _not_shown(name: str, owner: str, value: Any) -> CommandResult:
    """What an extension's command that returned something Vis cannot show gets: what it
    returned, by its class as the extension writes it, and what it may return instead."""
    from vis_core.ipc.values import described

    return err(
        f"/{name} returned {described(value)}, which Vis cannot show",
        f"The run function of /{name} (extension {owner!r}) may return vis.ok(title, "
        "body=None, data=None), vis.err(title, body=None, data=None) or a string (an ok "
        "title); what it has to show goes in the body, as Markdown text.",
    )


def _as_result(value: Any) -> CommandResult:
    if isinstance(value, CommandResult):
        return value
    if isinstance(value, str):
        return ok(value if value.strip() else "Done")
    if value is None:
        return ok("Done")
    ok_flag = getattr(value, "ok", None)
    title = getattr(value, "title", None)
    if isinstance(ok_flag, bool) and isinstance(title, str):  # a result back from a worker
        body = getattr(value, "body", None)
        return CommandResult(ok_flag, title.strip() or "Done", body, getattr(value, "data", None))
    return ok(str(value))


def undo_result(report: UndoReport) -> CommandResult:
    """What ``/undo`` says: the turns undone and each file or link restored or deleted."""
    turns = ", ".join(str(n) for n in report.turns)
    links = set(report.links)
    rows = [
        f"- restored {code_span(p)}" + (" (a link)" if p in links else "") for p in report.restored
    ]
    rows += [
        f"- deleted {code_span(p)} ({'a link ' if p in links else ''}created by the turn)"
        for p in report.removed
    ]
    rows += [f"- could not restore {code_span(p)} ({NOT_KEPT})" for p in report.not_kept]
    rows += [f"- left {code_span(p)}: {CHANGED_SINCE}" for p in report.kept]
    body = "\n".join(rows) or "No file or link differed from before the turn."
    return ok(f"Undid the file changes of turn {turns}", body)


def code_span(text: str) -> str:
    """``text`` (a file name: untrusted) as one Markdown code span, whatever it holds."""
    text = "".join(c if c.isprintable() else "\ufffd" for c in text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _action(action: CommandAction, title: str, body: str | None = None) -> CommandResult:
    return CommandResult(True, title, body, action=action)


def send_prompt(title: str, prompt: PromptToSend) -> CommandResult:
    """A command's result that sends ``prompt`` to the model as the person's request."""
    return CommandResult(True, title, None, data=prompt, action=CommandAction.SEND_PROMPT)


def _builtin_commands(deps: CommandDeps, registry: CommandRegistry) -> list[SlashCommand]:
    """The built-in commands, declared as extensions declare theirs."""

    from vis_core.commands.mcp import mcp_command

    def help_(ctx: dict[str, Any]) -> CommandResult:
        rows = "\n".join(
            f"- `{info.usage}`: {info.doc}" + ("" if info.owner == "vis" else f" ({info.owner})")
            for info in registry.all()
        )
        return _action(CommandAction.OPEN_HELP, "Commands", rows)

    def model(ctx: dict[str, Any]) -> Any:
        session = ctx.get("session")
        if ctx["args"]:
            if session is None:
                return err("No session", "Open a session first.")
            from vis_core.model_choices import unknown_model, use_model

            refused = unknown_model(deps, session, ctx["args"][0])
            return refused if refused is not None else use_model(deps, session, ctx["args"][0])
        label = session.model.label if session is not None else deps.models.label
        problem = session.model.problem if session is not None else deps.models.problem
        body = problem or "Switch with `/model provider/model`, e.g. `/model openai/gpt-5`."
        return _action(CommandAction.OPEN_MODELS, f"Model: {label}", body)

    def login(ctx: dict[str, Any]) -> CommandResult:
        body = (
            "In the terminal app, /login asks for a provider, its key and a model. "
            "Elsewhere, export the provider's key (e.g. ANTHROPIC_API_KEY) or run "
            "`vis --model provider/model`."
        )
        return _action(CommandAction.OPEN_LOGIN, "Log in to a model provider", body)

    async def undo(ctx: dict[str, Any]) -> CommandResult:
        from vis_core.agent.person_input import undo as undo_turns

        session = ctx.get("session")
        if session is None:
            return err("No session", "Open a session first.")
        args = ctx["args"]
        if len(args) > 1 or (args and not args[0].isdigit()):
            return err("Cannot undo", "Write /undo, or /undo N for the last N turns.")
        try:
            report = await undo_turns(
                session, int(args[0]) if args else 1, note=lambda r: undo_result(r).markdown
            )
        except (LookupError, RuntimeError, ValueError, OSError) as exc:
            return err("Nothing undone", str(exc))
        return replace(undo_result(report), noted=False)  # its UserContext keeps the note

    def goal(ctx: dict[str, Any]) -> CommandResult:
        session = ctx.get("session")
        if session is None:
            return err("No session", "Open a session first.")
        if not ctx["raw"]:
            current = deps.store.state_get("vis.goal", session.id)
            return ok("Goal", current or "No goal set. Set one with `/goal TEXT`.")
        deps.store.state_set("vis.goal", session.id, ctx["raw"])
        return ok("Goal set", ctx["raw"])

    def init(ctx: dict[str, Any]) -> CommandResult:
        from vis_core.instructions.init_prompt import init_prompt

        request = PromptToSend(init_prompt(deps.space.root), label="/init")
        return send_prompt("Writing AGENTS.md", request)

    async def reload_(ctx: dict[str, Any]) -> CommandResult:
        # reading every extension again takes the registration worker's time (up to the
        # load time limit): off the loop, so the app and running sessions stay live meanwhile
        summary = await deps.reload()
        return _action(CommandAction.RELOAD, "Reloaded extensions", summary)

    from vis_core.commands.context import context_commands
    from vis_core.commands.draft import draft_command
    from vis_core.commands.export import export_command
    from vis_core.commands.group import run_group
    from vis_core.commands.plan import plan_command

    return [
        *context_commands(deps),
        SlashCommand(
            "init",
            init,
            "Ask the model to write a first AGENTS.md from what it finds in the project",
            "/init",
        ),
        plan_command(deps),
        draft_command(),
        export_command(deps),
        SlashCommand("help", help_, "List commands and key bindings", "/help"),
        SlashCommand(
            "new",
            lambda ctx: _action(CommandAction.NEW_SESSION, "New session"),
            "Start a new session in this workspace",
            "/new",
        ),
        SlashCommand(
            "sessions",
            lambda ctx: _action(CommandAction.OPEN_SESSIONS, "Sessions"),
            "Find and open an earlier session",
            "/sessions",
        ),
        SlashCommand(
            "settings",
            lambda ctx: _action(CommandAction.OPEN_SETTINGS, "Settings"),
            "Open the settings",
            "/settings",
        ),
        SlashCommand("model", model, "Show or switch the model", "/model [provider/model]"),
        SlashCommand(
            "undo", undo, "Restore the files the last turn (or N turns) changed", "/undo [N]"
        ),
        SlashCommand("login", login, "Choose a provider, save its key, pick a model", "/login"),
        SlashCommand("reload", reload_, "Read settings, mcp.json and extensions again", "/reload"),
        SlashCommand("goal", goal, "Set the goal of this session", "/goal TEXT", saveable=True),
        SlashCommand(
            "group",
            functools.partial(run_group, deps),
            "Show or move this session's settings group",
            "/group [NAME]",
        ),
        SlashCommand("quit", lambda ctx: _action(CommandAction.QUIT, "Bye"), "Quit Vis", "/quit"),
        mcp_command(deps),
    ]


def _file_command(item: CommandFile) -> _Command:
    """``/NAME`` of a command file: its body, arguments in place, goes to the model."""

    def run(ctx: dict[str, Any]) -> CommandResult:
        text = item.expand(ctx["raw"], ctx["args"])
        request = PromptToSend(text, label=f"/{item.name}", model=item.model)
        return send_prompt(f"/{item.name}", request)

    owner = "project file" if item.source == "project" else "personal file"
    info = CommandInfo(item.name, item.usage, item.description, saveable=True, owner=owner)
    return _Command(info, run, in_host=True)

"""``/compact``, ``/context`` and ``/fork``: the slash commands over a session's context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.commands import CommandAction, CommandResult, err, literal_markdown, ok
from vis_core.extension.declarations import SlashCommand
from vis_core.model.notes import fold_scope
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from vis_core.command_host import CommandDeps


def context_commands(deps: CommandDeps) -> list[SlashCommand]:
    """The context's built-in commands, declared as extensions declare theirs."""

    def idle_session(ctx: dict[str, Any], name: str) -> tuple[Any, CommandResult | None]:
        session = ctx.get("session")
        if session is None:
            return None, err("No session", "Open a session first.")
        if session.running:
            return None, err(f"/{name} waits for the turn", "Try again when the turn has ended.")
        return session, None

    async def compact(ctx: dict[str, Any]) -> CommandResult:
        session, refused = idle_session(ctx, "compact")
        if refused is not None:
            return refused
        if session.context is None:
            return err("Cannot compact", "This session has no context keeper.")
        fold = await session.context.compact(session, ctx["raw"])
        if fold is None:
            return ok("Nothing to compact", "Every settled turn is folded already.")
        return ok(
            f"Compacted {fold_scope(fold.spans, fold.key)}",
            f"~{fold.removed_tokens:,} tokens left the active context; the history is still "
            f"saved. Gist:\n\n{literal_markdown(fold.gist)}",
        )

    async def context(ctx: dict[str, Any]) -> CommandResult:
        from vis_core.context.report import context_report

        session = ctx.get("session")
        if session is None:
            return err("No session", "Open a session first.")
        system = await session.system_prompt()
        report = context_report(session, deps.store.folds(session.id), system)
        return ok("Context of the next request", report)

    async def fork(ctx: dict[str, Any]) -> CommandResult:
        import asyncio

        from vis_core.extension_host.session_changes import fork_stored

        session, refused = idle_session(ctx, "fork")
        if refused is not None:
            return refused
        raw = ctx["raw"].strip().removeprefix("t")
        turn: int | None = None
        if raw:
            if not raw.isdigit():
                return err(
                    "Cannot fork", f"/fork takes a turn number such as 3, not {ctx['raw']!r}."
                )
            turn = int(raw)
        try:
            row = await asyncio.wrap_future(fork_stored(deps.store, session.id, turn, "/fork"))
        except (LookupError, ValueError) as exc:
            return err("Cannot fork", str(exc))
        return CommandResult(
            True,
            f"Forked into {row.title}",
            f"{plural(row.turn_count, 'turn')} copied; session {row.id[:8]}.",
            data=row.id,
            action=CommandAction.OPEN_SESSION,
        )

    return [
        SlashCommand(
            "compact",
            compact,
            "Fold every settled turn into a gist Vis asks the model for",
            "/compact [instructions]",
        ),
        SlashCommand(
            "context",
            context,
            "Show what the next request carries: system prompt, tools, turns, folds, tokens",
            "/context",
        ),
        SlashCommand("fork", fork, "Copy this session up to a turn into a new one", "/fork [TURN]"),
    ]

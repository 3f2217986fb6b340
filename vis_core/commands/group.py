"""``/group``: show the current session's group, or move the session into another one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.commands import CommandResult, err, ok

if TYPE_CHECKING:
    from vis_core.command_host import CommandDeps


async def run_group(deps: CommandDeps, ctx: dict[str, Any]) -> CommandResult:
    """``/group`` shows the group; ``/group NAME`` moves the session (the group is created)."""
    session = ctx.get("session")
    session_id = ctx.get("session_id") or (session.id if session is not None else None)
    if session_id is None:
        return err("No session", "Open a session first, then move it with `/group NAME`.")
    name = str(ctx.get("raw") or "").strip()
    current = deps.settings.session_group(session_id)
    if not name:
        known = ", ".join(f"`{g.name}`" for g in deps.store.groups()) or "none yet"
        where = f"This session is in group `{current}`." if current else "It is in no group."
        return ok("Group", f"{where} Groups: {known}. Move it with `/group NAME`.")
    if any(ord(ch) < 32 for ch in name) or len(name) > 200:
        return err("Cannot move the session", "A group name is one line of at most 200 characters.")
    failed = await deps.settings.move_to_group(session_id, name)
    return ok(
        f"Session moved to group {name}",
        "Settings saved for this group now apply to this session, from its next request."
        + "".join(f"\n- {error}" for error in failed),
    )

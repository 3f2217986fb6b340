"""``/draft``: the session's draft, what approval would commit, and the person's actions on it
(``new [LABEL]``, ``approve [MESSAGE]``, ``sync``, ``discard``). ``/draft approve`` lands the
draft as ``/draft`` last showed it: one changed since is shown again, and nothing lands."""

from __future__ import annotations

from typing import Any

from vis_core.commands import CommandAction, CommandResult, code_span, err, ok
from vis_core.drafts import DraftChanged, DraftError, guarded
from vis_core.drafts.session import SessionDrafts
from vis_core.extension.declarations import SlashCommand
from vis_core.extension.hooks import OperationBlocked
from vis_core.model.draft import Draft, DraftView
from vis_core.tools.display import plural

USAGE = "/draft [new [LABEL] | approve [MESSAGE] | sync | discard]"
DIFF_CHARS = 20_000


def _fenced(text: str) -> str:
    fence = "````" if "```" in text else "```"
    return f"{fence}diff\n{text}\n{fence}"


async def run_draft(ctx: dict[str, Any]) -> CommandResult:
    session = ctx.get("session")
    drafts = getattr(session, "drafts", None)
    if session is None or drafts is None:
        return err("No session", "Open a session first.")
    args = list(ctx["args"])
    action = args.pop(0) if args else ""
    draft = drafts.draft
    if action not in ("", "new", "approve", "sync", "discard"):
        return err(f"Unknown /draft action {action!r}", f"Write {USAGE}.")
    if action and session.running:
        return err("A turn is running", "Press Esc to stop it, then use /draft again.")
    try:
        if action == "new":
            made = await drafts.create(args[0] if args else None)
            return ok(
                f"Working in draft {made.label}",
                f"{made.backend} at {code_span(str(made.root))}; the workspace stays as it is "
                "until you approve (`/draft approve`) or discard (`/draft discard`).",
            )
        if draft is None:
            return ok(
                "Not in a draft",
                "`/draft new [LABEL]` starts one: the session then works on an isolated copy "
                "that you approve or discard.",
            )
        if action == "approve":
            message = " ".join(args)
            shown = drafts.shown
            try:
                result = await drafts.approve(message or None, "" if shown is None else shown.state)
            except DraftChanged as exc:
                return await _view(drafts, draft, refused=str(exc), message=message)
            files = (
                "\n".join(f"- {code_span(name)}" for name in result["files"]) or "No file differed."
            )
            into = f" into {result['target_branch']}" if result.get("target_branch") else ""
            return ok(f"Approved draft {draft.label}{into}", files)
        if action == "sync":  # the draft changed: shown again, as the next approve lands it
            files = await drafts.sync()
            brought = ", ".join(code_span(name) for name in files) or "nothing new"
            return await _view(drafts, draft, synced=f"Synced: brought in {brought}.")
        if action == "discard":
            await drafts.discard()
            return ok(f"Discarded draft {draft.label}", "The workspace is as it was.")
    except (DraftError, OperationBlocked, LookupError) as exc:
        return err(f"/draft {action} refused", str(exc))
    return await _view(drafts, draft)


async def _view(
    drafts: SessionDrafts, draft: Draft, refused: str = "", message: str = "", synced: str = ""
) -> CommandResult:
    """The draft shown to the person: what their next ``/draft approve`` lands. ``refused``:
    why an approval (given ``message``) was refused; the view then says what to do.
    ``synced``: what a sync just brought in."""
    review = await drafts.show()
    files, diff = review.files, review.diff
    if len(diff) > DIFF_CHARS:
        diff = diff[:DIFF_CHARS] + f"\n… (cut; the whole diff: git -C {draft.root} diff --cached)"
    summary = (
        f"{draft.backend} at {code_span(str(draft.root))}"
        + (f"; approval commits to {draft.target_branch}" if draft.target_branch else "")
        + f". {plural(len(files), 'file differs', 'files differ')}."
        + "".join(f" {said}" for said in _guarded(files, drafts, draft) if said)
    )
    again = code_span(f"/draft approve {message}".strip())
    note = synced or (
        f"{refused[:1].upper()}{refused[1:]}. "
        f"Here it is now: approving again ({again}) lands it as shown."
        if refused
        else ""
    )
    title = f"Synced draft {draft.label}" if synced else f"Draft {draft.label}"
    body = (
        (f"{note}\n\n" if note else "")
        + summary
        + "\n\n"
        + (_fenced(diff) if diff else "No change yet.")
        + "\n\nActions: `/draft approve [MESSAGE]`, `/draft sync`, `/draft discard`."
    )
    return CommandResult(
        not refused,
        "/draft approve refused" if refused else title,
        body,
        data=DraftView(draft.label, summary, diff, note=note, message=message),
        action=CommandAction.OPEN_DRAFT,
    )


def _guarded(files: list[str], drafts: SessionDrafts, draft: Draft) -> tuple[str, str]:
    """What the view says of the files approval refuses (in a ``.git``, or making a git
    repository) or warns of."""
    found = guarded.repository_files(files)
    made = guarded.made_repositories(files, drafts.drafts.landing_roots(draft))
    refused = (
        "Approval will be refused: the draft writes into a .git "
        f"({guarded.listed(found, code_span)}), which approval never writes (git would run "
        "what its config names). Remove those files from the draft, or discard it."
        if found
        else f"Approval will be refused: the draft {guarded.repositories_made(made, code_span)}"
        ", which approval never writes (git would run what its config names). Remove those "
        "files from the draft, or discard it."
        if made
        else ""
    )
    return refused, guarded.control_warning(files, code_span)


def draft_command() -> SlashCommand:
    return SlashCommand(
        "draft", run_draft, "Show the session's draft; approve, sync or discard it", USAGE
    )

"""``vis drafts``: list the drafts sessions left, approve or discard one from a shell."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.drafts import DraftError, Drafts
from vis_core.drafts.guarded import control_warning
from vis_core.drafts.session import SessionDrafts, approved
from vis_core.extension.hooks import OperationBlocked
from vis_core.model.channel import Channel
from vis_core.model.draft import Draft
from vis_core.model.exit_status import EXIT_FAILED, EXIT_OK
from vis_core.model.lines import on_one_line
from vis_core.tools.display import age, plural

if TYPE_CHECKING:
    from vis_core.agent.deps import SessionDraft


def add_drafts_parser(commands: argparse._SubParsersAction) -> None:
    drafts = commands.add_parser("drafts", help="list the sessions' drafts; approve or discard one")
    actions = drafts.add_subparsers(dest="drafts_action")
    approve = actions.add_parser(
        "approve", help="commit a draft's changes to its branch and workspace"
    )
    approve.add_argument("draft", help="its label, id or session id")
    approve.add_argument("-m", "--message", default=None, help="the commit message")
    discard = actions.add_parser("discard", help="delete a draft; the workspace is untouched")
    discard.add_argument("draft", help="its label, id or session id")


def _line(drafts: Drafts, draft: Draft) -> str:
    if not Path(draft.workspace).is_dir():
        changed = "its workspace is gone (`vis drafts discard` removes the draft)"
    elif not Path(draft.root).is_dir():
        changed = "its folder is gone"
    else:
        try:
            changed = plural(len(drafts.changed_files(draft)), "file")
        except DraftError as exc:
            changed = f"unreadable ({exc})"
    session = (draft.session_id or "-")[:8]
    return (
        f"{draft.label}  {draft.backend}  session {session}  {changed}  {age(draft.created)} "
        f"old  {draft.workspace}" + (f" -> {draft.target_branch}" if draft.target_branch else "")
    )


async def _in_session(draft: Draft, act: Callable[[SessionDraft], Awaitable[Any]]) -> Any:
    """``act`` on the draft in its session, opened here, so its extensions' op hooks run as
    they do in the app; refused when that session is open in another Vis."""
    from vis_core.host import Host
    from vis_core.host_options import HostOptions

    host = await Host.open(HostOptions(workspace=Path(draft.workspace), channel=Channel.CLI))
    try:
        if draft.session_id is None or host.store.get_session(draft.session_id) is None:
            # its session was deleted: the draft alone, with no session's hooks to run
            return await act(SessionDrafts.alone(host.drafts, draft))
        session = await host.open_session(draft.session_id)
        drafts = session.drafts
        if drafts is None or drafts.draft is None or drafts.draft.id != draft.id:
            raise DraftError(f"session {draft.session_id[:8]} is not in draft {draft.label}")
        return await act(drafts)
    finally:
        await host.close()


def run_drafts(args: argparse.Namespace) -> int:
    from vis_core.paths import VisPaths
    from vis_core.store import Store

    paths = VisPaths.from_env().ensure()
    store = Store(paths.db_file)
    drafts = Drafts(store, paths.data_dir)
    try:
        action = getattr(args, "drafts_action", None)
        if action is None:
            listed = drafts.listed()
            if not listed:
                print("No drafts.")
            for draft in listed:
                print(_line(drafts, draft))
            return EXIT_OK
        draft = drafts.find(args.draft)
        if not Path(draft.workspace).is_dir():  # no session can open there, nor land in it
            if action != "discard":
                raise DraftError(
                    f"the workspace of draft {draft.label}, {draft.workspace}, is gone: there "
                    f"is nothing to approve it into (`vis drafts discard {draft.label}`)"
                )
            drafts.discard(draft)
            print(f"Discarded draft {draft.label}; its workspace {draft.workspace} was gone.")
            return EXIT_OK
        store.close()
        if action == "discard":
            asyncio.run(_in_session(draft, lambda d: d.discard()))
            print(f"Discarded draft {draft.label}; {draft.workspace} is as it was.")
            return EXIT_OK
        result = asyncio.run(_in_session(draft, lambda d: d.approve(args.message)))
        print(f"Approved draft {draft.label}: {approved(result)}.")
        warning = control_warning(result["files"])
        if warning:
            print(f"vis drafts: warning: {warning}", file=sys.stderr)
        for name in result["files"]:
            print(f"  {on_one_line(name)}")  # a line break in a name cannot fake a line
        return EXIT_OK
    except (DraftError, OperationBlocked, LookupError) as exc:
        print(f"vis drafts: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        store.close()

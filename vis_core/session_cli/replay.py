"""``vis replay ID``: a stored session's model answers re-run through the scripted provider
against the current code and a copy of its workspace; where a block's output or an Activity's
outcome now differs is reported (a session that once worked becomes a regression test)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.model.block import PYTHON_EXECUTION
from vis_core.model.channel import Channel
from vis_core.model.draft import DraftAction
from vis_core.model.exit_status import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from vis_core.model.turn import ContextOrigin, TurnStatus
from vis_core.store.stored_session import (
    SessionNotFound,
    StoredBlock,
    StoredSession,
    StoredTurn,
    find_session,
    read_session,
)
from vis_core.terminal import raw_stream, terminal_json, terminal_text
from vis_core.tools.display import plural

if TYPE_CHECKING:
    from vis_core.store import Store

EXIT_DIFFERENT = EXIT_FAILED  # the replay differs from the recording
REPLAYED_FAILURE = "the recorded turn failed here (replayed)"
SHORT = 160  # characters of a value a difference shows


class ReplayError(Exception):
    """The session cannot be replayed (named for the person)."""


@dataclass(frozen=True)
class Difference:
    """One place where the replay differs from the recording."""

    turn: int
    block: int | None  # the block's index in its turn; None: the turn itself
    what: str  # "output", "error", "status", "activity 2", "blocks", ...
    expected: str
    now: str

    def line(self) -> str:
        where = f"turn {self.turn}" + (f", block {self.block}" if self.block is not None else "")
        return f"{where}: {self.what}\n  expected: {self.expected}\n  now:      {self.now}"


# -- the script ----------------------------------------------------------------------------


def script_of(session: StoredSession) -> list[dict[str, Any]]:
    """The model's recorded answers, one scripted response per model request, in order."""
    responses: list[dict[str, Any]] = []
    for turn in session.turns:
        if not turn.request.startswith("!"):  # a person's !command asked no model
            responses += _turn_script(turn)
    return responses


def _turn_script(turn: StoredTurn) -> list[dict[str, Any]]:
    by_request: dict[int, dict[str, Any]] = {}
    for block in turn.blocks:
        request = block.index - 1  # the calls before it, the request's iteration
        if "call" in by_request.get(request, {}):  # a call the limit left unrun
            request = block.index
        by_request.setdefault(request, {})["call"] = block
    for request, text in turn.answers.items():
        by_request.setdefault(request, {})["text"] = text
    for request, text in turn.thinking.items():
        by_request.setdefault(request, {})["thinking"] = text
    last = max(by_request, default=-1)
    if turn.status == TurnStatus.COMPLETED and "call" in by_request.get(last, {"call": 1}):
        last += 1  # the final answer was empty: no event kept it
    responses = []
    for request in range(last + 1):
        parts = by_request.get(request, {})
        response: dict[str, Any] = {"text": parts.get("text", "")}
        if parts.get("thinking"):
            response["thinking"] = parts["thinking"]
        block: StoredBlock | None = parts.get("call")
        if block is not None and block.tool == PYTHON_EXECUTION:
            response["code"] = block.code
        elif block is not None:
            response["tool"] = {"name": block.tool, "arguments": block.arguments}
        responses.append(response)
    if turn.status in (TurnStatus.FAILED, TurnStatus.CANCELLED):
        # it ended there: so the replay does, and the next turn's answers align
        failure = {"status": 400, "message": REPLAYED_FAILURE}
        if responses and not {"code", "tool"} & set(responses[-1]):
            responses[-1]["error"] = failure  # the text it streamed before it failed
        else:
            responses.append({"error": failure})
    return responses


# -- what each turn ran under ----------------------------------------------------------------

_LIMIT = re.compile(r"stopped after (\d+) iterations \((.+)\)")


@dataclass
class TurnSetup:
    """What a recorded turn ran under beside its request, as its events keep it."""

    plan: bool | None = None  # plan mode: on, told it ended, else neither (off)
    draft: str | None = None  # the label of a draft entered before it (`vis run --draft`)
    limit: tuple[int, str] | None = None  # the iteration limit that stopped it, and its source
    approved: bool = False  # the model's draft_approve() went through in it


def turn_setups(store: Store, session_id: str) -> dict[str, TurnSetup]:
    """Each turn's :class:`TurnSetup`, by turn id, from the session's event log."""
    from vis_core.agent.plan import LEFT_NOTE, PLANNING_NOTE

    setups: dict[str, TurnSetup] = {}
    entered: str | None = None  # a draft entered between turns: the next turn runs in it
    kinds = ("TurnStarted", "UserContext", "DraftChanged", "TurnEnded")
    for stored in store.events(session_id, types=kinds):
        data = json.loads(stored.data)
        kind, turn = data.get("type"), setups.get(data.get("turn_id") or "")
        if kind == "TurnStarted":
            setups[data.get("turn_id", "")] = TurnSetup(draft=entered)
            entered = None
        elif kind == "DraftChanged" and turn is None:
            if data.get("action") == DraftAction.ENTERED:
                entered = str(data.get("label") or "") or None
        elif turn is None:
            continue
        elif kind == "DraftChanged" and data.get("action") == DraftAction.APPROVED:
            turn.approved = True
        elif kind == "UserContext" and data.get("origin") == ContextOrigin.PLAN:
            text = data.get("text")
            turn.plan = True if text == PLANNING_NOTE else False if text == LEFT_NOTE else None
        elif kind == "TurnEnded" and data.get("status") == TurnStatus.MAX_ITERATIONS:
            limit = _LIMIT.fullmatch(str(data.get("error") or ""))
            turn.limit = (int(limit[1]), limit[2]) if limit else None
    return setups


_DRAFT_ID = re.compile(r"/drafts/([0-9a-f]{16})/")


def draft_history(store: Store, session_id: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The label and id of each draft the session entered, and the commits its draft
    approvals made (an event before Vis kept them, or a copy draft's approval, has none),
    each in order."""
    entered: list[tuple[str, str]] = []
    commits: list[str] = []
    for stored in store.events(session_id, types=("DraftChanged",)):
        data = json.loads(stored.data)
        action, commit = data.get("action"), str(data.get("commit") or "")
        if action == DraftAction.ENTERED:
            made = _DRAFT_ID.search(str(data.get("root") or "") + "/")
            entered.append((str(data.get("label") or ""), made[1] if made else ""))
        elif action == DraftAction.APPROVED and re.fullmatch(r"[0-9a-f]{40,64}", commit):
            commits.append(commit)
    return entered, commits


# -- comparing -----------------------------------------------------------------------------

_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|m|min)\b")


def _short(text: str | None) -> str:
    if text is None:
        return "(none)"
    text = text if len(text) <= SHORT else text[: SHORT - 1] + "…"
    return json.dumps(text, ensure_ascii=False)


def _first_difference(expected: str, now: str) -> tuple[str, str]:
    """The first line where two outputs part (with its number), else both whole."""
    old, new = expected.splitlines(), now.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            return f"line {number}: {_short(a)}", f"line {number}: {_short(b)}"
    if len(old) != len(new):
        n = min(len(old), len(new))
        return (
            plural(len(old), "line")
            + (f", line {n + 1}: {_short(old[n])}" if n < len(old) else ""),
            plural(len(new), "line")
            + (f", line {n + 1}: {_short(new[n])}" if n < len(new) else ""),
        )
    return _short(expected), _short(now)


def _last(error: str | None) -> str:
    """An error's last line (a traceback's exception)."""
    if error is None:
        return "(none)"
    lines = [line for line in error.splitlines() if line.strip()]
    return _short(lines[-1] if lines else error)


def _outcome(record: dict[str, Any]) -> dict[str, Any]:
    """What an Activity's outcome is compared by (durations in its summary left out)."""
    shown = record.get("presentation") or {}
    return {
        "tool": record.get("tool"),
        "state": record.get("state"),
        "headline": shown.get("headline"),
        "summary": _DURATION.sub("…", shown.get("summary") or ""),
        "outcome": shown.get("outcome"),
        "error": record.get("error"),
    }


def _outcome_text(outcome: dict[str, Any] | None) -> str:
    if outcome is None:
        return "(no Activity)"
    text = f"{outcome['tool']} {outcome['state']}: {outcome['headline']} — {outcome['summary']}"
    if outcome["outcome"]:
        text += f" ({outcome['outcome']})"
    if outcome["error"]:
        text += f" error: {outcome['error']}"
    return _short(text)


def compare(recorded: StoredSession, replayed: StoredSession) -> list[Difference]:
    """Every turn's status, each block's output and error, each Activity's outcome."""
    found: list[Difference] = []
    now_turns = {turn.position: turn for turn in replayed.turns}
    for position, old in enumerate(recorded.turns, 1):
        new = now_turns.get(position)
        if new is None:
            found.append(Difference(position, None, "turn", "ran", "did not run"))
            continue
        if old.status != new.status and not (
            old.status == TurnStatus.CANCELLED
            and new.status == TurnStatus.FAILED  # the replay stops it there
        ):
            expected, now = (
                f"{turn.status}" + (f" ({_short(turn.error)})" if turn.error else "")
                for turn in (old, new)
            )
            found.append(Difference(position, None, "status", expected, now))
        new_blocks = {block.index: block for block in new.blocks}
        for block in old.blocks:
            found += _compare_block(position, block, new_blocks.get(block.index))
        extra = [b.index for b in new.blocks if b.index not in {o.index for o in old.blocks}]
        if extra:
            found.append(
                Difference(position, None, "blocks", f"{len(old.blocks)}", f"{len(new.blocks)}")
            )
        found += _compare_activities(position, None, old.activities, new.activities)
    return found


def _compare_block(turn: int, old: StoredBlock, new: StoredBlock | None) -> list[Difference]:
    if new is None:
        return [Difference(turn, old.index, "block", "ran", "did not run")]
    found = []
    if old.stdout != new.stdout:
        found.append(
            Difference(turn, old.index, "output", *_first_difference(old.stdout, new.stdout))
        )
    if old.error != new.error:
        found.append(Difference(turn, old.index, "error", _last(old.error), _last(new.error)))
    return found + _compare_activities(turn, old.index, old.activities, new.activities)


def _compare_activities(
    turn: int, block: int | None, old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> list[Difference]:
    found = []
    for number in range(max(len(old), len(new))):
        before = _outcome(old[number]) if number < len(old) else None
        after = _outcome(new[number]) if number < len(new) else None
        if before != after:
            found.append(
                Difference(
                    turn,
                    block,
                    f"activity {number + 1}",
                    _outcome_text(before),
                    _outcome_text(after),
                )
            )
    return found


# -- running -------------------------------------------------------------------------------


# what differs between two runs of one block by design: the folder (the session's id), time
# and random part of a saved output's name, a draft's folder (its random id), a process id,
# a commit's id (its time: an approved draft's commit), the signal that ended a command
# Vis stopped (SIGTERM, or SIGKILL when the machine was too busy for it to end in the grace),
# and the sizes a truncation note gives: they count what the rest rewrites (a pid of another
# width, the copy's path)
_SAVED_OUTPUT = re.compile(r"(/outputs/)[0-9a-f]+(/[\w-]+)-\d{8}-\d{6}-[0-9a-f]{8}\.txt")
_DRAFT_FOLDER = re.compile(r"(/drafts/)[0-9a-f]{16}\b")
_COMMIT = re.compile(r"\b[0-9a-f]{40}\b")
_PID = re.compile(r"\bpid \d+")
_STOPPED = re.compile(r"\bstopped, exit -\d+")
_CUT_SIZES = re.compile(r"(\[Output truncated: showing the \w+ [\d,]+ of [\d,]+ lines) \([^)]*\)")


def _rewritten(value: Any, rewrite: Callable[[str], str]) -> Any:
    """``value`` (text, or dicts and lists of it) with each text rewritten."""
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, dict):
        return {key: _rewritten(item, rewrite) for key, item in value.items()}
    if isinstance(value, list):
        return [_rewritten(item, rewrite) for item in value]
    return value


def _normalized(
    session: StoredSession,
    copy: Path | None = None,
    original: str = "",
    renamed: dict[str, str] | None = None,
) -> None:
    """``session``'s texts as they compare: what differs by design between two runs made
    alike; with ``copy``, the copy's path written as the recorded workspace's ``original``,
    and each name of ``renamed`` as it was recorded (a draft's random label and id)."""

    def rewrite(text: str) -> str:
        if copy is not None:
            text = text.replace(str(copy), original)
        for now, recorded in (renamed or {}).items():
            text = text.replace(now, recorded)
        text = _DRAFT_FOLDER.sub(r"\1…", _SAVED_OUTPUT.sub(r"\1…\2.txt", text))
        text = _STOPPED.sub("stopped, exit -…", _PID.sub("pid …", text))
        text = _CUT_SIZES.sub(r"\1 (…)", text)
        return _COMMIT.sub("<commit>", text)

    for turn in session.turns:
        turn.error = _rewritten(turn.error, rewrite)
        turn.activities = _rewritten(turn.activities, rewrite)
        for block in turn.blocks:
            block.stdout = _rewritten(block.stdout, rewrite)
            block.error = _rewritten(block.error, rewrite)
            block.activities = _rewritten(block.activities, rewrite)


async def _replay(
    recorded: StoredSession,
    copy: Path,
    script: Path,
    setups: dict[str, TurnSetup],
    jailed: bool = True,
) -> tuple[StoredSession, list[tuple[str, str]]]:
    """Run every recorded request as a turn of a new session in ``copy``, each as it ran
    (``setups``), jailed unless ``jailed`` is False; the replayed session read back with the
    drafts it entered (:func:`draft_history`), then deleted with its drafts (a replay leaves
    no session behind)."""
    from vis_core.host import Host
    from vis_core.host_options import HostOptions

    options = HostOptions(
        workspace=copy,
        provider="scripted",
        script=script,
        toggles=(f"jail={'true' if jailed else 'false'}",),  # over every scope of the setting
        channel=Channel.CLI,
        allow_approve=any(setup.approved for setup in setups.values()),
    )
    host = await Host.open(options)
    try:
        refusal = host.settings.refusal()
        if refusal is not None:
            raise ReplayError(refusal)
        session = await host.new_session()
        try:
            if jailed and host.space.jail_policy(session.id) != (True, None):
                raise ReplayError("the jail could not be switched on for the replay")
            try:
                limits = (session.limits.max_iterations, session.limits.max_iterations_source)
                for turn in recorded.turns:
                    await _set_up(session, setups.get(turn.id) or TurnSetup(), limits)
                    command = turn.request.startswith("!")
                    await session.submit(turn.request, command=command)
            finally:  # what it left running stops, as when `vis run` ends: then it is read
                await session.close()
            row = host.store.get_session(session.id)
            assert row is not None
            return read_session(host.store, row), draft_history(host.store, session.id)[0]
        finally:
            left = [d for d in host.drafts.listed() if d.session_id == session.id]
            for draft in left:  # before the copy they branch from goes
                await asyncio.to_thread(host.drafts.discard, draft)
            host.store.delete_session(session.id)
            data = host.paths.data_dir
            for kept in (data / "checkpoints" / session.id, data / "outputs" / session.id):
                shutil.rmtree(kept, ignore_errors=True)
            (data / "sessions" / f"{session.id}.lock").unlink(missing_ok=True)
    finally:
        await host.close()


async def _set_up(session: Any, setup: TurnSetup, limits: tuple[int, str]) -> None:
    """Put ``session`` as the recorded turn ran: its iteration limit (``limits`` unless one
    stopped it), plan mode, the draft entered before it."""
    from vis_core.drafts import DraftError

    session.limits.max_iterations, session.limits.max_iterations_source = setup.limit or limits
    if setup.plan is not None:
        session.plan.set(setup.plan)
    elif session.plan.active:  # left without a note: an approved plan
        session.plan.set(False, told=True)
    drafts = session.drafts
    if setup.draft is not None and drafts is not None and drafts.draft is None:
        try:
            await drafts.create(setup.draft)
        except DraftError as exc:
            raise ReplayError(f"the recorded turn ran in draft {setup.draft}: {exc}") from None


def _rewind(copy: Path, recorded: StoredSession, checkpoints_dir: Path) -> list[str]:
    """Put the files and links the session changed back in ``copy`` as they were before its
    first checkpointed turn (read from its checkpoints, which stay as they are); others stay
    as the workspace has them now (links only where that checkpoint recorded them). The
    paths that could not be put back. What the blocks recorded is at most 200 paths a block,
    however many links a block made."""
    from vis_core.tools.checkpoints import Checkpoints

    changed = {
        str(change.get("path"))
        for turn in recorded.turns
        for block in turn.blocks
        for change in block.files
        if change.get("path")
    }
    if not changed:
        return []
    kept = Checkpoints(copy, checkpoints_dir)
    oldest = deque(kept.newest_first(), maxlen=1)
    if not oldest:
        return sorted(changed)
    first, links = oldest[0].files, oldest[0].links
    missed = []
    for rel in sorted(changed):
        try:
            if links is not None and rel in links:  # a link then (what is there now goes)
                with contextlib.suppress(FileNotFoundError):
                    kept.files.unlink(rel)
                kept.files.symlink(links[rel], rel)
                continue
            if rel not in first:  # the session created it
                kept.files.unlink(rel)
                continue
            _size, _mtime, mode, digest = first[rel][:4]
            data = kept.kept_bytes(digest) if digest is not None else None
            if data is None:
                missed.append(rel)
                continue
            kept.files.write_atomic(rel, data, mode=mode, suffix=".vis-replay")
        except FileNotFoundError:
            continue
        except OSError:
            missed.append(rel)
    return missed


def _unapprove(copy: Path, commits: list[str]) -> None:
    """Put back each branch of the copy's repository that the session's approvals moved
    (newest first: a branch at an approval's commit goes to its parent); the branch checked
    out with its files, as ``git reset --keep`` does (where a file changed since, the index
    only). Through Vis's hardened git (no hook, filter or driver of the copy runs)."""
    from vis_core.system.git import GitFailed, run_git

    repository = copy / ".git"
    if (  # only the copy's own: a link, a .git file, a commondir lead to another repository
        not commits
        or repository.is_symlink()
        or not repository.is_dir()
        or os.path.lexists(repository / "commondir")
    ):
        return
    own = (f"--git-dir={repository}", f"--work-tree={copy}")  # over core.worktree

    def git(*args: str) -> str | None:
        done = run_git((*own, *args), copy)
        return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None

    try:
        head = git("symbolic-ref", "-q", "HEAD")
        git("update-index", "-q", "--refresh")  # the copy's files are new to the index
        for commit in reversed(commits):
            refs = git("for-each-ref", "--points-at", commit, "--format=%(refname)", "refs/heads/")
            parent = git("rev-parse", "--verify", "-q", f"{commit}^")
            if not refs or parent is None:
                continue
            for ref in refs.splitlines():
                if ref == head and git("reset", "-q", "--keep", parent) is not None:
                    continue
                if git("update-ref", ref, parent, commit) is not None and ref == head:
                    git("read-tree", parent)
    except GitFailed:
        return


def _trust_copy(original: Path, copy: Path) -> str:
    """Trust the copy's project for this replay as the person trusts ``original``'s, when
    the copy's control files (``.vis/``, ``vis.yml``, ``.env*``) are exactly those trusted:
    its extensions, MCP servers and values then load as they did. What the replay uses."""
    from vis_core.paths import (
        TrustListError,
        TrustStore,
        VisPaths,
        find_project_root,
        take_snapshot,
        trust_command,
    )

    root = find_project_root(original)
    if root != original.resolve():
        return f"the project {root} lies above the workspace; its extensions were not copied"
    store = TrustStore(VisPaths.from_env())
    try:
        if not store.is_trusted(root):
            return (
                f"the project {root} is not trusted: its extensions and MCP servers were "
                f"skipped (`{trust_command(root)}` first to replay with them)"
            )
        snapshot = take_snapshot(copy)
        if snapshot.fingerprint != take_snapshot(root).fingerprint:
            return (
                "the session changed the project's control files (.vis/, vis.yml, .env*): "
                "the copy's are not what you trusted, so its extensions were skipped"
            )
        store.trust(copy, snapshot)
    except TrustListError as exc:
        return f"{exc}; the project's extensions were skipped"
    return "the trusted project's extensions and MCP servers loaded"


def _forget_copy(copy: Path) -> None:
    from vis_core.paths import TrustListError, TrustStore, VisPaths

    with contextlib.suppress(TrustListError):
        TrustStore(VisPaths.from_env()).forget(copy)


@dataclass(frozen=True)
class Replayed:
    """What ``vis replay`` found, and what it says beside the differences."""

    recorded: StoredSession
    differences: list[Difference]
    not_rewound: list[str]  # files the session changed, replayed as they are now
    left_out: list[str]  # pipes, sockets and devices of the workspace, never copied
    project: str  # what became of the project's extensions


def copy_workspace(workspace: Path, copy: Path) -> list[str]:
    """Copy ``workspace`` to the new folder ``copy`` as a draft is copied (holes kept, a file
    over ``LARGEST_FILE`` or a copy past ``LARGEST_COPY`` in all refused by name, nothing
    followed out through a link); the pipes, sockets and devices left out, by name."""
    from vis_core.drafts import files as draft_files
    from vis_core.drafts.errors import DraftError

    try:
        return draft_files.copy_tree(workspace, copy, draft_files.Budget("vis replay"))
    except (DraftError, OSError) as exc:
        raise ReplayError(f"cannot copy the workspace {workspace}: {exc}") from None


UNJAILED_RISK = (
    "the session's recorded blocks and shell commands run unconfined: the model's code reads "
    "and writes whatever your user can, the live workspace included"
)


def replay_with_notes(store: Store, key: str, *, jailed: bool = True) -> Replayed:
    """Replay the session ``key`` names: in the jail, whatever the ``jail`` setting says,
    unless ``jailed`` is False (``--unjailed``)."""
    if jailed:
        from vis_core.system.jail_check import jail_problem

        problem = jail_problem()
        if problem is not None:
            raise ReplayError(
                "the replay runs the model's recorded code in the jail, so that it touches "
                f"only a copy of the workspace, and the jail cannot run here: {problem}. "
                f"`vis replay --unjailed` runs it anyway ({UNJAILED_RISK})"
            )
    row = find_session(store, key)
    recorded = read_session(store, row)
    if not recorded.turns:
        raise ReplayError(f"session {row.id[:8]} has no turns to replay")
    workspace = Path(row.workspace)
    if not workspace.is_dir():
        raise ReplayError(
            f"the workspace of session {row.id[:8]}, {workspace}, is gone; replay needs it to copy"
        )
    with tempfile.TemporaryDirectory(prefix="vis-replay-") as folder:
        copy = Path(folder, "workspace")
        left_out = copy_workspace(workspace, copy)
        from vis_core.paths import VisPaths

        missed = _rewind(copy, recorded, VisPaths.from_env().data_dir / "checkpoints" / row.id)
        entered_then, commits = draft_history(store, row.id)
        _unapprove(copy, commits)
        script = Path(folder, "script.json")
        script.write_text(json.dumps(script_of(recorded)), encoding="utf-8")
        project = _trust_copy(workspace, copy)
        try:
            setups = turn_setups(store, row.id)
            replayed, entered = asyncio.run(_replay(recorded, copy, script, setups, jailed))
        finally:
            _forget_copy(copy)
        renamed = {  # a draft_create() without a label is named at random
            now: then
            for pair in zip(entered, entered_then, strict=False)
            for now, then in zip(*pair, strict=True)
            if now and then and now != then
        }
        _normalized(replayed, copy.resolve(), row.workspace, renamed)
    _normalized(recorded)
    return Replayed(recorded, compare(recorded, replayed), missed, left_out, project)


def run_replay(args: argparse.Namespace) -> int:
    from vis_core.paths import VisPaths
    from vis_core.store import Store, StoreError

    store = Store(VisPaths.from_env().ensure().db_file)
    try:
        if args.unjailed:
            print(f"vis replay: --unjailed: {UNJAILED_RISK}", file=sys.stderr)
        done = replay_with_notes(store, args.session_id, jailed=not args.unjailed)
    except (SessionNotFound, ReplayError, StoreError) as exc:
        print(f"vis replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    recorded, differences = done.recorded, done.differences
    blocks = sum(len(turn.blocks) for turn in recorded.turns)
    if done.not_rewound:
        print(
            "vis replay: these files the session changed were replayed as they are now (no "
            f"copy from before the session was kept): {', '.join(done.not_rewound)}",
            file=sys.stderr,
        )
    if done.left_out:
        print(
            "vis replay: left out of the copy (a named pipe, socket or device, never "
            f"opened): {terminal_text(', '.join(done.left_out))}",
            file=sys.stderr,
        )
    print(f"vis replay: {done.project}", file=sys.stderr)
    if args.json:
        report = {
            "session_id": recorded.row.id,
            "turns": len(recorded.turns),
            "blocks": blocks,
            "identical": not differences,
            "not_rewound": done.not_rewound,
            "left_out": done.left_out,
            "project": done.project,
            "differences": [asdict(d) for d in differences],
        }
        stream = raw_stream(sys.stdout)  # JSON's escapes stay JSON (not the terminal's)
        stream.write(terminal_json(json.dumps(report, ensure_ascii=False)) + "\n")
        stream.flush()
    else:
        head = (
            f"Replayed session {recorded.row.id[:8]} ({plural(len(recorded.turns), 'turn')}, "
            f"{plural(blocks, 'block')}) against a copy of {recorded.row.workspace}: "
        )
        if not differences:
            print(head + "identical.")
        else:
            print(head + f"{plural(len(differences), 'difference')}.")
            for difference in differences:
                print(terminal_text(difference.line()))
    return EXIT_DIFFERENT if differences else EXIT_OK

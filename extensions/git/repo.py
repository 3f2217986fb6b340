"""Run git in the workspace and parse its porcelain output into frozen records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import vis_core.extension as vis

_STATUS_WORDS = {
    "M": "modified",
    "T": "type changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "U": "conflicted",
}


class GitError(RuntimeError):
    """git refused or failed; the message is what git said."""


def run_git(root: Path, *args: str) -> str:
    """``git args`` in ``root``; raise :class:`GitError` with git's message when it fails.

    The repository's configuration cannot start programs (hooks, fsmonitor, pagers, external
    diff, textconv, filters) and, with the jail on, git runs inside it.
    """
    try:
        done = vis.git(*args, cwd=root)
    except vis.GitFailed as exc:
        raise GitError(str(exc)) from exc
    stdout = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", errors="replace").strip()
        raise GitError(stderr or f"git {args[0]} exited with {done.returncode}")
    return stdout


def repo_root(workspace: Path) -> Path:
    """The top folder of the git working tree holding ``workspace``."""
    try:
        return Path(run_git(workspace, "rev-parse", "--show-toplevel").strip())
    except GitError as exc:
        raise GitError(f"{workspace} is not inside a git working tree ({exc})") from None


# -- status ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    """One changed, untracked or conflicted file, relative to the repository root."""

    path: str
    status: str
    staged: bool
    unstaged: bool
    original_path: str | None = None


@vis.sequence(field="files")
@dataclass(frozen=True)
class GitStatus:
    """The working tree state: branch, upstream distance and changed files."""

    root: str
    branch: str | None
    upstream: str | None
    ahead: int
    behind: int
    files: tuple[FileChange, ...]

    @property
    def clean(self) -> bool:
        return not self.files

    def __str__(self) -> str:
        where = self.branch or "detached HEAD"
        if self.clean:
            return f"{where}: clean"
        lines = [f"{where}: {len(self.files)} changed"]
        lines += [f"  {f.status:<12} {f.path}" for f in self.files]
        return "\n".join(lines)


def _word(code: str) -> str:
    return _STATUS_WORDS.get(code, "changed")


def parse_status(root: str, output: str) -> GitStatus:
    """Parse ``git status --porcelain=v2 --branch -z``."""
    branch = upstream = None
    ahead = behind = 0
    files: list[FileChange] = []
    records = output.split("\0")
    i = 0
    while i < len(records):
        record = records[i]
        i += 1
        if not record:
            continue
        if record.startswith("# branch.head "):
            head = record.removeprefix("# branch.head ")
            branch = None if head == "(detached)" else head
        elif record.startswith("# branch.upstream "):
            upstream = record.removeprefix("# branch.upstream ")
        elif record.startswith("# branch.ab "):
            plus, minus = record.removeprefix("# branch.ab ").split()
            ahead, behind = int(plus), abs(int(minus))
        elif record.startswith("1 "):
            parts = record.split(" ", 8)
            xy = parts[1]
            files.append(_change(parts[8], xy))
        elif record.startswith("2 "):
            parts = record.split(" ", 9)
            original = records[i]
            i += 1
            files.append(_change(parts[9], parts[1], original))
        elif record.startswith("u "):
            parts = record.split(" ", 10)
            files.append(FileChange(parts[10], "conflicted", True, True))
        elif record.startswith("? "):
            files.append(FileChange(record[2:], "untracked", False, True))
    return GitStatus(root, branch, upstream, ahead, behind, tuple(files))


def _change(path: str, xy: str, original: str | None = None) -> FileChange:
    index, tree = xy[0], xy[1]
    code = index if index != "." else tree
    return FileChange(path, _word(code), index != ".", tree != ".", original)


def status(workspace: Path) -> GitStatus:
    root = repo_root(workspace)
    output = run_git(root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
    return parse_status(str(root), output)


# -- diff -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileDiff:
    """The unified diff of one file, with its added and removed line counts."""

    path: str
    added: int
    removed: int
    patch: str


@vis.sequence(field="files")
@dataclass(frozen=True)
class GitDiff:
    """Changes between the working tree, the index or a commit, per file."""

    root: str
    target: str
    files: tuple[FileDiff, ...]

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)

    def __str__(self) -> str:
        return "".join(f.patch for f in self.files) or f"No changes ({self.target})"


def _diff_path(header: str, lines: list[str]) -> str:
    for line in lines:
        if line.startswith("+++ ") and line != "+++ /dev/null":
            return line[4:].removeprefix("b/")
        if line.startswith("rename to "):
            return line.removeprefix("rename to ")
    for line in lines:
        if line.startswith("--- ") and line != "--- /dev/null":
            return line[4:].removeprefix("a/")
    _, _, names = header.partition(" b/")
    return names


def parse_diff(root: str, target: str, output: str) -> GitDiff:
    """Split ``git diff`` output into one :class:`FileDiff` per ``diff --git`` header."""
    chunks: list[list[str]] = []
    for line in output.splitlines(keepends=True):
        if line.startswith("diff --git ") or not chunks:
            chunks.append([])
        chunks[-1].append(line)
    files = []
    for chunk in chunks:
        if not chunk[0].startswith("diff --git "):
            continue
        bare = [line.rstrip("\n") for line in chunk]
        body = [line for line in bare if not line.startswith(("+++ ", "--- "))]
        added = sum(1 for line in body if line.startswith("+"))
        removed = sum(1 for line in body if line.startswith("-"))
        files.append(FileDiff(_diff_path(bare[0], bare), added, removed, "".join(chunk)))
    return GitDiff(root, target, tuple(files))


def _ref(ref: str) -> str:
    """``ref`` as git takes it, refused when git would read it as an option
    (``--output=FILE`` writes a file)."""
    if not isinstance(ref, str) or ref.startswith("-"):
        raise ValueError(f"{ref!r} is not a ref; name a branch, tag or commit (HEAD~1, main)")
    return ref


def diff(workspace: Path, path: str | None, staged: bool, ref: str | None) -> GitDiff:
    if ref:
        _ref(ref)
    root = repo_root(workspace)
    args = ["diff", "--no-ext-diff", "--no-color"]
    if staged:
        args.append("--cached")
    if ref:
        args.append(ref)
    args.append("--")
    if path:
        args.append(str((workspace / path).resolve()))
    # what is compared: ``git diff`` is the working tree against the index, ``--cached`` the
    # index against HEAD, and with a ref either of them against that ref
    changed = "index" if staged else "working tree"
    target = f"{changed} against {ref or ('HEAD' if staged else 'index')}"
    return parse_diff(str(root), target, run_git(root, *args))


# -- log ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Commit:
    """One commit: full and short hash, author, ISO date and subject line."""

    sha: str
    short: str
    author: str
    email: str
    date: str
    subject: str


@vis.sequence(field="commits")
@dataclass(frozen=True)
class GitLog:
    """Commits, newest first; ``partial`` when ``limit`` cut the history."""

    ref: str
    path: str | None
    commits: tuple[Commit, ...]
    partial: bool

    def __str__(self) -> str:
        return "\n".join(f"{c.short} {c.date[:10]} {c.author}: {c.subject}" for c in self.commits)


_LOG_FORMAT = "%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%s%x1e"


def parse_log(output: str) -> list[Commit]:
    commits = []
    for record in output.split("\x1e"):
        record = record.strip("\n")
        if record:
            commits.append(Commit(*record.split("\x1f", 5)))
    return commits


def _has_commits(root: Path) -> bool:
    try:
        run_git(root, "rev-parse", "--verify", "--quiet", "HEAD")
    except GitError:
        return False
    return True


def log(workspace: Path, path: str | None, limit: int, ref: str) -> GitLog:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive whole number, got {limit!r}")
    root = repo_root(workspace)
    args = ["log", f"--format={_LOG_FORMAT}", "-n", str(limit + 1), _ref(ref), "--"]
    if path:
        args.append(str((workspace / path).resolve()))
    try:
        output = run_git(root, *args)
    except GitError:
        if ref == "HEAD" and not _has_commits(root):
            return GitLog(ref, path, (), False)
        raise
    commits = parse_log(output)
    return GitLog(ref, path, tuple(commits[:limit]), len(commits) > limit)


# -- blame ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlameLine:
    """Who last changed one line: its number, commit, author, date and text."""

    line: int
    sha: str
    author: str
    date: str
    summary: str
    text: str


@vis.sequence(field="lines")
@dataclass(frozen=True)
class GitBlame:
    """Line-by-line authorship of one file."""

    root: str
    path: str
    lines: tuple[BlameLine, ...]

    @property
    def commits(self) -> int:
        return len({line.sha for line in self.lines})

    def __str__(self) -> str:
        return "\n".join(f"{b.line:>5} {b.sha[:8]} {b.author:<16.16} {b.text}" for b in self.lines)


def parse_blame(output: str) -> list[BlameLine]:
    """Parse ``git blame --porcelain``: headers per line, commit details on first use."""
    from datetime import UTC, datetime

    info: dict[str, dict[str, str]] = {}
    lines: list[BlameLine] = []
    current: tuple[str, int] | None = None
    for raw in output.split("\n"):
        if current is None:
            parts = raw.split(" ")
            if len(parts) >= 3 and len(parts[0]) >= 40:
                current = (parts[0], int(parts[2]))
                info.setdefault(parts[0], {})
            continue
        sha, number = current
        if raw.startswith("\t"):
            details = info[sha]
            stamp = details.get("author-time")
            date = datetime.fromtimestamp(int(stamp), UTC).strftime("%Y-%m-%d") if stamp else ""
            lines.append(
                BlameLine(
                    number,
                    sha,
                    details.get("author", ""),
                    date,
                    details.get("summary", ""),
                    raw[1:],
                )
            )
            current = None
        else:
            key, _, value = raw.partition(" ")
            info[sha][key] = value
    return lines


def blame(workspace: Path, path: str, start: int | None, end: int | None) -> GitBlame:
    root = repo_root(workspace)
    target = (workspace / path).resolve()
    args = ["blame", "--porcelain"]
    if start is not None or end is not None:
        args += ["-L", f"{start or 1},{end or ''}"]
    args += ["--", str(target)]
    relative = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
    return GitBlame(str(root), relative, tuple(parse_blame(run_git(root, *args))))

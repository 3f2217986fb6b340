"""``grep``: ripgrep when installed, an equivalent Python search otherwise, one output format."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from vis_core.system.environ import Audience, child_environment
from vis_core.system.git import too_many
from vis_core.system.pipe_watch import refusal, stuck_at
from vis_core.system.programs import host_program
from vis_core.system.truncate import fit_output
from vis_core.text_limits import Keep
from vis_core.tools.context import FS_OPERATIONS, ToolContext
from vis_core.tools.display import plural
from vis_core.tools.ignore import git_toplevel, ignore_spec, listed_files
from vis_core.tools.textfiles import ToolText, shown, split_lines, strip_eol

CASES = ("smart", "sensitive", "ignore")
MAX_LIMIT = 1000
MAX_CONTEXT = 20
SHOWN_LINE_CHARS = 500
MAX_SEARCH_SECONDS = 300.0  # a Python search gets half the block's time limit, at most this
WORKER = Path(__file__).with_name("regex_worker.py")
T = TypeVar("T")


class MatcherStopped(RuntimeError):
    """The pattern's process was stopped (time limit, cancel) while a search used it."""


class Matcher:
    """The model's pattern, run over texts in a process of its own (``regex_worker.py``): a
    pattern that backtracks for hours is ended by killing that process, which no thread can
    be. Started on first use; one caller thread at a time."""

    def __init__(self, rx: re.Pattern[str]) -> None:
        self._header = json.dumps({"pattern": rx.pattern, "flags": int(rx.flags)}) + "\n"
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _start(self) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._closed:
                raise MatcherStopped("grep: the search was stopped")
            if self._proc is None:
                self._proc = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(WORKER)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    cwd="/",
                    env=child_environment(audience=Audience.INTERPRETER),
                )
                assert self._proc.stdin is not None
                self._proc.stdin.write(self._header.encode("utf-8"))
            return self._proc

    def _ask(self, mode: bytes, data: bytes) -> bytes:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(mode + struct.pack("<Q", len(data)) + data)
            proc.stdin.flush()
            reply = proc.stdout.readline()
        except (OSError, ValueError):
            reply = b""
        if not reply:
            with self._lock:
                stopped = self._closed
            if stopped:
                raise MatcherStopped("grep: the search was stopped")
            proc.wait()
            raise RuntimeError(
                f"grep: the process that runs the pattern ended by itself (exit code "
                f"{proc.returncode}); try again, or install ripgrep (rg)"
            )
        return reply

    def count(self, data: bytes) -> int:
        """Lines of ``data`` (split on ``\\n``) the pattern matches."""
        return int(self._ask(b"c", data))

    def lines(self, data: bytes) -> list[int]:
        """0-based indices of the lines (line ends stripped) the pattern matches."""
        return json.loads(self._ask(b"l", data))

    def keeps(self, globs: dict[str, Any] | None, root_rel: str, rels: list[str]) -> list[bool]:
        """Which of ``rels`` the include/exclude ``globs`` (:func:`glob_rules`) keep (globs
        backtrack too)."""
        if globs is None or not rels:
            return [True] * len(rels)
        ask = {**globs, "root_rel": root_rel, "paths": rels}
        return json.loads(self._ask(b"k", json.dumps(ask).encode("utf-8", "surrogateescape")))

    def close(self) -> None:
        """Kill the process (a search using it ends with :class:`MatcherStopped`)."""
        with self._lock:
            self._closed = True
            proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    continue  # a broken pipe to a killed process: nothing left to flush


@contextlib.contextmanager
def found_in_time(
    pattern: re.Pattern[str], seconds: float, tool: str
) -> Iterator[Callable[[Sequence[str]], list[bool]]]:
    """A function that tells, for each text, whether ``pattern`` finds something in it (a line
    break in a text read as a space), searched in the pattern's own process, which is killed
    after ``seconds``: searched in Vis's, a pattern with nested repetition held its
    interpreter, and the GIL, for as long as it backtracked (the app froze, Ctrl+C and
    SIGTERM waited), for ``apropos(r"(.|.)*!")`` hours."""
    matcher = Matcher(pattern)
    timer = threading.Timer(seconds, matcher.close)
    timer.start()

    def found(texts: Sequence[str]) -> list[bool]:
        joined = "\n".join(" ".join(text.splitlines()) for text in texts)
        try:
            hits = set(matcher.lines(joined.encode("utf-8", "surrogateescape")))
        except MatcherStopped:
            raise TimeoutError(
                f"{tool}: matching {pattern.pattern!r} took longer than {seconds:g} s and was "
                "stopped; a pattern with nested repetition such as (a+)+ can take that long: "
                "simplify it"
            ) from None
        return [n in hits for n in range(len(texts))]

    try:
        yield found
    finally:
        timer.cancel()
        matcher.close()


async def in_time(ctx: ToolContext, query: Query, work: Callable[[Matcher], T]) -> T:
    """``work`` in a thread with a :class:`Matcher` of ``query``, whose process is killed at
    the time limit (half the block's, at most :data:`MAX_SEARCH_SECONDS`; none when the block
    has none) or when the call is cancelled (Esc, Ctrl+C, the block's end)."""
    matcher = Matcher(query.regex())
    seconds = min(ctx.time_limit / 2, MAX_SEARCH_SECONDS) if ctx.time_limit > 0 else None
    try:
        return await asyncio.wait_for(asyncio.to_thread(work, matcher), seconds)
    except TimeoutError:
        raise TimeoutError(
            f"grep: searching for {query.pattern!r} took longer than {seconds:g} s (half the "
            "block's time limit, setting block_time_limit) and was stopped. A pattern with "
            "nested repetition such as (a+)+ can take that long on one line: simplify it, "
            "search literal=True, narrow paths=, or install ripgrep (rg), which never "
            "backtracks."
        ) from None
    finally:
        matcher.close()


@dataclass(frozen=True)
class Query:
    """A validated search: the pattern, its flags and the filters."""

    pattern: str
    literal: bool
    ignore_case: bool
    word: bool
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    hidden: bool

    def regex(self) -> re.Pattern[str]:
        body = re.escape(self.pattern) if self.literal else self.pattern
        if self.word:
            body = rf"(?<!\w)(?:{body})(?!\w)"
        flags = re.IGNORECASE if self.ignore_case else 0
        try:
            return re.compile(body, flags)
        except re.error as exc:
            raise ValueError(
                f"grep: invalid regex {self.pattern!r}: {exc}. Fix the pattern, or pass "
                "literal=True to search for the text as written."
            ) from None


def has_upper(pattern: str, literal: bool) -> bool:
    """Smart case: does the pattern spell an uppercase letter (escapes like ``\\W`` excluded)."""
    spelled = pattern if literal else re.sub(r"\\.", "", pattern, flags=re.DOTALL)
    return any(ch.isupper() for ch in spelled)


def _globs(value: str | list[str] | tuple[str, ...] | None, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"grep: {name} takes glob strings such as '*.py', got {item!r}")
    return tuple(items)


@dataclass(frozen=True)
class Root:
    """A path grep searches: a folder, or one file."""

    path: Path
    is_file: bool


def _roots(ctx: ToolContext, paths: str | list[str] | tuple[str, ...]) -> list[Root]:
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not items:
        raise ValueError("grep: paths is empty; pass '.' to search the whole workspace")
    roots = []
    for item in items:
        target = ctx.resolve(item, tool="grep")
        if not target.exists():
            raise FileNotFoundError(
                f"grep: no file or folder {ctx.display(target)}; check it with ls()"
            )
        if not (target.is_dir() or target.is_file()):
            raise ValueError(
                f"grep: {ctx.display(target)} is not a file or folder (a pipe, socket or "
                "device); grep searches files"
            )
        roots.append(Root(target, not target.is_dir()))
    return roots


def glob_rules(include: tuple[str, ...], exclude: tuple[str, ...]) -> dict[str, Any] | None:
    """Include/exclude globs with ripgrep's rules (a slash anchors a glob at the workspace), as
    the regular expressions ``regex_worker.py`` applies (``keeps``); None without any."""
    includes = ignore_spec("\n".join(include)) if include else None
    excludes = ignore_spec("\n".join(exclude)) if exclude else None
    if not includes and not excludes:
        return None

    def rules(spec: Any) -> list[list[Any]] | None:
        if not spec:
            return None
        return [
            [bool(p.include), p.regex.pattern, int(p.regex.flags)]
            for p in spec.patterns
            if p.include is not None and getattr(p, "regex", None) is not None
        ]

    return {"include": rules(includes), "exclude": rules(excludes)}


def _rel(ctx: ToolContext, path: str) -> str:
    root = str(ctx.workspace)
    if path.startswith(root) and path[len(root) : len(root) + 1] == os.sep:
        return path[len(root) + 1 :].replace(os.sep, "/")
    return path if path != root else "."


def count_python(
    ctx: ToolContext,
    roots: list[Root],
    query: Query,
    matcher: Matcher,
    unlisted: list[str],
) -> dict[str, int]:
    """Matching lines per file, found in Python (the path used when ripgrep is missing); the
    files are read beneath the workspace and the pattern runs in ``matcher``'s process. A
    folder too big to list is not searched: ``unlisted`` gets its workspace-relative path."""
    globs = glob_rules(query.include, query.exclude)
    counts: dict[str, int] = {}
    for root in roots:
        if root.is_file:
            candidates = [str(root.path)]
        else:
            root_rel = _rel(ctx, str(root.path))
            listed = listed_files(str(root.path), hidden=query.hidden)
            if listed is None:
                unlisted.append(root_rel)
                continue
            kept = matcher.keeps(globs, root_rel, [_rel(ctx, p) for p in listed])
            candidates = [p for p, keep in zip(listed, kept, strict=True) if keep]
        for path in candidates:
            data = _read(ctx, path)
            if data is None or b"\x00" in data:
                continue
            hits = matcher.count(data)
            if hits:
                counts[path] = counts.get(path, 0) + hits
    return counts


def _read(ctx: ToolContext, path: str) -> bytes | None:
    """The bytes of a file grep searches, read beneath the workspace; None when unreadable
    (or a link leads it out of the workspace)."""
    try:
        return ctx.read_bytes(Path(path), tool="grep")
    except OSError:
        return None


def _match_flags(query: Query) -> list[str]:
    """ripgrep's flags for ``query``; ``--crlf``: a CRLF line ends before its ``\\r``, as
    the Python search reads it, so ``$`` anchors there."""
    flags = ["--crlf", "--ignore-case" if query.ignore_case else "--case-sensitive"]
    if query.literal:
        flags.append("--fixed-strings")
    if query.word:
        flags.append("--word-regexp")
    return flags


async def _run_rg(ctx: ToolContext, rg: str, argv: list[str]) -> tuple[int, bytes, bytes] | None:
    """Exit code, stdout and stderr of ripgrep; ``None`` when the jail is on but cannot run.
    With the jail on, ripgrep runs inside it: what it walks is what the block could read
    itself, so no link leads it out. Cancelling the call ends it."""
    if ctx.jail:
        from vis_core.system.jail import JailUnavailable, jail_argv

        try:
            argv = jail_argv(argv, ctx.workspace, read_only=[Path(rg)], git_looks=ctx.git_looks)
        except JailUnavailable:
            return None  # the Python search reads beneath the workspace instead
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=ctx.workspace,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    talk = asyncio.ensure_future(proc.communicate())
    watch = asyncio.ensure_future(stuck_at(proc.pid))
    try:
        await asyncio.wait((talk, watch), return_when=asyncio.FIRST_COMPLETED)
        if not talk.done():  # a named pipe as a .gitignore: ripgrep would wait on it forever
            raise RuntimeError(refusal("grep: ripgrep", watch.result()))
        out, err = talk.result()
    except BaseException:  # cancelled (Esc, the block's end): ripgrep ends with the call
        if proc.returncode is None:
            proc.kill()
            await asyncio.shield(proc.wait())
        raise
    finally:
        for task in (talk, watch):
            task.cancel()
    return proc.returncode or 0, out, err


def _rejected(code: int, out: bytes, err: bytes) -> bool:
    """Whether ripgrep refused the pattern (the Python search takes over); other failures
    raise."""
    if code != 2 or out:
        return False
    message = err.decode("utf-8", errors="replace")
    if "regex" in message.lower() or "error parsing" in message.lower():
        return True
    raise RuntimeError(f"grep: ripgrep failed: {message.strip()}")


async def count_rg(
    ctx: ToolContext, rg: str, roots: list[Root], query: Query
) -> dict[str, int] | None:
    """Matching lines per file from ``rg --count``; ``None`` when ripgrep rejects the regex."""
    argv = [rg, "--no-config", "--count", "--with-filename", "--null", "--no-ignore-dot"]
    argv += _match_flags(query)
    if query.hidden:
        argv += ["--hidden", "--glob", "!.git"]
    if git_toplevel(str(roots[0].path if not roots[0].is_file else roots[0].path.parent)) is None:
        argv += ["--no-require-git", "--no-ignore-parent"]
    for glob in query.include:
        argv += ["--glob", glob]
    for glob in query.exclude:
        argv += ["--glob", "!" + glob]
    argv += ["--regexp", query.pattern, "--"]
    argv += [str(root.path) for root in roots]
    done = await _run_rg(ctx, rg, argv)
    if done is None or _rejected(*done):
        return None
    counts: dict[str, int] = {}
    explicit = {str(root.path) for root in roots if root.is_file}
    for name, number in _null_records(done[1]):
        if not name or not number.isdigit():
            continue
        path = os.path.normpath(os.path.join(ctx.workspace, os.fsdecode(name)))
        if path in explicit and _is_binary(ctx, path):
            continue
        counts[path] = counts.get(path, 0) + int(number)
    return counts


def _null_records(out: bytes) -> Iterator[tuple[bytes, bytes]]:
    """``(path, rest)`` of each ``path\\0rest\\n`` record ripgrep prints with ``--null``: a
    file name may hold a newline (a line split there named two files that do not exist, and
    failed the search), the rest (a count, ``N:line``) never does. With ``--crlf`` ripgrep
    ends each record with ``\\r\\n``."""
    start = 0
    while (end := out.find(b"\0", start)) >= 0:
        stop = out.find(b"\n", end)
        stop = len(out) if stop < 0 else stop
        yield out[start:end], out[end + 1 : stop].removesuffix(b"\r")  # --crlf ends it so
        start = stop + 1


async def lines_rg(
    ctx: ToolContext, rg: str, paths: list[str], query: Query, most: int
) -> dict[str, list[int]] | None:
    """The 0-based numbers of the matching lines of ``paths`` (at most ``most`` per file),
    from ripgrep: no pattern of the model's runs in Python. ``None``: ask Python instead."""
    argv = [rg, "--no-config", "--line-number", "--with-filename", "--null", "--no-heading"]
    argv += ["--color", "never", "--max-count", str(most), *_match_flags(query)]
    argv += ["--regexp", query.pattern, "--", *paths]
    done = await _run_rg(ctx, rg, argv)
    if done is None or _rejected(*done):
        return None
    numbered: dict[str, list[int]] = {}
    for name, rest in _null_records(done[1]):
        number = rest.split(b":", 1)[0]
        if number.isdigit():
            path = os.path.normpath(os.path.join(ctx.workspace, os.fsdecode(name)))
            numbered.setdefault(path, []).append(int(number) - 1)
    return numbered


def _page(
    ctx: ToolContext, counts: dict[str, int], offset: int, limit: int
) -> list[tuple[str, int]]:
    """The files whose matches fall on the page from ``offset`` (``limit`` matches), in the
    order shown, each with the number of matches in the files before it."""
    page, seen = [], 0
    for path in sorted(counts, key=lambda p: _rel(ctx, p)):
        n = counts[path]
        if seen + n > offset and seen < offset + limit:
            page.append((path, seen))
        seen += n
    return page


def _allowed(ctx: ToolContext, roots: list[Root], counts: dict[str, int]) -> dict[str, int]:
    """The matches in files the ``fs_access`` guards let ``grep`` read (roots were checked)."""
    checked = {str(root.path) for root in roots if root.is_file}
    kept: dict[str, int] = {}
    for path, n in counts.items():
        if path not in checked:
            try:
                ctx.hooks.check_access(FS_OPERATIONS["grep"], path)
            except PermissionError:
                continue  # a guarded file's lines never come back
        kept[path] = n
    return kept


def _is_binary(ctx: ToolContext, path: str) -> bool:
    data = _read(ctx, path)
    return data is None or b"\x00" in data


def _call_hint(query: Query, paths: object, offset: int, limit: int) -> str:
    args = [repr(query.pattern)]
    if paths not in (".", None):
        args.append(f"paths={paths!r}")
    args.append(f"offset={offset}")
    if limit != 100:
        args.append(f"limit={limit}")
    return "grep(" + ", ".join(args) + ", …)"


def render_page(
    ctx: ToolContext,
    query: Query,
    counts: dict[str, int],
    lines_of: Callable[[str, bytes], list[int]],
    *,
    paths: str | list[str],
    context: int,
    limit: int,
    offset: int,
    unlisted: Sequence[str] = (),
) -> ToolText:
    """The model's view: grouped per file under ``path @version``, bounded, with a paging note;
    ``lines_of(path, data)`` gives the 0-based numbers of a file's matching lines. The folders
    of ``unlisted`` were not searched: a note at the end says so."""
    total = sum(counts.values())
    left_out = _unlisted_note(unlisted)
    if total == 0:
        where = ", ".join(repr(p) for p in ([paths] if isinstance(paths, str) else paths or ["."]))
        return ToolText(
            f"No matches for {query.pattern!r} in {where}.{left_out}",
            matches=0,
            files=0,
            hits=(),
            query=query.pattern,
            total=0,
        )
    if offset >= total:
        raise ValueError(
            f"grep: offset={offset} is past the last of {total:,} matches; use offset < {total}"
        )
    blocks: list[str] = []
    hits: list[tuple[str, int, str]] = []
    for path, seen in _page(ctx, counts, offset, limit):
        data = _read(ctx, path)
        if data is None:
            continue
        text = data.decode("utf-8", errors="replace")
        lines = split_lines(text)
        matched = [i for i in lines_of(path, data) if i < len(lines)]
        take = matched[max(0, offset - seen) : max(0, offset + limit - seen)]
        if not take:
            continue
        label = _rel(ctx, path)
        version = ctx.versions.observe(os.path.realpath(path), text)
        wanted: dict[int, bool] = {}
        for i in take:
            for j in range(max(0, i - context), min(len(lines), i + context + 1)):
                wanted.setdefault(j, False)
            wanted[i] = True
        width = len(str(max(wanted) + 1))
        rows = [f"{label} @{version}"]
        previous = None
        for j in sorted(wanted):
            if previous is not None and j != previous + 1:
                rows.append("--")
            sep = ":" if wanted[j] else "-"
            rows.append(f"{j + 1:>{width}}{sep} {shown(strip_eol(lines[j]), SHOWN_LINE_CHARS)}")
            previous = j
        for i in take:
            hits.append((label, i + 1, strip_eol(lines[i])[:200]))
        blocks.append("\n".join(rows))
    files = len(counts)
    shown_to = offset + len(hits)
    summary = f"{plural(total, 'matching line')} in {plural(files, 'file')}."
    if offset or shown_to < total:
        summary = f"Showing matches {offset + 1:,}–{shown_to:,} of {summary}"
        if shown_to < total:
            summary += (
                f" {total - shown_to:,} more left out: call "
                f"{_call_hint(query, paths, shown_to, limit)} for the next page, or narrow the "
                "search with paths=, include= or exclude=."
            )
    text = "\n\n".join(blocks) + "\n\n" + summary
    out = fit_output(text, ctx.output_dir, keep=Keep.HEAD, label="grep") + left_out
    return ToolText(
        out, matches=len(hits), total=total, files=files, hits=tuple(hits), query=query.pattern
    )


def _unlisted_note(unlisted: Sequence[str]) -> str:
    """The note that says which folders a search in Python left out, too big to list."""
    if not unlisted:
        return ""
    one = len(unlisted) == 1
    return (
        f"\n\nNot searched: {', '.join(repr(rel) for rel in unlisted)}, which "
        f"{'holds' if one else 'hold'} {too_many()}, more than grep lists to search "
        f"without ripgrep; search folders inside {'it' if one else 'them'} with paths=."
    )


def make_query(
    query: str,
    *,
    literal: bool,
    case: str,
    word: bool,
    include: str | list[str] | None,
    exclude: str | list[str] | None,
    hidden: bool,
) -> Query:
    if not isinstance(query, str) or query == "":
        raise ValueError("grep: query must be a non-empty string")
    if case not in CASES:
        raise ValueError(f"grep: case must be one of {', '.join(CASES)}; got {case!r}")
    ignore = case == "ignore" or (case == "smart" and not has_upper(query, literal))
    return Query(
        query,
        bool(literal),
        ignore,
        bool(word),
        _globs(include, "include"),
        _globs(exclude, "exclude"),
        bool(hidden),
    )


def check_page(limit: int, offset: int, context: int) -> None:
    for name, value, lo, hi in (
        ("limit", limit, 1, MAX_LIMIT),
        ("offset", offset, 0, None),
        ("context", context, 0, MAX_CONTEXT),
    ):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"grep: {name} must be an int, got {value!r}")
        if value < lo or (hi is not None and value > hi):
            bound = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
            raise ValueError(f"grep: {name}={value} is out of range; use a value {bound}")


async def search(
    ctx: ToolContext,
    query: str,
    paths: str | list[str] = ".",
    *,
    literal: bool = False,
    case: str = "smart",
    word: bool = False,
    include: str | list[str] | None = None,
    exclude: str | list[str] | None = None,
    context: int = 0,
    hidden: bool = False,
    limit: int = 100,
    offset: int = 0,
    engine: str = "auto",
) -> ToolText:
    """Run one search; ``engine`` is ``auto``, ``rg`` or ``python`` (tests compare the two)."""
    check_page(limit, offset, context)
    spec = make_query(
        query,
        literal=literal,
        case=case,
        word=word,
        include=include,
        exclude=exclude,
        hidden=hidden,
    )
    spec.regex()  # a bad pattern fails here with the same message on both paths
    roots = await asyncio.to_thread(_roots, ctx, paths)  # fs_access hooks may block
    # found outside the workspace: a PATH naming the working folder never runs a checkout's rg
    rg = host_program("rg", (ctx.workspace,)) if engine in ("auto", "rg") else None
    if engine == "rg" and rg is None:
        raise RuntimeError("grep: ripgrep (rg) is not installed; install it or use engine='auto'")
    found = await count_rg(ctx, rg, roots, spec) if rg else None

    def allowed(counts: dict[str, int]) -> dict[str, int]:
        if ctx.jail and counts:  # Vis's own folders (VIS_HOME in the workspace) stay hidden
            counts = {path: n for path, n in counts.items() if not ctx.hidden(path)}
        if ctx.hooks is not None and counts:  # fs_access guards see every file whose lines return
            counts = _allowed(ctx, roots, counts)
        return counts

    unlisted: list[str] = []  # folders too big for the Python search to list

    def render(counts: dict[str, int], lines_of: Callable[[str, bytes], list[int]]) -> ToolText:
        return render_page(
            ctx,
            spec,
            counts,
            lines_of,
            paths=paths,
            context=context,
            limit=limit,
            offset=offset,
            unlisted=unlisted,
        )

    if rg and found is not None:  # ripgrep numbers the lines of the page too
        counts = await asyncio.to_thread(allowed, found)
        wanted = [path for path, _ in _page(ctx, counts, offset, limit)]
        numbered = await lines_rg(ctx, rg, wanted, spec, offset + limit) if wanted else {}
        if numbered is not None:
            return await asyncio.to_thread(render, counts, lambda p, _: numbered.get(p, []))

    def work(matcher: Matcher) -> ToolText:
        counts = found if found is not None else count_python(ctx, roots, spec, matcher, unlisted)
        return render(allowed(counts), lambda _, data: matcher.lines(data))

    return await in_time(ctx, spec, work)

"""``defs()``: list, search and read the session's helpers and variables inside the sandbox."""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import re
from collections.abc import Callable, Coroutine
from typing import Any

from vis_core.sandbox.proxies import ToolNamespace, ToolProxy
from vis_core.sandbox.state import Helper, SessionState, describe
from vis_core.sandbox.unawaited import named

HINT_CHARS = 120
GIST_CHARS = 100
DEFAULT_LIMIT = 20
MAX_DETAIL_NAMES = 20


def _definition(helper: Helper) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | None:
    """The definition a helper's source holds (None when it holds none that can be read)."""
    try:
        node = ast.parse(helper.source).body[0]
    except (SyntaxError, IndexError):
        return None
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else None


def _docstring(helper: Helper) -> str | None:
    """A helper's docstring: its object's, else the one its source holds."""
    if isinstance(getattr(helper.obj, "__doc__", None), str):
        return helper.obj.__doc__
    node = _definition(helper)
    return None if node is None else ast.get_docstring(node)


def _gist(helper: Helper) -> str:
    for line in inspect.cleandoc(_docstring(helper) or "").splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= GIST_CHARS else line[: GIST_CHARS - 1] + "…"
    return ""


def call_hint(helper: Helper) -> str:
    """``name(a, b=<int>, *args, c=<str>)``: no annotations, default types only, ≤120 chars."""
    try:
        sig = inspect.signature(helper.obj)
    except (TypeError, ValueError):
        params = "..."
    else:
        parts: list[str] = []
        star_done = False
        plist = list(sig.parameters.values())
        for i, p in enumerate(plist):
            if p.kind is p.KEYWORD_ONLY and not star_done:
                parts.append("*")
                star_done = True
            if p.kind is p.VAR_POSITIONAL:
                star_done = True
                parts.append(f"*{p.name}")
            elif p.kind is p.VAR_KEYWORD:
                parts.append(f"**{p.name}")
            elif p.default is p.empty:
                parts.append(p.name)
            else:
                kind = "None" if p.default is None else type(p.default).__name__
                parts.append(f"{p.name}=<{kind}>")
            following = plist[i + 1].kind if i + 1 < len(plist) else None
            if p.kind is p.POSITIONAL_ONLY and following is not p.POSITIONAL_ONLY:
                parts.append("/")
        params = ", ".join(parts)
    prefix = {"class": "class ", "async function": "async "}.get(helper.kind, "")
    hint = f"{prefix}{helper.name}({params})"
    if len(hint) > HINT_CHARS:
        hint = hint[: HINT_CHARS - 2] + "…)"
    return hint


def _helper_row(helper: Helper) -> tuple[str, str, str]:
    """A helper's row of the listing: (name, row text, what a pattern searches besides)."""
    gist = _gist(helper)
    row = call_hint(helper)
    if gist:
        row += f" — {gist}"
    if helper.origin == "restored":
        row += "  [restored]"
    return helper.name, row, gist


def _variable_row(state: SessionState, name: str) -> tuple[str, str, str]:
    """A variable's row of the listing: (name, row text, its type, which a pattern searches)."""
    value = state.ns[name]
    kind, size = describe(value)
    row = f"{name}: {kind}" + (f", {size}" if size else "")
    if name in state.not_saved:
        row += f"  [not saved: {state.not_saved[name][2]}]"
    return name, row, kind


def _check_paging(pattern: Any, limit: Any, offset: Any) -> re.Pattern[str] | None:
    if type(limit) is not int or not 1 <= limit <= 100:
        raise ValueError(f"defs: limit must be an integer from 1 to 100, got {limit!r}")
    if type(offset) is not int or offset < 0:
        raise ValueError(f"defs: offset must be an integer of 0 or more, got {offset!r}")
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        raise ValueError(f"defs: pattern must be a regular expression string, got {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(
            f"defs: pattern {pattern!r} is not a valid regular expression: {exc}"
        ) from None


def _section(
    title: str,
    rows: list[tuple[str, str, str]],
    regex: re.Pattern[str] | None,
    limit: int,
    offset: int,
) -> list[str]:
    """rows: (name, row text, searchable extra); returns the section's lines."""
    total = len(rows)
    if regex is not None:
        rows = [r for r in rows if regex.search(r[0]) or (r[2] and regex.search(r[2]))]
    matched = len(rows)
    page = rows[offset : offset + limit]
    if total == 0:
        return [f"{title}: none"]
    if matched == 0:
        return [f"{title}: none match ({total} in all)"]
    head = f"{title}:"
    if len(page) < total:
        what = f"{matched} of {total} match" if regex is not None else f"{total} in all"
        if not page:
            return [f"{title}: none on this page ({what}; offset={offset} is past the end)"]
        head = f"{title} {offset + 1}–{offset + len(page)} ({what})"
        if offset + len(page) < matched:
            head += f"; next page: offset={offset + len(page)}"
        head += ":"
    return [head, *(f"  {text}" for _, text, _ in page)]


def make_defs(state: SessionState) -> Callable[..., str]:
    """The ``defs`` function bound to one sandbox session."""

    def defs(
        name: str | None = None,
        *,
        pattern: str | None = None,
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
        details: bool = False,
    ) -> str:
        """List, search and read session helpers and variables.

        defs() lists up to 20 helpers alphabetically (call hint and docstring gist; a hint
        shows a default's type, not its value, and is not source), then variables (type and
        size, never values); rows mark a restored helper and a value that is not saved.
        defs(pattern=..., limit=20, offset=0) filters by a case-sensitive regex over names,
        gists and variable types; limit is 1-100, and a larger offset pages on.
        defs("name") returns a helper's unchanged source (a variable's row);
        defs("name", details=True) adds origin, source SHA-256 and up to 20 global or
        captured names it uses (hints, not proof of dependencies).
        doc("name") returns a helper's whole docstring; helpers are not in apropos. Vis saves
        helpers and variables after each block and restores them in a new sandbox: defining
        a name again replaces its saved copy, `del name` removes it (check its aliases and
        callers first: references do not update).
        """
        regex = _check_paging(pattern, limit, offset)
        if name is not None:
            if not isinstance(name, str):
                raise ValueError(f"defs: name must be a string, got {name!r}")
            return _one(state, name, details)
        helpers = sorted(state.live_helpers().values(), key=lambda h: h.name)
        helper_rows = [_helper_row(h) for h in helpers]
        var_rows = [
            _variable_row(state, n)
            for n in sorted(state.variable_names())
            if type(state.ns[n]).__name__ != "module"
        ]
        lines = _section("Helpers", helper_rows, regex, limit, offset)
        lines += _section("Variables", var_rows, regex, limit, offset)
        return "\n".join(lines)

    return defs


def _one(state: SessionState, name: str, details: bool) -> str:
    helper = state.live_helpers().get(name)
    if helper is None:
        if name in state.ns and name in state.variable_names():
            return _variable_row(state, name)[1]
        if isinstance(state.ns.get(name), ToolProxy | ToolNamespace):
            raise ValueError(f"defs: {name!r} is a tool, not a helper; read it with doc({name!r})")
        raise ValueError(
            f"defs: no helper or variable named {name!r}; call defs() to list them "
            f"or defs(pattern={name!r}) to search"
        )
    if not details:
        return helper.source
    origin = (
        f"block {helper.block}"
        if helper.origin == "block"
        else f"restored from the last snapshot (defined in block {helper.block})"
    )
    import hashlib  # here: every sandbox child imports this module, few call defs(name)

    lines = [
        f"{helper.name}: {helper.kind}",
        f"origin: {origin}",
        f"source sha256: {hashlib.sha256(helper.source.encode('utf-8')).hexdigest()}",
    ]
    names = _used_names(helper)
    captured = _captured(helper.obj)
    shown = 0
    lines.append(
        "names from the source (hints, not proof of dependency):"
        if names or captured
        else "names from the source: none"
    )
    for used in names:
        if shown >= MAX_DETAIL_NAMES:
            break
        if used in state.ns:
            lines.append(f"  {used}: global {type(state.ns[used]).__name__}, present")
        else:
            lines.append(f"  {used}: global, missing")
        shown += 1
    for var, kind in captured:
        if shown >= MAX_DETAIL_NAMES:
            break
        lines.append(f"  {var}: captured {kind}")
        shown += 1
    more = len(names) + len(captured) - shown
    if more > 0:
        lines.append(f"  … {more} more")
    return "\n".join(lines)


def _used_names(helper: Helper) -> list[str]:
    """Global names the helper's body loads (decorators, defaults and annotations excluded)."""
    node = _definition(helper)
    if node is None:
        return []
    loaded: list[str] = []
    bound: set[str] = {helper.name}
    declared_global: set[str] = set()
    if not isinstance(node, ast.ClassDef):
        bound |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    for stmt in node.body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name):
                if isinstance(sub.ctx, ast.Load):
                    if sub.id not in loaded:
                        loaded.append(sub.id)
                else:
                    bound.add(sub.id)
            elif isinstance(sub, ast.arg):
                bound.add(sub.arg)
            elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(sub.name)
            elif isinstance(sub, ast.alias):
                bound.add((sub.asname or sub.name).split(".")[0])
            elif isinstance(sub, ast.ExceptHandler) and sub.name:
                bound.add(sub.name)
            elif isinstance(sub, ast.Global):
                declared_global.update(sub.names)
    return [
        n for n in loaded if (n in declared_global or n not in bound) and not hasattr(builtins, n)
    ]


def _captured(obj: Any) -> list[tuple[str, str]]:
    code = getattr(obj, "__code__", None)
    cells = getattr(obj, "__closure__", None) or ()
    if code is None:
        return []
    out = []
    for var, cell in zip(code.co_freevars, cells, strict=False):
        try:
            out.append((var, type(cell.cell_contents).__name__ + ", present"))
        except ValueError:
            out.append((var, "empty cell"))
    return out


def _helper_doc(helper: Helper) -> str:
    """A helper's whole docstring under its call hint (or a note that it has none)."""
    doc = _docstring(helper)
    missing = f"(no docstring; defs({helper.name!r}) shows its source)"
    body = inspect.cleandoc(doc) if doc else missing
    return f"{call_hint(helper)}  — session helper\n\n{body}"


class SessionDoc:
    """``doc``: a session helper's whole docstring and ``defs``' own text are answered here;
    every other name goes to the host's ``doc`` (tools, guides, skills)."""

    def __init__(self, state: SessionState, host_doc: ToolProxy) -> None:
        self._state = state
        self._host_doc = host_doc
        self.__name__ = "doc"
        self.__qualname__ = "doc"
        self.__doc__ = host_doc.__doc__
        self.contract = host_doc.contract

    @functools.cached_property
    def __wrapped__(self) -> Callable[..., Any]:
        return self._host_doc.__wrapped__  # made when first read, as the tool's own

    def __call__(self, name: Any, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return named(self._answer(name, *args, **kwargs), "doc")

    async def _answer(self, name: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(name, str) and not args and not kwargs:
            target = name.strip()
            helper = self._state.live_helpers().get(target)
            if helper is not None:
                return _helper_doc(helper)
            if target == "defs" and "defs" not in self._state.live_helpers():
                defs = self._state.ns.get("defs")
                if defs is not None and defs.__doc__:
                    return (
                        "defs(name=None, *, pattern=None, limit=20, offset=0, details=False)"
                        f"\n\n{inspect.cleandoc(defs.__doc__)}"
                    )
        return await self._host_doc(name, *args, **kwargs)

    def __repr__(self) -> str:
        return "<tool doc>"

    def __reduce__(self) -> tuple[Any, ...]:
        return self._host_doc.__reduce__()

"""Sandbox-side memory of the session: helper sources, saved variables, snapshot and restore."""

from __future__ import annotations

import ast
import base64
import importlib
import linecache
import sys
import types
from dataclasses import dataclass
from typing import Any

from vis_core.sandbox.protocol import MAX_SNAPSHOT_BYTES
from vis_core.sandbox.proxies import HandleProxy

SNAPSHOT_FORMAT = 1
MAX_PICKLE_BYTES = 10 * 1024 * 1024  # one variable, pickled
_REASON_CHARS = 160
SAVED_FIELDS = ("name", "source", "kind", "block", "origin")  # of a Helper, in a snapshot


@dataclass
class Helper:
    """A ``def``/``async def``/``class`` from the top level of a block, kept by name."""

    name: str
    source: str
    kind: str  # "function" | "async function" | "class"
    block: int
    origin: str  # "block" | "restored"
    obj: Any = None


@dataclass(frozen=True)
class TopLevelDef:
    """A definition found at the top level of a block before it runs."""

    name: str
    kind: str
    source: str


def register_source(filename: str, source: str) -> None:
    """Make ``source`` visible to tracebacks and ``inspect.getsource`` under ``filename``."""
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    linecache.cache[filename] = (len(source), None, lines, filename)


def top_level_defs(tree: ast.Module, source: str) -> list[TopLevelDef]:
    """Every function and class defined at the top level of a parsed block, with its source."""
    lines = source.splitlines(keepends=True)
    found: list[TopLevelDef] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            text = "".join(lines[start - 1 : end])
            col = min([node.col_offset, *(d.col_offset - 1 for d in node.decorator_list)])
            if col > 0:  # a def after `;` on one line: fall back to the exact segment
                text = ast.get_source_segment(source, node) or text
            kind = (
                "class"
                if isinstance(node, ast.ClassDef)
                else "async function"
                if isinstance(node, ast.AsyncFunctionDef)
                else "function"
            )
            found.append(TopLevelDef(node.name, kind, text.rstrip("\n") + "\n"))
    return found


def describe(value: Any) -> tuple[str, str]:
    """(type name, size) of a value, never its contents."""
    kind = type(value).__name__
    if isinstance(value, str):
        return kind, f"{len(value):,} chars"
    if isinstance(value, bytes | bytearray):
        return kind, f"{len(value):,} bytes"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return kind, "shape " + "×".join(str(n) for n in shape)
    try:
        size = len(value)
    except Exception:  # arbitrary user objects may fail in __len__
        return kind, ""
    if isinstance(size, int):
        return kind, f"{size:,} item" + ("" if size == 1 else "s")
    return kind, ""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


class SessionState:
    """What the child knows about the namespace beyond the namespace itself."""

    def __init__(self, ns: dict[str, Any]) -> None:
        self.ns = ns
        self.injected: dict[str, Any] = {}
        self.helpers: dict[str, Helper] = {}
        self.not_saved: dict[str, tuple[str, str, str]] = {}  # name → (type, size, reason)
        self.last_snapshot: dict[str, Any] | None = None
        # the block running: its id, top-level definitions and what their names held before
        self._running: tuple[int, list[TopLevelDef], dict[str, int]] | None = None

    # -- names the sandbox put there -------------------------------------------------------
    def inject(self, name: str, value: Any) -> None:
        self.injected[name] = value
        self.ns[name] = value

    def is_injected(self, name: str) -> bool:
        return name in self.injected and self.ns.get(name, _MISSING) is self.injected[name]

    # -- helpers -----------------------------------------------------------------------------
    def before_block(self, block: int, defs: list[TopLevelDef]) -> dict[str, int]:
        before = {d.name: id(self.ns.get(d.name, _MISSING)) for d in defs}
        self._running = (block, defs, before)
        return before

    def after_block(self, block: int, defs: list[TopLevelDef], before: dict[str, int]) -> None:
        self._running = None
        self._record(block, defs, before, again=True)

    def _record(
        self, block: int, defs: list[TopLevelDef], before: dict[str, int], *, again: bool
    ) -> None:
        """Keep the definitions of ``defs`` that ran as helpers; ``again``: the block ended,
        each is put again (latest definition last), not only the new ones."""
        for d in defs:
            obj = self.ns.get(d.name, _MISSING)
            if obj is _MISSING or id(obj) == before.get(d.name):
                continue  # the block failed (or has not come) before this definition ran
            if not callable(obj):
                continue  # rebound to data later in the same block (a decorator may wrap it)
            known = self.helpers.get(d.name)
            if not again and known is not None and known.obj is obj:
                continue
            self.helpers.pop(d.name, None)  # re-insert: latest definition last
            self.helpers[d.name] = Helper(d.name, d.source, d.kind, block, "block", obj)

    def live_helpers(self) -> dict[str, Helper]:
        """Helpers whose name still holds the object the definition made (those of the block
        running count once their definition ran); prunes the rest."""
        if self._running is not None:
            self._record(*self._running, again=False)
        for name in [n for n, h in self.helpers.items() if self.ns.get(n, _MISSING) is not h.obj]:
            del self.helpers[name]
        return self.helpers

    # -- snapshot ----------------------------------------------------------------------------
    def variable_names(self) -> list[str]:
        helpers = self.live_helpers()
        return [
            name
            for name in self.ns
            if not (name.startswith("__") and name.endswith("__"))
            and not self.is_injected(name)
            and name not in helpers
        ]

    def snapshot(self, total: int = MAX_SNAPSHOT_BYTES) -> dict[str, Any] | None:
        """The JSON-able snapshot, or None when it equals the last one; its variables take
        ``total`` pickled bytes at most (the first ones in the namespace's order)."""
        helpers = self.live_helpers()
        variables: dict[str, dict[str, str]] = {}
        modules: dict[str, str] = {}
        left = total
        self.not_saved = {}
        for name in self.variable_names():
            value = self.ns[name]
            if isinstance(value, types.ModuleType):
                if value.__name__ in sys.modules:
                    modules[name] = value.__name__
                continue
            kind, size = describe(value)
            reason = self._unsaveable(value)
            data = b""
            if reason is None:
                import pickle  # only with a variable to save: most children never save one

                try:
                    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as exc:  # pickling runs arbitrary user code
                    reason = _short(f"{type(exc).__name__}: {exc}")
                else:
                    if len(data) > MAX_PICKLE_BYTES:
                        reason = (
                            f"pickled size {len(data):,} bytes is over the "
                            f"{MAX_PICKLE_BYTES:,}-byte limit"
                        )
                    elif len(data) > left:
                        reason = (
                            f"pickled size {len(data):,} bytes does not fit in the snapshot's "
                            f"{total:,}-byte total ({left:,} left)"
                        )
                    else:
                        left -= len(data)
            if reason is not None:
                self.not_saved[name] = (kind, size, reason)
                continue
            variables[name] = {
                "type": kind,
                "size": size,
                "pickle": base64.b64encode(data).decode("ascii"),
            }
        snap = {
            "format": SNAPSHOT_FORMAT,
            "helpers": [{key: getattr(h, key) for key in SAVED_FIELDS} for h in helpers.values()],
            "variables": variables,
            "modules": modules,
            "not_saved": {
                n: {"type": t, "size": s, "reason": r} for n, (t, s, r) in self.not_saved.items()
            },
        }
        if snap == self.last_snapshot:
            return None
        self.last_snapshot = snap
        return snap

    @staticmethod
    def _unsaveable(value: Any) -> str | None:
        if isinstance(value, HandleProxy):
            return "a live host handle (it stays with the host process)"
        if isinstance(value, types.CoroutineType | types.GeneratorType | types.AsyncGeneratorType):
            return f"a running {type(value).__name__} cannot be saved"
        return None

    # -- restore -----------------------------------------------------------------------------
    def restore(self, data: dict[str, Any] | None) -> dict[str, Any]:
        """Bring back a snapshot: modules, helper sources, then pickled values."""
        report: dict[str, Any] = {
            "helpers": [],
            "variables": [],
            "modules": [],
            "failed": {},
            "lost": {},
        }
        if not data:
            return report
        if data.get("format") != SNAPSHOT_FORMAT:
            report["failed"]["(snapshot)"] = f"unknown snapshot format {data.get('format')!r}"
            return report
        for name, module in (data.get("modules") or {}).items():
            try:
                self.ns[name] = importlib.import_module(module)
                report["modules"].append(name)
            except Exception as exc:  # import runs arbitrary code
                report["failed"][name] = _short(f"import {module}: {type(exc).__name__}: {exc}")
        pending = list(data.get("helpers") or [])
        failed_helpers = self._restore_helpers(pending, report)
        for name, entry in (data.get("variables") or {}).items():
            import pickle  # as in snapshot: only with a variable to bring back

            try:
                self.ns[name] = pickle.loads(base64.b64decode(entry["pickle"]))
                report["variables"].append(name)
            except Exception as exc:  # unpickling runs arbitrary code
                report["failed"][name] = _short(f"{type(exc).__name__}: {exc}")
        if failed_helpers:  # a default or decorator may have needed a variable: try once more
            for item in failed_helpers:
                report["failed"].pop(item["name"], None)
            self._restore_helpers(failed_helpers, report)
        for name, entry in (data.get("not_saved") or {}).items():
            report["lost"][name] = _short(str(entry.get("reason", "not saved")))
        self.live_helpers()
        return report

    def _restore_helpers(
        self, items: list[dict[str, Any]], report: dict[str, Any]
    ) -> list[dict[str, Any]]:
        failed: list[dict[str, Any]] = []
        for item in items:
            name, source = str(item["name"]), str(item["source"])
            filename = f"<helper {name}>"
            register_source(filename, source)
            try:
                exec(compile(source, filename, "exec"), self.ns)  # the model's code
                obj = self.ns[name]
            except BaseException as exc:  # restoring arbitrary code
                if isinstance(exc, KeyboardInterrupt | SystemExit):
                    raise
                report["failed"][name] = _short(f"{type(exc).__name__}: {exc}")
                failed.append(item)
                continue
            self.helpers[name] = Helper(
                name,
                source,
                str(item.get("kind", "function")),
                int(item.get("block", 0)),
                "restored",
                obj,
            )
            report["helpers"].append(name)
        return failed


_MISSING = object()

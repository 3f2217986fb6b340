"""Load every extension: declarations (from the registration worker or, for the bundled ones,
its kept reports), overrides, ids, tools."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from vis_core.extension.declarations import Extension, copy_environment
from vis_core.extension.settings_decl import CORE_OWNER
from vis_core.extension_host import bundled_cache
from vis_core.extension_host.declared import rebuild
from vis_core.extension_host.discovery import Candidate, ExtensionSource, bundled_dir, discover
from vis_core.extension_host.entry import LoadError
from vis_core.extension_host.environment import resolve_names
from vis_core.extension_host.loaded import (
    DEFAULT_LOAD_TIMEOUT,
    ExtensionStatus,
    LoadedExtension,
    LoadedExtensions,
    LoadOptions,
)
from vis_core.extension_host.registration import RegistrationWorker, Screened
from vis_core.model.command import BUILTIN_COMMANDS
from vis_core.paths import ControlSnapshot, VisPaths
from vis_core.settings.core import CORE_SETTING_IDS
from vis_core.system.environ import Audience, child_environment
from vis_core.tools.names import RESERVED_NAMES, reserved_as
from vis_core.tools.registry import HostTool

log = logging.getLogger(__name__)
_DEFAULT = object()


@dataclass
class _Draft:
    """One extension while it loads."""

    candidate: Candidate
    name: str
    status: ExtensionStatus
    declaration: Extension | None = None
    error: LoadError | None = None
    tools: tuple[HostTool, ...] = ()
    overridden_by: Path | None = None

    def fail(self, message: str, line: int | None = None) -> None:
        self.status = ExtensionStatus.FAILED
        self.error = LoadError(self.name, self.candidate.path, line, message)

    def describe(self) -> str:
        return f"extension {self.name!r} ({self.candidate.source.value}: {self.candidate.path})"


def alias_names(tool: HostTool, alias: str | None) -> tuple[str, ...]:
    """The second name of a tool: ``alias.name``, unless the bare name already starts there.

    ``Symbol(check)`` of alias ``visual`` is ``check`` and ``visual.check``;
    ``Symbol(Greeter(), name="greet")`` of alias ``greet`` is only ``greet.hello``.
    """
    if alias is None or tool.name.startswith(f"{alias}."):
        return ()
    return (f"{alias}.{tool.name}",)


def _take_tools(draft: _Draft, tools: Iterable[HostTool]) -> None:
    """``draft``'s tools; a name declared twice makes the extension a load failure."""
    names: set[str] = set()
    for tool in tools:
        if tool.name in names:
            draft.fail(f"tool {tool.name!r} is declared twice; give each symbol its own name")
            return
        names.add(tool.name)
    draft.tools = tuple(tools)


def _run(candidate: Candidate, screened: Screened | None, known: str | None = None) -> _Draft:
    """One extension, rebuilt from the declaration the registration worker reported for it (or
    kept from an earlier report, for a bundled one): its entry file never runs in the host.
    ``known``: its name in the load before, kept when it fails before it could tell it."""
    draft = _Draft(candidate, known or candidate.hint, ExtensionStatus.LOADED)
    if screened is not None and screened.error is not None:  # it failed in the worker
        draft.name = screened.error.extension
        draft.status, draft.error = ExtensionStatus.FAILED, screened.error
        return draft
    if screened is None or screened.declaration is None:
        draft.fail(candidate.error or "the registration worker did not report on this file")
        return draft
    try:
        declaration, tools = screened.rebuilt or rebuild(screened.declaration)
    except (KeyError, TypeError, ValueError) as exc:
        draft.fail(
            f"its declaration, as the registration worker reported it, is unreadable: {exc!r}"
        )
        return draft
    draft.name, draft.declaration = declaration.name, declaration
    _take_tools(draft, tools)
    return draft


class _Claim(NamedTuple):
    """Something one extension alone may hold: ``key``; ``reserved``: why Vis holds it
    already (None: free); a holder's conflict is said as ``f"{head} {holder}{tail}"``."""

    key: tuple[str, str]
    reserved: str | None
    head: str
    tail: str


def _claims(draft: _Draft) -> list[_Claim]:
    """What ``draft`` holds, in the order its conflicts are checked: its setting ids, alias,
    tools' top-level names in the sandbox and slash commands."""
    declaration = draft.declaration
    assert declaration is not None
    claims: list[_Claim] = []
    again = "; choose another id for this extension's setting"
    for setting in declaration.settings:
        head = f"setting id {setting.id!r} is already declared by"
        core = f"{head} {CORE_OWNER}{again}" if setting.id in CORE_SETTING_IDS else None
        claims.append(_Claim(("setting", setting.id), core, head, again))
    alias = declaration.alias
    if alias is not None:
        head = f"alias {alias!r} is already used by"
        claims.append(_Claim(("alias", alias), None, head, "; choose another"))
    again = "; give the symbol another name (vis.Symbol(fn, name=...))"
    for tool in draft.tools:
        root = tool.name.split(".", 1)[0]
        taken = reserved_as(root)
        shadows = f"tool name {tool.name!r} would shadow {taken} in every block{again}"
        head = f"tool name {tool.name!r} is already exported by"
        claims.append(_Claim(("name", root), None if taken is None else shadows, head, again))
    again = "; give the command another name"
    for command in declaration.slash_commands:
        head = f"slash command /{command.name}"
        builtin = f"{head} is a built-in command of Vis{again}"
        reserved = builtin if command.name in BUILTIN_COMMANDS else None
        head += " is already declared by"
        claims.append(_Claim(("command", command.name), reserved, head, again))
    return claims


def _conflict(
    claims: list[_Claim], previous: _Draft | None, owners: dict[tuple[str, str], _Draft]
) -> str | None:
    """Why ``claims`` cannot be held: the first that Vis holds, or another extension than
    ``previous`` (the one they override, whose claims pass on)."""
    for claim in claims:
        if claim.reserved is not None:
            return claim.reserved
        holder = owners.get(claim.key)
        if holder is not None and holder is not previous:
            return f"{claim.head} {holder.describe()}{claim.tail}"
    return None


def _resolve(drafts: list[_Draft], disabled: Collection[str], held: Collection[str] = ()) -> None:
    """Overrides by name, then unique setting ids, aliases, tool names and slash commands:
    the extensions named in ``held`` (loaded before a reload) claim theirs first, then the
    others, each in load order; a later conflicting one fails, naming the holder."""
    effective: dict[str, _Draft] = {}
    owners: dict[tuple[str, str], _Draft] = {}  # each claim's holder
    # stable: same-named drafts keep their load order, which decides their overrides
    for draft in sorted(drafts, key=lambda d: d.name not in held):
        if draft.status is not ExtensionStatus.LOADED:
            continue
        if draft.name in disabled:
            draft.status = ExtensionStatus.DISABLED
            continue
        previous = effective.get(draft.name)
        if previous is not None and previous.candidate.source.rank >= draft.candidate.source.rank:
            draft.fail(
                f"extension name {draft.name!r} is already used by {previous.candidate.path}; "
                "rename one of them"
            )
            continue
        claims = _claims(draft)
        problem = _conflict(claims, previous, owners)
        if problem is not None:
            assert draft.declaration is not None
            draft.fail(problem + _unguarded(draft.declaration))
            continue
        if previous is not None:
            previous.status = ExtensionStatus.OVERRIDDEN
            previous.overridden_by = draft.candidate.path
            for claim in _claims(previous):
                owners.pop(claim.key, None)
        owners.update((claim.key, draft) for claim in claims)
        effective[draft.name] = draft


def _unguarded(declaration: Extension) -> str:
    """What an extension that fails no longer guards: the operations of its op hooks, said
    with its error, where a lost ``fs_access`` or ``patch`` guard would otherwise go unseen."""
    ops = sorted({op for hook in declaration.op_hooks for op in hook.ops})
    return f"; its op hooks ({', '.join(ops)}) are not active" if ops else ""


def _roots(draft: _Draft) -> list[str]:
    """The top-level names an extension's tools take in the sandbox (``greet`` of greet.hello)."""
    return list(dict.fromkeys(tool.name.split(".", 1)[0] for tool in draft.tools))


def _second_names(drafts: list[_Draft]) -> None:
    """Give each loaded tool its ``alias.name`` where that path is unambiguous."""
    loaded = [d for d in drafts if d.status is ExtensionStatus.LOADED]
    taken = set(RESERVED_NAMES) | {root for d in loaded for root in _roots(d)}
    for draft in loaded:
        assert draft.declaration is not None
        alias = draft.declaration.alias
        own = set(_roots(draft))
        if alias is None or (alias in taken and alias not in own):
            continue  # another's bare name wins; ``alias.`` would be ambiguous
        draft.tools = tuple(
            dataclasses.replace(tool, aliases=alias_names(tool, alias)) for tool in draft.tools
        )


def _screen(candidates: list[Candidate], options: LoadOptions) -> dict[Path, Screened]:
    """Every entry file's verdict, by entry file: the bundled ones' from their cache when it
    holds this very set of files (:mod:`bundled_cache`), the others' (and the bundled ones' on
    a miss) from one run of the registration worker, which reports each declaration as data
    (the host never runs the file); one that exits, hangs or crashes fails with its cause
    instead of ending or hanging Vis."""
    bundled = [c for c in candidates if c.source is ExtensionSource.BUNDLED and not c.error]
    key = _bundled_key(bundled, options) if bundled else None
    kept = None if key is None else _kept_bundled(bundled, key)
    to_load = [
        c
        for c in candidates
        if not c.error and (kept is None or c.source is not ExtensionSource.BUNDLED)
    ]
    screened: dict[Path, Screened] = {}
    if to_load:
        environment = options.environment
        project = resolve_names(tuple(getattr(environment, "project_names", ())), environment)
        worker = RegistrationWorker(
            child_environment(project, audience=Audience.VIS),
            environment,
            load_timeout=options.load_timeout,
            cwd=options.project_root,
        )
        screened = worker.screen_all(to_load)
    if kept is not None:
        screened.update(kept)
    elif key is not None:
        _keep_bundled(bundled, key, screened)
    return screened


def _bundled_key(bundled: list[Candidate], options: LoadOptions) -> dict[str, Any] | None:
    assert options.bundled is not None
    try:
        return bundled_cache.cache_key(options.bundled, bundled)
    except OSError as exc:  # a file vanished or is unreadable: load them, keep nothing
        log.info("the bundled extensions' files cannot be read for their cache: %s", exc)
        return None


def _kept_bundled(bundled: list[Candidate], key: dict[str, Any]) -> dict[Path, Screened] | None:
    """The bundled extensions' verdicts from their cache, rebuilt; ``None`` on any miss."""
    found = bundled_cache.read(bundled_cache.cache_file(), key)
    if found is None:
        return None
    kept: dict[Path, Screened] = {}
    for candidate in bundled:
        data = found.get(str(candidate.entry_file))
        if data is None:
            return None
        try:
            rebuilt = rebuild(data)
        except Exception as exc:  # data from disk, in no shape rebuild expects: load again
            log.info("the bundled extensions' cache is unreadable (%r); it is rebuilt", exc)
            return None
        kept[candidate.entry_file] = Screened(declaration=data, rebuilt=rebuilt)
    return kept


def _keep_bundled(
    bundled: list[Candidate], key: dict[str, Any], screened: Mapping[Path, Screened]
) -> None:
    """Keep the bundled extensions' reports when every one of them loaded (a failure may
    depend on this machine, so it is found again at each start, as doctor shows it)."""
    reports = [screened.get(c.entry_file) for c in bundled]
    if any(r is None or r.error is not None or r.declaration is None for r in reports):
        return
    declarations = {
        str(c.entry_file): r.declaration
        for c, r in zip(bundled, reports, strict=True)
        if r is not None and r.declaration is not None
    }
    bundled_cache.write(bundled_cache.cache_file(), key, declarations)


def load(options: LoadOptions, before: LoadedExtensions | None = None) -> LoadedExtensions:
    """``before``: the load a reload replaces; its loaded extensions keep the setting ids,
    aliases, tool names and commands they hold (a newcomer that claims one fails), and one
    that fails before it could tell its name keeps the name it had (its Settings group stays)."""
    from vis_core.extension_host.output import route_extension_output

    route_extension_output()  # print() in extension code goes to its log from here on
    candidates = discover(
        project_root=options.project_root,
        trusted=options.trusted,
        user_dir=options.paths.extensions_dir,
        bundled=options.bundled,
        include_packages=options.include_packages,
        snapshot=options.snapshot,
        lapsed=options.lapsed,
    )
    screened = _screen(candidates, options)
    known = {} if before is None else {ext.path: ext.name for ext in before.extensions}
    drafts = [
        _run(candidate, screened.get(candidate.entry_file), known.get(candidate.path))
        for candidate in candidates
    ]
    held = () if before is None else {ext.name for ext in before.enabled}
    _resolve(drafts, options.disabled, held)
    _second_names(drafts)
    for draft in drafts:
        if draft.error is not None:
            log.warning("extension did not load: %s", draft.error)
    loaded = tuple(
        LoadedExtension(
            name=d.name,
            source=d.candidate.source,
            path=d.candidate.path,
            status=d.status,
            declaration=d.declaration,
            error=d.error,
            tools=d.tools if d.status is ExtensionStatus.LOADED else (),
            overridden_by=d.overridden_by,
            candidate=d.candidate,
        )
        for d in drafts
    )
    return LoadedExtensions(loaded, options)


def load_extensions(
    *,
    project_root: Path | str | None = None,
    trusted: bool = False,
    paths: VisPaths | None = None,
    bundled: Path | str | None | object = _DEFAULT,
    include_packages: bool = True,
    disabled: Collection[str] = (),
    environment: Mapping[str, str] | None = None,
    load_timeout: float = DEFAULT_LOAD_TIMEOUT,
    snapshot: ControlSnapshot | None = None,
    lapsed: bool = False,
) -> LoadedExtensions:
    """Discover and load every extension; a failing one is recorded and does not stop others.

    ``bundled`` defaults to the shipped ``extensions/`` folder; pass ``None`` to skip it.
    Project extensions (``.vis/extensions/``) load only when ``trusted``, from ``snapshot``
    (the control files as the trust check read them) when given; when ``lapsed`` (trusted
    with other control files) they are listed as failed, saying so, and not run.
    ``environment`` holds the values that declared ``env`` names resolve to.
    """
    if bundled is _DEFAULT:
        bundled_path: Path | None = bundled_dir()
    else:
        bundled_path = None if bundled is None else Path(str(bundled))
    options = LoadOptions(
        paths=paths or VisPaths.from_env(),
        project_root=None if project_root is None else Path(project_root).resolve(),
        trusted=trusted,
        bundled=bundled_path,
        include_packages=include_packages,
        disabled=frozenset(disabled),
        environment=copy_environment(environment),  # keeps project_names
        load_timeout=load_timeout,
        snapshot=snapshot,
        lapsed=lapsed,
    )
    return load(options)

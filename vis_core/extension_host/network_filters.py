"""A session's network policy: the extensions' ``vis.NetworkFilter``s, then allowed hosts.

Each request from the jail passes every enabled extension's filters in load order, each run
in the session's extension worker. The first that blocks refuses it (so does one that
fails, hangs or answers something else: fail closed); one that allows or rewrites headers
lets it through unless a later one blocks. A request none allows passes only when the
``network_allowed_hosts`` setting lists its host; else it is refused, saying so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vis_core.extension.context import CallContext
from vis_core.extension.network import NetworkFilter
from vis_core.extension_host.worker_client import CallbackCall
from vis_core.ipc.kinds import CallbackKind
from vis_core.model.network import (
    FilterPhase,
    HeaderRewrite,
    HostRule,
    NetworkRequest,
    NetworkResponse,
    parse_allowed_hosts,
)
from vis_core.sandbox.network_proxy import NetworkPolicy, Verdict

if TYPE_CHECKING:
    from vis_core.extension_host.loaded import LoadedExtensions
    from vis_core.extension_host.session_workers import SessionWorkers

log = logging.getLogger(__name__)
FILTER_TIMEOUT = 10.0  # seconds a filter may take before the request is refused


def declared_filters(loaded: LoadedExtensions) -> list[tuple[str, NetworkFilter]]:
    """The enabled extensions' network filters, in load order, with their extension."""
    found = []
    for ext in loaded.enabled:
        declaration = ext.declaration
        if declaration is not None:
            found += [(ext.name, f) for f in declaration.network_filters]
    return found


class FilterPolicy(NetworkPolicy):
    """The policy of one session: its extensions' filters, then its allowed hosts."""

    def __init__(
        self,
        extensions: Callable[[], LoadedExtensions],
        workers: Callable[[], SessionWorkers | None],
        allowed_hosts: Callable[[], str],
        context: Callable[[str], CallContext],
    ) -> None:
        self._extensions = extensions
        self._workers = workers
        self._allowed_hosts = allowed_hosts
        self._context = context

    def _rules(self) -> tuple[HostRule, ...]:
        try:
            return parse_allowed_hosts(self._allowed_hosts())
        except (ValueError, KeyError) as exc:  # fail closed: no host is allowed
            log.warning("network_allowed_hosts cannot be read (%s); no host is allowed", exc)
            return ()

    async def _ask(self, owner: str, item: NetworkFilter, phase: FilterPhase, subject: Any) -> Any:
        """The filter's decision, or ``("block", why)`` when it could not answer."""
        where = f"network filter {item.name!r} of extension {owner!r}"
        workers = self._workers()
        if workers is None:
            return ("block", f"{where} cannot run: the session has no extension worker")
        outcome = await workers.callback(
            CallbackKind.NETWORK_FILTER,
            CallbackCall(owner, item.name, args=(phase, subject)),
            timeout=FILTER_TIMEOUT,
            context=self._context(owner),
        )
        if outcome.error is not None:
            return ("block", f"{where} failed: {outcome.error}")
        value = outcome.value
        if not isinstance(value, tuple) or not value:
            return ("block", f"{where} answered {value!r}")
        if value[0] == "block":
            return ("block", f"{value[1]} ({where})")
        return value

    async def request(self, request: NetworkRequest) -> Verdict:
        allowed = False
        rewrites: list[HeaderRewrite] = []
        for owner, item in declared_filters(self._extensions()):
            answer = await self._ask(owner, item, FilterPhase.REQUEST, request)
            if answer[0] == "block":
                return Verdict(False, answer[1])
            if answer[0] == "rewrite":
                rewrites.append(answer[1])
            allowed = allowed or answer[0] in ("allow", "rewrite")
        if not allowed and any(rule.allows(request.host, request.port) for rule in self._rules()):
            allowed = True
        if not allowed:
            return Verdict(
                False,
                f"no network filter allows {request.host}:{request.port} and the "
                "network_allowed_hosts setting does not list it",
            )
        return Verdict(True, rewrites=tuple(rewrites))

    async def response(self, response: NetworkResponse) -> Verdict:
        for owner, item in declared_filters(self._extensions()):
            if item.response is None:
                continue
            answer = await self._ask(owner, item, FilterPhase.RESPONSE, response)
            if answer[0] == "block":
                return Verdict(False, answer[1])
        return Verdict(True)

"""``vis.NetworkFilter``: a request/response policy for the jailed sandbox's network."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

from vis_core.extension.hooks import Block
from vis_core.model.lines import is_one_line
from vis_core.model.network import FilterPhase, HeaderRewrite

FILTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
ANSWERS = "None (no opinion), True (allow), False or vis.block(reason), or vis.rewrite_headers(...)"


@dataclass(frozen=True)
class NetworkFilter:
    """``NetworkFilter(name, request, response=None, description=...)``.

    With the jail on, each request of the sandbox and its shells goes through Vis's proxy;
    ``request(vis.NetworkRequest)`` answers None (no opinion), True (allow), False or
    ``vis.block(reason)`` (refuse: the model's call fails with the reason), or
    ``vis.rewrite_headers(set=..., remove=...)`` (allow with those headers; plain HTTP only,
    an HTTPS tunnel shows no headers). ``response(vis.NetworkResponse)`` sees a plain-HTTP
    answer's status and headers and may block it. A request no filter allows is refused
    unless the ``network_allowed_hosts`` setting lists its host."""

    name: str
    request: Callable[..., Any]
    _: KW_ONLY
    response: Callable[..., Any] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not FILTER_NAME.fullmatch(self.name):
            raise ValueError(
                f"NetworkFilter name {self.name!r} must be 1-64 letters, digits, '.', '-' or '_'"
            )
        if not callable(self.request):
            raise ValueError(f"NetworkFilter {self.name!r}: request must be a function")
        if self.response is not None and not callable(self.response):
            raise ValueError(f"NetworkFilter {self.name!r}: response must be a function or None")
        if not isinstance(self.description, str) or not is_one_line(self.description.strip()):
            raise ValueError(f"NetworkFilter {self.name!r}: description must be one line")


def rewrite_headers(
    set: Mapping[str, str] | None = None, remove: Sequence[str] = ()
) -> HeaderRewrite:
    """Allow the request with the headers ``set`` (replacing any of that name) and without
    those named in ``remove``."""
    pairs = tuple((set or {}).items())
    for name, value in pairs:
        if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
            raise ValueError(f"vis.rewrite_headers: {name!r} is not a header name")
        if not isinstance(value, str) or any(c in value for c in "\r\n\0"):
            raise ValueError(f"vis.rewrite_headers: the value of {name} must be one line of text")
    removed = (remove,) if isinstance(remove, str) else tuple(remove)
    for name in removed:
        if not isinstance(name, str) or not HEADER_NAME.fullmatch(name):
            raise ValueError(f"vis.rewrite_headers: {name!r} is not a header name")
    return HeaderRewrite(pairs, removed)


def decision(filter_name: str, value: Any) -> tuple[str, ...] | tuple[str, HeaderRewrite]:
    """A filter's answer as ``("none",)``, ``("allow",)``, ``("block", reason)`` or
    ``("rewrite", HeaderRewrite)``; a ``TypeError`` names any other answer."""
    if value is None:
        return ("none",)
    if value is True:
        return ("allow",)
    if value is False:
        return ("block", f"network filter {filter_name!r} refused it")
    if isinstance(value, Block):
        reason = value.reason if value.hint is None else f"{value.reason} ({value.hint})"
        return ("block", reason)
    if isinstance(value, HeaderRewrite):  # checked again: one may be made by hand
        return ("rewrite", rewrite_headers(dict(value.set), value.remove))
    raise TypeError(
        f"network filter {filter_name!r} answered {type(value).__name__} {value!r:.80}; "
        f"answer {ANSWERS}"
    )


def run_filter(network_filter: NetworkFilter, phase: str, subject: Any) -> Any:
    """Run ``network_filter``'s ``phase`` (request or response) on ``subject`` in the
    extension's worker; its decision as :func:`decision` gives it (awaited if async)."""
    fn = network_filter.request if phase == FilterPhase.REQUEST else network_filter.response
    if fn is None:
        return ("none",)
    value = fn(subject)
    if hasattr(value, "__await__"):

        async def settle() -> Any:
            return decision(network_filter.name, await value)

        return settle()
    return decision(network_filter.name, value)

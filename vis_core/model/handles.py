"""Host objects lent across a process boundary: the base of a handle and how its calls show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class HandleMethod:
    """How calls of one handle method show as Activities: effect tag, headline, start shown.

    ``tag`` is a ``SymbolTag`` value (``observation``, ``mutation``, ``verification``,
    ``external``); an empty ``label`` means ``<Type>.<method>``.
    """

    tag: str = "observation"
    label: str = ""
    show_start: bool = True


class HostHandle:
    """Base for host objects that must stay on the host (e.g. a running shell process).

    A tool may return an instance; the sandbox receives a proxy whose methods named in
    ``__vis_methods__`` are async and run on the host object. Each call is an Activity: its
    tag and headline come from ``__vis_activities__`` (unlisted methods are observations),
    its presentation from :meth:`render_activity`, and every call carries
    :attr:`activity_handle_id` so one receipt groups them. Example::

        class ShellHandle(HostHandle):
            __vis_methods__ = ("logs", "wait", "type", "stop")
            __vis_activities__ = {"stop": HandleMethod("mutation", "Run command")}
    """

    __vis_methods__: ClassVar[tuple[str, ...]] = ()
    __vis_activities__: ClassVar[dict[str, HandleMethod]] = {}

    @property
    def activity_handle_id(self) -> str:
        """The ``handle_id`` of every Activity about this object (stable while it lives)."""
        return f"{type(self).__name__.lower()}-{id(self):x}"

    def render_activity(
        self, method: str, *, phase: str, args: Any, kwargs: Any, result: Any, error: Any
    ) -> Any:
        """The ``ActivityPresentation`` of one call of ``method`` in ``phase`` (``start``,
        ``success``, ``failure``), or ``None`` for the default headline; a handle whose
        presentation is drawn elsewhere (an extension worker) returns an awaitable of it."""
        return None

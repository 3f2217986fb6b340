"""``vis.live``: the view handle an extension updates, its events, and ``LiveRecorder``."""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from vis_core.extension.context import CallContext, current_call
from vis_core.extension.forms import FormDeclarationError, Secret, _whole, iter_fields
from vis_core.extension.live_nodes import (
    LIVE_NODE_TYPES,
    Links,
    Stat,
    Steps,
    Table,
    check_view_nodes,
    to_plain,
)
from vis_core.extension.live_updates import SETTABLE, LiveOp, LiveUpdate, apply, change, find
from vis_core.extension.runtime import Runtime, RuntimeOverride, current_runtime, install

EventCallback = Callable[["LiveEvent"], Any]
# the keys ``NodeHandle.set`` takes positionally, by the node's type
_POSITIONAL: dict[type, tuple[str, ...]] = {
    **SETTABLE,
    Stat: ("label", "value"),
    Steps: ("id", "label", "tone", "detail"),
}


class Placement(StrEnum):
    INLINE = "inline"
    PANEL = "panel"


class LiveEventKind(StrEnum):
    BUTTON = "button"
    INPUT = "input"
    STOP = "stop"


@dataclass(frozen=True)
class LiveEvent:
    """What the person did in a view: pressed a button, changed an input, or asked to stop."""

    kind: LiveEventKind
    view_id: str
    node_id: str | None = None
    value: Any = None

    def to_plain(self) -> dict[str, Any]:
        value = "••••••" if isinstance(self.value, Secret) else self.value
        return {
            "kind": self.kind.value,
            "view_id": self.view_id,
            "node_id": self.node_id,
            "value": value,
        }


class LiveSink(Protocol):
    """Where a view's changes go: the host's front end, a recorder, or nowhere."""

    immediate: bool

    def opened(self, view: LiveView) -> None: ...
    def updated(self, view: LiveView, updates: list[LiveUpdate]) -> None: ...
    def closed(self, view: LiveView, reason: str | None, summary: str | None) -> None: ...
    def later(self, seconds: float, flush: Callable[[], None]) -> None:
        """Call ``flush`` in ``seconds`` (a sink that is not ``immediate``: on its loop)."""
        ...


class NoSink:
    """Outside Vis: the view keeps its state and shows nothing."""

    immediate = True

    def opened(self, view: LiveView) -> None:
        return None

    def updated(self, view: LiveView, updates: list[LiveUpdate]) -> None:
        return None

    def closed(self, view: LiveView, reason: str | None, summary: str | None) -> None:
        return None

    def later(self, seconds: float, flush: Callable[[], None]) -> None:
        flush()


class NodeHandle:
    """Updates one node of a view; which methods apply depends on the node (see the docs)."""

    def __init__(self, view: LiveView, node_id: str) -> None:
        self._view = view
        self.id = node_id

    def _send(self, op: LiveOp, data: dict[str, Any]) -> NodeHandle:
        self._view._apply(LiveUpdate(self.id, op, data))
        return self

    def set(self, *args: Any, **values: Any) -> NodeHandle:
        """Change the node: ``status.set(text, tone=, detail=)``, ``progress.set(value=, done=,
        total=)``, ``stat.set(label, value)``, ``steps.set(step_id, label=, tone=, detail=)``…"""
        keys = _POSITIONAL.get(type(self._view.node_of(self.id)), ())
        if len(args) > len(keys):
            raise TypeError(f"{self.id}.set() takes at most {len(keys)} positional values")
        data = dict(zip(keys, args, strict=False))
        data.update(values)
        return self._send(LiveOp.SET, data)

    def remove(self, key: str) -> NodeHandle:
        """Remove a stat (by label), a step (by id) or a table row (by row id)."""
        node = self._view.node_of(self.id)
        name = {Stat: "label", Steps: "id", Table: "row_id"}.get(type(node), "id")
        return self._send(LiveOp.REMOVE, {name: key})

    def clear(self) -> NodeHandle:
        return self._send(LiveOp.CLEAR, {})

    def write(self, *lines: str, tone: str | None = None) -> NodeHandle:
        """Append lines to an output log (text with newlines becomes several lines)."""
        split = [part for line in lines for part in str(line).splitlines() or [""]]
        return self._send(LiveOp.WRITE, {"lines": split, "tone": tone})

    def upsert(
        self,
        row_id: str,
        cells: Iterable[Any],
        *,
        tone: str | None = None,
        parent: str | None = None,
        group: str | None = None,
    ) -> NodeHandle:
        data = {
            "row_id": row_id,
            "cells": [str(c) for c in cells],
            "tone": tone,
            "parent": parent,
            "group": group,
        }
        return self._send(LiveOp.UPSERT, data)

    def group(self, group_id: str, label: str = "") -> NodeHandle:
        return self._send(LiveOp.GROUP, {"group_id": group_id, "label": label})

    def select(self, row_id: str | None) -> NodeHandle:
        return self._send(LiveOp.SELECT, {"row_id": row_id})

    def add(self, url: str, label: str = "") -> NodeHandle:
        node = self._view.node_of(self.id)
        if not isinstance(node, Links):
            raise AttributeError(f"{self.id!r} is not a link node; add nodes with view.add(node)")
        return self._send(LiveOp.ADD, {"link": {"url": url, "label": label}})

    def __repr__(self) -> str:
        return f"<live node {self.id!r} of {self._view.title!r}>"


class LiveView:
    """An open view: update nodes with ``view["id"].set(...)``; read what the person did."""

    def __init__(
        self,
        title: str,
        nodes: tuple[Any, ...],
        *,
        placement: Placement,
        key: str | None,
        flush_ms: int,
        sink: LiveSink,
        context: CallContext | None,
    ) -> None:
        self.id = uuid.uuid4().hex
        self.title = title
        self.placement = placement
        self.key = key
        self.flush_ms = flush_ms
        self.context = context
        self._sink = sink
        self._nodes = nodes
        self._lock = threading.RLock()
        self._buffer: list[LiveUpdate] = []
        self._flushing = False  # a flush is due (the sink calls it in ``flush_ms``)
        self._events: queue.Queue[LiveEvent | None] = queue.Queue()
        self._callbacks: list[EventCallback] = []
        self._interrupted = threading.Event()
        self._closed = threading.Event()
        self._values = {f.name: f.initial() for f in iter_fields(nodes)}
        self._secret = {f.name for f in iter_fields(nodes) if f.is_secret}
        self.close_reason: str | None = None
        self.summary: str | None = None

    # -- state ------------------------------------------------------------------------------
    @property
    def nodes(self) -> tuple[Any, ...]:
        with self._lock:
            return self._nodes

    def node_of(self, node_id: str) -> Any:
        node = find(self.nodes, node_id)
        if node is None:
            raise KeyError(f"view {self.title!r} has no node {node_id!r}")
        return node

    def __getitem__(self, node_id: str) -> NodeHandle:
        self.node_of(node_id)
        return NodeHandle(self, node_id)

    node = __getitem__

    def add(self, node: Any, *, after: str | None = None, parent: str | None = None) -> None:
        """Add ``node`` at the end, after the node ``after``, or inside a row/column/disclosure."""
        if not isinstance(node, LIVE_NODE_TYPES):
            raise FormDeclarationError(f"view.add: {node!r} is not a live view component")
        self._apply(
            LiveUpdate(
                None, LiveOp.ADD_NODE, {"node": to_plain(node), "after": after, "parent": parent}
            ),
            node=node,
        )

    def drop(self, node_id: str) -> None:
        self._apply(LiveUpdate(node_id, LiveOp.DROP_NODE, {}))

    def values(self) -> dict[str, Any]:
        """The current values of the view's inputs (secrets as handles)."""
        with self._lock:
            return {
                k: Secret(str(v or "")) if k in self._secret else v for k, v in self._values.items()
            }

    def _apply(self, update: LiveUpdate, node: Any = None) -> None:
        if self._closed.is_set():
            raise RuntimeError(f"live view {self.title!r} is closed; open a new one to show more")
        with self._lock:
            if node is not None:  # keep the validators of added fields in the local state
                self._nodes = apply(
                    self._nodes, dataclasses.replace(update, data={**update.data, "node": node})
                )
                for item in iter_fields((node,)):
                    self._values.setdefault(item.name, item.initial())
                    if item.is_secret:
                        self._secret.add(item.name)
            elif update.op in (LiveOp.ADD_NODE, LiveOp.DROP_NODE):
                self._nodes = apply(self._nodes, update)
            else:
                current = self.node_of(update.node_id or "")
                change(current, update.op, update.data)  # raise here, in the caller
                self._nodes = apply(self._nodes, update)
            self._buffer.append(update)
            if self._sink.immediate or self.flush_ms == 0:
                pending = self._take()
            else:
                pending = []
                due, self._flushing = self._flushing, True
                if not due:
                    self._sink.later(self.flush_ms / 1000, self.flush)
        if pending:
            self._sink.updated(self, pending)

    def _take(self) -> list[LiveUpdate]:
        pending, self._buffer = self._buffer, []
        self._flushing = False  # a flush due meanwhile finds nothing, or a later batch
        return pending

    def flush(self) -> None:
        """Send the batched updates now (they are sent every ``flush_ms`` anyway)."""
        with self._lock:
            pending = self._take()
        if pending:
            self._sink.updated(self, pending)

    # -- the person -------------------------------------------------------------------------
    def deliver(self, event: LiveEvent) -> None:
        """Called by the front end (any thread) when the person acts in the view."""
        if self._closed.is_set():
            return
        if event.kind is LiveEventKind.INPUT and event.node_id is not None:
            with self._lock:
                self._values[event.node_id] = (
                    event.value.reveal() if isinstance(event.value, Secret) else event.value
                )
        if event.kind is LiveEventKind.STOP:
            self._interrupted.set()
        self._events.put(event)

    def callbacks(self) -> list[EventCallback]:
        return list(self._callbacks)

    def on_event(self, callback: EventCallback) -> EventCallback:
        """Call ``callback(event)`` for every event (usable as a decorator)."""
        if not callable(callback):
            raise TypeError("view.on_event takes a function of one LiveEvent")
        self._callbacks.append(callback)
        return callback

    def events(self, timeout: float | None = None) -> Iterator[LiveEvent]:
        """Events as they come; ends when the view closes, or after ``timeout`` seconds
        without one."""
        while not self._closed.is_set():
            try:
                event = self._events.get(timeout=timeout)
            except queue.Empty:
                return
            if event is None:
                return
            yield event

    @property
    def is_interrupted(self) -> bool:
        return self._interrupted.is_set()

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    def interrupt(self) -> None:
        """Mark the view interrupted (Vis does this when the person confirms a stop)."""
        self.deliver(LiveEvent(LiveEventKind.STOP, self.id))

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; returns False early when the view is interrupted."""
        return not self._interrupted.wait(max(0.0, seconds))

    def close(self, reason: str | None = None, summary: str | None = None) -> None:
        """Send what is pending and end the view; its last state stays shown with ``summary``."""
        if self._closed.is_set():
            return
        self.flush()
        self.close_reason, self.summary = reason, summary
        self._closed.set()
        self._events.put(None)
        self._sink.closed(self, reason, summary)

    def __enter__(self) -> LiveView:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: Any, tb: Any) -> None:
        if error is not None and not self.is_closed:
            self.close("error", f"{kind.__name__ if kind else 'error'}: {error}")
        else:
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self.is_closed else "open"
        return f"<live view {self.title!r} {self.placement.value} {state}>"


def live(
    title: str,
    nodes: Iterable[Any] | Any,
    *,
    placement: str = "inline",
    key: str | None = None,
    on_event: EventCallback | None = None,
    flush_ms: int = 100,
) -> LiveView:
    """Open a view the extension updates while it works (inline under the current Activity, or
    in the session's side panel where ``key`` names it)."""
    if not isinstance(title, str) or not title.strip():
        raise FormDeclarationError("vis.live: the view needs a title")
    try:
        where = Placement(placement)
    except ValueError:
        raise FormDeclarationError(
            f"vis.live: placement must be 'inline' or 'panel', got {placement!r}"
        ) from None
    if key is not None and where is not Placement.PANEL:
        raise FormDeclarationError("vis.live: key names a panel view; use placement='panel'")
    if not _whole(flush_ms):
        raise FormDeclarationError(
            f"vis.live: flush_ms must be a whole number ≥ 0, got {flush_ms!r}"
        )
    items = (nodes,) if isinstance(nodes, LIVE_NODE_TYPES) else tuple(nodes)
    check_view_nodes(items)
    view = current_runtime().open_live(title, items, placement=where, key=key, flush_ms=flush_ms)
    if on_event is not None:
        view.on_event(on_event)
    return view


def open_view(
    title: str,
    nodes: tuple[Any, ...],
    placement: Placement,
    key: str | None,
    flush_ms: int,
    sink: LiveSink,
) -> LiveView:
    """A view of the running call shown through ``sink`` (a runtime's way to a person)."""
    view = LiveView(
        title,
        nodes,
        placement=placement,
        key=key,
        flush_ms=flush_ms,
        sink=sink,
        context=current_call(),
    )
    sink.opened(view)
    return view


# -- testing ---------------------------------------------------------------------------------


@dataclass
class RecordedView:
    """One view as a recorder saw it."""

    view: LiveView
    title: str
    initial: tuple[Any, ...]
    batches: list[list[LiveUpdate]] = dataclasses.field(default_factory=list)
    closed: bool = False
    reason: str | None = None
    summary: str | None = None

    @property
    def updates(self) -> list[LiveUpdate]:
        return [u for batch in self.batches for u in batch]

    @property
    def nodes(self) -> tuple[Any, ...]:
        """The view's nodes after every recorded update."""
        return self.view.nodes

    def node(self, node_id: str) -> Any:
        return self.view.node_of(node_id)

    def ops(self, node_id: str | None = None) -> list[tuple[str | None, str]]:
        return [
            (u.node_id, u.op.value) for u in self.updates if node_id is None or u.node_id == node_id
        ]


class LiveRecorder:
    """``vis.testing.LiveRecorder``: while active (``with``), every ``vis.live`` view records its
    updates here instead of showing them; press buttons, type and stop like a person."""

    immediate = True

    def __init__(self) -> None:
        self.views: list[RecordedView] = []
        self._lock = threading.Lock()
        self._replaced: list[Runtime | None] = []  # what each ``with`` replaced

    def __enter__(self) -> LiveRecorder:
        self._replaced.append(install(_Recording(self)))
        return self

    def __exit__(self, *exc: object) -> None:
        install(self._replaced.pop())

    @property
    def view(self) -> RecordedView:
        """The newest recorded view."""
        if not self.views:
            raise LookupError("no vis.live view was opened while the recorder was active")
        return self.views[-1]

    def _find(self, view: LiveView) -> RecordedView:
        return next(r for r in self.views if r.view is view)

    def opened(self, view: LiveView) -> None:
        with self._lock:
            self.views.append(RecordedView(view, view.title, view.nodes))

    def updated(self, view: LiveView, updates: list[LiveUpdate]) -> None:
        with self._lock:
            self._find(view).batches.append(list(updates))

    def closed(self, view: LiveView, reason: str | None, summary: str | None) -> None:
        with self._lock:
            record = self._find(view)
            record.closed, record.reason, record.summary = True, reason, summary

    def later(self, seconds: float, flush: Callable[[], None]) -> None:
        flush()

    # -- acting as the person -------------------------------------------------------------
    def _send(self, event: LiveEvent, view: LiveView) -> None:
        view.deliver(event)
        for callback in view.callbacks():
            callback(event)

    def press(self, button_id: str, view: LiveView | None = None) -> None:
        target = view or self.view.view
        target.node_of(button_id)
        self._send(LiveEvent(LiveEventKind.BUTTON, target.id, button_id), target)

    def type(self, name: str, value: Any, view: LiveView | None = None) -> None:
        target = view or self.view.view
        target.node_of(name)
        self._send(LiveEvent(LiveEventKind.INPUT, target.id, name, value), target)

    def stop(self, view: LiveView | None = None) -> None:
        target = view or self.view.view
        self._send(LiveEvent(LiveEventKind.STOP, target.id), target)

    def wait_closed(self, seconds: float = 5.0) -> RecordedView:
        """Wait until the newest view is closed (for views run in another thread)."""
        deadline = time.monotonic() + seconds
        while not (self.views and self.view.closed):
            if time.monotonic() > deadline:
                raise AssertionError("the live view was not closed in time")
            time.sleep(0.01)
        return self.view


class _Recording(RuntimeOverride):
    """The runtime while a :class:`LiveRecorder` is active: views open in the recorder."""

    def __init__(self, recorder: LiveRecorder) -> None:
        super().__init__(current_runtime())
        self._recorder = recorder

    def open_live(
        self,
        title: str,
        nodes: tuple[Any, ...],
        *,
        placement: Any,
        key: str | None,
        flush_ms: int,
    ) -> LiveView:
        return open_view(title, nodes, placement, key, flush_ms, self._recorder)

"""A model provider an extension declares (``vis.Provider``), streamed from its worker.

The host side (:class:`ExtensionProvider`) is a provider like the built-in ones: its
``stream()`` asks the session's extension worker to run the declaration's ``stream`` function
(:func:`pump_stream`, there), which sends each event back through a sink the host lends it
(:class:`EventSink`), checked on both sides. Cancelling the response cancels the call in the
worker; a stream that raises, or yields something that is not a stream event, ends the
response with a :class:`ProviderError` naming the provider and the extension.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from vis_core.extension.providers import EVENT_NAMES, Provider, checked_event
from vis_core.model.conversation import ModelRequest, StreamEvent
from vis_core.providers.base import ModelInfo, ProviderError
from vis_core.providers.models import apply_overrides
from vis_core.system.process import ChildGone

if TYPE_CHECKING:
    from vis_core.extension_host.loaded import LoadedExtensions
    from vis_core.extension_host.session_workers import SessionWorkers

_END = object()


# -- the worker side -------------------------------------------------------------------------


def pump_stream(provider: Provider, request: ModelRequest, sink: Any) -> Any:
    """Run ``provider.stream(request)`` and send each event it yields to ``sink.send``; an
    async generator comes back as a coroutine the worker awaits."""
    produced = provider.stream(request)
    if hasattr(produced, "__aiter__"):

        async def drain() -> int:
            count = 0
            async for event in produced:
                sink.send(checked_event(provider.name, event))
                count += 1
            return count

        return drain()
    events = None
    if not inspect.isawaitable(produced) and not isinstance(produced, str | bytes | dict):
        with contextlib.suppress(TypeError):  # not iterable
            events = iter(produced)
    if events is None:
        if inspect.iscoroutine(produced):
            produced.close()
        raise TypeError(
            f"provider {provider.name!r}: stream(request) returned {type(produced).__name__}; "
            f"write it as a generator (def or async def with yield) of {EVENT_NAMES}"
        )
    count = 0
    for event in events:
        sink.send(checked_event(provider.name, event))
        count += 1
    return count


# -- the host side ---------------------------------------------------------------------------


class EventSink:
    """Lent to the worker: each event it sends joins the response on the session's loop."""

    def __init__(self, provider: str, loop: asyncio.AbstractEventLoop) -> None:
        self._provider = provider
        self._loop = loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    def send(self, event: object) -> None:
        checked = checked_event(self._provider, event)
        self._loop.call_soon_threadsafe(self.queue.put_nowait, checked)


class ExtensionProvider:
    """The provider ``declaration`` of extension ``owner``, run in a session's worker.

    ``workers()`` gives the session's extension workers; with none (no session yet), the
    provider starts its own on the first response and stops it at :meth:`aclose`."""

    def __init__(
        self,
        owner: str,
        declaration: Provider,
        workers: Callable[[], SessionWorkers | None],
        own_workers: Callable[[], SessionWorkers],
        overrides: dict[str, Any] | None = None,
    ) -> None:
        self.name = declaration.name
        self.owner = owner
        self._declaration = declaration
        self._workers = workers
        self._own_workers = own_workers
        self._own: SessionWorkers | None = None
        self._overrides = dict(overrides or {})

    def model_info(self, model: str) -> ModelInfo:
        declared = self._declaration.model(model)
        if declared is None:
            raise ProviderError(self.unknown_model(model))
        info = ModelInfo(
            input_limit=declared.input_limit,
            input_price=declared.input_price,
            output_price=declared.output_price,
            cache_read_price=declared.cache_read_price,
            cache_write_price=declared.cache_write_price,
        )
        where = f'[models."{self.name}/{model}"] in config.toml'
        return apply_overrides(info, self._overrides, where=where) if self._overrides else info

    def unknown_model(self, model: str) -> str:
        names = ", ".join(f"{self.name}/{m.name}" for m in self._declaration.models)
        return (
            f"provider {self.name!r} (extension {self.owner!r}) has no model {model!r}; "
            f"it declares {names}"
        )

    def _session_workers(self) -> SessionWorkers:
        workers = self._workers()
        if workers is not None:
            return workers
        if self._own is None:
            self._own = self._own_workers()
        return self._own

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self._declaration.model(request.model) is None:
            raise ProviderError(self.unknown_model(request.model))
        sink = EventSink(self.name, asyncio.get_running_loop())
        worker = self._session_workers().worker_for(self.owner)
        task = asyncio.ensure_future(worker.stream(self.owner, self.name, (request, sink)))
        task.add_done_callback(lambda _t: sink.queue.put_nowait(_END))
        what = f"provider {self.name!r} of extension {self.owner!r}"
        try:
            while True:
                item = await sink.queue.get()
                if item is _END:
                    break
                yield item
            try:
                task.result()
            except ChildGone as exc:
                raise ProviderError(f"{what} failed: {exc}") from None
            except ProviderError:
                raise
            except Exception as exc:
                raise ProviderError(f"{what} failed: {type(exc).__name__}: {exc}") from None
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def aclose(self) -> None:
        own, self._own = self._own, None
        if own is not None:
            await asyncio.to_thread(own.stop)


def declared_providers(loaded: LoadedExtensions) -> dict[str, tuple[str, Provider]]:
    """The providers the enabled extensions declare: name → (extension, declaration); the
    first extension to declare a name has it."""
    found: dict[str, tuple[str, Provider]] = {}
    for ext in loaded.enabled:
        declaration = ext.declaration
        if declaration is None:
            continue
        for provider in declaration.providers:
            found.setdefault(provider.name, (ext.name, provider))
    return found

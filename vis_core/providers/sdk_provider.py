"""What the SDK-backed providers share: model lookup, a lazily made client, closing, stalls,
and mapping SDK errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from vis_core.providers.base import ModelInfo, ModelRequest, ProviderError, StreamEvent
from vis_core.providers.errors import SdkErrors, map_error
from vis_core.providers.models import lookup_model, request_options

DEFAULT_STALL_TIMEOUT = 120.0


class SdkProvider:
    """Base of the providers built on an official SDK client; subclasses yield ``_events``.

    The SDK is imported and its client made on the first request (``client``), so building
    a provider (``vis doctor``, the TUI's start) costs no SDK import. A stream that sends
    nothing for ``stall_timeout`` seconds ends with an error naming the setting.
    """

    def __init__(
        self,
        *,
        name: str,
        key_env: str,
        config_file: Path | str | None,
        model_overrides: Mapping[str, Mapping[str, Any]] | None,
        base_url: str | None = None,
        stall_timeout: float = DEFAULT_STALL_TIMEOUT,
    ) -> None:
        self.name = name
        self.key_env = key_env
        self.config_file = config_file
        self.base_url = base_url
        self.stall_timeout = stall_timeout
        self._overrides = dict(model_overrides or {})
        self._client: Any = None
        self._server_limits: dict[str, int] = {}  # model → the input limit the server reported

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        raise NotImplementedError

    def _sdk_errors(self) -> SdkErrors:
        raise NotImplementedError

    def model_options(self, model: str) -> dict[str, str]:
        """The request options (``reasoning_effort``, ``tool_choice``, ``api``) of ``model``."""
        return request_options(self._overrides.get(model), where=self._where(model))

    def _where(self, model: str) -> str:
        return f'[models."{self.name}/{model}"]'

    def model_info(self, model: str) -> ModelInfo:
        """Prices and limits: the table, then the config; an input limit the server reported
        (``discover_limit``) comes before both."""
        info = lookup_model(model, self._overrides.get(model), where=self._where(model))
        limit = self._server_limits.get(model)
        return replace(info, input_limit=limit) if limit else info

    def known_input_limit(self, model: str) -> int | None:
        """``[models."p/m"] input_limit``, else the known-model table; None when unknown."""
        from vis_core.providers.limits import configured_or_known

        return configured_or_known(self._overrides.get(model), model)

    async def aclose(self) -> None:
        """Close the HTTP connections (call before the event loop ends)."""
        if self._client is not None:
            await self._client.close()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self._stream(request)

    def stall_error(self) -> ProviderError:
        return ProviderError(
            f"{self.name} sent nothing for {self.stall_timeout:g} s, so the response was "
            f"given up (the stall_timeout setting under [providers.{self.name}] in "
            f"{self.config_file or 'config.toml'}); the server may be overloaded or stuck",
            status=408,
        )

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        events = self._events(request)
        try:
            while True:
                try:  # the timeout covers the wait for the next event only, in this task
                    async with asyncio.timeout(self.stall_timeout or None):
                        event = await anext(events)
                except StopAsyncIteration:
                    return
                except TimeoutError as exc:
                    raise self.stall_error() from exc
                yield event
        except Exception as exc:
            mapped = map_error(
                exc,
                provider=self.name,
                key_env=self.key_env,
                config_file=self.config_file,
                sdk=self._sdk_errors(),
            )
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc
        finally:
            await events.aclose()

    def _events(self, request: ModelRequest) -> AsyncGenerator[StreamEvent, None]:
        raise NotImplementedError

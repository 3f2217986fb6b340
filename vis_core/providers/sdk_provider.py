"""What the SDK-backed providers share: model lookup, closing, and mapping SDK errors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from vis_core.providers.base import ModelInfo, ModelRequest, StreamEvent
from vis_core.providers.errors import map_error
from vis_core.providers.models import lookup_model


class SdkProvider:
    """Base of the providers built on an official SDK client; subclasses yield ``_events``."""

    client: Any

    def __init__(
        self,
        *,
        name: str,
        key_env: str,
        config_file: Path | str | None,
        model_overrides: Mapping[str, Mapping[str, Any]] | None,
    ) -> None:
        self.name = name
        self.key_env = key_env
        self.config_file = config_file
        self._overrides = dict(model_overrides or {})

    def model_info(self, model: str) -> ModelInfo:
        return lookup_model(
            model, self._overrides.get(model), where=f'[models."{self.name}/{model}"]'
        )

    async def aclose(self) -> None:
        """Close the HTTP connections (call before the event loop ends)."""
        await self.client.close()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        try:
            async for event in self._events(request):
                yield event
        except Exception as exc:
            mapped = map_error(
                exc, provider=self.name, key_env=self.key_env, config_file=self.config_file
            )
            if mapped is None or mapped is exc:
                raise
            raise mapped from exc

    def _events(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError

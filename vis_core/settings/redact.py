"""The redactor of a running Vis: :class:`~vis_core.system.redaction.Redactor` that also
cleans stored events (the store's append hook)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.system import redaction

if TYPE_CHECKING:
    from vis_core.events import Event


class Redactor(redaction.Redactor):
    """Replaces every saved secret value, in text, data and stored events."""

    def event(
        self, event: Event, data: dict[str, Any], payload: str
    ) -> tuple[Event, dict[str, Any], str]:
        """The store's append hook: the event as it may be written."""
        if not self.in_json(payload):
            return event, data, payload  # no secret in it (most events): nothing to walk
        cleaned = self.value(data)
        if cleaned == data:  # compared as values: a secret JSON escapes is found too
            return event, data, payload
        from vis_core.events import event_from_dict, event_payload  # the store has them loaded

        redacted = event_from_dict(cleaned)
        data, payload = event_payload(redacted)
        return redacted, data, payload

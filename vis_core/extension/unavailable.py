"""SDK features this Vis documents but does not implement yet, and how it says so."""

from __future__ import annotations

OUT_OF_SCOPE = "is not available in this version of Vis: speech is not implemented yet"

# Names a model or an extension author may look up, folded to lower case without ``vis.``.
UNAVAILABLE_NAMES = frozenset(
    {
        "speech",
    }
)


def unavailable_note(name: str) -> str | None:
    """What ``doc(name)`` says of a feature that is not implemented, or None."""
    folded = name.strip().lower().removeprefix("vis.")
    return f"{name} {OUT_OF_SCOPE}." if folded in UNAVAILABLE_NAMES else None


SPEECH_NOT_IMPLEMENTED = (
    "vis.speech.{attr} is not implemented in this version of Vis: there is no speech engine "
    "(text to speech, transcription, voices); vis.speech raises SpeechUnavailable for every use"
)


class SpeechUnavailable(NotImplementedError):
    """``vis.speech``: this Vis has no speech engine (a ``NotImplementedError``, so also a
    ``RuntimeError``)."""


class Speech:
    """``vis.speech``: documented by the Speech API, not implemented here; every use raises
    :class:`SpeechUnavailable`."""

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise SpeechUnavailable(SPEECH_NOT_IMPLEMENTED.format(attr=attr))

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise SpeechUnavailable(
            SPEECH_NOT_IMPLEMENTED.format(attr="__call__").replace(".__call__", "")
        )

    def __repr__(self) -> str:
        return "<vis.speech: not implemented (SpeechUnavailable)>"
